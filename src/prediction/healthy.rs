//! `healthy`: attempts reaching each service per user request when nothing
//! fails. Retries then send nothing extra; hedging does: copy k of a hedged
//! call goes whenever none of the copies out has answered k × delay after
//! the first, so each hedged call multiplies by its expected copies,
//! `HedgingPolicy::expected_copies`, over the callee's healthy response time
//! (`ResponseTime`: its own log-normal work plus its calls' healthy median).
//! Without hedging the figure is the number of call paths from the entry.
//!
//! Both passes are DP over the call DAG: response times callees first,
//! attempts callers first. O(services + calls).

use std::time::Duration;

use crate::policy::{FOREVER, HedgingPolicy};
use crate::topology::{ServiceId, Topology};

use super::clamp;
use super::response_time::ResponseTime;

/// The healthy figures of a topology.
#[derive(Debug, Clone)]
pub(super) struct Healthy {
    /// Attempts reaching each service per user request when nothing fails.
    pub attempts: Vec<f64>,
    /// Expected copies each call sends per time its caller makes it: 1
    /// unless it hedges. `[service][call]`.
    pub copies: Vec<Vec<f64>>,
    /// Each service's healthy response time.
    pub response: Vec<ResponseTime>,
}

/// The healthy figures; `order` puts callers before callees.
pub(super) fn healthy(t: &Topology, order: &[ServiceId]) -> Healthy {
    let n = t.services.len();
    let mut response: Vec<ResponseTime> = t
        .services
        .iter()
        .map(|s| ResponseTime {
            own: s.latency,
            calls: Duration::ZERO,
        })
        .collect();
    for &s in order.iter().rev() {
        let svc = &t.services[s];
        let mut total = Duration::ZERO;
        let mut group = Duration::ZERO;
        for (i, call) in svc.calls.iter().enumerate() {
            let median = response[call.to].p50();
            if call.parallel {
                group = group.max(median);
                if !svc.calls.get(i + 1).is_some_and(|c| c.parallel) {
                    total = total.saturating_add(group).min(FOREVER);
                    group = Duration::ZERO;
                }
            } else {
                total = total.saturating_add(median).min(FOREVER);
            }
        }
        response[s].calls = total;
    }
    let copies: Vec<Vec<f64>> = t
        .services
        .iter()
        .map(|svc| {
            svc.calls
                .iter()
                .map(|call| {
                    call.layers
                        .iter()
                        .filter_map(|l| l.hedging.as_ref())
                        .map(|h| expected_copies(&h.value, &response[call.to]))
                        .product()
                })
                .collect()
        })
        .collect();
    let mut attempts = vec![0.0; n];
    attempts[t.entry] = 1.0;
    for &s in order {
        for (i, call) in t.services[s].calls.iter().enumerate() {
            attempts[call.to] = clamp(attempts[call.to] + attempts[s] * copies[s][i]);
        }
    }
    Healthy {
        attempts,
        copies,
        response,
    }
}

/// `policy.expected_copies` over `callee`'s tail. That product asks for the
/// tail at the k − 1 multiples of the delay over and over (k² times, up to
/// 10⁴ for 100 copies); each is computed once here.
fn expected_copies(policy: &HedgingPolicy, callee: &ResponseTime) -> f64 {
    let tail: Vec<(Duration, f64)> = (1..policy.max_attempts.max(1))
        .map(|m| {
            let x = policy.delay.saturating_mul(m);
            (x, callee.late(x))
        })
        .collect();
    policy.expected_copies(|x| match tail.binary_search_by_key(&x, |(at, _)| *at) {
        Ok(i) => tail[i].1,
        Err(_) => callee.late(x),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Condition, RetryOn};
    use crate::topology::Latency;

    #[test]
    fn the_cached_tail_gives_the_policys_own_figure() {
        let callee = ResponseTime {
            own: Latency {
                p50: Duration::from_millis(40),
                p99: Duration::from_millis(200),
                pos: None,
                exponential_mean: None,
            },
            calls: Duration::from_millis(3),
        };
        for (copies, delay_ms) in [(2, 50), (5, 20), (100, 1)] {
            let policy = HedgingPolicy {
                max_attempts: copies,
                delay: Duration::from_millis(delay_ms),
                non_fatal: RetryOn(vec![Condition::Status(503)]),
            };
            let direct = policy.expected_copies(|x| callee.late(x));
            assert_eq!(expected_copies(&policy, &callee), direct);
            assert!(direct > 1.0 && direct < f64::from(copies));
        }
    }
}
