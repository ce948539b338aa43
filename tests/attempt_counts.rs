//! Attempt counts real systems use (issue 11, item 6): any count up to 2^31 − 1
//! and `max_attempts: unlimited` load, the analysis counts the attempts that
//! can start before the layer's time bound, says which bound applied, and the
//! simulator stops where the analysis says it does.

use crate::common;

use std::time::Duration;

use retrylint::faults;
use retrylint::policy::RetryPolicy;
use retrylint::prediction::{self, Analysis, Basis, BoundBy, TimeBound};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::Topology;

fn load(text: &str) -> Topology {
    common::load(text).unwrap_or_else(|e| panic!("{e}"))
}

fn worst(t: &Topology) -> Vec<f64> {
    prediction::worst_case(t)
        .iter()
        .map(|c| c.value())
        .collect()
}

/// A Kafka producer at its defaults: delivery.timeout.ms is the call's
/// timeout, request.timeout.ms the producer layer's.
const KAFKA: &str = "version: 1
entry: app
services:
  app:
    calls:
      - to: kafka
        timeout: 120s
        via:
          - name: kafka-producer
            retry: kafka-producer
            timeout: 30s
  kafka: {}
";

#[test]
fn counts_up_to_two_to_the_31_and_unlimited_load() {
    for (written, want) in [
        ("unlimited", RetryPolicy::UNLIMITED),
        ("2147483647", 2_147_483_647),
        ("101", 101),
    ] {
        let t = load(&format!(
            "version: 1\nservices:\n  a: {{ calls: [ {{ to: b, timeout: 1s, retry: {{ max_attempts: {written} }} }} ] }}\n  b: {{}}\n"
        ));
        assert_eq!(t.services[0].calls[0].layers[0].policy.max_attempts, want);
    }
}

#[test]
fn a_misspelt_unlimited_gets_a_hint_and_a_count_too_big_names_the_way_out() {
    let e = common::load(
        "version: 1\nservices:\n  a: { calls: [ { to: b, retry: { max_attempts: unlimted } } ] }\n  b: {}\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`max_attempts: unlimted` is not a count of attempts"),
        "{e}"
    );
    assert!(e.contains("did you mean `unlimited`?"), "{e}");
    let e = common::load(
        "version: 1\nservices:\n  a: { calls: [ { to: b, retry: { max_attempts: 2147483648 } } ] }\n  b: {}\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("must be between 1 and 2147483647"), "{e}");
    assert!(e.contains("write `unlimited`"), "{e}");
}

#[test]
fn a_kafka_producer_is_bounded_by_its_delivery_timeout() {
    let t = load(KAFKA);
    let a = Analysis::new(&t);
    let producer = a.layer_attempts[0][0][1];
    // Shortest waits 80, 160, 320, 640 ms, then 800 ms (1 s × 0.8): retries
    // start at 0.08, 0.24, 0.56, 1.2, 2.0, … s; 4 + (120000 − 1200 − 1) / 800
    // = 152 of them start before 120 s.
    assert_eq!(producer.count, 153);
    assert_eq!(producer.basis, Basis::Time);
    assert_eq!(
        producer.time,
        Some(TimeBound {
            within: Duration::from_secs(120),
            by: BoundBy::OuterTimeout(0)
        })
    );
    assert_eq!(worst(&t), [1.0, 153.0]);
    // The producer stops at 120 s plus the attempt it started last (kafka
    // answers within its default 1 ms), and the app waits 120 s at most.
    assert_eq!(a.layer_worst[0][0][1], Duration::from_millis(120_001));
    assert_eq!(a.call_worst[0][0], Duration::from_secs(120));
    let report = common::check(&t);
    let edge = &report.edges[0];
    assert_eq!(edge.attempts, 153.0);
    assert_eq!(edge.time_bounded.len(), 1);
    let row = &edge.time_bounded[0];
    assert_eq!(
        (row.layer.as_str(), row.max_attempts.as_str(), row.attempts),
        ("kafka-producer", "unlimited", 153)
    );
    assert_eq!(row.within_ms, 120_000.0);
    assert_eq!(
        row.bounded_by,
        "the 2m timeout of the app layer of app → kafka"
    );
    assert!(!row.estimate);
    assert!(report.findings.iter().all(|f| f.code != "RL015"));
}

#[test]
fn counts_of_a_hundred_or_fewer_are_taken_as_written() {
    // The same constant 100 ms waits under a 1 s deadline: 10 attempts fit.
    let topo = |n: &str| {
        load(&format!(
            "version: 1\nentry: web\ndeadline: 1s\nclient: {{ timeout: 1s, retry: {{ max_attempts: {n}, backoff: {{ kind: constant, base: 100ms, jitter: none }} }} }}\nservices:\n  web: {{}}\n"
        ))
    };
    assert_eq!(
        worst(&topo("100")),
        [100.0],
        "as written: figures of old topologies stay"
    );
    assert_eq!(worst(&topo("101")), [10.0]);
    assert_eq!(worst(&topo("unlimited")), [10.0]);
    let a = Analysis::new(&topo("unlimited"));
    let client = a.client_attempts.expect("client layer");
    assert_eq!(client.basis, Basis::Time);
    assert_eq!(client.time.map(|b| b.by), Some(BoundBy::Deadline));
}

#[test]
fn nothing_bounds_an_unlimited_layer_its_callers_merely_stop_waiting_for() {
    // web's caller gives up after 2 s, but web goes on retrying (no
    // deadline propagation): the engine's ceiling is the figure, and RL015 fires.
    let t = load(
        "version: 1\nentry: web\nclient: { timeout: 2s }\nservices:\n  web: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: unlimited, backoff: { kind: constant, base: 1s, jitter: none } } } ] }\n  db: {}\n",
    );
    assert_eq!(worst(&t), [1.0, 4_294_967_295.0]);
    let a = Analysis::new(&t);
    assert_eq!(a.layer_attempts[0][0][0].basis, Basis::Unbounded);
    let report = common::check(&t);
    let rl015: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.code == "RL015")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        rl015,
        [
            "web → db retries without a count limit, has no budget, and nothing stops it in time: the timeouts of web's callers do not reach it"
        ]
    );
    // A run's horizon bounds it: attempts at 0, 1, …, 9 s start before 10 s.
    let within: Vec<f64> = prediction::worst_case_within(&t, Duration::from_secs(10))
        .iter()
        .map(|c| c.value())
        .collect();
    assert_eq!(within, [1.0, 10.0]);
    // With the deadline propagated from the client, it stops at 2 s.
    let t = load(
        "version: 1\nentry: web\ndeadline: 2s\nclient: { timeout: 2s }\nservices:\n  web: { deadline_propagation: true, calls: [ { to: db, timeout: 1s, retry: { max_attempts: unlimited, backoff: { kind: constant, base: 1s, jitter: none } } } ] }\n  db: {}\n",
    );
    assert_eq!(worst(&t), [1.0, 2.0]);
    let report = common::check(&t);
    assert!(report.findings.iter().all(|f| f.code != "RL015"));
}

#[test]
fn full_jitter_counts_on_the_mean_waits_and_says_so() {
    // Mean waits of full jitter over 200 ms: 100 ms each; 9 retries start
    // before 1 s (at 0.1, …, 0.9 s).
    let t = load(
        "version: 1\nentry: web\ndeadline: 1s\nclient: { timeout: 1s, retry: { max_attempts: unlimited, backoff: { kind: constant, base: 200ms, jitter: full } } }\nservices:\n  web: {}\n",
    );
    let a = Analysis::new(&t);
    let client = a.client_attempts.expect("client layer");
    assert_eq!((client.count, client.basis), (10, Basis::TimeTypical));
}

#[test]
fn immediate_unlimited_retries_are_not_bounded_by_time() {
    // No wait between attempts: any number fit in the deadline.
    let t = load(
        "version: 1\nentry: web\ndeadline: 1s\nclient: { timeout: 1s, retry: { max_attempts: unlimited } }\nservices:\n  web: {}\n",
    );
    assert_eq!(worst(&t), [4_294_967_295.0]);
}

#[test]
fn huge_counts_in_every_rule_answer_at_once() {
    // RL008 walks no 2^31 attempts; RL006 says how many can start.
    let t = load(
        "version: 1\nentry: web\nclient: { timeout: 1s }\nservices:\n  web: { calls: [ { to: db, timeout: 50ms, retry: { max_attempts: 2147483647, backoff: { kind: constant, base: 100ms, jitter: none } } } ] }\n  db: {}\n",
    );
    let report = common::check(&t);
    let message = |code: &str| {
        report
            .findings
            .iter()
            .find(|f| f.code == code)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        message("RL008"),
        "web → db allows 2147483647 attempts but only 10 can start before the callers of web, the most patient of whom waits 1s: attempt 11 would wait 1s first"
    );
    assert_eq!(
        message("RL006"),
        "web → db makes up to 2147483647 attempts on a synchronous call (more than 5)"
    );
    assert_eq!(
        message("RL015"),
        "web → db retries up to 2147483646 times, has no budget, and nothing stops it in time: the timeouts of web's callers do not reach it"
    );
}

#[test]
fn a_chain_of_unlimited_layers_is_analysed_in_bounded_time() {
    // 2,000 services, each retrying its callee without limit under a
    // propagated deadline: every figure is computed in closed form.
    let mut text = String::from("version: 1\nentry: s0\ndeadline: 30s\nservices:\n");
    for i in 0..2000 {
        text += &format!(
            "  s{i}: {{ deadline_propagation: true, calls: [ {{ to: s{}, timeout: 10s, retry: {{ max_attempts: unlimited, backoff: {{ kind: exponential, base: 1ms, multiplier: 1.001, jitter: equal }} }} }} ] }}\n",
            i + 1
        );
    }
    text += "  s2000: {}\n";
    let t = load(&text);
    let a = Analysis::new(&t);
    let first = a.layer_attempts[0][0][0];
    assert_eq!(first.basis, Basis::Time);
    assert!(first.count > 1 && first.count < 100_000, "{}", first.count);
    assert!(a.worst_case[2000].saturated);
}

fn simulate(t: &Topology, requests: u64, horizon: Duration) -> RunReport {
    let scenario = faults::load("total-outage").expect("shipped fault");
    let load = LoadSettings::new(None, Some(1), Some(requests), Some(horizon), Some(5))
        .expect("valid load");
    sim::run(t, &scenario, &load, 1, Some(1)).expect("simulation runs")
}

#[test]
fn the_simulator_stops_an_unlimited_layer_where_the_analysis_does() {
    // The SDK retries every second without limit; the app's 9.5 s timeout
    // cancels it: attempts at 0, 1, …, 9 s.
    let t = load(
        "version: 1\nentry: app\nservices:\n  app:\n    calls:\n      - to: store\n        timeout: 9500ms\n        via:\n          - name: sdk\n            timeout: 1s\n            retry: { max_attempts: unlimited, backoff: { kind: constant, base: 1s, jitter: none } }\n  store: {}\n",
    );
    assert_eq!(worst(&t), [1.0, 10.0]);
    let r = simulate(&t, 2, Duration::from_secs(3600));
    let store = r.service("store").expect("store row");
    assert_eq!(store.received, 20);
    assert_eq!(store.amplification.measured, 10.0);
    assert_eq!(store.amplification.predicted, 10.0);
}

#[test]
fn the_simulator_stops_an_unbounded_layer_at_the_horizon() {
    let t = load(
        "version: 1\nentry: app\nservices:\n  app: { calls: [ { to: store, timeout: 1s, retry: { max_attempts: unlimited, backoff: { kind: constant, base: 1s, jitter: none } } } ] }\n  store: {}\n",
    );
    let r = simulate(&t, 1, Duration::from_secs(10));
    let store = r.service("store").expect("store row");
    let within = prediction::worst_case_within(&t, Duration::from_secs(10));
    assert_eq!(store.received as f64, within[1].value());
    assert_eq!(store.received, 10);
}
