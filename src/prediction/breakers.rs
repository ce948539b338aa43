//! `with_breakers`: attempts reaching each service per user request under a
//! sustained total outage once every circuit breaker is open, half-open
//! probes counted (docs/check.md, "How the numbers are computed"). A breaker changes no single request's worst case; it changes
//! how much of a sustained stream gets through, so the figure needs a rate:
//! [`REFERENCE_RATE`] user requests per second into the entry.
//!
//! Under a total outage every breaker opens (any failure rate is reached),
//! then goes half-open every `open_for` (its jitter averages out), lets
//! `half_open_calls` probes through, sees them fail and opens again: it
//! admits `half_open_calls / open_for` calls per second. Seeing `c` calls
//! per second it admits the share `min(1, probes per second / c)`:
//!
//! - `position: outside` is asked once per invocation of its layer, and an
//!   admitted call runs the whole retry loop: the layer sends its steady
//!   state (as `with_budgets`) × the share.
//! - `position: inside` is asked before every attempt, so `c` counts the
//!   attempts the loop makes, and each is admitted separately.
//!
//! `c` is the reference rate × the invocations of the layer per user request
//! from this same DP (the caller's figure, times the attempts of the layers
//! outside it on the call): one breaker per caller, as the engines keep it.
//! Layers without a breaker send what they send in `with_budgets`, so with
//! no breaker anywhere the two figures are equal.

use crate::policy::BreakerSpec;
use crate::topology::{Layer, ServiceId, Topology};

use super::{LayerAttempts, PerLayer, clamp};

/// User requests per second into the entry that `with_breakers` assumes:
/// the default rate of a run (`run::LoadSettings::DEFAULT_RATE`), so the
/// static figure and a default `simulate`/`chaos` run describe the same load.
pub const REFERENCE_RATE: f64 = 20.0;

/// Calls per second an open breaker lets through under a total outage:
/// its probes, once every `open_for`.
pub(crate) fn probes_per_second(b: &BreakerSpec) -> f64 {
    let open = b.open_for.as_secs_f64();
    if open > 0.0 {
        f64::from(b.half_open_calls.max(1)) / open
    } else {
        f64::INFINITY
    }
}

/// The share of `calls_per_second` an open breaker admits.
pub(crate) fn admitted_share(b: &BreakerSpec, calls_per_second: f64) -> f64 {
    let probes = probes_per_second(b);
    if calls_per_second <= probes {
        1.0
    } else {
        probes / calls_per_second
    }
}

/// Attempts `layer` sends per invocation under a sustained total outage
/// with its breaker open, when it is invoked `invocations` times per user
/// request and its retry loop sends `steady` attempts (budgets in their
/// steady state).
pub(crate) fn layer_factor(layer: &Layer, steady: f64, invocations: f64) -> f64 {
    let Some(b) = &layer.breaker else {
        return steady;
    };
    let asks = if b.value.inside() { steady } else { 1.0 };
    let calls_per_second = clamp(REFERENCE_RATE * invocations * asks);
    steady * admitted_share(&b.value, calls_per_second)
}

/// The `with_breakers` figure of every service (indexed like `t.services`);
/// `order` puts callers before callees.
pub(super) fn with_breakers(
    t: &Topology,
    order: &[ServiceId],
    client: Option<&LayerAttempts>,
    layers: &PerLayer<LayerAttempts>,
) -> Vec<f64> {
    let mut figure = vec![0.0; t.services.len()];
    figure[t.entry] = match (&t.client, client) {
        (Some(l), Some(a)) => layer_factor(l, l.policy.steady_state_of(a.count), 1.0),
        _ => 1.0,
    };
    for &s in order {
        for (i, call) in t.services[s].calls.iter().enumerate() {
            // Invocations per user request of each layer in turn: the caller's
            // figure for the outermost, the attempts of the one outside it
            // for every inner one.
            let mut invocations = figure[s];
            for (l, a) in call.layers.iter().zip(&layers[s][i]) {
                let steady = l.policy.steady_state_of(a.count);
                invocations = clamp(invocations * layer_factor(l, steady, invocations));
            }
            figure[call.to] = clamp(figure[call.to] + invocations);
        }
    }
    figure
}
