//! moment.js date formats, as Obsidian's daily notes, Periodic Notes and templates use them
//! (`YYYY-MM-DD`, `gggg-[W]ww`, `YYYY/MM/[Week] W`, `dddd, MMMM Do YYYY`).
//!
//! Pure: a pattern and a civil date-time in, text out. No clock, no I/O, never panics. The English
//! locale is the one Obsidian ships by default: `ww`/`gggg` weeks start on Sunday and week 1 is the
//! week holding January 1st (moment's `dow: 0, doy: 6`); `W`/`GGGG` are ISO 8601 weeks.
//!
//! Tokenising follows moment's own regular expression: at each position the first matching
//! alternative wins (so `MMMMM` is `MMMM` then `M`), `[...]` is literal text (up to the last `]`
//! before the next `[`), a backslash makes the next token literal, and any other character is
//! copied as it is.

use jiff::civil::{Date, DateTime, Weekday};

/// Formats `at` with the moment.js `pattern` in the English locale (Sunday-first weeks).
/// `offset_seconds` is the UTC offset for the tokens that need one (`Z`, `ZZ`, `X`, `x`); without
/// it those format as UTC.
pub fn format(pattern: &str, at: DateTime, offset_seconds: Option<i32>) -> String {
    format_in(pattern, at, offset_seconds, LOCALE_WEEKS)
}

/// `format` with the locale's weeks given: `weeks` numbers `w`/`ww`/`gggg` (`LOCALE_WEEKS` for
/// English, `ISO_WEEKS` for locales such as German or French, whose weeks are ISO weeks).
pub fn format_in(
    pattern: &str,
    at: DateTime,
    offset_seconds: Option<i32>,
    weeks: WeekRule,
) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(first) = rest.chars().next() {
        if first == '[' {
            // `\[[^\[]*\]`: the literal runs to the last `]` before the next `[`.
            let after = &rest[1..];
            let segment_end = after.find('[').unwrap_or(after.len());
            if let Some(close) = after[..segment_end].rfind(']') {
                out.push_str(&after[..close]);
                rest = &after[close + 1..];
                continue;
            }
        }
        if first == '\\' {
            let after = &rest[1..];
            match token_at(after) {
                Some(token) => {
                    // An escaped token is its own text, backslashes removed.
                    out.push_str(&token.replace('\\', ""));
                    rest = &after[token.len()..];
                }
                // A lone trailing backslash disappears, as in moment.
                None => rest = after,
            }
            continue;
        }
        let token = token_at(rest).unwrap_or(&rest[..first.len_utf8()]);
        match render(token, at, offset_seconds, weeks) {
            Some(text) => out.push_str(&text),
            None => out.push_str(token),
        }
        rest = &rest[token.len()..];
    }
    out
}

/// The moment.js tokens, in the order of moment's formatting regular expression (first match wins).
const TOKENS: &[&str] = &[
    "Hmmss",
    "Hmm",
    "hmmss",
    "hmm",
    "Mo",
    "MMMM",
    "MMM",
    "MM",
    "M",
    "Do",
    "DDDo",
    "DDDD",
    "DDD",
    "DD",
    "D",
    "dddd",
    "ddd",
    "dd",
    "do",
    "d",
    "wo",
    "ww",
    "w",
    "Wo",
    "WW",
    "W",
    "Qo",
    "Q",
    "NNNNN",
    "NNNN",
    "NNN",
    "NN",
    "N",
    "YYYYYY",
    "YYYYY",
    "YYYY",
    "YY",
    "yyyy",
    "yyy",
    "yy",
    "yo",
    "y",
    "ggggg",
    "gggg",
    "gg",
    "GGGGG",
    "GGGG",
    "GG",
    "e",
    "E",
    "a",
    "A",
    "hh",
    "h",
    "HH",
    "H",
    "kk",
    "k",
    "mm",
    "m",
    "ss",
    "s",
    "SSSSSSSSS",
    "SSSSSSSS",
    "SSSSSSS",
    "SSSSSS",
    "SSSSS",
    "SSSS",
    "SSS",
    "SS",
    "S",
    "x",
    "X",
    "zz",
    "z",
    "ZZ",
    "Z",
];

/// Whether `pattern` counts ISO weeks (`W`, `GGGG`) rather than the locale's (`w`, `gggg`), so a
/// weekly note's week starts on Monday. Literal text is skipped, as `format` skips it.
pub fn uses_iso_weeks(pattern: &str) -> bool {
    let mut iso = false;
    let mut rest = pattern;
    while let Some(first) = rest.chars().next() {
        if first == '[' {
            let after = &rest[1..];
            let segment_end = after.find('[').unwrap_or(after.len());
            if let Some(close) = after[..segment_end].rfind(']') {
                rest = &after[close + 1..];
                continue;
            }
        }
        if first == '\\' {
            let after = &rest[1..];
            rest = token_at(after).map_or(after, |token| &after[token.len()..]);
            continue;
        }
        let token = token_at(rest).unwrap_or(&rest[..first.len_utf8()]);
        match token.chars().next() {
            Some('W' | 'G') => iso = true,
            Some('w' | 'g') => return false,
            _ => {}
        }
        rest = &rest[token.len()..];
    }
    iso
}

/// The token starting `text`, or the first character when none does; `None` for empty text.
fn token_at(text: &str) -> Option<&str> {
    let first = text.chars().next()?;
    Some(
        TOKENS
            .iter()
            .find(|token| text.starts_with(**token))
            .map_or(&text[..first.len_utf8()], |token| &text[..token.len()]),
    )
}

/// The English month names, which Moment.js and the Tasks plugin both write.
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// A week rule as moment.js defines it: `dow` is the first day of the week (0 = Sunday), and
/// week 1 is the week holding January `7 + dow - doy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeekRule {
    pub dow: i32,
    pub doy: i32,
}

/// The English locale's weeks (`w`, `gggg`): Sunday first, January 1st always in week 1.
pub const LOCALE_WEEKS: WeekRule = WeekRule { dow: 0, doy: 6 };
/// ISO 8601 weeks (`W`, `GGGG`): Monday first, January 4th always in week 1.
pub const ISO_WEEKS: WeekRule = WeekRule { dow: 1, doy: 4 };

fn render(
    token: &str,
    at: DateTime,
    offset_seconds: Option<i32>,
    weeks: WeekRule,
) -> Option<String> {
    let date = at.date();
    month_and_day(token, date, weeks)
        .or_else(|| week_and_year(token, date, weeks))
        .or_else(|| time_of_day(token, at, offset_seconds.unwrap_or(0)))
}

/// Month, quarter, day of the month, of the year and of the week.
fn month_and_day(token: &str, date: Date, weeks: WeekRule) -> Option<String> {
    let month = usize::try_from(date.month()).unwrap_or(1).clamp(1, 12);
    let day = i32::from(date.day());
    let weekday = i32::from(date.weekday().to_sunday_zero_offset());
    let quarter = (month as i32 - 1) / 3 + 1;
    let day_of_year = i32::from(date.day_of_year());
    let text = match token {
        "M" => month.to_string(),
        "Mo" => ordinal(month as i64),
        "MM" => pad(month as i64, 2),
        "MMM" => MONTHS[month - 1][..3].to_string(),
        "MMMM" => MONTHS[month - 1].to_string(),
        "Q" => quarter.to_string(),
        "Qo" => ordinal(i64::from(quarter)),
        "D" => day.to_string(),
        "Do" => ordinal(i64::from(day)),
        "DD" => pad(i64::from(day), 2),
        "DDD" => day_of_year.to_string(),
        "DDDo" => ordinal(i64::from(day_of_year)),
        "DDDD" => pad(i64::from(day_of_year), 3),
        "d" => weekday.to_string(),
        // The weekday counted from the locale's first day of the week.
        "e" => (weekday - weeks.dow).rem_euclid(7).to_string(),
        "do" => ordinal(i64::from(weekday)),
        "dd" => WEEKDAYS[weekday as usize % 7][..2].to_string(),
        "ddd" => WEEKDAYS[weekday as usize % 7][..3].to_string(),
        "dddd" => WEEKDAYS[weekday as usize % 7].to_string(),
        "E" => date.weekday().to_monday_one_offset().to_string(),
        _ => return None,
    };
    Some(text)
}

/// Week of the year (the locale's and ISO's), week year, year and era.
fn week_and_year(token: &str, date: Date, weeks: WeekRule) -> Option<String> {
    let year = i32::from(date.year());
    let text = match token {
        "w" => week_of_year(date, weeks).1.to_string(),
        "wo" => ordinal(i64::from(week_of_year(date, weeks).1)),
        "ww" => pad(i64::from(week_of_year(date, weeks).1), 2),
        "W" => week_of_year(date, ISO_WEEKS).1.to_string(),
        "Wo" => ordinal(i64::from(week_of_year(date, ISO_WEEKS).1)),
        "WW" => pad(i64::from(week_of_year(date, ISO_WEEKS).1), 2),
        "gg" => pad(i64::from(week_of_year(date, weeks).0.rem_euclid(100)), 2),
        "gggg" => pad(i64::from(week_of_year(date, weeks).0), 4),
        "ggggg" => pad(i64::from(week_of_year(date, weeks).0), 5),
        "GG" => pad(
            i64::from(week_of_year(date, ISO_WEEKS).0.rem_euclid(100)),
            2,
        ),
        "GGGG" => pad(i64::from(week_of_year(date, ISO_WEEKS).0), 4),
        "GGGGG" => pad(i64::from(week_of_year(date, ISO_WEEKS).0), 5),
        "YY" => pad(i64::from(year.rem_euclid(100)), 2),
        "YYYY" => pad(i64::from(year), 4),
        "YYYYY" => pad(i64::from(year), 5),
        "YYYYYY" => {
            let sign = if year < 0 { '-' } else { '+' };
            format!("{sign}{}", pad(i64::from(year.abs()), 6))
        }
        // moment's `Y`: four digits up to 9999, then the sign and every digit.
        "Y" if year > 9999 => format!("+{year}"),
        "Y" => pad(i64::from(year), 4),
        // The era year: the same as the year for every date after 1 BC.
        "y" => year.to_string(),
        "yo" => ordinal(i64::from(year)),
        "yy" => pad(i64::from(year), 2),
        "yyy" => pad(i64::from(year), 3),
        "yyyy" => pad(i64::from(year), 4),
        "N" | "NN" | "NNN" | "NNNNN" => if year > 0 { "AD" } else { "BC" }.to_string(),
        "NNNN" => if year > 0 {
            "Anno Domini"
        } else {
            "Before Christ"
        }
        .to_string(),
        _ => return None,
    };
    Some(text)
}

/// Hours, minutes, seconds and their fractions, the zone offset and Unix time.
fn time_of_day(token: &str, at: DateTime, offset: i32) -> Option<String> {
    let hour = i32::from(at.hour());
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
    let minute = i32::from(at.minute());
    let second = i32::from(at.second());
    let text = match token {
        "a" => if hour < 12 { "am" } else { "pm" }.to_string(),
        "A" => if hour < 12 { "AM" } else { "PM" }.to_string(),
        "H" => hour.to_string(),
        "HH" => pad(i64::from(hour), 2),
        "h" => hour12.to_string(),
        "hh" => pad(i64::from(hour12), 2),
        "k" => (if hour == 0 { 24 } else { hour }).to_string(),
        "kk" => pad(i64::from(if hour == 0 { 24 } else { hour }), 2),
        "m" => minute.to_string(),
        "mm" => pad(i64::from(minute), 2),
        "s" => second.to_string(),
        "ss" => pad(i64::from(second), 2),
        "Hmm" => format!("{hour}{}", pad(i64::from(minute), 2)),
        "Hmmss" => format!(
            "{hour}{}{}",
            pad(i64::from(minute), 2),
            pad(i64::from(second), 2)
        ),
        "hmm" => format!("{hour12}{}", pad(i64::from(minute), 2)),
        "hmmss" => format!(
            "{hour12}{}{}",
            pad(i64::from(minute), 2),
            pad(i64::from(second), 2)
        ),
        _ if token.starts_with('S') => {
            // Fractions of a second, truncated to as many digits as there are `S`s. moment keeps
            // milliseconds only, so digits past the third are zeros there and here.
            let millis = at.subsec_nanosecond().clamp(0, 999_999_999) / 1_000_000;
            let digits = format!("{millis:03}000000");
            digits[..token.len().min(9)].to_string()
        }
        "Z" | "ZZ" => {
            let sign = if offset < 0 { '-' } else { '+' };
            let minutes = offset.unsigned_abs() / 60;
            let separator = if token == "Z" { ":" } else { "" };
            format!("{sign}{:02}{separator}{:02}", minutes / 60, minutes % 60)
        }
        "X" | "x" => {
            let seconds = unix_seconds(at) - i64::from(offset);
            if token == "X" {
                seconds.to_string()
            } else {
                let millis = i64::from(at.subsec_nanosecond()) / 1_000_000;
                (seconds * 1000 + millis).to_string()
            }
        }
        // Zone names need moment-timezone; plain moment prints nothing.
        "z" | "zz" => String::new(),
        _ => return None,
    };
    Some(text)
}

/// Zero-padded to `width` digits, with a leading `-` for negative numbers (moment's `zeroFill`).
fn pad(value: i64, width: usize) -> String {
    if value < 0 {
        format!("-{:0width$}", value.unsigned_abs())
    } else {
        format!("{value:0width$}")
    }
}

/// English ordinals: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 101st, 111th.
fn ordinal(value: i64) -> String {
    let suffix = match (value.rem_euclid(100), value.rem_euclid(10)) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{value}{suffix}")
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_year(year: i32) -> i32 {
    if is_leap(year) { 366 } else { 365 }
}

/// The offset (in days from January 1st, possibly negative) at which week 1 of `year` starts,
/// given the weekday (0 = Sunday) of January 1st. moment's `firstWeekOffset`.
fn first_week_offset(jan1_weekday: i32, rule: WeekRule) -> i32 {
    let fwd = 7 + rule.dow - rule.doy;
    let fwd_weekday = (jan1_weekday + fwd - 1).rem_euclid(7);
    let fwdlw = (7 + fwd_weekday - rule.dow).rem_euclid(7);
    -fwdlw + fwd - 1
}

fn weeks_in_year(year: i32, jan1_weekday: i32, rule: WeekRule) -> i32 {
    let next_jan1 = (jan1_weekday + days_in_year(year)).rem_euclid(7);
    (days_in_year(year) - first_week_offset(jan1_weekday, rule)
        + first_week_offset(next_jan1, rule))
        / 7
}

/// The (week year, week) of `date` under `rule`; moment's `weekOfYear`. Pure arithmetic on the
/// date's weekday and day of the year, so it never fails at the edges of the calendar.
pub fn week_of_year(date: Date, rule: WeekRule) -> (i32, i32) {
    let year = i32::from(date.year());
    let day_of_year = i32::from(date.day_of_year());
    let weekday = i32::from(date.weekday().to_sunday_zero_offset());
    let jan1 = (weekday - (day_of_year - 1)).rem_euclid(7);
    let week = (day_of_year - first_week_offset(jan1, rule) - 1).div_euclid(7) + 1;
    if week < 1 {
        let previous = year - 1;
        let previous_jan1 = (jan1 - days_in_year(previous)).rem_euclid(7);
        (
            previous,
            week + weeks_in_year(previous, previous_jan1, rule),
        )
    } else if week > weeks_in_year(year, jan1, rule) {
        (year + 1, week - weeks_in_year(year, jan1, rule))
    } else {
        (year, week)
    }
}

/// The first day of the week holding `date` under `rule` (saturating at the calendar's start).
pub fn start_of_week(date: Date, rule: WeekRule) -> Date {
    let weekday = i32::from(date.weekday().to_sunday_zero_offset());
    let back = (weekday - rule.dow).rem_euclid(7);
    (0..back).fold(date, |day, _| day.yesterday().unwrap_or(day))
}

/// Seconds since the Unix epoch of the civil `at` read as UTC.
fn unix_seconds(at: DateTime) -> i64 {
    // Days from civil (Howard Hinnant's algorithm), valid for every jiff date.
    let date = at.date();
    let (mut year, month, day) = (
        i64::from(date.year()),
        i64::from(date.month()),
        i64::from(date.day()),
    );
    if month <= 2 {
        year -= 1;
    }
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    days * 86_400
        + i64::from(at.hour()) * 3600
        + i64::from(at.minute()) * 60
        + i64::from(at.second())
}

/// A weekday from its English name (`monday`, `Mon`), for template tokens like `{{monday:...}}`.
pub fn weekday_named(name: &str) -> Option<Weekday> {
    let lower = name.to_ascii_lowercase();
    WEEKDAYS
        .iter()
        .position(|day| {
            let day = day.to_ascii_lowercase();
            lower == day || (lower.len() >= 3 && day.starts_with(&lower))
        })
        .and_then(|index| i8::try_from(index).ok())
        .and_then(|index| Weekday::from_sunday_zero_offset(index).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn at(year: i16, month: i8, day: i8, hour: i8, minute: i8, second: i8) -> DateTime {
        date(year, month, day).at(hour, minute, second, 123_456_789)
    }

    fn check(pattern: &str, when: DateTime, expected: &str) {
        assert_eq!(format(pattern, when, None), expected, "pattern {pattern:?}");
    }

    #[test]
    fn every_token() {
        // Sunday 2024-03-03 07:05:09.123456789, the 63rd day of a leap year.
        let when = at(2024, 3, 3, 7, 5, 9);
        for (pattern, expected) in [
            ("YYYY", "2024"),
            ("YY", "24"),
            ("Y", "2024"),
            ("YYYYY", "02024"),
            ("YYYYYY", "+002024"),
            ("y", "2024"),
            ("yo", "2024th"),
            ("N", "AD"),
            ("NNNN", "Anno Domini"),
            ("Q", "1"),
            ("Qo", "1st"),
            ("M", "3"),
            ("Mo", "3rd"),
            ("MM", "03"),
            ("MMM", "Mar"),
            ("MMMM", "March"),
            ("D", "3"),
            ("Do", "3rd"),
            ("DD", "03"),
            ("DDD", "63"),
            ("DDDo", "63rd"),
            ("DDDD", "063"),
            ("d", "0"),
            ("do", "0th"),
            ("dd", "Su"),
            ("ddd", "Sun"),
            ("dddd", "Sunday"),
            ("e", "0"),
            ("E", "7"),
            // Sunday-first weeks: 2024-03-03 starts week 10; ISO: still week 9.
            ("w", "10"),
            ("wo", "10th"),
            ("ww", "10"),
            ("W", "9"),
            ("Wo", "9th"),
            ("WW", "09"),
            ("gg", "24"),
            ("gggg", "2024"),
            ("ggggg", "02024"),
            ("GG", "24"),
            ("GGGG", "2024"),
            ("GGGGG", "02024"),
            ("H", "7"),
            ("HH", "07"),
            ("h", "7"),
            ("hh", "07"),
            ("k", "7"),
            ("kk", "07"),
            ("m", "5"),
            ("mm", "05"),
            ("s", "9"),
            ("ss", "09"),
            ("a", "am"),
            ("A", "AM"),
            ("S", "1"),
            ("SS", "12"),
            ("SSS", "123"),
            ("SSSS", "1230"),
            ("SSSSSSSSS", "123000000"),
            ("Hmm", "705"),
            ("Hmmss", "70509"),
            ("hmm", "705"),
            ("Z", "+00:00"),
            ("ZZ", "+0000"),
            ("X", "1709449509"),
            ("x", "1709449509123"),
            ("z", ""),
        ] {
            check(pattern, when, expected);
        }
        let evening = at(2024, 12, 31, 0, 30, 0);
        check("h A k", evening, "12 AM 24");
        check("h:mm a", at(2024, 12, 31, 13, 30, 0), "1:30 pm");
        check("HH:mm", at(2024, 12, 31, 23, 59, 0), "23:59");
        assert_eq!(
            format("Z X", at(2024, 1, 1, 1, 0, 0), Some(3600)),
            "+01:00 1704067200"
        );
        assert_eq!(
            format("ZZ", at(2024, 1, 1, 1, 0, 0), Some(-34_200)),
            "-0930"
        );
    }

    #[test]
    fn ordinals() {
        for (day, expected) in [
            (1, "1st"),
            (2, "2nd"),
            (3, "3rd"),
            (4, "4th"),
            (11, "11th"),
            (12, "12th"),
            (13, "13th"),
            (21, "21st"),
            (22, "22nd"),
            (23, "23rd"),
            (31, "31st"),
        ] {
            check("Do", at(2024, 1, day, 0, 0, 0), expected);
        }
        assert_eq!(ordinal(101), "101st");
        assert_eq!(ordinal(111), "111th");
    }

    #[test]
    fn literals_escapes_and_folders() {
        let when = at(2025, 6, 17, 9, 0, 0);
        check("YYYY-MM-DD", when, "2025-06-17");
        check("YYYY/MM/YYYY-MM-DD", when, "2025/06/2025-06-17");
        check("YYYY/[Week] ww/dddd", when, "2025/Week 25/Tuesday");
        check("gggg-[W]ww", when, "2025-W25");
        check(
            "[Today is] dddd, MMMM Do YYYY",
            when,
            "Today is Tuesday, June 17th 2025",
        );
        check("[[YYYY]]", when, "[YYYY]");
        check("[a]b]", when, "a]b");
        check("[]YYYY", when, "2025");
        // An unclosed bracket is a plain character.
        check("[YYYY", when, "[2025");
        check("\\YYYY YYYY", when, "YYYY 2025");
        check("\\[MM]", when, "[06]");
        check("YYYY\\", when, "2025");
        // Tokens are matched in moment's order, so longer runs split.
        check("MMMMM", when, "June6");
        check("YYY", when, "252025");
        // Characters that are not tokens are copied, including non-ASCII.
        check("[Tagebuch] – DD.MM.YYYY ✓", when, "Tagebuch – 17.06.2025 ✓");
        // Unbracketed letters are tokens where moment has one (a, e, h), as in Obsidian.
        check("Tagebuch", when, "Tamg2buc9");
        check("", when, "");
    }

    #[test]
    fn week_years_at_year_boundaries() {
        for (year, month, day, locale, iso) in [
            // 2024-12-29 is a Sunday: the locale's week 1 of 2025 (it holds January 1st),
            // while ISO puts it in week 52 of 2024.
            (2024, 12, 29, (2025, 1), (2024, 52)),
            (2024, 12, 30, (2025, 1), (2025, 1)),
            (2025, 1, 1, (2025, 1), (2025, 1)),
            // 2021-01-01 (a Friday) belongs to ISO week 53 of 2020.
            (2021, 1, 1, (2021, 1), (2020, 53)),
            (2021, 1, 3, (2021, 2), (2020, 53)),
            (2021, 1, 4, (2021, 2), (2021, 1)),
            (2020, 12, 31, (2021, 1), (2020, 53)),
            // 2022-01-01 (a Saturday): ISO week 52 of 2021.
            (2022, 1, 1, (2022, 1), (2021, 52)),
            (2016, 1, 3, (2016, 2), (2015, 53)),
            (2026, 12, 31, (2027, 1), (2026, 53)),
            (2027, 1, 1, (2027, 1), (2026, 53)),
            (2023, 12, 31, (2024, 1), (2023, 52)),
        ] {
            let when = date(year, month, day);
            assert_eq!(
                week_of_year(when, LOCALE_WEEKS),
                locale,
                "locale week of {when}"
            );
            assert_eq!(week_of_year(when, ISO_WEEKS), iso, "ISO week of {when}");
        }
        check("gggg-[W]ww", at(2024, 12, 29, 0, 0, 0), "2025-W01");
        check("GGGG-[W]WW", at(2021, 1, 3, 0, 0, 0), "2020-W53");
        check("YYYY-[W]WW", at(2021, 1, 3, 0, 0, 0), "2021-W53");
    }

    #[test]
    fn iso_weeks_agree_with_jiff_for_every_day_of_many_years() {
        let mut day = date(1999, 12, 1);
        while day < date(2031, 2, 1) {
            let iso = day.iso_week_date();
            assert_eq!(
                week_of_year(day, ISO_WEEKS),
                (i32::from(iso.year()), i32::from(iso.week())),
                "{day}"
            );
            let locale = week_of_year(day, LOCALE_WEEKS);
            // A Sunday-first week starts on its Sunday; every day of it shares the week.
            assert_eq!(
                week_of_year(start_of_week(day, LOCALE_WEEKS), LOCALE_WEEKS),
                locale
            );
            day = day.tomorrow().expect("in range");
        }
    }

    #[test]
    fn calendar_edges_never_panic() {
        for when in [
            DateTime::MIN,
            DateTime::MAX,
            at(-1, 1, 1, 0, 0, 0),
            at(9999, 12, 31, 23, 59, 59),
        ] {
            let text = format(
                "YYYYYY YYYY YY gggg ww GGGG WW DDDD Do X x Z N NNNN",
                when,
                Some(-50_400),
            );
            assert!(!text.is_empty());
        }
        check("YYYY", at(-1, 1, 1, 0, 0, 0), "-0001");
        assert_eq!(start_of_week(Date::MIN, ISO_WEEKS), Date::MIN);
    }

    #[test]
    fn monday_first_locales_number_weeks_as_iso() {
        // Sunday 2024-12-29: English week 1 of 2025, German (ISO-like) week 52 of 2024.
        let sunday = at(2024, 12, 29, 0, 0, 0);
        assert_eq!(format("gggg-[W]ww e", sunday, None), "2025-W01 0");
        assert_eq!(
            format_in("gggg-[W]ww e", sunday, None, ISO_WEEKS),
            "2024-W52 6"
        );
        assert_eq!(
            format_in("GGGG-[W]WW E", sunday, None, LOCALE_WEEKS),
            "2024-W52 7"
        );
    }

    #[test]
    fn iso_week_formats() {
        assert!(uses_iso_weeks("GGGG-[W]WW"));
        assert!(uses_iso_weeks("YYYY-[W]W"));
        assert!(!uses_iso_weeks("gggg-[W]ww"));
        assert!(!uses_iso_weeks("YYYY-[Week] MM"));
        assert!(!uses_iso_weeks("[GGGG W] YYYY"));
        assert!(!uses_iso_weeks("\\W YYYY"));
    }

    #[test]
    fn weekday_names() {
        assert_eq!(weekday_named("monday"), Some(Weekday::Monday));
        assert_eq!(weekday_named("Sun"), Some(Weekday::Sunday));
        assert_eq!(weekday_named("mo"), None);
        assert_eq!(weekday_named("friday!"), None);
    }
}
