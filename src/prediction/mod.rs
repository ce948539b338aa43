//! The static figures, computed once for everyone: worst-case amplification per
//! service, its steady-state bound with budgets, worst-case response times, and
//! how many retrying layers sit above each call. The rules read them, and so
//! does every run report, whose `predicted` column is this module's
//! `worst_case` — the chaos harness and the simulator never compute it.
//!
//! All of it is dynamic programming over the call DAG in topological order:
//! O(services + calls), never path enumeration (a ladder of 64 diamonds has 2⁶⁴
//! paths). Counts saturate at u128::MAX; durations at `policy::FOREVER`.
//!
//! Attempts bounded by time (huge and `unlimited` counts) are `time_bound`'s;
//! the sustained-outage figure with circuit breakers is `breakers`', the
//! healthy-load figure with hedging `healthy`'s, and the plain baseline
//! (call paths, the healthy median time of one request) `baseline`'s.

pub mod baseline;
mod breakers;
pub mod hang;
mod healthy;
pub mod normal;
mod response_time;
mod time_bound;

use std::time::Duration;

use crate::policy::FOREVER;
use crate::topology::{Layer, ServiceId, Topology, graph};

pub use breakers::REFERENCE_RATE;

pub(crate) use hang::{Hang, Hangs};
pub(crate) use response_time::ResponseTime;
pub use time_bound::{Basis, BoundBy, TimeBound};
pub(crate) use time_bound::{LayerAttempts, PerLayer, attempts_allowed, time_bounds};

/// A count of attempts: exact while it fits in u128, with an f64 beside it for
/// figures beyond (and for JSON, whose numbers are doubles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count {
    pub exact: u128,
    /// `exact` hit u128::MAX; `approx` is then the figure to show.
    pub saturated: bool,
    pub(crate) approx: f64,
}

impl Count {
    pub(crate) const ZERO: Count = Count {
        exact: 0,
        saturated: false,
        approx: 0.0,
    };

    pub fn of(n: u128) -> Count {
        Count {
            exact: n,
            saturated: false,
            approx: n as f64,
        }
    }

    fn add(self, o: Count) -> Count {
        let (exact, over) = self.exact.overflowing_add(o.exact);
        Count {
            exact: if over { u128::MAX } else { exact },
            saturated: self.saturated || o.saturated || over,
            approx: clamp(self.approx + o.approx),
        }
    }

    fn mul(self, factor: u128) -> Count {
        let (exact, over) = self.exact.overflowing_mul(factor);
        Count {
            exact: if over { u128::MAX } else { exact },
            saturated: self.saturated || over,
            approx: clamp(self.approx * factor as f64),
        }
    }

    /// The figure as a JSON-safe double.
    pub fn value(&self) -> f64 {
        if self.saturated {
            self.approx
        } else {
            self.exact as f64
        }
    }
}

fn clamp(x: f64) -> f64 {
    if x.is_finite() { x } else { f64::MAX }
}

/// Worst-case attempts reaching each service (indexed like `t.services`) for
/// one user request when every call fails retryably: what a run's measured
/// amplification is compared with.
pub fn worst_case(t: &Topology) -> Vec<Count> {
    Analysis::new(t).worst_case
}

/// The same for a run with a horizon: no attempt starts at or after it, which
/// bounds every layer in time (only counts above [`TIME_BOUNDED_ABOVE`] change).
pub fn worst_case_within(t: &Topology, horizon: Duration) -> Vec<Count> {
    Analysis::within_horizon(t, Some(horizon)).worst_case
}

#[derive(Debug, Clone)]
pub struct Analysis {
    /// Callers before callees.
    pub order: Vec<ServiceId>,
    /// Attempts per invocation of the client layer, when there is one.
    pub client_attempts: Option<LayerAttempts>,
    /// Attempts per invocation of each call layer: `[service][call][layer]`.
    pub layer_attempts: PerLayer<LayerAttempts>,
    /// Worst-case time of each call layer from the view of the layer (or
    /// caller) above it, the layers inside it and the callee included:
    /// `[service][call][layer]`; the call's own worst case is layer 0's.
    pub layer_worst: PerLayer<Duration>,
    pub reachable: Vec<bool>,
    /// Attempts reaching each service per user request, every call failing.
    pub worst_case: Vec<Count>,
    /// The same with every budget in its steady state.
    pub with_budgets: Vec<f64>,
    /// The same once every circuit breaker is open, half-open probes
    /// counted, at [`REFERENCE_RATE`] user requests per second.
    pub with_breakers: Vec<f64>,
    /// Attempts reaching each service per user request when nothing fails:
    /// one per call path, times the expected copies of each hedged call.
    pub healthy: Vec<f64>,
    /// Expected copies each call sends per time its caller makes it when
    /// nothing fails (1 unless it hedges): `[service][call]`.
    pub(crate) healthy_copies: Vec<Vec<f64>>,
    /// Each service's response time when nothing fails.
    pub(crate) response: Vec<ResponseTime>,
    /// For each service, the incoming call that contributes most to its worst
    /// case, as (caller, index in the caller's calls): the hot path backwards.
    pub(crate) hottest_caller: Vec<Option<(ServiceId, usize)>>,
    /// Worst-case time each service takes to answer: its own p99 plus its calls.
    pub(crate) service_worst: Vec<Duration>,
    /// Worst-case time of each call from its caller's view, per service, per call.
    pub call_worst: Vec<Vec<Duration>>,
    /// Worst case of one user request, through the client layer.
    pub(crate) entry_worst: Duration,
    /// The same figures when callees may hang: every attempt may last its
    /// whole timeout (`hang`'s module docs).
    pub(crate) hang: Hangs,
    /// Per service: it or a service below it declares a latency.
    pub(crate) latency_declared_below: Vec<bool>,
    /// Per service: it or a service below it leaves the latency at the
    /// 1 ms default.
    pub(crate) latency_defaulted_below: Vec<bool>,
    /// Most retrying layers on any path from the user down to each service
    /// (client layer included).
    pub(crate) retrying_above: Vec<u32>,
    /// Retrying call layers on the hot path down to each service (client layer
    /// not included), and the outermost of them as (caller, call, layer index).
    pub(crate) hot_retrying: Vec<u32>,
    pub(crate) hot_outermost: Vec<Option<(ServiceId, usize, usize)>>,
}

impl Analysis {
    pub fn new(t: &Topology) -> Analysis {
        Self::within_horizon(t, None)
    }

    /// Per service: its worst case rests on an estimate, a layer on some
    /// path to it counted at its mean waits ([`Basis::TimeTypical`]: full
    /// jitter can wait nothing, so no count is sure). A run may then send
    /// it more than the figure.
    pub fn estimated(&self, t: &Topology) -> Vec<bool> {
        let typical = |la: &LayerAttempts| la.basis == Basis::TimeTypical;
        let mut estimated = vec![false; t.services.len()];
        if let Some(e) = estimated.get_mut(t.entry) {
            *e = self.client_attempts.as_ref().is_some_and(typical);
        }
        for &s in &self.order {
            for (c, call) in t.services[s].calls.iter().enumerate() {
                let here = estimated[s] || self.layer_attempts[s][c].iter().any(typical);
                if here {
                    estimated[call.to] = true;
                }
            }
        }
        estimated
    }

    /// The figures for a run whose horizon bounds every layer in time.
    pub(crate) fn within_horizon(t: &Topology, horizon: Option<Duration>) -> Analysis {
        let order = graph::topo_order(t);
        let healthy = healthy::healthy(t, &order);
        let (client_attempts, layer_attempts) = attempts(t, &order, horizon);
        let backward = Backward::of(t, &order, client_attempts.as_ref(), &layer_attempts);
        let forward = Forward::of(t, &order, client_attempts.as_ref(), &layer_attempts);
        let with_breakers =
            breakers::with_breakers(t, &order, client_attempts.as_ref(), &layer_attempts);
        let hang = hang::hangs(t, &order, client_attempts.as_ref(), &layer_attempts);
        let (latency_declared_below, latency_defaulted_below) = hang::latencies_below(t, &order);
        Analysis {
            hang,
            latency_declared_below,
            latency_defaulted_below,
            order,
            client_attempts,
            layer_attempts,
            layer_worst: backward.layer_worst,
            reachable: forward.reachable,
            worst_case: forward.worst_case,
            with_budgets: forward.with_budgets,
            with_breakers,
            healthy: healthy.attempts,
            healthy_copies: healthy.copies,
            response: healthy.response,
            hottest_caller: forward.hottest_caller,
            service_worst: backward.service_worst,
            call_worst: backward.call_worst,
            entry_worst: backward.entry_worst,
            retrying_above: forward.retrying_above,
            hot_retrying: forward.hot_retrying,
            hot_outermost: forward.hot_outermost,
        }
    }

    /// Attempts call `i` of service `s` sends to its callee per time the
    /// caller makes it: the product over its layers.
    pub(crate) fn call_attempts(&self, s: ServiceId, i: usize) -> u128 {
        call_attempts(&self.layer_attempts[s][i])
    }

    /// What layer `li` of call `i` of `s` waits for per attempt at worst: the
    /// layers inside it and the callee.
    pub(crate) fn inner_worst(&self, t: &Topology, s: ServiceId, i: usize, li: usize) -> Duration {
        match self.layer_worst[s][i].get(li + 1) {
            Some(w) => *w,
            None => self.service_worst[t.services[s].calls[i].to],
        }
    }

    /// The last `max_hops` calls of the hot path down to `s` as (caller, index),
    /// outermost first, and whether the path goes on above them. Bounded, so
    /// messages about deep chains stay short and cheap.
    pub(crate) fn hot_path_tail(
        &self,
        s: ServiceId,
        max_hops: usize,
    ) -> (Vec<(ServiceId, usize)>, bool) {
        let mut path = Vec::new();
        let mut at = s;
        while let Some((caller, i)) = self.hottest_caller[at] {
            if path.len() == max_hops {
                path.reverse();
                return (path, true);
            }
            path.push((caller, i));
            at = caller;
        }
        path.reverse();
        (path, false)
    }

    /// Calls on the hot path to any service in `targets`, as (caller, index):
    /// the hot paths form a tree, so each call is walked once.
    pub(crate) fn hot_calls(
        &self,
        targets: impl IntoIterator<Item = ServiceId>,
    ) -> Vec<(ServiceId, usize)> {
        let mut seen = vec![false; self.worst_case.len()];
        let mut calls = Vec::new();
        for s in targets {
            let mut at = s;
            while !seen[at] {
                seen[at] = true;
                let Some((caller, i)) = self.hottest_caller[at] else {
                    break;
                };
                calls.push((caller, i));
                at = caller;
            }
        }
        calls
    }
}

/// Attempts a call with these layers sends per time its caller makes it: the
/// product over its layers.
fn call_attempts(layers: &[LayerAttempts]) -> u128 {
    layers
        .iter()
        .fold(1u128, |a, l| a.saturating_mul(u128::from(l.count)))
}

/// Attempts per invocation of the client layer and of every call layer.
fn attempts(
    t: &Topology,
    order: &[ServiceId],
    horizon: Option<Duration>,
) -> (Option<LayerAttempts>, PerLayer<LayerAttempts>) {
    let (client_bound, bounds) = time_bounds(t, order, horizon);
    let client_attempts = t
        .client
        .as_ref()
        .map(|l| LayerAttempts::of_layer(l, client_bound));
    let layer_attempts: PerLayer<LayerAttempts> = t
        .services
        .iter()
        .zip(&bounds)
        .map(|(svc, b)| {
            svc.calls
                .iter()
                .zip(b)
                .map(|(c, b)| {
                    c.layers
                        .iter()
                        .zip(b)
                        .map(|(l, b)| LayerAttempts::of_layer(l, *b))
                        .collect()
                })
                .collect()
        })
        .collect();
    (client_attempts, layer_attempts)
}

/// The figures computed callers first: worst-case counts and the hot path.
struct Forward {
    reachable: Vec<bool>,
    worst_case: Vec<Count>,
    with_budgets: Vec<f64>,
    hottest_caller: Vec<Option<(ServiceId, usize)>>,
    retrying_above: Vec<u32>,
    hot_retrying: Vec<u32>,
    hot_outermost: Vec<Option<(ServiceId, usize, usize)>>,
}

impl Forward {
    fn of(
        t: &Topology,
        order: &[ServiceId],
        client_attempts: Option<&LayerAttempts>,
        layer_attempts: &PerLayer<LayerAttempts>,
    ) -> Forward {
        let n = t.services.len();
        let call_attempts = |s: ServiceId, i: usize| call_attempts(&layer_attempts[s][i]);
        let call_steady = |s: ServiceId, i: usize| -> f64 {
            let call = &t.services[s].calls[i];
            call.layers
                .iter()
                .zip(&layer_attempts[s][i])
                .map(|(l, a)| l.policy.steady_state_of(a.count))
                .product()
        };
        let mut reachable = vec![false; n];
        let mut worst_case = vec![Count::ZERO; n];
        let mut with_budgets = vec![0.0; n];
        let mut hottest_caller: Vec<Option<(ServiceId, usize)>> = vec![None; n];
        let mut best_contribution = vec![Count::ZERO; n];
        let mut retrying_above = vec![0u32; n];

        reachable[t.entry] = true;
        worst_case[t.entry] = Count::of(client_attempts.map_or(1, |a| u128::from(a.count)));
        with_budgets[t.entry] = match (&t.client, client_attempts) {
            (Some(l), Some(a)) => l.policy.steady_state_of(a.count),
            _ => 1.0,
        };
        retrying_above[t.entry] = u32::from(t.client.as_ref().is_some_and(|l| l.policy.retries()));

        let mut hot_retrying = vec![0u32; n];
        let mut hot_outermost: Vec<Option<(ServiceId, usize, usize)>> = vec![None; n];
        for &s in order {
            if !reachable[s] {
                continue;
            }
            // Every caller of `s` came earlier in the order: its hottest caller is final.
            if let Some((c, i)) = hottest_caller[s] {
                let layers = &t.services[c].calls[i].layers;
                let retrying = layers.iter().filter(|l| l.policy.retries()).count() as u32;
                hot_retrying[s] = hot_retrying[c] + retrying;
                hot_outermost[s] = hot_outermost[c].or_else(|| {
                    layers
                        .iter()
                        .position(|l| l.policy.retries())
                        .map(|li| (c, i, li))
                });
            }
            for (i, call) in t.services[s].calls.iter().enumerate() {
                let to = call.to;
                reachable[to] = true;
                let contribution = worst_case[s].mul(call_attempts(s, i));
                if hottest_caller[to].is_none()
                    || contribution.approx > best_contribution[to].approx
                {
                    hottest_caller[to] = Some((s, i));
                    best_contribution[to] = contribution;
                }
                worst_case[to] = worst_case[to].add(contribution);
                with_budgets[to] = clamp(with_budgets[to] + with_budgets[s] * call_steady(s, i));
                let retrying = call.layers.iter().filter(|l| l.policy.retries()).count() as u32;
                retrying_above[to] = retrying_above[to].max(retrying_above[s] + retrying);
            }
        }

        Forward {
            reachable,
            worst_case,
            with_budgets,
            hottest_caller,
            retrying_above,
            hot_retrying,
            hot_outermost,
        }
    }
}

/// The figures computed callees first: worst-case times.
struct Backward {
    service_worst: Vec<Duration>,
    call_worst: Vec<Vec<Duration>>,
    layer_worst: PerLayer<Duration>,
    entry_worst: Duration,
}

impl Backward {
    fn of(
        t: &Topology,
        order: &[ServiceId],
        client_attempts: Option<&LayerAttempts>,
        layer_attempts: &PerLayer<LayerAttempts>,
    ) -> Backward {
        let n = t.services.len();
        let mut service_worst = vec![Duration::ZERO; n];
        let mut call_worst: Vec<Vec<Duration>> = t
            .services
            .iter()
            .map(|s| vec![Duration::ZERO; s.calls.len()])
            .collect();
        let mut layer_worst: PerLayer<Duration> = t
            .services
            .iter()
            .map(|s| {
                s.calls
                    .iter()
                    .map(|c| vec![Duration::ZERO; c.layers.len()])
                    .collect()
            })
            .collect();
        for &s in order.iter().rev() {
            let svc = &t.services[s];
            let mut total = svc.latency.p99;
            let mut group_max = Duration::ZERO;
            for (i, call) in svc.calls.iter().enumerate() {
                // From the innermost layer (nearest the callee) outwards.
                let mut w = service_worst[call.to];
                for (li, layer) in call.layers.iter().enumerate().rev() {
                    w = layer_worst_case(layer, &layer_attempts[s][i][li], w);
                    layer_worst[s][i][li] = w;
                }
                call_worst[s][i] = w;
                if call.parallel {
                    group_max = group_max.max(w);
                    let next_parallel = svc.calls.get(i + 1).is_some_and(|c| c.parallel);
                    if !next_parallel {
                        total = sat_add(total, group_max);
                        group_max = Duration::ZERO;
                    }
                } else {
                    total = sat_add(total, w);
                }
            }
            service_worst[s] = total;
        }
        let entry_worst = match (&t.client, &client_attempts) {
            (Some(l), Some(a)) => layer_worst_case(l, a, service_worst[t.entry]),
            _ => service_worst[t.entry],
        };
        Backward {
            service_worst,
            call_worst,
            layer_worst,
            entry_worst,
        }
    }
}

fn sat_add(a: Duration, b: Duration) -> Duration {
    a.saturating_add(b).min(FOREVER)
}

/// What one layer takes at worst when what it wraps takes `inner` at worst:
/// per attempt min(timeout, inner), over its attempts, plus the longest waits
/// between them. A layer bounded in time also stops by its bound plus the
/// last attempt it started.
pub(crate) fn layer_worst_case(
    layer: &Layer,
    attempts: &LayerAttempts,
    inner: Duration,
) -> Duration {
    let per_attempt = layer.timeout.map_or(inner, |t| t.value.min(inner));
    attempts_total(layer, attempts, per_attempt)
}

/// `attempts` attempts of `layer` lasting `per_attempt` each, plus the
/// longest waits the policy allows between them; a layer bounded in time
/// stops by its bound plus the last attempt it started.
fn attempts_total(layer: &Layer, attempts: &LayerAttempts, per_attempt: Duration) -> Duration {
    let all = per_attempt
        .checked_mul(attempts.count)
        .map_or(FOREVER, |d| d.min(FOREVER));
    let total = sat_add(all, layer.policy.max_wait_over(attempts.count));
    match attempts.time {
        Some(tb) if attempts.time_bounded() => total.min(sat_add(tb.within, per_attempt)),
        _ => total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(text: &str) -> Topology {
        crate::topology::load_str(text, "t.yaml", "t", &Default::default()).unwrap()
    }

    #[test]
    fn chain_multiplies_layers() {
        let t = topo(
            "version: 1\nentry: e\nclient: { retry: { max_attempts: 2 } }\nservices:\n  e: { calls: [ { to: a, retry: { max_attempts: 4 } } ] }\n  a: { calls: [ { to: b, retry: { max_attempts: 4 }, via: [ { name: mesh, retry: { max_attempts: 3 } } ] } ] }\n  b: {}\n",
        );
        let w: Vec<f64> = worst_case(&t).iter().map(Count::value).collect();
        assert_eq!(w, [2.0, 8.0, 96.0]);
    }

    #[test]
    fn diamonds_sum_paths_and_saturate() {
        let mut text = String::from("version: 1\nentry: s0\nservices:\n");
        for i in 0..64 {
            text += &format!(
                "  s{i}: {{ calls: [ {{ to: l{i}, retry: {{ max_attempts: 100 }} }}, {{ to: r{i}, retry: {{ max_attempts: 100 }} }} ] }}\n  l{i}: {{ calls: [ {{ to: s{n}, retry: {{ max_attempts: 100 }} }} ] }}\n  r{i}: {{ calls: [ {{ to: s{n}, retry: {{ max_attempts: 100 }} }} ] }}\n",
                n = i + 1
            );
        }
        text += "  s64: {}\n";
        let t = topo(&text);
        let w = worst_case(&t);
        let s1 = t.id_of("s1").unwrap();
        assert_eq!((w[s1].exact, w[s1].saturated), (20_000, false));
        let last = t.id_of("s64").unwrap();
        assert!(w[last].saturated);
        assert_eq!(w[last].exact, u128::MAX);
        assert!(
            w[last].value() > u128::MAX as f64,
            "the double keeps growing past u128"
        );
    }
}
