//! The state of a session as a projection of its events: a compact Markdown text to continue
//! from (goal, the agent's plan, last prompts, files touched, commands run and their outcome,
//! open problems, last answer), within a character budget.

use std::collections::HashMap;

use crate::agent::Agent;
use crate::capture::inline_code;
use crate::format::{clip, whole_second};

use super::events::PLAN_TOOLS;
use super::{Kind, LoggedEvent, Session};

/// What a session's events add up to, before it is cut to a budget.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Prompts, with their turn.
    pub prompts: Vec<(i64, String)>,
    /// Files written, the most recently touched last, with how many calls wrote each.
    pub files: Vec<(String, usize)>,
    /// Commands run: turn, command, outcome.
    pub commands: Vec<(i64, String, Outcome)>,
    /// The checkpoint taken before each turn that has one.
    pub checkpoints: Vec<(i64, String)>,
    /// The agent's last plan (task lines), with its turn.
    pub plan: Option<(i64, String)>,
    /// The last assistant message, with its turn.
    pub answer: Option<(i64, String)>,
    /// The last turn of the events.
    pub turn: i64,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit status 0.
    Passed,
    /// A non-zero exit status.
    Failed(i64),
    /// A result without an exit status.
    Done,
    /// No result in the log (still running, or interrupted).
    NoResult,
}

impl State {
    /// Folds `events` (in log order).
    pub fn of(events: &[LoggedEvent]) -> State {
        let mut state = State::default();
        let mut calls: HashMap<&str, usize> = HashMap::new();
        let mut files: Vec<(String, usize)> = Vec::new();
        for event in events {
            state.turn = state.turn.max(event.turn);
            match event.kind {
                Kind::Prompt => state.prompts.push((event.turn, event.text.clone())),
                Kind::Assistant => state.answer = Some((event.turn, event.text.clone())),
                Kind::Checkpoint => {
                    if let Some(id) = &event.checkpoint {
                        state.checkpoints.push((event.turn, id.clone()));
                    }
                }
                Kind::Meta => {}
                Kind::ToolCall => {
                    if let Some(tool) = event.tool.as_deref().filter(|t| PLAN_TOOLS.contains(t)) {
                        let plan = event.text.strip_prefix(tool).unwrap_or(&event.text);
                        if plan.trim_start().starts_with("- [") {
                            state.plan = Some((event.turn, plan.trim().to_string()));
                        }
                    }
                    for file in &event.files {
                        match files.iter().position(|(f, _)| f == file) {
                            Some(i) => {
                                let (f, n) = files.remove(i);
                                files.push((f, n + 1));
                            }
                            None => files.push((file.clone(), 1)),
                        }
                    }
                    if let Some(command) = &event.command {
                        if let Some(id) = &event.call_id {
                            calls.insert(id, state.commands.len());
                        }
                        state.commands.push((event.turn, command.clone(), Outcome::NoResult));
                    }
                }
                Kind::ToolResult => {
                    let index = match (&event.call_id, event.tool.as_deref()) {
                        (Some(id), _) => calls.get(id.as_str()).copied(),
                        // A `!` command's output follows it.
                        (None, Some("!")) => state.commands.len().checked_sub(1),
                        _ => None,
                    };
                    if let Some(i) = index {
                        state.commands[i].2 = match event.status {
                            Some(0) => Outcome::Passed,
                            Some(code) => Outcome::Failed(code),
                            None => Outcome::Done,
                        };
                    }
                }
            }
        }
        state.files = files;
        state
    }

    /// Problems still open at the end of the events: commands whose last run failed, and a
    /// last prompt without an answer after it.
    pub fn problems(&self) -> Vec<String> {
        let mut last: Vec<(&str, i64, Outcome)> = Vec::new();
        for (turn, command, outcome) in &self.commands {
            last.retain(|(c, _, _)| *c != command.as_str());
            last.push((command, *turn, *outcome));
        }
        let mut problems: Vec<String> = last
            .iter()
            .filter_map(|(command, turn, outcome)| match outcome {
                Outcome::Failed(code) => Some(format!(
                    "{} failed (exit {code}) at turn {turn}, not run successfully since",
                    inline_code(&clip(command, 160))
                )),
                _ => None,
            })
            .collect();
        let answered = self.answer.as_ref().is_some_and(|(turn, _)| *turn >= self.turn);
        if self.turn > 0 && !answered {
            problems.push(format!("turn {} has no answer in the log (interrupted?)", self.turn));
        }
        problems
    }
}

/// How much of each part a rendering shows.
#[derive(Clone, Copy, Debug)]
struct Limits {
    plan: usize,
    prompts: usize,
    files: usize,
    commands: usize,
    problems: usize,
    goal_chars: usize,
    item_chars: usize,
    answer_chars: usize,
}

impl Limits {
    const FULL: Limits = Limits {
        plan: 12,
        prompts: 6,
        files: 25,
        commands: 15,
        problems: 8,
        goal_chars: 1000,
        item_chars: 400,
        answer_chars: 1500,
    };

    /// These limits scaled by `f` (each at least one item and a few dozen characters).
    fn scaled(self, f: f64) -> Limits {
        let n = |x: usize| ((x as f64 * f).ceil() as usize).max(1);
        let c = |x: usize| ((x as f64 * f) as usize).max(60);
        Limits {
            plan: n(self.plan),
            prompts: n(self.prompts),
            files: n(self.files),
            commands: n(self.commands),
            problems: n(self.problems),
            goal_chars: c(self.goal_chars),
            item_chars: c(self.item_chars),
            answer_chars: c(self.answer_chars),
        }
    }
}

/// The Markdown state of `session` from its `events`, at most `budget` characters: every part
/// is shortened together until it fits (the header and the goal first in line).
pub fn render(session: &Session, events: &[LoggedEvent], budget: usize) -> String {
    let state = State::of(events);
    let mut f = 1.0;
    loop {
        let text = render_with(session, &state, Limits::FULL.scaled(f));
        if text.chars().count() <= budget {
            return text;
        }
        if f < 0.02 {
            let cut = clip(&text, budget.saturating_sub(1));
            return cut;
        }
        f *= 0.7;
    }
}

fn render_with(session: &Session, state: &State, limits: Limits) -> String {
    let mut out = format!("# Resume session {}\n\n", session.id);
    let agent = session.agent.map_or("Agent", Agent::title);
    let mut header = format!("{agent} session");
    if let Some(project) = &session.project {
        header.push_str(&format!(" in {}", inline_code(project)));
    }
    if let Some(at) = session.started_at {
        header.push_str(&format!(", started {}", whole_second(at)));
    }
    if let Some(at) = session.last_at {
        header.push_str(&format!(", last event {}", whole_second(at)));
    }
    header.push_str(&format!("; {} turns", state.turn));
    let settings: Vec<String> = [("model", &session.model), ("permission mode", &session.mode)]
        .iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| format!("{name} {}", one_line(v, 80))))
        .collect();
    if !settings.is_empty() {
        header.push_str(&format!(" ({})", settings.join(", ")));
    }
    header.push_str(&format!(". Full log: `mem session show {}`", session.id));
    if let Some(memory) = &session.memory {
        header.push_str(&format!("; digest: memory `{memory}`"));
    }
    out.push_str(&header);
    out.push_str(".\n");

    if let Some((_, goal)) = state.prompts.first() {
        out.push_str(&format!("\n## Goal\n\n{}\n", clip(goal.trim(), limits.goal_chars)));
    }
    if let Some((turn, plan)) = &state.plan {
        let lines: Vec<&str> = plan.lines().collect();
        // The plan's lines in progress or to do first, when it must be cut.
        let open: Vec<&str> = lines.iter().copied().filter(|l| !l.starts_with("- [x]")).collect();
        let done = lines.len() - open.len();
        out.push_str(&format!("\n## Plan (turn {turn})\n\n"));
        let shown = match done > 0 && lines.len() > limits.plan {
            true => {
                out.push_str(&format!("- {done} steps done\n"));
                open
            }
            false => lines,
        };
        for line in shown.iter().take(limits.plan) {
            out.push_str(&format!("{}\n", clip(line, limits.item_chars)));
        }
    }
    let later = state.prompts.get(1..).unwrap_or_default();
    if !later.is_empty() {
        out.push_str("\n## Last prompts\n\n");
        let shown = &later[later.len().saturating_sub(limits.prompts)..];
        if shown.len() < later.len() {
            out.push_str(&format!("- … {} earlier prompts\n", later.len() - shown.len()));
        }
        for (turn, text) in shown {
            let checkpoint = state.checkpoints.iter().rev().find(|(t, _)| t == turn);
            let rewind = checkpoint
                .map(|(_, id)| format!(" (before it: checkpoint {id})"))
                .unwrap_or_default();
            out.push_str(&format!(
                "- turn {turn}{rewind}: {}\n",
                one_line(text, limits.item_chars)
            ));
        }
    }
    if !state.files.is_empty() {
        out.push_str("\n## Files touched\n\n");
        let shown = &state.files[state.files.len().saturating_sub(limits.files)..];
        if shown.len() < state.files.len() {
            out.push_str(&format!("- … {} more\n", state.files.len() - shown.len()));
        }
        for (file, n) in shown.iter().rev() {
            let times = if *n == 1 { String::new() } else { format!(" ({n} writes)") };
            out.push_str(&format!(
                "- {}{times}\n",
                inline_code(&one_line(file, limits.item_chars))
            ));
        }
    }
    if !state.commands.is_empty() {
        out.push_str("\n## Commands run\n\n");
        let all = &state.commands;
        let shown = &all[all.len().saturating_sub(limits.commands)..];
        if shown.len() < all.len() {
            out.push_str(&format!("- … {} earlier commands\n", all.len() - shown.len()));
        }
        for (turn, command, outcome) in shown {
            let outcome = match outcome {
                Outcome::Passed => "passed".to_string(),
                Outcome::Failed(code) => format!("failed (exit {code})"),
                Outcome::Done => "done".to_string(),
                Outcome::NoResult => "no result".to_string(),
            };
            out.push_str(&format!(
                "- turn {turn}: {} → {outcome}\n",
                inline_code(&one_line(command, limits.item_chars))
            ));
        }
    }
    let problems = state.problems();
    if !problems.is_empty() {
        out.push_str("\n## Open problems\n\n");
        for problem in problems.iter().rev().take(limits.problems) {
            out.push_str(&format!("- {problem}\n"));
        }
    }
    if let Some((turn, answer)) = &state.answer {
        out.push_str(&format!(
            "\n## Last answer (turn {turn})\n\n{}\n",
            clip(answer.trim(), limits.answer_chars)
        ));
    }
    out
}

/// `s` on one line (every run of whitespace one space), cut to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    clip(&s.split_whitespace().collect::<Vec<_>>().join(" "), max)
}
