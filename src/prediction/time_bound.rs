//! Attempts bounded by time: a layer may allow 2^31 − 1 attempts or be
//! `unlimited` (Kafka's producer, Temporal's activities) and still make few,
//! because something stops it starting more. The analysis counts what the
//! engines enforce, no more (the semantics are `crate::sim`'s module docs,
//! shared with `crate::chaos`): a layer's session is given a deadline — the
//! topology's `deadline` for the client layer, an incoming deadline where
//! services propagate one — and a `via` layer is cancelled when the attempt of
//! an outer layer of the same call times out. A caller's timeout alone stops
//! nothing below it (the callee goes on with work nobody waits for), so it is
//! no bound here. See [`time_bounds`] and [`LayerAttempts`].

use std::time::Duration;

use crate::policy::RetryPolicy;
use crate::topology::{ServiceId, Topology};

/// Counts up to this are taken as written, so every figure of a topology that
/// was valid when counts stopped at 100 stays what it was (RL008 reports the
/// attempts of such a count that cannot start). Above it a count is not a plan
/// but "until time runs out", and the attempts that can start before the
/// layer's time bound replace it when fewer.
pub(crate) const TIME_BOUNDED_ABOVE: u32 = 100;

/// One value per call layer: `[service][call][layer]`, like `Topology`.
pub(crate) type PerLayer<T> = Vec<Vec<Vec<T>>>;

/// What stops a layer starting attempts after a while, as the engines enforce it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBound {
    /// The longest an invocation of the layer can go on starting attempts,
    /// counted from its start.
    pub within: Duration,
    pub by: BoundBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundBy {
    /// The topology's `deadline`: the client layer's session ends with it.
    Deadline,
    /// A deadline the caller sends (`deadline_propagation`), at most `within`.
    PropagatedDeadline,
    /// The per-attempt timeout of the outer layer of the same call with this
    /// index: when that attempt times out, this layer is cancelled.
    OuterTimeout(usize),
    /// The run's horizon.
    Horizon,
}

/// How a layer's count of attempts per invocation was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// `max_attempts` as written.
    Written,
    /// Every attempt that can start within the time bound, each wait its
    /// shortest draw: a sure bound.
    Time,
    /// The attempts that fit within the time bound at the mean waits: the
    /// shortest draw is zero (full jitter), so no count is sure. An estimate.
    TimeTypical,
    /// `unlimited` and nothing bounds it: the engine's ceiling of u32::MAX.
    Unbounded,
}

/// Attempts one layer sends per invocation at worst, and why that many.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerAttempts {
    pub count: u32,
    pub basis: Basis,
    /// The layer's time bound, whether or not it lowered the count.
    pub time: Option<TimeBound>,
}

/// The attempts the layers of `call` that `which` picks allow together,
/// as written (hedged copies, else the policy's attempts): what observed
/// figures are held to. `None` when one of them retries without limit.
pub(crate) fn attempts_allowed(
    call: &crate::topology::Call,
    which: impl Fn(&crate::topology::Layer) -> bool,
) -> Option<u64> {
    let mut n: u64 = 1;
    for l in call.layers.iter().filter(|l| which(l)) {
        if l.hedging.is_none() && l.policy.is_unlimited() {
            return None;
        }
        n = n.saturating_mul(u64::from(LayerAttempts::of_layer(l, None).count.max(1)));
    }
    Some(n)
}

impl LayerAttempts {
    /// The count the figures use for `layer` under `time`: its hedged
    /// copies (all of them go when every copy fails or is late), else its
    /// retry policy's.
    pub(crate) fn of_layer(
        layer: &crate::topology::Layer,
        time: Option<TimeBound>,
    ) -> LayerAttempts {
        match &layer.hedging {
            Some(h) => LayerAttempts {
                count: h.value.max_attempts.max(1),
                basis: Basis::Written,
                time,
            },
            None => LayerAttempts::of(&layer.policy, time),
        }
    }

    /// The count the figures use for `policy` under `time`.
    pub fn of(policy: &RetryPolicy, time: Option<TimeBound>) -> LayerAttempts {
        let written = policy.max_attempts.max(1);
        let untouched = LayerAttempts {
            count: written,
            basis: if policy.is_unlimited() {
                Basis::Unbounded
            } else {
                Basis::Written
            },
            time,
        };
        let Some(tb) = time else {
            return untouched;
        };
        if written <= TIME_BOUNDED_ABOVE || policy.backoff.never_waits() {
            return untouched;
        }
        let (count, basis) = if policy.waits_can_all_be_zero() {
            (
                policy.attempts_typically_within(tb.within),
                Basis::TimeTypical,
            )
        } else {
            (policy.attempts_startable_within(tb.within), Basis::Time)
        };
        if count < written {
            LayerAttempts { count, basis, time }
        } else {
            untouched
        }
    }

    /// Whether time lowered the written count.
    pub fn time_bounded(&self) -> bool {
        matches!(self.basis, Basis::Time | Basis::TimeTypical)
    }
}

/// The time bound of every layer, as the engines enforce it: the client
/// layer's, then `[service][call][layer]`. `horizon` bounds every layer when
/// given. One pass in topological order: a service's incoming deadline is
/// final once its callers are done.
pub(crate) fn time_bounds(
    t: &Topology,
    order: &[ServiceId],
    horizon: Option<Duration>,
) -> (Option<TimeBound>, PerLayer<Option<TimeBound>>) {
    let tighter = |a: Option<TimeBound>, b: Option<TimeBound>| match (a, b) {
        (Some(x), Some(y)) => Some(if y.within < x.within { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    };
    let with_horizon = |b: Option<TimeBound>| {
        tighter(
            b,
            horizon.map(|within| TimeBound {
                within,
                by: BoundBy::Horizon,
            }),
        )
    };
    let min_opt = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    };
    // The longest deadline any attempt arriving at a service carries; `None`
    // once one arrives without a deadline (or none arrives at all).
    #[derive(Clone, Copy)]
    enum Incoming {
        Nothing,
        AtMost(Duration),
        Unbounded,
    }
    let n = t.services.len();
    let mut incoming = vec![Incoming::Nothing; n];
    let deadline = t.deadline.map(|d| d.value);
    let client_bound = deadline.map(|within| TimeBound {
        within,
        by: BoundBy::Deadline,
    });
    // The client layer propagates whenever there is a deadline, sending what
    // is left of it, capped by its own per-attempt timeout.
    let client_timeout = t.client.as_ref().and_then(|c| c.timeout).map(|x| x.value);
    incoming[t.entry] = match deadline {
        Some(d) => Incoming::AtMost(min_opt(Some(d), client_timeout).unwrap_or(d)),
        None => Incoming::Unbounded,
    };
    let mut bounds: PerLayer<Option<TimeBound>> = t
        .services
        .iter()
        .map(|s| s.calls.iter().map(|c| vec![None; c.layers.len()]).collect())
        .collect();
    for &s in order {
        let svc = &t.services[s];
        let propagates = svc.deadline_propagation;
        let visit_deadline = match (propagates, incoming[s]) {
            (true, Incoming::AtMost(d)) => Some(d),
            _ => None,
        };
        for (i, call) in svc.calls.iter().enumerate() {
            let mut session = visit_deadline;
            let mut outer_timeout: Option<(Duration, usize)> = None;
            let mut sent = None;
            for (li, layer) in call.layers.iter().enumerate() {
                if li > 0 {
                    // A `via` layer honours what the layer above sends it.
                    session = sent;
                }
                let from_session = session.map(|within| TimeBound {
                    within,
                    by: BoundBy::PropagatedDeadline,
                });
                let from_outer = outer_timeout.map(|(within, j)| TimeBound {
                    within,
                    by: BoundBy::OuterTimeout(j),
                });
                bounds[s][i][li] = with_horizon(tighter(from_session, from_outer));
                let own = layer.timeout.map(|x| x.value);
                sent = if propagates {
                    min_opt(own, session)
                } else {
                    None
                };
                if let Some(tmo) = own
                    && outer_timeout.is_none_or(|(o, _)| tmo < o)
                {
                    outer_timeout = Some((tmo, li));
                }
            }
            let to = &mut incoming[call.to];
            *to = match (*to, sent) {
                (Incoming::Unbounded, _) | (_, None) => Incoming::Unbounded,
                (Incoming::Nothing, Some(d)) => Incoming::AtMost(d),
                (Incoming::AtMost(x), Some(d)) => Incoming::AtMost(x.max(d)),
            };
        }
    }
    (with_horizon(client_bound), bounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::graph;

    fn bounds(text: &str) -> (Option<TimeBound>, PerLayer<Option<TimeBound>>) {
        let t = crate::topology::load_str(text, "t.yaml", "t", &Default::default()).unwrap();
        time_bounds(&t, &graph::topo_order(&t), None)
    }

    fn within(b: Option<TimeBound>) -> Option<(u64, BoundBy)> {
        b.map(|b| (b.within.as_millis() as u64, b.by))
    }

    #[test]
    fn the_tighter_of_a_propagated_deadline_and_an_outer_timeout_applies() {
        let (client, b) = bounds(
            "version: 1\nentry: web\ndeadline: 5s\nservices:\n  web:\n    deadline_propagation: true\n    calls:\n      - to: kafka\n        timeout: 120s\n        via: [ { name: producer, timeout: 30s, retry: { max_attempts: unlimited } } ]\n  kafka: {}\n",
        );
        assert_eq!(within(client), Some((5000, BoundBy::Deadline)));
        // The app layer honours web's 5 s; the producer is sent min(120 s, 5 s).
        assert_eq!(
            within(b[0][0][0]),
            Some((5000, BoundBy::PropagatedDeadline))
        );
        assert_eq!(
            within(b[0][0][1]),
            Some((5000, BoundBy::PropagatedDeadline))
        );
    }

    #[test]
    fn a_service_waits_as_long_as_its_most_patient_caller_sends() {
        let text = |b: &str| {
            format!(
                "version: 1\nentry: e\ndeadline: 10s\nservices:\n  e: {{ deadline_propagation: true, calls: [ {{ to: a, timeout: 1s }}, {{ to: b }} ] }}\n  a: {{ deadline_propagation: true, calls: [ {{ to: s, timeout: 2s }} ] }}\n  b: {{ deadline_propagation: {b}, calls: [ {{ to: s, timeout: 3s }} ] }}\n  s: {{ deadline_propagation: true, calls: [ {{ to: leaf }} ] }}\n  leaf: {{}}\n"
            )
        };
        // a is sent 1 s and sends min(2 s, 1 s); b is sent 10 s and sends 3 s.
        let (_, b) = bounds(&text("true"));
        assert_eq!(
            within(b[3][0][0]),
            Some((3000, BoundBy::PropagatedDeadline))
        );
        // A caller that sends nothing leaves s unbounded.
        let (_, b) = bounds(&text("false"));
        assert_eq!(within(b[3][0][0]), None);
    }

    #[test]
    fn outer_timeouts_cancel_inner_layers_without_propagation() {
        let (client, b) = bounds(
            "version: 1\nservices:\n  a:\n    calls:\n      - to: b\n        timeout: 9s\n        via: [ { name: sdk, timeout: 5s }, { name: mesh, timeout: 1s } ]\n  b: {}\n",
        );
        assert_eq!(client, None);
        assert_eq!(
            b[0][0][0], None,
            "the app layer's own timeout is per attempt"
        );
        assert_eq!(within(b[0][0][1]), Some((9000, BoundBy::OuterTimeout(0))));
        assert_eq!(within(b[0][0][2]), Some((5000, BoundBy::OuterTimeout(1))));
    }
}
