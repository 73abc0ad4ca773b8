//! The keyword leg of search: BM25 over FTS5 for notes and for the indexed text of other files
//! (canvases, PDFs, text formats), ranked with statistics over what the caller may see, merged
//! by score on each page. Every word first, and any word only when neither notes nor files have
//! them all: one decision per query, which the cursor carries.

use super::notes::{SearchResult, SearchResults};
use crate::index::{self, FileFilter, FileHit, NoteRow, SearchHit, SearchPosition};
use crate::ops::access::SearchVisibility;
use crate::ops::error::OpsError;
use crate::ops::paging::{Cursor, KeywordPosition};
use crate::ops::shared::{Context, Ops, rfc3339_nanos};

impl Ops {
    /// Keyword search for this caller: ranked with statistics over what it may see when some rule
    /// restricts it, so no score or order depends on a note it cannot read.
    pub(super) fn keyword_search(
        &self,
        ctx: &Context,
        shown: &SearchVisibility,
        query: &index::MatchQuery,
        filter: &index::NoteFilter,
        start: Option<index::SearchPosition>,
        limit: usize,
    ) -> Result<index::SearchPage, index::IndexError> {
        let keep = &|row: &NoteRow| shown.shows(&row.path);
        let index = self.walls.index(shown);
        if self.policy().has_rules_for(&ctx.principal) {
            index.search_scoped(query, filter, start, limit, keep)
        } else {
            index.search(query, filter, start, limit, keep)
        }
    }

    /// Keyword search over files for this caller, scoped like `keyword_search`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn file_search(
        &self,
        ctx: &Context,
        shown: &SearchVisibility,
        query: &index::MatchQuery,
        expression: &str,
        filter: &FileFilter,
        offset: usize,
        limit: usize,
    ) -> Result<index::Page<FileHit, usize>, index::IndexError> {
        let keep = &|path: &str| shown.shows(path);
        let index = self.walls.index(shown);
        if self.policy().has_rules_for(&ctx.principal) {
            index.search_files_scoped(query, expression, filter, offset, limit, keep)
        } else {
            index.search_files_in(expression, filter, offset, limit, keep)
        }
    }

    /// A page of keyword results for `query`, continuing at `start`, notes and (when `files` is
    /// given: the filters have a meaning for files) files merged by score; no notice.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn keyword_results(
        &self,
        ctx: &Context,
        shown: &SearchVisibility,
        query: &str,
        filter: &index::NoteFilter,
        files: Option<&FileFilter>,
        start: Option<KeywordPosition>,
        limit: usize,
    ) -> Result<SearchResults, OpsError> {
        let query = index::parse_query(query);
        // Without words there is nothing to rank files by; the notes list newest first.
        let files = files.filter(|_| query.all.is_some());
        let first_page = start.is_none();
        let start = start.unwrap_or(KeywordPosition {
            notes: Some(0),
            files: Some(0),
            any_word: false,
        });
        let run = |any_word: bool| -> Result<Pages, OpsError> {
            let notes = match start.notes {
                Some(offset) => Some(self.keyword_search(
                    ctx,
                    shown,
                    &query,
                    filter,
                    Some(SearchPosition { offset, any_word }),
                    limit,
                )?),
                None => None,
            };
            let expression = if any_word {
                query.any.as_ref().or(query.all.as_ref())
            } else {
                query.all.as_ref()
            };
            let files = match (start.files, files, expression) {
                (Some(offset), Some(files), Some(expression)) => {
                    Some(self.file_search(ctx, shown, &query, expression, files, offset, limit)?)
                }
                _ => None,
            };
            Ok((notes, files))
        };
        let mut any_word = start.any_word;
        let (mut notes, mut files) = run(any_word)?;
        let empty = notes.as_ref().is_none_or(|page| page.hits.is_empty())
            && files.as_ref().is_none_or(|page| page.rows.is_empty());
        if first_page && empty && query.any.is_some() {
            any_word = true;
            (notes, files) = run(any_word)?;
        }
        let (merged, next_notes, next_files) = merge(notes, files, limit);
        let results = merged
            .into_iter()
            .map(|hit| match hit {
                Hit::Note(hit) => self.search_result(shown, hit.note, hit.score, &query),
                Hit::File(hit) => self.file_result(shown, hit, &query),
            })
            .collect();
        let next = (next_notes.is_some() || next_files.is_some()).then(|| {
            Cursor::Keyword(KeywordPosition {
                notes: next_notes,
                files: next_files,
                any_word,
            })
            .encode()
        });
        Ok(SearchResults {
            results,
            search_mode: "keyword",
            reranked: false,
            matched_any_word: any_word,
            next_cursor: next,
            notice: None,
        })
    }

    /// One ranked file as a result, with a snippet of its indexed text.
    pub(super) fn file_result(
        &self,
        shown: &SearchVisibility,
        hit: FileHit,
        query: &index::MatchQuery,
    ) -> SearchResult {
        SearchResult {
            kind: "file",
            snippet: self.walls.index(shown).file_snippet(&hit.body, query),
            title: hit.path.rsplit('/').next().unwrap_or(&hit.path).to_string(),
            score: hit.score,
            bytes: u64::try_from(hit.size).unwrap_or(0),
            modified: rfc3339_nanos(hit.mtime),
            path: hit.path,
            tags: Vec::new(),
        }
    }
}

/// A page of each list: notes, and files when they are searched.
type Pages = (
    Option<index::SearchPage>,
    Option<index::Page<FileHit, usize>>,
);

enum Hit {
    Note(SearchHit),
    File(FileHit),
}

/// The best `limit` of two pages, each best first, and where each list resumes after them
/// (`None` when a list is done or was not searched). Ties go to the note, so the order is
/// deterministic.
fn merge(
    notes: Option<index::SearchPage>,
    files: Option<index::Page<FileHit, usize>>,
    limit: usize,
) -> (Vec<Hit>, Option<usize>, Option<usize>) {
    let (note_hits, mut next_notes) = match notes {
        Some(page) => (page.hits, page.next.map(|next| next.offset)),
        None => (Vec::new(), None),
    };
    let (file_hits, mut next_files) = match files {
        Some(page) => (page.rows, page.next),
        None => (Vec::new(), None),
    };
    let mut note_hits = note_hits.into_iter().peekable();
    let mut file_hits = file_hits.into_iter().peekable();
    let mut merged = Vec::new();
    while merged.len() < limit {
        let take_file = match (note_hits.peek(), file_hits.peek()) {
            (Some(note), Some(file)) => file.score > note.score,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => break,
        };
        let hit = if take_file {
            file_hits.next().map(Hit::File)
        } else {
            note_hits.next().map(Hit::Note)
        };
        merged.extend(hit);
    }
    // A hit left over is where its list resumes; the pages' own cursors count past them all.
    if let Some(note) = note_hits.next() {
        next_notes = Some(note.at);
    }
    if let Some(file) = file_hits.next() {
        next_files = Some(file.at);
    }
    (merged, next_notes, next_files)
}
