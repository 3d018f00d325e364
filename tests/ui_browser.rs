//! `mem ui` in a real browser: Debian's `chromium` driven headless over WebDriver
//! (`chromedriver`, through fantoccini). Each page loads; a search shows the hit as you type; a
//! memory's page has its curve's SVG; a prune candidate archived from the page moves to
//! `archive/` on disk and comes back with restore; a session's page lists the memories its
//! hooks injected; a screenshot can be taken (into a temporary folder). Without the browser the
//! test says so and passes, unless `CI=true` (`.ci/run` installs it).

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
    let driver = Driver::start(&driver_path);
    let profile = tempfile::tempdir().unwrap();
    let shots = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{}{}", server.port, server.prefix);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = session(&driver, &chromium, profile.path()).await;
        // The address `mem ui` printed, the secret prefix and its slash.
        client.goto(&format!("{base}/")).await.unwrap();
        wait_for(&client, "form#search").await;

        // Search as you type: the script fetches the results.
        let q = wait_for(&client, "input#q").await;
        q.send_keys("run the tests locally").await.unwrap();
        let hit = wait_for(&client, "li.hit a.title").await;
        assert!(hit.text().await.unwrap().contains("Running the tests locally"));
        wait_for(&client, "li.hit svg.bar").await;

        // A memory and its curve.
        hit.click().await.unwrap();
        wait_for(&client, "svg.chart path.curve").await;
        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(shots.path().join("memory.png"), png).unwrap();

        // Archive a candidate from the prune review, then restore it.
        client.goto(&format!("{base}/prune")).await.unwrap();
        let box1 = wait_for(&client, "#archive input[type=checkbox]").await;
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
        let restore = format!("form.restore input[value='{id}']");
        wait_for(&client, &restore).await;
        assert!(dir.path().join("archive").join(path).exists(), "archived: {path}");
        assert!(!dir.path().join(path).exists());
        let button = format!("form.restore:has(input[value='{id}']) button");
        client.find(Locator::Css(&button)).await.unwrap().click().await.unwrap();
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
        wait_for(&client, "table.sessions a[href='sessions/s-ui']").await.click().await.unwrap();
        let injected = wait_for(&client, "li.injected").await;
        assert!(injected.text().await.unwrap().contains("injected by SessionStart"));
        wait_for(&client, "li.injected a[href^='../memory/']").await;

        // Every other page loads.
        for (page, title) in [("/capture", "Capture"), ("/overview", "Overview")] {
            client.goto(&format!("{base}{page}")).await.unwrap();
            let h1 = wait_for(&client, "main h1").await;
            assert_eq!(h1.text().await.unwrap(), title);
        }
        wait_for(&client, "svg.columns").await;
        client.close().await.unwrap();
    });
}
