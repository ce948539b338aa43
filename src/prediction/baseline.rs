//! The baseline: what one user request costs when nothing fails and
//! nothing hedges — one attempt per call path at each service, and the time
//! it takes with every service at its median latency. The storm's figures
//! are [`super::Analysis`]'s; these are the baseline beside them (used to
//! size a simulation's work and an export's resources).

use std::time::Duration;

use crate::policy::FOREVER;
use crate::topology::{Topology, graph};

/// Attempts reaching each service (indexed like `t.services`) per user
/// request when nothing fails: one per call path from the entry.
pub fn paths(t: &Topology) -> Vec<f64> {
    let mut reach = vec![0.0f64; t.services.len()];
    reach[t.entry] = 1.0;
    for s in graph::topo_order(t) {
        let here = reach[s];
        if here == 0.0 {
            continue;
        }
        for c in &t.services[s].calls {
            reach[c.to] = (reach[c.to] + here).min(f64::MAX);
        }
    }
    reach
}

/// How long a user request takes when nothing fails: each service's p50
/// work, then its calls in order, a run of consecutive parallel calls as
/// long as its slowest.
pub(crate) fn healthy_time(t: &Topology) -> Duration {
    let order = graph::topo_order(t);
    let mut time = vec![Duration::ZERO; t.services.len()];
    for &s in order.iter().rev() {
        let svc = &t.services[s];
        let mut total = svc.latency.p50;
        let mut group = Duration::ZERO;
        for (i, call) in svc.calls.iter().enumerate() {
            group = group.max(time[call.to]);
            let group_goes_on =
                call.parallel && svc.calls.get(i + 1).is_some_and(|next| next.parallel);
            if !group_goes_on {
                total = total.saturating_add(group).min(FOREVER);
                group = Duration::ZERO;
            }
        }
        time[s] = total;
    }
    time[t.entry]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Presets, load_str};

    fn topology(yaml: &str) -> Topology {
        load_str(yaml, "t.yaml", "t", &Presets::embedded()).unwrap()
    }

    #[test]
    fn a_diamond_counts_both_paths_and_waits_for_the_slower_branch() {
        let t = topology(
            "version: 1\nentry: web\nservices:\n  web:\n    latency: 10ms\n    calls:\n      - { to: a, parallel: true }\n      - { to: b, parallel: true }\n      - { to: db }\n  a: { latency: 5ms, calls: [ { to: db } ] }\n  b: { latency: 7ms, calls: [ { to: db } ] }\n  db: { latency: 2ms }\n",
        );
        let at = |n: &str| paths(&t)[t.id_of(n).unwrap()];
        assert_eq!(
            (at("web"), at("a"), at("b"), at("db")),
            (1.0, 1.0, 1.0, 3.0)
        );
        // web 10 + max(a 5 + db 2, b 7 + db 2) + db 2 = 21 ms.
        assert_eq!(healthy_time(&t), Duration::from_millis(21));
    }

    #[test]
    fn sequential_calls_add_up() {
        let t = topology(
            "version: 1\nservices:\n  web: { latency: { p50: 10ms, p99: 90ms }, calls: [ { to: a }, { to: a } ] }\n  a: { latency: 3ms }\n",
        );
        assert_eq!(healthy_time(&t), Duration::from_millis(16));
        assert_eq!(paths(&t), [1.0, 2.0]);
    }
}
