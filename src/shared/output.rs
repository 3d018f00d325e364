//! What the commands print: text and JSON on stdout (terminal escapes dropped), tables, ages,
//! a memory as JSON, a refresh's problems on stderr, and errors on one line.

use std::io::Write;

use anyhow::Result;
use mem::RefreshReport;

/// Prints a refresh's notices and problems on stderr, one line each.
pub fn print_problems(report: &RefreshReport) {
    for line in problem_lines(report) {
        eprintln!("{line}");
    }
}

/// Whether `--verbose` was given: every problem on its own line.
pub static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A refresh's notices and problems as [`print_problems`] prints them: one line per kind of
/// problem, with a count and the first example, or every problem with `--verbose`.
pub fn problem_lines(report: &RefreshReport) -> Vec<String> {
    let verbose = VERBOSE.load(std::sync::atomic::Ordering::Relaxed);
    let mut lines: Vec<String> =
        report.notices.iter().map(|notice| format!("mem: notice: {notice}")).collect();
    lines.extend(report.warnings.iter().map(|warning| format!("mem: warning: {warning}")));
    lines.extend(report.bad.iter().map(|bad| format!("{bad}  [skipped]")));
    lines.extend(
        report
            .scan_issues
            .iter()
            .map(|issue| format!("{}: {}  [skipped]", issue.path.display(), issue.message)),
    );
    lines.extend(report.duplicates.iter().map(|(id, paths)| {
        format!("mem: warning: id {id:?} is used by {} files: {}", paths.len(), paths.join(", "))
    }));
    // Files that are skipped are always listed one by one; warnings about files that are
    // read are summarised per kind.
    let kinds: [(&str, Vec<String>); 1] = [(
        "memories are created after now (their age counts as zero)",
        report
            .future
            .iter()
            .map(|(path, created)| {
                format!(
                    "{path}: warning: created {created} is in the future; its age counts as zero"
                )
            })
            .collect(),
    )];
    for (kind, all) in kinds {
        match all.as_slice() {
            [] => {}
            [one] => lines.push(one.clone()),
            [first, ..] if !verbose => lines.push(format!(
                "mem: warning: {} {kind}; e.g. {first}  (--verbose lists all)",
                all.len()
            )),
            _ => lines.extend(all),
        }
    }
    lines
}

/// A memory as JSON, the fields `mem show --json` and the MCP tool `get` share: the file's
/// own fields, its whole front-matter and its body.
pub fn memory_json(path: &str, memory: &mem::Memory) -> serde_json::Value {
    serde_json::json!({
        "id": memory.id(),
        "path": path,
        "title": memory.title(),
        "type": memory.kind(),
        "importance": memory.importance(),
        "created": memory.created(),
        "tags": memory.tags(),
        "source": memory.source(),
        "front_matter": memory.front_matter(),
        "body": memory.body(),
    })
}

/// Writes `value` as pretty JSON and a newline to stdout.
pub fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let text = escape_controls(&serde_json::to_string_pretty(value)?);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    Ok(())
}

/// JSON text with DEL and the C1 control characters (U+0080 to U+009F, CSI among them) escaped
/// too: serde_json escapes only those below U+0020, and a terminal acts on the others. They
/// can only stand inside strings, so the text stays the same JSON.
pub fn escape_controls(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes text to stdout.
pub fn print_text(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // A memory edited by hand may hold terminal escapes: they are dropped, never acted on.
    out.write_all(mem::format::without_controls(text).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A borderless table whose columns line up.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(header.iter().map(comfy_table::Cell::new));
    t
}

/// A table as text, without the padding at the end of each line.
pub fn render(table: &comfy_table::Table) -> String {
    table.lines().map(|l| l.trim_end().to_string() + "\n").collect()
}

/// Ages as people say them: 5h, 12d, 8mo, 3y.
pub fn age(days: f64) -> String {
    if days < 1.0 {
        format!("{}h", (days * 24.0).floor() as i64)
    } else if days < 60.0 {
        format!("{}d", days.floor() as i64)
    } else if days < 730.0 {
        format!("{}mo", (days / 30.44).floor() as i64)
    } else {
        format!("{}y", (days / 365.25).floor() as i64)
    }
}

/// Whether an error is a write to a closed pipe (`mem recall ... | head`), which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error and its causes on one line, leaving out a cause its effect already quotes (the
/// library's messages include their source).
pub fn describe(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}
