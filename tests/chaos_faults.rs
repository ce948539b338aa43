//! Fault kinds on real servers, by exact counts: Retry-After honoured, a
//! ratio budget under total outage, duplicates of non-idempotent calls,
//! refused connections while a service is down, and faults at the entry as
//! the load driver's own HTTP client sees them. Real-time tolerances are in
//! `chaos_smoke.rs`.

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology::{self, Topology};

fn topo(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &Default::default()).expect("valid topology")
}

fn fault(text: &str) -> Scenario {
    faults::load_str(text, "f.yaml").expect("valid fault")
}

fn run(t: &Topology, s: &Scenario, clients: u32, requests: u64) -> RunReport {
    let load = LoadSettings::new(
        None,
        Some(clients),
        Some(requests),
        Some(Duration::from_secs(10)),
        Some(3),
    )
    .expect("valid load");
    run_load(t, s, &load)
}

fn run_load(t: &Topology, s: &Scenario, load: &LoadSettings) -> RunReport {
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        ..RunOptions::default()
    };
    chaos::run_with(t, s, load, &options).expect("run completes")
}

#[test]
fn retry_after_makes_the_client_wait() {
    let t = topo(
        "version: 1\nclient: { timeout: 2s, retry: { max_attempts: 2 } }\nservices:\n  api: {}\n",
    );
    let s = fault(
        "target: api\nphases: [ { for: 300ms, inject: { kind: status, status: 429, retry_after: 1s } } ]\n",
    );
    let r = run(&t, &s, 1, 1);
    assert_eq!(r.end_to_end.succeeded, 1, "{:?}", r.end_to_end.outcomes);
    // How long it waited is a real-time tolerance: `chaos_smoke.rs`, and
    // exactly in `sim_faults.rs`.
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.retry_after_waits, 1);
    assert_eq!(client.retries_by_reason.get("429"), Some(&1));
}

#[test]
fn a_ratio_budget_caps_retries_under_total_outage() {
    // Without the budget: 3 attempts per request, 150 at the leaf. With 10 %:
    // a retry is allowed whenever retries + 1 ≤ 0.1 × requests, i.e. one at
    // requests 10, 20, 30, 40 and 50 (each retry fails, and the next needs ten
    // more requests): 55 attempts.
    let t = topo(
        "version: 1\nentry: api\nservices:\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, budget: { kind: ratio, ratio: 0.1 } }\n  db: {}\n",
    );
    let r = run(&t, &faults::load("total-outage").expect("shipped"), 1, 50);
    let db = r.service("db").expect("db row");
    assert_eq!(db.received, 55);
    assert_eq!(db.amplification.predicted, 3.0);
    let layer = &r.service("api").expect("api row").calls[0].layers[0];
    assert_eq!(layer.retries, 5);
    // The 45 first retries refused, and the 5 second retries after a granted one.
    assert_eq!(layer.budget_refusals, 50);
}

const POST: &str = "version: 1\nentry: api\nservices:\n  api:\n    calls:\n      - to: payments\n        method: POST\n        timeout: 1s\n        retry: { max_attempts: 3 }\n";

#[test]
fn a_non_idempotent_post_retried_after_the_work_is_a_duplicate() {
    // `reset` closes the connection after the work: each retry executes the
    // payment again. 3 attempts per request → 2 duplicates per request.
    let s = fault("target: payments\nphases: [ { inject: { kind: reset } } ]\n");
    let r = run(&topo(&format!("{POST}  payments: {{}}\n")), &s, 1, 4);
    let p = r.service("payments").expect("payments row");
    assert_eq!(p.received, 12);
    assert_eq!(p.dropped.get("reset"), Some(&12));
    assert_eq!(p.duplicates, 8);
    assert_eq!(
        r.service("api").and_then(|a| a.statuses.get("502")),
        Some(&4)
    );
    let keyed = POST.replace(
        "method: POST",
        "method: POST\n        idempotency_key: true",
    );
    let r = run(&topo(&format!("{keyed}  payments: {{}}\n")), &s, 1, 4);
    let p = r.service("payments").expect("payments row");
    assert_eq!(p.received, 12);
    assert_eq!(p.duplicates, 0);
}

#[test]
fn a_down_service_refuses_connections() {
    let t = topo(
        "version: 1\nentry: api\nservices:\n  api:\n    calls: [ { to: db, timeout: 1s, retry: { max_attempts: 3 } } ]\n  db: {}\n",
    );
    let s = fault("target: db\nphases: [ { inject: { kind: down } } ]\n");
    let r = run(&t, &s, 1, 5);
    let db = r.service("db").expect("db row");
    assert_eq!(db.received, 15);
    assert_eq!(db.dropped.get("refused"), Some(&15));
    let layer = &r.service("api").expect("api row").calls[0].layers[0];
    assert_eq!(layer.retries_by_reason.get("connect"), Some(&10));
    assert_eq!(
        r.service("api").and_then(|a| a.statuses.get("502")),
        Some(&5)
    );
}

#[test]
fn the_load_driver_sees_entry_faults_as_the_tiers_do() {
    // The `client:` layer runs in the load driver on its own HTTP/1.1 client:
    // a reset, a refused connection and a hang at the entry must be
    // classified exactly as reqwest classifies them between tiers.
    let t = topo(
        "version: 1\nclient: { timeout: 200ms, retry: { max_attempts: 3, retry_on: [reset, connect, timeout] } }\nservices:\n  api: {}\n",
    );
    for (kind, reason, dropped) in [
        ("reset", "reset", "reset"),
        ("down", "connect", "refused"),
        ("hang", "timeout", "hang"),
    ] {
        let s = fault(&format!(
            "target: api\nphases: [ {{ inject: {{ kind: {kind} }} }} ]\n"
        ));
        let r = run(&t, &s, 1, 3);
        let client = r.end_to_end.client.as_ref().expect("client layer");
        assert_eq!(client.attempts, 9, "{kind}: {client:?}");
        assert_eq!(
            client.retries_by_reason.get(reason),
            Some(&6),
            "{kind}: {client:?}"
        );
        assert_eq!(r.end_to_end.outcomes.get(reason), Some(&3), "{kind}");
        let api = r.service("api").expect("api row");
        assert_eq!(api.received, 9, "{kind}");
        assert_eq!(
            api.dropped.get(dropped),
            Some(&9),
            "{kind}: {:?}",
            api.dropped
        );
    }
}

#[test]
fn a_client_the_horizon_cut_short_sends_no_more() {
    // As in the simulator: requests of 3 attempts 100 ms apart, all answered
    // 503 at once; over 1 s the fifth request's last retry would start at
    // the horizon, so it is cut and its client stops.
    let t = topo(
        "version: 1\nclient: { timeout: 1s, retry: { max_attempts: 3, backoff: { kind: constant, base: 100ms } } }\nservices:\n  api: { latency: 20ms }\n",
    );
    let s = fault("target: api\nphases: [ { inject: { kind: status, status: 503 } } ]\n");
    let load = LoadSettings::new(None, Some(1), None, Some(Duration::from_secs(1)), Some(1))
        .expect("valid load");
    let r = run_load(&t, &s, &load);
    assert_eq!(r.end_to_end.requests, 5);
    assert_eq!(r.service("api").map(|a| a.received), Some(14));
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.stops.get("horizon"), Some(&1), "{client:?}");
}
