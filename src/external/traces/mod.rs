//! The call graph from traces: OTLP/JSON, Jaeger JSON and Zipkin v2 JSON
//! readers turn spans into one common form; [`Acc::finish`] pairs them.
//!
//! - A call `A → B`: a client span of A whose child is a server span of B; a
//!   Zipkin server span sharing its client's id; or, without span kinds, a
//!   span of B whose parent belongs to A.
//! - The method: `http.request.method` (semantic conventions 1.23+) or
//!   `http.method` (before); without either, the span name's first word
//!   when it is an HTTP method (Zipkin's `post /tokens/access`, OTel's
//!   `GET /users/{id}` or older `HTTP GET`).
//! - Messages are no calls: a PRODUCER or CONSUMER span, or one with a
//!   messaging attribute ([`messaging_key`]), neither calls nor answers, and a
//!   span under one is no callee (the consumer runs when the broker hands
//!   it the message, not while the producer waits).
//! - Cycles: the call graph must be acyclic, so a call that closes a cycle
//!   (a back edge of a depth-first walk from the services nobody calls) is
//!   left out with a warning naming the cycle.
//! - A service's latency (its own work, as the topology means it): each
//!   server span's duration minus the durations of the client spans under
//!   it, p50 and p99 by nearest rank.
//! - Attempts seen, per logical call (the client spans to one callee, with
//!   one method and one span name, under one parent span, up to one that
//!   succeeded: a request sent after a success came back is a new call, not
//!   a retry, where every span's start is known): the larger of the client spans
//!   (or their resend_count + 1, see [`attempts`]) and the attempts that
//!   reached the callee: each client span's server spans, or the proxy's
//!   `x-envoy-attempt-count` when larger. Several server spans under one
//!   client span are a proxy retrying below the application. Redirects,
//!   authentication resends and gRPC transparent retries are not counted.

pub mod attempts;
pub mod cycles;
pub mod jaeger;
pub mod otlp;
pub mod zipkin;

use std::collections::HashMap;
use std::time::Duration;

use super::facts::{At, CallFact, CallFigures, Facts, ServiceFact};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SpanKind {
    Client,
    Server,
    Other,
    /// A message sent or received (PRODUCER, CONSUMER, or a span with
    /// messaging attributes): not a synchronous call.
    Messaging,
}

impl SpanKind {
    /// The kind a span's messaging attribute overrides.
    pub(crate) fn or_messaging(self, messaging: bool) -> SpanKind {
        if messaging { SpanKind::Messaging } else { self }
    }
}

/// Whether an attribute says its span is of a gRPC call: OpenTelemetry's
/// `rpc.system: grpc`, or a gRPC status code attribute (`rpc.grpc.status_code`;
/// Brave's `grpc.status_code` in Zipkin).
pub(crate) fn grpc_attr(key: &str, value: Option<&str>) -> bool {
    (key == "rpc.system" && value == Some("grpc"))
        || key == "rpc.grpc.status_code"
        || key == "grpc.status_code"
}

/// Whether an attribute (tag) key says its span sends or receives a
/// message: OpenTelemetry's `messaging.*` conventions, and the tags Brave's
/// messaging instrumentations write in Zipkin (`kafka.topic`,
/// `kafka.partition`, `rabbit.queue`, `jms.queue`, …).
pub(crate) fn messaging_key(key: &str) -> bool {
    ["messaging.", "kafka.", "rabbit.", "jms."]
        .iter()
        .any(|p| key.starts_with(p))
}
/// One span, in the common form.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub service: String,
    pub kind: SpanKind,
    /// Zipkin's `duration` may be absent (a span whose end was not
    /// reported): no latency is taken from it.
    pub duration: Option<Duration>,
    pub method: Option<String>,
    /// The span's name (operation): calls of different operations under
    /// one parent are different logical calls, not retries.
    pub name: Option<String>,
    /// What the span says about attempts (see [`attempts`]).
    pub signals: attempts::Signals,
    /// The span is of a gRPC call ([`grpc_attr`]).
    pub grpc: bool,
    /// When it started, in nanoseconds since the epoch, where the format
    /// says (Zipkin's `timestamp` may be absent).
    pub start: Option<u128>,
    pub at: At,
}

/// Spans gathered from every trace file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acc {
    pub spans: Vec<Span>,
}

/// At most this many spans in all: a trace export of a busy hour would
/// take the memory of a large topology many times over.
pub(crate) const MAX_SPANS: usize = 2_000_000;

impl Acc {
    pub(crate) fn push(&mut self, s: Span) -> bool {
        if self.spans.len() >= MAX_SPANS {
            return false;
        }
        self.spans.push(s);
        true
    }

    pub(crate) fn finish(self, facts: &mut Facts) {
        let spans = dedup(self.spans, facts);
        if spans.is_empty() {
            return;
        }
        let mut by_id: HashMap<(&str, &str), Vec<usize>> = HashMap::with_capacity(spans.len());
        for (i, s) in spans.iter().enumerate() {
            by_id.entry((&s.trace, &s.id)).or_default().push(i);
        }
        let find = |trace: &str, id: &str, pred: &dyn Fn(&Span) -> bool| -> Option<usize> {
            by_id
                .get(&(trace, id))
                .and_then(|v| v.iter().copied().find(|&i| pred(&spans[i])))
        };
        // Services, in order of first appearance.
        let mut service_ix: HashMap<&str, usize> = HashMap::new();
        let mut services: Vec<(ServiceFact, Vec<Duration>, Vec<Duration>)> = Vec::new();
        for s in &spans {
            service_ix.entry(&s.service).or_insert_with(|| {
                services.push((
                    ServiceFact {
                        name: s.service.clone(),
                        at: s.at,
                        latency: None,
                        server_spans: 0,
                        response: None,
                    },
                    Vec::new(),
                    Vec::new(),
                ));
                services.len() - 1
            });
        }
        // Client time under each span, for own-work latency.
        let mut under: HashMap<(&str, &str), Duration> = HashMap::new();
        // The callee of each call edge, and its logical calls.
        struct Edge {
            from: String,
            to: String,
            at: At,
            method: Option<String>,
            grpc: bool,
            groups: HashMap<(String, Option<String>, Option<String>), Group>,
        }
        let mut edges: Vec<Edge> = Vec::new();
        let mut edge_ix: HashMap<(String, String), usize> = HashMap::new();
        let mut add_edge = |client: &Span, callee: &Span, edges: &mut Vec<Edge>| {
            let key = (client.service.clone(), callee.service.clone());
            let i = *edge_ix.entry(key).or_insert_with(|| {
                edges.push(Edge {
                    from: client.service.clone(),
                    to: callee.service.clone(),
                    at: client.at,
                    method: None,
                    grpc: false,
                    groups: HashMap::new(),
                });
                edges.len() - 1
            });
            let e = &mut edges[i];
            if e.method.is_none() {
                e.method = client.method.clone();
            }
            e.grpc |= client.grpc || callee.grpc;
            let parent = client.parent.clone().unwrap_or_else(|| client.id.clone());
            // Without span kinds the callee's span names the operation.
            let name = if client.kind == SpanKind::Client {
                client.name.clone()
            } else {
                callee.name.clone()
            };
            let g = e
                .groups
                .entry((
                    format!("{}/{parent}", client.trace),
                    client.method.clone(),
                    name,
                ))
                .or_default();
            // Without span kinds, each callee span is an attempt of its own.
            let id = if client.kind == SpanKind::Client {
                client.id.clone()
            } else {
                format!("{}\u{0}{}", client.id, callee.id)
            };
            let timed = if client.kind == SpanKind::Client {
                client
            } else {
                callee
            };
            let c = g.clients.entry(id).or_insert_with(|| Sent {
                signals: client.signals,
                start: timed.start,
                end: timed
                    .start
                    .zip(timed.duration)
                    .map(|(s, d)| s + d.as_nanos()),
                ..Sent::default()
            });
            c.reached += 1;
            if let Some(p) = callee.signals.proxy_attempt {
                c.proxy_attempt = c.proxy_attempt.max(p);
            }
            if let Some(a) = callee.signals.attempt {
                c.callee_attempt = c.callee_attempt.max(a);
            }
            c.failed |= callee.signals.failed || client.signals.failed;
        };
        for s in &spans {
            if s.kind == SpanKind::Client
                && let Some(p) = &s.parent
                && let Some(d) = s.duration
            {
                *under.entry((&s.trace, p)).or_default() += d;
            }
            // The client side of this span, if it is a callee's.
            let caller: Option<&Span> = match s.kind {
                SpanKind::Server => {
                    let shared = find(&s.trace, &s.id, &|c| {
                        c.kind == SpanKind::Client && c.service != s.service
                    });
                    // A parent of the span's own service (Zipkin's shared
                    // server span, with the handler's span under it) is
                    // no caller, even if the client shares its id.
                    let parent = s
                        .parent
                        .as_deref()
                        .filter(|p| find(&s.trace, p, &|c| c.service == s.service).is_none())
                        .and_then(|p| {
                            find(&s.trace, p, &|c| {
                                c.service != s.service && c.kind != SpanKind::Messaging
                            })
                        });
                    shared.or(parent).map(|i| &spans[i])
                }
                SpanKind::Other => s
                    .parent
                    .as_deref()
                    .and_then(|p| {
                        find(&s.trace, p, &|c| {
                            c.service != s.service
                                && !matches!(c.kind, SpanKind::Client | SpanKind::Messaging)
                        })
                    })
                    .map(|i| &spans[i]),
                SpanKind::Client | SpanKind::Messaging => None,
            };
            if let Some(c) = caller {
                add_edge(c, s, &mut edges);
            }
        }
        // Client spans with no server span under them still call someone we
        // cannot name: they are left out (a database, an external API).
        for s in &spans {
            if s.kind != SpanKind::Server {
                continue;
            }
            let (fact, times, whole) = &mut services[service_ix[&s.service[..]]];
            fact.server_spans += 1;
            let Some(duration) = s.duration else {
                continue;
            };
            let own = duration.saturating_sub(
                under
                    .get(&(&s.trace[..], &s.id[..]))
                    .copied()
                    .unwrap_or_default(),
            );
            times.push(own);
            whole.push(duration);
        }
        let names: Vec<&str> = services.iter().map(|(f, _, _)| f.name.as_str()).collect();
        let pairs: Vec<(usize, usize)> = edges
            .iter()
            .map(|e| (service_ix[&e.from[..]], service_ix[&e.to[..]]))
            .collect();
        // A cycle nobody enters is entered where its traces start: the
        // services of root spans (no parent among the spans).
        let roots: Vec<usize> = spans
            .iter()
            .filter(|s| {
                s.parent
                    .as_deref()
                    .is_none_or(|p| !by_id.contains_key(&(&s.trace[..], p)))
            })
            .map(|s| service_ix[&s.service[..]])
            .collect();
        let cut = cycles::back_edges(names.len(), &pairs, &roots);
        for &(i, ref path) in &cut {
            let e = &edges[i];
            let cycle: Vec<&str> = path.iter().map(|&s| names[s]).collect();
            let text = format!(
                "the traced calls form a cycle, {}; the call `{} → {}` that closes it is left out, as a call graph must be acyclic",
                cycles::text(&cycle),
                e.from,
                e.to
            );
            facts.warn(Some(e.at), text);
        }
        let mut left_out = vec![false; edges.len()];
        for (i, _) in cut {
            left_out[i] = true;
        }
        for (mut fact, mut times, mut whole) in services {
            if !times.is_empty() {
                times.sort_unstable();
                fact.latency = Some((rank(&times, 0.50), rank(&times, 0.99)));
                whole.sort_unstable();
                fact.response = Some((rank(&whole, 0.50), rank(&whole, 0.99)));
            }
            facts.services.push(fact);
        }
        for (i, e) in edges.into_iter().enumerate() {
            if left_out[i] {
                continue;
            }
            let seen: Vec<Seen> = e
                .groups
                .values()
                .flat_map(Group::calls)
                .map(|sent| seen(&sent))
                .collect();
            let calls = seen.len() as u64;
            let attempts: u64 = seen.iter().map(|g| u64::from(g.attempts)).sum();
            facts.calls.push(CallFact {
                from: e.from,
                to: e.to,
                at: e.at,
                method: e.method.map(|m| m.to_ascii_uppercase()),
                figures: CallFigures {
                    calls,
                    attempts_mean: attempts as f64 / calls.max(1) as f64,
                    attempts_max: seen.iter().map(|g| g.attempts).max().unwrap_or(1),
                    proxy_max: seen.iter().map(|g| g.proxy).max().unwrap_or(1),
                    client_max: seen.iter().map(|g| g.client).max().unwrap_or(1),
                    resend_max: seen.iter().map(|g| g.numbered).max().unwrap_or(1),
                    failed_calls: seen.iter().filter(|g| g.failed).count() as u64,
                },
                grpc: e.grpc,
            });
        }
    }
}

/// The spans with each one kept once: two exports that share a trace (the
/// same trace and span id, service, kind and start in two files) would
/// otherwise count its requests twice, and as retries. Spans that share an
/// id but not a start are kept (Brave's consumer spans of one Kafka
/// message, each delivery its own). Said once, at the first span dropped.
fn dedup(spans: Vec<Span>, facts: &mut Facts) -> Vec<Span> {
    type Key<'a> = (&'a str, &'a str, &'a str, SpanKind, Option<u128>);
    let mut seen: std::collections::HashSet<Key> =
        std::collections::HashSet::with_capacity(spans.len());
    let keep: Vec<bool> = spans
        .iter()
        .map(|s| seen.insert((&s.trace, &s.id, &s.service, s.kind, s.start)))
        .collect();
    let dropped = keep.iter().filter(|k| !**k).count();
    let Some(first) = keep.iter().position(|k| !*k) else {
        return spans;
    };
    facts.note(
        Some(spans[first].at),
        format!(
            "{dropped} span(s) appear more than once among the traces (the same trace and span id, service, kind and start, as when two exports share a trace): each is counted once"
        ),
    );
    spans
        .into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect()
}

/// One request a caller sent (a client span), and what reached the callee.
#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    signals: attempts::Signals,
    /// When it was sent and when its answer came, in nanoseconds since the
    /// epoch, where the trace says.
    start: Option<u128>,
    end: Option<u128>,
    /// Callee spans under it.
    reached: u32,
    /// The largest `x-envoy-attempt-count` among them.
    proxy_attempt: u32,
    /// The largest attempt number the callee's spans carry (gRPC metadata).
    callee_attempt: u32,
    failed: bool,
}

/// The requests one parent span sent to one callee with one method and
/// one span name: one logical call, or several one after the other.
#[derive(Debug, Clone, Default)]
struct Group {
    clients: HashMap<String, Sent>,
}

/// What one logical call showed.
#[derive(Debug, Clone, Copy)]
struct Seen {
    attempts: u32,
    /// The most attempts one client span became below the caller.
    proxy: u32,
    /// The attempts the caller's client made (spans or resend_count + 1).
    client: u32,
    /// The attempts the spans' own numbers (resend_count + 1, gRPC's
    /// previous attempts + 1) say.
    numbered: u32,
    failed: bool,
}

impl Group {
    /// The logical calls among the requests, in the order they were sent:
    /// a request sent after a success had come back begins a new call (a
    /// retry follows a failure; hedged requests, sent while the first is
    /// out, stay in its call). Without a start time for every request, or
    /// with no success known, they are one call.
    fn calls(&self) -> Vec<Vec<&Sent>> {
        let mut sent: Vec<&Sent> = self.clients.values().collect();
        if sent.iter().any(|c| c.start.is_none()) {
            return vec![sent];
        }
        sent.sort_by_key(|c| (c.start, c.end));
        let mut calls = Vec::new();
        let mut call: Vec<&Sent> = Vec::new();
        let mut answered: Option<u128> = None;
        for c in sent {
            if answered.is_some_and(|t| c.start.is_some_and(|s| s >= t)) {
                calls.push(std::mem::take(&mut call));
                answered = None;
            }
            if c.signals.succeeded
                && let Some(end) = c.end
            {
                answered = Some(answered.map_or(end, |t| t.min(end)));
            }
            call.push(c);
        }
        calls.push(call);
        calls
    }
}

/// What the requests of one logical call showed.
fn seen(call: &[&Sent]) -> Seen {
    let sent = || call.iter().copied();
    // Requests followed by a redirect or an authentication resend, and
    // gRPC's transparent retries, are no retries.
    let not_retries = sent().filter(|c| c.signals.not_retry).count() as u32;
    let spans = call.len() as u32;
    let numbered = sent()
        .filter_map(|c| c.signals.attempt)
        .max()
        .unwrap_or(1)
        .max(sent().map(|c| c.callee_attempt).max().unwrap_or(1));
    let client = spans.max(numbered).saturating_sub(not_retries).max(1);
    let proxy = sent()
        .map(|c| c.reached.max(c.proxy_attempt).max(1))
        .max()
        .unwrap_or(1);
    let below: u32 = sent()
        .filter(|c| !c.signals.not_retry)
        .map(|c| c.reached.max(c.proxy_attempt).max(1))
        .sum();
    Seen {
        attempts: client.max(below).max(1),
        proxy,
        client,
        numbered: numbered.saturating_sub(not_retries).max(1),
        failed: sent().any(|c| c.failed),
    }
}

/// The nearest-rank quantile of sorted `times`.
fn rank(times: &[Duration], q: f64) -> Duration {
    let n = times.len();
    let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    times[i]
}

/// The HTTP method among a span's attributes, new name first; without
/// one, from the span's name.
pub(crate) fn method_of<'a>(
    attr: impl Fn(&str) -> Option<&'a str>,
    name: Option<&str>,
) -> Option<String> {
    attr("http.request.method")
        .or_else(|| attr("http.method"))
        .map(|m| m.to_ascii_uppercase())
        .or_else(|| name.and_then(method_in_name))
}

/// The HTTP method a span name starts with: Zipkin's `post /tokens/access`
/// or `get`, OpenTelemetry's `GET /users/{id}`, the older `HTTP GET`.
/// Anything else (`get_multi`, `redirect`, a gRPC method) says nothing.
pub fn method_in_name(name: &str) -> Option<String> {
    const METHODS: &[&str] = &[
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    let mut words = name.split_whitespace();
    let mut first = words.next()?;
    if first.eq_ignore_ascii_case("HTTP") {
        first = words.next()?;
    }
    METHODS
        .iter()
        .find(|m| m.eq_ignore_ascii_case(first))
        .map(|m| (*m).to_owned())
}

/// Grafana Tempo's `{"batches": […]}`: a list of OTLP resource spans.
pub(crate) fn tempo_batches(root: &crate::input::Node) -> bool {
    use crate::external::node::{get, items};
    get(root, "batches")
        .map(items)
        .and_then(|b| b.first())
        .is_some_and(|b| {
            get(b, "scopeSpans").is_some() || get(b, "instrumentationLibrarySpans").is_some()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Pos;

    /// A client span of `web` to `api` under parent `p`, sent at `start_ms`
    /// for `ms`, with its server span; `ok` is whether it succeeded.
    fn request(id: &str, start_ms: u128, ms: u64, ok: bool) -> [Span; 2] {
        let at = At {
            file: 0,
            pos: Pos::default(),
        };
        let span = |id: String, parent: &str, service: &str, kind| Span {
            trace: "t".into(),
            id,
            parent: Some(parent.into()),
            service: service.into(),
            kind,
            duration: Some(Duration::from_millis(ms)),
            method: Some("GET".into()),
            name: Some("GET /items".into()),
            signals: attempts::Signals {
                failed: !ok,
                succeeded: ok,
                ..attempts::Signals::default()
            },
            grpc: false,
            start: Some(start_ms * 1_000_000),
            at,
        };
        [
            span(id.into(), "p", "web", SpanKind::Client),
            span(format!("{id}s"), id, "api", SpanKind::Server),
        ]
    }

    fn figures(requests: &[[Span; 2]]) -> (u64, u32) {
        let mut acc = Acc::default();
        for r in requests {
            for s in r {
                assert!(acc.push(s.clone()));
            }
        }
        let mut facts = Facts::default();
        acc.finish(&mut facts);
        let c = &facts.calls[0];
        (c.figures.calls, c.figures.attempts_max)
    }

    #[test]
    fn a_request_after_a_success_is_a_new_call_and_one_after_a_failure_a_retry() {
        // Fail, then succeed: one call of two attempts; then the same
        // request again after the success: a second call.
        let seq = [
            request("a", 0, 10, false),
            request("b", 20, 10, true),
            request("c", 40, 10, true),
        ];
        assert_eq!(figures(&seq), (2, 2));
        // A hedge sent while the first request was still out stays in its
        // call, although the first succeeded.
        let hedged = [request("a", 0, 50, true), request("b", 30, 10, true)];
        assert_eq!(figures(&hedged), (1, 2));
        // Without a start time for every request, nothing is split.
        let mut untimed = [request("a", 0, 10, true), request("b", 20, 10, true)];
        untimed[1][0].start = None;
        assert_eq!(figures(&untimed), (1, 2));
    }

    #[test]
    fn a_trace_in_two_exports_is_counted_once() {
        let once = [request("a", 0, 10, false), request("b", 20, 10, true)];
        let twice = [once.clone(), once].concat();
        assert_eq!(figures(&twice), (1, 2));
    }
}
