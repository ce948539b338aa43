//! The simulator and the chaos harness agree on the same scenario: one
//! topology, one fault, one load, run once in virtual time and once as real
//! servers on loopback.
//!
//! Tolerances: deterministic scenarios (total failure, the overload model
//! without jitter) agree exactly — every count follows from DESIGN's
//! semantics. A random one (a 20 % brownout rolled per request) agrees within
//! 10 % on the attempts at the target: the two draw from different random
//! streams, and one real run of 300 user requests has a standard deviation of
//! about 3 % around the simulated mean.

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::{self, Topology};

fn topo(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &topology::Presets::embedded()).expect("valid topology")
}

fn both(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
) -> (RunReport, RunReport) {
    let simulated = sim::run(t, scenario, load, trials, None).expect("simulation runs");
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        ..RunOptions::default()
    };
    let measured = chaos::run_with(t, scenario, load, &options).expect("chaos run completes");
    (simulated, measured)
}

fn received(r: &RunReport) -> Vec<u64> {
    r.services.iter().map(|s| s.received).collect()
}

#[test]
fn total_outage_through_a_sidecar_and_a_client_layer_agrees_exactly() {
    let t = topo(
        "version: 1\nentry: web\nclient: { timeout: 5s, retry: { max_attempts: 2 } }\nservices:\n  web: { latency: 1ms, calls: [ { to: api, timeout: 3s, retry: { max_attempts: 3 }, via: [ { name: mesh, timeout: 2s, retry: { max_attempts: 2 } } ] } ] }\n  api: { latency: 1ms, calls: [ { to: db, timeout: 1s, retry: { max_attempts: 2 } } ] }\n  db: {}\n",
    );
    let scenario = faults::load("total-outage").expect("shipped fault");
    let load = LoadSettings::new(
        None,
        Some(2),
        Some(4),
        Some(Duration::from_secs(20)),
        Some(3),
    )
    .expect("valid load");
    let (s, c) = both(&t, &scenario, &load, 5);
    // Per user request: web 2, api 2 × 3 × 2 = 12, db 24.
    assert_eq!(received(&s), [8, 48, 96]);
    assert_eq!(received(&c), received(&s));
    for (a, b) in s.services.iter().zip(&c.services) {
        assert_eq!(a.statuses, b.statuses, "{}", a.service);
        assert_eq!(a.amplification, b.amplification, "{}", a.service);
    }
    assert_eq!(s.end_to_end.requests, c.end_to_end.requests);
    assert_eq!(s.end_to_end.outcomes, c.end_to_end.outcomes);
    assert_eq!(s.end_to_end.client, c.end_to_end.client);
    assert_eq!(
        s.services[0].calls, c.services[0].calls,
        "app and sidecar layers"
    );
}

#[test]
fn the_overload_model_without_jitter_agrees_exactly() {
    let t = topo(
        "version: 1\nentry: api\nclient:\n  timeout: 1s\n  retry: { max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: none } }\nservices:\n  api: { latency: 100ms }\n",
    );
    let scenario = faults::load_str(
        "name: overload-4\ntarget: entry\nphases: [ { inject: { kind: overload, capacity: 4 } } ]\n",
        "overload-4.yaml",
    )
    .expect("valid fault");
    let load = LoadSettings::new(
        None,
        Some(6),
        Some(6),
        Some(Duration::from_secs(2)),
        Some(7),
    )
    .expect("valid load");
    let (s, c) = both(&t, &scenario, &load, 10);
    assert_eq!(received(&s), [30]);
    assert_eq!(received(&c), [30]);
    assert_eq!(s.end_to_end.succeeded, 0);
    assert_eq!(c.end_to_end.succeeded, 0);
    assert_eq!(s.services[0].statuses, c.services[0].statuses);
    assert_eq!(
        s.timeline.attempts, c.timeline.attempts,
        "waves at 0, 200, 500, 1000, 1900 ms"
    );
}

#[test]
fn a_brownout_agrees_within_ten_percent() {
    let t = topo(
        "version: 1\nentry: api\nservices:\n  api: { latency: 1ms, calls: [ { to: db, timeout: 1s, retry: { max_attempts: 3, backoff: { kind: constant, base: 10ms } } } ] }\n  db: { latency: 1ms }\n",
    );
    let scenario = faults::load("brownout").expect("shipped fault");
    let load = LoadSettings::new(
        Some(200.0),
        None,
        None,
        Some(Duration::from_millis(1500)),
        Some(9),
    )
    .expect("valid load");
    let (s, c) = both(&t, &scenario, &load, 200);
    assert_eq!(s.end_to_end.requests, 300);
    // On a loaded machine the timer that sends the last request due before
    // the horizon may fire after it; the harness then counts it `not_sent`
    // (never silently dropped). The attempts at db are compared per request.
    let sent = c.end_to_end.requests;
    assert_eq!(sent + c.harness.not_sent, 300, "{:?}", c.harness);
    assert!(sent >= 290, "{sent} of 300 sent: {:?}", c.harness);
    let (sim_db, chaos_db) = (s.services[1].received as f64, c.services[1].received as f64);
    // Expected 300 × (1 + 0.2 + 0.04) = 372.
    assert!((sim_db - 372.0).abs() <= 372.0 * 0.03, "simulated {sim_db}");
    let sim_db_per_sent = sim_db * sent as f64 / 300.0;
    assert!(
        (chaos_db - sim_db_per_sent).abs() <= 0.10 * sim_db_per_sent,
        "chaos {chaos_db} of {sent} vs simulated {sim_db} of 300"
    );
    let sim_ok = s.end_to_end.success_ratio();
    let chaos_ok = c.end_to_end.success_ratio();
    assert!(
        (sim_ok - chaos_ok).abs() <= 0.03,
        "success {sim_ok} vs {chaos_ok}"
    );
}
