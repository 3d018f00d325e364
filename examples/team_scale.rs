//! The team store at scale (docs/benchmarks.md, "The team store at scale"), driven by
//! `scripts/team_scale.py`; three steps, each printing one JSON line of what it measured:
//!
//! - `embed MODEL_DIR TEXTS.jsonl OUT`: the real model's vectors of the texts (one JSON string
//!   per line) into `OUT` (little-endian f32, `dim` per text) and the model's id into `OUT.id`.
//! - `load URL TEXTS.jsonl VECTORS ROWS PROJECTS AUTHORS BASE`: `ROWS` memories published
//!   through `mem_team::Team::push` (the code `mem team push` runs, batches of 500), project by
//!   project (`scale/pNN`, each with its own authors: `AUTHORS / PROJECTS` per project), each
//!   one the text of one of the first `BASE` texts with a line of its own, its vector that
//!   text's real vector perturbed (uniform noise on every component, then normalised): the
//!   store is filled as a push fills it, without running the model a million times.
//! - `ask URL MODEL_DIR QUERIES.jsonl`: each query asked of the store as the hooks ask it (full
//!   text, five rows) and as `mem recall` asks it (with the query's vector, twenty rows), each
//!   through a new connection; the medians and 95th percentiles.
//!
//! The password comes from `PGPASSWORD`.

// A measurement tool: the clock rule of AGENTS.md is for the library and the CLI.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead as _, Write as _};
use std::time::{Duration, Instant};

use mem::embed::{Embedder, ModelOverrides, ModelSource};
use mem_team::publish::{Publisher, model_id, row};
use mem_team::{Settings, Team, TeamQuery};

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["embed", model, texts, out] => embed(model, texts, out),
        ["load", url, texts, vectors, rows, projects, authors, base] => load(
            url,
            texts,
            vectors,
            rows.parse()?,
            projects.parse()?,
            authors.parse()?,
            base.parse()?,
        ),
        ["ask", url, model, queries] => ask(url, model, queries),
        _ => Err("usage: team_scale embed|load|ask … (see the file's doc comment)".into()),
    }
}

fn texts(path: &str) -> Result<Vec<String>, Failure> {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    file.lines().map(|l| Ok(serde_json::from_str::<String>(&l?)?)).collect()
}

fn model(dir: &str) -> Result<Embedder, Failure> {
    let overrides = ModelOverrides { model_dir: Some(dir.into()), ..Default::default() };
    let source = ModelSource::configured(&overrides).ok_or("no model folder")?;
    Ok(Embedder::load_uncached(&source)?)
}

fn settings(url: &str, timeout: Duration) -> Settings {
    Settings {
        url: url.to_string(),
        password: std::env::var("PGPASSWORD").ok(),
        connect_timeout: timeout,
        statement_timeout: timeout,
    }
}

fn embed(model_dir: &str, texts_file: &str, out: &str) -> Result<(), Failure> {
    let texts = texts(texts_file)?;
    let mut embedder = model(model_dir)?;
    let started = Instant::now();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    for chunk in texts.chunks(256) {
        let chunk: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for vector in embedder.embed(&chunk, 32)? {
            for x in vector {
                file.write_all(&x.to_le_bytes())?;
            }
        }
    }
    file.flush()?;
    std::fs::write(format!("{out}.id"), model_id(&embedder))?;
    let seconds = started.elapsed().as_secs_f64();
    let report = serde_json::json!({ "step": "embed", "texts": texts.len(),
        "dim": embedder.dim(), "seconds": seconds, "per_second": texts.len() as f64 / seconds });
    println!("{report}");
    Ok(())
}

/// The vectors of `path`, `dim` floats each.
fn vectors(path: &str, dim: usize) -> Result<Vec<Vec<f32>>, Failure> {
    let bytes = std::fs::read(path)?;
    let floats: Vec<f32> =
        bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Ok(floats.chunks_exact(dim).map(<[f32]>::to_vec).collect())
}

/// `base` moved by uniform noise of half-width `spread` on each component, normalised.
fn perturbed(base: &[f32], spread: f32, rng: &mut fastrand::Rng) -> Vec<f32> {
    let mut v: Vec<f32> = base.iter().map(|x| x + (rng.f32() * 2.0 - 1.0) * spread).collect();
    mem::embed::normalize(&mut v);
    v
}

/// The memory file of row `k` of project `p`: the base text `text`, one line of its own.
fn memory_file(p: usize, k: usize, text: &str) -> String {
    let kinds = ["semantic", "procedural", "episodic"];
    let created = jiff::Timestamp::from_second(1_767_225_600 + (k as i64) * 60).expect("a time");
    let (title, rest) = text.split_once('\n').unwrap_or((text, ""));
    format!(
        "---\nid: s{p:02}-{k:06}\ntype: {}\nimportance: {}\ncreated: {created}\n---\n# {}\n\n{}\n\nNote {k} of project {p}.\n",
        kinds[k % 3],
        1 + k % 10,
        title.trim().trim_start_matches('#').trim(),
        rest.trim(),
    )
}

fn load(
    url: &str,
    texts_file: &str,
    vectors_file: &str,
    rows: usize,
    projects: usize,
    authors: usize,
    base: usize,
) -> Result<(), Failure> {
    let texts = texts(texts_file)?;
    let model = std::fs::read_to_string(format!("{vectors_file}.id"))?;
    let dim: usize = model.split('d').next().ok_or("model id")?.parse()?;
    let vectors = vectors(vectors_file, dim)?;
    if texts.len() < base || vectors.len() < base {
        return Err(format!("{base} base texts asked, {} given", texts.len()).into());
    }
    let per_project = rows / projects;
    let authors_per_project = (authors / projects).max(1);
    let now = jiff::Timestamp::from_second(1_800_000_000)?;
    let mut team = Team::connect(&settings(url, Duration::from_secs(3600)))?;
    let mut rng = fastrand::Rng::with_seed(58);
    let (mut cosines, mut counted) = (0.0f64, 0usize);
    let started = Instant::now();
    let mut pushes = Vec::new();
    for p in 0..projects {
        let made = Instant::now();
        let mut batch = Vec::with_capacity(per_project);
        let mut bases = Vec::with_capacity(per_project);
        for k in 0..per_project {
            let b = (p * per_project + k).wrapping_mul(7919) % base;
            let memory = mem::Memory::parse(&memory_file(p, k, &texts[b]))?;
            let publisher = Publisher {
                project: format!("scale/p{p:02}"),
                layer: "project",
                author: format!("author{:03}", p * authors_per_project + k % authors_per_project),
                machine: "scale".into(),
            };
            batch.push(row(&publisher, &format!("s{k}.md"), &memory, false, now)?);
            bases.push(b);
        }
        let made = made.elapsed().as_secs_f64();
        let mut next = bases.into_iter();
        let mut embed = |rows: &[mem_team::Row]| {
            let vs: Vec<Vec<f32>> = rows
                .iter()
                .map(|_| {
                    let b = next.next().expect("every row of an empty project is sent, in order");
                    let v = perturbed(&vectors[b], 0.042, &mut rng);
                    if counted < 10_000 {
                        cosines += f64::from(mem::embed::dot(&v, &vectors[b]));
                        counted += 1;
                    }
                    v
                })
                .collect();
            Some((model.clone(), vs))
        };
        let pushed_at = Instant::now();
        let done = team.push(batch, &[], &[], Some(&model), &mut embed, 500)?;
        let seconds = pushed_at.elapsed().as_secs_f64();
        eprintln!("scale/p{p:02}: {} rows in {seconds:.1} s ({made:.1} s to make them)", done.sent);
        pushes.push(seconds);
    }
    let seconds = started.elapsed().as_secs_f64();
    pushes.sort_by(f64::total_cmp);
    let pushed: f64 = pushes.iter().sum();
    let report = serde_json::json!({ "step": "load", "rows": per_project * projects,
        "projects": projects, "authors": authors_per_project * projects, "base": base,
        "mean_cosine_to_base": cosines / counted.max(1) as f64, "seconds": seconds,
        "push_seconds": pushed, "rows_per_second": (per_project * projects) as f64 / pushed,
        "push_median_seconds": pushes[pushes.len() / 2],
        "push_first_seconds": pushes.first(), "push_last_seconds": pushes.last() });
    println!("{report}");
    Ok(())
}

/// The median and the 95th percentile of `times`, in milliseconds.
fn percentiles(mut times: Vec<f64>) -> serde_json::Value {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize] * 1000.0;
    serde_json::json!({ "p50_ms": at(0.5), "p95_ms": at(0.95), "n": times.len() })
}

fn ask(url: &str, model_dir: &str, queries_file: &str) -> Result<(), Failure> {
    let queries = texts(queries_file)?;
    let mut embedder = model(model_dir)?;
    let model = model_id(&embedder);
    let settings = settings(url, Duration::from_secs(60));
    let config = mem::config::EmbedConfig::default();
    let (mut hook, mut recall, mut hits) = (Vec::new(), Vec::new(), 0usize);
    for query in &queries {
        let vector = embedder.embed(&[query.as_str()], 1)?.pop().ok_or("no vector")?;
        for (limit, vector, times) in
            [(5, None, &mut hook), (20, Some((model.clone(), vector)), &mut recall)]
        {
            let question = TeamQuery {
                text: query.clone(),
                vector,
                limit,
                fusion: config.fusion,
                rrf_k: config.rrf_k,
                vector_weight: config.vector_weight,
            };
            let started = Instant::now();
            let mut team = Team::connect(&settings)?;
            team.check_schema()?;
            hits += team.recall(&question)?.len();
            times.push(started.elapsed().as_secs_f64());
        }
    }
    let user = url.split("://").nth(1).and_then(|r| r.split('@').next()).unwrap_or("");
    let report = serde_json::json!({ "step": "ask", "role": user, "queries": queries.len(),
        "hits": hits, "hook_full_text_5": percentiles(hook),
        "recall_hybrid_20": percentiles(recall) });
    println!("{report}");
    Ok(())
}
