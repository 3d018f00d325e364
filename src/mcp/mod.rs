//! `mem mcp`: a Model Context Protocol server on stdin/stdout (the `rmcp` SDK), so that an AI
//! agent can recall, remember, read, list, forget and reinforce memories of one root. It opens
//! the root only once a client has initialized (a client that leaves before leaves nothing
//! written), then holds one [`Engine`] for its lifetime, watches its files and refreshes the
//! index before each tool call from what changed (so files changed by other processes are
//! seen, and a call after no change reads no file) and reads the clock per call. Only protocol
//! messages go to stdout; logs go to stderr. A line filter stands between stdin and rmcp, so that every line
//! gets an answer: lone surrogate escapes are repaired, anything else that is not JSON is
//! answered with a JSON-RPC parse error (rmcp would drop it). A method it does not have gets a
//! -32601 that says so. See docs/mcp.md.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::{Context as _, Result, anyhow, bail};
use jiff::Timestamp;
use mem::config::RecallMode;
use mem::engine::{LayeredRecall, Layers, OnSimilar, Remembered, Similar};
use mem::store::Layer;
use mem::{Engine, MemoryId, MemoryType, NewMemory, RecallOptions};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ServiceExt, tool, tool_handler, tool_router};
use serde_json::json;
use tokio::sync::mpsc;

use self::args::{
    ForgetArgs, GetArgs, MAX_RESULTS, MAX_TEXT_BYTES, RecallArgs, RecentArgs, RememberArgs,
    UsedArgs, with_descriptions,
};
use self::batch::Session;
use self::methods::Served;
use self::stdio::{filter, forward, write_lines};
use crate::shared::Globals;
use crate::shared::served::{Listen, Socket};
use crate::shared::team::Change;

mod args;
mod batch;
mod held;
mod methods;
mod sessions;
mod stdio;
mod team;

/// Arguments of `mem mcp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Started by the user's own agent configuration, which runs it in every folder (`mem
    /// setup --scope user` writes it): a memory root found above the working directory that was
    /// not made, set up or allowed on this machine (a cloned repository's .memory/) is held back:
    /// the tools that list give nothing of it and say why, the others refuse; both name `mem
    /// allow`.
    #[arg(long)]
    user_scope: bool,
}

/// Serves the root on stdio until the client closes stdin.
pub fn run(args: Args, ctx: &Globals, listen: Listen) -> Result<()> {
    // Nothing is written before a client completes the handshake (a client that only probes,
    // or closes at once, leaves no `.mem/`), but a root that cannot be served stops us here.
    let (root, _) = ctx.locate_root(None)?;
    if root.exists() {
        mem::config::Config::load(&root)
            .with_context(|| format!("cannot open memory root {}", root.display()))?;
    }
    eprintln!("mem: MCP server for {} on stdio", root.display());
    let listening = Arc::new(Mutex::new(None));
    let server = Served(MemServer {
        user_scope: args.user_scope,
        globals: ctx.clone(),
        layers: Arc::new(Mutex::new(None)),
        listening: Arc::clone(&listening),
        listen,
        fixed_now: ctx.fixed_now,
        reported: Mutex::new(HashSet::new()),
        tool_router: with_descriptions(MemServer::tool_router() + MemServer::session_router()),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        // stdin -> filter -> rmcp -> forward -> write_lines -> stdout. The filter's parse errors
        // go to write_lines too, the one writer of stdout, which writes whole lines.
        let (rmcp_in, to_rmcp) = tokio::io::duplex(64 * 1024);
        let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
        let (lines, outgoing) = mpsc::channel(16);
        let session = Arc::new(Session::default());
        let writer = tokio::spawn(write_lines(outgoing));
        let reader = tokio::spawn(filter(to_rmcp, lines.clone(), Arc::clone(&session)));
        tokio::spawn(forward(from_rmcp, lines, session));
        let served = match server.serve((rmcp_in, rmcp_out)).await {
            Ok(service) => service.waiting().await.context("the MCP server stopped abnormally"),
            // stdin ended before any handshake: a probe, or a client that gave up. Nothing was
            // opened; that is a normal end.
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                eprintln!("mem: the client closed before the handshake; nothing was opened");
                Ok(rmcp::service::QuitReason::Closed)
            }
            Err(e) => Err(e).context("the MCP client did not complete the initialize handshake"),
        };
        // At stdin's end the filter is done; if rmcp stopped first, stop it, so the writer ends.
        reader.abort();
        let written = writer.await.context("the stdout writer stopped abnormally")?;
        served?;
        written.context("cannot write to stdout")
    });
    // A read of stdin may still wait on a blocking thread: do not wait for it.
    runtime.shutdown_background();
    // The hooks' socket goes with the server.
    drop(lock(&listening).take());
    result
}

/// The server: one root, opened once a client has initialized, shared by the tool calls.
struct MemServer {
    /// `--user-scope`: a root not in this machine's record is held back (`held.rs`).
    user_scope: bool,
    /// What `mem mcp` was started with, to open the root.
    globals: Globals,
    /// The open root (and user layer); `None` until a client completes the handshake or
    /// makes its first call, and while it cannot be opened. Shared with the hooks' socket.
    layers: Arc<Mutex<Option<Layers>>>,
    /// The socket that answers the root's hooks once the root is open, and what starts it
    /// (`src/served.rs`'s `listen`, handed over by `crate::commands`).
    listening: Arc<Mutex<Option<Box<dyn Socket>>>>,
    listen: Listen,
    /// `--now`/`MEM_NOW`; without it, each call reads the clock.
    fixed_now: Option<Timestamp>,
    /// Refresh problems already written to stderr, so that a long session does not repeat them.
    reported: Mutex<HashSet<String>>,
    tool_router: ToolRouter<MemServer>,
}

impl MemServer {
    /// The open layers in `slot`, opening them first if they are not: the root found as every
    /// command finds it (the per-user one created on first use), the user layer beside it,
    /// the watch on both, and the embedding model, loaded once and kept for every call.
    /// A root held back (`held.rs`) is not opened: the error says why.
    fn open<'a>(&self, slot: &'a mut Option<Layers>) -> Result<&'a mut Layers> {
        if slot.is_none()
            && let Some(why) = self.held_back()
        {
            bail!("{why}");
        }
        self.load(slot)
    }

    /// [`MemServer::open`] once the held-back rule was checked.
    fn load<'a>(&self, slot: &'a mut Option<Layers>) -> Result<&'a mut Layers> {
        if let Some(layers) = slot {
            return Ok(layers);
        }
        let mut layers = self.globals.layers_near(None)?;
        if let Some(user) = layers.engine(Layer::User) {
            eprintln!("mem: user layer {}", user.files.root().display());
        }
        // The operating system reports changes: a call that finds none reads no file.
        for (layer, reason) in layers.watch() {
            eprintln!(
                "mem: warning: cannot watch the {} root for changes ({reason}); each call checks \
                 its folders instead",
                layer.as_str()
            );
        }
        let engine = layers.project();
        if engine.vectors.model().source().is_some() {
            match engine.vectors.model().embedder() {
                Ok(embedder) => eprintln!(
                    "mem: embedding model loaded from {}",
                    embedder.source().dir.display()
                ),
                Err(e) => eprintln!("mem: warning: {e}; recall uses BM25 only"),
            }
        }
        Ok(slot.insert(layers))
    }
}

#[tool_router]
impl MemServer {
    /// Recall: the memories most relevant to a task.
    #[tool(
        description = "Recall long-term memories relevant to a task (the description \
        `recall_description` gives).",
        annotations(
            title = "Recall memories",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn recall(&self, Parameters(args): Parameters<RecallArgs>) -> CallToolResult {
        self.listing("hits", false, |layers, now| {
            let limit = check_count("k", args.k)?;
            let options = RecallOptions {
                kinds: args.kind.map(MemoryType::from).into_iter().collect(),
                tags: args.tags,
                limit,
                record: layers.project().files.config().usage.record_retrievals,
                mode: args.mode.map(RecallMode::from),
                min_strength: mem::engine::DEFAULT_MIN_STRENGTH,
                ..Default::default()
            };
            let only = args.layer.as_deref().map(str::parse::<Layer>).transpose();
            let only = only.map_err(|e| anyhow::anyhow!("layer: {e}"))?;
            let LayeredRecall { recall, user_report } =
                layers.recall_in(&args.query, &options, only, now, &mem::progress::Silent)?;
            self.log_problems(&recall.report);
            if let Some(report) = &user_report {
                self.log_problems(report);
            }
            let mut answer = json!({ "hits": recall.hits });
            // The team store joins a recall of every layer, as `mem recall`'s.
            if only.is_none() && options.tags.is_empty() {
                let asked = (args.query.as_str(), limit, options.kinds.as_slice());
                team::join_recall(&mut answer, layers.project(), &recall, asked);
            }
            to_json(&answer)
        })
    }

    /// Remember: write a new memory.
    #[tool(
        description = "Remember something for later sessions: writes a new memory file and \
        returns {id, path} (path relative to the memory root). An exact duplicate of an existing \
        memory is not written again: its id comes back with duplicate: true and it counts as \
        used. A near-duplicate is refused with an error naming the similar memory; pass \
        force: true to keep both, or forget the old one first.",
        annotations(
            title = "Remember",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn remember(&self, Parameters(args): Parameters<RememberArgs>) -> CallToolResult {
        self.call(true, |layers, now| {
            let layer = args.layer.map_or(Layer::Project, Layer::from);
            let Some(engine) = layers.engine(layer) else {
                if let Some(problem) = layers.user_problem() {
                    bail!("{problem}");
                }
                bail!("there is no user layer: the user configuration names none ([layers] user)");
            };
            let limit = engine.files.config().limits.max_file_bytes.min(MAX_TEXT_BYTES);
            let size = args.text.len() as u64;
            if size > limit {
                bail!(
                    "the text is {size} bytes, over the limit of {limit} bytes (64 KiB, or \
                     [limits] max_file_bytes of mem.toml if smaller); split it into smaller \
                     memories"
                );
            }
            if !(1..=10).contains(&args.importance) {
                bail!("importance must be 1 to 10, got {}", args.importance);
            }
            let new = NewMemory {
                text: args.text,
                kind: args.kind.into(),
                importance: args.importance,
                tags: args.tags,
                title: None,
                source: args.source,
            };
            let on_similar = if args.force { OnSimilar::Keep } else { OnSimilar::Refuse };
            match engine.remember(new, on_similar, now)? {
                Remembered::Added { added, .. } => {
                    // The user layer's remote gets it in the background.
                    crate::shared::remote::after_write(engine.files.root());
                    to_json(&added)
                }
                Remembered::Duplicate { id, path, .. } => {
                    to_json(&json!({ "id": id, "path": path, "duplicate": true }))
                }
                Remembered::Similar(Similar { id, path, similarity, measure }) => bail!(
                    "a very similar memory exists: {id} ({path}), {measure} similarity \
                     {similarity:.2}; not written. Call remember again with force: true to keep \
                     both, or forget {id} first if the new text replaces it"
                ),
            }
        })
    }

    /// Get: one memory, whole.
    #[tool(
        description = "Read one memory by id: id, path, title, type, importance, created, tags, \
        source, body and the whole front_matter.",
        annotations(
            title = "Get a memory",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn get(&self, Parameters(args): Parameters<GetArgs>) -> CallToolResult {
        let key = crate::shared::team::parse_key(&args.id);
        // The team store's memory: nothing of the roots is read for it.
        self.call(key.is_none(), |layers, _| {
            if let Some((project, id)) = key {
                return to_json(&team::get(&args.id, project, id)?);
            }
            let id = MemoryId::new(&args.id)?;
            let layer = layers.locate(id.as_str()).unwrap_or(Layer::Project);
            let engine = engine_of(layers, id.as_str())?;
            let (path, memory) = engine.files.get(id.as_str())?;
            if layer == Layer::Project {
                return to_json(&crate::shared::output::memory_json(&path, &memory));
            }
            // Another layer's file is not under the project's root: its whole path.
            let path = engine.files.root().join(&path).display().to_string();
            let mut json = crate::shared::output::memory_json(&path, &memory);
            json["layer"] = json!(layer.as_str());
            to_json(&json)
        })
    }

    /// Recent: the newest memories.
    #[tool(
        description = "List the newest memories, newest first, as {memories} (invalidated ones \
        included, with their invalid_at): each with id, path, title, type, importance, created, last_access, tags, \
        source, invalid_at, superseded_by.",
        annotations(
            title = "Recent memories",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn recent(&self, Parameters(args): Parameters<RecentArgs>) -> CallToolResult {
        self.listing("memories", true, |layers, _| {
            let n = check_count("n", args.n)?;
            let kinds: Vec<MemoryType> = args.kind.map(MemoryType::from).into_iter().collect();
            let layered = layers.layered();
            let mut records = Vec::new();
            // The ids the local layers hold: the team's list leaves them out.
            let mut local = Vec::new();
            for layer in [Layer::Project, Layer::User] {
                let Some(engine) = layers.engine(layer) else { continue };
                for record in engine.files.list(&kinds, &[])? {
                    let mut value = serde_json::to_value(&record)?;
                    if layered {
                        value["layer"] = json!(layer.as_str());
                    }
                    local.push(record.id.to_string());
                    records.push((record.created, value));
                }
            }
            // Newest first; the project's first on equal times (a stable sort).
            records.sort_by_key(|r| std::cmp::Reverse(r.0));
            records.truncate(n);
            let memories: Vec<serde_json::Value> = records.into_iter().map(|(_, v)| v).collect();
            let mut answer = json!({ "memories": memories });
            team::join_recent(&mut answer, n, &kinds, &local);
            to_json(&answer)
        })
    }

    /// Forget: invalidate a memory.
    #[tool(
        description = "Mark a memory as no longer true, from now on: recall leaves it out. The \
        file is kept, with invalid_at and the reason. Returns {id, path, invalid_at}.",
        annotations(
            title = "Forget a memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn forget(&self, Parameters(args): Parameters<ForgetArgs>) -> CallToolResult {
        self.call(true, |layers, now| {
            crate::shared::team::refuse_key(&args.id, Change::Forget)?;
            let id = MemoryId::new(&args.id)?;
            crate::shared::words::refuse_read_only(layers, id.as_str())?;
            to_json(&engine_of(layers, id.as_str())?.files.forget(
                id.as_str(),
                Some(&args.reason),
                now,
            )?)
        })
    }

    /// Used: say memories helped.
    #[tool(
        description = "Record that memories helped with the task (after recall): they grow \
        stronger, decay more slowly and rank higher later. With confirm: true, also record that \
        the code they cite was checked and is right (clears a \"may be outdated\" note). \
        Returns {used: [{id, path}]}.",
        annotations(
            title = "Mark memories used",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn used(&self, Parameters(args): Parameters<UsedArgs>) -> CallToolResult {
        self.call(true, |layers, now| {
            if args.ids.is_empty() {
                bail!("give at least one id");
            }
            for id in &args.ids {
                crate::shared::team::refuse_key(id, Change::Used)?;
                MemoryId::new(id)?;
            }
            // Each id goes to the layer that holds it (an unknown id is the project's error).
            let mut by_layer: Vec<(Layer, Vec<String>)> = Vec::new();
            for id in &args.ids {
                let layer = layers.locate(id).unwrap_or(Layer::Project);
                match by_layer.iter_mut().find(|(l, _)| *l == layer) {
                    Some((_, ids)) => ids.push(id.clone()),
                    None => by_layer.push((layer, vec![id.clone()])),
                }
            }
            // A confirmation that cannot be made is refused before anything is recorded, so
            // that an agent that retries without it counts each use once.
            if args.confirm
                && let Some((layer, ids)) = by_layer.iter().find(|(l, _)| *l != Layer::Project)
            {
                bail!(
                    "only project memories cite code; {} {} the {} layer's: nothing was recorded",
                    ids.join(", "),
                    if ids.len() == 1 { "is" } else { "are" },
                    layer.as_str()
                );
            }
            let mut used = Vec::new();
            for (layer, ids) in by_layer {
                let engine = layers.engine(layer).expect("located in it");
                let (paths, report) = engine.used(&ids, now, true)?;
                if args.confirm {
                    for id in &ids {
                        engine.confirm(id, now)?;
                    }
                }
                for failure in &report.failed {
                    eprintln!("mem: warning: recorded, but not written to the file yet: {failure}");
                }
                used.extend(
                    ids.iter().zip(paths).map(|(id, path)| json!({ "id": id, "path": path })),
                );
            }
            to_json(&json!({ "used": used }))
        })
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "mem",
    instructions = "Long-term memory for this project, kept as Markdown files. Call recall with \
    the task at hand before you start; call used with the ids of the memories that helped; call \
    remember for facts, decisions, events and procedures worth keeping; call forget when a \
    memory is no longer true. Past agent sessions: session_search finds what was said or run, \
    session_resume gives a session's state to continue from."
)]
impl rmcp::ServerHandler for MemServer {
    /// The handshake is complete: open the root now, so that the first call does not wait for
    /// the model. A root that cannot be opened is said on stderr; each call then says why.
    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        if let Some(why) = self.held_back() {
            return eprintln!("mem: {why}");
        }
        if let Err(e) = self.load(&mut lock(&self.layers)) {
            eprintln!("mem: error: {}", crate::shared::output::describe(&e));
            return;
        }
        // The root and the model are loaded: the root's hooks can be answered here.
        match (self.listen)(&self.globals, Arc::clone(&self.layers)) {
            Ok(Some(listening)) => {
                eprintln!(
                    "mem: hooks of this root are answered here ({})",
                    listening.path().display()
                );
                *lock(&self.listening) = Some(listening);
            }
            Ok(None) => {}
            Err(why) => eprintln!("mem: warning: hooks are not served by this session: {why}"),
        }
    }

    /// A call, through the tool router; arguments that do not match a tool's schema are a tool
    /// error (rmcp's "failed to deserialize parameters: …"), written to stderr as every tool
    /// error is.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = ToolCallContext::new(self, request, context);
        let response = self.tool_router.call(call).await?;
        if let CallToolResponse::Complete(result) = &response
            && result.is_error == Some(true)
            && let Some(text) = result.content.first().and_then(|c| c.as_text())
            && text.text.starts_with("failed to deserialize parameters")
        {
            eprintln!("mem: tool error: {}", text.text);
        }
        Ok(response)
    }
}

impl MemServer {
    /// Runs one tool call: takes the engine, refreshes the index first (unless the tool does,
    /// as recall does), and turns the outcome into a tool result. Every error, and even a
    /// panic, becomes a result with `isError: true` and the message; the server goes on.
    fn call(
        &self,
        refresh: bool,
        f: impl FnOnce(&mut Layers, Timestamp) -> Result<String>,
    ) -> CallToolResult {
        let now = crate::shared::now(self.fixed_now);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut slot = lock(&self.layers);
            let layers = self.open(&mut slot)?;
            if let Some(root) = layers.missing_root() {
                bail!(
                    "the memory root {} is gone (moved or deleted since this server started); \
                     nothing was read or written: start a new session so that the server opens \
                     the root where it is now",
                    root.display()
                );
            }
            crate::shared::native::reindex(layers, now);
            if refresh {
                for (_, report) in layers.refresh_for_recall(now, &mem::progress::Silent)? {
                    self.log_problems(&report);
                }
            }
            f(layers, now)
        }))
        .unwrap_or_else(|panic| {
            let message = mem::error::panic_message(&*panic, "unknown panic");
            Err(anyhow!("internal error: {message}"))
        });
        match outcome {
            Ok(json) => CallToolResult::success(vec![ContentBlock::text(json)]),
            Err(e) => {
                let message = crate::shared::output::describe(&e);
                eprintln!("mem: tool error: {message}");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
        }
    }

    /// Writes a refresh's problems on stderr, each only the first time it is seen.
    fn log_problems(&self, report: &mem::RefreshReport) {
        let mut reported = lock(&self.reported);
        for line in crate::shared::output::problem_lines(report) {
            if reported.insert(line.clone()) {
                eprintln!("{line}");
            }
        }
    }
}

/// The engine of the layer holding memory `id` (the project's when none does, whose error
/// then names the id).
fn engine_of<'a>(layers: &'a mut Layers, id: &str) -> Result<&'a mut Engine> {
    let layer = layers.locate(id).unwrap_or(Layer::Project);
    Ok(layers.engine(layer).expect("located in it"))
}

/// Locks `mutex`, even if a panicking call poisoned it: the engine's state lives on disk, and
/// every call refreshes it from there.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `value` as compact JSON, fields in the order `mem ... --json` prints them.
fn to_json(value: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string(value)?)
}

/// `value` as a count when it is 1 to [`MAX_RESULTS`].
fn check_count(name: &str, value: u16) -> Result<usize> {
    if !(1..=MAX_RESULTS).contains(&value) {
        bail!("{name} must be 1 to {MAX_RESULTS}, got {value}");
    }
    Ok(usize::from(value))
}
