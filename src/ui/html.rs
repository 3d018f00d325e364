//! What every page of `mem ui` shares: the frame (title, navigation, the embedded style and
//! script), a memory's Markdown rendered safely (raw HTML shown as text, links other than
//! http(s), mailto and relative ones shown as text, no image fetched), the SVG charts drawn
//! here (a retention curve, factor bars, counts by month), and the command line each action
//! stands for.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// The stylesheet, embedded.
pub(super) const STYLE: &str = include_str!("style.css");
/// The script (search as you type, select all), embedded.
pub(super) const SCRIPT: &str = include_str!("app.js");

/// The pages in the navigation: path and name.
const NAV: [(&str, &str); 5] = [
    ("/", "Search"),
    ("/prune", "Prune review"),
    ("/sessions", "Sessions"),
    ("/capture", "Capture"),
    ("/overview", "Overview"),
];

tokio::task_local! {
    /// How many folders below the secret prefix the page being made is (`/prune`: 0,
    /// `/memory/ID`: 1, `/memory/ID/used`: 2), set by the gate for each request: its links
    /// climb that many to the prefix.
    pub(super) static DEPTH: usize;
}

/// `path`, a page's path from the secret prefix (`/memory/ID`, `/` for search), as a link
/// relative to the page being made: no page names the prefix, which stays in the address bar.
pub(super) fn href(path: &str) -> String {
    let depth = DEPTH.try_with(|d| *d).unwrap_or(0);
    let rest = path.trim_start_matches('/');
    match (depth, rest) {
        (0, "") => "./".to_string(),
        (0, rest) => rest.to_string(),
        (depth, rest) => format!("{}{rest}", "../".repeat(depth)),
    }
}

/// `value` percent-encoded for a link's query (every byte but letters, digits and `-._~`).
pub(super) fn query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A whole page: `title`, the navigation with `here` marked, and `body`.
pub(super) fn page(title: &str, here: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · mem" }
                link rel="stylesheet" href=(href("/style.css"));
                script src=(href("/app.js")) defer {}
            }
            body {
                nav {
                    strong { "mem" }
                    @for (path, name) in NAV {
                        @if path == here { a.here href=(href(path)) { (name) } } @else { a href=(href(path)) { (name) } }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The command a page's action stands for, shown beside it.
pub(super) fn command(line: &str) -> Markup {
    html! { p.command { "Same as " code { (line) } } }
}

/// Whether a link target may stay a link: http(s), mailto, or relative (no scheme at all) to
/// the page's own server: never protocol-relative (`//host/…`, or with backslashes, which
/// browsers read as slashes), which would leave it for another host.
pub(super) fn safe_link(url: &str) -> bool {
    // Browsers drop tabs and new lines inside a scheme: so does the check.
    let lower: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    if lower.starts_with("//")
        || lower.starts_with("\\\\")
        || lower.starts_with("/\\")
        || lower.starts_with("\\/")
    {
        return false;
    }
    let scheme_end = lower.find(':');
    let before_path = lower.find(['/', '?', '#']);
    match scheme_end {
        None => true,
        Some(colon) if before_path.is_some_and(|p| p < colon) => true,
        Some(_) => ["http:", "https:", "mailto:"].iter().any(|s| lower.starts_with(s)),
    }
}

/// A memory's Markdown as HTML: text escaped by the renderer, raw HTML turned into text,
/// unsafe links and every image shown as text (the page fetches nothing from elsewhere).
pub(super) fn markdown(body: &str) -> Markup {
    let mut dropped: Vec<bool> = Vec::new();
    let mut events: Vec<Event> = Vec::new();
    for event in Parser::new_ext(body, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Html(text) | Event::InlineHtml(text) => events.push(Event::Text(text)),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let unsafe_link = !safe_link(&dest_url);
                dropped.push(unsafe_link);
                if unsafe_link {
                    events.push(Event::Text(CowStr::from(format!("[{dest_url}] "))));
                } else {
                    events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
                }
            }
            Event::End(TagEnd::Link) => {
                if !dropped.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                dropped.push(true);
                events.push(Event::Text(CowStr::from(format!("[image {dest_url}] "))));
            }
            Event::End(TagEnd::Image) => {
                dropped.pop();
            }
            other => events.push(other),
        }
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    PreEscaped(out)
}

/// A horizontal bar of `value` in `0..=1`, `width` pixels wide, with its number.
pub(super) fn bar(value: f64, width: u32) -> Markup {
    let filled = (value.clamp(0.0, 1.0) * f64::from(width)).round();
    html! {
        svg.bar width=(width) height="8" role="img" aria-label=(format!("{value:.3}")) {
            rect.track width=(width) height="8" {}
            rect.fill width=(filled) height="8" {}
        }
    }
}

/// A line chart of `points` (x in `0..=1`, y in `0..=1`), `w`×`h`, with vertical marks at
/// `marks` (x, label, class) and a horizontal line at `threshold`.
pub(super) struct Chart<'a> {
    pub(super) points: &'a [(f64, f64)],
    pub(super) marks: &'a [(f64, String, &'static str)],
    pub(super) threshold: Option<(f64, String)>,
    pub(super) label: &'a str,
}

impl Chart<'_> {
    /// The chart as an SVG element of `w`×`h` pixels.
    pub(super) fn svg(&self, w: f64, h: f64) -> Markup {
        let (pad, bottom) = (4.0, h - 14.0);
        let x = |v: f64| pad + v.clamp(0.0, 1.0) * (w - 2.0 * pad);
        let y = |v: f64| pad + (1.0 - v.clamp(0.0, 1.0)) * (bottom - pad);
        let path: String = self
            .points
            .iter()
            .enumerate()
            .map(|(i, &(px, py))| {
                format!("{}{:.1},{:.1}", if i == 0 { "M" } else { " L" }, x(px), y(py))
            })
            .collect();
        html! {
            svg.chart width=(w) height=(h) viewBox=(format!("0 0 {w} {h}")) role="img" aria-label=(self.label) {
                title { (self.label) }
                line.axis x1=(pad) y1=(bottom) x2=(w - pad) y2=(bottom) {}
                @if let Some((t, name)) = &self.threshold {
                    line.threshold x1=(pad) y1=(y(*t)) x2=(w - pad) y2=(y(*t)) { title { (name) } }
                }
                @for (mx, name, class) in self.marks {
                    line class=(class) x1=(x(*mx)) y1=(pad) x2=(x(*mx)) y2=(bottom) { title { (name) } }
                }
                path.curve d=(path) {}
            }
        }
    }
}

/// Bars of counts (label, count), `w`×`h`, each bar titled with its label and count.
pub(super) fn columns(counts: &[(String, usize)], w: f64, h: f64) -> Markup {
    let most = counts.iter().map(|c| c.1).max().unwrap_or(0).max(1) as f64;
    let step = w / counts.len().max(1) as f64;
    html! {
        svg.columns width=(w) height=(h) viewBox=(format!("0 0 {w} {h}")) role="img" aria-label="counts" {
            @for (i, (label, n)) in counts.iter().enumerate() {
                @let bh = (*n as f64 / most) * (h - 2.0);
                rect x=(format!("{:.1}", i as f64 * step + 1.0)) y=(format!("{:.1}", h - bh))
                    width=(format!("{:.1}", (step - 2.0).max(1.0))) height=(format!("{bh:.1}")) {
                    title { (label) ": " (n) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_and_unsafe_links_are_text() {
        let out = markdown(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)> [a](javascript:alert(3)) \
             [b](https://example.org) [c](notes.md) ![i](https://example.org/x.png)",
        )
        .into_string();
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("href=\"javascript"), "{out}");
        assert!(out.contains("href=\"https://example.org\""), "{out}");
        assert!(out.contains("href=\"notes.md\""), "{out}");
    }

    #[test]
    fn a_query_value_is_percent_encoded() {
        assert_eq!(query_value("acme/api"), "acme%2Fapi");
        assert_eq!(query_value("a b&c=d#é"), "a%20b%26c%3Dd%23%C3%A9");
        assert_eq!(query_value("01KABC.v2~_-"), "01KABC.v2~_-");
    }

    #[test]
    fn safe_links() {
        assert!(safe_link("https://a.b/c"));
        assert!(safe_link("MAILTO:x@y"));
        assert!(safe_link("../x.md#a:b"));
        assert!(!safe_link("javascript:alert(1)"));
        assert!(!safe_link(" JavaScript:alert(1)"));
        assert!(!safe_link("data:text/html,x"));
        assert!(!safe_link("java\tscript:alert(1)"));
        // Issue #53, item 4: a protocol-relative link leaves for another host.
        for url in [
            "//evil.example/f",
            " //evil.example",
            "\\\\evil.example",
            "/\\evil.example",
            "\\/evil.example",
            "/\t/evil.example",
        ] {
            assert!(!safe_link(url), "{url:?}");
        }
        assert!(safe_link("/notes.md") && safe_link("./a/b"));
    }
}
