//! moment.js format strings (daily, weekly and periodic note names): any pattern formats any date
//! without panicking; bracketed text is copied as it is; `YYYY-MM-DD` is the ISO date; a week's
//! name is the same on every day of that week, and `start_of_week` stays in the week.

use jiff::civil::{Date, DateTime, Time};
use quire::markdown::moment::{
    ISO_WEEKS, LOCALE_WEEKS, WeekRule, format, format_in, start_of_week, uses_iso_weeks,
    week_of_year,
};

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    if data.len() < 12 {
        return;
    }
    let (head, rest) = data.split_at(12);
    let Ok(pattern) = std::str::from_utf8(rest) else {
        return;
    };
    let year = i16::from_le_bytes([head[0], head[1]]).clamp(-9999, 9999);
    let month = (head[2] % 12 + 1) as i8;
    let day = (head[3] % 31 + 1) as i8;
    let Ok(date) = Date::new(year, month, day) else {
        return;
    };
    let time = Time::new(
        (head[4] % 24) as i8,
        (head[5] % 60) as i8,
        (head[6] % 60) as i8,
        0,
    )
    .unwrap_or(Time::midnight());
    let at = DateTime::from_parts(date, time);
    let offset = i32::from_le_bytes([head[7], head[8], head[9], head[10]]);
    let offset = (head[11] & 1 == 1).then_some(offset % 93_600);
    let custom = WeekRule {
        dow: i32::from(head[11] >> 1 & 7) % 7,
        doy: i32::from(head[11] >> 4) % 7 + 1,
    };

    for rule in [LOCALE_WEEKS, ISO_WEEKS, custom] {
        let _ = format_in(pattern, at, offset, rule);
    }
    let _ = uses_iso_weeks(pattern);

    if !pattern.contains('[') && !pattern.contains(']') {
        assert_eq!(format(&format!("[{pattern}]"), at, offset), pattern);
    }
    if (1..=9999).contains(&year) {
        assert_eq!(format("YYYY-MM-DD", at, offset), date.to_string());
    }

    for (rule, week_pattern) in [(LOCALE_WEEKS, "gggg-[W]ww"), (ISO_WEEKS, "GGGG-[W]WW")] {
        let start = start_of_week(date, rule);
        assert!(start <= date);
        let (week_year, week) = week_of_year(date, rule);
        assert!((1..=53).contains(&week), "{date}: week {week}");
        assert!((i32::from(year) - 1..=i32::from(year) + 1).contains(&week_year));
        // Saturating at the calendar's first day, the start may fall short of the week's start.
        if start > Date::MIN {
            assert!(date.since(start).is_ok_and(|span| span.get_days() < 7));
            let start_week = start.weekday().to_sunday_zero_offset();
            assert_eq!(
                i32::from(start_week),
                rule.dow,
                "{date} starts its week on {start}"
            );
            assert_eq!(
                week_of_year(start, rule),
                (week_year, week),
                "{date} and {start}"
            );
            if (2..=9998).contains(&year) {
                let start_at = DateTime::from_parts(start, time);
                assert_eq!(
                    format(week_pattern, at, offset),
                    format(week_pattern, start_at, offset),
                    "{date} and {start}"
                );
            }
        }
    }
}
