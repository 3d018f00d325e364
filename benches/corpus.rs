//! A deterministic generator of realistic agent memories, shared by the benches and by
//! `examples/gen_corpus.rs`: topical clusters of decisions, preferences, bug notes, procedures
//! and session observations, 30–400 words, all three types, importance 1–10, dates over two
//! years, some access history and some near-duplicates.

#![allow(dead_code)]

use std::path::Path;

/// Topics: a subject, the files and identifiers it mentions, and its own vocabulary.
const TOPICS: &[(&str, &[&str], &[&str])] = &[
    (
        "login",
        &["auth.py", "session_id", "LoginForm.tsx"],
        &["session", "cookie", "token", "expiry", "redirect", "password", "oauth"],
    ),
    (
        "deploy",
        &["deploy.yaml", "argocd", "Dockerfile"],
        &["rollout", "release", "canary", "image", "tag", "cluster", "helm"],
    ),
    (
        "database",
        &["models.py", "alembic", "StorePort"],
        &["migration", "index", "query", "postgres", "schema", "vacuum", "transaction"],
    ),
    (
        "cache",
        &["redis.conf", "cache.py", "CacheKey"],
        &["eviction", "ttl", "memory", "hit", "miss", "invalidate", "warmup"],
    ),
    (
        "ci",
        &["ci.yml", "refs/harness", "Makefile"],
        &["pipeline", "runner", "artifact", "matrix", "flaky", "timeout", "retry"],
    ),
    (
        "frontend",
        &["App.tsx", "vite.config.ts", "pnpm-lock.yaml"],
        &["component", "bundle", "render", "hydration", "css", "router", "state"],
    ),
    (
        "search",
        &["search.rs", "tantivy", "QueryParser"],
        &["ranking", "bm25", "tokenizer", "stemming", "relevance", "snippet", "facet"],
    ),
    (
        "billing",
        &["invoice.py", "stripe_webhook", "PlanTier"],
        &["invoice", "subscription", "refund", "tax", "currency", "proration", "trial"],
    ),
    (
        "observability",
        &["otel.yaml", "grafana", "TraceId"],
        &["metrics", "tracing", "alert", "dashboard", "latency", "span", "logs"],
    ),
    (
        "security",
        &["secrets.toml", "vault", "CspPolicy"],
        &["secret", "rotation", "csp", "xss", "csrf", "audit", "permission"],
    ),
    (
        "mobile",
        &["AppDelegate.swift", "gradle", "PushToken"],
        &["push", "notification", "offline", "sync", "battery", "crash", "store"],
    ),
    (
        "api",
        &["openapi.yaml", "routes.py", "RateLimiter"],
        &["endpoint", "pagination", "versioning", "rate", "limit", "schema", "client"],
    ),
    (
        "testing",
        &["conftest.py", "playwright.config.ts", "FixtureFactory"],
        &["fixture", "mock", "coverage", "snapshot", "e2e", "unit", "assertion"],
    ),
    (
        "performance",
        &["profile.svg", "criterion", "HotLoop"],
        &["profile", "allocation", "cpu", "throughput", "benchmark", "regression", "cache"],
    ),
    (
        "onboarding",
        &["CONTRIBUTING.md", "devcontainer.json", "setup.sh"],
        &["setup", "laptop", "access", "docs", "mentor", "checklist", "account"],
    ),
    (
        "data",
        &["etl.py", "airflow", "PartitionKey"],
        &["pipeline", "batch", "partition", "backfill", "parquet", "warehouse", "schedule"],
    ),
];

const VERBS: &[&str] = &[
    "fixed",
    "found",
    "decided",
    "noticed",
    "changed",
    "measured",
    "reverted",
    "documented",
    "reviewed",
    "moved",
];
const GENERAL: &[&str] = &[
    "the",
    "team",
    "agreed",
    "after",
    "because",
    "when",
    "we",
    "it",
    "was",
    "failing",
    "again",
    "with",
    "a",
    "new",
    "config",
    "in",
    "production",
    "staging",
    "locally",
    "during",
    "review",
    "this",
    "week",
    "and",
    "then",
    "should",
    "always",
    "never",
    "run",
    "check",
    "before",
    "merging",
    "users",
    "reported",
    "slow",
    "error",
    "on",
    "for",
];
const PREFERENCES: &[&str] = &["prefers", "always use", "never use", "keep", "avoid", "write"];

/// One generated memory.
pub struct Generated {
    /// The memory's id.
    pub id: String,
    /// Path relative to the root.
    pub rel: String,
    /// The whole file.
    pub text: String,
    /// The topic it belongs to.
    pub topic: &'static str,
}

/// `n` memories from `seed`; the same arguments always give the same files.
pub fn generate(n: usize, seed: u64) -> Vec<Generated> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let start = 1_732_000_000i64; // 2024-11-19
    let span = 2 * 365 * 86_400i64;
    let mut out: Vec<Generated> = Vec::with_capacity(n);
    for i in 0..n {
        // One memory in twenty is a near-duplicate of an earlier one.
        if i > 10 && rng.u32(0..20) == 0 {
            let source = rng.usize(0..i);
            let (topic, text) = (out[source].topic, out[source].text.clone());
            let id = format!("m{i:06}");
            let text =
                text.replacen(&out[source].id, &id, 1).replacen("\n---\n", "\n---\nAgain: ", 1);
            out.push(Generated { rel: format!("{topic}/{id}.md"), id, text, topic });
            continue;
        }
        let (topic, idents, words) = TOPICS[rng.usize(0..TOPICS.len())];
        let kind = match rng.u32(0..10) {
            0..=3 => "episodic",
            4..=7 => "semantic",
            _ => "procedural",
        };
        let created = start + rng.i64(0..span);
        let id = format!("m{i:06}");
        let mut front = format!(
            "---\nid: {id}\ntype: {kind}\nimportance: {}\ncreated: {}\ntags: [{topic}, {}]\n",
            rng.u8(1..=10),
            jiff::Timestamp::from_second(created).unwrap(),
            words[rng.usize(0..words.len())],
        );
        if rng.u32(0..3) == 0 {
            let last = created + rng.i64(0..(start + span - created).max(1));
            front.push_str(&format!(
                "access: {{ count: {}, last: {} }}\n",
                rng.u32(1..40),
                jiff::Timestamp::from_second(last).unwrap()
            ));
        }
        if kind == "episodic" {
            front.push_str(&format!("source: session/{:08x}\n", rng.u32(..)));
        }
        let title = format!(
            "{} {} {} in {}",
            capitalise(VERBS[rng.usize(0..VERBS.len())]),
            words[rng.usize(0..words.len())],
            words[rng.usize(0..words.len())],
            idents[rng.usize(0..idents.len())]
        );
        let target = rng.usize(30..=400);
        let mut body = format!("# {title}\n\n");
        let mut count = 0;
        let mut step = 1;
        while count < target {
            let len = rng.usize(6..16);
            let mut sentence: Vec<&str> = Vec::with_capacity(len);
            if kind == "semantic" && rng.u32(0..4) == 0 {
                sentence.push(PREFERENCES[rng.usize(0..PREFERENCES.len())]);
            }
            for _ in 0..len {
                let pick = rng.u32(0..10);
                sentence.push(if pick < 5 {
                    GENERAL[rng.usize(0..GENERAL.len())]
                } else if pick < 9 {
                    words[rng.usize(0..words.len())]
                } else {
                    idents[rng.usize(0..idents.len())]
                });
            }
            count += sentence.len();
            let line = capitalise(&sentence.join(" "));
            if kind == "procedural" {
                body.push_str(&format!("{step}. {line}.\n"));
                step += 1;
            } else {
                body.push_str(&line);
                body.push_str(". ");
            }
        }
        body.push('\n');
        let text = format!("{front}---\n{body}");
        out.push(Generated { rel: format!("{topic}/{id}.md"), id, text, topic });
    }
    out
}

/// Writes the memories under `root`.
pub fn write(root: &Path, memories: &[Generated]) -> std::io::Result<()> {
    for m in memories {
        let path = root.join(&m.rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, &m.text)?;
    }
    Ok(())
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
