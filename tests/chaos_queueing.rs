//! Servers that queue, on real servers: workers held for the drawn service
//! time, a bounded queue that turns requests away, work finished after the
//! caller hung up counted as wasted, expired work dropped, and a surge that
//! leaves naive retries collapsed while a retry budget recovers. The same
//! cases are exact in the simulator (`sim_queueing.rs`); here the timings
//! keep 50 ms or more of margin, and the surge run is a time-scaled version
//! of `examples/surge.yaml` (8 s instead of 60 s).

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults::{self, Scenario};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology;

fn run(text: &str, scenario: &Scenario, load: &LoadSettings) -> RunReport {
    let t = topology::load_str(text, "t.yaml", "t", &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        // Recovery is the point here, not what a breaker saved.
        breaker_baseline: false,
        ..RunOptions::default()
    };
    chaos::run_with(&t, scenario, load, &options).expect("run completes")
}

/// `n` closed-loop clients, one request each, at once.
fn burst(n: u32) -> LoadSettings {
    LoadSettings::new(
        None,
        Some(n),
        Some(u64::from(n)),
        Some(Duration::from_secs(3)),
        Some(1),
    )
    .expect("load")
}

const SLOW_DB: &str = "version: 1\nentry: web\nservices:\n  web: { latency: 0s, calls: [ { to: db, timeout: 150ms } ] }\n  db: { latency: 100ms, capacity: { workers: 1, queue: 10 } }\n";

#[test]
fn work_finished_after_the_caller_hung_up_is_wasted() {
    // Four requests at once into one worker of 100 ms; web waits 150 ms.
    // Served at 0–100 (in time), 100–200, 200–300, 300–400: the last three
    // end after web gave up.
    let r = run(SLOW_DB, &Scenario::none(), &burst(4));
    let db = r.service("db").unwrap();
    assert_eq!(db.wasted, 3, "{db:?}");
    assert_eq!(r.end_to_end.succeeded, 1);
    let q = db.queue.as_ref().expect("queue row");
    assert_eq!(q.max_depth, 3);
    assert_eq!(q.rejected, 0);
    // Waits of 0, 100, 200 and 300 ms: 150 ms on average.
    assert!((q.mean_wait_ms - 150.0).abs() < 30.0, "{}", q.mean_wait_ms);
}

#[test]
fn expired_work_is_dropped_when_the_deadline_travels() {
    // The same, with web sending its 150 ms deadline and db dropping what
    // can no longer finish in time: each waiting request has to start by
    // 50 ms, and the worker is first free at 100 ms.
    let text = SLOW_DB
        .replace(
            "web: { latency: 0s,",
            "web: { latency: 0s, deadline_propagation: true,",
        )
        .replace(
            "queue: 10 }",
            "queue: 10, drop_expired: true }, deadline_propagation: true",
        );
    let r = run(&text, &Scenario::none(), &burst(4));
    let db = r.service("db").unwrap();
    assert_eq!(db.queue.as_ref().unwrap().expired, 3, "{db:?}");
    assert_eq!(db.wasted, 0);
    assert_eq!(db.statuses.get("504"), Some(&3));
    assert_eq!(db.statuses.get("200"), Some(&1));
}

#[test]
fn a_full_queue_turns_requests_away_at_once() {
    // One worker, room for two: of six at once, one starts, two wait and
    // three get the reject status straight away.
    let text = "version: 1\nentry: db\nservices:\n  db: { latency: 100ms, capacity: { workers: 1, queue: 2, reject_status: 429, retry_after: 1s } }\n";
    let r = run(text, &Scenario::none(), &burst(6));
    let db = r.service("db").unwrap();
    let q = db.queue.as_ref().unwrap();
    assert_eq!(q.rejected, 3);
    assert_eq!(q.max_depth, 2);
    assert_eq!(db.statuses.get("429"), Some(&3));
    assert_eq!(r.end_to_end.succeeded, 3);
}

/// `examples/surge.yaml` scaled to 8 s: db serves 100/s (2 workers, 20 ms),
/// 60/s arrive, 250/s from 2 s to 4 s; web's 100 ms timeout with 3
/// attempts, and optionally a 10 % retry budget.
fn surge_run(budget: bool) -> RunReport {
    surge_variant(|t| {
        if budget {
            t.replace(
                "jitter: full }\n",
                "jitter: full }\n          budget: { kind: ratio, ratio: 0.1, min_per_second: 1 }\n",
            )
        } else {
            t
        }
    })
}

/// The time-scaled surge topology with `edit` applied, under its surge.
fn surge_variant(edit: impl Fn(String) -> String) -> RunReport {
    let text = edit(
        "version: 1\nentry: web\nservices:\n  web:\n    latency: 0ms\n    calls:\n      - to: db\n        timeout: 100ms\n        retry:\n          max_attempts: 3\n          retry_on: [timeout, 503]\n          backoff: { kind: exponential, base: 10ms, cap: 100ms, jitter: full }\n  db:\n    latency: 20ms\n    capacity: { workers: 2, queue: 50 }\n"
            .to_owned(),
    );
    let surge = faults::load_str(
        "name: surge-small\ntarget: entry\nphases: [ { after: 2s, for: 2s, inject: { kind: surge, rate: 250 } } ]\n",
        "surge-small.yaml",
    )
    .unwrap();
    let load = LoadSettings::new(
        Some(60.0),
        None,
        None,
        Some(Duration::from_secs(8)),
        Some(5),
    )
    .unwrap();
    run(&text, &surge, &load)
}

#[test]
fn after_a_surge_naive_retries_stay_collapsed_and_a_budget_recovers() {
    // The simulator: collapsed to the end of the run without a budget;
    // recovered at 6 s with one.
    let naive = surge_run(false);
    let g = naive.goodput.as_ref().expect("goodput");
    // Arrivals are counted at their intended time: exact.
    let offered: Vec<u64> = g.per_second.iter().map(|s| s.offered).collect();
    assert_eq!(offered, [60, 60, 250, 250, 60, 60, 60, 60]);
    let v = g.verdict.as_ref().expect("verdict");
    assert_eq!(v.state, "collapsed", "{g:?}");
    assert_eq!(v.below_for_ms, 4000.0);
    // The queue stays full of work nobody waits for.
    let db = naive.service("db").unwrap();
    assert!(db.wasted > 100, "{} wasted", db.wasted);
    let late: u64 = g.per_second[5..].iter().map(|s| s.goodput).sum();
    assert!(late < 60, "{late} successes in the last 3 s");

    let budget = surge_run(true);
    let g = budget.goodput.as_ref().expect("goodput");
    let v = g.verdict.as_ref().expect("verdict");
    assert_eq!(v.state, "recovered", "{g:?}");
    let at = v.recovered_at_ms.expect("recovery time");
    assert!((5000.0..=7000.0).contains(&at), "recovered at {at} ms");
}

/// Recovered within 3 s of the surge's end (the simulator: 1 s without
/// retries, at once when expired work is dropped, 2 s behind a breaker).
fn assert_recovers(r: &RunReport) {
    let g = r.goodput.as_ref().expect("goodput");
    let v = g.verdict.as_ref().expect("verdict");
    assert_eq!(v.state, "recovered", "{g:?}");
    let at = v.recovered_at_ms.expect("recovery time");
    assert!(at <= 7000.0, "recovered at {at} ms");
}

#[test]
fn after_the_surge_no_retries_recover() {
    assert_recovers(&surge_variant(|t| {
        t.replace("max_attempts: 3", "max_attempts: 1")
    }));
}

#[test]
fn after_the_surge_dropping_expired_work_recovers() {
    assert_recovers(&surge_variant(|t| {
        t.replace("    latency: 0ms\n", "    latency: 0ms\n    deadline_propagation: true\n")
            .replace(
                "capacity: { workers: 2, queue: 50 }",
                "capacity: { workers: 2, queue: 50, drop_expired: true }\n    deadline_propagation: true",
            )
    }));
}

#[test]
fn after_the_surge_a_circuit_breaker_recovers() {
    assert_recovers(&surge_variant(|t| {
        t.replace(
            "jitter: full }\n",
            "jitter: full }\n        circuit_breaker: { failure_rate: 0.5, window: 1s, min_calls: 10, open_for: 500ms, open_jitter: 0.2 }\n",
        )
    }));
}
