//! The links of a note or canvas as Obsidian's metadata cache reports them, and how a link path
//! resolves to a file of the vault.
//!
//! It owns the link grammar (wikilinks and embeds, markdown links and images, links in property
//! values, canvas file nodes and the links of canvas text cards), each link's position, and
//! Obsidian's resolution rules over a list of vault paths. It must never report a link Obsidian
//! would not, never touch the disk, and never panic on any input.

use std::collections::HashMap;

use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use super::blocks::LineKind;
use super::note::NoteText;
use line::{LinkLine, inline_links};
use places::{JsonStringPlaces, first_unused_occurrences};

mod line;
mod places;

/// How a link is written, which decides how a move rewrites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkForm {
    /// `[[target|alias]]` or `![[target]]`.
    Wiki,
    /// `[text](target)` or `![alt](target)`.
    Markdown,
    /// A property value that is a wikilink: `up: "[[target]]"`.
    Property,
    /// A canvas node of type `file`: `"file": "Folder/Note.md"`.
    CanvasFile,
}

/// One link, as Obsidian's `LinkCache` describes it, plus what a rewrite needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub form: LinkForm,
    pub embed: bool,
    /// Obsidian's `link`: the target with its `#heading` or `#^block` part, percent-decoded for
    /// markdown links, trimmed for wikilinks.
    pub link: String,
    /// Obsidian's `displayText`: the alias, the markdown link text, or the target with `#` shown as ` > `.
    pub display: String,
    /// The link exactly as written (for properties: the wikilink inside the value).
    pub original: String,
    /// Byte range of `original` in the text the link was read from.
    pub start: usize,
    pub end: usize,
    /// 1-based line of the link's start.
    pub line: usize,
    /// 0-based character offset of the link's start within its line.
    pub column: usize,
    /// The property key (`key`, `key.0` for a list item) of a property link.
    pub key: Option<String>,
}

impl Link {
    /// The path part of the link (before the first `#`), which is what resolves to a file.
    pub fn path(&self) -> &str {
        link_path(&self.link)
    }

    /// The `#heading`/`#^block` part, with its `#`, when there is one.
    pub fn subpath(&self) -> Option<&str> {
        self.link.find('#').map(|at| &self.link[at..])
    }
}

/// The path part of an Obsidian link text (before the first `#`).
pub fn link_path(link: &str) -> &str {
    match link.find('#') {
        Some(at) => &link[..at],
        None => link,
    }
}

/// Every link, embed and property link of a note, in document order (properties first).
///
/// Rules, each checked against Obsidian's own output (`../shared/oracles/obsidian-metadata-cache`):
/// - Wikilinks `[[...]]` lie on one line and are not empty; a `|` splits the alias off unless it is
///   the first character (`[[|alias]]` links to `|alias`); `\|` (inside tables) also splits.
///   The target is trimmed. `![[...]]` is an embed.
/// - Markdown links `[text](destination)` with a non-empty destination that is not a URL with a
///   scheme (`https:`, `mailto:`, `obsidian:`); `<angle brackets>` allow spaces; the destination is
///   percent-decoded; `![alt](...)` is an embed.
/// - Nothing is read inside code spans, fenced or indented code, math, HTML blocks or `<!-- -->`
///   comments. Links inside `%% %%` comments *are* read, as Obsidian's metadata cache does (the
///   `comments_markdown_style` oracle note), so a move also rewrites them.
/// - A property value (or list item) that is exactly a wikilink is a property link.
pub fn note_links(text: &str) -> Vec<Link> {
    links_of(&NoteText::read(text))
}

/// `note_links` of a note already read.
pub fn links_of(note: &NoteText) -> Vec<Link> {
    let text = note.text;
    let line_starts = line_starts(text);
    let mut links = property_links(note, &line_starts);
    let mut in_html_comment = false;
    for line in &note.lines {
        match line.kind {
            LineKind::Text | LineKind::Heading | LineKind::Comment => {
                let Some(offset) = offset_in(text, line.content) else {
                    continue;
                };
                inline_links(
                    text,
                    offset,
                    line.content,
                    &line_starts,
                    &mut in_html_comment,
                    &mut links,
                );
            }
            _ => in_html_comment = false,
        }
    }
    links
}

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
struct EscapedLengths<'a> {
    text: &'a str,
    counted_to: usize,
    length: usize,
}

impl<'a> EscapedLengths<'a> {
    fn new(text: &'a str) -> Self {
        EscapedLengths {
            text,
            counted_to: 0,
            length: 0,
        }
    }

    /// `json_string_body(text[..end]).len()`, `None` when `end` is no character boundary.
    fn before(&mut self, end: usize) -> Option<usize> {
        let length = match self.text.get(self.counted_to..end) {
            Some(part) if end >= self.counted_to => self.length + json_string_body(part).len(),
            _ => json_string_body(self.text.get(..end)?).len(),
        };
        (self.counted_to, self.length) = (end, length);
        Some(length)
    }
}

/// The body of a JSON string literal for `text` (without the quotes), as JSON.stringify writes it.
fn json_string_body(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or("")
        .to_owned()
}

fn find_from(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack
        .get(from..)
        .and_then(|rest| rest.find(needle))
        .map(|at| from + at)
}

/// Byte offsets where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|(_, byte)| *byte == b'\n')
            .map(|(at, _)| at + 1),
    );
    starts
}

/// 1-based line and 0-based character column of a byte offset.
fn position(text: &str, line_starts: &[usize], offset: usize) -> (usize, usize) {
    let index = line_starts
        .partition_point(|start| *start <= offset)
        .saturating_sub(1);
    let start = line_starts.get(index).copied().unwrap_or(0);
    let column = text
        .get(start..offset)
        .map_or(0, |part| part.chars().count());
    (index + 1, column)
}

/// Line and column of offsets asked for in increasing order, each column counted on from the
/// previous offset's when both lie on one line: counting each from its line's start was quadratic
/// in a line of many links.
struct Positions<'a> {
    text: &'a str,
    line_starts: &'a [usize],
    /// The last offset asked for, with its line and column.
    last: Option<(usize, usize, usize)>,
}

impl<'a> Positions<'a> {
    fn new(text: &'a str, line_starts: &'a [usize]) -> Self {
        Positions {
            text,
            line_starts,
            last: None,
        }
    }

    /// What `position` answers, counted on from the last offset when nothing but characters of
    /// its line lie between.
    fn at(&mut self, offset: usize) -> (usize, usize) {
        let counted_on = self.last.and_then(|(last, line, column)| {
            let between = self.text.get(last..offset)?;
            (!between.contains('\n')).then(|| (line, column + between.chars().count()))
        });
        let (line, column) =
            counted_on.unwrap_or_else(|| position(self.text, self.line_starts, offset));
        self.last = Some((offset, line, column));
        (line, column)
    }
}

/// Where `part`, a slice of `text`, starts in it.
fn offset_in(text: &str, part: &str) -> Option<usize> {
    let offset = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (offset + part.len() <= text.len()).then_some(offset)
}

/// Obsidian's display text for a link without alias: `#` parts shown as ` > `, a leading `#` dropped.
fn display_of(link: &str) -> String {
    link.split('#')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" > ")
}

fn property_links(note: &NoteText, line_starts: &[usize]) -> Vec<Link> {
    let mut values = Vec::new();
    for (key, value) in &note.properties {
        collect_property_links(key, value, &mut values);
    }
    let read: Vec<(String, String, String, String)> = values
        .into_iter()
        .filter_map(|(key, original)| {
            let inner = original.strip_prefix("[[")?.strip_suffix("]]")?;
            let (link, display) = parse_wikilink_inner(inner)?;
            Some((key, original, link, display))
        })
        .collect();
    if read.is_empty() {
        return Vec::new();
    }
    // Place each property link on the first unused occurrence of its wikilink in the block.
    let block = note.text.get(..note.split.block_len).unwrap_or("");
    let originals: Vec<&str> = read
        .iter()
        .map(|(_, original, _, _)| original.as_str())
        .collect();
    let starts = first_unused_occurrences(block, &originals);
    let mut links: Vec<Link> = read
        .into_iter()
        .zip(starts)
        .map(|((key, original, link, display), start)| {
            // A value YAML unfolded or unescaped (`"[[A\nB]]"` over two lines) is not in the block
            // as written: its span is left empty at the block's start, so nothing rewrites it there.
            let (start, end) = start.map_or((0, 0), |at| (at, at + original.len()));
            Link {
                form: LinkForm::Property,
                embed: false,
                link,
                display,
                end,
                original,
                start,
                line: 0,
                column: 0,
                key: Some(key),
            }
        })
        .collect();
    // Properties come back sorted by key; report them in the order they are written.
    links.sort_by_key(|link| link.start);
    let mut positions = Positions::new(note.text, line_starts);
    for link in &mut links {
        (link.line, link.column) = positions.at(link.start);
    }
    links
}

fn collect_property_links(key: &str, value: &Value, found: &mut Vec<(String, String)>) {
    match value {
        Value::String(text) => {
            let trimmed = text.trim();
            if trimmed.starts_with("[[")
                && trimmed.ends_with("]]")
                && trimmed.len() > 4
                && !trimmed[2..trimmed.len() - 2].contains("]]")
            {
                found.push((key.to_owned(), trimmed.to_owned()));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_property_links(&format!("{key}.{index}"), item, found);
            }
        }
        Value::Object(map) => {
            for (name, item) in map {
                collect_property_links(&format!("{key}.{name}"), item, found);
            }
        }
        _ => {}
    }
}

/// The `link` and `displayText` of a wikilink's inner text, or `None` when Obsidian reads no link.
fn parse_wikilink_inner(inner: &str) -> Option<(String, String)> {
    if inner.is_empty() {
        return None;
    }
    let (target, alias) = match inner.find('|') {
        Some(at) if at > 0 => {
            let target = &inner[..at];
            (
                target.strip_suffix('\\').unwrap_or(target),
                Some(&inner[at + 1..]),
            )
        }
        _ => (inner, None),
    };
    let link = target.trim().to_owned();
    let display = match alias {
        Some(alias) => alias.to_owned(),
        None => display_of(&link),
    };
    Some((link, display))
}

/// Obsidian's link resolution over the files of a vault (notes and attachments, vault-relative
/// `/`-separated paths in NFC).
///
/// A link path resolves, in this order:
/// 1. empty (`[[#Heading]]`): to the linking file itself;
/// 2. starting with `./` or `../`: relative to the linking file's folder, and nothing else;
/// 3. relative to the linking file's folder, with or without `.md` (so `[[Note]]` prefers the
///    `Note` next to the linking file), unless it starts with `/`;
/// 4. as a vault path (a leading `/` is dropped), with or without `.md`;
/// 5. by name: files named like its last segment (notes by name without `.md`, other files by full
///    name) whose path ends with the whole link path; among several, the one in the linking file's
///    folder, else the one with the fewest folders, then the alphabetically first.
///
/// Every comparison ignores case and Unicode normalisation form, as Obsidian's does.
#[derive(Debug, Default, Clone)]
pub struct Resolver {
    /// Folded path -> path (the first spelling wins).
    by_path: HashMap<String, String>,
    /// Folded name (notes without `.md`, other files with their extension) -> paths.
    by_name: HashMap<String, Vec<String>>,
}

/// Case- and normalisation-folded form used for every comparison.
pub fn fold(text: &str) -> String {
    text.nfc().collect::<String>().to_lowercase()
}

/// The name a file is found by: a note's name without `.md`, any other file's full name.
pub fn lookup_name(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let folded = fold(name);
    match folded.strip_suffix(".md") {
        Some(stem) => stem.to_owned(),
        None => folded,
    }
}

/// The folded name key a link path is looked up by (the counterpart of `lookup_name`).
pub fn link_lookup_name(path: &str) -> String {
    lookup_name(path.trim_end_matches('/'))
}

impl Resolver {
    pub fn new<I, S>(paths: I) -> Resolver
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut resolver = Resolver::default();
        for path in paths {
            resolver.insert(path.into());
        }
        for paths in resolver.by_name.values_mut() {
            paths.sort_by(|a, b| {
                a.matches('/')
                    .count()
                    .cmp(&b.matches('/').count())
                    .then_with(|| a.cmp(b))
            });
        }
        resolver
    }

    fn insert(&mut self, path: String) {
        self.by_path
            .entry(fold(&path))
            .or_insert_with(|| path.clone());
        self.by_name
            .entry(lookup_name(&path))
            .or_default()
            .push(path);
    }

    /// Whether the vault holds this exact path (folded).
    pub fn contains(&self, path: &str) -> bool {
        self.by_path.contains_key(&fold(path))
    }

    /// Every path whose name is `name` (folded as `lookup_name` does).
    pub fn named(&self, name: &str) -> &[String] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The file a link path (without its `#` part) from `source` resolves to.
    pub fn resolve(&self, path: &str, source: &str) -> Option<&str> {
        if path.is_empty() {
            return self.by_path.get(&fold(source)).map(String::as_str);
        }
        let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
        if path.starts_with("./") || path.starts_with("../") {
            let joined = join(folder, path)?;
            return self.exact(&joined);
        }
        let absolute = path.strip_prefix('/').unwrap_or(path);
        if !folder.is_empty()
            && !path.starts_with('/')
            && let Some(joined) = join(folder, absolute)
            && let Some(found) = self.exact(&joined)
        {
            return Some(found);
        }
        if let Some(found) = self.exact(absolute) {
            return Some(found);
        }
        let name = link_lookup_name(absolute);
        let candidates = self.by_name.get(&name)?;
        let wanted = fold(absolute.trim_end_matches('/'));
        let wanted_stem = wanted.strip_suffix(".md").unwrap_or(&wanted);
        let matching = candidates.iter().filter(|candidate| {
            if !absolute.contains('/') {
                return true;
            }
            let folded = fold(candidate);
            let stem = folded.strip_suffix(".md").unwrap_or(&folded);
            // `[[b/c]]` matches `a/b/c.md` but not `a/xb/c.md`; a link spelt with `.md`
            // matches only notes, one spelt without only the note.
            [stem, folded.as_str()].iter().any(|form| {
                form.ends_with(wanted_stem)
                    && (form.len() == wanted_stem.len()
                        || form.as_bytes()[form.len() - wanted_stem.len() - 1] == b'/')
            })
        });
        let mut first = None;
        for candidate in matching {
            let candidate_folder = candidate.rsplit_once('/').map_or("", |(folder, _)| folder);
            if fold(candidate_folder) == fold(folder) {
                return Some(candidate);
            }
            first.get_or_insert(candidate.as_str());
        }
        first
    }

    fn exact(&self, path: &str) -> Option<&str> {
        let folded = fold(path);
        if let Some(found) = self.by_path.get(&folded) {
            return Some(found);
        }
        self.by_path
            .get(&format!("{folded}.md"))
            .map(String::as_str)
    }
}

/// `folder` joined with a relative path, `.` and `..` applied; `None` when it leaves the vault.
fn join(folder: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// How a link names its target, which a rewrite keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// Only the file name (`[[Note]]`, `[a](Note.md)`).
    Bare,
    /// Relative to the linking file's folder (`../Other/Note.md`, `./Note.md`, `Sub/Note`).
    Relative,
    /// The vault path (`Folder/Note`).
    Absolute,
}

/// The style of `path` as written in `source`, given the file it resolved to.
pub fn path_style(path: &str, source: &str, target: &str) -> PathStyle {
    if path.starts_with("./") || path.starts_with("../") {
        return PathStyle::Relative;
    }
    if !path.contains('/') {
        return PathStyle::Bare;
    }
    let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
    if !folder.is_empty()
        && !path.starts_with('/')
        && let Some(joined) = join(folder, path)
    {
        let joined = fold(&joined);
        let target = fold(target);
        if joined == target || format!("{joined}.md") == target {
            return PathStyle::Relative;
        }
    }
    PathStyle::Absolute
}

/// `target` (a vault path) written as a link path from `source` in `style`; a note's `.md` is
/// written only when `keep_md`.
pub fn path_text(target: &str, source: &str, style: PathStyle, keep_md: bool) -> String {
    let target = if keep_md { target } else { strip_md(target) };
    match style {
        PathStyle::Bare => target.rsplit('/').next().unwrap_or(target).to_owned(),
        PathStyle::Absolute => target.to_owned(),
        PathStyle::Relative => {
            let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
            let from: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
            let to: Vec<&str> = target.split('/').collect();
            let common = from
                .iter()
                .zip(&to)
                .take_while(|(a, b)| a == b)
                .count()
                .min(to.len().saturating_sub(1));
            let mut parts = vec![".."; from.len() - common];
            parts.extend(&to[common..]);
            parts.join("/")
        }
    }
}

/// `path` without a final `.md` (any case).
pub fn strip_md(path: &str) -> &str {
    let cut = path.len().saturating_sub(3);
    match path.get(cut..) {
        Some(end) if end.eq_ignore_ascii_case(".md") => &path[..cut],
        _ => path,
    }
}

/// Whether a link path spells out `.md`.
pub fn spells_md(path: &str) -> bool {
    strip_md(path).len() != path.len()
}

/// The link's text (`original`) with its path replaced by `new_path`, keeping everything else: the
/// embed `!`, the `#heading`/`#^block` part, the alias or link text, angle brackets and the title.
/// `new_path` is plain text; it is percent-encoded for a markdown link without angle brackets, in
/// the manner of the original (non-ASCII stays as it is unless the original encoded some).
/// `None` when the original is not a link of that form.
pub fn with_new_path(form: LinkForm, original: &str, new_path: &str) -> Option<String> {
    match form {
        LinkForm::Wiki | LinkForm::Property => {
            let embed = original.starts_with('!');
            let inner = original
                .strip_prefix('!')
                .unwrap_or(original)
                .strip_prefix("[[")?
                .strip_suffix("]]")?;
            let target_end = match inner.find('|') {
                Some(at) if at > 0 => {
                    if inner[..at].ends_with('\\') {
                        at - 1
                    } else {
                        at
                    }
                }
                _ => inner.len(),
            };
            let path_end = inner[..target_end].find('#').unwrap_or(target_end);
            // Obsidian reads `[[|#a|b]]` as the link `|#a|b`: after a non-empty path the `|` of
            // its subpath would start an alias instead, so no rewrite keeps that link's meaning.
            if inner[path_end..target_end].contains('|') {
                return None;
            }
            // Spaces around a path are trimmed by Obsidian; keep those after the `#` part only.
            let rest = &inner[path_end..];
            let rest = if path_end == target_end {
                rest.trim_start()
            } else {
                rest
            };
            Some(format!(
                "{}[[{new_path}{rest}]]",
                if embed { "!" } else { "" }
            ))
        }
        LinkForm::Markdown => {
            let open = original.find('[')?;
            let mut line = LinkLine::new(original);
            let found = line.markdown_link(open)?;
            let (start, end, angle) = line.destination_span(found.text_end)?;
            let raw = &original[start..end];
            // The link is percent-decoded before its `#` part is split off, so an encoded `%23`
            // starts the subpath too, and the rewrite keeps it.
            let path_end = raw
                .find('#')
                .into_iter()
                .chain(raw.to_ascii_lowercase().find("%23"))
                .min()
                .unwrap_or(raw.len());
            let destination = if angle {
                format!("{}{}", new_path.replace('>', "%3E"), &raw[path_end..])
            } else {
                // The kept `#subpath` may close a parenthesis the old path opened; alone it
                // would end the destination early.
                balance_parens(&format!(
                    "{}{}",
                    encode_path(new_path, raw),
                    &raw[path_end..]
                ))
            };
            Some(format!(
                "{}{destination}{}",
                &original[..start],
                &original[end..]
            ))
        }
        LinkForm::CanvasFile => Some(new_path.to_owned()),
    }
}

/// Escapes each parenthesis of a bare destination that has no partner, so the destination reads
/// back whole (`destination_span` counts pairs) and means the same (escapes are removed).
fn balance_parens(destination: &str) -> String {
    let bytes = destination.as_bytes();
    let mut unmatched = Vec::new();
    let mut open = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 1,
            b'(' => open.push(index),
            // The guard pops the partner when there is one.
            b')' if open.pop().is_none() => unmatched.push(index),
            _ => {}
        }
        index += 1;
    }
    unmatched.extend(open);
    if unmatched.is_empty() {
        return destination.to_owned();
    }
    unmatched.sort_unstable();
    let mut out = String::with_capacity(destination.len() + unmatched.len());
    let mut from = 0;
    for at in unmatched {
        out.push_str(&destination[from..at]);
        out.push('\\');
        from = at;
    }
    out.push_str(&destination[from..]);
    out
}

/// Percent-encodes a path for a markdown link destination in the manner of `like`, the
/// destination it replaces.
fn encode_path(path: &str, like: &str) -> String {
    let encode_non_ascii = like.as_bytes().windows(3).any(|w| {
        w[0] == b'%'
            && matches!(w[1], b'8'..=b'9' | b'A'..=b'F' | b'a'..=b'f')
            && w[2].is_ascii_hexdigit()
    });
    let mut out = String::with_capacity(path.len());
    for character in path.chars() {
        match character {
            ' ' => out.push_str("%20"),
            '%' | '(' | ')' | '<' | '>' | '#' | '^' | '[' | ']' | '\\' | '|' => {
                let mut buffer = [0u8; 4];
                for byte in character.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
            character if !character.is_ascii() && encode_non_ascii => {
                let mut buffer = [0u8; 4];
                for byte in character.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
            character if character.is_ascii_control() => {
                out.push_str(&format!("%{:02X}", character as u32));
            }
            character => out.push(character),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Vec<(bool, String, String, usize, usize)> {
        note_links(text)
            .into_iter()
            .map(|link| (link.embed, link.link, link.display, link.line, link.column))
            .collect()
    }

    #[test]
    fn wikilinks_aliases_and_embeds() {
        assert_eq!(
            summary("a [[b|c]] ![[d#e]] [[|x]] [[]] [[ f ]] [[g\\|h]]"),
            vec![
                (false, "b".into(), "c".into(), 1, 2),
                (true, "d#e".into(), "d > e".into(), 1, 10),
                (false, "|x".into(), "|x".into(), 1, 19),
                (false, "f".into(), "f".into(), 1, 31),
                (false, "g".into(), "h".into(), 1, 39),
            ]
        );
    }

    #[test]
    fn markdown_links_skip_urls_and_code() {
        assert_eq!(
            summary(
                "[a](b%20c.md#h) [x](https://e.org) ![i](<p q.png>) `[[no]]`\n\n```\n[[no]]\n```\n$[[no]]$ <!-- [[no]] --> [t](d \"title\")"
            ),
            vec![
                (false, "b c.md#h".into(), "a".into(), 1, 0),
                (true, "p q.png".into(), "i".into(), 1, 35),
                (false, "d".into(), "t".into(), 6, 25),
            ]
        );
    }

    #[test]
    fn a_property_link_not_written_as_read_has_an_empty_span() {
        // Found by fuzzing: a quoted value folded over lines reads as `[[A B]]`, which the block
        // does not hold; its span was 0..len, cutting a character in two and aiming a move's
        // rewrite at the start of the note.
        let text = "---\nüp: \"[[Sam\n  Ortiz]]\"\n---\nbody";
        let links = note_links(text);
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].link, "Sam Ortiz");
        assert_eq!((links[0].start, links[0].end), (0, 0));
    }

    #[test]
    fn a_rewritten_destination_keeps_a_subpath_that_closes_a_parenthesis_of_the_old_path() {
        // Found by fuzzing: `(` in the old path pairs with the `)` that ends the subpath; after
        // the path is replaced that `)` would end the destination early.
        let original = "[x](Note](sec.md#h))";
        let link = &note_links(original)[0];
        assert_eq!(link.subpath(), Some("#h)"));
        let rewritten = with_new_path(LinkForm::Markdown, original, "New.md").expect("rewrite");
        assert_eq!(rewritten, "[x](New.md#h\\))");
        let again = &note_links(&rewritten)[0];
        assert_eq!((again.path(), again.subpath()), ("New.md", Some("#h)")));
        assert_eq!(again.end, rewritten.len());
    }

    #[test]
    fn property_links_have_keys_and_lines() {
        let links = note_links("---\nup: \"[[Home]]\"\nrel:\n  - \"[[A|b]]\"\n---\nbody");
        let keys: Vec<_> = links
            .iter()
            .map(|link| (link.key.clone(), link.link.clone(), link.line))
            .collect();
        assert_eq!(
            keys,
            vec![
                (Some("up".into()), "Home".into(), 2),
                (Some("rel.0".into()), "A".into(), 4)
            ]
        );
    }

    #[test]
    fn canvas_file_nodes_and_text_links() {
        let canvas = r##"{"nodes":[{"id":"1","type":"file","file":"A/B.md","subpath":"#H"},{"id":"2","type":"text","text":"see [[C]]\n"}]}"##;
        let links = canvas_links(canvas);
        assert_eq!(links.len(), 2);
        let twice = r#"{"nodes":[{"id":"x","type":"text","text":"a\n[[C]] b [[C]]"}]}"#;
        let spans: Vec<_> = canvas_links(twice)
            .iter()
            .map(|link| (link.start, &twice[link.start..link.end]))
            .collect();
        assert_eq!(spans, vec![(45, "[[C]]"), (53, "[[C]]")]);
        assert_eq!(links[0].link, "A/B.md#H");
        assert_eq!(&canvas[links[0].start..links[0].end], "A/B.md");
        assert_eq!(&canvas[links[1].start..links[1].end], "[[C]]");
    }

    #[test]
    fn rewriting_keeps_everything_but_the_path() {
        let cases = [
            (
                LinkForm::Wiki,
                "[[Old#H|alias]]",
                "New Name",
                "[[New Name#H|alias]]",
            ),
            (LinkForm::Wiki, "![[ Old ]]", "F/New", "![[F/New]]"),
            (LinkForm::Wiki, "[[Old\\|cell]]", "New", "[[New\\|cell]]"),
            (
                LinkForm::Markdown,
                "[t](Old%20One.md#^b \"T\")",
                "Sub/New One.md",
                "[t](Sub/New%20One.md#^b \"T\")",
            ),
            (
                LinkForm::Markdown,
                "![a](<Old One.png>)",
                "New One.png",
                "![a](<New One.png>)",
            ),
            (
                LinkForm::Markdown,
                "[c](Caf%C3%A9.md)",
                "Thé.md",
                "[c](Th%C3%A9.md)",
            ),
            (LinkForm::Markdown, "[c](Café.md)", "Thé.md", "[c](Thé.md)"),
            // Found by fuzzing (fuzz/ links target): an encoded `#` starts the subpath, as the
            // parser reads it, so the rewrite keeps it.
            (
                LinkForm::Markdown,
                "[d](Old%23Part/x.md)",
                "New.md",
                "[d](New.md%23Part/x.md)",
            ),
        ];
        for (form, original, path, expected) in cases {
            assert_eq!(
                with_new_path(form, original, path).as_deref(),
                Some(expected),
                "{original}"
            );
        }
        // Found by fuzzing: `[[|#h|a]]` is the link `|#h|a` (a leading `|` separates nothing).
        // Behind a new path its `|` would start an alias and the subpath would lose `|a`, so the
        // link is refused rather than rewritten into another link.
        let odd = note_links("[[|#h|a]]");
        assert_eq!(odd[0].subpath(), Some("#h|a"));
        assert_eq!(with_new_path(LinkForm::Wiki, "[[|#h|a]]", "New"), None);
        assert_eq!(
            with_new_path(LinkForm::Wiki, "[[|x]]", "New").as_deref(),
            Some("[[New]]")
        );
        assert_eq!(
            path_text("A/B/N.md", "A/C/x.md", PathStyle::Relative, true),
            "../B/N.md"
        );
        assert_eq!(
            path_text("A/N.md", "A/x.md", PathStyle::Relative, false),
            "N"
        );
        assert_eq!(
            path_text("A/N.png", "x.md", PathStyle::Bare, false),
            "N.png"
        );
        assert_eq!(
            path_style("../B/N.md", "A/x.md", "B/N.md"),
            PathStyle::Relative
        );
        assert_eq!(
            path_style("Sub/N", "A/x.md", "A/Sub/N.md"),
            PathStyle::Relative
        );
        assert_eq!(path_style("B/N", "A/x.md", "B/N.md"), PathStyle::Absolute);
    }

    #[test]
    fn resolution_order() {
        let resolver = Resolver::new([
            "Note.md",
            "dir1/Note.md",
            "dir2/Note.md",
            "dir2/sub/Only.md",
            "img/a.png",
        ]);
        assert_eq!(resolver.resolve("Note", "dir1/x.md"), Some("dir1/Note.md"));
        assert_eq!(resolver.resolve("note", "other/x.md"), Some("Note.md"));
        assert_eq!(resolver.resolve("dir2/Note", "x.md"), Some("dir2/Note.md"));
        assert_eq!(
            resolver.resolve("sub/only", "x.md"),
            Some("dir2/sub/Only.md")
        );
        assert_eq!(resolver.resolve("b/only", "x.md"), None);
        assert_eq!(resolver.resolve("A.PNG", "x.md"), Some("img/a.png"));
        assert_eq!(resolver.resolve("../Note.md", "dir2/x.md"), Some("Note.md"));
        assert_eq!(resolver.resolve("", "dir2/Note.md"), Some("dir2/Note.md"));
        assert_eq!(resolver.resolve("missing", "x.md"), None);
    }

    /// Units that no closer follows, each repeated 100,000 times on one line (up to 700 KB), then a
    /// link that must still be found where it is. Each took seconds to minutes while every opener
    /// scanned to the end of its line (issue 47); a regression shows up as these tests hanging,
    /// not as a wrong answer.
    #[test]
    fn r47_openers_without_closers_on_long_lines_find_no_link_and_the_link_after_them() {
        const TIMES: usize = 100_000;
        for unit in [
            "[a](", "[[", "![", "[", "[a", "![[", "[a](<", "[a](b (", "[a](((", "[[a|", "$a ",
        ] {
            let run = unit.repeat(TIMES);
            assert_eq!(note_links(&run), Vec::new(), "{unit:?}");
            for (link, target) in [
                ("[[b]]", "b"),
                ("[c](d.md)", "d.md"),
                ("![e](f.png)", "f.png"),
            ] {
                let text = format!("{run} {link}");
                let found = note_links(&text);
                let column = run.chars().count() + 1;
                let summary: Vec<_> = found
                    .iter()
                    .map(|link| (link.link.as_str(), link.line, link.column))
                    .collect();
                assert_eq!(summary, vec![(target, 1, column)], "{unit:?} then {link}");
                assert_eq!(found[0].original, link);
            }
        }
        // An angle destination whose `>` lies at the end of the line holds every later `<`.
        let angles = format!("{}>", "[a](<b ".repeat(TIMES));
        assert_eq!(note_links(&angles), Vec::new());
    }

    #[test]
    fn r47_a_line_of_many_links_counts_each_column() {
        const TIMES: usize = 100_000;
        for (unit, target, embed) in [
            ("[[a]]", "a", false),
            ("[a](b)", "b", false),
            ("![c](d)", "d", true),
        ] {
            let text = format!("é {}", unit.repeat(TIMES));
            let found = note_links(&text);
            assert_eq!(found.len(), TIMES, "{unit:?}");
            for (index, link) in found.iter().enumerate().step_by(9_999) {
                assert_eq!((link.link.as_str(), link.embed), (target, embed));
                assert_eq!(link.column, 2 + index * unit.len(), "{unit:?} #{index}");
                assert_eq!(&text[link.start..link.end], unit);
            }
        }
    }

    #[test]
    fn r47_a_block_of_many_property_links_places_each_on_its_own_line() {
        const TIMES: usize = 20_000;
        let list = format!("---\nk:\n{}---\nbody", "  - \"[[a]]\"\n".repeat(TIMES));
        let found = note_links(&list);
        assert_eq!(found.len(), TIMES);
        for (index, link) in found.iter().enumerate() {
            assert_eq!((link.line, link.column), (3 + index, 5), "#{index}");
            assert_eq!(link.key.as_deref(), Some(format!("k.{index}").as_str()));
        }
        let flow = format!("---\nk: [{}]\n---\nbody", "\"[[a]]\", ".repeat(TIMES));
        let found = note_links(&flow);
        assert_eq!(found.len(), TIMES);
        for (index, link) in found.iter().enumerate() {
            assert_eq!((link.line, link.column), (2, 5 + 9 * index), "#{index}");
        }
    }

    #[test]
    fn r47_canvas_nodes_and_their_links_are_placed_in_one_pass() {
        // A text node of 40,000 links took 2 s, each link's escaped prefix and column counted from
        // the start; 10,000 nodes the file escapes otherwise took 0.7 s, each searched to the end.
        const LINKS: usize = 40_000;
        let canvas = format!(
            r#"{{"nodes":[{{"id":"1","type":"text","text":"\"{}"}}]}}"#,
            "[[a]]".repeat(LINKS)
        );
        let found = canvas_links(&canvas);
        assert_eq!(found.len(), LINKS);
        let first = canvas.find("[[a]]").expect("a link");
        for (index, link) in found.iter().enumerate().step_by(3_999) {
            assert_eq!(link.start, first + 5 * index);
            assert_eq!((link.line, link.column), (1, first + 5 * index));
            assert_eq!(&canvas[link.start..link.end], "[[a]]");
        }
        const NODES: usize = 10_000;
        let nodes: Vec<String> = (0..NODES)
            .map(|index| {
                format!(r#"{{"id":"{index}","type":"text","text":"\u0041 [[b{index}]]"}}"#)
            })
            .chain(std::iter::once(
                r#"{"id":"f","type":"file","file":"A/B.md"}"#.to_owned(),
            ))
            .collect();
        let canvas = format!("{{\"nodes\":[\n{}\n]}}", nodes.join(",\n"));
        let found = canvas_links(&canvas);
        assert_eq!(found.len(), NODES + 1);
        // Written `\u0041`, not as serde_json writes `A`: no node's string is found, so each link
        // has an empty span, as before; the file node after them still is.
        assert!(
            found[..NODES]
                .iter()
                .all(|link| (link.start, link.end) == (0, 0))
        );
        let file = &found[NODES];
        assert_eq!(&canvas[file.start..file.end], "A/B.md");
        assert_eq!(file.line, NODES + 2);
    }
}
