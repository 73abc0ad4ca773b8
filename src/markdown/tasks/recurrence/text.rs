//! A rule written back as the plugin's rule library renders it in English, so a task keeps the
//! `every ...` text the plugin would write.

use super::{ByWeekday, Frequency, Rule, WORKING_DAYS};
use jiff::civil::Weekday;

use crate::markdown::moment::MONTHS;

fn weekday_name(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

fn ordinal(number: i32) -> String {
    if number == -1 {
        return "last".to_owned();
    }
    let magnitude = number.unsigned_abs();
    let suffix = match magnitude {
        1 | 21 | 31 => "st",
        2 | 22 => "nd",
        3 | 23 => "rd",
        _ => "th",
    };
    if number < 0 {
        format!("{magnitude}{suffix} last")
    } else {
        format!("{magnitude}{suffix}")
    }
}

/// Joins like the rule library: `a, b and c` with a final word, `a, b, c` without.
fn list(items: &[String], final_word: Option<&str>) -> String {
    match final_word {
        None => items.join(", "),
        Some(word) => {
            let mut text = String::new();
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    if index + 1 == items.len() {
                        text.push_str(&format!(" {word} "));
                    } else {
                        text.push_str(", ");
                    }
                }
                text.push_str(item);
            }
            text
        }
    }
}

fn weekday_text(day: &ByWeekday) -> String {
    match day.nth {
        Some(position) => format!("{} {}", ordinal(position), weekday_name(day.weekday)),
        None => weekday_name(day.weekday).to_owned(),
    }
}

/// The rule library's English rendering of a rule.
pub(super) fn rule_text(rule: &Rule) -> String {
    let shape = RuleShape::of(rule);
    let mut words = Words(vec!["every".to_owned()]);
    match rule.frequency {
        Frequency::Daily => shape.daily(&mut words),
        Frequency::Weekly => shape.weekly(&mut words),
        Frequency::Monthly => shape.monthly(&mut words),
        Frequency::Yearly => shape.yearly(&mut words),
    }
    if let Some(count) = rule.count {
        words.add("for");
        words.add(&count.to_string());
        words.add(if count % 100 != 1 { "times" } else { "time" });
    }
    words.0.join(" ")
}

/// The words of a rule's text, in order.
struct Words(Vec<String>);

impl Words {
    fn add(&mut self, word: &str) {
        self.0.push(word.to_owned());
    }
}

/// What the text of a rule depends on, worked out once: its interval, its month days in the
/// library's order (positive ones rising, then negative ones), and its week days split into those
/// of every week and the nth ones, each in week order.
struct RuleShape<'a> {
    rule: &'a Rule,
    interval: u32,
    plural: bool,
    month_days: Option<Vec<i32>>,
    all_weeks: Option<Vec<ByWeekday>>,
    some_weeks: Option<Vec<ByWeekday>>,
    is_weekdays: bool,
    is_every_day: bool,
    has_weekdays: bool,
}

impl<'a> RuleShape<'a> {
    fn of(rule: &'a Rule) -> RuleShape<'a> {
        let interval = rule.interval.unwrap_or(1);
        let month_days: Option<Vec<i32>> = rule.by_month_day.as_ref().map(|days| {
            let mut positive: Vec<i32> = days.iter().copied().filter(|day| *day > 0).collect();
            let mut negative: Vec<i32> = days.iter().copied().filter(|day| *day < 0).collect();
            positive.sort_unstable();
            negative.sort_unstable_by(|a, b| b.cmp(a));
            positive.extend(negative);
            positive
        });
        let (all_weeks, some_weeks, is_weekdays, is_every_day) = match &rule.by_weekday {
            Some(days) => {
                let has = |weekday: Weekday| days.iter().any(|day| day.weekday == weekday);
                let is_weekdays = WORKING_DAYS.iter().all(|day| has(*day))
                    && !has(Weekday::Saturday)
                    && !has(Weekday::Sunday);
                let is_every_day = WORKING_DAYS.iter().all(|day| has(*day))
                    && has(Weekday::Saturday)
                    && has(Weekday::Sunday);
                let order = |day: &ByWeekday| day.weekday.to_monday_zero_offset();
                let mut all: Vec<ByWeekday> =
                    days.iter().copied().filter(|d| d.nth.is_none()).collect();
                let mut some: Vec<ByWeekday> =
                    days.iter().copied().filter(|d| d.nth.is_some()).collect();
                all.sort_by_key(order);
                some.sort_by_key(order);
                (
                    (!all.is_empty()).then_some(all),
                    (!some.is_empty()).then_some(some),
                    is_weekdays,
                    is_every_day,
                )
            }
            None => (None, None, false, false),
        };
        RuleShape {
            rule,
            interval,
            plural: interval % 100 != 1,
            month_days: month_days.filter(|days| !days.is_empty()),
            all_weeks,
            some_weeks,
            is_weekdays,
            is_every_day,
            has_weekdays: rule.by_weekday.is_some(),
        }
    }

    fn daily(&self, words: &mut Words) {
        if self.interval != 1 {
            words.add(&self.interval.to_string());
        }
        if self.is_weekdays {
            words.add(if self.plural { "weekdays" } else { "weekday" });
        } else {
            words.add(if self.plural { "days" } else { "day" });
        }
        if let Some(months) = &self.rule.by_month {
            words.add("in");
            words.add(&month_list(months));
        }
        self.days(words);
    }

    fn weekly(&self, words: &mut Words) {
        if self.interval != 1 {
            words.add(&self.interval.to_string());
            words.add(if self.plural { "weeks" } else { "week" });
        }
        if self.is_weekdays {
            if self.interval == 1 {
                words.add(if self.plural { "weekdays" } else { "weekday" });
            } else {
                words.add("on");
                words.add("weekdays");
            }
        } else if self.is_every_day {
            words.add(if self.plural { "days" } else { "day" });
        } else {
            if self.interval == 1 {
                words.add("week");
            }
            if let Some(months) = &self.rule.by_month {
                words.add("in");
                words.add(&month_list(months));
            }
            self.days(words);
        }
    }

    fn monthly(&self, words: &mut Words) {
        if let Some(months) = &self.rule.by_month {
            if self.interval != 1 {
                words.add(&self.interval.to_string());
                words.add("months");
                if self.plural {
                    words.add("in");
                }
            }
            words.add(&month_list(months));
        } else {
            if self.interval != 1 {
                words.add(&self.interval.to_string());
            }
            words.add(if self.plural { "months" } else { "month" });
        }
        if self.month_days.is_none() && self.is_weekdays {
            words.add("on");
            words.add("weekdays");
        } else {
            self.days(words);
        }
    }

    fn yearly(&self, words: &mut Words) {
        if let Some(months) = &self.rule.by_month {
            if self.interval != 1 {
                words.add(&self.interval.to_string());
                words.add("years");
            }
            words.add(&month_list(months));
        } else {
            if self.interval != 1 {
                words.add(&self.interval.to_string());
            }
            words.add(if self.plural { "years" } else { "year" });
        }
        self.days(words);
    }

    /// The month days when the rule has some, else its week days.
    fn days(&self, words: &mut Words) {
        if let Some(days) = &self.month_days {
            self.by_month_day_text(words, days);
        } else if self.has_weekdays {
            self.by_weekday_text(words);
        }
    }

    fn by_month_day_text(&self, words: &mut Words, days: &[i32]) {
        let texts: Vec<String> = days.iter().map(|day| ordinal(*day)).collect();
        if let Some(all) = &self.all_weeks {
            let names: Vec<String> = all.iter().map(weekday_text).collect();
            words.add("on");
            words.add(&list(&names, Some("or")));
            words.add("the");
            words.add(&list(&texts, Some("or")));
        } else {
            words.add("on the");
            words.add(&list(&texts, Some("and")));
        }
    }

    fn by_weekday_text(&self, words: &mut Words) {
        if let Some(all) = &self.all_weeks
            && !self.is_weekdays
        {
            let names: Vec<String> = all.iter().map(weekday_text).collect();
            words.add("on");
            words.add(&list(&names, None));
        }
        if let Some(some) = &self.some_weeks {
            if self.all_weeks.is_some() {
                words.add("and");
            }
            let names: Vec<String> = some.iter().map(weekday_text).collect();
            words.add("on the");
            words.add(&list(&names, Some("and")));
        }
    }
}

fn month_list(months: &[i8]) -> String {
    let names: Vec<String> = months
        .iter()
        .filter_map(|month| MONTHS.get(usize::try_from(*month - 1).ok()?))
        .map(|name| (*name).to_owned())
        .collect();
    list(&names, Some("and"))
}
