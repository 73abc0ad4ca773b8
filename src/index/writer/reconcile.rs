//! The startup reconcile (and `quire index --rebuild`'s): the whole vault compared with the index,
//! vanished notes removed, new and changed ones read and parsed on every core while this thread
//! writes their rows in batches; a first build of a large vault defers its secondary indexes and
//! merges the full-text index once at the end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::alone;
use super::beside::Beside;
use super::compare::{Compared, FastMap, IndexedNotes, compare, indexed_notes, known_of};
use super::load::{is_note, load};
use super::other_files::reconcile_files;
use super::rows::{Mode, apply_with, remove_exact};
use super::tally::Tally;
use super::turns::write_all;
use super::{Known, Loaded, Writer};
use crate::index::checkpoints::Checkpointer;
use crate::index::phases::{Parsing, Writing};
use crate::index::schema;
use crate::index::{IndexError, ReconcileStats};
use crate::vault::ScannedFile;

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

/// Notes written per transaction during a reconcile, so the WAL stays bounded.
const BATCH: usize = 2000;
/// After a reconcile that parsed this many notes, and at least a `BULK_SHARE`th of those the
/// index knew, the full-text index is merged into one segment.
const OPTIMIZE_AFTER: usize = 1000;
/// 'optimize' rewrites the whole full-text index: after a first build or a change to a large
/// share of the vault that is cheaper than merging as it goes, but 10,000 outside edits in a
/// million-note vault held the writer for minutes with it (`benches/million.py`).
const BULK_SHARE: usize = 4;
/// The writer's page cache while a first build fills an empty index (negative: KiB), instead of
/// `schema::CACHE_KIB`: a batch of notes then rarely spills dirty pages before its commit.
const BULK_CACHE_KIB: i64 = -65_536;

/// What a reconcile has to do, from a scan of the vault compared with the index.
struct Plan {
    /// Notes in the vault.
    notes: usize,
    /// The vault's files that are not notes.
    others: Vec<ScannedFile>,
    /// How many notes the index held before.
    indexed: usize,
    /// What the index held about each note in `todo` it knew.
    known: FastMap<Known>,
    /// Notes whose size or time changed (every note when forced): read, and parsed when their
    /// bytes changed.
    todo: Vec<ScannedFile>,
    /// Notes the index holds that the vault no longer has.
    gone: Vec<String>,
    /// Notes the ACL judges one by one (`alone.rs`).
    alone: Vec<String>,
}

/// A progress report; returning `false` stops the reconcile (see `ProgressFn`).
type Progress<'a> = Option<&'a (dyn Fn(usize, usize) -> bool + Send)>;

impl Writer {
    pub(super) fn reconcile(
        &mut self,
        progress: Option<&(dyn Fn(usize, usize) -> bool + Send)>,
    ) -> Result<ReconcileStats, IndexError> {
        self.reconcile_with(progress, false)
    }

    /// Brings the whole index in line with the vault; `force` parses every note again.
    pub(super) fn reconcile_with(
        &mut self,
        progress: Progress<'_>,
        force: bool,
    ) -> Result<ReconcileStats, IndexError> {
        let started = Instant::now();
        let plan = self.plan_reconcile(force, started)?;
        let total = plan.todo.len();
        let mut stats = ReconcileStats {
            notes: plan.notes,
            parsed: 0,
            removed: plan.gone.len(),
            unchanged: plan.notes - total,
            elapsed: Duration::ZERO,
        };
        self.remove_vanished_and_refresh_other_files(&plan, force)?;
        if let Some(progress) = progress {
            // Nothing is done yet, so a stop asked for here is seen at the first report.
            let _ = progress(0, total);
        }
        // A large batch is merged into one segment at the end ('optimize'); merging the segments
        // along the way as well would rewrite the same data several times.
        let bulk = total >= OPTIMIZE_AFTER && total >= plan.indexed / BULK_SHARE;
        let first_build = bulk && plan.indexed == 0;
        let deferred = self.defer_indexes_for_first_build(first_build)?;
        // Through the merge at the end, the WAL is copied into the database on another core.
        let checkpointer = bulk.then(|| Checkpointer::start(&self.connection, &self.db_path));
        if bulk {
            self.merge_only_at_the_end()?;
        }
        let mut beside = if first_build {
            Some(Beside::start(&self.connection, &self.db_path)?)
        } else {
            None
        };
        let chunks = schema::keeps_chunks(&self.connection)?;
        let parsing = Parsing::default();
        let mut writing = Writing::default();
        let tally = std::cell::RefCell::new(Tally::default());
        let mode = beside
            .as_ref()
            .map_or(Mode::Live, |beside| Mode::FirstBuild(beside, &tally));
        let filled = self.fill(&plan, force, chunks, progress, &parsing, &mut writing, mode);
        if let Some(beside) = &mut beside {
            // Its merge runs while this thread makes the lookup indexes.
            beside.close_input();
        }
        // Made even when the fill failed or stopped early: the index stays usable either way.
        // A failed batch was rolled back after the tally saw it, so it is counted in SQL then.
        let counted = filled.is_ok() && beside.is_some();
        self.restore_deferred_indexes(&deferred, &mut writing, |connection| {
            if counted {
                tally.borrow().write(connection)
            } else {
                schema::recount(connection)
            }
        })?;
        if let Some(beside) = beside {
            writing.merge += beside.copy_into(&self.db_path)?;
        }
        if !deferred.is_empty() {
            schema::finish_bulk_load(&self.connection)?;
        }
        stats.parsed = filled?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "notes read, parsed and written"
        );
        if bulk {
            // A first build's full text was merged where it was made.
            self.merge_full_text(&mut writing, !first_build)?;
        }
        drop(checkpointer);
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "full-text index merged"
        );
        if stats.parsed + stats.removed > 0 {
            self.checkpoint_and_optimize(&mut writing)?;
        }
        stats.elapsed = started.elapsed();
        log_reconciled(&stats, progress.is_some(), &parsing, &writing);
        Ok(stats)
    }

    /// Scans the vault and compares each note's size and time with what the index holds: only
    /// changed notes keep what the index knew (a million-note restart is this comparison).
    fn plan_reconcile(&self, force: bool, started: Instant) -> Result<Plan, IndexError> {
        let (scan, indexed_notes) = self.scan_beside_known_notes()?;
        let (scanned, others): (Vec<_>, Vec<_>) =
            scan.into_iter().partition(|file| is_note(&file.path));
        let indexed = indexed_notes.len();
        let notes = scanned.len();
        let alone = alone::of_scan(&scanned);
        let Compared {
            changed,
            todo,
            gone,
        } = compare(scanned, indexed_notes, force);
        let known = known_of(&self.connection, changed)?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            notes,
            "vault scanned and compared with the index"
        );
        Ok(Plan {
            notes,
            others,
            indexed,
            known,
            todo,
            gone,
            alone,
        })
    }

    /// The vault's files, walked on another thread while this one reads the notes the index
    /// holds: a million-note restart spends about a second in each, which used to follow the
    /// other.
    fn scan_beside_known_notes(&self) -> Result<(Vec<ScannedFile>, IndexedNotes), IndexError> {
        let vault = &self.vault;
        let (scan, known) = std::thread::scope(|scope| {
            let walking = std::thread::Builder::new()
                .name("quire-index-scan".into())
                .spawn_scoped(scope, || vault.scan(None));
            let known = indexed_notes(&self.connection, None);
            let scan = match walking {
                Ok(walking) => walking
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => vault.scan(None),
            };
            (scan, known)
        });
        let scan = scan.map_err(|error| IndexError::Scan(error.to_string()))?;
        Ok((scan, known?))
    }

    /// Drops the rows of vanished notes and brings the other files' rows up to date, in one
    /// transaction before any note is parsed.
    fn remove_vanished_and_refresh_other_files(
        &mut self,
        plan: &Plan,
        force: bool,
    ) -> Result<(), IndexError> {
        let transaction = self.connection.transaction()?;
        for path in &plan.gone {
            remove_exact(&transaction, path)?;
        }
        alone::replace_all(&transaction, &plan.alone)?;
        reconcile_files(&transaction, &self.vault, &plan.others, None, force)?;
        transaction.commit()?;
        Ok(())
    }

    /// A first build of a large vault fills the tables without their secondary indexes, with
    /// a larger page cache, and makes the indexes once at the end: the statements that remake
    /// them (none when this is not such a build).
    fn defer_indexes_for_first_build(
        &mut self,
        first_bulk_build: bool,
    ) -> Result<Vec<String>, IndexError> {
        if !first_bulk_build {
            return Ok(Vec::new());
        }
        self.connection
            .pragma_update(None, "cache_size", bulk_cache_kib())?;
        Ok(schema::defer_secondary_indexes(&mut self.connection)?)
    }

    fn merge_only_at_the_end(&self) -> Result<(), IndexError> {
        self.connection.execute(
            "INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 0)",
            [],
        )?;
        // FTS5's pending terms stay at its default 1 MB. A bulk build with room for a whole
        // batch (64 MB, even 4 MB) built a tenth faster, but left the process so that one
        // client's writes afterwards had a p99 of 30-80 ms instead of 8 (the index files were
        // the same; a new writer connection did not help).
        Ok(())
    }

    /// Reads and parses the planned notes on up to eight threads while this one writes their
    /// rows, committing every `BATCH`; the number of notes parsed. A `progress` that answers
    /// `false` stops it: what was written stays.
    #[allow(
        clippy::too_many_arguments,
        reason = "the phases of one reconcile, passed down"
    )]
    fn fill(
        &self,
        plan: &Plan,
        force: bool,
        chunks: bool,
        progress: Progress<'_>,
        parsing: &Parsing,
        writing: &mut Writing,
        mode: Mode<'_>,
    ) -> Result<usize, IndexError> {
        let total = plan.todo.len();
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 8)
            .min(total.max(1));
        let next = AtomicUsize::new(0);
        let vault: &crate::vault::Vault = &self.vault;
        let connection = &self.connection;
        std::thread::scope(|scope| -> Result<usize, IndexError> {
            let (sender, receiver) = mpsc::sync_channel::<Loaded>(256);
            for _ in 0..workers {
                let sender = sender.clone();
                let (todo, known, next) = (&plan.todo, &plan.known, &next);
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
                            parsing,
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
            let later = &mut Vec::new();
            for loaded in receiver {
                if matches!(loaded, Loaded::Note(_)) {
                    parsed += 1;
                }
                apply_with(&transaction, loaded, writing, later, mode)?;
                // A reconcile holds the writer anyway: large notes go in whole.
                write_all(&transaction, later)?;
                done += 1;
                if done % BATCH == 0 {
                    let lap = Instant::now();
                    transaction.commit()?;
                    committed(mode)?;
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
            committed(mode)?;
            writing.commit += lap.elapsed();
            Ok(parsed)
        })
    }

    fn restore_deferred_indexes(
        &self,
        deferred: &[String],
        writing: &mut Writing,
        count: impl FnOnce(&rusqlite::Connection) -> Result<(), rusqlite::Error>,
    ) -> Result<(), IndexError> {
        if !deferred.is_empty() {
            let lap = Instant::now();
            schema::restore_secondary_indexes(&self.connection, deferred, count)?;
            self.connection
                .pragma_update(None, "cache_size", schema::CACHE_KIB)?;
            writing.indexes += lap.elapsed();
        }
        Ok(())
    }

    /// Merges the full-text index into one segment (unless `optimize` is false: it is one
    /// already), then lets FTS5 merge as it writes again.
    fn merge_full_text(&self, writing: &mut Writing, optimize: bool) -> Result<(), IndexError> {
        if optimize {
            let lap = Instant::now();
            self.connection
                .execute("INSERT INTO notes_fts(notes_fts) VALUES('optimize')", [])?;
            writing.merge += lap.elapsed();
        }
        self.connection.execute(
            "INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 4)",
            [],
        )?;
        Ok(())
    }

    fn checkpoint_and_optimize(&self, writing: &mut Writing) -> Result<(), IndexError> {
        let lap = Instant::now();
        self.connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        writing.checkpoint += lap.elapsed();
        self.connection.execute_batch("PRAGMA optimize")?;
        Ok(())
    }
}

/// Tells a first build's full-text thread that the writer committed what it was handed.
fn committed(mode: Mode<'_>) -> Result<(), IndexError> {
    match mode {
        Mode::FirstBuild(beside, _) => beside.committed(),
        Mode::Live => Ok(()),
    }
}

fn log_reconciled(stats: &ReconcileStats, reporting: bool, parsing: &Parsing, writing: &Writing) {
    if stats.parsed > 0 {
        writing.log(parsing);
    }
    if stats.parsed + stats.removed > 0 || reporting {
        tracing::info!(
            notes = stats.notes,
            parsed = stats.parsed,
            removed = stats.removed,
            elapsed_ms = stats.elapsed.as_millis() as u64,
            "the index is up to date"
        );
    }
}
