//! Progress on stderr, drawn by indicatif when stderr is a terminal, and the stopwatch of the
//! commands that time what they do.

use std::io::IsTerminal;

/// A progress bar for indexing files on stderr when it is a terminal, hidden otherwise.
pub fn progress_bar() -> Bar {
    progress_bar_for("indexing", "files")
}

/// A progress bar on stderr, drawn by indicatif, for the library's [`mem::progress::Progress`].
pub struct Bar(indicatif::ProgressBar);

impl mem::progress::Progress for Bar {
    fn set_length(&self, len: u64) {
        self.0.set_length(len);
    }

    fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A progress bar "`doing` [bar] pos/len `things` (eta left)" on stderr when it is a
/// terminal, hidden otherwise.
pub fn progress_bar_for(doing: &str, things: &str) -> Bar {
    if std::io::stderr().is_terminal() {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{doing} {{bar:30}} {{pos}}/{{len}} {things} ({{eta}} left)"
        )) {
            bar.set_style(style);
        }
        Bar(bar)
    } else {
        Bar(indicatif::ProgressBar::hidden())
    }
}

/// Starts timing a duration (the binary measures; the engine never does).
#[allow(clippy::disallowed_methods)]
pub fn stopwatch() -> std::time::Instant {
    std::time::Instant::now()
}
