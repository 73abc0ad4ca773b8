//! Read queries over the index: ranked full-text search, filtered note lists, and the tag and
//! property aggregates. Each runs on one read connection, off the async executor.
//!
//! Filters become SQL with bound parameters only; client text never becomes SQL or FTS syntax.
//! Paths a caller wants hidden (Obsidian's excluded files) are dropped here while paging, so a
//! page is never short because of them and cursors stay exact.
//!
//! This file owns the types every query shares; the queries live in rooms: `conditions.rs`
//! (filters as SQL), `paging.rs`, `lists.rs`, `search.rs` (BM25 by FTS5), `scoped.rs` (BM25 over
//! what a restricted caller sees), `counts.rs`, `judged.rs` (counts for a caller judged folder by folder), `files.rs`, `facts.rs` (what Bases reads of every file), `memory.rs` and `dump.rs`.

mod conditions;
mod counts;
mod dump;
mod facts;
mod files;
mod judged;
mod lists;
mod memory;
mod paging;
mod parts;
mod scoped;
mod search;

use rusqlite::Row;

pub(in crate::index) use conditions::Conditions;
pub use counts::{
    CountScope, folder_counts, property_key_counts, property_value_counts, tag_counts,
};
pub use dump::dump;
pub use facts::{FileRecord, RecordFilter, file_records, file_records_where};
pub use files::{FileFilter, FileHit, search_files, search_files_scoped};
pub use judged::Judge;
pub use lists::{list_by_path, list_recent, note_count, note_paths};
pub(in crate::index) use memory::memory_hit;
pub use memory::{MemoryHit, search_memory};
pub(in crate::index) use paging::page_by_offset;
pub use scoped::search_scoped;
pub use search::search;

/// One note as lists show it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRow {
    pub path: String,
    /// File name without `.md`.
    pub name: String,
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Creation time in Unix seconds: the `created` property, else the file's birth time.
    pub created: i64,
    pub tags: Vec<String>,
}

/// A half-open time range in Unix seconds: `from <= t < until`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub from: Option<i64>,
    pub until: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TagFilter {
    /// Without `#`; compared ignoring case.
    pub tag: String,
    /// Only this tag, not its nested tags (`project` without `project/a`).
    pub exact: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropertyFilter {
    /// Compared ignoring case.
    pub key: String,
    /// `None` matches any note that has the key. Text is compared ignoring case; a number also
    /// matches numeric values equal to it.
    pub value: Option<PropertyValue>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropertyValue {
    pub text: String,
    pub number: Option<f64>,
}

/// Conditions every listed note must meet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoteFilter {
    /// Vault-relative folder; `None` or `""` is the whole vault.
    pub folder: Option<String>,
    /// With `folder`: only notes directly inside it, not in subfolders.
    pub direct_only: bool,
    pub tags: Vec<TagFilter>,
    pub properties: Vec<PropertyFilter>,
    /// Compared ignoring case with the `type` property.
    pub note_type: Option<String>,
    pub created: TimeRange,
    pub modified: TimeRange,
    /// When set, only these notes count (the caller's access policy chose them); tag and
    /// property counts use it so a note the caller may not read never adds to a count.
    pub only_paths: Option<Vec<String>>,
}

/// A page of rows, and where the next page starts.
#[derive(Debug, Clone)]
pub struct Page<R, C> {
    pub rows: Vec<R>,
    pub next: Option<C>,
}

/// Where a search page starts: a row offset, and whether the query fell back to matching any word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchPosition {
    pub offset: usize,
    pub any_word: bool,
}

/// A page of search hits.
#[derive(Debug, Clone)]
pub struct SearchPage {
    pub hits: Vec<SearchHit>,
    pub next: Option<SearchPosition>,
    /// True when no note had every word, so the hits match any of them.
    pub any_word: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub note: NoteRow,
    /// Higher is better (the negated BM25 rank); 0 when there was no query text.
    pub score: f64,
    /// The hit's own offset in its ranked list: where a page that stops before it resumes.
    pub at: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecentOrder {
    Modified,
    Created,
}

/// A tag, property key or property value with the number of notes that have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The most common spelling among case variants.
    pub value: String,
    pub notes: u64,
}

pub(in crate::index) const NOTE_COLUMNS: &str =
    "n.path, n.name, n.size, n.mtime, n.created, n.tags";

pub(in crate::index) fn note_row(row: &Row<'_>) -> rusqlite::Result<NoteRow> {
    let tags: String = row.get(5)?;
    Ok(NoteRow {
        path: row.get(0)?,
        name: row.get(1)?,
        size: row.get::<_, i64>(2)?.max(0) as u64,
        mtime_ns: row.get(3)?,
        created: row.get(4)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}
