//! `mem reflect`: consolidate clusters of related observations into reflections.

use anyhow::{Result, bail};
use mem::MemoryType;
use mem::engine::{ReflectOptions, Summarize};

use crate::shared::Globals;

/// Arguments of `mem reflect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the clusters (sources, proposed title and summary); write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the proposals (with --dry-run) or what was written, as JSON.
    #[arg(long)]
    json: bool,
    /// Only memories created at or after this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_name = "TIME", value_parser = super::parse::parse_now)]
    since: Option<jiff::Timestamp>,
    /// Types to cluster; repeat for several (default: episodic).
    #[arg(long = "type", short = 't', value_parser = super::parse::parse_type)]
    kinds: Vec<MemoryType>,
    /// Cosine similarity for two memories to belong together: embedding cosine when a model is
    /// configured (default `[embed] reflect_threshold`, 0.5), else TF-IDF (`[reflect] threshold`,
    /// 0.15).
    #[arg(long)]
    threshold: Option<f32>,
    /// Smallest cluster that becomes a reflection (default 3).
    #[arg(long)]
    min_cluster: Option<usize>,
    /// Command that writes each summary: prompt on stdin, summary on stdout (default: extractive).
    #[arg(long)]
    summarizer: Option<String>,
    /// Seconds before the summariser is stopped (default 120).
    #[arg(long)]
    summarizer_timeout: Option<u64>,
    /// Do not write the usage log into the files first.
    #[arg(long)]
    no_sync: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let settings = engine.files.config().reflect.clone();
    let mut checked = engine.files.config().clone();
    checked.reflect.threshold = args.threshold.unwrap_or(settings.threshold);
    checked.reflect.min_cluster = args.min_cluster.unwrap_or(settings.min_cluster);
    checked.validate().map_err(super::parse::option_error)?;
    crate::shared::usage::sync_first(&mut engine, ctx.now, args.dry_run || args.no_sync)?;
    // With a usable model, observations are grouped by embedding cosine.
    let embedding_threshold = if engine.vectors.model().source().is_some() {
        let bar = crate::shared::bar::progress_bar_for("embedding", "memories");
        match engine.vectors.sync(&engine.files, None, &bar) {
            Ok(_) => {
                let threshold =
                    args.threshold.unwrap_or(engine.files.config().embed.reflect_threshold);
                if !(threshold > 0.0 && threshold < 1.0) {
                    bail!("--threshold must be between 0 and 1, found {threshold}");
                }
                Some(threshold)
            }
            Err(e) => {
                eprintln!("mem: warning: {e}; observations grouped by TF-IDF instead");
                None
            }
        }
    } else {
        None
    };
    let options = ReflectOptions {
        kinds: if args.kinds.is_empty() { vec![MemoryType::Episodic] } else { args.kinds },
        since: args.since,
        threshold: checked.reflect.threshold,
        min_cluster: checked.reflect.min_cluster,
        embedding_threshold,
    };
    let proposals = engine.reflect_plan(&options, ctx.now)?;
    if args.dry_run {
        if args.json {
            return crate::shared::output::print_json(&proposals);
        }
        let measure = match options.embedding_threshold {
            Some(t) => format!("grouped by embedding cosine >= {t}"),
            None => format!("grouped by TF-IDF cosine >= {}", options.threshold),
        };
        if proposals.is_empty() {
            return crate::shared::output::print_text(&format!(
                "no cluster to consolidate ({measure})\n"
            ));
        }
        let mut text = format!("{measure}\n\n");
        for p in &proposals {
            match &p.updates {
                Some(r) => text.push_str(&format!("update {} ({})\n", r.id, r.path)),
                None => text.push_str("new reflection\n"),
            }
            let d = &p.digest;
            text.push_str(&format!("  title       {}\n", d.title));
            text.push_str(&format!("  type        {}, importance {}\n", d.kind, d.importance));
            text.push_str("  sources\n");
            for s in &p.sources {
                let new = if p.new_sources.contains(&s.id) { "+" } else { " " };
                text.push_str(&format!(
                    "    {new} {}  {}\n",
                    s.id,
                    mem::format::clip(&s.title, 70)
                ));
            }
            text.push_str("  summary\n");
            for s in &d.sentences {
                text.push_str(&format!("    - {s}\n"));
            }
            text.push('\n');
        }
        return crate::shared::output::print_text(&text);
    }
    // The command comes from the user (flag or user configuration), never from the root.
    let user = crate::shared::user::load()?.reflect;
    let command = args.summarizer.or(user.summarizer).unwrap_or_default();
    let summarizer = (!command.trim().is_empty()).then(|| Summarizer {
        command,
        timeout: std::time::Duration::from_secs(
            args.summarizer_timeout
                .or(user.summarizer_timeout_secs)
                .unwrap_or(settings.summarizer_timeout_secs),
        ),
    });
    let report =
        engine.reflect(&proposals, summarizer.as_ref().map(|s| s as &dyn Summarize), ctx.now)?;
    engine.refresh(ctx.now, &mem::progress::Silent)?;
    for failure in &report.failed {
        eprintln!("mem: reflection skipped: {failure}");
    }
    if args.json {
        crate::shared::output::print_json(&report)?;
    } else {
        let mut text = String::new();
        for w in &report.written {
            let verb = if w.updated { "updated" } else { "wrote" };
            text.push_str(&format!("{verb}\t{}\t{}\t({} sources)\n", w.id, w.path, w.sources));
        }
        if report.written.is_empty() && report.failed.is_empty() {
            text.push_str("no cluster to consolidate\n");
        }
        crate::shared::output::print_text(&text)?;
    }
    if !report.failed.is_empty() {
        bail!(
            "{} of {} clusters were not written (see above)",
            report.failed.len(),
            proposals.len()
        );
    }
    Ok(())
}

/// A command that writes a cluster's summary: the prompt on its stdin, the summary on stdout.
#[derive(Clone, Debug)]
struct Summarizer {
    /// Run with `sh -c`.
    command: String,
    /// Stopped after this long.
    timeout: std::time::Duration,
}

impl Summarize for Summarizer {
    /// Runs the command on `prompt`; a timeout, a failing exit status or an empty output is an
    /// error that says which.
    fn summarize(&self, prompt: &str) -> mem::Result<String> {
        use std::io::{Read, Write};
        use std::process::{Command, Stdio};
        use wait_timeout::ChildExt;
        let fail =
            |message: String| mem::Error::Summarizer { command: self.command.clone(), message };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("could not start: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = prompt.to_string();
        let writer = std::thread::spawn(move || {
            let _closed_early_is_fine = stdin.write_all(input.as_bytes());
        });
        let mut stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut err = Vec::new();
            let _ = stderr.read_to_end(&mut err);
            err
        });
        let status = match child.wait_timeout(self.timeout).map_err(|e| fail(e.to_string()))? {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("timed out after {} s", self.timeout.as_secs_f64())));
            }
        };
        let _ = writer.join();
        let out = reader.join().ok().and_then(|r| r.ok()).unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        if !status.success() {
            let err = String::from_utf8_lossy(&err);
            let first = err.lines().next().unwrap_or("").trim();
            return Err(fail(format!(
                "failed ({status}){}",
                if first.is_empty() { String::new() } else { format!(": {first}") }
            )));
        }
        let out = String::from_utf8_lossy(&out).trim().to_string();
        if out.is_empty() {
            return Err(fail("printed nothing".into()));
        }
        Ok(out)
    }
}
