//! A progress bar for long simulations on a terminal (trials done, ETA),
//! nothing on a pipe. Opt-in: the library never draws unless asked.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::guard::Guard;

/// Runs `work`, drawing the trials `guard` counts against `trials` meanwhile.
pub(crate) fn with_bar<T: Send>(
    enabled: bool,
    trials: u32,
    guard: &Guard,
    work: impl FnOnce() -> T + Send,
) -> T {
    if !enabled || !std::io::stderr().is_terminal() {
        return work();
    }
    let bar = ProgressBar::with_draw_target(Some(u64::from(trials)), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("simulate {bar:30} {pos}/{len} trials  eta {eta}")
    {
        bar.set_style(style);
    }
    let done = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                bar.set_position(guard.trials_done.load(Ordering::Relaxed));
                std::thread::park_timeout(Duration::from_millis(100));
            }
        });
        let result = work();
        done.store(true, Ordering::Relaxed);
        result
    });
    bar.finish_and_clear();
    result
}
