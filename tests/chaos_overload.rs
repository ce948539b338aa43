//! DESIGN's overload model in real time: six clients, one request each, 100 ms
//! of service time, capacity 4, a 2 s horizon.
//!
//! Derivation. All six arrive at t = 0; the fifth arrival raises the count in
//! flight to 5 > 4, so everyone in flight is marked, and the sixth is marked on
//! arrival. Every attempt answers 504 at 100 ms.
//! - Immediate retries: every wave restarts together 100 ms later and is
//!   marked again (a real-time tolerance: `chaos_smoke.rs`; exactly 120 in
//!   `sim_overload.rs`).
//! - Exponential backoff (base 100 ms, ×2) without jitter, 5 attempts: the
//!   waves stay synchronised, at 0, 200, 500, 1000 and 1900 ms. All 30 attempts
//!   are marked; nobody gets through.
//! - Full jitter, same schedule and 5 attempts: the retries spread out and every
//!   client gets through (the policy engine's draws are seeded per client).

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology;

fn run_with_client_retry(retry: &str) -> RunReport {
    let text = format!(
        "version: 1\nentry: api\nclient:\n  timeout: 1s\n  retry: {retry}\nservices:\n  api: {{ latency: 100ms }}\n"
    );
    let t = topology::load_str(&text, "t.yaml", "t", &Default::default()).expect("valid topology");
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
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        ..RunOptions::default()
    };
    chaos::run_with(&t, &scenario, &load, &options).expect("run completes")
}

fn attempts(r: &RunReport) -> u64 {
    r.end_to_end.client.as_ref().map_or(0, |c| c.attempts)
}

#[test]
fn exponential_backoff_without_jitter_keeps_everyone_out() {
    let r = run_with_client_retry(
        "{ max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: none } }",
    );
    assert_eq!(r.end_to_end.succeeded, 0, "{:?}", r.end_to_end.outcomes);
    assert_eq!(attempts(&r), 30);
    assert_eq!(r.service("api").map(|s| s.received), Some(30));
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.stops.get("attempts_exhausted"), Some(&6));
}

#[test]
fn full_jitter_lets_everyone_through() {
    let r = run_with_client_retry(
        "{ max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full } }",
    );
    assert_eq!(r.end_to_end.succeeded, 6, "{:?}", r.end_to_end.outcomes);
    assert_eq!(
        r.service("api").and_then(|a| a.statuses.get("200")),
        Some(&6)
    );
    // Spread out, some clients get through before their last attempt: fewer
    // than the 30 of the synchronised waves (which all fail).
    assert!(attempts(&r) < 30, "{} attempts", attempts(&r));
    assert!(attempts(&r) > 6, "the first wave is always marked");
}
