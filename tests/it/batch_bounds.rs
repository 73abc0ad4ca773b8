//! The bounds of issue 63 through `ops`: a batch's edited notes and its plan stay under their
//! limits, dry run included (F2). Limits are set low in each vault so nothing here allocates much:
//! the point is that Quire refuses before it builds.

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

fn refused(result: Result<ops::BatchResult, OpsError>) -> OpsError {
    match result {
        Ok(plan) => panic!(
            "a batch over its bound went ahead: {} notes",
            plan.total_notes
        ),
        Err(error) => error,
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
            let error = refused(replace(&vault, old, &long, regex, dry_run));
            let message = error.to_string();
            assert_eq!(error.code(), "too_large", "{message}");
            for says in [
                "'Inbox/a.md'",
                "65536 bytes",
                "limits.max_note_bytes",
                "nothing was changed",
            ] {
                assert!(message.contains(says), "{says:?} missing from: {message}");
            }
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
        let error = refused(set_property(&vault, value.clone(), dry_run));
        let message = error.to_string();
        assert_eq!(error.code(), "too_large", "{message}");
        for says in [
            "1048576 bytes",
            "`paths` or `filter`",
            "nothing was changed",
        ] {
            assert!(message.contains(says), "{says:?} missing from: {message}");
        }
    }
    assert_eq!(vault.read("Inbox/n00.md"), "# 0\n");
    let small = set_property(&vault, serde_json::Value::String("v".repeat(4_000)), false)
        .expect("a batch under the bound");
    assert_eq!(small.total_notes, 40);
}
