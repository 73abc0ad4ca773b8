//! The searchable text of the vault's files that are not notes: text formats as they are, and
//! (once their readers exist) canvases and PDFs as the text an agent would read.
//!
//! Text is cut to `MAX_INDEXED_BYTES` before it reaches FTS5: a 40 MB log must not stall the
//! writer or bloat the index, and a search only needs to find the file, not every line of it.

/// The most text indexed per file; the rest is dropped at a character boundary.
pub const MAX_INDEXED_BYTES: usize = 100 * 1024;

/// Extensions whose bytes are indexed as they are (when they are UTF-8).
const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "csv", "json", "xml", "svg", "log", "yaml", "yml", "base",
];

/// Whether a file with this (lower-case) extension has text worth indexing.
pub fn is_indexed(extension: &str) -> bool {
    TEXT_EXTENSIONS.contains(&extension)
}

/// The text to index for a file with this (lower-case) extension, or `None` when it has none
/// (not a text kind, not UTF-8, or empty).
pub fn extract(extension: &str, bytes: &[u8]) -> Option<String> {
    if !TEXT_EXTENSIONS.contains(&extension) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return None;
    }
    Some(truncate(text, MAX_INDEXED_BYTES).to_owned())
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
    fn long_text_is_cut_at_a_character_boundary() {
        let text = "é".repeat(MAX_INDEXED_BYTES);
        let indexed = extract("txt", text.as_bytes()).unwrap_or_default();
        assert!(indexed.len() <= MAX_INDEXED_BYTES);
        assert!(indexed.len() >= MAX_INDEXED_BYTES - 1);
        assert!(indexed.chars().all(|c| c == 'é'));
    }
}
