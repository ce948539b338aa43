//! `retrylint probe` on the command line: the CI gate (`--expect-policy`),
//! bad input (exit 2, one line naming the fix), and the bounds — a client
//! that never exits is killed with everything it started and reported,
//! nothing is left listening, and nothing listens beyond loopback. The
//! client is the harness's own (`retrylint probe-client`) with short waits.

use std::time::Duration;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_retrylint");

use crate::common;

use common::run::retrylint;

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// 3 attempts, 200 ms apart, on 503 only (long enough for a busy machine's
/// timing noise not to hide that there is no jitter).
const CLIENT_POLICY: &str =
    "{ max_attempts: 3, backoff: { kind: constant, base: 200ms, jitter: none }, retry_on: [503] }";

fn gate(topology: &str, extra: &[&str]) -> (i32, String, String) {
    // One file per topology: the tests run in parallel.
    let name = format!(
        "gate-{:016x}.yaml",
        retrylint::formats::check::sarif::fnv1a64(topology.as_bytes())
    );
    let path = temp_file(&name, topology);
    let mut args = vec![
        "probe",
        "--runs",
        "4",
        "--scenario",
        "503,500",
        "--expect-policy",
        path.to_str().unwrap(),
        "--call",
        "web->api",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--",
        EXE,
        "probe-client",
        "--policy",
        CLIENT_POLICY,
        "{url}",
    ]);
    retrylint(&args)
}

const DECLARED: &str = "version: 1
services:
  web:
    calls:
      - to: api
        retry: { max_attempts: 3, backoff: { kind: constant, base: 200ms, jitter: none }, retry_on: [503] }
        via:
          - name: sdk
            retry: { max_attempts: 2, retry_on: [503], backoff: { kind: constant, base: 10ms } }
  api: {}
";

#[test]
fn the_gate_holds_when_the_client_does_what_the_layer_declares() {
    let (code, out, err) = gate(DECLARED, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("layer `app`: holds"), "{out}");
}

#[test]
fn the_gate_lists_each_difference_and_exits_1() {
    let declared = DECLARED.replace("max_attempts: 3, backoff: { kind: constant, base: 200ms, jitter: none }, retry_on: [503]", "max_attempts: 4, backoff: { kind: constant, base: 200ms, jitter: full }, retry_on: [500, 503]");
    let (code, out, err) = gate(&declared, &["--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let e = &v["expectation"];
    assert_eq!(e["held"], false);
    let fields: Vec<&str> = e["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    // Whether the client jitters is judged from the spread of its waits; on
    // a machine too busy to wake it on time the probe says it could not tell
    // (not checked) rather than guess, so jitter is a difference or unchecked.
    let jitter_unchecked = e["not_checked"]
        .as_array()
        .is_some_and(|n| n.iter().any(|f| f == "jitter"));
    let want: &[&str] = if jitter_unchecked {
        &["max_attempts", "retry_on 500"]
    } else {
        &["max_attempts", "retry_on 500", "jitter"]
    };
    assert_eq!(fields, want, "{e:#}");
    assert_eq!(e["differences"][0]["measured"], "3 attempts");
    assert_eq!(e["differences"][0]["declared"], "4 attempts");
}

#[test]
fn a_declared_layer_the_client_does_not_implement_is_a_difference() {
    // The sdk layer declares retries on 500; the client makes one attempt.
    let declared = DECLARED.replace(
        "{ max_attempts: 2, retry_on: [503]",
        "{ max_attempts: 2, retry_on: [500]",
    );
    let path = temp_file("sdk.yaml", &declared);
    let (code, out, _) = retrylint(&[
        "probe",
        "--runs",
        "2",
        "--scenario",
        "500",
        "--expect-policy",
        path.to_str().unwrap(),
        "--call",
        "web→api",
        "--layer",
        "sdk",
        "--",
        EXE,
        "probe-client",
        "--policy",
        CLIENT_POLICY,
        "{url}",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("layer: measured the client does not retry at all, declared a retrying layer (2 attempts)"), "{out}");
}

#[test]
fn bad_input_is_exit_2_with_the_fix() {
    let client = [
        "--",
        EXE,
        "probe-client",
        "--policy",
        CLIENT_POLICY,
        "{url}",
    ];
    let with = |flags: &[&str]| retrylint(&[&["probe"], flags, &client].concat());
    let (code, _, err) = with(&["--scenario", "502,teapot"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown scenario `teapot`; use 500, 502"),
        "{err}"
    );
    let (code, _, err) = with(&["--timeout", "0s"]);
    assert_eq!(
        (code, err.trim()),
        (2, "error: --timeout must be longer than 0s")
    );
    let (code, _, err) = with(&["--timeout", "soon"]);
    assert_eq!(code, 2);
    assert!(err.contains("--timeout: `soon` is not a duration"), "{err}");
    let path = temp_file("ok.yaml", DECLARED);
    let (code, _, err) = with(&[
        "--expect-policy",
        path.to_str().unwrap(),
        "--call",
        "web api",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("write the call as FROM→TO or FROM->TO"),
        "{err}"
    );
    let (code, _, err) = with(&[
        "--expect-policy",
        path.to_str().unwrap(),
        "--call",
        "web->apii",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no service `apii`") && err.contains("did you mean `api`?"),
        "{err}"
    );
    let (code, _, err) = with(&[
        "--expect-policy",
        path.to_str().unwrap(),
        "--call",
        "web->api",
        "--layer",
        "istio",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("has the layers app, sdk"), "{err}");
    let broken = temp_file(
        "broken.yaml",
        "version: 1\nservices:\n  web: { calls: [ { to: api, retry: { max_attempts: 0 } } ] }\n  api: {}\n",
    );
    let (code, _, err) = with(&[
        "--expect-policy",
        broken.to_str().unwrap(),
        "--call",
        "web->api",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("broken.yaml:3:"), "{err}");
    // A client that cannot start, and one that never calls the URL.
    let (code, _, err) = retrylint(&[
        "probe",
        "--runs",
        "1",
        "--scenario",
        "503",
        "--",
        "/no/such/client",
        "{url}",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot start `/no/such/client`"), "{err}");
    let (code, _, err) = retrylint(&[
        "probe",
        "--runs",
        "1",
        "--scenario",
        "503",
        "--",
        "sh",
        "-c",
        "echo no url here >&2",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("sent no request") && err.contains("no url here"),
        "{err}"
    );
    // No client at all.
    let (code, _, _) = retrylint(&["probe", "--runs", "1"]);
    assert_eq!(code, 2);
}

#[test]
fn a_client_that_never_exits_is_killed_reported_and_leaves_nothing_behind() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("sleeper.pid");
    let _ = std::fs::remove_file(&pidfile);
    // One request, then a grandchild that would sleep for a minute.
    let script = format!(
        "\"$0\" probe-client --policy '{{ max_attempts: 1 }}' \"$1\"; sleep 60 & echo $! > {}; wait",
        pidfile.display()
    );
    let (code, out, err) = retrylint(&[
        "probe",
        "--runs",
        "1",
        "--scenario",
        "503",
        "--timeout",
        "1s",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        &script,
        EXE,
        "{url}",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let run = &v["scenarios"][0]["runs"][0];
    assert_eq!(run["exit"]["kind"], "timed_out", "{run:#}");
    assert_eq!(run["arrivals"].as_array().unwrap().len(), 1);
    assert!(run["elapsed_ms"].as_f64().unwrap() >= 1000.0);
    assert!(
        v["policy"]["notes"].to_string().contains("were killed"),
        "{:#}",
        v["policy"]["notes"]
    );
    // The probe server is gone, and it was on loopback only.
    let url = run["url"].as_str().unwrap();
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    assert!(addr.starts_with("127.0.0.1:"), "{url}");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "{addr} still accepts connections"
    );
    // So is the grandchild (reaped by init within a moment).
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_owned();
    assert_gone(&pid, "sleep outlived the probe");
}

/// Polls, within 5 s, until process `pid` is gone or a zombie (reaped by
/// init within a moment once its group was killed).
fn assert_gone(pid: &str, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: pid {pid}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_help_names_the_scenarios() {
    let (code, out, _) = retrylint(&["probe", "--help"]);
    assert_eq!(code, 0);
    for name in [
        "503-retry-after",
        "success-on-3",
        "refused",
        "--expect-policy",
        "{url}",
    ] {
        assert!(out.contains(name), "{name}: {out}");
    }
}

#[test]
fn sigterm_ends_the_probe_and_its_clients_process_groups() {
    for (signal, want) in [("TERM", 143), ("INT", 130)] {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe_cli");
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join(format!("stopped-{signal}.pid"));
        let _ = std::fs::remove_file(&pidfile);
        // A client that would sleep for a minute, its pid written first.
        let script = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
        let child = std::process::Command::new(EXE)
            .args([
                "probe",
                "--runs",
                "1",
                "--scenario",
                "503",
                "--timeout",
                "60s",
                "--",
                "sh",
                "-c",
                &script,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let pid = loop {
            let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if text.ends_with('\n') {
                break text.trim().to_owned();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the client never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = common::run::stop_with(child, signal);
        assert_eq!(
            out.status.code(),
            Some(want),
            "SIG{signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The sleeper went with its group.
        assert_gone(&pid, &format!("SIG{signal}: sleep outlived the probe"));
    }
}
