//! How a top-level key of a properties block is written: where its token sits in an entry's text,
//! and how a new key is written so it reads back as exactly that key.
//! It only reads and writes key tokens; deciding whether a rename is allowed is `property_key`'s job.

use crate::markdown::frontmatter;

/// Where the key of one top-level entry is written, as byte offsets into the entry's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KeyToken {
    pub start: usize,
    /// Just after the key token (after the closing quote of a quoted key).
    pub end: usize,
    /// Just after the `:` that ends the key.
    pub value_start: usize,
}

/// The key token of an entry written `key: value`, `"key": value` or `'key': value` on its first
/// line; `None` for forms whose key is more than a scalar's text (an anchor, a tag, an alias, an
/// explicit `?` key or a flow collection), which a byte-level rename could misread.
pub(super) fn key_token(entry: &str) -> Option<KeyToken> {
    let bytes = entry.as_bytes();
    let start = bytes.iter().take_while(|byte| **byte == b' ').count();
    let end = match *bytes.get(start)? {
        b'"' => closing_double_quote(bytes, start + 1)? + 1,
        b'\'' => closing_single_quote(bytes, start + 1)? + 1,
        b'&' | b'!' | b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b',' | b'|' | b'>' | b'%'
        | b'@' | b'`' | b'#' => return None,
        _ => plain_key_end(bytes, start)?,
    };
    let colon = end
        + bytes
            .get(end..)?
            .iter()
            .take_while(|byte| matches!(byte, b' ' | b'\t'))
            .count();
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let value_start = colon + 1;
    match bytes.get(value_start) {
        None | Some(b' ' | b'\t' | b'\r' | b'\n') => Some(KeyToken {
            start,
            end,
            value_start,
        }),
        _ => None,
    }
}

/// The end of a plain key: before the first `:` followed by whitespace or the line's end, without
/// the spaces before it. A key never runs onto a second line, and ` #` would start a comment.
fn plain_key_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut index = start;
    while index < bytes.len() {
        match bytes[index] {
            b'\n' | b'\r' => return None,
            b'#' if index > start && matches!(bytes[index - 1], b' ' | b'\t') => return None,
            b':' if matches!(
                bytes.get(index + 1),
                None | Some(b' ' | b'\t' | b'\r' | b'\n')
            ) =>
            {
                let mut end = index;
                while end > start && matches!(bytes[end - 1], b' ' | b'\t') {
                    end -= 1;
                }
                return Some(end);
            }
            _ => index += 1,
        }
    }
    None
}

/// The index of the `"` closing a double-quoted scalar opened just before `from`.
pub(super) fn closing_double_quote(bytes: &[u8], from: usize) -> Option<usize> {
    let mut index = from;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            b'"' => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// The index of the `'` closing a single-quoted scalar opened just before `from` (`''` is a quote).
pub(super) fn closing_single_quote(bytes: &[u8], from: usize) -> Option<usize> {
    let mut index = from;
    while index < bytes.len() {
        if bytes[index] == b'\'' {
            if bytes.get(index + 1) == Some(&b'\'') {
                index += 2;
                continue;
            }
            return Some(index);
        }
        index += 1;
    }
    None
}

/// `key` as a key token: plain when it is ordinary words (so the block looks as a person would
/// write it), double-quoted otherwise. Plain is chosen only for words no YAML reader takes for a
/// boolean, null or number, since Obsidian's reader would otherwise see a different key.
pub(super) fn render_key(key: &str) -> String {
    if plain_key_is_safe(key) {
        key.to_owned()
    } else {
        double_quoted(key)
    }
}

fn plain_key_is_safe(key: &str) -> bool {
    const RESERVED: &[&str] = &["true", "false", "yes", "no", "on", "off", "y", "n", "null"];
    let mut characters = key.chars();
    let first_is_letter = characters
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_');
    let rest_is_plain = key
        .chars()
        .all(|character| character.is_alphanumeric() || " _-./()".contains(character));
    first_is_letter
        && rest_is_plain
        && !key.ends_with(' ')
        && !RESERVED
            .iter()
            .any(|reserved| key.eq_ignore_ascii_case(reserved))
        && reads_back_as_key(&format!("{key}: 0"), key)
}

/// Whether `line` is a one-entry mapping whose key is `key`.
fn reads_back_as_key(line: &str, key: &str) -> bool {
    frontmatter::parse_properties(line).is_ok_and(|map| map.len() == 1 && map.contains_key(key))
}

/// `text` as a YAML double-quoted scalar (whose escapes JSON's are a subset of).
pub(super) fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            control if control.is_control() || control == '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(control)));
            }
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// Byte offset of `part` (a slice of `whole`) within `whole`.
pub(super) fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}
