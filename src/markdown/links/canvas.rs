//! The links of a canvas file: its file nodes, and the markdown links inside its text cards,
//! each placed at its byte range in the canvas JSON.

use super::{JsonStringPlaces, Link, LinkForm, Positions, display_of, line_starts, note_links};
use serde_json::Value;

/// The links of a canvas file: file nodes (whole vault paths, with an optional `subpath`) and the
/// links inside text nodes, which Obsidian reads as markdown. Positions are byte ranges in the
/// canvas file of the JSON string that holds the path (file nodes, quotes excluded) or of the link
/// inside the text node's JSON string when it contains no escaped character (else the whole string).
/// A canvas that is not valid JSON has no links.
pub fn canvas_links(json: &str) -> Vec<Link> {
    let Ok(canvas) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    let Some(nodes) = canvas.get("nodes").and_then(Value::as_array) else {
        return Vec::new();
    };
    // Each node's string is placed on its first occurrence after the last one placed. All of
    // them are found in one pass first: a search of the rest of the file per node was quadratic
    // in a canvas of many nodes whose strings the file escapes otherwise (issue 47).
    let named: Vec<(&Value, &str)> = nodes
        .iter()
        .filter_map(|node| {
            let field = match node.get("type").and_then(Value::as_str) {
                Some("file") => "file",
                Some("text") => "text",
                _ => return None,
            };
            Some((node, node.get(field).and_then(Value::as_str)?))
        })
        .collect();
    let literals: Vec<String> = named
        .iter()
        .map(|(_, string)| json_string_body(string))
        .collect();
    let quoted: Vec<String> = literals
        .iter()
        .map(|literal| format!("\"{literal}\""))
        .collect();
    let places =
        JsonStringPlaces::new(json, &quoted.iter().map(String::as_str).collect::<Vec<_>>());
    let line_starts = line_starts(json);
    let mut positions = Positions::new(json, &line_starts);
    let mut links = Vec::new();
    let mut search_from = 0;
    for (asked, ((node, string), literal)) in named.into_iter().zip(&literals).enumerate() {
        let at = places.first_from(asked, search_from).map(|at| at + 1);
        if let Some(at) = at {
            search_from = at + literal.len();
        }
        if node.get("type").and_then(Value::as_str) == Some("file") {
            let subpath = node.get("subpath").and_then(Value::as_str).unwrap_or("");
            let (start, end) = at.map_or((0, 0), |at| (at, at + literal.len()));
            let (line, column) = positions.at(start);
            let link = format!("{string}{subpath}");
            links.push(Link {
                form: LinkForm::CanvasFile,
                embed: true,
                display: display_of(&link),
                link,
                original: string.to_owned(),
                start,
                end,
                line,
                column,
                key: None,
            });
            continue;
        }
        let mut escaped_before = EscapedLengths::new(string);
        for mut link in note_links(string) {
            // The link's place in the file: the text before it, escaped as the file
            // escapes it, is exactly as long as in the file.
            let escaped = json_string_body(&link.original);
            let inside = at.and_then(|at| {
                let start = at + escaped_before.before(link.start)?;
                let end = start + escaped.len();
                (json.get(start..end) == Some(escaped.as_str())).then_some((start, end))
            });
            let (start, end) = match (inside, at) {
                (Some(span), _) => span,
                (None, Some(at)) => (at, at + literal.len()),
                (None, None) => (0, 0),
            };
            (link.line, link.column) = positions.at(start);
            link.start = start;
            link.end = end;
            links.push(link);
        }
    }
    links
}

/// How long the start of a text is once escaped as a JSON string, for ends asked in increasing
/// order: serde_json escapes each character on its own, so the length is counted on from the last
/// end rather than from the start (quadratic in a canvas text node of many links, issue 47).
pub(super) struct EscapedLengths<'a> {
    text: &'a str,
    counted_to: usize,
    length: usize,
}

impl<'a> EscapedLengths<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        EscapedLengths {
            text,
            counted_to: 0,
            length: 0,
        }
    }

    /// `json_string_body(text[..end]).len()`, `None` when `end` is no character boundary.
    pub(super) fn before(&mut self, end: usize) -> Option<usize> {
        let length = match self.text.get(self.counted_to..end) {
            Some(part) if end >= self.counted_to => self.length + json_string_body(part).len(),
            _ => json_string_body(self.text.get(..end)?).len(),
        };
        (self.counted_to, self.length) = (end, length);
        Some(length)
    }
}

/// The body of a JSON string literal for `text` (without the quotes), as JSON.stringify writes it
/// and Obsidian writes canvas files.
pub fn json_string_body(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or("")
        .to_owned()
}
