//! The validated topology: services, calls and retry layers as `policy` values,
//! each keeping the source position that a finding points at.

use std::time::Duration;

use crate::external::facts::CallFigures;
pub(crate) use crate::external::facts::{Counted, CounterKind};
use crate::policy::{BreakerSpec, HedgingPolicy, RetryPolicy};

/// Where a layer's policy fields were written (shared with the importers' facts).
pub(crate) use crate::input::spans::PolicySpans;
pub use crate::input::yaml::Pos;

/// Index of a service in `Topology::services`.
pub(crate) type ServiceId = usize;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub pos: Pos,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub name: String,
    /// The path as the user gave it; findings name it.
    pub file: String,
    /// The whole source text, for snippets; shared with the check's report
    /// (a large topology's text is megabytes).
    pub source: std::sync::Arc<String>,
    /// The first of `entries`: where the analyses send user requests. A
    /// topology with several entries is analysed once per entry, each time
    /// with this set to it (`lint::check`), or a run picks one (`--entry`).
    pub entry: ServiceId,
    /// Every service that receives user traffic, in the order `entry:` names
    /// them (or file order when inferred); never empty, `entries[0] == entry`.
    pub entries: Vec<ServiceId>,
    /// End-to-end deadline of one user request.
    pub(crate) deadline: Option<Located<Duration>>,
    /// The retry layer in front of the entry (browser, mobile app, JS client).
    pub client: Option<Layer>,
    pub services: Vec<Service>,
    pub(crate) lint: LintSettings,
    /// The `sources:` list: configuration and traces to merge in.
    pub(crate) sources: Vec<SourceDecl>,
    /// Files merged in from sources. Their positions are kept past the
    /// topology's own lines (see [`Topology::locate`]), so every `Pos` in the
    /// model stays one number pair and findings still find their file.
    pub(crate) origins: Vec<Origin>,
    /// The topology file's located tree as the loader read it, kept so that
    /// fixes are resolved on it without reading the file a second time;
    /// `None` for a topology not read from YAML text.
    pub located: Option<std::sync::Arc<crate::input::yaml::Node>>,
    /// Attempts per call seen in traces or counted by a proxy (metrics),
    /// for the rules that compare them with the declared layers (RL021,
    /// RL022).
    pub observed: Vec<Observed>,
    /// Services' response times seen in traces (their server spans), for
    /// `simulate --calibrate` to set beside the simulated ones.
    pub observed_latency: Vec<ObservedLatency>,
}

/// What traces showed of one service's response time: its server spans'
/// durations, own work and calls together.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedLatency {
    pub service: ServiceId,
    /// Server spans seen.
    pub spans: u64,
    pub p50: Duration,
    pub p99: Duration,
    /// Its first server span, in its trace file (or the `observed:` key).
    pub pos: Pos,
}

/// What traces showed of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub from: ServiceId,
    pub to: ServiceId,
    pub figures: CallFigures,
    /// The first client span of the call, in its trace file (for counters,
    /// the cluster's request counter).
    pub pos: Pos,
    /// Set when the figures come from a proxy's counters rather than
    /// traces: then `calls` are the requests the proxy took, the mean is
    /// the proxy's attempts per request, and the most per call is not
    /// known (`attempts_max` is the least it can be, the mean rounded up).
    pub(crate) counted: Option<Counted>,
}

/// One `sources:` entry: a path relative to the topology file, and the
/// service a gRPC service config applies to, if named.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SourceDecl {
    pub path: String,
    pub service: Option<String>,
    /// The service whose proxy wrote a metrics file (`caller: web`).
    pub caller: Option<String>,
    pub pos: Pos,
}

/// A source file merged into the topology: its lines are numbered from
/// `first_line + 1` in the model's positions.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub file: String,
    pub text: String,
    pub first_line: u32,
}

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    pub pos: Pos,
    pub latency: Latency,
    /// The overload model (docs/chaos.md; `capacity: 64` or `{ overlap: 64 }`): over
    /// this many in flight, everything in flight fails.
    pub(crate) capacity: Option<Located<u32>>,
    /// Workers and a bounded queue (`capacity: { workers: 10, queue: 100 }`).
    pub(crate) queueing: Option<Located<Queueing>>,
    pub deadline_propagation: bool,
    pub calls: Vec<Call>,
}

/// A service that works with a fixed number of workers and a bounded queue:
/// a request waits for a free worker, holds it for its service time (its
/// latency draw), and is rejected at once when the queue is full.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Queueing {
    pub workers: u32,
    /// Requests that may wait for a worker; more are rejected at once.
    pub queue: u32,
    pub discipline: Discipline,
    /// The status a rejected request gets (default 503).
    pub reject_status: u16,
    /// Sent with a rejection as Retry-After, if set.
    pub retry_after: Option<Duration>,
    /// A queued request whose deadline has passed is dropped when its turn
    /// comes instead of served (needs `deadline_propagation`).
    pub drop_expired: bool,
}

/// Which waiting request a free worker takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Discipline {
    /// The oldest (the default).
    Fifo,
    /// The newest: the one whose caller is most likely still waiting.
    Lifo,
}

/// Own work per request: a log-normal spread given by two quantiles (a fixed
/// latency has p50 == p99), or an exponential distribution by its mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub p50: Duration,
    pub p99: Duration,
    pub pos: Option<Pos>,
    /// `Some(mean)`: exponential (p50 and p99 are its quantiles).
    pub(crate) exponential_mean: Option<Duration>,
}

impl Latency {
    pub const DEFAULT: Duration = Duration::from_millis(1);

    /// A fixed latency.
    pub fn fixed(d: Duration, pos: Option<Pos>) -> Self {
        Latency {
            p50: d,
            p99: d,
            pos,
            exponential_mean: None,
        }
    }

    /// An exponential distribution with this mean: p50 = mean·ln 2, p99 =
    /// mean·ln 100.
    pub fn exponential(mean: Duration, pos: Option<Pos>) -> Self {
        let q = |x: f64| Duration::from_secs_f64(mean.as_secs_f64() * x);
        Latency {
            p50: q(std::f64::consts::LN_2),
            p99: q(100f64.ln()),
            pos,
            exponential_mean: Some(mean),
        }
    }

    /// z of the 99th percentile of the standard normal distribution.
    const Z99: f64 = 2.326_347_874_040_841;

    /// One draw: exactly `p50` when fixed, else a log-normal whose median is
    /// `p50` and whose 99th percentile is `p99`. Draws are capped at 10 × p99
    /// (about one in 10⁷ with a wide spread) so one request cannot stall a run.
    pub fn sample(&self, rng: &mut crate::policy::Rng) -> Duration {
        use rand::RngExt;
        if let Some(mean) = self.exponential_mean {
            let u: f64 = 1.0 - rng.random::<f64>();
            let secs = -mean.as_secs_f64() * u.ln();
            let cap = self.p99.as_secs_f64() * 10.0;
            return Duration::from_secs_f64(if secs.is_finite() { secs.min(cap) } else { cap });
        }
        if self.p99 <= self.p50 || self.p50.is_zero() {
            return self.p50;
        }
        let mu = self.p50.as_secs_f64().ln();
        let sigma = (self.p99.as_secs_f64() / self.p50.as_secs_f64()).ln() / Self::Z99;
        // Box-Muller: two uniforms in (0, 1] give one standard normal.
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let secs = (mu + sigma * z).exp();
        let cap = self.p99.as_secs_f64() * 10.0;
        Duration::from_secs_f64(if secs.is_finite() { secs.min(cap) } else { cap })
    }
}

#[derive(Debug, Clone)]
pub struct Call {
    pub from: ServiceId,
    pub to: ServiceId,
    /// The call's entry in `calls:` (its `to:` value).
    pub pos: Pos,
    pub(crate) method: Located<String>,
    pub path: Option<String>,
    /// Resolved: the explicit `idempotent:` or the method's RFC 9110 default.
    pub idempotent: bool,
    pub idempotency_key: bool,
    /// Runs concurrently with the neighbouring parallel calls of its service.
    pub parallel: bool,
    /// A gRPC call (`protocol: grpc`, or a source says so: a Kubernetes
    /// port `appProtocol: grpc` or named `grpc`/`grpc-*`, a trace's
    /// `rpc.system: grpc`): a proxy's gRPC retry conditions (`unavailable`,
    /// `cancelled`, …) apply to it, read as the gRPC statuses.
    pub grpc: bool,
    /// The retry layers of this call, outermost first: the caller's own
    /// (application) layer, then every `via` layer.
    pub layers: Vec<Layer>,
}

impl Call {
    /// `POST /payouts` or `GET`: how messages name the call's operation.
    pub fn operation(&self) -> String {
        match &self.path {
            Some(p) => format!("{} {p}", self.method.value),
            None => self.method.value.clone(),
        }
    }
}

/// Where a layer sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayerKind {
    /// `client:` in front of the entry.
    Client,
    /// The call's own `retry:` and `timeout:` in the caller's code.
    App,
    /// A hidden `via` layer: SDK, sidecar, gateway.
    Via,
}

/// One layer that may retry: a per-attempt timeout and a policy.
#[derive(Debug, Clone)]
pub struct Layer {
    pub(crate) kind: LayerKind,
    /// `client`, `app`, or the `via` layer's name.
    pub name: String,
    /// Where the layer is declared (the `via` item, the call, the `client:` key).
    pub pos: Pos,
    pub timeout: Option<Located<Duration>>,
    /// The default `timeout` rests on, said wherever a figure uses it: the
    /// source left it unset and the proxy falls back on something else
    /// (Istio without perTryTimeout gives each attempt the route timeout).
    pub(crate) timeout_default: Option<&'static str>,
    pub policy: RetryPolicy,
    pub spans: PolicySpans,
    /// The preset the policy came from, if any.
    pub preset: Option<String>,
    /// A circuit breaker of this layer's caller, located at its key.
    pub(crate) breaker: Option<Located<BreakerSpec>>,
    /// App layers only: copies sent `delay` apart instead of retries (the
    /// policy then never retries), located at its key.
    pub(crate) hedging: Option<Located<HedgingPolicy>>,
}

/// The `lint:` section of a topology.
#[derive(Debug, Clone, Default)]
pub(crate) struct LintSettings {
    /// Rule code or name → level, in file order.
    pub levels: Vec<(Located<String>, LevelSetting)>,
    pub max_amplification: Option<Located<f64>>,
    pub fail_on: Option<Located<LevelSetting>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LevelSetting {
    Error,
    Warning,
    Info,
    Allow,
}

impl Layer {
    /// Whether a gRPC client library's own counters (A66's calls, A96's
    /// retries) see this layer's retries: the channel's service config (the
    /// `grpc` layer), or the call's own `retry:`, where its policy is often
    /// declared. A sidecar below retries where the client does not see it,
    /// and an application's loop around the stub makes new calls.
    pub(crate) fn seen_by_grpc_client(&self) -> bool {
        self.kind == LayerKind::App
            || (self.kind == LayerKind::Via
                && self.name == crate::external::grpc_service_config::LAYER)
    }

    /// Attempts this layer sends per request it is asked, at most: the
    /// hedged copies, or the retry policy's attempts.
    pub(crate) fn max_sends(&self) -> u32 {
        self.hedging
            .as_ref()
            .map_or(self.policy.max_attempts, |h| h.value.max_attempts)
    }

    /// The position to point at for a policy field: the field itself, else the
    /// policy, else the layer.
    pub fn at(&self, field: Option<Pos>) -> Pos {
        field.or(self.spans.policy).unwrap_or(self.pos)
    }

    /// How messages name the layer: `app`, `client`, `istio-sidecar`.
    pub fn label(&self) -> &str {
        &self.name
    }
}

impl Topology {
    /// The file and the position in it of a model position: the topology's
    /// own, or one of the merged source files'.
    pub fn locate(&self, pos: Pos) -> (&str, Pos) {
        match self.origins.iter().rev().find(|o| pos.line > o.first_line) {
            Some(o) => (
                &o.file,
                Pos {
                    line: pos.line - o.first_line,
                    column: pos.column,
                },
            ),
            None => (&self.file, pos),
        }
    }

    pub fn service(&self, id: ServiceId) -> &Service {
        &self.services[id]
    }

    pub fn id_of(&self, name: &str) -> Option<ServiceId> {
        self.services.iter().position(|s| s.name == name)
    }

    /// Every call, in file order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.services.iter().flat_map(|s| s.calls.iter())
    }

    /// Every layer with where it sits: (the call, or `None` for the client layer).
    pub fn layers(&self) -> impl Iterator<Item = (Option<&Call>, &Layer)> {
        self.client.iter().map(|l| (None, l)).chain(
            self.calls()
                .flat_map(|c| c.layers.iter().map(move |l| (Some(c), l))),
        )
    }

    /// Whether some layer has a circuit breaker.
    pub fn has_breakers(&self) -> bool {
        self.layers().any(|(_, l)| l.breaker.is_some())
    }

    /// This topology with every circuit breaker taken out: the run both
    /// engines do a second time to say what the breakers saved.
    pub(crate) fn without_breakers(&self) -> Topology {
        let mut t = self.clone();
        if let Some(c) = t.client.as_mut() {
            c.breaker = None;
        }
        for l in t
            .services
            .iter_mut()
            .flat_map(|s| &mut s.calls)
            .flat_map(|c| &mut c.layers)
        {
            l.breaker = None;
        }
        t
    }
}
