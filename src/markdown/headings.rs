//! The outline of a note: its headings as Obsidian's metadata cache lists them, with the byte range of
//! each heading's section so edits can target "this heading and everything under it".
//! It must never report a heading Obsidian would not (inside code, math, comments, HTML, block quotes,
//! callouts or list items, or in the properties block), and never panic on any input.

use super::blocks;

/// One heading of a note.
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    /// Heading text as Obsidian shows it in its outline: ATX closing `#`s stripped, trimmed, inline
    /// markdown left as written (Obsidian keeps `[[links]]` in the text too).
    pub text: String,
    /// 1 to 6.
    pub level: u8,
    /// 1-based line number in the whole file.
    pub line: usize,
    /// Byte offset in the whole file of the heading line's start (for a setext heading, its first text line).
    pub start: usize,
    /// Byte offset where this heading's section ends, sub-sections included: the start of the next heading
    /// of the same or a higher level (a lower or equal number), or the end of the file.
    pub section_end: usize,
}

/// All headings of a note, in document order. Pass the whole file text; the properties block is skipped.
///
/// Only headings at the top level of the document count, because Obsidian's metadata cache (and so its
/// outline, heading links and section embeds) does not look inside block quotes, callouts or list items.
/// A setext heading whose text spans several lines has those lines joined with single spaces.
pub fn headings(text: &str) -> Vec<Heading> {
    // The scan's lines go before the sections are made: they are the larger part of a note of
    // many short lines (a million headings), and a temporary would live to the end of the call.
    let raw = blocks::scan(text).headings;
    sections(text, raw)
}

/// The headings of `text` from its block scan, each with its section's end.
pub(crate) fn sections(text: &str, mut headings: Vec<blocks::RawHeading>) -> Vec<Heading> {
    // Walking backwards, `next_start[level]` is where the nearest later heading of that level starts, so
    // each section end is the minimum over the levels at or above the heading's own: linear, not quadratic.
    let mut next_start = [text.len(); 7];
    for heading in headings.iter_mut().rev() {
        let level = usize::from(heading.level.clamp(1, 6));
        heading.section_end = next_start[1..=level]
            .iter()
            .copied()
            .min()
            .unwrap_or(text.len());
        next_start[level] = heading.start;
    }
    headings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, level, line) of every heading, for compact expectations.
    fn outline(text: &str) -> Vec<(String, u8, usize)> {
        headings(text)
            .into_iter()
            .map(|heading| (heading.text, heading.level, heading.line))
            .collect()
    }

    fn expect(text: &str, expected: &[(&str, u8, usize)]) {
        let expected: Vec<(String, u8, usize)> = expected
            .iter()
            .map(|(text, level, line)| ((*text).to_owned(), *level, *line))
            .collect();
        assert_eq!(outline(text), expected, "{text:?}");
    }

    #[test]
    fn atx_rules() {
        expect(
            "# One\n   ## Two ##\n    # code\n#nope\n###### Six\n####### seven\n#\n## Tab\there\n",
            &[
                ("One", 1, 1),
                ("Two", 2, 2),
                ("Six", 6, 5),
                ("", 1, 7),
                ("Tab\there", 2, 8),
            ],
        );
    }

    #[test]
    fn setext_needs_a_paragraph_line() {
        expect("Title\n===\n", &[("Title", 1, 1)]);
        expect("Title\n---\n", &[("Title", 2, 1)]);
        // After a blank line `---` is a thematic break and `===` is just text.
        expect("Title\n\n---\n\n===\n", &[]);
        expect("a\nb\n---\n", &[("a b", 2, 1)]);
        // A list item's paragraph cannot be underlined from outside the item.
        expect("- item\n---\n", &[]);
    }

    #[test]
    fn code_math_comments_and_html_hide_headings() {
        expect("```\n# no\n```\n# yes\n", &[("yes", 1, 4)]);
        expect("~~~~\n~~~\n# no\n~~~~\n", &[]);
        expect("``` ```\n# yes\n", &[("yes", 1, 2)]);
        expect("para\n\n    # indented code\n", &[]);
        expect("para\n    # continuation\n", &[]);
        expect("%%\n# no\n%%\n# yes\n", &[("yes", 1, 4)]);
        expect("text %% open\n# no\nclose %%\n# yes\n", &[("yes", 1, 4)]);
        expect("%% one line %%\n# yes\n", &[("yes", 1, 2)]);
        expect("<!--\n# no\n-->\n# yes\n", &[("yes", 1, 4)]);
        expect("$$\n# no\n$$\n# yes\n", &[("yes", 1, 4)]);
        expect("$$ x $$\n# yes\n", &[("yes", 1, 2)]);
        expect("<div>\n# no\n\n# yes\n", &[("yes", 1, 4)]);
    }

    #[test]
    fn containers_hide_headings() {
        expect(
            "> # quoted\n> [!note]\n> ## callout\n- # item\n# top\n",
            &[("top", 1, 5)],
        );
        // A heading interrupts a lazily continued quote paragraph.
        expect("> a\n# b\n", &[("b", 1, 2)]);
    }

    #[test]
    fn frontmatter_is_skipped_and_lines_count_from_file_start() {
        let text = "---\ntitle: x\n# not a heading\n---\n# Real\r\nText\r\n## Sub\r\n";
        expect(text, &[("Real", 1, 5), ("Sub", 2, 7)]);
        let found = headings(text);
        assert_eq!(
            found.first().map(|heading| heading.start),
            Some(text.find("# Real").unwrap_or(0))
        );
    }

    #[test]
    fn sections_include_subsections() {
        let text = "# A\n## B\ntext\n### C\n## D\n# E\n";
        let ends: Vec<usize> = headings(text)
            .iter()
            .map(|heading| heading.section_end)
            .collect();
        let at = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
        assert_eq!(
            ends,
            vec![at("# E"), at("## D"), at("## D"), at("# E"), text.len()]
        );
    }

    #[test]
    fn setext_start_is_the_text_line() {
        let text = "intro\n\nTitle\n=====\nbody\n";
        let found = headings(text);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found.first().map(|heading| (heading.start, heading.line)),
            Some((7, 3))
        );
    }
}
