//! Paging over ordered queries while dropping rows the caller may not see, fetching in batches,
//! so a page is never short because of them: by offset, or after a path (a keyset cursor).

use super::{NoteRow, Page};

/// Collects up to `limit` kept rows starting at row `offset` of an ordered query, fetching in
/// batches; returns the offset of the first kept row that did not fit.
pub(in crate::index) fn page_by_offset<R>(
    offset: usize,
    limit: usize,
    fetch: impl FnMut(usize, usize) -> rusqlite::Result<Vec<R>>,
    keep: &dyn Fn(&R) -> bool,
) -> rusqlite::Result<Page<R, usize>> {
    let page = page_by_offset_at(offset, limit, fetch, keep)?;
    Ok(Page {
        rows: page.rows.into_iter().map(|(_, row)| row).collect(),
        next: page.next,
    })
}

/// `page_by_offset` with each row's own offset in the query, so a caller that uses only the head
/// of a page knows where the rest starts.
pub(super) fn page_by_offset_at<R>(
    offset: usize,
    limit: usize,
    mut fetch: impl FnMut(usize, usize) -> rusqlite::Result<Vec<R>>,
    keep: &dyn Fn(&R) -> bool,
) -> rusqlite::Result<Page<(usize, R), usize>> {
    // One more row than the page, to know whether another page follows. Each batch then doubles:
    // a caller who may see few of the rows would otherwise cost a query per page's worth of rows,
    // each skipping its whole offset again.
    let mut batch = limit + 1;
    let mut rows = Vec::new();
    let mut at = offset;
    loop {
        let fetched = fetch(at, batch)?;
        let count = fetched.len();
        for row in fetched {
            at += 1;
            if keep(&row) {
                if rows.len() == limit {
                    return Ok(Page {
                        rows,
                        next: Some(at - 1),
                    });
                }
                rows.push((at - 1, row));
            }
        }
        if count < batch {
            return Ok(Page { rows, next: None });
        }
        batch = batch.saturating_mul(2).min(MAX_BATCH.max(limit + 1));
    }
}

/// The most rows one batch fetches: a query's rows are held in memory until kept or dropped.
const MAX_BATCH: usize = 4096;

/// Like `page_by_offset` for queries ordered by path, resuming after a path (a keyset cursor, so
/// notes created or deleted between pages never cause a skip or a repeat).
pub(super) fn page_by_path(
    after: Option<&str>,
    limit: usize,
    mut fetch: impl FnMut(Option<&str>, usize) -> rusqlite::Result<Vec<NoteRow>>,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Page<NoteRow, String>> {
    let batch = limit + 1;
    let mut rows: Vec<NoteRow> = Vec::new();
    let mut cursor = after.map(str::to_string);
    loop {
        let fetched = fetch(cursor.as_deref(), batch)?;
        let count = fetched.len();
        for row in fetched {
            cursor = Some(row.path.clone());
            if keep(&row) {
                if rows.len() == limit {
                    let next = rows.last().map(|last| last.path.clone());
                    return Ok(Page { rows, next });
                }
                rows.push(row);
            }
        }
        if count < batch {
            return Ok(Page { rows, next: None });
        }
    }
}
