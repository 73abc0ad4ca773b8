//! `vault_grep`: a time-boxed line search through the notes on disk, by literal text or regular
//! expression, for what the index cannot answer (exact punctuation, code, partial words).

use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};

use crate::index::NoteFilter;
use crate::ops::error::OpsError;
use crate::ops::paging::check_limit;
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

/// How long a grep may run unless the caller says otherwise.
pub const DEFAULT_GREP_BUDGET: Duration = Duration::from_secs(3);
const MAX_GREP_BUDGET: Duration = Duration::from_secs(30);
/// Longest line text a grep hit returns; longer lines are cut around the match.
const GREP_LINE_CHARS: usize = 300;

#[derive(Debug, Clone, Default)]
pub struct Grep {
    pub pattern: String,
    pub regex: bool,
    pub case_sensitive: bool,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepHit {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// 0-based character offset of the match in the line.
    pub column: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct GrepResult {
    pub hits: Vec<GrepHit>,
    pub truncated: bool,
    pub timed_out: bool,
}

impl Ops {
    pub fn grep(&self, ctx: &Context, request: Grep) -> Result<GrepResult, OpsError> {
        let limit = check_limit(request.limit)?;
        let budget = match request.timeout_ms {
            None => DEFAULT_GREP_BUDGET,
            Some(0) => {
                return Err(OpsError::invalid_argument(
                    "timeout_ms must be at least 1; omit it for the default of 3000",
                ));
            }
            Some(ms) => Duration::from_millis(ms).min(MAX_GREP_BUDGET),
        };
        let regex = compile_grep(&request, false)?;
        // Notes without any match are skipped with one pass over the whole text. In multi-line
        // mode `^`/`$` match at line ends as they do on single lines; text anchors cannot.
        let prefilter = if request.regex
            && (request.pattern.contains("\\A") || request.pattern.contains("\\z"))
        {
            None
        } else {
            Some(compile_grep(&request, true)?)
        };
        let filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            ..NoteFilter::default()
        };
        let shown = self.search_visibility(ctx);
        let paths = self.walls.index(&shown).note_paths(&filter)?;
        // The budget is the scan's own: it starts once the grep's turn comes.
        let _turn = self.scans.wait().map_err(|busy| OpsError::Busy {
            what: "this grep",
            waited_ms: busy.waited.as_millis() as u64,
            running: busy.running,
            waiting: busy.waiting,
        })?;
        let started = Instant::now();
        let mut hits = Vec::new();
        let mut truncated = false;
        let mut timed_out = false;
        'notes: for raw in paths {
            if started.elapsed() >= budget {
                timed_out = true;
                break;
            }
            if !shown.shows(&raw) {
                continue;
            }
            let Ok(path) = VaultPath::parse(&raw) else {
                continue;
            };
            let Ok(file) = self.walls.vault(&shown).read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&file.bytes);
            if prefilter
                .as_ref()
                .is_some_and(|prefilter| !prefilter.is_match(&text))
            {
                continue;
            }
            for (number, line) in text.lines().enumerate() {
                if let Some(found) = regex.find(line) {
                    if hits.len() == limit {
                        truncated = true;
                        break 'notes;
                    }
                    hits.push(GrepHit {
                        path: raw.clone(),
                        line: number + 1,
                        column: line[..found.start()].chars().count(),
                        text: clip_line(line, found.start(), found.end()),
                    });
                }
                if number % 256 == 255 && started.elapsed() >= budget {
                    timed_out = true;
                    break 'notes;
                }
            }
        }
        Ok(GrepResult {
            hits,
            truncated,
            timed_out,
        })
    }
}

fn compile_grep(request: &Grep, multi_line: bool) -> Result<Regex, OpsError> {
    if request.pattern.is_empty() {
        return Err(OpsError::invalid_argument(
            "pattern is empty; give the text (or, with regex: true, the regular expression) to find",
        ));
    }
    let source = if request.regex {
        request.pattern.clone()
    } else {
        regex::escape(&request.pattern)
    };
    RegexBuilder::new(&source)
        .case_insensitive(!request.case_sensitive)
        .multi_line(multi_line)
        .crlf(multi_line)
        .size_limit(4 << 20)
        .dfa_size_limit(8 << 20)
        .build()
        .map_err(|error| {
            OpsError::invalid_argument(format!(
                "pattern {:?} is not a valid regular expression ({}); fix it, or pass regex: false to search for the literal text",
                request.pattern,
                error.to_string().lines().last().unwrap_or("invalid syntax").trim()
            ))
        })
}

/// The line, or a window of it around the match when it is very long.
fn clip_line(line: &str, start: usize, end: usize) -> String {
    let line = line.trim_end_matches('\r');
    if line.chars().count() <= GREP_LINE_CHARS {
        return line.to_string();
    }
    let before: Vec<(usize, char)> = line[..start.min(line.len())].char_indices().collect();
    let from = before
        .len()
        .checked_sub(GREP_LINE_CHARS / 3)
        .and_then(|at| before.get(at))
        .map_or(0, |(at, _)| *at);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut last = from;
    for (taken, (at, character)) in line[from..].char_indices().enumerate() {
        if taken >= GREP_LINE_CHARS && from + at >= end {
            break;
        }
        out.push(character);
        last = from + at + character.len_utf8();
    }
    if last < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_clipped_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(1000), "b".repeat(1000));
        let start = line.find("needle").expect("present");
        let clipped = clip_line(&line, start, start + 6);
        assert!(clipped.contains("needle"));
        assert!(clipped.starts_with('…') && clipped.ends_with('…'));
        assert!(clipped.chars().count() <= GREP_LINE_CHARS + 2);
    }
}
