//! The team store as the front ends reach it: `[team]` of the user configuration with the
//! password from `PGPASSWORD` or `~/.pgpass` (libpq's rules: `PGPASSFILE`, a file others may
//! read is not used), the project's name (`[team] project` of the root's `mem.toml`, else its
//! repository's remote `origin`, through the library's git runner), and the model's id.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use mem::Engine;
use mem_team::settings::Host;
use mem_team::{Settings, Team};

use super::user;

pub use mem_team::publish::model_id;

/// The default budget of a recall's or a hook's wait for the team store.
pub const RECALL_TIMEOUT: Duration = Duration::from_millis(500);

/// The settings of the team store, when the user configuration names one; `timeout` bounds
/// connecting and each statement.
pub fn settings(timeout: Duration) -> Result<Option<Settings>> {
    let config = user::load()?;
    let Some(url) = config.team.url else { return Ok(None) };
    let mut settings =
        Settings { url, password: None, connect_timeout: timeout, statement_timeout: timeout };
    settings.password = password(&settings);
    Ok(Some(settings))
}

/// The settings, or an error that says how to name a team store.
pub fn required(timeout: Duration) -> Result<Settings> {
    settings(timeout)?.context(
        "no team store: set url in [team] of the user configuration file \
         (~/.config/mem/config.toml), e.g. url = \"postgres://you@db.example.com/team\"",
    )
}

/// How long a recall waits for the store: `[team] recall_timeout_ms`, else [`RECALL_TIMEOUT`].
pub fn recall_timeout() -> Duration {
    let ms = user::load().ok().and_then(|c| c.team.recall_timeout_ms);
    ms.map_or(RECALL_TIMEOUT, Duration::from_millis)
}

/// What the team layer answered a recall: its hits, or why it did not answer in time.
#[derive(Debug, Default)]
pub struct TeamAnswer {
    /// The team's memories, best first.
    pub hits: Vec<mem_team::TeamHit>,
    /// Why the store did not answer (unreachable, too slow, refused): the local layers answer
    /// alone.
    pub problem: Option<String>,
}

/// The team layer's answer to `query` within [`recall_timeout`] (connecting, and each
/// statement), with the question's vector of `model` when given; `None` when no store is
/// configured. It never fails: a problem is in the answer.
pub fn recall(
    query: &str,
    limit: usize,
    vector: Option<(String, Vec<f32>)>,
    config: &mem::Config,
) -> Option<TeamAnswer> {
    let question = mem_team::TeamQuery {
        text: query.to_string(),
        vector,
        limit,
        fusion: config.embed.fusion,
        rrf_k: config.embed.rrf_k,
        vector_weight: config.embed.vector_weight,
    };
    Some(read(|team| team.recall(&question))?.into())
}

impl From<std::result::Result<Vec<mem_team::TeamHit>, String>> for TeamAnswer {
    /// The hits, or why there are none.
    fn from(found: std::result::Result<Vec<mem_team::TeamHit>, String>) -> TeamAnswer {
        match found {
            Ok(hits) => TeamAnswer { hits, problem: None },
            Err(problem) => TeamAnswer { hits: Vec::new(), problem: Some(problem) },
        }
    }
}

/// What `f` reads from the team store within [`recall_timeout`] (connecting, and each
/// statement), or why the store did not answer; `None` when no store is configured. For the
/// front ends that read the store's memories themselves (`mem ui`'s page of a team memory,
/// the MCP tools `get` and `recent`).
pub fn read<T: Send>(
    f: impl FnOnce(&mut Team) -> mem_team::Result<T> + Send,
) -> Option<std::result::Result<T, String>> {
    let settings = match settings(recall_timeout()) {
        Ok(settings) => settings?,
        Err(e) => return Some(Err(format!("{e:#}"))),
    };
    Some(read_with(&settings, f))
}

/// What `f` reads from the store `settings` name, or why it did not answer, on a thread of its
/// own: the client runs its own runtime, which may not start inside the MCP server's or
/// `mem ui`'s.
fn read_with<T: Send>(
    settings: &Settings,
    f: impl FnOnce(&mut Team) -> mem_team::Result<T> + Send,
) -> std::result::Result<T, String> {
    let asked = std::thread::scope(|scope| {
        scope.spawn(|| open(settings).and_then(|mut team| f(&mut team))).join()
    });
    match asked {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err("the client failed".into()),
    }
}

/// A connection to the store `settings` name, its schema checked.
fn open(settings: &Settings) -> mem_team::Result<Team> {
    let mut team = Team::connect(settings)?;
    team.check_schema()?;
    Ok(team)
}

/// Why a team memory could not be read ([`get`]).
#[derive(Debug)]
pub enum Unread {
    /// No store is configured.
    NoStore,
    /// The store did not answer in time, or refused.
    Unanswered(String),
    /// It holds no live memory of that project and id that this role may see.
    Absent,
}

impl Unread {
    /// What to tell the user asking for the memory `key`.
    pub fn message(&self, key: &str) -> String {
        match self {
            Unread::NoStore => format!(
                "{key} names a memory of a team store, and none is configured: set url in \
                 [team] of the user configuration file (~/.config/mem/config.toml)"
            ),
            Unread::Unanswered(problem) => format!("the team store did not answer: {problem}"),
            Unread::Absent => format!(
                "the team store has no live memory {key} (none of that project and id, \
                 forgotten, superseded or archived since, or of a project not granted to this \
                 role)"
            ),
        }
    }
}

/// The team store's live memory `id` of `project` (`mem ui`'s page of it, the MCP tool `get`).
pub fn get(project: &str, id: &str) -> std::result::Result<mem_team::TeamMemory, Unread> {
    match read(|t| t.get(project, id)) {
        None => Err(Unread::NoStore),
        Some(Err(problem)) => Err(Unread::Unanswered(problem)),
        Some(Ok(found)) => found.ok_or(Unread::Absent),
    }
}

/// The store's hits for `question`, or why there are none: connected as `settings` say, its
/// schema checked.
fn ask(settings: &Settings, question: &mem_team::TeamQuery) -> TeamAnswer {
    open(settings).and_then(|mut team| team.recall(question)).map_err(|e| e.to_string()).into()
}

/// What starts a team memory's key.
pub const KEY_PREFIX: &str = "team:";

/// The key that names the team memory `id` of `project` wherever a front end names one (the
/// hooks' injection ledger, the MCP tools' `key`, which `get` takes): `team:PROJECT/ID`. A
/// memory id has neither `:` nor `/`, so a key is never a local memory's id.
pub fn key(project: &str, id: &str) -> String {
    format!("{KEY_PREFIX}{project}/{id}")
}

/// The project and id a [`key`] names (the project may hold `/`: the id is after the last).
pub fn parse_key(key: &str) -> Option<(&str, &str)> {
    let (project, id) = key.strip_prefix(KEY_PREFIX)?.rsplit_once('/')?;
    (!project.is_empty() && !id.is_empty()).then_some((project, id))
}

/// An error for a change asked of the team memory `key` (`Forget` or `Used`): the team layer
/// is read only; `Ok` for any other id.
pub fn refuse_key(key: &str, change: Change) -> Result<()> {
    let Some((project, id)) = parse_key(key) else { return Ok(()) };
    let (done, instead) = match change {
        Change::Forget => (
            "forgotten",
            format!(
                "it is forgotten in a root of the project {project} (`mem forget {id}` there), \
                 then `mem team push`"
            ),
        ),
        Change::Used => (
            "marked used",
            "the team store keeps no uses: give used the ids of local memories only".to_string(),
        ),
    };
    bail!(
        "{key} is a memory of the team store, a read-only layer: it cannot be {done} here, and \
         nothing was recorded; {instead}"
    )
}

/// A change a front end may be asked to make to a memory, which the team layer refuses.
#[derive(Clone, Copy, Debug)]
pub enum Change {
    /// `forget`: mark it no longer true.
    Forget,
    /// `used`: record that it helped.
    Used,
}

/// The team layer's answer to a recall of every layer (`mem recall`, the MCP `recall` tool,
/// `mem ui`'s search) whose local part is `local`: `query` with the question's vector of
/// `project`'s model when it has one, at most `limit` hits of the `kinds` asked (all when
/// empty), none that a local layer recalled already; `None` when no store is configured.
pub fn join_recall(
    project: &mut Engine,
    local: &mem::Recall,
    query: &str,
    limit: usize,
    kinds: &[mem::MemoryType],
) -> Option<TeamAnswer> {
    let vector = question_vector(project, query, local);
    let config = project.files.config().clone();
    let mut answer = recall(query, limit, vector, &config)?;
    answer.hits.retain(|h| kinds.is_empty() || kinds.iter().any(|k| k.as_str() == h.memory.kind));
    // A memory of a local layer is recalled from there.
    answer.hits.retain(|h| !local.hits.iter().any(|l| l.record.id == h.memory.id));
    Some(answer)
}

/// A team layer's hit as JSON: its memory as [`memory_json`] gives it, with its relevance and
/// cosine.
pub fn hit_json(hit: &mem_team::TeamHit) -> serde_json::Value {
    let mut json = memory_json(&hit.memory, true);
    json["relevance"] = hit.relevance.into();
    json["cosine"] = hit.cosine.into();
    json
}

/// A team memory as JSON, labelled as a hit is ([`hit_json`]), with when the store received
/// it; its body only when `body` (the MCP tool `get`, not `recent`'s list).
pub fn memory_json(memory: &mem_team::TeamMemory, body: bool) -> serde_json::Value {
    let mut json = serde_json::json!({
        "layer": "team",
        "key": key(&memory.project, &memory.id),
        "project": memory.project,
        "author": memory.author,
        "id": memory.id,
        "title": memory.title,
        "type": memory.kind,
        "importance": memory.importance,
        "created": memory.created,
        "updated": memory.updated,
        "pushed": memory.pushed,
    });
    if body {
        json["body"] = memory.body.clone().into();
    }
    json
}

/// The longest a prompt hook waits for the team store, connecting and per statement (less when
/// `[team] recall_timeout_ms` is less): past it the hook answers from the local layers.
pub const HOOK_TIMEOUT: Duration = Duration::from_millis(250);

/// How long the hooks of a root leave the team store alone after it failed one: the next
/// hooks answer as fast as without a team; one tries again after this.
pub const HOOK_BACKOFF: Duration = Duration::from_secs(60);

/// The file in a root's `.mem/` that says when and why the team store last failed a hook.
const FAILED_FILE: &str = "team-failed";

/// The team store's answer to a prompt hook, asked on a thread of its own while the local
/// layers answer: full text only (no model is loaded for it), within [`HOOK_TIMEOUT`].
pub struct HookAsk {
    answer: std::sync::mpsc::Receiver<TeamAnswer>,
    deadline: std::time::Instant,
    failed: std::path::PathBuf,
    origin: String,
}

/// Asks the team store for `prompt`'s memories for a hook of the root `root`, when one is
/// configured and it did not fail a hook of this root in the last [`HOOK_BACKOFF`].
pub fn ask_for_hook(root: &Path, prompt: &str) -> Option<HookAsk> {
    let timeout = recall_timeout().min(HOOK_TIMEOUT);
    let settings = match settings(timeout) {
        Ok(found) => found?,
        Err(_) => return None,
    };
    let failed = mem::store::state_dir(root).ok()?.join(FAILED_FILE);
    let recent = std::fs::symlink_metadata(&failed)
        .and_then(|m| m.modified())
        .is_ok_and(|at| at.elapsed().is_ok_and(|age| age < HOOK_BACKOFF));
    if recent {
        return None;
    }
    let origin = settings.config().map(|(c, _)| mem_team::settings::target(&c)).ok()?;
    let question = mem_team::TeamQuery {
        text: prompt.to_string(),
        vector: None,
        limit: 5,
        fusion: mem::config::Fusion::default(),
        rrf_k: mem::config::EmbedConfig::default().rrf_k,
        vector_weight: mem::config::EmbedConfig::default().vector_weight,
    };
    let (tx, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(ask(&settings, &question));
    });
    let deadline = super::bar::stopwatch() + timeout * 2;
    Some(HookAsk { answer, deadline, failed, origin: format!("team store {origin}") })
}

impl HookAsk {
    /// The team's block for a context that holds `held` and sends `local` (ids) already,
    /// within `budget` characters, with what the ledger records of it; `None` when the store
    /// did not answer in time (then the root's hooks leave it alone for [`HOOK_BACKOFF`], and
    /// the reason is kept for `mem health`, with the time `now`) or had nothing new.
    pub fn block(
        self,
        now: jiff::Timestamp,
        held: &[mem::session::ledger::Sent],
        local: &[String],
        budget: usize,
    ) -> Option<(String, Vec<mem::session::ledger::Sent>)> {
        let wait = self.deadline.saturating_duration_since(super::bar::stopwatch());
        let answer = self.answer.recv_timeout(wait).unwrap_or_else(|_| TeamAnswer {
            hits: Vec::new(),
            problem: Some(format!("no answer within {} ms", HOOK_TIMEOUT.as_millis() * 2)),
        });
        if let Some(problem) = &answer.problem {
            let line = format!("{now}\t{problem}\n");
            let _ =
                mem::store::write_atomic(&self.failed, line.as_bytes(), mem::store::Overwrite::Yes);
            return None;
        }
        if std::fs::symlink_metadata(&self.failed).is_ok() {
            let _ = std::fs::remove_file(&self.failed);
        }
        let foreign: Vec<mem::engine::Foreign> = answer
            .hits
            .into_iter()
            .map(|h| h.memory)
            .filter(|m| !local.contains(&m.id))
            .map(|m| mem::engine::Foreign {
                key: key(&m.project, &m.id),
                project: m.project,
                author: m.author,
                kind: m.kind,
                importance: m.importance,
                title: m.title,
                body: m.body,
            })
            .collect();
        let (text, sent) = mem::engine::foreign_block(&foreign, &self.origin, held, budget);
        (!sent.is_empty()).then_some((text, sent))
    }
}

/// When and why the team store last failed a hook of the root `root`, if it did.
pub fn hook_failure(root: &Path) -> Option<String> {
    let failed = mem::store::state_dir(root).ok()?.join(FAILED_FILE);
    let text = mem::untrusted::read_text(&failed, 4096, mem::untrusted::Links::InFolder).ok()??;
    let (at, problem) = text.trim_end().split_once('\t')?;
    Some(format!("a prompt hook at {at} answered without it ({problem})"))
}

/// What `mem health` says of the team store, when one is configured: reached within the
/// recall budget, its schema and how many memories it serves; or the problem.
pub fn status() -> Option<std::result::Result<String, String>> {
    let settings = match settings(recall_timeout()) {
        Ok(settings) => settings?,
        Err(e) => return Some(Err(format!("{e:#}"))),
    };
    let answer = open(&settings).and_then(|mut team| team.live_count());
    let target = settings.config().map(|(c, _)| mem_team::settings::target(&c)).unwrap_or_default();
    Some(match answer {
        Ok(n) => Ok(format!("{target}: schema {}, {n} memories served", mem_team::schema::VERSION)),
        Err(e) => Err(e.to_string()),
    })
}

/// The question's vector for the team layer: the project's model, when one is configured and
/// loads; the one the `local` recall computed when it embedded the query itself.
fn question_vector(
    engine: &mut Engine,
    query: &str,
    local: &mem::Recall,
) -> Option<(String, Vec<f32>)> {
    engine.vectors.model().source()?;
    let embedder = engine.vectors.model().embedder().ok()?;
    let vector = match &local.vector {
        Some(vector) if local.embedded.is_none() => vector.clone(),
        _ => embedder.embed(&[query], 1).ok()?.pop()?,
    };
    Some((model_id(embedder), vector))
}

/// `PGPASSWORD`, else the line of the password file that matches the URL.
fn password(settings: &Settings) -> Option<String> {
    if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|v| !v.is_empty()) {
        return pw.into_string().ok();
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass")))?;
    let (config, _) = settings.config().ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(name) => name.clone(),
        Host::Unix(path) => path.display().to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let text = read_private(&file)?;
    let db = config.get_dbname().unwrap_or(config.get_user()?);
    mem_team::pgpass::lookup(&text, &host, port, db, config.get_user()?)
}

/// The file's text when only its owner may read it (as libpq: a password file others may read
/// is ignored, with a warning).
fn read_private(file: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(file).ok()?;
    if meta.mode() & 0o077 != 0 {
        eprintln!(
            "mem: warning: {} is not used: others may read it (chmod 0600 it)",
            file.display()
        );
        return None;
    }
    let text = mem::untrusted::read_text(file, 1 << 20, mem::untrusted::Links::Follow);
    text.ok().flatten()
}

/// The author's name: `[team] author`, else the login name.
pub fn author() -> Result<String> {
    let config = user::load()?;
    if let Some(author) = config.team.author.filter(|a| !a.trim().is_empty()) {
        return Ok(author);
    }
    let login = std::env::var("USER").or_else(|_| std::env::var("LOGNAME"));
    login.ok().filter(|l| !l.is_empty()).context(
        "no author name for the team store: set author in [team] of the user configuration file",
    )
}

/// This machine's name: `[team] machine`, else the host name.
pub fn machine() -> Result<String> {
    let config = user::load()?;
    if let Some(machine) = config.team.machine.filter(|m| !m.trim().is_empty()) {
        return Ok(machine);
    }
    Ok(rustix::system::uname().nodename().to_string_lossy().into_owned())
}

/// The project's name in the store: `[team] project` of the root's `mem.toml`, else its
/// repository's remote `origin` (`host/owner/repo`, without credentials or `.git`).
pub fn project(engine: &Engine) -> Result<String> {
    if let Some(project) =
        engine.files.config().team.project.as_deref().filter(|p| !p.trim().is_empty())
    {
        return Ok(project.trim().to_string());
    }
    let git = mem::git::Runner::new(engine.files.root());
    let out = git.run(&["remote", "get-url", "origin"], &[], b"", None);
    let url = match out {
        Ok(done) if done.status.success() => {
            String::from_utf8_lossy(&done.stdout).trim().to_string()
        }
        _ => String::new(),
    };
    match project_of_remote(&url) {
        Some(project) => Ok(project),
        None => bail!(
            "no project name for the team store: set project in [team] of {}/mem.toml, or give \
             the repository a remote `origin`",
            engine.files.root().display()
        ),
    }
}

/// `host/owner/repo` of a remote URL (`https://user:token@host/owner/repo.git`,
/// `git@host:owner/repo.git`, `/path/to/repo.git`).
pub fn project_of_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest.to_string(),
        None => match url.split_once(':') {
            Some((host, path)) if !host.contains('/') => format!("{host}/{path}"),
            _ => url.trim_start_matches('/').to_string(),
        },
    };
    let rest = rest.rsplit_once('@').map_or(rest.as_str(), |(_, after)| after);
    let rest = rest.trim_end_matches('/').trim_end_matches(".git");
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.join("/");
    (!name.is_empty() && !name.chars().any(char::is_control)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::project_of_remote;

    #[test]
    fn a_remote_names_its_project_without_credentials() {
        let cases = [
            ("https://ana:tok@github.com/org/repo.git", "github.com/org/repo"),
            ("git@github.com:org/repo.git", "github.com/org/repo"),
            ("ssh://git@host:22/org/repo", "host:22/org/repo"),
            ("/srv/git/team.git", "srv/git/team"),
        ];
        for (url, project) in cases {
            assert_eq!(project_of_remote(url).as_deref(), Some(project), "{url}");
        }
        assert_eq!(project_of_remote(""), None);
    }
}
