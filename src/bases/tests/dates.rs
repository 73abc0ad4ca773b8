//! Reading dates and durations, and the text of numbers, dates and durations.

use jiff::civil::date;
use jiff::tz::TimeZone;

use super::super::dates::{parse_date, parse_duration, relative};
use super::super::value::{DateValue, Duration, Value, number_text};

#[test]
fn dates_read_in_the_forms_obsidian_writes() {
    let utc = TimeZone::UTC;
    assert_eq!(
        parse_date("2025-01-01", &utc),
        Some(DateValue::day(date(2025, 1, 1)))
    );
    let noon = Some(DateValue::timed(date(2025, 1, 1).at(12, 0, 0, 0)));
    assert_eq!(parse_date("2025-01-01 12:00:00", &utc), noon);
    assert_eq!(parse_date("2025-01-01T12:00", &utc), noon);
    assert_eq!(parse_date("2025-01-01T12:00:00Z", &utc), noon);
    let paris = TimeZone::get("Europe/Paris").expect("bundled tz");
    assert_eq!(
        parse_date("2025-01-01T12:00:00Z", &paris),
        Some(DateValue::timed(date(2025, 1, 1).at(13, 0, 0, 0)))
    );
    assert_eq!(parse_date("yesterday", &utc), None);
    assert_eq!(parse_date("2025-13-01", &utc), None);
}

#[test]
fn durations_read_in_every_unit_form() {
    let day = 86_400_000.0;
    let cases: &[(&str, f64, f64)] = &[
        ("1d", 0.0, day),
        ("2 weeks", 0.0, 14.0 * day),
        ("1M", 1.0, 0.0),
        ("3 months", 3.0, 0.0),
        ("1y", 12.0, 0.0),
        ("2 years", 24.0, 0.0),
        ("5h", 0.0, 5.0 * 3_600_000.0),
        ("1 hour", 0.0, 3_600_000.0),
        ("3m", 0.0, 180_000.0),
        ("1 minute", 0.0, 60_000.0),
        ("10s", 0.0, 10_000.0),
        ("1 second", 0.0, 1_000.0),
        ("1w", 0.0, 7.0 * day),
        ("1M 4h", 1.0, 4.0 * 3_600_000.0),
        ("-1d", 0.0, -day),
    ];
    for (text, months, millis) in cases {
        assert_eq!(
            parse_duration(text),
            Some(Duration {
                months: *months,
                millis: *millis
            }),
            "{text}"
        );
    }
    assert_eq!(parse_duration("soon"), None);
    assert_eq!(parse_duration("1 fortnight"), None);
    assert_eq!(parse_duration(""), None);
}

#[test]
fn relative_reads_like_moment() {
    let now = date(2025, 6, 1).at(12, 0, 0, 0);
    let at = |d: jiff::civil::DateTime| relative(&DateValue::timed(d), now);
    assert_eq!(at(date(2025, 6, 1).at(11, 59, 30, 0)), "a few seconds ago");
    assert_eq!(at(date(2025, 6, 1).at(11, 30, 0, 0)), "30 minutes ago");
    assert_eq!(at(date(2025, 5, 31).at(12, 0, 0, 0)), "a day ago");
    assert_eq!(at(date(2025, 5, 29).at(12, 0, 0, 0)), "3 days ago");
    assert_eq!(at(date(2025, 3, 1).at(12, 0, 0, 0)), "3 months ago");
    assert_eq!(at(date(2023, 6, 1).at(12, 0, 0, 0)), "2 years ago");
    assert_eq!(at(date(2025, 6, 4).at(12, 0, 0, 0)), "in 3 days");
}

#[test]
fn text_of_values() {
    assert_eq!(number_text(3.0), "3");
    assert_eq!(number_text(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(number_text(1e21), "1e+21");
    assert_eq!(number_text(0.000001), "0.000001");
    assert_eq!(number_text(0.00000015), "1.5e-7");
    assert_eq!(number_text(-0.0), "0");
    assert_eq!(number_text(f64::NAN), "NaN");
    assert_eq!(
        Value::Date(DateValue::day(date(2025, 1, 2))).to_text(),
        "2025-01-02"
    );
    let duration = Duration {
        months: 1.0,
        millis: 2.0 * 86_400_000.0 + 3_600_000.0,
    };
    assert_eq!(Value::Duration(duration).to_text(), "1 month 2 days 1 hour");
}

#[test]
fn the_time_zone_places_dates_on_the_epoch() {
    let mut paris = super::vault();
    paris.zone = TimeZone::get("Europe/Paris").expect("bundled tz");
    let run = |source: &str| super::eval_in(&paris, "Books/Dune.md", source);
    assert_eq!(
        run(r#"number(date("1970-01-01T01:00:00"))"#),
        Ok(Value::Number(0.0))
    );
    assert_eq!(
        run(r#"date(0)"#),
        Ok(Value::Date(DateValue::timed(
            date(1970, 1, 1).at(1, 0, 0, 0)
        )))
    );
    assert_eq!(
        run(r#"date("2025-01-01T12:00:00Z").hour"#),
        Ok(Value::Number(13.0))
    );
    // Wall-clock arithmetic: a day is a calendar day even across the change to summer time.
    assert_eq!(
        run(r#"date("2025-03-29 12:00") + "1d""#),
        Ok(Value::Date(DateValue::timed(
            date(2025, 3, 30).at(12, 0, 0, 0)
        )))
    );
}
