//! Where a link is: byte offsets found in a file's text turned into 1-based lines and 0-based
//! character columns, counted on from the previous offset so many links on one line stay linear.

pub(super) fn find_from(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack
        .get(from..)
        .and_then(|rest| rest.find(needle))
        .map(|at| from + at)
}

/// Byte offsets where each line starts.
pub(super) fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|(_, byte)| *byte == b'\n')
            .map(|(at, _)| at + 1),
    );
    starts
}

/// 1-based line and 0-based character column of a byte offset.
pub(super) fn position(text: &str, line_starts: &[usize], offset: usize) -> (usize, usize) {
    let index = line_starts
        .partition_point(|start| *start <= offset)
        .saturating_sub(1);
    let start = line_starts.get(index).copied().unwrap_or(0);
    let column = text
        .get(start..offset)
        .map_or(0, |part| part.chars().count());
    (index + 1, column)
}

/// Line and column of offsets asked for in increasing order, each column counted on from the
/// previous offset's when both lie on one line: counting each from its line's start was quadratic
/// in a line of many links.
pub(super) struct Positions<'a> {
    text: &'a str,
    line_starts: &'a [usize],
    /// The last offset asked for, with its line and column.
    last: Option<(usize, usize, usize)>,
}

impl<'a> Positions<'a> {
    pub(super) fn new(text: &'a str, line_starts: &'a [usize]) -> Self {
        Positions {
            text,
            line_starts,
            last: None,
        }
    }

    /// What `position` answers, counted on from the last offset when nothing but characters of
    /// its line lie between.
    pub(super) fn at(&mut self, offset: usize) -> (usize, usize) {
        let counted_on = self.last.and_then(|(last, line, column)| {
            let between = self.text.get(last..offset)?;
            (!between.contains('\n')).then(|| (line, column + between.chars().count()))
        });
        let (line, column) =
            counted_on.unwrap_or_else(|| position(self.text, self.line_starts, offset));
        self.last = Some((offset, line, column));
        (line, column)
    }
}

/// Where `part`, a slice of `text`, starts in it.
pub(super) fn offset_in(text: &str, part: &str) -> Option<usize> {
    let offset = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (offset + part.len() <= text.len()).then_some(offset)
}
