//! The probe's three formats, snapshotted on recorded runs written by hand
//! (a POST client with 3 attempts and 100/200 ms waits that retries 503 and
//! timeouts, ignores Retry-After and sends no idempotency key), so the
//! output does not depend on a machine's timing.

use std::time::Duration;

use retrylint::formats;
use retrylint::probe::{
    self, Arrival, ClientCommand, Exit, ProbeOptions, RunRecord, Scenario, ScenarioRecord,
};

fn arrival(at_ms: f64, hung_up_ms: Option<f64>) -> Arrival {
    Arrival {
        at_ms,
        method: "POST".into(),
        path: "/orders".into(),
        connection: 1,
        peer_port: 40000,
        body_bytes: 7,
        idempotency_key: None,
        notable_headers: Vec::new(),
        host: None,
        hung_up_ms,
    }
}

fn runs(times: &[f64], exit: Exit, elapsed_ms: f64) -> Vec<RunRecord> {
    (0..3)
        .map(|i| RunRecord {
            refused_connects: None,
            url: format!("http://127.0.0.1:{}/", 40100 + i),
            arrivals: times
                .iter()
                .map(|&t| arrival(t + f64::from(i) * 0.5, None))
                .collect(),
            exit,
            elapsed_ms,
            stderr_tail: String::new(),
            handshakes_failed: 0,
            handshake_error: None,
        })
        .collect()
}

fn record(name: &str, runs: Vec<RunRecord>) -> ScenarioRecord {
    ScenarioRecord {
        bound_ms: None,
        name: name.into(),
        description: Scenario::named(name).unwrap().describe(),
        runs,
    }
}

fn sample() -> probe::ProbeReport {
    let hang = (0..3)
        .map(|_| RunRecord {
            refused_connects: None,
            url: "http://127.0.0.1:40200/".into(),
            arrivals: vec![
                arrival(4.0, Some(504.0)),
                arrival(604.0, Some(1104.0)),
                arrival(1304.0, Some(1804.0)),
            ],
            exit: Exit::Code(28),
            elapsed_ms: 1806.0,
            stderr_tail: String::new(),
            handshakes_failed: 0,
            handshake_error: None,
        })
        .collect();
    let records = vec![
        record("503", runs(&[4.0, 104.0, 304.0], Exit::Code(22), 306.0)),
        record("500", runs(&[4.0], Exit::Code(22), 6.0)),
        record("hang", hang),
        record("503-retry-after", runs(&[4.0, 104.0], Exit::Code(0), 106.0)),
    ];
    let cmd =
        ClientCommand::from_argv(&["shop-cli".into(), "order".into(), "{url}".into()]).unwrap();
    let options = ProbeOptions {
        runs: 3,
        bound: Duration::from_secs(20),
        ..ProbeOptions::default()
    };
    probe::assemble(&cmd, &options, records, Duration::from_millis(2345))
}

#[test]
fn table() {
    insta::assert_snapshot!(formats::probe::table::render(&sample()));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(formats::probe::markdown::render(&sample()));
}

#[test]
fn json() {
    let text = formats::probe::json::render(&sample());
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    insta::assert_json_snapshot!(v["policy"]["max_attempts"], @r#"
    {
      "confidence": "high",
      "evidence": "attempts per run where failures were retried — 503: 3, hang: 3",
      "value": 3
    }
    "#);
    assert_eq!(v["version"], 1);
    assert_eq!(v["command"][0], "shop-cli");
    assert_eq!(v["scenarios"].as_array().unwrap().len(), 4);
    assert_eq!(v["policy"]["honor_retry_after"]["value"], false);
    assert_eq!(v["policy"]["timeout_ms"]["value"], 500.0);
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    // No cap shows within two waits: the probe invents none, and RL014 is
    // not checked (a finding from absence of evidence), which it says.
    assert_eq!(codes, ["RL003", "RL004", "RL010"]);
    assert_eq!(v["unchecked_rules"][0]["code"], "RL014");
    assert_eq!(
        v["snippet"],
        "- to: SERVICE\n  method: POST\n  timeout: 500ms\n  retry:\n    max_attempts: 3\n    backoff: { kind: exponential, base: 100ms, multiplier: 2, jitter: none }\n    # low confidence: a reading of median waits 100/200 ms, not a schedule the runs fix; take the client's own setting where you know it\n    # cap: not reached within the waits seen (longest 200 ms); add the client's cap if it has one\n    retry_on: [timeout, 503]\n    honor_retry_after: false\n"
    );
}
