//! The bounds of issue 63 through `ops`: a batch's edited notes and its plan stay under their
//! limits, dry run included (F2); a history diff is bounded in time and size (F5); an undo keeps
//! the guards of a delete (F9). Limits are set low in each vault so nothing here allocates much:
//! the point is that Quire refuses before it builds.

use std::time::{Duration, Instant};

use quire::ops::{self, Context, OpsError};

use super::support::TestVault;

/// `max_note_bytes` in these vaults: 64 KiB, so a plan may hold 1 MiB.
const LIMITS: &str = "[limits]\nmax_note_bytes = 65536\n";

fn replace(
    vault: &TestVault,
    old: &str,
    new: &str,
    regex: bool,
    dry_run: bool,
) -> Result<ops::BatchResult, OpsError> {
    vault.ops.replace_across(
        &Context::owner(),
        ops::ReplaceAcross {
            old_text: old.into(),
            new_text: new.into(),
            regex,
            target: ops::Target {
                paths: Some(vec!["Inbox/a.md".into()]),
                filter: None,
            },
            dry_run,
            ..ops::ReplaceAcross::default()
        },
    )
}

fn set_property(
    vault: &TestVault,
    value: serde_json::Value,
    dry_run: bool,
) -> Result<ops::BatchResult, OpsError> {
    vault.ops.set_property(
        &Context::owner(),
        ops::SetProperty {
            name: "blob".into(),
            value,
            target: ops::Target {
                paths: None,
                filter: Some(ops::SearchFilters {
                    folder: Some("Inbox".into()),
                    ..ops::SearchFilters::default()
                }),
            },
            dry_run,
        },
    )
}

/// Asserts the batch was refused as `too_large` with a message that says each of `says`.
fn assert_too_large(result: Result<ops::BatchResult, OpsError>, says: &[&str]) {
    let error = match result {
        Ok(plan) => panic!(
            "a batch over its bound went ahead: {} notes",
            plan.total_notes
        ),
        Err(error) => error,
    };
    let message = error.to_string();
    assert_eq!(error.code(), "too_large", "{message}");
    for said in says {
        assert!(message.contains(said), "{said:?} missing from: {message}");
    }
}

/// F2: `e` → 1,000 × `E` on a 4 KB note would be 4 MB; `x*` matches between every character.
/// Both stop at the note limit, dry run or not, and name the note, the limit and what to do.
#[test]
fn r63_a_replacement_past_the_note_limit_is_refused_dry_run_too() {
    let note = "e".repeat(4_000) + "\n";
    let vault = TestVault::builder()
        .config(LIMITS)
        .note("Inbox/a.md", &note)
        .open();
    let long = "E".repeat(1_000);
    for (old, regex) in [("e", false), ("x*", true)] {
        for dry_run in [true, false] {
            assert_too_large(
                replace(&vault, old, &long, regex, dry_run),
                &[
                    "'Inbox/a.md'",
                    "65536 bytes",
                    "limits.max_note_bytes",
                    "nothing was changed",
                ],
            );
        }
    }
    assert_eq!(vault.read("Inbox/a.md"), note);
    // Under the limit the same edit goes ahead.
    let done = replace(&vault, "e", "EE", false, false).expect("an edit under the limit");
    assert_eq!(done.total_changes, 4_000);
}

/// F2: a 40 KB value over 40 small notes fits each note but not the plan (40 × 40 KB > 1 MiB).
#[test]
fn r63_a_plan_past_its_bound_is_refused_dry_run_too() {
    let notes: Vec<(String, String)> = (0..40)
        .map(|n| (format!("Inbox/n{n:02}.md"), format!("# {n}\n")))
        .collect();
    let vault = TestVault::builder().config(LIMITS).notes(&notes).open();
    let value = serde_json::Value::String("v".repeat(40_000));
    for dry_run in [true, false] {
        assert_too_large(
            set_property(&vault, value.clone(), dry_run),
            &[
                "1048576 bytes",
                "`paths` or `filter`",
                "nothing was changed",
            ],
        );
    }
    assert_eq!(vault.read("Inbox/n00.md"), "# 0\n");
    let small = set_property(&vault, serde_json::Value::String("v".repeat(4_000)), false)
        .expect("a batch under the bound");
    assert_eq!(small.total_notes, 40);
}

fn diff(vault: &TestVault, path: &str) -> Result<String, OpsError> {
    let history = vault
        .ops
        .note_history(
            &Context::owner(),
            ops::NoteHistory {
                path: path.into(),
                ..ops::NoteHistory::default()
            },
        )
        .expect("the history");
    let [newest, older, ..] = history.versions.as_slice() else {
        panic!("two versions expected, got {}", history.versions.len());
    };
    vault
        .ops
        .read_version(
            &Context::owner(),
            ops::ReadVersion {
                path: path.into(),
                version_id: newest.version_id,
                diff_against: Some(older.version_id.to_string()),
            },
        )
        .map(|read| read.diff.unwrap_or_default())
}

/// F5: two 20,000-line versions with no line in common are Myers' worst case (several seconds
/// in a debug build before); the diff stops looking after its deadline and says it is
/// approximate, and stays cut at 256 KB.
#[test]
fn r63_a_diff_past_its_deadline_is_approximate_and_says_so() {
    let vault = TestVault::with_notes(&[("Other.md", "x\n")]);
    let lines = |tag: &str| {
        (0..20_000)
            .map(|n| format!("{tag}{n}\n"))
            .collect::<String>()
    };
    let first = vault.write_note("Big.md", &lines("a"), None);
    vault.write_note("Big.md", &lines("b"), Some(first));
    let started = Instant::now();
    let text = diff(&vault, "Big.md").expect("a diff");
    let took = started.elapsed();
    assert!(
        text.starts_with("[diff approximate:"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.contains("-a0\n") && text.contains("+b0\n"));
    assert!(
        text.len() < 257 * 1024
            && text.ends_with("[diff cut at 256 KB: read the version whole instead]\n")
    );
    assert!(took < Duration::from_secs(10), "the diff took {took:?}");
    // A small diff is exact and unmarked.
    let small = vault.write_note("Small.md", "one\ntwo\n", None);
    vault.write_note("Small.md", "one\nthree\n", Some(small));
    let text = diff(&vault, "Small.md").expect("a diff");
    assert!(
        text.starts_with("--- version ") && text.ends_with("@@ -1,2 +1,2 @@\n one\n-two\n+three\n"),
        "{text}"
    );
}

/// F5: versions with more lines together than a diff compares are refused with a clear error
/// (the diff's tables grow with every line, even lines that are equal); two 260,000-line notes
/// that differ in one line were diffed before.
#[test]
fn r63_a_diff_of_too_many_lines_is_refused() {
    let vault = TestVault::with_notes(&[("Other.md", "x\n")]);
    let body = "x\n".repeat(260_000);
    let first = vault.write_note("Lines.md", &body, None);
    vault.write_note("Lines.md", &format!("y\n{}", &body[2..]), Some(first));
    let error = diff(&vault, "Lines.md").expect_err("a diff of 520,000 lines");
    let message = error.to_string();
    assert_eq!(error.code(), "invalid_argument", "{message}");
    assert!(
        message.contains("520000 lines") && message.contains("without diff_against"),
        "{message}"
    );
}

/// F9: an undo of a create removes the note, so it is refused in a protected folder as
/// `vault_delete_note` is (dry run too); elsewhere it goes ahead.
#[test]
fn r63_an_undo_keeps_the_protected_folders_of_a_delete() {
    let vault = TestVault::builder()
        .config("[vault]\nprotected_folders = [\"Daily\"]\n")
        .note("Other.md", "x\n")
        .open();
    let undo = |change: &str, dry_run: bool| {
        vault.ops.undo(
            &Context::owner(),
            ops::UndoChange {
                change_id: change.into(),
                dry_run,
            },
        )
    };
    let created = |path: &str| {
        vault
            .ops
            .write_note(
                &Context::owner(),
                ops::WriteNote {
                    path: path.into(),
                    body: "today\n".into(),
                    properties: None,
                    overwrite: false,
                    expected_revision: None,
                },
            )
            .unwrap_or_else(|error| panic!("writing {path}: {error}"));
        vault
            .ops
            .list_changes(
                &Context::owner(),
                ops::ListChanges {
                    limit: Some(1),
                    ..ops::ListChanges::default()
                },
            )
            .expect("changes")
            .changes[0]
            .change_id
            .clone()
    };
    let daily = created("Daily/2026-01-05.md");
    for dry_run in [true, false] {
        let error = undo(&daily, dry_run).expect_err("an undo removing a protected note");
        let message = error.to_string();
        assert_eq!(error.code(), "path_forbidden", "{message}");
        assert!(
            message.contains("protected folder") && message.contains(&daily),
            "{message}"
        );
    }
    assert_eq!(vault.read("Daily/2026-01-05.md"), "today\n");
    let inbox = created("Inbox/x.md");
    undo(&inbox, false).expect("an undo outside protected folders");
    assert!(!vault.path("Inbox/x.md").exists());
}
