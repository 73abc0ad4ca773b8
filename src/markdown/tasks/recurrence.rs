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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Skip,
    Number,
    NumberAsText,
    Every,
    Days,
    Weekdays,
    Weeks,
    Hours,
    Minutes,
    Months,
    Years,
    On,
    At,
    The,
    First,
    Second,
    Third,
    Nth,
    Last,
    For,
    Times,
    Until,
    Day(Weekday),
    Month(i8),
    Comma,
}

/// The English vocabulary, in the order the rule library tries it (the longest match wins, the first
/// listed on a tie).
static TOKENS: LazyLock<Vec<(Token, Regex)>> = LazyLock::new(|| {
    let table: Vec<(Token, &str)> = vec![
        (Token::Skip, r"^[ \r\n\t]+|^\.$"),
        (Token::Number, r"^[1-9][0-9]*"),
        (Token::NumberAsText, r"(?i)^(one|two|three)"),
        (Token::Every, r"(?i)^every"),
        (Token::Days, r"(?i)^days?"),
        (Token::Weekdays, r"(?i)^weekdays?"),
        (Token::Weeks, r"(?i)^weeks?"),
        (Token::Hours, r"(?i)^hours?"),
        (Token::Minutes, r"(?i)^minutes?"),
        (Token::Months, r"(?i)^months?"),
        (Token::Years, r"(?i)^years?"),
        (Token::On, r"(?i)^(on|in)"),
        (Token::At, r"(?i)^(at)"),
        (Token::The, r"(?i)^the"),
        (Token::First, r"(?i)^first"),
        (Token::Second, r"(?i)^second"),
        (Token::Third, r"(?i)^third"),
        (Token::Nth, r"(?i)^([1-9][0-9]*)(\.|th|nd|rd|st)"),
        (Token::Last, r"(?i)^last"),
        (Token::For, r"(?i)^for"),
        (Token::Times, r"(?i)^times?"),
        (Token::Until, r"(?i)^(un)?til"),
        (Token::Day(Weekday::Monday), r"(?i)^mo(n(day)?)?"),
        (Token::Day(Weekday::Tuesday), r"(?i)^tu(e(s(day)?)?)?"),
        (Token::Day(Weekday::Wednesday), r"(?i)^we(d(n(esday)?)?)?"),
        (Token::Day(Weekday::Thursday), r"(?i)^th(u(r(sday)?)?)?"),
        (Token::Day(Weekday::Friday), r"(?i)^fr(i(day)?)?"),
        (Token::Day(Weekday::Saturday), r"(?i)^sa(t(urday)?)?"),
        (Token::Day(Weekday::Sunday), r"(?i)^su(n(day)?)?"),
        (Token::Month(1), r"(?i)^jan(uary)?"),
        (Token::Month(2), r"(?i)^feb(ruary)?"),
        (Token::Month(3), r"(?i)^mar(ch)?"),
        (Token::Month(4), r"(?i)^apr(il)?"),
        (Token::Month(5), r"(?i)^may"),
        (Token::Month(6), r"(?i)^june?"),
        (Token::Month(7), r"(?i)^july?"),
        (Token::Month(8), r"(?i)^aug(ust)?"),
        (Token::Month(9), r"(?i)^sep(t(ember)?)?"),
        (Token::Month(10), r"(?i)^oct(ober)?"),
        (Token::Month(11), r"(?i)^nov(ember)?"),
        (Token::Month(12), r"(?i)^dec(ember)?"),
        (Token::Comma, r"(?i)^(,\s*|(and|or)\s*)+"),
    ];
    table
        .into_iter()
        .filter_map(|(token, pattern)| Regex::new(pattern).ok().map(|regex| (token, regex)))
        .collect()
});

/// Why a text is not a rule; the detail never leaves this module.
struct NotARule;

/// The rule library's tokenizer: one current symbol with its matched text.
struct Lexer<'a> {
    text: &'a str,
    done: bool,
    symbol: Option<Token>,
    value: &'a str,
    nth_value: Option<i32>,
}

impl<'a> Lexer<'a> {
    fn start(text: &'a str) -> Option<Lexer<'a>> {
        let mut lexer = Lexer {
            text,
            done: false,
            symbol: None,
            value: "",
            nth_value: None,
        };
        lexer.next_symbol().then_some(lexer)
    }

    fn next_symbol(&mut self) -> bool {
        self.symbol = None;
        self.value = "";
        self.nth_value = None;
        loop {
            if self.done {
                return false;
            }
            let mut best: Option<(Token, usize, Option<i32>)> = None;
            for (token, regex) in TOKENS.iter() {
                if let Some(found) = regex.captures(self.text) {
                    let length = found.get(0).map_or(0, |whole| whole.len());
                    if best.is_none_or(|(_, best_length, _)| length > best_length) {
                        let nth = found.get(1).and_then(|digits| digits.as_str().parse().ok());
                        best = Some((*token, length, nth));
                    }
                }
            }
            let Some((token, length, nth)) = best else {
                self.done = true;
                return false;
            };
            let (value, rest) = self.text.split_at(length);
            self.text = rest;
            if self.text.is_empty() {
                self.done = true;
            }
            if token != Token::Skip {
                self.symbol = Some(token);
                self.value = value;
                self.nth_value = nth;
                return true;
            }
        }
    }

    fn accept(&mut self, token: Token) -> bool {
        if self.symbol == Some(token) {
            self.next_symbol();
            true
        } else {
            false
        }
    }

    fn is(&self, token: Token) -> bool {
        self.symbol == Some(token)
    }

    fn is_done(&self) -> bool {
        self.done && self.symbol.is_none()
    }

    fn weekday(&self) -> Option<Weekday> {
        match self.symbol {
            Some(Token::Day(weekday)) => Some(weekday),
            _ => None,
        }
    }

    fn month(&self) -> Option<i8> {
        match self.symbol {
            Some(Token::Month(month)) => Some(month),
            _ => None,
        }
    }
}

const WORKING_DAYS: [Weekday; 5] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
];

fn plain(weekday: Weekday) -> ByWeekday {
    ByWeekday { weekday, nth: None }
}

/// The rule library's recursive-descent reading of `every ...`.
fn parse_rule(text: &str) -> Result<Rule, NotARule> {
    let mut lexer = Lexer::start(text).ok_or(NotARule)?;
    let mut rule = Rule {
        frequency: Frequency::Daily,
        interval: None,
        by_weekday: None,
        by_month_day: None,
        by_month: None,
        count: None,
    };
    if !lexer.accept(Token::Every) {
        return Err(NotARule);
    }
    if lexer.is(Token::Number) {
        let interval: u32 = lexer.value.parse().map_err(|_| NotARule)?;
        if interval > INTERVAL_LIMIT {
            return Err(NotARule);
        }
        // `every 1 weeks` is `every week`: one rule, whichever way it was spelled.
        rule.interval = (interval != 1).then_some(interval);
        lexer.next_symbol();
    }
    if lexer.is_done() {
        return Err(NotARule);
    }
    match lexer.symbol {
        Some(Token::Days) => {
            rule.frequency = Frequency::Daily;
            if lexer.next_symbol() {
                at(&mut lexer)?;
                for_count(&mut lexer, &mut rule)?;
            }
        }
        Some(Token::Weekdays) => {
            rule.frequency = Frequency::Weekly;
            rule.by_weekday = Some(WORKING_DAYS.iter().copied().map(plain).collect());
            lexer.next_symbol();
            at(&mut lexer)?;
            for_count(&mut lexer, &mut rule)?;
        }
        Some(Token::Weeks) => {
            rule.frequency = Frequency::Weekly;
            if lexer.next_symbol() {
                on(&mut lexer, &mut rule)?;
                at(&mut lexer)?;
                for_count(&mut lexer, &mut rule)?;
            }
        }
        Some(Token::Months) | Some(Token::Years) => {
            rule.frequency = if lexer.is(Token::Months) {
                Frequency::Monthly
            } else {
                Frequency::Yearly
            };
            if lexer.next_symbol() {
                on(&mut lexer, &mut rule)?;
                for_count(&mut lexer, &mut rule)?;
            }
        }
        Some(Token::Day(weekday)) => {
            rule.frequency = Frequency::Weekly;
            let mut days = vec![plain(weekday)];
            if lexer.next_symbol() {
                while lexer.accept(Token::Comma) {
                    if lexer.is_done() {
                        return Err(NotARule);
                    }
                    let next = lexer.weekday().ok_or(NotARule)?;
                    days.push(plain(next));
                    lexer.next_symbol();
                }
                rule.by_weekday = Some(days);
                at(&mut lexer)?;
                for_count(&mut lexer, &mut rule)?;
            } else {
                rule.by_weekday = Some(days);
            }
        }
        Some(Token::Month(month)) => {
            rule.frequency = Frequency::Yearly;
            let mut months = vec![month];
            if lexer.next_symbol() {
                while lexer.accept(Token::Comma) {
                    if lexer.is_done() {
                        return Err(NotARule);
                    }
                    months.push(lexer.month().ok_or(NotARule)?);
                    lexer.next_symbol();
                }
                rule.by_month = Some(months);
                on(&mut lexer, &mut rule)?;
                for_count(&mut lexer, &mut rule)?;
            } else {
                rule.by_month = Some(months);
            }
        }
        // Hours and minutes make no sense for dates; anything else is not a rule.
        _ => return Err(NotARule),
    }
    Ok(rule)
}

/// `first`, `2nd`, `last`, `second last` ...; consumes what it reads.
fn nth(lexer: &mut Lexer<'_>) -> Result<Option<i32>, NotARule> {
    let value = match lexer.symbol {
        Some(Token::Last) => {
            lexer.next_symbol();
            -1
        }
        Some(Token::First) => {
            lexer.next_symbol();
            1
        }
        Some(Token::Second) | Some(Token::Third) => {
            let base = if lexer.is(Token::Second) { 2 } else { 3 };
            lexer.next_symbol();
            if lexer.accept(Token::Last) {
                -base
            } else {
                base
            }
        }
        Some(Token::Nth) => {
            let value = lexer.nth_value.ok_or(NotARule)?;
            if value > 366 {
                return Err(NotARule);
            }
            lexer.next_symbol();
            if lexer.accept(Token::Last) {
                -value
            } else {
                value
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(value))
}

fn on(lexer: &mut Lexer<'_>, rule: &mut Rule) -> Result<(), NotARule> {
    let on = lexer.accept(Token::On);
    let the = lexer.accept(Token::The);
    if !(on || the) {
        return Ok(());
    }
    loop {
        let position = nth(lexer)?;
        let weekday = lexer.weekday();
        let month = lexer.month();
        if let Some(position) = position {
            if let Some(weekday) = weekday {
                lexer.next_symbol();
                rule.by_weekday
                    .get_or_insert_with(Vec::new)
                    .push(ByWeekday {
                        weekday,
                        nth: Some(position),
                    });
            } else {
                rule.by_month_day
                    .get_or_insert_with(Vec::new)
                    .push(position);
                lexer.accept(Token::Days);
            }
        } else if let Some(weekday) = weekday {
            lexer.next_symbol();
            rule.by_weekday
                .get_or_insert_with(Vec::new)
                .push(plain(weekday));
        } else if lexer.is(Token::Weekdays) {
            lexer.next_symbol();
            if rule.by_weekday.is_none() {
                rule.by_weekday = Some(WORKING_DAYS.iter().copied().map(plain).collect());
            }
        } else if lexer.is(Token::Weeks) {
            // Week numbers: the plugin accepts them, but they are not supported here.
            return Err(NotARule);
        } else if let Some(month) = month {
            lexer.next_symbol();
            rule.by_month.get_or_insert_with(Vec::new).push(month);
        } else {
            return Ok(());
        }
        if !(lexer.accept(Token::Comma) || lexer.accept(Token::The) || lexer.accept(Token::On)) {
            return Ok(());
        }
    }
}

fn at(lexer: &mut Lexer<'_>) -> Result<(), NotARule> {
    // Times of day are meaningless for date-only tasks; a rule with them is not recognised.
    if lexer.is(Token::At) {
        return Err(NotARule);
    }
    Ok(())
}

fn for_count(lexer: &mut Lexer<'_>, rule: &mut Rule) -> Result<(), NotARule> {
    if lexer.is(Token::Until) {
        return Err(NotARule);
    }
    if lexer.accept(Token::For) {
        if !lexer.is(Token::Number) {
            return Err(NotARule);
        }
        rule.count = Some(lexer.value.parse().map_err(|_| NotARule)?);
        lexer.next_symbol();
    }
    Ok(())
}

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

const MONTH_NAMES: [&str; 12] = [
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
fn rule_text(rule: &Rule) -> String {
    let interval = rule.interval.unwrap_or(1);
    let plural = interval % 100 != 1;
    let mut words: Vec<String> = vec!["every".to_owned()];
    let mut add = |word: &str| words.push(word.to_owned());

    let month_days: Option<Vec<i32>> = rule.by_month_day.as_ref().map(|days| {
        let mut positive: Vec<i32> = days.iter().copied().filter(|day| *day > 0).collect();
        let mut negative: Vec<i32> = days.iter().copied().filter(|day| *day < 0).collect();
        positive.sort_unstable();
        negative.sort_unstable_by(|a, b| b.cmp(a));
        positive.extend(negative);
        positive
    });
    let month_days = month_days.filter(|days| !days.is_empty());
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
    let has_weekdays = rule.by_weekday.is_some();
    let month_list = |months: &[i8]| {
        let names: Vec<String> = months
            .iter()
            .filter_map(|month| MONTH_NAMES.get(usize::try_from(*month - 1).ok()?))
            .map(|name| (*name).to_owned())
            .collect();
        list(&names, Some("and"))
    };
    let by_month_day_text = |add: &mut dyn FnMut(&str), days: &[i32]| {
        let texts: Vec<String> = days.iter().map(|day| ordinal(*day)).collect();
        if let Some(all) = &all_weeks {
            let names: Vec<String> = all.iter().map(weekday_text).collect();
            add("on");
            add(&list(&names, Some("or")));
            add("the");
            add(&list(&texts, Some("or")));
        } else {
            add("on the");
            add(&list(&texts, Some("and")));
        }
    };
    let by_weekday_text = |add: &mut dyn FnMut(&str)| {
        if let Some(all) = &all_weeks
            && !is_weekdays
        {
            let names: Vec<String> = all.iter().map(weekday_text).collect();
            add("on");
            add(&list(&names, None));
        }
        if let Some(some) = &some_weeks {
            if all_weeks.is_some() {
                add("and");
            }
            let names: Vec<String> = some.iter().map(weekday_text).collect();
            add("on the");
            add(&list(&names, Some("and")));
        }
    };

    match rule.frequency {
        Frequency::Daily => {
            if interval != 1 {
                add(&interval.to_string());
            }
            if is_weekdays {
                add(if plural { "weekdays" } else { "weekday" });
            } else {
                add(if plural { "days" } else { "day" });
            }
            if let Some(months) = &rule.by_month {
                add("in");
                add(&month_list(months));
            }
            if let Some(days) = &month_days {
                by_month_day_text(&mut add, days);
            } else if has_weekdays {
                by_weekday_text(&mut add);
            }
        }
        Frequency::Weekly => {
            if interval != 1 {
                add(&interval.to_string());
                add(if plural { "weeks" } else { "week" });
            }
            if is_weekdays {
                if interval == 1 {
                    add(if plural { "weekdays" } else { "weekday" });
                } else {
                    add("on");
                    add("weekdays");
                }
            } else if is_every_day {
                add(if plural { "days" } else { "day" });
            } else {
                if interval == 1 {
                    add("week");
                }
                if let Some(months) = &rule.by_month {
                    add("in");
                    add(&month_list(months));
                }
                if let Some(days) = &month_days {
                    by_month_day_text(&mut add, days);
                } else if has_weekdays {
                    by_weekday_text(&mut add);
                }
            }
        }
        Frequency::Monthly => {
            if let Some(months) = &rule.by_month {
                if interval != 1 {
                    add(&interval.to_string());
                    add("months");
                    if plural {
                        add("in");
                    }
                }
                add(&month_list(months));
            } else {
                if interval != 1 {
                    add(&interval.to_string());
                }
                add(if plural { "months" } else { "month" });
            }
            if let Some(days) = &month_days {
                by_month_day_text(&mut add, days);
            } else if is_weekdays {
                add("on");
                add("weekdays");
            } else if has_weekdays {
                by_weekday_text(&mut add);
            }
        }
        Frequency::Yearly => {
            if let Some(months) = &rule.by_month {
                if interval != 1 {
                    add(&interval.to_string());
                    add("years");
                }
                add(&month_list(months));
            } else {
                if interval != 1 {
                    add(&interval.to_string());
                }
                add(if plural { "years" } else { "year" });
            }
            if let Some(days) = &month_days {
                by_month_day_text(&mut add, days);
            } else if has_weekdays {
                by_weekday_text(&mut add);
            }
        }
    }
    if let Some(count) = rule.count {
        add("for");
        add(&count.to_string());
        add(if count % 100 != 1 { "times" } else { "time" });
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
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
}
