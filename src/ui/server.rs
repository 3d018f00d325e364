//! The connections of `mem ui`, which any local user can open: each HTTP/1.1 connection on a
//! task of its own, at most as many at once as the process may open files for (more wait in
//! the kernel's queue, the owner's page still answered while another user holds a thousand
//! idle ones); a request's header must arrive within [`HEADER_TIMEOUT`], so an idle connection
//! or one that sends a byte now and then is closed; a connection lives at most
//! [`CONNECTION_LIFE`]. And the page opened for `--open` without its secret in any process's
//! arguments.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;

/// How long a client has to send a request's whole header (the first, or the next on a
/// connection kept alive) before the connection is closed.
pub(super) const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a connection is served.
pub(super) const CONNECTION_LIFE: Duration = Duration::from_secs(120);

/// The most connections served at once, whatever the limit of open files allows.
const MAX_CONNECTIONS: u64 = 4096;

/// The files the process keeps for itself beyond its connections (indexes, logs, the
/// listening socket).
const SPARE_FILES: u64 = 256;

/// How many connections to serve at once: [`MAX_CONNECTIONS`], the soft limit of open files
/// raised towards it where the hard limit allows, less [`SPARE_FILES`].
fn connection_slots() -> usize {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let wanted = MAX_CONNECTIONS + SPARE_FILES;
    let mut current = limit.current.unwrap_or(u64::MAX);
    if current < wanted {
        let raised = limit.maximum.map_or(wanted, |hard| hard.min(wanted));
        if setrlimit(Resource::Nofile, Rlimit { current: Some(raised), ..limit }).is_ok() {
            current = raised;
        }
    }
    let slots = current.saturating_sub(SPARE_FILES).clamp(16, MAX_CONNECTIONS);
    usize::try_from(slots).unwrap_or(16)
}

/// Serves `router` on `listener` until `shutdown` completes.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let slots = Arc::new(Semaphore::new(connection_slots()));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => permit.context("the connection slots closed")?,
            () = &mut shutdown => return Ok(()),
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of files, or a connection reset before it was taken: a pause, then on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // A connection past its life, or whose client stopped, just ends.
            let _ = tokio::time::timeout(CONNECTION_LIFE, connection).await;
            drop(permit);
        });
    }
}

/// A page for the browser that forwards to `url`, in a folder only this user can read: the
/// opener is given its path, so no process's arguments carry the secret. The folder goes when
/// the returned guard is dropped (when `mem ui` stops).
pub(super) fn forwarding_page(url: &str) -> Result<(tempfile::TempDir, std::path::PathBuf)> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    // A folder of mode 0700 and a file of mode 0600.
    let dir = tempfile::Builder::new()
        .prefix("mem-ui-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .context("cannot make a private folder for the page that opens mem ui")?;
    let mut file = tempfile::Builder::new()
        .prefix("open-")
        .suffix(".html")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir.path())
        .context("cannot write the page that opens mem ui")?;
    let page = format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta http-equiv=\"refresh\" content=\"0; url={url}\">\n<title>mem ui</title>\n\
         <p><a href=\"{url}\">Open mem ui</a></p>\n"
    );
    file.write_all(page.as_bytes()).context("cannot write the page that opens mem ui")?;
    let (_, path) = file.keep().context("cannot keep the page that opens mem ui")?;
    Ok((dir, path))
}
