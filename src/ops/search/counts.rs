//! The counted vocabularies: tags, property keys and property values with the number of notes
//! carrying each, over the notes the caller may see.

use crate::index::{Count, CountScope, Judge, NoteFilter};
use crate::ops::access::Visibility;
use crate::ops::error::OpsError;
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops};

use super::filters::parse_key;

/// A listing of counted values (tags, property keys or values).
#[derive(Debug, Clone, Default)]
pub struct CountList {
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Counted {
    pub value: String,
    /// Notes that have it.
    pub count: u64,
    /// For a property key: the type the vault declares for it (`.obsidian/types.json`).
    pub declared_type: Option<String>,
}

#[derive(Debug, Clone)]
pub struct CountedList {
    pub items: Vec<Counted>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ListPropertyValues {
    pub key: String,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

impl Ops {
    pub fn list_tags(&self, ctx: &Context, request: CountList) -> Result<CountedList, OpsError> {
        let counting = self.counting(ctx, &request)?;
        let index = self.walls.index(&counting.visibility);
        let page =
            counting.scope(|scope| index.tag_counts(scope, counting.offset, counting.limit))?;
        Ok(counted(page.rows, page.next))
    }

    pub fn list_property_keys(
        &self,
        ctx: &Context,
        request: CountList,
    ) -> Result<CountedList, OpsError> {
        let counting = self.counting(ctx, &request)?;
        let index = self.walls.index(&counting.visibility);
        let page = counting
            .scope(|scope| index.property_key_counts(scope, counting.offset, counting.limit))?;
        let types = self.walls.vault(&counting.visibility).property_types();
        let mut list = counted(page.rows, page.next);
        for item in &mut list.items {
            item.declared_type = types.get(&item.value.to_lowercase()).cloned();
        }
        Ok(list)
    }

    pub fn list_property_values(
        &self,
        ctx: &Context,
        request: ListPropertyValues,
    ) -> Result<CountedList, OpsError> {
        let key = parse_key(&request.key)?;
        let counting = self.counting(
            ctx,
            &CountList {
                folder: request.folder,
                limit: request.limit,
                cursor: request.cursor,
            },
        )?;
        let index = self.walls.index(&counting.visibility);
        let page = counting.scope(|scope| {
            index.property_value_counts(&key, scope, counting.offset, counting.limit)
        })?;
        Ok(counted(page.rows, page.next))
    }

    /// What a counted listing counts: the folder asked for, the page, and the caller's visibility.
    fn counting(&self, ctx: &Context, request: &CountList) -> Result<Counting, OpsError> {
        Ok(Counting {
            limit: check_limit(request.limit)?,
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            offset: Cursor::offset(request.cursor.as_deref())?,
            visibility: self.visibility(ctx),
        })
    }
}

struct Counting {
    folder: Option<String>,
    offset: usize,
    limit: usize,
    visibility: Visibility,
}

impl Counting {
    fn scope<T>(&self, count: impl FnOnce(&CountScope<'_>) -> T) -> T {
        visible_scope(&self.visibility, self.folder.as_deref(), count)
    }
}

/// Runs `count` over the notes below `folder` the caller may see: every note when no rule can
/// restrict it, else whole folders as the ACL judges them, with the notes it must judge alone
/// (symbolic links, unusual names, folders a rule looks into) judged one by one.
pub(in crate::ops) fn visible_scope<T>(
    visibility: &Visibility,
    folder: Option<&str>,
    count: impl FnOnce(&CountScope<'_>) -> T,
) -> T {
    if visibility.unrestricted() {
        let filter = NoteFilter {
            folder: folder.map(str::to_owned),
            ..NoteFilter::default()
        };
        return count(&CountScope::Notes(&filter));
    }
    let judge_folder = |folder: &str| visibility.folder_shows(folder);
    let note = |path: &str| visibility.shows(path);
    count(&CountScope::Judged {
        folder,
        judge: Judge {
            folder: &judge_folder,
            note: &note,
        },
    })
}
fn counted(rows: Vec<Count>, next: Option<usize>) -> CountedList {
    CountedList {
        items: rows
            .into_iter()
            .map(|count| Counted {
                value: count.value,
                count: count.notes,
                declared_type: None,
            })
            .collect(),
        next_cursor: next.map(|offset| Cursor::Offset(offset).encode()),
    }
}
