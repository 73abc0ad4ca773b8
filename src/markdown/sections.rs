//! Patching a note by heading: the byte geometry of a heading's section (the heading lines, the content
//! under them, with or without subsections) and the four patch operations on a section or on the body.
//! It reuses `headings` for what counts as a heading and `edit` for how lines are spliced; it never
//! touches the properties block and never panics on any input.

use super::edit::{EditError, Splice, body_start, line_splice};
use super::headings::{self, Heading};

/// What `vault_patch_note` does with its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOperation {
    /// After the target's last non-blank line (after the last subsection of a section).
    Append,
    /// Right under the heading line, or at the top of the body.
    Prepend,
    /// Instead of the target's content; a section keeps its heading line.
    Replace,
    /// Just before the heading line.
    InsertBefore,
}

/// The byte ranges of one heading's section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// Start of the heading's first line.
    pub start: usize,
    /// Start of the first line after the heading (after a setext underline).
    pub content_start: usize,
    /// End of the section's last non-blank line; blank lines before the next heading stay outside.
    pub content_end: usize,
}

/// The section under `heading` (one of `headings::headings(text)`), with its subsections or without.
pub fn section(text: &str, heading: &Heading, include_children: bool) -> Section {
    let content_start = heading_end(text, heading);
    let end = if include_children {
        heading.section_end
    } else {
        headings::headings(text)
            .iter()
            .map(|other| other.start)
            .find(|start| *start > heading.start)
            .map_or(heading.section_end, |next| next.min(heading.section_end))
    };
    Section {
        start: heading.start,
        content_start,
        content_end: last_non_blank_end(text, content_start, end.max(content_start)),
    }
}

/// A patch of one heading's section.
pub fn patch_section(
    text: &str,
    heading: &Heading,
    include_children: bool,
    operation: PatchOperation,
    content: &str,
) -> Result<Splice, EditError> {
    require_content(operation, content)?;
    let section = section(text, heading, include_children);
    Ok(match operation {
        PatchOperation::Append => {
            line_splice(text, section.content_end, section.content_end, content)
        }
        PatchOperation::Prepend => {
            line_splice(text, section.content_start, section.content_start, content)
        }
        PatchOperation::Replace => {
            line_splice(text, section.content_start, section.content_end, content)
        }
        PatchOperation::InsertBefore => line_splice(text, section.start, section.start, content),
    })
}

/// A patch of the whole body (everything after the properties block).
pub fn patch_body(
    text: &str,
    operation: PatchOperation,
    content: &str,
) -> Result<Splice, EditError> {
    require_content(operation, content)?;
    let start = body_start(text);
    Ok(match operation {
        PatchOperation::Append => line_splice(text, text.len(), text.len(), content),
        PatchOperation::Prepend => line_splice(text, start, start, content),
        PatchOperation::Replace => line_splice(text, start, text.len(), content),
        PatchOperation::InsertBefore => {
            return Err(EditError::Invalid(
                "insert_before needs a heading to insert before; pass heading, or use prepend to add at the top of the note".to_owned(),
            ));
        }
    })
}

fn require_content(operation: PatchOperation, content: &str) -> Result<(), EditError> {
    if content.is_empty() && operation != PatchOperation::Replace {
        return Err(EditError::Invalid(
            "content is empty, so there is nothing to add; pass the markdown to insert (replace with empty content clears the target)".to_owned(),
        ));
    }
    Ok(())
}

/// Where the heading's own lines end: after the ATX line, or after a setext heading's underline.
fn heading_end(text: &str, heading: &Heading) -> usize {
    let mut at = heading.start;
    let mut first = true;
    while at < text.len() {
        let rest = text.get(at..).unwrap_or("");
        let line_len = rest.find('\n').map_or(rest.len(), |newline| newline + 1);
        let line = rest
            .get(..line_len)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r']);
        let next = at + line_len;
        let unindented = line.len() - line.trim_start_matches(' ').len() <= 3;
        let trimmed = line.trim_matches([' ', '\t']);
        if first && unindented && super::blocks::atx_heading(trimmed).is_some() {
            return next;
        }
        if !first && unindented && is_setext_underline(trimmed) {
            return next;
        }
        if !first && trimmed.is_empty() {
            // A setext heading's text cannot contain a blank line; stop at the first line.
            break;
        }
        first = false;
        at = next;
    }
    let rest = text.get(heading.start..).unwrap_or("");
    heading.start + rest.find('\n').map_or(rest.len(), |newline| newline + 1)
}

fn is_setext_underline(line: &str) -> bool {
    !line.is_empty() && (line.bytes().all(|b| b == b'=') || line.bytes().all(|b| b == b'-'))
}

/// End of the last line in `start..end` with anything but whitespace on it, or `start` if none.
fn last_non_blank_end(text: &str, start: usize, end: usize) -> usize {
    let Some(region) = text.get(start..end) else {
        return start;
    };
    let mut kept = 0;
    let mut at = 0;
    for line in region.split_inclusive('\n') {
        at += line.len();
        if !line.trim().is_empty() {
            kept = at;
        }
    }
    start + kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(
        text: &str,
        heading: &str,
        children: bool,
        op: PatchOperation,
        content: &str,
    ) -> String {
        let found = headings::headings(text)
            .into_iter()
            .find(|candidate| candidate.text == heading);
        found
            .and_then(|heading| patch_section(text, &heading, children, op, content).ok())
            .and_then(|splice| splice.apply(text))
            .map(|edited| edited.text)
            .unwrap_or_else(|| "<error>".to_owned())
    }

    const NOTE: &str = "---\na: 1\n---\n# A\nintro\n\n## B\nb text\n\n### C\nc text\n\n## D\nd\n";

    #[test]
    fn append_lands_after_the_last_subsection() {
        assert_eq!(
            patch(NOTE, "B", true, PatchOperation::Append, "new"),
            "---\na: 1\n---\n# A\nintro\n\n## B\nb text\n\n### C\nc text\nnew\n\n## D\nd\n"
        );
        assert_eq!(
            patch(NOTE, "B", false, PatchOperation::Append, "new"),
            "---\na: 1\n---\n# A\nintro\n\n## B\nb text\nnew\n\n### C\nc text\n\n## D\nd\n"
        );
    }

    #[test]
    fn prepend_replace_and_insert_before() {
        assert_eq!(
            patch(NOTE, "D", true, PatchOperation::Prepend, "top"),
            "---\na: 1\n---\n# A\nintro\n\n## B\nb text\n\n### C\nc text\n\n## D\ntop\nd\n"
        );
        assert_eq!(
            patch(NOTE, "B", true, PatchOperation::Replace, "only"),
            "---\na: 1\n---\n# A\nintro\n\n## B\nonly\n\n## D\nd\n"
        );
        assert_eq!(
            patch(NOTE, "C", true, PatchOperation::InsertBefore, "x"),
            "---\na: 1\n---\n# A\nintro\n\n## B\nb text\n\nx\n### C\nc text\n\n## D\nd\n"
        );
    }

    #[test]
    fn setext_headings_keep_their_underline() {
        let text = "Title\n=====\nbody\n";
        assert_eq!(
            patch(text, "Title", true, PatchOperation::Prepend, "top"),
            "Title\n=====\ntop\nbody\n"
        );
    }

    #[test]
    fn body_patches_never_enter_the_properties_block() {
        let text = "---\na: 1\n---";
        let edited = patch_body(text, PatchOperation::Prepend, "x")
            .ok()
            .and_then(|splice| splice.apply(text));
        assert_eq!(edited.map(|e| e.text), Some("---\na: 1\n---\nx".to_owned()));
        let text = "\u{feff}body";
        let edited = patch_body(text, PatchOperation::Replace, "new")
            .ok()
            .and_then(|splice| splice.apply(text));
        assert_eq!(edited.map(|e| e.text), Some("\u{feff}new".to_owned()));
    }
}
