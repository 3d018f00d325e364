use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wait_timeout::ChildExt;

use crate::util::{Dir, NOW, ids, memory};

/// Protocol edges: no handshake, unknown methods, batches, stderr.
mod protocol;
/// Every limit of the tools' input schemas, and the server's refusal of what breaks it.
mod schemas;

/// How long to wait for one answer before declaring the server stuck (a guard, not a timing).
const PATIENCE: Duration = Duration::from_secs(60);
/// The same guard for the answer to a bad line, which needs no model or index work.
const BAD_LINE_PATIENCE: Duration = Duration::from_secs(20);

/// `mem --dir DIR --now NOW mcp`, spoken to by hand: newline-delimited JSON-RPC on its stdin
/// and stdout, as the MCP stdio transport specifies.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    next_id: u64,
}

impl Server {
    fn start(dir: &Dir) -> Server {
        Server::of(dir.spawn(&["--now", NOW, "mcp"]))
    }

    /// A server started in the subfolder `rel` of `dir`, without `--dir`: it finds its root
    /// (and the user layer) as an agent's server does.
    pub(crate) fn start_in(dir: &Dir, rel: &str) -> Server {
        Server::of(dir.spawn_in(rel, &["--now", NOW, "mcp"]))
    }

    pub(crate) fn of(mut child: Child) -> Server {
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let mut err = child.stderr.take().unwrap();
        let stderr_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
            sink.lock().unwrap().push_str(&text);
        });
        let stdin = child.stdin.take();
        Server { child, stdin, lines, stderr, stderr_reader: Some(stderr_reader), next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        let line = serde_json::to_string(message).unwrap();
        assert!(!line.contains('\n'), "one message per line");
        self.send_line(line.as_bytes());
    }

    /// Sends `line` as it is, and a newline: for the lines a JSON serialiser would not write.
    fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next id for a request.
    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Sends a request and returns its response, checking that everything the server printed
    /// on stdout meanwhile is a JSON-RPC message.
    #[track_caller]
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.take_id();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.answer(&json!(id), method, PATIENCE)
    }

    /// The next message on stdout; fails (and [`Drop`] kills the server) if none comes within
    /// `patience`, or if it is not a JSON-RPC message.
    #[track_caller]
    fn next_message(&mut self, what: &str, patience: Duration) -> Value {
        let line = match self.lines.recv_timeout(patience) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no answer to {what}{}", self.log()),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the server closed stdout before answering {what}{}", self.log())
            }
        };
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}{}", self.log()));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// The response whose id is `id`, skipping other messages.
    #[track_caller]
    fn answer(&mut self, id: &Value, what: &str, patience: Duration) -> Value {
        loop {
            let message = self.next_message(what, patience);
            if message["id"] == *id {
                return message;
            }
        }
    }

    /// A `tools/call`: the result (which has `content` and `isError`).
    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        assert!(response["error"].is_null(), "{tool}: protocol error {response}{}", self.log());
        response["result"].clone()
    }

    /// A tool call that must succeed: its text content, parsed as JSON.
    #[track_caller]
    pub(crate) fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool} failed: {result}{}", self.log());
        let value: Value = serde_json::from_str(text(&result)).unwrap();
        // A client may take the text for the structured content, which must be an object
        // (Gemini CLI does, and refuses an array).
        assert!(value.is_object(), "{tool} answered JSON that is not an object: {value}");
        value
    }

    /// A tool call that must succeed and answers a list under `key` (`hits`, `memories`,
    /// `sessions`): the list.
    #[track_caller]
    pub(crate) fn list(&mut self, tool: &str, key: &str, arguments: Value) -> Value {
        let value = self.ok(tool, arguments);
        assert!(value[key].is_array(), "{tool} has no list `{key}`: {value}");
        value[key].clone()
    }

    /// A tool call that must fail as a tool error (`isError: true`): its message.
    #[track_caller]
    pub(crate) fn tool_error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{tool} should fail: {result}");
        text(&result).to_string()
    }

    pub(crate) fn log(&self) -> String {
        format!("\nstderr: {}", self.stderr.lock().unwrap())
    }

    /// Completes the initialize handshake.
    pub(crate) fn initialize(&mut self) {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "mem-tests", "version": "0.0.0" }
            }),
        );
        let result = &init["result"];
        assert_eq!(result["serverInfo"]["name"], "mem", "{init}");
        assert!(result["capabilities"]["tools"].is_object(), "{init}");
        assert!(result["protocolVersion"].is_string(), "{init}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// Closes stdin, as a client does, and checks that the server then exits cleanly;
    /// returns everything it wrote on stderr.
    pub(crate) fn finish(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait_timeout(PATIENCE).unwrap();
        let Some(status) = status else {
            let _ = self.child.kill();
            panic!("the server did not exit when stdin closed{}", self.log());
        };
        assert!(status.success(), "exit status {status}{}", self.log());
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().unwrap();
        }
        self.stderr.lock().unwrap().clone()
    }
}

impl Server {
    /// Kills the server (SIGKILL) and waits for it.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    /// A test that failed (a timeout included) leaves no server behind.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The text of a tool result's one content item.
#[track_caller]
fn text(result: &Value) -> &str {
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text", "{result}");
    content[0]["text"].as_str().unwrap()
}

/// Starts a server on `dir` and completes the initialize handshake.
fn initialized(dir: &Dir) -> Server {
    let mut server = Server::start(dir);
    server.initialize();
    server
}

fn md_files(dir: &Dir) -> usize {
    std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "md"))
        .count()
}

#[test]
fn nine_tools_each_with_an_input_schema() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "forget",
            "get",
            "recall",
            "recent",
            "remember",
            "session_list",
            "session_resume",
            "session_search",
            "used"
        ]
    );
    for tool in tools {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert!(schema["properties"].is_object(), "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{tool}");
    }
    // The recall tool names the score's factors and a hit's components from their one list.
    let recall = tools.iter().find(|t| t["name"] == "recall").unwrap();
    let description = recall["description"].as_str().unwrap();
    assert!(
        description.contains(
            "ranked by relevance × recency × importance × date × time × name × code × work"
        ),
        "{description}"
    );
    assert!(
        description.contains(
            "components (relevance, coverage, episode, recency, importance, date, time, name, code, work)"
        ),
        "{description}"
    );
    let schema =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    assert_eq!(schema("recall")["required"], json!(["query"]));
    assert_eq!(schema("recall")["properties"]["k"]["default"], 20);
    assert_eq!(schema("recall")["properties"]["k"]["maximum"], 100);
    assert_eq!(schema("remember")["required"], json!(["text"]));
    assert_eq!(schema("remember")["properties"]["importance"]["default"], 5);
    assert_eq!(schema("get")["required"], json!(["id"]));
    assert_eq!(schema("forget")["required"], json!(["id", "reason"]));
    assert_eq!(schema("used")["required"], json!(["ids"]));
    assert_eq!(schema("session_search")["required"], json!(["query"]));
    assert_eq!(schema("session_resume")["properties"]["budget"]["default"], 4000);
    server.finish();
}

#[test]
fn the_session_tools_read_the_session_log() {
    let dir = Dir::new();
    let transcript = dir.write(
        "transcripts/s.jsonl",
        [
            r#"{"type":"user","sessionId":"s-1","cwd":"/home/ana/shop","timestamp":"2026-11-29T10:00:00Z","message":{"role":"user","content":"Why does the checkout page time out?"}}"#,
            r#"{"type":"assistant","timestamp":"2026-11-29T10:01:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"curl -m 5 localhost:8080/checkout"}}]}}"#,
            r#"{"type":"user","timestamp":"2026-11-29T10:01:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 28\ncurl: (28) Operation timed out","is_error":true}]}}"#,
            r#"{"type":"assistant","timestamp":"2026-11-29T10:02:00Z","message":{"role":"assistant","content":[{"type":"text","text":"The payment gateway call has no timeout; it blocks the page."}]}}"#,
        ]
        .join("\n")
            + "\n",
    );
    let payload = json!({
        "session_id": "s-1",
        "transcript_path": transcript,
        "cwd": "/home/ana/shop",
        "hook_event_name": "Stop"
    });
    dir.mem_stdin(&["capture"], payload.to_string()).ok();
    let mut server = initialized(&dir);
    let list = server.list("session_list", "sessions", json!({}));
    assert_eq!(list[0]["id"], "s-1", "{list}");
    assert_eq!(list[0]["turns"], 1, "{list}");
    let hits = server.list("session_search", "hits", json!({ "query": "gateway timeout" }));
    assert_eq!(hits[0]["session"], "s-1", "{hits}");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("[gateway]"), "{hits}");
    let resume = server.ok("session_resume", json!({ "budget": 1000 }));
    assert_eq!(resume["session"], "s-1");
    let text = resume["text"].as_str().unwrap();
    assert!(text.contains("## Goal\n\nWhy does the checkout page time out?"), "{text}");
    assert!(text.contains("→ failed (exit 28)"), "{text}");
    assert!(text.chars().count() <= 1000);
    let missing = server.call("session_resume", json!({ "id": "nope" }));
    assert_eq!(missing["isError"], true, "{missing}");
    server.finish();
}

#[test]
fn remember_recall_get_recent_used_forget_over_stdio() {
    let dir = Dir::new();
    let mut server = initialized(&dir);

    let staging = server.ok(
        "remember",
        json!({
            "text": "The staging database is reset every Sunday at 03:00 UTC",
            "type": "episodic",
            "importance": 6,
            "tags": ["staging"],
            "source": "session/42"
        }),
    );
    let staging_id = staging["id"].as_str().unwrap().to_string();
    assert!(dir.path().join(staging["path"].as_str().unwrap()).is_file(), "{staging}");
    assert!(staging["duplicate"].is_null(), "{staging}");
    let release = server.ok(
        "remember",
        json!({ "text": "Deploys go through the release pipeline: run make release from main" }),
    );
    let release_id = release["id"].as_str().unwrap().to_string();
    assert_ne!(staging_id, release_id);

    // Recall: the same objects as `mem recall --json`.
    let hits =
        server.list("recall", "hits", json!({ "query": "when is the staging database reset" }));
    assert_eq!(ids(&hits)[0], staging_id, "{hits}");
    let hit = &hits[0];
    assert_eq!(hit["rank"], 1);
    assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
    for key in ["relevance", "recency", "importance"] {
        let v = hit["components"][key].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{key} = {v}");
    }
    for key in ["path", "title", "type", "importance", "created", "tags", "snippet", "bm25"] {
        assert!(!hit[key].is_null(), "{key} missing in {hit}");
    }
    let filtered =
        server.list("recall", "hits", json!({ "query": "staging database", "type": "semantic" }));
    assert_eq!(filtered, json!([]), "the staging memory is episodic");
    let tagged =
        server.list("recall", "hits", json!({ "query": "database", "tags": ["staging"], "k": 1 }));
    assert_eq!(ids(&tagged), [staging_id.as_str()]);

    // Get: the whole memory.
    let memory = server.ok("get", json!({ "id": staging_id }));
    assert_eq!(memory["id"], staging_id.as_str());
    assert_eq!(memory["type"], "episodic");
    assert_eq!(memory["importance"], 6);
    assert_eq!(memory["tags"], json!(["staging"]));
    assert_eq!(memory["source"], "session/42");
    assert_eq!(memory["created"], NOW);
    assert!(memory["body"].as_str().unwrap().contains("every Sunday at 03:00 UTC"), "{memory}");
    assert_eq!(memory["front_matter"]["id"], staging_id.as_str());
    assert_eq!(memory["path"], staging["path"]);

    // Recent: newest first, like `mem list --json`.
    let recent = server.list("recent", "memories", json!({}));
    let mut recent_ids = ids(&recent);
    recent_ids.sort();
    let mut both = vec![staging_id.clone(), release_id.clone()];
    both.sort();
    assert_eq!(recent_ids, both);
    assert_eq!(server.list("recent", "memories", json!({ "n": 1 })).as_array().unwrap().len(), 1);
    assert_eq!(
        ids(&server.list("recent", "memories", json!({ "type": "episodic" }))),
        [staging_id.as_str()]
    );

    // Used: recorded, and appended to this machine's usage file.
    let used = server.ok("used", json!({ "ids": [release_id] }));
    assert_eq!(used["used"][0]["id"], release_id.as_str(), "{used}");
    assert!(dir.usage_text().contains(release_id.as_str()));

    // Forget: invalid from now on; recall leaves it out, the file stays.
    let forgotten =
        server.ok("forget", json!({ "id": staging_id, "reason": "moved to Saturdays" }));
    assert_eq!(forgotten["id"], staging_id.as_str());
    assert_eq!(forgotten["invalid_at"], NOW);
    let file = dir.read(staging["path"].as_str().unwrap());
    assert!(file.contains("invalid_reason: moved to Saturdays"), "{file}");
    let hits =
        server.list("recall", "hits", json!({ "query": "when is the staging database reset" }));
    assert!(!ids(&hits).contains(&staging_id), "{hits}");
    let again = server.tool_error("forget", json!({ "id": staging_id, "reason": "twice" }));
    assert!(again.contains("already invalid"), "{again}");
    server.finish();

    // The recalls were recorded in the usage log, as the CLI's are.
    let shown = dir.mem(&["show", &release_id, "--json"]).json();
    assert_eq!(shown["access_count"], 1, "{shown}");
    let shown = dir.mem(&["show", &staging_id, "--json"]).json();
    assert!(shown["retrieved"].as_u64().unwrap() >= 2, "{shown}");
}

#[test]
fn bad_calls_are_tool_errors_and_the_server_goes_on() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let kept = server.ok("remember", json!({ "text": "We use pnpm, never npm, in the web app" }));

    // No path traversal: an id is a name, never a path.
    for id in ["../../etc/passwd", "/etc/passwd", "..", "a/b"] {
        let message = server.tool_error("get", json!({ "id": id }));
        assert!(message.contains("invalid memory id"), "{id}: {message}");
    }
    let message = server.tool_error("used", json!({ "ids": ["../mem.toml"] }));
    assert!(message.contains("invalid memory id"), "{message}");
    let message = server.tool_error("forget", json!({ "id": "../x", "reason": "r" }));
    assert!(message.contains("invalid memory id"), "{message}");
    let message = server.tool_error("get", json!({ "id": "01NOSUCHMEMORY" }));
    assert!(message.contains("no memory with id"), "{message}");

    // Too big: refused, nothing written.
    let big = "All work and no play. ".repeat(3_000);
    assert!(big.len() > 64 * 1024);
    let message = server.tool_error("remember", json!({ "text": big }));
    assert!(message.contains("over the limit of 65536 bytes"), "{message}");
    let message = server.tool_error("remember", json!({ "text": "x", "importance": 11 }));
    assert!(message.contains("importance"), "{message}");
    let message = server.tool_error("remember", json!({ "text": "   " }));
    assert!(message.contains("needs some text"), "{message}");
    let message = server.tool_error("recall", json!({ "query": "pnpm", "k": 101 }));
    assert!(message.contains("k must be 1 to 100"), "{message}");
    let message = server.tool_error("recall", json!({ "query": "pnpm", "type": "dream" }));
    assert!(message.contains("unknown variant"), "{message}");
    assert_eq!(md_files(&dir), 1);

    // Admission: an exact duplicate comes back as the same memory, counted as used; a
    // near-duplicate is refused unless forced.
    let duplicate =
        server.ok("remember", json!({ "text": "we use pnpm,  never npm, in the web app" }));
    assert_eq!(duplicate["id"], kept["id"]);
    assert_eq!(duplicate["duplicate"], true);
    let near = json!({ "text": "We use pnpm, never npm, in the web app today" });
    let message = server.tool_error("remember", near.clone());
    let kept_id = kept["id"].as_str().unwrap();
    assert!(message.contains(kept_id) && message.contains("similarity"), "{message}");
    assert_eq!(md_files(&dir), 1);
    let mut forced = near;
    forced["force"] = json!(true);
    let written = server.ok("remember", forced);
    assert_ne!(written["id"], kept["id"]);
    assert_eq!(md_files(&dir), 2);

    // Still answering after all that.
    let hits = server.list("recall", "hits", json!({ "query": "pnpm" }));
    assert_eq!(hits.as_array().unwrap().len(), 2);
    server.finish();
    let shown = dir.mem(&["show", kept_id, "--json"]).json();
    assert_eq!(shown["access_count"], 1, "the duplicate counted as a use: {shown}");
}

#[test]
fn a_smaller_max_file_bytes_is_the_text_limit() {
    let dir = Dir::new();
    dir.write("mem.toml", "[limits]\nmax_file_bytes = 1000\n");
    let mut server = initialized(&dir);
    let message = server.tool_error("remember", json!({ "text": "y".repeat(1001) }));
    assert!(message.contains("over the limit of 1000 bytes"), "{message}");
    // The text fits, but not the file with its front-matter: the index would skip it.
    let message = server.tool_error("remember", json!({ "text": "y".repeat(990) }));
    assert!(message.contains("max_file_bytes"), "{message}");
    assert_eq!(md_files(&dir), 0);
    server.finish();
}

#[test]
fn files_written_by_others_are_seen_at_the_next_call() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    assert_eq!(server.list("recall", "hits", json!({ "query": "flaky login test" })), json!([]));
    dir.mem(&["add", "The login test is flaky because of the session_id cookie"]).ok();
    let hits = server.list("recall", "hits", json!({ "query": "flaky login test" }));
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    server.finish();
}

#[test]
fn recall_records_retrievals_unless_the_root_says_not_to() {
    let dir = Dir::new();
    dir.write("mem.toml", "[usage]\nrecord_retrievals = false\n");
    let mut server = initialized(&dir);
    let kept = server.ok("remember", json!({ "text": "Run the linter with cargo clippy" }));
    let id = kept["id"].as_str().unwrap().to_string();
    assert_eq!(ids(&server.list("recall", "hits", json!({ "query": "linter" }))), [id.as_str()]);
    server.finish();
    let shown = dir.mem(&["show", &id, "--json"]).json();
    assert_eq!(shown["retrieved"], 0, "{shown}");
}

#[test]
fn the_server_loads_the_model_once_and_recalls_by_meaning() {
    let dir = Dir::new();
    dir.use_model("");
    let mut server = initialized(&dir);
    for text in ["The kitten rests on a rug.", "Deploy the API with make deploy."] {
        server.ok("remember", json!({ "text": text }));
    }
    // Two recalls: the first embeds the new memories, both use the model loaded at start.
    for query in ["cat sat on the mat", "a small cat sleeping on a carpet"] {
        let hits = server.list("recall", "hits", json!({ "query": query }));
        assert!(hits[0]["title"].as_str().unwrap().contains("kitten"), "{hits}");
        assert!(hits[0]["cosine"].as_f64().unwrap() > 0.4, "{hits}");
    }
    let bm25 =
        server.list("recall", "hits", json!({ "query": "cat sat on the mat", "mode": "bm25" }));
    assert_eq!(bm25, json!([]), "no word in common");
    let log = server.finish();
    assert_eq!(log.matches("embedding model loaded").count(), 1, "{log}");
}

/// A tools/call line with `arguments`, a JSON text as it is (a serialiser would not write it).
fn raw_call(id: u64, tool: &str, arguments: &str) -> String {
    let params = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

/// A tools/call whose JSON holds lone UTF-16 surrogate escapes, which serde_json (and so rmcp)
/// rejects: it used to get no answer at all. Now the escapes become U+FFFD and the call its
/// normal answer; valid pairs and an escaped backslash before `u` are left as they are.
#[test]
fn a_tool_call_with_a_lone_surrogate_gets_an_answer() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let id = server.take_id();
    // JSON text: lone high, lone low, lone high before a pair, a pair, an escaped backslash.
    let escaped = r#"abc\ud800def \udc00 \ud800\ud83d\ude00 \\ud800 end"#;
    server.send_line(raw_call(id, "remember", &format!(r#"{{"text":"{escaped}"}}"#)).as_bytes());
    let response = server.answer(&json!(id), "remember with lone surrogates", BAD_LINE_PATIENCE);
    assert_eq!(response["result"]["isError"], false, "{response}{}", server.log());
    let added: Value = serde_json::from_str(text(&response["result"])).unwrap();
    let memory = server.ok("get", json!({ "id": added["id"] }));
    let body = memory["body"].as_str().unwrap();
    assert!(body.contains("abc\u{FFFD}def \u{FFFD} \u{FFFD}\u{1F600} \\ud800 end"), "{body}");

    // A lone surrogate where the text is a query: the same repair, the normal answer.
    let id = server.take_id();
    server.send_line(raw_call(id, "recall", r#"{"query":"abc\udfffdef"}"#).as_bytes());
    let response = server.answer(&json!(id), "recall with a lone surrogate", BAD_LINE_PATIENCE);
    assert_eq!(response["result"]["isError"], false, "{response}");
    let log = server.finish();
    assert!(log.contains("lone surrogate"), "{log}");
}

/// A line that is not JSON (not JSON at all, truncated, not UTF-8, too long) used to get no
/// answer; now it gets a JSON-RPC parse error (-32700, id null) and the server goes on, before
/// the handshake as after it. Blank lines get nothing.
#[test]
fn a_malformed_line_gets_a_parse_error_and_the_server_goes_on() {
    let dir = Dir::new();
    let mut server = Server::start(&dir);
    /// Sends `line` and returns the message of the parse error it gets.
    #[track_caller]
    fn parse_error(server: &mut Server, line: &[u8]) -> String {
        server.send_line(line);
        let what = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        let error = server.next_message(&what, BAD_LINE_PATIENCE);
        assert_eq!(error["id"], Value::Null, "{what}: {error}");
        assert_eq!(error["error"]["code"], -32700, "{what}: {error}");
        let message = error["error"]["message"].as_str().unwrap().to_string();
        assert!(message.starts_with("Parse error: "), "{what}: {message}");
        message
    }
    parse_error(&mut server, b"not json");
    server.initialize();
    parse_error(&mut server, br#"{"jsonrpc": "2.0", "id": 7, "method": "#);
    parse_error(&mut server, b"not json");
    parse_error(&mut server, b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"x\":\"\xff\"}");
    // Over the 4 MiB line limit: refused without being parsed.
    let long = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"{}"}}"#, "x".repeat(5 << 20));
    let message = parse_error(&mut server, long.as_bytes());
    assert!(message.contains("over the limit of 4194304 bytes"), "{message}");

    // Blank lines are skipped: the next message is the answer to the next request.
    server.send_line(b"");
    server.send_line(b"  \t\r");
    let id = server.take_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }));
    let list = server.next_message("tools/list after bad lines", BAD_LINE_PATIENCE);
    assert_eq!(list["id"], id, "{list}");
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 9, "{list}");
    let kept = server.ok("remember", json!({ "text": "Parse errors do not stop the server" }));
    assert_eq!(
        ids(&server.list("recall", "hits", json!({ "query": "parse errors" }))),
        [kept["id"].as_str().unwrap()]
    );
    let log = server.finish();
    assert!(log.contains("mem: parse error: "), "{log}");
}

#[test]
fn the_server_watches_the_root_and_sees_what_other_tools_change() {
    let dir = Dir::new();
    dir.write("a.md", memory("a", "semantic", 5, "2026-01-01T00:00:00Z", "apple pie\n"));
    dir.write("b.md", memory("b", "semantic", 5, "2026-01-01T00:00:00Z", "cherry tart\n"));
    let mut server = initialized(&dir);
    assert_eq!(ids(&server.list("recall", "hits", json!({ "query": "apple" }))), ["a"]);
    // Another tool adds a file in a new folder and edits one in place (its folder does not
    // change; no recall returns it): the watcher reports both.
    dir.write("new/c.md", memory("c", "semantic", 5, "2026-01-01T00:00:00Z", "durian smoothie\n"));
    {
        let path = dir.path().join("b.md");
        let mut b = std::fs::File::options().write(true).truncate(true).open(path).unwrap();
        b.write_all(
            memory("b", "semantic", 5, "2026-01-01T00:00:00Z", "elderberry jam\n").as_bytes(),
        )
        .unwrap();
    }
    // Events arrive within milliseconds of the write; allow for a loaded machine.
    let mut found = (Vec::new(), Vec::new());
    for _ in 0..50 {
        found = (
            ids(&server.list("recall", "hits", json!({ "query": "durian" }))),
            ids(&server.list("recall", "hits", json!({ "query": "elderberry" }))),
        );
        if !found.0.is_empty() && !found.1.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(found, (vec!["c".to_string()], vec!["b".to_string()]), "{}", server.log());
    assert!(ids(&server.list("recall", "hits", json!({ "query": "cherry" }))).is_empty());
    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    let mut gone = false;
    for _ in 0..50 {
        gone = ids(&server.list("recall", "hits", json!({ "query": "apple" }))).is_empty();
        if gone {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(gone, "{}", server.log());
    let log = server.finish();
    assert!(!log.contains("cannot watch"), "{log}");
}

/// Issue 37, item 23: a rename of the CLI's `Context` type had made the help and the manual
/// pages say "Model Globals Protocol". It is the Model Context Protocol everywhere.
#[test]
fn the_help_and_the_manual_name_the_model_context_protocol() {
    let dir = Dir::new();
    let pages = dir.path().join("man");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(crate::util::bin()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["man", "--out", pages.to_str().unwrap()]);
    let texts = [
        ("mem --help", run(&["--help"])),
        ("mem mcp --help", run(&["mcp", "--help"])),
        ("mem man", run(&["man"])),
        ("mem-mcp.1", std::fs::read_to_string(pages.join("mem-mcp.1")).unwrap()),
    ];
    for (what, text) in texts {
        assert!(text.contains("Model Context Protocol"), "{what}: {text}");
        assert!(!text.contains("Globals Protocol"), "{what}: {text}");
    }
}

/// Issue 37, item 20: `recall` declared no `destructiveHint`, whose default is true, so clients
/// took it for destructive. Every tool declares all four hints, each true to what it does:
/// recall, remember and used record usage (not read-only, not idempotent) and destroy nothing;
/// forget invalidates (destructive; a second call changes nothing); the others only read.
#[test]
fn every_tool_declares_every_hint_as_it_is() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
    // (read-only, destructive, idempotent); none reaches outside the machine.
    let expected = [
        ("recall", (false, false, false)),
        ("remember", (false, false, false)),
        ("get", (true, false, true)),
        ("recent", (true, false, true)),
        ("forget", (false, true, true)),
        ("used", (false, false, false)),
        ("session_list", (true, false, true)),
        ("session_search", (true, false, true)),
        ("session_resume", (true, false, true)),
    ];
    assert_eq!(tools.len(), expected.len(), "{list}");
    for (name, (read_only, destructive, idempotent)) in expected {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}"));
        let hints = &tool["annotations"];
        assert_eq!(hints["readOnlyHint"], read_only, "{name}: {hints}");
        assert_eq!(hints["destructiveHint"], destructive, "{name}: {hints}");
        assert_eq!(hints["idempotentHint"], idempotent, "{name}: {hints}");
        assert_eq!(hints["openWorldHint"], false, "{name}: {hints}");
        assert!(hints["title"].is_string(), "{name}: {hints}");
    }
    server.finish();
}
