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
}

/// A one-line snippet of `body` with matched words wrapped in `**`.
pub fn snippet(body: &str, terms: &[HighlightTerm]) -> String {
    let words = words_of(body, terms);
    if words.is_empty() {
        return String::new();
    }
    let (first, last) = best_window(&words, terms.len());
    let mut out = String::new();
    if first > 0 {
        out.push_str(ELLIPSIS);
    }
    let mut cursor = words[first].start;
    for word in &words[first..=last] {
        push_flat(&mut out, &body[cursor..word.start]);
        if word.term.is_some() {
            out.push_str("**");
            out.push_str(&body[word.start..word.end]);
            out.push_str("**");
        } else {
            out.push_str(&body[word.start..word.end]);
        }
        cursor = word.end;
    }
    if last + 1 < words.len() {
        out.push_str(ELLIPSIS);
    }
    out
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
    fn no_match_gives_the_start_and_empty_gives_empty() {
        assert_eq!(snippet("", &[term("x", false)]), "");
        assert_eq!(snippet("just a few words", &[]), "just a few words");
        assert_eq!(
            snippet("🎉 日本語 ok", &[term("日本語", false)]),
            "**日本語** ok"
        );
    }
}
