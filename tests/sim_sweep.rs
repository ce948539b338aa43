//! `simulate --sweep`: the tipping point of examples/surge.yaml (a queue
//! behind a caller that retries each timed-out call twice) under the
//! built-in `surge` fault (2,500/s from 20 s to 30 s), in virtual time.
//!
//! What is asserted: a point's trials are exactly the plain simulations
//! `simulate --trials 1 --seed S+i` at that value; the same system without
//! retries tips over at a higher load; recovery does not rise with load
//! beyond its interval; the boundary gate's exit codes; and the inputs that
//! must be refused up front (exit 2) with the flag that fixes them. Runs
//! are kept few (a debug build takes about half a second a 60 s run).

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

const SURGE: &str = "examples/surge.yaml";

fn retrylint() -> Command {
    Command::cargo_bin("retrylint").expect("the binary is built")
}

/// `simulate --fault surge --duration 60s --format json` and `extra`,
/// parsed; asserts the exit code.
fn simulate(topology: &Path, extra: &[&str], code: i32) -> Value {
    let out = retrylint()
        .args(["simulate"])
        .arg(topology)
        .args(["--fault", "surge", "--duration", "60s"])
        .args(["--format", "json"])
        .args(extra)
        .output()
        .expect("retrylint runs");
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn sweep(topology: &Path, range: &str, steps: u32, trials: u32) -> Value {
    let (steps, trials) = (steps.to_string(), trials.to_string());
    simulate(
        topology,
        &[
            "--sweep", range, "--steps", &steps, "--trials", &trials, "--seed", "7",
        ],
        0,
    )
}

fn points(r: &Value) -> &Vec<Value> {
    r["sweep"]["points"].as_array().expect("points")
}

fn boundary(r: &Value) -> f64 {
    let b = &r["sweep"]["boundary"];
    assert_eq!(b["bracket"], "bracketed", "{b}");
    b["value"].as_f64().expect("a boundary value")
}

/// surge.yaml with web's retries taken away: one attempt a call.
fn without_retries(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(SURGE).expect("surge.yaml");
    let start = text.find("        retry:").expect("a retry block");
    let end = text.find("  db:").expect("db");
    let text = format!(
        "{}        retry: {{ max_attempts: 1 }}\n{}",
        &text[..start],
        &text[end..]
    );
    let path = dir.join("surge-no-retry.yaml");
    std::fs::write(&path, text).expect("written");
    path
}

#[test]
fn each_trial_of_a_point_is_the_plain_simulation_at_that_value() {
    let r = sweep(Path::new(SURGE), "rate=250..400", 2, 2);
    assert_eq!(r["sweep"]["rule"], "last-half");
    let grid: Vec<&Value> = points(&r)
        .iter()
        .filter(|p| p.get("bisection").is_none())
        .collect();
    assert_eq!(grid.len(), 2, "LO and HI");
    for p in grid {
        let rate = p["value"].as_f64().expect("value");
        let mut recovered = 0;
        let mut states = serde_json::Map::new();
        for i in 0..2u64 {
            let plain = simulate(
                Path::new(SURGE),
                &[
                    "--rate",
                    &rate.to_string(),
                    "--trials",
                    "1",
                    "--seed",
                    &(7 + i).to_string(),
                ],
                0,
            );
            let state = plain["goodput"]["verdict"]["state"]
                .as_str()
                .expect("a verdict")
                .to_owned();
            recovered += u64::from(state == "recovered");
            let n = states.get(&state).and_then(Value::as_u64).unwrap_or(0);
            states.insert(state, (n + 1).into());
        }
        assert_eq!(p["recovered_trials"].as_u64(), Some(recovered), "{p}");
        assert_eq!(p["states"], Value::Object(states), "{p}");
    }
}

#[test]
fn without_retries_the_same_system_tips_over_at_a_higher_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let retrying = sweep(Path::new(SURGE), "rate=200..1200", 3, 4);
    let plain = sweep(&without_retries(dir.path()), "rate=200..1200", 3, 4);
    let (with, without) = (boundary(&retrying), boundary(&plain));
    assert!(
        without > with,
        "boundary without retries {without}/s, with {with}/s"
    );
    // The retrying system's boundary: the mean load of the retries after the
    // surge must stay below db's 1,000/s, so three attempts a call tip it
    // over well below a third of that plus the queue's backlog.
    assert!((200.0..=450.0).contains(&with), "{with}");
    for r in [&retrying, &plain] {
        let ci = &r["sweep"]["boundary"]["ci"];
        let (lo, hi) = (ci[0].as_f64(), ci[1].as_f64());
        let b = boundary(r);
        assert!(lo.is_none_or(|lo| lo <= b), "{ci} vs {b}");
        assert!(hi.is_none_or(|hi| hi > b), "{ci} vs {b}");
        assert!(
            r["headroom"]
                .as_str()
                .is_some_and(|h| h.contains(&format!("up to {b}/s"))),
            "{}",
            r["headroom"]
        );
    }
}

#[test]
fn recovery_does_not_rise_with_load_beyond_its_interval() {
    let r = sweep(Path::new(SURGE), "rate=200..900", 4, 4);
    let ps = points(&r);
    assert!(
        ps.windows(2)
            .all(|w| w[0]["value"].as_f64() < w[1]["value"].as_f64()),
        "sorted by value"
    );
    // No point surely recovering (interval wholly above one half) above a
    // point surely failing (wholly below).
    let ci = |p: &Value, i: usize| p["recovered_ci"][i].as_f64().expect("ci");
    for (i, low) in ps.iter().enumerate() {
        for high in &ps[i + 1..] {
            assert!(
                !(ci(low, 1) < 0.5 && ci(high, 0) > 0.5),
                "{low} fails surely below {high} recovering surely"
            );
        }
    }
    let first = &ps[0];
    assert_eq!(first["verdict"], "recovered", "200/s recovers: {first}");
    let last = ps.last().expect("points");
    assert_eq!(last["verdict"], "collapsed", "900/s stays down: {last}");
}

#[test]
fn the_boundary_gate_exits_0_when_held_1_when_broken_2_when_unreadable() {
    let gate = |expr: &str| {
        retrylint()
            .args(["simulate", SURGE, "--fault", "surge", "--duration", "60s"])
            .args(["--sweep", "rate=200..900", "--steps", "2", "--trials", "1"])
            .args(["--seed", "7", "--expect", expr])
            .output()
            .expect("retrylint runs")
    };
    let held = gate("boundary >= 150/s");
    assert_eq!(held.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&held.stdout).contains("expect boundary >= 150/s: held"));
    let broken = gate("boundary >= 800");
    assert_eq!(broken.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&broken.stdout).contains("BROKEN"));
    let other = gate("p99 < 5ms");
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("boundary >= 500"));
}

#[test]
fn a_sweep_that_cannot_be_read_or_judged_is_refused_up_front() {
    let refused = |args: &[&str], needle: &str| {
        let out = retrylint()
            .args(["simulate", SURGE, "--seed", "7"])
            .args(args)
            .output()
            .expect("retrylint runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing run");
    };
    let surge = |more: &[&'static str]| [&["--fault", "surge"][..], more].concat();
    refused(&surge(&["--sweep", "rate=10.."]), "--sweep `rate=10..`");
    refused(&surge(&["--sweep", "rate=5..1"]), "--sweep `rate=5..1`");
    refused(&surge(&["--sweep", "load=1..5"]), "--sweep `load=1..5`");
    // The surge ends at 30 s: a 30 s run leaves nothing after it to judge.
    refused(
        &surge(&["--sweep", "rate=200..900", "--duration", "30s"]),
        "--duration 60s",
    );
    refused(
        &[
            "--fault",
            "503-burst",
            "--sweep",
            "rate=200..900",
            "--clients",
            "5",
        ],
        "drop --clients",
    );
    refused(
        &["--sweep", "surge=1000..3000", "--fault", "503-burst"],
        "has no surge phase",
    );
    refused(
        &surge(&[
            "--sweep",
            "rate=200..900",
            "--duration",
            "60s",
            "--trials",
            "100000",
        ]),
        "to make it fit: --trials",
    );
}
