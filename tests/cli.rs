//! The command line's contract: exit codes, levels, formats, `rules`, `explain`,
//! and `chaos` gates.

use std::time::Duration;

use crate::common::sockets;

use crate::common;

use common::run::{retrylint, retrylint_with_stdin, stop_with};

/// Writes `text` to a file named `name` in the tests' scratch directory.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn exit_codes_gate_the_build() {
    assert_eq!(retrylint(&["check", "examples/clean.yaml"]).0, 0);
    assert_eq!(retrylint(&["check", "examples/ecommerce.yaml"]).0, 1);
    assert_eq!(
        retrylint(&["check", "examples/ecommerce.yaml", "--exit-zero"]).0,
        0
    );
    assert_eq!(retrylint(&["check", "no-such.yaml"]).0, 2);
    assert_eq!(retrylint(&["check"]).0, 2);
    assert_eq!(
        retrylint(&["check", "examples/clean.yaml", "--deny", "RL999"]).0,
        2
    );
}

#[test]
fn levels_from_the_command_line() {
    // sidecar.yaml has one error (RL011) and warnings.
    let (code, out, _) = retrylint(&[
        "check",
        "examples/sidecar.yaml",
        "--format",
        "json",
        "--allow",
        "RL011",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["errors"], 0);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["code"] != "RL011")
    );
    let (code, ..) = retrylint(&[
        "check",
        "examples/sidecar.yaml",
        "--allow",
        "RL011",
        "--fail-on",
        "warning",
    ]);
    assert_eq!(code, 1);
    let (code, out, _) = retrylint(&[
        "check",
        "examples/sidecar.yaml",
        "--format",
        "json",
        "--deny",
        "multi-layer-retry,RL012",
        "--allow",
        "RL011",
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rl002 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "RL002")
        .unwrap();
    assert_eq!(rl002["severity"], "error");
    // Raising the amplification limit silences RL001.
    let (_, out, _) = retrylint(&[
        "check",
        "examples/sre-book.yaml",
        "--format",
        "json",
        "--max-amplification",
        "64",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["code"] != "RL001")
    );
}

#[test]
fn levels_from_the_topology() {
    let path = temp_file(
        "lint.yaml",
        "version: 1\nlint:\n  missing-budget: allow\n  RL004: error\n  max_amplification: 2\nservices:\n  web: { calls: [ { to: api, timeout: 1s, retry: { max_attempts: 3, backoff: { kind: constant, base: 10ms } } } ] }\n  api: {}\n",
    );
    let (code, out, err) = retrylint(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let codes: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap(), f["severity"].as_str().unwrap()))
        .collect();
    // RL020 (info) points at the call into api, before its retry.
    assert_eq!(
        codes,
        [("RL020", "info"), ("RL001", "error"), ("RL004", "error")]
    );
    // The command line wins over the file.
    let (code, ..) = retrylint(&["check", path.to_str().unwrap(), "--allow", "RL004,RL001"]);
    assert_eq!(code, 0);
}

#[test]
fn json_has_the_contract_fields() {
    let (_, out, _) = retrylint(&["check", "examples/sre-book.yaml", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["topology"], "sre-book");
    let f = &v["findings"][0];
    for key in [
        "code", "rule", "severity", "message", "help", "service", "file", "line", "column",
    ] {
        assert!(!f[key].is_null(), "finding lacks {key}: {f}");
    }
    let db = v["amplification"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["service"] == "db")
        .unwrap();
    assert_eq!(db["worst_case"], 64.0);
    assert!(db["with_budgets"].is_number());
    assert_eq!(v["summary"]["errors"], 2);
}

#[test]
fn rules_and_explain() {
    let (code, out, _) = retrylint(&["rules"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), retrylint::lint::RULES.len());
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("RL001  retry-amplification")
    );
    let (code, out, _) = retrylint(&["explain", "RL003"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("# RL003 non-idempotent-retry"));
    let (code, out, _) = retrylint(&["explain", "missing-jitter"]);
    assert_eq!((code, out.starts_with("# RL004")), (0, true));
    let (code, _, err) = retrylint(&["explain", "RL099"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown rule `RL099`"), "{err}");
}

#[test]
fn chaos_gates_hold_or_break() {
    // The sidecar example under total outage: api receives 9 per user request.
    let base = [
        "chaos",
        "examples/sidecar.yaml",
        "--fault",
        "total-outage",
        "--requests",
        "3",
        "--rate",
        "50",
        "--format",
        "json",
    ];
    let mut args = base.to_vec();
    args.extend([
        "--expect",
        "amplification(api) == 9",
        "--expect",
        "success <= 0",
    ]);
    let (code, out, err) = retrylint(&args);
    assert_eq!(code, 0, "{err}\n{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fault"], "total-outage");
    let api = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == "api")
        .unwrap();
    assert_eq!(api["received"], 27);
    assert_eq!(api["amplification"]["measured"], 9.0);
    assert_eq!(api["amplification"]["predicted"], 9.0);
    let mut args = base.to_vec();
    args.extend(["--expect", "amplification(api) <= 3"]);
    assert_eq!(retrylint(&args).0, 1);
    let mut args = base.to_vec();
    args.extend(["--expect", "amplification(api) <<= 3"]);
    let (code, _, err) = retrylint(&args);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn chaos_rejects_bad_scenarios_and_targets() {
    let (code, _, err) = retrylint(&["chaos", "examples/sidecar.yaml", "--fault", "no-such-fault"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&["chaos", "examples/sidecar.yaml", "--target", "nope"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&["chaos", "examples/sidecar.yaml", "--rate", "fast"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&["chaos", "examples/sidecar.yaml", "--fault", "./nope.yaml"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("name a shipped scenario"), "{err}");
}

#[test]
fn an_unknown_target_in_a_fault_file_is_located() {
    let path = temp_file(
        "typo.yaml",
        "target: dbb\nphases: [ { inject: { kind: status, status: 503 } } ]\n",
    );
    let (code, out, err) = retrylint(&[
        "chaos",
        "examples/sre-book.yaml",
        "--fault",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.ends_with(
            "typo.yaml:1:9: fault target `dbb` is not a service of topology `sre-book`; did you mean `db`?"
        ),
        "{err}"
    );
    assert!(err.contains("^"), "no caret under the target: {err}");
}

#[test]
fn a_gate_naming_an_unknown_service_fails_before_any_load() {
    // A horizon of ten minutes: only a check before the run can answer in time.
    let (code, out, err) = retrylint(&[
        "chaos",
        "examples/sre-book.yaml",
        "--duration",
        "10m",
        "--expect",
        "amplification(dbx) <= 3",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("no service `dbx` in the topology; did you mean `db`?"),
        "{err}"
    );
}

#[test]
fn the_baseline_scenario_injects_nothing() {
    let (code, out, err) = retrylint(&[
        "chaos",
        "examples/sre-book.yaml",
        "--fault",
        "none",
        "--clients",
        "1",
        "--requests",
        "5",
        "--format",
        "json",
        "--expect",
        "success >= 1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fault"], "none");
    assert_eq!(v["end_to_end"]["succeeded"], 5);
    let db = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == "db")
        .unwrap();
    assert_eq!(db["received"], 5);
    // Nothing is struck: no target named, no service marked.
    let (code, out, err) = retrylint(&[
        "chaos",
        "examples/sre-book.yaml",
        "--fault",
        "none",
        "--clients",
        "1",
        "--requests",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().next(),
        Some("retrylint chaos: topology `sre-book`, fault `none`, seed 42")
    );
    assert!(!out.contains('⚡'), "{out}");
}

#[test]
fn simulate_is_reproducible_and_compares() {
    let args = [
        "simulate",
        "examples/sre-book.yaml",
        "--fault",
        "total-outage",
        "--requests",
        "10",
        "--trials",
        "20",
        "--format",
        "json",
    ];
    let (code, first, err) = retrylint(&args);
    assert_eq!(code, 0, "{err}");
    let (_, second, _) = retrylint(&args);
    assert_eq!(first, second, "same seed, same bytes");
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["mode"], "simulate");
    let db = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == "db")
        .unwrap();
    assert_eq!(db["received"], 640);
    assert_eq!(db["amplification"]["measured"], 64.0);
    assert_eq!(db["received_quantiles"]["p10"], 640.0);
    let (code, out, err) = retrylint(&[
        "simulate",
        "examples/sre-book.yaml",
        "examples/clean.yaml",
        "--fault",
        "overload",
        "--trials",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["fault"].as_str(), v["seed"].as_u64()),
        (Some("overload"), Some(42))
    );
    let rows = v["topologies"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["topology"], "sre-book");
    assert_eq!(
        retrylint(&["simulate", "examples/sre-book.yaml", "--trials", "0"]).0,
        2
    );
    let (code, ..) = retrylint(&[
        "simulate",
        "examples/sre-book.yaml",
        "--fault",
        "total-outage",
        "--requests",
        "4",
        "--expect",
        "amplification(db) <= 10",
    ]);
    assert_eq!(code, 1);
}

/// The stop signals and the exit code each gives: 128 + its number.
const STOP_SIGNALS: [(&str, i32); 3] = [("INT", 130), ("TERM", 143), ("HUP", 129)];

#[test]
fn ctrl_c_stops_chaos_and_prints_what_ran_on_loopback_only() {
    // SIGTERM (CI runners, `timeout`, `docker stop`) and SIGHUP alike.
    for (signal, code) in STOP_SIGNALS {
        chaos_stopped_by(signal, code);
    }
}

fn chaos_stopped_by(signal: &str, code: i32) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("retrylint"))
        .args([
            "chaos",
            "examples/ecommerce.yaml",
            "--duration",
            "20s",
            "--format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ready once every server of the example listens: its services and the
    // sidecars of its `via` layers.
    let t = retrylint::topology::load(
        std::path::Path::new("examples/ecommerce.yaml"),
        &retrylint::topology::Presets::embedded(),
    )
    .unwrap();
    let servers = t.services.len()
        + t.calls()
            .map(|c| c.layers.len().saturating_sub(1))
            .sum::<usize>();
    let pid = child.id();
    sockets::wait_until(Duration::from_secs(30), "the servers to listen", || {
        sockets::listening_ports(pid).len() >= servers
    });
    let out = stop_with(child, signal);
    assert_eq!(
        out.status.code(),
        Some(code),
        "SIG{signal}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    let listeners = v["listeners"].as_array().unwrap();
    assert!(!listeners.is_empty());
    for l in listeners {
        let addr = l["addr"].as_str().unwrap();
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        // Nothing the run started (no detached process) still holds its ports.
        assert!(
            std::net::TcpStream::connect(addr).is_err(),
            "{addr} still listening"
        );
    }
}

#[test]
fn warn_lowers_a_rules_own_escalation() {
    // RL007 is an error when the entry outlives the end-to-end deadline; a
    // level the user sets wins even when it is the rule's default.
    let path = temp_file(
        "deadline.yaml",
        "version: 1\ndeadline: 100ms\nservices:\n  api: { latency: 500ms }\n",
    );
    let p = path.to_str().unwrap();
    let severity = |args: &[&str]| {
        let (code, out, err) = retrylint(&[&["check", p, "--format", "json"], args].concat());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
        let f = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "RL007")
            .cloned()
            .unwrap();
        (code, f["severity"].as_str().unwrap().to_owned())
    };
    assert_eq!(severity(&[]), (1, "error".to_owned()));
    assert_eq!(severity(&["--warn", "RL007"]), (0, "warning".to_owned()));
}

/// CPU time process `pid` has used, from the kernel (utime + stime, in ticks).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

#[test]
fn ctrl_c_stops_simulate_and_reports_the_trials_completed() {
    for (signal, code) in STOP_SIGNALS {
        simulate_stopped_by(signal, code);
    }
}

fn simulate_stopped_by(signal: &str, code: i32) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("retrylint"))
        .args([
            "simulate",
            "examples/ecommerce.yaml",
            "--trials",
            "1000000",
            "--budget",
            "100000000000",
            "--format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ready once it has been simulating for a while (a third of a second of
    // CPU; its Ctrl-C handler is in place long before).
    let pid = child.id();
    sockets::wait_until(Duration::from_secs(60), "the simulation to run", || {
        cpu_ticks(pid) >= 30
    });
    let out = stop_with(child, signal);
    assert_eq!(
        out.status.code(),
        Some(code),
        "SIG{signal}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    let trials = v["trials"].as_u64().unwrap();
    assert!(trials > 0 && trials < 1_000_000, "{trials} trials");
}

#[test]
fn check_reads_standard_input_as_dash() {
    let clean = std::fs::read_to_string("examples/clean.yaml").unwrap();
    let (code, out, err) = retrylint_with_stdin(&["check", "-", "--format", "json"], &clean);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["file"], "<stdin>");
    let (code, out, err) = retrylint_with_stdin(
        &["check", "-"],
        "version: 1\nservices:\n  web: { calls: [ { to: nope } ] }\n",
    );
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err.lines().next().unwrap(),
        "error: <stdin>:3:25: `web` calls unknown service `nope`; define `nope` under `services:` or call an existing service"
    );
    // The line under the message comes from standard input too.
    assert!(
        err.contains("3 |   web: { calls: [ { to: nope } ] }"),
        "{err}"
    );
    let (code, _, err) = retrylint_with_stdin(&["check", "-"], "");
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: <stdin>:1:1: the file is empty"),
        "{err}"
    );
}

#[test]
fn numbers_given_to_flags_are_refused_with_their_range() {
    for (args, says) in [
        (
            &["simulate", "examples/clean.yaml", "--threads", "0"][..],
            "error: invalid value '0' for '--threads <N>': 0 is below 1; write a whole number from 1 to 1024",
        ),
        (
            &["simulate", "examples/clean.yaml", "--clients", "-1"][..],
            "error: invalid value '-1' for '--clients <N>': -1 is below 1; write a whole number from 1 to 4294967295",
        ),
        (
            &["simulate", "examples/clean.yaml", "--seed", "-5"][..],
            "error: invalid value '-5' for '--seed <S>': -5 is below 0; write a whole number from 0 to 18446744073709551615",
        ),
        (
            &["simulate", "examples/clean.yaml", "--requests", "0"][..],
            "error: invalid value '0' for '--requests <M>': 0 is below 1; write a whole number from 1 to 18446744073709551615",
        ),
        (
            &["simulate", "examples/clean.yaml", "--trials", "-2"][..],
            "error: invalid value '-2' for '--trials <K>': -2 is below 1; write a whole number from 1 to 4294967295",
        ),
        (
            &["check", "examples/clean.yaml", "--max-amplification", "-1"][..],
            "error: invalid value '-1' for '--max-amplification <N>': -1 is below 1; write a number of at least 1",
        ),
        (
            &["simulate", "examples/clean.yaml", "--rate", "-1"][..],
            "error: --rate `-1` is not a rate above 0; write e.g. `--rate 50` or `--rate 50/s` (requests per second, more than 0)",
        ),
        (
            &["chaos", "examples/clean.yaml", "--rate", "-1"][..],
            "error: --rate `-1` is not a rate above 0; write e.g. `--rate 50` or `--rate 50/s` (requests per second, more than 0)",
        ),
        (
            &["simulate", "examples/clean.yaml", "--duration", "-1s"][..],
            "error: --duration `-1s` is negative; write a time above 0, e.g. `--duration 5s`",
        ),
    ] {
        let (code, out, err) = retrylint(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert_eq!(err.lines().next().unwrap(), says, "{args:?}");
        assert!(!err.contains("-- -"), "{args:?}: {err}");
    }
}

#[test]
fn a_negative_expectation_is_refused() {
    let (code, _, err) = retrylint(&["simulate", "examples/clean.yaml", "--expect", "p99 <= -1ms"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "error: invalid --expect `p99 <= -1ms`: `-1` is below 0: `p99` is a latency, never negative; write e.g. `p99 <= 500ms`"
    );
}

#[test]
fn fault_files_that_are_not_faults_are_refused_where_written() {
    let status = temp_file(
        "ok_status.yaml",
        "target: all\nphases:\n  - inject: { kind: status, status: 200 }\n",
    );
    let (code, _, err) = retrylint(&[
        "simulate",
        "examples/clean.yaml",
        "--fault",
        status.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    let first = err.lines().next().unwrap();
    assert!(
        first.ends_with("ok_status.yaml:3:37: `status: 200` is not a fault: only 4xx and 5xx answers fail a request; write the error to inject, e.g. `status: 503` or `status: 429` with `retry_after: 1s`; for a run without faults use `--fault none`"),
        "{err}"
    );
    let overlap = temp_file(
        "overlap.yaml",
        "target: all\nphases:\n  - after: 1s\n    for: 2s\n    inject: { kind: hang }\n  - after: 2s\n    for: 1s\n    inject: { kind: down }\n",
    );
    let (code, _, err) = retrylint(&[
        "simulate",
        "examples/clean.yaml",
        "--fault",
        overlap.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    let first = err.lines().next().unwrap();
    let dir = overlap.parent().unwrap().display().to_string();
    assert_eq!(
        first,
        format!(
            "error: {dir}/overlap.yaml:6:5: this phase (2s to 3s) overlaps the phase at {dir}/overlap.yaml:3:5 (1s to 3s); the target has one fault at a time; start this phase at 3s or later, or end the other one by 2s"
        )
    );
}

#[test]
fn a_run_that_ends_before_its_fault_starts_is_refused() {
    for command in ["simulate", "chaos"] {
        let (code, out, err) = retrylint(&[
            command,
            "examples/sre-book.yaml",
            "--fault",
            "503-burst",
            "--duration",
            "1s",
        ]);
        assert_eq!(code, 2, "{command}: {out}{err}");
        assert!(
            err.contains("--duration 1s ends before the fault `503-burst` starts (at 1s): nothing would be injected; run for at least 3s"),
            "{command}: {err}"
        );
    }
    // Ending inside the fault is a run of it.
    let (code, _, err) = retrylint(&[
        "simulate",
        "examples/sre-book.yaml",
        "--fault",
        "503-burst",
        "--duration",
        "2s",
        "--trials",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
}
