//! Servers that queue, against queueing theory where it is exact: an M/M/c
//! queue's mean wait and utilisation (Erlang C), an M/M/1/K queue's
//! rejection rate, and wasted work counted exactly.

use std::time::Duration;

use retrylint::faults::{self, Scenario};
use retrylint::run::arrivals::Process;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology;

fn run(topology: &str, fault: &Scenario, load: &LoadSettings, trials: u32) -> RunReport {
    let t = topology::load_str(topology, "t.yaml", "t", &topology::Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"));
    sim::run(&t, fault, load, trials, None).expect("simulation runs")
}

fn poisson(rate: f64, seconds: u64) -> LoadSettings {
    LoadSettings {
        process: Process::Poisson,
        ..LoadSettings::new(
            Some(rate),
            None,
            None,
            Some(Duration::from_secs(seconds)),
            Some(11),
        )
        .expect("load")
    }
}

/// Erlang C: the probability that an arrival waits, for c servers offered
/// a = λ/μ erlangs.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut sum = 0.0;
    let mut term = 1.0;
    for k in 0..c {
        if k > 0 {
            term *= a / f64::from(k);
        }
        sum += term;
    }
    let top = term * a / f64::from(c) / (1.0 - a / f64::from(c));
    top / (sum + top)
}

#[test]
fn an_m_m_c_queue_waits_as_erlang_c_says() {
    // λ = 300/s, 4 workers of μ = 100/s (exponential, mean 10 ms): a = 3
    // erlangs, ρ = 0.75. Erlang C(4, 3) = 0.5094; mean wait C / (cμ − λ)
    // = 5.09 ms.
    let t = "version: 1\nentry: db\nservices:\n  db: { latency: { distribution: exponential, mean: 10ms }, capacity: { workers: 4, queue: 100000 } }\n";
    let r = run(t, &Scenario::none(), &poisson(300.0, 60), 20);
    let q = r.service("db").unwrap().queue.expect("queue row");
    let c = erlang_c(4, 3.0);
    assert!((c - 0.5094).abs() < 1e-3, "{c}");
    let want = c / (400.0 - 300.0) * 1e3;
    assert!(
        (q.mean_wait_ms - want).abs() <= 0.03 * want,
        "mean wait {} ms, Erlang C {want} ms",
        q.mean_wait_ms
    );
    assert!(
        (q.utilisation - 0.75).abs() <= 0.03 * 0.75,
        "{}",
        q.utilisation
    );
    assert_eq!(q.rejected, 0);
}

#[test]
fn an_m_m_1_k_queue_rejects_as_its_closed_form_says() {
    // One worker (μ = 100/s), room for 4 waiting: K = 5 in the system.
    // λ = 80/s, ρ = 0.8: P(full) = (1 − ρ) ρ^K / (1 − ρ^(K+1)) = 0.0888.
    let t = "version: 1\nentry: db\nservices:\n  db: { latency: { distribution: exponential, mean: 10ms }, capacity: { workers: 1, queue: 4 } }\n";
    let r = run(t, &Scenario::none(), &poisson(80.0, 60), 20);
    let db = r.service("db").unwrap();
    let q = db.queue.expect("queue row");
    let rho: f64 = 0.8;
    let want = (1.0 - rho) * rho.powi(5) / (1.0 - rho.powi(6));
    let got = q.rejected as f64 / db.received as f64;
    assert!(
        (got - want).abs() <= 0.03 * want,
        "rejected {got}, closed form {want}"
    );
    assert_eq!(db.statuses.get("503"), Some(&q.rejected));
    assert_eq!(q.max_depth, 4);
}

#[test]
fn work_served_after_the_caller_gave_up_is_counted_as_wasted() {
    // 10 requests 1 s apart into one worker with a 100 ms service time, at
    // 20 at once: web's 150 ms timeout gives up on all but the first two of
    // each burst... Simpler by hand: a burst of 4 requests at t = 0 (four
    // closed-loop clients, one request each) to a single worker, 100 ms
    // each; the caller waits 150 ms. Served at 0–100 (answered in time),
    // 100–200 (ends after the caller's 150 ms: wasted), 200–300 and 300–400
    // (wasted). Three served for nobody.
    let t = "version: 1\nentry: web\nservices:\n  web: { latency: 0s, calls: [ { to: db, timeout: 150ms } ] }\n  db: { latency: 100ms, capacity: { workers: 1, queue: 10 } }\n";
    let load = LoadSettings::new(None, Some(4), Some(4), None, Some(1)).unwrap();
    let r = run(t, &Scenario::none(), &load, 1);
    let db = r.service("db").unwrap();
    assert_eq!(db.wasted, 3);
    assert_eq!(r.end_to_end.succeeded, 1);
    // Dropping expired work instead: the deadline travels with the call.
    let t = t
        .replace(
            "web: { latency: 0s,",
            "web: { latency: 0s, deadline_propagation: true,",
        )
        .replace(
            "queue: 10 }",
            "queue: 10, drop_expired: true }, deadline_propagation: true",
        );
    let r = run(&t, &Scenario::none(), &load, 1);
    let db = r.service("db").unwrap();
    // Each waiting request carries web's 150 ms deadline and 100 ms of work:
    // it must start by 50 ms to finish in time. At 100 ms, when the first
    // worker is free, none of the three waiting can: all dropped unserved.
    assert_eq!(db.wasted, 0);
    assert_eq!(db.queue.unwrap().expired, 3);
    assert_eq!(db.statuses.get("504"), Some(&3));
}

#[test]
fn a_surge_fault_raises_the_offered_load_for_its_phase() {
    let t = "version: 1\nentry: db\nservices:\n  db: { latency: 1ms, capacity: { workers: 10, queue: 10 } }\n";
    let s = faults::load_str(
        "target: entry\nphases: [ { after: 2s, for: 1s, inject: { kind: surge, rate: 300 } } ]\n",
        "f.yaml",
    )
    .unwrap();
    let load = LoadSettings::new(
        Some(100.0),
        None,
        None,
        Some(Duration::from_secs(5)),
        Some(1),
    )
    .unwrap();
    let r = run(t, &s, &load, 1);
    let g = r.goodput.expect("goodput");
    let offered: Vec<u64> = g.per_second.iter().map(|s| s.offered).collect();
    assert_eq!(offered, [100, 100, 300, 100, 100]);
    assert_eq!(r.end_to_end.requests, 700);
    let v = g.verdict.expect("verdict");
    assert_eq!(v.state, "recovered");
    assert_eq!(v.recovered_at_ms, Some(3000.0));
}

/// `examples/surge.yaml` with `edit` applied, under the shipped `surge`
/// scenario at 600/s for 45 s, one seeded trial: (verdict, recovered at,
/// below for, successes, wasted at db, expired at db).
fn surge_variant(edit: impl Fn(String) -> String) -> (String, Option<f64>, f64, u64, u64, u64) {
    let text = edit(std::fs::read_to_string("examples/surge.yaml").unwrap());
    let t = topology::load_str(&text, "surge.yaml", "surge", &topology::Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"));
    let scenario = faults::load("surge").expect("shipped scenario");
    let load = LoadSettings::new(
        Some(600.0),
        None,
        None,
        Some(Duration::from_secs(45)),
        Some(7),
    )
    .unwrap();
    let r = sim::run(&t, &scenario, &load, 1, None).expect("simulation runs");
    let v = r
        .goodput
        .as_ref()
        .and_then(|g| g.verdict.clone())
        .expect("verdict");
    let db = r.service("db").unwrap();
    (
        v.state,
        v.recovered_at_ms,
        v.below_for_ms,
        r.end_to_end.succeeded,
        db.wasted,
        db.queue.as_ref().map_or(0, |q| q.expired),
    )
}

#[test]
fn after_a_surge_naive_retries_stay_collapsed_and_every_way_out_recovers() {
    // Naive: 600/s × 3 attempts > db's 1,000/s once every wait exceeds the
    // 200 ms timeout; the queue stays full of work nobody waits for, to the
    // end of the run (15 s after the surge).
    let naive = surge_variant(|t| t);
    assert_eq!(
        naive,
        ("collapsed".into(), None, 15_000.0, 12_343, 25_006, 0)
    );
    // The ways out, each with its exact figures for this seed.
    let no_retry = surge_variant(|t| t.replace("max_attempts: 3", "max_attempts: 1"));
    assert_eq!(
        no_retry,
        (
            "recovered".into(),
            Some(31_000.0),
            1_000.0,
            20_903,
            10_545,
            0
        )
    );
    let budget = surge_variant(|_| std::fs::read_to_string("examples/surge-budget.yaml").unwrap());
    assert_eq!(
        budget,
        (
            "recovered".into(),
            Some(32_000.0),
            2_000.0,
            20_277,
            11_480,
            0
        )
    );
    let breaker = surge_variant(|t| {
        t.replace(
            "          backoff: { kind: exponential, base: 20ms, cap: 200ms, jitter: full }\n",
            "          backoff: { kind: exponential, base: 20ms, cap: 200ms, jitter: full }\n        circuit_breaker: { failure_rate: 0.5, window: 1s, min_calls: 20, open_for: 1s, open_jitter: 0.2 }\n",
        )
    });
    assert_eq!(
        breaker,
        (
            "recovered".into(),
            Some(31_000.0),
            1_000.0,
            22_831,
            6_285,
            0
        )
    );
    // Dropping what can no longer finish in time: nothing is wasted, and
    // goodput holds through the surge.
    let drop_expired = surge_variant(|t| {
        t.replace("    latency: 1ms\n", "    latency: 1ms\n    deadline_propagation: true\n")
            .replace(
                "capacity: { workers: 10, queue: 500 }",
                "capacity: { workers: 10, queue: 500, drop_expired: true }\n    deadline_propagation: true",
            )
    });
    assert_eq!(
        drop_expired,
        ("recovered".into(), Some(30_000.0), 0.0, 39_754, 0, 6_246)
    );
}
