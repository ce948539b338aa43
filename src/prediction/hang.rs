//! The worst case when a callee may hang (issue 33). The amplification figure
//! assumes every call fails retryably, a timeout included; the worst-case time
//! assumes the same here: an attempt can last its whole per-attempt timeout,
//! whatever the callee's declared latency, because the callee can be slow or
//! down. Where no timeout bounds an attempt the figure is [`Hang::Unbounded`]
//! and names the call without one — RL011's finding, not a number.
//!
//! Two figures, both from the configuration alone:
//!
//! - a call's: how long its caller waits for it when the callee hangs —
//!   through its layers, innermost first, each attempt lasting the layer's
//!   timeout (or what the layers inside it take, when shorter), plus the
//!   longest backoff waits the policy engine allows between attempts;
//! - a service's: how long it works on one request when everything below it
//!   hangs — its own work (its p99 latency, the 1 ms default when none is
//!   declared) plus its calls' figures, sequential calls added up, a
//!   `parallel` group its slowest.
//!
//! Both are the latency-based figures of `super::Backward` with the callee's
//! time taken as unbounded, so every hang figure is at least its
//! latency-based twin. The service figure does not let the service itself
//! hang: that its own work can outlive a caller is nothing its configuration
//! says (RL013 compares timeouts with declared latencies).

use std::time::Duration;

use super::{LayerAttempts, PerLayer, attempts_total};
use crate::topology::{Layer, ServiceId, Topology};

/// A worst-case time when callees may hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hang {
    /// At most this long.
    Within(Duration),
    /// No timeout bounds it: call `call` of `service` has none in any layer.
    Unbounded { service: ServiceId, call: usize },
}

impl Hang {
    /// The bound, when there is one.
    pub(crate) fn within(self) -> Option<Duration> {
        match self {
            Hang::Within(d) => Some(d),
            Hang::Unbounded { .. } => None,
        }
    }

    fn add(self, o: Hang) -> Hang {
        match (self, o) {
            (Hang::Within(a), Hang::Within(b)) => Hang::Within(super::sat_add(a, b)),
            (u @ Hang::Unbounded { .. }, _) | (_, u @ Hang::Unbounded { .. }) => u,
        }
    }

    fn max(self, o: Hang) -> Hang {
        match (self, o) {
            (Hang::Within(a), Hang::Within(b)) => Hang::Within(a.max(b)),
            (u @ Hang::Unbounded { .. }, _) | (_, u @ Hang::Unbounded { .. }) => u,
        }
    }
}

/// How long one attempt of `layer` lasts at worst when what it wraps takes
/// `inner`: its timeout, or `inner` when that is shorter or there is none.
pub(crate) fn per_attempt(layer: &Layer, inner: Hang) -> Hang {
    match (layer.timeout.map(|t| t.value), inner) {
        (Some(t), Hang::Within(d)) => Hang::Within(t.min(d)),
        (Some(t), Hang::Unbounded { .. }) => Hang::Within(t),
        (None, inner) => inner,
    }
}

/// What `layer` takes at worst over all its attempts when what it wraps
/// takes `inner`: the same sum as the latency-based figure.
pub(crate) fn layer_hang(layer: &Layer, attempts: &LayerAttempts, inner: Hang) -> Hang {
    match per_attempt(layer, inner) {
        Hang::Within(each) => Hang::Within(attempts_total(layer, attempts, each)),
        u => u,
    }
}

/// The hang figures of a topology.
#[derive(Debug, Clone)]
pub(crate) struct Hangs {
    /// Each call layer's figure, the callee hanging: `[service][call][layer]`.
    pub layer: PerLayer<Hang>,
    /// Each service's own work at p99 plus its calls' figures.
    pub service: Vec<Hang>,
    /// One user request: the client layer around the entry's figure.
    pub entry: Hang,
}

/// The hang figures, callees first.
pub(crate) fn hangs(
    t: &Topology,
    order: &[ServiceId],
    client_attempts: Option<&LayerAttempts>,
    layer_attempts: &PerLayer<LayerAttempts>,
) -> Hangs {
    let mut layer: PerLayer<Hang> = t
        .services
        .iter()
        .map(|s| {
            s.calls
                .iter()
                .map(|c| vec![Hang::Within(Duration::ZERO); c.layers.len()])
                .collect()
        })
        .collect();
    let mut service = vec![Hang::Within(Duration::ZERO); t.services.len()];
    for &s in order.iter().rev() {
        let svc = &t.services[s];
        for (i, call) in svc.calls.iter().enumerate() {
            // The callee hangs: nothing but a timeout ends an attempt.
            let mut h = Hang::Unbounded {
                service: s,
                call: i,
            };
            for (li, l) in call.layers.iter().enumerate().rev() {
                h = layer_hang(l, &layer_attempts[s][i][li], h);
                layer[s][i][li] = h;
            }
        }
        service[s] = own_and_calls(t, s, |i| first(&layer[s][i]));
    }
    let entry = match (&t.client, client_attempts) {
        (Some(l), Some(a)) => layer_hang(l, a, service[t.entry]),
        _ => service[t.entry],
    };
    Hangs {
        layer,
        service,
        entry,
    }
}

impl Hangs {
    /// Service `s`'s figure as if its call `skip` took no time: what the
    /// rest of its work leaves for that call.
    pub(crate) fn service_without(&self, t: &Topology, s: ServiceId, skip: usize) -> Hang {
        own_and_calls(t, s, |i| {
            if i == skip {
                Hang::Within(Duration::ZERO)
            } else {
                self.call(s, i)
            }
        })
    }

    /// Call `i` of `s`'s figure: what its caller waits when the callee hangs.
    pub(crate) fn call(&self, s: ServiceId, i: usize) -> Hang {
        first(&self.layer[s][i])
    }
}

/// The outermost layer's figure: the call's.
fn first(layers: &[Hang]) -> Hang {
    layers
        .first()
        .copied()
        .unwrap_or(Hang::Within(Duration::ZERO))
}

/// `s`'s own work at p99 plus its calls' figures `call(i)`: sequential calls
/// added up, a `parallel` group its slowest.
fn own_and_calls(t: &Topology, s: ServiceId, call: impl Fn(usize) -> Hang) -> Hang {
    let svc = &t.services[s];
    let mut total = Hang::Within(svc.latency.p99);
    let mut group = Hang::Within(Duration::ZERO);
    for (i, c) in svc.calls.iter().enumerate() {
        let h = call(i);
        if c.parallel {
            group = group.max(h);
            if !svc.calls.get(i + 1).is_some_and(|c| c.parallel) {
                total = total.add(group);
                group = Hang::Within(Duration::ZERO);
            }
        } else {
            total = total.add(h);
        }
    }
    total
}

/// Per service: whether it or any service below it declares a latency, and
/// whether any of them leaves it at the 1 ms default — so messages say
/// which figures rest on declared latencies and which on the default.
pub(crate) fn latencies_below(t: &Topology, order: &[ServiceId]) -> (Vec<bool>, Vec<bool>) {
    let n = t.services.len();
    let (mut declared, mut defaulted) = (vec![false; n], vec![false; n]);
    for &s in order.iter().rev() {
        let own = t.services[s].latency.pos.is_some();
        let (mut d, mut u) = (own, !own);
        for c in &t.services[s].calls {
            d |= declared[c.to];
            u |= defaulted[c.to];
        }
        declared[s] = d;
        defaulted[s] = u;
    }
    (declared, defaulted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prediction::Analysis;

    fn analysis(text: &str) -> (Topology, Analysis) {
        let t = crate::topology::load_str(text, "t.yaml", "t", &Default::default()).unwrap();
        let a = Analysis::new(&t);
        (t, a)
    }

    fn ms(n: u64) -> Hang {
        Hang::Within(Duration::from_millis(n))
    }

    #[test]
    fn an_attempt_lasts_its_timeout_whatever_the_latency() {
        // Seed 002: db declares nothing; each of api's 3 attempts may last 2 s,
        // with 100 + 200 ms of waits between them.
        let (t, a) = analysis(
            "version: 1\nentry: frontend\nservices:\n  frontend: { calls: [ { to: api, timeout: 2s } ] }\n  api: { calls: [ { to: db, timeout: 2s, retry: { max_attempts: 3, backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full } } } ] }\n  db: {}\n",
        );
        let api = t.id_of("api").unwrap();
        assert_eq!(a.hang.layer[api][0][0], ms(6300));
        // api's own 1 ms (the default) on top.
        assert_eq!(a.hang.service[api], ms(6301));
        // frontend waits one 2 s attempt; the latency figure is 304 ms.
        assert_eq!(a.hang.layer[t.entry][0][0], ms(2000));
        assert_eq!(a.call_worst[t.entry][0], Duration::from_millis(304));
        assert_eq!(a.hang.entry, ms(2001));
    }

    #[test]
    fn a_call_without_a_timeout_is_unbounded_and_named() {
        let (t, a) = analysis(
            "version: 1\nentry: web\nservices:\n  web: { calls: [ { to: api, timeout: 1s }, { to: cache, parallel: true }, { to: log, parallel: true, timeout: 5ms } ] }\n  api: { calls: [ { to: db, via: [ { name: sdk, timeout: 100ms, retry: { max_attempts: 2 } } ] } ] }\n  cache: {}\n  log: {}\n  db: {}\n",
        );
        let (web, api) = (t.entry, t.id_of("api").unwrap());
        // A timeout in an inner layer bounds the call: 2 × 100 ms.
        assert_eq!(a.hang.service[api], ms(201));
        assert_eq!(
            a.hang.service[web],
            Hang::Unbounded {
                service: web,
                call: 1
            }
        );
        assert_eq!(a.hang.entry, a.hang.service[web]);
    }

    #[test]
    fn declared_and_defaulted_latencies_below_each_service() {
        let (t, _) = analysis(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b, timeout: 1s }, { to: c, timeout: 1s } ] }\n  b: { latency: 5ms }\n  c: {}\n",
        );
        let (declared, defaulted) = latencies_below(&t, &graph_order(&t));
        assert_eq!(declared, [true, true, false]);
        assert_eq!(defaulted, [true, false, true]);
    }

    fn graph_order(t: &Topology) -> Vec<ServiceId> {
        crate::topology::graph::topo_order(t)
    }
}
