//! Note listings from the index: by tag, by folder, by property and by recency.
//!
//! Tag, property and recency listings are searches and leave Obsidian's excluded files out;
//! listing by folder is browsing and keeps them, as `vault_list_notes` does.

use serde_json::Value;

use crate::index::{NoteFilter, NoteRow, RecentOrder, TagFilter};
use crate::ops::error::OpsError;
use crate::ops::notes::{NoteList, summary};
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops};

use super::filters::{parse_key, parse_tag, push_property_filters};

#[derive(Debug, Clone, Default)]
pub struct SearchByTag {
    pub tag: String,
    pub exact: bool,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SearchByFolder {
    pub folder: String,
    pub recursive: bool,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecentSort {
    #[default]
    Modified,
    Created,
}

#[derive(Debug, Clone, Default)]
pub struct RecentNotes {
    pub folder: Option<String>,
    pub sort_by: RecentSort,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SearchByProperty {
    pub key: String,
    pub value: Value,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

impl Ops {
    pub fn search_by_tag(&self, ctx: &Context, request: SearchByTag) -> Result<NoteList, OpsError> {
        let tag = parse_tag(&request.tag)?;
        let filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            tags: vec![TagFilter {
                tag,
                exact: request.exact,
            }],
            ..NoteFilter::default()
        };
        self.list_by_path(ctx, &filter, request.limit, request.cursor.as_deref(), true)
    }

    pub fn search_by_folder(
        &self,
        ctx: &Context,
        request: SearchByFolder,
    ) -> Result<NoteList, OpsError> {
        let folder = self.check_folder(ctx, Some(&request.folder))?;
        let filter = NoteFilter {
            folder,
            direct_only: !request.recursive,
            ..NoteFilter::default()
        };
        self.list_by_path(
            ctx,
            &filter,
            request.limit,
            request.cursor.as_deref(),
            false,
        )
    }

    pub fn recent_notes(&self, ctx: &Context, request: RecentNotes) -> Result<NoteList, OpsError> {
        // The caller's visibility is applied while paging (`keep`), so a restricted caller's
        // recent notes cost the rows read up to its page, not a list of every note it may see.
        let limit = check_limit(request.limit)?;
        let filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            ..NoteFilter::default()
        };
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let order = match request.sort_by {
            RecentSort::Modified => RecentOrder::Modified,
            RecentSort::Created => RecentOrder::Created,
        };
        let shown = self.search_visibility(ctx);
        let page = self.walls.index(&shown).list_recent(
            &filter,
            order,
            offset,
            limit,
            &|row: &NoteRow| shown.shows(&row.path),
        )?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|offset| Cursor::Offset(offset).encode()),
        })
    }

    pub fn search_by_property(
        &self,
        ctx: &Context,
        request: SearchByProperty,
    ) -> Result<NoteList, OpsError> {
        let key = parse_key(&request.key)?;
        let mut properties = Vec::new();
        push_property_filters(&key, &request.value, &mut properties)?;
        let filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            properties,
            ..NoteFilter::default()
        };
        self.list_by_path(ctx, &filter, request.limit, request.cursor.as_deref(), true)
    }

    /// A page of notes in path order; `hide_excluded` leaves out Obsidian's excluded files.
    fn list_by_path(
        &self,
        ctx: &Context,
        filter: &NoteFilter,
        limit: Option<u32>,
        cursor: Option<&str>,
        hide_excluded: bool,
    ) -> Result<NoteList, OpsError> {
        let limit = check_limit(limit)?;
        let after = Cursor::after(cursor)?;
        let visibility = self.visibility(ctx);
        let excluded = hide_excluded.then(|| self.walls.vault(&visibility).excluded_files());
        let page = self.walls.index(&visibility).list_by_path(
            filter,
            after.as_deref(),
            limit,
            &|row: &NoteRow| {
                excluded
                    .as_ref()
                    .is_none_or(|excluded| !excluded.excludes(&row.path))
                    && visibility.shows(&row.path)
            },
        )?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|path| Cursor::After(path).encode()),
        })
    }
}
