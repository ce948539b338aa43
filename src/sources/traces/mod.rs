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
//! - Attempts seen: the client spans to one callee, with one method, under one
//!   parent span, or `http.request.resend_count` + 1 when larger: the
//!   amplification production showed, printed beside the prediction.

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
    /// `http.request.resend_count`.
    pub resend: Option<u32>,
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
        let mut services: Vec<(ServiceFact, Vec<Duration>)> = Vec::new();
        for s in &spans {
            service_ix.entry(&s.service).or_insert_with(|| {
                services.push((
                    ServiceFact {
                        name: s.service.clone(),
                        at: s.at,
                        latency: None,
                        server_spans: 0,
                    },
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
            groups: HashMap<(String, Option<String>), (u32, u32)>,
        }
        let mut edges: Vec<Edge> = Vec::new();
        let mut edge_ix: HashMap<(String, String), usize> = HashMap::new();
        let mut add_edge = |from: &str, to: &str, client: &Span, edges: &mut Vec<Edge>| {
            let key = (from.to_owned(), to.to_owned());
            let i = *edge_ix.entry(key).or_insert_with(|| {
                edges.push(Edge {
                    from: from.to_owned(),
                    to: to.to_owned(),
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
                .or_insert((0, 0));
            g.0 += 1;
            g.1 = g.1.max(client.resend.map_or(1, |r| r.saturating_add(1)));
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
                add_edge(&c.service, &s.service, c, &mut edges);
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
            let (fact, times) = &mut services[service_ix[&s.service[..]]];
            fact.server_spans += 1;
            times.push(own);
        }
        for (mut fact, mut times) in services {
            if !times.is_empty() {
                times.sort_unstable();
                fact.latency = Some((rank(&times, 0.50), rank(&times, 0.99)));
            }
            facts.services.push(fact);
        }
        for e in edges {
            let calls = e.groups.len() as u64;
            let attempts: u64 = e.groups.values().map(|g| u64::from(g.0.max(g.1))).sum();
            let max = e.groups.values().map(|g| g.0.max(g.1)).max().unwrap_or(1);
            facts.calls.push(CallFact {
                from: e.from,
                to: e.to,
                at: e.at,
                method: e.method.map(|m| m.to_ascii_uppercase()),
                calls,
                attempts_mean: attempts as f64 / calls.max(1) as f64,
                attempts_max: max,
            });
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
