//! The line-level syntax the block scan recognises: list markers, thematic breaks, setext
//! underlines, ATX headings, code fences, lazy continuation lines and inline comments.

use super::{CodeSpans, Cursor, html_block_start, is_blank};

/// Whether a line that does not continue every open container still continues the open paragraph,
/// because it would not start any other block.
pub(super) fn is_lazy_continuation(cursor: &Cursor<'_>) -> bool {
    if cursor.rest_is_blank() {
        return false;
    }
    if cursor.indent(4) >= 4 {
        return true;
    }
    let text = cursor.after_indent();
    let starts_block = text.starts_with('>')
        || text.starts_with("$$")
        || text.starts_with("%%")
        || opening_fence(text).is_some()
        || atx_heading(text).is_some()
        || is_thematic_break(text)
        || html_block_start(text, true).is_some()
        || list_marker(text).is_some_and(|marker| {
            !marker.ordered_start_not_one && !is_blank(text.get(marker.width..).unwrap_or(""))
        });
    !starts_block
}

pub(super) struct ListMarker {
    /// Bytes of the marker itself (`-`, `1.`, `10)`).
    pub(super) width: usize,
    pub(super) ordered_start_not_one: bool,
}

/// A bullet (`-`, `+`, `*`) or ordered (`1.`, `1)`, up to nine digits) list marker followed by a space,
/// a tab or the end of the line.
pub(super) fn list_marker(text: &str) -> Option<ListMarker> {
    let bytes = text.as_bytes();
    let width = match bytes.first()? {
        b'-' | b'+' | b'*' => 1,
        b'0'..=b'9' => {
            let digits = bytes
                .iter()
                .take_while(|byte| byte.is_ascii_digit())
                .count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            digits + 1
        }
        _ => return None,
    };
    if !matches!(bytes.get(width), None | Some(b' ' | b'\t')) {
        return None;
    }
    let ordered_start_not_one = width > 1
        && text
            .get(..width - 1)
            .is_some_and(|digits| digits.trim_start_matches('0') != "1");
    Some(ListMarker {
        width,
        ordered_start_not_one,
    })
}

/// Three or more `*`, `-` or `_` (the same one), with only spaces or tabs between.
pub(super) fn is_thematic_break(text: &str) -> bool {
    let Some(&marker) = text.as_bytes().first() else {
        return false;
    };
    if !matches!(marker, b'*' | b'-' | b'_') {
        return false;
    }
    let mut count = 0;
    for byte in text.bytes() {
        if byte == marker {
            count += 1;
        } else if byte != b' ' && byte != b'\t' {
            return false;
        }
    }
    count >= 3
}

/// `is_thematic_break` of the rests of one line, which nested list items ask one after another:
/// each asking scanned the rest of the line, quadratic in a line of `- ` repeated before other text
/// (issue 47). A rest is a break only if nothing but its marker, spaces and tabs follow its start,
/// so the last other byte for each marker, found once from the line's end, rules most rests out.
pub(super) struct BreakSuffixes<'a> {
    line: &'a str,
    /// For `*`, `-` and `_`: where the last byte that is neither it, a space nor a tab lies.
    last_other: Option<[Option<usize>; 3]>,
}

impl<'a> BreakSuffixes<'a> {
    pub(super) fn new(line: &'a str) -> Self {
        BreakSuffixes {
            line,
            last_other: None,
        }
    }

    /// `is_thematic_break(text)` for `text`, a rest of the line.
    pub(super) fn is_thematic_break(&mut self, text: &str) -> bool {
        let slot = match text.as_bytes().first() {
            Some(b'*') => 0,
            Some(b'-') => 1,
            Some(b'_') => 2,
            _ => return false,
        };
        let start = self.line.len().saturating_sub(text.len());
        let line = self.line;
        let last_other = self.last_other.get_or_insert_with(|| last_others(line));
        if last_other[slot].is_some_and(|other| other >= start) {
            return false;
        }
        // Only markers, spaces and tabs are left: at most two such rests are asked about without
        // this answering yes and ending the line's containers, so counting stays linear.
        is_thematic_break(text)
    }
}

/// For `*`, `-` and `_`: the last byte of `line` that is neither that marker, a space nor a tab.
pub(super) fn last_others(line: &str) -> [Option<usize>; 3] {
    let mut found = [None; 3];
    for (at, byte) in line.bytes().enumerate().rev() {
        for (slot, marker) in [b'*', b'-', b'_'].into_iter().enumerate() {
            if found[slot].is_none() && byte != marker && byte != b' ' && byte != b'\t' {
                found[slot] = Some(at);
            }
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found
}

/// `===` (level 1) or `---` (level 2) with optional trailing whitespace.
pub(super) fn setext_underline(text: &str) -> Option<u8> {
    let trimmed = text.trim_end_matches([' ', '\t']);
    let marker = *trimmed.as_bytes().first()?;
    if !trimmed.bytes().all(|byte| byte == marker) {
        return None;
    }
    match marker {
        b'=' => Some(1),
        b'-' => Some(2),
        _ => None,
    }
}

/// An ATX heading (`#` to `######` then a space, a tab or the end of the line): its level and its text
/// with the optional closing `#` sequence removed.
pub(crate) fn atx_heading(text: &str) -> Option<(u8, &str)> {
    let hashes = text.bytes().take_while(|byte| *byte == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = text.get(hashes..)?;
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let mut content = after.trim_matches([' ', '\t']);
    let without_closing = content.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        content = without_closing.trim_end_matches([' ', '\t']);
    }
    // `hashes` is at most 6, so the conversion cannot fail; the fallback only keeps the code panic-free.
    Some((u8::try_from(hashes).unwrap_or(6), content))
}

/// An opening code fence: its marker byte and length.
pub(super) fn opening_fence(text: &str) -> Option<(u8, usize)> {
    let marker = *text.as_bytes().first()?;
    if marker != b'`' && marker != b'~' {
        return None;
    }
    let length = text.bytes().take_while(|byte| *byte == marker).count();
    if length < 3 {
        return None;
    }
    if marker == b'`' && text.get(length..).is_some_and(|info| info.contains('`')) {
        return None;
    }
    Some((marker, length))
}

pub(super) fn is_closing_fence(cursor: &Cursor<'_>, marker: u8, length: usize) -> bool {
    if cursor.indent(4) > 3 {
        return false;
    }
    let text = cursor.after_indent();
    let run = text.bytes().take_while(|byte| *byte == marker).count();
    run >= length && text.get(run..).is_some_and(is_blank)
}

/// Whether the line after an open `%%` is left inside a comment: an odd number of `%%` outside code spans.
pub(super) fn opens_inline_comment(text: &str) -> bool {
    let bytes = text.as_bytes();
    let spans = CodeSpans::new(bytes);
    let mut index = 0;
    let mut open = false;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            b'`' if !open => index = spans.skip(index),
            b'%' if bytes.get(index + 1) == Some(&b'%') => {
                open = !open;
                index += 2;
            }
            _ => index += 1,
        }
    }
    open
}
