//! The signals that end a run early, handled alike: SIGINT (Ctrl-C), SIGTERM
//! (what CI runners, `timeout`, `docker stop` and Kubernetes send) and SIGHUP
//! (a closed terminal or SSH session). Each stops the run, which reports what
//! it collected (`interrupted: true` in JSON) and exits 128 + the signal's
//! number, as a shell reports a process the signal killed: 130, 143, 129.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[cfg(unix)]
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// SIGINT's number, the exit code's base when no signal was recorded.
#[cfg(unix)]
const INTERRUPT: usize = SIGINT as usize;
#[cfg(not(unix))]
const INTERRUPT: usize = 2;

/// The first stop signal this process received, 0 for none.
fn received() -> &'static Arc<AtomicUsize> {
    static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

fn record(signal: usize) {
    let _ = received().compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// The exit code of a run a stop signal ended: 128 + its number (130 when
/// none was recorded: the run was stopped some other way).
pub fn exit_code() -> u8 {
    let signal = match received().load(Ordering::SeqCst) {
        0 => INTERRUPT,
        s => s,
    };
    u8::try_from(128 + signal).unwrap_or(130)
}

/// Sets `flag` on any stop signal, from the signal handler itself (for
/// synchronous code such as the simulator's trial threads). Without a
/// handler the signal would still end the process, only without a report.
pub fn set_on_stop(flag: &Arc<AtomicBool>) {
    #[cfg(unix)]
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // Order matters: the number is recorded before the flag is seen.
        let _ = signal_hook::flag::register_usize(signal, Arc::clone(received()), signal as usize);
        let _ = signal_hook::flag::register(signal, Arc::clone(flag));
    }
    #[cfg(not(unix))]
    let _ = flag;
}

/// Installs the handlers now and returns a future that ends at the first stop
/// signal. Installed before the caller goes on, so a signal that comes once
/// the servers listen is always the run's to handle.
pub fn listen() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let streams = [
            (SignalKind::interrupt(), SIGINT),
            (SignalKind::terminate(), SIGTERM),
            (SignalKind::hangup(), SIGHUP),
        ]
        .map(|(kind, number)| (signal(kind).ok(), number as usize));
        async move {
            let [(int, i), (term, t), (hup, h)] = streams;
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let number = tokio::select! {
                () = wait(int) => i,
                () = wait(term) => t,
                () = wait(hup) => h,
            };
            record(number);
        }
    }
    #[cfg(not(unix))]
    async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            record(INTERRUPT);
        }
    }
}
