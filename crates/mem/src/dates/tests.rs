use super::*;

/// Monday 30 November 2026, noon.
fn now() -> Timestamp {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

/// The days a text names, as `first..=last` without the slack.
fn days(text: &str) -> Vec<(String, String)> {
    windows(text, now())
        .into_iter()
        .zip(scan(text).into_iter().filter_map(|m| resolve(m, date(2026, 11, 30))))
        .map(|(w, (first, last, p))| {
            let slack = p.slack_days() * 86_400;
            let day =
                |s: i64| Timestamp::from_second(s).unwrap().to_zoned_datetime(TimeZone::UTC).date();
            assert_eq!(day(w.start + slack), first);
            assert_eq!(day(w.end - slack - 1), last);
            (first.to_string(), last.to_string())
        })
        .collect()
}

fn date(y: i16, m: i8, d: i8) -> Date {
    Date::new(y, m, d).unwrap()
}

fn one(first: &str, last: &str) -> Vec<(String, String)> {
    vec![(first.to_string(), last.to_string())]
}

#[test]
fn months_resolve_to_the_latest_one_not_after_now() {
    assert_eq!(days("When did Melanie go camping in July?"), one("2026-07-01", "2026-07-31"));
    assert_eq!(days("what happened in December"), one("2025-12-01", "2025-12-31"));
    assert_eq!(days("the incident in January 2025"), one("2025-01-01", "2025-01-31"));
    assert_eq!(days("on 7 May 2023"), one("2023-05-07", "2023-05-07"));
    assert_eq!(days("on the 7th of May"), one("2026-05-07", "2026-05-07"));
    assert_eq!(days("May 7, 2023"), one("2023-05-07", "2023-05-07"));
    assert_eq!(days("Sept 2025"), one("2025-09-01", "2025-09-30"));
}

#[test]
fn may_and_march_count_only_as_dates() {
    assert!(days("you may want to march on").is_empty());
    assert!(!has_time_expression("you may want to march on"));
    assert_eq!(days("since May"), one("2026-05-01", "2026-05-31"));
    assert_eq!(days("march 2024"), one("2024-03-01", "2024-03-31"));
}

#[test]
fn iso_dates_years_and_weekdays() {
    assert_eq!(days("deploy of 2025-01-28 13:58 UTC"), one("2025-01-28", "2025-01-28"));
    assert_eq!(days("as of 2025-04"), one("2025-04-01", "2025-04-30"));
    assert_eq!(days("in 2022"), one("2022-01-01", "2022-12-31"));
    assert!(days("port 2022 is open").is_empty(), "a bare number is not a year");
    // 2026-11-30 is a Monday: the last Friday is the 27th, the last Monday a week ago.
    assert_eq!(days("on Friday"), one("2026-11-27", "2026-11-27"));
    assert_eq!(days("last Monday"), one("2026-11-23", "2026-11-23"));
    assert!(days("on Mondays").is_empty());
    assert!(has_time_expression("standup on Mondays"));
}

#[test]
fn relative_phrases() {
    assert_eq!(days("yesterday"), one("2026-11-29", "2026-11-29"));
    assert_eq!(days("what did we do today"), one("2026-11-30", "2026-11-30"));
    assert_eq!(days("last week"), one("2026-11-23", "2026-11-29"));
    assert_eq!(days("this week"), one("2026-11-30", "2026-11-30"));
    assert_eq!(days("last weekend"), one("2026-11-21", "2026-11-22"));
    assert_eq!(days("last month"), one("2026-10-01", "2026-10-31"));
    assert_eq!(days("last year"), one("2025-01-01", "2025-12-31"));
    assert_eq!(days("two weekends ago"), one("2026-11-16", "2026-11-16"));
    assert_eq!(days("3 days ago"), one("2026-11-27", "2026-11-27"));
    assert_eq!(days("a couple of months ago"), one("2026-09-30", "2026-09-30"));
    assert_eq!(days("a few weeks ago"), one("2026-11-09", "2026-11-09"));
}

#[test]
fn the_future_and_clock_times_name_no_past_span() {
    for text in ["see you tomorrow!", "next week", "at 5pm", "at 9:30", "at 10 am", "in 2030"] {
        assert!(days(text).is_empty(), "{text}");
        assert!(has_time_expression(text), "{text}");
    }
    for text in ["Alright, bye!", "the last test", "version 1.52.0", "this is it", "a day"] {
        assert!(!has_time_expression(text), "{text}");
    }
}

#[test]
fn slack_grows_with_the_span() {
    let day = windows("on 2025-01-28", now())[0];
    let year = windows("in 2025", now())[0];
    assert_eq!(day.end - day.start, (1 + 2 * 3) * 86_400);
    assert_eq!(year.end - year.start, (365 + 2 * 15) * 86_400);
    assert!(day.contains("2025-01-30T10:00:00Z".parse::<Timestamp>().unwrap().as_second()));
    assert!(!day.contains("2025-02-01T00:00:00Z".parse::<Timestamp>().unwrap().as_second()));
}

#[test]
fn when_questions() {
    for q in ["When did Melanie paint a sunrise?", "what year did she move", "how long ago was it"]
    {
        assert!(asks_when(q), "{q}");
    }
    assert!(asks_when("And when was the deploy?"));
    for q in [
        "What did Caroline research?",
        "how long is the flight",
        "what is the time budget",
        "fix the crash when the user logs in",
    ] {
        assert!(!asks_when(q), "{q}");
    }
}
