//! Circuit breakers and hedging on real servers, against the simulator's
//! exact figures for the same scenario (a shorter, faster version of
//! `sim_breakers.rs`'s), within stated tolerances: real time moves the
//! boundaries of the open windows by a few milliseconds, and a stalled CI
//! machine more: a tolerance may take up to three runs to be met.

use crate::common;

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::{self, Topology};

fn topo(text: &str) -> Topology {
    topology::load_str(text, "t.yaml", "t", &Default::default()).expect("valid topology")
}

fn chaos_run(t: &Topology, fault: &str, load: &LoadSettings) -> RunReport {
    chaos_run_with(t, fault, load, false)
}

/// `baseline`: run a second time without the breakers, for what they saved.
fn chaos_run_with(t: &Topology, fault: &str, load: &LoadSettings, baseline: bool) -> RunReport {
    let s = faults::load(fault).expect("shipped");
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(2),
        breaker_baseline: baseline,
        ..RunOptions::default()
    };
    chaos::run_with(t, &s, load, &options).expect("run completes")
}

fn received(r: &RunReport, s: &str) -> u64 {
    r.service(s).map_or(0, |s| s.received)
}

/// web → db through a breaker: 10 calls at least, 50 %, open 1 s, 1 probe.
const BREAKER: &str = "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n      - to: db\n        timeout: 1s\n        circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 10, open_for: 1s, half_open_calls: 1 }\n  db: { latency: 0s }\n";

#[test]
fn a_breaker_over_a_total_outage_matches_the_simulator() {
    // 100 requests a second for 2 s, db answering 503 at once: the first 10
    // calls (0..90 ms) open it until 1090 ms, the probe then fails and opens
    // it until 2090 ms: 11 calls reach db in the simulator. Real time may
    // shift the probe by a request either way.
    let t = topo(BREAKER);
    let load = LoadSettings::new(
        Some(100.0),
        None,
        None,
        Some(Duration::from_secs(2)),
        Some(5),
    )
    .expect("load");
    let s = faults::load("total-outage").expect("shipped");
    let simulated = sim::run(&t, &s, &load, 1, Some(1)).expect("simulates");
    assert_eq!(received(&simulated, "db"), 11);
    assert_eq!(simulated.breakers.expect("simulated, too").saved, 200 - 11);
    common::within_three_runs(|| {
        let measured = chaos_run_with(&t, "total-outage", &load, true);
        let db = received(&measured, "db");
        // The same run without the breaker: every user request reaches db
        // once, so the breaker saved all but the calls it let through.
        let requests = measured.end_to_end.requests;
        assert_eq!(requests, 200);
        let saved = measured.breakers.expect("what the breaker saved");
        assert_eq!(saved.attempts, requests + db);
        assert_eq!(saved.attempts_without_breakers, 2 * requests);
        assert_eq!(saved.saved, requests - db);
        let b = measured.service("web").unwrap().calls[0].layers[0]
            .breaker
            .clone()
            .expect("breaker row");
        assert_eq!(b.opened, 2, "{b:?}");
        assert_eq!(b.half_opened, 1, "{b:?}");
        assert_eq!(b.short_circuited + db, measured.end_to_end.requests);
        let first = b.transitions.first().expect("a transition");
        assert_eq!(first.to, "open");
        if !(10..=13).contains(&db) {
            return Err(format!("db received {db}, the simulator 11"));
        }
        // The first opening is within a few ms of the simulator's 90 ms.
        if !(90.0..=140.0).contains(&first.at_ms) {
            return Err(format!("{first:?}"));
        }
        // Seeded: a second run lets the same calls through, give or take one.
        let again = received(&chaos_run(&t, "total-outage", &load), "db");
        if again.abs_diff(db) > 1 {
            return Err(format!("{db} then {again}"));
        }
        Ok(())
    });
}

#[test]
fn hedged_copies_on_real_servers() {
    let hedged = |method: &str, db: &str| {
        topo(&format!(
            "version: 1\nentry: web\nservices:\n  web:\n    latency: 0s\n    calls:\n      - to: db\n        method: {method}\n        timeout: 1s\n        hedging: {{ max_attempts: 3, delay: 50ms, non_fatal: [503] }}\n  db: {db}\n"
        ))
    };
    let load = LoadSettings::new(
        None,
        Some(1),
        Some(10),
        Some(Duration::from_secs(10)),
        Some(1),
    )
    .expect("load");
    // Every copy answered 503: all three go, exactly as in the simulator.
    let r = chaos_run(&hedged("GET", "{ latency: 0s }"), "total-outage", &load);
    assert_eq!(received(&r, "db"), 30);
    // A slow healthy POST (100 ms > 50 ms): a second copy per request, a
    // duplicate execution each, the second copy cancelled when the first
    // answers. Copy 3 is due at 100 ms, just as copy 1 answers: in virtual
    // time the answer comes first (20 at db), in real time the answer takes
    // a little longer than 100 ms and the third copy often goes too.
    let r = chaos_run(&hedged("POST", "{ latency: 100ms }"), "none", &load);
    assert_eq!(r.end_to_end.succeeded, 10);
    let db = received(&r, "db");
    assert!((20..=30).contains(&db), "{db}");
    let duplicates = r.service("db").unwrap().duplicates;
    assert_eq!(duplicates, db - 10);
    let h = r.service("web").unwrap().calls[0].layers[0]
        .hedging
        .clone()
        .expect("hedging row");
    // A third copy started as the first answers may be dropped before it
    // reaches db: the client counts it, db does not.
    assert!((db - 10..=20).contains(&h.hedges), "{h:?}, db {db}");
    assert!(h.cancelled >= 10, "{h:?}");
    assert!(r.end_to_end.latency_ms.p50 >= 100.0);
}

#[test]
fn the_cli_reports_what_breakers_saved_unless_told_to_run_once() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("chaos-breaker.yaml");
    std::fs::write(&path, BREAKER).unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrylint"))
            .args(["chaos", path.to_str().unwrap(), "--fault", "total-outage"])
            .args(["--clients", "1", "--requests", "20", "--format", "json"])
            .args(extra)
            .output()
            .expect("runs");
        assert!(
            out.status.code() == Some(0) || out.status.code() == Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    // One client, 20 requests back to back: the first 10 calls open the
    // breaker, which then stays open well past the run (1 s), so db sees
    // exactly 10; without the breaker it sees all 20.
    let with = run(&[]);
    let saved = &with["breakers"];
    assert_eq!(saved["attempts"], 20 + 10, "{saved}");
    assert_eq!(saved["attempts_without_breakers"], 20 + 20, "{saved}");
    assert_eq!(saved["saved"], 10, "{saved}");
    let once = run(&["--no-breaker-baseline"]);
    assert!(once.get("breakers").is_none(), "{once}");
    assert_eq!(once["services"].as_array().unwrap().len(), 2);
}
