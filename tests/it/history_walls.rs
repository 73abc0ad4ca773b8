//! The history as a restricted identity may see it (issue 63): a version is judged by the place
//! its content really was, and what the history answers about notes the caller may not read
//! does not depend on whether they exist or changed.

use std::collections::BTreeMap;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{self, Context};

use super::support::TestVault;

/// An identity that may read and change `Inbox/` only.
fn inbox_only(vault: &TestVault) -> Context {
    let mut identities = BTreeMap::new();
    let inbox = || vec![Rule::parse("Inbox/").expect("rule")];
    identities.insert(
        "inbox".to_string(),
        IdentityRules {
            read: inbox(),
            write: inbox(),
            deny: Vec::new(),
        },
    );
    vault.ops.set_policy(Policy::new(Vec::new(), identities));
    Context::new(
        Principal::Identity {
            name: "inbox".into(),
            client_id: None,
        },
        "vault_note_history",
    )
}

fn write(vault: &TestVault, ctx: &Context, path: &str, body: &str) -> String {
    vault
        .ops
        .write_note(
            ctx,
            ops::WriteNote {
                path: path.into(),
                body: body.into(),
                properties: None,
                overwrite: true,
                expected_revision: None,
            },
        )
        .expect("written");
    ctx.change_id().expect("the write made a change").to_owned()
}

/// Sets `status: done` on `paths` as the owner, as one batch; the batch's change id.
fn set_status_done(vault: &TestVault, paths: Vec<String>) -> String {
    let owner = Context::owner();
    vault
        .ops
        .set_property(
            &owner,
            ops::SetProperty {
                name: "status".into(),
                value: serde_json::json!("done"),
                target: ops::Target {
                    paths: Some(paths),
                    filter: None,
                },
                dry_run: false,
            },
        )
        .expect("the batch is made");
    owner.change_id().expect("a change").to_owned()
}

/// Issue 63, F6: content written through `Inbox/lnk → ../Private` was in `Private/`; once the
/// link is gone, its versions must not show to an identity that may read `Inbox/` only.
#[test]
fn r63_a_version_written_through_a_symlinked_folder_is_judged_where_it_was() {
    let vault = TestVault::with_notes(&[("Inbox/a.md", "a\n"), ("Private/old.md", "old\n")]);
    std::os::unix::fs::symlink("../Private", vault.path("Inbox/lnk"))
        .expect("a link to a folder inside the vault");
    let owner = Context::owner();
    let change = write(&vault, &owner, "Inbox/lnk/secret.md", "the secret\n");
    assert_eq!(vault.read("Private/secret.md"), "the secret\n");
    std::fs::remove_file(vault.path("Inbox/lnk")).expect("the link removed");

    let inbox = inbox_only(&vault);
    let listed = vault
        .ops
        .note_history(
            &inbox,
            ops::NoteHistory {
                path: "Inbox/lnk/secret.md".into(),
                ..Default::default()
            },
        )
        .expect("a path the identity may read answers");
    assert!(
        listed.versions.is_empty(),
        "a version written into Private/ shows: {:?}",
        listed.versions
    );
    let owner_versions = vault
        .ops
        .note_history(
            &owner,
            ops::NoteHistory {
                path: "Inbox/lnk/secret.md".into(),
                ..Default::default()
            },
        )
        .expect("the owner reads the history");
    let version_id = owner_versions.versions[0].version_id;
    let read = vault.ops.read_version(
        &inbox,
        ops::ReadVersion {
            path: "Inbox/lnk/secret.md".into(),
            version_id,
            diff_against: None,
        },
    );
    assert_eq!(
        read.map(|read| read.content).map_err(|e| e.code()),
        Err("not_found")
    );
    let changes = vault
        .ops
        .list_changes(&inbox, ops::ListChanges::default())
        .expect("changes list");
    assert!(
        changes.changes.iter().all(|c| c.change_id != change),
        "the change into Private/ is listed: {:?}",
        changes.changes
    );
}

fn undo_refusal(vault: &TestVault, ctx: &Context, change: &str) -> (&'static str, String) {
    let error = vault
        .ops
        .undo(
            ctx,
            ops::UndoChange {
                change_id: change.into(),
                dry_run: true,
            },
        )
        .expect_err("the undo is refused");
    (error.code(), error.to_string().replace(change, "CHANGE"))
}

/// Issue 63, F11: an undo of a change that touched a note the caller may not read, or of an
/// outside edit of one, answers exactly as an unknown change id does.
#[test]
fn r63_an_undo_touching_a_hidden_note_answers_as_an_unknown_change() {
    let vault = TestVault::with_notes(&[("Inbox/a.md", "a\n"), ("Private/b.md", "b\n")]);
    let batch = set_status_done(&vault, vec!["Inbox/a.md".into(), "Private/b.md".into()]);
    let owner = Context::owner();
    std::fs::write(vault.path("Private/b.md"), "edited outside\n").expect("an outside edit");
    vault
        .ops
        .record_outside_edits(&["Private/b.md".to_string()]);
    let outside = vault
        .ops
        .list_changes(&owner, ops::ListChanges::default())
        .expect("changes")
        .changes
        .into_iter()
        .find(|change| change.kind == "external")
        .expect("the outside edit is recorded")
        .change_id;

    let inbox = inbox_only(&vault);
    let unknown = undo_refusal(&vault, &inbox, "ch_00000000000000000000");
    assert_eq!(unknown.0, "not_found");
    assert_eq!(undo_refusal(&vault, &inbox, &batch), unknown);
    assert_eq!(undo_refusal(&vault, &inbox, &outside), unknown);
}

/// An undo refused as a conflict names the first notes changed since and counts the rest, so a
/// batch of thousands of notes does not answer with a message of hundreds of KB.
#[test]
fn r63_an_undo_conflict_over_many_notes_names_a_few_and_counts_the_rest() {
    let notes: Vec<(String, String)> = (0..30)
        .map(|at| (format!("Bulk/n{at:02}.md"), format!("note {at}\n")))
        .collect();
    let vault = TestVault::with_notes(&notes);
    let batch = set_status_done(&vault, notes.iter().map(|(path, _)| path.clone()).collect());
    let owner = Context::owner();
    for (path, _) in &notes {
        std::fs::write(vault.path(path), "changed since\n").expect("changed");
    }
    let (code, message) = undo_refusal(&vault, &owner, &batch);
    assert_eq!(code, "conflict");
    let named = notes
        .iter()
        .filter(|(path, _)| message.contains(&format!("'{path}'")))
        .count();
    assert_eq!(named, 10, "{message}");
    assert!(message.contains("and 20 more"), "{message}");
    assert!(message.len() < 4096, "{} bytes", message.len());
}

/// Issue 63, F11: a change listing's cursor named the history's global change counter, so a
/// restricted caller paging one change at a time counted the changes it may not see. It now
/// names the last change of the page, which the caller saw.
#[test]
fn r63_a_change_cursor_names_a_change_the_caller_saw_not_a_counter() {
    let vault = TestVault::with_notes(&[("Inbox/a.md", "a\n"), ("Private/b.md", "b\n")]);
    let owner = Context::owner();
    for round in 0..3 {
        write(&vault, &owner, &format!("Private/h{round}.md"), "hidden\n");
    }
    let inbox = inbox_only(&vault);
    write(&vault, &inbox, "Inbox/new.md", "seen\n");
    let page = vault
        .ops
        .list_changes(
            &inbox,
            ops::ListChanges {
                limit: Some(1),
                ..Default::default()
            },
        )
        .expect("changes");
    let cursor = page.next_cursor.expect("a next page may follow");
    let bytes: Vec<u8> = (0..cursor.len())
        .step_by(2)
        .filter_map(|at| u8::from_str_radix(cursor.get(at..at + 2)?, 16).ok())
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        format!("after:{}", page.changes[0].change_id)
    );
    let rest = vault
        .ops
        .list_changes(
            &inbox,
            ops::ListChanges {
                cursor: Some(cursor),
                ..Default::default()
            },
        )
        .expect("the next page");
    assert!(rest.changes.is_empty(), "{:?}", rest.changes);
}
