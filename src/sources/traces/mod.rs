//! The call graph from traces: OTLP/JSON, Jaeger JSON and Zipkin v2 JSON
//! readers turn spans into one common form; [`Acc::finish`] pairs them.
//!
//! - A call `A → B`: a client span of A whose child is a server span of B; a
//!   Zipkin server span sharing its client's id; or, without span kinds, a
//!   span of B whose parent belongs to A.
//! - The method: `http.request.method` (semantic conventions 1.23+) or
//!   `http.method` (before).
//! - A service's latency (its own work, as the topology means it): each
//!   server span's duration minus the durations of the client spans under
//!   it, p50 and p99 by nearest rank.
//! - Attempts seen, per logical call (the client spans to one callee, with
//!   one method, under one parent span): the larger of the client spans
//!   (or their resend_count + 1, see [`attempts`]) and the attempts that
//!   reached the callee: each client span's server spans, or the proxy's
//!   `x-envoy-attempt-count` when larger. Several server spans under one
//!   client span are a proxy retrying below the application. Redirects,
//!   authentication resends and gRPC transparent retries are not counted.

pub mod attempts;
pub mod jaeger;
pub mod otlp;
pub mod zipkin;

use std::collections::HashMap;
use std::time::Duration;

use super::facts::{At, CallFact, Facts, ServiceFact};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Client,
    Server,
    Other,
}

/// One span, in the common form.
#[derive(Debug, Clone)]
pub struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub service: String,
    pub kind: SpanKind,
    pub duration: Duration,
    pub method: Option<String>,
    /// What the span says about attempts (see [`attempts`]).
    pub signals: attempts::Signals,
    pub at: At,
}

/// Spans gathered from every trace file.
#[derive(Debug, Clone, Default)]
pub struct Acc {
    pub spans: Vec<Span>,
}

/// At most this many spans in all: a trace export of a busy hour would
/// take the memory of a large topology many times over.
pub const MAX_SPANS: usize = 2_000_000;

impl Acc {
    pub fn push(&mut self, s: Span) -> bool {
        if self.spans.len() >= MAX_SPANS {
            return false;
        }
        self.spans.push(s);
        true
    }

    pub fn finish(self, facts: &mut Facts) {
        let spans = self.spans;
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
            groups: HashMap<(String, Option<String>), Group>,
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
                    groups: HashMap::new(),
                });
                edges.len() - 1
            });
            let e = &mut edges[i];
            if e.method.is_none() {
                e.method = client.method.clone();
            }
            let parent = client.parent.clone().unwrap_or_else(|| client.id.clone());
            let g = e
                .groups
                .entry((format!("{}/{parent}", client.trace), client.method.clone()))
                .or_default();
            // Without span kinds, each callee span is an attempt of its own.
            let id = if client.kind == SpanKind::Client {
                client.id.clone()
            } else {
                format!("{}\u{0}{}", client.id, callee.id)
            };
            let c = g.clients.entry(id).or_insert_with(|| Sent {
                signals: client.signals,
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
            {
                *under.entry((&s.trace, p)).or_default() += s.duration;
            }
            // The client side of this span, if it is a callee's.
            let caller: Option<&Span> = match s.kind {
                SpanKind::Server => {
                    let shared = find(&s.trace, &s.id, &|c| {
                        c.kind == SpanKind::Client && c.service != s.service
                    });
                    let parent = s
                        .parent
                        .as_deref()
                        .and_then(|p| find(&s.trace, p, &|c| c.service != s.service));
                    shared.or(parent).map(|i| &spans[i])
                }
                SpanKind::Other => s
                    .parent
                    .as_deref()
                    .and_then(|p| {
                        find(&s.trace, p, &|c| {
                            c.service != s.service && c.kind != SpanKind::Client
                        })
                    })
                    .map(|i| &spans[i]),
                SpanKind::Client => None,
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
            let own = s.duration.saturating_sub(
                under
                    .get(&(&s.trace[..], &s.id[..]))
                    .copied()
                    .unwrap_or_default(),
            );
            let (fact, times, whole) = &mut services[service_ix[&s.service[..]]];
            fact.server_spans += 1;
            times.push(own);
            whole.push(s.duration);
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
        for e in edges {
            let calls = e.groups.len() as u64;
            let seen: Vec<Seen> = e.groups.values().map(Group::seen).collect();
            let attempts: u64 = seen.iter().map(|g| u64::from(g.attempts)).sum();
            facts.calls.push(CallFact {
                from: e.from,
                to: e.to,
                at: e.at,
                method: e.method.map(|m| m.to_ascii_uppercase()),
                calls,
                attempts_mean: attempts as f64 / calls.max(1) as f64,
                attempts_max: seen.iter().map(|g| g.attempts).max().unwrap_or(1),
                proxy_max: seen.iter().map(|g| g.proxy).max().unwrap_or(1),
                client_max: seen.iter().map(|g| g.client).max().unwrap_or(1),
                resend_max: seen.iter().map(|g| g.numbered).max().unwrap_or(1),
                failed_calls: seen.iter().filter(|g| g.failed).count() as u64,
            });
        }
    }
}

/// One request a caller sent (a client span), and what reached the callee.
#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    signals: attempts::Signals,
    /// Callee spans under it.
    reached: u32,
    /// The largest `x-envoy-attempt-count` among them.
    proxy_attempt: u32,
    /// The largest attempt number the callee's spans carry (gRPC metadata).
    callee_attempt: u32,
    failed: bool,
}

/// One logical call: the requests one parent span sent to one callee with
/// one method.
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
    fn seen(&self) -> Seen {
        let sent = || self.clients.values();
        // Requests followed by a redirect or an authentication resend, and
        // gRPC's transparent retries, are no retries.
        let not_retries = sent().filter(|c| c.signals.not_retry).count() as u32;
        let spans = self.clients.len() as u32;
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
}

/// The nearest-rank quantile of sorted `times`.
fn rank(times: &[Duration], q: f64) -> Duration {
    let n = times.len();
    let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    times[i]
}

/// The HTTP method among a span's attributes, new name first.
pub fn method_of<'a>(attr: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    attr("http.request.method")
        .or_else(|| attr("http.method"))
        .map(|m| m.to_ascii_uppercase())
}
