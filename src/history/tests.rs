//! The history store over a real SQLite file: what a writer stages, finishes, abandons or leaves
//! pending, read back as a user of the history tools would.

use super::*;
use crate::vault::Revision;

fn open(dir: &tempfile::TempDir) -> History {
    History::open(&dir.path().join("history.db"), Retention::default()).expect("history opens")
}

fn write<'a>(path: &'a str, before: Option<&'a [u8]>, after: &'a [u8]) -> Draft<'a> {
    Draft {
        path,
        previous_path: None,
        kind: if before.is_some() {
            Kind::Write
        } else {
            Kind::Create
        },
        before,
        after: Some(after),
    }
}

fn meta(kind: Kind) -> Meta<'static> {
    Meta {
        identity: "owner",
        tool: "vault_write_note",
        kind,
        undoes: None,
    }
}

fn record(history: &History, drafts: &[Draft<'_>]) -> String {
    let change = history
        .stage(&meta(drafts[0].kind), drafts)
        .expect("staged");
    history.finish(&change).expect("finished");
    change
}

#[test]
fn every_version_reads_back_newest_first_with_its_content() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let first = record(&history, &[write("a.md", None, b"one\n")]);
    let second = record(&history, &[write("a.md", Some(b"one\n"), b"two\n")]);
    let versions = history.versions("a.md", None, 10).expect("versions");
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0].change.id, second);
    assert_eq!(versions[1].change.id, first);
    assert_eq!(versions[1].kind, Kind::Create);
    let after = versions[0].revision_after.as_deref().expect("a revision");
    assert_eq!(
        history.content(after).expect("read"),
        Some(b"two\n".to_vec())
    );
    assert_eq!(versions[0].bytes_before, Some(4));
    let page = history
        .versions("a.md", Some(versions[0].version_id), 10)
        .expect("next page");
    assert_eq!(page, versions[1..].to_vec());
}

#[test]
fn the_same_content_is_stored_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let text = "a line that repeats\n".repeat(500);
    record(&history, &[write("a.md", None, text.as_bytes())]);
    let once = history.stored_bytes().expect("size");
    assert!(once > 0 && once < text.len() as u64, "compressed: {once}");
    record(&history, &[write("b.md", None, text.as_bytes())]);
    assert_eq!(history.stored_bytes().expect("size"), once);
}

#[test]
fn a_moved_note_keeps_its_history_from_before_the_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    record(&history, &[write("Old.md", None, b"draft\n")]);
    record(&history, &[write("Other.md", None, b"unrelated\n")]);
    let moved = history
        .stage(
            &Meta {
                identity: "owner",
                tool: "vault_move_note",
                kind: Kind::Move,
                undoes: None,
            },
            &[Draft {
                path: "New.md",
                previous_path: Some("Old.md"),
                kind: Kind::Move,
                before: Some(b"draft\n"),
                after: Some(b"draft\n"),
            }],
        )
        .expect("staged");
    history.finish(&moved).expect("finished");
    // A new note at the old path later is not part of New.md's history.
    let reused = record(&history, &[write("Old.md", None, b"someone else\n")]);
    let paths: Vec<(String, Kind)> = history
        .versions("New.md", None, 10)
        .expect("versions")
        .into_iter()
        .map(|version| (version.path, version.kind))
        .collect();
    assert_eq!(
        paths,
        vec![
            ("New.md".into(), Kind::Move),
            ("Old.md".into(), Kind::Create)
        ]
    );
    let old = history.versions("Old.md", None, 10).expect("versions");
    assert_eq!(old[0].change.id, reused);
}

#[test]
fn a_change_cut_short_is_kept_only_if_its_files_hold_what_it_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let written = history
        .stage(
            &Meta {
                identity: "agent",
                tool: "vault_patch_note",
                kind: Kind::Write,
                undoes: None,
            },
            &[write("a.md", Some(b"x\n"), b"y\n")],
        )
        .expect("staged");
    let never = history
        .stage(
            &Meta {
                identity: "agent",
                tool: "vault_patch_note",
                kind: Kind::Write,
                undoes: None,
            },
            &[write("b.md", Some(b"x\n"), b"z\n")],
        )
        .expect("staged");
    // Nothing pending is listed before it is settled.
    assert!(
        history
            .versions("a.md", None, 10)
            .expect("versions")
            .is_empty()
    );
    let y = Revision::of(b"y\n").to_string();
    let x = Revision::of(b"x\n").to_string();
    let now = |path: &str| Some(if path == "a.md" { y.clone() } else { x.clone() });
    assert_eq!(history.recover(&now).expect("recover"), (1, 1));
    assert_eq!(history.change(&written).expect("kept").len(), 1);
    assert!(matches!(
        history.change(&never),
        Err(HistoryError::UnknownChange(_))
    ));
    // The dropped change's new content is gone with it.
    assert_eq!(
        history
            .content(&Revision::of(b"z\n").to_string())
            .expect("read"),
        None
    );
}

#[test]
fn pruning_drops_the_oldest_changes_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = History::open(
        &dir.path().join("history.db"),
        Retention {
            max_bytes: 4_000,
            max_age: Duration::from_secs(3600),
        },
    )
    .expect("history opens");
    // Random bytes do not compress, so each change stores about 1,500 bytes.
    let blobs: Vec<Vec<u8>> = (0..5)
        .map(|_| (0..1_500).map(|_| rand::random::<u8>()).collect())
        .collect();
    let changes: Vec<String> = blobs
        .iter()
        .enumerate()
        .map(|(at, blob)| record(&history, &[write(&format!("n{at}.md"), None, blob)]))
        .collect::<Vec<_>>();
    // Each finished change past the bound pruned already (issue 63, F12).
    assert_eq!(history.prune().expect("prune"), 0);
    assert!(history.stored_bytes().expect("size") <= 4_000);
    assert!(history.change(&changes[2]).is_err());
    assert_eq!(history.change(&changes[3]).expect("kept").len(), 1);
    assert_eq!(history.change(&changes[4]).expect("kept").len(), 1);
}

#[test]
fn a_history_from_a_newer_quire_is_refused_not_rewritten() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    drop(open(&dir));
    Connection::open(&path)
        .and_then(|connection| connection.pragma_update(None, "user_version", 99))
        .expect("set version");
    assert!(matches!(
        History::open(&path, Retention::default()),
        Err(HistoryError::Newer { found: 99, .. })
    ));
}

#[test]
fn the_bounds_hold_without_anyone_asking_to_prune() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = History::open(
        &dir.path().join("history.db"),
        Retention {
            max_bytes: 20_000,
            max_age: Duration::from_secs(3600),
        },
    )
    .expect("history opens");
    for at in 0..2 * PRUNE_EVERY {
        let blob: Vec<u8> = (0..1_000).map(|_| rand::random::<u8>()).collect();
        record(&history, &[write(&format!("n{at}.md"), None, &blob)]);
    }
    // Pruned at every hundredth change: at most a hundred changes (100 KB) past the bound.
    let stored = history.stored_bytes().expect("size");
    assert!(
        stored <= 20_000 + 1_100 * PRUNE_EVERY as u64,
        "{stored} bytes kept"
    );
    assert!(
        history
            .versions("n0.md", None, 1)
            .expect("versions")
            .is_empty()
    );
    assert_eq!(
        history
            .versions(&format!("n{}.md", 2 * PRUNE_EVERY - 1), None, 1)
            .expect("versions")
            .len(),
        1
    );
}

#[test]
fn a_change_cut_short_keeps_the_files_it_reached() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    // A move cut short: the destination and one linking file were written, the other was not.
    let change = history
        .stage(
            &meta(Kind::Move),
            &[
                write("a.md", Some(b"x\n"), b"y\n"),
                write("b.md", Some(b"x\n"), b"y\n"),
            ],
        )
        .expect("staged");
    let y = Revision::of(b"y\n").to_string();
    let x = Revision::of(b"x\n").to_string();
    let now = |path: &str| Some(if path == "a.md" { y.clone() } else { x.clone() });
    assert_eq!(history.recover(&now).expect("recover"), (1, 0));
    let kept = history.change(&change).expect("kept");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].path, "a.md");
}

#[test]
fn changes_list_newest_first_with_only_the_paths_the_reader_may_see() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let first = record(&history, &[write("open/a.md", None, b"a\n")]);
    record(&history, &[write("secret/b.md", None, b"b\n")]);
    let third = record(
        &history,
        &[
            write("open/c.md", None, b"c\n"),
            write("secret/d.md", None, b"d\n"),
        ],
    );
    let visible = |path: &str, _real: Option<&str>| path.starts_with("open/");
    let query = ChangeQuery {
        limit: 1,
        ..ChangeQuery::default()
    };
    let (page, next) = history.changes(&query, &visible).expect("changes");
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].change.id, third);
    assert_eq!(page[0].paths, vec!["open/c.md".to_owned()]);
    let rest = ChangeQuery {
        before_change: next,
        limit: 10,
        ..ChangeQuery::default()
    };
    let (page, next) = history.changes(&rest, &visible).expect("changes");
    // The change to a hidden note alone is not listed at all.
    assert_eq!(
        page.iter().map(|c| c.change.id.clone()).collect::<Vec<_>>(),
        vec![first]
    );
    assert_eq!(next, None);
}

#[test]
fn an_undo_names_the_change_it_took_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let change = record(&history, &[write("a.md", None, b"a\n")]);
    assert_eq!(history.undone_by(&change).expect("query"), None);
    let undo = history
        .stage(
            &Meta {
                undoes: Some(&change),
                ..meta(Kind::Undo)
            },
            &[Draft {
                path: "a.md",
                previous_path: None,
                kind: Kind::Delete,
                before: Some(b"a\n"),
                after: None,
            }],
        )
        .expect("staged");
    history.finish(&undo).expect("finished");
    assert_eq!(
        history.undone_by(&change).expect("query"),
        Some(undo.clone())
    );
    let versions = history.change(&undo).expect("the undo");
    assert_eq!(versions[0].change.undoes.as_deref(), Some(change.as_str()));
}

#[test]
fn a_first_version_history_is_carried_forward() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let connection = Connection::open(&path).expect("open");
    connection
        .execute_batch(
            "CREATE TABLE changes(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
                 time_ms INTEGER NOT NULL, identity TEXT NOT NULL, tool TEXT NOT NULL,
                 kind TEXT NOT NULL, state TEXT NOT NULL);
             INSERT INTO changes VALUES(1, 'ch_old', 0, 'owner', 'vault_write_note', 'write', 'done');
             PRAGMA user_version = 1;",
        )
        .expect("a version 1 file");
    drop(connection);
    let history = History::open(&path, Retention::default()).expect("migrated");
    assert_eq!(history.undone_by("ch_old").expect("query"), None);
}

/// Issue 63, F6: a version 2 file gains the columns for where a version's content really was,
/// and its versions read back, judged by their paths alone.
#[test]
fn a_second_version_history_is_carried_forward() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let connection = Connection::open(&path).expect("open");
    connection
        .execute_batch(
            "CREATE TABLE changes(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
                 time_ms INTEGER NOT NULL, identity TEXT NOT NULL, tool TEXT NOT NULL,
                 kind TEXT NOT NULL, undoes TEXT, state TEXT NOT NULL);
             CREATE TABLE versions(id INTEGER PRIMARY KEY, change_seq INTEGER NOT NULL,
                 path TEXT NOT NULL, previous_path TEXT, kind TEXT NOT NULL,
                 revision_before TEXT, revision_after TEXT, bytes_before INTEGER,
                 bytes_after INTEGER);
             INSERT INTO changes VALUES(1, 'ch_old', CAST(strftime('%s', 'now') AS INTEGER) * 1000,
                 'owner', 'vault_write_note', 'write', NULL, 'done');
             INSERT INTO versions VALUES(1, 1, 'a.md', NULL, 'create', NULL, NULL, NULL, NULL);
             PRAGMA user_version = 2;",
        )
        .expect("a version 2 file");
    drop(connection);
    let history = History::open(&path, Retention::default()).expect("migrated");
    let versions = history.versions("a.md", None, 10).expect("versions");
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].real_path, None);
}

/// Contents are hashed and compressed before the connection is taken; one that was stored then
/// but dropped before the insert (another write refused meanwhile) is compressed after all.
#[test]
fn content_dropped_between_preparing_and_staging_is_stored_all_the_same() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    let refused = history
        .stage(&meta(Kind::Write), &[write("a.md", None, b"shared\n")])
        .expect("staged");
    let drafts = [write("b.md", None, b"shared\n")];
    let prepared = history.prepare(&drafts).expect("prepared");
    history.abandon(&refused).expect("abandoned");
    let revision = Revision::of(b"shared\n").to_string();
    assert_eq!(history.content(&revision).expect("read"), None);
    let kept = history
        .stage_prepared(&meta(Kind::Write), &drafts, &[], prepared)
        .expect("staged");
    history.finish(&kept).expect("finished");
    assert_eq!(
        history.content(&revision).expect("read").as_deref(),
        Some(&b"shared\n"[..])
    );
}

/// Content zstd cannot shrink, different for every `seed`.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state & 0xff) as u8
        })
        .collect()
}

fn on_disk(dir: &tempfile::TempDir) -> u64 {
    ["history.db", "history.db-wal"]
        .iter()
        .filter_map(|name| std::fs::metadata(dir.path().join(name)).ok())
        .map(|meta| meta.len())
        .sum()
}

/// Issue 63, F12: `max_bytes` is a bound at every change, not every hundredth, and the file
/// gives back the space of what was pruned.
#[test]
fn r63_max_bytes_bounds_the_history_at_every_change_and_the_file_shrinks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let max_bytes = 256 * 1024;
    let history = History::open(
        &dir.path().join("history.db"),
        Retention {
            max_bytes,
            ..Retention::default()
        },
    )
    .expect("history opens");
    let change_bytes = 16 * 1024;
    for round in 0..120u64 {
        let content = noise(round, change_bytes);
        record(&history, &[write(&format!("n{round}.md"), None, &content)]);
        let stored = history.stored_bytes().expect("stored bytes");
        assert!(
            stored <= max_bytes + change_bytes as u64 + 1024,
            "after change {round} the history holds {stored} bytes, over {max_bytes}"
        );
    }
    // 120 changes of 16 KiB are 1.9 MB; what is kept is bounded, and so is the file.
    let file = on_disk(&dir);
    assert!(
        file < 3 * max_bytes,
        "history.db and its WAL take {file} bytes for a {max_bytes}-byte bound"
    );
}

/// Issue 63, F13: history.db removed under a running Quire: the next change goes to a file at
/// the history's path, where the next start finds it, never to the removed one.
#[test]
fn r63_a_history_file_removed_while_open_is_made_again_before_the_next_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = open(&dir);
    record(&history, &[write("a.md", None, b"one\n")]);
    for name in ["history.db", "history.db-wal", "history.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(name));
    }
    let after = record(&history, &[write("b.md", None, b"two\n")]);
    drop(history);
    let reopened = open(&dir);
    let versions = reopened.versions("b.md", None, 10).expect("versions");
    assert_eq!(
        versions.len(),
        1,
        "the change made after the removal was lost"
    );
    assert_eq!(versions[0].change.id, after);
}

/// Issue 63, F14: a history that cannot be opened answers every call with the way out.
#[test]
fn r63_an_unavailable_history_names_the_recovery_on_every_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let history = History::unavailable(&path, "file is not a database".into()).expect("made");
    let staged = history.stage(&meta(Kind::Create), &[write("a.md", None, b"x\n")]);
    let message = staged.expect_err("no change is staged").to_string();
    assert!(message.contains("move the file aside"), "{message}");
    assert!(history.versions("a.md", None, 10).is_err());
}
