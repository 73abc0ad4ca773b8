//! The single writer: one thread owns the only writable connection and applies every change.
//!
//! Commands arrive over a channel. At startup the writer reconciles the index with the vault
//! (files whose size and modification time are unchanged are not even read; the rest are read,
//! hashed, and parsed only when their hash changed, on every core); afterwards it refreshes the
//! paths that ops and the watcher report. A refresh always re-reads the disk, so the index
//! converges on what the vault holds no matter in which order reports arrive.

use super::phases::{Lap, Parsing, Writing};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::checkpoints::Checkpointer;
use super::document::{self, ParsedNote};
use super::file_text;
use super::schema::{self, subtree_range};
use super::{Gate, IndexError, ReconcileStats};
use crate::health::Heartbeat;
use crate::markdown::links::{self, Link, LinkForm};
use crate::markdown::memory;
use crate::vault::{self, Revision, ScannedFile, Vault, VaultPath};

/// How often an idle writer shows the watchdog it is alive.
const IDLE_BEAT: std::time::Duration = std::time::Duration::from_millis(500);

/// With the `test-faults` feature, `QUIRE_TEST_FAULT=hang-writer` freezes the writer on its
/// first command after the reconcile, so the systemd test can prove the watchdog restarts Quire.
#[cfg(feature = "test-faults")]
fn hang_if_asked() {
    if std::env::var("QUIRE_TEST_FAULT").is_ok_and(|fault| fault == "hang-writer") {
        tracing::warn!("test fault: the index writer hangs now");
        loop {
            std::thread::park();
        }
    }
}

/// Reports reconcile progress: (notes done, notes to do). Returning `false` stops the reconcile
/// early (its client cancelled): what was indexed stays, the rest waits for the next reconcile.
pub type ProgressFn = Box<dyn Fn(usize, usize) -> bool + Send>;

pub(super) enum Command {
    Refresh {
        paths: Vec<String>,
        /// Notes among `paths` the asking thread already read and parsed (see `preload`).
        preloaded: Vec<Preloaded>,
        reply: Option<mpsc::Sender<Result<(), IndexError>>>,
    },
    Reconcile {
        reply: mpsc::Sender<Result<ReconcileStats, IndexError>>,
        /// Parse every note again, not only those whose size, time or hash changed.
        force: bool,
        progress: Option<ProgressFn>,
    },
    /// Runs on the writable connection (vector storage); the closure sends its own reply.
    Run(Box<dyn FnOnce(&Connection) + Send>),
    /// The database file is gone or damaged: start a new one and reconcile it, unless the
    /// generation moved past `seen` (another query asked first).
    RebuildDamaged {
        seen: u64,
        reply: mpsc::Sender<Result<(), IndexError>>,
    },
}

/// With the `test-faults` feature, `QUIRE_TEST_FAULT=small-sort-cache` gives a first build a page
/// cache of 256 KiB, so SQLite's sorter spills to temporary files at a few thousand notes as it
/// does at 100k with the real cache: the sandbox test proves those files have a granted place.
fn bulk_cache_kib() -> i64 {
    #[cfg(feature = "test-faults")]
    if std::env::var("QUIRE_TEST_FAULT").is_ok_and(|fault| fault == "small-sort-cache") {
        tracing::warn!("test fault: a first build sorts with a 256 KiB page cache");
        return -256;
    }
    BULK_CACHE_KIB
}

/// The first wait before a failed startup reconcile is tried again; each failure doubles it, up
/// to `RETRY_MAX`. A cause outside Quire (a full disk, a folder made unreadable) may go away.
const RETRY_FIRST: Duration = Duration::from_secs(5);
const RETRY_MAX: Duration = Duration::from_secs(300);

/// Notes written per transaction during a reconcile, so the WAL stays bounded.
const BATCH: usize = 2000;
/// After a reconcile that parsed this many notes, the full-text index is merged into one segment.
const OPTIMIZE_AFTER: usize = 1000;
/// The writer's page cache while a first build fills an empty index (negative: KiB), instead of
/// `schema::CACHE_KIB`: a batch of notes then rarely spills dirty pages before its commit.
const BULK_CACHE_KIB: i64 = -65_536;

pub(super) struct Writer {
    pub connection: Connection,
    pub vault: Arc<Vault>,
    pub db_path: PathBuf,
    pub generation: Arc<AtomicU64>,
    /// Whether a database this writer creates keeps semantic-search chunks; what an existing one
    /// does is in its `meta` (`schema::keeps_chunks`).
    pub chunks: bool,
}

/// What the index holds about a note, to decide whether it changed.
struct Known {
    size: i64,
    mtime: i64,
    hash: String,
    created: i64,
}

/// A note read from disk, ready to be written.
enum Loaded {
    /// The bytes are the same as indexed; only size and time are refreshed.
    Same {
        path: String,
        size: i64,
        mtime: i64,
    },
    Note(Box<NoteRecord>),
    /// The file vanished or cannot be read as a note.
    Gone {
        path: String,
    },
}

/// One row of the properties table, with its lower-cased forms.
struct PropertyRecord {
    key: String,
    key_lower: String,
    value: Option<String>,
    value_lower: Option<String>,
    number: Option<f64>,
}

/// Everything the writer stores for a note, prepared on the reading thread so the single writer
/// only runs statements.
struct NoteRecord {
    path: String,
    name: String,
    size: i64,
    mtime: i64,
    hash: String,
    created: i64,
    /// Whether the index held the path when the note was read (then its old rows are replaced).
    known: bool,
    properties_json: String,
    tags_json: String,
    /// (lower-cased, as written)
    tags: Vec<(String, String)>,
    properties: Vec<PropertyRecord>,
    parsed: ParsedNote,
    /// The dated entries of a memory file (empty for every other note).
    memory: Vec<MemoryRecord>,
}

struct MemoryRecord {
    section: String,
    date: String,
    text: String,
    line: usize,
    /// Of the text an entry is embedded with (`memory_entry_text`): its vector's identity.
    hash: String,
}

/// When a failed startup reconcile is tried again. Until one succeeds, queries answer
/// `index_unavailable` at once (never a silent, permanent `internal`).
struct Retry {
    at: Instant,
    wait: Duration,
}

impl Retry {
    fn after<T>(outcome: &Result<T, IndexError>) -> Option<Retry> {
        outcome.is_err().then(|| Retry {
            at: Instant::now() + RETRY_FIRST,
            wait: RETRY_FIRST,
        })
    }

    fn due(&self) -> bool {
        Instant::now() >= self.at
    }

    fn back_off(&mut self) {
        self.wait = (self.wait * 2).min(RETRY_MAX);
        self.at = Instant::now() + self.wait;
        tracing::warn!(
            retry_in_s = self.wait.as_secs(),
            "the index is still not up to date; trying again later"
        );
    }
}

impl Writer {
    /// Runs the initial reconcile, opens the gate, then serves commands until every sender is gone.
    pub fn run(
        mut self,
        commands: mpsc::Receiver<Command>,
        gate: Arc<Gate>,
        progress: Option<ProgressFn>,
        heartbeat: Option<Heartbeat>,
    ) {
        let beat = || {
            if let Some(heartbeat) = &heartbeat {
                heartbeat.beat();
            }
        };
        // A long first index must not look like a hang: every progress report is a beat.
        let reconcile_heartbeat = heartbeat.clone();
        let reporting = move |done: usize, total: usize| {
            if let Some(heartbeat) = &reconcile_heartbeat {
                heartbeat.beat();
            }
            progress
                .as_ref()
                .is_none_or(|progress| progress(done, total))
        };
        let outcome = self.reconcile(Some(&reporting));
        let mut retry = Retry::after(&outcome);
        gate.open(outcome);
        loop {
            beat();
            if let Some(due) = retry.as_mut().filter(|retry| retry.due()) {
                tracing::info!("trying again to bring the index up to date");
                let outcome = self.reconcile(Some(&reporting));
                match &outcome {
                    Ok(_) => retry = None,
                    Err(_) => due.back_off(),
                }
                gate.open(outcome);
            }
            let command = match commands.recv_timeout(IDLE_BEAT) {
                Ok(command) => command,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            #[cfg(feature = "test-faults")]
            hang_if_asked();
            match command {
                Command::Refresh {
                    paths,
                    preloaded,
                    reply,
                } => {
                    let outcome = self.refresh(&paths, preloaded);
                    if let Err(error) = &outcome {
                        tracing::error!(%error, "cannot update the index");
                    }
                    if let Some(reply) = reply {
                        let _ = reply.send(outcome);
                    }
                }
                Command::Reconcile {
                    reply,
                    force,
                    progress,
                } => {
                    let heartbeat = heartbeat.clone();
                    let beating = move |done: usize, total: usize| {
                        if let Some(heartbeat) = &heartbeat {
                            heartbeat.beat();
                        }
                        progress
                            .as_ref()
                            .is_none_or(|progress| progress(done, total))
                    };
                    let _ = reply.send(self.reconcile_with(Some(&beating), force));
                }
                Command::Run(work) => work(&self.connection),
                Command::RebuildDamaged { seen, reply } => {
                    let mut outcome = Ok(());
                    if self.generation.load(Ordering::Acquire) == seen {
                        // Queries from now on wait, and those already running see the generation
                        // move before the file does, so they retry instead of failing.
                        gate.close();
                        self.generation.fetch_add(1, Ordering::AcqRel);
                        let rebuilt = self.replace_database().and_then(|()| self.reconcile(None));
                        outcome = rebuilt
                            .as_ref()
                            .map(|_| ())
                            .map_err(|e| IndexError::ReconcileFailed(e.to_string()));
                        retry = Retry::after(&rebuilt);
                        gate.open(rebuilt);
                    }
                    let _ = reply.send(outcome);
                }
            }
        }
    }

    /// Closes the old database before removing its files, so closing it cannot checkpoint into
    /// or delete the new one's WAL, then opens a new empty one.
    fn replace_database(&mut self) -> Result<(), IndexError> {
        drop(std::mem::replace(
            &mut self.connection,
            Connection::open_in_memory()?,
        ));
        let (connection, _) =
            super::schema::open_writer(&self.db_path, self.vault.root(), true, self.chunks)?;
        self.connection = connection;
        Ok(())
    }

    fn reconcile(
        &mut self,
        progress: Option<&(dyn Fn(usize, usize) -> bool + Send)>,
    ) -> Result<ReconcileStats, IndexError> {
        self.reconcile_with(progress, false)
    }

    fn reconcile_with(
        &mut self,
        progress: Option<&(dyn Fn(usize, usize) -> bool + Send)>,
        force: bool,
    ) -> Result<ReconcileStats, IndexError> {
        let started = Instant::now();
        let (scanned, others): (Vec<_>, Vec<_>) = self
            .vault
            .scan(None)
            .map_err(|error| IndexError::Scan(error.to_string()))?
            .into_iter()
            .partition(|file| is_note(&file.path));
        let known = self.known_notes()?;
        let mut todo = Vec::new();
        let mut seen = HashSet::with_capacity(scanned.len());
        for file in &scanned {
            seen.insert(file.path.as_str());
            let unchanged = !force
                && known.get(file.path.as_str()).is_some_and(|known| {
                    known.size == file.bytes as i64 && known.mtime == nanos(file.modified)
                });
            if !unchanged {
                todo.push(file);
            }
        }
        let gone: Vec<&String> = known
            .keys()
            .filter(|path| !seen.contains(path.as_str()))
            .collect();
        let total = todo.len();
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            notes = scanned.len(),
            "vault scanned and compared with the index"
        );
        let mut stats = ReconcileStats {
            notes: scanned.len(),
            parsed: 0,
            removed: gone.len(),
            unchanged: scanned.len() - total,
            elapsed: Duration::ZERO,
        };
        {
            let transaction = self.connection.transaction()?;
            for path in &gone {
                remove_exact(&transaction, path)?;
            }
            reconcile_files(&transaction, &self.vault, &others, None, force)?;
            transaction.commit()?;
        }
        if let Some(progress) = progress {
            // Nothing is done yet, so a stop asked for here is seen at the first report.
            let _ = progress(0, total);
        }
        // A large batch is merged into one segment at the end ('optimize'); merging the segments
        // along the way as well would rewrite the same data several times.
        let bulk = total >= OPTIMIZE_AFTER;
        // A first build of a large vault fills the tables without their secondary indexes, with
        // a larger page cache, and makes the indexes once at the end.
        let deferred = if bulk && known.is_empty() {
            self.connection
                .pragma_update(None, "cache_size", bulk_cache_kib())?;
            schema::defer_secondary_indexes(&mut self.connection)?
        } else {
            Vec::new()
        };
        // Through the merge at the end, the WAL is copied into the database on another core.
        let checkpointer = bulk.then(|| Checkpointer::start(&self.connection, &self.db_path));
        if bulk {
            self.connection.execute(
                "INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 0)",
                [],
            )?;
            // FTS5's pending terms stay at its default 1 MB. A bulk build with room for a whole
            // batch (64 MB, even 4 MB) built a tenth faster, but left the process so that one
            // client's writes afterwards had a p99 of 30-80 ms instead of 8 (the index files were
            // the same; a new writer connection did not help).
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 8)
            .min(total.max(1));
        let next = AtomicUsize::new(0);
        let vault = Arc::clone(&self.vault);
        let chunks = schema::keeps_chunks(&self.connection)?;
        let connection = &self.connection;
        let parsing = Parsing::default();
        let mut writing = Writing::default();
        let filled = std::thread::scope(|scope| -> Result<usize, IndexError> {
            let (sender, receiver) = mpsc::sync_channel::<Loaded>(256);
            for _ in 0..workers {
                let sender = sender.clone();
                let (todo, known, next, vault, force) = (&todo, &known, &next, &vault, force);
                let phases = &parsing;
                scope.spawn(move || {
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = todo.get(at) else { return };
                        let known = known.get(file.path.as_str());
                        let loaded = load(
                            vault,
                            &file.path,
                            &file.fs_path,
                            known,
                            force,
                            chunks,
                            phases,
                        );
                        if sender.send(loaded).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(sender);
            let mut done = 0;
            let mut parsed = 0;
            // `unchecked`: the checkpointer holds the connection shared; nothing else opens a
            // transaction on this thread meanwhile.
            let mut transaction = connection.unchecked_transaction()?;
            for loaded in receiver {
                if matches!(loaded, Loaded::Note(_)) {
                    parsed += 1;
                }
                apply(&transaction, loaded, &mut writing)?;
                done += 1;
                if done % BATCH == 0 {
                    let lap = Instant::now();
                    transaction.commit()?;
                    transaction = connection.unchecked_transaction()?;
                    writing.commit += lap.elapsed();
                }
                if let Some(progress) = progress
                    && (done % 64 == 0 || done == total)
                    && !progress(done, total)
                {
                    tracing::info!(
                        done,
                        total,
                        "reconcile stopped early at its caller's request"
                    );
                    // The workers see no more work, and their next send fails: they end.
                    next.store(total, Ordering::Relaxed);
                    break;
                }
            }
            let lap = Instant::now();
            transaction.commit()?;
            writing.commit += lap.elapsed();
            Ok(parsed)
        });
        // Made even when the fill failed or stopped early: the index stays usable either way.
        if !deferred.is_empty() {
            let lap = Instant::now();
            schema::restore_secondary_indexes(&self.connection, &deferred)?;
            self.connection
                .pragma_update(None, "cache_size", schema::CACHE_KIB)?;
            writing.indexes += lap.elapsed();
        }
        stats.parsed = filled?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "notes read, parsed and written"
        );
        if bulk {
            let lap = Instant::now();
            self.connection
                .execute("INSERT INTO notes_fts(notes_fts) VALUES('optimize')", [])?;
            writing.merge += lap.elapsed();
            self.connection.execute(
                "INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 4)",
                [],
            )?;
        }
        drop(checkpointer);
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "full-text index merged"
        );
        if stats.parsed + stats.removed > 0 {
            let lap = Instant::now();
            self.connection
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            writing.checkpoint += lap.elapsed();
            self.connection.execute_batch("PRAGMA optimize")?;
        }
        stats.elapsed = started.elapsed();
        if stats.parsed > 0 {
            writing.log(&parsing);
        }
        if stats.parsed + stats.removed > 0 || progress.is_some() {
            tracing::info!(
                notes = stats.notes,
                parsed = stats.parsed,
                removed = stats.removed,
                elapsed_ms = stats.elapsed.as_millis() as u64,
                "the index is up to date"
            );
        }
        Ok(stats)
    }

    fn known_notes(&self) -> Result<HashMap<String, Known>, IndexError> {
        let mut statement = self
            .connection
            .prepare("SELECT path, size, mtime, hash, created FROM notes")?;
        let rows = statement.query_map([], known_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Brings each path (a note, a folder, or something that vanished) in line with the disk.
    /// Many notes at once (a move rewrites every linking note) are read and parsed on every core.
    fn refresh(&mut self, paths: &[String], preloaded: Vec<Preloaded>) -> Result<(), IndexError> {
        let started = Instant::now();
        let transaction = self.connection.transaction()?;
        let mut done = HashSet::new();
        for note in preloaded {
            let path = note.path().to_string();
            if paths.contains(&path) && apply_preloaded(&transaction, &self.vault, note)? {
                done.insert(path);
            }
        }
        let done_preloaded = done;
        let mut done: HashSet<&str> = HashSet::new();
        let mut notes: Vec<(VaultPath, std::path::PathBuf, Option<Known>)> = Vec::new();
        for raw in paths {
            if done_preloaded.contains(raw) || !done.insert(raw.as_str()) {
                continue;
            }
            match plain_note(&self.vault, raw) {
                Some((path, fs_path)) if paths.len() >= PARALLEL_REFRESH => {
                    let known = known_note(&transaction, path.as_str())?;
                    notes.push((path, fs_path, known));
                }
                _ => refresh_path(&transaction, &self.vault, raw)?,
            }
        }
        if !notes.is_empty() {
            let vault = &self.vault;
            let chunks = schema::keeps_chunks(&transaction)?;
            let next = AtomicUsize::new(0);
            let workers = std::thread::available_parallelism()
                .map_or(1, usize::from)
                .clamp(1, 8)
                .min(notes.len());
            let loaded: Vec<(usize, Loaded)> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|_| {
                        let (notes, next) = (&notes, &next);
                        scope.spawn(move || {
                            let mut loaded = Vec::new();
                            let phases = Parsing::default();
                            loop {
                                let at = next.fetch_add(1, Ordering::Relaxed);
                                let Some((path, fs_path, known)) = notes.get(at) else {
                                    return loaded;
                                };
                                let note = load(
                                    vault,
                                    path,
                                    fs_path,
                                    known.as_ref(),
                                    false,
                                    chunks,
                                    &phases,
                                );
                                loaded.push((at, note));
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|handle| handle.join().unwrap_or_default())
                    .collect()
            });
            let mut loaded = loaded;
            loaded.sort_by_key(|(at, _)| *at);
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                notes = notes.len(),
                "refresh: notes read and parsed"
            );
            if loaded.len() != notes.len() {
                // A loader thread died: fall back to refreshing every note here.
                for (path, ..) in &notes {
                    refresh_path(&transaction, &self.vault, path.as_str())?;
                }
            } else {
                let phases = &mut Writing::default();
                for (_, loaded) in loaded {
                    apply(&transaction, loaded, phases)?;
                }
            }
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "refresh: rows written"
            );
        }
        transaction.commit()?;
        if paths.len() >= PARALLEL_REFRESH {
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "refresh: committed"
            );
        }
        Ok(())
    }
}

/// Refreshes of at least this many paths read and parse their notes in parallel.
pub(super) const PARALLEL_REFRESH: usize = 32;

/// A note read and parsed by the thread that asked for its refresh, so that parsing a large note
/// (10 MB takes the parser hundreds of milliseconds) does not hold the single writer, and with it
/// every other write's refresh. The writer applies it only if the file is still the one parsed.
pub(super) struct Preloaded {
    record: Box<NoteRecord>,
    /// Whether it was parsed with semantic chunks, which the index may have stopped keeping.
    chunks: bool,
}

impl Preloaded {
    fn path(&self) -> &str {
        &self.record.path
    }
}

/// Reads and parses `raw` when it is a plain note, on the calling thread.
pub(super) fn preload(vault: &Vault, raw: &str, chunks: bool) -> Option<Preloaded> {
    let (path, fs_path) = plain_note(vault, raw)?;
    match load(
        vault,
        &path,
        &fs_path,
        None,
        false,
        chunks,
        &Parsing::default(),
    ) {
        Loaded::Note(record) => Some(Preloaded { record, chunks }),
        Loaded::Same { .. } | Loaded::Gone { .. } => None,
    }
}

/// Writes a preloaded note's rows when the file still has the size and time it was read with
/// and the index keeps what it was parsed for; `false` leaves the path to a fresh read.
fn apply_preloaded(
    transaction: &Transaction<'_>,
    vault: &Vault,
    note: Preloaded,
) -> Result<bool, IndexError> {
    let Preloaded { mut record, chunks } = note;
    if chunks != schema::keeps_chunks(transaction)? {
        return Ok(false);
    }
    let current = plain_note(vault, &record.path)
        .and_then(|(_, fs_path)| std::fs::metadata(fs_path).ok())
        .map(|metadata| {
            let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            (metadata.len() as i64, nanos(modified))
        });
    if current != Some((record.size, record.mtime)) {
        return Ok(false);
    }
    let known = known_note(transaction, &record.path)?;
    let loaded = match known {
        Some(known) if known.hash == record.hash && known.created == record.created => {
            Loaded::Same {
                path: record.path.clone(),
                size: record.size,
                mtime: record.mtime,
            }
        }
        known => {
            record.known = known.is_some();
            Loaded::Note(record)
        }
    };
    apply(transaction, loaded, &mut Writing::default())?;
    Ok(true)
}

/// The path and file of `raw` when it is an existing note reached without a symbolic link: the
/// case `refresh_path` handles by reading the note, which may then run on another thread.
fn plain_note(vault: &Vault, raw: &str) -> Option<(VaultPath, std::path::PathBuf)> {
    let path = VaultPath::parse(raw).ok()?;
    if !is_note(&path) {
        return None;
    }
    let resolved = vault
        .resolve(&path)
        .ok()
        .filter(|resolved| resolved.exists)?;
    let metadata = std::fs::metadata(&resolved.fs_path).ok()?;
    metadata.is_file().then_some((path, resolved.fs_path))
}

fn refresh_path(transaction: &Transaction<'_>, vault: &Vault, raw: &str) -> Result<(), IndexError> {
    // Hidden or unaddressable names are never indexed, so there is nothing to refresh.
    let Ok(path) = VaultPath::parse(raw) else {
        return Ok(());
    };
    let resolved = match vault.resolve(&path) {
        Ok(resolved) if resolved.exists => resolved,
        _ => return remove_subtree(transaction, path.as_str()),
    };
    let Ok(metadata) = std::fs::metadata(&resolved.fs_path) else {
        return remove_subtree(transaction, path.as_str());
    };
    if metadata.is_dir() {
        remove_exact(transaction, path.as_str())?;
        if resolved.is_symlink {
            // Scans never descend a symlinked folder, so neither does the index.
            return remove_subtree(transaction, path.as_str());
        }
        return refresh_folder(transaction, vault, &path);
    }
    if !is_note(&path) {
        return upsert_file(
            transaction,
            vault,
            &path,
            &resolved.fs_path,
            metadata.len(),
            metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        );
    }
    let known = known_note(transaction, path.as_str())?;
    reload(transaction, vault, &path, &resolved.fs_path, known.as_ref())
}

/// Reads, parses and writes one note on the writer thread, outside a timed reconcile.
fn reload(
    transaction: &Transaction<'_>,
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    known: Option<&Known>,
) -> Result<(), IndexError> {
    let chunks = schema::keeps_chunks(transaction)?;
    let loaded = load(
        vault,
        path,
        fs_path,
        known,
        false,
        chunks,
        &Parsing::default(),
    );
    apply(transaction, loaded, &mut Writing::default())
}

/// Re-indexes every note below `folder` that is new or changed, and drops the ones that vanished.
fn refresh_folder(
    transaction: &Transaction<'_>,
    vault: &Vault,
    folder: &VaultPath,
) -> Result<(), IndexError> {
    let files = match vault.scan(Some(folder)) {
        Ok(files) => files,
        Err(_) => return remove_subtree(transaction, folder.as_str()),
    };
    let (low, high) = subtree_range(folder.as_str());
    let mut indexed: HashMap<String, Known> = HashMap::new();
    {
        let mut statement = transaction.prepare_cached(
            "SELECT path, size, mtime, hash, created FROM notes WHERE path > ?1 AND path < ?2",
        )?;
        let rows = statement.query_map(params![low, high], known_row)?;
        for row in rows {
            let (path, known) = row?;
            indexed.insert(path, known);
        }
    }
    for file in files.iter().filter(|file| is_note(&file.path)) {
        let known = indexed.remove(file.path.as_str());
        let unchanged = known.as_ref().is_some_and(|known| {
            known.size == file.bytes as i64 && known.mtime == nanos(file.modified)
        });
        if !unchanged {
            reload(
                transaction,
                vault,
                &file.path,
                &file.fs_path,
                known.as_ref(),
            )?;
        }
    }
    for path in indexed.keys() {
        remove_exact(transaction, path)?;
    }
    let others: Vec<ScannedFile> = files
        .into_iter()
        .filter(|file| !is_note(&file.path))
        .collect();
    reconcile_files(transaction, vault, &others, Some(folder.as_str()), false)
}

/// Brings the rows of the vault's other files (attachments, canvases) in line with `scanned`, the
/// files found in `folder` (or the whole vault): new or changed ones are recorded (a canvas with its
/// links), vanished ones dropped.
fn reconcile_files(
    transaction: &Transaction<'_>,
    vault: &Vault,
    scanned: &[ScannedFile],
    folder: Option<&str>,
    force: bool,
) -> Result<(), IndexError> {
    let mut known: HashMap<String, (i64, i64)> = HashMap::new();
    {
        let (low, high) = match folder {
            Some(folder) => subtree_range(folder),
            None => (String::new(), "\u{10ffff}".to_owned()),
        };
        let mut statement = transaction
            .prepare_cached("SELECT path, size, mtime FROM files WHERE path > ?1 AND path < ?2")?;
        let rows = statement.query_map(params![low, high], |row| {
            Ok((row.get::<_, String>(0)?, (row.get(1)?, row.get(2)?)))
        })?;
        for row in rows {
            let (path, stat) = row?;
            known.insert(path, stat);
        }
    }
    for file in scanned {
        let stat = known.remove(file.path.as_str());
        if !force && stat == Some((file.bytes as i64, nanos(file.modified))) {
            continue;
        }
        upsert_file(
            transaction,
            vault,
            &file.path,
            &file.fs_path,
            file.bytes,
            file.modified,
        )?;
    }
    for path in known.keys() {
        remove_exact(transaction, path)?;
    }
    Ok(())
}

/// Records a file that is not a note: its size and time, its searchable text (text formats), and
/// a canvas's links.
fn upsert_file(
    transaction: &Transaction<'_>,
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    size: u64,
    modified: SystemTime,
) -> Result<(), IndexError> {
    let existing: Option<i64> = transaction
        .prepare_cached("SELECT id FROM files WHERE path = ?1")?
        .query_row([path.as_str()], |row| row.get(0))
        .optional()?;
    let id = match existing {
        Some(id) => {
            transaction
                .prepare_cached("DELETE FROM files_fts WHERE rowid = ?1")?
                .execute([id])?;
            transaction
                .prepare_cached("DELETE FROM file_chunks WHERE file_id = ?1")?
                .execute([id])?;
            transaction
                .prepare_cached("UPDATE files SET size = ?2, mtime = ?3 WHERE id = ?1")?
                .execute(params![id, size as i64, nanos(modified)])?;
            id
        }
        None => {
            transaction
                .prepare_cached("INSERT INTO files(path, size, mtime) VALUES(?1, ?2, ?3)")?
                .execute(params![path.as_str(), size as i64, nanos(modified)])?;
            transaction.last_insert_rowid()
        }
    };
    delete_links(transaction, path.as_str())?;
    let extension = path.extension().unwrap_or_default().to_ascii_lowercase();
    let canvas = extension == "canvas";
    if !(canvas || file_text::is_indexed(&extension)) || size > file_text::MAX_SOURCE_BYTES {
        return Ok(());
    }
    // A file that vanished or cannot be read between the scan and here is recorded without
    // text; the watcher's next event for it brings the row up to date.
    let Some(bytes) = read_for_text(fs_path, file_text::bytes_needed(&extension)) else {
        return Ok(());
    };
    if canvas && size <= vault.max_file_bytes() {
        let text = String::from_utf8_lossy(&bytes);
        let found = links::canvas_links(&text);
        let names = document::link_names(&found);
        insert_links(transaction, path.as_str(), &found, &names)?;
    }
    if let Some(body) = file_text::extract(&extension, &bytes) {
        transaction
            .prepare_cached("INSERT INTO files_fts(rowid, name, body) VALUES(?1, ?2, ?3)")?
            .execute(params![id, path.stem(), body])?;
        // Chunked as a note is, titled with the file's full name, and kept with their text:
        // the embedding pass must not parse a PDF again, and a reranker reads the chunk itself.
        let mut insert_chunk = transaction.prepare_cached(
            "INSERT INTO file_chunks(file_id, seq, hash, text) VALUES(?1, ?2, ?3, ?4)",
        )?;
        for (seq, (hash, chunk)) in document::note_chunks(path.file_name(), &body)
            .into_iter()
            .enumerate()
        {
            insert_chunk.execute(params![id, seq as i64, hash, chunk.text])?;
        }
    }
    Ok(())
}

/// The file's first `limit` bytes (all of it for `None`); `None` when it cannot be read.
fn read_for_text(fs_path: &Path, limit: Option<u64>) -> Option<Vec<u8>> {
    let Some(limit) = limit else {
        return vault::read_regular(fs_path).ok().flatten();
    };
    let (file, _) = vault::open_regular(fs_path).ok().flatten()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit), &mut bytes).ok()?;
    Some(bytes)
}

fn delete_links(transaction: &Transaction<'_>, source: &str) -> Result<(), IndexError> {
    transaction
        .prepare_cached("DELETE FROM links WHERE source = ?1")?
        .execute([source])?;
    Ok(())
}

fn insert_links(
    transaction: &Transaction<'_>,
    source: &str,
    found: &[Link],
    names: &[String],
) -> Result<(), IndexError> {
    let mut insert = transaction.prepare_cached(
        "INSERT INTO links(source, seq, form, embed, link, target_name, display, original, line, col, start, end)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for (seq, (link, name)) in found.iter().zip(names).enumerate() {
        insert.execute(params![
            source,
            seq as i64,
            form_name(link.form),
            link.embed,
            link.link,
            name,
            link.display,
            link.original,
            link.line as i64,
            link.column as i64,
            link.start as i64,
            link.end as i64,
        ])?;
    }
    Ok(())
}

/// How a link's form is stored (read back by `read::form_of`).
pub(super) fn form_name(form: LinkForm) -> &'static str {
    match form {
        LinkForm::Wiki => "wiki",
        LinkForm::Markdown => "markdown",
        LinkForm::Property => "property",
        LinkForm::CanvasFile => "canvas",
    }
}

fn known_note(transaction: &Transaction<'_>, path: &str) -> Result<Option<Known>, IndexError> {
    let mut statement = transaction
        .prepare_cached("SELECT path, size, mtime, hash, created FROM notes WHERE path = ?1")?;
    Ok(statement
        .query_row([path], known_row)
        .optional()?
        .map(|(_, known)| known))
}

/// Reads, hashes and (when the hash changed) parses one note. Runs on any thread.
/// One row of `SELECT path, size, mtime, hash, created FROM notes ...`.
fn known_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Known)> {
    Ok((
        row.get::<_, String>(0)?,
        Known {
            size: row.get(1)?,
            mtime: row.get(2)?,
            hash: row.get(3)?,
            created: row.get(4)?,
        },
    ))
}

/// `force` parses the note even when its hash says it is unchanged (a requested rebuild).
fn load(
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    known: Option<&Known>,
    force: bool,
    chunks: bool,
    phases: &Parsing,
) -> Loaded {
    let mut lap = Lap::start();
    let gone = || Loaded::Gone {
        path: path.to_string(),
    };
    // Only a regular file is opened: a FIFO named like a note would block the writer thread
    // until something wrote to it, and with it every later write's refresh.
    let (mut file, metadata) = match vault::open_regular(fs_path) {
        Ok(Some(opened)) => opened,
        Ok(None) => return gone(),
        Err(error) => {
            // A vanished note is routine; one that exists but cannot be read (its mode, owner)
            // would otherwise drop out of search and listings with no word to the operator.
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path, %error, "a note cannot be read, so the index leaves it out until it can");
            }
            return gone();
        }
    };
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let size = metadata.len() as i64;
    let mtime = nanos(modified);
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    if vault::read_sized(&mut file, &mut bytes).is_err() {
        return gone();
    }
    phases.read.add(lap.split());
    let hash = Revision::of(&bytes).to_string();
    // Without a `created` property a note's creation time is the file's birth time (else its
    // mtime). The same bytes in a new file (an atomic save) can carry a new one, so the note is
    // parsed again, as a rebuild would read it, unless the time it has still holds. A note whose
    // `created` property sets another time parses again too; that is rare, as only its file's
    // times changed.
    let born = metadata
        .created()
        .ok()
        .map(seconds)
        .unwrap_or_else(|| seconds(modified));
    if !force && known.is_some_and(|known| known.hash == hash && known.created == born) {
        return Loaded::Same {
            path: path.to_string(),
            size: bytes.len() as i64,
            mtime,
        };
    }
    // Notes over the size cap are listed but their text is not indexed, as tools cannot read them.
    let text = if bytes.len() as u64 > vault.max_file_bytes() {
        String::new()
    } else {
        String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    };
    let parsed = document::parse(path.stem(), &text, chunks);
    let memory = if vault.is_memory_file(path) {
        memory_records(path.stem(), &text)
    } else {
        Vec::new()
    };
    let created = parsed.created.unwrap_or(born);
    let record = Box::new(NoteRecord {
        path: path.to_string(),
        name: path.stem().to_string(),
        size,
        mtime,
        hash,
        created,
        known: known.is_some(),
        properties_json: serde_json::to_string(&parsed.properties).unwrap_or_else(|_| "{}".into()),
        tags_json: serde_json::to_string(&parsed.tags).unwrap_or_else(|_| "[]".into()),
        tags: parsed
            .tags
            .iter()
            .map(|tag| (tag.to_lowercase(), tag.clone()))
            .collect(),
        properties: parsed
            .property_rows
            .iter()
            .map(|row| PropertyRecord {
                key: row.key.clone(),
                key_lower: row.key.to_lowercase(),
                value: row.text.clone(),
                value_lower: row.text.as_ref().map(|text| text.to_lowercase()),
                number: row.number,
            })
            .collect(),
        parsed,
        memory,
    });
    phases.parse.add(lap.split());
    Loaded::Note(record)
}

fn memory_records(file: &str, text: &str) -> Vec<MemoryRecord> {
    let mut records = Vec::new();
    for section in memory::parse(text).sections {
        for entry in section.entries {
            let embedded = memory_entry_text(file, &section.name, &entry.text);
            records.push(MemoryRecord {
                section: section.name.clone(),
                hash: Revision::of(embedded.as_bytes()).to_string(),
                date: entry.date,
                text: entry.text,
                line: entry.line,
            });
        }
    }
    records
}

/// What a memory entry is searched and embedded as: its file and section in front, so a query
/// about "how agents should communicate" meets the entries filed under that heading.
pub fn memory_entry_text(file: &str, section: &str, text: &str) -> String {
    format!("{file} > {section}\n{text}")
}

fn apply(
    transaction: &Transaction<'_>,
    loaded: Loaded,
    phases: &mut Writing,
) -> Result<(), IndexError> {
    match loaded {
        Loaded::Same { path, size, mtime } => {
            transaction
                .prepare_cached("UPDATE notes SET size = ?2, mtime = ?3 WHERE path = ?1")?
                .execute(params![path, size, mtime])?;
            Ok(())
        }
        Loaded::Note(record) => upsert(transaction, &record, phases),
        Loaded::Gone { path } => remove_exact(transaction, &path),
    }
}

fn upsert(
    transaction: &Transaction<'_>,
    record: &NoteRecord,
    phases: &mut Writing,
) -> Result<(), IndexError> {
    let mut lap = Lap::start();
    let parsed = &record.parsed;
    // This thread is the only writer and `known` was read by it, so a new note needs no lookup.
    let existing: Option<i64> = if record.known {
        transaction
            .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
            .query_row([&record.path], |row| row.get(0))
            .optional()?
    } else {
        None
    };
    let id = match existing {
        Some(id) => {
            remove_content(transaction, id)?;
            transaction
                .prepare_cached(
                    "UPDATE notes SET name = ?2, size = ?3, mtime = ?4, hash = ?5, properties = ?6,
                     tags = ?7, type = ?8, created = ?9 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    record.name,
                    record.size,
                    record.mtime,
                    record.hash,
                    record.properties_json,
                    record.tags_json,
                    parsed.note_type,
                    record.created
                ])?;
            id
        }
        None => {
            transaction
                .prepare_cached(
                    "INSERT INTO notes(path, name, size, mtime, hash, properties, tags, type, created)
                     VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![
                    record.path,
                    record.name,
                    record.size,
                    record.mtime,
                    record.hash,
                    record.properties_json,
                    record.tags_json,
                    parsed.note_type,
                    record.created
                ])?;
            transaction.last_insert_rowid()
        }
    };
    phases.notes += lap.split();
    transaction
        .prepare_cached(
            "INSERT INTO notes_fts(rowid, title, headings, properties, body) VALUES(?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            id,
            parsed.title_text,
            parsed.headings_text,
            parsed.properties_text,
            parsed.body
        ])?;
    phases.fts += lap.split();
    // A note the index did not know has no links to delete.
    if record.known {
        delete_links(transaction, &record.path)?;
    }
    insert_links(transaction, &record.path, &parsed.links, &parsed.link_names)?;
    phases.links += lap.split();
    let mut insert_tag = transaction
        .prepare_cached("INSERT OR IGNORE INTO tags(lower, note_id, tag) VALUES(?1, ?2, ?3)")?;
    for (lower, tag) in &record.tags {
        insert_tag.execute(params![lower, id, tag])?;
    }
    phases.tags += lap.split();
    let mut insert_task = transaction.prepare_cached(
        "INSERT OR IGNORE INTO tasks(note_id, line, text, heading, heading_line, depth, parent_line, lane, lane_complete,
                                     heading_lower, symbol, body, due, scheduled, start, created, done, cancelled,
                                     priority, recurring, tags)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?;
    for (site, facts) in parsed.task_sites.iter().zip(&parsed.task_facts) {
        let [due, scheduled, start, created, done, cancelled] = &facts.dates;
        insert_task.execute(params![
            id,
            site.line as i64,
            site.text,
            site.heading,
            site.heading_line.map(|line| line as i64),
            site.depth as i64,
            site.parent_line.map(|line| line as i64),
            site.lane,
            site.lane_complete,
            facts.heading_lower,
            facts.symbol,
            facts.body,
            due,
            scheduled,
            start,
            created,
            done,
            cancelled,
            facts.priority,
            facts.recurring,
            facts.tags
        ])?;
    }
    phases.tasks += lap.split();
    let mut insert_property = transaction.prepare_cached(
        "INSERT INTO properties(note_id, key, key_lower, value, value_lower, number)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for row in &record.properties {
        insert_property.execute(params![
            id,
            row.key,
            row.key_lower,
            row.value,
            row.value_lower,
            row.number
        ])?;
    }
    phases.properties += lap.split();
    let mut insert_chunk =
        transaction.prepare_cached("INSERT INTO chunks(note_id, seq, hash) VALUES(?1, ?2, ?3)")?;
    for (seq, hash) in parsed.chunk_hashes.iter().enumerate() {
        insert_chunk.execute(params![id, seq as i64, hash])?;
    }
    for entry in &record.memory {
        transaction
            .prepare_cached(
                "INSERT INTO memory_entries(note_id, section, date, text, line, hash)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                id,
                entry.section,
                entry.date,
                entry.text,
                entry.line as i64,
                entry.hash
            ])?;
        let entry_id = transaction.last_insert_rowid();
        transaction
            .prepare_cached("INSERT INTO memory_fts(rowid, text, section) VALUES(?1, ?2, ?3)")?
            .execute(params![
                entry_id,
                memory_entry_text(&record.name, &entry.section, &entry.text),
                entry.section
            ])?;
    }
    phases.chunks += lap.split();
    Ok(())
}

fn remove_content(transaction: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    transaction
        .prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached(
            "DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_entries WHERE note_id = ?1)",
        )?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM memory_entries WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM tags WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM properties WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM tasks WHERE note_id = ?1")?
        .execute([id])?;
    // Vectors are kept by content hash, so an unchanged chunk keeps its vector; the embedding
    // pass prunes vectors no chunk uses any more.
    transaction
        .prepare_cached("DELETE FROM chunks WHERE note_id = ?1")?
        .execute([id])?;
    Ok(())
}

fn remove_exact(transaction: &Transaction<'_>, path: &str) -> Result<(), IndexError> {
    delete_links(transaction, path)?;
    transaction
        .prepare_cached(
            "DELETE FROM files_fts WHERE rowid = (SELECT id FROM files WHERE path = ?1)",
        )?
        .execute([path])?;
    transaction
        .prepare_cached(
            "DELETE FROM file_chunks WHERE file_id = (SELECT id FROM files WHERE path = ?1)",
        )?
        .execute([path])?;
    transaction
        .prepare_cached("DELETE FROM files WHERE path = ?1")?
        .execute([path])?;
    let id: Option<i64> = transaction
        .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
        .query_row([path], |row| row.get(0))
        .optional()?;
    if let Some(id) = id {
        remove_content(transaction, id)?;
        transaction
            .prepare_cached("DELETE FROM notes WHERE id = ?1")?
            .execute([id])?;
    }
    Ok(())
}

/// Removes `path` and every note below it (a deleted or renamed folder).
fn remove_subtree(transaction: &Transaction<'_>, path: &str) -> Result<(), IndexError> {
    remove_exact(transaction, path)?;
    let (low, high) = subtree_range(path);
    let paths: Vec<String> = transaction
        .prepare_cached(
            "SELECT path FROM notes WHERE path > ?1 AND path < ?2
             UNION SELECT path FROM files WHERE path > ?1 AND path < ?2",
        )?
        .query_map(params![low, high], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for path in paths {
        remove_exact(transaction, &path)?;
    }
    Ok(())
}

pub(super) fn is_note(path: &VaultPath) -> bool {
    path.extension().as_deref() == Some("md")
}

fn nanos(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX)
        })
}

fn seconds(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer_on(root: &Path, db_path: &Path) -> Writer {
        let vault = Arc::new(Vault::open(root, 1 << 30).expect("vault"));
        let (connection, _) = schema::open_writer(db_path, root, false, true).expect("index");
        Writer {
            connection,
            vault,
            db_path: db_path.to_path_buf(),
            generation: Arc::new(AtomicU64::new(0)),
            chunks: true,
        }
    }

    fn indexed_tags(writer: &Writer, path: &str) -> String {
        writer
            .connection
            .query_row("SELECT tags FROM notes WHERE path = ?1", [path], |row| {
                row.get(0)
            })
            .expect("the note is indexed")
    }

    #[test]
    fn a_note_rewritten_after_it_was_parsed_elsewhere_is_indexed_as_it_is_now() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("vault");
        std::fs::create_dir(&root).expect("vault folder");
        std::fs::write(root.join("note.md"), "first #old\n").expect("write");
        let mut writer = writer_on(&root, &dir.path().join("index.db"));
        writer.reconcile(None).expect("reconcile");

        std::fs::write(root.join("note.md"), "second #middle\n").expect("write");
        let stale = preload(&writer.vault, "note.md", true).expect("a plain note");
        std::fs::write(root.join("note.md"), "third, longer #newest\n").expect("write");
        writer
            .refresh(&["note.md".to_string()], vec![stale])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "note.md"), r#"["newest"]"#);

        let fresh = preload(&writer.vault, "note.md", true).expect("a plain note");
        std::fs::write(root.join("other.md"), "#elsewhere\n").expect("write");
        writer
            .refresh(&["other.md".to_string()], vec![fresh])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "other.md"), r#"["elsewhere"]"#);

        std::fs::write(root.join("note.md"), "fourth #current\n").expect("write");
        let current = preload(&writer.vault, "note.md", true).expect("a plain note");
        writer
            .refresh(&["note.md".to_string()], vec![current])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "note.md"), r#"["current"]"#);
    }
}
