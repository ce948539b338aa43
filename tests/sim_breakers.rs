//! Circuit breakers and hedging in virtual time, against counts derived by
//! hand from the state machine and the hedging schedule (`src/policy`).

use std::time::Duration;

use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology;

fn run(topology: &str, fault: &str, load: &LoadSettings, trials: u32) -> RunReport {
    let t = topology::load_str(topology, "t.yaml", "t", &topology::Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"));
    let s: Scenario = faults::load(fault).unwrap_or_else(|e| panic!("{e}"));
    sim::run(&t, &s, load, trials, Some(1)).expect("simulation runs")
}

/// 20 user requests a second for 10 s: at 0, 50, …, 9950 ms.
fn twenty_per_second() -> LoadSettings {
    LoadSettings::new(
        Some(20.0),
        None,
        None,
        Some(Duration::from_secs(10)),
        Some(1),
    )
    .expect("load")
}

const BREAKER: &str = "circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 10, open_for: 5s, half_open_calls: 1 }";

fn web_db(retry: &str, breaker: &str) -> String {
    format!(
        "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n      - to: db\n        timeout: 1s\n        {retry}\n        {breaker}\n  db: {{ latency: 0s }}\n"
    )
}

fn received(r: &RunReport, s: &str) -> u64 {
    r.service(s).map_or(0, |s| s.received)
}

#[test]
fn a_breaker_over_a_total_outage_lets_through_ten_calls_and_a_probe() {
    // Nothing takes time and db answers 503 at once. Requests 1..10 (0 to
    // 450 ms) fail: 10 calls, 10 failures ≥ 50 % → open until 5450 ms. The
    // 99 calls at 500..5400 ms are rejected. At 5450 ms it is half-open: one
    // probe, which fails → open until 10450 ms; the 90 calls at 5500..9950
    // are rejected. db gets 10 + 1 = 11 of the 200 calls.
    let r = run(
        &web_db("retry: { max_attempts: 1 }", BREAKER),
        "total-outage",
        &twenty_per_second(),
        1,
    );
    assert_eq!(r.end_to_end.requests, 200);
    assert_eq!(received(&r, "db"), 11);
    let layer = &r.service("web").expect("web").calls[0].layers[0];
    let b = layer.breaker.as_ref().expect("breaker row");
    assert_eq!(b.short_circuited, 189);
    assert_eq!((b.opened, b.half_opened, b.closed), (2, 1, 0));
    let times: Vec<(f64, &str)> = b
        .transitions
        .iter()
        .map(|t| (t.at_ms, t.to.as_str()))
        .collect();
    assert_eq!(
        times,
        [(450.0, "open"), (5450.0, "half_open"), (5450.0, "open")]
    );
    assert_eq!(layer.stops.get("circuit_open"), Some(&189));
    // Without the breaker: all 200 reach db.
    let r = run(
        &web_db("retry: { max_attempts: 1 }", ""),
        "total-outage",
        &twenty_per_second(),
        1,
    );
    assert_eq!(received(&r, "db"), 200);
}

#[test]
fn outside_the_retry_loop_each_admitted_request_retries_in_full() {
    // The same with 3 attempts per call (no wait between them): 10 requests
    // × 3 attempts, then the probe's 3: 33 at db, against 600 without, and
    // the report says what the breaker saved.
    let retry = "retry: { max_attempts: 3, backoff: { kind: none } }";
    let r = run(
        &web_db(retry, BREAKER),
        "total-outage",
        &twenty_per_second(),
        1,
    );
    assert_eq!(received(&r, "db"), 33);
    let effect = r.breakers.expect("breaker effect");
    // web receives 200 either way.
    assert_eq!(effect.attempts, 200 + 33);
    assert_eq!(effect.attempts_without_breakers, 200 + 600);
    assert_eq!(effect.saved, 567);
}

#[test]
fn inside_the_retry_loop_a_breaker_trips_on_what_retries_absorb() {
    // 30 % of db's answers are 503. Outside, counting each request after its
    // 3 attempts, a request fails 2.7 % of the time: a 25 % breaker never
    // opens. Inside, counting attempts, 30 % > 25 %: it opens.
    let brownout = "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, backoff: { kind: constant, base: 10ms } }\n        circuit_breaker: { failure_rate: 0.25, window: { calls: 20 }, min_calls: 20, open_for: 1s, half_open_calls: 1, POSITION }\n  db: { latency: 5ms }\n";
    let fault = "target: db\nphases: [ { inject: { kind: status, status: 503, ratio: 0.3 } } ]\n";
    let t = |position: &str| {
        topology::load_str(
            &brownout.replace("POSITION", position),
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap()
    };
    let s = faults::load_str(fault, "f.yaml").unwrap();
    let opened = |position: &str| {
        let r = sim::run(&t(position), &s, &twenty_per_second(), 20, Some(1)).unwrap();
        r.service("web").unwrap().calls[0].layers[0]
            .breaker
            .as_ref()
            .unwrap()
            .opened
    };
    assert_eq!(opened("position: outside, counts: outcomes"), 0);
    assert!(opened("position: inside, counts: attempts") > 0);
}

#[test]
fn probes_of_breakers_without_jitter_land_together() {
    // 50 callers (c0..c49, called in parallel by web) share db, which is
    // down for 5 s. Every breaker sees the same calls: each opens after 5
    // failures (at 200 ms) for 2 s, and probes at the first call after it:
    // 2200 ms, then 4200 ms — 50 probes in one 100 ms bucket each time.
    // With 20 % jitter the open times spread over 1.6..2.4 s.
    let topo = |jitter: &str| {
        let mut y = String::from(
            "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n",
        );
        for i in 0..50 {
            y += &format!("      - {{ to: c{i}, parallel: true }}\n");
        }
        for i in 0..50 {
            y += &format!(
                "  c{i}:\n    latency: 0s\n    calls: [ {{ to: db, timeout: 1s, circuit_breaker: {{ failure_rate: 0.5, window: 10s, min_calls: 5, open_for: 2s, half_open_calls: 1, open_jitter: {jitter} }} }} ]\n"
            );
        }
        y += "  db: { latency: 0s }\n";
        topology::load_str(&y, "t.yaml", "t", &Default::default()).unwrap()
    };
    let s = faults::load("recovery").unwrap();
    let load = LoadSettings::new(
        Some(20.0),
        None,
        None,
        Some(Duration::from_secs(5)),
        Some(1),
    )
    .unwrap();
    let r = sim::run(&topo("0"), &s, &load, 1, Some(1)).unwrap();
    let t = &r.timeline.attempts;
    // 5 calls each from 50 callers at 0..200 ms, then only probes.
    assert_eq!(&t[..3], &[100, 100, 50]);
    assert_eq!(t[22], 50, "{t:?}");
    assert_eq!(t[42], 50, "{t:?}");
    assert_eq!(t.iter().sum::<u64>(), 250 + 100);
    let r = sim::run(&topo("0.2"), &s, &load, 1, Some(1)).unwrap();
    let probes = &r.timeline.attempts[3..];
    let most = probes.iter().copied().max().unwrap_or(0);
    assert!(most < 25, "jittered probes spread: {probes:?}");
}

#[test]
fn hedging_sends_every_copy_under_total_failure_and_duplicates_a_post() {
    let hedged = |method: &str, db: &str| {
        format!(
            "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n      - to: db\n        method: {method}\n        timeout: 1s\n        hedging: {{ max_attempts: 3, delay: 50ms, non_fatal: [503] }}\n  db: {db}\n"
        )
    };
    let load = LoadSettings::new(None, Some(1), Some(10), None, Some(1)).unwrap();
    // Every copy answered 503 (non-fatal): the next one goes at once; all 3.
    let r = run(&hedged("GET", "{ latency: 0s }"), "total-outage", &load, 1);
    assert_eq!(received(&r, "db"), 30);
    let layer = &r.service("web").unwrap().calls[0].layers[0];
    assert_eq!(
        layer.hedging.as_ref().map(|h| (h.hedges, h.cancelled)),
        Some((20, 0))
    );
    // Healthy but slow (100 ms > 50 ms): copy 2 goes at 50 ms, copy 1
    // answers at 100 ms before copy 3 is due; copy 2 is cancelled. A POST
    // without a key runs twice: one duplicate per request.
    let r = run(&hedged("POST", "{ latency: 100ms }"), "none", &load, 1);
    assert_eq!(received(&r, "db"), 20);
    assert_eq!(r.service("db").unwrap().duplicates, 10);
    let layer = &r.service("web").unwrap().calls[0].layers[0];
    assert_eq!(
        layer.hedging.as_ref().map(|h| (h.hedges, h.cancelled)),
        Some((10, 10))
    );
    assert_eq!(r.end_to_end.succeeded, 10);
    assert_eq!(r.end_to_end.latency_ms.max, 100.0);
}
