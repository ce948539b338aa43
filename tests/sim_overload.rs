//! DESIGN's overload model in virtual time: six clients, one request each,
//! 100 ms of service time (fixed), capacity 4, a 2 s horizon.
//!
//! Derivation (exact in virtual time). All six arrive at t = 0; the fifth
//! arrival raises the count in flight to 5 > 4, so all five are marked, and
//! the sixth is marked on arrival (6 > 4). Every attempt fails as a timeout at
//! 100 ms, when all six leave together — before anything that starts at
//! 100 ms, since a request ending at t is no longer in flight for one starting
//! at t.
//! - Immediate retries (no backoff, 50 attempts allowed): every wave restarts
//!   together and is marked again. Waves start at 0, 100, …, 1900 ms; the
//!   retry after the wave ending at 2000 ms would start at 2000 ms, which is
//!   not before the horizon, so it does not start. 20 waves × 6 = 120
//!   attempts, nobody gets through, and every client stops at the horizon.
//! - Exponential backoff (base 100 ms, ×2, cap 2 s) without jitter, 5
//!   attempts: waits 100, 200, 400, 800 ms keep the waves together, at 0, 200,
//!   500, 1000 and 1900 ms. 30 attempts, all marked; nobody gets through and
//!   every client exhausts its attempts at 2000 ms.
//! - Full jitter, same schedule: the retries spread out and most clients get
//!   through; over 1,000 trials, far more than without jitter (none).

use std::time::Duration;

use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::{self, Topology};

fn topology(retry: &str, capacity: &str) -> Topology {
    let text = format!(
        "version: 1\nentry: api\nclient:\n  timeout: 1s\n  retry: {retry}\nservices:\n  api: {{ latency: 100ms{capacity} }}\n"
    );
    topology::load_str(&text, "t.yaml", "t", &Default::default()).expect("valid topology")
}

fn overload() -> Scenario {
    faults::load_str(
        "name: overload-4\ntarget: entry\nphases: [ { inject: { kind: overload, capacity: 4 } } ]\n",
        "overload-4.yaml",
    )
    .expect("valid fault")
}

fn load() -> LoadSettings {
    LoadSettings::new(
        None,
        Some(6),
        Some(6),
        Some(Duration::from_secs(2)),
        Some(7),
    )
    .expect("valid load")
}

fn simulate(t: &Topology, scenario: &Scenario, trials: u32) -> RunReport {
    sim::run(t, scenario, &load(), trials, None).expect("simulation runs")
}

const IMMEDIATE: &str = "{ max_attempts: 50 }";
const EXPONENTIAL: &str =
    "{ max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: none } }";
const FULL_JITTER: &str =
    "{ max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full } }";

fn client_attempts(r: &RunReport) -> u64 {
    r.end_to_end.client.as_ref().map_or(0, |c| c.attempts)
}

#[test]
fn immediate_retries_keep_everyone_out_in_20_waves() {
    let r = simulate(&topology(IMMEDIATE, ""), &overload(), 20);
    assert_eq!(r.end_to_end.requests, 6);
    assert_eq!(r.end_to_end.succeeded, 0);
    assert_eq!(r.end_to_end.all_succeeded_ratio, Some(0.0));
    assert_eq!(r.end_to_end.last_success_ms, None);
    let api = r.service("api").expect("api row");
    assert_eq!(api.received, 120);
    let q = api.received_quantiles.expect("spread over trials");
    assert_eq!((q.p10, q.p90, q.mean), (120.0, 120.0, 120.0), "every trial");
    assert_eq!(client_attempts(&r), 120);
    assert_eq!(api.statuses.get("504"), Some(&120));
    assert_eq!(r.timeline.attempts, vec![6; 20], "a wave of 6 every 100 ms");
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.stops.get("horizon"), Some(&6));
    assert_eq!(client.retries_by_reason.get("timeout"), Some(&114));
    assert_eq!(r.end_to_end.outcomes.get("timeout"), Some(&6));
}

#[test]
fn exponential_backoff_without_jitter_keeps_everyone_out() {
    let r = simulate(&topology(EXPONENTIAL, ""), &overload(), 20);
    assert_eq!(r.end_to_end.succeeded, 0);
    assert_eq!(client_attempts(&r), 30);
    assert_eq!(r.service("api").map(|s| s.received), Some(30));
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.stops.get("attempts_exhausted"), Some(&6));
    let mut waves = vec![0; 20];
    for ms in [0, 200, 500, 1000, 1900] {
        waves[ms / 100] = 6;
    }
    assert_eq!(r.timeline.attempts, waves);
}

#[test]
fn the_topology_capacity_applies_the_same_model_without_a_fault() {
    let r = simulate(&topology(IMMEDIATE, ", capacity: 4"), &Scenario::none(), 3);
    assert_eq!(r.service("api").map(|s| s.received), Some(120));
    assert_eq!(r.end_to_end.succeeded, 0);
    // Capacity 6 holds all six at once: everyone succeeds at the first attempt.
    let r = simulate(&topology(IMMEDIATE, ", capacity: 6"), &Scenario::none(), 3);
    assert_eq!(r.service("api").map(|s| s.received), Some(6));
    assert_eq!(r.end_to_end.succeeded, 6);
    assert_eq!(r.end_to_end.last_success_ms.map(|s| s.p50), Some(100.0));
}

#[test]
fn full_jitter_lets_more_clients_through_than_no_jitter() {
    const TRIALS: u32 = 1000;
    let none = sim::compare(
        &[&topology(EXPONENTIAL, ""), &topology(FULL_JITTER, "")],
        &overload(),
        &load(),
        TRIALS,
        None,
    )
    .expect("simulations run");
    let (no_jitter, full) = (&none[0], &none[1]);
    assert_eq!(no_jitter.succeeded.mean, 0.0);
    assert_eq!(no_jitter.attempts_total.p50, 30.0);
    assert!(
        full.succeeded.mean > 4.0,
        "full jitter lets most of the six through: {:?}",
        full.succeeded
    );
    assert!(full.success_ratio > no_jitter.success_ratio);
    assert!(full.attempts_total.mean < 30.0, "{:?}", full.attempts_total);
    assert!(full.all_succeeded_ratio > 0.0);
    assert!(full.last_success_ms.is_some());
}
