//! The scalars of a `tags` property's value as written in YAML: a single string, a flow list
//! (`[a, "b"]`) or a block list (`- a`), each with where it sits and what it says.
//! It reads only what it can read exactly; a value written with YAML it does not follow (anchors,
//! tags, aliases, block scalars, mappings) is reported as unreadable, never guessed at.

use super::keys::{closing_double_quote, closing_single_quote, double_quoted};
use crate::markdown::frontmatter;

/// How a scalar is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quoting {
    Plain,
    Single,
    Double,
}

/// One scalar of the value: its byte range (quotes included) and its text, `None` when the text
/// needs more than reading the bytes (escapes, or a quoted scalar folded over lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scalar {
    pub start: usize,
    pub end: usize,
    pub quoting: Quoting,
    pub value: Option<String>,
}

/// The scalars of `value` (the text after a `tags:` key's colon, through the entry's last line);
/// `None` when it holds YAML this reader does not follow.
pub(super) fn scalars(value: &str) -> Option<Vec<Scalar>> {
    let bytes = value.as_bytes();
    let mut found = Vec::new();
    let mut flow_depth = 0usize;
    let mut index = 0;
    while index < bytes.len() {
        let after_space = index == 0 || matches!(bytes[index - 1], b' ' | b'\t' | b'\n' | b'\r');
        index = match bytes[index] {
            b' ' | b'\t' | b'\r' | b'\n' => index + 1,
            b'#' if after_space => value[index..]
                .find('\n')
                .map_or(bytes.len(), |at| index + at),
            b'[' => {
                flow_depth += 1;
                index + 1
            }
            b']' if flow_depth > 0 => {
                flow_depth -= 1;
                index + 1
            }
            b',' if flow_depth > 0 => index + 1,
            b'-' if flow_depth == 0
                && matches!(
                    bytes.get(index + 1),
                    None | Some(b' ' | b'\t' | b'\r' | b'\n')
                ) =>
            {
                index + 1
            }
            b'"' => {
                let close = closing_double_quote(bytes, index + 1)?;
                let inner = value.get(index + 1..close)?;
                let readable = !inner.contains(['\\', '\n', '\r']);
                found.push(scalar(
                    index,
                    close + 1,
                    Quoting::Double,
                    readable.then_some(inner),
                ));
                close + 1
            }
            b'\'' => {
                let close = closing_single_quote(bytes, index + 1)?;
                let inner = value.get(index + 1..close)?;
                let readable = !inner.contains(['\n', '\r']);
                let text = inner.replace("''", "'");
                found.push(scalar(
                    index,
                    close + 1,
                    Quoting::Single,
                    readable.then_some(&text),
                ));
                close + 1
            }
            b'&' | b'!' | b'*' | b'{' | b'}' | b']' | b',' | b'?' | b'|' | b'>' | b'%' | b'@'
            | b'`' | b'#' => return None,
            _ => {
                let end = plain_end(bytes, index, flow_depth > 0)?;
                found.push(scalar(index, end, Quoting::Plain, value.get(index..end)));
                end
            }
        };
    }
    Some(found)
}

fn scalar(start: usize, end: usize, quoting: Quoting, value: Option<&str>) -> Scalar {
    Scalar {
        start,
        end,
        quoting,
        value: value.map(str::to_owned),
    }
}

/// The end of a plain scalar starting at `start`, without trailing spaces: at the line's end, a
/// comment, or (in a flow list) a flow indicator. `None` when a `: ` makes it a mapping.
fn plain_end(bytes: &[u8], start: usize, in_flow: bool) -> Option<usize> {
    let mut index = start;
    while index < bytes.len() {
        let byte = bytes[index];
        let ends_here = matches!(byte, b'\n' | b'\r')
            || (in_flow && matches!(byte, b',' | b'[' | b']' | b'{' | b'}'))
            || (byte == b'#' && index > start && matches!(bytes[index - 1], b' ' | b'\t'));
        if ends_here {
            break;
        }
        let separates = |next: Option<&u8>| {
            matches!(next, None | Some(b' ' | b'\t' | b'\r' | b'\n'))
                || (in_flow && matches!(next, Some(b',' | b'[' | b']' | b'{' | b'}')))
        };
        if byte == b':' && separates(bytes.get(index + 1)) {
            return None;
        }
        index += 1;
    }
    while index > start && matches!(bytes[index - 1], b' ' | b'\t') {
        index -= 1;
    }
    Some(index)
}

/// `value` written back in the scalar's quoting; a plain scalar that would read back as something
/// else (a boolean, a number, null) is double-quoted instead.
pub(super) fn write_scalar(value: &str, quoting: Quoting) -> String {
    match quoting {
        Quoting::Plain if plain_reads_back(value) => value.to_owned(),
        Quoting::Single => format!("'{}'", value.replace('\'', "''")),
        Quoting::Plain | Quoting::Double => double_quoted(value),
    }
}

fn plain_reads_back(value: &str) -> bool {
    frontmatter::parse_properties(&format!("k: {value}")).is_ok_and(|map| {
        map.len() == 1 && map.get("k").and_then(|read| read.as_str()) == Some(value)
    })
}
