//! `mem context`: a compact Markdown block for the start of an agent session, within a
//! character budget.

use anyhow::Result;
use mem::{MemoryType, RecallOptions, Record};

use super::Context;

/// Arguments of `mem context`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also recall the memories for this task.
    #[arg(long)]
    task: Option<String>,
    /// Most characters to print; the block is cut between memories, never inside one.
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(200..))]
    budget: u64,
    /// How many key memories (procedural and semantic, most important first) to consider.
    #[arg(long, default_value_t = 12)]
    key: usize,
}

/// One memory, as a Markdown list item.
fn entry(r: &Record, body: &str) -> String {
    let text = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    let text = mem::format::clip(&text, 280);
    format!("- **{}** ({}, importance {}, `{}`): {text}\n", r.title, r.kind, r.importance, r.id)
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let mut key: Vec<Record> = engine
        .list(&[MemoryType::Procedural, MemoryType::Semantic], &[])?
        .into_iter()
        .filter(|r| r.invalid_at.is_none_or(|at| at > ctx.now))
        .collect();
    key.sort_by(|a, b| {
        b.importance
            .cmp(&a.importance)
            .then(b.last_access.cmp(&a.last_access))
            .then(a.id.cmp(&b.id))
    });
    key.truncate(args.key);

    // The task's memories come first: they are the most specific, and the budget may not
    // reach the end.
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    if let Some(task) = args.task.as_deref().filter(|t| !t.trim().is_empty()) {
        let options = RecallOptions {
            limit: 10,
            record: engine.config().usage.record_retrievals,
            ..Default::default()
        };
        let mem::Recall { hits, report, .. } =
            engine.recall(task, &options, ctx.now, &mem::progress::Silent)?;
        super::print_problems(&report);
        let mut items = Vec::new();
        for hit in &hits {
            let (_, memory) = engine.get(&hit.record.id)?;
            items.push(entry(&hit.record, memory.body()));
            shown.push(hit.record.id.clone());
        }
        sections
            .push((format!("## For the task: {}\n", mem::format::clip(task.trim(), 120)), items));
    }
    let mut items = Vec::new();
    for r in key.iter().filter(|r| !shown.contains(&r.id)) {
        let (_, memory) = engine.get(&r.id)?;
        items.push(entry(r, memory.body()));
    }
    sections.push(("## Key memories\n".to_string(), items));
    super::print_text(&assemble(&sections, args.budget as usize))
}

/// The block: a heading, then each section's items while they fit in `budget` characters;
/// when one does not, a marker line says how many were left out (it fits too).
fn assemble(sections: &[(String, Vec<String>)], budget: usize) -> String {
    let total: usize = sections.iter().map(|(_, items)| items.len()).sum();
    let mut out = String::from("# Memory (from mem)\n\n");
    let mut used = 0;
    let marker =
        |left: usize| format!("\n_… {left} more memories left out to fit {budget} characters_\n");
    let fits = |out: &str, extra: &str, left_after: usize| {
        let tail = if left_after > 0 { marker(left_after).chars().count() } else { 0 };
        out.chars().count() + extra.chars().count() + tail <= budget
    };
    'outer: for (heading, items) in sections {
        if items.is_empty() {
            continue;
        }
        let heading = format!("{heading}\n");
        for (i, item) in items.iter().enumerate() {
            let piece = if i == 0 { format!("{heading}{item}") } else { item.clone() };
            if !fits(&out, &piece, total - used - 1) {
                break 'outer;
            }
            out.push_str(&piece);
            used += 1;
        }
        out.push('\n');
    }
    if used < total {
        out.push_str(&marker(total - used));
    }
    if out.chars().count() > budget {
        // Even the heading does not fit: print only what fits of the marker line.
        return mem::format::clip(&marker(total), budget.saturating_sub(1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_over_budget_and_cut_between_items() {
        let items: Vec<String> =
            (0..20).map(|i| format!("- item {i} {}\n", "x".repeat(50))).collect();
        let sections = vec![("## Key memories\n".to_string(), items)];
        for budget in [200, 333, 600, 5000] {
            let out = assemble(&sections, budget);
            assert!(out.chars().count() <= budget, "{budget}: {}", out.chars().count());
            for line in out.lines().filter(|l| l.starts_with("- item")) {
                assert!(line.ends_with(&"x".repeat(50)), "whole items only: {line}");
            }
        }
        assert!(assemble(&sections, 600).contains("more memories left out to fit 600 characters"));
        assert!(!assemble(&sections, 5000).contains("left out"));
    }
}
