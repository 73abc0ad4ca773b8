//! The block structure of a note body, line by line: which lines are code, math, comments, HTML or
//! ordinary text, which sit inside block quotes or list items, and where the top-level headings are.
//! It follows the CommonMark block algorithm (containers, then leaves, with lazy paragraph continuation)
//! plus Obsidian's `%%` comment and `$$` math blocks, so that `headings` and `tags` agree on what is text.
//! It must never allocate per byte, never slice inside a UTF-8 character, and never panic on any input.

use super::frontmatter;

mod code_spans;
mod cursor;
mod html;
mod markers;

pub(crate) use code_spans::CodeSpans;
use cursor::Cursor;
use html::{html_block_ends, html_block_start};
pub(crate) use markers::atx_heading;
use markers::{
    BreakSuffixes, is_closing_fence, is_lazy_continuation, is_thematic_break, list_marker,
    opening_fence, opens_inline_comment, setext_underline,
};

/// What a line is, as far as headings and tags care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// The properties block, fences included.
    Frontmatter,
    /// A line with nothing but whitespace after its container markers.
    Blank,
    /// Paragraph text, thematic breaks and anything else whose inline content Obsidian reads.
    Text,
    /// An ATX heading line, or either line of a setext heading.
    Heading,
    /// Fenced code (fences included) or indented code.
    Code,
    /// A `$$` display-math block, delimiters included.
    Math,
    /// An Obsidian `%%` comment block, delimiters included.
    Comment,
    /// A raw HTML block, including `<!-- -->` comments.
    Html,
}

/// One line of the file after its block-quote and list-item markers have been taken off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based line number in the whole file.
    pub number: usize,
    /// The line after its container markers, without the line ending.
    pub content: &'a str,
    pub kind: LineKind,
}

/// A heading of the top level of the document (not inside a block quote, callout or list item).
/// A heading as the scan finds it; `headings::sections` sets its `section_end` in place (no
/// second list of every heading: a note may hold a million).
pub(crate) type RawHeading = super::headings::Heading;

#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    pub lines: Vec<Line<'a>>,
    pub headings: Vec<RawHeading>,
}

/// An open container block.
#[derive(Debug, Clone, Copy)]
enum Container {
    Quote,
    /// A list item whose content starts `content_indent` columns after its parent's content.
    Item {
        content_indent: usize,
    },
}

/// How a raw HTML block ends (CommonMark HTML block kinds 1 to 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HtmlEnd {
    /// Ends on the line containing this text (compared ASCII case-insensitively).
    Contains(&'static str),
    /// Ends on the line containing any of the closing tags of kind 1.
    RawTextClose,
    /// Ends before the next blank line.
    BlankLine,
}

/// The open leaf block, with the container depth it lives at.
#[derive(Debug, Clone)]
enum Leaf {
    None,
    Paragraph {
        depth: usize,
        start: usize,
        line: usize,
        text: String,
    },
    Fence {
        depth: usize,
        marker: u8,
        length: usize,
    },
    IndentedCode {
        depth: usize,
    },
    Html {
        depth: usize,
        end: HtmlEnd,
    },
    Math {
        depth: usize,
    },
    Comment {
        depth: usize,
    },
}

impl Leaf {
    fn depth(&self) -> Option<usize> {
        match self {
            Leaf::None => None,
            Leaf::Paragraph { depth, .. }
            | Leaf::Fence { depth, .. }
            | Leaf::IndentedCode { depth }
            | Leaf::Html { depth, .. }
            | Leaf::Math { depth }
            | Leaf::Comment { depth } => Some(*depth),
        }
    }
}

fn is_blank(text: &str) -> bool {
    text.bytes().all(|byte| byte == b' ' || byte == b'\t')
}

/// Splits a note into classified lines and top-level headings. The properties block is skipped.
pub(crate) fn scan(text: &str) -> Scan<'_> {
    let split = frontmatter::split(text);
    let mut scanner = Scanner::default();
    let mut number = 1;
    let mut start = 0;
    while start < split.block_len {
        let (content, next) = next_line(text, start);
        scanner.scan.lines.push(Line {
            number,
            content,
            kind: LineKind::Frontmatter,
        });
        number += 1;
        start = next;
    }
    let mut start = split.block_len;
    let mut number = split.body_start_line;
    while start < text.len() {
        let (content, next) = next_line(text, start);
        scanner.line(content, start, number);
        number += 1;
        start = next;
    }
    scanner.finish();
    scanner.scan
}

/// The line starting at `start` without its ending, and where the next line starts.
fn next_line(text: &str, start: usize) -> (&str, usize) {
    let rest = text.get(start..).unwrap_or("");
    match rest.find('\n') {
        Some(newline) => (
            rest[..newline]
                .strip_suffix('\r')
                .unwrap_or(&rest[..newline]),
            start + newline + 1,
        ),
        None => (rest.strip_suffix('\r').unwrap_or(rest), text.len()),
    }
}

#[derive(Debug)]
struct Scanner<'a> {
    scan: Scan<'a>,
    containers: Containers,
    leaf: Leaf,
}

impl Default for Scanner<'_> {
    fn default() -> Self {
        Scanner {
            scan: Scan::default(),
            containers: Containers::default(),
            leaf: Leaf::None,
        }
    }
}

/// The open containers, outermost first, and which of them are block quotes: a blank line goes on
/// in every list item and in no block quote, so it continues the containers up to the first quote,
/// found without walking the items before it. Walking them made a line of many nested items
/// followed by blank lines quadratic (issue 47).
#[derive(Debug, Default)]
struct Containers {
    open: Vec<Container>,
    /// Indexes in `open` of the block quotes, in order.
    quotes: Vec<usize>,
}

impl Containers {
    fn push(&mut self, container: Container) {
        if matches!(container, Container::Quote) {
            self.quotes.push(self.open.len());
        }
        self.open.push(container);
    }

    fn truncate(&mut self, length: usize) {
        self.open.truncate(length);
        while self.quotes.last().is_some_and(|quote| *quote >= length) {
            self.quotes.pop();
        }
    }

    fn clear(&mut self) {
        self.open.clear();
        self.quotes.clear();
    }

    fn len(&self) -> usize {
        self.open.len()
    }

    fn iter(&self) -> std::slice::Iter<'_, Container> {
        self.open.iter()
    }

    /// The index of the first block quote at or after `index`, or the number of containers.
    fn first_quote_from(&self, index: usize) -> usize {
        let at = self.quotes.partition_point(|quote| *quote < index);
        self.quotes.get(at).copied().unwrap_or(self.open.len())
    }
}

impl<'a> Scanner<'a> {
    fn push(&mut self, number: usize, content: &'a str, kind: LineKind) {
        self.scan.lines.push(Line {
            number,
            content,
            kind,
        });
    }

    fn finish(&mut self) {
        self.leaf = Leaf::None;
        self.containers.clear();
    }

    fn line(&mut self, raw: &'a str, start: usize, number: usize) {
        let mut cursor = Cursor::new(raw);
        let matched = self.match_containers(&mut cursor);
        let all_matched = matched == self.containers.len();

        if all_matched && let Some(kind) = self.continue_raw_leaf(&cursor) {
            self.push(number, cursor.rest(), kind);
            return;
        }
        if !all_matched {
            if matches!(self.leaf, Leaf::Paragraph { .. }) && is_lazy_continuation(&cursor) {
                let kind = self.extend_paragraph(cursor.rest());
                self.push(number, cursor.rest(), kind);
                return;
            }
            self.containers.truncate(matched);
            if self.leaf.depth().is_some_and(|depth| depth > matched) {
                self.leaf = Leaf::None;
            }
        }
        self.open_containers(&mut cursor);
        let kind = self.leaf_line(&mut cursor, start, number);
        self.push(number, cursor.rest(), kind);
    }

    /// Walks the open containers and returns how many this line continues.
    fn match_containers(&self, cursor: &mut Cursor<'a>) -> usize {
        for (index, container) in self.containers.iter().enumerate() {
            match container {
                Container::Quote => {
                    let indent = cursor.indent(4);
                    if indent > 3 || cursor.after_indent().as_bytes().first() != Some(&b'>') {
                        return index;
                    }
                    cursor.consume_columns(indent);
                    cursor.consume_ascii(1);
                    if matches!(cursor.byte(0), Some(b' ' | b'\t')) {
                        cursor.consume_columns(1);
                    }
                }
                Container::Item { content_indent } => {
                    if cursor.rest_is_blank() {
                        // Blank from here on: this item and those after it go on, up to the
                        // first block quote, which a blank rest never continues.
                        return self.containers.first_quote_from(index);
                    }
                    if cursor.indent(*content_indent) < *content_indent {
                        return index;
                    }
                    cursor.consume_columns(*content_indent);
                }
            }
        }
        self.containers.len()
    }

    /// Continues an open fence, math, comment or HTML block; `None` when no such block is open.
    fn continue_raw_leaf(&mut self, cursor: &Cursor<'a>) -> Option<LineKind> {
        let rest = cursor.rest();
        match self.leaf {
            Leaf::Fence { marker, length, .. } => {
                if is_closing_fence(cursor, marker, length) {
                    self.leaf = Leaf::None;
                }
                Some(LineKind::Code)
            }
            Leaf::Math { .. } => {
                if rest.contains("$$") {
                    self.leaf = Leaf::None;
                }
                Some(LineKind::Math)
            }
            Leaf::Comment { .. } => {
                if rest.contains("%%") {
                    self.leaf = Leaf::None;
                }
                Some(LineKind::Comment)
            }
            Leaf::Html { end, .. } => {
                if end == HtmlEnd::BlankLine {
                    if is_blank(rest) {
                        self.leaf = Leaf::None;
                        return Some(LineKind::Blank);
                    }
                } else if html_block_ends(end, rest) {
                    self.leaf = Leaf::None;
                }
                Some(LineKind::Html)
            }
            _ => None,
        }
    }

    /// Opens every block quote and list item that starts on this line.
    fn open_containers(&mut self, cursor: &mut Cursor<'a>) {
        let mut breaks = BreakSuffixes::new(cursor.line);
        loop {
            let indent = cursor.indent(4);
            if indent > 3 {
                return;
            }
            let text = cursor.after_indent();
            let bytes = text.as_bytes();
            if bytes.first() == Some(&b'>') {
                cursor.consume_columns(indent);
                cursor.consume_ascii(1);
                if matches!(cursor.byte(0), Some(b' ' | b'\t')) {
                    cursor.consume_columns(1);
                }
                self.containers.push(Container::Quote);
                self.leaf = Leaf::None;
                continue;
            }
            if breaks.is_thematic_break(text) {
                return;
            }
            let Some(marker) = list_marker(text) else {
                return;
            };
            let paragraph_open = matches!(self.leaf, Leaf::Paragraph { .. });
            let after_marker = text.get(marker.width..).unwrap_or("");
            if paragraph_open && (is_blank(after_marker) || marker.ordered_start_not_one) {
                // CommonMark: only a non-empty item (and an ordered one only from 1) interrupts a paragraph.
                return;
            }
            cursor.consume_columns(indent);
            cursor.consume_ascii(marker.width);
            let spaces = cursor.indent(5);
            let content_gap = if cursor.rest_is_blank() || spaces > 4 {
                1
            } else {
                spaces
            };
            cursor.consume_columns(content_gap);
            self.containers.push(Container::Item {
                content_indent: indent + marker.width + content_gap,
            });
            self.leaf = Leaf::None;
        }
    }

    /// Adds a line to the open paragraph and says how the line reads.
    fn extend_paragraph(&mut self, content: &str) -> LineKind {
        if let Leaf::Paragraph { text, .. } = &mut self.leaf {
            text.push(' ');
            text.push_str(content.trim_matches([' ', '\t']));
        }
        self.after_inline_text(content, LineKind::Text)
    }

    /// An unclosed inline `%%` starts a comment that runs over the following lines.
    fn after_inline_text(&mut self, content: &str, kind: LineKind) -> LineKind {
        if opens_inline_comment(content) {
            self.leaf = Leaf::Comment {
                depth: self.containers.len(),
            };
        }
        kind
    }

    /// Classifies the leaf content of a line whose containers are settled.
    fn leaf_line(&mut self, cursor: &mut Cursor<'a>, start: usize, number: usize) -> LineKind {
        let depth = self.containers.len();
        let paragraph_here =
            matches!(&self.leaf, Leaf::Paragraph { depth: open, .. } if *open == depth);
        if cursor.rest_is_blank() {
            if !matches!(self.leaf, Leaf::IndentedCode { .. }) {
                self.leaf = Leaf::None;
            }
            return LineKind::Blank;
        }
        let indent = cursor.indent(4);
        if indent >= 4 {
            if paragraph_here {
                return self.extend_paragraph(cursor.rest());
            }
            self.leaf = Leaf::IndentedCode { depth };
            return LineKind::Code;
        }
        cursor.consume_columns(indent);
        let text = cursor.rest();
        if let Some((marker, length)) = opening_fence(text) {
            self.leaf = Leaf::Fence {
                depth,
                marker,
                length,
            };
            return LineKind::Code;
        }
        if let Some(after) = text.strip_prefix("$$") {
            self.leaf = if after.contains("$$") {
                Leaf::None
            } else {
                Leaf::Math { depth }
            };
            return LineKind::Math;
        }
        if let Some(after) = text.strip_prefix("%%") {
            self.leaf = if after.contains("%%") {
                Leaf::None
            } else {
                Leaf::Comment { depth }
            };
            return LineKind::Comment;
        }
        if let Some(end) = html_block_start(text, paragraph_here) {
            self.leaf = if end != HtmlEnd::BlankLine && html_block_ends(end, text) {
                Leaf::None
            } else {
                Leaf::Html { depth, end }
            };
            return LineKind::Html;
        }
        if let Some((level, heading_text)) = atx_heading(text) {
            self.leaf = Leaf::None;
            if depth == 0 {
                self.scan.headings.push(RawHeading {
                    text: heading_text.to_owned(),
                    level,
                    line: number,
                    start,
                    section_end: 0,
                });
            }
            return self.after_inline_text(text, LineKind::Heading);
        }
        if paragraph_here && let Some(level) = setext_underline(text) {
            if let Leaf::Paragraph {
                start: paragraph_start,
                line,
                text: paragraph_text,
                ..
            } = std::mem::replace(&mut self.leaf, Leaf::None)
                && depth == 0
            {
                self.scan.headings.push(RawHeading {
                    text: paragraph_text,
                    level,
                    line,
                    start: paragraph_start,
                    section_end: 0,
                });
                self.mark_paragraph_as_heading(line);
            }
            return LineKind::Heading;
        }
        if is_thematic_break(text) {
            self.leaf = Leaf::None;
            return LineKind::Text;
        }
        if paragraph_here {
            return self.extend_paragraph(text);
        }
        self.leaf = Leaf::Paragraph {
            depth,
            start,
            line: number,
            text: text.trim_matches([' ', '\t']).to_owned(),
        };
        self.after_inline_text(text, LineKind::Text)
    }

    /// Re-labels the text lines of a paragraph that turned out to be a setext heading.
    fn mark_paragraph_as_heading(&mut self, first_line: usize) {
        for line in self.scan.lines.iter_mut().rev() {
            if line.number < first_line {
                break;
            }
            if line.kind == LineKind::Text {
                line.kind = LineKind::Heading;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<LineKind> {
        scan(text).lines.iter().map(|line| line.kind).collect()
    }

    #[test]
    fn fences_close_by_the_commonmark_rules() {
        use LineKind::*;
        // A shorter run or a run with text after it does not close; a longer run does.
        let text = "````\n```\n``` x\n`````\n# h\n";
        assert_eq!(kinds(text), vec![Code, Code, Code, Code, Heading]);
        // A fence in a list item ends with the item.
        let text = "- a\n  ```\n  code\n# h\n";
        assert_eq!(kinds(text), vec![Text, Code, Code, Heading]);
    }

    #[test]
    fn list_items_inside_block_quotes_are_not_code() {
        use LineKind::*;
        let text = "> - [ ] a\n>     - [ ] b\n";
        assert_eq!(kinds(text), vec![Text, Text]);
    }

    #[test]
    fn tabs_count_to_the_next_stop() {
        use LineKind::*;
        assert_eq!(kinds("\tcode\n  \tcode\n"), vec![Code, Code]);
        // A marker followed by more than four columns of space starts the item with indented code.
        assert_eq!(kinds("-\t\tfoo\n"), vec![Code]);
    }

    #[test]
    fn r47_blank_lines_under_many_nested_items_keep_them_open() {
        use LineKind::*;
        // Opening the 100,000 items read the rest of the line at each (is it a thematic break?),
        // and every blank line walked them all: minutes each, a hang if either comes back.
        const DEPTH: usize = 100_000;
        let text = format!("{}x\n{}# h\n", "- ".repeat(DEPTH), "\n".repeat(2 * DEPTH));
        let scan = scan(&text);
        assert_eq!(scan.lines.len(), 2 * DEPTH + 2);
        assert_eq!(scan.lines[0].kind, Text);
        assert!(
            scan.lines[1..=2 * DEPTH]
                .iter()
                .all(|line| line.kind == Blank)
        );
        // The heading closes every item, so it is a top-level one.
        assert_eq!(scan.headings.len(), 1);
        assert_eq!(scan.headings[0].line, 2 * DEPTH + 2);
        // Behind a block quote the items go on, but the quote ends, and so the text after it.
        let quoted = format!(
            "{}> {}x\n\n{}y\n",
            "- ".repeat(3),
            "- ".repeat(DEPTH),
            " ".repeat(6)
        );
        assert_eq!(kinds(&quoted), vec![Text, Blank, Text]);
    }

    #[test]
    fn atx_closing_sequence_is_stripped() {
        assert_eq!(atx_heading("# a #"), Some((1, "a")));
        assert_eq!(atx_heading("## a#"), Some((2, "a#")));
        assert_eq!(atx_heading("### ###"), Some((3, "")));
        assert_eq!(atx_heading("#"), Some((1, "")));
        assert_eq!(atx_heading("#a"), None);
        assert_eq!(atx_heading("####### a"), None);
    }
}
