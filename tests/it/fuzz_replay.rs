//! The fuzz targets' checks (`fuzz/checks/`) on stable Rust, over every committed seed, every input
//! a fuzzing run ever found (`fuzz/regressions/`, each a fixed defect), and real notes from
//! `../shared/vaults`. Coverage-guided fuzzing itself needs nightly and a build of its own
//! (`tests/reliability/fuzz`); this keeps each found defect fixed in every test run.

use std::path::PathBuf;

use crate::support::{shared_dir, skip_without_shared};

#[path = "../../fuzz/checks/bases_expr.rs"]
mod bases_expr;
#[path = "../../fuzz/checks/canvas.rs"]
mod canvas;
#[path = "../../fuzz/checks/http.rs"]
mod http;
#[path = "../../fuzz/checks/links.rs"]
mod links;
#[path = "../../fuzz/checks/moment.rs"]
mod moment;
#[path = "../../fuzz/checks/path.rs"]
mod path;
#[path = "../../fuzz/checks/properties.rs"]
mod properties;
#[path = "../../fuzz/checks/query.rs"]
mod query;
#[path = "../../fuzz/checks/tasks.rs"]
mod tasks;

/// As `tests/reliability/fuzz` seeds its corpus: larger files teach little and slow every run.
const MAX_INPUT: u64 = 65_536;
/// Real notes per vault, in path order.
const NOTES_PER_VAULT: usize = 400;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The committed seeds and regression inputs of `target`.
fn committed_inputs(target: &str) -> Vec<PathBuf> {
    let mut inputs = Vec::new();
    if let Ok(entries) = std::fs::read_dir(fuzz_dir().join("seeds").join(target)) {
        inputs.extend(entries.flatten().map(|entry| entry.path()));
    }
    if let Ok(entries) = std::fs::read_dir(fuzz_dir().join("regressions")) {
        let prefix = format!("{target}-");
        inputs.extend(
            entries
                .flatten()
                .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
                .map(|entry| entry.path()),
        );
    }
    inputs.sort();
    inputs
}

/// Markdown notes of the real vaults beside the repository, at most `NOTES_PER_VAULT` each.
fn real_notes() -> Vec<PathBuf> {
    let vaults = shared_dir().join("vaults");
    if !vaults.is_dir() {
        skip_without_shared("real notes for the fuzz checks", &vaults);
        return Vec::new();
    }
    let mut notes = Vec::new();
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&vaults)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    roots.sort();
    for root in roots.iter().filter(|root| root.is_dir()) {
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(root)
            .into_iter()
            .flatten()
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| entry.into_path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        found.sort();
        notes.extend(found.into_iter().take(NOTES_PER_VAULT));
    }
    notes
}

/// Runs `check` on each input (with `prefix` before its bytes) and names the input that fails.
fn replay(target: &str, inputs: &[PathBuf], prefix: &[u8], check: fn(&[u8])) -> usize {
    let mut ran = 0;
    for input in inputs {
        let Ok(metadata) = std::fs::metadata(input) else {
            continue;
        };
        if metadata.len() > MAX_INPUT {
            continue;
        }
        let Ok(bytes) = std::fs::read(input) else {
            continue;
        };
        let mut data = prefix.to_vec();
        data.extend_from_slice(&bytes);
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "the {target} fuzz check fails on {} (reproduce: tests/reliability/fuzz names the \
             command; the panic is printed above)",
            input.display()
        );
        ran += 1;
    }
    ran
}

fn replay_committed(target: &str, check: fn(&[u8])) {
    let inputs = committed_inputs(target);
    assert!(
        !inputs.is_empty(),
        "no committed seeds for the {target} fuzz target in {}",
        fuzz_dir().display()
    );
    let ran = replay(target, &inputs, &[], check);
    assert_eq!(ran, inputs.len(), "every committed {target} input runs");
}

fn replay_notes(target: &str, prefix: &[u8], check: fn(&[u8])) {
    let notes = real_notes();
    replay(target, &notes, prefix, check);
}

#[test]
fn path_check_holds_on_its_inputs() {
    replay_committed("path", path::run);
}

#[test]
fn properties_check_holds_on_its_inputs_and_real_notes() {
    replay_committed("properties", properties::run);
    // The first byte picks the edit: each of a few edits over every real note.
    for choice in [0u8, 1, 2, 3] {
        replay_notes("properties", &[choice], properties::run);
    }
}

#[test]
fn links_check_holds_on_its_inputs_and_real_notes() {
    replay_committed("links", links::run);
    replay_notes("links", &[], links::run);
}

#[test]
fn tasks_check_holds_on_its_inputs_and_real_notes() {
    replay_committed("tasks", tasks::run);
    replay_notes("tasks", &[], tasks::run);
}

#[test]
fn canvas_check_holds_on_its_inputs() {
    replay_committed("canvas", canvas::run);
}

#[test]
fn moment_check_holds_on_its_inputs() {
    replay_committed("moment", moment::run);
}

#[test]
fn query_check_holds_on_its_inputs() {
    replay_committed("query", query::run);
}

#[test]
fn http_check_holds_on_its_inputs() {
    replay_committed("http", http::run);
}

#[test]
fn bases_expr_check_holds_on_its_inputs() {
    replay_committed("bases_expr", bases_expr::run);
}
