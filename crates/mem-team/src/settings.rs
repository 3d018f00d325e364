//! `[team]` of the user configuration as the connection needs it: the server's URL (only the
//! user's own configuration names one, never a root), the password the binary found (the
//! environment or `~/.pgpass`, [`crate::pgpass`]), the timeouts, and which TLS a host gets:
//! none for this machine (`localhost`, a loopback address, a Unix socket), verified TLS for
//! any other host.

use std::net::IpAddr;
use std::time::Duration;

/// A host of a URL: a name or address, or a Unix socket folder.
pub use postgres::config::Host;
use postgres::config::SslMode;

use crate::{Error, Result};

/// How to reach the team store.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `postgres://user@host:port/database` (a password in it is allowed but discouraged).
    pub url: String,
    /// The password, when the URL has none (from `PGPASSWORD` or `~/.pgpass`).
    pub password: Option<String>,
    /// The longest a connection may take to open.
    pub connect_timeout: Duration,
    /// The longest a statement may run on the server.
    pub statement_timeout: Duration,
}

/// What the connection uses for TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tls {
    /// None: the server is on this machine.
    Off,
    /// TLS with the server's certificate verified against the system's roots.
    Verified,
}

impl Settings {
    /// The URL parsed, with the password, timeouts and TLS mode applied; a URL that cannot be
    /// parsed, or that turns TLS off for a host of another machine, is an error.
    pub fn config(&self) -> Result<(postgres::Config, Tls)> {
        let mut config: postgres::Config = self.url.parse().map_err(|e| {
            Error::Settings(format!("url is not a PostgreSQL URL (postgres://user@host/db): {e}"))
        })?;
        if config.get_hosts().is_empty() {
            return Err(Error::Settings("url names no host".into()));
        }
        if config.get_user().is_none() {
            return Err(Error::Settings("url names no user (postgres://USER@host/db)".into()));
        }
        if config.get_password().is_none()
            && let Some(password) = &self.password
        {
            config.password(password.as_str());
        }
        config.connect_timeout(self.connect_timeout);
        config.options(&format!("-c statement_timeout={}", self.statement_timeout.as_millis()));
        config.application_name("mem");
        let local = config.get_hosts().iter().all(is_local);
        let tls = match (local, config.get_ssl_mode()) {
            (true, SslMode::Require) => Tls::Verified,
            (true, _) => {
                config.ssl_mode(SslMode::Disable);
                Tls::Off
            }
            (false, SslMode::Disable) => {
                return Err(Error::Settings(
                    "url turns TLS off (sslmode=disable) for a host of another machine: mem \
                     talks to a remote team store only over TLS with its certificate verified"
                        .into(),
                ));
            }
            (false, _) => {
                config.ssl_mode(SslMode::Require);
                Tls::Verified
            }
        };
        Ok((config, tls))
    }
}

/// Whether `host` is this machine: a Unix socket, `localhost`, or a loopback address.
pub fn is_local(host: &Host) -> bool {
    match host {
        Host::Unix(_) => true,
        Host::Tcp(name) => {
            let name = name.trim_start_matches('[').trim_end_matches(']');
            name.eq_ignore_ascii_case("localhost")
                || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
    }
}

/// Where a URL points, without its password: `host:port/database`, for messages.
pub fn target(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => String::new(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> Settings {
        Settings {
            url: url.into(),
            password: Some("pw".into()),
            connect_timeout: Duration::from_secs(1),
            statement_timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_local_host_goes_without_tls_and_another_host_gets_it_verified() {
        let (config, tls) = settings("postgres://ana@127.0.0.1:5433/team").config().unwrap();
        assert_eq!(tls, Tls::Off);
        assert_eq!(config.get_password(), Some(&b"pw"[..]));
        assert_eq!(target(&config), "127.0.0.1:5433/team");
        assert_eq!(settings("postgres://ana@localhost/team").config().unwrap().1, Tls::Off);
        let (config, tls) = settings("postgres://ana@db.example.com/team").config().unwrap();
        assert_eq!((tls, config.get_ssl_mode()), (Tls::Verified, SslMode::Require));
        let off = settings("postgres://ana@db.example.com/team?sslmode=disable").config();
        assert!(format!("{}", off.unwrap_err()).contains("only over TLS"));
        let e = settings("postgres://127.0.0.1/team").config().unwrap_err();
        assert!(format!("{e}").contains("names no user"), "{e}");
        let e = settings("mysql:x").config().unwrap_err();
        assert!(format!("{e}").contains("not a PostgreSQL URL"), "{e}");
    }
}
