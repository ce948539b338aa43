//! Sleeping to well under a millisecond on a machine whose timer wakes late.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// How late tokio's timer wakes sleepers on this machine, in ns: the
/// deadline rounded up to a whole-ms tick, the park timeout rounded up
/// again, plus the OS's own slack (about 2.4 ms measured on a 2-core VM).
/// Rises fast, decays slowly.
static TIMER_LATENESS_NS: AtomicU64 = AtomicU64::new(2_500_000);

/// Sleeps until `deadline` to well under a millisecond: the timer sleeps to
/// just before it, by the lateness seen so far plus a margin, and the last
/// stretch yields in a loop. Injected delays and service times would
/// otherwise all come out 1 to 3 ms long.
pub(crate) async fn sleep_until_precise(deadline: Instant) {
    const MARGIN: Duration = Duration::from_micros(500);
    // A stalled machine must not turn every sleep into a long spin.
    const MAX_SLACK: Duration = Duration::from_millis(5);
    let late = Duration::from_nanos(TIMER_LATENESS_NS.load(Ordering::Relaxed));
    let slack = (late + MARGIN).min(MAX_SLACK);
    if deadline.saturating_duration_since(Instant::now()) > slack {
        let target = deadline - slack;
        tokio::time::sleep_until(target).await;
        note_timer_lateness(Instant::now().saturating_duration_since(target));
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

fn note_timer_lateness(late: Duration) {
    let late = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
    let _ = TIMER_LATENESS_NS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |est| {
        Some(if late >= est {
            est + (late - est) / 2
        } else {
            est - (est - late) / 16
        })
    });
}
