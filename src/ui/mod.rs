//! `mem ui [--port N] [--open]`: a local web page over the root and its layers, served on
//! 127.0.0.1 only (axum and hyper on a multi-thread tokio runtime, the connections as `server.rs`
//! serves them, each request with open layers of its own from `pool.rs`). A front end
//! like the CLI and the MCP server: each page calls the engine as its command does (search as
//! `mem recall`, with the team store's hits when one is configured, a memory as `mem show`, a
//! team memory's whole text read from the store, the prune review as `mem prune --dry-run` and
//! `mem prune`, `mem restore`, `mem forget`, `mem used`, the sessions as `mem session show`, the
//! capture page as `mem health --transcripts`); the HTML is built with maud (escaped by
//! construction), the charts are SVG drawn in `html.rs`, the style and script are embedded.
//! The clock is read once per request. Every request passes the gate of `guard.rs`. A root
//! found above the working directory that this machine did not make, set up or allow is
//! refused, as the user-level hooks hold it back (docs/security.md).

use std::sync::Arc;

use anyhow::{Context as _, Result};
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use jiff::Timestamp;
use mem::engine::Layers;
use mem::store::Layer;
use mem::{Engine, Memory};

use crate::shared::Globals;

mod capture;
mod guard;
mod html;
mod memory;
mod overview;
mod pool;
mod prune;
mod search;
mod server;
mod sessions;
mod team;

/// Arguments of `mem ui`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The port to listen on (127.0.0.1); 0 takes a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Open the page in the default browser (xdg-open, open).
    #[arg(long)]
    open: bool,
}

/// What every request shares: the pool of open layers, the gate, the fixed "now" if any.
pub(super) struct App {
    pool: pool::Pool,
    guard: guard::Guard,
    fixed_now: Option<Timestamp>,
}

/// The application state handed to each page.
pub(super) type Shared = Arc<App>;

impl App {
    /// The layers, for one request, its own while it lasts (see `pool.rs`).
    fn layers(&self) -> pool::Lease<'_> {
        self.pool.take()
    }

    /// "Now" for this request: `--now`/`MEM_NOW`, else the clock, read once.
    fn now(&self) -> Timestamp {
        crate::shared::now(self.fixed_now)
    }
}

/// Serves the root until Ctrl-C; refuses a root found above the working directory that was
/// not made, set up or allowed on this machine (a cloned repository's `.memory/`), as the
/// user-level hooks and `mem mcp --user-scope` hold it back: `--dir` names it, `mem allow` lets
/// it be served.
pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (root, source) = ctx.locate_root(None)?;
    if let crate::shared::gate::Gate::HeldBack(_) =
        crate::shared::gate::Gate::at(&root, source, crate::shared::gate::Started::UserScope)
    {
        anyhow::bail!(
            "{}: mem ui does not serve it (its pages would show and change memories nobody \
             here chose); if you trust it, run {} (or name it with --dir)",
            crate::shared::machine::not_chosen(&root),
            crate::shared::machine::allow_command(&root)
        );
    }
    let mut layers = ctx.layers_near(None)?;
    for (layer, reason) in layers.watch() {
        eprintln!(
            "mem: warning: cannot watch the {} root for changes ({reason}); each page checks its \
             folders instead",
            layer.as_str()
        );
    }
    // A root without an index is indexed now, with the usual progress.
    for (_, report) in layers.refresh(ctx.now, &crate::shared::bar::progress_bar())? {
        crate::shared::output::print_problems(&report);
    }
    let listener = std::net::TcpListener::bind(("127.0.0.1", args.port)).with_context(|| {
        format!(
            "cannot listen on 127.0.0.1:{} (is the port in use? `--port 0` takes a free one)",
            args.port
        )
    })?;
    listener.set_nonblocking(true).context("cannot set up the listening socket")?;
    let port = listener.local_addr().context("cannot read the listening port")?.port();
    let guard = guard::Guard::new(port)?;
    let url = guard.url();
    // More layers over the same roots, for requests that overlap.
    let globals = ctx.clone();
    let pool = pool::Pool::new(layers, Box::new(move || globals.layers_near(None)));
    let app = Arc::new(App { pool, guard, fixed_now: ctx.fixed_now });
    let pages = Router::new()
        .route("/", get(search::page))
        .route("/memory/{id}", get(memory::page))
        .route("/memory/{id}/forget", post(memory::forget))
        .route("/memory/{id}/used", post(memory::used))
        .route("/prune", get(prune::page))
        .route("/prune/archive", post(prune::archive))
        .route("/prune/restore", post(prune::restore))
        .route("/team", get(team::page))
        .route("/sessions", get(sessions::list))
        .route("/sessions/{id}", get(sessions::show))
        .route("/capture", get(capture::page))
        .route("/overview", get(overview::page))
        .route("/style.css", get(|| async { asset("text/css", html::STYLE) }))
        .route("/app.js", get(|| async { asset("text/javascript", html::SCRIPT) }))
        .fallback(|| async { not_found("no such page") })
        .with_state(Arc::clone(&app));
    // The gate runs before the pages route: it takes the secret prefix off the path.
    let router = Router::new()
        .fallback_service(pages)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&app), guard::gate));
    // Pages run on the runtime's workers, each marked as blocking (see `blocking`).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .context("cannot hand the socket to the runtime")?;
        println!("{url}");
        eprintln!("mem: serving the memory root on 127.0.0.1:{port}; Ctrl-C stops");
        // Kept until the server stops: the page the browser opens forwards from it.
        let _opened = if args.open { open_browser(&url) } else { None };
        server::serve(listener, router, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("the web server stopped abnormally")
    })
}

/// Opens `url` in the default browser through a private page that forwards to it (see
/// [`server::forwarding_page`]), which is returned; a failure is a note, the server goes on.
fn open_browser(url: &str) -> Option<tempfile::TempDir> {
    let (dir, page) = match server::forwarding_page(url) {
        Ok(made) => made,
        Err(e) => {
            eprintln!("mem: {e:#}; open the address above yourself");
            return None;
        }
    };
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let started = std::process::Command::new(opener)
        .arg(&page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("mem: cannot start {opener} ({e}); open the address above yourself");
    }
    Some(dir)
}

/// An embedded asset.
fn asset(kind: &'static str, text: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}

/// A 404 page saying `what`.
fn not_found(what: &str) -> Response {
    let body = html::page("Not found", "", maud::html! { h1 { "Not found" } p { (what) } });
    (StatusCode::NOT_FOUND, Html(body.into_string())).into_response()
}

/// A request a page refuses: what it names is not there (404), or a parameter it cannot
/// take (400).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(super) struct Refused {
    status: StatusCode,
    message: String,
}

/// A [`Refused`] 404: `what` is not there.
pub(super) fn not_there(what: String) -> anyhow::Error {
    Refused { status: StatusCode::NOT_FOUND, message: what }.into()
}

/// A [`Refused`] 400: a parameter the page cannot take.
pub(super) fn bad_parameter(why: String) -> anyhow::Error {
    Refused { status: StatusCode::BAD_REQUEST, message: why }.into()
}

/// A [`Refused`] 503: what the page shows comes from elsewhere (the team store), which did not
/// answer.
pub(super) fn unavailable(why: String) -> anyhow::Error {
    Refused { status: StatusCode::SERVICE_UNAVAILABLE, message: why }.into()
}

/// A [`Refused`] 403: a change this page does not make (an agent's own memory).
pub(super) fn forbidden(why: String) -> anyhow::Error {
    Refused { status: StatusCode::FORBIDDEN, message: why }.into()
}

/// An error page: the error chain, escaped, with the status a [`Refused`] says, 404 for an id
/// the engine does not know, 400 for a request it refused otherwise, else 500.
fn failed(e: &anyhow::Error) -> Response {
    let message = crate::shared::output::describe(e);
    use mem::Error as E;
    let status = match (e.downcast_ref::<Refused>(), e.downcast_ref::<mem::Error>()) {
        (Some(refused), _) => refused.status,
        // What the request named is not there.
        (
            None,
            Some(
                E::NotFound(_) | E::InvalidId { .. } | E::NoSuchSession { .. } | E::NotArchived(_),
            ),
        ) => StatusCode::NOT_FOUND,
        // A change the request asked for that cannot be made to what it named.
        (
            None,
            Some(
                E::InvalidMemory(_)
                | E::SelfSupersede
                | E::AlreadyInvalid { .. }
                | E::DuplicateId { .. }
                | E::OutsideRoot(_),
            ),
        ) => StatusCode::BAD_REQUEST,
        // The root, its index or its logs failed: the server's side.
        (None, _) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let body = html::page("Error", "", maud::html! { h1 { "Error" } p.error { (message) } });
    (status, Html(body.into_string())).into_response()
}

/// Runs `f`, a page's work on the engine, telling the runtime that this worker blocks meanwhile,
/// so that other requests are served on others.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// A page from `f`, or its error page.
fn respond(f: impl FnOnce() -> Result<maud::Markup>) -> Response {
    match blocking(f) {
        Ok(markup) => Html(markup.into_string()).into_response(),
        Err(e) => failed(&e),
    }
}

/// A 303 to `to`, a page's path from the secret prefix, after a change (the browser then
/// loads the page with GET); the location is relative, as every link is.
fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, html::href(to))]).into_response()
}

/// The memory `id` in whichever layer holds it (the project first): its layer, its path
/// relative to that root, the memory.
fn find(layers: &mut Layers, id: &str) -> Result<(Layer, String, Memory)> {
    let mut first_error = None;
    let natives: Vec<Layer> = layers.natives().collect();
    for layer in [Layer::Project, Layer::User].into_iter().chain(natives) {
        let Some(engine) = layers.engine(layer) else { continue };
        match engine.files.get(id) {
            Ok((path, memory)) => return Ok((layer, path, memory)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.map_or_else(|| anyhow::anyhow!("no memory {id}"), anyhow::Error::from))
}

/// The engine of `layer` (the project's when it has none).
fn engine(layers: &mut Layers, layer: Layer) -> &mut Engine {
    if layers.engine(layer).is_some() {
        return layers.engine(layer).expect("just checked");
    }
    layers.project()
}
