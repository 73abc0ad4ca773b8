//! The index's central invariant, as a property test: after any sequence of creates, edits,
//! renames and deletes, made through `ops` or directly on disk (reported to the index as the
//! watcher reports them), the index holds exactly what a fresh rebuild of the vault holds.

use std::path::Path;

use proptest::prelude::*;
use quire::index::IndexOptions;
use quire::ops::{self, Context, Ops};

use crate::support::TestVault;

#[derive(Debug, Clone)]
enum Action {
    WriteThroughOps { path: String, text: String },
    DeleteThroughOps { path: String },
    WriteOnDisk { path: String, text: String },
    DeleteOnDisk { path: String },
    RenameOnDisk { from: String, to: String },
    RenameFolderOnDisk { from: String, to: String },
}

fn folder() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("A/".to_string()),
        Just("A/B/".to_string()),
        Just("C/".to_string()),
        Just("Café/".to_string()),
        Just("About Me/".to_string()),
    ]
}

fn path() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just("x.md"),
        Just("y.md"),
        Just("Note One.md"),
        Just("café.md"),
        Just("data.txt"),
    ];
    (folder(), name).prop_map(|(folder, name)| format!("{folder}{name}"))
}

fn text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("---\ntags: [Alpha, beta/gamma]\nstatus: Done\nrating: 3\n---\n".to_string()),
        Just("---\ntype: meeting\ncreated: 2025-01-02\naliases: zeta\n---\n".to_string()),
        Just("---\nbroken: [yaml\n---\n".to_string()),
        Just("# Heading one\n".to_string()),
        Just("## Food\n- 2026-01-02 — Likes quince.\n".to_string()),
        Just("## Sub heading\n".to_string()),
        Just("Some words about gardens and tomatoes.\n".to_string()),
        Just("#inline #Alpha text\n".to_string()),
        Just("```\n#not-a-tag in code\n```\n".to_string()),
        Just("See [[x]], ![[data.txt]] and [m](A/y.md#h).\n".to_string()),
        Just("Ünïcödé 日本語 🎉\n".to_string()),
        Just(
            "- [ ] #task water 🔁 every week 📅 2025-06-16\n    - [x] sub ✅ 2025-06-01\n"
                .to_string()
        ),
        Just("* [/] in progress [due:: 2025-02-30]\n".to_string()),
        "[a-z ]{0,20}\n",
        // Larger than one full-text row: stored as parts written in turns (`index::parts`).
        Just("many garden words in a long log line\n".repeat(4_000)),
    ];
    prop::collection::vec(fragment, 0..5).prop_map(|parts| parts.concat())
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (path(), text()).prop_map(|(path, text)| Action::WriteThroughOps { path, text }),
        1 => path().prop_map(|path| Action::DeleteThroughOps { path }),
        3 => (path(), text()).prop_map(|(path, text)| Action::WriteOnDisk { path, text }),
        1 => path().prop_map(|path| Action::DeleteOnDisk { path }),
        2 => (path(), path()).prop_map(|(from, to)| Action::RenameOnDisk { from, to }),
        1 => (folder(), folder()).prop_map(|(from, to)| Action::RenameFolderOnDisk {
            from: from.trim_end_matches('/').to_string(),
            to: to.trim_end_matches('/').to_string(),
        }),
    ]
}

fn apply(ops: &Ops, root: &Path, action: &Action) {
    let ctx = Context::owner();
    let disk = |path: &str| root.join(path);
    // Failures (writing over an existing note without a revision, deleting what is not there,
    // renaming onto a non-empty folder) are part of the sequence; the index must stay right.
    let reported: Vec<String> = match action {
        Action::WriteThroughOps { path, text } => {
            let revision = ops
                .read_note(
                    &ctx,
                    ops::ReadNote {
                        path: path.clone(),
                        mode: ops::ReadMode::PropertiesOnly,
                    },
                )
                .ok()
                .map(|read| read.revision);
            let _ = ops.write_note(
                &ctx,
                ops::WriteNote {
                    path: path.clone(),
                    body: text.clone(),
                    properties: None,
                    overwrite: revision.is_some(),
                    expected_revision: revision,
                },
            );
            Vec::new()
        }
        Action::DeleteThroughOps { path } => {
            let _ = ops.delete_note(
                &ctx,
                ops::DeleteNote {
                    path: path.clone(),
                    expected_revision: None,
                    prune_empty_folders: false,
                },
            );
            Vec::new()
        }
        Action::WriteOnDisk { path, text } => {
            if let Some(parent) = disk(path).parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(disk(path), text);
            vec![path.clone()]
        }
        Action::DeleteOnDisk { path } => {
            let _ = std::fs::remove_file(disk(path));
            vec![path.clone()]
        }
        Action::RenameOnDisk { from, to } => {
            if let Some(parent) = disk(to).parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::rename(disk(from), disk(to));
            vec![from.clone(), to.clone()]
        }
        Action::RenameFolderOnDisk { from, to } => {
            if from.is_empty() || to.is_empty() || to.starts_with(from.as_str()) {
                return;
            }
            if let Some(parent) = disk(to).parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::rename(disk(from), disk(to));
            vec![from.clone(), to.clone()]
        }
    };
    if !reported.is_empty() {
        ops.index().refresh(reported).expect("refresh");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_index_always_equals_a_fresh_rebuild(actions in prop::collection::vec(action(), 1..24)) {
        let vault = TestVault::builder().open();
        for action in &actions {
            apply(&vault.ops, &vault.root, action);
        }
        let live = vault.ops.index().dump().expect("dump");
        let fresh = vault.rebuilt_index().dump().expect("dump");
        prop_assert_eq!(live, fresh);
    }
}

/// `quire index --verify` is what the reliability suite and an operator use to check an index
/// after a crash: it passes on a consistent index and names the facts a damaged one lost.
#[test]
fn index_verify_passes_on_a_consistent_index_and_names_what_a_damaged_one_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).expect("vault");
    std::fs::write(
        vault.join("a.md"),
        "#garden notes\n- [ ] water 📅 2025-06-16\n",
    )
    .expect("a");
    std::fs::write(vault.join("b.md"), "See [[a]].\n").expect("b");
    let db = dir.path().join("index.db");
    let verify = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_quire"))
            .arg("--vault")
            .arg(&vault)
            .arg("--index")
            .arg(&db)
            .args(["index", "--verify"])
            .output()
            .expect("run quire")
    };
    let clean = verify();
    let stdout = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success(), "{stdout}");
    assert!(
        stdout.contains("verified: the index holds exactly"),
        "{stdout}"
    );

    let connection = rusqlite::Connection::open(&db).expect("open");
    connection
        .execute("DELETE FROM tags", [])
        .expect("damage the index");
    drop(connection);
    let damaged = verify();
    let stderr = String::from_utf8_lossy(&damaged.stderr);
    assert!(!damaged.status.success(), "{stderr}");
    assert!(stderr.contains("rebuild only: tag a.md garden"), "{stderr}");
    assert!(
        std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .all(|entry| !entry.file_name().to_string_lossy().contains(".verify-")),
        "the comparison index is removed"
    );
}

/// `index.db` deleted, or overwritten with garbage, while Quire runs: the next query finds the
/// file missing or damaged, the writer rebuilds it from the vault, and the query is answered.
#[test]
fn an_index_deleted_or_overwritten_while_running_is_rebuilt_by_the_next_query() {
    for damage in ["deleted", "overwritten"] {
        let vault = TestVault::with_notes(&[
            ("a.md", "a kestrel note, see [[b]]\n"),
            ("b.md", "an otter note\n"),
        ]);
        // No query has run yet, so no pooled connection still holds the old file open.
        let db = vault.config.index.clone();
        for suffix in ["-wal", "-shm"] {
            let mut path = db.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
        if damage == "deleted" {
            std::fs::remove_file(&db).expect("delete index.db");
        } else {
            std::fs::write(&db, vec![0x5a; 64 * 1024]).expect("overwrite index.db");
        }
        let found = vault
            .ops
            .search(
                &Context::owner(),
                ops::SearchNotes {
                    query: "kestrel".into(),
                    ..ops::SearchNotes::default()
                },
            )
            .unwrap_or_else(|error| panic!("index {damage}: search failed: {error}"));
        let paths: Vec<String> = found.results.into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["a.md"], "index {damage}");
        assert!(
            vault.ops.index().dump().expect("dump") == vault.rebuilt_index().dump().expect("dump"),
            "index {damage}: the rebuilt index holds exactly what a fresh rebuild holds"
        );
    }
}

/// A first build of 1,000 notes or more fills its tables without their secondary indexes and
/// makes them at the end: it must hold exactly what the same notes indexed a few at a time hold,
/// and end with every index the schema has.
#[test]
fn a_bulk_first_build_equals_the_same_notes_indexed_a_few_at_a_time() {
    let note = |at: usize| -> (String, String) {
        let folder = ["", "A/", "A/B/", "Café/"][at % 4];
        let text = format!(
            "---\ntags: [t{}, shared]\nrating: {}\nstatus: s{}\nalso: [x{at}, X{at}, x{at}, y]\n---\n\
             # Note {at}\n\
             Words about gardens {at} and #inline{} tags, #Shared and #T1 again.\n\
             - [ ] task {at} 📅 2025-06-{:02} ⏫\n- [x] done {at} ✅ 2025-05-01\n\
             See [[note {}]] and ![[missing {at}.png]].\n",
            at % 7,
            at % 5,
            at % 3,
            at % 11,
            at % 28 + 1,
            (at * 7) % 1200,
        );
        // Two notes larger than one full-text row, stored as parts (`index::parts`).
        let text = if at % 600 == 5 {
            let words: String = (0..25_000).map(|word| format!("w{word}x{at} ")).collect();
            format!("{text}\n{words}\n")
        } else {
            text
        };
        (format!("{folder}note {at}.md"), text)
    };
    let first: Vec<(String, String)> = (0..300).map(note).collect();
    let vault = TestVault::builder().notes(&first).open();
    let rest: Vec<(String, String)> = (300..1200).map(note).collect();
    for (path, text) in &rest {
        let file = vault.path(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("folder");
        std::fs::write(file, text).expect("write");
    }
    vault
        .ops
        .index()
        .refresh(rest.iter().map(|(path, _)| path.clone()).collect())
        .expect("refresh");
    let live = vault.ops.index().dump().expect("dump");
    // 1,200 notes the new index has never seen: the bulk path.
    let rebuilt = vault.rebuilt_index();
    let bulk = rebuilt.dump().expect("dump");
    // Its full text was made beside the writer, in a scratch file that is gone.
    let scratch = vault.dir.path().join("rebuilt.db.full-text-build");
    assert!(!scratch.exists(), "{} is left behind", scratch.display());
    assert!(live.len() > 10_000, "{} facts", live.len());
    assert_eq!(live, bulk);
    let indexes = |db: &Path| -> Vec<String> {
        let connection = rusqlite::Connection::open(db).expect("open");
        let mut statement = connection
            .prepare(
                "SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
            )
            .expect("prepare");
        statement
            .query_map([], |row| row.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("names")
    };
    let live_indexes = indexes(&vault.config.index);
    assert!(
        live_indexes
            .iter()
            .any(|sql| sql.starts_with("tasks_by_due"))
    );
    assert_eq!(indexes(&vault.dir.path().join("rebuilt.db")), live_indexes);
    // Ranked alike: the full text's document sizes and totals came along.
    let ranks = |db: &Path| -> Vec<(String, String)> {
        let connection = rusqlite::Connection::open(db).expect("open");
        let mut statement = connection
            .prepare(
                "SELECT n.path, printf('%.9f', bm25(notes_fts)) FROM notes_fts
                 JOIN notes n ON n.id = (notes_fts.rowid & ((1 << 40) - 1))
                 WHERE notes_fts MATCH 'gardens OR w17x5' ORDER BY n.path, 2",
            )
            .expect("prepare");
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("ranks")
    };
    let live_ranks = ranks(&vault.config.index);
    assert!(live_ranks.len() > 1_000, "{} ranked", live_ranks.len());
    assert_eq!(ranks(&vault.dir.path().join("rebuilt.db")), live_ranks);
    // And its rows leave as other rows do, a large note's parts with it.
    let gone = ["A/note 5.md".to_string(), "A/note 9.md".to_string()];
    for path in &gone {
        std::fs::remove_file(vault.path(path)).expect("remove");
    }
    vault.ops.index().refresh(gone.to_vec()).expect("refresh");
    rebuilt.refresh(gone.to_vec()).expect("refresh");
    let (live, bulk) = (vault.ops.index().dump(), rebuilt.dump());
    assert!(
        !live
            .as_ref()
            .expect("dump")
            .iter()
            .any(|fact| fact.contains("w17x5"))
    );
    assert_eq!(live.expect("dump"), bulk.expect("dump"));
}

/// Where semantic search is not set up the index keeps no embedding chunks and nothing else
/// changes; once it is set up, the index is rebuilt with them, exactly as a fresh build.
#[test]
fn an_index_kept_without_chunks_differs_only_in_chunks_and_gains_them_with_semantic_search() {
    let notes: Vec<(String, String)> = (0..40)
        .map(|at| {
            (
                format!("n{at}.md"),
                format!("---\ntags: [t{at}]\n---\n# Part {at}\nWords {at} about [[n{}]] #x.\n\n## Deeper\n- [ ] task {at} 📅 2025-06-01\n", (at + 1) % 40),
            )
        })
        .collect();
    let vault = TestVault::with_notes(&notes);
    let with_chunks = vault.ops.index().dump().expect("dump");
    let TestVault {
        dir: _dir,
        config,
        ops,
        ..
    } = vault;
    drop(ops);
    std::fs::remove_file(&config.index).expect("remove the index");
    let without = IndexOptions {
        without_chunks: true,
        ..IndexOptions::default()
    };
    let ops = crate::support::reopen(&config, without);
    // A note written afterwards gets no chunks either.
    let added = config.vault.join("added.md");
    std::fs::write(&added, "# Added\nMore words.\n").expect("write");
    ops.index()
        .refresh(vec!["added.md".to_owned()])
        .expect("refresh");
    let facts = ops.index().dump().expect("dump");
    assert!(
        !facts.iter().any(|fact| fact.starts_with("chunk ")),
        "no chunks without semantic search"
    );
    let chunkless = |facts: &[String]| -> Vec<String> {
        facts
            .iter()
            // The added note is in the root folder's count too.
            .filter(|fact| {
                !fact.starts_with("chunk ")
                    && !fact.contains("added.md")
                    && !fact.starts_with("folder_notes ")
            })
            .cloned()
            .collect()
    };
    assert_eq!(chunkless(&facts), chunkless(&with_chunks));
    drop(ops);
    // Semantic search set up: rebuilt with every chunk, the added note's included.
    let ops = crate::support::reopen(&config, IndexOptions::default());
    let facts = ops.index().dump().expect("dump");
    assert!(facts.iter().any(|fact| fact.starts_with("chunk added.md ")));
    assert_eq!(
        chunkless(&facts),
        chunkless(&with_chunks),
        "the rebuild changes nothing else"
    );
    assert_eq!(
        facts
            .iter()
            .filter(|fact| fact.starts_with("chunk "))
            .count(),
        with_chunks
            .iter()
            .filter(|fact| fact.starts_with("chunk "))
            .count()
            + 1
    );
}

/// A note without a `created` property is as old as its file. A save that replaces it with the
/// same bytes (a new file, as an atomic save makes) in a later second gives it that file's time,
/// exactly as a fresh rebuild reads it; a CI run found the live index keeping the old one.
#[test]
fn a_note_replaced_by_the_same_bytes_takes_the_new_files_creation_time() {
    let vault = TestVault::with_notes(&[("same.md".to_owned(), "Unchanged words.\n".to_owned())]);
    // Into the next whole second, so the new file is born in another one.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock");
    std::thread::sleep(std::time::Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()) + 50_000_000,
    ));
    let note = vault.root.join("same.md");
    let replacement = vault.root.join(".same.tmp");
    std::fs::write(&replacement, "Unchanged words.\n").expect("write");
    std::fs::rename(&replacement, &note).expect("replace");
    vault
        .ops
        .index()
        .refresh(vec!["same.md".to_owned()])
        .expect("refresh");
    let live = vault.ops.index().dump().expect("dump");
    let fresh = vault.rebuilt_index().dump().expect("dump");
    assert_eq!(live, fresh);
}
