//! What the readers produce: plain facts with their file and position, for
//! `topology::merge` to turn into a topology.

use std::time::Duration;

use super::Kind;
use crate::input::Pos;
use crate::policy::RetryPolicy;

/// One file read, kept whole for snippets and for errors found while merging.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    /// The path as it was found (`--from k8s/` gives `k8s/ratings.yaml`).
    pub file: String,
    pub text: String,
}

/// A position in one of `Facts::files`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub file: usize,
    pub pos: Pos,
}

/// Everything the sources said.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub(crate) files: Vec<SourceFile>,
    /// The kind of every document read, in order.
    pub read_kinds: Vec<Kind>,
    /// Services seen in traces, with their latency from server spans.
    pub services: Vec<ServiceFact>,
    /// Calls seen in traces.
    pub calls: Vec<CallFact>,
    /// Calls a proxy's counters describe (metrics).
    pub(crate) counted: Vec<CountedFact>,
    /// Retry layers to put on the calls to some hosts.
    pub routes: Vec<RouteFact>,
    /// Hosts whose callers go through an Istio sidecar (a Kubernetes Service
    /// in a namespace labelled for injection): the default policy applies to
    /// calls to them that no VirtualService route covers.
    pub(crate) meshed: Vec<HostRef>,
    /// Hosts whose Kubernetes Service port speaks gRPC (`appProtocol:
    /// grpc`, or a port named `grpc` or `grpc-*`, as Istio selects the
    /// protocol): calls to them are gRPC calls.
    pub grpc_hosts: Vec<HostRef>,
    /// The Istio default policy's preset, once an Istio document was read.
    pub(crate) istio_default: Option<&'static str>,
    /// Istio's minor version the defaults follow (`--istio-version`).
    pub istio_minor: u32,
    /// Warnings and notes to print beside the result.
    pub notes: Vec<Note>,
    pub(crate) traces: super::traces::Acc,
    pub(crate) namespaces: Vec<(String, Injection)>,
    pub(crate) k8s_services: Vec<K8sService>,
    pub(crate) workloads: Vec<Workload>,
    pub(crate) http_routes: Vec<HttpRouteRef>,
    pub(crate) traffic_policies: Vec<TrafficPolicy>,
    pub(crate) kuma: Vec<super::kuma::Entry>,
    pub(crate) linkerd_services: Vec<super::linkerd::ServiceAnnotations>,
    /// Kubernetes Services whose ports Linkerd does not route as plain
    /// HTTP (`external::linkerd_ports`).
    pub(crate) linkerd_routing: Vec<(HostRef, super::linkerd_ports::Routing)>,
    /// Kubernetes Services and the protocol Kuma gives their ports
    /// (`external::kuma_ports`).
    pub(crate) kuma_protocols: Vec<(HostRef, super::kuma_ports::ServiceProtocol)>,
    /// What became of every document `--from` reached, in order: the
    /// summary line and `--verbose` are made from it (see [`Account`]).
    pub accounts: Vec<DocAccount>,
    /// Istio DestinationRules read: their retry limits, per host and subset.
    pub(crate) destination_rules: Vec<super::istio::DestinationRule>,
    /// For each Istio route fact (index into `routes`): the destination
    /// host, its namespace and subset, for the DestinationRules.
    pub(crate) istio_destinations: Vec<(usize, String, Option<String>, Option<String>)>,
    /// VirtualServices bound to gateways only (not `mesh`), located at
    /// their `gateways:` key.
    pub(crate) gateway_only: Vec<At>,
    /// VirtualServices by the hosts they bind, for Istio's order and the
    /// warning when two bind one host: `(host, namespace, group, name, at)`.
    pub(crate) vs_hosts: Vec<(String, Option<String>, usize, String, At)>,
    /// Each VirtualService's group and namespace.
    pub(crate) vs_namespaces: Vec<(usize, Option<String>)>,
    /// Envoy clusters read, from every document.
    pub(crate) envoy_clusters: Vec<super::envoy::Cluster>,
    /// Envoy routes (index into `routes`) whose cluster their own
    /// document did not define: resolved against `envoy_clusters`.
    pub(crate) envoy_pending: Vec<(usize, String)>,
}

/// What became of one document `--from` reached: nothing is dropped
/// without a word. The interface for readers:
///
/// - `mod.rs` accounts every document before its reader runs: `Read(kind)`
///   for a detected kind, `NoRetry` for a kind known to carry no retry
///   settings, `NotUnderstood` for a document of no known kind; a document
///   that *looks like* a retry-carrying kind but is not read is an error at
///   its file:line, never an account.
/// - A reader that finds its document carries nothing to apply (a
///   VirtualService bound to gateways only, Envoy endpoints) calls
///   [`Facts::reclassify`] with `NoRetry` and the reason; a part it cannot
///   read is a located error (`Err(LoadError)`), as today.
#[derive(Debug, Clone, PartialEq)]
pub enum Account {
    /// Read as this kind.
    Read(Kind),
    /// Of a kind that carries no retry settings (named: `v1 ConfigMap x`,
    /// or why: `an Istio VirtualService bound to gateways only`).
    NoRetry(String),
    /// Of no kind known (described).
    NotUnderstood(String),
}

/// One document's account, located at its first line.
#[derive(Debug, Clone)]
pub struct DocAccount {
    pub file: usize,
    pub pos: Pos,
    pub account: Account,
}

/// What a Namespace label or a pod's `sidecar.istio.io/inject` says about
/// Istio's sidecar injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injection {
    Enabled,
    Disabled,
    /// Nothing said: the namespace decides.
    Unset,
}

/// A Kubernetes Service and the pod labels it selects.
#[derive(Debug, Clone)]
pub(crate) struct K8sService {
    pub host: HostRef,
    pub selector: Vec<(String, String)>,
}

/// A Deployment, StatefulSet or DaemonSet: its pods' labels and what they
/// say about injection.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    pub namespace: String,
    pub labels: Vec<(String, String)>,
    /// The pod template's `sidecar.istio.io/inject` label (or, failing
    /// that, annotation).
    pub inject: Injection,
}

impl Workload {
    /// Whether Istio injects a sidecar into these pods in a namespace whose
    /// label says `ns`. Istio's rules ("Controlling the injection policy"):
    /// a pod label `false` opts out of an enabled namespace, `true` opts in
    /// where the namespace says nothing, and a namespace labelled `disabled`
    /// wins over the pod. The legacy annotation is honoured only to opt
    /// out (the webhook's object selector reads labels).
    pub(crate) fn injected(&self, ns: Injection) -> bool {
        match (ns, self.inject) {
            (Injection::Disabled, _) => false,
            (_, Injection::Disabled) => false,
            (Injection::Enabled, _) => true,
            (Injection::Unset, Injection::Enabled) => true,
            (Injection::Unset, Injection::Unset) => false,
        }
    }

    fn selected_by(&self, s: &K8sService) -> bool {
        s.host.namespace.as_deref() == Some(self.namespace.as_str())
            && !s.selector.is_empty()
            && s.selector.iter().all(|kv| self.labels.contains(kv))
    }
}

/// An HTTPRoute or GRPCRoute read: its name, the `routes` indices of its
/// matches with their Gateway API precedence, and the Gateways it attaches to.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpRouteRef {
    pub name: String,
    pub namespace: Option<String>,
    /// `HTTPRoute` or `GRPCRoute`.
    pub kind: &'static str,
    pub routes: Vec<usize>,
    /// Per entry of `routes`: its precedence, and whether its rule has a
    /// `retry` of its own (which wins over a BackendTrafficPolicy's).
    pub keys: Vec<super::gateway_api::MatchKey>,
    pub(crate) own_retry: Vec<bool>,
    /// `(namespace, name)` of the Gateways in `parentRefs`.
    pub gateways: Vec<(Option<String>, String)>,
    /// The Services in `parentRefs` (GAMMA, Linkerd).
    pub services: Vec<HostRef>,
}

/// An Envoy Gateway BackendTrafficPolicy's retry layer (or only its retry
/// budget) for one HTTPRoute, GRPCRoute or Gateway.
#[derive(Debug, Clone)]
pub(crate) struct TrafficPolicy {
    /// `HTTPRoute`, `GRPCRoute` or `Gateway`.
    pub(crate) target_kind: String,
    pub route: String,
    /// `circuitBreaker.retryBudget` / `maxParallelRetries`, at its key.
    pub budget: Option<(crate::policy::BudgetSpec, Pos)>,
    pub namespace: Option<String>,
    /// The retry layer for HTTP calls and for gRPC calls (a GRPCRoute).
    pub layer: Option<(LayerFact, LayerFact)>,
    /// Its gRPC-only triggers, noted where it applies to an HTTPRoute.
    pub(crate) grpc_only: Vec<(At, String)>,
    pub at: At,
}

impl Facts {
    pub(crate) fn add_file(&mut self, file: &str, text: String) -> usize {
        self.files.push(SourceFile {
            file: file.to_owned(),
            text,
        });
        self.files.len() - 1
    }

    /// Turns what the traces recorded into services and calls, and the
    /// Services whose pods get a sidecar into meshed hosts: the pods a
    /// Service selects, among the workloads read, decide (any injected is
    /// enough); a Service none of whose pods were read goes by its
    /// namespace's label.
    pub(crate) fn finish(&mut self) {
        let acc = std::mem::take(&mut self.traces);
        acc.finish(self);
        super::envoy_gateway::apply_traffic_policies(self);
        super::linkerd::finish(self);
        super::istio::finish(self);
        super::envoy::finish(self);
        super::kuma::finish(self);
        for s in &self.k8s_services {
            let ns = s
                .host
                .namespace
                .as_ref()
                .and_then(|n| self.namespaces.iter().find(|(m, _)| m == n))
                .map_or(Injection::Unset, |(_, i)| *i);
            let pods: Vec<&Workload> = self.workloads.iter().filter(|w| w.selected_by(s)).collect();
            let meshed = if pods.is_empty() {
                ns == Injection::Enabled
            } else {
                pods.iter().any(|w| w.injected(ns))
            };
            if meshed {
                self.meshed.push(s.host.clone());
            }
        }
    }

    /// Accounts for one document (see [`Account`]).
    pub fn account(&mut self, file: usize, pos: Pos, account: Account) {
        self.accounts.push(DocAccount { file, pos, account });
    }

    /// Changes the account of the document being read (the last one
    /// accounted): a reader saying its document carries nothing to apply.
    pub(crate) fn reclassify(&mut self, account: Account) {
        if let Some(last) = self.accounts.last_mut() {
            last.account = account;
        }
    }

    /// The line standard error always gets: what the sources were read as.
    /// `--from: 14 documents in 6 files: 4 × Istio VirtualService, 2 ×
    /// Kubernetes Service; 3 carry no retry settings; 1 not understood`.
    pub fn summary(&self) -> String {
        let mut read: Vec<(&'static str, usize)> = Vec::new();
        let (mut none, mut unknown) = (0, 0);
        for a in &self.accounts {
            match &a.account {
                Account::Read(k) => match read.iter_mut().find(|(n, _)| *n == k.name()) {
                    Some((_, c)) => *c += 1,
                    None => read.push((k.name(), 1)),
                },
                Account::NoRetry(_) => none += 1,
                Account::NotUnderstood(_) => unknown += 1,
            }
        }
        let mut parts = vec![if read.is_empty() {
            "nothing read".to_owned()
        } else {
            read.iter()
                .map(|(n, c)| format!("{c} × {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }];
        if none > 0 {
            parts.push(format!("{none} carry no retry settings"));
        }
        if unknown > 0 {
            parts.push(format!("{unknown} not understood"));
        }
        let hint = if none + unknown > 0 {
            " (--verbose lists them)"
        } else {
            ""
        };
        format!(
            "sources: {} document(s) in {} file(s): {}{hint}",
            self.accounts.len(),
            self.files.len(),
            parts.join("; ")
        )
    }

    /// `file:line:column` of a position, for notes.
    pub fn show(&self, at: At) -> String {
        format!(
            "{}:{}:{}",
            self.files[at.file].file, at.pos.line, at.pos.column
        )
    }

    pub fn warn(&mut self, at: Option<At>, text: impl Into<String>) {
        self.notes.push(Note {
            at,
            warning: true,
            text: text.into(),
        });
    }

    pub fn note(&mut self, at: Option<At>, text: impl Into<String>) {
        self.notes.push(Note {
            at,
            warning: false,
            text: text.into(),
        });
    }

    /// Whether the sources give a call graph of their own.
    pub(crate) fn has_call_graph(&self) -> bool {
        !self.calls.is_empty()
    }
}

#[derive(Debug, Clone)]
pub struct Note {
    pub at: Option<At>,
    /// A warning (something may be wrong) rather than a note (what was done).
    pub warning: bool,
    pub text: String,
}

/// A service seen in traces.
#[derive(Debug, Clone)]
pub struct ServiceFact {
    pub name: String,
    /// Its first span.
    pub at: At,
    /// p50 and p99 of its server spans' durations (own work and calls).
    pub latency: Option<(Duration, Duration)>,
    /// Server spans seen.
    pub server_spans: u64,
    /// p50 and p99 of its server spans' whole durations (the response
    /// time its callers see), for `simulate --calibrate`.
    pub response: Option<(Duration, Duration)>,
}

/// A call seen in traces: `from` calls `to`.
#[derive(Debug, Clone)]
pub struct CallFact {
    pub from: String,
    pub to: String,
    /// The first client span of the call.
    pub at: At,
    /// The HTTP method, when a span says it.
    pub method: Option<String>,
    /// What the spans showed of its attempts: the topology keeps it as it
    /// is, on the call (`topology::Observed::figures`).
    pub figures: CallFigures,
    /// A span of the call says `rpc.system: grpc`.
    pub grpc: bool,
}

/// What was seen of one call's attempts: in traces, or, for the
/// topology's `observed`, also what a proxy's counters or an `observed:`
/// entry give.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFigures {
    /// Logical calls seen (a parent span calling the callee once or more).
    pub calls: u64,
    /// Attempts seen per logical call: mean and most.
    pub attempts_mean: f64,
    pub attempts_max: u32,
    /// The most attempts one request of the caller became below it: more
    /// than one server span under one client span, or Envoy's
    /// `x-envoy-attempt-count`, is a proxy retrying.
    pub proxy_max: u32,
    /// The most attempts the caller's client made for one logical call
    /// (client spans, or `resend_count` + 1).
    pub client_max: u32,
    /// The most attempts the spans' own numbers say (`resend_count` + 1,
    /// gRPC's previous attempts + 1).
    pub resend_max: u32,
    /// Logical calls whose callee failed (an error status).
    pub failed_calls: u64,
}

impl CallFigures {
    /// What a proxy's counters give of a call: `requests` first attempts
    /// among `attempts` in all, so their mean per request, and at least
    /// the ceiling of that as the most one request became (counters keep
    /// no per-request figure); nothing of clients, resends or failures.
    pub(crate) fn counted(requests: u64, attempts: u64) -> CallFigures {
        let least_max = u32::try_from(attempts.div_ceil(requests.max(1))).unwrap_or(u32::MAX);
        CallFigures {
            calls: requests,
            attempts_mean: attempts as f64 / requests.max(1) as f64,
            attempts_max: least_max,
            proxy_max: least_max,
            client_max: 1,
            resend_max: 1,
            failed_calls: 0,
        }
    }
}

/// Who kept the counters a [`CountedFact`] comes from, which decides
/// what its figures mean and how they are worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterKind {
    /// Envoy's cluster counters (`external::metrics::envoy`).
    Envoy,
    /// Istio's `istio_requests_total` (`external::metrics::istio`).
    Istio,
    /// Linkerd's outbound route metrics (`external::metrics::linkerd`).
    Linkerd,
    /// gRPC's A96 retry metrics (`external::metrics::grpc`).
    Grpc,
}

impl CounterKind {
    /// `Envoy`, as messages name who counted.
    pub(crate) fn by(self) -> &'static str {
        match self {
            CounterKind::Envoy => "Envoy",
            CounterKind::Istio => "Istio",
            CounterKind::Linkerd => "Linkerd",
            CounterKind::Grpc => "gRPC",
        }
    }

    /// `envoy`, the `observed:` figures' `source:`.
    pub(crate) fn source(self) -> &'static str {
        match self {
            CounterKind::Envoy => "envoy",
            CounterKind::Istio => "istio",
            CounterKind::Linkerd => "linkerd",
            CounterKind::Grpc => "grpc",
        }
    }

    /// The kind whose `observed:` source is `s`.
    pub(crate) fn from_source(s: &str) -> Option<CounterKind> {
        [
            CounterKind::Envoy,
            CounterKind::Istio,
            CounterKind::Linkerd,
            CounterKind::Grpc,
        ]
        .into_iter()
        .find(|k| k.source() == s)
    }

    /// What the counters' series name the callee by (`cluster`), also the
    /// `observed:` key that keeps it.
    pub(crate) fn subject(self) -> &'static str {
        match self {
            CounterKind::Envoy => "cluster",
            CounterKind::Istio => "destination",
            CounterKind::Linkerd => "parent",
            CounterKind::Grpc => "target",
        }
    }

    /// The `observed:` keys for the attempts and the retries.
    pub(crate) fn keys(self) -> (&'static str, &'static str) {
        match self {
            CounterKind::Envoy => ("upstream_requests", "retries"),
            CounterKind::Istio => ("attempts_at_least", "retries_exhausted"),
            CounterKind::Linkerd | CounterKind::Grpc => ("attempts", "retries"),
        }
    }

    /// Whether the attempts are only the least the counters prove: Istio
    /// counts each request once and flags only those whose retries ran out.
    pub(crate) fn lower_bound(self) -> bool {
        self == CounterKind::Istio
    }
}

/// A call one proxy's counters describe: the requests the caller's proxy
/// (or gRPC client) sent to one callee, and the retries among them (see
/// `external::metrics`).
#[derive(Debug, Clone)]
pub(crate) struct CountedFact {
    /// The service whose proxy counted (`--metrics-caller`, or `caller:`
    /// in a `sources:` entry, or the series' own labels).
    pub(crate) caller: String,
    /// The caller came from the series' labels: one the topology lacks is
    /// warned about, not an error (a gateway reports as a source too).
    pub(crate) caller_labelled: bool,
    /// The callee, as the cluster names it.
    pub(crate) host: HostRef,
    /// What was counted: the topology keeps it as it is, on the call
    /// (`topology::Observed::counted`).
    pub(crate) counters: Counted,
    /// The cluster's `upstream_rq_total` sample.
    pub(crate) at: At,
}

/// What a proxy's counters said of one call (`external::metrics`, or an
/// `observed:` entry of the topology written from them).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counted {
    /// Who counted, which decides what the figures mean.
    pub(crate) kind: CounterKind,
    /// The callee as the counters name it: Envoy's cluster, Istio's
    /// destination, Linkerd's parent, gRPC's target, as written.
    pub(crate) cluster: String,
    /// Attempts, retries included (`upstream_rq_total`, plus
    /// `unattached`); the least the counters prove when
    /// [`Counted::lower_bound`].
    pub(crate) attempts: u64,
    /// Attempts that failed waiting for a connection
    /// (`upstream_rq_pending_failure_eject`, which `upstream_rq_total` does
    /// not count), when the file has them.
    pub(crate) unattached: Option<u64>,
    /// Retries among them (`upstream_rq_retry`; for Istio, the requests
    /// whose retries were exhausted, `URX`). The requests that came in are
    /// `attempts - retries`.
    pub(crate) retries: u64,
    /// Requests not retried for the retry limit
    /// (`upstream_rq_retry_limit_exceeded`), and for circuit breaking or
    /// the retry budget (`upstream_rq_retry_overflow`), when the file has
    /// them.
    pub(crate) limit_exceeded: Option<u64>,
    pub(crate) overflow: Option<u64>,
    /// What the counters cover: `since the proxy started`.
    pub(crate) window: String,
}

impl Counted {
    /// `Envoy`.
    pub(crate) fn by(&self) -> &'static str {
        self.kind.by()
    }

    /// The attempts are the least the counters prove, not a count.
    pub(crate) fn lower_bound(&self) -> bool {
        self.kind.lower_bound()
    }

    /// `at least ` when the figures are a lower bound, else nothing.
    pub(crate) fn least(&self) -> &'static str {
        if self.lower_bound() { "at least " } else { "" }
    }

    /// `137 upstream requests (7 of them failed waiting for a connection)`.
    pub(crate) fn attempts_text(&self) -> String {
        match (self.kind, self.unattached) {
            (CounterKind::Envoy, Some(n)) if n > 0 => format!(
                "{} upstream requests ({n} of them failed waiting for a connection)",
                self.attempts
            ),
            (CounterKind::Envoy, _) => format!("{} upstream requests", self.attempts),
            _ => format!("{}{} attempts", self.least(), self.attempts),
        }
    }

    /// `137 upstream requests for 100 requests, 37 retries`: what was
    /// counted, as the messages give it.
    pub(crate) fn counts_text(&self, requests: u64) -> String {
        match self.kind {
            CounterKind::Istio => format!(
                "{} for {requests} requests, {} of them with retries exhausted (response flag URX)",
                self.attempts_text(),
                self.retries
            ),
            CounterKind::Grpc => format!(
                "{} for {requests} calls, {} retries and hedges",
                self.attempts_text(),
                self.retries
            ),
            CounterKind::Envoy | CounterKind::Linkerd => format!(
                "{} for {requests} requests, {} retries",
                self.attempts_text(),
                self.retries
            ),
        }
    }
}

/// A host a route's policy applies to, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRef {
    pub host: String,
    /// The namespace of the document that names it (for a short name).
    pub namespace: Option<String>,
    pub at: At,
}

/// One route's retry layers and the calls it covers.
#[derive(Debug, Clone)]
pub struct RouteFact {
    /// `istio`, `grpc`: which reader made it.
    pub source: &'static str,
    /// Routes of one group (one VirtualService's `http:` list) are tried in
    /// order and the first that matches a call wins.
    pub group: usize,
    pub hosts: Vec<HostRef>,
    pub matcher: Matcher,
    /// Outermost first.
    pub layers: Vec<LayerFact>,
}

/// Which calls a route takes. Conditions that cannot be decided from a call
/// (headers, query parameters, a path the call does not state) match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matcher {
    /// Alternatives: the route matches when any of them does; none = all.
    pub any: Vec<MatchRule>,
    /// `Some(true)`: gRPC calls only; `Some(false)`: HTTP calls only (a
    /// policy with a section per protocol, as Kuma's MeshRetry); `None`: both.
    pub grpc: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchRule {
    pub method: Option<StrMatch>,
    pub path: Option<StrMatch>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StrMatch {
    Exact(String),
    Prefix(String),
    /// Not evaluated: matches.
    Regex(String),
    /// Envoy's `path_separated_prefix`: the prefix, then the end of the
    /// path, a `/`, `?` or `#` (`/get` takes `/get`, `/get/x`, not `/getx`).
    SegmentPrefix(String),
    /// Compared without regard to ASCII case (Envoy's `case_sensitive: false`).
    NoCase(Box<StrMatch>),
    /// A regular expression evaluated against the whole path (anchored at
    /// both ends), as Linkerd's proxy evaluates a ServiceProfile's
    /// `pathRegex`.
    Anchored(Pattern),
    /// A gRPC method's whole path (`/pkg.Service/Method`): taken only by a
    /// call that states this path (one that states none takes the
    /// service's config, as the method is not known).
    Method(String),
}

/// A compiled regular expression, compared by its text.
#[derive(Debug, Clone)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl StrMatch {
    pub fn matches(&self, s: &str) -> bool {
        match self {
            StrMatch::Exact(e) => e == s,
            StrMatch::Prefix(p) => s.starts_with(p.as_str()),
            StrMatch::Regex(_) => true,
            StrMatch::SegmentPrefix(p) => s.strip_prefix(p.as_str()).is_some_and(|rest| {
                p.ends_with('/') || rest.is_empty() || rest.starts_with(['/', '?', '#'])
            }),
            StrMatch::NoCase(m) => match &**m {
                StrMatch::Exact(e) => e.eq_ignore_ascii_case(s),
                StrMatch::Prefix(p) | StrMatch::SegmentPrefix(p) => {
                    let lower = |x: &str| x.to_ascii_lowercase();
                    let inner = match &**m {
                        StrMatch::Prefix(_) => StrMatch::Prefix(lower(p)),
                        _ => StrMatch::SegmentPrefix(lower(p)),
                    };
                    inner.matches(&lower(s))
                }
                other => other.matches(s),
            },
            StrMatch::Anchored(re) => re.0.is_match(s),
            StrMatch::Method(m) => m == s,
        }
    }
}

impl Matcher {
    /// Whether a call with this method (and path, if stated) takes the route.
    pub fn matches(&self, method: &str, path: Option<&str>) -> bool {
        self.any.is_empty()
            || self.any.iter().any(|r| {
                r.method
                    .as_ref()
                    .is_none_or(|m| m.matches(&method.to_ascii_uppercase()))
                    && match (&r.path, path) {
                        (Some(m), Some(p)) => m.matches(p),
                        (Some(StrMatch::Method(_)), None) => false,
                        _ => true,
                    }
            })
    }
}

/// One retry layer from a source.
#[derive(Debug, Clone)]
pub struct LayerFact {
    /// The layer's name in the topology (`istio-sidecar`, `grpc`).
    pub name: String,
    pub file: usize,
    /// Where the layer is declared (the `retries:` key, the destination).
    pub pos: Pos,
    /// Per-attempt timeout, located at its key.
    pub timeout: Option<(Duration, Pos)>,
    /// The default `timeout` rests on, when the source leaves it unset and
    /// the proxy falls back on something else (Istio's perTryTimeout).
    pub(crate) timeout_default: Option<&'static str>,
    pub policy: PolicyFact,
    /// Said beside the layer in `import`'s output.
    pub comment: String,
    /// The policy's conditions on a gRPC call, when they differ from its
    /// HTTP ones (Envoy's `unavailable`, `cancelled`, … match a gRPC
    /// status only): `None`, the same.
    pub(crate) grpc_retry_on: Option<Vec<crate::policy::Condition>>,
}

// One per route read: their size does not matter, and a box would only add
// noise where readers build them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum PolicyFact {
    /// No retries (a timeout-only layer).
    None,
    Inline {
        policy: RetryPolicy,
        spans: Spans,
    },
    /// A shipped preset, named at `at` (Istio's default).
    Preset {
        name: String,
        at: Pos,
    },
    /// An inline policy whose budget is written in another file (a
    /// DestinationRule's limit on a VirtualService's retries).
    InlineBudgetElsewhere {
        policy: RetryPolicy,
        spans: Spans,
        budget_at: At,
    },
    /// A shipped preset with a retry budget put on it from elsewhere
    /// (Istio's default under a DestinationRule's `maxRetries` or
    /// `retryBudget`, located at `budget_at`, which may be another file).
    PresetWithBudget {
        name: String,
        at: Pos,
        budget: crate::policy::BudgetSpec,
        budget_at: At,
    },
}

/// Positions of a policy's fields in its source file.
pub(crate) use crate::input::spans::PolicySpans as Spans;
