//! The properties (YAML frontmatter) block of a note: where it sits, how its YAML becomes a JSON object,
//! and how a JSON object is written back as a block that reads back to the same object.
//! It owns only text-to-value conversion; it must never touch the file system, never panic on any input,
//! and never decide what a property means (tags are read by `tags`, everything else by callers).

use serde_json::{Map, Value};

/// Where the YAML properties block sits, as Obsidian finds it.
///
/// Obsidian only recognises a block whose very first line is `---` (trailing spaces or tabs allowed, LF or
/// CRLF) and that is closed by a later line that is `---` (again with optional trailing spaces or tabs).
/// A UTF-8 byte-order mark before the opening fence is tolerated, because editors on Windows write one
/// and Obsidian never sees it (the browser's decoder strips it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontmatterSplit<'a> {
    /// Text between the fences, without the fence lines; `None` when the note has no properties block.
    pub yaml: Option<&'a str>,
    /// Byte length of the whole block including both fence lines and the closing line's newline; 0 if none.
    pub block_len: usize,
    /// Everything after the block.
    pub body: &'a str,
    /// 1-based line number of the body's first line in the file.
    pub body_start_line: usize,
}

/// Splits a note into its properties block and its body.
pub fn split(text: &str) -> FrontmatterSplit<'_> {
    let no_block = FrontmatterSplit {
        yaml: None,
        block_len: 0,
        body: text,
        body_start_line: 1,
    };
    let bom_len = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let after_bom = &text[bom_len..];
    let Some(first_line_len) = line_end(after_bom, 0) else {
        // A file that is only `---` without a newline has nothing after the fence to close it.
        return no_block;
    };
    if !is_fence_line(&after_bom[..first_line_len.content_end]) {
        return no_block;
    }
    let yaml_start = bom_len + first_line_len.next_start;
    let mut line_start = yaml_start;
    let mut lines_seen = 1;
    while line_start <= text.len() {
        let (content_end, next_start) = match line_end(text, line_start) {
            Some(found) => (found.content_end, found.next_start),
            // The last line has no newline: it can still close the block at end of file.
            None => (strip_cr_end(text, text.len()), text.len()),
        };
        lines_seen += 1;
        if is_fence_line(&text[line_start..content_end]) {
            return FrontmatterSplit {
                yaml: Some(&text[yaml_start..line_start]),
                block_len: next_start,
                body: &text[next_start..],
                body_start_line: lines_seen + 1,
            };
        }
        if next_start >= text.len() {
            break;
        }
        line_start = next_start;
    }
    no_block
}

/// The end of one line: where its content stops (before `\r\n` or `\n`) and where the next line starts.
struct LineEnd {
    content_end: usize,
    next_start: usize,
}

/// Finds the end of the line starting at `start`; `None` when the line runs to end of file unterminated.
fn line_end(text: &str, start: usize) -> Option<LineEnd> {
    let newline = text.get(start..)?.find('\n')? + start;
    Some(LineEnd {
        content_end: strip_cr_end(text, newline),
        next_start: newline + 1,
    })
}

/// Moves `end` back over one `\r`, so CRLF files read like LF files.
fn strip_cr_end(text: &str, end: usize) -> usize {
    if end > 0 && text.as_bytes().get(end - 1) == Some(&b'\r') {
        end - 1
    } else {
        end
    }
}

fn is_fence_line(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.bytes().all(|byte| byte == b' ' || byte == b'\t'))
}

/// Why a properties block could not be read, pointing at the file position a person would fix.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesError {
    /// 1-based line within the file (the opening fence is line 1, so the YAML's first line is line 2).
    pub line: usize,
    /// 1-based column within that line.
    pub column: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for PropertiesError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "invalid properties at line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for PropertiesError {}

const NOT_A_MAPPING: &str = "properties must be a mapping of keys to values";

/// Parses the YAML between the fences (YAML 1.2) into a JSON object.
///
/// An empty or whitespace-only block is an empty map. Valid YAML that is not a mapping (a list, a scalar)
/// is an error too, because Obsidian cannot show it as properties.
pub fn parse_properties(yaml: &str) -> Result<Map<String, Value>, PropertiesError> {
    if yaml.trim().is_empty() {
        return Ok(Map::new());
    }
    let mut options = serde_saphyr::options::Options::default();
    // Obsidian reads YAML 1.2, where `yes`/`no`/`on`/`off` are strings, not booleans.
    options.strict_booleans = true;
    // A key written as `~` or `null` is still a key; a JSON object needs it as text.
    options.null_as_string = true;
    // A `!!binary` value stays its base64 text: decoded bytes are rarely UTF-8, and refusing the whole
    // block over one annotated value would block every edit of the note.
    options.ignore_binary_tag_for_string = true;
    match serde_saphyr::from_str_with_options::<Value>(yaml, options) {
        Ok(Value::Object(map)) => Ok(map),
        // A document of only comments (or an explicit `null`) has no properties.
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(PropertiesError {
            line: 1 + first_content_line(yaml),
            column: 1,
            message: NOT_A_MAPPING.to_owned(),
        }),
        Err(error) => {
            let (line, column) = error
                .location()
                .map(|location| (location.line(), location.column()))
                .unwrap_or((1, 1));
            Err(PropertiesError {
                line: usize::try_from(line).unwrap_or(usize::MAX).max(1) + 1,
                column: usize::try_from(column).unwrap_or(usize::MAX).max(1),
                message: first_message_line(&error.to_string()),
            })
        }
    }
}

/// 1-based line of the first line that is neither blank nor a comment, for errors about the whole block.
fn first_content_line(yaml: &str) -> usize {
    yaml.lines()
        .position(|line| {
            let trimmed = line.trim();
            !trimmed.is_empty() && !trimmed.starts_with('#')
        })
        .map_or(1, |index| index + 1)
}

/// The parser's message can carry a source snippet over several lines, a position relative to the YAML
/// rather than the file, and advice about its own options; callers want one sentence about their text.
fn first_message_line(rendered: &str) -> String {
    let mut message = rendered.lines().next().unwrap_or("").trim();
    message = message
        .strip_prefix("error:")
        .unwrap_or(message)
        .trim_start();
    if let Some(after_position) = message
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .map(|(_, after)| after)
    {
        message = after_position;
    }
    if let Some((before_advice, _)) = message.split_once(", set DuplicateKeyPolicy") {
        message = before_advice;
    }
    if message.is_empty() {
        "invalid YAML".to_owned()
    } else {
        message.to_owned()
    }
}

/// Renders a JSON object as a properties block `---\n<yaml>---\n` that [`parse_properties`] reads back to the
/// same map. Keys come out in map order. An empty map renders as an empty string: no block at all.
///
/// The layout follows what Obsidian itself writes (two-space indented `- item` lists, `key:` for empty
/// values, double quotes only where a plain scalar would read back differently), so a round trip through
/// Quire leaves files looking as if Obsidian had saved them.
pub fn render_properties(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        return String::new();
    }
    let mut out = String::from("---\n");
    write_mapping(&mut out, map, 0, false);
    out.push_str("---\n");
    out
}

/// YAML reads `key: value` only when the key is at most this many characters long.
const MAX_IMPLICIT_KEY_CHARS: usize = 1024;

/// Writes a block mapping at `indent`. When `inline_first` is set the caller has already written the
/// indentation and `- ` for the first key (a mapping as a list item).
fn write_mapping(out: &mut String, map: &Map<String, Value>, indent: usize, inline_first: bool) {
    for (index, (key, value)) in map.iter().enumerate() {
        if !(inline_first && index == 0) {
            push_indent(out, indent);
        }
        let mut rendered_key = String::new();
        push_scalar_text(&mut rendered_key, key);
        if rendered_key.chars().count() > MAX_IMPLICIT_KEY_CHARS {
            // Too long for `key: value`; the explicit form has no limit.
            out.push_str("? ");
            out.push_str(&rendered_key);
            out.push('\n');
            push_indent(out, indent);
        } else {
            out.push_str(&rendered_key);
        }
        out.push(':');
        match value {
            Value::Null => out.push('\n'),
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                write_sequence(out, items, indent + 2);
            }
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                write_mapping(out, inner, indent + 2, false);
            }
            scalar => {
                out.push(' ');
                push_flow_value(out, scalar);
                out.push('\n');
            }
        }
    }
}

fn write_sequence(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        push_indent(out, indent);
        out.push('-');
        match item {
            Value::Null => out.push('\n'),
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_sequence(out, inner, indent + 2);
            }
            Value::Object(inner) if !inner.is_empty() => {
                out.push(' ');
                write_mapping(out, inner, indent + 2, true);
            }
            scalar => {
                out.push(' ');
                push_flow_value(out, scalar);
                out.push('\n');
            }
        }
    }
}

/// Writes a value that fits on one line: a scalar, `[]` or `{}`.
fn push_flow_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&number.to_string()),
        Value::String(text) => push_scalar_text(out, text),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Writes a string plain when YAML would read it back as the same string, double-quoted otherwise.
fn push_scalar_text(out: &mut String, text: &str) {
    if is_safe_plain(text) {
        out.push_str(text);
    } else {
        push_double_quoted(out, text);
    }
}

/// A conservative test for "this plain scalar reads back as exactly this string".
///
/// It refuses anything that could be a number, boolean, null, comment, flow collection, alias, tag,
/// block scalar or key separator, and anything with surrounding or unusual whitespace. Dates stay plain
/// because Obsidian writes them that way and the parser keeps them as strings.
fn is_safe_plain(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if is_plain_date(text) {
        return true;
    }
    // A plain `<<` is YAML's merge key, not a key named `<<`.
    if text == "<<" {
        return false;
    }
    if first.is_ascii_digit() || "-?:,[]{}#&*!|>'\"%@`+.~ \t".contains(first) {
        return false;
    }
    if text.ends_with([' ', '\t', ':']) || text.contains(": ") || text.contains(" #") {
        return false;
    }
    if text.chars().any(|character| {
        character.is_control()
            || character.is_whitespace() && character != ' '
            || matches!(character, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
            || "{}[],".contains(character)
    }) {
        return false;
    }
    let lowered = text.to_ascii_lowercase();
    !matches!(
        lowered.as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "nan" | "inf"
    )
}

/// `YYYY-MM-DD`, optionally followed by `THH:MM` or `THH:MM:SS`: written plain, read back as text.
fn is_plain_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let date = bytes.len() >= 10
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10);
    match bytes.len() {
        10 => date,
        16 => date && bytes[10] == b'T' && digits(11..13) && bytes[13] == b':' && digits(14..16),
        19 => {
            date && bytes[10] == b'T'
                && digits(11..13)
                && bytes[13] == b':'
                && digits(14..16)
                && bytes[16] == b':'
                && digits(17..19)
        }
        _ => false,
    }
}

/// Writes a YAML double-quoted scalar, escaping everything YAML does not allow raw.
fn push_double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            // Controls, the C1 range (including NEL, a YAML 1.1 line break), the byte-order mark, the
            // Unicode line/paragraph separators and the non-characters are escaped so no reader can
            // mistake them for structure.
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn keys_too_long_for_the_short_form_render_in_the_explicit_one() {
        // Found by fuzzing: YAML reads `key: value` only for keys up to 1024 characters.
        let long = "k".repeat(1100);
        for value in [
            serde_json::json!("v"),
            serde_json::json!(null),
            serde_json::json!(["a", "b"]),
            serde_json::json!({"inner": 1}),
        ] {
            let map = Map::from_iter([
                (long.clone(), value),
                ("short".into(), serde_json::json!(1)),
            ]);
            let rendered = render_properties(&map);
            assert!(rendered.contains(&format!("? {long}\n:")), "{rendered}");
            let yaml = split(&rendered).yaml.expect("a block");
            assert_eq!(parse_properties(yaml), Ok(map));
        }
        let list = Map::from_iter([(
            "list".into(),
            serde_json::json!([{ long.clone(): "x", "b": 2 }]),
        )]);
        let rendered = render_properties(&list);
        let yaml = split(&rendered).yaml.expect("a block");
        assert_eq!(parse_properties(yaml), Ok(list), "{rendered}");
    }

    #[test]
    fn split_finds_block_and_body() {
        let text = "---\ntitle: x\n---\n# Body\n";
        let found = split(text);
        assert_eq!(found.yaml, Some("title: x\n"));
        assert_eq!(found.block_len, 17);
        assert_eq!(found.body, "# Body\n");
        assert_eq!(found.body_start_line, 4);
    }

    #[test]
    fn split_handles_crlf_trailing_spaces_and_bom() {
        let found = split("\u{feff}--- \r\na: 1\r\n---\t\r\nbody");
        assert_eq!(found.yaml, Some("a: 1\r\n"));
        assert_eq!(found.body, "body");
        assert_eq!(found.body_start_line, 4);
    }

    #[test]
    fn split_accepts_empty_block_and_closing_fence_at_eof() {
        let found = split("---\n---");
        assert_eq!(found.yaml, Some(""));
        assert_eq!(found.block_len, 7);
        assert_eq!(found.body, "");
        assert_eq!(found.body_start_line, 3);
    }

    #[test]
    fn split_rejects_what_obsidian_rejects() {
        for text in [
            "",
            "---",
            "---\na: 1\n",
            " ---\na: 1\n---\n",
            "\n---\na: 1\n---\n",
            "----\na: 1\n----\n",
            "---x\na: 1\n---\n",
            "# title\n---\na: 1\n---\n",
        ] {
            let found = split(text);
            assert_eq!(found.yaml, None, "{text:?}");
            assert_eq!(found.block_len, 0);
            assert_eq!(found.body, text);
            assert_eq!(found.body_start_line, 1);
        }
    }

    #[test]
    fn parse_reads_yaml_1_2_values() {
        let map = parse_properties(
            "a: yes\nb: 2024-07-21\nc:\nd: 0o17\ne: [1, 2.5]\nf: |\n  x\n  y\ng: True\n",
        );
        assert_eq!(
            map,
            Ok(object(json!({
                "a": "yes", "b": "2024-07-21", "c": null, "d": 15,
                "e": [1, 2.5], "f": "x\ny\n", "g": true
            })))
        );
    }

    #[test]
    fn parse_empty_and_comment_only_blocks_are_empty_maps() {
        assert_eq!(parse_properties(""), Ok(Map::new()));
        assert_eq!(parse_properties("  \n\t\n"), Ok(Map::new()));
        assert_eq!(parse_properties("# only a comment\n"), Ok(Map::new()));
    }

    #[test]
    fn parse_rejects_lists_and_scalars() {
        for yaml in ["- a\n- b\n", "just text\n", "\n\n42\n"] {
            let error = parse_properties(yaml).err();
            assert_eq!(
                error.as_ref().map(|error| error.message.as_str()),
                Some(NOT_A_MAPPING),
                "{yaml:?}"
            );
        }
        assert_eq!(
            parse_properties("\n\n42\n").map_err(|error| error.line),
            Err(4)
        );
    }

    #[test]
    fn parse_error_points_at_the_file_line() {
        // The bad line is the YAML's third line, so the file's fourth (after the opening fence).
        let error = parse_properties("a: 1\nb: 2\nc: [unclosed\n").err();
        let line = error.as_ref().map(|error| error.line);
        assert!(matches!(line, Some(4) | Some(5)), "{error:?}");
        let error = parse_properties("a: 1\n  b: 2\n").err();
        assert!(error.is_some_and(|error| error.line >= 2 && !error.message.is_empty()));
        let error = parse_properties("a: 1\na: 2\n");
        assert_eq!(
            error.map_err(|error| (error.line, error.message)),
            Err((3, "duplicate mapping key: a".to_owned()))
        );
    }

    #[test]
    fn render_looks_like_obsidian_and_round_trips() {
        let map = object(json!({
            "aliases": ["One", "Two"],
            "created": "2024-07-21",
            "empty": null,
            "link": "[[Note]]",
            "nested": {"a": 1, "b": [{"c": true, "d": "x y"}, [1, 2], [], {}]},
            "number-like": "42",
            "multi": "line 1\nline 2\n",
            "": "empty key",
        }));
        let rendered = render_properties(&map);
        assert!(rendered.starts_with("---\n") && rendered.ends_with("---\n"));
        assert!(
            rendered.contains("aliases:\n  - One\n  - Two\n"),
            "{rendered}"
        );
        assert!(rendered.contains("created: 2024-07-21\n"), "{rendered}");
        assert!(rendered.contains("empty:\n"), "{rendered}");
        assert!(rendered.contains("link: \"[[Note]]\"\n"), "{rendered}");
        let reread = split(&rendered).yaml.map(parse_properties);
        assert_eq!(reread, Some(Ok(map)));
    }

    #[test]
    fn render_empty_map_is_no_block() {
        assert_eq!(render_properties(&Map::new()), "");
    }
}
