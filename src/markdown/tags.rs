//! The tags of a note, as Obsidian's `getAllTags` finds them: the `tags` property first, then every
//! inline `#tag` of the body in document order.
//! It owns the tag grammar (which characters a tag may hold, what may precede it, where tags are not
//! read); it must never report a tag Obsidian would not, and never panic on any input.

use std::ops::Range;

use super::blocks::{self, Line, LineKind};
use super::note::NoteText;
use serde_json::Value;

/// Every tag of a note, without the leading `#`, in document order (properties first), deduplicated
/// case-insensitively keeping the first spelling.
///
/// Obsidian's `getAllTags` keeps duplicates and the `#`; Quire indexes a note's set of tags, and tag
/// inputs ignore case and a leading `#`, so the list is normalised here once.
///
/// Rules, each checked against Obsidian's own output:
/// - Properties: the `tags` key (matched ASCII case-insensitively); a list of strings, or one string
///   that is read as a single tag. Obsidian does not split a one-line `tags: a, b` (it reports no tag
///   for it), and it ignores the singular `tag`/`TAG` key. Each value may start with one `#`; values
///   that are not valid tags are dropped.
/// - Inline: `#` followed by tag characters (any letter, digit, `_`, `-`, `/`, emoji; not whitespace,
///   ASCII punctuation or the general-punctuation blocks U+2000–U+206F and U+2E00–U+2E7F), not made of
///   digits only, and not preceded by a character that could itself be part of a tag (so `a#b` is no
///   tag but `(#b` and `[#b` are).
/// - Not read inside code spans, fenced or indented code, math, HTML blocks or `<!-- -->` comments,
///   wikilinks, markdown link destinations or URLs. Tags inside `%% %%` comments *are* read: Obsidian's
///   metadata cache reports them (see the `comments_markdown_style` oracle note).
pub fn note_tags(text: &str) -> Vec<String> {
    tags_of(&NoteText::read(text))
}

/// `note_tags` of a note already read.
pub fn tags_of(note: &NoteText) -> Vec<String> {
    let mut found = Vec::new();
    for (key, value) in &note.properties {
        if key.eq_ignore_ascii_case("tags") {
            property_tags(value, &mut found);
        }
    }
    each_inline_tag(&note.lines, |content, name| {
        if let Some(name) = content.get(name) {
            found.push(name.to_owned());
        }
    });
    deduplicate(found)
}

/// Byte ranges in `text` of the names (without their `#`) of the inline tags of `lines`, which
/// `blocks::scan` read from `text`; edits that rename tags need where they are, not only what.
pub(crate) fn inline_tag_ranges(text: &str, lines: &[Line<'_>]) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    each_inline_tag(lines, |content, name| {
        // Every line's content is a slice of `text`, so its address gives its offset.
        let base = (content.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        ranges.push(base + name.start..base + name.end);
    });
    ranges
}

/// Calls `visit` with each line's content and the range in it of each inline tag's name, in order.
fn each_inline_tag<'a>(lines: &[Line<'a>], mut visit: impl FnMut(&'a str, Range<usize>)) {
    let mut in_html_comment = false;
    let mut names = Vec::new();
    for line in lines {
        match line.kind {
            LineKind::Text | LineKind::Heading | LineKind::Comment => {
                inline_tags(line.content, &mut in_html_comment, &mut names);
                for name in names.drain(..) {
                    visit(line.content, name);
                }
            }
            // Inline HTML cannot run across a block boundary, so an unclosed `<!--` ends here.
            _ => in_html_comment = false,
        }
    }
}

fn property_tags(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::String(text) => push_property_tag(text, found),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(text) => push_property_tag(text, found),
                    Value::Number(number) => push_property_tag(&number.to_string(), found),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn push_property_tag(raw: &str, found: &mut Vec<String>) {
    let trimmed = raw.trim();
    let name = trimmed.strip_prefix('#').unwrap_or(trimmed);
    if is_valid_tag_name(name) {
        found.push(name.to_owned());
    }
}

/// Whether `name` (without `#`) is a whole, valid tag.
pub fn is_valid_tag_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(is_tag_char)
        && name.chars().any(|character| !character.is_ascii_digit())
}

/// The characters Obsidian allows in a tag name.
fn is_tag_char(character: char) -> bool {
    !(character.is_whitespace()
        || character == '\u{feff}'
        || matches!(character, '\u{2000}'..='\u{206f}' | '\u{2e00}'..='\u{2e7f}')
        || "'!\"#$%&()*+,.:;<=>?@^`{|}~[]\\".contains(character))
}

/// Finds the names of the inline tags of one line of text, skipping the spans where Obsidian reads no tags.
fn inline_tags(content: &str, in_html_comment: &mut bool, found: &mut Vec<Range<usize>>) {
    // Most lines hold no `#` and open no comment: nothing to find, no state to change.
    if !*in_html_comment && !content.contains('#') && !content.contains("<!--") {
        return;
    }
    let mut line = InlineLine::new(content);
    let bytes = content.as_bytes();
    let mut index = 0;
    if *in_html_comment {
        match line.find(0, Needle::HtmlComment) {
            Some(end) => {
                index = end + 3;
                *in_html_comment = false;
            }
            None => return,
        }
    }
    // Every position `index` stops at is an ASCII byte or the start of a character, so slicing there is safe:
    // multi-byte characters never contain ASCII bytes and non-ASCII bytes only ever advance by one.
    while index < bytes.len() {
        index = match bytes[index] {
            b'\\' => match bytes.get(index + 1) {
                Some(next) if next.is_ascii_punctuation() => index + 2,
                _ => index + 1,
            },
            b'`' => line.code_spans.skip(index),
            b'<' if content[index..].starts_with("<!--") => {
                match line.find(index + 4, Needle::HtmlComment) {
                    Some(end) => end + 3,
                    None => {
                        *in_html_comment = true;
                        return;
                    }
                }
            }
            b'<' => skip_autolink(content, index),
            b'[' if bytes.get(index + 1) == Some(&b'[') => line
                .find(index + 2, Needle::Wikilink)
                .map_or(index + 2, |end| end + 2),
            b']' if bytes.get(index + 1) == Some(&b'(') => skip_link_destination(bytes, index + 2),
            b'$' => line.skip_inline_math(index),
            b'#' => take_tag(content, index, found),
            byte if byte.is_ascii_alphabetic() => skip_url(content, index),
            _ => index + 1,
        };
    }
}

/// The closing delimiters the inline scanner searches ahead for.
#[derive(Clone, Copy)]
enum Needle {
    HtmlComment,
    Wikilink,
    DisplayMath,
}

impl Needle {
    fn text(self) -> &'static str {
        match self {
            Needle::HtmlComment => "-->",
            Needle::Wikilink => "]]",
            Needle::DisplayMath => "$$",
        }
    }
}

/// One line being scanned, with memories of failed forward searches: once a closer is known to be absent
/// after some position, later openers do not search again. That keeps a line of a million unclosed `$`
/// or `[[` linear instead of quadratic.
struct InlineLine<'a> {
    content: &'a str,
    code_spans: blocks::CodeSpans,
    /// Per needle, the smallest position from which a search already failed.
    absent_from: [usize; 3],
    /// The smallest position from which no closing `$` of inline math exists.
    no_math_closer_from: usize,
}

impl<'a> InlineLine<'a> {
    fn new(content: &'a str) -> Self {
        InlineLine {
            content,
            code_spans: blocks::CodeSpans::new(content.as_bytes()),
            absent_from: [usize::MAX; 3],
            no_math_closer_from: usize::MAX,
        }
    }

    fn find(&mut self, from: usize, needle: Needle) -> Option<usize> {
        let slot = needle as usize;
        if from >= self.absent_from[slot] {
            return None;
        }
        let found = self
            .content
            .get(from..)
            .and_then(|rest| rest.find(needle.text()))
            .map(|offset| from + offset);
        if found.is_none() {
            self.absent_from[slot] = from;
        }
        found
    }

    /// Skips inline math: `$$...$$`, or `$...$` where the opening `$` is followed by a non-space and the
    /// closing one is preceded by a non-space and not followed by a digit (so `$5 and $10` is no math).
    fn skip_inline_math(&mut self, start: usize) -> usize {
        let bytes = self.content.as_bytes();
        if bytes.get(start + 1) == Some(&b'$') {
            return self
                .find(start + 2, Needle::DisplayMath)
                .map_or(start + 2, |end| end + 2);
        }
        if matches!(bytes.get(start + 1), None | Some(b' ' | b'\t')) {
            return start + 1;
        }
        // Whether a `$` closes does not depend on where the math opened, so one failed search answers
        // for every later opener too.
        let search_from = start + 2;
        if search_from >= self.no_math_closer_from {
            return start + 1;
        }
        let closer = (search_from..bytes.len()).find(|index| {
            bytes[*index] == b'$'
                && !matches!(bytes[*index - 1], b' ' | b'\t' | b'\\')
                && !bytes.get(*index + 1).is_some_and(u8::is_ascii_digit)
        });
        match closer {
            Some(index) => index + 1,
            None => {
                self.no_math_closer_from = search_from;
                start + 1
            }
        }
    }
}

/// Reads a tag at the `#` at `hash`, if it is one, and returns where scanning continues.
fn take_tag(content: &str, hash: usize, found: &mut Vec<Range<usize>>) -> usize {
    let before = content
        .get(..hash)
        .and_then(|text| text.chars().next_back());
    let allowed_before = match before {
        None => true,
        // `##tag` is a heading-like run, and `&#38;` or `&#x26;` is a character reference.
        Some('#') => false,
        Some('&') => !is_character_reference(content.get(hash..).unwrap_or("")),
        Some(character) => !is_tag_char(character),
    };
    let name_start = hash + 1;
    let rest = content.get(name_start..).unwrap_or("");
    let name_length: usize = rest
        .chars()
        .take_while(|character| is_tag_char(*character))
        .map(char::len_utf8)
        .sum();
    let name = &rest[..name_length];
    if allowed_before && is_valid_tag_name(name) {
        found.push(name_start..name_start + name_length);
    }
    name_start + name_length
}

/// `#123;` or `#x1F;` right after `&`.
fn is_character_reference(from_hash: &str) -> bool {
    let digits = from_hash.strip_prefix('#').unwrap_or("");
    let (digits, hex) = match digits.strip_prefix(['x', 'X']) {
        Some(hex_digits) => (hex_digits, true),
        None => (digits, false),
    };
    let length = digits
        .bytes()
        .take_while(|byte| {
            if hex {
                byte.is_ascii_hexdigit()
            } else {
                byte.is_ascii_digit()
            }
        })
        .count();
    (1..=7).contains(&length) && digits.as_bytes().get(length) == Some(&b';')
}

/// Skips `<scheme:...>` autolinks; any other `<` is an ordinary character.
fn skip_autolink(content: &str, start: usize) -> usize {
    let rest = content.get(start + 1..).unwrap_or("");
    // An autolink holds no whitespace and no `<`, so the search stops there: linear over the line.
    let Some(close) = rest
        .find(|character: char| character == '>' || character == '<' || character.is_whitespace())
    else {
        return start + 1;
    };
    if rest.as_bytes().get(close) != Some(&b'>') {
        return start + 1;
    }
    let inner = &rest[..close];
    let scheme_length = inner
        .bytes()
        .take_while(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'.' | b'-'))
        .count();
    let is_autolink = (2..=32).contains(&scheme_length)
        && inner.as_bytes().get(scheme_length) == Some(&b':')
        && !inner.contains([' ', '\t', '<']);
    if is_autolink {
        start + 1 + close + 1
    } else {
        start + 1
    }
}

/// Skips a markdown link destination (from just after `](`) up to its balanced `)`.
///
/// A destination holds no whitespace, so the scan stops at the first whitespace; an unbalanced one is
/// skipped up to there as well, which keeps `](](](...` linear at the cost of not reading a tag glued to it.
fn skip_link_destination(bytes: &[u8], from: usize) -> usize {
    let mut depth = 1usize;
    let mut index = from;
    while index < bytes.len() {
        match bytes[index] {
            b' ' | b'\t' => return index,
            b'\\' => index += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return index + 1;
                }
            }
            _ => {}
        }
        index += 1;
    }
    index
}

/// Skips a bare URL (`scheme://...` up to whitespace) starting at a word start; otherwise moves on by one.
fn skip_url(content: &str, start: usize) -> usize {
    let bytes = content.as_bytes();
    let at_word_start = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
    if !at_word_start {
        return start + 1;
    }
    // Schemes are at most 32 characters; the bound keeps `a.a.a.a...` from being rescanned at every word.
    let scheme_length = bytes[start..]
        .iter()
        .take(33)
        .take_while(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'.' | b'-'))
        .count();
    let rest = content.get(start + scheme_length..).unwrap_or("");
    let is_url = rest.starts_with("://") || content[start..].starts_with("www.");
    if !is_url {
        return start + 1;
    }
    let url_length = content[start..]
        .find(|character: char| character.is_whitespace() || character == '<')
        .unwrap_or(content.len() - start);
    start + url_length
}

fn deduplicate(tags: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tags.into_iter()
        .filter(|tag| seen.insert(tag.to_lowercase()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(text: &str, expected: &[&str]) {
        assert_eq!(note_tags(text), expected, "{text:?}");
    }

    #[test]
    fn tag_characters_and_boundaries() {
        expect(
            "#simple #nested/tag #with-dash_under #émoji🎉 #日本語",
            &[
                "simple",
                "nested/tag",
                "with-dash_under",
                "émoji🎉",
                "日本語",
            ],
        );
        expect(
            "#2024 #1a #tag. #tag2, (#paren) [#bracket] a#b ##double",
            &["1a", "tag", "tag2", "paren", "bracket"],
        );
        expect("#a’b #c—d", &["a", "c"]);
    }

    #[test]
    fn places_obsidian_does_not_read() {
        expect(
            "`#code` ``a `#b` c`` <!-- #html --> [[Note#heading]] [x](note.md#part) \
             https://example.com/#frag <https://x.org/#y> $#math$ $$#display$$ \\#escaped &#35; &#x41;",
            &[],
        );
        expect(
            "```\n#fenced\n```\n\n    #indented\n\n<!--\n#comment\n-->\n$$\n#math\n$$\n",
            &[],
        );
        // An inline comment can run over lines of its paragraph; a block comment owns its whole last line.
        expect("text <!-- open\n#inside\nclose --> #after\n", &["after"]);
        expect("<!-- open\n#inside\nclose --> #after\n", &[]);
    }

    #[test]
    fn places_obsidian_does_read() {
        expect(
            "# Heading #inheading\n> quote #quoted\n- item #listed\n| #cell |\n",
            &["inheading", "quoted", "listed", "cell"],
        );
        // Obsidian's metadata cache reports tags inside `%%` comments, block and inline.
        expect(
            "%%\n#blockcomment\n%%\ntext %% #inline %%\n",
            &["blockcomment", "inline"],
        );
        expect("cost $5 and $10 #money", &["money"]);
        expect("\\[\\[#Escaped Links\\]\\]", &["Escaped"]);
    }

    #[test]
    fn property_tags_come_first_and_follow_obsidian() {
        expect(
            "---\ntags:\n  - one\n  - '#two'\n  - bad tag\n  - 3\n---\n#one #body\n",
            &["one", "two", "body"],
        );
        expect("---\ntags: journal\n---\n", &["journal"]);
        expect("---\nTags: \"#single\"\n---\n", &["single"]);
        // Not split, and so not a valid tag: Obsidian reports nothing for it.
        expect("---\ntags: a, b\n---\n", &[]);
        expect("---\nTAG:\n  - value1\ntag: x\n---\n", &[]);
        expect("---\ntags:\n---\n", &[]);
        expect("---\ntags: [\n---\n#body\n", &["body"]);
    }

    #[test]
    fn duplicates_fold_case_keeping_first_spelling() {
        expect("#Task #task #TASK #other", &["Task", "other"]);
    }

    #[test]
    fn unclosed_openers_on_long_lines_stay_linear() {
        // Each of these took minutes on a 1 MB line before searches remembered their failures; a
        // regression shows up as this test hanging rather than as a wrong answer.
        for unit in ["$a ", "<a ", "](a", "[[a ", "<!--a ", "a.a", "`` ` ``` "] {
            let line = format!("{} #end", unit.repeat(40_000));
            let found = note_tags(&line);
            assert!(found.len() <= 1, "{unit:?}: {found:?}");
        }
        let nested: String = (0..1500)
            .map(|depth| format!("{}- a\n", "  ".repeat(depth)))
            .collect();
        assert!(note_tags(&nested).is_empty());
    }

    #[test]
    fn tag_validity() {
        assert!(is_valid_tag_name("a/b"));
        assert!(!is_valid_tag_name("123"));
        assert!(!is_valid_tag_name(""));
        assert!(!is_valid_tag_name("a b"));
        assert!(!is_valid_tag_name("a,b"));
    }
}
