//! A real PostgreSQL with pgvector for the team tests: `MEM_TEST_POSTGRES_DIR` (filled by
//! `scripts/postgres.sh`), started in a temporary folder on a free port of 127.0.0.1, as user
//! `nobody` when the tests run as root (PostgreSQL refuses root), stopped when dropped. No mock:
//! without the folder the team tests skip, and with `CI=true` they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The password of the server's roles (scram-sha-256: the client must give it).
pub const PASSWORD: &str = "team-test-secret";

/// A running server; stopped, its folder removed, when dropped.
pub struct Server {
    /// The folder holding `data/` (owned by the server's user) and the server's log.
    tmp: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    running: bool,
}

/// The folder holding `bin/postgres`, when the tests have one; `None` skips (a note says so),
/// and with `CI=true` a missing folder fails the test.
fn install() -> Option<PathBuf> {
    let dir = std::env::var_os("MEM_TEST_POSTGRES_DIR").map(PathBuf::from);
    let found = dir.filter(|d| d.join("bin/postgres").is_file());
    if found.is_none() {
        let fix = "run `scripts/postgres.sh DIR` and export MEM_TEST_POSTGRES_DIR=DIR";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no PostgreSQL for the team tests: {fix}"
        );
        eprintln!("note: team test skipped, no PostgreSQL ({fix})");
    }
    found
}

/// Whether this process runs as root, so the server runs as `nobody`.
fn as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `program` of the installation, as the server's user.
fn command(bin: &Path, program: &str) -> Command {
    if as_root() {
        let mut cmd = Command::new("/usr/bin/setpriv");
        cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]);
        cmd.arg(bin.join(program));
        cmd
    } else {
        Command::new(bin.join(program))
    }
}

/// Runs `cmd`, panicking with its output when it fails.
fn check(cmd: &mut Command, what: &str) {
    let out = cmd.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The installation where the server's user can run it: in place, or (when a folder above it
/// is closed to `nobody`, as a root's home is) copied once per test process into a temporary
/// folder everyone may read.
fn runnable(dir: PathBuf) -> PathBuf {
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let bin = dir.join("bin");
    let ok = command(&bin, "postgres").arg("--version").output().is_ok_and(|o| o.status.success());
    if ok {
        return bin;
    }
    COPY.get_or_init(|| {
        let copy = tempfile::Builder::new().prefix("mem-postgres-").tempdir().unwrap().keep();
        check(Command::new("cp").arg("-a").arg(dir.join(".")).arg(&copy), "copying PostgreSQL");
        check(Command::new("chmod").args(["-R", "a+rX"]).arg(&copy), "opening the copy");
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(&copy, open).unwrap();
        copy.join("bin")
    })
    .clone()
}

use std::os::unix::fs::PermissionsExt as _;

impl Server {
    /// A new server with its own data folder, pgvector available, the superuser `postgres`
    /// and the database `team`; `None` when the tests have no PostgreSQL (see [`install`]).
    pub fn start() -> Option<Server> {
        let bin = runnable(install()?);
        let tmp = tempfile::Builder::new().prefix("mem-pg-").tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let pwfile = tmp.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        std::fs::set_permissions(&pwfile, std::fs::Permissions::from_mode(0o644)).unwrap();
        check(
            command(&bin, "initdb")
                .arg("-D")
                .arg(tmp.path().join("data"))
                .args(["-U", "postgres", "--auth=scram-sha-256", "-E", "UTF8", "--no-locale"])
                .args(["--no-sync", "--no-instructions"])
                .arg(format!("--pwfile={}", pwfile.display())),
            "initdb",
        );
        let mut server = Server { tmp, bin, port: 0, running: false };
        server.run();
        server.psql("postgres", "CREATE DATABASE team");
        Some(server)
    }

    /// Starts the server on a free port, or again on its port after [`Server::stop`].
    pub fn run(&mut self) {
        for attempt in 0.. {
            let port = match self.port {
                0 => {
                    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
                }
                port => port,
            };
            let options = format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                self.tmp.path().display()
            );
            let out = command(&self.bin, "pg_ctl")
                .arg("-D")
                .arg(self.tmp.path().join("data"))
                .args(["-o", &options, "-l"])
                .arg(self.tmp.path().join("log"))
                .args(["-w", "start"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            if out.status.success() {
                self.port = port;
                self.running = true;
                return;
            }
            // Another process took the port between its choice and the start: another.
            let log = std::fs::read_to_string(self.tmp.path().join("log")).unwrap_or_default();
            assert!(attempt < 5, "PostgreSQL did not start: {out:?}\n{log}");
        }
    }

    /// Stops the server (its data kept; [`Server::run`] starts it again).
    pub fn stop(&mut self) {
        if self.running {
            self.running = false;
            let _ = command(&self.bin, "pg_ctl")
                .arg("-D")
                .arg(self.tmp.path().join("data"))
                .args(["-m", "immediate", "-w", "stop"])
                .stdin(Stdio::null())
                .output();
        }
    }

    /// The URL of database `db` as `user` (no password: the client finds it).
    pub fn url(&self, user: &str, db: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs `sql` in `db` as the superuser with psql; its output (tuples only, unaligned).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        self.psql_as("postgres", db, sql).unwrap_or_else(|e| panic!("psql {sql}: {e}"))
    }

    /// Runs `sql` in `db` as the role `user` (whose password is [`PASSWORD`]) with psql; its
    /// output, or its error.
    pub fn psql_as(&self, user: &str, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", user])
            .args(["-d", db, "-v", "ON_ERROR_STOP=1", "-tA", "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8(out.stdout).unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        // The data folder belongs to the server's user; root removes it with the rest.
    }
}
