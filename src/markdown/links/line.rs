//! The links of one line of note text: wikilinks, embeds, markdown links and images, read in one
//! pass whose look-aheads are answered from what the line already told it, never by scanning the
//! rest of the line again for each opener.
//!
//! Obsidian reads a markdown link's text up to the `]` that balances its `[`, its destination up to
//! white space or the `)` that balances, a title up to its closing quote, and a wikilink up to the
//! next `]]`; when nothing closes, each of those scans runs to the end of the line, so a line of
//! `[a](` repeated read the line once per opener (issue 47: 30 s for 400 KB, with the index writer
//! held all that time). Here each answer is the one that scan gives, found in tables built in one
//! pass over the line (the unit tests compare the two on random lines) or, where only a failure
//! repeats, in the memory of where a search already failed. It must never report a link the scans
//! would not, and never panic on any input.

use percent_encoding::percent_decode_str;

use super::{Link, LinkForm, Positions, find_from, parse_wikilink_inner};
use crate::markdown::blocks::CodeSpans;

/// The links of one line of text. `offset` is where `content` starts in `text`.
pub(super) fn inline_links(
    text: &str,
    offset: usize,
    content: &str,
    line_starts: &[usize],
    in_html_comment: &mut bool,
    links: &mut Vec<Link>,
) {
    // Every link starts with `[`; a line without one (and opening no comment) changes nothing.
    if !*in_html_comment && !content.contains('[') && !content.contains("<!--") {
        return;
    }
    let mut line = LinkLine::new(content);
    let bytes = content.as_bytes();
    let code_spans = CodeSpans::new(bytes);
    let mut index = 0;
    if *in_html_comment {
        match content.find("-->") {
            Some(end) => {
                index = end + 3;
                *in_html_comment = false;
            }
            None => return,
        }
    }
    let mut found = Found {
        content,
        offset,
        positions: Positions::new(text, line_starts),
        links,
    };
    // Every position `index` stops at is an ASCII byte or the start of a character: multi-byte
    // characters never contain ASCII bytes and other bytes only ever advance by one.
    while index < bytes.len() {
        index = match bytes[index] {
            b'\\' => match bytes.get(index + 1) {
                Some(next) if next.is_ascii_punctuation() => index + 2,
                _ => index + 1,
            },
            b'`' => code_spans.skip(index),
            b'<' if content[index..].starts_with("<!--") => {
                match find_from(content, "-->", index + 4) {
                    Some(end) => end + 3,
                    None => {
                        *in_html_comment = true;
                        return;
                    }
                }
            }
            b'$' => line.skip_inline_math(index),
            b'[' if bytes.get(index + 1) == Some(&b'[') => found.wikilink(&mut line, index),
            b'[' => found.markdown_link(&mut line, index),
            _ => index + 1,
        };
    }
}

/// Where the links of one line go, each placed by a position counted on from the last.
struct Found<'t, 'l> {
    content: &'t str,
    /// Where `content` starts in the file's text.
    offset: usize,
    positions: Positions<'t>,
    links: &'l mut Vec<Link>,
}

impl Found<'_, '_> {
    fn push(
        &mut self,
        form: LinkForm,
        embed: bool,
        (start, end): (usize, usize),
        link: String,
        display: String,
    ) {
        let (line, column) = self.positions.at(self.offset + start);
        self.links.push(Link {
            form,
            embed,
            link,
            display,
            original: self.content[start..end].to_owned(),
            start: self.offset + start,
            end: self.offset + end,
            line,
            column,
            key: None,
        });
    }

    /// The `[[` at `index`: its link when it closes on this line; where reading goes on.
    fn wikilink(&mut self, line: &mut LinkLine<'_>, index: usize) -> usize {
        let (content, bytes) = (self.content, self.content.as_bytes());
        let embed = index > 0 && bytes[index - 1] == b'!' && !escaped(bytes, index - 1);
        let start = if embed { index - 1 } else { index };
        match line.wikilink_close(index + 2) {
            Some(close) => {
                let inner = &content[index + 2..close];
                if let Some(reopen) = inner.rfind("[[") {
                    // `[[a [[b]]`: the innermost opener pairs with the closer.
                    index + 2 + reopen
                } else {
                    if let Some((link, display)) = parse_wikilink_inner(inner) {
                        self.push(LinkForm::Wiki, embed, (start, close + 2), link, display);
                    }
                    close + 2
                }
            }
            None => index + 2,
        }
    }

    /// The `[` at `index`: its markdown link when one starts there; where reading goes on.
    fn markdown_link(&mut self, line: &mut LinkLine<'_>, index: usize) -> usize {
        let (content, bytes) = (self.content, self.content.as_bytes());
        match line.markdown_link(index) {
            Some(found) => {
                let embed = index > 0 && bytes[index - 1] == b'!' && !escaped(bytes, index - 1);
                let start = if embed { index - 1 } else { index };
                if let Some(destination) = found.destination {
                    self.push(
                        LinkForm::Markdown,
                        embed,
                        (start, found.end),
                        destination,
                        content[index + 1..found.text_end].to_owned(),
                    );
                }
                found.end
            }
            None => index + 1,
        }
    }
}

/// Whether the byte at `at` is escaped by an odd run of backslashes before it.
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|byte| **byte == b'\\')
        .count()
        % 2
        == 1
}

pub(super) struct MarkdownLink {
    /// End of the link text (the `]`).
    pub(super) text_end: usize,
    /// After the closing `)`.
    pub(super) end: usize,
    /// The decoded destination, or `None` for an external URL (still skipped as a whole).
    pub(super) destination: Option<String>,
}

/// One line being read for links, with what its look-aheads need: tables built on first use and
/// the positions from which a search is known to fail.
pub(super) struct LinkLine<'a> {
    content: &'a str,
    /// The smallest position from which no `]]` follows.
    no_wikilink_close_from: usize,
    /// The smallest position from which no `$` closes inline math.
    no_math_close_from: usize,
    markdown: Option<MarkdownTables>,
    /// Positions of `>`, `<`, `"`, `'` and `)`, each list built on first use.
    bytes_at: [Option<Sorted<()>>; 5],
}

/// The bytes `LinkLine::bytes_at` keeps positions of.
const LOOKED_UP: [u8; 5] = [b'>', b'<', b'"', b'\'', b')'];

impl<'a> LinkLine<'a> {
    pub(super) fn new(content: &'a str) -> Self {
        LinkLine {
            content,
            no_wikilink_close_from: usize::MAX,
            no_math_close_from: usize::MAX,
            markdown: None,
            bytes_at: Default::default(),
        }
    }

    /// The first `]]` at or after `from`. A found closer ends the scan that found it (the link is
    /// read, or the opener nearest to it is tried next), so only failures repeat: one failed search
    /// answers for every later opener.
    fn wikilink_close(&mut self, from: usize) -> Option<usize> {
        if from >= self.no_wikilink_close_from {
            return None;
        }
        let found = find_from(self.content, "]]", from);
        if found.is_none() {
            self.no_wikilink_close_from = from;
        }
        found
    }

    /// Skips inline math: `$$...$$`, or `$...$` where the opening `$` is followed by a non-space and
    /// the closing one is preceded by a non-space and not followed by a digit.
    fn skip_inline_math(&mut self, start: usize) -> usize {
        let content = self.content;
        let bytes = content.as_bytes();
        if bytes.get(start + 1) == Some(&b'$') {
            // A failed search finds no later `$$` either, so no later opener searches again.
            return find_from(content, "$$", start + 2).map_or(start + 2, |end| end + 2);
        }
        match bytes.get(start + 1) {
            Some(next) if !next.is_ascii_whitespace() => {}
            _ => return start + 1,
        }
        // Whether a `$` closes does not depend on where the math opened, so one failed search
        // answers for every later opener too.
        let search_from = start + 1;
        if search_from >= self.no_math_close_from {
            return start + 1;
        }
        let mut at = search_from;
        while let Some(found) = find_from(content, "$", at) {
            let before = bytes[found - 1];
            let after = bytes.get(found + 1);
            if !before.is_ascii_whitespace()
                && before != b'\\'
                && !after.is_some_and(u8::is_ascii_digit)
            {
                return found + 1;
            }
            at = found + 1;
        }
        self.no_math_close_from = search_from;
        start + 1
    }

    /// The first occurrence of `LOOKED_UP[slot]` at or after `from`.
    fn next_byte(&mut self, slot: usize, from: usize) -> Option<usize> {
        let content = self.content;
        let positions = self.bytes_at.get_mut(slot)?.get_or_insert_with(|| {
            let byte = LOOKED_UP.get(slot).copied().unwrap_or(b'>');
            Sorted::positions_of(content.as_bytes(), byte, ())
        });
        positions.first_from(from).map(|(at, ())| at)
    }

    fn tables(&mut self) -> &mut MarkdownTables {
        let content = self.content;
        self.markdown
            .get_or_insert_with(|| MarkdownTables::new(content.as_bytes()))
    }

    /// Reads `[text](destination "title")` starting at the `[`.
    pub(super) fn markdown_link(&mut self, open: usize) -> Option<MarkdownLink> {
        let content = self.content;
        let bytes = content.as_bytes();
        let text_end = self.tables().text_end(open)?;
        if bytes.get(text_end + 1) != Some(&b'(') {
            return None;
        }
        let (start, end, angle) = self.destination_span(text_end)?;
        let raw = &content[start..end];
        if angle && self.next_byte(1, start).is_some_and(|at| at < end) {
            // `raw.contains('<')`: an angle destination holds no `<`.
            return None;
        }
        let after = if angle { end + 1 } else { end };
        let mut index = after;
        while bytes.get(index).is_some_and(|byte| *byte == b' ') {
            index += 1;
        }
        // An optional title in quotes or parentheses.
        if let Some(quote @ (b'"' | b'\'' | b'(')) = bytes.get(index).copied() {
            let slot = match quote {
                b'"' => 2,
                b'\'' => 3,
                _ => 4,
            };
            let close = self.next_byte(slot, index + 1)?;
            index = close + 1;
            while bytes.get(index).is_some_and(|byte| *byte == b' ') {
                index += 1;
            }
        }
        if bytes.get(index) != Some(&b')') {
            return None;
        }
        let end = index + 1;
        if raw.is_empty() {
            // `[]()` and `[alias]()` are no links.
            return Some(MarkdownLink {
                text_end,
                end,
                destination: None,
            });
        }
        let destination = (!has_scheme(raw)).then(|| {
            percent_decode_str(&unescape(raw))
                .decode_utf8_lossy()
                .into_owned()
        });
        Some(MarkdownLink {
            text_end,
            end,
            destination,
        })
    }

    /// Where a markdown link's destination lies (without angle brackets) and whether it has them;
    /// `text_end` is the `]` of a link text followed by `(`.
    pub(super) fn destination_span(&mut self, text_end: usize) -> Option<(usize, usize, bool)> {
        let bytes = self.content.as_bytes();
        let mut index = text_end + 2;
        while bytes.get(index).is_some_and(|byte| *byte == b' ') {
            index += 1;
        }
        if bytes.get(index) == Some(&b'<') {
            let close = self.next_byte(0, index + 1)?;
            return Some((index + 1, close, true));
        }
        let end = self.tables().destination_end(index)?;
        Some((index, end, false))
    }
}

/// Entries sorted by position, each lookup starting from where the last one ended: the loop asks
/// in increasing order, so an answer is nearly always at or just past the last one, and a binary
/// search over the whole table missed the cache at each step.
struct Sorted<T> {
    entries: Vec<(usize, T)>,
    cursor: usize,
}

impl<T: Copy> Sorted<T> {
    fn new(entries: Vec<(usize, T)>) -> Self {
        Sorted { entries, cursor: 0 }
    }

    /// The positions of `byte` in `bytes`.
    fn positions_of(bytes: &[u8], byte: u8, value: T) -> Self {
        Sorted::new(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, candidate)| **candidate == byte)
                .map(|(at, _)| (at, value))
                .collect(),
        )
    }

    /// The first entry at or after `position`: a galloping search from the cursor when the cursor
    /// lies before it, from the start otherwise.
    fn first_from(&mut self, position: usize) -> Option<(usize, T)> {
        let entries = &self.entries;
        let from = match entries.get(self.cursor) {
            Some((at, _)) if *at <= position => self.cursor,
            _ => 0,
        };
        let mut bound = 1;
        while entries
            .get(from + bound)
            .is_some_and(|(at, _)| *at < position)
        {
            bound *= 2;
        }
        // Everything before `from + bound / 2` lies before `position`; the entry at `from + bound`,
        // if any, does not.
        let start = from + bound / 2;
        let end = (from + bound + 1).min(entries.len());
        let index = start
            + entries
                .get(start..end)
                .map_or(0, |window| window.partition_point(|(at, _)| *at < position));
        self.cursor = index;
        entries.get(index).copied()
    }

    /// The value of the entry at exactly `position`.
    fn at(&mut self, position: usize) -> Option<T> {
        self.first_from(position)
            .filter(|(at, _)| *at == position)
            .map(|(_, value)| value)
    }
}

/// Where the markdown-link scans of one line stop, for every place they can start.
///
/// Both scans step over the line the same way (a `\` takes the byte after it along) and count a
/// depth: `[` and `]` for the link text, `(` and `)` for the destination. A scan started on a byte
/// that this pass from the line's start also steps on follows the same steps from there on; one
/// started on a byte the pass steps over (an escaped `[`) joins it on the next byte. So a scan's
/// stop is where the pass's depth first falls below the depth it had where the scan started, and
/// one pass with a stack of the scans still open finds every stop.
struct MarkdownTables {
    /// Each `[` of the line, escaped ones too, with the `]` that balances it, if one does.
    text_ends: Sorted<Option<usize>>,
    /// Each place a bare destination can start (after `](` and spaces) with where it stops: before
    /// white space, a control character or the `)` that balances, or at the end of the line.
    destination_ends: Sorted<usize>,
}

impl MarkdownTables {
    fn new(bytes: &[u8]) -> MarkdownTables {
        let mut text_ends: Vec<(usize, Option<usize>)> = Vec::new();
        let mut destination_ends: Vec<(usize, usize)> = Vec::new();
        // Scans still open: (entry, the pass's depth at which they stop).
        let mut open_texts: Vec<(usize, isize)> = Vec::new();
        let mut open_destinations: Vec<(usize, isize)> = Vec::new();
        let (mut brackets, mut parens) = (0isize, 0isize);
        // The start of a destination this pass has not reached yet (only spaces lie before it).
        let mut destination_start = None;
        let mut index = 0;
        while index < bytes.len() {
            if destination_start == Some(index) {
                destination_start = None;
                open_destinations.push((destination_ends.len(), parens));
                destination_ends.push((index, bytes.len()));
            }
            match bytes[index] {
                b'\\' => {
                    match bytes.get(index + 1) {
                        // A scan started on the escaped `[` counts it, then steps as this pass does.
                        Some(b'[') => {
                            open_texts.push((text_ends.len(), brackets - 1));
                            text_ends.push((index + 1, None));
                        }
                        // No link text ends on an escaped `]`, but the table answers for it too.
                        Some(b']') if bytes.get(index + 2) == Some(&b'(') => {
                            destination_start = Some(index + 3 + spaces_from(bytes, index + 3));
                        }
                        _ => {}
                    }
                    index += 2;
                    continue;
                }
                b'[' => {
                    open_texts.push((text_ends.len(), brackets));
                    text_ends.push((index, None));
                    brackets += 1;
                }
                b']' => {
                    brackets -= 1;
                    while let Some(&(entry, depth)) = open_texts.last()
                        && depth == brackets
                    {
                        open_texts.pop();
                        if let Some(slot) = text_ends.get_mut(entry) {
                            slot.1 = Some(index);
                        }
                    }
                    if bytes.get(index + 1) == Some(&b'(') {
                        destination_start = Some(index + 2 + spaces_from(bytes, index + 2));
                    }
                }
                b'(' => parens += 1,
                b')' => {
                    while let Some(&(entry, depth)) = open_destinations.last()
                        && depth == parens
                    {
                        open_destinations.pop();
                        if let Some(slot) = destination_ends.get_mut(entry) {
                            slot.1 = index;
                        }
                    }
                    parens -= 1;
                }
                byte if byte.is_ascii_whitespace() || byte.is_ascii_control() => {
                    for (entry, _) in open_destinations.drain(..) {
                        if let Some(slot) = destination_ends.get_mut(entry) {
                            slot.1 = index;
                        }
                    }
                }
                _ => {}
            }
            index += 1;
        }
        // A destination starting at the end of the line is empty.
        if let Some(start) = destination_start {
            destination_ends.push((start, bytes.len()));
        }
        MarkdownTables {
            text_ends: Sorted::new(text_ends),
            destination_ends: Sorted::new(destination_ends),
        }
    }

    /// Where the link text opened by the `[` at `open` ends (its balancing `]`).
    fn text_end(&mut self, open: usize) -> Option<usize> {
        self.text_ends.at(open)?
    }

    /// Where the bare destination starting at `start` ends.
    fn destination_end(&mut self, start: usize) -> Option<usize> {
        self.destination_ends.at(start)
    }
}

/// How many spaces follow from `from` on.
fn spaces_from(bytes: &[u8], from: usize) -> usize {
    bytes
        .iter()
        .skip(from)
        .take_while(|byte| **byte == b' ')
        .count()
}

/// Removes backslash escapes before ASCII punctuation.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut characters = raw.chars().peekable();
    while let Some(character) = characters.next() {
        if character == '\\'
            && let Some(next) = characters.peek()
            && next.is_ascii_punctuation()
        {
            continue;
        }
        out.push(character);
    }
    out
}

/// Whether a destination is a URL with a scheme (`https:`, `mailto:`, `obsidian:`, `file:`), which
/// never names a vault file. A Windows drive letter is not a scheme either, but is no vault path.
fn has_scheme(raw: &str) -> bool {
    let Some(colon) = raw.find(':') else {
        return raw.starts_with("//");
    };
    let scheme = &raw[..colon];
    scheme
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "+.-".contains(character))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scans the tables replace, as they were written: the reference the tables must agree with.
    mod reference {
        use super::super::{find_from, has_scheme, unescape};
        use percent_encoding::percent_decode_str;

        pub fn markdown_link(content: &str, open: usize) -> Option<(usize, usize, Option<String>)> {
            let bytes = content.as_bytes();
            let mut depth = 0usize;
            let mut index = open;
            let text_end = loop {
                match bytes.get(index)? {
                    b'\\' => index += 2,
                    b'[' => {
                        depth += 1;
                        index += 1;
                    }
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            break index;
                        }
                        index += 1;
                    }
                    _ => index += 1,
                }
            };
            if bytes.get(text_end + 1) != Some(&b'(') {
                return None;
            }
            let (start, end, angle) = destination_span(content, text_end)?;
            let raw = &content[start..end];
            if angle && raw.contains('<') {
                return None;
            }
            let mut index = if angle { end + 1 } else { end };
            while bytes.get(index).is_some_and(|byte| *byte == b' ') {
                index += 1;
            }
            if let Some(quote @ (b'"' | b'\'' | b'(')) = bytes.get(index).copied() {
                let closing = if quote == b'(' { b')' } else { quote };
                let close = index
                    + 1
                    + bytes
                        .get(index + 1..)?
                        .iter()
                        .position(|byte| *byte == closing)?;
                index = close + 1;
                while bytes.get(index).is_some_and(|byte| *byte == b' ') {
                    index += 1;
                }
            }
            if bytes.get(index) != Some(&b')') {
                return None;
            }
            let destination = (!raw.is_empty() && !has_scheme(raw)).then(|| {
                percent_decode_str(&unescape(raw))
                    .decode_utf8_lossy()
                    .into_owned()
            });
            Some((text_end, index + 1, destination))
        }

        pub fn destination_span(content: &str, text_end: usize) -> Option<(usize, usize, bool)> {
            let bytes = content.as_bytes();
            let mut index = text_end + 2;
            while bytes.get(index).is_some_and(|byte| *byte == b' ') {
                index += 1;
            }
            if bytes.get(index) == Some(&b'<') {
                let close = index + 1 + content.get(index + 1..)?.find('>')?;
                return Some((index + 1, close, true));
            }
            let start = index;
            let mut parens = 0usize;
            while let Some(byte) = bytes.get(index) {
                match byte {
                    b'\\' => index += 2,
                    b'(' => {
                        parens += 1;
                        index += 1;
                    }
                    b')' if parens == 0 => break,
                    b')' => {
                        parens -= 1;
                        index += 1;
                    }
                    byte if byte.is_ascii_whitespace() || byte.is_ascii_control() => break,
                    _ => index += 1,
                }
            }
            Some((start, index.min(bytes.len()), false))
        }

        pub fn skip_inline_math(content: &str, start: usize) -> usize {
            let bytes = content.as_bytes();
            if bytes.get(start + 1) == Some(&b'$') {
                return find_from(content, "$$", start + 2).map_or(start + 2, |end| end + 2);
            }
            match bytes.get(start + 1) {
                Some(next) if !next.is_ascii_whitespace() => {}
                _ => return start + 1,
            }
            let mut at = start + 1;
            while let Some(found) = find_from(content, "$", at) {
                let before = bytes[found - 1];
                let after = bytes.get(found + 1);
                if !before.is_ascii_whitespace()
                    && before != b'\\'
                    && !after.is_some_and(u8::is_ascii_digit)
                {
                    return found + 1;
                }
                at = found + 1;
            }
            start + 1
        }
    }

    /// Lines of the bytes the scans branch on.
    fn line() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("["),
            Just("]"),
            Just("("),
            Just(")"),
            Just("<"),
            Just(">"),
            Just("\""),
            Just("'"),
            Just(" "),
            Just("\t"),
            Just("\\"),
            Just("!"),
            Just("$"),
            Just("1"),
            Just("a"),
            Just("é"),
            Just(":"),
            Just("%20"),
            Just("#"),
            Just("\u{1}"),
        ];
        prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
    }

    /// Each question the main loop can ask, asked of one `LinkLine` in the order the loop asks
    /// (left to right) and then again from right to left, gets the answer the scan it replaces
    /// gives.
    fn agrees(content: &str) -> Result<(), TestCaseError> {
        let bytes = content.as_bytes();
        let mut line = LinkLine::new(content);
        for at in (0..bytes.len()).chain((0..bytes.len()).rev()) {
            if !content.is_char_boundary(at) {
                continue;
            }
            match bytes[at] {
                b'[' => {
                    let found = line
                        .markdown_link(at)
                        .map(|found| (found.text_end, found.end, found.destination));
                    prop_assert_eq!(found, reference::markdown_link(content, at), "[ at {}", at);
                    prop_assert_eq!(
                        line.wikilink_close(at),
                        find_from(content, "]]", at),
                        "]] from {}",
                        at
                    );
                }
                b']' if bytes.get(at + 1) == Some(&b'(') => prop_assert_eq!(
                    line.destination_span(at),
                    reference::destination_span(content, at),
                    "]( at {}",
                    at
                ),
                b'$' => prop_assert_eq!(
                    line.skip_inline_math(at),
                    reference::skip_inline_math(content, at),
                    "$ at {}",
                    at
                ),
                _ => {}
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn tables_answer_as_the_scans_they_replace(content in line()) {
            agrees(&content)?;
        }
    }

    #[test]
    fn tables_answer_as_the_scans_on_escapes_and_nesting() {
        for content in [
            r"\[a](b)",
            r"\](",
            r"[\[a](b)",
            r"[\\[a](b)",
            r"[a\](b)](c)",
            r"[a](b\)c)",
            r"[a](b\ c)",
            "[a](b(c)d)",
            "[a]((b)",
            "[a](  <b>)",
            "[a](<b<c>)",
            "[a](b 'c' )",
            "[a](b (c))",
            "[a](",
            "[a](  ",
            "[[a](b)]](c)",
            "$a$ $ b$ $c $d$1 $$e$$",
        ] {
            assert!(agrees(content).is_ok(), "{content:?}");
        }
    }
}
