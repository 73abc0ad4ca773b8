//! A first build's full-text index, made on a thread of its own. The writer thread hands each
//! note over once its other rows are written; this thread puts its full-text rows into a scratch
//! database beside the index, merges them into one segment there, and copies FTS5's tables into
//! the index at the end.
//!
//! Why: FTS5's inserts, its flushes at each commit and its merge were half of the writer
//! thread's time in a cold build, and the writer thread bounds it (`index::phases`). Here they run
//! on another core.
//!
//! Invariants:
//! - The scratch table is made by the index's own `CREATE` statement, in the same SQLite, so the
//!   copied tables (`_data`, `_idx`, `_docsize`) are in the format the index's FTS5 reads.
//! - What is copied is the full text of exactly the notes the index holds, even after a batch
//!   the writer failed to commit: the rows of notes handed over since the writer last said it
//!   committed are deleted again at the end.
//! - The copy runs on the scratch connection, not the writer's. The writer's FTS5 caches the
//!   index's structure until `PRAGMA data_version` says another connection changed the file.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, Statement};

use super::NoteRecord;
use super::rows::{INSERT_FULL_TEXT, execute_full_text, full_text_columns};
use crate::index::{IndexError, parts};

/// Notes handed over and not yet stored: room to keep this thread busy, and little to hold.
const QUEUE: usize = 256;

/// FTS5's own tables of `notes_fts`, copied whole (its `_config` stays the index's).
const SHADOW_TABLES: [&str; 3] = ["notes_fts_data", "notes_fts_idx", "notes_fts_docsize"];

enum Feed {
    Note(i64, Box<NoteRecord>),
    /// The writer committed every note handed over so far.
    Committed,
}

/// The thread and the scratch file it writes.
pub(super) struct Beside {
    sender: Option<SyncSender<Feed>>,
    thread: Option<JoinHandle<Result<Built, rusqlite::Error>>>,
    path: PathBuf,
}

/// The scratch connection after the merge, with where its time went.
struct Built {
    connection: Connection,
    inserts: Duration,
    merge: Duration,
}

impl Beside {
    /// Starts the thread, with an empty full-text table made as `index`'s `notes_fts` was.
    pub(super) fn start(index: &Connection, db_path: &Path) -> Result<Beside, IndexError> {
        let table: String = index.query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'notes_fts'",
            [],
            |row| row.get(0),
        )?;
        let path = scratch_path(db_path);
        remove_scratch(&path);
        let connection = Connection::open(&path)?;
        // A scratch file: a crash leaves the index marked unfinished (`schema::BULK_LOAD`) and
        // the next first build starts a new one, so nothing here needs to survive one. No
        // journal, not even in memory: the merge at the end rewrites every page.
        connection.pragma_update(None, "journal_mode", "OFF")?;
        connection.pragma_update(None, "synchronous", "OFF")?;
        connection.execute_batch(&table)?;
        // One merge at the end, as the writer does for a bulk build.
        connection.execute(
            "INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 0)",
            [],
        )?;
        let (sender, receiver) = sync_channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("quire-index-fts".into())
            .spawn(move || build(connection, receiver))
            .map_err(IndexError::Thread)?;
        Ok(Beside {
            sender: Some(sender),
            thread: Some(thread),
            path,
        })
    }

    /// Hands note `id` over; its full text is kept if the writer says `committed` after it.
    pub(super) fn hand_over(&self, id: i64, record: Box<NoteRecord>) -> Result<(), IndexError> {
        self.send(Feed::Note(id, record))
    }

    /// The writer committed every note handed over so far.
    pub(super) fn committed(&self) -> Result<(), IndexError> {
        self.send(Feed::Committed)
    }

    fn send(&self, feed: Feed) -> Result<(), IndexError> {
        match &self.sender {
            Some(sender) if sender.send(feed).is_ok() => Ok(()),
            // Its error is the one `copy_into` reports.
            _ => Err(IndexError::FullTextBeside(
                "its thread stopped early".to_string(),
            )),
        }
    }

    /// No more notes: the thread drops what was not committed and merges the rest into one
    /// segment, while the writer goes on with its own indexes.
    pub(super) fn close_input(&mut self) {
        self.sender = None;
    }

    /// Waits for the merge, then copies the full-text index into the index at `db_path` in one
    /// transaction (the index's `notes_fts` must be empty): how long the copy took.
    pub(super) fn copy_into(mut self, db_path: &Path) -> Result<Duration, IndexError> {
        self.sender = None;
        let built = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(built)) => built?,
            Some(Err(_)) => {
                return Err(IndexError::FullTextBeside(
                    "its thread panicked".to_string(),
                ));
            }
            None => return Err(IndexError::FullTextBeside("it ended already".to_string())),
        };
        let started = Instant::now();
        copy(&built.connection, db_path)?;
        let copied = started.elapsed();
        tracing::debug!(
            inserts_ms = built.inserts.as_millis() as u64,
            merge_ms = built.merge.as_millis() as u64,
            copy_ms = copied.as_millis() as u64,
            "the first build's full text, made beside the writer"
        );
        Ok(copied)
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take()
            && let Ok(Err(error)) = thread.join()
        {
            tracing::warn!(%error, "a first build's full-text thread failed");
        }
        remove_scratch(&self.path);
    }
}

/// The thread: stores each note's full-text rows, committing when the writer did, then merges.
fn build(connection: Connection, feed: Receiver<Feed>) -> Result<Built, rusqlite::Error> {
    let started = Instant::now();
    {
        let mut insert = connection.prepare(INSERT_FULL_TEXT)?;
        // Rows of notes the writer has not said it committed. Without a journal there is no
        // rollback (SQLite leaves one undefined then), so they are deleted one by one.
        let mut uncommitted = Vec::new();
        // Transactions only so that FTS5 flushes its pending terms when they are large, not
        // after every row.
        connection.execute_batch("BEGIN")?;
        for item in feed {
            match item {
                Feed::Note(id, record) => insert_note(&mut insert, id, &record, &mut uncommitted)?,
                Feed::Committed => {
                    connection.execute_batch("COMMIT; BEGIN")?;
                    uncommitted.clear();
                }
            }
        }
        let mut delete = connection.prepare("DELETE FROM notes_fts WHERE rowid = ?1")?;
        for rowid in uncommitted {
            delete.execute([rowid])?;
        }
        connection.execute_batch("COMMIT")?;
    }
    let inserts = started.elapsed();
    connection.execute("INSERT INTO notes_fts(notes_fts) VALUES('optimize')", [])?;
    Ok(Built {
        connection,
        inserts,
        merge: started.elapsed() - inserts,
    })
}

/// A note's full-text row, or each of its parts' rows (`index::parts`).
fn insert_note(
    insert: &mut Statement<'_>,
    id: i64,
    record: &NoteRecord,
    inserted: &mut Vec<i64>,
) -> Result<(), rusqlite::Error> {
    let columns = full_text_columns(&record.parsed);
    let Some(rows) = parts::split(id, columns) else {
        return insert_row(insert, id, columns, inserted);
    };
    for (at, row) in rows.into_iter().enumerate() {
        insert_row(insert, parts::rowid(id, at + 1), row, inserted)?;
    }
    Ok(())
}

fn insert_row(
    insert: &mut Statement<'_>,
    rowid: i64,
    columns: parts::Columns<'_>,
    inserted: &mut Vec<i64>,
) -> Result<(), rusqlite::Error> {
    inserted.push(rowid);
    execute_full_text(insert, rowid, columns)
}

/// FTS5's tables copied from the scratch database into the index, replacing what they held.
fn copy(scratch: &Connection, db_path: &Path) -> Result<(), IndexError> {
    let Some(index) = db_path.to_str() else {
        return Err(IndexError::FullTextBeside(format!(
            "the index's path {} is not UTF-8",
            db_path.display()
        )));
    };
    scratch.busy_timeout(Duration::from_secs(30))?;
    scratch.execute("ATTACH DATABASE ?1 AS ix", [index])?;
    let copied = (|| -> Result<(), rusqlite::Error> {
        let transaction = scratch.unchecked_transaction()?;
        for table in SHADOW_TABLES {
            transaction.execute_batch(&format!(
                "DELETE FROM ix.{table}; INSERT INTO ix.{table} SELECT * FROM main.{table};"
            ))?;
        }
        transaction.commit()
    })();
    scratch.execute_batch("DETACH DATABASE ix")?;
    Ok(copied?)
}

/// The scratch database of the index at `db_path`: beside it, where the sandbox lets Quire write.
fn scratch_path(db_path: &Path) -> PathBuf {
    let mut name = db_path.file_name().unwrap_or_default().to_os_string();
    name.push(".full-text-build");
    db_path.with_file_name(name)
}

fn remove_scratch(path: &Path) {
    for suffix in ["", "-journal"] {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        if let Err(error) = std::fs::remove_file(&name)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %error, "cannot remove a first build's scratch file");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{document, schema};

    fn record(text: &str) -> Box<NoteRecord> {
        Box::new(NoteRecord {
            path: "n.md".into(),
            name: "n".into(),
            size: 0,
            mtime: 0,
            hash: String::new(),
            created: 0,
            known: false,
            properties_json: "{}".into(),
            tags_json: "[]".into(),
            tags: Vec::new(),
            properties: Vec::new(),
            parsed: document::parse("n", text, false),
            memory: Vec::new(),
        })
    }

    fn matching(connection: &Connection, word: &str) -> Vec<i64> {
        let mut statement = connection
            .prepare("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1 ORDER BY rowid")
            .expect("prepare");
        statement
            .query_map([word], |row| row.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    /// The writer's own connection, which cached the empty full-text index, sees the copy; and a
    /// note handed over after the writer's last commit (a batch that failed) is not in it.
    #[test]
    fn the_index_gets_what_the_writer_committed_and_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("index.db");
        let (writer, _) = schema::open_writer(&db, dir.path(), false, false).expect("index");
        assert!(matching(&writer, "words").is_empty());
        let mut beside = Beside::start(&writer, &db).expect("started");
        beside.hand_over(1, record("kept words")).expect("handed");
        beside.hand_over(2, record("more words")).expect("handed");
        beside.committed().expect("committed");
        beside.hand_over(3, record("lost words")).expect("handed");
        beside.close_input();
        beside.copy_into(&db).expect("copied");
        assert_eq!(matching(&writer, "words"), [1, 2]);
        assert!(matching(&writer, "lost").is_empty());
        assert!(!scratch_path(&db).exists());
        // And it takes later changes as any full-text index does.
        writer
            .execute("DELETE FROM notes_fts WHERE rowid = 1", [])
            .expect("deleted");
        assert_eq!(matching(&writer, "words"), [2]);
    }
}
