//! The same seed gives the same run: fault dice and work-time draws belong to
//! the request, not to whichever request happened to arrive first.

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology;

const TOPOLOGY: &str = "version: 1
entry: api
client: { timeout: 2s, retry: { max_attempts: 2, retry_on: [5xx] } }
services:
  api:
    latency: { p50: 1ms, p99: 3ms }
    calls:
      - { to: a, timeout: 1s, retry: { max_attempts: 3, retry_on: [5xx, reset] }, parallel: true }
      - { to: b, timeout: 1s, retry: { max_attempts: 3, retry_on: [5xx, reset] }, parallel: true }
  a: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 2, retry_on: [5xx] } } ] }
  b: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 2, retry_on: [5xx] } } ] }
  db: { latency: { p50: 1ms, p99: 2ms } }
";

const FAULT: &str = "target: all
phases:
  - inject: { kind: status, status: 503, ratio: 0.3 }
";

/// One service's row: its name, requests received and status counts.
type Row = (String, u64, Vec<(String, u64)>);

/// Every service's row for a run with `seed`.
fn run(seed: u64) -> Vec<Row> {
    let t = topology::load_str(TOPOLOGY, "t.yaml", "t", &Default::default()).expect("topology");
    let s = faults::load_str(FAULT, "f.yaml").expect("fault");
    // Eight clients interleave differently on every run.
    let load = LoadSettings::new(
        None,
        Some(8),
        Some(60),
        Some(Duration::from_secs(30)),
        Some(seed),
    )
    .expect("load");
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        ..RunOptions::default()
    };
    let r: RunReport = chaos::run_with(&t, &s, &load, &options).expect("run");
    assert_eq!(r.end_to_end.requests, 60);
    r.services
        .iter()
        .map(|s| {
            (
                s.service.clone(),
                s.received,
                s.statuses.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            )
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_counts_and_another_seed_does_not() {
    let first = run(7);
    assert_eq!(run(7), first);
    assert_ne!(run(8), first);
    // 30 % of attempts fail at every service: retries happened everywhere.
    let received = |name: &str| first.iter().find(|s| s.0 == name).map(|s| s.1);
    assert!(received("api").is_some_and(|n| n > 60), "{first:?}");
    assert!(received("db").is_some_and(|n| n > 120), "{first:?}");
}
