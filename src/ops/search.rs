//! Search operations over the index: ranked keyword search, grep, and the tag, folder, property
//! and recency listings.
//!
//! Inputs are validated here (limits, cursors, dates, tags) and turned into the index's filters;
//! client text never reaches SQL or FTS syntax. Obsidian's excluded files are left out of search
//! results (keyword search, grep, tag and property searches) but stay listable by folder and in
//! `vault_list_notes`. Every function blocks: call it off the async executor.

use std::time::{Duration, Instant, SystemTime};

use jiff::tz::TimeZone;
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::notes::{NoteList, NoteSummary};
use super::paging::{self, Cursor, VectorList, check_limit};
use super::{Context, Ops, OpsError, rfc3339};
use crate::index::{
    self, Count, NoteFilter, NoteRow, PropertyFilter, PropertyValue, RecentOrder, TagFilter,
    TimeRange,
};
use crate::vault::{VaultError, VaultPath};

/// How long a grep may run unless the caller says otherwise.
pub const DEFAULT_GREP_BUDGET: Duration = Duration::from_secs(3);
const MAX_GREP_BUDGET: Duration = Duration::from_secs(30);
/// Longest line text a grep hit returns; longer lines are cut around the match.
const GREP_LINE_CHARS: usize = 300;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchMode {
    #[default]
    Auto,
    Keyword,
    Semantic,
    Hybrid,
}

/// `before`/`on`/`after` bounds on a date; all given bounds must hold.
#[derive(Debug, Clone, Default)]
pub struct DateFilter {
    pub before: Option<String>,
    pub on: Option<String>,
    pub after: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SearchFilters {
    pub folder: Option<String>,
    pub tags: Vec<String>,
    /// Key -> value; a list value requires every listed value, `null` only requires the key.
    pub properties: Map<String, Value>,
    pub note_type: Option<String>,
    pub created: Option<DateFilter>,
    pub modified: Option<DateFilter>,
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
    pub path: String,
    pub title: String,
    pub score: f64,
    pub snippet: String,
    pub bytes: u64,
    pub modified: String,
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

#[derive(Debug, Clone, Default)]
pub struct Grep {
    pub pattern: String,
    pub regex: bool,
    pub case_sensitive: bool,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepHit {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// 0-based character offset of the match in the line.
    pub column: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct GrepResult {
    pub hits: Vec<GrepHit>,
    pub truncated: bool,
    pub timed_out: bool,
}

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

#[derive(Debug, Clone, Default)]
pub struct SearchByProperty {
    pub key: String,
    pub value: Value,
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
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
        let excluded = self.vault.excluded_files();
        let visibility = self.visibility(ctx);
        let keep = |row: &NoteRow| !excluded.excludes(&row.path) && visibility.shows(&row.path);
        let notice = if start.is_some() {
            None
        } else {
            match self.vector_search(ctx, &request, vector_start, &filter, limit, &keep)? {
                Ok(found) => return Ok(found),
                Err(notice) => notice,
            }
        };
        let query = index::parse_query(&request.query);
        let page = self.keyword_search(ctx, &query, &filter, start, limit, &keep)?;
        let results = page
            .hits
            .into_iter()
            .map(|hit| SearchResult {
                snippet: self.index.snippet(&hit.note.path, &query),
                score: hit.score,
                path: hit.note.path,
                title: hit.note.name,
                bytes: hit.note.size,
                modified: rfc3339_nanos(hit.note.mtime_ns),
                tags: hit.note.tags,
            })
            .collect();
        Ok(SearchResults {
            results,
            search_mode: "keyword",
            reranked: false,
            matched_any_word: page.any_word,
            next_cursor: page.next.map(|position| Cursor::Keyword(position).encode()),
            notice,
        })
    }

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

    pub fn grep(&self, ctx: &Context, request: Grep) -> Result<GrepResult, OpsError> {
        let started = Instant::now();
        let limit = check_limit(request.limit)?;
        let budget = match request.timeout_ms {
            None => DEFAULT_GREP_BUDGET,
            Some(0) => {
                return Err(OpsError::invalid_argument(
                    "timeout_ms must be at least 1; omit it for the default of 3000",
                ));
            }
            Some(ms) => Duration::from_millis(ms).min(MAX_GREP_BUDGET),
        };
        let regex = compile_grep(&request, false)?;
        // Notes without any match are skipped with one pass over the whole text. In multi-line
        // mode `^`/`$` match at line ends as they do on single lines; text anchors cannot.
        let prefilter = if request.regex
            && (request.pattern.contains("\\A") || request.pattern.contains("\\z"))
        {
            None
        } else {
            Some(compile_grep(&request, true)?)
        };
        let filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            ..NoteFilter::default()
        };
        let excluded = self.vault.excluded_files();
        let visibility = self.visibility(ctx);
        let paths = self.index.note_paths(&filter)?;
        let mut hits = Vec::new();
        let mut truncated = false;
        let mut timed_out = false;
        'notes: for raw in paths {
            if started.elapsed() >= budget {
                timed_out = true;
                break;
            }
            if excluded.excludes(&raw) || !visibility.shows(&raw) {
                continue;
            }
            let Ok(path) = VaultPath::parse(&raw) else {
                continue;
            };
            let Ok(file) = self.vault.read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&file.bytes);
            if prefilter
                .as_ref()
                .is_some_and(|prefilter| !prefilter.is_match(&text))
            {
                continue;
            }
            for (number, line) in text.lines().enumerate() {
                if let Some(found) = regex.find(line) {
                    if hits.len() == limit {
                        truncated = true;
                        break 'notes;
                    }
                    hits.push(GrepHit {
                        path: raw.clone(),
                        line: number + 1,
                        column: line[..found.start()].chars().count(),
                        text: clip_line(line, found.start(), found.end()),
                    });
                }
                if number % 256 == 255 && started.elapsed() >= budget {
                    timed_out = true;
                    break 'notes;
                }
            }
        }
        Ok(GrepResult {
            hits,
            truncated,
            timed_out,
        })
    }

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
        let (filter, offset, limit) = self.count_request(
            ctx,
            &CountList {
                folder: request.folder.clone(),
                limit: request.limit,
                cursor: request.cursor.clone(),
            },
        )?;
        let order = match request.sort_by {
            RecentSort::Modified => RecentOrder::Modified,
            RecentSort::Created => RecentOrder::Created,
        };
        let excluded = self.vault.excluded_files();
        let visibility = self.visibility(ctx);
        let page = self
            .index
            .list_recent(&filter, order, offset, limit, &|row: &NoteRow| {
                !excluded.excludes(&row.path) && visibility.shows(&row.path)
            })?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|offset| Cursor::Offset(offset).encode()),
        })
    }

    pub fn list_tags(&self, ctx: &Context, request: CountList) -> Result<CountedList, OpsError> {
        let (filter, offset, limit) = self.count_request(ctx, &request)?;
        let page = self.index.tag_counts(&filter, offset, limit)?;
        Ok(counted(page.rows, page.next))
    }

    pub fn list_property_keys(
        &self,
        ctx: &Context,
        request: CountList,
    ) -> Result<CountedList, OpsError> {
        let (filter, offset, limit) = self.count_request(ctx, &request)?;
        let page = self.index.property_key_counts(&filter, offset, limit)?;
        Ok(counted(page.rows, page.next))
    }

    pub fn list_property_values(
        &self,
        ctx: &Context,
        request: ListPropertyValues,
    ) -> Result<CountedList, OpsError> {
        let key = parse_key(&request.key)?;
        let (filter, offset, limit) = self.count_request(
            ctx,
            &CountList {
                folder: request.folder,
                limit: request.limit,
                cursor: request.cursor,
            },
        )?;
        let page = self
            .index
            .property_value_counts(&key, &filter, offset, limit)?;
        Ok(counted(page.rows, page.next))
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
        let excluded = hide_excluded.then(|| self.vault.excluded_files());
        let visibility = self.visibility(ctx);
        let page = self
            .index
            .list_by_path(filter, after.as_deref(), limit, &|row: &NoteRow| {
                excluded
                    .as_ref()
                    .is_none_or(|excluded| !excluded.excludes(&row.path))
                    && visibility.shows(&row.path)
            })?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|path| Cursor::After(path).encode()),
        })
    }

    /// The filter, offset and page size of a paged request, restricted to the notes the caller
    /// may see: counts, recent notes and the orientation vocabulary all page through this.
    pub(super) fn count_request(
        &self,
        ctx: &Context,
        request: &CountList,
    ) -> Result<(NoteFilter, usize, usize), OpsError> {
        let limit = check_limit(request.limit)?;
        let mut filter = NoteFilter {
            folder: self.check_folder(ctx, request.folder.as_deref())?,
            ..NoteFilter::default()
        };
        if self.policy().has_rules_for(&ctx.principal) {
            let visibility = self.visibility(ctx);
            let mut paths = self.index.note_paths(&filter)?;
            paths.retain(|path| visibility.shows(path));
            filter.only_paths = Some(paths);
        }
        let offset = Cursor::offset(request.cursor.as_deref())?;
        Ok((filter, offset, limit))
    }

    fn search_filter(
        &self,
        ctx: &Context,
        filters: &SearchFilters,
    ) -> Result<NoteFilter, OpsError> {
        let mut properties = Vec::new();
        for (key, value) in &filters.properties {
            let key = parse_key(key)?;
            push_property_filters(&key, value, &mut properties)?;
        }
        Ok(NoteFilter {
            folder: self.check_folder(ctx, filters.folder.as_deref())?,
            direct_only: false,
            tags: filters
                .tags
                .iter()
                .map(|tag| parse_tag(tag).map(|tag| TagFilter { tag, exact: false }))
                .collect::<Result<_, _>>()?,
            properties,
            note_type: filters
                .note_type
                .as_ref()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
            // `created` is a property's wall-clock text, stored as written; `modified` is an
            // instant, so its days are the configured zone's days.
            created: date_range("created", filters.created.as_ref(), None)?,
            modified: date_range(
                "modified",
                filters.modified.as_ref(),
                Some(self.time_zone()),
            )?,
            only_paths: None,
        })
    }

    /// Parses an optional folder and checks it exists, so a misspelt folder is `not_found` rather
    /// than an empty result. Returns its vault-relative form (`None` for the whole vault).
    pub(super) fn check_folder(
        &self,
        ctx: &Context,
        raw: Option<&str>,
    ) -> Result<Option<String>, OpsError> {
        let Some(raw) = raw else { return Ok(None) };
        let Some(folder) = VaultPath::parse_folder(raw).map_err(|e| OpsError::path(raw, e))? else {
            return Ok(None);
        };
        let not_found = || OpsError::NotFound {
            what: format!("the folder '{folder}' does not exist"),
            hint: "Omit folder to cover the whole vault, or check the spelling with vault_list_notes.",
        };
        // Before the disk is asked, so a folder the caller may not see answers as a missing one.
        if !self.may_list(ctx, Some(&folder)) {
            return Err(not_found());
        }
        let resolved = self
            .vault
            .resolve(&folder)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if !resolved.exists {
            return Err(not_found());
        }
        match std::fs::metadata(&resolved.fs_path) {
            Ok(metadata) if metadata.is_dir() => Ok(Some(folder.to_string())),
            Ok(_) => Err(OpsError::from_vault(
                VaultError::NotAFolder {
                    path: folder.to_string(),
                },
                None,
            )),
            Err(_) => Err(not_found()),
        }
    }
}

pub(super) fn summary(row: NoteRow) -> NoteSummary {
    NoteSummary {
        modified: rfc3339_nanos(row.mtime_ns),
        path: row.path,
        title: row.name,
        bytes: row.size,
        tags: row.tags,
    }
}

pub(super) fn rfc3339_nanos(nanos: i64) -> String {
    rfc3339(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos.max(0) as u64))
}

fn counted(rows: Vec<Count>, next: Option<usize>) -> CountedList {
    CountedList {
        items: rows
            .into_iter()
            .map(|count| Counted {
                value: count.value,
                count: count.notes,
            })
            .collect(),
        next_cursor: next.map(|offset| Cursor::Offset(offset).encode()),
    }
}

/// A tag as clients type it: any case, with or without `#`.
fn parse_tag(raw: &str) -> Result<String, OpsError> {
    let trimmed = raw.trim();
    let tag = trimmed
        .strip_prefix('#')
        .unwrap_or(trimmed)
        .trim_end_matches('/');
    if tag.is_empty() {
        return Err(OpsError::invalid_argument(format!(
            "tag {raw:?} is empty; give a tag name such as 'project' or '#project/active'"
        )));
    }
    Ok(tag.to_string())
}

fn parse_key(raw: &str) -> Result<String, OpsError> {
    let key = raw.trim();
    if key.is_empty() {
        return Err(OpsError::invalid_argument(
            "the property key is empty; call vault_list_property_keys to see the keys in use",
        ));
    }
    Ok(key.to_string())
}

/// One filter per wanted value: a list asks for every value in it, `null` only for the key.
fn push_property_filters(
    key: &str,
    value: &Value,
    out: &mut Vec<PropertyFilter>,
) -> Result<(), OpsError> {
    let wanted = |text: String, number: Option<f64>| PropertyFilter {
        key: key.to_string(),
        value: Some(PropertyValue { text, number }),
    };
    match value {
        Value::Null => out.push(PropertyFilter {
            key: key.to_string(),
            value: None,
        }),
        Value::String(text) => out.push(wanted(text.clone(), index::number_in(text))),
        Value::Number(number) => out.push(wanted(number.to_string(), number.as_f64())),
        Value::Bool(flag) => out.push(wanted(flag.to_string(), None)),
        Value::Array(items) => {
            for item in items {
                if item.is_array() {
                    return Err(OpsError::invalid_argument(format!(
                        "the value for property {key:?} nests a list in a list; give a value or a flat list of values"
                    )));
                }
                push_property_filters(key, item, out)?;
            }
        }
        Value::Object(_) => {
            return Err(OpsError::invalid_argument(format!(
                "the value for property {key:?} is an object; give text, a number, true/false, a list of those, or null for any value"
            )));
        }
    }
    Ok(())
}

/// `before`/`on`/`after` as a half-open range of Unix seconds. Dates are `YYYY-MM-DD`;
/// date-times (`YYYY-MM-DDTHH:MM[:SS]`) bound `before`/`after` at that moment. With a `zone`,
/// dates and times are that zone's wall clock; without one, they compare with wall-clock values
/// stored as if they were UTC.
fn date_range(
    field: &str,
    filter: Option<&DateFilter>,
    zone: Option<&TimeZone>,
) -> Result<TimeRange, OpsError> {
    let mut range = TimeRange::default();
    let Some(filter) = filter else {
        return Ok(range);
    };
    let parse = |which: &str, raw: &str| -> Result<(i64, bool), OpsError> {
        let raw = raw.trim();
        index::parse_date_time(raw)
            .map(|seconds| (seconds, raw.len() == 10))
            .ok_or_else(|| {
                OpsError::invalid_argument(format!(
                    "{field}.{which} {raw:?} is not a date; use YYYY-MM-DD (or YYYY-MM-DDTHH:MM), e.g. \"2025-03-01\""
                ))
            })
    };
    const DAY: i64 = 86_400;
    let mut tighten_from = |from: i64| range.from = Some(range.from.map_or(from, |f| f.max(from)));
    if let Some(raw) = &filter.after {
        let (at, whole_day) = parse("after", raw)?;
        tighten_from(if whole_day { at + DAY } else { at + 1 });
    }
    if let Some(raw) = &filter.on {
        let (at, _) = parse("on", raw)?;
        let day = at - at.rem_euclid(DAY);
        tighten_from(day);
        range.until = Some(range.until.map_or(day + DAY, |u| u.min(day + DAY)));
    }
    if let Some(raw) = &filter.before {
        let (at, _) = parse("before", raw)?;
        range.until = Some(range.until.map_or(at, |u| u.min(at)));
    }
    if let Some(zone) = zone {
        // Wall-clock seconds to the zone's instants; monotonic, so the range keeps its meaning.
        let instant = |wall: i64| -> i64 {
            jiff::Timestamp::from_second(wall)
                .ok()
                .map(|stamp| stamp.to_zoned_datetime(TimeZone::UTC).datetime())
                .and_then(|civil| zone.to_timestamp(civil).ok())
                .map_or(wall, |stamp| stamp.as_second())
        };
        range.from = range.from.map(instant);
        range.until = range.until.map(instant);
    }
    Ok(range)
}

fn compile_grep(request: &Grep, multi_line: bool) -> Result<Regex, OpsError> {
    if request.pattern.is_empty() {
        return Err(OpsError::invalid_argument(
            "pattern is empty; give the text (or, with regex: true, the regular expression) to find",
        ));
    }
    let source = if request.regex {
        request.pattern.clone()
    } else {
        regex::escape(&request.pattern)
    };
    RegexBuilder::new(&source)
        .case_insensitive(!request.case_sensitive)
        .multi_line(multi_line)
        .crlf(multi_line)
        .size_limit(4 << 20)
        .dfa_size_limit(8 << 20)
        .build()
        .map_err(|error| {
            OpsError::invalid_argument(format!(
                "pattern {:?} is not a valid regular expression ({}); fix it, or pass regex: false to search for the literal text",
                request.pattern,
                error.to_string().lines().last().unwrap_or("invalid syntax").trim()
            ))
        })
}

/// The line, or a window of it around the match when it is very long.
fn clip_line(line: &str, start: usize, end: usize) -> String {
    let line = line.trim_end_matches('\r');
    if line.chars().count() <= GREP_LINE_CHARS {
        return line.to_string();
    }
    let before: Vec<(usize, char)> = line[..start.min(line.len())].char_indices().collect();
    let from = before
        .len()
        .checked_sub(GREP_LINE_CHARS / 3)
        .and_then(|at| before.get(at))
        .map_or(0, |(at, _)| *at);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut last = from;
    for (taken, (at, character)) in line[from..].char_indices().enumerate() {
        if taken >= GREP_LINE_CHARS && from + at >= end {
            break;
        }
        out.push(character);
        last = from + at + character.len_utf8();
    }
    if last < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_days_are_the_configured_zones_days() {
        let tokyo = TimeZone::get("Asia/Tokyo").expect("bundled tz database");
        let on = date_range(
            "modified",
            Some(&DateFilter {
                on: Some("1970-01-02".into()),
                ..DateFilter::default()
            }),
            Some(&tokyo),
        )
        .expect("valid");
        // Midnight in Tokyo (UTC+9) is 15:00 UTC the day before.
        let nine_hours = 9 * 3600;
        assert_eq!(
            (on.from, on.until),
            (Some(86_400 - nine_hours), Some(172_800 - nine_hours))
        );
    }

    #[test]
    fn date_ranges() {
        let range = |filter: DateFilter| date_range("modified", Some(&filter), None);
        let on = range(DateFilter {
            on: Some("1970-01-02".into()),
            ..DateFilter::default()
        })
        .expect("valid");
        assert_eq!((on.from, on.until), (Some(86_400), Some(172_800)));
        let after = range(DateFilter {
            after: Some("1970-01-02".into()),
            before: Some("1970-01-05".into()),
            ..DateFilter::default()
        })
        .expect("valid");
        assert_eq!((after.from, after.until), (Some(172_800), Some(345_600)));
        assert!(
            range(DateFilter {
                before: Some("last week".into()),
                ..DateFilter::default()
            })
            .is_err()
        );
    }

    #[test]
    fn long_lines_are_clipped_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(1000), "b".repeat(1000));
        let start = line.find("needle").expect("present");
        let clipped = clip_line(&line, start, start + 6);
        assert!(clipped.contains("needle"));
        assert!(clipped.starts_with('…') && clipped.ends_with('…'));
        assert!(clipped.chars().count() <= GREP_LINE_CHARS + 2);
    }
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
        if ctx.principal != crate::acl::Principal::Owner {
            return Err(OpsError::PathForbidden {
                input: "/".into(),
                reason: "only the vault owner may rebuild the index".into(),
            });
        }
        let stats = self.index.reconcile_with(force, progress)?;
        Ok(RebuiltIndex {
            notes: stats.notes,
            parsed: stats.parsed,
            removed: stats.removed,
            unchanged: stats.unchanged,
            elapsed_ms: u64::try_from(stats.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}
