//! Obsidian's template variables for new daily and periodic notes: `{{title}}`, `{{date}}`,
//! `{{time}}`, `{{date:FORMAT}}`, `{{time:FORMAT}}`, offsets like `{{date+1d:YYYY-MM-DD}}`,
//! `{{yesterday}}`, `{{tomorrow}}`, and Periodic Notes' weekday tokens (`{{monday:YYYY-MM-DD}}`).
//!
//! Pure: the note's date, the current local time and the format come in as values. Matching is
//! case-insensitive and tolerates spaces inside the braces, as Obsidian's own substitution does.
//! Anything else (Templater's `<% ... %>`, unknown `{{words}}`) is left exactly as written.

use std::sync::LazyLock;

use jiff::Span;
use jiff::civil::{Date, DateTime};
use regex::{Captures, Regex};

use super::moment::{self, ISO_WEEKS, WeekRule};

/// What a template is filled in with.
#[derive(Debug, Clone, Copy)]
pub struct TemplateValues<'a> {
    /// The note's date (the first day of its period for weekly and monthly notes).
    pub date: Date,
    /// The current local date and time.
    pub now: DateTime,
    /// The current UTC offset, for the `Z`/`X` tokens.
    pub offset_seconds: i32,
    /// The period's format (daily `YYYY-MM-DD`, weekly `gggg-[W]ww`, ...), folders included.
    pub format: &'a str,
    /// The note's file name without folder and extension.
    pub title: &'a str,
    /// How the locale numbers weeks (`w`, `gggg`) and where they start.
    pub weeks: WeekRule,
}

static VARIABLE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\{\{\s*(date|time|title|yesterday|tomorrow|sunday|monday|tuesday|wednesday|thursday|friday|saturday)\s*(?:([+-]\d{1,6})\s*([yqmwdhs]))?\s*(?::([^}]*?))?\s*\}\}",
    )
    .ok()
});

/// Fills in `template`'s variables.
pub fn render(template: &str, values: &TemplateValues<'_>) -> String {
    let Some(variable) = VARIABLE.as_ref() else {
        return template.to_string();
    };
    variable
        .replace_all(template, |captures: &Captures<'_>| {
            substitute(captures, values).unwrap_or_else(|| captures[0].to_string())
        })
        .into_owned()
}

/// The name part of a format: its last path segment (`YYYY/MM/YYYY-MM-DD` names notes
/// `YYYY-MM-DD` inside folders).
fn name_format(format: &str) -> &str {
    format.rsplit('/').next().unwrap_or(format)
}

fn substitute(captures: &Captures<'_>, values: &TemplateValues<'_>) -> Option<String> {
    let name = captures.get(1)?.as_str().to_ascii_lowercase();
    let offset = match (captures.get(2), captures.get(3)) {
        (Some(amount), Some(unit)) => Some((amount.as_str().parse::<i64>().ok()?, unit.as_str())),
        _ => None,
    };
    let format = captures
        .get(4)
        .map(|format| format.as_str().trim())
        .filter(|format| !format.is_empty());
    let format_with = |at: DateTime, pattern: &str| {
        moment::format_in(pattern, at, Some(values.offset_seconds), values.weeks)
    };
    // The note's day at the current time of day, as Obsidian computes `{{date:...}}`.
    let note_moment = values.date.to_datetime(values.now.time());
    match name.as_str() {
        "title" if offset.is_none() && format.is_none() => Some(values.title.to_string()),
        "yesterday" | "tomorrow" if offset.is_none() && format.is_none() => {
            let day = if name == "yesterday" {
                values.date.yesterday().ok()?
            } else {
                values.date.tomorrow().ok()?
            };
            Some(format_with(
                day.to_datetime(values.now.time()),
                name_format(values.format),
            ))
        }
        "date" | "time" => {
            let at = match offset {
                Some((amount, unit)) => note_moment.checked_add(span(amount, unit)?).ok()?,
                None => note_moment,
            };
            Some(match (format, name.as_str(), offset) {
                (Some(pattern), _, _) => format_with(at, pattern),
                // Plain `{{time}}` is the current time, whatever day the note is for.
                (None, "time", None) => format_with(values.now, "HH:mm"),
                (None, "time", Some(_)) => format_with(at, "HH:mm"),
                (None, _, None) => values.title.to_string(),
                (None, _, Some(_)) => format_with(at, name_format(values.format)),
            })
        }
        weekday if offset.is_none() => {
            // Periodic Notes' weekly tokens: that day of the note's week, which starts on
            // Monday when the format counts ISO weeks and on the locale's first day otherwise.
            let wanted = moment::weekday_named(weekday)?;
            let rule = if moment::uses_iso_weeks(values.format) {
                ISO_WEEKS
            } else {
                values.weeks
            };
            let start = moment::start_of_week(values.date, rule);
            let ahead = (wanted.to_sunday_zero_offset() - start.weekday().to_sunday_zero_offset())
                .rem_euclid(7);
            let day = (0..ahead).try_fold(start, |day, _| day.tomorrow().ok())?;
            Some(format_with(
                day.to_datetime(values.now.time()),
                format.unwrap_or(name_format(values.format)),
            ))
        }
        _ => None,
    }
}

/// moment's `add(amount, unit)` units: `M` is months and `m` minutes, the rest ignore case.
fn span(amount: i64, unit: &str) -> Option<Span> {
    let span = Span::new();
    match unit {
        "M" => span.try_months(amount),
        "m" => span.try_minutes(amount),
        _ => match unit.to_ascii_lowercase().as_str() {
            "y" => span.try_years(amount),
            "q" => span.try_months(amount.checked_mul(3)?),
            "w" => span.try_weeks(amount),
            "d" => span.try_days(amount),
            "h" => span.try_hours(amount),
            "s" => span.try_seconds(amount),
            _ => return None,
        },
    }
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use proptest::prelude::*;

    fn values<'a>(format: &'a str, title: &'a str) -> TemplateValues<'a> {
        TemplateValues {
            // A Tuesday note, filled in on the Thursday after at 14:05.
            date: date(2025, 6, 17),
            now: date(2025, 6, 19).at(14, 5, 30, 0),
            offset_seconds: 7200,
            format,
            title,
            weeks: moment::LOCALE_WEEKS,
        }
    }

    #[test]
    fn obsidian_variables() {
        let v = values("YYYY-MM-DD", "2025-06-17");
        for (template, expected) in [
            ("# {{title}}", "# 2025-06-17"),
            ("{{date}} at {{time}}", "2025-06-17 at 14:05"),
            ("{{ DATE }} {{Title}}", "2025-06-17 2025-06-17"),
            ("{{date:dddd, MMMM Do YYYY}}", "Tuesday, June 17th 2025"),
            ("{{date : YYYY}}", "2025"),
            ("{{time:HH:mm:ss}}", "14:05:30"),
            ("{{time:h:mm A Z}}", "2:05 PM +02:00"),
            ("{{date+1d:YYYY-MM-DD}}", "2025-06-18"),
            ("{{date-1w}}", "2025-06-10"),
            ("{{date+1M:MMMM}}", "July"),
            ("{{date+30m:HH:mm}}", "14:35"),
            ("{{date+1y:YYYY}} {{date-1q:MMM}}", "2026 Mar"),
            (
                "[[{{yesterday}}]] | [[{{tomorrow}}]]",
                "[[2025-06-16]] | [[2025-06-18]]",
            ),
            (
                "{{monday:YYYY-MM-DD}} {{sunday:ddd D}}",
                "2025-06-16 Sun 15",
            ),
            ("{{saturday:[W]ww}}", "W25"),
        ] {
            assert_eq!(render(template, &v), expected, "template {template:?}");
        }
    }

    #[test]
    fn weekday_tokens_follow_the_formats_week() {
        // The same Tuesday: in a Sunday-first week and in an ISO (Monday-first) week.
        let locale = values("gggg-[W]ww", "2025-W25");
        assert_eq!(render("{{monday:D}}-{{sunday:D}}", &locale), "16-15");
        let iso = values("GGGG-[W]WW", "2025-W25");
        assert_eq!(render("{{monday:D}}-{{sunday:D}}", &iso), "16-22");
    }

    #[test]
    fn nested_formats_name_the_note_by_its_last_segment() {
        let v = values("YYYY/MM/YYYY-MM-DD", "2025-06-17");
        assert_eq!(render("{{date}} {{tomorrow}}", &v), "2025-06-17 2025-06-18");
        assert_eq!(render("{{date+1d}}", &v), "2025-06-18");
    }

    #[test]
    fn everything_else_is_left_as_written() {
        let v = values("YYYY-MM-DD", "2025-06-17");
        for template in [
            "<% tp.file.title %>",
            "{{unknown}}",
            "{{title:YYYY}}",
            "{{yesterday+1d}}",
            "{{date+1x}}",
            "{{date",
            "{ {date} }",
            "{{date+9999999d}}",
            "",
        ] {
            assert_eq!(render(template, &v), template);
        }
        // An offset past the calendar's end leaves the variable alone instead of failing.
        let edge = TemplateValues {
            date: Date::MAX,
            ..values("YYYY-MM-DD", "9999-12-31")
        };
        assert_eq!(
            render("{{tomorrow}} {{date+1y}}", &edge),
            "{{tomorrow}} {{date+1y}}"
        );
    }

    proptest! {
        #[test]
        fn never_panics(template in any::<String>(), format in any::<String>(), days in -4000i32..4000) {
            let day = date(2000, 1, 1).checked_add(Span::new().days(days)).unwrap_or(Date::MIN);
            let values = TemplateValues {
                date: day,
                now: day.at(23, 59, 59, 999_999_999),
                offset_seconds: -43_200,
                format: &format,
                title: "t",
                weeks: moment::LOCALE_WEEKS,
            };
            let _ = render(&template, &values);
            let _ = render(&format!("{{{{date:{format}}}}} {{{{monday}}}}"), &values);
            let _ = moment::format(&template, values.now, None);
        }
    }
}
