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
    snippet_of(body, terms, true)
}

/// `snippet`, reading the body only as far as the window needs when `stop_early` (a search cuts
/// ten of these per page, and the rest of a long note cannot change the window once every term is
/// in it), or to its end.
fn snippet_of(body: &str, terms: &[HighlightTerm], stop_early: bool) -> String {
    let Scan {
        mut words,
        first,
        read,
        more,
    } = scan(body, terms, stop_early);
    if words.is_empty() {
        return String::new();
    }
    // Spans are one line long, and the read part ends on a later line than the window's last
    // word, so every span the window touches is in it.
    let spans = protected_spans(&body[..read]);
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
    let mut first = first;
    let mut last = (first + WINDOW_WORDS - 1).min(words.len() - 1);
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
    if last + 1 < words.len() || more {
        out.push_str(ELLIPSIS);
    }
    out
}

/// Byte ranges of one-line wikilinks and embeds (`[[…]]`, `![[…]]`), markdown links
/// (`[…](…)`) and code spans (`` `…` ``): syntax a snippet must neither decorate nor cut.
fn protected_spans(body: &str) -> Vec<(usize, usize)> {
    let bytes = body.as_bytes();
    let line_end =
        |from: usize| memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |n| from + n);
    let find = |from: usize, to: usize, needle: &[u8]| {
        bytes
            .get(from..to)
            .and_then(|within| memchr::memmem::find(within, needle))
            .map(|n| from + n)
    };
    let mut spans = Vec::new();
    let mut at = 0;
    // The end of the line `at` is on, found once per line: a search per byte made a long
    // paragraph cost its length squared (it was half of a search's time on a 10k-note vault).
    let mut eol = 0;
    // Only `[` and `` ` `` open a span: the bytes between are skipped by `memchr2`, not looked
    // at one by one (a byte loop here was a fifth of a search's CPU).
    while let Some(next) = memchr::memchr2(b'[', b'`', &bytes[at..]) {
        at += next;
        if at >= eol {
            eol = line_end(at);
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

/// The words of a body read for a snippet, and where its window starts.
struct Scan {
    words: Vec<Word>,
    /// The window's first word (before widening to whole links).
    first: usize,
    /// Bytes of the body read: all of it, or up to a word on a later line than the window's end.
    read: usize,
    /// Whether words follow the ones read.
    more: bool,
}

/// Cuts `body` into words as the FTS5 tokenizer does and finds the window of at most
/// `WINDOW_WORDS` words holding the most distinct matched terms (the earliest such window),
/// starting a few words before its first match. With `stop_early`, stops once that window holds
/// every term (no later window can beat it) and a word on a later line than its end is reached.
fn scan(body: &str, terms: &[HighlightTerm], stop_early: bool) -> Scan {
    let mut words: Vec<Word> = Vec::new();
    let mut window = Window::new(terms.len(), matchable_terms(body, terms));
    // Once settled: the end of the line holding the window's last word, when that word is read.
    let mut settled_line_end: Option<usize> = None;
    let mut start = None;
    for (at, word_char) in word_chars(body) {
        match (start, word_char) {
            (None, true) => {
                if settled_line_end.is_some_and(|line_end| at > line_end) {
                    return Scan {
                        first: window.first(),
                        words,
                        read: at,
                        more: true,
                    };
                }
                start = Some(at);
            }
            (Some(from), false) => {
                let term = matching_term(&body[from..at], terms);
                words.push(Word {
                    start: from,
                    end: at,
                    term,
                    highlight: false,
                });
                start = None;
                window.push(&words);
                if stop_early
                    && settled_line_end.is_none()
                    && window.settled()
                    && words.len() >= window.first() + WINDOW_WORDS
                {
                    let line_end = body[at..].find('\n').map_or(body.len(), |n| at + n);
                    settled_line_end = Some(line_end);
                }
            }
            _ => {}
        }
    }
    Scan {
        first: window.first(),
        words,
        read: body.len(),
        more: false,
    }
}

/// Each character's offset in `body` and whether it belongs to a word (`is_word_char`), then
/// `body.len()` as a last non-word: ASCII bytes are judged without decoding a `char`.
fn word_chars(body: &str) -> impl Iterator<Item = (usize, bool)> + '_ {
    let bytes = body.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let here = at;
        let (word_char, width) = match bytes.get(here) {
            None if here == bytes.len() => (false, 1),
            None => return None,
            Some(byte) if byte.is_ascii() => (byte.is_ascii_alphanumeric(), 1),
            Some(_) => body
                .get(here..)
                .and_then(|rest| rest.chars().next())
                .map_or((false, 1), |character| {
                    (is_word_char(character), character.len_utf8())
                }),
        };
        at += width;
        Some((here, word_char))
    })
}

/// How many of `terms` can match some word of `body`, so the window knows when it holds all it
/// ever will. Exact and cheap when every word is ASCII, as it folds to its lower case: a term
/// matches only where its text occurs, case aside (and a term beyond ASCII nowhere). A body with
/// a letter beyond ASCII counts every term, and is read to its end unless every term turns up.
fn matchable_terms(body: &str, terms: &[HighlightTerm]) -> usize {
    if !words_are_ascii(body) {
        return terms.len();
    }
    let lower = body.to_ascii_lowercase();
    terms
        .iter()
        .filter(|term| {
            term.text.is_ascii()
                && memchr::memmem::find(lower.as_bytes(), term.text.as_bytes()).is_some()
        })
        .count()
}

/// Whether `body` has no letter or digit beyond ASCII. Emoji (the Tasks plugin's dates) and
/// punctuation beyond ASCII are common in notes and are no part of a word; the ASCII runs between
/// them are skipped a chunk at a time.
fn words_are_ascii(body: &str) -> bool {
    const CHUNK: usize = 32;
    let bytes = body.as_bytes();
    // Always on a character's first byte: a chunk is passed only when it is all ASCII.
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..(at + CHUNK).min(bytes.len())) {
        if chunk.is_empty() {
            break;
        }
        if chunk.is_ascii() {
            at += chunk.len();
            continue;
        }
        let skip = chunk.iter().take_while(|byte| byte.is_ascii()).count();
        let Some(character) = body.get(at + skip..).and_then(|rest| rest.chars().next()) else {
            return false;
        };
        if is_word_char(character) {
            return false;
        }
        at += skip + character.len_utf8();
    }
    true
}

/// The sliding window `scan` moves over the words as it reads them.
struct Window {
    counts: Vec<usize>,
    /// How many terms can match at all (`matchable_terms`).
    matchable: usize,
    distinct: usize,
    left: usize,
    /// (distinct terms, first matching word) of the best window so far.
    best: Option<(usize, usize)>,
}

impl Window {
    fn new(term_count: usize, matchable: usize) -> Window {
        Window {
            counts: vec![0; term_count],
            matchable,
            distinct: 0,
            left: 0,
            best: None,
        }
    }

    /// Takes in the last word of `words`.
    fn push(&mut self, words: &[Word]) {
        if self.counts.is_empty() {
            return;
        }
        let right = words.len() - 1;
        if let Some(term) = words[right].term {
            self.counts[term] += 1;
            if self.counts[term] == 1 {
                self.distinct += 1;
            }
        }
        while right - self.left >= WINDOW_WORDS {
            if let Some(term) = words[self.left].term {
                self.counts[term] -= 1;
                if self.counts[term] == 0 {
                    self.distinct -= 1;
                }
            }
            self.left += 1;
        }
        if self.distinct > self.best.map_or(0, |(count, _)| count) {
            let first_match = (self.left..=right)
                .find(|&index| words[index].term.is_some())
                .unwrap_or(self.left);
            self.best = Some((self.distinct, first_match));
        }
    }

    /// Whether the best window holds every term that can match, so no later one can replace it.
    fn settled(&self) -> bool {
        self.best.map_or(0, |(count, _)| count) >= self.matchable
    }

    fn first(&self) -> usize {
        self.best
            .map_or(0, |(_, first_match)| first_match.saturating_sub(LEAD_WORDS))
    }
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
    use proptest::prelude::*;

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

    #[test]
    fn a_long_note_is_read_only_as_far_as_its_window() {
        let mut body = "alpha beta gamma\n".to_string();
        body.push_str(&"more words on another line\n".repeat(200));
        let terms = [term("beta", false)];
        let scan = scan(&body, &terms, true);
        assert!(scan.more && scan.read < 200, "read {} bytes", scan.read);
        assert_eq!(snippet(&body, &terms), snippet_of(&body, &terms, false));
        assert!(snippet(&body, &terms).ends_with('…'));
    }

    #[test]
    fn an_ascii_note_missing_a_term_is_read_only_as_far_as_its_window() {
        let mut body = "alpha beta gamma\n".to_string();
        body.push_str(&"more words on another line\n".repeat(200));
        let terms = [
            term("beta", false),
            term("zzz", false),
            term("日本語", false),
        ];
        let scan = scan(&body, &terms, true);
        assert!(scan.more && scan.read < 200, "read {} bytes", scan.read);
        assert_eq!(snippet(&body, &terms), snippet_of(&body, &terms, false));
        // Emoji and dashes are no part of a word: such a note is read as little.
        let dated = body.replace("another", "📅 2026-01-01 — another");
        assert!(scan_reads_early(&dated, &terms));
        // Beyond ASCII a term may match a folded spelling, so the note is read to its end.
        let folded = format!("{body}Zzž");
        assert!(!scan_reads_early(
            &folded,
            &[term("beta", false), term("zzz", false)]
        ));
    }

    #[test]
    fn words_beyond_ascii_are_told_from_emoji_and_punctuation() {
        assert!(words_are_ascii(""));
        assert!(words_are_ascii(&"plain words ".repeat(20)));
        assert!(words_are_ascii(&format!(
            "{}📅 — “quoted” ✅",
            "x".repeat(31)
        )));
        assert!(!words_are_ascii(&format!("{}café", "x".repeat(30))));
        assert!(!words_are_ascii(&format!("{}📅 日本語", "x".repeat(40))));
    }

    fn scan_reads_early(body: &str, terms: &[HighlightTerm]) -> bool {
        scan(body, terms, true).more
    }

    /// Pieces whose mixes exercise words, lines, links, embeds, code spans and folded letters.
    fn noteish() -> impl Strategy<Value = String> {
        notes_of(true)
    }

    /// `noteish`, with letters beyond ASCII among the pieces, or only emoji and a dash beyond it.
    fn notes_of(beyond_ascii: bool) -> impl Strategy<Value = String> {
        let folded = if beyond_ascii { "café" } else { "CAFE" };
        let other = if beyond_ascii { "日本語" } else { "📅—" };
        let piece = prop_oneof![
            Just("alpha".to_string()),
            Just("Beta".to_string()),
            Just("gamma".to_string()),
            Just("the".to_string()),
            Just(folded.to_string()),
            Just(other.to_string()),
            Just(" ".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("[[".to_string()),
            Just("]]".to_string()),
            Just("![[".to_string()),
            Just("](".to_string()),
            Just(")".to_string()),
            Just("[".to_string()),
            Just("`".to_string()),
            Just("-".to_string()),
            "[a-z]{1,6}",
        ];
        prop::collection::vec(piece, 0..400).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// Reading only as far as the window needs gives the snippet reading the whole body gives.
        #[test]
        fn stopping_early_never_changes_a_snippet(
            body in prop_oneof![noteish(), notes_of(false)],
            words in prop::collection::vec(
                prop_oneof![Just("alpha"), Just("beta"), Just("gamma"), Just("the"), Just("cafe"), Just("日本語"), Just("zzz")],
                0..4,
            ),
            prefix in any::<bool>(),
        ) {
            let terms: Vec<HighlightTerm> = words
                .iter()
                .enumerate()
                .map(|(index, word)| term(word, prefix && index == 0))
                .collect();
            prop_assert_eq!(snippet_of(&body, &terms, true), snippet_of(&body, &terms, false));
        }
    }
}
