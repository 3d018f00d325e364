//! The gate in front of every page of `mem ui`: the Host header (DNS rebinding), the token
//! (a random one per start, compared in constant time, traded for an HttpOnly SameSite=Strict
//! cookie and a redirect without it), the same-origin check of every POST (CSRF), and the
//! headers every answer carries (a Content-Security-Policy of the page's own scripts and
//! styles only, no referrer), and the time each page took on the server (`Server-Timing`,
//! by the binary's stopwatch). See docs/security.md.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::Shared;

/// The start of the name of the cookie that carries the token once the first request traded
/// it; the port follows (a browser keeps one jar per host, whatever the port: two servers must
/// not take each other's cookie).
const COOKIE: &str = "mem_ui_";

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
    token: String,
    port: u16,
}

impl Guard {
    /// A fresh token (32 bytes from the operating system's CSPRNG, as hex) for `port`.
    pub(super) fn new(port: u16) -> anyhow::Result<Guard> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("cannot draw a random token: {e}"))?;
        let token = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Guard { token, port })
    }

    /// The token, for the URL printed at start.
    pub(super) fn token(&self) -> &str {
        &self.token
    }

    /// Whether `given` is the token, in time that does not depend on where they differ.
    fn matches(&self, given: &str) -> bool {
        given.len() == self.token.len() && bool::from(given.as_bytes().ct_eq(self.token.as_bytes()))
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

/// The value of the token cookie of `port` among a request's cookies.
fn cookie(headers: &HeaderMap, port: u16) -> Option<&str> {
    let name = format!("{COOKIE}{port}");
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|line| {
        line.split(';').find_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then_some(value)
        })
    })
}

/// The request's query without its `token` parameter, and the token if there was one.
fn split_token(query: &str) -> (Option<&str>, String) {
    let mut token = None;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.strip_prefix("token=") {
            Some(t) => token = Some(t),
            None => rest.push(pair),
        }
    }
    (token, rest.join("&"))
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
    let (token, rest) = split_token(request.uri().query().unwrap_or(""));
    if let Some(token) = token {
        if !guard.matches(token) {
            return refuse(StatusCode::FORBIDDEN, "forbidden: wrong token");
        }
        // The token leaves the address bar (and the history) at once, for a cookie.
        let path = request.uri().path();
        let to = if rest.is_empty() { path.to_string() } else { format!("{path}?{rest}") };
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SEE_OTHER;
        let cookie =
            format!("{COOKIE}{}={}; HttpOnly; SameSite=Strict; Path=/", guard.port, guard.token);
        if let (Ok(to), Ok(cookie)) = (HeaderValue::from_str(&to), HeaderValue::from_str(&cookie)) {
            response.headers_mut().insert(header::LOCATION, to);
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        return with_headers(response);
    }
    if !cookie(headers, guard.port).is_some_and(|c| guard.matches(c)) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized: open the address `mem ui` printed (with its token)",
        );
    }
    let reads = request.method() == Method::GET || request.method() == Method::HEAD;
    if !reads && (request.method() != Method::POST || !same_origin(headers, host)) {
        return refuse(StatusCode::FORBIDDEN, "forbidden: a change must come from this page");
    }
    let watch = super::super::bar::stopwatch();
    let mut response = next.run(request).await;
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
    fn the_token_is_split_from_the_query() {
        assert_eq!(split_token("token=ab&q=x"), (Some("ab"), "q=x".to_string()));
        assert_eq!(split_token("q=x"), (None, "q=x".to_string()));
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
        assert!(guard.matches(&guard.token.clone()));
    }
}
