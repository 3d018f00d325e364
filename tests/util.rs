//! Test helpers: a temporary memory root and a runner for the `mem` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The fixed "now" of every test run.
pub const NOW: &str = "2026-11-30T12:00:00Z";

/// A temporary folder used as a memory root.
pub struct Dir {
    tmp: tempfile::TempDir,
    /// The user's configuration folder (`XDG_CONFIG_HOME`) of the commands run on this root.
    home: tempfile::TempDir,
}

/// What a `mem` run printed and returned.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Asserts the run succeeded and returns stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "mem failed:\nstdout: {}\nstderr: {}", self.stdout, self.stderr);
        &self.stdout
    }

    /// Parses stdout as JSON, for a run that may have found nothing (exit status 0 or 1,
    /// as `mem recall` gives).
    #[track_caller]
    pub fn json_found(&self) -> serde_json::Value {
        assert!(self.code <= 1, "mem failed:\nstdout: {}\nstderr: {}", self.stdout, self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    /// Parses stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.ok())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

impl Dir {
    /// An empty folder.
    pub fn new() -> Dir {
        Dir { tmp: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() }
    }

    /// A copy of `memories.example/`.
    pub fn example() -> Dir {
        let dir = Dir::new();
        copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("memories.example"), dir.path());
        dir
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// The user's configuration folder (`XDG_CONFIG_HOME`) of this root's commands.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Writes a file (creating folders).
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Configures the test model in the user configuration file of this root's commands
    /// (`model_dir` in `[embed]`), and `extra` lines in `[embed]` of the root's `mem.toml`.
    pub fn use_model(&self, extra: &str) {
        let config = format!("[embed]\nmodel_dir = {:?}\n", model_dir().to_str().unwrap());
        self.write_user_config(&config);
        std::fs::write(self.path().join("mem.toml"), format!("[embed]\n{extra}\n")).unwrap();
    }

    /// Writes the user configuration file (`$XDG_CONFIG_HOME/mem/config.toml`) that this
    /// root's commands read.
    pub fn write_user_config(&self, text: &str) {
        let path = self.home.path().join("mem/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Starts usage observation for the root at `since` (a usage file with only that line).
    pub fn observe_since(&self, since: &str) {
        self.write("usage/test.tsv", format!("since\t{since}\n"));
    }

    /// Every usage file of the root (`usage/*.tsv`), concatenated.
    pub fn usage_text(&self) -> String {
        let mut files: Vec<_> = std::fs::read_dir(self.path().join("usage"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    /// `mem --dir <this folder> <args>`.
    pub fn mem(&self, args: &[&str]) -> Out {
        let mut full = vec!["--dir", self.path().to_str().unwrap()];
        full.extend_from_slice(args);
        run(Command::new(bin())
            .args(full)
            .current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.home.path()))
    }

    /// `mem <args>` run in the subfolder `rel` of this folder without `--dir`, so that the root
    /// is found the way a shell or an agent's hook finds it; `stdin` is fed to the process.
    pub fn mem_in(&self, rel: &str, args: &[&str], stdin: impl AsRef<[u8]>) -> Out {
        use std::io::Write;
        let mut child = self.spawn_in(rel, args);
        child.stdin.take().unwrap().write_all(stdin.as_ref()).unwrap();
        collect(child.wait_with_output().unwrap())
    }

    /// Starts `mem <args>` in the subfolder `rel` of this folder, without `--dir`, with piped
    /// stdin, stdout and stderr.
    pub fn spawn_in(&self, rel: &str, args: &[&str]) -> std::process::Child {
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(self.path().join(rel));
        cmd.env("XDG_CONFIG_HOME", self.home.path()).env("HOME", self.home.path());
        clean_env(&mut cmd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    /// Starts `mem --dir <this folder> <args>` with piped stdin, stdout and stderr.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        let mut cmd = Command::new(bin());
        cmd.arg("--dir").arg(self.path()).args(args);
        cmd.env("XDG_CONFIG_HOME", self.home.path());
        clean_env(&mut cmd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    /// Like [`Dir::mem`] with `stdin` (text or any bytes) fed to the process.
    pub fn mem_stdin(&self, args: &[&str], stdin: impl AsRef<[u8]>) -> Out {
        use std::io::Write;
        let mut child = self.spawn(args);
        child.stdin.take().unwrap().write_all(stdin.as_ref()).unwrap();
        collect(child.wait_with_output().unwrap())
    }
}

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mem")
}

/// Removes the variables that would change which root or time `mem` uses, and puts `mem` on
/// `PATH`. A `MEM_DIR` or `PATH` the test set on the command itself is kept.
pub fn clean_env(cmd: &mut Command) -> &mut Command {
    for name in
        ["MEM_DIR", "MEM_EMBED_MODEL_DIR", "ORT_DYLIB_PATH", "COPILOT_HOME", "PI_CODING_AGENT_DIR"]
    {
        if !cmd.get_envs().any(|(k, _)| k == name) {
            cmd.env_remove(name);
        }
    }
    if !cmd.get_envs().any(|(k, _)| k == "XDG_CONFIG_HOME") {
        // Never the developer's own user configuration: an empty folder.
        cmd.env("XDG_CONFIG_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-user-config"));
    }
    if !cmd.get_envs().any(|(k, _)| k == "PATH") {
        // `mem` on PATH, as a user has it (a project's agent configuration names it bare).
        let folder = Path::new(bin()).parent().unwrap().display().to_string();
        cmd.env("PATH", format!("{folder}:{}", std::env::var("PATH").unwrap_or_default()));
    }
    if !cmd.get_envs().any(|(k, _)| k == "MEM_NO_SERVER") {
        // No hook of a test is answered by a `mem mcp` (of this test or another) unless the
        // test says so: only the served-hook tests do (tests/served.rs).
        cmd.env("MEM_NO_SERVER", "1");
    }
    cmd.env("MEM_NOW", NOW)
}

/// The embedding model folder the tests use: `MEM_TEST_MODEL_DIR`, else `embed-model` in
/// cargo's target tmp folder. Fetched with `scripts/fetch-model.sh` (which verifies every
/// checksum and downloads nothing when the files are there) on first use.
pub fn model_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("MEM_TEST_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("embed-model"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-model.sh");
        let out = Command::new(&script).arg(&dir).output().unwrap();
        assert!(
            out.status.success(),
            "the embedding tests need the model; `{} {}` failed:\n{}",
            script.display(),
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        std::path::absolute(&dir).unwrap()
    })
}

/// Runs a prepared command (its environment cleaned) with `stdin` fed to it, and collects its
/// output.
pub fn run_with_stdin(cmd: &mut Command, stdin: impl AsRef<[u8]>) -> Out {
    use std::io::Write;
    clean_env(cmd);
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_ref()).unwrap();
    collect(child.wait_with_output().unwrap())
}

/// Runs a prepared command and collects its output.
pub fn run(cmd: &mut Command) -> Out {
    clean_env(cmd);
    collect(cmd.stdin(Stdio::null()).output().unwrap())
}

fn collect(out: std::process::Output) -> Out {
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `git ARGS` in `dir` as a machine whose home is `home` runs it: no system configuration, the
/// identity and the default branch on the command line, the fixed "now" for a `mem` git starts
/// (the merge driver). Its environment is the one given here, not [`clean_env`]'s.
pub fn git_at(dir: &Path, home: &Path, args: &[&str]) -> Out {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "init.defaultBranch=main", "-c", "pull.rebase=false"])
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("MEM_NOW", NOW);
    collect(cmd.stdin(Stdio::null()).output().expect("git runs"))
}

/// A memory file's text.
pub fn memory(id: &str, kind: &str, importance: u8, created: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\ntype: {kind}\nimportance: {importance}\ncreated: {created}\n---\n{body}"
    )
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() == ".mem" {
                continue;
            }
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The ids of a `recall --json` or `list --json` answer, in order.
pub fn ids(json: &serde_json::Value) -> Vec<String> {
    json.as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

/// A command that runs `program` as another local user when the tests run as root (as CI
/// does here): `nobody` (uid and gid 65534) through util-linux's `setpriv`, its supplementary
/// groups cleared, and `program` taken from `/usr/bin` (root's own `PATH` may hold folders
/// another user cannot enter). Otherwise `program` as this user, and a note says so. The flag
/// tells which.
pub fn as_another_user(program: &str) -> (Command, bool) {
    let root = rustix::process::geteuid().is_root();
    let system = Path::new("/usr/bin").join(program);
    let setpriv = Path::new("/usr/bin/setpriv");
    if root && setpriv.exists() && system.exists() {
        let mut cmd = Command::new(setpriv);
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(system);
        (cmd, true)
    } else {
        eprintln!("note: {program} runs as this user (another user needs root and setpriv)");
        (Command::new(program), false)
    }
}
