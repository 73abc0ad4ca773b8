//! A cursor over one line that counts columns as CommonMark does (a tab advances to the next
//! stop of four, and a partly consumed tab still counts as indentation).

/// A read position in one line that understands tab stops, including a tab only partly used as
/// indentation (CommonMark treats the rest of such a tab as spaces).
#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor<'a> {
    pub(super) line: &'a str,
    pub(super) pos: usize,
    /// Column at which the byte at `pos` starts.
    pub(super) column: usize,
    /// Columns of an already consumed tab that still count as indentation.
    pub(super) partial: usize,
    /// Index after the line's last non-whitespace byte, so "is the rest blank" is a comparison.
    pub(super) content_end: usize,
}

pub(super) const TAB_STOP: usize = 4;

impl<'a> Cursor<'a> {
    pub(super) fn new(line: &'a str) -> Self {
        Cursor {
            line,
            pos: 0,
            column: 0,
            partial: 0,
            content_end: line.trim_end_matches([' ', '\t']).len(),
        }
    }

    pub(super) fn byte(&self, offset: usize) -> Option<u8> {
        self.line.as_bytes().get(self.pos + offset).copied()
    }

    /// Columns of whitespace from here to the first other character, counted no further than `cap`:
    /// every caller only compares against a small bound, and an uncapped count on deeply nested lines
    /// would rescan the same indentation once per container.
    pub(super) fn indent(&self, cap: usize) -> usize {
        let mut columns = self.partial;
        let mut column = self.column;
        for byte in self.line.as_bytes().iter().skip(self.pos) {
            if columns >= cap {
                break;
            }
            match byte {
                b' ' => {
                    columns += 1;
                    column += 1;
                }
                b'\t' => {
                    let width = TAB_STOP - column % TAB_STOP;
                    columns += width;
                    column += width;
                }
                _ => break,
            }
        }
        columns
    }

    /// Consumes up to `wanted` columns of whitespace.
    pub(super) fn consume_columns(&mut self, wanted: usize) {
        let mut remaining = wanted;
        let from_partial = self.partial.min(remaining);
        self.partial -= from_partial;
        remaining -= from_partial;
        while remaining > 0 {
            match self.byte(0) {
                Some(b' ') => {
                    self.pos += 1;
                    self.column += 1;
                    remaining -= 1;
                }
                Some(b'\t') => {
                    let width = TAB_STOP - self.column % TAB_STOP;
                    self.pos += 1;
                    self.column += width;
                    if width <= remaining {
                        remaining -= width;
                    } else {
                        self.partial = width - remaining;
                        remaining = 0;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consumes one ASCII byte (a marker character); any leftover tab columns are dropped.
    pub(super) fn consume_ascii(&mut self, count: usize) {
        self.partial = 0;
        self.pos = (self.pos + count).min(self.line.len());
        self.column += count;
    }

    pub(super) fn rest(&self) -> &'a str {
        self.line.get(self.pos..).unwrap_or("")
    }

    pub(super) fn rest_is_blank(&self) -> bool {
        self.pos >= self.content_end
    }

    /// The text after the indentation, which is what block starts are recognised on.
    pub(super) fn after_indent(&self) -> &'a str {
        self.rest().trim_start_matches([' ', '\t'])
    }
}
