//! The memory layer through `ops`, on real files: entries added newest first and read back, and
//! each guard that keeps the layer from eating real notes.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{Context, DeleteMemory, GetMemory, UpdateMemory};

use crate::support::TestVault;

fn setup() -> TestVault {
    TestVault::builder()
        .note(
            "About Me/Opinions.md",
            "> [!info] Scope of this file\n> What the user thinks.\n\n## Food\n- 2026-01-02 — Likes quince.\n",
        )
        .open()
}

fn update(file: &str, section: &str, entry: &str, date: &str) -> UpdateMemory {
    UpdateMemory {
        file: file.into(),
        section: section.into(),
        entry: entry.into(),
        date: Some(date.into()),
    }
}

#[test]
fn entries_are_added_newest_first_and_read_back() {
    let vault = setup();
    let (root, ops) = (&vault.root, &vault.ops);
    let ctx = Context::owner();
    let written = ops
        .update_memory(
            &ctx,
            update("Opinions", "Food", "Dislikes okra.", "2026-11-30"),
        )
        .expect("update");
    assert!(written.changed && !written.created);
    // A retried call (after a client timeout) writes nothing.
    let again = ops
        .update_memory(
            &ctx,
            update("Opinions", "Food", "Dislikes okra.", "2026-11-30"),
        )
        .expect("update");
    assert!(!again.changed);
    assert_eq!(again.revision, written.revision);
    let text = std::fs::read_to_string(root.join("About Me/Opinions.md")).expect("read");
    assert_eq!(
        text,
        "> [!info] Scope of this file\n> What the user thinks.\n\n## Food\n- 2026-11-30 — Dislikes okra.\n- 2026-01-02 — Likes quince.\n"
    );
    // A new file and section are created on demand.
    let created = ops
        .update_memory(&ctx, update("Routines", "Mornings", "Runs.", "2026-11-29"))
        .expect("update");
    assert!(created.created);
    let files = ops.list_memory_files(&ctx).expect("list");
    let names: Vec<_> = files.iter().map(|file| file.file.as_str()).collect();
    assert_eq!(names, ["Opinions", "Routines"]);
    assert_eq!(files[0].scope.as_deref(), Some("What the user thinks."));
    assert_eq!(files[0].sections[0].entries, 2);
    let recent = ops
        .get_memory(
            &ctx,
            GetMemory {
                on_or_after: Some("2026-11-01".into()),
                ..GetMemory::default()
            },
        )
        .expect("get");
    let texts: Vec<_> = recent.iter().map(|entry| entry.text.as_str()).collect();
    assert_eq!(texts, ["Dislikes okra.", "Runs."]);
}

#[test]
fn names_cannot_leave_the_folder_or_hide() {
    let vault = setup();
    let (dir, root, ops) = (vault.dir.path(), &vault.root, &vault.ops);
    let ctx = Context::owner();
    for name in ["../Escape", "Sub/File", ".hidden", "", "a\\b"] {
        let refused = ops
            .update_memory(&ctx, update(name, "S", "x", "2026-01-01"))
            .expect_err(name);
        assert_eq!(refused.code(), "path_forbidden", "{name}");
    }
    let written: Vec<_> = walk(dir);
    assert_eq!(written, [root.join("About Me/Opinions.md")]);
}

fn walk(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.expect("entry");
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "md") {
            out.push(entry.path().to_path_buf());
        }
    }
    out
}

#[test]
fn line_breaks_and_bad_dates_are_refused() {
    let vault = setup();
    let ops = &vault.ops;
    let ctx = Context::owner();
    for request in [
        update("Opinions", "Food\n## Evil", "x", "2026-01-01"),
        update(
            "Opinions",
            "Food",
            "x\n- 2026-01-01 — injected",
            "2026-01-01",
        ),
        update("Opinions", "Food", "x", "2026-02-30"),
        update("Opinions", "Food", "x", "yesterday\n"),
        update("Opinions", "Food", "x", "2026-01-01\r"),
    ] {
        let refused = ops
            .update_memory(&ctx, request.clone())
            .expect_err("refused");
        assert_eq!(refused.code(), "invalid_argument", "{request:?}");
    }
}

#[test]
fn ambiguous_deletes_and_big_shrinks_are_refused() {
    let vault = setup();
    let (root, ops) = (&vault.root, &vault.ops);
    let ctx = Context::owner();
    std::fs::write(
        root.join("About Me/Twice.md"),
        "## A\n- 2026-01-01 — same\n- 2026-01-01: same\n",
    )
    .expect("write");
    let delete = |file: &str, date: &str, entry: &str| DeleteMemory {
        file: file.into(),
        section: "A".into(),
        date: date.into(),
        entry: entry.into(),
    };
    let ambiguous = ops
        .delete_memory(&ctx, delete("Twice", "2026-01-01", "same"))
        .expect_err("ambiguous");
    assert!(ambiguous.to_string().contains("ambiguous"), "{ambiguous}");

    // One entry holding most of a large file: deleting it would remove more than half.
    let big = format!(
        "## A\n- 2026-01-01 — {}\n- 2026-01-02 — small\n",
        "x".repeat(2000)
    );
    std::fs::write(root.join("About Me/Big.md"), &big).expect("write");
    let refused = ops
        .delete_memory(&ctx, delete("Big", "2026-01-01", &"x".repeat(2000)))
        .expect_err("shrink");
    assert!(refused.to_string().contains("more than half"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(root.join("About Me/Big.md")).expect("read"),
        big
    );
    // A small entry of the same file goes.
    ops.delete_memory(&ctx, delete("Big", "2026-01-02", "small"))
        .expect("delete");
}

#[test]
fn concurrent_appends_to_one_file_all_land() {
    let vault = setup();
    let root = vault.root.clone();
    let ops = Arc::new(vault.ops);
    let threads: Vec<_> = (0..16)
        .map(|n| {
            let ops = Arc::clone(&ops);
            std::thread::spawn(move || {
                ops.update_memory(
                    &Context::owner(),
                    update("Opinions", "Food", &format!("fact {n}"), "2026-11-30"),
                )
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("join").expect("update");
    }
    let text = std::fs::read_to_string(root.join("About Me/Opinions.md")).expect("read");
    for n in 0..16 {
        assert_eq!(text.matches(&format!("— fact {n}\n")).count(), 1, "{text}");
    }
}

#[test]
fn identities_obey_their_rules() {
    let vault = setup();
    let ops = &vault.ops;
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: vec![Rule::parse("/").expect("rule")],
            write: Vec::new(),
            deny: vec![Rule::parse("About Me/Opinions.md").expect("rule")],
        },
    );
    ops.set_policy(Policy::new(Vec::new(), identities));
    let reader = Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_update_memory",
    );
    assert!(ops.list_memory_files(&reader).expect("list").is_empty());
    let denied = ops
        .update_memory(&reader, update("Other", "S", "x", "2026-01-01"))
        .expect_err("no write rule");
    assert_eq!(denied.code(), "path_forbidden");
    let hidden = ops
        .get_memory(
            &reader,
            GetMemory {
                file: Some("Opinions".into()),
                ..GetMemory::default()
            },
        )
        .expect_err("denied");
    assert_eq!(hidden.code(), "not_found");
}

#[test]
fn recall_finds_entries_by_their_words_section_and_file_oldest_first() {
    let vault = setup();
    let (root, ops) = (&vault.root, &vault.ops);
    let ctx = Context::owner();
    for (file, section, entry, date) in [
        (
            "Opinions",
            "Food",
            "Prefers green tea to coffee.",
            "2026-03-01",
        ),
        (
            "Opinions",
            "Food",
            "Drinks coffee only on Sundays.",
            "2026-02-01",
        ),
        (
            "Routines",
            "Mornings",
            "Walks the dog at seven.",
            "2026-04-01",
        ),
        (
            "Agents",
            "Communication",
            "Wants short answers without preamble.",
            "2026-05-01",
        ),
    ] {
        ops.update_memory(&ctx, update(file, section, entry, date))
            .expect("update");
    }
    let recall = |query: &str| {
        ops.memory_recall(
            &ctx,
            quire::ops::MemoryRecall {
                query: query.into(),
                file: None,
                limit: None,
            },
        )
        .expect("recall")
    };
    let coffee = recall("coffee");
    let texts: Vec<_> = coffee.entries.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Drinks coffee only on Sundays.",
            "Prefers green tea to coffee."
        ],
        "oldest first"
    );
    assert!(!coffee.any_word);
    // The section and file names count: nothing in the entry says "communication".
    let style = recall("agents communication");
    assert_eq!(style.entries.len(), 1);
    assert_eq!(style.entries[0].section, "Communication");
    // No entry has every word: any word will do.
    let fallback = recall("dog tea zebra");
    assert!(fallback.any_word);
    assert_eq!(fallback.entries.len(), 2);
    // An entry edited on disk (as in Obsidian) is recalled as it now reads.
    std::fs::write(
        root.join("About Me/Routines.md"),
        "## Mornings\n- 2026-04-01 — Walks the cat at seven.\n",
    )
    .expect("write");
    ops.index()
        .refresh(vec!["About Me/Routines.md".into()])
        .expect("refresh");
    assert!(
        recall("dog")
            .entries
            .iter()
            .all(|e| !e.text.contains("dog"))
    );
    assert_eq!(recall("cat").entries.len(), 1);
}

#[test]
fn the_bootstrap_waits_for_the_first_sync_and_never_touches_an_existing_folder() {
    let vault = TestVault::builder().open();
    let (root, ops) = (&vault.root, &vault.ops);
    let marker = vault.dir.path().join("first-sync-done");
    // A vault whose first sync has not completed gets nothing: the user's files may be arriving.
    assert_eq!(
        ops.bootstrap_memory(false, Some(&marker))
            .expect("bootstrap"),
        quire::ops::Bootstrap::WaitingForFirstSync
    );
    assert_eq!(
        ops.bootstrap_memory(true, None).expect("bootstrap"),
        quire::ops::Bootstrap::Skipped
    );
    assert!(!root.join("About Me").exists());
    std::fs::write(&marker, "").expect("marker");
    let quire::ops::Bootstrap::Created(created) = ops
        .bootstrap_memory(false, Some(&marker))
        .expect("bootstrap")
    else {
        panic!("expected the starter files");
    };
    assert_eq!(created.len(), 5);
    let files = ops.list_memory_files(&Context::owner()).expect("list");
    for file in &files {
        assert!(
            file.scope.as_ref().is_some_and(|scope| scope.len() > 40),
            "{file:?}"
        );
        let bytes = std::fs::metadata(root.join(&file.path))
            .expect("stat")
            .len();
        assert!(
            bytes <= 1250,
            "a starter must stay under the shrink guard's floor"
        );
    }
    let routines = files
        .iter()
        .find(|file| file.file == "Routines")
        .expect("routines");
    assert_eq!(routines.entry_policy.as_str(), "living");

    // The folder exists now (with the user's edits): a restart leaves it alone.
    std::fs::write(root.join("About Me/Me.md"), "mine\n").expect("write");
    std::fs::remove_file(root.join("About Me/Agents.md")).expect("remove");
    assert_eq!(
        ops.bootstrap_memory(false, Some(&marker))
            .expect("bootstrap"),
        quire::ops::Bootstrap::Exists
    );
    assert_eq!(
        std::fs::read_to_string(root.join("About Me/Me.md")).expect("read"),
        "mine\n"
    );
    assert!(!root.join("About Me/Agents.md").exists());
}

fn delete_note(path: &str) -> quire::ops::DeleteNote {
    quire::ops::DeleteNote {
        path: path.into(),
        expected_revision: None,
        prune_empty_folders: false,
    }
}

fn move_note(from: &str, to: &str) -> quire::ops::MoveNote {
    quire::ops::MoveNote {
        old_path: from.into(),
        new_path: to.into(),
        dry_run: false,
        prune_empty_folders: false,
    }
}

/// A vault with memory files, daily notes in `Journal/` (from Obsidian's settings) and a note
/// elsewhere.
fn protected_setup(config: &str) -> TestVault {
    TestVault::builder()
        .note(".obsidian/daily-notes.json", r#"{"folder": "Journal/"}"#)
        .note(
            "About Me/Me.md",
            "## Basics\n- 2026-01-01 — Lives in Lyon.\n",
        )
        .note("Journal/2026-11-30.md", "- 09:00 woke up\n")
        .note("Inbox/Idea.md", "An idea.\n")
        .config(config)
        .open()
}

#[test]
fn notes_in_protected_folders_cannot_be_deleted_or_moved_out_or_in() {
    let vault = protected_setup("");
    let ops = &vault.ops;
    let ctx = Context::owner();
    // Any spelling of the folder's case is the same folder on a case-insensitive file system.
    for path in ["About Me/Me.md", "about me/Me.md", "Journal/2026-11-30.md"] {
        let refused = ops.delete_note(&ctx, delete_note(path)).expect_err(path);
        assert_eq!(refused.code(), "path_forbidden", "{path}");
        assert!(
            refused.to_string().contains("[vault] protected_folders"),
            "{refused}"
        );
    }
    let memory = ops
        .delete_note(&ctx, delete_note("About Me/Me.md"))
        .expect_err("protected");
    assert!(
        memory.to_string().contains("vault_delete_memory"),
        "{memory}"
    );
    for (from, to) in [
        ("About Me/Me.md", "Inbox/Me.md"),
        ("About Me/Me.md", "About Me/Myself.md"),
        ("Inbox/Idea.md", "About Me/Idea.md"),
        ("Inbox/Idea.md", "journal/Idea.md"),
        ("Journal/2026-11-30.md", "Archive/2026-11-30.md"),
    ] {
        let refused = ops
            .move_note(&ctx, move_note(from, to))
            .expect_err(&format!("{from} -> {to}"));
        assert_eq!(refused.code(), "path_forbidden", "{from} -> {to}");
    }
    assert!(vault.path("About Me/Me.md").exists());
    assert!(vault.path("Journal/2026-11-30.md").exists());
    assert!(vault.path("Inbox/Idea.md").exists());
    // A folder whose name merely starts like a protected one is not protected.
    crate::support::write(&vault.root, "About Meetings/Notes.md", "x\n");
    ops.delete_note(&ctx, delete_note("About Meetings/Notes.md"))
        .expect("not protected");
    // Elsewhere deletes and moves work, and the memory and daily-note tools keep working inside.
    ops.move_note(&ctx, move_note("Inbox/Idea.md", "Inbox/Plan.md"))
        .expect("move");
    ops.update_memory(
        &ctx,
        update("Me", "Basics", "Works as a nurse.", "2026-11-30"),
    )
    .expect("memory update");
    ops.delete_memory(
        &ctx,
        DeleteMemory {
            file: "Me".into(),
            section: "Basics".into(),
            date: "2026-01-01".into(),
            entry: "Lives in Lyon.".into(),
        },
    )
    .expect("memory delete");
    ops.append_daily_note(
        &ctx,
        quire::ops::AppendDailyNote {
            text: "lunch".into(),
            heading: None,
            date: Some("2026-11-30".into()),
            period: quire::ops::Period::Daily,
            expected_revision: None,
        },
    )
    .expect("daily append");
    ops.delete_note(&ctx, delete_note("Inbox/Plan.md"))
        .expect("delete");
}

#[test]
fn the_protected_folders_follow_obsidian_and_the_config() {
    // The daily-notes folder is read on every call: moved to the root, it protects nothing.
    let vault = protected_setup("");
    let ctx = Context::owner();
    std::fs::write(
        vault.path(".obsidian/daily-notes.json"),
        r#"{"folder": ""}"#,
    )
    .expect("write");
    vault
        .ops
        .delete_note(&ctx, delete_note("Journal/2026-11-30.md"))
        .expect("no longer protected");
    // A settings file that cannot be parsed leaves the folder to protect unknown: refuse.
    std::fs::write(vault.path(".obsidian/daily-notes.json"), "{oops").expect("write");
    let unknown = vault
        .ops
        .delete_note(&ctx, delete_note("Inbox/Idea.md"))
        .expect_err("unknown daily folder");
    assert_eq!(unknown.code(), "path_forbidden");
    assert!(
        unknown.to_string().contains("daily-notes.json"),
        "{unknown}"
    );

    // `[vault] protected_folders` replaces the default set: Obsidian's file is not read.
    let vault = protected_setup("[vault]\nprotected_folders = [\"Inbox/\"]\n");
    std::fs::write(vault.path(".obsidian/daily-notes.json"), "{oops").expect("write");
    let refused = vault
        .ops
        .delete_note(&ctx, delete_note("inbox/Idea.md"))
        .expect_err("configured");
    assert!(
        refused
            .to_string()
            .contains("listed in [vault] protected_folders"),
        "{refused}"
    );
    vault
        .ops
        .delete_note(&ctx, delete_note("About Me/Me.md"))
        .expect("no longer protected");
    vault
        .ops
        .delete_note(&ctx, delete_note("Journal/2026-11-30.md"))
        .expect("no longer protected");

    // `[daily_notes] folder` wins over Obsidian's; with the memory layer off, its folder is a
    // plain folder again.
    let vault = protected_setup("[daily_notes]\nfolder = \"Inbox\"\n[memory]\nenabled = false\n");
    assert_eq!(
        vault
            .ops
            .delete_note(&ctx, delete_note("Inbox/Idea.md"))
            .expect_err("daily")
            .code(),
        "path_forbidden"
    );
    vault
        .ops
        .delete_note(&ctx, delete_note("Journal/2026-11-30.md"))
        .expect("Obsidian's folder is overridden");
    vault
        .ops
        .delete_note(&ctx, delete_note("About Me/Me.md"))
        .expect("the layer is off");
}

#[test]
fn memory_files_are_never_orphans() {
    let vault = protected_setup("");
    let orphans = vault
        .ops
        .find_orphans(
            &Context::owner(),
            quire::ops::FindOrphans {
                exclude_folders: Vec::new(),
                limit: None,
                cursor: None,
            },
        )
        .expect("orphans");
    let paths: Vec<_> = orphans.notes.iter().map(|n| n.path.as_str()).collect();
    assert_eq!(paths, ["Inbox/Idea.md"]);
}
