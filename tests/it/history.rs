//! Every write through `ops` is staged in the history before the file changes (issue 49): the
//! versions read back from the state directory's `history.db`, a refused write leaves none, and
//! `[history] enabled = false` records nothing.

use quire::history::{History, Kind, Retention};
use quire::ops::{self, Context};

use super::support::TestVault;

fn write(vault: &TestVault, body: &str, expected: Option<String>) -> Result<String, String> {
    vault
        .ops
        .write_note(
            &Context::owner(),
            ops::WriteNote {
                path: "Plans.md".into(),
                body: body.into(),
                properties: None,
                overwrite: expected.is_some(),
                expected_revision: expected,
            },
        )
        .map(|written| written.revision)
        .map_err(|error| error.code().to_string())
}

fn history_of(vault: &TestVault) -> History {
    History::open(
        &vault.config.state_dir.join("history.db"),
        Retention::default(),
    )
    .expect("the history opens")
}

#[test]
fn each_write_and_edit_is_a_version_and_a_refused_write_is_none() {
    let vault = TestVault::with_notes(&[("Other.md", "x\n")]);
    let first = write(&vault, "first draft\n", None).expect("created");
    let edited = vault
        .ops
        .replace_in_note(
            &Context::owner(),
            ops::ReplaceInNote {
                path: "Plans.md".into(),
                old_text: "first".into(),
                new_text: "second".into(),
                replace_all_occurrences: false,
                expected_revision: Some(first.clone()),
            },
        )
        .expect("edited");
    assert_eq!(
        write(&vault, "stale\n", Some(first.clone())),
        Err("conflict".to_string())
    );
    write(&vault, "third draft\n", Some(edited.revision.clone())).expect("overwritten");

    let history = history_of(&vault);
    let versions = history.versions("Plans.md", None, 10).expect("versions");
    let kinds: Vec<Kind> = versions.iter().map(|version| version.kind).collect();
    assert_eq!(kinds, vec![Kind::Write, Kind::Write, Kind::Create]);
    let text = |revision: &Option<String>| {
        let revision = revision.as_deref().expect("a revision");
        String::from_utf8(history.content(revision).expect("read").expect("kept")).expect("text")
    };
    assert_eq!(text(&versions[0].revision_after), "third draft\n");
    assert_eq!(text(&versions[0].revision_before), "second draft\n");
    assert_eq!(text(&versions[1].revision_after), "second draft\n");
    assert_eq!(text(&versions[2].revision_after), "first draft\n");
    assert_eq!(versions[2].revision_before, None);
    assert_eq!(versions[0].change.identity, "owner");
    assert!(
        history
            .content(&quire::vault::Revision::of(b"stale\n").to_string())
            .expect("read")
            .is_none(),
        "the refused write left its content behind"
    );
}

#[test]
fn a_deleted_note_keeps_what_it_held() {
    let vault = TestVault::with_notes(&[("Plans.md", "keep me\n")]);
    vault
        .ops
        .delete_note(
            &Context::owner(),
            ops::DeleteNote {
                path: "Plans.md".into(),
                expected_revision: None,
                prune_empty_folders: false,
            },
        )
        .expect("deleted");
    let history = history_of(&vault);
    let versions = history.versions("Plans.md", None, 10).expect("versions");
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].kind, Kind::Delete);
    assert_eq!(versions[0].revision_after, None);
    let before = versions[0].revision_before.as_deref().expect("a revision");
    assert_eq!(
        history.content(before).expect("read"),
        Some(b"keep me\n".to_vec())
    );
}

#[test]
fn with_history_off_nothing_is_recorded() {
    let vault = TestVault::builder()
        .config("[history]\nenabled = false\n")
        .open();
    write(&vault, "a note\n", None).expect("created");
    assert!(!vault.config.state_dir.join("history.db").exists());
}

/// Issue 63, F7: what the owner's policy denies, and hidden folders, never enter `history.db`
/// through the watcher's outside versions, not even through a symbolic link that leads there.
#[test]
fn r63_outside_edits_of_denied_and_hidden_files_stay_out_of_the_history() {
    let vault = TestVault::builder()
        .config("[acl]\nalways_deny = [\"Private/\"]")
        .notes(&[
            ("Private/secret.md", "the owner's secret\n"),
            ("Public.md", "visible\n"),
            (".hidden/x.md", "hidden\n"),
        ])
        .open();
    // As `quire serve` does once the vault is open.
    vault.ops.set_policy(vault.config.access.policy.clone());
    std::os::unix::fs::symlink(vault.path("Private"), vault.path("Linked"))
        .expect("a symbolic link to the denied folder");
    let paths: Vec<String> = [
        "Private/secret.md",
        "Public.md",
        ".hidden/x.md",
        "Linked/secret.md",
    ]
    .map(String::from)
    .to_vec();
    vault.ops.record_outside_edits(&paths);
    let history = history_of(&vault);
    let known = |path: &str| history.latest(path).expect("the history reads");
    assert!(
        known("Public.md").is_some(),
        "a visible note's outside version is kept"
    );
    for denied in ["Private/secret.md", ".hidden/x.md", "Linked/secret.md"] {
        assert_eq!(known(denied), None, "{denied} entered the history");
    }
}
