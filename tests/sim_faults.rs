//! Every fault kind, phases in time, deadlines, parallel calls, sidecars and
//! duplicates in virtual time, each against figures derived by hand from
//! DESIGN's semantics (and the choices the chaos harness documents). One
//! trial each unless said otherwise: virtual time makes them exact.

use crate::common;

use std::time::Duration;

use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology;

/// Runs `topology` under the scenario `fault` (YAML; empty for none).
fn run(topology: &str, fault: &str, load: LoadSettings) -> RunReport {
    let t = topology::load_str(topology, "t.yaml", "t", &topology::Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"));
    let scenario = if fault.is_empty() {
        Scenario::none()
    } else {
        faults::load_str(fault, "f.yaml").unwrap_or_else(|e| panic!("{e}"))
    };
    sim::run(&t, &scenario, &load, 1, Some(1)).expect("simulation runs")
}

/// One client sending `n` requests one after another, horizon 30 s.
fn sequential(n: u64) -> LoadSettings {
    LoadSettings::new(
        None,
        Some(1),
        Some(n),
        Some(Duration::from_secs(30)),
        Some(1),
    )
    .expect("load")
}

fn received(r: &RunReport, s: &str) -> u64 {
    r.service(s).map_or(0, |s| s.received)
}

fn status(r: &RunReport, s: &str, code: &str) -> u64 {
    r.service(s)
        .and_then(|s| s.statuses.get(code).copied())
        .unwrap_or(0)
}

fn dropped(r: &RunReport, s: &str, kind: &str) -> u64 {
    r.service(s)
        .and_then(|s| s.dropped.get(kind).copied())
        .unwrap_or(0)
}

/// The slowest user request, in ms.
fn e2e_ms(r: &RunReport) -> f64 {
    r.end_to_end.latency_ms.max
}

/// Latencies go through an HDR histogram at 3 significant figures: equal
/// within its resolution (0.1 %).
#[track_caller]
fn assert_ms(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() <= expected * 0.001 + 0.002,
        "{actual} ms, expected {expected} ms"
    );
}

/// A scenario with one phase at db.
fn at_db(phase: &str) -> String {
    format!("target: db\nphases: [ {phase} ]\n")
}

/// A scenario injecting `inject` at db for the whole run.
fn fault(inject: &str) -> String {
    at_db(&format!("{{ inject: {inject} }}"))
}

#[test]
fn retry_after_replaces_a_shorter_backoff_and_is_sent_in_whole_seconds() {
    let topo = |honor: bool| {
        format!(
            "version: 1\nentry: api\nservices:\n  api: {{ latency: 0ms, calls: [ {{ to: db, retry: {{ max_attempts: 3, honor_retry_after: {honor}, backoff: {{ kind: constant, base: 10ms }} }} }} ] }}\n  db: {{}}\n"
        )
    };
    // 1.5 s goes over HTTP as `Retry-After: 2`.
    let f = fault("{ kind: status, status: 429, retry_after: 1500ms }");
    let r = run(&topo(true), &f, sequential(1));
    assert_eq!(received(&r, "db"), 3);
    assert_ms(e2e_ms(&r), 4000.0);
    let layer = &r.service("api").expect("api").calls[0].layers[0];
    assert_eq!(layer.retry_after_waits, 2);
    assert_eq!(layer.retries_by_reason.get("429"), Some(&2));
    let r = run(&topo(false), &f, sequential(1));
    assert_ms(e2e_ms(&r), 20.0);
    assert_eq!(status(&r, "api", "429"), 1, "the status propagates");
}

#[test]
fn sidecars_pass_retry_after_on_and_tiers_do_not() {
    // web → api → db: api answers 429 without Retry-After, so web's layer
    // waits its own 10 ms backoff. web → (mesh) → db: the sidecar answers
    // with db's Retry-After, so web's layer waits 1 s as well.
    let f = fault("{ kind: status, status: 429, retry_after: 1s }");
    let tier = run(
        "version: 1\nentry: web\nservices:\n  web: { latency: 0ms, calls: [ { to: api, retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms } } } ] }\n  api: { latency: 0ms, calls: [ db ] }\n  db: {}\n",
        &f,
        sequential(1),
    );
    assert_eq!(received(&tier, "db"), 2);
    assert_ms(e2e_ms(&tier), 10.0);
    let sidecar = run(
        "version: 1\nentry: web\nservices:\n  web: { latency: 0ms, calls: [ { to: db, retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms } }, via: [ { name: mesh, retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms } } } ] } ] }\n  db: {}\n",
        &f,
        sequential(1),
    );
    assert_eq!(received(&sidecar, "db"), 4);
    // mesh: 0 → 1 s; web waits 1 s; mesh: 2 s → 3 s.
    assert_ms(e2e_ms(&sidecar), 3000.0);
}

#[test]
fn an_injected_delay_longer_than_the_timeout_turns_into_retries() {
    // db takes 5 ms + 50 ms injected; api gives each attempt 20 ms. Three
    // attempts time out at 20, 40 and 60 ms; db still finishes all three
    // (work nobody waits for) and answers 200 at 55, 75 and 95 ms.
    let r = run(
        "version: 1\nentry: api\nservices:\n  api: { latency: 0ms, calls: [ { to: db, timeout: 20ms, retry: { max_attempts: 3 } } ] }\n  db: { latency: 5ms }\n",
        &fault("{ kind: delay, delay: 50ms }"),
        sequential(1),
    );
    assert_eq!(received(&r, "db"), 3);
    assert_eq!(status(&r, "db", "200"), 3);
    assert_ms(r.service("db").map_or(0.0, |s| s.latency_ms.max), 55.0);
    assert_eq!(status(&r, "api", "504"), 1);
    assert_ms(e2e_ms(&r), 60.0);
    assert_eq!(r.end_to_end.outcomes.get("504"), Some(&1));
}

#[test]
fn a_hang_is_ended_by_timeouts_or_never() {
    let topo = |timeout: &str| {
        format!(
            "version: 1\nentry: api\nservices:\n  api: {{ latency: 0ms, calls: [ {{ to: db{timeout}, retry: {{ max_attempts: 2 }} }} ] }}\n  db: {{}}\n"
        )
    };
    let r = run(
        &topo(", timeout: 100ms"),
        &fault("{ kind: hang }"),
        sequential(2),
    );
    assert_eq!(received(&r, "db"), 4);
    assert_eq!(dropped(&r, "db", "hang"), 4);
    assert_eq!(r.end_to_end.failed, 2);
    assert_ms(e2e_ms(&r), 200.0);
    // Without a timeout the first request never ends.
    let r = run(&topo(""), &fault("{ kind: hang }"), sequential(2));
    assert_eq!(received(&r, "db"), 1);
    assert_eq!(r.end_to_end.requests, 1);
    assert_eq!(r.end_to_end.outcomes.get("unfinished"), Some(&1));
}

#[test]
fn a_reset_after_the_work_duplicates_a_post_unless_it_carries_a_key() {
    let topo = |key: bool| {
        format!(
            "version: 1\nentry: api\nservices:\n  api: {{ latency: 0ms, calls: [ {{ to: payments, method: POST, idempotency_key: {key}, retry: {{ max_attempts: 3, retry_on: [reset] }} }} ] }}\n  payments: {{ latency: 1ms }}\n"
        )
    };
    let f = fault("{ kind: reset }").replace("db", "payments");
    let r = run(&topo(false), &f, sequential(4));
    assert_eq!(received(&r, "payments"), 12);
    assert_eq!(dropped(&r, "payments", "reset"), 12);
    assert_eq!(
        r.service("payments").map(|s| s.duplicates),
        Some(8),
        "2 per request"
    );
    assert_eq!(status(&r, "api", "502"), 4);
    let r = run(&topo(true), &f, sequential(4));
    assert_eq!(r.service("payments").map(|s| s.duplicates), Some(0));
    // A GET retried after a reset is no duplicate either.
    let get = topo(false).replace("method: POST", "method: GET");
    let r = run(&get, &f, sequential(4));
    assert_eq!(r.service("payments").map(|s| s.duplicates), Some(0));
}

#[test]
fn a_service_that_is_down_refuses_and_cuts_what_it_was_working_on() {
    // db works 200 ms per request and goes down from 100 ms to 1.1 s. The
    // first attempt (t = 0) is cut at 100 ms (a reset); the retry at 100 ms is
    // refused (connect); api gives up after 2 attempts and answers 502. db
    // still finishes the first request at 200 ms: nobody waits for it.
    let r = run(
        "version: 1\nentry: api\nservices:\n  api: { latency: 0ms, calls: [ { to: db, retry: { max_attempts: 2 } } ] }\n  db: { latency: 200ms }\n",
        &at_db("{ after: 100ms, for: 1s, inject: { kind: down } }"),
        sequential(1),
    );
    assert_eq!(
        received(&r, "db"),
        2,
        "a refused connection counts as received"
    );
    assert_eq!(dropped(&r, "db", "refused"), 1);
    assert_eq!(status(&r, "db", "200"), 1);
    let layer = &r.service("api").expect("api").calls[0].layers[0];
    assert_eq!(layer.retries_by_reason.get("reset"), Some(&1));
    assert_eq!(r.end_to_end.outcomes.get("502"), Some(&1));
    assert_ms(e2e_ms(&r), 100.0);
}

#[test]
fn phases_follow_the_clock() {
    // A request every 100 ms for 1 s; db answers 503 from 300 ms to 600 ms.
    let load = LoadSettings::new(
        Some(10.0),
        None,
        None,
        Some(Duration::from_secs(1)),
        Some(1),
    )
    .expect("load");
    let r = run(
        "version: 1\nentry: api\nservices:\n  api: { latency: 0ms, calls: [ db ] }\n  db: { latency: 0ms }\n",
        &at_db("{ after: 300ms, for: 300ms, inject: { kind: status, status: 503 } }"),
        load,
    );
    assert_eq!(r.end_to_end.requests, 10);
    assert_eq!(r.end_to_end.succeeded, 7);
    assert_eq!(status(&r, "db", "503"), 3);
    assert_eq!(r.timeline.attempts, vec![1; 10]);
    assert_eq!(r.end_to_end.last_success_ms.map(|s| s.p50), Some(900.0));
}

#[test]
fn deadline_propagation_stops_work_nobody_waits_for() {
    // The user's deadline is 100 ms; api hangs. With propagation, web gives
    // its attempt only the 90 ms left and cannot retry within the deadline:
    // api receives 1 request. Without, web retries every 1 s after the user
    // gave up: 5 attempts.
    let topo = |propagate: bool| {
        format!(
            "version: 1\nentry: web\ndeadline: 100ms\nclient: {{ timeout: 1s }}\nservices:\n  web: {{ latency: 10ms, deadline_propagation: {propagate}, calls: [ {{ to: api, timeout: 1s, retry: {{ max_attempts: 5, backoff: {{ kind: constant, base: 30ms }} }} }} ] }}\n  api: {{}}\n"
        )
    };
    let f = "target: api\nphases: [ { inject: { kind: hang } } ]\n";
    let with = run(&topo(true), f, sequential(1));
    assert_eq!(received(&with, "api"), 1);
    assert_ms(e2e_ms(&with), 100.0);
    let layer = &with.service("web").expect("web").calls[0].layers[0];
    assert_eq!(layer.stops.get("deadline_exceeded"), Some(&1));
    let without = run(&topo(false), f, sequential(1));
    assert_eq!(received(&without, "api"), 5);
    assert_ms(e2e_ms(&without), 100.0);
}

#[test]
fn parallel_calls_overlap_and_a_failure_does_not_stop_the_others() {
    let topo = |parallel: bool| {
        format!(
            "version: 1\nentry: web\nservices:\n  web: {{ latency: 0ms, calls: [ {{ to: a, parallel: {parallel} }}, {{ to: b, parallel: {parallel}, retry: {{ max_attempts: 3 }} }} ] }}\n  a: {{ latency: 50ms }}\n  b: {{ latency: 100ms }}\n"
        )
    };
    assert_ms(e2e_ms(&run(&topo(true), "", sequential(1))), 100.0);
    assert_ms(e2e_ms(&run(&topo(false), "", sequential(1))), 150.0);
    // a fails at once: web still waits for b (100 ms), then answers a's 500.
    let f = "target: a\nphases: [ { inject: { kind: status, status: 500 } } ]\n";
    let r = run(&topo(true), f, sequential(1));
    assert_ms(e2e_ms(&r), 100.0);
    assert_eq!(received(&r, "b"), 1);
    assert_eq!(status(&r, "web", "500"), 1);
    let r = run(&topo(false), f, sequential(1));
    assert_eq!(received(&r, "b"), 1, "sequential: b is still called");
    assert_ms(e2e_ms(&r), 100.0);
    assert_eq!(status(&r, "web", "500"), 1);
}

#[test]
fn a_sidecar_stops_when_its_caller_gives_up() {
    // The mesh tries api every 100 ms (its timeout); the app layer gives the
    // whole call 250 ms. At 250 ms the app layer times out and the mesh stops:
    // 3 attempts reach api, not 5.
    let r = run(
        "version: 1\nentry: web\nservices:\n  web: { latency: 0ms, calls: [ { to: api, timeout: 250ms, via: [ { name: mesh, timeout: 100ms, retry: { max_attempts: 5 } } ] } ] }\n  api: {}\n",
        "target: api\nphases: [ { inject: { kind: hang } } ]\n",
        sequential(1),
    );
    assert_eq!(received(&r, "api"), 3);
    assert_ms(e2e_ms(&r), 250.0);
    let mesh = &r.service("web").expect("web").calls[0].layers[1];
    assert_eq!(mesh.attempts, 3);
    assert_eq!(mesh.retries, 2);
}

#[test]
fn the_horizon_and_the_request_cap_bound_the_load() {
    // Open loop: 10/s for 1 s is 10 requests; --requests 4 caps it at 4.
    let topo = "version: 1\nentry: api\nservices:\n  api: { latency: 1ms }\n";
    let load = LoadSettings::new(
        Some(10.0),
        None,
        None,
        Some(Duration::from_secs(1)),
        Some(1),
    )
    .expect("load");
    assert_eq!(run(topo, "", load).end_to_end.requests, 10);
    let load = LoadSettings::new(
        Some(10.0),
        None,
        Some(4),
        Some(Duration::from_secs(1)),
        Some(1),
    )
    .expect("load");
    assert_eq!(run(topo, "", load).end_to_end.requests, 4);
    // Closed loop: 3 clients back to back, 1 ms each, for 10 ms: 30 requests.
    let load = LoadSettings::new(
        None,
        Some(3),
        None,
        Some(Duration::from_millis(10)),
        Some(1),
    )
    .expect("load");
    let r = run(topo, "", load);
    assert_eq!(r.end_to_end.requests, 30);
    assert_eq!(r.end_to_end.succeeded, 30);
    assert_eq!(r.end_to_end.last_success_ms.map(|s| s.p50), Some(10.0));
}

#[test]
fn a_brownout_ratio_is_rolled_per_request() {
    // 20 % of db's answers are 503 over 5,000 requests: within 2 points.
    let load = LoadSettings::new(
        Some(1000.0),
        None,
        None,
        Some(Duration::from_secs(5)),
        Some(3),
    )
    .expect("load");
    let r = run(
        "version: 1\nentry: api\nservices:\n  api: { latency: 1ms, calls: [ db ] }\n  db: { latency: 1ms }\n",
        &fault("{ kind: status, status: 503, ratio: 0.2 }"),
        load,
    );
    let share = status(&r, "db", "503") as f64 / received(&r, "db") as f64;
    assert!((share - 0.2).abs() < 0.02, "{share}");
    assert_eq!(
        r.end_to_end.outcomes.get("503").copied(),
        Some(status(&r, "db", "503"))
    );
}

/// A single service, failed at once by the fault, behind a client layer that
/// retries with backoff: its user requests take only their retry waits.
const FAILED_ENTRY: &str = "version: 1
client: { timeout: 1s, retry: { max_attempts: 3, backoff: { kind: constant, base: 100ms } } }
services:
  api: { latency: 20ms }
";

#[test]
fn a_client_the_horizon_cut_short_sends_no_more() {
    // Each user request: attempts at t, t + 100ms, t + 200ms, all answered 503
    // at once, so a request ends 200 ms after it began. Over a 1 s horizon
    // the fifth begins at 800 ms: its retry at 900 ms starts, the one at
    // 1000 ms may not. The client is still busy with it at the horizon and
    // sends nothing more (before, it sent new requests at that instant
    // forever and the run stalled).
    let load =
        LoadSettings::new(None, Some(1), None, Some(Duration::from_secs(1)), Some(1)).unwrap();
    let r = run(
        FAILED_ENTRY,
        "target: api\nphases: [ { inject: { kind: status, status: 503 } } ]\n",
        load,
    );
    assert_eq!(r.end_to_end.requests, 5);
    assert_eq!(received(&r, "api"), 14);
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.stops.get("attempts_exhausted"), Some(&4));
    assert_eq!(client.stops.get("horizon"), Some(&1));
}

#[test]
fn requests_alone_set_no_horizon_in_virtual_time() {
    // 100 requests at 1/s need 99 s of virtual time: all of them run, where
    // the real-time harness would stop at 60 s.
    let load = LoadSettings::new(Some(1.0), None, Some(100), None, Some(1)).unwrap();
    let r = run(
        "version: 1\nservices:\n  api: { latency: 100ms }\n",
        "",
        load,
    );
    assert_eq!(r.end_to_end.requests, 100);
    assert_eq!(r.end_to_end.succeeded, 100);
    assert_eq!(r.load.duration_ms, None);
}

#[test]
fn an_injected_delay_shows_in_the_histograms_exactly() {
    // api does no work of its own; the delay is all its latency and all the
    // user sees (a network hop takes no virtual time).
    let t = "version: 1\nservices:\n  api: { latency: 0s }\n";
    let r = run(
        t,
        "target: api\nphases: [ { inject: { kind: delay, delay: 50ms } } ]\n",
        sequential(20),
    );
    assert_eq!(r.end_to_end.succeeded, 20);
    let api = r.service("api").expect("api");
    for q in [api.latency_ms, r.end_to_end.latency_ms] {
        assert_ms(q.p50, 50.0);
        assert_ms(q.max, 50.0);
    }
    assert_eq!(
        common::counted_below(&api.histogram, 50.0),
        0,
        "{:?}",
        api.histogram
    );
}
