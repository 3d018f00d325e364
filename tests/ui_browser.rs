//! `mem ui` in a real browser: Debian's `chromium` driven headless over WebDriver
//! (`chromedriver`, through fantoccini). Each page loads; a search shows the hit as you type; a
//! memory's page has its curve's SVG; a prune candidate archived from the page moves to
//! `archive/` on disk and comes back with restore; a session's page lists the memories its
//! hooks injected; a screenshot can be taken (into a temporary folder). Issue #53, item 1: a
//! server on another port of 127.0.0.1, opened from the page in the same browser, gets no
//! credential of the page; `--open` gives the opener a private page that forwards, so the
//! secret is in no process's arguments; the owner's pages load while 1,000 idle connections
//! are held. The other server, the reader of every process's arguments and the holder of the
//! connections run as another local user when the tests run as root (as CI does). Item 2, 8
//! and 9: the prune review's pages, bulk archive and restore, one retention figure on card,
//! curve and page; items 9 and 10: an agent's layer searched and shown. Without the browser
//! the tests say so and pass, unless `CI=true`
//! (`.ci/run` installs it).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};

use crate::ui::Server;
use crate::util::Dir;

/// The browser and its driver, or `None` (and a note) when they are not installed outside CI.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let found = (which::which("chromium"), which::which("chromedriver"));
    match found {
        (Ok(chromium), Ok(driver)) => Some((chromium, driver)),
        _ => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(!ci, "CI=true and chromium or chromedriver is not installed (.ci/run does)");
            eprintln!("ui_browser: chromium and chromium-driver are not installed; skipped");
            None
        }
    }
}

/// A running chromedriver (stopped when dropped).
struct Driver(Child, u16);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Driver {
    fn start(path: &std::path::Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Driver(child, port)
    }
}

/// A headless chromium session on `driver`, its profile in `profile`.
async fn session(driver: &Driver, chromium: &std::path::Path, profile: &std::path::Path) -> Client {
    let mut caps = fantoccini::wd::Capabilities::new();
    caps.insert(
        "goog:chromeOptions".to_string(),
        serde_json::json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,900", format!("--user-data-dir={}", profile.display())],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a WebDriver session")
}

/// Runs `f` in a headless chromium session of its own (a fresh profile), on a driver started for
/// it, and closes the session after.
fn in_browser(
    chromium: &std::path::Path,
    driver_path: &std::path::Path,
    f: impl AsyncFnOnce(&Client),
) {
    let driver = Driver::start(driver_path);
    let profile = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = session(&driver, chromium, profile.path()).await;
        f(&client).await;
        client.close().await.unwrap();
    });
}

/// Waits up to 10 s for `css` on the page.
async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
}

#[test]
fn the_pages_work_in_a_real_browser() {
    let Some((chromium, driver_path)) = browser() else { return };
    let dir = Dir::example();
    // A session whose start context the hook sent (the injection ledger).
    let payload = format!(
        r#"{{"session_id":"s-ui","hook_event_name":"SessionStart","cwd":{},"source":"startup"}}"#,
        serde_json::to_string(dir.path().to_str().unwrap()).unwrap()
    );
    dir.mem_stdin(&["context", "--hook", "claude"], payload).ok();
    let dry = dir.mem(&["prune", "--dry-run", "--json"]).json();
    let candidate_paths: Vec<(String, String)> = dry
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["path"].as_str().unwrap().to_string()))
        .collect();
    let server = Server::start(&dir);
    let shots = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    in_browser(&chromium, &driver_path, async |client| {
        // The address `mem ui` printed, the secret prefix and its slash.
        client.goto(&format!("{base}/")).await.unwrap();
        wait_for(client, "form#search").await;

        // Search as you type: the script fetches the results.
        let q = wait_for(client, "input#q").await;
        q.send_keys("run the tests locally").await.unwrap();
        let hit = wait_for(client, "li.hit a.title").await;
        assert!(hit.text().await.unwrap().contains("Running the tests locally"));
        wait_for(client, "li.hit svg.bar").await;

        // A memory and its curve.
        hit.click().await.unwrap();
        wait_for(client, "svg.chart path.curve").await;
        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(shots.path().join("memory.png"), png).unwrap();

        // Archive a candidate from the prune review, then restore it.
        client.goto(&format!("{base}/prune")).await.unwrap();
        // The script's button, hidden in the HTML, is shown once the script runs.
        let select_all = wait_for(client, "#select-all").await;
        assert!(select_all.is_displayed().await.unwrap(), "the script shows its button");
        let box1 = wait_for(client, "#archive input[type=checkbox]").await;
        let id = box1.attr("value").await.unwrap().unwrap();
        let path = &candidate_paths.iter().find(|(i, _)| *i == id).expect("a dry-run candidate").1;
        box1.click().await.unwrap();
        client
            .find(Locator::Css("#archive button[type=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let restore = format!("form#restore input[value='{id}']");
        let again = wait_for(client, &restore).await;
        assert!(dir.path().join("archive").join(path).exists(), "archived: {path}");
        assert!(!dir.path().join(path).exists());
        again.click().await.unwrap();
        let button = "form#restore button[type=submit]:not([name])";
        client.find(Locator::Css(button)).await.unwrap().click().await.unwrap();
        let mut back = false;
        for _ in 0..50 {
            back = dir.path().join(path).exists();
            if back {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(back, "restored: {path}");
        assert!(!dir.path().join("archive").join(path).exists());

        // A session's injected memories.
        client.goto(&format!("{base}/sessions")).await.unwrap();
        wait_for(client, "table.sessions a[href='sessions/s-ui']").await.click().await.unwrap();
        let injected = wait_for(client, "li.injected").await;
        assert!(injected.text().await.unwrap().contains("injected by SessionStart"));
        wait_for(client, "li.injected a[href^='../memory/']").await;

        // Every other page loads.
        for (page, title) in [("/capture", "Capture"), ("/overview", "Overview")] {
            client.goto(&format!("{base}{page}")).await.unwrap();
            let h1 = wait_for(client, "main h1").await;
            assert_eq!(h1.text().await.unwrap(), title);
        }
        wait_for(client, "svg.columns").await;

        // Issue #53, item 9: the page overflowed at 390 px. At a phone's width no page is
        // wider than the window, and the search field has a label.
        client.set_window_size(390, 844).await.unwrap();
        let memory_page = format!("/memory/{id}");
        for page in [
            "/",
            "/?q=tests",
            &memory_page,
            "/prune",
            "/sessions",
            "/sessions/s-ui",
            "/capture",
            "/overview",
        ] {
            client.goto(&format!("{base}{page}")).await.unwrap();
            wait_for(client, "main").await;
            let widths = client
                .execute(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];",
                    vec![],
                )
                .await
                .unwrap();
            let (scroll, client_width) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
            assert!(
                scroll <= client_width,
                "{page}: {scroll} px wide in a {client_width} px window"
            );
        }
        client.goto(&format!("{base}/")).await.unwrap();
        let label = wait_for(client, "label[for=q]").await;
        assert_eq!(
            label.prop("textContent").await.unwrap().as_deref(),
            Some("Search the memories")
        );
    });
}

/// A server on another port of 127.0.0.1 that logs each request's line and headers: a page
/// another local user serves (run as another user where the tests can, see
/// [`crate::util::as_another_user`]), until dropped.
struct Logger(Child, u16, tempfile::TempDir);

impl Drop for Logger {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Logger {
    fn start() -> Logger {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"
import http.server, sys
log = open(sys.argv[1], "a")
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write(self.requestline + "\n" + str(self.headers) + "\n----\n")
        log.flush()
        body = b"<!doctype html><title>elsewhere</title><p id=elsewhere>elsewhere</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(server.server_address[1]))
server.serve_forever()
"#;
        let port_file = dir.path().join("port");
        let (mut python, other) = crate::util::as_another_user("python3");
        if other {
            // Its log and port are written here.
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let child = python
            .current_dir(dir.path())
            .arg("-c")
            .arg(script)
            .arg(dir.path().join("requests.log"))
            .arg(&port_file)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        // Dropped (killed and waited for) on every path from here.
        let mut logger = Logger(child, 0, dir);
        for _ in 0..100 {
            let port = std::fs::read_to_string(&port_file).ok();
            if let Some(port) = port.and_then(|p| p.trim().parse().ok()) {
                logger.1 = port;
                return logger;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the logging server did not start");
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.2.path().join("requests.log")).unwrap_or_default()
    }
}

/// Issue #53, item 1 (2): the page's credential went to every port of 127.0.0.1 as a cookie.
/// A memory links to a page another user serves on another port; followed in the same browser
/// profile, that server gets neither a cookie nor the secret (in its path or a referrer).
#[test]
fn a_server_on_another_port_gets_no_credential() {
    let Some((chromium, driver_path)) = browser() else { return };
    let other = Logger::start();
    let dir = Dir::example();
    let link = format!("http://127.0.0.1:{}/wiki", other.1);
    let added = dir.mem_stdin(
        &["add", "--json"],
        format!("The team wiki lives elsewhere: [the wiki]({link}) has the runbooks"),
    );
    let id = added.json()["id"].as_str().unwrap().to_string();
    let server = Server::start(&dir);
    let secret = server.prefix.trim_start_matches('/').to_string();
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    in_browser(&chromium, &driver_path, async |client| {
        client.goto(&format!("{base}/memory/{id}")).await.unwrap();
        let a = wait_for(client, &format!("a[href='{link}']")).await;
        a.click().await.unwrap();
        wait_for(client, "#elsewhere").await;
        // The same profile, typed into the address bar: its root page too.
        client.goto(&format!("http://127.0.0.1:{}/", other.1)).await.unwrap();
        wait_for(client, "#elsewhere").await;
    });
    let log = other.log();
    assert!(log.contains("GET /wiki"), "{log}");
    assert!(!log.contains(&secret), "the secret reached another server: {log}");
    assert!(
        !log.to_ascii_lowercase().contains("cookie:"),
        "a cookie reached another server: {log}"
    );
}

/// Issue #53, item 1 (1): `mem ui --open` gave the address with its secret to `xdg-open` as an
/// argument, which any local user reads in `/proc/PID/cmdline`. The opener (a stand-in that
/// records what it was given: there is no desktop to open here) gets the path of a private
/// page; the real browser, given that page, lands on mem's.
#[test]
fn open_hands_the_browser_a_private_page_not_the_secret() {
    let Some((chromium, driver_path)) = browser() else { return };
    let dir = Dir::example();
    let bin = tempfile::tempdir().unwrap();
    let record = bin.path().join("record");
    let opener = bin.path().join(if cfg!(target_os = "macos") { "open" } else { "xdg-open" });
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{r}.args'\nstat -c %a \"$1\" > '{r}.mode'\nstat -c %a \"$(dirname \"$1\")\" > '{r}.dirmode'\ncp \"$1\" '{r}.html'\n",
            r = record.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let server = Server::launch(&dir, None, |cmd| {
        cmd.arg("--open").env("PATH", &path);
    });
    let secret = server.prefix.trim_start_matches('/').to_string();
    let args = (0..100)
        .find_map(|_| {
            let done = std::fs::read_to_string(record.with_extension("html")).is_ok();
            std::thread::sleep(Duration::from_millis(100));
            done.then(|| std::fs::read_to_string(record.with_extension("args")).unwrap())
        })
        .expect("mem ui --open ran the opener");
    assert!(!args.contains(&secret), "the secret in the opener's arguments: {args}");
    assert!(args.trim().ends_with(".html"), "{args}");
    let mode = |ext: &str| std::fs::read_to_string(record.with_extension(ext)).unwrap();
    assert_eq!(mode("mode").trim(), "600");
    assert_eq!(mode("dirmode").trim(), "700");
    let page = std::fs::read_to_string(record.with_extension("html")).unwrap();
    assert!(page.contains(&secret), "the page forwards to the address: {page}");
    in_browser(&chromium, &driver_path, async |client| {
        let file = format!("file://{}", record.with_extension("html").display());
        client.goto(&file).await.unwrap();
        wait_for(client, "form#search").await;
        let url = client.current_url().await.unwrap();
        assert_eq!(url.as_str(), format!("http://127.0.0.1:{}{}/", server.port, server.prefix));
        // Another local user reads every process's arguments, the browser's included, while
        // the page is open: the secret is in none.
        let found = processes_naming(&secret);
        assert!(found.starts_with("scanned "), "{found}");
        assert_eq!(found.lines().count(), 1, "the secret in a process's arguments: {found}");
    });
}

/// Every process's arguments that hold `secret`, one per line, after a line `scanned N`, as
/// another local user reads them in `/proc` (the secret goes to the reader on its standard
/// input, so that it is not in the reader's own arguments).
fn processes_naming(secret: &str) -> String {
    let script = r#"
import os, sys
secret = sys.stdin.read().strip().encode()
scanned, hits = 0, []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        args = open("/proc/%s/cmdline" % pid, "rb").read()
    except OSError:
        continue
    scanned += 1
    if secret in args:
        hits.append(pid + ": " + args.replace(b"\0", b" ").decode(errors="replace"))
print("scanned %d" % scanned)
print("\n".join(hits), end="")
"#;
    let (mut python, _) = crate::util::as_another_user("python3");
    let out = crate::util::run_with_stdin(python.current_dir("/").arg("-c").arg(script), secret);
    out.ok().to_string()
}

/// Issue #53, item 1 (3): another local user's 1,019 idle connections left the owner's request
/// unanswered. Here another user holds 1,000 connections that send nothing, opening a new one
/// for each that the server closes, while the owner's browser loads pages.
#[test]
fn the_owner_is_answered_while_another_user_holds_a_thousand_connections() {
    let Some((chromium, driver_path)) = browser() else { return };
    let dir = Dir::example();
    let server = Server::start(&dir);
    let script = r#"
import resource, selectors, socket, sys, threading
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, n = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector()
reopened = 0
def hold():
    s = socket.create_connection(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_READ)
for _ in range(n):
    hold()
print("held %d" % n, flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    for key, _ in sel.select(timeout=0.2):
        if not key.fileobj.recv(1):
            sel.unregister(key.fileobj)
            key.fileobj.close()
            hold()
            reopened += 1
print("reopened %d" % reopened, flush=True)
"#;
    let (mut python, other) = crate::util::as_another_user("python3");
    let mut holder = python
        .current_dir("/")
        .arg("-c")
        .arg(script)
        .arg(server.port.to_string())
        .arg("1000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(holder.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert_eq!(first, "held 1000", "another user ({other}) holds the connections");
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    in_browser(&chromium, &driver_path, async |client| {
        // Pages loaded over more than the server's 5 s header timeout, so that the holder has
        // replaced the connections the server closed.
        for round in 0..4 {
            client.goto(&format!("{base}/?q=tests")).await.unwrap();
            wait_for(client, "li.hit a.title").await;
            client.goto(&format!("{base}/overview")).await.unwrap();
            wait_for(client, "svg.columns").await;
            if round < 3 {
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    });
    drop(holder.stdin.take());
    let last = lines.next().unwrap().unwrap();
    holder.wait().unwrap();
    let reopened: usize = last.strip_prefix("reopened ").unwrap().parse().unwrap();
    assert!(
        reopened >= 1000,
        "the server closed the idle connections ({last}), and they came back"
    );
}

/// The text of the first element `css` finds.
async fn text_of(client: &Client, css: &str) -> String {
    wait_for(client, css).await.text().await.unwrap()
}

/// Clicks the first element `css` finds.
async fn click(client: &Client, css: &str) {
    wait_for(client, css).await.click().await.unwrap();
}

/// Waits up to 10 s for the first element `css` finds to read `want`.
async fn text_becomes(client: &Client, css: &str, want: &str) {
    let mut last = String::new();
    for _ in 0..100 {
        if let Ok(e) = client.find(Locator::Css(css)).await {
            last = e.text().await.unwrap_or_default();
            if last == want {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{css} reads {last:?}, not {want:?}");
}

/// Waits up to 10 s for `done`.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within 10 s: {what}");
}

/// Issue #53, items 2, 8 and 9 in the browser: the prune review's pages; all of a reason
/// archived by its button, and the archive brought back a selection at a time and then all at
/// once; a card, its curve's mark for today and the memory's page give one retention; the
/// curve marks the last access; the axis text is dark enough (#595959, 7:1 on white).
#[test]
fn paging_bulk_restore_and_one_figure_in_the_browser() {
    let Some((chromium, driver_path)) = browser() else { return };
    let dir = Dir::new();
    dir.mem_in(".", &["init"], "").ok();
    crate::ui::invalid_notes(&dir, 120);
    let body = "# An old note\n\nA note used once, long ago.\n";
    let old = crate::util::memory("old-note", "semantic", 2, "2024-01-01T00:00:00Z", body)
        .replace("---\n# An", "access: { count: 1, last: 2024-06-01T00:00:00Z }\n---\n# An");
    dir.write("old.md", old);
    dir.observe_since("2025-01-01T00:00:00Z");
    let notes = |d: &Dir| std::fs::read_dir(d.path().join("notes")).map_or(0, |d| d.count());
    let server = Server::start(&dir);
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    in_browser(&chromium, &driver_path, async |client| {
        client.goto(&format!("{base}/prune")).await.unwrap();
        assert_eq!(text_of(client, "ul.reasons strong").await, "invalid (120)");
        assert_eq!(text_of(client, "p.pager").await, "page 1 of 3 next →");
        client.find(Locator::LinkText("next →")).await.unwrap().click().await.unwrap();
        text_becomes(client, "p.pager", "← previous page 2 of 3 next →").await;

        // The card, the curve beside it and the memory's page.
        client.find(Locator::LinkText("faded (1)")).await.unwrap().click().await.unwrap();
        let meta = text_of(client, "div.candidate p.meta").await;
        let figure = meta.split(" · ").find(|p| p.starts_with("R = ")).expect(&meta).to_string();
        let today = wait_for(client, "div.candidate svg line.today title").await;
        let today = today.prop("textContent").await.unwrap().unwrap();
        assert!(
            today.ends_with(&format!(": {figure}")),
            "the curve's today {today}, the card's {figure}"
        );
        let marks =
            client.find_all(Locator::Css("div.candidate svg line.used title")).await.unwrap();
        let mut names = Vec::new();
        for mark in marks {
            names.push(mark.prop("textContent").await.unwrap().unwrap());
        }
        assert!(names.iter().any(|n| n == "last access 2024-06-01T00:00:00Z"), "{names:?}");
        let color = client
            .execute("return getComputedStyle(document.querySelector('p.axis')).color;", vec![])
            .await
            .unwrap();
        assert_eq!(color.as_str(), Some("rgb(89, 89, 89)"));
        click(client, "div.candidate a[href^='memory/']").await;
        let page = text_of(client, "main").await;
        assert!(page.contains(&format!("for pruning {figure}")), "{figure}: {page}");

        // All 120 invalid notes archived by their button, then two restored, then all.
        client.goto(&format!("{base}/prune")).await.unwrap();
        click(client, "#archive button[name=all][value=invalid]").await;
        until("all archived", || notes(&dir) == 0).await;
        text_becomes(client, "#restore button[name=all]", "Restore all 120").await;
        assert_eq!(text_of(client, "section.archive p.pager").await, "page 1 of 3 next →");
        click(client, "#restore input[value='old-000']").await;
        click(client, "#restore input[value='old-001']").await;
        click(client, "#restore button[type=submit]:not([name])").await;
        until("two restored", || notes(&dir) == 2).await;
        click(client, "#restore button[name=all]").await;
        until("all restored", || notes(&dir) == 120).await;
    });
}

/// Issue #53, items 9 and 10 in the browser: the first screen counts each layer's memories;
/// a search of an agent's layer, chosen in the form, says the command with `--layer`; the
/// agent's memory shows its layer, where it lives and when it last changed there, and offers
/// adopting it, not forgetting it.
#[test]
fn an_agent_s_layer_in_the_browser() {
    let Some((chromium, driver_path)) = browser() else { return };
    let dir = Dir::new();
    crate::native::project_with_claude_memory(&dir);
    crate::util::run(
        Command::new(crate::util::bin())
            .arg("allow")
            .current_dir(dir.path().join("repo"))
            .env("HOME", dir.home())
            .env("XDG_CONFIG_HOME", dir.home().join(".config")),
    )
    .ok();
    let server = Server::start_in(&dir, Some("repo"));
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    in_browser(&chromium, &driver_path, async |client| {
        client.goto(&format!("{base}/")).await.unwrap();
        let counts = text_of(client, "main").await;
        assert!(counts.contains("What mem remembers") && counts.contains("claude"), "{counts}");
        // The layer chosen in the form, the query typed, the form sent.
        let layer = wait_for(client, "select[name=layer]").await;
        layer.select_by_value("claude").await.unwrap();
        let q = wait_for(client, "input#q").await;
        q.send_keys("deploy window").await.unwrap();
        client.form(Locator::Css("form#search")).await.unwrap().submit().await.unwrap();
        let command = text_of(client, "p.command code").await;
        assert!(command.contains("--layer claude"), "{command}");
        click(client, "li.hit a.title[href$='claude.deploy-window']").await;
        text_becomes(client, "span.layer", "claude").await;
        let page = text_of(client, "main").await;
        assert!(page.contains("lives in claude auto memory"), "{page}");
        assert!(page.contains("last changed in the agent"), "{page}");
        assert!(page.contains("mem adopt claude.deploy-window"), "{page}");
        let forget = client.find_all(Locator::Css("form[action$='/forget']")).await.unwrap();
        assert!(forget.is_empty(), "forgetting an agent's memory is not offered");
    });
}
