//! `vault_search` and the index rebuild: the request and result types, the choice between the
//! keyword and vector legs, and one result per note or file.

use super::filters::SearchFilters;
use super::semantic;
use crate::index::{self, NoteRow};
use crate::ops::access::SearchVisibility;
use crate::ops::error::OpsError;
use crate::ops::paging::{self, Cursor, VectorList, check_limit};
use crate::ops::shared::{Context, Ops, rfc3339_nanos};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchMode {
    #[default]
    Auto,
    Keyword,
    Semantic,
    Hybrid,
}

#[derive(Debug, Clone, Default)]
pub struct SearchNotes {
    pub query: String,
    pub filters: SearchFilters,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
    pub mode: SearchMode,
}

#[derive(Debug, Clone)]
pub struct SearchResult {
    /// `note`, or `file` for a canvas, PDF or text file found by its indexed text.
    pub kind: &'static str,
    pub path: String,
    /// A note's name, or a file's name with its extension.
    pub title: String,
    pub score: f64,
    pub snippet: String,
    pub bytes: u64,
    pub modified: String,
    /// Empty for files.
    pub tags: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct SearchResults {
    pub results: Vec<SearchResult>,
    /// `keyword`, `semantic` or `hybrid`: what actually answered.
    pub search_mode: &'static str,
    pub reranked: bool,
    /// True when no note had every word and the results match any of them instead.
    pub matched_any_word: bool,
    pub next_cursor: Option<String>,
    /// Said when the requested mode could not be honoured.
    pub notice: Option<String>,
}

impl Ops {
    pub fn search(&self, ctx: &Context, request: SearchNotes) -> Result<SearchResults, OpsError> {
        let limit = check_limit(request.limit)?;
        let filter = self.search_filter(ctx, &request.filters)?;
        // The cursor says which kind of list the first page was; a keyword cursor continues a
        // keyword search whatever the mode.
        let (start, vector_start) = match request.cursor.as_deref() {
            None => (None, None),
            Some(raw) => match Cursor::decode(raw)? {
                Cursor::Keyword(position) => (Some(position), None),
                Cursor::Vector { list, offset } => {
                    let mode = match list {
                        VectorList::Semantic => SearchMode::Semantic,
                        VectorList::Hybrid => SearchMode::Hybrid,
                    };
                    (None, Some((mode, offset)))
                }
                _ => return Err(paging::invalid(raw)),
            },
        };
        let files = file_filter(&filter);
        let shown = self.search_visibility(ctx);
        let notice = if start.is_some() {
            None
        } else {
            let scope = semantic::Scope {
                filter: &filter,
                files: files.as_ref(),
                shown: &shown,
            };
            match self.vector_search(ctx, &request, vector_start, &scope, limit)? {
                Ok(found) => return Ok(found),
                Err(notice) => notice,
            }
        };
        let found = self.keyword_results(
            ctx,
            &shown,
            &request.query,
            &filter,
            files.as_ref(),
            start,
            limit,
        )?;
        Ok(SearchResults { notice, ..found })
    }

    /// One ranked note as a result, with its snippet for `query`.
    pub(super) fn search_result(
        &self,
        shown: &SearchVisibility,
        note: NoteRow,
        score: f64,
        query: &index::MatchQuery,
    ) -> SearchResult {
        SearchResult {
            kind: "note",
            snippet: self.walls.index(shown).snippet(&note.path, query),
            score,
            path: note.path,
            title: note.name,
            bytes: note.size,
            modified: rfc3339_nanos(note.mtime_ns),
            tags: note.tags,
        }
    }
}

/// The part of a note filter that files honour, or `None` when the filter has a condition only a
/// note can meet (tags, properties, type, created), which no file passes.
pub(super) fn file_filter(filter: &index::NoteFilter) -> Option<index::FileFilter> {
    let note_only = !filter.tags.is_empty()
        || !filter.properties.is_empty()
        || filter.note_type.is_some()
        || filter.created != index::TimeRange::default()
        || filter.direct_only
        || filter.only_paths.is_some();
    (!note_only).then(|| index::FileFilter {
        folder: filter.folder.clone(),
        modified: filter.modified,
    })
}

/// What a client-triggered index rebuild did.
#[derive(Debug, Clone)]
pub struct RebuiltIndex {
    pub notes: usize,
    pub parsed: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub elapsed_ms: u64,
}

impl Ops {
    /// Brings the index in line with the vault now; `force` parses every note again. The owner
    /// only: a full rebuild costs minutes on a large vault, so no agent identity may start one.
    pub fn rebuild_index(
        &self,
        ctx: &Context,
        force: bool,
        progress: Option<crate::index::ProgressFn>,
    ) -> Result<RebuiltIndex, OpsError> {
        let owner = self.require_owner(ctx, "only the vault owner may rebuild the index")?;
        let stats = self.walls.index(&owner).reconcile_with(force, progress)?;
        Ok(RebuiltIndex {
            notes: stats.notes,
            parsed: stats.parsed,
            removed: stats.removed,
            unchanged: stats.unchanged,
            elapsed_ms: u64::try_from(stats.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}
