//! One server entry merged into a client's JSON configuration by editing its text, not by
//! rewriting the document: every byte outside the entry (other servers, other keys, their order,
//! number spellings, escapes, indentation, line endings) stays as it was, which matters for files
//! such as `~/.claude.json` that hold a client's whole state.
//!
//! The text is first parsed with `serde_json`, so the scanner below only ever walks valid JSON;
//! the new member is laid out in the file's own indentation and line endings. The result is parsed
//! again and must equal the old document with exactly the one entry set, else nothing is returned.
//! Pure: no I/O, never panics on input.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The entry was new.
    Added,
    /// An entry of that name was there and `force` replaced it.
    Replaced,
}

/// Why a merge refused the text; the caller names the file.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not JSON: `serde_json`'s account, with line and column.
    NotJson(String),
    /// The document, or its section, is not a JSON object; names what it is.
    NotAnObject { key: Option<String>, found: String },
    /// The section or the entry appears twice; which one is meant is not clear.
    DuplicateKey(String),
    /// An entry of that name exists and `force` was not given.
    Exists,
    /// The edited text did not read back as intended (a bug, reported rather than written).
    Unverified,
}

/// `text` with `section.name` set to `entry`: the new text and whether the entry was new.
pub(super) fn merge(
    text: &str,
    section: &str,
    name: &str,
    entry: &impl Serialize,
    force: bool,
) -> Result<(String, Outcome), Refusal> {
    let entry_value = serde_json::to_value(entry).map_err(|_| Refusal::Unverified)?;
    // A byte-order mark is not JSON, but editors write one; it is kept as it was.
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    if text[start..]
        .trim_matches([' ', '\t', '\r', '\n'])
        .is_empty()
    {
        let document = BTreeMap::from([(section, BTreeMap::from([(name, entry)]))]);
        let fresh = render(&document, Some("  "), "", "\n").ok_or(Refusal::Unverified)?;
        return Ok((format!("{}{fresh}\n", &text[..start]), Outcome::Added));
    }
    let mut expected: Value = serde_json::from_str(&text[start..])
        .map_err(|error| Refusal::NotJson(error.to_string()))?;
    let Value::Object(top) = &mut expected else {
        return Err(not_an_object(None, &expected));
    };
    let outcome = match top.get_mut(section) {
        Some(Value::Object(servers)) => match servers.insert(name.to_owned(), entry_value) {
            Some(_) => Outcome::Replaced,
            None => Outcome::Added,
        },
        Some(other) => return Err(not_an_object(Some(section), other)),
        None => {
            let servers = serde_json::Map::from_iter([(name.to_owned(), entry_value)]);
            top.insert(section.to_owned(), Value::Object(servers));
            Outcome::Added
        }
    };
    if outcome == Outcome::Replaced && !force {
        return Err(Refusal::Exists);
    }
    let edited = edit(text, start, section, name, entry).ok_or(Refusal::Unverified)??;
    let reread: Value = serde_json::from_str(&edited[start..]).map_err(|_| Refusal::Unverified)?;
    if reread != expected {
        return Err(Refusal::Unverified);
    }
    Ok((edited, outcome))
}

/// The splice itself, over text already known to be a JSON object: `None` only if the scanner
/// disagrees with `serde_json` (a bug), `Some(Err)` for a duplicate key.
fn edit(
    text: &str,
    start: usize,
    section: &str,
    name: &str,
    entry: &impl Serialize,
) -> Option<Result<String, Refusal>> {
    let scanner = Scanner {
        bytes: text.as_bytes(),
    };
    let layout = Layout::of(text);
    let top = scanner.object(scanner.skip_space(start))?;
    let Some(found) = top.unique(section) else {
        return Some(Err(Refusal::DuplicateKey(section.to_owned())));
    };
    let Some(section_member) = found else {
        let servers = BTreeMap::from([(name, entry)]);
        return Some(Ok(layout.insert(text, &top, section, &servers)?));
    };
    let servers = scanner.object(section_member.value_start)?;
    let Some(found) = servers.unique(name) else {
        return Some(Err(Refusal::DuplicateKey(name.to_owned())));
    };
    Some(Ok(match found {
        Some(member) => layout.replace(text, &servers, member, entry)?,
        None => layout.insert(text, &servers, name, entry)?,
    }))
}

fn not_an_object(key: Option<&str>, value: &Value) -> Refusal {
    let found = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Refusal::NotAnObject {
        key: key.map(str::to_owned),
        found: found.to_owned(),
    }
}

/// A member of an object as it is written: its decoded key and where its key and value are.
#[derive(Debug, Clone, Copy)]
struct Member {
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// An object as it is written: where its braces are and its members in order.
#[derive(Debug)]
struct ObjectSpan {
    open: usize,
    close: usize,
    members: Vec<(String, Member)>,
}

impl ObjectSpan {
    /// The member named `key`: `Some(None)` when absent, `None` when it appears more than once.
    fn unique(&self, key: &str) -> Option<Option<Member>> {
        let mut found = self.members.iter().filter(|(name, _)| name == key);
        match (found.next(), found.next()) {
            (Some((_, member)), None) => Some(Some(*member)),
            (None, _) => Some(None),
            (Some(_), Some(_)) => None,
        }
    }
}

/// Walks text that `serde_json` has accepted; every answer is `None` rather than a panic should
/// it ever meet something else.
struct Scanner<'a> {
    bytes: &'a [u8],
}

impl Scanner<'_> {
    fn skip_space(&self, mut at: usize) -> usize {
        while self
            .bytes
            .get(at)
            .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
        {
            at += 1;
        }
        at
    }

    /// Just past the string whose opening quote is at `at`.
    fn string_end(&self, at: usize) -> Option<usize> {
        let mut i = at + 1;
        loop {
            match self.bytes.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    }

    /// Just past the value that starts at `at`.
    fn value_end(&self, at: usize) -> Option<usize> {
        match self.bytes.get(at)? {
            b'"' => self.string_end(at),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = at;
                loop {
                    match self.bytes.get(i)? {
                        b'"' => i = self.string_end(i)?,
                        b'{' | b'[' => {
                            depth += 1;
                            i += 1;
                        }
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            i += 1;
                            if depth == 0 {
                                return Some(i);
                            }
                        }
                        _ => i += 1,
                    }
                }
            }
            _ => {
                let rest = &self.bytes[at..];
                let length = rest
                    .iter()
                    .position(|byte| {
                        matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                    })
                    .unwrap_or(rest.len());
                Some(at + length)
            }
        }
    }

    /// The object whose opening brace is at `open`.
    fn object(&self, open: usize) -> Option<ObjectSpan> {
        if self.bytes.get(open) != Some(&b'{') {
            return None;
        }
        let mut members = Vec::new();
        let mut at = self.skip_space(open + 1);
        if self.bytes.get(at) == Some(&b'}') {
            return Some(ObjectSpan {
                open,
                close: at,
                members,
            });
        }
        loop {
            let key_start = at;
            let key_end = self.string_end(key_start)?;
            let key_text = std::str::from_utf8(self.bytes.get(key_start..key_end)?).ok()?;
            let key: String = serde_json::from_str(key_text).ok()?;
            at = self.skip_space(key_end);
            if self.bytes.get(at) != Some(&b':') {
                return None;
            }
            let value_start = self.skip_space(at + 1);
            let value_end = self.value_end(value_start)?;
            members.push((
                key,
                Member {
                    key_start,
                    value_start,
                    value_end,
                },
            ));
            at = self.skip_space(value_end);
            match self.bytes.get(at)? {
                b',' => at = self.skip_space(at + 1),
                b'}' => {
                    return Some(ObjectSpan {
                        open,
                        close: at,
                        members,
                    });
                }
                _ => return None,
            }
        }
    }
}

/// How the file is laid out, so an inserted member looks as if it had always been there.
struct Layout {
    /// One level of indentation (the first indented line's), or `None` for a file on one line.
    unit: Option<String>,
    newline: &'static str,
}

impl Layout {
    fn of(text: &str) -> Layout {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        // A file on one line (a trailing newline aside) was written compact and stays so.
        let unit = text.trim_end().contains('\n').then(|| {
            text.split('\n')
                .skip(1)
                .map(|line| {
                    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
                    &line[..indent]
                })
                .find(|indent| !indent.is_empty())
                .unwrap_or("  ")
                .to_owned()
        });
        Layout { unit, newline }
    }

    /// `object` with a new last member `key: value`: on lines of its own where the object spans
    /// lines (or is empty in a file that does), else on the object's one line.
    fn insert(
        &self,
        text: &str,
        object: &ObjectSpan,
        key: &str,
        value: &impl Serialize,
    ) -> Option<String> {
        let key = serde_json::to_string(key).ok()?;
        let spans_lines = text[object.open..object.close].contains('\n');
        let unit = self
            .unit
            .as_deref()
            .filter(|_| spans_lines || object.members.is_empty());
        // A one-line object in an indented file is spaced as people write it.
        let (comma, colon) = if self.unit.is_some() {
            (", ", ": ")
        } else {
            (",", ":")
        };
        let newline = self.newline;
        let (at, end, inserted) = match (unit, object.members.last()) {
            (None, None) => {
                let value = render(value, None, "", "")?;
                (
                    object.open + 1,
                    object.close,
                    format!("{key}{colon}{value}"),
                )
            }
            (None, Some((_, last))) => {
                let value = render(value, None, "", "")?;
                let inserted = format!("{comma}{key}{colon}{value}");
                (last.value_end, last.value_end, inserted)
            }
            (Some(unit), None) => {
                let outer = line_indent(text, object.open);
                let inner = format!("{outer}{unit}");
                let value = render(value, Some(unit), &inner, newline)?;
                let inserted = format!("{newline}{inner}{key}: {value}{newline}{outer}");
                (object.open + 1, object.close, inserted)
            }
            (Some(unit), Some((_, last))) => {
                let indent = own_line_indent(text, last.key_start)
                    .unwrap_or_else(|| format!("{}{unit}", line_indent(text, object.open)));
                let value = render(value, Some(unit), &indent, newline)?;
                let inserted = format!(",{newline}{indent}{key}: {value}");
                (last.value_end, last.value_end, inserted)
            }
        };
        Some(format!("{}{inserted}{}", &text[..at], &text[end..]))
    }

    /// `member` of `object` with its value replaced by `value`.
    fn replace(
        &self,
        text: &str,
        object: &ObjectSpan,
        member: Member,
        value: &impl Serialize,
    ) -> Option<String> {
        let spans_lines = text[object.open..object.close].contains('\n');
        let unit = self.unit.as_deref().filter(|_| spans_lines);
        let indent = line_indent(text, member.key_start);
        let value = render(value, unit, indent, self.newline)?;
        Some(format!(
            "{}{value}{}",
            &text[..member.value_start],
            &text[member.value_end..]
        ))
    }
}

/// The white space that starts the line holding `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let line = &text[line_start..at];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The indentation before `at` when nothing but white space precedes it on its line.
fn own_line_indent(text: &str, at: usize) -> Option<String> {
    let line_start = text[..at].rfind('\n')? + 1;
    let before = &text[line_start..at];
    before
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then(|| before.to_owned())
}

/// `value` as JSON: compact without a unit, else pretty with that unit, every line after the
/// first indented by `indent`, in the file's line endings.
pub(super) fn render(
    value: &impl Serialize,
    unit: Option<&str>,
    indent: &str,
    newline: &str,
) -> Option<String> {
    let Some(unit) = unit else {
        return serde_json::to_string(value).ok();
    };
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer).ok()?;
    let pretty = String::from_utf8(out).ok()?;
    Some(pretty.replace('\n', &format!("{newline}{indent}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in entry whose fields print in the order given.
    #[derive(Serialize)]
    struct Entry {
        command: &'static str,
        args: [&'static str; 1],
    }

    const ENTRY: Entry = Entry {
        command: "/bin/quire",
        args: ["serve"],
    };

    /// Merges `ENTRY` as `mcpServers.quire` and compares the whole text.
    fn check(before: &str, force: bool, expected: Result<(&str, Outcome), Refusal>) {
        let merged = merge(before, "mcpServers", "quire", &ENTRY, force);
        let merged = merged
            .as_ref()
            .map(|(text, outcome)| (text.as_str(), *outcome));
        assert_eq!(
            merged,
            expected.as_ref().map(|(text, outcome)| (*text, *outcome)),
            "{before}"
        );
    }

    #[test]
    fn a_new_entry_follows_the_last_server_in_the_file_s_own_layout() {
        let before = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  },\n  \"n\": [1.50, 1e3, \"\\u00e9\"]\n}\n";
        let after = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    },\n    \"quire\": {\n      \"command\": \"/bin/quire\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  },\n  \"n\": [1.50, 1e3, \"\\u00e9\"]\n}\n";
        check(before, false, Ok((after, Outcome::Added)));
    }

    #[test]
    fn a_missing_section_is_added_last() {
        let before = "{\n    \"b\": 1,\n    \"a\": {\"x\": null}\n}";
        let after = "{\n    \"b\": 1,\n    \"a\": {\"x\": null},\n    \"mcpServers\": {\n        \"quire\": {\n            \"command\": \"/bin/quire\",\n            \"args\": [\n                \"serve\"\n            ]\n        }\n    }\n}";
        check(before, false, Ok((after, Outcome::Added)));
    }

    #[test]
    fn tabs_and_crlf_are_kept() {
        let before = "{\r\n\t\"mcpServers\": {}\r\n}\r\n";
        let after = "{\r\n\t\"mcpServers\": {\r\n\t\t\"quire\": {\r\n\t\t\t\"command\": \"/bin/quire\",\r\n\t\t\t\"args\": [\r\n\t\t\t\t\"serve\"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}\r\n";
        check(before, false, Ok((after, Outcome::Added)));
    }

    #[test]
    fn a_file_on_one_line_stays_on_one_line() {
        check(
            "{\"a\":1,\"mcpServers\":{\"o\":{}}}\n",
            false,
            Ok((
                "{\"a\":1,\"mcpServers\":{\"o\":{},\"quire\":{\"command\":\"/bin/quire\",\"args\":[\"serve\"]}}}\n",
                Outcome::Added,
            )),
        );
        check(
            "{}",
            false,
            Ok((
                "{\"mcpServers\":{\"quire\":{\"command\":\"/bin/quire\",\"args\":[\"serve\"]}}}",
                Outcome::Added,
            )),
        );
    }

    #[test]
    fn an_empty_file_becomes_a_new_document_and_a_byte_order_mark_stays() {
        let fresh = "{\n  \"mcpServers\": {\n    \"quire\": {\n      \"command\": \"/bin/quire\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}\n";
        check(" \n", false, Ok((fresh, Outcome::Added)));
        let with_mark = format!("\u{feff}{fresh}");
        check("\u{feff}", false, Ok((&with_mark, Outcome::Added)));
        check(
            "\u{feff}{\"mcpServers\":{}}",
            false,
            Ok((
                "\u{feff}{\"mcpServers\":{\"quire\":{\"command\":\"/bin/quire\",\"args\":[\"serve\"]}}}",
                Outcome::Added,
            )),
        );
    }

    #[test]
    fn an_existing_entry_is_replaced_only_when_forced() {
        let before = "{\n  \"mcpServers\": {\n    \"quire\": {\"command\": \"old\"},\n    \"z\": 1\n  }\n}\n";
        check(before, false, Err(Refusal::Exists));
        let after = "{\n  \"mcpServers\": {\n    \"quire\": {\n      \"command\": \"/bin/quire\",\n      \"args\": [\n        \"serve\"\n      ]\n    },\n    \"z\": 1\n  }\n}\n";
        check(before, true, Ok((after, Outcome::Replaced)));
    }

    #[test]
    fn an_escaped_key_is_the_same_key() {
        let before = "{\"mcp\\u0053ervers\": {\"quire\": 1}}";
        check(before, false, Err(Refusal::Exists));
    }

    #[test]
    fn what_is_not_a_json_object_of_servers_is_refused() {
        for text in ["{\n  // note\n  \"a\": 1\n}", "{\"a\": 1,}", "{", "nul"] {
            let merged = merge(text, "mcpServers", "quire", &ENTRY, true);
            assert!(
                matches!(merged, Err(Refusal::NotJson(_))),
                "{text}: {merged:?}"
            );
        }
        let not_an_object = |key: Option<&str>, found: &str| Refusal::NotAnObject {
            key: key.map(str::to_owned),
            found: found.to_owned(),
        };
        check("[1]", true, Err(not_an_object(None, "an array")));
        check(
            "{\"mcpServers\": null}",
            true,
            Err(not_an_object(Some("mcpServers"), "null")),
        );
        check(
            "{\"mcpServers\": {}, \"mcpServers\": {}}",
            true,
            Err(Refusal::DuplicateKey("mcpServers".to_owned())),
        );
        check(
            "{\"mcpServers\": {\"quire\": 1, \"quire\": 2}}",
            true,
            Err(Refusal::DuplicateKey("quire".to_owned())),
        );
    }

    #[test]
    fn strings_with_braces_quotes_and_escapes_do_not_confuse_the_scan() {
        let before = "{\n  \"s\": \"}{\\\"]\\\\\",\n  \"mcpServers\": {\n    \"o\": [\"{\", {\"}\": \"[\"}]\n  }\n}";
        let (after, outcome) = merge(before, "mcpServers", "quire", &ENTRY, false).expect("merges");
        assert_eq!(outcome, Outcome::Added);
        let reread: Value = serde_json::from_str(&after).expect("JSON");
        assert_eq!(reread["s"], "}{\"]\\");
        assert_eq!(reread["mcpServers"]["o"][1]["}"], "[");
        assert_eq!(reread["mcpServers"]["quire"]["command"], "/bin/quire");
        assert!(after.starts_with("{\n  \"s\": \"}{\\\"]\\\\\",\n  \"mcpServers\": {\n    \"o\": [\"{\", {\"}\": \"[\"}],\n    \"quire\": {"), "{after}");
    }

    fn json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z{}\\[\\]\"\\\\ ,:\n]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key(), inner, 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    fn key() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("mcpServers".to_owned()),
            Just("quire".to_owned()),
            "[a-z\"{}\\\\]{0,4}",
        ]
    }

    proptest::proptest! {
        /// Any JSON object, written compact or pretty, merges (or is refused for its section's
        /// type), and the merge's own read-back check never fails.
        #[test]
        fn every_object_merges(
            members in proptest::collection::btree_map(key(), json(), 0..5),
            pretty in proptest::prelude::any::<bool>(),
        ) {
            let document = Value::Object(members.into_iter().collect());
            let text = if pretty {
                serde_json::to_string_pretty(&document)
            } else {
                serde_json::to_string(&document)
            }
            .expect("serialises");
            let merged = merge(&text, "mcpServers", "quire", &ENTRY, true);
            match document.get("mcpServers") {
                Some(Value::Object(_)) | None => proptest::prop_assert!(merged.is_ok(), "{text}: {merged:?}"),
                Some(_) => proptest::prop_assert!(
                    matches!(merged, Err(Refusal::NotAnObject { .. })),
                    "{text}: {merged:?}"
                ),
            }
        }
    }
}
