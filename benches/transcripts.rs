//! A deterministic generator of Claude Code transcripts, shared by the session bench
//! (`benches/sessions.rs`) and by `examples/gen_transcripts.rs` (which `scripts/bench_sessions.sh`
//! runs): sessions of 10–80 turns in eight projects, each turn a prompt, one to four tool calls
//! (Bash commands, Edits, now and then a Read or a Grep) with their results, about one in seven
//! failing with `is_error` and "Exit code N", and an answer. Words are drawn from a few hundred
//! programming terms with Zipf weights, so that some words are in most sessions and others in a
//! handful, as in real logs.

#![allow(dead_code)]

use serde_json::{Value, json};

/// A project: its working directory, branches, files, and commands with what they print.
struct Project {
    cwd: &'static str,
    branches: &'static [&'static str],
    files: &'static [&'static str],
    /// Test, lint and build commands; `{f}` is replaced by a file, `{w}` by a word.
    commands: &'static [&'static str],
    /// How its test runner names a test: `{w}` words.
    test_line: &'static str,
    /// What a failure prints after "Exit code N".
    failures: &'static [&'static str],
}

const PROJECTS: &[Project] = &[
    Project {
        cwd: "/home/dev/shop",
        branches: &["main", "fix/checkout-total", "feat/gift-cards"],
        files: &[
            "src/pages/checkout.tsx",
            "src/lib/cart.ts",
            "src/components/LoginForm.tsx",
            "src/api/orders.ts",
            "src/hooks/useSession.ts",
            "tests/e2e/checkout.spec.ts",
            "package.json",
            "next.config.js",
        ],
        commands: &[
            "pnpm test",
            "pnpm test -- {f}",
            "pnpm lint",
            "pnpm build",
            "pnpm tsc --noEmit",
            "npx playwright test tests/e2e/checkout.spec.ts",
        ],
        test_line: "  ✓ {w} {w} ({n} ms)",
        failures: &[
            "FAIL {f}\n  ● {w} › should {w} the {w}\n    expect(received).toBe(expected)\n    Expected: \"{w}\"\n    Received: undefined",
            "{f}:{n}:{n} - error TS2345: Argument of type 'string' is not assignable to parameter of type '{W}'.",
            "Error: page.goto: net::ERR_CONNECTION_REFUSED at http://localhost:3000/checkout",
        ],
    },
    Project {
        cwd: "/home/dev/billing-api",
        branches: &["main", "invoice-rounding", "stripe-webhooks"],
        files: &[
            "billing/models.py",
            "billing/views.py",
            "billing/tasks.py",
            "billing/serializers.py",
            "billing/tests/test_invoice.py",
            "billing/tests/test_webhooks.py",
            "config/settings.py",
            "requirements.txt",
        ],
        commands: &[
            "pytest -x billing/tests",
            "pytest {f} -k {w}",
            "python manage.py makemigrations billing",
            "python manage.py migrate",
            "ruff check .",
            "mypy billing",
        ],
        test_line: "billing/tests/test_{w}.py::test_{w}_{w} PASSED",
        failures: &[
            "FAILED {f}::test_{w}_{w} - AssertionError: assert Decimal('{n}.10') == Decimal('{n}.00')",
            "django.db.utils.IntegrityError: duplicate key value violates unique constraint \"billing_{w}_pkey\"",
            "{f}:{n}: error: Incompatible types in assignment (expression has type \"None\", variable has type \"{W}\")",
        ],
    },
    Project {
        cwd: "/home/dev/engine",
        branches: &["main", "parser-recovery", "faster-eval"],
        files: &[
            "src/parser.rs",
            "src/lexer.rs",
            "src/eval.rs",
            "src/types.rs",
            "src/error.rs",
            "tests/parse.rs",
            "benches/eval.rs",
            "Cargo.toml",
        ],
        commands: &[
            "cargo test",
            "cargo test {w}",
            "cargo clippy --all-targets -- -D warnings",
            "cargo build --release",
            "cargo fmt --check",
            "cargo bench --bench eval",
        ],
        test_line: "test {w}::{w}_{w} ... ok",
        failures: &[
            "error[E0308]: mismatched types\n  --> {f}:{n}:{n}\n   |\n{n} |     let {w} = {w}_{w}(&{w});\n   |               ^^^^ expected `{W}`, found `Option<{W}>`",
            "thread '{w}::{w}_{w}' panicked at {f}:{n}:{n}:\nassertion `left == right` failed\n  left: {n}\n right: {n}",
            "error: this `if` has identical blocks\n  --> {f}:{n}:{n}\n   = help: for further information visit the clippy docs",
        ],
    },
    Project {
        cwd: "/home/dev/infra",
        branches: &["main", "staging-vpc", "helm-upgrade"],
        files: &[
            "modules/vpc/main.tf",
            "modules/db/variables.tf",
            "k8s/deploy.yaml",
            "k8s/ingress.yaml",
            "helm/values.yaml",
            ".github/workflows/ci.yml",
            "Makefile",
        ],
        commands: &[
            "terraform plan -out plan.bin",
            "terraform validate",
            "kubectl get pods -n staging",
            "kubectl logs deploy/{w} -n staging --tail 50",
            "helm lint helm",
            "make deploy-staging",
        ],
        test_line: "{w}-{w}-{n}   1/1   Running   0   {n}m",
        failures: &[
            "Error: Invalid reference\n  on {f} line {n}: a reference to a resource type must be followed by at least one attribute access",
            "Error from server (NotFound): deployments.apps \"{w}\" not found",
            "{w}-{w}-{n}   0/1   CrashLoopBackOff   {n}   {n}m",
        ],
    },
    Project {
        cwd: "/home/dev/mobile",
        branches: &["main", "push-tokens", "offline-sync"],
        files: &[
            "app/src/main/java/com/example/MainActivity.kt",
            "app/src/main/java/com/example/sync/SyncWorker.kt",
            "ios/App/AppDelegate.swift",
            "ios/App/PushService.swift",
            "app/build.gradle",
            "app/src/test/java/com/example/SyncTest.kt",
        ],
        commands: &[
            "./gradlew test",
            "./gradlew assembleDebug",
            "./gradlew lint",
            "xcodebuild test -scheme App -destination 'platform=iOS Simulator,name=iPhone 15'",
        ],
        test_line: "com.example.{W}Test > {w}{W}() PASSED",
        failures: &[
            "e: {f}: ({n}, {n}): Unresolved reference: {w}",
            "com.example.{W}Test > {w}{W}() FAILED\n    java.lang.AssertionError: expected:<{n}> but was:<{n}>",
            "** TEST FAILED **\n{f}:{n}: error: -[AppTests test{W}] : XCTAssertEqual failed",
        ],
    },
    Project {
        cwd: "/home/dev/dataflow",
        branches: &["main", "kafka-consumer", "backfill-job"],
        files: &[
            "cmd/ingest/main.go",
            "internal/queue/consumer.go",
            "internal/store/postgres.go",
            "internal/store/postgres_test.go",
            "internal/pipeline/batch.go",
            "go.mod",
        ],
        commands: &[
            "go test ./...",
            "go test ./internal/{w}/... -run Test{W}",
            "go vet ./...",
            "golangci-lint run",
            "go build ./cmd/ingest",
        ],
        test_line: "--- PASS: Test{W}{W} (0.{n}s)",
        failures: &[
            "--- FAIL: Test{W}{W} (0.{n}s)\n    {f}:{n}: got {n} rows, want {n}",
            "{f}:{n}:{n}: undefined: {w}{W}",
            "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\ngoroutine {n} [running]:\n{f}:{n}",
        ],
    },
    Project {
        cwd: "/home/dev/docs-site",
        branches: &["main", "install-guide"],
        files: &[
            "content/guide/install.md",
            "content/guide/configuration.md",
            "content/blog/release-notes.md",
            "layouts/partials/nav.html",
            "config.toml",
        ],
        commands: &["hugo --minify", "npm run check-links", "npx markdownlint content"],
        test_line: "{f}: OK",
        failures: &[
            "ERROR {f}:{n}: broken link to /guide/{w}",
            "{f}:{n} MD013/line-length Line length [Expected: 100; Actual: {n}]",
        ],
    },
    Project {
        cwd: "/home/dev/ml-pipeline",
        branches: &["main", "mixed-precision", "eval-harness"],
        files: &[
            "train.py",
            "data/loader.py",
            "models/transformer.py",
            "eval/metrics.py",
            "configs/base.yaml",
            "tests/test_loader.py",
        ],
        commands: &[
            "python train.py --config configs/base.yaml --max-steps 20",
            "pytest tests/ -q",
            "python -m eval.metrics --split dev",
            "ruff check .",
        ],
        test_line: "step {n} loss 0.{n} lr 3e-4 {w} {n} tok/s",
        failures: &[
            "RuntimeError: CUDA out of memory. Tried to allocate {n}.00 MiB",
            "ValueError: Expected input batch_size ({n}) to match target batch_size ({n}).",
            "FAILED tests/test_loader.py::test_{w}_{w} - KeyError: '{w}'",
        ],
    },
];

/// Programming words, most common first: word `r` is drawn with weight 1 / (r + 1).
const WORDS: &str = "
    test error function file config type value request session cache query user build data
    response token handler module timeout version field client server parser index update check
    default path schema option result status event state key string list order login cookie
    retry migration database worker queue log message header payload route endpoint component
    render format date time import export thread lock connection pool stream buffer memory limit
    offset page filter sort search invoice payment checkout cart account password permission
    role admin upload image pipeline deploy release branch merge commit lint warning fixture
    mock snapshot coverage assertion flaky dependency lockfile upgrade patch changelog docs
    example template layout style theme button form modal dialog router middleware serializer
    validator encoder decoder lexer tokenizer grammar syntax compiler allocator iterator closure
    trait generic lifetime borrow async future promise callback channel mutex deadlock race
    transaction rollback constraint foreign primary column table row batch partition backfill
    consumer producer topic offsetting replica cluster node pod container volume secret ingress
    certificate metric trace span alert dashboard latency throughput profile benchmark
    regression leak allocation overflow underflow precision rounding currency tax refund
    subscription trial webhook signature oauth redirect callback_url scope claims expiry refresh
    rotation encryption hash salt nonce csrf cors xss sanitize escape unicode locale timezone
    calendar pagination cursor embedding vector model training epoch gradient loss dataset
    checkpoint inference tensor layer attention dropout optimizer scheduler warmup notification
    push offline sync conflict battery crash gesture animation accessibility hydration bundle
    treeshaking sourcemap polyfill debounce throttle memoization idempotency backpressure
    tombstone compaction vacuum watermark sharding quorum heartbeat jitter backoff breaker
    bulkhead saga outbox dedupe checksum protobuf grpc graphql websocket terraform helm
    kustomize prometheus grafana sentry kafka rabbitmq postgres sqlite redis clickhouse
    elasticsearch minio keycloak ldap saml jwt mtls hsts csp fuzzing proptest miri sanitizer
    valgrind flamegraph bisect cherrypick reflog submodule monorepo codegen macro reflection
    annotation decorator metaclass coroutine goroutine semaphore spinlock futex epoll mmap fsync
    inode symlink umask chroot seccomp cgroup namespace apparmor
";

/// Words of the long tail: one word in 2,000 is one of these, so that each is in a few dozen
/// events of 1,000 sessions.
const RARE: &str = "
    zstd brotli capnproto flatbuffers avro thrift zookeeper etcd consul nomad envoy istio
    linkerd traefik haproxy varnish memcached cassandra scylla cockroachdb vitess duckdb polars
    iceberg hudi flink airflow dagster celery dramatiq sidekiq bullmq temporal pulsar zeromq
    mqtt quic wasmtime emscripten cranelift bazel nix flatpak homebrew tmux neovim fastlane
    testflight leiningen opam rebar poetry pipenv hatch tox nox pyright esbuild swc turbopack
    rollup parcel storybook cypress puppeteer selenium locust vegeta jmeter gatling pprof
    heaptrack bpftrace strace ltrace tcpdump wireshark mitmproxy ngrok tailscale wireguard
    openvpn letsencrypt certbot acme hashicorp ansible puppet chef saltstack packer vagrant qemu
    firecracker gvisor kata podman buildah skopeo harbor quay
";

const VERBS: &[&str] = &[
    "fixed",
    "changed",
    "moved",
    "renamed",
    "removed",
    "added",
    "updated",
    "split",
    "inlined",
    "cached",
    "guarded",
    "validated",
    "reverted",
    "simplified",
    "documented",
];

const PROMPTS: &[&str] = &[
    "the {w} {w} in {f} is failing again, can you look at it",
    "why does the {w} {w} when the {w} is {w}?",
    "add {w} support to {f}",
    "refactor the {w} {w} so it uses {w} instead of {w}",
    "run the tests and fix whatever breaks",
    "`{c}` fails with a {w} {w}, please fix it",
    "can you explain how {w} and {w} interact in {f}",
    "write a test for the {w} {w} bug we saw yesterday",
    "update the docs for the {w} {w}",
    "continue",
    "looks good, now {w} the {w} {w}",
    "the {w} is slow in production, profile {f} and tell me where the time goes",
    "users report that {w} {w} after {w}; find the cause",
    "clean up {f}: remove the dead {w} code and the old {w}",
    "bump {w} to the latest version and fix the {w} {w}",
];

const ANSWERS: &[&str] = &[
    "I {v} the {w} {w} in {f}: the {w} was {w} because the {w} {w} ran before the {w}.",
    "The {w} now checks the {w} before it {w} the {w}.",
    "All tests pass now.",
    "The remaining failure is in the {w} {w}; it needs a {w} {w} first.",
    "Done: `{c}` is green and {f} no longer {w} the {w}.",
    "The cause was a {w} {w} in {f}, where the {w} was read after the {w} had expired.",
    "I {v} the {w} and added a test for the {w} {w} case.",
    "It was not the {w}: the {w} {w} returned a stale {w}, so I {v} the {w}.",
];

const CODE: &[&str] = &[
    "    let {w}_{w} = {w}.{w}()?;",
    "    if {w}.is_empty() {{ return Ok(None); }}",
    "    const {w} = await {w}({w}, {{ {w}: true }});",
    "    return {w}_{w}({w}, {w}=None)",
    "    {w}, err := {w}.{W}(ctx, {w})",
    "  {w}: {w}-{w}",
    "    self.{w} = {w}.get(\"{w}\", {n})",
    "// {w}: {w} the {w} before the {w}",
];

/// One generated session.
pub struct Session {
    /// Its id (a UUID, as Claude Code names sessions).
    pub id: String,
    /// The project folder it ran in.
    pub cwd: &'static str,
    /// Its turns (user prompts).
    pub turns: usize,
    /// The transcript: JSON lines, each ending with a line break.
    pub text: String,
}

/// Draws words with Zipf weights, and everything else, from one seeded generator.
struct Words {
    rng: fastrand::Rng,
    words: Vec<&'static str>,
    rare: Vec<&'static str>,
    /// `cumulative[r]`: the weights of words 0 to `r`.
    cumulative: Vec<f64>,
}

impl Words {
    fn new(seed: u64) -> Words {
        let words: Vec<&str> = WORDS.split_whitespace().collect();
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|r| {
                total += 1.0 / (r as f64 + 1.0);
                total
            })
            .collect();
        let rare = RARE.split_whitespace().collect();
        Words { rng: fastrand::Rng::with_seed(seed), words, rare, cumulative }
    }

    fn word(&mut self) -> &'static str {
        if self.rng.u32(0..2_000) == 0 {
            return self.rare[self.rng.usize(0..self.rare.len())];
        }
        let total = self.cumulative[self.cumulative.len() - 1];
        let at = self.rng.f64() * total;
        let r = self.cumulative.partition_point(|c| *c < at).min(self.words.len() - 1);
        self.words[r]
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(0..from.len())]
    }

    /// `template` with `{w}` a word, `{W}` a capitalised word, `{f}` a file of `project`, `{c}`
    /// one of its commands, `{v}` a verb and `{n}` a number.
    fn fill(&mut self, template: &str, project: &Project) -> String {
        let mut out = String::with_capacity(template.len() * 2);
        let mut rest = template;
        while let Some(at) = rest.find('{') {
            out.push_str(&rest[..at].replace("}}", "}"));
            let tail = &rest[at..];
            let (take, len) = match tail.get(..3) {
                Some("{w}") => (self.word().to_string(), 3),
                Some("{W}") => (capitalise(self.word()), 3),
                Some("{f}") => (self.pick(project.files).to_string(), 3),
                Some("{c}") => {
                    let command = self.pick(project.commands);
                    (self.fill(command, project), 3)
                }
                Some("{v}") => (self.pick(VERBS).to_string(), 3),
                Some("{n}") => (self.rng.u32(1..400).to_string(), 3),
                _ if tail.starts_with("{{") => ("{".to_string(), 2),
                _ => ("{".to_string(), 1),
            };
            out.push_str(&take);
            rest = &tail[len..];
        }
        out.push_str(&rest.replace("}}", "}"));
        out
    }

    fn hex(&mut self, digits: usize) -> String {
        (0..digits).map(|_| char::from_digit(self.rng.u32(0..16), 16).unwrap()).collect()
    }

    fn uuid(&mut self) -> String {
        format!("{}-{}-4{}-{}-{}", self.hex(8), self.hex(4), self.hex(3), self.hex(4), self.hex(12))
    }
}

/// The transcript state: the fields every line carries.
struct Writer<'a> {
    session: &'a str,
    project: &'a Project,
    branch: &'a str,
    parent: Option<String>,
    text: String,
}

impl Writer<'_> {
    fn line(&mut self, words: &mut Words, kind: &str, at: i64, message: Value, extra: Value) {
        let uuid = words.uuid();
        let mut line = json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": self.project.cwd,
            "sessionId": self.session,
            "version": "2.0.31",
            "gitBranch": self.branch,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": jiff::Timestamp::from_second(at).unwrap().to_string(),
        });
        if let (Value::Object(line), Value::Object(extra)) = (&mut line, extra) {
            line.extend(extra);
        }
        self.text.push_str(&line.to_string());
        self.text.push('\n');
        self.parent = Some(uuid);
    }

    fn assistant(&mut self, words: &mut Words, at: i64, content: Value, stop: &str) {
        let message = json!({
            "id": format!("msg_{}", words.hex(24)),
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop,
            "usage": {
                "input_tokens": words.rng.u32(4..40),
                "cache_read_input_tokens": words.rng.u32(1_000..90_000),
                "output_tokens": words.rng.u32(20..900),
            },
        });
        let extra = json!({ "requestId": format!("req_{}", words.hex(24)) });
        self.line(words, "assistant", at, message, extra);
    }
}

/// Session `index` of the corpus of `seed`: the same arguments always give the same transcript,
/// whatever other sessions are generated.
pub fn session(seed: u64, index: usize) -> Session {
    let mut words =
        Words::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (index as u64).wrapping_add(1));
    let project = &PROJECTS[words.rng.usize(0..PROJECTS.len())];
    let id = words.uuid();
    let branch = words.pick(project.branches);
    let start = 1_764_547_200 + words.rng.i64(0..365 * 86_400); // from 2025-12-01
    let turns = words.rng.usize(10..=80);
    let mut w = Writer { session: &id, project, branch, parent: None, text: String::new() };
    let mut at = start;
    for _ in 0..turns {
        at += words.rng.i64(30..900);
        let template = words.pick(PROMPTS);
        let prompt = words.fill(template, project);
        let message = json!({ "role": "user", "content": prompt });
        w.line(&mut words, "user", at, message, json!({}));
        for _ in 0..words.rng.usize(1..=4) {
            at += words.rng.i64(2..60);
            let call = format!("toolu_{}", words.hex(24));
            let (name, input, output, error) = tool_call(&mut words, project);
            let preface = words.rng.u32(0..3) == 0;
            let mut content = Vec::new();
            if preface {
                let said = words.fill("Let me check the {w} {w} in {f}.", project);
                content.push(json!({ "type": "text", "text": said }));
            }
            content.push(json!({ "type": "tool_use", "id": call, "name": name, "input": input }));
            w.assistant(&mut words, at, Value::Array(content), "tool_use");
            at += words.rng.i64(1..30);
            let message = json!({
                "role": "user",
                "content": [{
                    "tool_use_id": call,
                    "type": "tool_result",
                    "content": output,
                    "is_error": error,
                }],
            });
            let result = match (name, error) {
                (_, true) => json!(format!("Error: {output}")),
                ("Bash", false) => {
                    json!({ "stdout": output, "stderr": "", "interrupted": false, "isImage": false })
                }
                _ => json!({ "type": "text", "file": { "filePath": input["file_path"] } }),
            };
            w.line(&mut words, "user", at, message, json!({ "toolUseResult": result }));
        }
        at += words.rng.i64(5..120);
        let sentences = words.rng.usize(1..=4);
        let answer = (0..sentences)
            .map(|_| {
                let template = words.pick(ANSWERS);
                words.fill(template, project)
            })
            .collect::<Vec<_>>()
            .join(" ");
        w.assistant(&mut words, at, json!([{ "type": "text", "text": answer }]), "end_turn");
    }
    let text = w.text;
    Session { id, cwd: project.cwd, turns, text }
}

/// One tool call: its name, input, result text, and whether it failed.
fn tool_call(words: &mut Words, project: &Project) -> (&'static str, Value, String, bool) {
    let file = format!("{}/{}", project.cwd, words.pick(project.files));
    match words.rng.u32(0..10) {
        0..=4 => {
            let command = match words.rng.u32(0..6) {
                0 => words.fill("rg -n \"{w}_{w}\" .", project),
                1 => "git status --short".to_string(),
                _ => {
                    let command = words.pick(project.commands);
                    words.fill(command, project)
                }
            };
            let input =
                json!({ "command": command, "description": words.fill("Run {w} {w}", project) });
            if words.rng.u32(0..7) == 0 {
                let code = words.pick(&[1, 1, 1, 2, 101, 127]);
                let failure = words.pick(project.failures);
                let mut output = format!("Exit code {code}\n");
                for _ in 0..words.rng.usize(1..=3) {
                    output.push_str(&words.fill(failure, project));
                    output.push('\n');
                }
                return ("Bash", input, output, true);
            }
            let mut output = String::new();
            if command.starts_with("git ") {
                for _ in 0..words.rng.usize(0..=5) {
                    output.push_str(&format!(" M {}\n", words.pick(project.files)));
                }
            } else if command.starts_with("rg ") {
                for _ in 0..words.rng.usize(0..=8) {
                    let line = words.pick(CODE);
                    let hit = words.fill(line, project);
                    let n = words.rng.u32(1..400);
                    output.push_str(&format!("{}:{n}:{hit}\n", words.pick(project.files)));
                }
            } else {
                for _ in 0..words.rng.usize(1..=25) {
                    output.push_str(&words.fill(project.test_line, project));
                    output.push('\n');
                }
                output
                    .push_str(&words.fill("\n{n} passed, 0 failed; finished in {n}.{n}s", project));
            }
            ("Bash", input, output, false)
        }
        5..=7 => {
            let old = words.pick(CODE);
            let old = words.fill(old, project);
            let new = words.pick(CODE);
            let new = words.fill(new, project);
            let input = json!({ "file_path": file, "old_string": old, "new_string": new });
            if words.rng.u32(0..12) == 0 {
                let output = "String to replace not found in file.".to_string();
                return ("Edit", input, output, true);
            }
            let mut output = format!(
                "The file {file} has been updated. Here's the result of running `cat -n` on a \
                 snippet of the edited file:\n"
            );
            let first = words.rng.u32(1..300);
            for n in first..first + words.rng.u32(4..12) {
                let line = words.pick(CODE);
                output.push_str(&format!("{n:>6}\t{}\n", words.fill(line, project)));
            }
            ("Edit", input, output, false)
        }
        8 => {
            let input = json!({ "file_path": file });
            let mut output = String::new();
            for n in 1..words.rng.u32(10..60) {
                let line = words.pick(CODE);
                output.push_str(&format!("{n:>6}\t{}\n", words.fill(line, project)));
            }
            ("Read", input, output, false)
        }
        _ => {
            let pattern = format!("{}_{}", words.word(), words.word());
            let input =
                json!({ "pattern": pattern, "path": project.cwd, "output_mode": "content" });
            let mut output = String::new();
            for _ in 0..words.rng.usize(0..8) {
                let line = words.pick(CODE);
                let hit = words.fill(line, project);
                let n = words.rng.u32(1..400);
                output.push_str(&format!("{}:{n}:{hit}\n", words.pick(project.files)));
            }
            if output.is_empty() {
                output.push_str("No matches found");
            }
            ("Grep", input, output, false)
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
