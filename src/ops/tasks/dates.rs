//! Dates as clients give them (`YYYY-MM-DD`, `today`, `tomorrow`, `yesterday`), the bounds
//! a listing filters by, and how listings order tasks without one.

use jiff::ToSpan;
use jiff::civil::Date;

use super::types::TaskDateFilter;
use crate::markdown::tasks::TaskDate;
use crate::ops::error::OpsError;

/// A date given by a client: `YYYY-MM-DD` or a word relative to today.
pub(super) fn parse_client_date(name: &str, raw: &str, today: Date) -> Result<Date, OpsError> {
    let text = raw.trim().to_ascii_lowercase();
    let parsed = match text.as_str() {
        "today" => Some(today),
        "tomorrow" => today.checked_add(1.day()).ok(),
        "yesterday" => today.checked_sub(1.day()).ok(),
        _ if text.len() == 10 => match TaskDate::parse(&text) {
            TaskDate::Valid(date) => Some(date),
            TaskDate::Invalid(_) => None,
        },
        _ => None,
    };
    parsed.ok_or_else(|| {
        OpsError::invalid_argument(format!(
            "{name} {raw:?} is not a date; use YYYY-MM-DD (a real calendar day), today, tomorrow or yesterday"
        ))
    })
}

pub(super) struct DateBounds {
    pub(super) before: Option<Date>,
    pub(super) on: Option<Date>,
    pub(super) after: Option<Date>,
}

impl DateBounds {
    pub(super) fn parse(
        name: &str,
        filter: &Option<TaskDateFilter>,
        today: Date,
    ) -> Result<Option<DateBounds>, OpsError> {
        let Some(filter) = filter else {
            return Ok(None);
        };
        let bound = |which: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|raw| parse_client_date(&format!("{name}.{which}"), raw, today))
                .transpose()
        };
        let bounds = DateBounds {
            before: bound("before", &filter.before)?,
            on: bound("on", &filter.on)?,
            after: bound("after", &filter.after)?,
        };
        if bounds.before.is_none() && bounds.on.is_none() && bounds.after.is_none() {
            return Err(OpsError::invalid_argument(format!(
                "the {name} filter needs at least one of before, on or after"
            )));
        }
        Ok(Some(bounds))
    }

    /// Tasks without the date, or with an invalid one, never match a date condition.
    pub(super) fn matches(&self, date: &Option<TaskDate>) -> bool {
        let Some(date) = date.as_ref().and_then(TaskDate::valid) else {
            return false;
        };
        self.before.is_none_or(|before| date < before)
            && self.on.is_none_or(|on| date == on)
            && self.after.is_none_or(|after| date > after)
    }
}

pub(super) fn compare_dates(a: Option<Date>, b: Option<Date>) -> std::cmp::Ordering {
    // Tasks without any date of the cascade go last.
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}
