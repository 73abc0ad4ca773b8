//! Derived state about the vault, kept current from the file system: the SQLite index (notes,
//! full-text search, tags, properties) and the watcher that reports changes to it.
//!
//! Nothing here is a source of truth. The index only observes the vault and never writes to it;
//! deleting `index.db` loses nothing, and an index with another schema version is rebuilt, never
//! migrated. One writer thread owns the only writable connection (commands over a channel);
//! queries run on pooled read-only connections from blocking threads, never on the async
//! executor. Every query waits until the startup reconcile has finished, so the first answer
//! already reflects the whole vault. This module may use `markdown` and `vault`, never `ops`/`mcp`.

mod checkpoints;
mod document;
mod file_text;
mod graph;
mod parts;
mod phases;
mod query_text;
mod read;
mod schema;
mod snippet;
mod tasks;
mod vector_cache;
mod vectors;
mod watch_guard;
mod watcher;
mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::broadcast;

pub use document::{
    CHUNK_WORDS, ParsedNote, note_chunks, number_in, parse as parse_note, parse_date_time,
};
pub use graph::{LinkGraph, StoredLink, WrittenLink};
pub use query_text::MatchQuery;
pub use read::{
    Count, CountScope, FileFilter, FileHit, FileRecord, Judge, MemoryHit, NoteFilter, NoteRow,
    Page, PropertyFilter, PropertyValue, RecentOrder, RecordFilter, SearchHit, SearchPage,
    SearchPosition, TagFilter, TimeRange,
};
pub use schema::SCHEMA_VERSION;
pub use tasks::{
    TaskDateRange, TaskFacts, TaskOrder, TaskPage, TaskQuery, TaskRow, TaskScope,
    normal_tag as normal_task_tag,
};
pub use vectors::{FileVectorHit, PendingMemory, VectorCounts, VectorHit};
pub use watch_guard::{Reach, WatchGuard};
pub use watcher::{ChangeKind, VaultChange, VaultWatcher, WatchError, WatchState};
pub use writer::{ProgressFn, memory_entry_text};

use crate::markdown::frontmatter;
use crate::vault::{self, Vault, VaultPath};
use writer::{Command, Writer};

/// Read connections kept open between queries. Every tool call runs on its own blocking thread,
/// so 32 concurrent calls hold 32 readers; with only 4 kept, most calls opened a connection, read
/// the schema and prepared their statements again (a tenth of the server's CPU under 32
/// concurrent searches). Each reader's page cache is bounded (`schema::open_reader`).
const IDLE_READERS: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the index database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot scan the vault: {0}")]
    Scan(String),
    #[error("the index writer has stopped")]
    WriterStopped,
    #[error("the initial index reconcile failed: {0}")]
    ReconcileFailed(String),
    #[error("the index could not store the rest of a large note: {0}")]
    PartsFailed(String),
    #[error("SQLite cannot keep its temporary files in {0}: the name is not UTF-8")]
    TempFolder(String),
    #[error("the full-text index of a first build failed: {0}")]
    FullTextBeside(String),
    #[error("cannot start the index writer thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// Makes SQLite put its temporary files (the sorter of a large `CREATE INDEX`, big sorts and
/// temporary tables, which spill to disk past the page cache) in `folder` instead of `/var/tmp`
/// or `/tmp`, which the landlock sandbox does not grant: a sandboxed first index of a 100k-note
/// vault failed with "unable to open database file" at its `CREATE INDEX`. The files are unlinked
/// as soon as they are opened, so nothing is left in `folder`.
///
/// The setting is process-wide and SQLite forbids changing it while another thread uses SQLite,
/// so it is made once at startup, before any connection is opened (`app::prepare`).
pub fn use_temp_folder(folder: &Path) -> Result<(), IndexError> {
    let Some(folder) = folder.to_str() else {
        return Err(IndexError::TempFolder(folder.display().to_string()));
    };
    Connection::open_in_memory()?.pragma_update(None, "temp_store_directory", folder)?;
    Ok(())
}

/// What a reconcile found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileStats {
    /// Notes in the vault.
    pub notes: usize,
    /// Notes read and parsed because they were new or their bytes changed.
    pub parsed: usize,
    /// Notes dropped from the index because they left the vault.
    pub removed: usize,
    /// Notes skipped because their size and modification time were unchanged.
    pub unchanged: usize,
    pub elapsed: Duration,
}

/// How to open the index.
#[derive(Default)]
pub struct IndexOptions {
    /// Delete the database and index every note again.
    pub rebuild: bool,
    /// Told how far the startup reconcile has come.
    pub progress: Option<ProgressFn>,
    /// Beaten by the writer thread while it makes progress or waits for work, so the systemd
    /// watchdog notices a hung writer.
    pub heartbeat: Option<crate::health::Heartbeat>,
    /// Semantic search is not set up: a new index leaves out each note's embedding chunks (a
    /// fifth of parsing). When false, an index built without them is rebuilt.
    pub without_chunks: bool,
}

/// Whether the startup reconcile has finished; queries wait for it.
pub(crate) struct Gate {
    state: Mutex<Option<Result<ReconcileStats, String>>>,
    opened: Condvar,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            state: Mutex::new(None),
            opened: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Result<ReconcileStats, String>>> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Makes queries wait again, while a damaged database is rebuilt.
    pub(crate) fn close(&self) {
        *self.lock() = None;
    }

    pub(crate) fn open(&self, outcome: Result<ReconcileStats, IndexError>) {
        if let Err(error) = &outcome {
            tracing::error!(%error, "the index could not be brought up to date");
        }
        *self.lock() = Some(outcome.map_err(|error| error.to_string()));
        self.opened.notify_all();
    }

    fn is_open(&self) -> bool {
        self.lock().is_some()
    }

    fn wait(&self) -> Result<ReconcileStats, IndexError> {
        let mut state = self.lock();
        loop {
            match &*state {
                Some(Ok(stats)) => return Ok(stats.clone()),
                Some(Err(message)) => return Err(IndexError::ReconcileFailed(message.clone())),
                None => {
                    state = self
                        .opened
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                }
            }
        }
    }
}

/// A handle on the index; cheap to clone. The writer stops when the last handle is dropped.
#[derive(Clone)]
pub struct Index {
    shared: Arc<Shared>,
}

struct Shared {
    db_path: PathBuf,
    vault: Arc<Vault>,
    commands: mpsc::Sender<Command>,
    /// Idle read-only connections, each with the generation of the file it opened.
    readers: Mutex<Vec<(u64, Connection)>>,
    gate: Arc<Gate>,
    /// The int8 copy of the vectors that unfiltered semantic searches scan.
    vector_cache: Mutex<vector_cache::VectorCache>,
    /// How many times the writer replaced a missing or damaged database file.
    generation: Arc<AtomicU64>,
    /// Whether notes are parsed with semantic chunks (the writer checks it still holds).
    chunks: bool,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Index")
            .field("db_path", &self.shared.db_path)
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Opens (or creates, or rebuilds) the index at `db_path` and starts reconciling it with the
    /// vault in the background. Queries wait until that has finished; `wait_ready` reports it.
    pub fn open(
        db_path: &Path,
        vault: Arc<Vault>,
        options: IndexOptions,
    ) -> Result<Index, IndexError> {
        let chunks = !options.without_chunks;
        let (connection, _created) =
            schema::open_writer(db_path, vault.root(), options.rebuild, chunks)?;
        let (commands, receiver) = mpsc::channel();
        let gate = Arc::new(Gate::new());
        let generation = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            connection,
            vault: Arc::clone(&vault),
            db_path: db_path.to_path_buf(),
            generation: Arc::clone(&generation),
            chunks,
        };
        let writer_gate = Arc::clone(&gate);
        let progress = options.progress;
        let heartbeat = options.heartbeat;
        std::thread::Builder::new()
            .name("quire-index-writer".into())
            .spawn(move || writer.run(receiver, writer_gate, progress, heartbeat))
            .map_err(IndexError::Thread)?;
        Ok(Index {
            shared: Arc::new(Shared {
                db_path: db_path.to_path_buf(),
                vault,
                commands,
                readers: Mutex::new(Vec::new()),
                gate,
                vector_cache: Mutex::default(),
                generation,
                chunks,
            }),
        })
    }

    /// Blocks until the startup reconcile has finished and reports what it did.
    pub fn wait_ready(&self) -> Result<ReconcileStats, IndexError> {
        self.shared.gate.wait()
    }

    /// Whether queries answer now, without waiting for the startup reconcile.
    pub fn is_ready(&self) -> bool {
        self.shared.gate.is_open()
    }

    /// Brings the given vault-relative paths (notes or folders, present or gone) in line with the
    /// disk, and returns once the index reflects them.
    pub fn refresh(&self, paths: Vec<String>) -> Result<(), IndexError> {
        // A few notes are parsed here, so one large note does not stall the writer for others;
        // many at once are parsed by the writer on every core.
        let preloaded = if paths.len() < writer::PARALLEL_REFRESH {
            paths
                .iter()
                .filter_map(|raw| writer::preload(&self.shared.vault, raw, self.shared.chunks))
                .collect()
        } else {
            Vec::new()
        };
        let (reply, answer) = mpsc::channel();
        self.shared
            .commands
            .send(Command::Refresh {
                paths,
                preloaded,
                reply: Some(reply),
            })
            .map_err(|_| IndexError::WriterStopped)?;
        answer.recv().map_err(|_| IndexError::WriterStopped)?
    }

    /// Makes the index agree with the disk below `folder` (the whole vault for `None`) right now,
    /// reading only notes whose size or modification time differ. For listings that must show
    /// files written a moment ago by someone else, before the watcher has reported them.
    pub fn sync_folder(&self, folder: Option<&VaultPath>) -> Result<(), IndexError> {
        match folder {
            Some(folder) => self.refresh(vec![folder.to_string()]),
            None => self.reconcile().map(|_| ()),
        }
    }

    /// Reconciles the whole vault again (size and time first, then hashes), as at startup.
    pub fn reconcile(&self) -> Result<ReconcileStats, IndexError> {
        self.reconcile_with(false, None)
    }

    /// Like `reconcile`; `force` parses every note again, and `progress` hears (done, total).
    pub fn reconcile_with(
        &self,
        force: bool,
        progress: Option<ProgressFn>,
    ) -> Result<ReconcileStats, IndexError> {
        let (reply, answer) = mpsc::channel();
        self.shared
            .commands
            .send(Command::Reconcile {
                reply,
                force,
                progress,
            })
            .map_err(|_| IndexError::WriterStopped)?;
        answer.recv().map_err(|_| IndexError::WriterStopped)?
    }

    /// Applies vault changes from the watcher on a thread of its own, batching bursts, until the
    /// channel closes. A listener that fell behind reconciles the whole vault instead.
    pub fn follow(
        &self,
        mut changes: broadcast::Receiver<VaultChange>,
    ) -> Result<std::thread::JoinHandle<()>, IndexError> {
        let index = self.clone();
        std::thread::Builder::new()
            .name("quire-index-follow".into())
            .spawn(move || {
                loop {
                    let mut lagged = false;
                    let mut paths = Vec::new();
                    // Lost changes (this listener fell behind, or the kernel's queue
                    // overflowed) are found by reconciling the whole vault.
                    match changes.blocking_recv() {
                        Ok(change) if change.kind == ChangeKind::Rescan => lagged = true,
                        Ok(change) => paths.push(change.path),
                        Err(broadcast::error::RecvError::Lagged(_)) => lagged = true,
                        Err(broadcast::error::RecvError::Closed) => return,
                    }
                    loop {
                        match changes.try_recv() {
                            Ok(change) if change.kind == ChangeKind::Rescan => lagged = true,
                            Ok(change) => paths.push(change.path),
                            Err(broadcast::error::TryRecvError::Lagged(_)) => lagged = true,
                            Err(_) => break,
                        }
                    }
                    let outcome = if lagged {
                        index.reconcile().map(|_| ())
                    } else {
                        index.refresh(paths)
                    };
                    match outcome {
                        Ok(()) => {}
                        Err(IndexError::WriterStopped) => return,
                        Err(error) => tracing::error!(%error, "cannot apply vault changes"),
                    }
                }
            })
            .map_err(IndexError::Thread)
    }

    /// Runs `query` on a pooled read-only connection. A database deleted or damaged behind
    /// Quire's back (the file removed, its pages overwritten) is rebuilt from the vault and the
    /// query run again, so the index heals itself as its invariants promise.
    fn read<T>(
        &self,
        mut query: impl FnMut(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, IndexError> {
        self.wait_ready()?;
        let generation = self.shared.generation.load(Ordering::Acquire);
        let outcome = self.read_once(&mut query);
        if self.shared.generation.load(Ordering::Acquire) != generation {
            // The database was replaced while this query ran, so its answer (or error) may come
            // from a half-built one: ask again once the rebuild is done.
            self.wait_ready()?;
            return self.read_once(&mut query);
        }
        match outcome {
            Err(error) if schema::is_damaged(&self.shared.db_path) => {
                tracing::warn!(%error, "the index database is missing or damaged; rebuilding it from the vault");
                self.rebuild_damaged(generation)?;
                self.read_once(&mut query)
            }
            outcome => outcome,
        }
    }

    /// Has the writer replace the database unless another caller already did (`seen` is the
    /// generation the failed query ran on); pooled connections to the old file are then unused.
    fn rebuild_damaged(&self, seen: u64) -> Result<(), IndexError> {
        let (reply, answer) = mpsc::channel();
        self.shared
            .commands
            .send(Command::RebuildDamaged { seen, reply })
            .map_err(|_| IndexError::WriterStopped)?;
        answer.recv().map_err(|_| IndexError::WriterStopped)??;
        *self
            .shared
            .vector_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) =
            vector_cache::VectorCache::default();
        Ok(())
    }

    fn read_once<T>(
        &self,
        query: &mut impl FnMut(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, IndexError> {
        let generation = self.shared.generation.load(Ordering::Acquire);
        let pooled = self
            .shared
            .readers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        let connection = match pooled {
            Some((opened, connection)) if opened == generation => connection,
            _ => schema::open_reader(&self.shared.db_path)?,
        };
        let outcome = query(&connection);
        let mut readers = self
            .shared
            .readers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // A connection that failed, or was opened on a file since replaced, is not kept.
        if readers.len() < IDLE_READERS
            && outcome.is_ok()
            && generation == self.shared.generation.load(Ordering::Acquire)
        {
            readers.push((generation, connection));
        }
        Ok(outcome?)
    }

    /// Every file the index knows, with Obsidian's resolver over them.
    pub fn link_graph(&self) -> Result<LinkGraph, IndexError> {
        self.read(graph::link_graph)
    }

    /// The links `source` (a note or canvas) holds, in document order.
    pub fn links_from(&self, source: &str) -> Result<Vec<StoredLink>, IndexError> {
        self.read(|connection| graph::links_from(connection, source))
    }

    /// The links that could resolve to a file with one of these folded names.
    pub fn links_named(&self, names: &[String]) -> Result<Vec<StoredLink>, IndexError> {
        self.read(|connection| graph::links_named(connection, names))
    }

    /// Every link of the vault as written, without its place.
    pub fn written_links(&self) -> Result<Vec<WrittenLink>, IndexError> {
        self.read(graph::written_links)
    }

    /// Every link of the vault.
    pub fn all_links(&self) -> Result<Vec<StoredLink>, IndexError> {
        self.read(graph::all_links)
    }

    /// Ranked full-text search (see `read::search`).
    pub fn search(
        &self,
        query: &MatchQuery,
        filter: &NoteFilter,
        start: Option<SearchPosition>,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<SearchPage, IndexError> {
        self.read(|connection| read::search(connection, query, filter, start, limit, keep))
    }

    /// Ranked full-text search with statistics over the notes `keep` admits only (see
    /// `read::search_scoped`): for callers some rule restricts.
    pub fn search_scoped(
        &self,
        query: &MatchQuery,
        filter: &NoteFilter,
        start: Option<SearchPosition>,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<SearchPage, IndexError> {
        self.read(|connection| read::search_scoped(connection, query, filter, start, limit, keep))
    }

    /// Runs `work` on the writer's connection and waits for its result.
    fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, IndexError> {
        self.wait_ready()?;
        let (reply, answer) = mpsc::channel();
        self.shared
            .commands
            .send(Command::Run(Box::new(move |connection| {
                let _ = reply.send(work(connection).map_err(IndexError::from));
            })))
            .map_err(|_| IndexError::WriterStopped)?;
        answer.recv().map_err(|_| IndexError::WriterStopped)?
    }

    /// Readies vector storage for a model (`identity`, `dimensions`); vectors of another model are
    /// dropped. True when the store was emptied.
    pub fn prepare_vectors(&self, identity: &str, dimensions: usize) -> Result<bool, IndexError> {
        let identity = identity.to_string();
        self.write(move |connection| vectors::prepare(connection, &identity, dimensions))
    }

    /// Stores vectors by chunk hash; returns how many were new.
    pub fn store_vectors(&self, items: Vec<(String, Vec<f32>)>) -> Result<usize, IndexError> {
        self.write(move |connection| vectors::store(connection, &items))
    }

    /// Deletes vectors that no chunk and no memory entry uses any more.
    pub fn prune_vectors(&self) -> Result<usize, IndexError> {
        self.write(vectors::prune)
    }

    /// Up to `limit` note paths with chunks that still need a vector.
    pub fn pending_vector_paths(&self, limit: usize) -> Result<Vec<String>, IndexError> {
        self.read(|connection| vectors::pending_paths(connection, limit))
    }

    /// Which of these chunk hashes have no vector yet.
    pub fn missing_vectors(
        &self,
        hashes: &[String],
    ) -> Result<std::collections::HashSet<String>, IndexError> {
        self.read(|connection| vectors::missing(connection, hashes))
    }

    /// Up to `limit` memory entries (distinct by hash) that still need a vector.
    /// Up to `limit` file chunks without a vector (see `vectors::pending_file_chunks`).
    pub fn pending_file_vectors(&self, limit: usize) -> Result<Vec<PendingMemory>, IndexError> {
        self.read(|connection| vectors::pending_file_chunks(connection, limit))
    }

    /// The files nearest to `query` by their closest chunk (see `vectors::nearest_files`).
    pub fn nearest_files(
        &self,
        query: &[f32],
        filter: &FileFilter,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<FileVectorHit>, IndexError> {
        self.read(|connection| vectors::nearest_files(connection, query, filter, limit, keep))
    }

    /// A file chunk's text as it was embedded.
    pub fn file_chunk_text(&self, path: &str, seq: usize) -> Result<Option<String>, IndexError> {
        self.read(|connection| vectors::file_chunk_text(connection, path, seq))
    }

    pub fn pending_memory_vectors(&self, limit: usize) -> Result<Vec<PendingMemory>, IndexError> {
        self.read(|connection| vectors::pending_memory(connection, limit))
    }

    /// The memory entries nearest to a query vector (see `vectors::nearest_memory`).
    pub fn nearest_memory(
        &self,
        query: &[f32],
        file: Option<&str>,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<MemoryHit>, IndexError> {
        self.read(|connection| vectors::nearest_memory(connection, query, file, limit, keep))
    }

    pub fn vector_counts(&self) -> Result<VectorCounts, IndexError> {
        self.read(vectors::counts)
    }

    /// The notes nearest to a query vector (see `vectors::nearest`).
    pub fn nearest(
        &self,
        query: &[f32],
        filter: &NoteFilter,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<Vec<VectorHit>, IndexError> {
        let cache = &self.shared.vector_cache;
        self.read(|connection| vectors::nearest(connection, cache, query, filter, limit, keep))
    }

    /// The vault this index describes.
    pub fn vault(&self) -> &Arc<Vault> {
        &self.shared.vault
    }

    /// Notes matching `filter` in path order, after the path `after`.
    pub fn list_by_path(
        &self,
        filter: &NoteFilter,
        after: Option<&str>,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<Page<NoteRow, String>, IndexError> {
        self.read(|connection| read::list_by_path(connection, filter, after, limit, keep))
    }

    /// Notes matching `filter`, newest first.
    pub fn list_recent(
        &self,
        filter: &NoteFilter,
        order: RecentOrder,
        offset: usize,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<Page<NoteRow, usize>, IndexError> {
        self.read(|connection| read::list_recent(connection, filter, order, offset, limit, keep))
    }

    pub fn tag_counts(
        &self,
        scope: &CountScope<'_>,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Count, usize>, IndexError> {
        self.read(|connection| read::tag_counts(connection, scope, offset, limit))
    }

    pub fn property_key_counts(
        &self,
        scope: &CountScope<'_>,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Count, usize>, IndexError> {
        self.read(|connection| read::property_key_counts(connection, scope, offset, limit))
    }

    pub fn property_value_counts(
        &self,
        key: &str,
        scope: &CountScope<'_>,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Count, usize>, IndexError> {
        self.read(|connection| read::property_value_counts(connection, key, scope, offset, limit))
    }

    /// Notes per folder (with its trailing `/`), in folder order.
    pub fn folder_counts(&self, scope: &CountScope<'_>) -> Result<Vec<(String, u64)>, IndexError> {
        self.read(|connection| read::folder_counts(connection, scope))
    }

    /// Every note and other file with what Bases reads of it, notes first, by path.
    pub fn file_records(&self) -> Result<Vec<FileRecord>, IndexError> {
        self.read(read::file_records)
    }

    /// The files `filter` lets through (a superset of what the caller wants), as `file_records`.
    pub fn file_records_where(&self, filter: &RecordFilter) -> Result<Vec<FileRecord>, IndexError> {
        self.read(|connection| read::file_records_where(connection, filter))
    }

    /// How many notes the index holds.
    pub fn note_count(&self) -> Result<u64, IndexError> {
        self.read(read::note_count)
    }

    /// Every indexed note path matching `filter`, in path order.
    pub fn note_paths(&self, filter: &NoteFilter) -> Result<Vec<String>, IndexError> {
        self.read(|connection| read::note_paths(connection, filter))
    }

    /// The checkbox list items of the notes in `scope`, by path then line.
    pub fn task_rows(&self, scope: &TaskScope) -> Result<Vec<TaskRow>, IndexError> {
        self.read(|connection| tasks::task_rows(connection, scope))
    }

    /// One page of the tasks matching `query`, counting only those of notes `shows` accepts, with
    /// every checkbox row of the page's notes (to read them under the plugin settings), all from
    /// one read transaction so the page and its rows agree.
    pub fn task_page(
        &self,
        query: &TaskQuery,
        offset: usize,
        limit: usize,
        shows: &mut dyn FnMut(&str) -> bool,
    ) -> Result<TaskPage, IndexError> {
        self.read(|connection| {
            let transaction = connection.unchecked_transaction()?;
            let (tasks, more) = tasks::task_page(&transaction, query, offset, limit, shows)?;
            let mut rows: HashMap<String, Vec<TaskRow>> = HashMap::new();
            for (path, _) in &tasks {
                if !rows.contains_key(path) {
                    let scope = TaskScope {
                        folder: None,
                        path: Some(path.clone()),
                    };
                    rows.insert(path.clone(), tasks::task_rows(&transaction, &scope)?);
                }
            }
            Ok(TaskPage { tasks, more, rows })
        })
    }

    /// Every fact the index holds as sorted text lines, independent of row ids; for tests and
    /// diagnostics that compare two indexes of the same vault.
    pub fn dump(&self) -> Result<Vec<String>, IndexError> {
        self.read(read::dump)
    }

    /// A page of the files whose indexed text matches `expression` (see `search_files`).
    pub fn search_files(
        &self,
        expression: &str,
        offset: usize,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Page<FileHit, usize>, IndexError> {
        self.search_files_in(expression, &FileFilter::default(), offset, limit, keep)
    }

    /// `search_files` within a folder and modification-time range.
    pub fn search_files_in(
        &self,
        expression: &str,
        filter: &FileFilter,
        offset: usize,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Page<FileHit, usize>, IndexError> {
        self.read(|connection| {
            read::search_files(connection, expression, filter, offset, limit, keep)
        })
    }

    /// `search_files_in` ranked with statistics over the files `keep` admits only (see
    /// `read::search_files_scoped`): for callers some rule restricts.
    pub fn search_files_scoped(
        &self,
        query: &MatchQuery,
        expression: &str,
        filter: &FileFilter,
        offset: usize,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Page<FileHit, usize>, IndexError> {
        self.read(|connection| {
            read::search_files_scoped(connection, query, expression, filter, offset, limit, keep)
        })
    }

    /// The best `limit` memory entries for `expression`, optionally in one memory file.
    pub fn search_memory(
        &self,
        expression: &str,
        file: Option<&str>,
        limit: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<MemoryHit>, IndexError> {
        self.read(|connection| read::search_memory(connection, expression, file, limit, keep))
    }

    /// A snippet of a file's indexed text around the query's words.
    pub fn file_snippet(&self, body: &str, query: &MatchQuery) -> String {
        snippet::snippet(body, &query.highlight)
    }

    /// A snippet of the note's body around the query's words, read from the vault now; empty when
    /// the note cannot be read.
    pub fn snippet(&self, path: &str, query: &MatchQuery) -> String {
        let Ok(path) = VaultPath::parse(path) else {
            return String::new();
        };
        // Resolved like every read (symlinks, NFC), but without hashing: no revision is needed.
        let Ok(resolved) = self.shared.vault.resolve(&path) else {
            return String::new();
        };
        let bytes = match resolved.open() {
            Ok(Some(opened)) if opened.1.len() <= self.shared.vault.max_file_bytes() => {
                match vault::read_opened(opened) {
                    Ok((bytes, _)) => bytes,
                    Err(_) => return String::new(),
                }
            }
            _ => return String::new(),
        };
        // Checked whole first: the lossy decoder walks the bytes one at a time.
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        snippet::snippet(frontmatter::split(&text).body, &query.highlight)
    }
}

/// Parses any client query text into FTS5 expressions; never fails.
pub fn parse_query(text: &str) -> MatchQuery {
    query_text::parse(text)
}
