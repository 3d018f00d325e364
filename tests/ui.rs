//! `mem ui`: the real binary started on `--port 0`, its printed address parsed, and plain
//! HTTP/1.1 requests written on a socket (so that every header, the Host among them, is the
//! test's): the gate (the secret path prefix, no cookie, Host, same-origin POSTs, the headers
//! of every answer, bounded connections),
//! hostile memory content shown as text, the pages, and archive/restore moving the file.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;

use crate::util::Dir;

/// A running `mem ui` (stopped when dropped).
pub struct Server {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    /// The secret path prefix of the address it printed (`/<secret>`).
    pub prefix: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: status, headers (lower-case names), body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

impl Server {
    /// Starts `mem ui --port 0` on `dir` and reads the address it prints.
    /// Its HOME is the test's (the agents' folders the capture page reads are there).
    pub fn start(dir: &Dir) -> Server {
        Server::start_in(dir, None)
    }

    /// [`Server::start`] in the subfolder `rel` of `dir` without `--dir`, when given: the root
    /// found from there, with the agents' own memories joined.
    pub fn start_in(dir: &Dir, rel: Option<&str>) -> Server {
        Server::launch(dir, rel, |_| {})
    }

    /// [`Server::start_in`], the command changed by `configure` before it starts.
    pub fn launch(
        dir: &Dir,
        rel: Option<&str>,
        configure: impl FnOnce(&mut std::process::Command),
    ) -> Server {
        let mut cmd = std::process::Command::new(crate::util::bin());
        match rel {
            Some(rel) => cmd.current_dir(dir.path().join(rel)),
            None => cmd.arg("--dir").arg(dir.path()),
        };
        cmd.args(["ui", "--port", "0"]);
        cmd.env("HOME", dir.home()).env("XDG_CONFIG_HOME", dir.home().join(".config"));
        crate::util::clean_env(&mut cmd);
        configure(&mut cmd);
        let mut child = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url:?}"));
        let (port, secret) = rest.split_once('/').unwrap();
        let prefix = format!("/{}", secret.trim_end_matches('/'));
        Server { child, port: port.parse().unwrap(), prefix }
    }

    /// The Host this server answers to.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `path` (from the prefix, as `/memory/ID`) under the secret prefix.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// Sends `method path` with `headers` (a Host is added unless given) and `body`.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: {}\r\n", self.host()));
        }
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Answer { status, headers, body: body.to_string() }
    }

    /// `GET path` (from the prefix) as the page's own browser.
    pub fn get(&self, path: &str) -> Answer {
        self.send("GET", &self.at(path), &[], "")
    }

    /// `POST path` (from the prefix) with a form body, as the page's own browser (its Origin).
    pub fn post(&self, path: &str, form: &str) -> Answer {
        let origin = format!("http://{}", self.host());
        let headers =
            [("Origin", origin), ("Content-Type", "application/x-www-form-urlencoded".to_string())];
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.send("POST", &self.at(path), &headers, form)
    }
}

/// `mem ARGS` run in the `repo` folder of `dir` (its root found from there), with the HOME
/// `mem ui` is started with.
fn in_repo(dir: &Dir, args: &[&str]) -> crate::util::Out {
    crate::util::run(
        std::process::Command::new(crate::util::bin())
            .args(args)
            .current_dir(dir.path().join("repo"))
            .env("HOME", dir.home())
            .env("XDG_CONFIG_HOME", dir.home().join(".config")),
    )
}

/// The id of the memory `mem add` wrote (its JSON answer).
fn add(dir: &Dir, text: &str) -> String {
    let out = dir.mem_stdin(&["add", "--json"], text);
    out.json()["id"].as_str().unwrap().to_string()
}

/// Issue #53, item 1: the secret is a path prefix, the only credential; no cookie (which a
/// browser sends to every port of 127.0.0.1); every link relative, so it stays in the address.
#[test]
fn without_the_secret_prefix_nothing_is_served() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    let secret = server.prefix.trim_start_matches('/');
    let wrong = format!("/{}", "0".repeat(secret.len()));
    for path in [
        "/",
        "/prune",
        "/style.css",
        "/?token=0000",
        &format!("{wrong}/"),
        &format!("/{}/", &secret[1..]),
    ] {
        let answer = server.send("GET", path, &[], "");
        assert_eq!(answer.status, 404, "{path}");
        assert!(!answer.body.contains(secret), "{path}: {}", answer.body);
    }
    // The prefix without its slash goes to it with the slash (relative links go on from it).
    let answer = server.send("GET", &server.prefix, &[], "");
    assert_eq!(answer.status, 308);
    assert_eq!(answer.header("location"), Some(format!("{}/", server.prefix).as_str()));
    let page = server.get("/?q=tests");
    assert_eq!(page.status, 200);
    assert!(page.header("set-cookie").is_none());
    assert!(!page.body.contains(secret), "no page names the secret");
    let links: Vec<&str> =
        page.body.split("href=\"").skip(1).filter_map(|l| l.split('"').next()).collect();
    assert!(links.iter().any(|l| l.starts_with("memory/")), "{links:?}");
    assert!(links.iter().all(|l| !l.starts_with('/')), "every link relative: {links:?}");
}

#[test]
fn a_foreign_host_is_forbidden() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    let page = server.at("/");
    for host in ["evil.example", &format!("evil.example:{}", server.port), "127.0.0.1:1"] {
        let answer = server.send("GET", &page, &[("Host", host)], "");
        assert_eq!(answer.status, 403, "{host}");
    }
    let localhost = format!("localhost:{}", server.port);
    assert_eq!(server.send("GET", &page, &[("Host", &localhost)], "").status, 200);
}

#[test]
fn every_answer_carries_the_policy_headers() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    for answer in [server.get("/?q=tests"), server.send("GET", "/", &[], "")] {
        let csp = answer.header("content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(answer.header("referrer-policy"), Some("no-referrer"));
        assert!(answer.header("access-control-allow-origin").is_none());
    }
}

#[test]
fn a_cross_origin_post_is_refused_and_changes_nothing() {
    let dir = Dir::example();
    let id = add(&dir, "The staging database lives on port 5544");
    let before = dir.mem(&["show", &id, "--json"]).json();
    let server = Server::start(&dir);
    let path = format!("/memory/{id}/forget");
    let at = server.at(&path);
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let cases = [
        (Some("http://evil.example"), None),
        (Some("http://evil.example"), Some("same-origin")),
        (Some("null"), None),
        (Some("null"), Some("cross-site")),
        (None, Some("same-site")),
        (None, None),
    ];
    for (origin, fetch_site) in cases {
        let mut headers = vec![form];
        if let Some(origin) = origin {
            headers.push(("Origin", origin));
        }
        if let Some(site) = fetch_site {
            headers.push(("Sec-Fetch-Site", site));
        }
        let answer = server.send("POST", &at, &headers, "reason=x");
        assert_eq!(answer.status, 403, "{origin:?} {fetch_site:?}");
    }
    // A GET changes nothing either: the change routes take POST only.
    assert_eq!(server.get(&path).status, 405);
    // Without the secret, even from the right origin.
    let origin = format!("http://{}", server.host());
    let answer = server.send("POST", &path, &[("Origin", &origin), form], "reason=x");
    assert_eq!(answer.status, 404);
    assert_eq!(dir.mem(&["show", &id, "--json"]).json()["invalid_at"], before["invalid_at"]);
    // The page's own POST goes through, as `mem forget` would.
    assert_eq!(server.post(&path, "reason=moved").status, 303);
    let after = dir.mem(&["show", &id, "--json"]).json();
    assert!(after["invalid_at"].is_string(), "{after}");
}

#[test]
fn hostile_memory_content_is_shown_as_text() {
    let dir = Dir::example();
    let id = add(
        &dir,
        "# Hostile <script>alert('t')</script>\n\n<script>alert(1)</script>\n\n\
         <img src=x onerror=\"alert(2)\"> and [click](javascript:alert(3)) and \
         [ok](https://example.org/ok) and [far](//evil.example/f)\n",
    );
    let server = Server::start(&dir);
    for page in [server.get(&format!("/memory/{id}")), server.get("/?q=hostile+click")] {
        assert_eq!(page.status, 200);
        let body = &page.body;
        assert!(body.contains("&lt;script&gt;"), "{body}");
        assert!(!body.contains("<script>alert"), "{body}");
        assert!(!body.contains("<img"), "{body}");
        assert!(!body.to_ascii_lowercase().contains("href=\"javascript:"), "{body}");
    }
    let page = server.get(&format!("/memory/{id}")).body;
    assert!(page.contains("&lt;img src=x onerror=\"alert(2)\"&gt;"), "{page}");
    assert!(page.contains("href=\"https://example.org/ok\""), "{page}");
    assert!(page.contains("javascript:alert(3)"), "the link is shown as text: {page}");
    // Issue #53, item 4: a protocol-relative link would leave for another host.
    assert!(!page.contains("href=\"//evil.example"), "{page}");
    assert!(page.contains("//evil.example/f"), "shown as text: {page}");
}

#[test]
fn no_path_from_a_request_reaches_the_files() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    for path in ["/../mem.toml", "/memory/..%2F..%2Fetc%2Fpasswd", "/style.css/../mem.toml"] {
        let answer = server.get(path);
        assert!(!answer.body.contains("[ranking]"), "{path}");
        assert_ne!(answer.status, 200, "{path}");
    }
}

#[test]
fn search_and_memory_pages_show_what_recall_and_show_give() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    let page = server.get("/?q=run+the+tests+locally");
    assert_eq!(page.status, 200);
    let recall = dir.mem(&["recall", "run the tests locally", "--json", "--no-record"]).json();
    let first = recall[0]["id"].as_str().unwrap();
    assert!(page.body.contains(&format!("href=\"memory/{first}\"")), "{}", page.body);
    assert!(page.body.contains("recency"), "the factors are shown");
    let memory = server.get(&format!("/memory/{first}"));
    assert_eq!(memory.status, 200);
    assert!(memory.body.contains("<svg class=\"chart\""), "{}", memory.body);
    assert_eq!(server.get("/memory/NO-SUCH-ID").status, 404);
    for path in ["/prune", "/sessions", "/capture", "/overview", "/style.css", "/app.js"] {
        assert_eq!(server.get(path).status, 200, "{path}");
    }
}

#[test]
fn archive_and_restore_move_the_file_as_prune_and_restore_do() {
    let dir = Dir::example();
    let dry = dir.mem(&["prune", "--dry-run", "--json"]).json();
    let candidate = &dry[0];
    let (id, path) = (candidate["id"].as_str().unwrap(), candidate["path"].as_str().unwrap());
    let server = Server::start(&dir);
    let review = server.get("/prune");
    assert!(review.body.contains(id), "{}", review.body);
    assert_eq!(server.post("/prune/archive", &format!("id={id}")).status, 303);
    assert!(!dir.path().join(path).exists());
    assert!(dir.path().join("archive").join(path).exists());
    assert!(server.get("/prune").body.contains(&format!("archive/{path}")));
    assert_eq!(server.post("/prune/restore", &format!("id={id}")).status, 303);
    assert!(dir.path().join(path).exists());
    assert!(!dir.path().join("archive").join(path).exists());
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let dir = Dir::example();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = dir.mem(&["ui", "--port", &port]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("port in use"), "{}", out.stderr);
}

#[test]
fn a_session_page_lists_the_memories_its_hooks_injected() {
    let dir = Dir::example();
    let payload = format!(
        r#"{{"session_id":"s-ui","hook_event_name":"SessionStart","cwd":{},"source":"startup"}}"#,
        serde_json::to_string(dir.path().to_str().unwrap()).unwrap()
    );
    dir.mem_stdin(&["context", "--hook", "claude"], payload).ok();
    // Issue #53, item 2: the list went to 200 with no paging. 229 more sessions (written into
    // the log as capture writes them), a page of 100 at a time.
    let db = rusqlite::Connection::open(dir.path().join(".mem/sessions.db")).unwrap();
    for i in 0..229 {
        db.execute(
            "INSERT INTO sessions (id, agent, started_at, last_at, first_prompt) \
             VALUES (?1, 'claude', ?2, ?2, 'an older session')",
            rusqlite::params![format!("s-old-{i:03}"), 1_700_000_000 + i],
        )
        .unwrap();
    }
    drop(db);
    let server = Server::start(&dir);
    let first = server.get("/sessions").body;
    assert!(first.contains("href=\"sessions/s-ui\""), "the most recent first: {first}");
    assert!(first.contains("230 sessions") && first.contains("page 1 of 3"), "{first}");
    let rows = |body: &str| body.matches("href=\"sessions/").count();
    assert_eq!(rows(&first), 100);
    let last = server.get("/sessions?page=3").body;
    assert_eq!(rows(&last), 30, "{last}");
    assert!(last.contains("s-old-000"), "the oldest last: {last}");
    assert_eq!(server.get("/sessions?page=4").status, 400);
    let page = server.get("/sessions/s-ui").body;
    assert!(page.contains("injected</strong> by SessionStart"), "{page}");
    assert!(page.contains("href=\"../memory/"), "{page}");
    assert!(page.contains("whole") || page.contains("cut"), "{page}");
}

#[test]
fn the_capture_page_shows_a_session_missing_from_the_transcripts() {
    let dir = Dir::example();
    let project = dir.path().canonicalize().unwrap();
    let folder = mem::agent::claude::folder_name(&project);
    let id = "4b1c0d9e-0000-4000-8000-0000000000d1";
    let line = serde_json::json!({"type": "user", "sessionId": id, "cwd": project,
        "timestamp": "2026-11-30T09:00:00Z", "message": {"role": "user", "content": "Fix it"}});
    let path = dir.home().join(format!(".claude/projects/{folder}/{id}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let server = Server::start(&dir);
    let page = server.get("/capture").body;
    assert!(page.contains("0 of 1 sessions"), "{page}");
    assert!(page.contains("+1 missing"), "the day of the transcript: {page}");
    assert!(page.contains(id), "{page}");
    assert!(page.contains("Claude Code"), "the agent by its spec's title: {page}");
}

#[test]
fn used_from_the_page_is_what_mem_used_records() {
    let dir = Dir::example();
    let id = add(&dir, "The cache warms up from the nightly export");
    let server = Server::start(&dir);
    let page = server.get(&format!("/memory/{id}")).body;
    assert!(page.contains(&format!("mem used {id}")), "the command is shown: {page}");
    assert_eq!(server.post(&format!("/memory/{id}/used"), "").status, 303);
    let shown = dir.mem(&["show", &id, "--json"]).json();
    assert_eq!(shown["access_count"], 1, "{shown}");
    assert!(server.get(&format!("/memory/{id}")).body.contains("used 1 times"));
}

#[test]
fn ctrl_c_stops_the_server_cleanly() {
    let dir = Dir::example();
    let mut server = Server::start(&dir);
    assert_eq!(server.get("/").status, 200);
    let pid = server.child.id().to_string();
    let sent = std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success());
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn an_agent_s_own_memory_is_searched_and_shown_but_never_changed() {
    let dir = Dir::new();
    let folder = crate::native::project_with_claude_memory(&dir);
    // The root was written by hand, as a clone brings it: allowed, as `mem ui` refuses it
    // otherwise (tests/scope.rs).
    in_repo(&dir, &["allow"]).ok();
    let server = Server::start_in(&dir, Some("repo"));
    let search = server.get("/?q=deploy+window&layer=claude");
    assert_eq!(search.status, 200);
    assert!(search.body.contains("claude.deploy-window"), "{}", search.body);
    assert!(search.body.contains("option value=\"claude\""), "the layer filter names it");
    // Issue #53, item 9: the command the search stands for keeps the layer.
    assert!(search.body.contains("--layer claude --no-record"), "{}", search.body);
    let page = server.get("/memory/claude.deploy-window");
    assert_eq!(page.status, 200, "{}", page.body);
    // Issue #53, item 9: the page showed mem's mirror path, no layer and "created today".
    assert!(page.body.contains("<span class=\"layer\">claude</span>"), "{}", page.body);
    assert!(page.body.contains("lives in claude auto memory"), "{}", page.body);
    assert!(page.body.contains("feedback_deploy_window.md"), "the agent's own file: {}", page.body);
    assert!(!page.body.contains(".mem/native/"), "{}", page.body);
    assert!(page.body.contains("last changed in the agent"), "{}", page.body);
    // Issue #53, item 4: forgetting is not offered; posted anyway, it is refused, not a 500.
    assert!(!page.body.contains("/forget"), "{}", page.body);
    assert!(page.body.contains("mem adopt claude.deploy-window"), "{}", page.body);
    let before = std::fs::read_to_string(folder.join("feedback_deploy_window.md")).unwrap();
    let forget = server.post("/memory/claude.deploy-window/forget", "reason=old");
    assert_eq!(forget.status, 403, "{}", forget.body);
    assert!(forget.body.contains("mem adopt claude.deploy-window"), "{}", forget.body);
    let after = std::fs::read_to_string(folder.join("feedback_deploy_window.md")).unwrap();
    assert_eq!(before, after);
    let native = dir.path().join("repo/.memory/.mem/native/claude/claude.deploy-window.md");
    assert!(!std::fs::read_to_string(native).unwrap().contains("invalid_at"));
}

/// Issue #53, item 4: what is not there is 404, a parameter the page cannot take 400, never a
/// server error.
#[test]
fn bad_ids_are_not_found_and_bad_parameters_bad_requests() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    for path in
        ["/sessions/no-such-session", "/sessions/..%2F..", "/sessions/a%20b", "/memory/NO-SUCH-ID"]
    {
        assert_eq!(server.get(path).status, 404, "{path}");
    }
    for path in ["/?q=tests&type=bogus", "/?q=tests&layer=bogus"] {
        let answer = server.get(path);
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
    }
    // A session log that cannot be read is not "not found": the page fails, and says why.
    dir.write(".mem/sessions.db", "not a database, and long enough to be read as one's header");
    let answer = server.get("/sessions/no-such-session");
    assert_eq!(answer.status, 500, "{}", answer.body);
    assert!(answer.body.contains("sessions.db"), "{}", answer.body);
}

/// A request that only reads its answer, with a guard against a server that never answers
/// (not a timing: the answer is expected at once).
fn guarded(server: &Server, path: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.at(path),
        server.host()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("an answer");
    let text = String::from_utf8_lossy(&raw);
    text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// Issue #53, item 1: a thousand idle connections (another local user's, in the issue) leave
/// the owner's request answered; an idle connection, and one that sends its header a byte at a
/// time, are closed by the server.
#[test]
fn idle_and_slow_connections_neither_block_nor_stay() {
    let dir = Dir::example();
    let server = Server::start(&dir);
    let idle: Vec<TcpStream> =
        (0..1000).map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap()).collect();
    assert_eq!(guarded(&server, "/?q=tests"), 200);
    // An idle connection is closed (its read ends) long before this guard.
    let mut first = &idle[0];
    first.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let mut byte = [0u8; 1];
    match first.read(&mut byte) {
        Ok(n) => assert_eq!(n, 0, "closed by the server, with nothing said"),
        Err(e) => panic!("an idle connection was not closed: {e}"),
    }
    drop(idle);
    // A byte a second: the header never completes, and the server closes the connection
    // before the client is through (the header takes 40 s to send).
    let mut slow = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let header = format!("GET {} HTTP/1.1\r\nHost: {}\r\n", server.at("/"), server.host());
    let mut closed = false;
    for byte in header.bytes().take(40) {
        if slow.write_all(&[byte]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    if !closed {
        slow.set_read_timeout(Some(std::time::Duration::from_secs(1))).unwrap();
        let mut rest = Vec::new();
        closed = slow.read_to_end(&mut rest).is_ok();
    }
    assert!(closed, "a header sent a byte at a time is cut off");
}

/// Writes `n` invalidated notes, `notes/old-000.md` (id `old-000`) and on: prune candidates.
pub fn invalid_notes(dir: &Dir, n: usize) {
    for i in 0..n {
        let body = format!("# Old note {i}\n\nA note that is no longer true, number {i}.\n");
        let file = crate::util::memory(
            &format!("old-{i:03}"),
            "semantic",
            3,
            "2026-01-01T00:00:00Z",
            &body,
        )
        .replace("---\n# Old", "invalid_at: 2026-06-01T00:00:00Z\n---\n# Old");
        dir.write(&format!("notes/old-{i:03}.md"), file);
    }
}

/// Issue #53, item 2: the prune review counts its candidates by reason and shows one reason a
/// page at a time; all of a reason is archived, and the archive, also paged, restored in bulk,
/// without a script.
#[test]
fn the_prune_review_is_paged_and_archives_and_restores_in_bulk() {
    let dir = Dir::new();
    dir.mem_in(".", &["init"], "").ok();
    invalid_notes(&dir, 120);
    let server = Server::start(&dir);
    let boxes = |body: &str, form: &str| {
        let part = body.split(&format!("<form id=\"{form}\"")).nth(1).unwrap_or("");
        let part = part.split("</form>").next().unwrap_or("");
        part.matches("type=\"checkbox\"").count()
    };
    let review = server.get("/prune").body;
    assert!(review.contains("invalid (120)"), "{review}");
    assert!(review.contains("page 1 of 3"), "{review}");
    assert_eq!(boxes(&review, "archive"), 50);
    // Without the script, its one button is not shown (it would do nothing).
    assert!(review.contains("id=\"select-all\" type=\"button\" hidden"), "{review}");
    let last = server.get("/prune?reason=invalid&page=3").body;
    assert_eq!(boxes(&last, "archive"), 20, "{last}");
    assert_eq!(server.get("/prune?reason=invalid&page=4").status, 400);
    assert_eq!(server.get("/prune?reason=bogus").status, 400);
    // All of a reason, in one POST.
    assert_eq!(server.post("/prune/archive", "all=invalid").status, 303);
    let left = std::fs::read_dir(dir.path().join("notes")).map_or(0, |d| d.count());
    assert_eq!(left, 0, "every invalid note archived");
    let review = server.get("/prune").body;
    assert!(review.contains("Archive (120)") && review.contains("Restore all 120"), "{review}");
    assert_eq!(boxes(&review, "restore"), 50);
    // Two selected, then all of the archive.
    assert_eq!(server.post("/prune/restore", "id=old-000&id=old-119").status, 303);
    assert!(
        dir.path().join("notes/old-000.md").exists()
            && dir.path().join("notes/old-119.md").exists()
    );
    assert_eq!(server.post("/prune/restore", "all=archive").status, 303);
    assert_eq!(std::fs::read_dir(dir.path().join("notes")).unwrap().count(), 120);
    assert!(server.get("/prune").body.contains("Archive (0)"));
}

/// Issue #53, item 4: the search page opened empty. Before a query it shows how many memories
/// each layer holds by type, the most recent and the most used.
#[test]
fn the_first_screen_shows_what_mem_remembers() {
    let dir = Dir::example();
    let id = add(&dir, "The release train leaves every second Thursday");
    dir.mem(&["used", &id]);
    dir.mem(&["used", &id]);
    // Every memory, as `mem stats` counts them.
    let total = dir.mem(&["list", "--json"]).json().as_array().unwrap().len();
    let server = Server::start(&dir);
    let page = server.get("/").body;
    assert!(page.contains("What mem remembers"), "{page}");
    let row = page.split("<td>project</td>").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(row.ends_with(&format!("<td>{total}</td>")), "all {total} counted: {row}");
    let recent = page.split("Most recent").nth(1).unwrap().split("Most used").next().unwrap();
    assert!(recent.contains(&format!("href=\"memory/{id}\"")), "the newest first: {recent}");
    let used = page.split("Most used").nth(1).unwrap();
    assert!(used.contains("The release train leaves every second Thursday"), "{used}");
    assert!(used.contains("used 2 times"), "{used}");
}

/// Issue #53, item 8: a prune card said R = 0.315 where the curve beside it and the memory's
/// page said 0.021 (the card counted from when usage observation began, the others from the
/// last access). The card, the page and `mem show` give the one figure prune uses, and the
/// page says from when it counts.
#[test]
fn the_card_the_page_and_show_give_the_retention_prune_uses() {
    let dir = Dir::new();
    dir.mem_in(".", &["init"], "").ok();
    let body = "# An old note\n\nA note nobody has used since it was written.\n";
    dir.write(
        "notes/old.md",
        crate::util::memory("old-note", "semantic", 2, "2025-01-01T00:00:00Z", body),
    );
    dir.observe_since("2025-12-01T00:00:00Z");
    let show = dir.mem(&["show", "old-note", "--json"]).json();
    let (raw, prune) =
        (show["retention"].as_f64().unwrap(), show["prune_retention"].as_f64().unwrap());
    assert!(prune > raw + 0.01, "the two figures differ here: {show}");
    let figure = format!("R = {prune:.3}");
    let server = Server::start(&dir);
    let review = server.get("/prune").body;
    let card = review
        .split("value=\"old-note\"")
        .nth(1)
        .expect("a candidate")
        .split("</div>")
        .next()
        .unwrap();
    assert!(card.contains(&figure), "the card says {figure}: {card}");
    let page = server.get("/memory/old-note").body;
    assert!(
        page.contains(&format!("for pruning {figure} (time counted from 2025-12-01")),
        "{page}"
    );
    let text = dir.mem(&["show", "old-note"]).ok().to_string();
    assert!(text.contains(&format!("for pruning {figure}")), "{text}");
}

/// Issue #53, item 6: a memory's page in a git project's root listed every memory to find its
/// own record, so it grew with the store. It finds it by id, and still gives each citation's
/// verdict.
#[test]
fn a_memory_page_in_a_git_project_gives_the_verdicts_of_its_citations() {
    let dir = Dir::new();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.home())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    dir.write("src/lib.rs", "pub fn ship() {}\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "one"]);
    dir.mem_in(".", &["init", "--project"], "").ok();
    let id = dir
        .mem_in(".", &["add", "--json", "Deploys start in src/lib.rs and src/gone.rs"], "")
        .json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let server = Server::start_in(&dir, Some("."));
    let page = server.get(&format!("/memory/{id}")).body;
    let cites = page
        .split("Code it cites")
        .nth(1)
        .expect("the verdicts")
        .split("</section>")
        .next()
        .unwrap();
    assert!(cites.contains("src/lib.rs is current"), "{cites}");
}

/// Issue #53, item 8: an agent's hit scored far below its factor bars, because its layer's
/// scores were scaled onto the project's, which the page showed nowhere. The scale is a row of
/// its own on the page, a field of `--json` and a line of `--explain`.
#[test]
fn a_layer_s_scale_is_shown_beside_the_factors() {
    let dir = Dir::new();
    crate::native::project_with_claude_memory(&dir);
    dir.write(
        "repo/.memory/rota.md",
        crate::util::memory(
            "rota-note",
            "semantic",
            5,
            "2026-11-01T00:00:00Z",
            "# On-call rota\n\nThe on-call rota and the release calendar decide when a deploy may ship to production.\n",
        ),
    );
    in_repo(&dir, &["allow"]).ok();
    let query = "on-call rota release calendar deploy production";
    let recall = in_repo(&dir, &["recall", "--json", "--no-record", query]).json();
    let agent = recall
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["layer"] == "claude")
        .unwrap_or_else(|| panic!("an agent's hit: {recall}"));
    let scale = agent["layer_scale"].as_f64().unwrap_or_else(|| panic!("{agent}"));
    assert!(scale < 1.0, "{agent}");
    let server = Server::start_in(&dir, Some("repo"));
    let page = server.get(&format!("/?q={}", query.replace(' ', "+"))).body;
    assert!(page.contains("× layer scale</td>"), "{page}");
    assert!(page.contains(&format!("{scale:.3}")), "{page}");
    assert!(page.contains("layers put on one scale"), "the explanation says it: {page}");
}
