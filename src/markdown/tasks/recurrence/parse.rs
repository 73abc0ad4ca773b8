//! Reading `every ...` as the plugin's rule library does: a lexer over its token table and a
//! recursive descent into a `Rule`; anything it would not read, or that makes no sense for dates,
//! is `NotARule`.

use super::{ByWeekday, Frequency, INTERVAL_LIMIT, Rule};
use jiff::civil::Weekday;
use regex::Regex;
use std::sync::LazyLock;

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
pub(super) struct NotARule;

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

pub(super) const WORKING_DAYS: [Weekday; 5] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
];

pub(super) fn plain(weekday: Weekday) -> ByWeekday {
    ByWeekday { weekday, nth: None }
}

/// The rule library's recursive-descent reading of `every ...`.
pub(super) fn parse_rule(text: &str) -> Result<Rule, NotARule> {
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
    rule.interval = interval(&mut lexer)?;
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
        Some(Token::Day(weekday)) => weekday_rule(&mut lexer, &mut rule, weekday)?,
        Some(Token::Month(month)) => month_rule(&mut lexer, &mut rule, month)?,
        // Hours and minutes make no sense for dates; anything else is not a rule.
        _ => return Err(NotARule),
    }
    Ok(rule)
}

/// `N` after `every`: the interval, `None` for 1 (`every 1 weeks` is `every week`: one rule,
/// whichever way it was spelled).
fn interval(lexer: &mut Lexer<'_>) -> Result<Option<u32>, NotARule> {
    if !lexer.is(Token::Number) {
        return Ok(None);
    }
    let interval: u32 = lexer.value.parse().map_err(|_| NotARule)?;
    if interval > INTERVAL_LIMIT {
        return Err(NotARule);
    }
    lexer.next_symbol();
    Ok((interval != 1).then_some(interval))
}

/// `every monday, wednesday ...`: weekly on those days.
fn weekday_rule(lexer: &mut Lexer<'_>, rule: &mut Rule, first: Weekday) -> Result<(), NotARule> {
    rule.frequency = Frequency::Weekly;
    let mut days = vec![plain(first)];
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
        at(lexer)?;
        for_count(lexer, rule)?;
    } else {
        rule.by_weekday = Some(days);
    }
    Ok(())
}

/// `every january, march ...`: yearly in those months.
fn month_rule(lexer: &mut Lexer<'_>, rule: &mut Rule, first: i8) -> Result<(), NotARule> {
    rule.frequency = Frequency::Yearly;
    let mut months = vec![first];
    if lexer.next_symbol() {
        while lexer.accept(Token::Comma) {
            if lexer.is_done() {
                return Err(NotARule);
            }
            months.push(lexer.month().ok_or(NotARule)?);
            lexer.next_symbol();
        }
        rule.by_month = Some(months);
        on(lexer, rule)?;
        for_count(lexer, rule)?;
    } else {
        rule.by_month = Some(months);
    }
    Ok(())
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
