//! The searchable text of the vault's files that are not notes: text formats as they are,
//! canvases and PDFs as the text `vault_read_file` gives an agent.
//!
//! Text is cut to `MAX_INDEXED_BYTES` before it reaches FTS5: a 40 MB log must not stall the
//! writer or bloat the index, and a search only needs to find the file, not every line of it.

use crate::files::FileKind;
use crate::files::pdf::{self, PdfLimits};
use crate::markdown::canvas;

/// Files larger than this are listed but their text is not read for the index (a 2 GB log or a
/// scanned book would stall the writer for no search worth having).
pub const MAX_SOURCE_BYTES: u64 = 50 * 1024 * 1024;

/// The most text indexed per file; the rest is dropped at a character boundary.
pub const MAX_INDEXED_BYTES: usize = 100 * 1024;

/// Whether a file with this (lower-case) extension has text worth indexing.
pub fn is_indexed(extension: &str) -> bool {
    matches!(
        FileKind::of_extension(extension),
        FileKind::Text | FileKind::Canvas | FileKind::Pdf
    )
}

/// How much of a file `extract` needs: a text format's first `MAX_INDEXED_BYTES` (plus a few
/// bytes to finish the last character), so a 2 GB log costs 100 KiB of reading; a canvas or PDF
/// must be read whole (`None`) to be parsed.
pub fn bytes_needed(extension: &str) -> Option<u64> {
    match FileKind::of_extension(extension) {
        FileKind::Text => Some(MAX_INDEXED_BYTES as u64 + 4),
        _ => None,
    }
}

/// The text to index for a file with this (lower-case) extension, or `None` when it has none:
/// text formats as they are (when UTF-8), a canvas as its markdown rendering, a PDF as its text
/// layer. Scanned PDFs and files that do not parse have none; that is not an error here.
pub fn extract(extension: &str, bytes: &[u8]) -> Option<String> {
    let text = match FileKind::of_extension(extension) {
        FileKind::Text => {
            let text = match std::str::from_utf8(bytes) {
                Ok(text) => text,
                // Only the file's first bytes were read: a character cut at the end is not
                // a reason to call the file binary.
                Err(error) if error.error_len().is_none() => {
                    std::str::from_utf8(&bytes[..error.valid_up_to()]).ok()?
                }
                Err(_) => return None,
            };
            text.strip_prefix('\u{feff}').unwrap_or(text).to_owned()
        }
        FileKind::Canvas => {
            let json = std::str::from_utf8(bytes).ok()?;
            canvas::render_canvas(json).ok()?.markdown
        }
        FileKind::Pdf => {
            let limits = PdfLimits {
                max_output_bytes: MAX_INDEXED_BYTES,
                ..PdfLimits::STANDARD
            };
            let read = pdf::pdf_to_markdown(bytes, &limits).ok()?;
            if !read.has_text {
                return None;
            }
            read.markdown
        }
        _ => return None,
    };
    if text.trim().is_empty() {
        return None;
    }
    Some(truncate(&text, MAX_INDEXED_BYTES).to_owned())
}

/// `text` cut to at most `limit` bytes, at a character boundary.
fn truncate(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_formats_are_indexed_as_written() {
        assert_eq!(extract("csv", b"a,b\n1,2\n").as_deref(), Some("a,b\n1,2\n"));
        assert_eq!(extract("png", b"a,b").as_deref(), None);
        assert_eq!(extract("txt", b"\xff\xfe bad").as_deref(), None);
        assert_eq!(extract("txt", b" \n ").as_deref(), None);
    }

    #[test]
    fn a_prefix_cut_inside_a_character_is_still_text() {
        let text = "é".repeat(10);
        let cut = &text.as_bytes()[..5];
        assert_eq!(extract("txt", cut).as_deref(), Some("éé"));
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let text = "é".repeat(MAX_INDEXED_BYTES);
        let indexed = extract("txt", text.as_bytes()).unwrap_or_default();
        assert!(indexed.len() <= MAX_INDEXED_BYTES);
        assert!(indexed.len() >= MAX_INDEXED_BYTES - 1);
        assert!(indexed.chars().all(|c| c == 'é'));
    }
}
