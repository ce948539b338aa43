//! The simulator's work budget: runs that would never finish or would take
//! the machine's memory are refused up front with an exact estimate and the
//! flags that make them fit; runs that fit are unchanged.

use std::time::Duration;

use retrylint::faults;
use retrylint::run::LoadSettings;
use retrylint::sim::{self, SimError, SimOptions, WorkBudget};
use retrylint::topology::{self, Topology};

fn topo(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &topology::Presets::embedded()).expect("valid")
}

/// A chain of `n + 1` services, each calling the next with 3 attempts.
fn chain(n: usize) -> Topology {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..n {
        y += &format!(
            "  s{i}: {{ calls: [ {{ to: s{}, timeout: 1s, retry: {{ max_attempts: 3 }} }} ] }}\n",
            i + 1
        );
    }
    y += &format!("  s{n}: {{}}\n");
    topo(&y)
}

fn refusal(t: &Topology, fault: &str, load: &LoadSettings, options: &SimOptions) -> String {
    let s = faults::load(fault).expect("shipped");
    match sim::run_with(t, &s, load, options) {
        Err(SimError::OverBudget(e)) => e.to_string(),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.end_to_end)),
    }
}

#[test]
fn a_storm_no_flag_can_fit_is_refused_with_its_size() {
    // 31 services, 3 attempts a hop, every call failing at once: one user
    // request makes 3⁰ + 3¹ + … + 3³⁰ = (3³¹ − 1) / 2 attempts.
    let t = chain(30);
    let load = LoadSettings::default();
    let per_request = (3f64.powi(31) - 1.0) / 2.0;
    let s = faults::load("total-outage").expect("shipped");
    let e = sim::estimate(&t, &s, &load, &SimOptions::default()).expect("estimate");
    assert_eq!(e.attempts_per_user, per_request);
    assert_eq!(e.users, 100.0, "20/s for 5 s");
    assert_eq!(e.attempts, per_request * 100.0 * 100.0);
    let msg = refusal(&t, "total-outage", &load, &SimOptions::default());
    assert!(msg.contains("about 3.09e18 attempts"), "{msg}");
    assert!(msg.contains("3.09e14 per user request"), "{msg}");
    assert!(msg.contains("no flag makes it fit"), "{msg}");
}

#[test]
fn the_refusal_names_the_flags_that_fit_and_they_do() {
    let t = topo(
        "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b, timeout: 1s, retry: { max_attempts: 4 } } ] }\n  b: {}\n",
    );
    // Total outage: 1 + 4 attempts per request, 20/s for 5 s, 100 trials:
    // 50,000 attempts. A budget of 10,000 fits 20 trials, or 20 requests.
    let load = LoadSettings::default();
    let options = SimOptions {
        budget: WorkBudget {
            attempts: 10_000,
            ..WorkBudget::DEFAULT
        },
        threads: Some(1),
        ..SimOptions::default()
    };
    let msg = refusal(&t, "total-outage", &load, &options);
    assert!(
        msg.starts_with("this simulation needs about 50000 attempts (5 per user request × 100 user requests × 100 trials), over the budget of 10000 (--budget)"),
        "{msg}"
    );
    assert!(
        msg.contains("--trials 20, or --requests 20, or --budget 50000"),
        "{msg}"
    );
    let s = faults::load("total-outage").expect("shipped");
    let fewer_trials = SimOptions {
        trials: 20,
        ..options.clone()
    };
    let r = sim::run_with(&t, &s, &load, &fewer_trials).expect("fits");
    assert_eq!(r.service("b").map(|b| b.received), Some(400));
    let fewer_requests = LoadSettings::new(None, None, Some(20), None, None).expect("load");
    let r = sim::run_with(&t, &s, &fewer_requests, &options).expect("fits");
    assert_eq!(r.service("b").map(|b| b.received), Some(80));
}

#[test]
fn loads_nothing_bounds_are_refused_before_any_work() {
    let t = chain(3);
    let options = SimOptions::default();
    for load in [
        LoadSettings::new(None, Some(1_000_000), None, None, None),
        LoadSettings::new(Some(1e12), None, None, None, None),
        LoadSettings::new(
            None,
            None,
            None,
            Some(Duration::from_secs(360_000_000)),
            None,
        ),
    ] {
        let msg = refusal(&t, "503-burst", &load.expect("load"), &options);
        assert!(msg.contains("to make it fit: --requests"), "{msg}");
    }
    let closed_forever = LoadSettings::new(None, Some(2), None, None, None)
        .expect("load")
        .in_virtual_time();
    let _ = closed_forever;
}

#[test]
fn a_million_trials_of_a_big_topology_is_refused_for_its_memory() {
    let t = chain(3);
    let load = LoadSettings::new(None, None, Some(1), None, None).expect("load");
    let options = SimOptions {
        trials: 100_000_000,
        budget: WorkBudget {
            attempts: u64::MAX,
            ..WorkBudget::DEFAULT
        },
        ..SimOptions::default()
    };
    let msg = refusal(&t, "none", &load, &options);
    assert!(msg.contains("MiB of memory"), "{msg}");
    assert!(msg.contains("fewer --trials"), "{msg}");
}
