//! Under total failure at the leaf, the chaos harness measures exactly the
//! static worst case: every layer retries to exhaustion over real HTTP.

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology::{self, Topology};

fn topo(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &Default::default()).expect("valid topology")
}

fn run(t: &Topology, fault: &str, clients: u32, requests: u64) -> RunReport {
    let scenario = faults::load(fault).expect("shipped fault");
    let load = LoadSettings::new(
        None,
        Some(clients),
        Some(requests),
        Some(Duration::from_secs(20)),
        Some(7),
    )
    .expect("valid load");
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        ..RunOptions::default()
    };
    chaos::run_with(t, &scenario, &load, &options).expect("run completes")
}

const CHAIN: &str = "version: 1
entry: entry
services:
  entry:
    calls: [ { to: a, timeout: 2s, retry: { max_attempts: 4 } } ]
  a:
    calls: [ { to: b, timeout: 2s, retry: { max_attempts: 4 } } ]
  b:
    calls: [ { to: leaf, timeout: 2s, retry: { max_attempts: 4 } } ]
  leaf: {}
";

#[test]
fn leaf_down_chain_of_three_layers_sends_64_attempts_per_request() {
    let t = topo(CHAIN);
    let r = run(&t, "total-outage", 2, 6);
    assert_eq!(r.end_to_end.requests, 6);
    assert_eq!(r.end_to_end.failed, 6);
    let received: Vec<u64> = r.services.iter().map(|s| s.received).collect();
    assert_eq!(received, [6, 24, 96, 384], "entry, a, b, leaf");
    for s in &r.services {
        assert_eq!(
            s.amplification.measured, s.amplification.predicted,
            "{}: measured {} predicted {}",
            s.service, s.amplification.measured, s.amplification.predicted
        );
    }
    let leaf = r.service("leaf").expect("leaf row");
    assert_eq!(leaf.amplification.measured, 64.0);
    assert_eq!(leaf.statuses.get("503"), Some(&384));
    // The failure reaches every caller as a retryable 503.
    assert_eq!(
        r.service("entry").and_then(|s| s.statuses.get("503")),
        Some(&6)
    );
    let b = r.service("b").expect("b row");
    assert_eq!(b.calls[0].layers[0].attempts, 384);
    assert_eq!(b.calls[0].layers[0].retries, 288);
    assert_eq!(
        b.calls[0].layers[0].retries_by_reason.get("503"),
        Some(&288)
    );
}

#[test]
fn a_via_sidecar_multiplies_like_any_other_layer() {
    let t = topo(
        "version: 1
entry: app
services:
  app:
    calls:
      - to: api
        timeout: 2s
        retry: { max_attempts: 3 }
        via:
          - name: istio-sidecar
            timeout: 1s
            retry: { max_attempts: 3, retry_on: [connect, reset, 503] }
  api: {}
",
    );
    let r = run(&t, "total-outage", 1, 5);
    let api = r.service("api").expect("api row");
    assert_eq!(api.received, 45);
    assert_eq!(api.amplification.measured, 9.0);
    assert_eq!(api.amplification.predicted, 9.0);
    let layers = &r.service("app").expect("app row").calls[0].layers;
    assert_eq!(layers[0].layer, "app");
    assert_eq!(layers[0].attempts, 15);
    assert_eq!(layers[1].layer, "istio-sidecar");
    assert_eq!(layers[1].attempts, 45);
}

#[test]
fn fan_out_and_fan_in_measure_the_sum_over_all_paths() {
    // web → a (×2) and web → b (×3), a and b → db (×2 each), b → a too
    // (parallel with its db call): a receives 2 + 3 = 5 per request, db
    // 5·2 + 3·2 = 16 — every call is made although the first one failed.
    let t = topo(
        "version: 1
entry: web
services:
  web:
    calls:
      - { to: a, timeout: 2s, retry: { max_attempts: 2 } }
      - { to: b, timeout: 2s, retry: { max_attempts: 3 } }
  a:
    calls: [ { to: db, timeout: 2s, retry: { max_attempts: 2 } } ]
  b:
    calls:
      - { to: db, timeout: 2s, parallel: true, retry: { max_attempts: 2 } }
      - { to: a, timeout: 2s, parallel: true }
  db: {}
",
    );
    let r = run(&t, "total-outage", 1, 2);
    let received: Vec<u64> = r.services.iter().map(|s| s.received).collect();
    assert_eq!(received, [2, 10, 6, 32], "web, a, b, db");
    for s in &r.services {
        assert_eq!(
            s.amplification.measured, s.amplification.predicted,
            "{}",
            s.service
        );
    }
}
