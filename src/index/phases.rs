//! Where a reconcile's time goes: reading and parsing on the parser threads, each table's
//! inserts, commits and the full-text merge on the writer thread. Logged at `debug` after a
//! reconcile that parsed notes (`QUIRE_LOG=quire=debug quire index --rebuild …`), so the CPU split
//! of a cold build can be measured on any machine; timing a statement costs tens of nanoseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Time the parser threads spent, summed over them.
#[derive(Debug, Default)]
pub(super) struct Parsing {
    /// Opening and reading note files.
    pub read: Nanos,
    /// Hashing and parsing (markdown model, task readings, row values).
    pub parse: Nanos,
}

/// Time the writer thread spent, per table and step.
#[derive(Debug, Default)]
pub(super) struct Writing {
    pub notes: Duration,
    pub fts: Duration,
    pub links: Duration,
    pub tags: Duration,
    pub tasks: Duration,
    pub properties: Duration,
    pub chunks: Duration,
    pub commit: Duration,
    /// Building the secondary indexes after a bulk load.
    pub indexes: Duration,
    /// Merging the full-text segments into one.
    pub merge: Duration,
    /// The final checkpoint, copying what is left of the WAL into the database.
    pub checkpoint: Duration,
}

/// Nanoseconds added from several threads.
#[derive(Debug, Default)]
pub(super) struct Nanos(AtomicU64);

impl Nanos {
    pub fn add(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
    }

    fn millis(&self) -> u64 {
        self.0.load(Ordering::Relaxed) / 1_000_000
    }
}

/// A stopwatch read in consecutive laps.
pub(super) struct Lap(Instant);

impl Lap {
    pub fn start() -> Lap {
        Lap(Instant::now())
    }

    /// The time since the last lap (or the start), starting the next one.
    pub fn split(&mut self) -> Duration {
        let now = Instant::now();
        let elapsed = now - self.0;
        self.0 = now;
        elapsed
    }
}

impl Writing {
    pub fn log(&self, parsing: &Parsing) {
        let ms = |d: Duration| d.as_millis() as u64;
        tracing::debug!(
            read_ms = parsing.read.millis(),
            parse_ms = parsing.parse.millis(),
            notes_ms = ms(self.notes),
            fts_ms = ms(self.fts),
            links_ms = ms(self.links),
            tags_ms = ms(self.tags),
            tasks_ms = ms(self.tasks),
            properties_ms = ms(self.properties),
            chunks_and_memory_ms = ms(self.chunks),
            commit_ms = ms(self.commit),
            secondary_indexes_ms = ms(self.indexes),
            fts_merge_ms = ms(self.merge),
            checkpoint_ms = ms(self.checkpoint),
            "where the reconcile's time went (parser threads: read, parse; the rest on the writer)"
        );
    }
}
