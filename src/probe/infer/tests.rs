//! Inference on recorded runs written by hand: each field from the
//! arrivals a known client would make.

use super::*;
use crate::probe::record::Arrival;

fn arrival(at_ms: f64, hung_up_ms: Option<f64>, key: Option<&str>) -> Arrival {
    Arrival {
        at_ms,
        method: "POST".into(),
        path: "/".into(),
        connection: 1,
        peer_port: 40000,
        body_bytes: 0,
        idempotency_key: key.map(str::to_owned),
        notable_headers: Vec::new(),
        host: None,
        hung_up_ms,
    }
}

fn run(times: &[f64], exit: Exit, elapsed_ms: f64) -> RunRecord {
    RunRecord {
        refused_connects: None,
        url: "http://127.0.0.1:1/".into(),
        arrivals: times
            .iter()
            .map(|&t| arrival(t, None, Some("k1")))
            .collect(),
        exit,
        elapsed_ms,
        stderr_tail: String::new(),
        handshakes_failed: 0,
        handshake_error: None,
    }
}

fn scenario(name: &str, runs: Vec<RunRecord>) -> (Scenario, ScenarioRecord) {
    let s = Scenario::named(name).unwrap();
    let r = ScenarioRecord {
        bound_ms: None,
        name: name.into(),
        description: s.describe(),
        runs,
    };
    (s, r)
}

/// A client with 3 attempts, constant 100 ms backoff, a 1 s per-attempt
/// timeout, retrying 503 and timeouts but not 500, honouring Retry-After.
fn known_client() -> Vec<(Scenario, ScenarioRecord)> {
    let failing = |_| run(&[5.0, 105.5, 206.0], Exit::Code(1), 210.0);
    let hang = |_| RunRecord {
        refused_connects: None,
        arrivals: vec![
            arrival(5.0, Some(1005.0), None),
            arrival(1105.0, Some(2105.0), None),
            arrival(2205.0, Some(3205.0), None),
        ],
        ..run(&[], Exit::Code(28), 3210.0)
    };
    vec![
        scenario("503", (0..5).map(failing).collect()),
        scenario(
            "500",
            (0..5).map(|_| run(&[5.0], Exit::Code(1), 9.0)).collect(),
        ),
        scenario("hang", (0..5).map(hang).collect()),
        scenario(
            "503-retry-after",
            (0..5)
                .map(|_| run(&[5.0, 2006.0], Exit::Code(0), 2010.0))
                .collect(),
        ),
        scenario(
            "refused",
            (0..5).map(|_| run(&[], Exit::Code(7), 208.0)).collect(),
        ),
        scenario(
            "success-on-3",
            (0..5)
                .map(|_| run(&[5.0, 105.0, 205.0], Exit::Code(0), 209.0))
                .collect(),
        ),
    ]
}

fn cx() -> Context<'static> {
    Context {
        declared_method: None,
        bound: Duration::from_secs(20),
    }
}

#[test]
fn a_known_client_is_recovered_field_by_field() {
    let p = infer(&known_client(), &cx());
    assert_eq!(p.max_attempts.value, Some(3));
    assert_eq!(p.max_attempts.confidence, Confidence::High);
    assert_eq!(p.retries(Outcome::Status(503)), Some(true));
    assert_eq!(p.retries(Outcome::Status(500)), Some(false));
    assert_eq!(p.retries(Outcome::Timeout), Some(true));
    assert_eq!(p.retries(Outcome::Connect), Some(true), "{:#?}", p.retry_on);
    let f = p.backoff.as_ref().unwrap();
    assert_eq!(
        (f.kind, f.jitter),
        (crate::policy::BackoffKind::Constant, Jitter::None)
    );
    assert!((f.base_ms - 100.0).abs() < 1.0, "{f:#?}");
    assert_eq!(p.honor_retry_after.value, Some(true));
    assert_eq!(p.timeout_ms.value, Some(1000.0));
    assert_eq!(p.timeout_ms.confidence, Confidence::High);
    assert_eq!(p.method.value.as_deref(), Some("POST"));
    assert_eq!(p.stops_on_success.value, Some(true));
    let policy = p.to_policy();
    assert_eq!(
        policy.retry_on.0,
        [
            Condition::Timeout,
            Condition::Connect,
            Condition::Status(503)
        ]
    );
    assert_eq!(p.timeout(), Some(Duration::from_secs(1)));
}

#[test]
fn a_kill_at_the_time_bound_is_not_a_timeout() {
    let killed = RunRecord {
        refused_connects: None,
        arrivals: vec![arrival(5.0, Some(20_000.0), None)],
        ..run(&[], Exit::TimedOut, 20_001.0)
    };
    let p = infer(&[scenario("hang", vec![killed])], &cx());
    assert_eq!(p.timeout_ms.value, None);
    assert!(
        p.timeout_ms.evidence.contains("no per-attempt timeout"),
        "{}",
        p.timeout_ms.evidence
    );
    assert!(
        p.notes.iter().any(|n| n.contains("killed")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_new_key_per_attempt_is_no_idempotency_key() {
    let mut r = run(&[5.0, 105.0], Exit::Code(1), 110.0);
    r.arrivals[1].idempotency_key = Some("k2".into());
    let p = infer(&[scenario("503", vec![r.clone(), r])], &cx());
    assert_eq!(p.idempotency_key.value, Some(false));
    assert!(
        p.idempotency_key
            .evidence
            .contains("changes between attempts")
    );
    let same = run(&[5.0, 105.0], Exit::Code(1), 110.0);
    let p = infer(&[scenario("503", vec![same.clone(), same])], &cx());
    assert_eq!(p.idempotency_key.value, Some(true));
}

#[test]
fn retry_after_ignored_and_undetermined() {
    let ignoring = infer(
        &[
            scenario(
                "503",
                (0..3)
                    .map(|_| run(&[5.0, 105.0], Exit::Code(1), 110.0))
                    .collect(),
            ),
            scenario(
                "503-retry-after",
                (0..3)
                    .map(|_| run(&[5.0, 106.0], Exit::Code(0), 110.0))
                    .collect(),
            ),
        ],
        &cx(),
    );
    assert_eq!(ignoring.honor_retry_after.value, Some(false));
    // Its own wait (3 s) is longer than the header's 2 s: nothing to see.
    let slow = infer(
        &[
            scenario(
                "503",
                (0..3)
                    .map(|_| run(&[5.0, 3005.0], Exit::Code(1), 3010.0))
                    .collect(),
            ),
            scenario(
                "503-retry-after",
                (0..3)
                    .map(|_| run(&[5.0, 3006.0], Exit::Code(0), 3010.0))
                    .collect(),
            ),
        ],
        &cx(),
    );
    assert_eq!(slow.honor_retry_after.value, None);
    assert!(slow.honor_retry_after.evidence.contains("as long"));
}

#[test]
fn no_retry_at_all() {
    let p = infer(
        &[
            scenario(
                "503",
                (0..3).map(|_| run(&[5.0], Exit::Code(1), 9.0)).collect(),
            ),
            scenario(
                "refused",
                (0..3).map(|_| run(&[], Exit::Code(7), 8.0)).collect(),
            ),
        ],
        &cx(),
    );
    assert_eq!(p.max_attempts.value, Some(1));
    assert!(p.backoff.is_none());
    assert!(!p.to_policy().retries());
    // Without waits, a closed port cannot show a retry.
    assert_eq!(p.retries(Outcome::Connect), None);
}

#[test]
fn durations_are_rounded_to_two_digits() {
    assert_eq!(round_sig(98.7), 99.0);
    assert_eq!(round_sig(1003.0), 1000.0);
    assert_eq!(round_sig(1250.0), 1300.0);
    assert_eq!(round_sig(0.123), 0.12);
    assert_eq!(round_sig(0.0), 0.0);
}

#[test]
fn a_flood_of_attempts_is_fitted_on_its_first_retries_only() {
    // A client retrying 20,000 times, 100 ms apart, in each of two runs:
    // inference goes through every attempt once, fits the first retries,
    // and its texts stay the size of a few retries.
    const N: usize = 20_000;
    let times: Vec<f64> = (0..N).map(|i| 5.0 + i as f64 * 100.0).collect();
    let flood = || run(&times, Exit::Code(1), 5.0 + 100.0 * N as f64);
    let records = vec![scenario("503", vec![flood(), flood()])];
    let p = infer(&records, &cx());
    assert_eq!(p.max_attempts.value, Some(N as u32));
    let f = p.backoff.as_ref().expect("a fit");
    assert_eq!(f.per_retry.len(), fit::MAX_FITTED_RETRIES);
    assert_eq!(f.nominal_ms.len(), fit::MAX_FITTED_RETRIES);
    assert_eq!(f.kind, crate::policy::BackoffKind::Constant);
    let unfitted = 2 * (N - 1 - fit::MAX_FITTED_RETRIES);
    assert!(
        p.notes.iter().any(|n| n.contains(&format!(
            "{unfitted} waits after retry {} are not fitted",
            fit::MAX_FITTED_RETRIES
        ))),
        "{:?}",
        p.notes
    );
    let text: usize = [
        &f.kind_evidence,
        &f.jitter_evidence,
        &p.max_attempts.evidence,
    ]
    .iter()
    .map(|s| s.len())
    .sum();
    assert!(text < 2_000, "{text} bytes of evidence");
}

#[test]
fn counted_refusals_go_by_the_majority_and_a_split_is_unknown() {
    let verdict = |counts: &[u32]| {
        let mut records = known_client();
        let refused = records
            .iter_mut()
            .find(|(s, _)| s.name == "refused")
            .unwrap();
        refused.1.runs = counts
            .iter()
            .map(|&c| RunRecord {
                refused_connects: Some(c),
                ..run(&[], Exit::Code(7), 9.0)
            })
            .collect();
        let p = infer(&records, &cx());
        let v = p.retry_on.iter().find(|v| v.scenario == "refused").unwrap();
        (
            p.retries(Outcome::Connect),
            v.confidence,
            v.evidence.clone(),
        )
    };
    // A stray SYN in one run of five (seen on the 2-core CI machine) is noise.
    let (retried, confidence, evidence) = verdict(&[1, 2, 1, 1, 1]);
    assert_eq!((retried, confidence), (Some(false), Confidence::Medium));
    assert!(evidence.contains("1 of 5 runs disagree"), "{evidence}");
    assert_eq!(verdict(&[4, 4, 4, 4, 4]).0, Some(true));
    assert_eq!(verdict(&[4, 4, 4, 4, 4]).1, Confidence::High);
    assert_eq!(verdict(&[1, 1, 1]).1, Confidence::High);
    assert_eq!(verdict(&[1, 2, 1, 2]).0, None);
    assert_eq!(verdict(&[1, 2, 2, 1, 2]).1, Confidence::Low);
}
