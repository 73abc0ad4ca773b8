//! Search filters as clients give them (folder, tags, properties, note type, created and modified
//! dates) turned into the index's `NoteFilter`; client text never reaches SQL.

use jiff::tz::TimeZone;
use serde_json::{Map, Value};

use crate::index::{self, NoteFilter, PropertyFilter, PropertyValue, TagFilter, TimeRange};
use crate::ops::error::OpsError;
use crate::ops::shared::{Context, Ops};

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

impl Ops {
    /// The notes matching `filters` that the caller may read, in path order, at most `limit`
    /// (one more tells the caller there were more): the candidates of a batch edit.
    pub(crate) fn notes_matching(
        &self,
        ctx: &Context,
        filters: &SearchFilters,
        limit: usize,
    ) -> Result<Vec<String>, OpsError> {
        let filter = self.search_filter(ctx, filters)?;
        let visibility = self.visibility(ctx);
        let page = self.walls.index(&visibility).list_by_path(
            &filter,
            None,
            limit + 1,
            &|row: &index::NoteRow| visibility.shows(&row.path),
        )?;
        Ok(page.rows.into_iter().map(|row| row.path).collect())
    }

    pub(super) fn search_filter(
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
}

/// A tag as clients type it: any case, with or without `#`.
pub(super) fn parse_tag(raw: &str) -> Result<String, OpsError> {
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

pub(super) fn parse_key(raw: &str) -> Result<String, OpsError> {
    let key = raw.trim();
    if key.is_empty() {
        return Err(OpsError::invalid_argument(
            "the property key is empty; call vault_list_property_keys to see the keys in use",
        ));
    }
    Ok(key.to_string())
}

/// One filter per wanted value: a list asks for every value in it, `null` only for the key.
pub(super) fn push_property_filters(
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
}
