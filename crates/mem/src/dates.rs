//! Dates and times in running text: a small scanner for month and weekday names, ISO dates,
//! years, clock times and relative phrases ("in July", "last week", "two weekends ago"), and
//! the time spans they name, resolved against a given `now` (the library never reads the
//! clock). Recall uses it twice: a question that names a date prefers memories created then,
//! and each memory is marked at index time when its text carries a time expression, so that a
//! "when" question can prefer those. See docs/ranking.md.

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// A span of time a text names, in seconds since the epoch: `[start, end)`, already widened
/// by the slack its precision allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First second of the span.
    pub start: i64,
    /// First second after it.
    pub end: i64,
}

impl Window {
    /// Whether `at` (seconds since the epoch) falls inside.
    pub fn contains(&self, at: i64) -> bool {
        (self.start..self.end).contains(&at)
    }
}

/// How precisely an expression names its time: a named day is trusted to within a few days, a
/// named year to within a couple of weeks (people say "in July" of the 2nd of August).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Precision {
    Day,
    Week,
    Month,
    Year,
}

impl Precision {
    /// Days added before and after the span.
    fn slack_days(self) -> i64 {
        match self {
            Precision::Day => 3,
            Precision::Week => 5,
            Precision::Month => 10,
            Precision::Year => 15,
        }
    }
}

/// A calendar unit of a relative phrase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Weekend,
    Month,
    Year,
}

/// One time expression found in a text, not yet resolved against a `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mention {
    /// A month, with its day and year when the text gives them ("May 7, 2023", "in July").
    Month { year: Option<i16>, month: i8, day: Option<i8> },
    /// A year on its own ("in 2022").
    Year(i16),
    /// The last such weekday ("on Friday", "last Friday").
    Weekday(Weekday),
    /// `n` units before now ("two weeks ago", "yesterday" = one day ago, "today" = zero).
    Ago(i64, Unit),
    /// The calendar unit before the current one ("last month", "last weekend").
    Last(Unit),
    /// The current calendar unit, up to now ("this week").
    This(Unit),
    /// A time expression that names no past span: a clock time, "tomorrow", "next week".
    Other,
}

/// The spans of time `text` names, resolved against `now` (UTC calendar) and widened by their
/// precision's slack; spans in the future are left out.
pub fn windows(text: &str, now: Timestamp) -> Vec<Window> {
    let today = now.to_zoned_datetime(TimeZone::UTC).date();
    scan(text)
        .into_iter()
        .filter_map(|m| resolve(m, today))
        .filter(|(first, _, _)| *first <= today)
        .filter_map(window)
        .collect()
}

/// Whether `text` carries a time expression (a date, a month or weekday, a year, a clock time,
/// a relative phrase such as "yesterday" or "two weeks ago").
pub fn has_time_expression(text: &str) -> bool {
    !scan(text).is_empty()
}

/// Whether `text` asks when something happened: "when" opening it or followed by an auxiliary
/// ("when did", "and when was"), "what/which date, day, year…", "how long ago". A "when" that
/// joins two clauses ("fix the crash when the user logs in") does not ask.
pub fn asks_when(text: &str) -> bool {
    let words = words(text);
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        match w.as_str() {
            "when" => i == 0 || next.is_some_and(|n| AUXILIARIES.contains(&n)),
            "what" | "which" => matches!(
                next,
                Some("time" | "date" | "day" | "year" | "month" | "week" | "weekend" | "season")
            ),
            "how" => next == Some("long") && words.get(i + 2).map(String::as_str) == Some("ago"),
            _ => false,
        }
    })
}

/// Verbs that follow a question's "when".
const AUXILIARIES: [&str; 16] = [
    "did", "do", "does", "was", "were", "is", "are", "will", "would", "has", "have", "had", "can",
    "could", "should", "shall",
];

/// The lower-cased words of `text`: letters, digits, and the `-` and `:` inside ISO dates and
/// clock times.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == ':'))
        .map(|w| w.trim_matches(|c| c == '-' || c == ':').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn month_of(word: &str) -> Option<(i8, bool)> {
    // (month, whether the word is unambiguous on its own)
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if let Some(i) = full.iter().position(|m| *m == word) {
        // "may" and "march" are also verbs.
        return Some((i as i8 + 1, !matches!(word, "may" | "march")));
    }
    let short =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let i = short.iter().position(|m| *m == word).or_else(|| (word == "sept").then_some(8))?;
    Some((i as i8 + 1, false))
}

fn weekday_of(word: &str) -> Option<(Weekday, bool)> {
    use Weekday::*;
    let days = [
        ("monday", Monday),
        ("tuesday", Tuesday),
        ("wednesday", Wednesday),
        ("thursday", Thursday),
        ("friday", Friday),
        ("saturday", Saturday),
        ("sunday", Sunday),
    ];
    let (name, day) = days.iter().find(|(name, _)| word.starts_with(name))?;
    match &word[name.len()..] {
        "" => Some((*day, true)),
        "s" => Some((*day, false)), // "on Mondays": a habit, no one day
        _ => None,
    }
}

fn unit_of(word: &str) -> Option<Unit> {
    match word.strip_suffix('s').unwrap_or(word) {
        "day" => Some(Unit::Day),
        "week" => Some(Unit::Week),
        "weekend" => Some(Unit::Weekend),
        "month" => Some(Unit::Month),
        "year" => Some(Unit::Year),
        _ => None,
    }
}

/// A count written as digits or as a word ("two", "a couple of").
fn count_of(word: &str) -> Option<i64> {
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    match word {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" | "several" => Some(3),
        _ => words
            .iter()
            .position(|w| *w == word)
            .map(|n| n as i64)
            .or_else(|| word.parse::<i64>().ok().filter(|n| (1..=100).contains(n))),
    }
}

/// A day of the month: "7", "7th", "21st".
fn day_of(word: &str) -> Option<i8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.len() > 2 {
        return None;
    }
    digits.parse::<i8>().ok().filter(|d| (1..=31).contains(d))
}

fn year_of(word: &str) -> Option<i16> {
    (word.len() == 4)
        .then(|| word.parse::<i16>().ok())
        .flatten()
        .filter(|y| (1900..=2100).contains(y))
}

/// An ISO date (`2025-01-28`) or month (`2025-01`).
fn iso_of(word: &str) -> Option<Mention> {
    let mut parts = word.split('-');
    let year = year_of(parts.next()?)?;
    let month = parts.next()?.parse::<i8>().ok().filter(|m| (1..=12).contains(m))?;
    let day = match parts.next() {
        Some(d) if d.len() == 2 => Some(d.parse::<i8>().ok().filter(|d| (1..=31).contains(d))?),
        Some(_) => return None,
        None => None,
    };
    parts.next().is_none().then_some(Mention::Month { year: Some(year), month, day })
}

/// A clock time: `13:58`, `9:30`, `5pm`, `10am`.
fn is_clock(word: &str, next: Option<&str>) -> bool {
    if let Some((h, m)) = word.split_once(':') {
        let h_ok = !h.is_empty() && h.len() <= 2 && h.parse::<u8>().is_ok_and(|h| h < 24);
        let m_ok = m.len() == 2 && m.parse::<u8>().is_ok_and(|m| m < 60);
        return h_ok && m_ok;
    }
    let hour = |s: &str| !s.is_empty() && s.len() <= 2 && s.parse::<u8>().is_ok_and(|h| h <= 12);
    if let Some(h) = word.strip_suffix("am").or_else(|| word.strip_suffix("pm")) {
        return hour(h);
    }
    hour(word) && matches!(next, Some("am" | "pm"))
}

/// Words before a month or a year that make it a time ("in May", "since 2022").
const TIME_PREPOSITIONS: [&str; 12] =
    ["in", "on", "of", "since", "during", "until", "till", "by", "from", "early", "late", "mid"];

/// Every time expression of `text`, in order.
fn scan(text: &str) -> Vec<Mention> {
    let words = words(text);
    let at = |i: usize| words.get(i).map(String::as_str);
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let before = i.checked_sub(1).and_then(at);
        let (mention, used) = if let Some(m) = iso_of(w) {
            (Some(m), 1)
        } else if let Some((month, sure)) = month_of(w) {
            // "7 May", "7th of May"; "May 7"; then an optional year.
            let day_before = before.and_then(day_of).or_else(|| {
                (before == Some("of")).then(|| i.checked_sub(2).and_then(at).and_then(day_of))?
            });
            let day_after = if day_before.is_none() { at(i + 1).and_then(day_of) } else { None };
            let day = day_before.or(day_after);
            let year_at = i + 1 + usize::from(day_after.is_some());
            let year = at(year_at).and_then(year_of);
            let anchored = day.is_some()
                || year.is_some()
                || before.is_some_and(|b| TIME_PREPOSITIONS.contains(&b) || b == "last");
            if sure || anchored {
                let used = 1 + usize::from(day_after.is_some()) + usize::from(year.is_some());
                (Some(Mention::Month { year, month, day }), used)
            } else {
                (None, 1)
            }
        } else if let Some(year) = year_of(w) {
            let anchored = before.is_some_and(|b| TIME_PREPOSITIONS.contains(&b));
            (anchored.then_some(Mention::Year(year)), 1)
        } else if let Some((day, one)) = weekday_of(w) {
            (Some(if one { Mention::Weekday(day) } else { Mention::Other }), 1)
        } else if is_clock(w, at(i + 1)) {
            (Some(Mention::Other), 1)
        } else {
            match w {
                "yesterday" => (Some(Mention::Ago(1, Unit::Day)), 1),
                "today" | "tonight" => (Some(Mention::Ago(0, Unit::Day)), 1),
                "tomorrow" => (Some(Mention::Other), 1),
                "last" | "past" | "previous" | "this" | "next" => {
                    match (w, at(i + 1).and_then(unit_of)) {
                        (_, None) => match at(i + 1) {
                            Some("night") if w == "last" => (Some(Mention::Ago(1, Unit::Day)), 2),
                            Some("morning" | "afternoon" | "evening") if w == "this" => {
                                (Some(Mention::Ago(0, Unit::Day)), 2)
                            }
                            _ => (None, 1),
                        },
                        ("next", Some(_)) => (Some(Mention::Other), 2),
                        ("this", Some(unit)) => (Some(Mention::This(unit)), 2),
                        (_, Some(unit)) => (Some(Mention::Last(unit)), 2),
                    }
                }
                _ => match count_of(w) {
                    // "two weeks ago", "a couple of months ago", "a few days ago"
                    Some(n) => {
                        let mut j = i + 1;
                        while matches!(at(j), Some("few" | "couple" | "of")) {
                            j += 1;
                        }
                        let n = match at(i + 1) {
                            Some("few") => 3,
                            Some("couple") => 2,
                            _ => n,
                        };
                        match (at(j).and_then(unit_of), at(j + 1)) {
                            (Some(unit), Some("ago")) => (Some(Mention::Ago(n, unit)), j + 2 - i),
                            (Some(_), Some("later" | "before" | "after")) => {
                                (Some(Mention::Other), j + 2 - i)
                            }
                            _ => (None, 1),
                        }
                    }
                    None => (None, 1),
                },
            }
        };
        found.extend(mention);
        i += used;
    }
    found
}

/// The span of days a mention names, `[first, last]`, seen from `today`; `None` for a mention
/// that names no past span.
fn resolve(mention: Mention, today: Date) -> Option<(Date, Date, Precision)> {
    let month_span = |y: i16, m: i8| -> Option<(Date, Date)> {
        let first = Date::new(y, m, 1).ok()?;
        Some((first, first.last_of_month()))
    };
    match mention {
        Mention::Month { year, month, day } => {
            // Without a year: the latest such month (or day) not after today.
            let year = year.unwrap_or_else(|| {
                let this_year = (today.month(), today.day()) >= (month, day.unwrap_or(1));
                if this_year { today.year() } else { today.year() - 1 }
            });
            match day {
                Some(d) => Date::new(year, month, d).ok().map(|d| (d, d, Precision::Day)),
                None => month_span(year, month).map(|(a, b)| (a, b, Precision::Month)),
            }
        }
        Mention::Year(y) => {
            Some((Date::new(y, 1, 1).ok()?, Date::new(y, 12, 31).ok()?, Precision::Year))
        }
        Mention::Weekday(day) => {
            let back =
                (today.weekday().to_monday_zero_offset() - day.to_monday_zero_offset() + 7) % 7;
            let back = if back == 0 { 7 } else { back };
            let d = today.checked_sub(i64::from(back).days()).ok()?;
            Some((d, d, Precision::Day))
        }
        Mention::Ago(n, unit) => {
            let d = match unit {
                Unit::Day => today.checked_sub(n.days()),
                Unit::Week | Unit::Weekend => today.checked_sub(n.weeks()),
                Unit::Month => today.checked_sub(n.months()),
                Unit::Year => today.checked_sub(n.years()),
            }
            .ok()?;
            let precision = match unit {
                Unit::Day => Precision::Day,
                Unit::Week | Unit::Weekend => Precision::Week,
                Unit::Month => Precision::Month,
                Unit::Year => Precision::Year,
            };
            Some((d, d, precision))
        }
        Mention::Last(unit) | Mention::This(unit) => {
            let back = i64::from(matches!(mention, Mention::Last(_)));
            match unit {
                Unit::Day => {
                    let d = today.checked_sub(back.days()).ok()?;
                    Some((d, d, Precision::Day))
                }
                Unit::Week => {
                    let monday = today
                        .checked_sub(i64::from(today.weekday().to_monday_zero_offset()).days())
                        .ok()?
                        .checked_sub((7 * back).days())
                        .ok()?;
                    let end = if back == 0 { today } else { monday.checked_add(6.days()).ok()? };
                    Some((monday, end, Precision::Week))
                }
                Unit::Weekend => {
                    // The latest Saturday and Sunday before today (this one if it is one).
                    let to_sunday = (today.weekday().to_monday_zero_offset() + 1) % 7;
                    let sunday = today.checked_sub(i64::from(to_sunday).days()).ok()?;
                    let sunday = sunday.checked_sub((7 * back).days()).ok()?;
                    Some((sunday.checked_sub(1.day()).ok()?, sunday, Precision::Week))
                }
                Unit::Month => {
                    let d = today.checked_sub(back.months()).ok()?;
                    let (a, b) = month_span(d.year(), d.month())?;
                    Some((a, if back == 0 { today } else { b }, Precision::Month))
                }
                Unit::Year => {
                    let y = today.year() - back as i16;
                    let end = if back == 0 { today } else { Date::new(y, 12, 31).ok()? };
                    Some((Date::new(y, 1, 1).ok()?, end, Precision::Year))
                }
            }
        }
        Mention::Other => None,
    }
}

/// The window of a resolved span: from its first day's start to its last day's end, widened by
/// the slack of its precision.
fn window((first, last, precision): (Date, Date, Precision)) -> Option<Window> {
    let second =
        |d: Date| d.to_zoned_datetime(TimeZone::UTC).ok().map(|z| z.timestamp().as_second());
    let slack = precision.slack_days() * 86_400;
    Some(Window { start: second(first)? - slack, end: second(last)? + 86_400 + slack })
}

#[cfg(test)]
mod tests;
