//! `retrylint serve`: one service of the topology — its tier, its `via`
//! sidecars, its fault plan — as its own process, wired exactly as `chaos`
//! wires it (`boot::boot_service`), its callees found through a
//! [`Resolver`]. An admin listener beside it (`admin.rs`) starts and stops
//! runs and hands out the counters; who may start and stop is
//! `admission.rs`'s.
//!
//! A run starts on `POST /retrylint/start`: the run clock, the fault phases
//! and the horizon all count from the moment this process got the signal
//! (relative times: no clock is compared across machines). Before the first
//! start the service port is bound but nothing is accepted — connections
//! wait in its backlog — so the fault plan never runs before the load. A run
//! ends on `POST /retrylint/stop` or by itself two grace periods past its
//! horizon; its counters stay readable until the next start. A start while
//! a run goes on is refused (409) unless it is the same run's (the same
//! `run_id`, a driver's retry): one driver cannot replace another's run.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

use super::admission::Admission;
use super::resolve::Resolver;
use crate::chaos::harness::api::{ChaosError, STREAM_DRAWS, StopHandle, http_client, shutdown};
use crate::chaos::harness::context::Run;
use crate::chaos::harness::metrics::Metrics;
use crate::chaos::harness::server;
use crate::faults::{FaultPlan, Scenario};
use crate::run::wire::Snapshot;
use crate::run::{Layout, Listener, LoadSettings};
use crate::topology::{ServiceId, Topology};

/// What one `serve` process runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub topology: Topology,
    pub scenario: Scenario,
    pub service: ServiceId,
    /// Where the service listens (port 0: the OS picks).
    pub listen: SocketAddr,
    /// Where `/metrics`, `/retrylint/*` and `/healthz` are served.
    pub admin: SocketAddr,
    pub resolver: Resolver,
    /// Must equal the driver's `--seed`: the draws of every process derive
    /// from it.
    pub seed: u64,
    /// The token start and stop need, and the hosts they may name.
    pub admission: Admission,
    /// How long a connection to either port may take to send a request's
    /// head before it is closed.
    pub header_timeout: Duration,
}

/// Where a `serve` process listens, once it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub http: SocketAddr,
    pub admin: SocketAddr,
}

/// What `drive` sends to start a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartRequest {
    /// Who started the run: a driver's retry of its own start names the
    /// same id and gets the same run; any other start waits for its end.
    pub run_id: String,
    pub seed: u64,
    /// The fault scenario's name, checked against this process's.
    pub fault: String,
    /// No attempt starts at or after this long after the start.
    pub horizon_ns: u64,
    /// How long answers may take past the horizon.
    pub grace_ns: u64,
}

/// What `drive` sends to stop its run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopRequest {
    /// The run to stop; another one going on is left alone (409).
    #[serde(default)]
    pub run_id: Option<String>,
}

/// The longest run a start may ask for (`drive --duration`).
pub(crate) const MAX_HORIZON: Duration = Duration::from_secs(24 * 3600);
/// The longest grace period a start may ask for.
pub(crate) const MAX_GRACE: Duration = Duration::from_secs(600);
/// The longest fault name a start may carry (a path, for a scenario file).
pub(crate) const MAX_FAULT_NAME: usize = 4096;
/// The longest run id.
pub(crate) const MAX_RUN_ID: usize = 64;

impl StartRequest {
    /// Every field within its bound; the refusal names the field and the
    /// bound.
    pub(crate) fn check(&self) -> Result<(), String> {
        check_run_id(&self.run_id)?;
        let over = |field: &str, value: u64, bound: Duration| {
            format!(
                "{field} {value} is over its bound of {} ({} s): ask for a shorter run",
                bound.as_nanos(),
                bound.as_secs()
            )
        };
        if u128::from(self.horizon_ns) > MAX_HORIZON.as_nanos() {
            return Err(over("horizon_ns", self.horizon_ns, MAX_HORIZON));
        }
        if self.horizon_ns == 0 {
            return Err("horizon_ns 0: a run needs a horizon above 0".into());
        }
        if u128::from(self.grace_ns) > MAX_GRACE.as_nanos() {
            return Err(over("grace_ns", self.grace_ns, MAX_GRACE));
        }
        if self.fault.len() > MAX_FAULT_NAME {
            return Err(format!(
                "fault has {} bytes, over its bound of {MAX_FAULT_NAME}",
                self.fault.len()
            ));
        }
        Ok(())
    }
}

fn check_run_id(id: &str) -> Result<(), String> {
    let fine = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.';
    if id.is_empty() || id.len() > MAX_RUN_ID || !id.bytes().all(fine) {
        return Err(format!(
            "run_id must be 1 to {MAX_RUN_ID} letters, digits, `-`, `_` or `.`"
        ));
    }
    Ok(())
}

impl StopRequest {
    pub(crate) fn check(&self) -> Result<(), String> {
        self.run_id.as_deref().map_or(Ok(()), check_run_id)
    }
}

/// What `/retrylint/counters` answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CountersAnswer {
    /// The service's name in the topology.
    pub service: String,
    /// Where it listens.
    pub listen: String,
    /// Its sidecars, if it has `via` layers.
    pub sidecars: Vec<(String, String)>,
    /// Runs started so far (0: none yet).
    pub run: u64,
    /// The driver's id of the current (or last) run; empty before the first.
    #[serde(default)]
    pub run_id: String,
    /// A run is going on (started, not yet ended).
    pub running: bool,
    /// Time since this run's start signal, in ns (this process's clock).
    pub elapsed_ns: u64,
    pub snapshot: Snapshot,
}

/// The run going on, or the last one.
pub(crate) struct Current {
    pub run: Arc<Run>,
    pub number: u64,
    pub id: String,
    pub sidecars: Vec<Listener>,
}

/// One served service and its runs.
pub(crate) struct Served {
    pub config: ServeConfig,
    pub layout: Layout,
    pub plan: FaultPlan,
    pub http: SocketAddr,
    /// The listener bound at boot, until the first run takes it.
    first: std::sync::Mutex<Option<TcpListener>>,
    pub current: tokio::sync::Mutex<Option<Current>>,
    pub runs: AtomicU64,
}

/// Why a start or stop was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error("{0}")]
    Mismatch(String),
    /// Another driver's run is going on.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Chaos(#[from] ChaosError),
}

impl Served {
    /// Starts a fresh run; the number of the run going on when it is the
    /// same (`run_id`); refused while another one goes on.
    pub(crate) async fn start(self: &Arc<Self>, req: &StartRequest) -> Result<u64, StartError> {
        let c = &self.config;
        if req.seed != c.seed {
            return Err(StartError::Mismatch(format!(
                "this service runs with --seed {} but the driver sent seed {}: give `serve` and `drive` the same --seed",
                c.seed, req.seed
            )));
        }
        if req.fault != c.scenario.name {
            return Err(StartError::Mismatch(format!(
                "this service runs fault `{}` but the driver's is `{}`: give `serve` and `drive` the same --fault",
                c.scenario.name, req.fault
            )));
        }
        let mut current = self.current.lock().await;
        if let Some(old) = current.as_ref()
            && !old.run.cancel.is_cancelled()
        {
            if old.id == req.run_id {
                return Ok(old.number);
            }
            return Err(StartError::Busy(format!(
                "run {} is going on ({:.1} s since its start): it ends on `POST /retrylint/stop` with its run_id, or by itself at its horizon plus twice its grace period; start again then",
                old.number,
                old.run.now().as_secs_f64()
            )));
        }
        if let Some(old) = current.take() {
            shutdown(&old.run).await;
        }
        let listener = self.listener().await?;
        let t = &c.topology;
        let queues: Vec<bool> = t.services.iter().map(|s| s.queueing.is_some()).collect();
        let metrics = Metrics::new(
            t.services.len(),
            self.layout.slots(),
            self.plan.targets.clone(),
        )
        .watch_queues(crate::run::queueing::watched(&queues, &self.plan.targets));
        let load = LoadSettings {
            seed: c.seed,
            ..LoadSettings::default()
        };
        let horizon = Duration::from_nanos(req.horizon_ns);
        let run = Arc::new(
            Run::new(
                horizon,
                http_client()?,
                self.plan.clone(),
                load.stream_seed(STREAM_DRAWS),
                metrics,
            )
            // The driver's ids start at 1; each service takes its own 2^40.
            .with_request_ids_from((c.service as u64 + 1) << 40)
            .with_header_timeout(c.header_timeout),
        );
        let sidecars = match crate::chaos::harness::boot::boot_service(
            &run,
            t,
            &self.layout,
            &load,
            c.service,
            listener,
            &c.resolver,
        ) {
            Ok(s) => s,
            Err(e) => {
                shutdown(&run).await;
                return Err(e.into());
            }
        };
        let number = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        // A driver that never says stop does not keep the run forever.
        let end = horizon.saturating_add(Duration::from_nanos(req.grace_ns).saturating_mul(2));
        let ending = Arc::clone(&run);
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep_until(ending.instant(end)) => shutdown(&ending).await,
                _ = ending.cancel.cancelled() => {}
            }
        });
        *current = Some(Current {
            run,
            number,
            id: req.run_id.clone(),
            sidecars,
        });
        Ok(number)
    }

    /// Ends the run going on, if any and if it is `req`'s; its counters
    /// stay.
    pub(crate) async fn stop(&self, req: &StopRequest) -> Result<(), StartError> {
        if let Some(c) = self.current.lock().await.as_ref() {
            if let Some(id) = &req.run_id
                && *id != c.id
                && !c.run.cancel.is_cancelled()
            {
                return Err(StartError::Busy(format!(
                    "run {} going on is not the one named: it is left running",
                    c.number
                )));
            }
            shutdown(&c.run).await;
        }
        Ok(())
    }

    /// The service's listener: the one bound at boot, then the same address
    /// bound again for each later run.
    async fn listener(&self) -> Result<TcpListener, ChaosError> {
        if let Some(l) = crate::chaos::harness::context::lock(&self.first).take() {
            return Ok(l);
        }
        let mut last = None;
        for _ in 0..50 {
            match server::bind_addr(self.http) {
                Ok(l) => return Ok(l),
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Err(ChaosError::Bind(last.unwrap_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::AddrInUse, "address in use")
        })))
    }

    /// The counters of the current (or last) run; zeros before the first.
    pub(crate) async fn counters(&self) -> CountersAnswer {
        let c = &self.config;
        let t = &c.topology;
        let current = self.current.lock().await;
        let (snapshot, run, run_id, running, elapsed, sidecars) = match current.as_ref() {
            Some(cur) => (
                cur.run.metrics.snapshot(),
                cur.number,
                cur.id.clone(),
                !cur.run.cancel.is_cancelled(),
                cur.run.now(),
                cur.sidecars
                    .iter()
                    .map(|l| (l.name.clone(), l.addr.clone()))
                    .collect(),
            ),
            None => (
                Metrics::new(t.services.len(), self.layout.slots(), Vec::new()).snapshot(),
                0,
                String::new(),
                false,
                Duration::ZERO,
                Vec::new(),
            ),
        };
        CountersAnswer {
            service: t.services[c.service].name.clone(),
            listen: self.http.to_string(),
            sidecars,
            run,
            run_id,
            running,
            elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
            snapshot,
        }
    }
}

/// Serves `config` until `stop` is cancelled: binds the service and admin
/// listeners, tells `ready` where they are, and answers the admin port.
pub async fn serve(
    config: ServeConfig,
    ready: impl FnOnce(Bound),
    stop: StopHandle,
) -> Result<(), ChaosError> {
    let plan = config.scenario.plan(&config.topology)?;
    // Every callee must have an address before anything listens.
    config.resolver.callees(&config.topology, config.service)?;
    let layout = Layout::new(&config.topology);
    let bind = |addr, flag| {
        server::bind_addr(addr).map_err(|error| ChaosError::BindAddr { addr, flag, error })
    };
    let service = bind(config.listen, "--listen")?;
    let http = service.local_addr().map_err(ChaosError::Bind)?;
    let admin = bind(config.admin, "--admin")?;
    let admin_addr = admin.local_addr().map_err(ChaosError::Bind)?;
    let served = Arc::new(Served {
        config,
        layout,
        plan,
        http,
        first: std::sync::Mutex::new(Some(service)),
        current: tokio::sync::Mutex::new(None),
        runs: AtomicU64::new(0),
    });
    ready(Bound {
        http,
        admin: admin_addr,
    });
    let timeout = served.config.header_timeout;
    let router = super::admin::router(Arc::clone(&served));
    super::admin::listen(admin, router, timeout, stop).await;
    if let Some(c) = served.current.lock().await.take() {
        shutdown(&c.run).await;
    }
    Ok(())
}

/// [`serve`] on its own runtime, until Ctrl-C or SIGTERM.
pub fn serve_blocking(config: ServeConfig, ready: impl FnOnce(Bound)) -> Result<(), ChaosError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("retrylint-serve")
        .build()
        .map_err(ChaosError::Runtime)?;
    let result = rt.block_on(async {
        let stop = StopHandle::new();
        let signals = on_signals(stop.clone());
        let result = serve(config, ready, stop).await;
        signals.abort();
        result
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Cancels `stop` on SIGINT, SIGTERM (what `docker stop` and Kubernetes
/// send) or SIGHUP, so the process ends its run and exits 0.
fn on_signals(stop: StopHandle) -> tokio::task::JoinHandle<()> {
    let signal = crate::stop_signal::listen();
    tokio::spawn(async move {
        signal.await;
        stop.cancel();
    })
}
