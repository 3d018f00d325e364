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
    let settings = match settings(recall_timeout()) {
        Ok(settings) => settings?,
        Err(e) => return Some(TeamAnswer { hits: Vec::new(), problem: Some(format!("{e:#}")) }),
    };
    let question = mem_team::TeamQuery {
        text: query.to_string(),
        vector,
        limit,
        fusion: config.embed.fusion,
        rrf_k: config.embed.rrf_k,
        vector_weight: config.embed.vector_weight,
    };
    let answer = Team::connect(&settings).and_then(|mut team| {
        team.check_schema()?;
        team.recall(&question)
    });
    Some(match answer {
        Ok(hits) => TeamAnswer { hits, problem: None },
        Err(e) => TeamAnswer { hits: Vec::new(), problem: Some(e.to_string()) },
    })
}

/// What `mem health` says of the team store, when one is configured: reached within the
/// recall budget, its schema and how many memories it serves; or the problem.
pub fn status() -> Option<std::result::Result<String, String>> {
    let settings = match settings(recall_timeout()) {
        Ok(settings) => settings?,
        Err(e) => return Some(Err(format!("{e:#}"))),
    };
    let answer = Team::connect(&settings).and_then(|mut team| {
        team.check_schema()?;
        team.live_count()
    });
    let target = settings.config().map(|(c, _)| mem_team::settings::target(&c)).unwrap_or_default();
    Some(match answer {
        Ok(n) => Ok(format!("{target}: schema {}, {n} memories served", mem_team::schema::VERSION)),
        Err(e) => Err(e.to_string()),
    })
}

/// The question's vector for the team layer: the project's model, when one is configured and
/// loads (the local recall loaded it already).
pub fn question_vector(engine: &mut Engine, query: &str) -> Option<(String, Vec<f32>)> {
    engine.vectors.model().source()?;
    let embedder = engine.vectors.model().embedder().ok()?;
    let vector = embedder.embed(&[query], 1).ok()?.pop()?;
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

/// The id of the model's vectors in the store: its length and checksum (vectors under another
/// id are never compared).
pub fn model_id(embedder: &mem::embed::Embedder) -> String {
    let hex: String = embedder.checksum()[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}d-{hex}", embedder.dim())
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
