//! Heading-aware chunks of a note for semantic search: each section's own text (up to the next
//! heading), split at paragraph and then word boundaries into pieces of at most `max_words`
//! words, each prefixed with the note's title and its section path ("Title › Heading ›
//! Subheading") so a chunk carries the context a reader would see.
//!
//! Pure: no I/O, and no panic on any input. A note with no body text still gets one chunk (its
//! title), so every note can be found by meaning.

use super::frontmatter;
use super::headings::{self, Heading};
use super::note::NoteText;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Heading texts from the top level down to this chunk's section; empty before any heading.
    pub heading_path: Vec<String>,
    /// What is embedded: the title and section path on the first line, then the text.
    pub text: String,
}

/// Splits `text` (the whole note, properties block included) into chunks titled `title`.
pub fn chunks(title: &str, text: &str, max_words: usize) -> Vec<Chunk> {
    let body_start = text.len() - frontmatter::split(text).body.len();
    chunks_from(
        title,
        text,
        body_start,
        &headings::headings(text),
        max_words,
    )
}

/// `chunks` of a note already read.
pub fn chunks_of(title: &str, note: &NoteText, max_words: usize) -> Vec<Chunk> {
    let body_start = note.text.len() - note.split.body.len();
    chunks_from(title, note.text, body_start, &note.headings, max_words)
}

fn chunks_from(
    title: &str,
    text: &str,
    body_start: usize,
    all: &[Heading],
    max_words: usize,
) -> Vec<Chunk> {
    let max_words = max_words.max(8);
    // Section boundaries: the body start, then every heading's start.
    let mut out = Vec::new();
    let mut path: Vec<(u8, String)> = Vec::new();
    let mut segment_start = body_start;
    let mut segment_path: Vec<String> = Vec::new();
    for heading in all {
        if heading.start < segment_start {
            continue;
        }
        push_segment(
            title,
            &segment_path,
            text.get(segment_start..heading.start).unwrap_or(""),
            max_words,
            &mut out,
        );
        while path
            .last()
            .is_some_and(|(level, _)| *level >= heading.level)
        {
            path.pop();
        }
        path.push((heading.level, heading.text.clone()));
        segment_path = path.iter().map(|(_, text)| text.clone()).collect();
        // The section's text starts after the heading line.
        segment_start = text
            .get(heading.start..)
            .and_then(|rest| rest.find('\n'))
            .map_or(text.len(), |at| heading.start + at + 1);
    }
    push_segment(
        title,
        &segment_path,
        text.get(segment_start..).unwrap_or(""),
        max_words,
        &mut out,
    );
    if out.is_empty() {
        out.push(Chunk {
            heading_path: Vec::new(),
            text: title.to_string(),
        });
    }
    out
}

fn push_segment(
    title: &str,
    path: &[String],
    segment: &str,
    max_words: usize,
    out: &mut Vec<Chunk>,
) {
    let mut header = title.to_string();
    for heading in path {
        header.push_str(" › ");
        header.push_str(heading);
    }
    header.push('\n');
    // Each piece is written straight into its chunk's text (header first): when every
    // paragraph's words were collected and joined, chunking was 15 % of a note's parse.
    // Room for a whole piece up front (words average well under twelve bytes), so it is not
    // grown word by word.
    let capacity = header.len() + segment.len().min(max_words * 12);
    let fresh = || {
        let mut text = String::with_capacity(capacity);
        text.push_str(&header);
        text
    };
    let mut current = fresh();
    let mut count = 0;
    let mut words: Vec<&str> = Vec::new();
    let mut flush = |current: &mut String, count: &mut usize| {
        out.push(Chunk {
            heading_path: path.to_vec(),
            text: std::mem::replace(current, fresh()),
        });
        *count = 0;
    };
    for paragraph in segment.split("\n\n") {
        words.clear();
        words.extend(paragraph.split_whitespace());
        if words.is_empty() {
            continue;
        }
        if count + words.len() > max_words && count > 0 {
            flush(&mut current, &mut count);
        }
        for word_group in words.chunks(max_words) {
            if count + word_group.len() > max_words && count > 0 {
                flush(&mut current, &mut count);
            }
            for word in word_group {
                if count > 0 {
                    current.push(' ');
                }
                current.push_str(word);
                count += 1;
            }
        }
    }
    if count > 0 {
        flush(&mut current, &mut count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_carry_their_heading_path() {
        let text = "---\ntags: [a]\n---\nIntro words here.\n\n# Plans\n\nPlan text.\n\n## Budget\n\nMoney talk.\n\n# Other\n\nMore.\n";
        let got = chunks("Note", text, 100);
        let texts: Vec<&str> = got.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Note\nIntro words here.",
                "Note › Plans\nPlan text.",
                "Note › Plans › Budget\nMoney talk.",
                "Note › Other\nMore."
            ]
        );
        assert!(!got.iter().any(|c| c.text.contains("tags")));
    }

    #[test]
    fn long_sections_split_within_the_word_limit() {
        let body = (0..50)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let got = chunks("T", &format!("# H\n{body}\n\n{body}\n"), 30);
        assert!(got.len() >= 4, "{got:?}");
        for chunk in &got {
            let words = chunk
                .text
                .lines()
                .nth(1)
                .unwrap_or("")
                .split_whitespace()
                .count();
            assert!(words <= 30, "{chunk:?}");
            assert!(chunk.text.starts_with("T › H\n"));
        }
    }

    /// The exact split: chunk texts are hashed to find their stored vectors, so any change here
    /// would send every note back through the model.
    #[test]
    fn paragraphs_fill_a_chunk_until_the_next_would_overflow_it() {
        let b: Vec<String> = (1..=12).map(|i| format!("b{i}")).collect();
        let text = format!("# H\na1 a2 a3 a4 a5\n\n{}\n\n\n\nc1  c2\tc3\n", b.join(" "));
        let texts: Vec<String> = chunks("T", &text, 8).into_iter().map(|c| c.text).collect();
        assert_eq!(
            texts,
            [
                "T › H\na1 a2 a3 a4 a5",
                "T › H\nb1 b2 b3 b4 b5 b6 b7 b8",
                "T › H\nb9 b10 b11 b12 c1 c2 c3",
            ]
        );
    }

    #[test]
    fn an_empty_note_is_its_title() {
        assert_eq!(chunks("Empty", "", 100)[0].text, "Empty");
        assert_eq!(chunks("Only props", "---\na: 1\n---\n", 100).len(), 1);
        // Odd input never panics.
        for text in ["#", "# \n#", "---\n", "\n\n\n# a\n\n", "é# x\n"] {
            assert!(!chunks("x", text, 8).is_empty());
        }
    }
}
