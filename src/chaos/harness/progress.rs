//! A progress bar on a terminal (indicatif), nothing on a pipe. Opt-in: the
//! library never draws unless its caller asks.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::context::Run;

/// Draws the run's progress against its horizon until the run is cancelled,
/// after `label` (`chaos`, or which run of several this is).
pub(crate) fn start(run: &Arc<Run>, enabled: bool, label: &str) -> Option<ProgressBar> {
    if !enabled || !std::io::stderr().is_terminal() {
        return None;
    }
    let total = u64::try_from(run.horizon.as_millis()).unwrap_or(u64::MAX);
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{label} {{bar:30}} {{pos}}/{{len}} ms  {{msg}}"))
    {
        bar.set_style(style);
    }
    let ticker = bar.clone();
    let run2 = Arc::clone(run);
    run.spawn(async move {
        loop {
            let ms = u64::try_from(run2.now().as_millis()).unwrap_or(u64::MAX);
            ticker.set_position(ms.min(total));
            ticker.set_message(run2.metrics.progress_line());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    Some(bar)
}
