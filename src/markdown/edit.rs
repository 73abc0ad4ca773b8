//! Line-exact edits of a note's body: the splice every edit reduces to, anchors (a short substring that
//! picks one whole line), line spans, and plain-text replacement.
//! It only computes new text from old text; it never reads files, never touches the properties block
//! (every search starts after it), and never panics on any input.

use super::frontmatter;

/// One edit: replace the bytes `start..end` of the note with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Bytes at the front of `text` that only end the previous, unterminated line.
    pub prefix_len: usize,
}

/// The note after an edit, with where the new content landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub text: String,
    /// 1-based first and last line of the inserted or replacing content in the new text; `None` when
    /// the edit only removed text.
    pub lines: Option<(usize, usize)>,
    /// How many places were changed (1 for every edit except a replace-all).
    pub replacements: usize,
}

impl Splice {
    /// Applies the splice; `None` only if it does not fit `note` (a bug in the caller).
    pub fn apply(&self, note: &str) -> Option<Edited> {
        let before = note.get(..self.start)?;
        let after = note.get(self.end..)?;
        let text = format!("{before}{}{after}", self.text);
        let content = self.text.get(self.prefix_len..).unwrap_or("");
        let lines = (!content.is_empty()).then(|| {
            let first = 1 + text[..self.start + self.prefix_len].matches('\n').count();
            let breaks = content.trim_end_matches('\n').matches('\n').count();
            (first, first + breaks)
        });
        Some(Edited {
            text,
            lines,
            replacements: 1,
        })
    }
}

/// Why an edit cannot be made; the caller adds the note's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// Nothing matched. `what` names the input (for example `anchor "Status:"`).
    NoMatch { what: String, hint: String },
    /// More than one place matched and the caller did not allow picking the first.
    AmbiguousMatch {
        what: String,
        count: usize,
        /// 1-based lines of the matches (at most [`MAX_REPORTED_LINES`]).
        lines: Vec<usize>,
        hint: String,
    },
    /// The request itself cannot be carried out (empty content, a multi-line anchor, …).
    Invalid(String),
}

/// How many match lines an error lists; more would only flood the caller.
pub const MAX_REPORTED_LINES: usize = 20;

/// Where new text goes relative to an anchor line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Before,
    After,
}

/// Byte offset where the body starts: after the properties block, or after a byte-order mark.
pub fn body_start(text: &str) -> usize {
    let split = frontmatter::split(text);
    if split.yaml.is_some() {
        split.block_len
    } else if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// The line ending the note already uses (judged by its first line), so inserted lines match it.
pub fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if at > 0 && text.as_bytes().get(at - 1) == Some(&b'\r') => "\r\n",
        _ => "\n",
    }
}

/// A splice that puts `content` into `note` at `start..end` as whole lines: a line ending is added
/// before it when `start` is in the middle of an unterminated last line, and after it when more text
/// follows or the note ended with one; in a CRLF note, bare `\n` in the content become `\r\n`.
pub fn line_splice(note: &str, start: usize, end: usize, content: &str) -> Splice {
    if content.is_empty() {
        return Splice {
            start,
            end,
            text: String::new(),
            prefix_len: 0,
        };
    }
    let newline = newline_of(note);
    let mut body = if newline == "\r\n" {
        content.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        content.to_owned()
    };
    // Text after the content needs a line break; at the end of the note, so does a note that ended
    // with one (or was empty), so the file keeps ending with a line break.
    let needs_break = end < note.len() || note.is_empty() || note.ends_with('\n');
    if needs_break && !body.ends_with('\n') {
        body.push_str(newline);
    }
    // A byte-order mark is not a line, so content right after it needs no line ending first.
    let unterminated = note.get(..start).is_some_and(|before| {
        let before = before.strip_prefix('\u{feff}').unwrap_or(before);
        !before.is_empty() && !before.ends_with('\n')
    });
    let prefix = if unterminated { newline } else { "" };
    Splice {
        start,
        end,
        text: format!("{prefix}{body}"),
        prefix_len: prefix.len(),
    }
}

/// One line of the body: its 1-based number in the file and byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    pub number: usize,
    pub start: usize,
    /// End of the line's text, before `\r\n` or `\n`.
    pub content_end: usize,
    /// Start of the next line (or the end of the note).
    pub end: usize,
}

/// The lines of the body, after the properties block.
pub fn body_lines(text: &str) -> Vec<LineSpan> {
    let start = body_start(text);
    let mut number = 1 + text
        .get(..start)
        .map_or(0, |head| head.matches('\n').count());
    let mut lines = Vec::new();
    let mut at = start;
    while at < text.len() {
        let rest = text.get(at..).unwrap_or("");
        let (content_len, line_len) = match rest.find('\n') {
            Some(newline) if newline > 0 && rest.as_bytes().get(newline - 1) == Some(&b'\r') => {
                (newline - 1, newline + 1)
            }
            Some(newline) => (newline, newline + 1),
            None => (rest.len(), rest.len()),
        };
        lines.push(LineSpan {
            number,
            start: at,
            content_end: at + content_len,
            end: at + line_len,
        });
        number += 1;
        at += line_len;
    }
    lines
}

/// Checks an anchor and drops one trailing line ending a caller may have copied with it.
fn clean_anchor<'a>(name: &str, anchor: &'a str) -> Result<&'a str, EditError> {
    let anchor = anchor
        .strip_suffix('\n')
        .map(|rest| rest.strip_suffix('\r').unwrap_or(rest))
        .unwrap_or(anchor);
    if anchor.is_empty() {
        return Err(EditError::Invalid(format!(
            "{name} is empty; pass a distinctive part of the line you mean, copied exactly (anchors are case-sensitive)"
        )));
    }
    if anchor.contains('\n') {
        return Err(EditError::Invalid(format!(
            "{name} {anchor:?} spans several lines, but an anchor identifies one line; pass part of a single line (use start_anchor and end_anchor for a span)"
        )));
    }
    Ok(anchor)
}

/// The index (into `lines`, from `from` on) of the one line containing `anchor`.
fn find_anchor(
    text: &str,
    lines: &[LineSpan],
    from: usize,
    name: &str,
    anchor: &str,
    first_match: bool,
) -> Result<usize, EditError> {
    let anchor = clean_anchor(name, anchor)?;
    let what = format!("{name} {anchor:?}");
    let matches: Vec<usize> = (from..lines.len())
        .filter(|index| {
            lines
                .get(*index)
                .and_then(|line| text.get(line.start..line.content_end))
                .is_some_and(|content| content.contains(anchor))
        })
        .collect();
    match matches.as_slice() {
        [] => {
            let hint = match close_match(text, lines, from, anchor) {
                Some(line) => format!(
                    "Line {line} matches when case and spacing are ignored; anchors are case-sensitive, so copy the text exactly."
                ),
                None if from > 0 => "It must be on or after the start anchor's line. Re-read the note and copy part of the line exactly.".to_owned(),
                None => "Re-read the note and copy a distinctive part of the line exactly (anchors are case-sensitive and never match the properties block).".to_owned(),
            };
            Err(EditError::NoMatch { what, hint })
        }
        [one] => Ok(*one),
        [first, ..] if first_match => Ok(*first),
        many => Err(EditError::AmbiguousMatch {
            what,
            count: many.len(),
            lines: many
                .iter()
                .filter_map(|index| lines.get(*index).map(|line| line.number))
                .take(MAX_REPORTED_LINES)
                .collect(),
            hint: "Use a longer anchor that only one line contains, or pass first_match: true to use the first of them.".to_owned(),
        }),
    }
}

/// The first line that contains `anchor` when case and runs of whitespace are ignored, to help a caller
/// who retyped the anchor.
fn close_match(text: &str, lines: &[LineSpan], from: usize, anchor: &str) -> Option<usize> {
    let fold = |text: &str| {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let wanted = fold(anchor);
    if wanted.is_empty() {
        return None;
    }
    lines.get(from..)?.iter().find_map(|line| {
        let content = text.get(line.start..line.content_end)?;
        fold(content).contains(&wanted).then_some(line.number)
    })
}

/// Inserts `content` as whole lines before or after the line that `anchor` identifies.
pub fn insert_at_anchor(
    text: &str,
    anchor: &str,
    position: Position,
    content: &str,
    first_match: bool,
) -> Result<Splice, EditError> {
    if content.is_empty() {
        return Err(EditError::Invalid(
            "content is empty, so there is nothing to insert; pass the lines to add".to_owned(),
        ));
    }
    let lines = body_lines(text);
    let index = find_anchor(text, &lines, 0, "anchor", anchor, first_match)?;
    let line = lines
        .get(index)
        .ok_or_else(|| EditError::Invalid("anchor line vanished".to_owned()))?;
    let at = match position {
        Position::Before => line.start,
        Position::After => line.end,
    };
    Ok(line_splice(text, at, at, content))
}

/// Replaces the lines from the one `start_anchor` identifies through the one `end_anchor` identifies
/// (searched from the start line on; the start line alone without it) with `content`. Empty content
/// deletes the lines.
pub fn replace_span(
    text: &str,
    start_anchor: &str,
    end_anchor: Option<&str>,
    content: &str,
    first_match: bool,
) -> Result<Splice, EditError> {
    let lines = body_lines(text);
    let first = find_anchor(text, &lines, 0, "start_anchor", start_anchor, first_match)?;
    let last = match end_anchor {
        Some(end_anchor) => {
            find_anchor(text, &lines, first, "end_anchor", end_anchor, first_match)?
        }
        None => first,
    };
    let (Some(first), Some(last)) = (lines.get(first), lines.get(last)) else {
        return Err(EditError::Invalid("anchor line vanished".to_owned()));
    };
    Ok(line_splice(text, first.start, last.end, content))
}

/// Replaces `old` with `new` in the body: exactly one occurrence, or every one with `all`.
pub fn replace_text(text: &str, old: &str, new: &str, all: bool) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::Invalid(
            "old_text is empty; pass the exact text to replace, copied from the note".to_owned(),
        ));
    }
    let start = body_start(text);
    let body = text.get(start..).unwrap_or("");
    let found: Vec<usize> = body.match_indices(old).map(|(at, _)| start + at).collect();
    let line_of = |at: usize| 1 + text.get(..at).map_or(0, |head| head.matches('\n').count());
    let what = format!("old_text {:?}", shorten(old));
    match found.as_slice() {
        [] => {
            let in_properties = text.get(..start).is_some_and(|head| head.contains(old));
            let folded = body.to_lowercase().contains(&old.to_lowercase());
            let hint = if in_properties {
                "It occurs only in the properties block, which this tool never changes; use vault_update_properties."
            } else if folded {
                "It matches when case is ignored; old_text is case-sensitive, so copy it exactly from the note."
            } else {
                "Re-read the note and copy the text exactly, including whitespace and line breaks."
            };
            Err(EditError::NoMatch {
                what,
                hint: hint.to_owned(),
            })
        }
        [_, _, ..] if !all => {
            let mut lines = lines_at(text, &found);
            lines.dedup();
            lines.truncate(MAX_REPORTED_LINES);
            Err(EditError::AmbiguousMatch {
                what,
                count: found.len(),
                lines,
                hint: "Include more surrounding text so old_text occurs once, or pass replace_all_occurrences: true to replace every one.".to_owned(),
            })
        }
        _ => {
            let first = found.first().copied().unwrap_or(start);
            let replaced = format!(
                "{}{}",
                text.get(..start).unwrap_or(""),
                body.replace(old, new)
            );
            let lines = (!new.is_empty()).then(|| {
                let first_line = line_of(first);
                let last = found.last().copied().unwrap_or(first);
                // Each earlier replacement shifts the last one by the difference in length.
                let shift = (found.len() - 1) * new.len();
                let last_start = last + shift - (found.len() - 1) * old.len();
                let last_line = 1
                    + replaced
                        .get(..last_start)
                        .map_or(0, |head| head.matches('\n').count())
                    + new.trim_end_matches('\n').matches('\n').count();
                (first_line, last_line)
            });
            Ok(Edited {
                text: replaced,
                lines,
                replacements: found.len(),
            })
        }
    }
}

/// The 1-based line of each of `offsets` (in increasing order) in `text`, counted on from one to
/// the next: counting each from the start of the text was quadratic in a note where the text to
/// replace occurs on every line (issue 47).
fn lines_at(text: &str, offsets: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let (mut line, mut counted) = (1, 0);
    offsets
        .iter()
        .map(|&at| {
            line += bytes
                .get(counted..at)
                .map_or(0, |part| part.iter().filter(|byte| **byte == b'\n').count());
            counted = counted.max(at);
            line
        })
        .collect()
}

/// A long input cut down for an error message, on a character boundary.
fn shorten(text: &str) -> String {
    const LIMIT: usize = 80;
    match text.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, splice: Result<Splice, EditError>) -> String {
        splice
            .ok()
            .and_then(|splice| splice.apply(text))
            .map(|edited| edited.text)
            .unwrap_or_else(|| "<error>".to_owned())
    }

    #[test]
    fn anchors_pick_one_line_of_the_body_only() {
        let text = "---\nstatus: draft\n---\nstatus line\nother\n";
        let splice = insert_at_anchor(text, "status", Position::After, "new", false);
        assert_eq!(
            apply(text, splice),
            "---\nstatus: draft\n---\nstatus line\nnew\nother\n"
        );
        let error = insert_at_anchor(text, "draft", Position::Before, "x", false).err();
        assert!(
            matches!(error, Some(EditError::NoMatch { .. })),
            "{error:?}"
        );
    }

    #[test]
    fn ambiguous_anchor_lists_lines_unless_first_match() {
        let text = "a x\nb\nc x\n";
        let error = insert_at_anchor(text, "x", Position::Before, "new", false).err();
        assert_eq!(
            error.map(|error| match error {
                EditError::AmbiguousMatch { count, lines, .. } => (count, lines),
                _ => (0, vec![]),
            }),
            Some((2, vec![1, 3]))
        );
        let splice = insert_at_anchor(text, "x", Position::Before, "new", true);
        assert_eq!(apply(text, splice), "new\na x\nb\nc x\n");
    }

    #[test]
    fn spans_are_inclusive_and_end_is_searched_from_the_start() {
        let text = "end\nstart\nmiddle\nend\ntail";
        let splice = replace_span(text, "start", Some("end"), "X", false);
        assert_eq!(apply(text, splice), "end\nX\ntail");
        let splice = replace_span(text, "tail", None, "", false);
        assert_eq!(apply(text, splice), "end\nstart\nmiddle\nend\n");
    }

    #[test]
    fn unterminated_last_line_and_crlf_are_respected() {
        let text = "a\r\nb";
        let splice = insert_at_anchor(text, "b", Position::After, "c\nd", false);
        assert_eq!(apply(text, splice), "a\r\nb\r\nc\r\nd");
        let splice = insert_at_anchor(text, "a", Position::Before, "z", false);
        let edited = splice.ok().and_then(|splice| splice.apply(text));
        assert_eq!(
            edited.map(|edited| (edited.text, edited.lines)),
            Some(("z\r\na\r\nb".to_owned(), Some((1, 1))))
        );
    }

    #[test]
    fn replace_text_counts_and_refuses_ambiguity() {
        let text = "---\nt: cat\n---\ncat dog cat\n";
        let error = replace_text(text, "cat", "cow", false).err();
        assert!(
            matches!(error, Some(EditError::AmbiguousMatch { count: 2, .. })),
            "{error:?}"
        );
        let edited = replace_text(text, "cat", "cow", true).ok();
        assert_eq!(
            edited.map(|edited| (edited.text, edited.replacements, edited.lines)),
            Some((
                "---\nt: cat\n---\ncow dog cow\n".to_owned(),
                2,
                Some((4, 4))
            ))
        );
        let error = replace_text("---\nt: only\n---\nbody\n", "only", "x", false).err();
        assert!(
            matches!(&error, Some(EditError::NoMatch { hint, .. }) if hint.contains("vault_update_properties")),
            "{error:?}"
        );
    }

    #[test]
    fn r47_text_on_every_line_is_refused_with_its_first_lines() {
        // Each match's line was counted from the note's start: minutes for this note.
        const LINES: usize = 200_000;
        let text = format!("---\nt: cat\n---\n{}", "cat\n".repeat(LINES));
        match replace_text(&text, "cat", "cow", false) {
            Err(EditError::AmbiguousMatch { count, lines, .. }) => {
                assert_eq!(count, LINES);
                assert_eq!(lines, (4..4 + MAX_REPORTED_LINES).collect::<Vec<_>>());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(lines_at("a\nb\n\nc", &[0, 2, 2, 5, 6]), vec![1, 2, 2, 4, 4]);
    }
}
