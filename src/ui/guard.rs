//! The gate in front of every page of `mem ui`: the Host header (DNS rebinding), the secret
//! path prefix (a random one per start, compared in constant time, under which every page
//! lives and every link of the pages is relative: no cookie, which a browser would send to
//! every port of 127.0.0.1), the same-origin check of every POST (CSRF), and the headers every
//! answer carries (a Content-Security-Policy of the page's own scripts and styles only, no
//! referrer), and the time each page took on the server (`Server-Timing`, by the binary's
//! stopwatch). See docs/security.md.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::Shared;

/// What every answer says to the browser: its own scripts and styles only, nothing framed,
/// no referrer (a memory's links must not carry the page's address away), nothing cached.
const HEADERS: [(&str, &str); 5] = [
    (
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("cache-control", "no-store"),
];

/// The secret of one start of `mem ui` and the port it listens on.
pub(super) struct Guard {
    secret: String,
    port: u16,
}

impl Guard {
    /// A fresh secret (32 bytes from the operating system's CSPRNG, as hex) for `port`.
    pub(super) fn new(port: u16) -> anyhow::Result<Guard> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("cannot draw a random secret: {e}"))?;
        let secret = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Guard { secret, port })
    }

    /// The page's address: the secret prefix, with the slash that relative links go on from.
    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/{}/", self.port, self.secret)
    }

    /// Whether `given` is the secret, in time that does not depend on where they differ.
    fn matches(&self, given: &str) -> bool {
        given.len() == self.secret.len()
            && bool::from(given.as_bytes().ct_eq(self.secret.as_bytes()))
    }

    /// The path under the secret prefix of `path` (`/` for the prefix and its slash), or
    /// `None` when `path` does not start with the prefix.
    fn under<'a>(&self, path: &'a str) -> Option<&'a str> {
        let rest = path.strip_prefix('/')?;
        let (first, under) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        self.matches(first).then_some(under)
    }

    /// Whether a Host header names this server: 127.0.0.1, localhost or [::1] with its port.
    fn host_ok(&self, host: &str) -> bool {
        let port = self.port;
        [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")]
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
    }
}

/// A plain-text refusal with the gate's headers.
fn refuse(status: StatusCode, why: &str) -> Response {
    with_headers((status, why.to_string()).into_response())
}

/// `response` with [`HEADERS`] set.
fn with_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Whether a request comes from this server's own page: its `Origin` names this host, or,
/// where the browser sends `Origin: null` (the pages' `no-referrer` policy makes a form's POST
/// say so), its `Sec-Fetch-Site` (which no page can set) is `same-origin`. A form another site
/// posts carries that site's origin, or `cross-site`.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let value = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    match value(header::ORIGIN.as_str()) {
        Some("null") | None => value("sec-fetch-site") == Some("same-origin"),
        Some(origin) => {
            origin.strip_prefix("http://").is_some_and(|o| o.eq_ignore_ascii_case(host))
        }
    }
}

/// The gate: every request passes here before its page.
pub(super) async fn gate(
    State(app): State<Shared>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let guard = &app.guard;
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !guard.host_ok(host) {
        return refuse(StatusCode::FORBIDDEN, "forbidden: this server answers only to 127.0.0.1");
    }
    let Some(under) = guard.under(request.uri().path()).map(str::to_string) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "not found: open the address `mem ui` printed (its path holds the secret)",
        );
    };
    // The prefix itself: its slash, so that the pages' relative links go on from it.
    if !request.uri().path().ends_with('/') && under == "/" {
        let to = format!("{}/", request.uri().path());
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
        if let Ok(to) = HeaderValue::from_str(&to) {
            response.headers_mut().insert(header::LOCATION, to);
        }
        return with_headers(response);
    }
    // The pages route on what follows the prefix.
    let query = request.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    let Ok(uri) = format!("{under}{query}").parse::<Uri>() else {
        return refuse(StatusCode::BAD_REQUEST, "bad request: the address cannot be read");
    };
    let reads = request.method() == Method::GET || request.method() == Method::HEAD;
    if !reads && (request.method() != Method::POST || !same_origin(headers, host)) {
        return refuse(StatusCode::FORBIDDEN, "forbidden: a change must come from this page");
    }
    let mut request = request;
    *request.uri_mut() = uri;
    // The page's links climb from its folder to the prefix.
    let depth = under.matches('/').count().saturating_sub(1);
    let watch = crate::shared::bar::stopwatch();
    let mut response = super::html::DEPTH.scope(depth, next.run(request)).await;
    // How long the page took on the server (docs/benchmarks.md reads it).
    let took = format!("app;dur={:.3}", watch.elapsed().as_secs_f64() * 1000.0);
    if let Ok(value) = HeaderValue::from_str(&took) {
        response.headers_mut().insert("server-timing", value);
    }
    with_headers(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_live_under_the_secret() {
        let guard = Guard::new(8080).unwrap();
        let secret = guard.secret.clone();
        assert_eq!(guard.under(&format!("/{secret}/")), Some("/"));
        assert_eq!(guard.under(&format!("/{secret}")), Some("/"));
        assert_eq!(guard.under(&format!("/{secret}/memory/a")), Some("/memory/a"));
        assert_eq!(guard.under("/"), None);
        assert_eq!(guard.under("/memory/a"), None);
        assert_eq!(guard.under(&format!("/{}/", &secret[1..])), None);
        assert_eq!(guard.under(&format!("/x{secret}/")), None);
        assert!(guard.url().ends_with(&format!(":8080/{secret}/")));
    }

    #[test]
    fn a_post_must_come_from_the_page() {
        let of = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (k, v) in pairs {
                headers.insert(*k, HeaderValue::from_static(v));
            }
            same_origin(&headers, "127.0.0.1:80")
        };
        assert!(of(&[("origin", "http://127.0.0.1:80")]));
        assert!(of(&[("origin", "null"), ("sec-fetch-site", "same-origin")]));
        assert!(!of(&[("origin", "null"), ("sec-fetch-site", "cross-site")]));
        assert!(!of(&[("origin", "http://evil.example"), ("sec-fetch-site", "same-origin")]));
        assert!(!of(&[("origin", "null")]));
        assert!(!of(&[]));
    }

    #[test]
    fn only_the_local_names_with_the_port_are_hosts() {
        let guard = Guard::new(8080).unwrap();
        assert!(guard.host_ok("127.0.0.1:8080"));
        assert!(guard.host_ok("localhost:8080"));
        assert!(guard.host_ok("[::1]:8080"));
        assert!(!guard.host_ok("127.0.0.1:8081"));
        assert!(!guard.host_ok("evil.example:8080"));
        assert!(!guard.matches(""));
        assert!(guard.matches(&guard.secret.clone()));
    }
}
