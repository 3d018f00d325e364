//! The one way mem runs git in a repository: citations (`cites/`), checkpoints and rewind
//! (`checkpoint/`) all start git here, and nowhere else (`tests/layout.rs` checks). A
//! repository's `.git/config` and `.gitattributes` are the clone's (or an archive's), so every
//! process gets the same fixed policy, written out in docs/security.md ("Git over a clone"):
//!
//! - the `-c` overrides of [`OVERRIDES`], which come after the repository's configuration and
//!   win over it: no fsmonitor, hook, pager, external diff, signature program or credential
//!   helper of the repository runs, and its output settings (encoding, colour, prefixes, rename
//!   limits, grep options) cannot change what mem parses;
//! - an environment without the `GIT_*` variables of [`CLEARED_ENV`] and with those of
//!   [`SET_ENV`]: no lazy fetch of a partial clone's missing objects (a missing object is
//!   reported as missing, never fetched), no transport at all, no prompt;
//! - where git reads the work tree ([`Runner::over_work_tree`]), every filter driver the
//!   configuration defines emptied (no clean, smudge or process filter runs, on any git) and
//!   the attributes read from the empty tree (git 2.40 and later): the bytes are taken as they
//!   are;
//! - stdout read up to [`MAX_OUTPUT`], stderr kept up to [`MAX_STDERR`]: a huge object or log
//!   cannot make mem hold it.
//!
//! The one repository that is the user's own, the user layer's clone of `[layers] user_remote`
//! ([`Runner::own`], docs/security.md, "Git on the user layer's own remote"), runs under a
//! policy of its own: the user's git configuration, credentials and ssh, with transport, but
//! never a prompt, a hook, a signature, a pager or a process past [`OWN_TIME_LIMIT`].

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

pub use crate::error::GitFailure as Failure;

/// The `-c` overrides every git process gets, as `key=value`.
pub const OVERRIDES: &[&str] = &[
    // Programs the repository could name.
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "log.showSignature=false",
    "commit.gpgSign=false",
    "credential.helper=",
    "protocol.allow=never",
    "submodule.recurse=false",
    // What mem parses: paths, encodings, colours, prefixes, renames, grep's output.
    "core.quotePath=false",
    "i18n.logOutputEncoding=UTF-8",
    "i18n.commitEncoding=UTF-8",
    "color.ui=never",
    "color.diff=never",
    "color.grep=never",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.renameLimit=1000",
    "log.showRoot=true",
    "log.follow=false",
    "grep.lineNumber=false",
    "grep.column=false",
    "grep.fullName=false",
    "grep.patternType=fixed",
    "grep.fallbackToNoIndex=false",
    // The bytes of the work tree as they are, and never a refusal over line endings.
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
];

/// The environment variables a git process of mem's does not inherit: where the repository is
/// comes from the folder mem runs it in alone, and nothing changes how paths, objects or
/// history are read.
pub const CLEARED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_PAGER",
    "PAGER",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_ATTR_SOURCE",
];

/// The environment variables every git process of mem's gets.
pub const SET_ENV: &[(&str, &str)] = &[
    // A partial clone's missing object is never fetched (the remote's command, or the network).
    ("GIT_NO_LAZY_FETCH", "1"),
    // No transport is allowed at all, whatever the repository's `protocol.*.allow` says.
    ("GIT_ALLOW_PROTOCOL", "none"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("LC_ALL", "C"),
];

/// The `-c` overrides of a git process in the user's own repository ([`Runner::own`]): no hook,
/// signature program, fsmonitor or pager runs (each may wait for the user, and the sync runs in
/// the background), and what mem parses stays as it parses it. The user's credential helper,
/// protocols, filters and remotes are left as the user set them.
pub const OWN_OVERRIDES: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "submodule.recurse=false",
    "core.quotePath=false",
    "i18n.logOutputEncoding=UTF-8",
    "i18n.commitEncoding=UTF-8",
    "color.ui=never",
    "advice.detachedHead=false",
];

/// The environment variables every git process in the user's own repository gets: nothing
/// prompts, on a terminal or in a window (askpass programs, Git Credential Manager's dialogs),
/// and no editor opens.
pub const OWN_SET_ENV: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ASKPASS", ""),
    ("SSH_ASKPASS", ""),
    ("SSH_ASKPASS_REQUIRE", "never"),
    ("GCM_INTERACTIVE", "never"),
    ("GIT_EDITOR", ":"),
    ("GIT_MERGE_AUTOEDIT", "no"),
    ("LC_ALL", "C"),
];

/// The longest a git process in the user's own repository runs (a clone, a fetch or a push to
/// an address that never answers): then it is stopped, with what it started (ssh), and the
/// step fails ([`Failure::TimedOut`]).
pub const OWN_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The most bytes of a git process's stdout mem reads: beyond, the process is killed and the
/// command fails ([`Failure::TooLong`]).
pub const MAX_OUTPUT: usize = 32 << 20;

/// The most bytes of a git process's stderr kept (its start) for an error message.
const MAX_STDERR: usize = 16 << 10;

/// The id of the empty tree, by object format: attributes read from it are none.
fn empty_tree(object_format: &str) -> &'static str {
    match object_format {
        "sha256" => "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
        _ => "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    }
}

/// What a git process gave back.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub status: ExitStatus,
    /// Its stdout, whole (at most [`MAX_OUTPUT`]).
    pub stdout: Vec<u8>,
    /// The start of its stderr (empty when it went elsewhere).
    pub stderr: Vec<u8>,
}

impl Finished {
    /// Its stderr's first non-empty line, without git's `fatal: ` (or `failed`).
    pub fn first_error(&self) -> String {
        let stderr = String::from_utf8_lossy(&self.stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed");
        crate::format::without_controls(first.trim().trim_start_matches("fatal: "))
    }
}

/// Runs git in one folder of a repository under the fixed policy.
#[derive(Debug)]
pub struct Runner {
    dir: PathBuf,
    /// `Some` for the user's own repository ([`Runner::own`]): the ssh command its transport
    /// runs (the user's, in batch mode).
    own: Option<String>,
    /// The overrides for commands that read the work tree, once made (see
    /// [`Runner::over_work_tree`]).
    work_tree: std::cell::OnceCell<Result<Vec<String>, String>>,
    /// The empty tree's id in the repository's object format: where attributes are read from
    /// by [`Runner::over_work_tree`].
    empty_tree: &'static str,
}

impl Runner {
    /// git in the folder `dir`.
    pub fn new(dir: &Path) -> Runner {
        Runner {
            dir: dir.to_path_buf(),
            own: None,
            work_tree: Default::default(),
            empty_tree: empty_tree("sha1"),
        }
    }

    /// git in the folder `dir` of the user's own repository (the user layer's clone of its
    /// remote): the user's configuration, credential helper and transports apply, with the
    /// overrides of [`OWN_OVERRIDES`], the environment of [`OWN_SET_ENV`] (the variables of
    /// [`CLEARED_ENV`] still cleared), `ssh_command` as `GIT_SSH_COMMAND` (the user's own
    /// command in batch mode: see [`batch_ssh`]), and each process stopped, with every process
    /// it started, after [`OWN_TIME_LIMIT`]. Never for a repository someone else made.
    pub fn own(dir: &Path, ssh_command: &str) -> Runner {
        Runner { own: Some(ssh_command.to_string()), ..Runner::new(dir) }
    }

    /// The same, in a repository of the object format `format` (`git rev-parse
    /// --show-object-format`), whose work tree some commands read.
    pub fn with_object_format(mut self, format: &str) -> Runner {
        self.empty_tree = empty_tree(format);
        self
    }

    /// The command line of `git args` under the fixed policy; stdin, stdout and stderr piped.
    fn command(&self, args: &[&str], extra: &[String]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.dir);
        let overrides = if self.own.is_some() { OWN_OVERRIDES } else { OVERRIDES };
        for o in overrides.iter().map(|o| o.to_string()).chain(extra.iter().cloned()) {
            cmd.arg("-c").arg(o);
        }
        cmd.args(["--no-pager", "--no-optional-locks"]).args(args);
        for name in CLEARED_ENV {
            cmd.env_remove(name);
        }
        match &self.own {
            None => cmd.envs(SET_ENV.iter().copied()),
            Some(ssh) => {
                use std::os::unix::process::CommandExt as _;
                // A group of its own, so that the time limit stops ssh with it.
                cmd.process_group(0);
                cmd.envs(OWN_SET_ENV.iter().copied()).env("GIT_SSH_COMMAND", ssh)
            }
        };
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }

    /// Runs `git args` with `env` added and `input` on its stdin; its stderr into `stderr`
    /// when given (else piped and kept). Objects, refs and history only: for commands that
    /// read the work tree, [`Runner::over_work_tree`].
    pub fn run(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        input: &[u8],
        stderr: Option<Stdio>,
    ) -> Result<Finished, Failure> {
        self.start(self.command(args, &[]), env, input, stderr)
    }

    /// [`Runner::run`] for a command that reads or writes the work tree (`add`,
    /// `checkout-index`, `ls-files --modified`): every filter driver of the repository's
    /// configuration is emptied, and attributes are read from the empty tree where git knows
    /// `GIT_ATTR_SOURCE` (2.40 and later), so the bytes go in and out as they are.
    pub fn over_work_tree(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        input: &[u8],
        stderr: Option<Stdio>,
    ) -> Result<Finished, Failure> {
        let extra = self.work_tree.get_or_init(|| self.filter_overrides());
        let extra = extra.as_ref().map_err(|name| Failure::Filter(name.clone()))?;
        let mut cmd = self.command(args, extra);
        cmd.env("GIT_ATTR_SOURCE", self.empty_tree);
        self.start(cmd, env, input, stderr)
    }

    /// Whether the configuration defines a filter driver (Git LFS's, say), which
    /// [`Runner::over_work_tree`] turns off.
    pub fn defines_filters(&self) -> bool {
        let extra = self.work_tree.get_or_init(|| self.filter_overrides());
        extra.as_ref().map_or(true, |o| !o.is_empty())
    }

    /// The `-c` overrides that empty each filter driver the configuration (the repository's,
    /// the user's, the system's, and what they include) defines; a driver's name that `-c`
    /// cannot carry is the error.
    fn filter_overrides(&self) -> Result<Vec<String>, String> {
        let args = ["config", "-z", "--name-only", "--get-regexp", r"^filter\."];
        let Ok(found) = self.run(&args, &[], b"", None) else { return Ok(Vec::new()) };
        let mut names: Vec<String> = Vec::new();
        for key in found.stdout.split(|b| *b == 0).filter(|k| !k.is_empty()) {
            let key = String::from_utf8_lossy(key);
            let Some(rest) = key.trim().strip_prefix("filter.") else { continue };
            let Some((name, _)) = rest.rsplit_once('.') else { continue };
            if name.contains('=') || name.chars().any(char::is_control) {
                return Err(name.to_string());
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        Ok(names
            .iter()
            .flat_map(|n| {
                ["clean=", "smudge=", "process=", "required=false"]
                    .map(|v| format!("filter.{n}.{v}"))
            })
            .collect())
    }

    fn start(
        &self,
        mut cmd: Command,
        env: &[(&str, &str)],
        input: &[u8],
        stderr: Option<Stdio>,
    ) -> Result<Finished, Failure> {
        cmd.envs(env.iter().copied());
        let kept = stderr.is_none();
        if let Some(stderr) = stderr {
            cmd.stderr(stderr);
        }
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Failure::NoGit,
            _ => Failure::Io(e),
        })?;
        let limit = self.own.as_ref().map(|_| OWN_TIME_LIMIT);
        finish(child, input, kept, limit)
    }
}

/// The ssh command a git process in the user's own repository runs: the user's own (`user`:
/// `GIT_SSH_COMMAND`, else `core.sshCommand`, else `GIT_SSH` as a quoted program; else `ssh`)
/// with the option that makes it never ask (`-o BatchMode=yes`; `-batch` for PuTTY's plink and
/// TortoisePlink, as `variant`, git's `ssh.variant`, or the program's name says), added after
/// what the user wrote, which is kept whole.
pub fn batch_ssh(user: Option<&str>, variant: Option<&str>) -> String {
    let command = user.map(str::trim).filter(|c| !c.is_empty()).unwrap_or("ssh");
    let program = command.split_whitespace().next().unwrap_or("ssh");
    let program = program.trim_matches(|c| c == '\'' || c == '"');
    let name = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
    let name = name.to_ascii_lowercase();
    let variant = variant.map(str::to_ascii_lowercase);
    let putty = match variant.as_deref() {
        Some("plink" | "putty" | "tortoiseplink") => true,
        Some("ssh" | "simple") => false,
        _ => name.starts_with("plink") || name.starts_with("tortoiseplink"),
    };
    if putty { format!("{command} -batch") } else { format!("{command} -o BatchMode=yes") }
}

/// Feeds `input` to `child` from a thread, reads its stdout up to [`MAX_OUTPUT`] (killing it
/// beyond) and, when `kept`, the start of its stderr; then waits for it. With a `limit`, the
/// child leads a process group of its own, and the whole group is killed once the limit is
/// past.
fn finish(
    mut child: Child,
    input: &[u8],
    kept: bool,
    limit: Option<std::time::Duration>,
) -> Result<Finished, Failure> {
    let watchdog = limit.map(|limit| {
        let group = rustix::process::Pid::from_child(&child);
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let watch = std::thread::spawn(move || {
            let late = wait.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout);
            if late {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            late
        });
        (done, watch, limit)
    });
    // No input: stdin is closed at once, without a thread (most questions of a check).
    let stdin = child.stdin.take().filter(|_| !input.is_empty());
    let input = input.to_vec();
    let writer = stdin.map(|mut stdin| {
        std::thread::spawn(move || {
            use std::io::Write as _;
            let _ = stdin.write_all(&input);
        })
    });
    let stderr = child.stderr.take().filter(|_| kept);
    let errors = stderr.map(|stderr| {
        std::thread::spawn(move || {
            let mut stderr = stderr;
            let mut kept = Vec::new();
            let _ = stderr.by_ref().take(MAX_STDERR as u64).read_to_end(&mut kept);
            // The rest is read and dropped, so that git never blocks on a full pipe.
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            kept
        })
    });
    let mut stdout = Vec::new();
    let read = match child.stdout.take() {
        Some(out) => out.take(MAX_OUTPUT as u64 + 1).read_to_end(&mut stdout),
        None => Ok(0),
    };
    let too_long = stdout.len() > MAX_OUTPUT;
    if too_long {
        let _ = child.kill();
    }
    let status = child.wait().map_err(Failure::Io);
    let mut timed_out = None;
    if let Some((done, watch, limit)) = watchdog {
        drop(done);
        if watch.join().unwrap_or(false) {
            timed_out = Some(limit.as_secs());
        }
    }
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let stderr = errors.and_then(|e| e.join().ok()).unwrap_or_default();
    if let Some(secs) = timed_out {
        return Err(Failure::TimedOut(secs));
    }
    let status = status?;
    read.map_err(Failure::Io)?;
    if too_long {
        return Err(Failure::TooLong(MAX_OUTPUT >> 20));
    }
    Ok(Finished { status, stdout, stderr })
}
