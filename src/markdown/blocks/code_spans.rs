//! Code spans of one line, paired up front so that finding where one ends is a lookup.

/// The backtick runs of one line, each paired with the next run of the same length, so finding where a
/// code span ends is a lookup instead of a forward scan (which would be quadratic on long lines).
pub(crate) struct CodeSpans {
    /// (start, length) of every maximal backtick run, in order.
    runs: Vec<(usize, usize)>,
    /// For each run, the index of the next run of the same length.
    closer: Vec<Option<usize>>,
}

impl CodeSpans {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let mut runs = Vec::new();
        let mut index = 0;
        while index < bytes.len() {
            if bytes[index] == b'`' {
                let length = bytes[index..]
                    .iter()
                    .take_while(|byte| **byte == b'`')
                    .count();
                runs.push((index, length));
                index += length;
            } else {
                index += 1;
            }
        }
        let mut closer = vec![None; runs.len()];
        let mut next_of_length = std::collections::HashMap::new();
        for (run_index, (_, length)) in runs.iter().enumerate().rev() {
            closer[run_index] = next_of_length.insert(*length, run_index);
        }
        CodeSpans { runs, closer }
    }

    /// Given a position on a backtick, returns the index after its code span, or after its run when the run
    /// has no closing run of the same length (then the backticks are literal text).
    pub(crate) fn skip(&self, start: usize) -> usize {
        let Ok(run_index) = self
            .runs
            .binary_search_by_key(&start, |(run_start, _)| *run_start)
        else {
            // Only reachable when an earlier skip ended inside a run: read the backtick as text.
            return start + 1;
        };
        let (_, length) = self.runs[run_index];
        match self.closer[run_index].and_then(|closing| self.runs.get(closing)) {
            Some((closing_start, closing_length)) => closing_start + closing_length,
            None => start + length,
        }
    }
}
