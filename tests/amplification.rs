//! The literature's figures, exactly, and the analysis at scale.

use crate::common;

use std::fmt::Write as _;

/// A chain of `layers` calls with `attempts` each, entry s0.
fn chain(layers: usize, attempts: u32) -> String {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..layers {
        writeln!(
            y,
            "  s{i}:\n    calls:\n      - to: s{}\n        timeout: 1s\n        retry: {{ max_attempts: {attempts} }}",
            i + 1
        )
        .unwrap();
    }
    writeln!(y, "  s{layers}: {{}}").unwrap();
    y
}

#[test]
fn three_layers_of_four_attempts_send_64_to_the_database() {
    let t = common::load(&chain(3, 4)).unwrap();
    let r = common::check(&t);
    let got: Vec<f64> = (0..4)
        .map(|i| common::amplification(&r, &format!("s{i}")))
        .collect();
    assert_eq!(got, [1.0, 4.0, 16.0, 64.0]);
}

#[test]
fn five_layers_of_three_attempts_send_243() {
    let t = common::load(&chain(5, 3)).unwrap();
    let r = common::check(&t);
    assert_eq!(common::amplification(&r, "s5"), 243.0);
}

#[test]
fn shipped_examples_match_the_literature() {
    let r = common::check(&common::load_file("examples/sre-book.yaml"));
    assert_eq!(common::amplification(&r, "db"), 64.0);
    let r = common::check(&common::load_file("examples/aws-five-layers.yaml"));
    assert_eq!(common::amplification(&r, "s6"), 243.0);
}

#[test]
fn an_app_retrying_three_times_through_istio_default_sends_nine() {
    let t = common::load(
        "version: 1\nservices:\n  app:\n    calls:\n      - to: api\n        timeout: 1s\n        retry: { max_attempts: 3 }\n        via:\n          - name: istio-sidecar\n            retry: istio-default\n  api: {}\n",
    )
    .unwrap();
    let r = common::check(&t);
    assert_eq!(common::amplification(&r, "api"), 9.0);
    let r = common::check(&common::load_file("examples/sidecar.yaml"));
    assert_eq!(common::amplification(&r, "api"), 9.0);
}

#[test]
fn the_client_layer_multiplies_too() {
    let y = "version: 1\nclient: { timeout: 5s, retry: { max_attempts: 4 } }\nservices:\n  web: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 4 } } ] }\n  db: {}\n";
    let r = common::check(&common::load(y).unwrap());
    assert_eq!(common::amplification(&r, "web"), 4.0);
    assert_eq!(common::amplification(&r, "db"), 16.0);
}

#[test]
fn fan_in_adds_paths() {
    // web calls a and b; both call db with 2 attempts; web's calls try 3 times.
    let y = "version: 1\nservices:\n  web:\n    calls:\n      - { to: a, timeout: 1s, retry: { max_attempts: 3 } }\n      - { to: b, timeout: 1s, retry: { max_attempts: 3 } }\n  a: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 2 } } ] }\n  b: { calls: [ { to: db, timeout: 1s, retry: { max_attempts: 2 } } ] }\n  db: {}\n";
    let r = common::check(&common::load(y).unwrap());
    assert_eq!(common::amplification(&r, "db"), 12.0);
}

#[test]
fn budgets_bound_the_steady_state() {
    // Three layers of 3 attempts with a 10 % ratio budget each: 1.1³.
    let budget = "{ kind: ratio, ratio: 0.1 }";
    let y = format!(
        "version: 1\nservices:\n  a: {{ calls: [ {{ to: b, timeout: 1s, retry: {{ max_attempts: 3, budget: {budget} }} }} ] }}\n  b: {{ calls: [ {{ to: c, timeout: 1s, retry: {{ max_attempts: 3, budget: {budget} }} }} ] }}\n  c: {{ calls: [ {{ to: d, timeout: 1s, retry: {{ max_attempts: 3, budget: {budget} }} }} ] }}\n  d: {{}}\n"
    );
    let r = common::check(&common::load(&y).unwrap());
    let d = r.amplification.iter().find(|a| a.service == "d").unwrap();
    assert_eq!(d.worst_case, 27.0);
    assert!((d.with_budgets - 1.331).abs() < 1e-9, "{}", d.with_budgets);
    // Token buckets and gRPC throttling run dry under a total outage: 1 each.
    let y = "version: 1\nservices:\n  a: { calls: [ { to: b, timeout: 1s, retry: aws-sdk-standard } ] }\n  b: { calls: [ { to: c, timeout: 1s, retry: grpc-a6-example } ] }\n  c: {}\n";
    let r = common::check(&common::load(y).unwrap());
    let c = r.amplification.iter().find(|a| a.service == "c").unwrap();
    assert_eq!((c.worst_case, c.with_budgets), (12.0, 1.0));
}

/// A ladder of `n` diamonds: 2ⁿ paths from top to bottom.
pub fn diamond_ladder(n: usize) -> String {
    let mut y = String::from("version: 1\nentry: d0\nservices:\n");
    for i in 0..n {
        writeln!(
            y,
            "  d{i}:\n    calls:\n      - {{ to: l{i}, timeout: 1s }}\n      - {{ to: r{i}, timeout: 1s }}\n  l{i}: {{ calls: [ {{ to: d{j}, timeout: 1s }} ] }}\n  r{i}: {{ calls: [ {{ to: d{j}, timeout: 1s }} ] }}",
            j = i + 1
        )
        .unwrap();
    }
    writeln!(y, "  d{n}: {{}}").unwrap();
    y
}

#[test]
fn a_ladder_of_64_diamonds_has_2_to_the_64_paths_and_is_exact() {
    let t = common::load(&diamond_ladder(64)).unwrap();
    let r = common::check(&t);
    let bottom = r.amplification.iter().find(|a| a.service == "d64").unwrap();
    assert_eq!(bottom.worst_case_exact, (1u128 << 64).to_string());
    assert!(!bottom.saturated);
    assert_eq!(bottom.worst_case, 2f64.powi(64));
}

#[test]
fn counts_saturate_instead_of_overflowing() {
    // 200 diamonds: 2²⁰⁰ paths overflow u128; the figure saturates and says so.
    let t = common::load(&diamond_ladder(200)).unwrap();
    let r = common::check(&t);
    let bottom = r
        .amplification
        .iter()
        .find(|a| a.service == "d200")
        .unwrap();
    assert!(bottom.saturated);
    assert_eq!(bottom.worst_case_exact, u128::MAX.to_string());
    assert_eq!(bottom.worst_case, 2f64.powi(200));
    assert!(
        r.findings
            .iter()
            .any(|f| f.code == "RL001" && f.message.contains("more than"))
    );
}

#[test]
fn worst_case_response_time_sums_attempts_and_waits() {
    // api → db: 3 attempts of min(100ms, db's 40ms) + waits 10 + 20 = 150ms, plus api's 5ms.
    let y = "version: 1\nservices:\n  web: { calls: [ { to: api, timeout: 1s } ] }\n  api:\n    latency: 5ms\n    calls:\n      - to: db\n        timeout: 100ms\n        retry: { max_attempts: 3, backoff: { kind: exponential, base: 10ms, cap: 1s, jitter: full } }\n  db: { latency: { p50: 10ms, p99: 40ms } }\n";
    let r = common::check(&common::load(y).unwrap());
    let api = r.amplification.iter().find(|a| a.service == "api").unwrap();
    assert!(
        (api.worst_response_ms - 155.0).abs() < 1e-6,
        "{}",
        api.worst_response_ms
    );
}

#[test]
fn the_design_documents_own_example_loads_and_multiplies() {
    // DESIGN.md's schema example, copied verbatim (`jitter_ratio` beside
    // `jitter: full` included): client 4 × app 3 × istio-default 3 = 36 at
    // api, × 4 SDK attempts = 144 at db. With budgets the app's 10 % ratio
    // counts 1.1 and the SDK's token bucket 1.
    let t = common::load_file("tests/fixtures/design-example.yaml");
    let r = common::check(&t);
    let rows: Vec<(String, f64, f64)> = r
        .amplification
        .iter()
        .map(|a| {
            let budgets = (a.with_budgets * 1000.0).round() / 1000.0;
            (a.service.clone(), a.worst_case, budgets)
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("web".to_owned(), 4.0, 4.0),
            ("api".to_owned(), 36.0, 13.2),
            ("db".to_owned(), 144.0, 13.2),
        ]
    );
    // RL001 names the service the attempts reach, and the call it blames.
    let rl001: Vec<(String, String)> = r
        .findings
        .iter()
        .filter(|f| f.code == "RL001")
        .map(|f| {
            let call = f.call.as_ref().expect("a blamed call");
            (f.service.clone(), format!("{}→{}", call.from, call.to))
        })
        .collect();
    assert_eq!(
        rl001,
        [
            ("api".to_owned(), "web→api".to_owned()),
            ("db".to_owned(), "api→db".to_owned())
        ]
    );
}
