//! Recurrence rules as the Tasks plugin reads and writes them: the natural-language subset of RFC 5545
//! rules that its `every ...` text parses into (days, weekdays, weeks, months, years; intervals; week
//! days, month days and months; `for N times`; ` when done`), the normalised text it writes back, and
//! the next occurrence it computes on completion, including its correction for months and years
//! without the wanted day (`every month` from Jan 31 lands on the last day of February).
//! Rules the plugin would accept but that make no sense for dates (hours, minutes, `at`, `until`,
//! week numbers) are not recognised. Pure and total: no clock (today is passed in), no panic.

use jiff::ToSpan;
use jiff::civil::{Date, Weekday};
use regex::Regex;
use std::sync::LazyLock;

mod parse;
#[cfg(test)]
mod tests;
mod text;

use parse::{WORKING_DAYS, parse_rule, plain};
use text::rule_text;

/// How often a rule repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frequency {
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

/// A week day, optionally the nth (negative: from the end) in its month or year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ByWeekday {
    weekday: Weekday,
    nth: Option<i32>,
}

/// A parsed rule, as the options the plugin's rule library builds from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    frequency: Frequency,
    interval: Option<u32>,
    by_weekday: Option<Vec<ByWeekday>>,
    by_month_day: Option<Vec<i32>>,
    by_month: Option<Vec<i8>>,
    count: Option<u32>,
}

/// A task's recurrence: the rule and whether it counts from the completion day (`when done`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recurrence {
    rule: Rule,
    when_done: bool,
}

/// The dates a new occurrence gets; each is present when the original task had that date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextDates<D> {
    pub start: Option<D>,
    pub scheduled: Option<D>,
    pub due: Option<D>,
}

/// Beyond this many periods without a match the rule is taken to have no next occurrence.
const PERIOD_LIMIT: u32 = 20_000;
/// An interval larger than this is refused: no vault means it, and it keeps date arithmetic in range.
const INTERVAL_LIMIT: u32 = 10_000;

/// Rules already read, by text: a vault repeats a handful of rule texts across thousands of tasks,
/// and reading one tries every word of the vocabulary at every token. Bounded, and a pure memo: the
/// answer for a text never changes.
static RULE_CACHE: LazyLock<std::sync::Mutex<std::collections::HashMap<String, Option<Rule>>>> =
    LazyLock::new(Default::default);
const RULE_CACHE_LIMIT: usize = 4096;

fn cached_rule(text: &str) -> Option<Rule> {
    if let Ok(cache) = RULE_CACHE.lock()
        && let Some(rule) = cache.get(text)
    {
        return rule.clone();
    }
    let rule = parse_rule(text).ok();
    if let Ok(mut cache) = RULE_CACHE.lock() {
        if cache.len() >= RULE_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(text.to_owned(), rule.clone());
    }
    rule
}

static RULE_TEXT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^([a-zA-Z0-9, !]+?)( when done)?$").ok());

impl Recurrence {
    /// Reads a rule text (`every week on Monday when done`); `None` when the plugin would not
    /// recognise it (the plugin then drops the rule).
    pub fn parse(text: &str) -> Option<Recurrence> {
        let found = RULE_TEXT.as_ref()?.captures(text)?;
        let rule_text = found.get(1)?.as_str().trim();
        let when_done = found.get(2).is_some();
        let rule = cached_rule(rule_text)?;
        Some(Recurrence { rule, when_done })
    }

    /// Whether the next occurrence counts from the completion day.
    pub fn when_done(&self) -> bool {
        self.when_done
    }

    /// The normalised text the plugin writes (`every Sunday` is written `every week on Sunday`).
    pub fn text(&self) -> String {
        let mut text = rule_text(&self.rule);
        if self.when_done {
            text.push_str(" when done");
        }
        text
    }

    /// The reference day of the next occurrence: the first day after `reference` (or, for
    /// `when done` rules and tasks without dates, after `today`) the rule produces, with the
    /// plugin's correction for months and years that lack the day. `None` when there is none.
    pub fn next_reference(&self, reference: Option<Date>, today: Date) -> Option<Date> {
        let base = match reference {
            Some(reference) if !self.when_done => reference,
            _ => today,
        };
        let mut after = base;
        let mut next = occurrence_after(&self.rule, base, after)?;
        let text = self.text();
        if let Some(skip) = skip_count(&MONTH_TEXT, &text)
            && !text.contains(" on ")
        {
            let mut guard = 0;
            while months_between(after, next) > skip {
                guard += 1;
                if guard > 400 {
                    return None;
                }
                after = after.checked_sub(1.day()).ok()?;
                next = occurrence_after(&self.rule, after, after)?;
            }
        }
        if let Some(skip) = skip_count(&YEAR_TEXT, &text) {
            let mut guard = 0;
            while i32::from(next.year()) - i32::from(after.year()) > skip {
                guard += 1;
                if guard > 800 {
                    return None;
                }
                after = after.checked_sub(1.day()).ok()?;
                next = occurrence_after(&self.rule, after, after)?;
            }
        }
        Some(next)
    }
}

static MONTH_TEXT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"every( [0-9]+)? month(s)?(.*)?").ok());
static YEAR_TEXT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"every( [0-9]+)? year(s)?(.*)?").ok());

/// For `every [N] month(s)`-style texts, N (1 when absent).
fn skip_count(regex: &Option<Regex>, text: &str) -> Option<i32> {
    let found = regex.as_ref()?.captures(text)?;
    Some(
        found
            .get(1)
            .and_then(|number| number.as_str().trim().parse().ok())
            .unwrap_or(1),
    )
}

fn months_between(from: Date, to: Date) -> i32 {
    (i32::from(to.year()) - i32::from(from.year())) * 12 + i32::from(to.month())
        - i32::from(from.month())
}

/// The first day strictly after `after` that the rule, started on `start`, produces.
fn occurrence_after(rule: &Rule, start: Date, after: Date) -> Option<Date> {
    let interval = i64::from(rule.interval.unwrap_or(1).max(1));
    // The rule library fills in the start's own day, weekday or month when the rule names none.
    let mut by_weekday = rule.by_weekday.clone();
    let mut by_month_day = rule.by_month_day.clone();
    let mut by_month = rule.by_month.clone();
    if by_weekday.is_none() && by_month_day.is_none() {
        match rule.frequency {
            Frequency::Yearly => {
                if by_month.is_none() {
                    by_month = Some(vec![start.month()]);
                }
                by_month_day = Some(vec![i32::from(start.day())]);
            }
            Frequency::Monthly => by_month_day = Some(vec![i32::from(start.day())]),
            Frequency::Weekly => by_weekday = Some(vec![plain(start.weekday())]),
            Frequency::Daily => {}
        }
    }
    let matches = |day: Date| -> bool {
        if let Some(months) = &by_month
            && !months.contains(&day.month())
        {
            return false;
        }
        if let Some(days) = &by_month_day {
            let length = i32::from(day.days_in_month());
            let number = i32::from(day.day());
            if !days
                .iter()
                .any(|&wanted| wanted == number || (wanted < 0 && length + 1 + wanted == number))
            {
                return false;
            }
        }
        if let Some(weekdays) = &by_weekday {
            let ordinal_scope_is_month = rule.frequency == Frequency::Monthly
                || (rule.frequency == Frequency::Yearly && by_month.is_some());
            let nth_applies = matches!(rule.frequency, Frequency::Monthly | Frequency::Yearly);
            if !weekdays.iter().any(|wanted| {
                if wanted.weekday != day.weekday() {
                    return false;
                }
                match wanted.nth {
                    Some(position) if nth_applies => {
                        nth_of_weekday(day, ordinal_scope_is_month, position)
                    }
                    _ => true,
                }
            }) {
                return false;
            }
        }
        true
    };
    let mut produced: u32 = 0;
    for period in 0..i64::from(PERIOD_LIMIT) {
        let offset = period.checked_mul(interval)?;
        let (first, last) = match rule.frequency {
            Frequency::Daily => {
                let day = start.checked_add(offset.days()).ok()?;
                (day, day)
            }
            Frequency::Weekly => {
                let monday = start
                    .checked_sub(i64::from(start.weekday().to_monday_zero_offset()).days())
                    .ok()?;
                let first = monday.checked_add(offset.weeks()).ok()?;
                (first, first.checked_add(6.days()).ok()?)
            }
            Frequency::Monthly => {
                let first = start.first_of_month().checked_add(offset.months()).ok()?;
                (first, first.last_of_month())
            }
            Frequency::Yearly => {
                let first = start.first_of_year().checked_add(offset.years()).ok()?;
                (first, first.last_of_year())
            }
        };
        let mut day = first;
        loop {
            if day >= start && matches(day) {
                produced += 1;
                if day > after {
                    return Some(day);
                }
                if rule.count.is_some_and(|count| produced >= count) {
                    return None;
                }
            }
            if day >= last {
                break;
            }
            day = day.tomorrow().ok()?;
        }
    }
    None
}

/// Whether `day` is the `position`th (negative: from the end) of its weekday in its month or year.
fn nth_of_weekday(day: Date, in_month: bool, position: i32) -> bool {
    let (index, length) = if in_month {
        (i32::from(day.day()), i32::from(day.days_in_month()))
    } else {
        (i32::from(day.day_of_year()), i32::from(day.days_in_year()))
    };
    let from_start = (index - 1) / 7 + 1;
    let from_end = (length - index) / 7 + 1;
    if position > 0 {
        from_start == position
    } else {
        -from_end == position
    }
}
