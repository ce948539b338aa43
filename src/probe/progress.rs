//! Progress on a terminal while the probe runs (runs done of all, the
//! scenario batch), nothing on a pipe: a probe of a slow client takes
//! minutes, in every output format. Opt-in: the library never draws unless
//! asked.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `runs` runs on stderr when `enabled` and stderr is a terminal.
pub(crate) fn bar(enabled: bool, runs: u64) -> Option<ProgressBar> {
    if !enabled || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(runs), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("probe {bar:30} {pos}/{len} runs  {msg}") {
        bar.set_style(style);
    }
    Some(bar)
}
