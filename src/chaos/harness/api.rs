//! The harness's entry points: a run on its own runtime or on the caller's,
//! its options and its errors, and the steps every run shares (the HTTP
//! client, driving until done or stopped, shutting down).

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use tokio_util::sync::CancellationToken as StopHandle;

use super::context::Run;
use super::descriptors::Need;
use super::metrics::Metrics;
use crate::chaos::load::driver::Driver;
use crate::faults::{Scenario, UnknownTarget};
use crate::run::{
    Arrival, Descriptors, Harness, Layout, Listener, LoadSettings, Mode, RunInfo, RunReport,
};
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
    /// Open loop: user requests in flight at once, at most (`--max-in-flight`).
    pub max_in_flight: usize,
    /// When the topology has circuit breakers, run the scenario a second
    /// time without them (fresh servers, same seed and load) to report the
    /// attempts they saved, as `simulate` does. Doubles the run's wall time.
    pub breaker_baseline: bool,
}

impl RunOptions {
    /// The default bound on open-loop user requests in flight: wrk's scale
    /// of connections, far above what a healthy run at a sane rate holds.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 1000;
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            grace: Duration::from_secs(5),
            stop: None,
            ctrl_c: true,
            ready: None,
            max_in_flight: RunOptions::DEFAULT_MAX_IN_FLIGHT,
            breaker_baseline: true,
        }
    }
}

fn in_use_hint(e: &std::io::Error, flag: &str) -> String {
    if e.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            "; another process holds the port: name another with {flag}, or port 0 for one the OS picks"
        )
    } else {
        String::new()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChaosError {
    #[error(transparent)]
    Target(#[from] UnknownTarget),
    #[error(transparent)]
    Unresolved(#[from] crate::chaos::fleet::resolve::Unresolved),
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// A port the user named could not be bound.
    #[error("cannot listen on {addr} ({flag}): {error}{}", in_use_hint(.error, .flag))]
    BindAddr {
        addr: std::net::SocketAddr,
        flag: &'static str,
        error: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// A `serve` process did not start, stop or hand over its counters.
    #[error("{0}")]
    Collect(String),
    /// Not even one user request at a time fits the descriptor limit.
    #[error(
        "this run needs at least {minimum} open file descriptors ({listeners} listeners, and {per_request} connections per user request, both ends in this process) but the limit is {limit}; raise it (`ulimit -n {minimum}` or more, as the hard limit allows) or run a smaller topology, or run the services as separate processes (`retrylint serve`)"
    )]
    Descriptors {
        minimum: u64,
        listeners: u64,
        per_request: u64,
        limit: u64,
    },
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
    on_own_runtime("retrylint-chaos", options, |opts| async move {
        run_async(topology, scenario, load, &opts).await
    })
}

/// Runs `body` on a runtime of its own (two worker threads), stopping it
/// early on Ctrl-C when `options` ask: the blocking entry points of `chaos`
/// and `drive`.
pub(crate) fn on_own_runtime<F, T>(
    name: &str,
    options: &RunOptions,
    body: impl FnOnce(RunOptions) -> F,
) -> Result<T, ChaosError>
where
    F: std::future::Future<Output = Result<T, ChaosError>>,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name(name)
        .build()
        .map_err(ChaosError::Runtime)?;
    let result = rt.block_on(async {
        let stop = options.stop.clone().unwrap_or_default();
        let ctrl_c = options.ctrl_c.then(|| on_ctrl_c(stop.clone()));
        let mut opts = options.clone();
        opts.stop = Some(stop);
        let result = body(opts).await;
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

/// Cancels `stop` on SIGINT, SIGTERM or SIGHUP (`crate::stop_signal`). The
/// handlers are installed before this returns, so a signal that comes once
/// the servers listen is always the run's to handle (not the default action,
/// which would kill the process without a report).
pub(crate) fn on_ctrl_c(stop: StopHandle) -> tokio::task::JoinHandle<()> {
    let signal = crate::stop_signal::listen();
    tokio::spawn(async move {
        signal.await;
        stop.cancel();
    })
}

/// The run on the caller's tokio runtime. Every server and task it started
/// has ended when it returns.
pub(crate) async fn run_async(
    topology: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let mut report = run_once(topology, scenario, load, options, "chaos").await?;
    if options.breaker_baseline && topology.has_breakers() {
        let again = RunOptions {
            ready: None,
            ..options.clone()
        };
        let label = "chaos again, without breakers, for what they saved";
        let without =
            match run_once(&topology.without_breakers(), scenario, load, &again, label).await {
                Ok(r) => r,
                // Stopped during the second run: the first one stands, and
                // what the breakers saved is unknown.
                Err(ChaosError::Interrupted(_)) => {
                    return Err(ChaosError::Interrupted(Box::new(report)));
                }
                Err(e) => return Err(e),
            };
        report.breakers = Some(crate::run::BreakerEffect::between(&report, &without));
    }
    Ok(report)
}

/// One run of `scenario` on freshly booted servers; `label` heads its
/// progress bar.
async fn run_once(
    topology: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &RunOptions,
    label: &str,
) -> Result<RunReport, ChaosError> {
    let wall = Instant::now();
    let plan = scenario.plan(topology)?;
    let descriptors = check_descriptors(topology, load, options)?;
    let layout = Layout::new(topology);
    let targets = plan.targets.clone();
    let queues: Vec<bool> = topology
        .services
        .iter()
        .map(|s| s.queueing.is_some())
        .collect();
    let metrics = Metrics::new(topology.services.len(), layout.slots(), targets.clone())
        .watch_queues(crate::run::queueing::watched(&queues, &targets));
    let run = Arc::new(Run::new(
        load.horizon(),
        http_client()?,
        plan,
        load.stream_seed(STREAM_DRAWS),
        metrics,
    ));
    let booted = super::boot::boot(&run, topology, &layout, load, options.max_in_flight);
    let (listeners, driver) = match booted {
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
    let bar = super::progress::start(&run, options.progress, label);
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
    let mut report = run.metrics.report(topology, &layout, info);
    report.harness = harness(&run, load, options, descriptors);
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// Raises the descriptor limit and holds the run's estimated need to it:
/// refused when not even one user request at a time fits, a warning (in the
/// report) when the estimate for the whole load does not.
fn check_descriptors(
    t: &Topology,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<Option<(Descriptors, Need)>, ChaosError> {
    let Some(limit) = super::descriptors::raise_limit() else {
        return Ok(None);
    };
    let in_flight = match load.arrival {
        Arrival::Clients(n) => u64::from(n),
        Arrival::Rate(_) => (options.max_in_flight as u64).min(load.due_count().max(1)),
    };
    let need = Need::of(t, in_flight);
    if need.minimum() > limit {
        return Err(ChaosError::Descriptors {
            minimum: need.minimum(),
            listeners: need.listeners,
            per_request: need.per_request,
            limit,
        });
    }
    let estimate = Descriptors {
        limit,
        estimated: need.total(),
    };
    Ok(Some((estimate, need)))
}

/// How the harness kept up: the counts, the limits, and warnings in words.
fn harness(
    run: &Run,
    load: &LoadSettings,
    options: &RunOptions,
    descriptors: Option<(Descriptors, Need)>,
) -> Harness {
    let mut h = run.metrics.harness();
    if matches!(load.arrival, Arrival::Rate(_)) {
        h.max_in_flight = Some(options.max_in_flight as u64);
    }
    if h.late > 0 || h.not_sent > 0 {
        h.warnings.push(format!(
            "the load driver could not keep up: {} user requests waited for one of {} slots (late; their latency counts from when they were due) and {} were never sent; the figures describe this machine as much as the policies: lower --rate, raise --max-in-flight, or run the services as separate processes",
            h.late, options.max_in_flight, h.not_sent
        ));
    }
    if let Some((d, need)) = descriptors {
        h.descriptors = Some(d);
        if d.estimated > d.limit {
            h.warnings.push(format!(
                "this run may need {} open file descriptors ({} listeners, {} user requests in flight × {} connections × 2 ends) but the limit is {}",
                d.estimated, need.listeners, need.in_flight, need.per_request, d.limit
            ));
        }
    }
    if h.descriptor_errors > 0 {
        h.warnings.push(format!(
            "{} connections failed because this process ran out of file descriptors (limit {}): refused connections and 502s among the figures may be the harness's, not the fault's; raise `ulimit -n` or lower the load",
            h.descriptor_errors,
            h.descriptors.map_or("unknown".to_owned(), |d| d.limit.to_string())
        ));
    }
    h
}

/// The client every tier calls the next hop with: plain HTTP/1.1 to
/// loopback, no proxy, no retries of its own (the layers retry).
pub(crate) fn http_client() -> Result<reqwest::Client, ChaosError> {
    reqwest::Client::builder()
        .no_proxy()
        .retry(reqwest::retry::never())
        .http1_only()
        .tcp_nodelay(true)
        .pool_idle_timeout(super::context::CLIENT_IDLE)
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
    let interrupted = tokio::select! {
        () = Arc::clone(&driver).drive(options.grace) => false,
        _ = stop.cancelled() => true,
    };
    shutdown(run).await;
    if !interrupted {
        run.metrics.unfinished(driver.unfinished());
    }
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
