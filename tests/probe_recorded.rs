//! The probe's inference on real clients' recorded timelines: each file in
//! `tests/data/probe/recorded/` is a `retrylint probe --format json` run of
//! a real client (curl, wget, urllib3, requests, tenacity, aiohttp-retry,
//! httpx, got, axios-retry, Node's fetch) on this kind of machine, replayed
//! through `probe --replay`'s code path. Each expectation is the client's
//! behaviour as its own source defines it (tests/data/probe/README.md
//! quotes the lines); a figure the probe cannot determine must say so, and
//! nothing at medium or high confidence may be wrong. Replays take
//! milliseconds and cannot flake on timing.

use retrylint::policy::{BackoffKind, Jitter};
use retrylint::probe::{Confidence, ProbeOptions, ProbeReport, replay};

fn replayed(name: &str) -> ProbeReport {
    let path = format!(
        "{}/tests/data/probe/recorded/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let method = name.contains("post").then(|| "POST".to_owned());
    replay::replay(
        &text,
        &path,
        &ProbeOptions {
            method,
            ..ProbeOptions::default()
        },
    )
    .unwrap()
}

fn retried(r: &ProbeReport, outcome: &str) -> (Option<bool>, Confidence) {
    let v = r
        .policy
        .retry_on
        .iter()
        .find(|v| v.outcome == outcome)
        .unwrap_or_else(|| panic!("no verdict on {outcome}"));
    (v.retried, v.confidence)
}

fn near(x: f64, want: f64, rel: f64) -> bool {
    (x - want).abs() <= rel * want
}

fn codes(r: &ProbeReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.code).collect()
}

fn unchecked(r: &ProbeReport) -> Vec<&str> {
    r.unchecked_rules.iter().map(|u| u.code).collect()
}

/// No field is reported at medium or high confidence without a value
/// being claimed, and every claim below is checked against the source.
fn attempts(r: &ProbeReport) -> (u32, Confidence) {
    (
        r.policy.max_attempts.value.unwrap(),
        r.policy.max_attempts.confidence,
    )
}

#[test]
fn urllib3_default_retries_at_once_and_jitter_is_not_claimed_from_noise() {
    // Retry.DEFAULT = Retry(3): 4 attempts; backoff_factor 0, so every
    // retry at once; GET read errors (reset, read timeout) and connect
    // errors retried; statuses only with Retry-After (413/429/503).
    let r = replayed("urllib3_default");
    assert_eq!(attempts(&r), (4, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(
        (f.kind, f.jitter),
        (BackoffKind::None, Jitter::None),
        "{f:#?}"
    );
    assert_eq!(f.kind_confidence, Confidence::High);
    assert_eq!(retried(&r, "reset"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "timeout"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "503"), (Some(false), Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
    assert_eq!(r.policy.honor_retry_after.value, Some(true));
    let t = r.policy.timeout_ms.value.unwrap();
    assert!(near(t, 500.0, 0.06), "{t}");
    // Waits of 0 ms: no jitter to want, so RL004/RL014 stay silent and
    // RL005 (immediate retries) is the true finding.
    assert_eq!(codes(&r), ["RL005"]);
}

#[test]
fn urllib3_backoff_factor_is_zero_then_doubling_and_its_timeout_is_the_configured_one() {
    // backoff_factor 0.5: get_backoff_time() is 0 after the first error,
    // then 0.5 × 2^(n-1): 0, 1 s, 2 s. The connection is held through the
    // sleep, so a hanging attempt is held timeout + wait; the timeout is
    // still 0.5 s.
    let r = replayed("urllib3_backoff");
    assert_eq!(attempts(&r), (4, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(f.kind, BackoffKind::Exponential, "{f:#?}");
    assert!(f.first_retry_immediate);
    assert!(near(f.base_ms, 500.0, 0.05), "{}", f.base_ms);
    assert!(near(f.multiplier.unwrap(), 2.0, 0.05));
    assert_eq!(f.jitter, Jitter::None);
    assert_eq!(f.cap_ms, None);
    assert!(f.cap_unknown_above_ms.is_some());
    let t = r.policy.timeout_ms.value.unwrap();
    assert!(near(t, 500.0, 0.06), "{t}");
    assert_eq!(r.policy.timeout_ms.confidence, Confidence::High);
    for status in ["429", "500", "502", "503", "504"] {
        assert_eq!(retried(&r, status).0, Some(true), "{status}");
    }
    assert_eq!(retried(&r, "400").0, Some(false));
    // No cap within two waits is not "no cap": RL014 is not checked.
    assert!(!codes(&r).contains(&"RL014"));
    assert_eq!(unchecked(&r), ["RL014"]);
    assert!(r.snippet.contains("timeout: 500ms"), "{}", r.snippet);
    assert!(r.snippet.contains("the first retry is sent at once"));
}

#[test]
fn urllib3_post_keeps_its_connect_only_retries() {
    // POST is not in allowed_methods: read errors and statuses are not
    // retried, connection errors are (4 connects against a closed port).
    let r = replayed("urllib3_post");
    assert_eq!(attempts(&r), (4, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "reset"), (Some(false), Confidence::High));
    assert_eq!(retried(&r, "503"), (Some(false), Confidence::High));
    assert!(
        r.snippet.contains("max_attempts: 4\n") && r.snippet.contains("retry_on: [connect]"),
        "{}",
        r.snippet
    );
}

#[test]
fn requests_default_does_not_retry() {
    let r = replayed("requests_default");
    assert_eq!(attempts(&r), (1, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
    assert!(near(r.policy.timeout_ms.value.unwrap(), 500.0, 0.06));
}

#[test]
fn requests_backoff_jitter_is_additive_and_the_schedule_starts_at_retry_two() {
    // Retry(total=4, backoff_factor=0.2, backoff_jitter=0.1): 0, then
    // 0.2 × 2^(n-1) + random() × 0.1 s: 0, 0.4, 0.8, 1.6 s plus U(0, 100 ms).
    let r = replayed("requests_jitter");
    assert_eq!(attempts(&r), (5, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(f.kind, BackoffKind::Exponential, "{f:#?}");
    assert!(f.first_retry_immediate);
    assert!(near(f.base_ms, 200.0, 0.06), "{}", f.base_ms);
    assert!(near(f.multiplier.unwrap(), 2.0, 0.05));
    let w = f.additive_jitter_ms.expect("additive jitter");
    assert!(near(w, 100.0, 0.3), "{w}");
    assert!(f.jitter_confidence <= Confidence::Medium);
    let t = r.policy.timeout_ms.value.unwrap();
    assert!(near(t, 500.0, 0.06), "{t}: not timeout + wait");
}

#[test]
fn tenacity_reaches_its_cap_at_retry_four() {
    // wait_exponential(multiplier=0.125, max=1): 0.125 × 2^(n-1) capped at
    // 1 s: 125, 250, 500, 1000, 1000 ms; stop_after_attempt(6); every
    // exception retried, Retry-After ignored.
    let r = replayed("tenacity_exp");
    assert_eq!(attempts(&r), (6, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(f.kind, BackoffKind::Exponential, "{f:#?}");
    assert!(near(f.base_ms, 125.0, 0.05), "{}", f.base_ms);
    assert!(near(f.multiplier.unwrap(), 2.0, 0.05));
    assert!(near(f.cap_ms.expect("the cap"), 1000.0, 0.03));
    assert_eq!(f.kind_confidence, Confidence::High);
    assert_eq!(f.jitter, Jitter::None);
    assert_eq!(r.policy.honor_retry_after.value, Some(false));
    assert!(!codes(&r).contains(&"RL014"));
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
}

#[test]
fn aiohttp_retry_backs_off_on_statuses_and_resets_apart() {
    // ExponentialRetry(start_timeout=0.1, factor=2): 0.1 × 2^attempt from
    // attempt 1: 200, 400, 800 ms after a status; no jitter. The reset is
    // retried once at once by aiohttp itself, on another schedule.
    let r = replayed("aiohttp_retry_exp");
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(
        (f.kind, f.jitter),
        (BackoffKind::Exponential, Jitter::None),
        "{f:#?}"
    );
    assert!(near(f.base_ms, 200.0, 0.05), "{}", f.base_ms);
    let causes: Vec<&str> = r
        .policy
        .backoff_by_cause
        .iter()
        .map(|c| c.cause.as_str())
        .collect();
    assert_eq!(causes, ["status", "reset"]);
    assert!(
        r.policy
            .notes
            .iter()
            .any(|n| n.starts_with("the waits differ by cause")),
        "{:?}",
        r.policy.notes
    );
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
}

#[test]
fn httpx_retries_connection_failures_only() {
    // HTTPTransport(retries=3): connect errors only, 4 connects in all.
    let r = replayed("httpx_transport");
    assert_eq!(attempts(&r), (4, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "503"), (Some(false), Confidence::High));
    assert_eq!(retried(&r, "reset"), (Some(false), Confidence::High));
    // httpcore waits 0, 0.5, 1 s between the connects, but the refused
    // attempts are counted from their SYNs, not timed: the waits are
    // unknown, not "none". Before, the snippet said `backoff: { kind: none }`
    // and RL005 (immediate retry) fired on a client that backs off.
    assert!(r.policy.backoff.is_none());
    assert!(!r.snippet.contains("kind: none"), "{}", r.snippet);
    assert!(
        r.snippet.contains(
            "# backoff: unknown — the only retries seen were refused connection attempts"
        ),
        "{}",
        r.snippet
    );
    assert!(!codes(&r).contains(&"RL005"), "{:?}", codes(&r));
    assert!(unchecked(&r).contains(&"RL005"), "{:?}", unchecked(&r));
}

#[test]
fn httpx_default_timeout_of_five_seconds_is_seen_past_the_hang_floor() {
    // httpx's default Timeout(5.0), no retries. With the hang runs cut at
    // 5 s the timeout was "none seen within 5s"; the floor is now 6 s.
    let r = replayed("httpx_default");
    assert_eq!(attempts(&r), (1, Confidence::High));
    let t = r.policy.timeout_ms.value.unwrap();
    assert!(near(t, 5000.0, 0.01), "{t}");
    assert_eq!(r.policy.timeout_ms.confidence, Confidence::High);
    assert_eq!(retried(&r, "timeout"), (Some(false), Confidence::High));
}

#[test]
fn got_adds_noise_to_its_waits_and_has_no_timeout() {
    // got 14: limit 2, 1000 × 2^(n-1) + random() × noise (100 ms); no
    // request timeout by default, so a hang is held until the probe cuts it.
    let r = replayed("got_get");
    assert_eq!(attempts(&r), (3, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert!(near(f.base_ms, 1000.0, 0.03), "{}", f.base_ms);
    assert!(f.additive_jitter_ms.is_some(), "{f:#?}");
    // Two waits cannot tell additive from proportional for sure.
    assert_eq!(f.jitter_confidence, Confidence::Low);
    assert_eq!(r.policy.timeout_ms.value, None);
    // It never timed out, so whether it retries a timeout is not seen.
    assert_eq!(retried(&r, "timeout"), (None, Confidence::Low));
    assert!(!r.snippet.contains("timeout:"), "{}", r.snippet);
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
}

#[test]
fn got_post_retries_nothing_not_even_refused_connections() {
    let r = replayed("got_post");
    assert_eq!(attempts(&r), (1, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
}

#[test]
fn axios_retry_after_is_not_contradicted_but_explained_by_its_shared_budget() {
    // axios-retry: retries 3, exponentialDelay; axios' 1 s timeout is not
    // reset between attempts (shouldResetTimeout: false), so a Retry-After
    // of 1 or 2 s outlasts what is left and the call ends.
    let r = replayed("axios_retry");
    assert_eq!(r.policy.honor_retry_after.value, None);
    let e = &r.policy.honor_retry_after.evidence;
    assert!(e.contains("was not retried although a plain 503 is"), "{e}");
    assert!(e.contains("a limit on the whole call"), "{e}");
    assert!(!r.snippet.contains("honor_retry_after: false"));
}

#[test]
fn node_fetch_does_not_retry() {
    let r = replayed("node_fetch");
    assert_eq!(attempts(&r), (1, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
}

#[test]
fn curl_default_doubles_from_one_second_and_holds_a_hang_forever() {
    // curl --retry 3: 1 s, then doubling; no per-attempt timeout; refused
    // connections not retried without --retry-connrefused.
    let r = replayed("curl_default");
    assert_eq!(attempts(&r), (4, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!((f.kind, f.jitter), (BackoffKind::Exponential, Jitter::None));
    assert!(near(f.base_ms, 1000.0, 0.02) && near(f.multiplier.unwrap(), 2.0, 0.02));
    // curl's cap (10 min) is far beyond three waits: unknown, not absent.
    assert_eq!(f.cap_ms, None);
    assert!(!codes(&r).contains(&"RL014"));
    assert_eq!(retried(&r, "timeout"), (None, Confidence::Low));
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
    assert!(!r.snippet.contains("timeout:"), "{}", r.snippet);
}

#[test]
fn curl_with_a_fixed_delay_and_a_max_time() {
    let r = replayed("curl_delay");
    assert_eq!(attempts(&r), (3, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!((f.kind, f.jitter), (BackoffKind::Constant, Jitter::None));
    assert!(near(f.base_ms, 1000.0, 0.02));
    assert!(near(r.policy.timeout_ms.value.unwrap(), 500.0, 0.03));
    assert_eq!(retried(&r, "timeout"), (Some(true), Confidence::High));
}

#[test]
fn tenacity_capped_at_half_a_second_is_read_at_the_level_its_waits_sit() {
    // wait_exponential(multiplier=0.1, max=0.5): 100, 200, 400, 500, 500 ms.
    // Before, the cap was read as 470 ms, the mean of 403/503/503 (a tail
    // still growing at retry 3), over the 503 ms the waits sit at.
    let r = replayed("tenacity_cap");
    assert_eq!(attempts(&r), (6, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!((f.kind, f.jitter), (BackoffKind::Exponential, Jitter::None));
    assert!(near(f.base_ms, 100.0, 0.05), "{}", f.base_ms);
    assert!(near(f.multiplier.unwrap(), 2.0, 0.03), "{:?}", f.multiplier);
    let cap = f.cap_ms.unwrap();
    assert!(near(cap, 500.0, 0.02), "{cap}");
    assert!(near(r.policy.timeout_ms.value.unwrap(), 500.0, 0.03));
    assert_eq!(retried(&r, "404"), (Some(true), Confidence::High));
}

#[test]
fn curl_max_time_is_the_timeout_not_the_attempt_the_probe_cut() {
    // --max-time 5 limits each transfer: the first hanging attempt is given
    // up at 5 s, the retry 1 s later is cut by the probe at 7.1 s. Before,
    // the cut attempt's 1.08 s hold was read as the client's timeout, at
    // high confidence.
    let r = replayed("curl_max_time");
    let t = r.policy.timeout_ms.value.unwrap();
    assert!(
        near(t, 5000.0, 0.01),
        "{t}: {}",
        r.policy.timeout_ms.evidence
    );
    assert_eq!(retried(&r, "timeout"), (Some(true), Confidence::High));
    assert!(r.snippet.contains("timeout: 5s"), "{}", r.snippet);
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!((f.kind, f.jitter), (BackoffKind::Exponential, Jitter::None));
    assert!(near(f.base_ms, 1000.0, 0.02) && near(f.multiplier.unwrap(), 2.0, 0.02));
}

#[test]
fn curl_retry_all_errors_with_connrefused_counts_four_refused_connects() {
    let r = replayed("curl_all");
    assert_eq!(attempts(&r), (4, Confidence::High));
    assert_eq!(retried(&r, "connect"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "404").0, Some(true));
}

#[test]
fn wget_waitretry_is_linear_and_two_waits_do_not_say_which() {
    // wget --tries=3 --waitretry=2: 1 s after the first failure, 2 s after
    // the second (linear, up to the given maximum).
    let r = replayed("wget_tries");
    assert_eq!(attempts(&r), (3, Confidence::High));
    let f = r.policy.backoff.as_ref().unwrap();
    assert_eq!(f.kind_confidence, Confidence::Low, "{f:#?}");
    assert!(
        f.kind_alternatives
            .iter()
            .any(|a| a.kind == BackoffKind::Linear)
            || f.kind == BackoffKind::Linear
    );
    assert!(near(r.policy.timeout_ms.value.unwrap(), 500.0, 0.03));
    assert_eq!(retried(&r, "connect"), (Some(false), Confidence::High));
}

#[test]
fn wget_default_tries_twenty_times_so_a_ten_second_bound_shows_a_lower_bound() {
    // --tries defaults to 20 with --waitretry 10: 1, 2, 3 … s; a 10 s run
    // sees 4 attempts, which is "at least 4", never a confident 4.
    let r = replayed("wget_default");
    assert_eq!(attempts(&r), (4, Confidence::Low));
    assert!(r.policy.max_attempts.evidence.starts_with("at least 4"));
}

/// boto3 1.44.18 (botocore's `standard` retry mode, its default: 3
/// attempts) on SQS ListQueues over `--https --host probe.localhost`, with
/// the opt-in AWS scenarios. botocore's `ExponentialBackoff`: t_i = rand ×
/// min(base × 2^(i-1), 20 s), base 1 s after a throttling error and 50 ms
/// after any other; `x-amz-retry-after` raises the delay to its value,
/// capped at t_i + 5 s. The two bases are told apart (the waits after a
/// throttling error are their own cause), and the header is honoured.
#[test]
fn boto3_throttling_and_transient_waits_are_fitted_apart_and_amz_retry_after_is_honoured() {
    let r = replayed("boto3_sqs_throttling");
    assert_eq!(attempts(&r), (3, Confidence::High));
    assert_eq!(retried(&r, "503"), (Some(true), Confidence::High));
    assert_eq!(retried(&r, "throttling"), (Some(true), Confidence::High));
    let amz = r.policy.honor_amz_retry_after.as_ref().unwrap();
    assert_eq!((amz.value, amz.confidence), (Some(true), Confidence::High));
    let median = |cause: &str| -> Vec<f64> {
        r.policy
            .backoff_by_cause
            .iter()
            .find(|c| c.cause.as_str() == cause)
            .unwrap_or_else(|| panic!("no {cause} fit"))
            .fit
            .per_retry
            .iter()
            .map(|p| p.median_ms)
            .collect()
    };
    // Full jitter over 50 ms and 100 ms, and over 1 s and 2 s: every wait
    // after a status lies under 100 ms, every median after a throttling
    // error many times longer.
    let (status, throttled) = (median("status"), median("throttling"));
    assert!(status.iter().all(|&m| m < 100.0), "{status:?}");
    assert!(
        throttled.iter().zip(&status).all(|(t, s)| *t > 5.0 * s),
        "{throttled:?} against {status:?}"
    );
    // botocore's transient waits are full jitter over 50 ms and 100 ms:
    // their schedule is not claimed with confidence (it read "exponential
    // from 11 ms, decorrelated" at medium before).
    let s = &r
        .policy
        .backoff_by_cause
        .iter()
        .find(|c| c.cause.as_str() == "status")
        .unwrap()
        .fit;
    assert_eq!(s.kind_confidence, Confidence::Low, "{}", s.kind_evidence);
    // No cap within waits under 100 ms says nothing of botocore's 20 s: no
    // RL014 from its absence.
    assert!(!codes(&r).contains(&"RL014"), "{:?}", codes(&r));
    assert!(unchecked(&r).contains(&"RL014"), "{:?}", unchecked(&r));
    // Two draws of full jitter cannot fix the throttling schedule: not
    // claimed with confidence.
    let t = &r
        .policy
        .backoff_by_cause
        .iter()
        .find(|c| c.cause.as_str() == "throttling")
        .unwrap()
        .fit;
    assert_eq!(t.kind_confidence, Confidence::Low);
}

/// What botocore's standard mode retries: every failure the probe makes but
/// 400, AWS's throttling error included.
const BOTOCORE_RETRIES: [(&str, bool); 8] = [
    ("500", true),
    ("503", true),
    ("429", true),
    ("400", false),
    ("reset", true),
    ("timeout", true),
    ("connect", true),
    ("throttling", true),
];

/// The `Host` names every attempt was addressed to.
fn hosts(r: &ProbeReport) -> Vec<&str> {
    r.scenarios
        .iter()
        .flat_map(|s| &s.runs)
        .flat_map(|run| &run.arrivals)
        .filter_map(|a| a.host.as_deref())
        .collect()
}

/// boto3 (botocore 1.44.18, standard mode) over `--https --host
/// probe.localhost`: 3 attempts; 5xx, 429, resets, timeouts and refused
/// connections retried, 400 not; AWS's throttling error retried on its own
/// schedule; `x-amz-retry-after` honoured. Full jitter over two retries
/// (50 ms × 2^k after a 5xx, 1 s × 2^k after throttling) pins no base, so
/// neither schedule may be claimed above low confidence.
#[test]
fn boto3_standard_retries_and_throttling_over_https() {
    let r = replayed("boto3_sqs_https");
    assert_eq!(r.policy.max_attempts.value, Some(3));
    for (outcome, want) in BOTOCORE_RETRIES {
        let (v, c) = retried(&r, outcome);
        assert_eq!(v, Some(want), "{outcome}");
        assert_eq!(c, Confidence::High, "{outcome}");
    }
    let amz = r.policy.honor_amz_retry_after.as_ref().unwrap();
    assert_eq!(amz.value, Some(true), "{}", amz.evidence);
    assert!(amz.confidence >= Confidence::Medium);
    let status = r.policy.backoff.as_ref().unwrap();
    assert_eq!(status.kind_confidence, Confidence::Low, "{status:?}");
    assert_eq!(status.jitter_confidence, Confidence::Low, "{status:?}");
    let throttled = r
        .policy
        .backoff_by_cause
        .iter()
        .find(|c| c.cause == retrylint::probe::infer::Cause::Throttling)
        .unwrap();
    assert_eq!(throttled.fit.kind_confidence, Confidence::Low);
    assert!(
        r.policy
            .notes
            .iter()
            .any(|n| n.contains("`429`") && n.contains("left out of the status fit")),
        "{:?}",
        r.policy.notes
    );
    let hosts = hosts(&r);
    assert!(!hosts.is_empty() && hosts.iter().all(|h| h.starts_with("probe.localhost:")));
}

/// boto3 (botocore 1.44.18, standard mode) on S3 ListObjectsV2, a
/// rest-xml call, with virtual-hosted addressing over `--https --host
/// probe.localhost`: every attempt is addressed to `bucket.probe.localhost`.
/// The probe answers an AWS SDK's success with an empty body: botocore
/// reads a 200 whose body is not XML, on an S3 call, as an answer cut short
/// and retries it as a 500 (`handlers._looks_like_special_case_error`), so
/// the probe's `ok` made every success a failure (success-on-3 exited 1,
/// and x-amz-retry-after's run took a third attempt after its 200).
#[test]
fn boto3_s3_virtual_hosted_stops_on_success_and_honours_amz_retry_after() {
    let r = replayed("boto3_s3_virtual");
    assert_eq!(attempts(&r), (3, Confidence::High));
    for (outcome, want) in BOTOCORE_RETRIES {
        assert_eq!(
            retried(&r, outcome),
            (Some(want), Confidence::High),
            "{outcome}"
        );
    }
    let stops = &r.policy.stops_on_success;
    assert_eq!(
        (stops.value, stops.confidence),
        (Some(true), Confidence::High)
    );
    let amz = r.policy.honor_amz_retry_after.as_ref().unwrap();
    assert_eq!((amz.value, amz.confidence), (Some(true), Confidence::High));
    let after_retry_after = r
        .scenarios
        .iter()
        .find(|s| s.name == "aws-throttling-retry-after")
        .unwrap();
    assert!(
        after_retry_after
            .runs
            .iter()
            .all(|run| run.arrivals.len() == 2 && run.exit.success())
    );
    // `Config(read_timeout=1)`.
    let timeout = r.policy.timeout_ms.value.unwrap();
    assert!(near(timeout, 1000.0, 0.05), "{timeout}");
    // Full jitter over 50 ms and 100 ms, blurred by botocore's own work
    // per retry: the waits look decorrelated, and read so at medium
    // before; under 150 ms every reading is low.
    let b = r.policy.backoff.as_ref().unwrap();
    assert_eq!(
        (b.kind_confidence, b.jitter_confidence),
        (Confidence::Low, Confidence::Low),
        "{b:?}"
    );
    let hosts = hosts(&r);
    assert!(
        !hosts.is_empty()
            && hosts
                .iter()
                .all(|h| h.starts_with("bucket.probe.localhost:")),
        "{hosts:?}"
    );
}
