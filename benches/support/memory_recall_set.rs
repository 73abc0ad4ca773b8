//! The labelled memory recall set in tests/data/memory-recall (a vault whose `About Me/` holds
//! the five memory files, and `queries.tsv`: a query a user might ask, then the entries it should
//! recall) and recall@k over it through `Ops::memory_recall`. Shared by
//! benches/memory_recall.rs and tests/it/memory_recall.rs.

use std::collections::HashSet;
use std::path::PathBuf;

use quire::ops::{Context, MemoryEntry, MemoryRecall, Ops};

/// One labelled query: its text and the entries it should recall, as (file, text fragment).
#[derive(Debug, Clone)]
pub struct Labelled {
    pub query: String,
    pub expected: Vec<(String, String)>,
}

/// What one recall mode scored over the set.
#[derive(Debug, Clone)]
pub struct Score {
    /// Mean over queries of the share of expected entries among the first `k` recalled.
    pub recall: f64,
    /// Mean number of entries returned (the cut keeps fewer than `k` when few are relevant).
    pub returned: f64,
    /// The modes `Recalled` reported (to be sure which one ran).
    pub modes: HashSet<&'static str>,
    /// Queries whose expected entries were not all recalled.
    pub missed: Vec<String>,
}

/// The vault folder of the set.
pub fn vault_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/memory-recall")
}

/// The labelled queries of `queries.tsv`.
pub fn queries() -> Vec<Labelled> {
    let path = vault_dir().join("queries.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (query, expected) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("no tab in {line:?}"));
            let expected = expected
                .split(" | ")
                .map(|one| {
                    let (file, fragment) = one
                        .split_once(": ")
                        .unwrap_or_else(|| panic!("no 'File: ' in {one:?}"));
                    (file.trim().to_owned(), fragment.trim().to_owned())
                })
                .collect();
            Labelled {
                query: query.trim().to_owned(),
                expected,
            }
        })
        .collect()
}

/// Whether `entry` is the one `(file, fragment)` names.
pub fn names(entry: &MemoryEntry, (file, fragment): &(String, String)) -> bool {
    entry.file == *file && entry.text.contains(fragment.as_str())
}

fn words(text: &str) -> HashSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether the query shares no word with any of its expected entries (their file and section
/// names included, as they are indexed): only meaning can find them.
pub fn shares_no_word(labelled: &Labelled, entries: &[MemoryEntry]) -> bool {
    let query = words(&labelled.query);
    labelled.expected.iter().all(|expected| {
        entries
            .iter()
            .filter(|entry| names(entry, expected))
            .all(|entry| {
                let indexed = words(&format!("{} {} {}", entry.file, entry.section, entry.text));
                query.is_disjoint(&indexed)
            })
    })
}

/// Recall@`k` of `ops.memory_recall` over `queries`.
pub fn evaluate(ops: &Ops, queries: &[Labelled], k: u32) -> Score {
    let ctx = Context::owner();
    let mut total = 0.0;
    let mut returned = 0usize;
    let mut modes = HashSet::new();
    let mut missed = Vec::new();
    for labelled in queries {
        let recalled = ops
            .memory_recall(
                &ctx,
                MemoryRecall {
                    query: labelled.query.clone(),
                    file: None,
                    limit: Some(k),
                },
            )
            .unwrap_or_else(|error| panic!("recalling {:?}: {error}", labelled.query));
        modes.insert(recalled.mode);
        returned += recalled.entries.len();
        let found = labelled
            .expected
            .iter()
            .filter(|expected| recalled.entries.iter().any(|entry| names(entry, expected)))
            .count();
        if found < labelled.expected.len() {
            missed.push(labelled.query.clone());
        }
        total += found as f64 / labelled.expected.len() as f64;
    }
    let count = queries.len().max(1) as f64;
    Score {
        recall: total / count,
        returned: returned as f64 / count,
        modes,
        missed,
    }
}
