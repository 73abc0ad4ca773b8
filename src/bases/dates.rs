//! Dates and durations: reading `date("...")` text and duration strings (`"1d"`, `"2 weeks"`,
//! `"1M 4h"`), date arithmetic, and the readable distance `relative()` gives. Dates are civil
//! (the vault's wall-clock time); the time zone only matters where a date meets an instant
//! (`number(date)`, text with an offset), and the caller supplies it.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

use super::value::{DateValue, Duration};

/// Reads a date as Obsidian writes them: `2025-01-01`, `2025-01-01 12:00`, `2025-01-01T12:00:00`,
/// with optional fractions of a second, and an optional `Z` or offset (converted into `zone`).
pub fn parse_date(text: &str, zone: &TimeZone) -> Option<DateValue> {
    let text = text.trim();
    if text.len() > 64 {
        return None;
    }
    if let Ok(date) = text.parse::<Date>() {
        // Only a bare date is a day; `2025-01-01T00:00` has a time.
        if text.len() <= 10 || !text.contains([':', 'T', 't']) {
            return Some(DateValue::day(date));
        }
    }
    if let Ok(instant) = text.parse::<Timestamp>() {
        return Some(DateValue::timed(
            instant.to_zoned_datetime(zone.clone()).datetime(),
        ));
    }
    text.parse::<DateTime>().ok().map(DateValue::timed)
}

/// The milliseconds since the Unix epoch of a wall-clock date in `zone`.
pub fn epoch_millis(date: &DateValue, zone: &TimeZone) -> f64 {
    match zone.to_ambiguous_zoned_datetime(date.at).compatible() {
        Ok(zoned) => zoned.timestamp().as_millisecond() as f64,
        Err(_) => f64::NAN,
    }
}

/// The wall-clock date of an epoch milliseconds value in `zone`.
pub fn from_epoch_millis(millis: f64, zone: &TimeZone) -> Option<DateValue> {
    if !millis.is_finite() {
        return None;
    }
    let instant = Timestamp::from_millisecond(millis as i64).ok()?;
    Some(DateValue::timed(
        instant.to_zoned_datetime(zone.clone()).datetime(),
    ))
}

/// Reads a duration: one or more `<number> <unit>` parts (`1d`, `2 weeks`, `1M 4h`, `-3 days`).
/// `M` is months and `m` minutes; other units are case-insensitive.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() || rest.len() > 128 {
        return None;
    }
    let mut total = Duration::default();
    while !rest.is_empty() {
        let number_end = rest
            .char_indices()
            .find(|(i, c)| {
                !(c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+')))
            })
            .map_or(rest.len(), |(i, _)| i);
        let amount: f64 = rest[..number_end].parse().ok()?;
        rest = rest[number_end..].trim_start();
        let unit_end = rest
            .char_indices()
            .find(|(_, c)| !c.is_ascii_alphabetic())
            .map_or(rest.len(), |(i, _)| i);
        let (months, millis) = unit(&rest[..unit_end])?;
        total.months += amount * months;
        total.millis += amount * millis;
        rest = rest[unit_end..].trim_start_matches([' ', ',']);
    }
    Some(total)
}

/// (months, milliseconds) one of `unit` stands for.
fn unit(name: &str) -> Option<(f64, f64)> {
    let found = match name {
        "M" => (1.0, 0.0),
        "m" => (0.0, 60_000.0),
        _ => match name.to_ascii_lowercase().as_str() {
            "y" | "yr" | "yrs" | "year" | "years" => (12.0, 0.0),
            "month" | "months" => (1.0, 0.0),
            "w" | "week" | "weeks" => (0.0, 7.0 * 86_400_000.0),
            "d" | "day" | "days" => (0.0, 86_400_000.0),
            "h" | "hr" | "hrs" | "hour" | "hours" => (0.0, 3_600_000.0),
            "min" | "mins" | "minute" | "minutes" => (0.0, 60_000.0),
            "s" | "sec" | "secs" | "second" | "seconds" => (0.0, 1_000.0),
            "ms" | "millisecond" | "milliseconds" => (0.0, 1.0),
            _ => return None,
        },
    };
    Some(found)
}

/// `date + sign * duration`. Whole months move the calendar (31 January + 1 month is 28 or 29
/// February); a fraction of a month counts as 30 days. A date without a time keeps having none
/// unless the duration holds hours, minutes or seconds.
pub fn add(date: &DateValue, duration: &Duration, sign: f64) -> Option<DateValue> {
    let months = duration.months * sign;
    let whole_months = months.trunc();
    let millis = duration.millis * sign + (months - whole_months) * super::value::MONTH_MILLIS;
    if !millis.is_finite() || whole_months.abs() > 1e6 || millis.abs() > 1e15 {
        return None;
    }
    let span = Span::new().try_months(whole_months as i64).ok()?;
    let moved = date.at.checked_add(span).ok()?;
    let exact = jiff::SignedDuration::from_millis(millis.round() as i64);
    let at = moved.checked_add(exact).ok()?;
    let day_multiple = duration.millis % 86_400_000.0 == 0.0;
    Some(DateValue {
        at,
        has_time: date.has_time || !day_multiple,
    })
}

/// `later - earlier` in milliseconds, on the wall clock.
pub fn difference_millis(later: &DateValue, earlier: &DateValue) -> f64 {
    later.at.duration_since(earlier.at).as_millis() as f64
}

/// Moment.js's `fromNow()`: `a few seconds ago`, `in 3 days`, `2 months ago`, `a year ago`.
pub fn relative(date: &DateValue, now: DateTime) -> String {
    let millis = difference_millis(&DateValue::timed(now), date);
    let seconds = (millis.abs() / 1000.0).round();
    let minutes = (seconds / 60.0).round();
    let hours = (minutes / 60.0).round();
    let days = (hours / 24.0).round();
    let months = (days / 30.4375).round();
    let years = (days / 365.25).round();
    let phrase = if seconds < 45.0 {
        "a few seconds".to_owned()
    } else if seconds < 90.0 {
        "a minute".to_owned()
    } else if minutes < 45.0 {
        format!("{minutes} minutes")
    } else if minutes < 90.0 {
        "an hour".to_owned()
    } else if hours < 22.0 {
        format!("{hours} hours")
    } else if hours < 36.0 {
        "a day".to_owned()
    } else if days < 26.0 {
        format!("{days} days")
    } else if days < 45.0 {
        "a month".to_owned()
    } else if days < 320.0 {
        format!("{} months", months.max(2.0))
    } else if days < 548.0 {
        "a year".to_owned()
    } else {
        format!("{} years", years.max(2.0))
    };
    if millis >= 0.0 {
        format!("{phrase} ago")
    } else {
        format!("in {phrase}")
    }
}
