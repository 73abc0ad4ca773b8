//! The single writer: one thread owns the only writable connection and applies every change.
//!
//! Commands arrive over a channel. At startup the writer reconciles the index with the vault
//! (files whose size and modification time are unchanged are not even read; the rest are read,
//! hashed, and parsed only when their hash changed, on every core); afterwards it refreshes the
//! paths that ops and the watcher report. A refresh always re-reads the disk, so the index
//! converges on what the vault holds no matter in which order reports arrive.
//!
//! This file owns the command loop and what its rooms pass each other: `reconcile.rs` (the whole
//! vault against the index), `refresh.rs` (the paths reported), `load.rs` (reading and parsing
//! one note into a record), `rows.rs` (a note's rows written or removed), `turns.rs` (the later
//! parts of very large notes, written between commands), `other_files.rs` (the rows of files that
//! are not notes), `alone.rs` (the notes the ACL judges one by one), `beside.rs` (a first
//! build's full text, made on a thread of its own), `tally.rs` (a first build's counts, kept in
//! memory).

mod alone;
mod beside;
mod compare;
mod load;
mod other_files;
mod reconcile;
mod refresh;
mod rows;
mod tally;
mod turns;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::document::ParsedNote;
use super::{Gate, IndexError, ReconcileStats};
use crate::health::Heartbeat;
use crate::vault::Vault;

pub use load::memory_entry_text;
pub(super) use refresh::{PARALLEL_REFRESH, Preloaded, preload};

/// The next command: waited for when no part waits, else only taken if one is there (a
/// `Timeout` then means: write a part).
fn receive(
    commands: &mpsc::Receiver<Command>,
    waiting: bool,
) -> Result<Command, mpsc::RecvTimeoutError> {
    if !waiting {
        return commands.recv_timeout(IDLE_BEAT);
    }
    commands.try_recv().map_err(|error| match error {
        mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
        mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
    })
}

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

/// The first wait before a failed startup reconcile is tried again; each failure doubles it, up
/// to `RETRY_MAX`. A cause outside Quire (a full disk, a folder made unreadable) may go away.
const RETRY_FIRST: Duration = Duration::from_secs(5);
const RETRY_MAX: Duration = Duration::from_secs(300);

pub(super) struct Writer {
    pub connection: Connection,
    pub vault: Arc<Vault>,
    pub db_path: PathBuf,
    pub generation: Arc<AtomicU64>,
    /// Whether a database this writer creates keeps semantic-search chunks; what an existing one
    /// does is in its `meta` (`schema::keeps_chunks`).
    pub chunks: bool,
}

/// What the index holds about a changed note: its hash (an unchanged one is not parsed again) and
/// its creation time.
struct Known {
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
        // Large notes' later parts, and the refreshes answered once they are written: while any
        // waits, commands are polled between parts, never waited for.
        let mut turns = turns::Turns::default();
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
            let command = match receive(&commands, turns.waiting()) {
                Ok(command) => command,
                Err(mpsc::RecvTimeoutError::Timeout) if turns.waiting() => {
                    turns.take_turn(&mut self.connection);
                    continue;
                }
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
                    let (outcome, splits) = match self.refresh(&paths, preloaded) {
                        Ok(splits) => (Ok(()), splits),
                        Err(error) => {
                            tracing::error!(%error, "cannot update the index");
                            (Err(error), Vec::new())
                        }
                    };
                    turns.answer_after(splits, outcome, reply);
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
                        let rebuilt = self.rebuild(&gate);
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

    /// Replaces a gone or damaged database and reconciles the new one, with the gate closed.
    fn rebuild(&mut self, gate: &Gate) -> Result<ReconcileStats, IndexError> {
        // Queries from now on wait, and those already running see the generation move before
        // the file does, so they retry instead of failing.
        gate.close();
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.replace_database().and_then(|()| self.reconcile(None))
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
}
