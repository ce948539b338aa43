//! The chaos harness: boots the topology as real axum servers on 127.0.0.1,
//! each tier calling the next over real HTTP (reqwest) through its retry
//! layers — `via` layers as real retrying proxies — injects the scenario's
//! faults as a tower layer on the target servers, drives load through the
//! `client:` layer into the entry, and measures what happens.
//!
//! Every run is seeded and bounded in time (the horizon plus a grace period
//! for answers in flight); every server and task belongs to the run and is
//! gone when [`run`] returns — after the load ends, on error, and on Ctrl-C.
//! Nothing here prints (the progress bar is opt-in).
//!
//! One job per file: `server` (listening, down windows, detaching work),
//! `tier` (a service's semantics), `sidecar` (a `via` proxy), `client` (one
//! retrying layer), `transport` (reqwest between tiers, `http1`'s lean client in
//! the load driver), `fault_layer` (faults on real requests), `driver`
//! (load), `metrics` (counters → report), `progress`, `context` (what a run
//! shares).
//!
//! Modelling choices the simulator shares (DESIGN leaves them open):
//! - a service makes every call of a request even when an earlier one failed,
//!   and answers with the last failure once all are done, so attempts under
//!   total failure equal the static worst case (the sum over call paths);
//! - a request id header follows one logical call through every retry of
//!   every layer; a callee counts a second execution of a non-idempotent one
//!   without `Idempotency-Key` as a duplicate (with the key it still does the
//!   work — the key makes it safe, not free);
//! - a tier keeps working when its caller hangs up (work nobody waits for); a
//!   `via` sidecar stops, as Envoy resets the upstream stream;
//! - a service with `deadline_propagation: true` honours an incoming deadline
//!   (answers 504 at once when it has passed, never starts an attempt at or
//!   after it, caps attempt timeouts by it) and sends min(remaining, attempt
//!   timeout) downstream; the `client:` layer sends the topology's `deadline`;
//! - the topology's `capacity:` applies the overload model at all times; an
//!   `overload` phase replaces it while on;
//! - the `client:` layer is one caller per closed-loop client (own budget and
//!   random stream); in open loop all user requests share one caller;
//! - fault dice and work-time draws are keyed to the request, not taken from a
//!   shared stream in arrival order (`DrawKey`), so a rerun with the same seed
//!   differs only where real timing decides.

mod client;
mod context;
mod driver;
mod fault_layer;
pub mod fuzz_hook;
mod http1;
mod metrics;
mod progress;
mod server;
mod sidecar;
mod tier;
mod transport;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;

pub use tokio_util::sync::CancellationToken as StopHandle;

use self::client::LayerClient;
use self::context::{CallerState, Run};
use self::metrics::{Layout, Metrics};
use self::server::{Detach, Meter};
use self::transport::{DirectPool, Transport};
use crate::faults::{Scenario, UnknownTarget};
use crate::run::{LoadSettings, RunReport};
use crate::topology::Topology;

/// The random stream (`LoadSettings::stream_seed`) at the root of every
/// request's fault dice and work-time draws (`DrawKey`).
const STREAM_DRAWS: u64 = 1;
/// The first of the streams of each retry layer's caller (its jitter), one
/// per metrics slot.
const STREAM_LAYERS: u64 = 2_000_000;

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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            grace: Duration::from_secs(5),
            stop: None,
            ctrl_c: true,
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
        let ctrl_c = options.ctrl_c.then(|| {
            let stop = stop.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    stop.cancel();
                }
            })
        });
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
    let http = reqwest::Client::builder()
        .no_proxy()
        .retry(reqwest::retry::never())
        .http1_only()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ChaosError::Client(e.to_string()))?;
    let metrics = Metrics::new(topology.services.len(), layout.slots, plan.targets.clone());
    let run = Arc::new(Run::new(
        load.horizon(),
        http,
        plan,
        load.stream_seed(STREAM_DRAWS),
        metrics,
    ));
    let booted = boot(&run, topology, &layout, load);
    let stop = options.stop.clone().unwrap_or_default();
    let (listeners, driver) = match booted {
        Ok(b) => b,
        Err(e) => {
            shutdown(&run).await;
            return Err(e);
        }
    };
    let bar = progress::start(&run, options.progress);
    let mut interrupted = false;
    let unfinished = tokio::select! {
        n = driver.drive(options.grace) => n,
        _ = stop.cancelled() => {
            interrupted = true;
            0
        }
    };
    shutdown(&run).await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    run.metrics.unfinished(unfinished);
    let target = scenario.target.to_string();
    let (services, end_to_end, timeline) = run.metrics.report(topology, &layout, &target);
    let report = RunReport {
        fault: scenario.name.clone(),
        seed: load.seed,
        mode: "chaos".into(),
        topology: topology.name.clone(),
        fault_description: scenario.description.clone(),
        target,
        load: load.summary(),
        services,
        end_to_end,
        timeline,
        expectations: Vec::new(),
        trials: None,
        listeners,
        elapsed_ms: wall.elapsed().as_secs_f64() * 1e3,
        interrupted,
    };
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// Drives `load` against any HTTP server at `url` (plain `http://`, loopback
/// or not) through a client layer without retries: the load driver alone,
/// for benchmarks and for pointing a game day at a real service. The report
/// has only end-to-end figures.
pub async fn drive_url(
    url: &str,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let wall = Instant::now();
    let http = reqwest::Client::builder()
        .no_proxy()
        .retry(reqwest::retry::never())
        .http1_only()
        .tcp_nodelay(true)
        .build()
        .map_err(|e| ChaosError::Client(e.to_string()))?;
    let plan = crate::faults::FaultPlan {
        targets: Vec::new(),
        phases: Vec::new(),
    };
    let metrics = Metrics::new(0, 1, Vec::new());
    let run = Arc::new(Run::new(load.horizon(), http, plan, 0, metrics));
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| ChaosError::Client(format!("`{url}` is not a plain http:// URL")))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_owned()),
        None => (rest, "/".to_owned()),
    };
    // The fragment stays with the client; the rest goes on the request line
    // as written, so it must be one visible-ASCII token.
    let path = path.split('#').next().unwrap_or("/").to_owned();
    if !path.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ChaosError::Client(format!(
            "`{url}`: the path must be visible ASCII without spaces (percent-encode the rest)"
        )));
    }
    let with_port = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let addr = tokio::net::lookup_host(with_port.as_str())
        .await
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| ChaosError::Client(format!("cannot resolve `{authority}`")))?;
    let client = LayerClient {
        run: Arc::clone(&run),
        slot: Layout::CLIENT,
        policy: Default::default(),
        timeout: None,
        url: format!("http://{authority}"),
        transport: Transport::Direct(DirectPool::new(addr)),
        callee: None,
        propagate_deadline: false,
    };
    let driver = Arc::new(driver::Driver {
        run: Arc::clone(&run),
        client: Arc::new(client),
        budget: None,
        deadline: None,
        load: load.clone(),
        path: path.into(),
    });
    let stop = options.stop.clone().unwrap_or_default();
    let mut interrupted = false;
    let unfinished = tokio::select! {
        n = driver.drive(options.grace) => n,
        _ = stop.cancelled() => {
            interrupted = true;
            0
        }
    };
    shutdown(&run).await;
    run.metrics.unfinished(unfinished);
    let report = RunReport {
        fault: "none".into(),
        seed: load.seed,
        mode: "drive".into(),
        topology: url.to_owned(),
        target: url.to_owned(),
        load: load.summary(),
        end_to_end: run.metrics.end_to_end(None),
        elapsed_ms: wall.elapsed().as_secs_f64() * 1e3,
        interrupted,
        ..RunReport::default()
    };
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// Ends every task of the run and waits until they are gone.
async fn shutdown(run: &Arc<Run>) {
    run.cancel.cancel();
    run.tasks.close();
    // Every task selects on the cancellation, so this is quick; the bound only
    // guards against a task stuck in blocking code.
    let _ = tokio::time::timeout(Duration::from_secs(5), run.tasks.wait()).await;
}

/// Binds every server, wires tiers, sidecars and the client layer, and starts
/// serving. Returns where everything listens and the load driver.
fn boot(
    run: &Arc<Run>,
    t: &Topology,
    layout: &Layout,
    load: &LoadSettings,
) -> Result<(Vec<crate::run::Listener>, Arc<driver::Driver>), ChaosError> {
    let mut listeners = Vec::new();
    let mut service_sockets = Vec::with_capacity(t.services.len());
    for s in &t.services {
        let l = server::bind(0).map_err(ChaosError::Bind)?;
        let addr = l.local_addr().map_err(ChaosError::Bind)?;
        listeners.push(crate::run::Listener {
            name: s.name.clone(),
            addr: addr.to_string(),
        });
        service_sockets.push((l, format!("http://{addr}"), addr));
    }
    // Sidecar sockets: `via[s][c][li]` for li ≥ 1.
    let mut via_sockets = Vec::new();
    for (sid, s) in t.services.iter().enumerate() {
        let mut per_service = Vec::new();
        for c in &s.calls {
            let mut per_call = Vec::new();
            for layer in c.layers.iter().skip(1) {
                let l = server::bind(0).map_err(ChaosError::Bind)?;
                let addr = l.local_addr().map_err(ChaosError::Bind)?;
                listeners.push(crate::run::Listener {
                    name: format!(
                        "{}→{}/{}",
                        t.services[sid].name, t.services[c.to].name, layer.name
                    ),
                    addr: addr.to_string(),
                });
                per_call.push((l, format!("http://{addr}")));
            }
            per_service.push(per_call);
        }
        via_sockets.push(per_service);
    }
    let urls: Vec<String> = service_sockets.iter().map(|(_, u, _)| u.clone()).collect();
    let entry_addr = service_sockets[t.entry].2;
    let mut tiers = Vec::with_capacity(t.services.len());
    for (sid, s) in t.services.iter().enumerate() {
        let mut calls = Vec::with_capacity(s.calls.len());
        for (ci, c) in s.calls.iter().enumerate() {
            let vias = &mut via_sockets[sid][ci];
            let n = c.layers.len();
            // Layer li sends to sidecar li + 1, the last one to the callee.
            let next_url = |li: usize, vias: &Vec<(tokio::net::TcpListener, String)>| {
                if li + 1 < n {
                    vias[li].1.clone()
                } else {
                    urls[c.to].clone()
                }
            };
            let client_for = |li: usize, vias: &Vec<(tokio::net::TcpListener, String)>| {
                let layer = &c.layers[li];
                LayerClient {
                    run: Arc::clone(run),
                    slot: layout.calls[sid][ci][li],
                    policy: layer.policy.clone(),
                    timeout: layer.timeout.map(|l| l.value),
                    url: next_url(li, vias),
                    transport: Transport::Reqwest(run.http.clone()),
                    callee: (li + 1 == n).then_some(c.to),
                    propagate_deadline: s.deadline_propagation,
                }
            };
            let app = client_for(0, vias);
            let sidecars: Vec<LayerClient> = (1..n).map(|li| client_for(li, vias)).collect();
            for (li, (client, (listener, _))) in
                sidecars.into_iter().zip(vias.drain(..)).enumerate()
            {
                let seed = load.stream_seed(STREAM_LAYERS + layout.calls[sid][ci][li + 1] as u64);
                let state = CallerState::new(client.policy.budget.as_ref(), seed);
                let proxy = Arc::new(sidecar::Sidecar { client, state });
                let router = Router::new().fallback(sidecar::handle).with_state(proxy);
                server::serve(run, listener, Vec::new(), router);
            }
            let seed = load.stream_seed(STREAM_LAYERS + layout.calls[sid][ci][0] as u64);
            let path = match &c.path {
                Some(p) if p.starts_with('/') => p.clone(),
                Some(p) => format!("/{p}"),
                None => "/".into(),
            };
            calls.push(tier::TierCall {
                method: reqwest::Method::from_bytes(c.method.value.as_bytes())
                    .unwrap_or(reqwest::Method::GET),
                path: path.into(),
                idempotent: c.idempotent,
                idempotency_key: c.idempotency_key,
                parallel: c.parallel,
                state: Arc::new(CallerState::new(app.policy.budget.as_ref(), seed)),
                client: Arc::new(app),
            });
        }
        tiers.push(Arc::new(tier::Tier::new(
            Arc::clone(run),
            sid,
            s.latency,
            s.capacity.map(|c| c.value),
            s.deadline_propagation,
            calls,
        )));
    }
    for (sid, ((listener, _, _), tier)) in service_sockets.into_iter().zip(tiers).enumerate() {
        let router = Router::new().fallback(tier::handle).with_state(tier);
        let down = run.plan.down_windows(sid);
        if run.plan.is_target(sid) {
            let faulty = tower::Layer::layer(
                &fault_layer::FaultLayer {
                    run: Arc::clone(run),
                    service: sid,
                },
                router,
            );
            let svc = Detach {
                inner: Meter {
                    inner: faulty,
                    run: Arc::clone(run),
                    service: sid,
                },
                run: Arc::clone(run),
            };
            server::serve(run, listener, down, svc);
        } else {
            let svc = Detach {
                inner: Meter {
                    inner: router,
                    run: Arc::clone(run),
                    service: sid,
                },
                run: Arc::clone(run),
            };
            server::serve(run, listener, down, svc);
        }
    }
    let client_layer = t.client.as_ref();
    let client = LayerClient {
        run: Arc::clone(run),
        slot: Layout::CLIENT,
        policy: client_layer.map(|l| l.policy.clone()).unwrap_or_default(),
        timeout: client_layer.and_then(|l| l.timeout.map(|x| x.value)),
        url: urls[t.entry].clone(),
        transport: Transport::Direct(DirectPool::new(entry_addr)),
        callee: Some(t.entry),
        propagate_deadline: t.deadline.is_some(),
    };
    let driver = Arc::new(driver::Driver {
        run: Arc::clone(run),
        budget: client.policy.budget.clone(),
        client: Arc::new(client),
        deadline: t.deadline.map(|d| d.value),
        load: load.clone(),
        path: "/".into(),
    });
    Ok((listeners, driver))
}
