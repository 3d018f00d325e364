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
    /// The two topic words and the identifier its title is made of.
    pub title_words: [&'static str; 3],
}

/// A labelled query over a generated corpus, as written to the query file.
#[derive(serde::Serialize)]
pub struct LabelledQuery {
    /// Query id.
    pub qid: String,
    /// The query text.
    pub query: String,
    /// `title` (the words of a title) or `identifier` (an identifier and one word).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Ids of the memories whose title holds all the query's words.
    pub relevant: Vec<String>,
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
            let title_words = out[source].title_words;
            let id = format!("m{i:06}");
            let text =
                text.replacen(&out[source].id, &id, 1).replacen("\n---\n", "\n---\nAgain: ", 1);
            out.push(Generated { rel: format!("{topic}/{id}.md"), id, text, topic, title_words });
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
        let title_words = [
            words[rng.usize(0..words.len())],
            words[rng.usize(0..words.len())],
            idents[rng.usize(0..idents.len())],
        ];
        let title = format!(
            "{} {} {} in {}",
            capitalise(VERBS[rng.usize(0..VERBS.len())]),
            title_words[0],
            title_words[1],
            title_words[2]
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
        out.push(Generated { rel: format!("{topic}/{id}.md"), id, text, topic, title_words });
    }
    out
}

/// `count` labelled queries over `memories`, alternating two kinds: the three words of a
/// memory's title (relevant: every memory whose title has all three), and its identifier with
/// its first word (relevant: every title with both). Deterministic for a seed.
pub fn queries(memories: &[Generated], count: usize, seed: u64) -> Vec<LabelledQuery> {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(count);
    for q in 0..count.min(memories.len()) {
        let target = &memories[rng.usize(0..memories.len())];
        let [w1, w2, ident] = target.title_words;
        let (query, kind, wanted): (String, _, Vec<&str>) = if q % 2 == 0 {
            (format!("{w1} {w2} {ident}"), "title", vec![w1, w2, ident])
        } else {
            (format!("{ident} {w1}"), "identifier", vec![ident, w1])
        };
        let relevant = memories
            .iter()
            .filter(|m| wanted.iter().all(|w| m.title_words.contains(w)))
            .map(|m| m.id.clone())
            .collect();
        out.push(LabelledQuery { qid: format!("g{q:03}"), query, kind, relevant });
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
