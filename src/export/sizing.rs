//! Resource requests for every exported process, from the topology's static
//! figures and the load the driver will send: a pod that is starved of CPU
//! during the storm measures its own throttling, not the retry policies.
//!
//! The rule, per `serve` process (one topology service):
//!
//! - **Peak request rate** `rate` = user requests per second × attempts
//!   reaching the service per user request. User requests per second: open
//!   loop `--rate R`; closed loop `--clients N` ÷ the healthy time of one
//!   user request (`prediction::baseline`), at most. Attempts per user request:
//!   while the scenario injects anything (or a service has `capacity:`, the
//!   overload model at all times), the storm's — `check`'s worst case within
//!   the run's horizon; with no fault, one per call path. A closed loop slows
//!   down as its requests do, so its storm rate is N × worst case ÷ the
//!   entry's worst response time, if that is above the healthy rate.
//! - **CPU request** = `rate` × HTTP exchanges per request × 100 µs, at
//!   least 50 m, rounded up to 10 m. Exchanges: the request it answers plus
//!   every attempt its own layers send (`via` sidecars run in the same
//!   process). 100 µs is about twice what the in-process tier costs on this
//!   project's bench machine (benches/RESULTS.md: 24–32 µs of wall time per request and
//!   tier at 32 clients on 2 cores). Capped at 4 cores, with a warning.
//! - **No CPU limit.** A CFS quota stalls the whole process for the rest of
//!   its 100 ms period once spent, which would show up as latency in every
//!   figure; and the tier's precise sleep spins through the last few
//!   milliseconds of each service time, spending quota on idle CPU.
//! - **Memory request** = 64 MiB + requests in flight × 64 KiB, rounded up to
//!   16 MiB; requests in flight = `rate` × the service's worst response time
//!   (Little's law; bounded by the horizon). **Limit** = 2 × the request: a
//!   storm arrives in waves, and an OOM kill mid-run would lose the counters.
//!
//! The driver (`retrylint drive`): the same rule with the user requests per
//! second, the `client:` layer's attempts per user request, a 100 m floor,
//! and in flight the clients (closed loop) or rate × the entry's worst
//! response time (open loop), plus 64 KiB per service for the histograms it
//! collects.

use std::time::Duration;

use crate::faults::Scenario;
use crate::prediction::{Analysis, baseline};
use crate::run::{Arrival, LoadSettings};
use crate::topology::Topology;

/// CPU time one HTTP exchange costs a process, with margin.
const CPU_PER_EXCHANGE: Duration = Duration::from_micros(100);
const SERVE_CPU_FLOOR_MILLIS: u64 = 50;
const DRIVE_CPU_FLOOR_MILLIS: u64 = 100;
const CPU_CAP_MILLIS: u64 = 4000;
const MEMORY_FLOOR_MIB: u64 = 64;
const BYTES_PER_IN_FLIGHT: f64 = 64.0 * 1024.0;
const BYTES_PER_COLLECTED_SERVICE: f64 = 64.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// What one process is given, and the figures it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resources {
    /// Requests (or, for the driver, user requests) per second at the peak.
    pub rate: f64,
    /// HTTP exchanges per request.
    pub(crate) exchanges: f64,
    pub in_flight: f64,
    pub(crate) cpu_millis: u64,
    pub(crate) memory_mib: u64,
    pub(crate) memory_limit_mib: u64,
    /// What the rule asked for, before the cap.
    pub(crate) cpu_wanted_millis: u64,
    /// The CPU the rule asked for was above the cap.
    pub(crate) cpu_capped: bool,
}

/// Resources for every service (indexed like `t.services`) and the driver.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sizing {
    pub services: Vec<Resources>,
    pub driver: Resources,
    /// Whether the figures are the storm's (a fault injects something).
    pub storm: bool,
}

/// Sizes every process of `t` for `load` under `scenario`.
pub(crate) fn size(t: &Topology, scenario: &Scenario, load: &LoadSettings) -> Sizing {
    let horizon = load.horizon();
    let analysis = Analysis::within_horizon(t, Some(horizon));
    let paths = baseline::paths(t);
    let healthy_time = baseline::healthy_time(t).max(Duration::from_micros(1));
    let storm_time = analysis
        .entry_worst
        .min(horizon)
        .max(Duration::from_micros(1));
    let storm = !scenario.phases.is_empty() || t.services.iter().any(|s| s.capacity.is_some());
    let per_user = |s: usize| {
        if storm {
            analysis.worst_case[s].value()
        } else {
            paths[s]
        }
    };
    let rate_at = |attempts: f64, healthy_attempts: f64| match load.arrival {
        Arrival::Rate(r) => r * attempts,
        Arrival::Clients(n) => {
            let n = f64::from(n);
            (n * healthy_attempts / healthy_time.as_secs_f64())
                .max(n * attempts / storm_time.as_secs_f64())
        }
    };
    let services = t
        .services
        .iter()
        .enumerate()
        .map(|(s, svc)| {
            let rate = rate_at(per_user(s), paths[s]);
            let sent: f64 = svc
                .calls
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    if !storm {
                        return call.layers.len().max(1) as f64;
                    }
                    let mut product = 1.0;
                    analysis.layer_attempts[s][i]
                        .iter()
                        .map(|a| {
                            product *= f64::from(a.count);
                            product
                        })
                        .sum::<f64>()
                        .max(1.0)
                })
                .sum();
            let stay = analysis.service_worst[s].min(horizon).as_secs_f64();
            let in_flight = rate * stay;
            resources(
                rate,
                1.0 + sent,
                in_flight,
                SERVE_CPU_FLOOR_MILLIS,
                in_flight * BYTES_PER_IN_FLIGHT,
            )
        })
        .collect();

    let client_attempts = match (&analysis.client_attempts, storm) {
        (Some(a), true) => f64::from(a.count),
        _ => 1.0,
    };
    let users = rate_at(1.0, 1.0);
    let in_flight = match load.arrival {
        Arrival::Clients(n) => f64::from(n),
        Arrival::Rate(r) => r * analysis.entry_worst.min(horizon).as_secs_f64(),
    };
    let driver = resources(
        users,
        client_attempts,
        in_flight,
        DRIVE_CPU_FLOOR_MILLIS,
        in_flight * BYTES_PER_IN_FLIGHT + t.services.len() as f64 * BYTES_PER_COLLECTED_SERVICE,
    );
    Sizing {
        services,
        driver,
        storm,
    }
}

fn resources(
    rate: f64,
    exchanges: f64,
    in_flight: f64,
    cpu_floor_millis: u64,
    memory_bytes: f64,
) -> Resources {
    let cpu = rate * exchanges * CPU_PER_EXCHANGE.as_secs_f64() * 1000.0;
    let cpu_millis = round_up(cpu, 10).max(cpu_floor_millis);
    let memory_mib = round_up(MEMORY_FLOOR_MIB as f64 + memory_bytes / MIB, 16);
    Resources {
        rate,
        exchanges,
        in_flight,
        cpu_millis: cpu_millis.min(CPU_CAP_MILLIS),
        memory_mib,
        memory_limit_mib: memory_mib.saturating_mul(2),
        cpu_wanted_millis: cpu_millis,
        cpu_capped: cpu_millis > CPU_CAP_MILLIS,
    }
}

/// `x` rounded up to a multiple of `step`, saturating.
fn round_up(x: f64, step: u64) -> u64 {
    if !x.is_finite() || x >= (u64::MAX / 2) as f64 {
        return u64::MAX / 2 / step * step;
    }
    let n = x.max(0.0).ceil() as u64;
    n.div_ceil(step) * step
}

impl Resources {
    /// Kubernetes quantities: (`250m`, `96Mi`, `192Mi`).
    pub(crate) fn kubernetes(&self) -> (String, String, String) {
        (
            format!("{}m", self.cpu_millis),
            format!("{}Mi", self.memory_mib),
            format!("{}Mi", self.memory_limit_mib),
        )
    }

    /// Compose quantities: (`0.25`, `96M`, `192M`).
    pub(crate) fn compose(&self) -> (String, String, String) {
        let cores = self.cpu_millis as f64 / 1000.0;
        (
            format!("{cores}"),
            format!("{}M", self.memory_mib),
            format!("{}M", self.memory_limit_mib),
        )
    }

    /// One line on where the figures came from, for a comment beside them.
    pub(crate) fn explain(&self, what: &str) -> String {
        format!(
            "{} {what}/s at the peak × {} HTTP exchanges each, {} in flight",
            figure(self.rate),
            figure(self.exchanges),
            figure(self.in_flight)
        )
    }
}

/// A figure for a comment: whole above 10, two significant digits below.
pub(crate) fn figure(x: f64) -> String {
    if !x.is_finite() {
        "unbounded".into()
    } else if x >= 10.0 || x == x.round() {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults;
    use crate::topology::{Presets, load_str};

    fn chain() -> Topology {
        // The SRE book's chain: 4 × 4 × 4 = 64 attempts at db.
        load_str(
            "version: 1\nentry: web\nservices:\n  web:\n    latency: 10ms\n    calls: [ { to: api, timeout: 2s, retry: { max_attempts: 4, backoff: { kind: none } } } ]\n  api:\n    latency: 10ms\n    calls: [ { to: db, timeout: 1s, retry: { max_attempts: 4, backoff: { kind: none } } } ]\n  db: { latency: 10ms }\nclient: { timeout: 5s, retry: { max_attempts: 4, backoff: { kind: none } } }\n",
            "t.yaml",
            "t",
            &Presets::embedded(),
        )
        .unwrap()
    }

    fn load(rate: Option<f64>, clients: Option<u32>) -> LoadSettings {
        LoadSettings::new(rate, clients, None, None, None).unwrap()
    }

    #[test]
    fn the_storm_multiplies_the_rate_by_the_worst_case() {
        let t = chain();
        let s = size(
            &t,
            &faults::load("total-outage").unwrap(),
            &load(Some(20.0), None),
        );
        assert!(s.storm);
        let db = &s.services[2];
        // 20 user requests/s × 64 attempts; db sends nothing.
        assert_eq!((db.rate, db.exchanges), (1280.0, 1.0));
        // 1280 × 100 µs = 128 m → 130 m.
        assert_eq!(db.cpu_millis, 130);
        // In flight: 1280/s × 10 ms = 12.8 → 64 MiB + 0.8 MiB → 80 MiB.
        assert_eq!((db.memory_mib, db.memory_limit_mib), (80, 160));
        let api = &s.services[1];
        // 320/s, each answering once and sending 4 attempts: 5 × 320 × 100 µs.
        assert_eq!((api.rate, api.exchanges, api.cpu_millis), (320.0, 5.0, 160));
        assert_eq!((s.driver.rate, s.driver.exchanges), (20.0, 4.0));
        assert_eq!(s.driver.cpu_millis, DRIVE_CPU_FLOOR_MILLIS);
        assert_eq!(
            api.kubernetes(),
            ("160m".into(), "80Mi".into(), "160Mi".into())
        );
        assert_eq!(api.compose(), ("0.16".into(), "80M".into(), "160M".into()));
    }

    #[test]
    fn a_baseline_sizes_for_one_attempt_per_path() {
        let t = chain();
        let s = size(&t, &faults::load("none").unwrap(), &load(Some(20.0), None));
        assert!(!s.storm);
        assert_eq!(s.services[2].rate, 20.0);
        assert_eq!(s.services[1].exchanges, 2.0);
        assert_eq!(s.services[2].cpu_millis, SERVE_CPU_FLOOR_MILLIS);
        assert_eq!(s.services[2].memory_mib, 80);
    }

    #[test]
    fn a_closed_loop_runs_at_most_as_fast_as_a_healthy_request() {
        let t = chain();
        let s = size(&t, &faults::load("none").unwrap(), &load(None, Some(3)));
        // Healthy time 30 ms: 3 clients send 100 user requests/s.
        assert!((s.driver.rate - 100.0).abs() < 1e-9, "{}", s.driver.rate);
        assert_eq!(s.driver.in_flight, 3.0);
    }

    #[test]
    fn past_the_cap_the_cpu_is_capped_and_says_so() {
        let t = chain();
        let s = size(
            &t,
            &faults::load("total-outage").unwrap(),
            &load(Some(1000.0), None),
        );
        let db = &s.services[2];
        assert_eq!(db.rate, 64_000.0);
        assert!(db.cpu_capped);
        assert_eq!(db.cpu_millis, CPU_CAP_MILLIS);
    }
}
