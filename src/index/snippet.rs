//! Snippets: a short window of a note's body around the words a query matched.
//!
//! The full-text table keeps no copy of the text (it is contentless, to stay small), so snippets
//! are cut here from the note's body, and only for the hits of the page being returned. Words are
//! cut and compared as the FTS5 tokenizer does (letters and digits; case and diacritics ignored).
//! Never panics; always returns text from the body (its start when nothing matches).

use super::query_text::{HighlightTerm, fold, is_word_char};

/// Words shown in a snippet.
const WINDOW_WORDS: usize = 24;
/// Words shown before the first match in the window.
const LEAD_WORDS: usize = 4;
const ELLIPSIS: &str = "…";

struct Word {
    start: usize,
    end: usize,
    /// Index into the highlight terms, when this word matches one.
    term: Option<usize>,
    /// Whether the snippet wraps it in `**` (a match, outside links and code, not a stopword).
    highlight: bool,
}

/// A one-line snippet of `body` with matched words wrapped in `**`. Obsidian syntax stays whole
/// and undecorated: a word inside a wikilink, an embed, a markdown link or a code span is never
/// wrapped, and the window never starts or ends inside one. Stopwords are wrapped only when the
/// query has nothing else to show.
pub fn snippet(body: &str, terms: &[HighlightTerm]) -> String {
    let mut words = words_of(body, terms);
    if words.is_empty() {
        return String::new();
    }
    let spans = protected_spans(body);
    // The spans are sorted and disjoint: the only candidate is the last one starting at or
    // before `at`.
    let span_of = |at: usize| {
        let after = spans.partition_point(|(from, _)| *from <= at);
        after
            .checked_sub(1)
            .map(|index| spans[index])
            .filter(|(_, to)| at < *to)
    };
    let only_stopwords = terms.iter().all(|term| is_stopword(&term.text));
    for word in &mut words {
        let decorated = word
            .term
            .is_some_and(|index| only_stopwords || !is_stopword(&terms[index].text));
        word.highlight = decorated && span_of(word.start).is_none();
    }
    let (mut first, mut last) = best_window(&words, terms.len());
    // Widen the window to whole links and code spans rather than cut one in half.
    if let Some((from, _)) = span_of(words[first].start) {
        while first > 0 && words[first - 1].start >= from {
            first -= 1;
        }
    }
    let mut end = words[last].end;
    if let Some((_, to)) = span_of(words[last].start) {
        while last + 1 < words.len() && words[last + 1].start < to {
            last += 1;
        }
        end = to;
    }
    let mut out = String::new();
    if first > 0 {
        out.push_str(ELLIPSIS);
    }
    let mut cursor = span_of(words[first].start).map_or(words[first].start, |(from, _)| from);
    for word in &words[first..=last] {
        push_flat(&mut out, &body[cursor..word.start]);
        if word.highlight {
            out.push_str("**");
            out.push_str(&body[word.start..word.end]);
            out.push_str("**");
        } else {
            out.push_str(&body[word.start..word.end]);
        }
        cursor = word.end;
    }
    if end > cursor {
        push_flat(&mut out, &body[cursor..end]);
    }
    if last + 1 < words.len() {
        out.push_str(ELLIPSIS);
    }
    out
}

/// Byte ranges of one-line wikilinks and embeds (`[[…]]`, `![[…]]`), markdown links
/// (`[…](…)`) and code spans (`` `…` ``): syntax a snippet must neither decorate nor cut.
fn protected_spans(body: &str) -> Vec<(usize, usize)> {
    let bytes = body.as_bytes();
    let line_end = |from: usize| {
        bytes[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| from + n)
    };
    let find = |from: usize, to: usize, needle: &[u8]| {
        bytes[from..to]
            .windows(needle.len())
            .position(|window| window == needle)
            .map(|n| from + n)
    };
    let mut spans = Vec::new();
    let mut at = 0;
    // The end of the line `at` is on, found once per line: a search per byte made a long
    // paragraph cost its length squared (it was half of a search's time on a 10k-note vault).
    let mut eol = 0;
    while at < bytes.len() {
        if at >= eol {
            eol = line_end(at);
            if eol == at {
                at += 1;
                continue;
            }
        }
        let found = match bytes[at] {
            b'[' if bytes.get(at + 1) == Some(&b'[') => find(at + 2, eol, b"]]").map(|close| {
                (
                    at.saturating_sub(usize::from(at > 0 && bytes[at - 1] == b'!')),
                    close + 2,
                )
            }),
            b'[' => find(at + 1, eol, b"](")
                .and_then(|middle| find(middle + 2, eol, b")").map(|close| (at, close + 1))),
            b'`' => find(at + 1, eol, b"`").map(|close| (at, close + 1)),
            _ => None,
        };
        match found {
            Some((from, to)) => {
                spans.push((from, to));
                at = to;
            }
            None => at += 1,
        }
    }
    spans
}

/// Words too common to be what a hit is about; highlighting them is noise.
fn is_stopword(folded: &str) -> bool {
    const STOPWORDS: &[&str] = &[
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "for", "from", "how", "i",
        "if", "in", "is", "it", "my", "no", "not", "of", "on", "or", "so", "that", "the", "this",
        "to", "was", "we", "what", "when", "where", "which", "who", "why", "with", "you",
    ];
    STOPWORDS.contains(&folded)
}

fn words_of(body: &str, terms: &[HighlightTerm]) -> Vec<Word> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, character) in body
        .char_indices()
        .chain(std::iter::once((body.len(), ' ')))
    {
        match (start, is_word_char(character)) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                let term = matching_term(&body[from..at], terms);
                words.push(Word {
                    start: from,
                    end: at,
                    term,
                    highlight: false,
                });
                start = None;
            }
            _ => {}
        }
    }
    words
}

/// Which term `word` matches, compared as FTS5 compares: ignoring case and diacritics. ASCII
/// words (most of them) are compared without allocating.
fn matching_term(word: &str, terms: &[HighlightTerm]) -> Option<usize> {
    if word.is_ascii() {
        return terms.iter().position(|term| {
            let text = term.text.as_bytes();
            if term.prefix {
                word.len() >= text.len() && word.as_bytes()[..text.len()].eq_ignore_ascii_case(text)
            } else {
                word.as_bytes().eq_ignore_ascii_case(text)
            }
        });
    }
    let folded = fold(word);
    terms.iter().position(|term| {
        if term.prefix {
            folded.starts_with(&term.text)
        } else {
            folded == term.text
        }
    })
}

/// The window of at most `WINDOW_WORDS` words holding the most distinct matched terms (the
/// earliest such window), starting a few words before its first match.
fn best_window(words: &[Word], term_count: usize) -> (usize, usize) {
    let mut best: Option<(usize, usize)> = None; // (distinct terms, first matching word)
    if term_count > 0 {
        let mut counts = vec![0usize; term_count];
        let mut distinct = 0;
        let mut left = 0;
        for right in 0..words.len() {
            if let Some(term) = words[right].term {
                counts[term] += 1;
                if counts[term] == 1 {
                    distinct += 1;
                }
            }
            while right - left >= WINDOW_WORDS {
                if let Some(term) = words[left].term {
                    counts[term] -= 1;
                    if counts[term] == 0 {
                        distinct -= 1;
                    }
                }
                left += 1;
            }
            if distinct > best.map_or(0, |(count, _)| count) {
                let first_match = (left..=right)
                    .find(|&index| words[index].term.is_some())
                    .unwrap_or(left);
                best = Some((distinct, first_match));
            }
        }
    }
    let first = best.map_or(0, |(_, first_match)| first_match.saturating_sub(LEAD_WORDS));
    let last = (first + WINDOW_WORDS - 1).min(words.len() - 1);
    (first, last)
}

/// Appends text between words with every run of whitespace (line breaks too) as one space.
fn push_flat(out: &mut String, between: &str) {
    let mut in_space = false;
    for character in between.chars() {
        if character.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(character);
            in_space = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str, prefix: bool) -> HighlightTerm {
        HighlightTerm {
            text: text.into(),
            prefix,
        }
    }

    #[test]
    fn highlights_matches_ignoring_case_and_accents() {
        let body = "Intro line.\n\nWe met at the Café to plan the garden.\nMore text follows here.";
        let out = snippet(body, &[term("cafe", false), term("gard", true)]);
        assert!(out.contains("**Café**"), "{out}");
        assert!(out.contains("**garden**"), "{out}");
        assert!(!out.contains('\n'));
    }

    #[test]
    fn long_bodies_are_windowed_around_the_best_match() {
        let mut body = "filler ".repeat(100);
        body.push_str("alpha beta");
        body.push_str(&" tail".repeat(100));
        let out = snippet(&body, &[term("alpha", false), term("beta", false)]);
        assert!(out.starts_with('…') && out.ends_with('…'), "{out}");
        assert!(out.contains("**alpha** **beta**"), "{out}");
    }

    #[test]
    fn links_embeds_and_code_stay_whole_and_undecorated() {
        let body = "Notes on [[Garden Redesign|the garden]] and ![[garden.png]] plus [garden](Garden.md) and `garden` code; the garden grows.";
        let out = snippet(body, &[term("garden", false)]);
        assert!(out.contains("[[Garden Redesign|the garden]]"), "{out}");
        assert!(out.contains("![[garden.png]]"), "{out}");
        assert!(out.contains("[garden](Garden.md)"), "{out}");
        assert!(out.contains("`garden`"), "{out}");
        assert!(out.contains("the **garden** grows"), "{out}");
        assert_eq!(out.matches("**").count(), 2, "{out}");
    }

    #[test]
    fn a_window_never_cuts_a_link_in_half() {
        let mut body = "filler ".repeat(40);
        body.push_str("see [[Projects/Long Garden Plan For The Whole Year|plan]] ");
        body.push_str(&"word ".repeat(40));
        let out = snippet(&body, &[term("filler", false)]);
        let opened = out.matches("[[").count();
        assert_eq!(opened, out.matches("]]").count(), "{out}");
        let out = snippet(&body, &[term("year", false)]);
        assert!(
            out.contains("[[Projects/Long Garden Plan For The Whole Year|plan]]"),
            "{out}"
        );
    }

    #[test]
    fn stopwords_are_highlighted_only_when_nothing_else_matched() {
        let body = "How I plan the garden.";
        let out = snippet(
            body,
            &[term("how", false), term("i", false), term("garden", false)],
        );
        assert_eq!(out, "How I plan the **garden**");
        let out = snippet(body, &[term("how", false)]);
        assert_eq!(out, "**How** I plan the garden");
    }

    #[test]
    fn no_match_gives_the_start_and_empty_gives_empty() {
        assert_eq!(snippet("", &[term("x", false)]), "");
        assert_eq!(snippet("just a few words", &[]), "just a few words");
        assert_eq!(
            snippet("🎉 日本語 ok", &[term("日本語", false)]),
            "**日本語** ok"
        );
    }
}
