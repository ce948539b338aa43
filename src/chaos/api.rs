//! The harness's entry points: a run on its own runtime or on the caller's,
//! its options and its errors, and the steps every run shares (the HTTP
//! client, driving until done or stopped, shutting down).

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use tokio_util::sync::CancellationToken as StopHandle;

use super::context::Run;
use super::driver::Driver;
use super::metrics::Metrics;
use crate::faults::{Scenario, UnknownTarget};
use crate::run::{Layout, Listener, LoadSettings, Mode, RunInfo, RunReport};
use crate::topology::Topology;

/// The random stream (`LoadSettings::stream_seed`) at the root of every
/// request's fault dice and work-time draws (`DrawKey`).
pub(crate) const STREAM_DRAWS: u64 = 1;
/// The first of the streams of each retry layer's caller (its jitter), one
/// per slot.
pub(crate) const STREAM_LAYERS: u64 = 2_000_000;

/// How a run behaves beyond the load settings.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Draw a progress bar on stderr when it is a terminal.
    pub progress: bool,
    /// How long answers in flight may take after the horizon before the run
    /// ends anyway (a `hang` without timeouts would wait forever).
    pub grace: Duration,
    /// Cancel to stop the run early; [`run`] also stops on Ctrl-C.
    pub stop: Option<StopHandle>,
    /// Listen for Ctrl-C (SIGINT) during the run. Once a process has listened,
    /// SIGINT no longer kills it by default: leave this off in embedders that
    /// handle signals themselves.
    pub ctrl_c: bool,
    /// Told where every server listens once all of them are up, just before
    /// the load starts: a readiness signal for embedders and tests.
    pub ready: Option<std::sync::mpsc::Sender<Vec<Listener>>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            grace: Duration::from_secs(5),
            stop: None,
            ctrl_c: true,
            ready: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChaosError {
    #[error(transparent)]
    Target(#[from] UnknownTarget),
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// Stopped early (Ctrl-C or the stop handle); the report covers what ran.
    #[error("interrupted: the run was stopped before its end")]
    Interrupted(Box<RunReport>),
}

/// Runs `scenario` against `topology` under `load` (seeded by `load.seed`) on
/// its own runtime, stopping early on Ctrl-C. Never prints.
pub fn run(
    topology: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
) -> Result<RunReport, ChaosError> {
    run_with(topology, scenario, load, &RunOptions::default())
}

/// [`run`] with options. Must not be called from inside a tokio runtime; use
/// [`run_async`] there.
pub fn run_with(
    topology: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("retrylint-chaos")
        .build()
        .map_err(ChaosError::Runtime)?;
    let result = rt.block_on(async {
        let stop = options.stop.clone().unwrap_or_default();
        let ctrl_c = options.ctrl_c.then(|| on_ctrl_c(stop.clone()));
        let mut opts = options.clone();
        opts.stop = Some(stop);
        let result = run_async(topology, scenario, load, &opts).await;
        if let Some(task) = ctrl_c {
            task.abort();
        }
        result
    });
    // Every task of the run has ended already; this only reaps the client's
    // idle connections.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Cancels `stop` on SIGINT. The handler is installed before this returns,
/// so a Ctrl-C that comes once the servers listen is always the run's to
/// handle (not the default action, which would kill the process).
fn on_ctrl_c(stop: StopHandle) -> tokio::task::JoinHandle<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::interrupt()) {
            Ok(mut interrupts) => tokio::spawn(async move {
                if interrupts.recv().await.is_some() {
                    stop.cancel();
                }
            }),
            Err(_) => tokio::spawn(async {}),
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    })
}

/// The run on the caller's tokio runtime. Every server and task it started
/// has ended when it returns.
pub async fn run_async(
    topology: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let wall = Instant::now();
    let plan = scenario.plan(topology)?;
    let layout = Layout::new(topology);
    let targets = plan.targets.clone();
    let metrics = Metrics::new(topology.services.len(), layout.slots(), targets.clone());
    let run = Arc::new(Run::new(
        load.horizon(),
        http_client()?,
        plan,
        load.stream_seed(STREAM_DRAWS),
        metrics,
    ));
    let (listeners, driver) = match super::boot::boot(&run, topology, &layout, load) {
        Ok(b) => b,
        Err(e) => {
            shutdown(&run).await;
            return Err(e);
        }
    };
    if let Some(ready) = &options.ready {
        // Nobody listening for it is no reason to stop the run.
        let _ = ready.send(listeners.clone());
    }
    let bar = super::progress::start(&run, options.progress);
    let interrupted = drive_until_done(&run, driver, options).await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let info = RunInfo {
        mode: Mode::Chaos,
        scenario,
        load,
        targets: &targets,
        elapsed_ms: wall.elapsed().as_secs_f64() * 1e3,
        listeners,
        interrupted,
    };
    let report = run.metrics.report(topology, &layout, info);
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// The client every tier calls the next hop with: plain HTTP/1.1 to
/// loopback, no proxy, no retries of its own (the layers retry).
pub(crate) fn http_client() -> Result<reqwest::Client, ChaosError> {
    reqwest::Client::builder()
        .no_proxy()
        .retry(reqwest::retry::never())
        .http1_only()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ChaosError::Client(e.to_string()))
}

/// Drives the load until it is done (the horizon plus the grace period) or
/// the run is stopped, then shuts everything down and counts the user
/// requests left unanswered. Returns whether the run was stopped early.
pub(crate) async fn drive_until_done(
    run: &Arc<Run>,
    driver: Arc<Driver>,
    options: &RunOptions,
) -> bool {
    let stop = options.stop.clone().unwrap_or_default();
    let mut interrupted = false;
    let unfinished = tokio::select! {
        n = driver.drive(options.grace) => n,
        _ = stop.cancelled() => {
            interrupted = true;
            0
        }
    };
    shutdown(run).await;
    run.metrics.unfinished(unfinished);
    interrupted
}

/// Ends every task of the run and waits until they are gone.
pub(crate) async fn shutdown(run: &Arc<Run>) {
    run.cancel.cancel();
    run.tasks.close();
    // Every task selects on the cancellation, so this is quick; the bound only
    // guards against a task stuck in blocking code.
    let _ = tokio::time::timeout(Duration::from_secs(5), run.tasks.wait()).await;
}
