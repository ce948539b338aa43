//! Large topologies are ordinary input: 10,000 services (~6 MB) load and check.

mod common;
#[path = "common/generate.rs"]
mod generate;

#[test]
fn ten_thousand_services_load_and_check() {
    let text = generate::random_dag(10_000, 3, 7);
    assert!(text.len() > 5_000_000, "{} bytes", text.len());
    let t = common::load(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.services.len(), 10_000);
    let calls = t.calls().count();
    assert!((25_000..=30_000).contains(&calls), "{calls} calls");
    let report = common::check(&t);
    assert_eq!(report.amplification.len(), 10_000);
    // The defaults anchor merged into every service arrived.
    assert_eq!(t.services[9_999].latency.p99.as_millis(), 20);
    assert!(report.amplification.iter().all(|a| a.reachable));
}

#[test]
fn a_chain_of_ten_thousand_does_not_overflow_the_stack() {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..10_000 {
        y.push_str(&format!(
            "  s{i}: {{ calls: [ {{ to: s{}, timeout: 1s }} ] }}\n",
            i + 1
        ));
    }
    y.push_str("  s10000: {}\n");
    let t = common::load(&y).unwrap();
    let r = common::check(&t);
    assert_eq!(common::amplification(&r, "s10000"), 1.0);
    // And a cycle at the end of it is found and named.
    let y = y.replace("  s10000: {}\n", "  s10000: { calls: [ { to: s9999 } ] }\n");
    let e = common::load(&y).unwrap_err();
    assert!(
        e.message.ends_with("s9999 → s10000 → s9999"),
        "{}",
        e.message
    );
}
