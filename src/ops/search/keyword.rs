//! The keyword leg of search: BM25 over FTS5, every word first and any word when no note has them
//! all, ranked with statistics over what the caller may see.

use super::SearchResults;
use crate::index::{self, NoteRow, SearchPosition};
use crate::ops::paging::Cursor;
use crate::ops::{Context, Ops, OpsError};

impl Ops {
    /// Keyword search for this caller: ranked with statistics over what it may see when some rule
    /// restricts it, so no score or order depends on a note it cannot read.
    pub(super) fn keyword_search(
        &self,
        ctx: &Context,
        query: &index::MatchQuery,
        filter: &index::NoteFilter,
        start: Option<index::SearchPosition>,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<index::SearchPage, index::IndexError> {
        if self.policy().has_rules_for(&ctx.principal) {
            self.index.search_scoped(query, filter, start, limit, keep)
        } else {
            self.index.search(query, filter, start, limit, keep)
        }
    }

    /// A page of keyword results for `query`, continuing at `start`; no notice.
    pub(super) fn keyword_results(
        &self,
        ctx: &Context,
        query: &str,
        filter: &index::NoteFilter,
        start: Option<SearchPosition>,
        limit: usize,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> Result<SearchResults, OpsError> {
        let query = index::parse_query(query);
        let page = self.keyword_search(ctx, &query, filter, start, limit, keep)?;
        let results = page
            .hits
            .into_iter()
            .map(|hit| self.search_result(hit.note, hit.score, &query))
            .collect();
        Ok(SearchResults {
            results,
            search_mode: "keyword",
            reranked: false,
            matched_any_word: page.any_word,
            next_cursor: page.next.map(|position| Cursor::Keyword(position).encode()),
            notice: None,
        })
    }
}
