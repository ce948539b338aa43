//! Before a simulation runs, what it will cost: the attempts it needs and
//! the memory its live state may take, from the static analysis's figures
//! and the load. A run past its budget is refused up front with the
//! estimate and the flags that would make it fit, instead of running for
//! hours or taking the machine's memory; the engine also holds every run to
//! its budget while it runs, in case the estimate was low.
//!
//! The estimate, per trial:
//! - user requests: open loop `rate × horizon` (or `--requests`), closed loop
//!   `clients × horizon ÷ t_healthy`, with `t_healthy` the time a user
//!   request takes when nothing fails (own p50 latencies along the calls,
//!   parallel groups by their slowest), capped by `--requests`;
//! - attempts per user request: while a fault is in force (the share `f` of
//!   the horizon its phases cover; always, when a service has `capacity:`),
//!   the worst case of `check` bounded by the horizon (every call failing and
//!   retried to its limit), else one attempt per call path;
//!   `f × worst + (1 − f) × healthy`, summed over services;
//! - live state: the requests in flight at once (closed loop: the clients;
//!   open loop: the rate times the worst response time, bounded by the
//!   horizon) times the depth of the call graph, plus the per-trial figures
//!   kept for quantiles (trials × services).

use std::fmt;

use super::model::Model;
use crate::policy::FOREVER;
use crate::run::{Arrival, LoadSettings};
use crate::topology::Topology;

/// How much work a simulation may do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkBudget {
    /// Attempts over all trials (about 3 million a second on 2 cores here).
    pub attempts: u64,
    /// Bytes of live state and per-trial figures.
    pub memory: u64,
}

impl WorkBudget {
    /// About half a minute of simulation here, in 2 GiB.
    pub const DEFAULT: WorkBudget = WorkBudget {
        attempts: 100_000_000,
        memory: 2 << 30,
    };
}

impl Default for WorkBudget {
    fn default() -> Self {
        WorkBudget::DEFAULT
    }
}

/// What a simulation is expected to cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub trials: u64,
    /// User requests per trial; infinite when nothing bounds them.
    pub users: f64,
    /// Attempts reaching services per user request.
    pub attempts_per_user: f64,
    /// Over all trials (and runs).
    pub attempts: f64,
    /// Runs of the scenario: 2 when a run without the breakers is needed to
    /// say what they saved.
    pub runs: u32,
    /// Requests in flight at once, at worst.
    pub in_flight: f64,
    pub memory: f64,
}

/// Bytes of live state per request in flight and per hop of its path: a
/// visit, an invocation with its retry session, an attempt and their queue
/// entries (measured from the engine's types, rounded up).
const BYTES_PER_HOP: f64 = 512.0;
/// Bytes per trial and service of the figures kept for quantiles.
const BYTES_PER_TRIAL_SERVICE: f64 = 8.0;
/// Bytes per service of its latency histograms, per thread.
const BYTES_PER_SERVICE: f64 = 16_384.0;

/// The estimate for `trials` trials of `m` (compiled from `t`) under `load`
/// (already in virtual time) on `threads` threads.
pub(crate) fn estimate(
    t: &Topology,
    m: &Model,
    load: &LoadSettings,
    trials: u32,
    threads: usize,
) -> Estimate {
    let horizon = load.horizon();
    let bounded = horizon < FOREVER;
    let analysis = crate::prediction::Analysis::within_horizon(t, bounded.then_some(horizon));
    let healthy_time = crate::prediction::baseline::healthy_time(t);
    let users = match load.arrival {
        Arrival::Rate(_) => {
            let by_time = match crate::run::arrivals::Schedule::new(load, &m.plan, 0) {
                Ok(Some(s)) if bounded => s.expected_count() as f64,
                _ => f64::INFINITY,
            };
            load.requests.map_or(by_time, |q| by_time.min(q as f64))
        }
        Arrival::Clients(n) => {
            let by_time = if !bounded || healthy_time.is_zero() {
                f64::INFINITY
            } else {
                let (h, each) = (horizon.as_nanos(), healthy_time.as_nanos());
                f64::from(n) * h.div_ceil(each) as f64
            };
            load.requests.map_or(by_time, |q| by_time.min(q as f64))
        }
    };
    let worst: f64 = analysis.worst_case.iter().map(|c| c.value()).sum();
    let healthy: f64 = crate::prediction::baseline::paths(t).iter().sum();
    let overloadable = t.services.iter().any(|s| s.capacity.is_some());
    let struck = if overloadable {
        1.0
    } else if bounded {
        m.plan.active_time(horizon).as_secs_f64() / horizon.as_secs_f64()
    } else if m.plan.targets.iter().any(|&x| x) && !m.plan.phases.is_empty() {
        1.0
    } else {
        0.0
    };
    let attempts_per_user = struck * worst + (1.0 - struck) * healthy;
    let k = f64::from(trials);
    let in_flight = match load.arrival {
        Arrival::Clients(n) => f64::from(n),
        Arrival::Rate(r) => {
            // The busiest rate: the load's, or a surge's.
            let r = m.plan.surges().iter().map(|s| s.2).fold(r, f64::max);
            let worst_time = analysis.entry_worst.min(horizon);
            (r * worst_time.as_secs_f64()).ceil().max(1.0).min(users)
        }
    };
    let depth = depth(t) as f64;
    let services = t.services.len() as f64;
    let memory = in_flight * depth * BYTES_PER_HOP * threads as f64
        + k * services * BYTES_PER_TRIAL_SERVICE
        + services * BYTES_PER_SERVICE * threads as f64;
    Estimate {
        trials: u64::from(trials),
        users,
        attempts_per_user,
        attempts: k * users * attempts_per_user,
        runs: 1,
        in_flight,
        memory,
    }
}

/// The most hops (retry layers passed through, services reached) on one
/// path from the entry: how much live state one user request holds at once.
fn depth(t: &Topology) -> usize {
    let order = crate::topology::graph::topo_order(t);
    let mut below = vec![1usize; t.services.len()];
    for &s in order.iter().rev() {
        let svc = &t.services[s];
        let mut most = 0usize;
        for g in crate::run::calls::groups(svc.calls.len(), |i| svc.calls[i].parallel) {
            let group: usize = g
                .map(|i| {
                    let c = &svc.calls[i];
                    c.layers.len().max(1) + below[c.to]
                })
                .fold(0, usize::saturating_add);
            most = most.max(group);
        }
        below[s] = 1 + most;
    }
    below[t.entry].saturating_add(1)
}

/// A run that does not fit its budget, with what would make it fit.
#[derive(Debug, Clone, PartialEq)]
pub struct OverBudget {
    pub(crate) estimate: Estimate,
    pub budget: WorkBudget,
}

impl OverBudget {
    /// Flags that would bring the run within its budget.
    fn fixes(&self) -> Vec<String> {
        let e = &self.estimate;
        let b = &self.budget;
        let mut fixes = Vec::new();
        let per_trial = e.users * e.attempts_per_user * f64::from(e.runs);
        if e.attempts > b.attempts as f64 && per_trial.is_finite() {
            let fitting = (b.attempts as f64 / per_trial).floor();
            if fitting >= 1.0 && (fitting as u64) < e.trials {
                fixes.push(format!("--trials {}", fitting as u64));
            }
            let users = (b.attempts as f64
                / (e.trials as f64 * e.attempts_per_user * f64::from(e.runs)))
            .floor();
            if users >= 1.0 && users < e.users {
                fixes.push(format!("--requests {}", users as u64));
            }
            // Raising the budget is a fix only while the run stays short.
            if e.attempts <= 3e9 && e.memory <= b.memory as f64 {
                fixes.push(format!(
                    "--budget {} (about {:.0} s here)",
                    e.attempts.ceil() as u64,
                    e.attempts / 3e6
                ));
            }
        }
        if !e.users.is_finite() {
            fixes.push("--requests N (nothing else bounds the user requests)".into());
        }
        if e.memory > b.memory as f64 {
            fixes.push("fewer --clients, a lower --rate, or fewer --trials".into());
        }
        fixes
    }
}

fn figure(x: f64) -> String {
    if !x.is_finite() {
        "unbounded".into()
    } else if x < 1e6 {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.2e}")
    }
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.estimate;
        let b = &self.budget;
        if e.attempts > b.attempts as f64 || !e.attempts.is_finite() {
            let runs = if e.runs > 1 {
                format!(" × {} runs (with and without the breakers)", e.runs)
            } else {
                String::new()
            };
            write!(
                f,
                "this simulation needs about {} attempts ({} per user request × {} user requests × {} trials{runs}), over the budget of {} (--budget)",
                figure(e.attempts),
                figure(e.attempts_per_user),
                figure(e.users),
                e.trials,
                b.attempts
            )?;
        } else {
            write!(
                f,
                "this simulation needs about {} MiB of memory ({} requests in flight at once, {} trials), over the budget of {} MiB",
                figure(e.memory / 1048576.0),
                figure(e.in_flight),
                e.trials,
                b.memory >> 20
            )?;
        }
        let fixes = self.fixes();
        if fixes.is_empty() {
            write!(
                f,
                "; no flag makes it fit: under this scenario one user request alone makes {} attempts (its call paths times their retries; `retrylint check` shows where they multiply) — change the retry policy or the topology",
                figure(e.attempts_per_user)
            )
        } else {
            write!(f, "; to make it fit: {}", fixes.join(", or "))
        }
    }
}

impl std::error::Error for OverBudget {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Scenario;
    use std::time::Duration;

    fn estimate_of(text: &str, fault: &str, load: LoadSettings, trials: u32) -> Estimate {
        let t = crate::topology::load_str(text, "t.yaml", "t", &Default::default()).unwrap();
        let s = crate::faults::load(fault).unwrap();
        let load = load.in_virtual_time();
        let m = Model::new(&t, &s, &load).unwrap();
        estimate(&t, &m, &load, trials, 1)
    }

    #[test]
    fn a_total_outage_costs_the_worst_case_and_a_baseline_one_per_path() {
        let text = "version: 1\nentry: a\nservices:\n  a: { latency: 10ms, calls: [ { to: b, retry: { max_attempts: 3 } } ] }\n  b: { latency: 10ms }\n";
        let load =
            LoadSettings::new(Some(10.0), None, None, Some(Duration::from_secs(2)), None).unwrap();
        let e = estimate_of(text, "total-outage", load.clone(), 4);
        // 20 user requests × (1 at a + 3 at b) × 4 trials.
        assert_eq!(
            (e.users, e.attempts_per_user, e.attempts),
            (20.0, 4.0, 320.0)
        );
        let e = estimate_of(text, "none", load, 4);
        assert_eq!((e.attempts_per_user, e.attempts), (2.0, 160.0));
        let _ = Scenario::none();
    }

    #[test]
    fn closed_loop_users_follow_the_healthy_request_time() {
        let text = "version: 1\nentry: a\nservices:\n  a: { latency: 10ms, calls: [ { to: b, parallel: true }, { to: c, parallel: true } ] }\n  b: { latency: 40ms }\n  c: { latency: 15ms }\n";
        let load =
            LoadSettings::new(None, Some(3), None, Some(Duration::from_secs(1)), None).unwrap();
        let e = estimate_of(text, "none", load, 1);
        // 10 + max(40, 15) = 50 ms a request: 20 each for 3 clients.
        assert_eq!(e.users, 60.0);
        assert_eq!(e.in_flight, 3.0);
    }
}
