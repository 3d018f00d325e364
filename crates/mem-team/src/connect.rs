//! `Team`, one connection to the team store: opened within the settings' connect timeout,
//! every statement under their statement timeout, TLS as [`crate::settings`] decides (the
//! server's certificate verified against the system's roots, by rustls on ring).

use std::sync::Arc;

use crate::settings::{Settings, Tls, target};
use crate::{Error, Result};

/// An open connection to the team store.
pub struct Team {
    pub(crate) client: postgres::Client,
}

impl Team {
    /// Connects as `settings` say.
    pub fn connect(settings: &Settings) -> Result<Team> {
        let (config, tls) = settings.config()?;
        let connected = match tls {
            Tls::Off => config.connect(postgres::NoTls),
            Tls::Verified => config.connect(verified()?),
        };
        let client =
            connected.map_err(|source| Error::Connect { target: target(&config), source })?;
        Ok(Team { client })
    }
}

/// A TLS connector that verifies the server's certificate against the system's roots.
fn verified() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(Error::Tls("no certificate authority found in the system's store".into()));
    }
    // ring, not aws-lc-rs (which needs cmake and a longer build); rustls 0.23.48 deprecates
    // ring's provider only for its lack of post-quantum key exchange.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}
