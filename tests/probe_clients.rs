//! `retrylint probe` against real clients nobody here wrote: curl and GNU
//! wget, as a clean Debian machine has them (`apt-get install -y curl
//! wget`). Each test skips, saying why, when its client is missing.
//!
//! The expected policies are the clients' documented behaviour, checked
//! against the installed versions (curl 7.88.1, wget 1.21.3, Debian 12):
//! - curl(1), `--retry <num>`: retries "a timeout, an FTP 4xx response code
//!   or an HTTP 408, 429, 500, 502, 503 or 504 response code"; waits one
//!   second, then doubles; `--retry-delay` replaces that with a fixed wait;
//!   "curl will comply with the Retry-After: response header";
//!   `--retry-all-errors` retries every error (with `-f`, 4xx and 5xx too);
//!   `--retry-connrefused` adds refused connections; `--retry-max-time`
//!   stops retrying once the time since the first attempt reaches it.
//! - wget(1), `--tries=number`: retries "with the exception of fatal errors
//!   like connection refused or not found (404)"; `--waitretry=seconds`
//!   waits 1 s after the first failure, 2 s after the second, up to the
//!   given maximum; `--retry-on-http-error` and `--retry-connrefused` add
//!   statuses and refused connections. (The man page does not list which
//!   statuses it retries; 1.21.3 retries 504 and not 500, 502, 503, 429.)
//!
//! - Python's urllib3 (`urllib3.util.Retry`, the engine under requests and
//!   boto3's predecessors; 2.x, and 1.26 alike): `total=3` is 4 attempts;
//!   `status_forcelist` names the statuses retried; connection errors, read
//!   timeouts and resets of an idempotent method are retried; the wait
//!   before retry n is `backoff_factor * 2 ** (n - 1)`, except that "no
//!   backoff will ever be applied" before the first retry (0 s); no jitter
//!   unless `backoff_jitter` is set; `Retry-After` is honoured on 413, 429
//!   and 503 (`respect_retry_after_header=True`). `Timeout(total=0.5)`
//!   bounds each attempt.
//! - Node's built-in `fetch` (undici): no retries at all, and no timeout of
//!   its own shorter than minutes.
//!
//! Delays are kept to curl's and wget's smallest whole second and few runs,
//! so each test takes a few seconds. A timing figure the probe reports at
//! medium or high confidence must be the client's; one at low confidence
//! may be anything, as long as it says it is unsure.

use std::time::Duration;

use serde_json::Value;

use crate::common;

fn installed(program: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !found {
        common::absent::tool_missing(
            &format!("probe of {program}"),
            program,
            if program == "node" {
                "apt-get install -y nodejs"
            } else {
                "apt-get install -y curl wget"
            },
        );
    }
    found
}

/// Whether `python3` can import `module`; says how to get it when not.
fn python_has(module: &str) -> bool {
    let found = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        common::absent::tool_missing(
            &format!("probe of Python's {module}"),
            &format!("python3 with {module}"),
            &format!("python3 -m pip install {module}"),
        );
    }
    found
}

/// Whether the probe claims to know a field: `medium` or `high`.
fn sure(confidence: &Value) -> bool {
    matches!(confidence.as_str(), Some("medium" | "high"))
}

/// Runs `retrylint probe --format json` with `flags`, then `-- client…`.
fn probe(flags: &[&str], client: &[&str]) -> (i32, Value) {
    let out = assert_cmd::Command::cargo_bin("retrylint")
        .unwrap()
        .arg("probe")
        .args(["--format", "json", "--parallel", "16"])
        .args(flags)
        .arg("--")
        .args(client)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), v)
}

fn retried(v: &Value, outcome: &str) -> Option<bool> {
    v["policy"]["retry_on"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["outcome"] == outcome)
        .and_then(|o| o["retried"].as_bool())
}

fn max_attempts(v: &Value) -> u64 {
    v["policy"]["max_attempts"]["value"].as_u64().unwrap()
}

fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

fn within(x: f64, want: f64, rel: f64) -> bool {
    (x - want).abs() <= want * rel
}

#[test]
fn curl_retry_retries_its_documented_statuses_and_timeouts_with_a_fixed_delay() {
    if !installed("curl") {
        return;
    }
    let (code, v) = probe(
        &[
            "--runs",
            "2",
            "--scenario",
            "500,502,503,504,429,400,404,hang",
        ],
        &[
            "curl",
            "-sS",
            "--retry",
            "2",
            "--retry-delay",
            "1",
            "--max-time",
            "0.5",
            "{url}",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(max_attempts(&v), 3, "{:#}", v["policy"]["max_attempts"]);
    for status in ["500", "502", "503", "504", "429", "timeout"] {
        assert_eq!(retried(&v, status), Some(true), "{status}");
    }
    for status in ["400", "404"] {
        assert_eq!(retried(&v, status), Some(false), "{status}");
    }
    let b = &v["policy"]["backoff"];
    assert_eq!(
        (b["kind"].as_str(), b["jitter"].as_str()),
        (Some("constant"), Some("none")),
        "{b:#}"
    );
    assert!(
        within(b["base_ms"].as_f64().unwrap(), 1000.0, 0.05),
        "{b:#}"
    );
    assert_eq!(b["jitter_confidence"], "high");
    let t = v["policy"]["timeout_ms"]["value"].as_f64().unwrap();
    assert!(within(t, 500.0, 0.1), "--max-time 0.5 measured as {t} ms");
    // A constant backoff without jitter is what RL004 is about.
    assert!(codes(&v).contains(&"RL004".to_owned()), "{:?}", codes(&v));
}

#[test]
fn curl_default_backoff_starts_at_one_second_and_doubles() {
    if !installed("curl") {
        return;
    }
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "503"],
        &["curl", "-sS", "--retry", "2", "{url}"],
    );
    assert_eq!(max_attempts(&v), 3);
    let b = &v["policy"]["backoff"];
    assert_eq!(b["kind"], "exponential", "{b:#}");
    assert!(
        within(b["base_ms"].as_f64().unwrap(), 1000.0, 0.05),
        "{b:#}"
    );
    assert!(
        within(b["multiplier"].as_f64().unwrap(), 2.0, 0.05),
        "{b:#}"
    );
    // Two waits of 1 s and 2 s are linear just as well: the probe says so.
    assert_eq!(b["kind_confidence"], "low");
    assert_eq!(b["kind_alternatives"][0]["kind"], "linear", "{b:#}");
}

#[test]
fn curl_honours_retry_after() {
    if !installed("curl") {
        return;
    }
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "503,503-retry-after"],
        &["curl", "-sS", "--retry", "1", "--retry-delay", "1", "{url}"],
    );
    let ra = &v["policy"]["honor_retry_after"];
    assert_eq!(ra["value"], true, "{ra:#}");
    assert!(
        ra["evidence"].as_str().unwrap().contains("Retry-After 2s"),
        "{ra:#}"
    );
    assert!(!codes(&v).contains(&"RL010".to_owned()));
}

#[test]
fn curl_retry_all_errors_with_fail_retries_permanent_errors_and_resets() {
    if !installed("curl") {
        return;
    }
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "400,404,reset"],
        &[
            "curl",
            "-sS",
            "-f",
            "--retry",
            "1",
            "--retry-delay",
            "1",
            "--retry-all-errors",
            "{url}",
        ],
    );
    for outcome in ["400", "404", "reset"] {
        assert_eq!(retried(&v, outcome), Some(true), "{outcome}");
    }
    assert!(codes(&v).contains(&"RL009".to_owned()), "{:?}", codes(&v));
    // Without it a reset (an empty reply) is not transient to curl.
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "reset"],
        &["curl", "-sS", "--retry", "1", "--retry-delay", "1", "{url}"],
    );
    assert_eq!(retried(&v, "reset"), Some(false));
}

#[test]
fn curl_retries_refused_connections_only_when_asked() {
    if !installed("curl") {
        return;
    }
    let flags = ["--runs", "2", "--scenario", "503,refused"];
    let base = ["curl", "-sS", "--retry", "2", "--retry-delay", "1", "{url}"];
    let (_, v) = probe(&flags, &base);
    assert_eq!(
        retried(&v, "connect"),
        Some(false),
        "{:#}",
        v["policy"]["retry_on"]
    );
    let mut asked = base.to_vec();
    asked.insert(1, "--retry-connrefused");
    let (_, v) = probe(&flags, &asked);
    assert_eq!(
        retried(&v, "connect"),
        Some(true),
        "{:#}",
        v["policy"]["retry_on"]
    );
}

#[test]
fn curl_retry_max_time_cuts_the_retries() {
    if !installed("curl") {
        return;
    }
    // Attempts at 0, 1 s and 2 s; at 2 s the timer has reached the limit.
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "503"],
        &[
            "curl",
            "-sS",
            "--retry",
            "5",
            "--retry-delay",
            "1",
            "--retry-max-time",
            "2",
            "{url}",
        ],
    );
    assert_eq!(max_attempts(&v), 3);
}

#[test]
fn a_post_retried_without_a_key_is_rl003_and_with_one_it_is_not() {
    if !installed("curl") {
        return;
    }
    let post = [
        "curl",
        "-sS",
        "-X",
        "POST",
        "-d",
        "order=1",
        "--retry",
        "1",
        "--retry-delay",
        "1",
    ];
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "503"],
        &[&post[..], &["{url}"]].concat(),
    );
    assert_eq!(v["policy"]["method"]["value"], "POST");
    assert_eq!(v["policy"]["idempotency_key"]["value"], false);
    let rl003: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RL003")
        .collect();
    assert_eq!(rl003.len(), 1, "{:#}", v["findings"]);
    assert_eq!(rl003[0]["severity"], "error");
    let keyed = [&post[..], &["-H", "Idempotency-Key: order-1", "{url}"]].concat();
    let (_, v) = probe(&["--runs", "2", "--scenario", "503"], &keyed);
    assert_eq!(
        v["policy"]["idempotency_key"]["value"], true,
        "{:#}",
        v["policy"]["idempotency_key"]
    );
    assert!(!codes(&v).contains(&"RL003".to_owned()));
}

#[test]
fn wget_tries_retries_gateway_timeouts_resets_and_timeouts_but_not_404_or_refused() {
    if !installed("wget") {
        return;
    }
    let (_, v) = probe(
        &[
            "--runs",
            "2",
            "--scenario",
            "503,504,404,reset,hang,refused",
        ],
        &[
            "wget",
            "-q",
            "-O",
            "-",
            "--tries=3",
            "--waitretry=1",
            "--timeout=0.5",
            "{url}",
        ],
    );
    assert_eq!(max_attempts(&v), 3);
    for (outcome, want) in [
        ("504", true),
        ("reset", true),
        ("timeout", true),
        ("503", false),
        ("404", false),
        ("connect", false),
    ] {
        assert_eq!(
            retried(&v, outcome),
            Some(want),
            "{outcome}: {:#}",
            v["policy"]["retry_on"]
        );
    }
    let b = &v["policy"]["backoff"];
    assert!(
        within(b["base_ms"].as_f64().unwrap(), 1000.0, 0.05),
        "{b:#}"
    );
    let t = v["policy"]["timeout_ms"]["value"].as_f64().unwrap();
    assert!(within(t, 500.0, 0.1), "--timeout=0.5 measured as {t} ms");
}

#[test]
fn wget_retry_on_http_error_and_connrefused_add_what_they_name() {
    if !installed("wget") {
        return;
    }
    let (_, v) = probe(
        &["--runs", "2", "--scenario", "503,429,500,refused"],
        &[
            "wget",
            "-q",
            "-O",
            "-",
            "--tries=2",
            "--waitretry=1",
            "--retry-on-http-error=503,429",
            "--retry-connrefused",
            "{url}",
        ],
    );
    assert_eq!(max_attempts(&v), 2);
    for (outcome, want) in [
        ("503", true),
        ("429", true),
        ("500", false),
        ("connect", true),
    ] {
        assert_eq!(
            retried(&v, outcome),
            Some(want),
            "{outcome}: {:#}",
            v["policy"]["retry_on"]
        );
    }
}

/// urllib3 `Retry(total=3, backoff_factor=0.2, status_forcelist=[503])`:
/// 0, 400 and 800 ms before retries 1–3, Retry-After honoured.
const URLLIB3_CLIENT: &str = "import sys, urllib3
from urllib3.util import Retry
pool = urllib3.PoolManager(
    retries=Retry(total=3, backoff_factor=0.2, status_forcelist=[503]),
    timeout=urllib3.Timeout(total=0.5),
)
try:
    print(pool.request('GET', sys.argv[1]).status)
except Exception as e:
    print(e)
    sys.exit(1)
";

#[test]
fn urllib3_retry_is_read_as_its_source_says_or_said_to_be_unsure() {
    if !python_has("urllib3") {
        return;
    }
    let (code, v) = probe(
        &[
            "--runs",
            "3",
            "--scenario",
            "503,500,hang,503-retry-after,reset,refused",
        ],
        &["python3", "-c", URLLIB3_CLIENT, "{url}"],
    );
    assert_eq!(code, 0);
    let p = &v["policy"];
    assert_eq!(max_attempts(&v), 4, "{:#}", p["max_attempts"]);
    for (outcome, want) in [
        ("503", true),
        ("500", false),
        ("timeout", true),
        ("reset", true),
        ("connect", true),
    ] {
        assert_eq!(
            retried(&v, outcome),
            Some(want),
            "{outcome}: {:#}",
            p["retry_on"]
        );
    }
    let b = &p["backoff"];
    if sure(&b["kind_confidence"]) {
        assert_eq!(b["kind"], "exponential", "{b:#}");
        assert_eq!(b["first_retry_immediate"], true, "{b:#}");
        // b_k = base × multiplier^(k-1) from retry 2 on: 400 ms, 800 ms.
        let base = b["base_ms"].as_f64().unwrap();
        let multiplier = b["multiplier"].as_f64().unwrap();
        assert!(within(base * multiplier, 400.0, 0.1), "{b:#}");
        assert!(within(multiplier, 2.0, 0.1), "{b:#}");
    }
    if sure(&b["jitter_confidence"]) {
        assert_eq!(b["jitter"], "none", "{b:#}");
    }
    let retry_after = &p["honor_retry_after"];
    if sure(&retry_after["confidence"]) {
        assert_eq!(retry_after["value"], true, "{retry_after:#}");
    }
    // The per-attempt timeout is how long a hanging attempt was held.
    let t = &p["timeout_ms"];
    if sure(&t["confidence"]) {
        let ms = t["value"].as_f64().unwrap();
        assert!(
            within(ms, 500.0, 0.1),
            "Timeout(total=0.5) measured as {t:#}"
        );
    }
}

#[test]
fn node_fetch_is_one_attempt_without_a_timeout() {
    if !installed("node") {
        return;
    }
    let (code, v) = probe(
        &[
            "--runs",
            "2",
            "--timeout",
            "3s",
            "--scenario",
            "503,hang,reset,refused",
        ],
        &[
            "node",
            "-e",
            "fetch(process.argv[1]).then(r => console.log(r.status)).catch(e => { console.error(String(e)); process.exit(1) })",
            "{url}",
        ],
    );
    assert_eq!(code, 0);
    let p = &v["policy"];
    assert_eq!(max_attempts(&v), 1, "{:#}", p["max_attempts"]);
    for outcome in ["503", "reset", "connect"] {
        assert_eq!(
            retried(&v, outcome),
            Some(false),
            "{outcome}: {:#}",
            p["retry_on"]
        );
    }
    // Every hanging attempt was held until the run was cut: no timeout,
    // and the snippet proposes none and no retries.
    assert!(p["timeout_ms"]["value"].is_null(), "{:#}", p["timeout_ms"]);
    let snippet = v["snippet"].as_str().unwrap();
    assert!(!snippet.contains("timeout:"), "{snippet}");
    assert!(snippet.contains("max_attempts: 1"), "{snippet}");
    // A client with no timeout is what RL011 is about.
    assert!(codes(&v).contains(&"RL011".to_owned()), "{:?}", codes(&v));
}

/// Whether `name` resolves to 127.0.0.1 here (glibc's nss-myhostname, or
/// /etc/hosts); says how to make it when not.
fn resolves(name: &str) -> bool {
    use std::net::ToSocketAddrs;
    let found = (name, 0)
        .to_socket_addrs()
        .is_ok_and(|mut a| a.any(|a| a.ip() == std::net::Ipv4Addr::LOCALHOST));
    if !found {
        common::absent::tool_missing(
            &format!("probe with --host {name}"),
            &format!("a resolver that sends {name} to 127.0.0.1"),
            "apt-get install -y libnss-myhostname, and `myhostname` on the hosts: line of /etc/nsswitch.conf",
        );
    }
    found
}

#[test]
fn curl_over_https_with_a_localhost_name_trusts_the_probe_ca_from_curl_ca_bundle() {
    if !installed("curl") || !resolves("probe.localhost") {
        return;
    }
    let (code, v) = probe(
        &[
            "--https",
            "--host",
            "probe.localhost",
            "--runs",
            "2",
            "--scenario",
            "503,reset",
        ],
        &[
            "curl",
            "-sS",
            "--retry",
            "2",
            "--retry-delay",
            "1",
            "--max-time",
            "5",
            "{url}",
        ],
    );
    assert_eq!(code, 0);
    for s in v["scenarios"].as_array().unwrap() {
        for run in s["runs"].as_array().unwrap() {
            let url = run["url"].as_str().unwrap();
            assert!(url.starts_with("https://probe.localhost:"), "{url}");
            assert!(run.get("handshakes_failed").is_none(), "{run:#}");
        }
    }
    assert_eq!(max_attempts(&v), 3);
    assert_eq!(retried(&v, "503"), Some(true));
    assert_eq!(retried(&v, "reset"), Some(false));
    let b = &v["policy"]["backoff"];
    assert_eq!(b["kind"], "constant", "{b:#}");
    assert!(within(b["base_ms"].as_f64().unwrap(), 1000.0, 0.1), "{b:#}");
}

#[test]
fn a_client_that_does_not_trust_the_probe_ca_is_told_so_not_read_as_resets() {
    if !installed("curl") {
        return;
    }
    let out = assert_cmd::Command::cargo_bin("retrylint")
        .unwrap()
        .args(["probe", "--https", "--runs", "2", "--scenario", "503"])
        .args(["--", "env", "-u", "CURL_CA_BUNDLE", "-u", "SSL_CERT_FILE"])
        .args(["curl", "-sS", "--retry", "2", "--max-time", "5", "{url}"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("completed no TLS handshake") && err.contains("2 failed"),
        "{err}"
    );
    assert!(err.contains("RETRYLINT_CA"), "{err}");
}

#[test]
fn boto3_over_https_retries_throttling_and_honours_x_amz_retry_after() {
    if !python_has("boto3") || !resolves("probe.localhost") {
        return;
    }
    let script = format!(
        "{}/tests/data/probe/clients/boto3_sqs.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, v) = probe(
        &[
            "--https",
            "--host",
            "probe.localhost",
            "--runs",
            "2",
            "--timeout",
            "15s",
            "--scenario",
            "503,400,aws-throttling,aws-throttling-retry-after",
        ],
        &["python3", &script],
    );
    assert_eq!(code, 0);
    assert_eq!(max_attempts(&v), 3);
    assert_eq!(retried(&v, "503"), Some(true));
    assert_eq!(retried(&v, "400"), Some(false));
    assert_eq!(retried(&v, "throttling"), Some(true));
    let amz = &v["policy"]["honor_amz_retry_after"];
    if sure(&amz["confidence"]) {
        assert_eq!(amz["value"], true, "{amz:#}");
    }
}
