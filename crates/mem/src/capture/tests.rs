//! Unit tests of the pure parts of `mem capture`: cleaning, redaction, the payload, transcript
//! reading for each agent, and the summary's bounds.

use jiff::Timestamp;

use super::transcript::read_transcript_upto;
use super::*;
use crate::json::read_line_capped;

fn transcript(lines: &[&str]) -> Transcript {
    read_transcript(lines.join("\n").as_bytes()).unwrap()
}

fn info(id: &str) -> SessionInfo<'_> {
    SessionInfo { session_id: id, cwd: Some("/home/ana/shop"), outcome: None }
}

#[test]
fn ansi_sequences_and_controls_are_cleaned() {
    let s = "\u{1b}[1;31mred\u{1b}[0m \u{1b}]0;title\u{7}ok\u{0}\u{8} \u{9b}2Kdone\r\n";
    assert_eq!(clean_text(s), "red ok done\n\n");
}

#[test]
fn items_are_collapsed_and_cut_at_a_space() {
    assert_eq!(item("  a\n\n b\t c  ").as_deref(), Some("a b c"));
    assert_eq!(item(" \u{1b}[0m "), None);
    let long = "word ".repeat(2000);
    let cut = item(&long).unwrap();
    assert!(cut.chars().count() <= RAW_ITEM_CHARS);
    assert!(cut.ends_with("word"), "cut at a space");
}

#[test]
fn each_kind_of_secret_is_redacted() {
    let anthropic = format!("sk-ant-api03-{}", "x1Y2".repeat(10));
    let openai = format!("sk-proj-{}", "Ab9_".repeat(8));
    let github = format!("ghp_{}", "a1B2".repeat(9));
    let pat = format!("github_pat_{}", "11AB_cd".repeat(6));
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let slack = "xoxb-1234567890-abcdefghij";
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123";
    let cases = [
        (format!("key {anthropic} end"), "api-key"),
        (format!("OPENAI_API_KEY={openai}"), "api-key"),
        (format!("token {github}"), "github-token"),
        (format!("token {pat}"), "github-token"),
        (format!("aws {aws}"), "aws-key"),
        (format!("slack {slack}"), "slack-token"),
        (format!("curl -H 'Authorization: Bearer {jwt}'"), "authorization"),
        (format!("bearer {jwt}"), "bearer"),
        ("psql postgres://admin:hunter2@db.local/x".to_string(), "password"),
        (
            "-----BEGIN RSA PRIVATE KEY----- MIIEow abc -----END RSA PRIVATE KEY----- after"
                .to_string(),
            "private-key",
        ),
        ("-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk cut off".to_string(), "private-key"),
    ];
    for (text, kind) in cases {
        let (out, n) = redact(&text);
        assert_eq!(n, 1, "{text} -> {out}");
        assert!(out.contains(&format!("[REDACTED:{kind}]")), "{text} -> {out}");
    }
    let (out, _) = redact("psql postgres://admin:hunter2@db.local/x");
    assert_eq!(out, "psql postgres://admin:[REDACTED:password]@db.local/x");
    let (out, _) = redact("-----BEGIN PRIVATE KEY----- abc -----END PRIVATE KEY----- after");
    assert_eq!(out, "[REDACTED:private-key] after");
}

#[test]
fn words_and_ordinary_text_are_not_redacted() {
    for text in [
        "Bearer authentication is used by the API",
        "authorization: required for admins",
        "task-abcdefghijklmnopqrstuvwxyz is a branch",
        "https://example.com/path and git@github.com:me/repo.git",
        "the sk- prefix alone",
        "redacted already: [REDACTED:api-key]",
    ] {
        assert_eq!(redact(text), (text.to_string(), 0), "{text}");
    }
}

#[test]
fn a_url_with_a_key_as_password_counts_once() {
    let key = format!("sk-{}", "a1".repeat(15));
    let (out, n) = redact(&format!("https://user:{key}@host/"));
    assert_eq!(n, 1, "{out}");
    assert!(!out.contains(&key));
}

#[test]
fn the_payload_needs_a_safe_session_id() {
    let p = parse_payload(
        br#"{"session_id":"abc-1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"Stop"}"#,
    )
    .unwrap();
    assert_eq!(p.session_id.as_deref(), Some("abc-1"));
    assert_eq!(p.hook_event.as_deref(), Some("Stop"));
    let err = |bytes: &[u8]| parse_payload(bytes).unwrap_err().to_string();
    assert!(err(b"").contains("is empty"));
    assert!(err(br#"{"session_id": "abc", "transcr"#).contains("cut short"));
    assert!(err(b"\x00\x01garbage").contains("not valid JSON"));
    assert!(err(b"[1]").contains("not an object"));
    // A Codex hook may send a null transcript path; Codex's notify names the thread instead.
    let codex = parse_payload(br#"{"session_id":"s-2","transcript_path":null}"#).unwrap();
    assert_eq!(codex.transcript_path, None);
    let notify = parse_payload(
        br#"{"type":"agent-turn-complete","thread-id":"t-9","last-assistant-message":"done"}"#,
    )
    .unwrap();
    assert_eq!(
        (notify.session_id.as_deref(), notify.hook_event.as_deref()),
        (Some("t-9"), Some("agent-turn-complete"))
    );
    assert_eq!(notify.last_assistant_message.as_deref(), Some("done"));
    assert!(err(br#"{"transcript_path":"/t"}"#).contains("no `session_id`"));
    assert!(err(br#"{"session_id":"a","transcript_path":3}"#).contains("is 3, not text"));
    assert!(err(br#"{"session_id":"../etc/x","transcript_path":"/t"}"#).contains("cannot name"));
    assert!(err(br#"{"session_id":"a..b","transcript_path":"/t"}"#).contains("`..`"));
    assert!(err(br#"{"session_id":"a b","transcript_path":"/t"}"#).contains("only letters"));
}

#[test]
fn a_payload_is_complete_when_it_parses() {
    assert!(payload_complete(b"{\"a\": 1}\n"));
    assert!(!payload_complete(b"{\"a\": {\"b\": 1}"));
    assert!(!payload_complete(b"{\"a\": \"}"));
    assert!(payload_complete(b"garbage}"), "a syntax error is final");
}

#[test]
fn project_tags_are_folder_names_made_safe() {
    assert_eq!(project_tag("/home/ana/My Shop!/").as_deref(), Some("my-shop"));
    assert_eq!(project_tag(r"C:\Users\ana\api.v2").as_deref(), Some("api.v2"));
    assert_eq!(project_tag("/"), None);
}

pub(crate) const CLAUDE: &[&str] = &[
    r#"{"type":"summary","summary":"Login work","leafUuid":"x"}"#,
    r#"{"type":"user","sessionId":"s1","cwd":"/home/ana/shop","timestamp":"2026-11-29T10:00:00.5Z","message":{"role":"user","content":"Fix the failing login test"}}"#,
    r#"{"type":"user","isMeta":true,"sessionId":"s1","timestamp":"2026-11-29T10:00:01Z","message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands."}}"#,
    r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-29T10:00:05Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test login"}},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/home/ana/shop/src/auth.rs","old_string":"a","new_string":"b"}},{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/home/ana/shop/README.md"}}]}}"#,
    r#"{"type":"user","sessionId":"s1","timestamp":"2026-11-29T10:00:06Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#,
    r#"{"type":"user","sessionId":"s1","timestamp":"2026-11-29T10:01:00Z","message":{"role":"user","content":"<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>auth</command-args>"}}"#,
    r#"{"type":"user","sessionId":"s1","timestamp":"2026-11-29T10:01:10Z","message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. Summary: ..."}}"#,
    r#"{"type":"assistant","isSidechain":true,"sessionId":"s1","timestamp":"2026-11-29T10:01:30Z","message":{"role":"assistant","content":[{"type":"text","text":"subagent chatter"}]}}"#,
    r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-29T10:02:00Z","message":{"role":"assistant","content":[{"type":"text","text":"The login test passes now: the session cookie had expired."}]}}"#,
];

#[test]
fn claude_code_transcripts_give_requests_files_commands_and_outcome() {
    let t = transcript(CLAUDE);
    assert_eq!(t.format, Some(crate::agent::Agent::Claude));
    assert_eq!(t.session_id.as_deref(), Some("s1"));
    assert_eq!(t.cwd.as_deref(), Some("/home/ana/shop"));
    assert_eq!(t.first_at, Some("2026-11-29T10:00:00.5Z".parse().unwrap()));
    assert_eq!(t.skipped_lines, 0);
    assert_eq!(t.requests().head, ["Fix the failing login test", "/review auth"]);
    assert_eq!(t.files, ["src/auth.rs"]);
    assert_eq!(t.commands.head, ["cargo test login"]);
    assert_eq!(t.tool_calls, 3);
    assert_eq!(
        t.outcome().as_deref(),
        Some("The login test passes now: the session cookie had expired.")
    );
    let s = summarize(&t, &info("s1"));
    assert_eq!(s.title, "Session: Fix the failing login test");
    assert!(s.body.starts_with("# Session: Fix the failing login test\n\nClaude Code session `s1` in `/home/ana/shop`, 2026-11-29T10:00:00Z to 2026-11-29T10:02:00Z: 2 requests, 3 tool calls.\n"), "{}", s.body);
    assert!(s.body.contains("\n## Files changed\n\n- `src/auth.rs`\n"), "{}", s.body);
    assert!(s.body.contains("\n## Commands run\n\n- `cargo test login`\n"), "{}", s.body);
    assert!(
        s.body.ends_with(
            "the session cookie had expired.\n\nNo secrets redacted.\nFull log: `mem session show s1`.\n"
        ),
        "{}",
        s.body
    );
}

pub(crate) const CODEX: &[&str] = &[
    r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{"id":"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5","timestamp":"2025-10-29T00:59:38.308Z","cwd":"/tmp/demo","originator":"codex_cli_rs","cli_version":"0.46.0"}}"#,
    r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/demo</cwd>\n</environment_context>"}]}}"#,
    r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"create hello.txt and list the files"}]}}"#,
    r#"{"timestamp":"2025-10-29T00:59:38.317Z","type":"event_msg","payload":{"type":"user_message","message":"create hello.txt and list the files","kind":"plain"}}"#,
    r#"{"timestamp":"2025-10-29T00:59:38.400Z","type":"turn_context","payload":{"cwd":"/tmp/demo","model":"gpt-5-codex"}}"#,
    r#"{"timestamp":"2025-10-29T00:59:49.783Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la\"],\"workdir\":\"/tmp/demo\"}","call_id":"call_1"}}"#,
    r#"{"timestamp":"2025-10-29T00:59:49.783Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"hello.txt\\n\"}"}}"#,
    r#"{"timestamp":"2025-10-29T00:59:59.751Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch"}}"#,
    r#"{"timestamp":"2025-10-29T01:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Update File: src/main.rs\\n@@\\n-a\\n+b\\n*** End Patch\"]}","call_id":"call_3"}}"#,
    r#"{"timestamp":"2025-10-29T01:00:02.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"call_4","status":"completed","action":{"type":"exec","command":["git","status"]}}}"#,
    r#"{"timestamp":"2025-10-29T01:00:03.000Z","type":"event_msg","payload":{"type":"agent_message","message":"Created hello.txt."}}"#,
    r#"{"timestamp":"2025-10-29T01:00:03.100Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Created hello.txt."}]}}"#,
];

#[test]
fn codex_rollouts_give_requests_files_commands_and_outcome() {
    let t = transcript(CODEX);
    assert_eq!(t.format, Some(crate::agent::Agent::Codex));
    assert_eq!(t.session_id.as_deref(), Some("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"));
    assert_eq!(t.cwd.as_deref(), Some("/tmp/demo"));
    assert_eq!(t.first_at, Some("2025-10-29T00:59:38.308Z".parse().unwrap()));
    assert_eq!(t.requests().head, ["create hello.txt and list the files"], "event_msg only");
    assert_eq!(
        t.commands.head,
        ["ls -la", "git status"],
        "a patch is a file change, not a command"
    );
    assert_eq!(t.files, ["hello.txt", "src/main.rs"]);
    assert_eq!(t.tool_calls, 4);
    assert_eq!(t.outcome().as_deref(), Some("Created hello.txt."));
}

#[test]
fn codex_without_event_messages_falls_back_to_response_items() {
    let lines: Vec<&str> = CODEX.iter().copied().filter(|l| !l.contains("event_msg")).collect();
    let t = transcript(&lines);
    assert_eq!(t.requests().head, ["create hello.txt and list the files"]);
}

#[test]
fn bad_lines_are_counted_and_long_lines_read_past() {
    let long = format!("{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}", "x".repeat(400));
    let text = format!("not json\n{}\n\n{long}\n{}\n", CLAUDE[1], CLAUDE[7]);
    let mut reader = std::io::BufReader::with_capacity(16, text.as_bytes());
    let mut buf = Vec::new();
    let mut kept = Vec::new();
    while let Some(k) = read_line_capped(&mut reader, &mut buf, 300).unwrap() {
        kept.push(k);
    }
    assert_eq!(kept, [true, true, true, false, true]);

    let t = read_transcript(text.as_bytes()).unwrap();
    assert_eq!((t.lines, t.skipped_lines, t.recognised), (4, 1, 3));
}

#[test]
fn a_line_split_by_a_raw_line_break_is_joined_again() {
    let text = "{\"type\":\"user\",\"message\":{\"content\":\"first half\r\nsecond half\"}}\n\
                {\"type\":\"user\",\"message\":{\"content\":\"cut sho\n\
                {\"type\":\"user\",\"message\":{\"content\":\"next\"}}\n\
                {\"type\":\"user\",\"message\":{\"content\":\"last, cut";
    let t = read_transcript(text.as_bytes()).unwrap();
    assert_eq!(t.requests().head, ["first half second half", "next"]);
    assert_eq!((t.lines, t.skipped_lines), (5, 2), "the two lines cut short");
}

#[test]
fn invalid_utf8_is_decoded_lossily() {
    let mut bytes = br#"{"type":"user","message":{"content":"caf"#.to_vec();
    bytes.extend_from_slice(b"\xe9 au lait\"}}\n");
    let t = read_transcript(bytes.as_slice()).unwrap();
    assert_eq!(t.requests().head, ["caf\u{fffd} au lait"]);
}

#[test]
fn lists_keep_their_first_and_last_items() {
    let mut k = Kept::new(2, 3);
    for i in 0..10 {
        k.push(i.to_string());
        k.push(i.to_string());
    }
    let (head, dropped, tail) = k.parts();
    assert_eq!(head, ["0", "1"]);
    assert_eq!(dropped, 5);
    assert_eq!(tail, ["7", "8", "9"]);
}

#[test]
fn a_huge_session_still_gives_a_small_body() {
    let mut lines = Vec::new();
    for i in 0..500 {
        lines.push(format!(
            r#"{{"type":"user","message":{{"content":"request {i} {}"}}}}"#,
            "é".repeat(900)
        ));
        lines.push(format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","name":"Bash","input":{{"command":"run {i} {}"}}}},{{"type":"tool_use","name":"Write","input":{{"file_path":"/p/f{i}-{}.rs"}}}},{{"type":"text","text":"{}"}}]}}}}"#,
            "ü".repeat(500),
            "d".repeat(300),
            "w ".repeat(3000)
        ));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let t = transcript(&refs);
    assert_eq!(t.request_count(), 500);
    let s = summarize(&t, &info("big"));
    assert!(s.body.len() <= MAX_BODY_BYTES, "{} bytes", s.body.len());
    assert!(s.body.contains("- request 0 "), "the first request");
    assert!(s.body.contains("- request 499 "), "the last request");
    assert!(s.body.contains("more\n"), "says some are left out");
}

#[test]
fn secrets_are_redacted_in_every_part_of_the_summary() {
    let key = format!("sk-ant-api03-{}", "Zq9".repeat(12));
    let lines = [
        format!(r#"{{"type":"user","message":{{"content":"use {key} please"}}}}"#),
        format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","name":"Bash","input":{{"command":"curl -H 'Authorization: Bearer {key}x'"}}}},{{"type":"text","text":"done with {key}"}}]}}}}"#
        ),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let s = summarize(&transcript(&refs), &info("k"));
    assert!(!s.body.contains("Zq9Zq9"), "{}", s.body);
    assert!(!s.title.contains("Zq9Zq9"), "{}", s.title);
    assert_eq!(s.redacted, 3, "{}", s.body);
    assert!(s.body.contains("3 secrets redacted."), "{}", s.body);
}

#[test]
fn inline_code_fences_around_backticks() {
    assert_eq!(inline_code("ls"), "`ls`");
    assert_eq!(inline_code("echo `date`"), "`` echo `date` ``");
    assert_eq!(inline_code("a``b"), "```a``b```");
}

#[test]
fn log_entries_have_exactly_the_documented_fields() {
    let now: Timestamp = "2026-11-30T12:00:00.7Z".parse().unwrap();
    let entry =
        LogEntry::failure(br#"{"session_id": "abc", "hook_event_name": "Stop", "tr"#, "boom", now);
    assert_eq!(
        serde_json::to_string(&entry).unwrap(),
        r#"{"at":"2026-11-30T12:00:00Z","status":"error","session_id":"abc","hook_event":"Stop","path":null,"transcript":null,"redacted":0,"skipped_lines":0,"error":"boom"}"#,
        "session_id and hook_event sniffed from a truncated payload"
    );
}

#[test]
fn secret_assignments_are_not_kept() {
    // Built at run time, so that no scanner mistakes this file for a leak.
    let aws = format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}", "EXAMPLEKEY");
    let cases = [
        ("password=hunter2secret", "password=[REDACTED:password]"),
        ("PASSWORD: Tr0ub4dor&3", "PASSWORD: [REDACTED:password]"),
        ("export DB_PASSWORD=supersecret && run", "export DB_PASSWORD=[REDACTED:password] && run"),
        ("PGPASSWORD=s3cr3t psql", "PGPASSWORD=[REDACTED:password] psql"),
        ("mysql --password='p@ss word!' db", "mysql --password='[REDACTED:password]' db"),
        ("passwd = \"x y z\"", "passwd = \"[REDACTED:password]\""),
        ("DB_PWD=abc123", "DB_PWD=[REDACTED:password]"),
        ("SMTP_PASS=abc123", "SMTP_PASS=[REDACTED:password]"),
        (
            r#"{"password": "hunter2", "user": "ana"}"#,
            r#"{"password": "[REDACTED:password]", "user": "ana"}"#,
        ),
        ("'password' => 'hunter2',", "'password' => '[REDACTED:password]',"),
        ("password := \"hunter2\"", "password := \"[REDACTED:password]\""),
        ("spring.datasource.password=hunter2", "spring.datasource.password=[REDACTED:password]"),
        ("aws_secret_access_key=@@", "aws_secret_access_key=[REDACTED:secret]"),
        ("aws_secret_access_key = @@", "aws_secret_access_key = [REDACTED:secret]"),
        ("AWS_SECRET_ACCESS_KEY: @@", "AWS_SECRET_ACCESS_KEY: [REDACTED:secret]"),
        ("SECRET_KEY_BASE=0a1b2c3d", "SECRET_KEY_BASE=[REDACTED:secret]"),
        ("client_secret=abc.def-123", "client_secret=[REDACTED:secret]"),
        ("curl 'https://x/cb?token=abc123&x=1'", "curl 'https://x/cb?token=[REDACTED:secret]'"),
        ("GITHUB_TOKEN=supersecretvalue", "GITHUB_TOKEN=[REDACTED:secret]"),
        ("\"apiKey\": \"abcdefgh\"", "\"apiKey\": \"[REDACTED:secret]\""),
        ("X-API-Key: 0123456789abcdef", "X-API-Key: [REDACTED:secret]"),
        ("private_key=MIIEvQIBADANBg", "private_key=[REDACTED:secret]"),
        ("credentials: user1:Pa55", "credentials: [REDACTED:secret]"),
        ("ACCESS_KEY=lowercaseonly", "ACCESS_KEY=[REDACTED:secret]"),
        // The variables clients read a credential from, beyond the words above.
        ("PGPASS=s3cr3t psql", "PGPASS=[REDACTED:password] psql"),
        ("SSHPASS=s3cr3t sshpass -e ssh host", "SSHPASS=[REDACTED:password] sshpass -e ssh host"),
        ("MYSQL_PWD=s3cr3t mysql", "MYSQL_PWD=[REDACTED:password] mysql"),
        ("LDAP_BINDPW=s3cr3t", "LDAP_BINDPW=[REDACTED:password]"),
        ("export DB_PW=s3cr3t", "export DB_PW=[REDACTED:password]"),
        ("REDISCLI_AUTH=s3cr3t redis-cli", "REDISCLI_AUTH=[REDACTED:secret] redis-cli"),
        ("//registry.example/:_auth=dXNlcjpwYXNz", "//registry.example/:_auth=[REDACTED:secret]"),
        ("ENCRYPTION_KEY=0a1b2c3d", "ENCRYPTION_KEY=[REDACTED:secret]"),
        ("SIGNING_KEY: 0a1b2c3d", "SIGNING_KEY: [REDACTED:secret]"),
        ("RAILS_MASTER_KEY=0a1b2c3d", "RAILS_MASTER_KEY=[REDACTED:secret]"),
        ("SENTRY_DSN=https://0a1b2c3d@o1.ingest.example/2", "SENTRY_DSN=[REDACTED:secret]"),
    ];
    for (text, expected) in cases {
        let text = text.replace("@@", &aws);
        let (out, n) = redact(&text);
        assert_eq!(out, expected, "{text}");
        assert_eq!(n, 1, "{text} -> {out}");
    }
    // A value another rule already redacted counts once, under that rule's kind.
    let key = format!("sk-proj-{}", "Ab9_".repeat(8));
    let (out, n) = redact(&format!("OPENAI_API_KEY={key} OPENAI_TOKEN=\"{key}\""));
    assert_eq!(
        (out.as_str(), n),
        ("OPENAI_API_KEY=[REDACTED:api-key] OPENAI_TOKEN=\"[REDACTED:api-key]\"", 2)
    );
}

#[test]
fn prose_and_code_about_secrets_are_not_redacted() {
    for text in [
        "the password field is required",
        "token: none",
        "Password: required.",
        "secret: The design doc, not a key",
        "reset the token: it expired",
        "password=\"\" means no password",
        "password: null, token: true",
        "DB_PASSWORD=${DB_PASSWORD} docker compose up",
        "PASSWORD=$DB_PASSWORD ./run",
        "password: ${{ secrets.DB_PASSWORD }}",
        "password=<your-password>",
        "password=********",
        "login(user=user, password=password)",
        "token = lexer.next_token();",
        "let password = read_password()?;",
        "fn login(user: &User, password: String) -> Token",
        "PWD=/home/ana/shop OLDPWD=/home/ana",
        "max_tokens=4096 tokens_used: 12 token_count=3",
        "grep root /etc/passwd: no such file",
        "password.txt: a file",
        "PGPASSFILE=~/.pgpass",
        "oauth=enabled bypass=true compass=north",
    ] {
        assert_eq!(redact(text), (text.to_string(), 0), "{text}");
    }
}

#[test]
fn a_token_in_the_folder_name_is_not_kept_in_tags() {
    let token = format!("ghp_{}", "Tok3nInFolder".repeat(3));
    assert_eq!(project_tag(&format!("/home/ana/{token}")), None);
    assert_eq!(project_tag(&format!("/home/ana/shop-{token}")), None);
    assert_eq!(project_tag("/srv/password=hunter2"), None);
    assert_eq!(project_tag(&format!("/home/{token}/shop")).as_deref(), Some("shop"));
    // Lower-casing comes after redaction: `AKIA…` is still seen as a key id.
    assert_eq!(project_tag("/work/AKIAIOSFODNN7EXAMPLE"), None);
}

/// `line`, over and over, without end.
struct Endless {
    line: Vec<u8>,
    at: usize,
}

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for byte in buf.iter_mut() {
            *byte = self.line[self.at];
            self.at = (self.at + 1) % self.line.len();
        }
        Ok(buf.len())
    }
}

/// Defect: a transcript that never ends (`/dev/zero`, a file written faster than it is read)
/// was read forever.
#[test]
fn an_endless_transcript_is_read_up_to_the_limit() {
    let zeros = std::io::BufReader::new(std::io::repeat(0));
    let t = read_transcript_upto(zeros, 1 << 20).unwrap();
    assert!(t.truncated);
    assert_eq!((t.lines, t.skipped_lines), (1, 1), "the one cut line");

    let line = format!("{}\n{}\n", CLAUDE[1], CLAUDE[8]).into_bytes();
    let endless = std::io::BufReader::new(Endless { line, at: 0 });
    let t = read_transcript_upto(endless, 1 << 20).unwrap();
    assert!(t.truncated);
    assert!(t.recognised > 1000, "{} lines read", t.recognised);
    assert!(t.skipped_lines <= 1, "at most the line cut at the limit");
    let s = summarize(&t, &info("endless"));
    assert!(
        s.body.ends_with(
            "the transcript was read up to its first 4 GiB only.\nFull log: `mem session show endless`.\n"
        ),
        "{}",
        s.body
    );

    // A transcript of exactly the limit is whole.
    let text = format!("{}\n", CLAUDE[1]);
    let whole = read_transcript_upto(text.as_bytes(), text.len() as u64).unwrap();
    assert!(!whole.truncated);
    assert_eq!(whole.skipped_lines, 0);
    let cut = read_transcript_upto(text.as_bytes(), text.len() as u64 - 1).unwrap();
    assert!(cut.truncated);
    assert!(!read_transcript(text.as_bytes()).unwrap().truncated);
}

/// Defect 15 of the second probe: a quoted assignment inside a non-shell tool's JSON input
/// kept its value, and so did `mysql -pPASSWORD` and `PGPASSWORD=…`.
#[test]
fn secrets_in_tool_inputs_and_client_flags_are_redacted() {
    let input = serde_json::json!({
        "query": "connect with DB_PASSWORD=\"QuotedPw123\" now",
        "env": ["PGPASSWORD='PgQuoted9'"],
        "password": "PlainPw77",
        "arguments": "{\"cmd\":\"export API_TOKEN=\\\"Nested55x\\\"\"}",
    });
    let (walked, found) = redact_json(&input);
    let (text, whole) = redact(&walked.to_string());
    for secret in ["QuotedPw123", "PgQuoted9", "PlainPw77", "Nested55x"] {
        assert!(!text.contains(secret), "{secret} kept: {text}");
    }
    assert_eq!((found, whole), (3, 1), "{text}");
    for (command, secret) in [
        ("mysql -uroot -pMysqlInlinePw1 shop", "MysqlInlinePw1"),
        ("mysqldump -h db -p'Quoted Pw' shop > x.sql", "Quoted Pw"),
        ("mariadb -u app -p\"Dq9pw\"", "Dq9pw"),
        ("PGPASSWORD=PgSecret9 psql -h db", "PgSecret9"),
        ("PGPASSWORD=pgsecret psql -h db", "pgsecret"),
        ("export PGPASSWORD=\"Quoted9\"", "Quoted9"),
    ] {
        let (out, n) = redact(command);
        assert!(!out.contains(secret) && n == 1, "{command} -> {out}");
    }
    // `-p` of other commands is not a password; nor is a bare `-p` (the client prompts).
    for text in ["mkdir -p src/a", "mysql -u root -p shop", "ssh -p 2222 host"] {
        assert_eq!(redact(text).1, 0, "{text}");
    }
}

/// Issue #39, item 2: what a digest line says is what the session did, and a session that
/// only asked did nothing.
#[test]
fn a_digest_tells_what_the_session_did_and_whether_it_did_anything() {
    let s = summarize(&transcript(CLAUDE), &info("s1"));
    assert!(did_work(&s.body));
    assert_eq!(
        gist(&s.body, true),
        "then asked: /review auth; changed `src/auth.rs`; ran `cargo test login`; outcome: The \
         login test passes now: the session cookie had expired."
    );
    let asked = [
        r#"{"type":"user","sessionId":"q","cwd":"/home/ana/shop","timestamp":"2026-11-29T10:00:00Z","message":{"role":"user","content":"Which package manager do we use?"}}"#,
        r#"{"type":"assistant","timestamp":"2026-11-29T10:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"You use pnpm."}]}}"#,
    ];
    let s = summarize(&transcript(&asked), &info("q"));
    assert!(!did_work(&s.body), "{}", s.body);
    assert_eq!(gist(&s.body, true), "outcome: You use pnpm.");
}

/// Issue #52, item 3: the digest keeps what was asked, never the facts the prompts state (each
/// a memory of its own); a session that only stated facts is titled so, and still counted.
#[test]
fn a_digest_leaves_out_the_facts_its_prompts_state() {
    let line = |text: &str| {
        serde_json::json!({"type": "user", "sessionId": "f1", "cwd": "/home/ana/shop",
            "timestamp": "2026-11-29T10:00:00Z", "message": {"role": "user", "content": text}})
        .to_string()
    };
    let note = "Note for this project: we deploy with make ship from a tagged commit only.";
    let lines = [line("How do I run the tests?"), line(note), line("Fine. Never push to main.")];
    let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(t.request_count(), 3);
    assert_eq!(t.stated().len(), 2);
    let s = summarize(&t, &info("f1"));
    assert_eq!(s.title, "Session: How do I run the tests?");
    assert!(!s.body.contains("make ship") && !s.body.contains("push to main"), "{}", s.body);
    assert!(s.body.contains("3 requests") && s.body.contains("- Fine.\n"), "{}", s.body);
    let only = transcript(&[line(note).as_str()]);
    let s = summarize(&only, &info("f1"));
    assert_eq!(s.title, "Session: stated facts");
    assert!(s.body.contains("1 request,") && !s.body.contains("make ship"), "{}", s.body);
    // A digest written before this left them in: its gist leaves them out.
    let old = format!(
        "# Session: x\n\n## Requests\n\n- How do I run the tests?\n- {note}\n- Fine. Never push to main.\n"
    );
    assert_eq!(crate::capture::gist(&old, true), "then asked: Fine.");
    // Unless its session's statements were never taken as facts: then it alone holds them.
    assert!(crate::capture::gist(&old, false).contains("make ship"));
}
