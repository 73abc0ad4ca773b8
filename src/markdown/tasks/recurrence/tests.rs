//! Rules read, written back and advanced, against cases checked with the Tasks plugin.

use super::*;

fn date(text: &str) -> Date {
    text.parse().expect("test date")
}

fn next(rule: &str, reference: &str, today: &str) -> Option<String> {
    Recurrence::parse(rule)
        .and_then(|recurrence| recurrence.next_reference(Some(date(reference)), date(today)))
        .map(|day| day.to_string())
}

#[test]
fn texts_are_normalised_like_the_plugin() {
    for (input, expected) in [
        ("every Sunday", "every week on Sunday"),
        ("every day", "every day"),
        ("every weekday", "every weekday"),
        ("every 2 weeks", "every 2 weeks"),
        ("every month on the last", "every month on the last"),
        ("every month on the 31st", "every month on the 31st"),
        (
            "every April and December on the 1st and 24th",
            "every April and December on the 1st and 24th",
        ),
        ("every day When Done", "every day when done"),
        (
            "every month on the 2nd Tuesday",
            "every month on the 2nd Tuesday",
        ),
        ("every mon, wed", "every week on Monday, Wednesday"),
        ("every 3 days for 2 times", "every 3 days for 2 times"),
    ] {
        let parsed = Recurrence::parse(input).map(|recurrence| recurrence.text());
        assert_eq!(parsed.as_deref(), Some(expected), "{input}");
    }
    for input in ["every blue moon", "each day", "every", "every day at 9"] {
        assert!(Recurrence::parse(input).is_none(), "{input}");
    }
}

/// rrule writes a yearly rule with months and an interval as `every 7 years April ...`, and
/// its own parser stops after `years` there: the plugin reads the months and days of its
/// own text back as nothing. Quire writes and reads exactly as the plugin does.
#[test]
fn the_plugin_reads_its_own_yearly_interval_with_months_as_plain_years() {
    let first = Recurrence::parse("every 7 April and December on the 1st and 24th");
    let written = first.as_ref().map(Recurrence::text);
    assert_eq!(
        written.as_deref(),
        Some("every 7 years April and December on the 1st and 24th")
    );
    let again = written.as_deref().and_then(Recurrence::parse);
    assert_eq!(again.map(|r| r.text()).as_deref(), Some("every 7 years"));
    let rule = first.map(|r| r.rule);
    assert_eq!(
        rule.as_ref().and_then(|r| r.by_month.clone()),
        Some(vec![4, 12])
    );
    assert_eq!(rule.and_then(|r| r.by_month_day), Some(vec![1, 24]));
}

/// Of month days and weekdays together rrule writes only the days (and `Sa`, the start of
/// any word, is Saturday to its parser): the plugin's text of such a rule reads back without
/// the weekdays.
#[test]
fn the_plugin_reads_its_own_month_days_with_weekdays_without_the_weekdays() {
    let first = Recurrence::parse("every April on the 1st and 24th Sample");
    let rule = first.as_ref().map(|r| r.rule.clone());
    assert_eq!(
        rule.as_ref().and_then(|r| r.by_month_day.clone()),
        Some(vec![1])
    );
    assert_eq!(
        rule.and_then(|r| r.by_weekday),
        Some(vec![ByWeekday {
            weekday: Weekday::Saturday,
            nth: Some(24)
        }])
    );
    let written = first.map(|r| r.text());
    assert_eq!(written.as_deref(), Some("every April on the 1st"));
    let again = written.as_deref().and_then(Recurrence::parse);
    assert_eq!(again.and_then(|r| r.rule.by_weekday), None);
}

#[test]
fn next_occurrences_follow_the_plugin() {
    let today = "2025-06-15";
    assert_eq!(
        next("every month", "2022-01-31", today).as_deref(),
        Some("2022-02-28")
    );
    assert_eq!(
        next("every month on the 31st", "2021-11-30", today).as_deref(),
        Some("2021-12-31")
    );
    assert_eq!(
        next("every month on the 31st", "2022-01-31", today).as_deref(),
        Some("2022-03-31")
    );
    assert_eq!(
        next("every year", "2024-02-29", today).as_deref(),
        Some("2025-02-28")
    );
    assert_eq!(
        next("every weekday", "2025-06-13", today).as_deref(),
        Some("2025-06-16")
    );
    assert_eq!(
        next("every week when done", "2022-02-20", today).as_deref(),
        Some("2025-06-22")
    );
    assert_eq!(
        next("every month on the last Friday", "2025-06-27", today).as_deref(),
        Some("2025-07-25")
    );
    assert_eq!(next("every day for 1 time", "2025-06-10", today), None);
}
