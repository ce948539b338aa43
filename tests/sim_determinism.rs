//! A simulation is a pure function of its inputs: the same seed gives
//! byte-identical JSON, and the number of threads changes nothing (trial i
//! always runs with seed + i; threads return integer sums, mergeable
//! histograms and per-trial figures tagged with their index).

use std::time::Duration;

use retrylint::faults;
use retrylint::formats::run::json as run_json;
use retrylint::run::LoadSettings;
use retrylint::sim;
use retrylint::topology::{self, Topology};

fn ecommerce() -> Topology {
    topology::load(
        std::path::Path::new("examples/ecommerce.yaml"),
        &topology::Presets::embedded(),
    )
    .expect("example loads")
}

/// A stochastic run: latency spreads, jitter, a 20 % brownout rolled per
/// request, budgets, a deadline, a sidecar and a POST retried by it.
fn json(seed: u64, threads: usize, fault: &str) -> String {
    let t = ecommerce();
    let scenario = faults::load(fault).expect("shipped fault");
    let load = LoadSettings::new(
        Some(100.0),
        None,
        None,
        Some(Duration::from_secs(2)),
        Some(seed),
    )
    .expect("valid load");
    let r = sim::run(&t, &scenario, &load, 8, Some(threads)).expect("simulation runs");
    run_json::render(&r)
}

#[test]
fn the_same_seed_gives_byte_identical_json() {
    let a = json(42, 2, "brownout");
    assert_eq!(a, json(42, 2, "brownout"));
    assert_ne!(a, json(43, 2, "brownout"), "another seed, other draws");
    assert!(a.contains("\"mode\": \"simulate\""));
    assert!(a.contains("\"received_quantiles\""));
    assert!(a.contains("\"all_succeeded_ratio\""));
}

#[test]
fn the_thread_count_changes_nothing() {
    for fault in ["brownout", "connection-reset", "latency-spike", "overload"] {
        let one = json(7, 1, fault);
        assert_eq!(one, json(7, 2, fault), "{fault}: 1 vs 2 threads");
        assert_eq!(one, json(7, 3, fault), "{fault}: 1 vs 3 threads");
    }
}

#[test]
fn trial_i_is_seed_plus_i() {
    // Trials 1.. of seed 6 are trials 0.. of seed 7: the last of two trials
    // from seed 6 is the single trial of seed 7.
    let t = ecommerce();
    let scenario = faults::load("brownout").expect("shipped fault");
    let run = |seed, trials| {
        let load = LoadSettings::new(
            Some(100.0),
            None,
            None,
            Some(Duration::from_secs(2)),
            Some(seed),
        )
        .expect("valid load");
        sim::run(&t, &scenario, &load, trials, Some(1)).expect("simulation runs")
    };
    let single = run(7, 1);
    let pair = run(6, 2);
    let first = run(6, 1);
    for ((s, p), f) in single
        .services
        .iter()
        .zip(&pair.services)
        .zip(&first.services)
    {
        let q = p.received_quantiles.expect("spread");
        // The lower median of two trials is the smaller, p90 the larger.
        assert_eq!(q.p10, s.received.min(f.received) as f64, "{}", s.service);
        assert_eq!(
            q.mean,
            (s.received + f.received) as f64 / 2.0,
            "{}",
            s.service
        );
    }
}
