//! Retry budgets hold a total outage near their steady state, as `check`'s
//! `with_budgets` predicts (DESIGN, "Static analysis"; the SRE book, ch. 22:
//! a 10 % per-client budget with 3 attempts sends about 1.1× the load, not 3×).
//!
//! Load: open loop at 100 requests/s for 60 s of virtual time (6,000 user
//! requests), the database answering 503 to everything. A ratio budget allows
//! a retry while the retries in its 10 s window stay within 10 % of the
//! requests in it, so from the first second on it grants one retry per ten
//! requests: 1.1× per layer, minus a rounding at the start. Tolerance: 1 % of
//! the prediction (the only gap is the first retries that 10 % of a handful
//! of requests cannot pay for).

use std::time::Duration;

use retrylint::faults;
use retrylint::lint::{self, CliLevels, Config};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::{self, Topology};

fn load(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &topology::Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn with_budgets(t: &Topology, service: &str) -> f64 {
    let config = Config::resolve(t, &CliLevels::default()).expect("levels");
    lint::check(t, &config)
        .amplification
        .iter()
        .find(|r| r.service == service)
        .map(|r| r.with_budgets)
        .expect("row")
}

fn outage(t: &Topology) -> RunReport {
    let scenario = faults::load("total-outage").expect("shipped fault");
    let load = LoadSettings::new(
        Some(100.0),
        None,
        None,
        Some(Duration::from_secs(60)),
        Some(5),
    )
    .expect("valid load");
    sim::run(t, &scenario, &load, 3, None).expect("simulation runs")
}

fn measured(r: &RunReport, service: &str) -> f64 {
    let s = r.service(service).expect("row");
    assert_eq!(r.end_to_end.requests, 6000);
    s.received as f64 / r.end_to_end.requests as f64
}

fn assert_close(measured: f64, predicted: f64, tolerance: f64) {
    assert!(
        (measured - predicted).abs() <= tolerance * predicted,
        "measured {measured:.4}× vs predicted {predicted:.4}× (tolerance {:.0} %)",
        tolerance * 100.0
    );
}

#[test]
fn a_ten_percent_budget_holds_a_total_outage_at_about_1_1x() {
    let t = load(
        "version: 1\nentry: api\nservices:\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, budget: { kind: ratio, ratio: 0.1, min_per_second: 0, window: 10s } }\n  db: {}\n",
    );
    let predicted = with_budgets(&t, "db");
    assert!((predicted - 1.1).abs() < 1e-9, "{predicted}");
    let r = outage(&t);
    let m = measured(&r, "db");
    assert_close(m, predicted, 0.01);
    assert!(m <= 1.1 + 1e-9, "a budget never overspends: {m}");
    let call = &r.service("api").expect("api").calls[0].layers[0];
    assert_eq!(call.requests, 6000);
    assert!(call.budget_refusals > 5000, "{call:?}");
    // Without the budget the same outage sends max_attempts: 3×.
    let unbudgeted = load(
        "version: 1\nentry: api\nservices:\n  api: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 3 } } ] }\n  db: {}\n",
    );
    assert_eq!(measured(&outage(&unbudgeted), "db"), 3.0);
}

#[test]
fn budgets_at_every_layer_multiply_like_the_static_analysis() {
    // The SRE book's chain with its 10 % budget at each of three layers:
    // 1.1³ = 1.331× at the database instead of 3³ = 27×.
    let t = load(
        "version: 1\nentry: web\nservices:\n  web: { calls: [ { to: frontend, timeout: 30s, retry: sre-book } ] }\n  frontend: { latency: 2ms, calls: [ { to: backend, timeout: 10s, retry: sre-book } ] }\n  backend: { latency: 2ms, calls: [ { to: db, timeout: 2s, retry: sre-book } ] }\n  db: {}\n",
    );
    let r = outage(&t);
    for (service, layers) in [("frontend", 1), ("backend", 2), ("db", 3)] {
        let predicted = with_budgets(&t, service);
        assert!(
            (predicted - 1.1f64.powi(layers)).abs() < 1e-9,
            "{service}: {predicted}"
        );
        assert_close(measured(&r, service), predicted, 0.01);
    }
}

#[test]
fn token_buckets_run_dry_under_a_long_outage() {
    // AWS SDK standard mode: 500 tokens, 5 per retry — 100 retries, then none
    // (nothing succeeds to refill it): `with_budgets` counts 1×.
    let t = load(
        "version: 1\nentry: api\nservices:\n  api: { calls: [ { to: db, timeout: 1s, retry: aws-sdk-standard } ] }\n  db: {}\n",
    );
    assert_eq!(with_budgets(&t, "db"), 1.0);
    let r = outage(&t);
    assert_eq!(r.service("db").map(|s| s.received), Some(6100));
    assert_close(measured(&r, "db"), 1.0, 0.02);
}
