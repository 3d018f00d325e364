//! `mem capture`: hook payloads and transcripts as agents really write them (control
//! characters, NUL bytes, backslashes, invalid UTF-8, 50 MB), redaction, the log, idempotence.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::{Dir, Out};

/// A memory root and, beside it, a folder for transcripts.
pub(crate) struct Setup {
    pub(crate) root: Dir,
    files: Dir,
}

impl Setup {
    pub(crate) fn new() -> Setup {
        let setup = Setup { root: Dir::new(), files: Dir::new() };
        setup.root.mem(&["init", "."]).ok();
        setup
    }

    /// Writes a transcript of raw bytes, one line each.
    pub(crate) fn transcript(&self, name: &str, lines: &[&[u8]]) -> PathBuf {
        let mut bytes = Vec::new();
        for line in lines {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        self.files.write(name, bytes)
    }

    /// The usual payload of a Claude Code hook.
    pub(crate) fn payload(&self, session: &str, transcript: &Path) -> String {
        format!(
            r#"{{"session_id":"{session}","transcript_path":{},"cwd":"/home/ana/My Shop","hook_event_name":"SessionEnd","reason":"exit"}}"#,
            serde_json::to_string(transcript.to_str().unwrap()).unwrap()
        )
    }

    pub(crate) fn capture(&self, payload: impl AsRef<[u8]>) -> Out {
        self.root.mem_stdin(&["capture"], payload)
    }

    /// Like [`Setup::capture`], but a capture still running after 20 s is killed and the test
    /// fails: a test of a hang must not hang itself.
    fn capture_within_20s(&self, payload: &str) -> Out {
        let mut child = self.root.spawn(&["capture"]);
        child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
        for _ in 0..200 {
            if child.try_wait().unwrap().is_some() {
                let out = child.wait_with_output().unwrap();
                return Out {
                    code: out.status.code().unwrap_or(-1),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("mem capture still runs after 20 s: it hangs on {payload}");
    }

    fn memory(&self, session: &str) -> String {
        self.root.read(&format!("sessions/session-{session}.md"))
    }

    /// The lines of `.mem/capture.log`, parsed.
    fn log(&self) -> Vec<serde_json::Value> {
        self.root
            .read(".mem/capture.log")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

pub(crate) fn user(text: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s","cwd":"/home/ana/My Shop","timestamp":"2026-11-29T10:00:00Z","message":{{"role":"user","content":{}}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

pub(crate) fn assistant(text: &str) -> String {
    format!(
        r#"{{"type":"assistant","timestamp":"2026-11-29T10:30:00Z","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}]}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

pub(crate) fn bash(command: &str) -> String {
    format!(
        r#"{{"type":"assistant","timestamp":"2026-11-29T10:10:00Z","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t","name":"Bash","input":{{"command":{}}}}},{{"type":"tool_use","id":"u","name":"Edit","input":{{"file_path":"/home/ana/My Shop/src/auth.rs"}}}}]}}}}"#,
        serde_json::to_string(command).unwrap()
    )
}

#[test]
fn a_session_becomes_one_episodic_memory() {
    let s = Setup::new();
    let t = s.transcript(
        "s1.jsonl",
        &[
            user("Fix the failing login test").as_bytes(),
            bash("cargo test login").as_bytes(),
            assistant("The login test passes: the session cookie had expired.").as_bytes(),
        ],
    );
    let out = s.capture(s.payload("s1", &t));
    let line = out.ok();
    assert!(line.starts_with("created\tsession-s1\t"), "{line}");
    assert!(line.trim_end().ends_with("sessions/session-s1.md"), "{line}");
    let text = s.memory("s1");
    assert!(
        text.starts_with(
            "---\nid: session-s1\ntype: episodic\nimportance: 4\ncreated: 2026-11-29T10:00:00Z\n\
             tags:\n- session\n- my-shop\nsource: session/s1\nproject: /home/ana/My Shop\n---\n\
             # Session: Fix the failing login test\n"
        ),
        "{text}"
    );
    for expected in [
        "- Fix the failing login test\n",
        "- `src/auth.rs`\n",
        "- `cargo test login`\n",
        "## Outcome\n\nThe login test passes: the session cookie had expired.\n",
        "No secrets redacted.",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    let log = s.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["status"], "ok");
    assert_eq!(log[0]["session_id"], "s1");
    assert_eq!(log[0]["hook_event"], "SessionEnd");
    assert_eq!(log[0]["path"], "sessions/session-s1.md");
    assert_eq!(log[0]["transcript"], t.to_str().unwrap());
    assert_eq!(log[0]["error"], serde_json::Value::Null);

    let recalled = s.root.mem(&["recall", "login cookie", "--json"]).json();
    assert_eq!(crate::util::ids(&recalled), ["session-s1"]);
}

/// Seed failure 1: raw control characters (terminal output, ANSI) inside JSON strings.
#[test]
fn raw_control_characters_inside_json_strings() {
    let s = Setup::new();
    let line = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"make the \u{1b}[31mred\u{1b}[0m\toutput readable\u{7}\r\nplease\"}}";
    let tool = "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":{\"command\":\"printf '\u{1b}[1mbold\u{1b}[0m\\\\n'\"}}]}}";
    let t = s.transcript("s.jsonl", &[line.as_bytes(), tool.as_bytes()]);
    let payload = s.payload("ctl", &t).replace(
        "\"reason\":\"exit\"",
        "\"reason\":\"exit\u{1}\",\"prompt\":\"line one\nline two \u{1b}[0m\"",
    );
    s.capture(payload).ok();
    let text = s.memory("ctl");
    assert!(text.contains("- make the red output readable please\n"), "{text}");
    assert!(text.contains("- `printf 'bold\\n'`\n"), "{text}");
    assert!(!text.contains('\u{1b}'), "no escape character is written: {text:?}");
}

/// Seed failure 2: a NUL byte, raw or escaped, in the payload and the transcript.
#[test]
fn nul_bytes() {
    let s = Setup::new();
    let raw = b"{\"type\":\"user\",\"message\":{\"content\":\"check the NUL\x00 handling\"}}";
    let escaped = br#"{"type":"user","message":{"content":"and the escaped\u0000 one"}}"#;
    let t = s.transcript("s.jsonl", &[raw, escaped]);
    let payload = s.payload("nul", &t).replace("\"exit\"", "\"ex\u{0}it\"");
    s.capture(payload).ok();
    let text = s.memory("nul");
    assert!(text.contains("- check the NUL handling\n"), "{text}");
    assert!(text.contains("- and the escaped one\n"), "{text}");
    assert!(!text.contains('\0'));
}

/// Seed failure 3: backslashes: escapes such as `\u001b[` and regexes such as `\d+\.\w+`,
/// escaped properly, and as `echo` in `sh` mangles them (invalid JSON escapes).
#[test]
fn backslashes_and_mangled_escapes() {
    let s = Setup::new();
    let proper = user(r"match \d+\.\w+ and strip \u001b[ from C:\Users\ana");
    let mangled = br#"{"type":"user","message":{"content":"then try \s*\(\d{3}\) again"}}"#;
    let t = s.transcript("s.jsonl", &[proper.as_bytes(), mangled]);
    // The payload as `echo "$payload"` in dash leaves it: `\\` became `\`.
    let payload = s.payload("bs", &t).replace("\"exit\"", r#""C:\Users\ana \d""#);
    s.capture(payload).ok();
    let text = s.memory("bs");
    assert!(text.contains(r"- match \d+\.\w+ and strip \u001b[ from C:\Users\ana"), "{text}");
    assert!(text.contains(r"- then try \s*\(\d{3}\) again"), "{text}");
}

#[test]
fn invalid_utf8_is_decoded_lossily() {
    let s = Setup::new();
    let mut line = br#"{"type":"user","message":{"content":"caf"#.to_vec();
    line.extend_from_slice(b"\xe9 \xff\xfe au lait\"}}");
    let mut garbage = b"\xff\xfe not json at all \x80".to_vec();
    garbage.extend_from_slice(&[0xc3]);
    let t = s.transcript("s.jsonl", &[&line, &garbage]);
    let mut payload = s.payload("utf", &t).into_bytes();
    let at = payload.len() - 2;
    payload.splice(at..at, b"\xff".iter().copied());
    let out = s.capture(&payload);
    out.ok();
    assert!(out.stderr.contains("skipped 1 line of "), "reported: {}", out.stderr);
    let text = s.memory("utf");
    assert!(text.contains("- caf\u{fffd} \u{fffd}\u{fffd} au lait\n"), "{text}");
    assert!(text.contains("1 line of the transcript skipped"), "{text}");
    assert_eq!(s.log()[0]["skipped_lines"], 1);
}

#[test]
fn a_50_mb_transcript_is_streamed_into_a_small_memory() {
    let s = Setup::new();
    let path = s.files.path().join("big.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(w, "{}", user("Start: migrate the billing service to the new queue")).unwrap();
    let output = "x".repeat(400);
    let mut written = 0;
    let mut i = 0;
    while written < 50 * 1024 * 1024 {
        let line = if i % 2 == 0 {
            bash(&format!("cargo test billing::case_{i}"))
        } else {
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t","content":"{output} {i}"}}]}}}}"#
            )
        };
        writeln!(w, "{line}").unwrap();
        written += line.len() + 1;
        i += 1;
        if i == 1000 {
            // One line over the cap on line length: read past, counted, not kept.
            let huge = user(&"y ".repeat(5 * 1024 * 1024));
            writeln!(w, "{huge}").unwrap();
            written += huge.len() + 1;
        }
    }
    writeln!(w, "{}", user("Finally: bump the queue version")).unwrap();
    writeln!(w, "{}", assistant("Billing now runs on the new queue.")).unwrap();
    drop(w);
    assert!(std::fs::metadata(&path).unwrap().len() >= 50 * 1024 * 1024);

    let out = s.capture(s.payload("big", &path));
    out.ok();
    let text = s.memory("big");
    assert!(text.len() < 5000, "bounded: {} bytes\n{text}", text.len());
    assert!(text.contains("- Start: migrate the billing service"), "{text}");
    assert!(text.contains("- Finally: bump the queue version"), "{text}");
    assert!(text.contains("Billing now runs on the new queue."), "{text}");
    assert!(text.contains("more\n"), "long lists say what they leave out: {text}");
    assert_eq!(s.log()[0]["skipped_lines"], 1);
    assert!(out.stderr.contains("1 over 8 MiB"), "{}", out.stderr);
}

#[test]
fn truncated_and_garbage_payloads_fail_loudly_and_are_logged() {
    let s = Setup::new();
    let t = s.transcript("s.jsonl", &[user("hello").as_bytes()]);
    let full = s.payload("cut", &t);
    let out = s.capture(&full[..40]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("mem: error: the hook payload is cut short"), "{}", out.stderr);

    let out = s.capture(b"\x00\x1b[31mnot json\xff");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("the hook payload is not valid JSON"), "{}", out.stderr);

    let out = s.capture("");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("the hook payload on stdin is empty"), "{}", out.stderr);

    let log = s.log();
    assert_eq!(log.len(), 3);
    for entry in &log {
        assert_eq!(entry["status"], "error");
        assert_eq!(entry["path"], serde_json::Value::Null);
        assert!(entry["error"].as_str().unwrap().contains("hook payload"), "{entry}");
    }
    assert_eq!(log[0]["session_id"], "cut", "what a truncated payload still tells");
    assert!(!s.root.path().join("sessions").exists());
}

/// Found in an interactive Claude Code 2.1.197 session: its first Stop came when the
/// transcript held only the lines about the session (`last-prompt`, `mode`,
/// `permission-mode`), and the capture failed ("no line in the format of a known agent").
/// Nothing to capture yet; JSON lines that name no session are still an error.
#[test]
fn a_transcript_without_a_message_yet_is_nothing_to_capture() {
    let s = Setup::new();
    let t = s.transcript(
        "early.jsonl",
        &[
            br#"{"type":"last-prompt","leafUuid":"u1","sessionId":"early"}"#,
            br#"{"type":"mode","mode":"normal","sessionId":"early"}"#,
            br#"{"type":"permission-mode","permissionMode":"default","sessionId":"early"}"#,
        ],
    );
    let out = s.capture(s.payload("early", &t));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("nothing to capture yet"), "{}", out.stderr);
    let log = s.log();
    assert_eq!(log[0]["status"], "ok", "{log:?}");
    assert_eq!(log[0]["note"], "the transcript holds no message yet: nothing to capture");
    let other = s.transcript("other.jsonl", &[br#"{"name":"left-pad","version":"1.3.0"}"#]);
    let out = s.capture(s.payload("other", &other));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "has no line in the format of a known agent (Claude Code, Codex, Gemini CLI, OpenCode, \
             GitHub Copilot CLI, pi)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_missing_transcript_is_nothing_yet_an_unsafe_id_and_an_unwritable_folder_fail_and_are_logged() {
    let s = Setup::new();
    // A transcript not written yet (a Stop before the agent's first write, `claude mcp list`
    // ending a session that never started): nothing to capture yet, logged as ok (#24, 1-2).
    let missing = s.files.path().join("gone.jsonl");
    let out = s.capture(s.payload("gone", &missing));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("nothing to capture yet"), "{}", out.stderr);
    assert!(out.stderr.contains("gone.jsonl does not exist yet"), "{}", out.stderr);
    assert!(!s.root.path().join("sessions").exists());

    let t = s.transcript("s.jsonl", &[user("hello").as_bytes()]);
    let out = s.capture(s.payload("../../escape", &t));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "session_id \"../../escape\" cannot name a memory file: only letters, digits"
        ),
        "{}",
        out.stderr
    );

    s.root.write("sessions", "a file where the folder should be");
    let out = s.capture(s.payload("ok", &t));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("sessions"), "{}", out.stderr);

    let log = s.log();
    assert_eq!(log.len(), 3);
    assert_eq!(log[0]["status"], "ok");
    assert_eq!(log[0]["note"], "the transcript does not exist yet: nothing to capture");
    assert!(log[1..].iter().all(|e| e["status"] == "error"));
    assert_eq!(log[0]["session_id"], "gone");
    assert_eq!(log[0]["transcript"], missing.to_str().unwrap());
    assert_eq!(log[1]["session_id"], "../../escape");
    assert_eq!(log[2]["session_id"], "ok");
    assert!(!s.root.path().parent().unwrap().join("session-../../escape.md").exists());
}

#[test]
fn secrets_are_redacted_before_anything_is_written() {
    let s = Setup::new();
    // Built at run time, so that no scanner mistakes this file for a leak.
    let key = format!("sk-ant-api03-{}", "Fake9Key".repeat(6));
    let pem = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAfakefakefake", "QWERTYfakefakefake0123"
    );
    let t = s.transcript(
        "s.jsonl",
        &[
            user(&format!("deploy with ANTHROPIC_API_KEY={key} now")).as_bytes(),
            user(&format!("and this key:\n{pem}\nthanks")).as_bytes(),
        ],
    );
    let out = s.capture(s.payload("sec", &t));
    assert!(out.ok().contains("(2 secrets redacted)"), "{}", out.stdout);
    let text = s.memory("sec");
    assert!(!text.contains("Fake9Key"), "{text}");
    assert!(!text.contains("fakefake"), "{text}");
    assert!(text.contains("ANTHROPIC_API_KEY=[REDACTED:api-key] now"), "{text}");
    assert!(text.contains("and this key: [REDACTED:private-key] thanks"), "{text}");
    assert!(text.contains("2 secrets redacted."), "{text}");
    assert_eq!(s.log()[0]["redacted"], 2);
    assert!(!s.root.read(".mem/capture.log").contains("Fake9Key"));
}

#[test]
fn capturing_a_session_again_updates_its_one_file() {
    let s = Setup::new();
    let first = user("Add a CSV export to the report page");
    let t = s.transcript("s.jsonl", &[first.as_bytes()]);
    let payload = s.payload("again", &t);
    assert!(s.capture(&payload).ok().starts_with("created\t"));
    assert!(s.capture(&payload).ok().starts_with("unchanged\t"));

    // Someone edits the front-matter; the session goes on.
    let path = "sessions/session-again.md";
    let edited = s.root.read(path).replace("importance: 4\n", "importance: 7\nreviewer: ana\n");
    s.root.write(path, &edited);
    let t = s.transcript(
        "s.jsonl",
        &[
            first.as_bytes(),
            bash("cargo test export").as_bytes(),
            assistant("CSV export added.").as_bytes(),
        ],
    );
    let out = s.capture(s.payload("again", &t).replace("SessionEnd", "Stop"));
    assert!(out.ok().starts_with("updated\tsession-again\t"), "{}", out.stdout);

    let files: Vec<_> = std::fs::read_dir(s.root.path().join("sessions")).unwrap().collect();
    assert_eq!(files.len(), 1, "one file per session");
    let text = s.root.read(path);
    assert!(text.contains("importance: 7\nreviewer: ana\n"), "kept: {text}");
    assert!(text.contains("- `cargo test export`\n"), "{text}");
    assert!(text.contains("CSV export added."), "{text}");
    assert_eq!(text.matches("id: session-again").count(), 1);
    let listed = s.root.mem(&["list", "--json"]).json();
    assert_eq!(crate::util::ids(&listed), ["session-again"]);
    let log = s.log();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2]["hook_event"], "Stop");
}

#[test]
fn a_codex_rollout_is_captured() {
    let s = Setup::new();
    let lines = [
        r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{"id":"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5","timestamp":"2025-10-29T00:59:38.308Z","cwd":"/tmp/codex-demo","cli_version":"0.46.0"}}"#,
        r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}"#,
        r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"create hello.txt"}]}}"#,
        r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"event_msg","payload":{"type":"user_message","message":"create hello.txt","kind":"plain"}}"#,
        r#"{"timestamp":"2025-10-29T00:59:49.783Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"c1"}}"#,
        r#"{"timestamp":"2025-10-29T00:59:59.751Z","type":"response_item","payload":{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch"}}"#,
        r#"{"timestamp":"2025-10-29T01:00:03.100Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Created hello.txt."}]}}"#,
    ];
    let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    let name = "rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl";
    let t = s.transcript(name, &lines);
    let payload = format!(
        r#"{{"session_id":"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5","transcript_path":{},"hook_event_name":"Stop"}}"#,
        serde_json::to_string(t.to_str().unwrap()).unwrap()
    );
    s.capture(payload).ok();
    let text = s.memory("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5");
    assert!(text.contains("created: 2025-10-29T00:59:38Z\n"), "{text}");
    assert!(text.contains("- codex-demo\n"), "project tag from the rollout's cwd: {text}");
    assert!(text.contains("project: /tmp/codex-demo\n"), "{text}");
    assert!(text.contains("Codex session `019a2d7a-41c4-78b1-b7cc-a45d62a89cd5`"), "{text}");
    assert!(text.contains("## Requests\n\n- create hello.txt\n\n"), "{text}");
    assert!(text.contains("- `hello.txt`\n") && text.contains("- `ls`\n"), "{text}");
    assert!(text.contains("Created hello.txt."), "{text}");
}

#[test]
fn an_empty_transcript_is_nothing_to_capture_yet() {
    let s = Setup::new();
    let t = s.transcript("s.jsonl", &[]);
    let out = s.capture(s.payload("empty", &t));
    assert_eq!(out.ok(), "");
    assert!(out.stderr.contains("nothing to capture yet"), "{}", out.stderr);
    assert!(!s.root.path().join("sessions").exists());
    let log = s.log();
    assert_eq!(log[0]["status"], "ok");
    assert_eq!(log[0]["path"], serde_json::Value::Null);

    let t = s.transcript("junk.jsonl", &[b"junk", b"{\"not\": \"a transcript\""]);
    let out = s.capture(s.payload("junk", &t));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no line in the format of a known agent"), "{}", out.stderr);
}

#[test]
fn a_stdin_left_open_after_a_whole_payload_does_not_hang_the_capture() {
    use std::process::{Command, Stdio};
    let s = Setup::new();
    let t = s.transcript("s.jsonl", &[user("keep stdin open").as_bytes()]);
    let mut cmd = Command::new(crate::util::bin());
    cmd.arg("--dir").arg(s.root.path()).arg("capture");
    crate::util::clean_env(&mut cmd);
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(s.payload("open", &t).as_bytes()).unwrap();
    stdin.flush().unwrap();
    // `stdin` stays open while the capture runs, as some hook runners leave it.
    let status = child.wait().unwrap();
    drop(stdin);
    assert!(status.success());
    assert!(s.memory("open").contains("- keep stdin open\n"));
}

/// Defect: `password=…`, `PASSWORD: …`, `DB_PASSWORD=…` and `aws_secret_access_key=…` were
/// written into the session memory as they were; so was `PGPASS=…` (issue 37, item 19).
#[test]
fn secret_assignments_are_not_kept() {
    let s = Setup::new();
    // Built at run time, so that no scanner mistakes this file for a leak.
    let aws = format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}", "EXAMPLEKEY");
    let t = s.transcript(
        "s.jsonl",
        &[
            user("log in with password=hunter2secret please").as_bytes(),
            user("the admin has PASSWORD: Tr0ub4dor&3 and the password field is required")
                .as_bytes(),
            bash("DB_PASSWORD=correcthorse ./migrate").as_bytes(),
            bash(&format!("aws configure set aws_secret_access_key={aws}")).as_bytes(),
            bash("PGPASS=staplebattery psql -h db").as_bytes(),
            assistant("Done; token: none was needed.").as_bytes(),
        ],
    );
    let out = s.capture(s.payload("assign", &t));
    assert!(out.ok().contains("(5 secrets redacted)"), "{}", out.stdout);
    let text = s.memory("assign");
    for secret in
        ["hunter2secret", "Tr0ub4dor", "correcthorse", "wJalrXUtnFEMI", "EXAMPLEKEY", "staple"]
    {
        assert!(!text.contains(secret), "{secret} in\n{text}");
    }
    for kept in [
        "- log in with password=[REDACTED:password] please\n",
        "PASSWORD: [REDACTED:password] and the password field is required\n",
        "- `DB_PASSWORD=[REDACTED:password] ./migrate`\n",
        "- `aws configure set aws_secret_access_key=[REDACTED:secret]`\n",
        "- `PGPASS=[REDACTED:password] psql -h db`\n",
        "Done; token: none was needed.",
        "5 secrets redacted.",
    ] {
        assert!(text.contains(kept), "{kept:?} in\n{text}");
    }
    assert_eq!(s.log()[0]["redacted"], 5);
}

/// Defect: a token in the working folder's name was redacted in the `project:` line but kept
/// in `tags:` (the project tag was made from the folder name before redaction).
#[test]
fn a_token_in_the_folder_name_is_not_kept_in_tags() {
    let s = Setup::new();
    let token = format!("ghp_{}", "Tok3nInFolder".repeat(3));
    let t = s.transcript("s.jsonl", &[user("build the release").as_bytes()]);
    let payload = s.payload("tag", &t).replace("/home/ana/My Shop", &format!("/home/ana/{token}"));
    s.capture(payload).ok();
    let text = s.memory("tag");
    assert!(!text.to_lowercase().contains(&token[4..].to_lowercase()), "{text}");
    assert!(text.contains("project: /home/ana/[REDACTED:github-token]\n"), "{text}");
    assert!(text.contains("tags:\n- session\nsource:"), "no project tag: {text}");

    // A secret in a folder above the project does not touch the tag.
    let payload = s.payload("above", &t).replace("/home/ana/", &format!("/home/{token}/"));
    s.capture(payload).ok();
    let text = s.memory("above");
    assert!(!text.contains(&token[4..]), "{text}");
    assert!(text.contains("tags:\n- session\n- my-shop\n"), "{text}");
}

/// Checks a capture of a transcript that is not a regular file: refused at once, the path
/// named, exit status 2, and the failure logged.
#[cfg(unix)]
fn refused_as_not_a_regular_file(s: &Setup, session: &str, path: &Path) {
    let out = s.capture_within_20s(&s.payload(session, path));
    assert_eq!(out.code, 2, "{out:?}");
    let expected =
        format!("cannot read the transcript {}: it is not a regular file", path.display());
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    let log = s.log();
    let entry = log.iter().find(|e| e["session_id"] == session).expect("logged");
    assert_eq!(entry["status"], "error");
    assert!(entry["error"].as_str().unwrap().contains(&expected), "{entry}");
    assert!(!s.root.path().join(format!("sessions/session-{session}.md")).exists());
}

/// Defect: `mem capture` hung forever, logging nothing, when `transcript_path` was a FIFO
/// (opening it waits for a writer).
#[cfg(unix)]
#[test]
fn a_fifo_transcript_does_not_hang_capture() {
    let s = Setup::new();
    let fifo = s.files.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    refused_as_not_a_regular_file(&s, "fifo", &fifo);
}

/// Defect: `mem capture` read `/dev/zero` as a transcript forever.
#[cfg(unix)]
#[test]
fn dev_zero_as_transcript_does_not_hang_capture() {
    let s = Setup::new();
    refused_as_not_a_regular_file(&s, "zero", Path::new("/dev/zero"));
    // Also behind a symlink with a transcript's name.
    let link = s.files.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    refused_as_not_a_regular_file(&s, "zero-link", &link);
    // A folder is not a transcript either.
    refused_as_not_a_regular_file(&s, "folder", s.files.path());
}

/// Defect: with the root's `sessions` folder a symlink to a folder outside the root, capture
/// wrote the session memory through it.
#[cfg(unix)]
#[test]
fn a_sessions_symlink_outside_the_root_is_not_written_through() {
    let s = Setup::new();
    let outside = crate::util::Dir::new();
    let sessions = s.root.path().join("sessions");
    std::os::unix::fs::symlink(outside.path(), &sessions).unwrap();
    let t = s.transcript("s.jsonl", &[user("write me somewhere").as_bytes()]);
    let out = s.capture(s.payload("link", &t));
    assert_eq!(out.code, 2, "{out:?}");
    let expected = format!("the sessions folder {} is a symbolic link", sessions.display());
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(out.stderr.contains("outside the memory root"), "{}", out.stderr);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing written outside");
    let log = s.log();
    assert_eq!(log[0]["status"], "error");
    assert!(log[0]["error"].as_str().unwrap().contains(&expected), "{}", log[0]);

    // A link that leads nowhere is refused the same way, and not created through.
    std::fs::remove_file(&sessions).unwrap();
    let gone = outside.path().join("gone");
    std::os::unix::fs::symlink(&gone, &sessions).unwrap();
    let out = s.capture(s.payload("link", &t));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(!gone.exists());

    // A link to a folder inside the root is followed (a hidden one: the walk skips it, so that
    // the memory is not seen twice).
    std::fs::remove_file(&sessions).unwrap();
    std::fs::create_dir(s.root.path().join(".kept")).unwrap();
    std::os::unix::fs::symlink(".kept", &sessions).unwrap();
    let out = s.capture(s.payload("link", &t));
    assert!(out.ok().starts_with("created\tsession-link\t"), "{out:?}");
    assert_eq!(out.stderr, "");
    assert!(s.root.read(".kept/session-link.md").contains("- write me somewhere\n"));
}

#[cfg(unix)]
#[test]
fn a_session_file_linked_out_of_the_root_is_not_written_through() {
    let s = Setup::new();
    let outside = crate::util::Dir::new();
    let t = s.transcript("s.jsonl", &[user("first request").as_bytes()]);
    s.capture(s.payload("out", &t)).ok();
    let real = outside.path().join("session-out.md");
    std::fs::rename(s.root.path().join("sessions/session-out.md"), &real).unwrap();
    std::os::unix::fs::symlink(&real, s.root.path().join("sessions/session-out.md")).unwrap();
    let before = std::fs::read_to_string(&real).unwrap();
    let t = s.transcript("s.jsonl", &[user("first request").as_bytes(), user("second").as_bytes()]);
    let out = s.capture(s.payload("out", &t));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("leaves the memory root"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&real).unwrap(), before, "the file outside is unchanged");
}
