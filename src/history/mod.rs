//! Every version of every note Quire writes, kept outside the vault so any change can be seen and
//! taken back (issue 49). A change (one tool call) holds versions (one per file it touched), each
//! with the content before and after, stored once per revision and compressed with zstd.
//!
//! The order that makes history complete: a writer `stage`s the change's versions, which returns
//! only once they are durable, then renames the file, then calls `finish`. A process killed in
//! between leaves a pending change, which `recover` settles at the next start by looking at the
//! files: a version whose file holds its new content happened. So no acknowledged write is
//! missing from history. Access control is the caller's (`ops`): this module answers for paths.

mod content;
mod read;
mod schema;

pub use read::{ChangeQuery, ChangeSummary};

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

use content::Prepared;

/// What a version did to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Create,
    Write,
    Move,
    Delete,
    Restore,
    Undo,
    /// One call's edit of many notes, all or nothing (the batch tools).
    Batch,
    /// Another program (Obsidian, a sync client) changed the file; the watcher saw it.
    External,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Create => "create",
            Kind::Write => "write",
            Kind::Move => "move",
            Kind::Delete => "delete",
            Kind::Restore => "restore",
            Kind::Undo => "undo",
            Kind::Batch => "batch",
            Kind::External => "external",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        [
            Kind::Create,
            Kind::Write,
            Kind::Move,
            Kind::Delete,
            Kind::Restore,
            Kind::Undo,
            Kind::Batch,
            Kind::External,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// One file's part in a change, as the writer stages it.
#[derive(Debug, Clone, Copy)]
pub struct Draft<'a> {
    pub path: &'a str,
    /// Where a moved file was before.
    pub previous_path: Option<&'a str>,
    pub kind: Kind,
    /// The content before the change (`None`: the file did not exist).
    pub before: Option<&'a [u8]>,
    /// The content after it (`None`: the file is gone).
    pub after: Option<&'a [u8]>,
}

/// Where a draft's files really are when a symbolic link on the way leads elsewhere (`None`: the
/// path itself), as the writer found them before the write. A version is judged by these too, so
/// content written through a link into a folder stays that folder's once the link is gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RealPlaces {
    pub path: Option<String>,
    pub previous_path: Option<String>,
}

/// A draft's contents before and after, prepared.
type BeforeAfter<'a> = (Option<Prepared<'a>>, Option<Prepared<'a>>);

/// Who makes a change, with which tool, of what kind, as the writer stages it.
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    pub identity: &'a str,
    pub tool: &'a str,
    pub kind: Kind,
    /// The change an undo takes back.
    pub undoes: Option<&'a str>,
}

/// A change as listed: who made it with which tool, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub id: String,
    pub time_ms: i64,
    pub identity: String,
    pub tool: String,
    pub kind: Kind,
    /// The change this one undid, for an undo.
    pub undoes: Option<String>,
}

/// One version of a file, newest first in listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub version_id: i64,
    pub change: Change,
    pub path: String,
    pub previous_path: Option<String>,
    pub kind: Kind,
    pub revision_before: Option<String>,
    pub revision_after: Option<String>,
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
    /// Where the content really was when that was not `path` (a symbolic link on the way).
    pub real_path: Option<String>,
    /// Where a moved file really was before, when that was not `previous_path`.
    pub real_previous_path: Option<String>,
}

/// How much history is kept: the oldest changes go first once either bound is passed.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub max_bytes: u64,
    pub max_age: Duration,
}

impl Default for Retention {
    fn default() -> Retention {
        Retention {
            max_bytes: 1 << 30,
            max_age: Duration::from_secs(90 * 24 * 3600),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(
        "the history database failed ({0}). Free space in Quire's state directory (or set [history] enabled = false), then retry."
    )]
    Sql(#[from] rusqlite::Error),
    #[error("a version's content could not be compressed or read back: {0}")]
    Content(#[source] std::io::Error),
    #[error(
        "the history database is version {found}, newer than this Quire ({known}); use the newer Quire or move the file away"
    )]
    Newer { found: i64, known: i64 },
    #[error("the history holds no change {0}")]
    UnknownChange(String),
    #[error(
        "the history database {path} cannot be used ({reason}); Quire serves reads but makes no change it could not undo. Stop Quire, move the file aside (for example to history.db.damaged) and start it again: a new, empty history is created"
    )]
    Damaged { path: String, reason: String },
}

/// The history of one vault, in one SQLite file of the state directory.
#[derive(Debug)]
pub struct History {
    connection: Mutex<Connection>,
    path: PathBuf,
    /// The file the connection has open (device and inode): a history.db removed or replaced
    /// while Quire runs is noticed before the next change is staged into a file no one will see.
    file: AtomicU64,
    /// Why the file cannot be used, for a history opened `unavailable`.
    damaged: Option<String>,
    retention: Retention,
    /// Changes finished since this history opened: every `PRUNE_EVERY`th prunes.
    finished: AtomicUsize,
    /// The compressed bytes the history holds, as of the last prune plus what was staged since:
    /// past `max_bytes`, the next finished change prunes, so the bound holds at every change.
    stored: AtomicU64,
}

/// How many finished changes pass between two prunes (and one at open), so the bounds hold
/// without a timer and a prune's cost is spread thin.
const PRUNE_EVERY: usize = 100;

/// zstd's default level: about a third of a note's size at a few hundred MB/s.
const LEVEL: i32 = 3;

impl History {
    /// Opens (or creates) the history at `path`.
    pub fn open(path: &Path, retention: Retention) -> Result<History, HistoryError> {
        let connection = open_connection(path)?;
        let history = History {
            connection: Mutex::new(connection),
            path: path.to_path_buf(),
            file: AtomicU64::new(file_id(path)),
            damaged: None,
            retention,
            finished: AtomicUsize::new(0),
            stored: AtomicU64::new(0),
        };
        history.prune()?;
        Ok(history)
    }

    /// A history whose file could not be opened (`reason`): every call answers `Damaged`, which
    /// names the way out, so Quire can still serve reads while refusing every change.
    pub fn unavailable(path: &Path, reason: String) -> Result<History, HistoryError> {
        Ok(History {
            connection: Mutex::new(Connection::open_in_memory()?),
            path: path.to_path_buf(),
            file: AtomicU64::new(0),
            damaged: Some(reason),
            retention: Retention::default(),
            finished: AtomicUsize::new(0),
            stored: AtomicU64::new(0),
        })
    }

    /// The connection, on the file that is at the history's path now: one removed or replaced
    /// under a running Quire is opened again (created empty when removed), and the log says so,
    /// so no change is staged where the next start would not find it (issue 63, F13).
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, HistoryError> {
        if let Some(reason) = &self.damaged {
            return Err(HistoryError::Damaged {
                path: self.path.display().to_string(),
                reason: reason.clone(),
            });
        }
        // A poisoned lock still holds a consistent connection: every write is one transaction.
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let now = file_id(&self.path);
        if now != self.file.load(Ordering::Relaxed) {
            tracing::error!(
                history = %self.path.display(),
                "the history database was removed or replaced while Quire ran; the versions it \
                 held are no longer in the history, and new changes go to the file there now"
            );
            *connection = open_connection(&self.path)?;
            self.file.store(file_id(&self.path), Ordering::Relaxed);
            self.stored
                .store(stored_sum(&connection)?, Ordering::Relaxed);
        }
        Ok(connection)
    }

    /// Records a change's versions before its files are written; durable when this returns.
    /// Returns the change id that the caller, the audit log and the answer share.
    pub fn stage(&self, meta: &Meta<'_>, drafts: &[Draft<'_>]) -> Result<String, HistoryError> {
        self.stage_at(meta, drafts, &[])
    }

    /// `stage`, recording where each draft's files really are (`real[i]` for `drafts[i]`; a
    /// missing entry: the paths themselves).
    pub fn stage_at(
        &self,
        meta: &Meta<'_>,
        drafts: &[Draft<'_>],
        real: &[RealPlaces],
    ) -> Result<String, HistoryError> {
        let contents = self.prepare(drafts)?;
        self.stage_prepared(meta, drafts, real, contents)
    }

    /// `stage_at` with the drafts' contents already prepared.
    fn stage_prepared(
        &self,
        meta: &Meta<'_>,
        drafts: &[Draft<'_>],
        real: &[RealPlaces],
        mut contents: Vec<BeforeAfter<'_>>,
    ) -> Result<String, HistoryError> {
        let time_ms = now_ms();
        let id = new_change_id(time_ms);
        let mut connection = self.lock()?;
        let transaction = connection.transaction()?;
        transaction.execute(
            "INSERT INTO changes(id, time_ms, identity, tool, kind, undoes, state) VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'pending')",
            params![id, time_ms, meta.identity, meta.tool, meta.kind.as_str(), meta.undoes],
        )?;
        let seq = transaction.last_insert_rowid();
        let unmoved = RealPlaces::default();
        for (at, (draft, (before, after))) in drafts.iter().zip(contents.iter_mut()).enumerate() {
            let places = real.get(at).unwrap_or(&unmoved);
            let before = before
                .as_mut()
                .map(|content| content::store(&transaction, content))
                .transpose()?;
            let after = after
                .as_mut()
                .map(|content| content::store(&transaction, content))
                .transpose()?;
            transaction.execute(
                "INSERT INTO versions(change_seq, path, previous_path, kind, revision_before, revision_after, bytes_before, bytes_after, real_path, real_previous_path)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    seq,
                    draft.path,
                    draft.previous_path,
                    draft.kind.as_str(),
                    before.as_ref().map(|(revision, _)| revision),
                    after.as_ref().map(|(revision, _)| revision),
                    before.as_ref().map(|(_, bytes)| bytes),
                    after.as_ref().map(|(_, bytes)| bytes),
                    places.path,
                    places.previous_path,
                ],
            )?;
        }
        transaction.commit()?;
        let added: u64 = contents
            .iter()
            .flat_map(|(before, after)| [before, after])
            .flatten()
            .map(Prepared::stored_len)
            .sum();
        self.stored.fetch_add(added, Ordering::Relaxed);
        Ok(id)
    }

    /// Each draft's contents before and after, hashed, and compressed unless the history holds
    /// them already: the connection is taken only for that look-up.
    fn prepare<'a>(&self, drafts: &[Draft<'a>]) -> Result<Vec<BeforeAfter<'a>>, HistoryError> {
        let mut contents: Vec<BeforeAfter<'a>> = drafts
            .iter()
            .map(|draft| {
                (
                    draft.before.map(Prepared::hashed),
                    draft.after.map(Prepared::hashed),
                )
            })
            .collect();
        let unknown: Vec<bool> = {
            let connection = self.lock()?;
            let mut unknown = Vec::new();
            for content in contents
                .iter()
                .flat_map(|(before, after)| [before, after])
                .flatten()
            {
                unknown.push(!content::known(&connection, content.revision())?);
            }
            unknown
        };
        let mut unknown = unknown.into_iter();
        for content in contents
            .iter_mut()
            .flat_map(|(before, after)| [before, after])
            .flatten()
        {
            if unknown.next().unwrap_or(true) {
                content.compress()?;
            }
        }
        Ok(contents)
    }

    /// The change's files were written: it is history now.
    pub fn finish(&self, change: &str) -> Result<(), HistoryError> {
        let updated = {
            let connection = self.lock()?;
            // Marking done need not survive a power cut: a change left pending is settled at
            // the next start by looking at its files. So this commit skips the fsync a staging
            // commit pays (WAL mode: the next FULL commit syncs it too).
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            let updated =
                connection.execute("UPDATE changes SET state = 'done' WHERE id = ?1", [change]);
            connection.pragma_update(None, "synchronous", "FULL")?;
            updated?
        };
        if updated == 0 {
            return Err(HistoryError::UnknownChange(change.to_owned()));
        }
        let every = (self.finished.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(PRUNE_EVERY);
        if every || self.stored.load(Ordering::Relaxed) > self.retention.max_bytes {
            // The change is kept either way; a prune that fails is tried again later.
            if let Err(error) = self.prune() {
                tracing::warn!(%error, "the history could not be pruned; it is tried again later");
            }
        }
        Ok(())
    }

    /// The change did not happen (the write was refused): its versions go.
    pub fn abandon(&self, change: &str) -> Result<(), HistoryError> {
        let mut connection = self.lock()?;
        let transaction = connection.transaction()?;
        let seq: Option<i64> = transaction
            .query_row("SELECT seq FROM changes WHERE id = ?1", [change], |row| {
                row.get(0)
            })
            .optional()?;
        let Some(seq) = seq else {
            return Err(HistoryError::UnknownChange(change.to_owned()));
        };
        transaction.execute("DELETE FROM versions WHERE change_seq = ?1", [seq])?;
        transaction.execute("DELETE FROM changes WHERE seq = ?1", [seq])?;
        drop_unused_contents(&transaction)?;
        transaction.commit()?;
        Ok(())
    }

    /// Settles the changes a killed process left pending, file by file: a version whose file now
    /// holds its new content (or is gone where it went away) happened and is kept, any other is
    /// dropped, and a change none of whose versions happened goes. `current` answers each file's
    /// revision now (`None`: missing). Returns (changes kept, changes dropped).
    pub fn recover(
        &self,
        current: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(usize, usize), HistoryError> {
        let pending: Vec<(i64, String)> = {
            let connection = self.lock()?;
            let mut statement =
                connection.prepare("SELECT seq, id FROM changes WHERE state = 'pending'")?;
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?
        };
        let (mut kept, mut dropped) = (0, 0);
        for (seq, id) in pending {
            let versions: Vec<(i64, String, Option<String>)> = {
                let connection = self.lock()?;
                let mut statement = connection.prepare(
                    "SELECT id, path, revision_after FROM versions WHERE change_seq = ?1",
                )?;
                statement
                    .query_map([seq], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                    .collect::<Result<_, _>>()?
            };
            let missed: Vec<i64> = versions
                .iter()
                .filter(|(_, path, after)| current(path) != *after)
                .map(|(version, _, _)| *version)
                .collect();
            if missed.len() == versions.len() {
                self.abandon(&id)?;
                dropped += 1;
                continue;
            }
            if !missed.is_empty() {
                let connection = self.lock()?;
                for version in &missed {
                    connection.execute("DELETE FROM versions WHERE id = ?1", [version])?;
                }
            }
            self.finish(&id)?;
            kept += 1;
        }
        if dropped > 0 || kept > 0 {
            let mut connection = self.lock()?;
            let transaction = connection.transaction()?;
            drop_unused_contents(&transaction)?;
            transaction.commit()?;
        }
        Ok((kept, dropped))
    }

    /// Drops the oldest changes past the retention bounds, then contents no version keeps.
    /// Returns how many changes went.
    pub fn prune(&self) -> Result<usize, HistoryError> {
        let mut connection = self.lock()?;
        let transaction = connection.transaction()?;
        let oldest_kept =
            now_ms() - i64::try_from(self.retention.max_age.as_millis()).unwrap_or(i64::MAX);
        let mut pruned = delete_changes(&transaction, "time_ms < ?1", oldest_kept)?;
        drop_unused_contents(&transaction)?;
        loop {
            if stored_sum(&transaction)? <= self.retention.max_bytes {
                break;
            }
            let oldest: Option<i64> = transaction.query_row(
                "SELECT MIN(seq) FROM changes WHERE state = 'done'",
                [],
                |row| row.get(0),
            )?;
            let Some(oldest) = oldest else { break };
            pruned += delete_changes(&transaction, "seq <= ?1", oldest)?;
            drop_unused_contents(&transaction)?;
        }
        let stored = stored_sum(&transaction)?;
        transaction.commit()?;
        self.stored.store(stored, Ordering::Relaxed);
        if pruned > 0 {
            // The file gives the pages back (auto_vacuum is incremental), and the WAL its frames,
            // so what `max_bytes` bounds is what the disk holds.
            connection
                .execute_batch("PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE);")?;
        }
        Ok(pruned)
    }

    /// `stored_bytes` of the history at `path`, opened read-only: neither pruned nor migrated.
    pub fn stored_bytes_at(path: &Path) -> Result<u64, HistoryError> {
        let connection =
            Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        Ok(stored_sum(&connection)?)
    }

    /// The compressed bytes of every kept content, for `quire doctor`.
    pub fn stored_bytes(&self) -> Result<u64, HistoryError> {
        let connection = self.lock()?;
        Ok(stored_sum(&connection)?)
    }
}

/// Opens the file at `path` (creating it) with its tables, refusing a newer version.
fn open_connection(path: &Path) -> Result<Connection, HistoryError> {
    let connection = Connection::open(path)?;
    let found = schema::found_version(&connection)?;
    if found > schema::VERSION {
        return Err(HistoryError::Newer {
            found,
            known: schema::VERSION,
        });
    }
    schema::prepare(&connection)?;
    Ok(connection)
}

/// The device and inode of the file at `path` folded into one number (0: no file), to notice
/// that it is no longer the file the connection has open.
fn file_id(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |meta| meta.dev().rotate_left(32) ^ meta.ino())
}

/// The compressed bytes of every kept content: what the retention bound measures.
fn stored_sum(connection: &Connection) -> rusqlite::Result<u64> {
    let stored: i64 =
        connection.query_row("SELECT COALESCE(SUM(stored), 0) FROM contents", [], |row| {
            row.get(0)
        })?;
    Ok(u64::try_from(stored).unwrap_or(0))
}

fn delete_changes(
    transaction: &rusqlite::Transaction<'_>,
    condition: &str,
    bound: i64,
) -> Result<usize, HistoryError> {
    transaction.execute(
        &format!(
            "DELETE FROM versions WHERE change_seq IN (SELECT seq FROM changes WHERE {condition})"
        ),
        [bound],
    )?;
    Ok(transaction.execute(&format!("DELETE FROM changes WHERE {condition}"), [bound])?)
}

fn drop_unused_contents(transaction: &rusqlite::Transaction<'_>) -> Result<(), HistoryError> {
    transaction.execute(
        "DELETE FROM contents WHERE revision NOT IN (
             SELECT revision_before FROM versions WHERE revision_before IS NOT NULL
             UNION SELECT revision_after FROM versions WHERE revision_after IS NOT NULL)",
        [],
    )?;
    Ok(())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `ch_` and the time in hex, then random bits: ids sort by time and never repeat.
fn new_change_id(time_ms: i64) -> String {
    format!("ch_{time_ms:011x}{:08x}", rand::random::<u32>())
}

#[cfg(test)]
mod tests;
