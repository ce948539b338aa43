//! The chaos harness stays bounded whatever it is asked: an open-loop rate no
//! machine can send ends at its horizon with every due request accounted
//! for, and file descriptors are estimated, refused when even one request
//! cannot fit, and counted as the harness's own failures when they run out.

use std::process::Command;
use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults::Scenario;
use retrylint::run::LoadSettings;
use retrylint::topology;

use crate::common;

/// A chain of `n` services.
fn chain(n: usize) -> String {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..n - 1 {
        y += &format!("  s{i}: {{ calls: [ s{} ] }}\n", i + 1);
    }
    y += &format!("  s{}: {{}}\n", n - 1);
    y
}

fn write(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("retrylint-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Peak resident memory of this process, from the kernel.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn a_rate_no_machine_can_send_ends_at_the_horizon_with_every_request_accounted_for() {
    // Its bound is on this process's peak memory.
    if !common::alone::in_own_process(
        "chaos_bounds::a_rate_no_machine_can_send_ends_at_the_horizon_with_every_request_accounted_for",
    ) {
        return;
    }
    let t = topology::load_str(&chain(2), "t.yaml", "t", &Default::default()).unwrap();
    let load = LoadSettings::new(
        Some(1e12),
        None,
        None,
        Some(Duration::from_secs(1)),
        Some(1),
    )
    .unwrap();
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(1),
        max_in_flight: 50,
        ..RunOptions::default()
    };
    let r = chaos::run_with(&t, &Scenario::none(), &load, &options).expect("run ends");
    // 10¹² requests were due in the second; each was sent or counted as not.
    assert_eq!(
        r.end_to_end.requests + r.harness.not_sent,
        1_000_000_000_000
    );
    assert!(r.harness.not_sent > 0);
    assert_eq!(r.harness.max_in_flight, Some(50));
    assert!(
        r.harness.warnings[0].starts_with("the load driver could not keep up"),
        "{:?}",
        r.harness.warnings
    );
    // Bounded by the horizon and the grace period, not by the rate.
    assert!(r.elapsed_ms < 5_000.0, "{} ms", r.elapsed_ms);
    assert!(peak_rss_bytes() < 2 << 30, "{} bytes", peak_rss_bytes());
}

/// `retrylint chaos` under a lowered descriptor limit (soft and hard).
fn chaos_with_limit(
    limit: u32,
    topology: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    Command::new("prlimit")
        .arg(format!("--nofile={limit}:{limit}"))
        .arg(env!("CARGO_BIN_EXE_retrylint"))
        .args([
            "chaos",
            topology.to_str().unwrap(),
            "--fault",
            "none",
            "--format",
            "json",
        ])
        .args(extra)
        .output()
        .expect("prlimit runs")
}

fn have_prlimit() -> bool {
    let ok = Command::new("prlimit").arg("--version").output().is_ok();
    if !ok {
        common::absent::tool_missing(
            "chaos under a descriptor limit",
            "prlimit",
            "apt-get install -y util-linux",
        );
    }
    ok
}

#[test]
fn a_topology_that_cannot_fit_one_request_is_refused_with_the_figures() {
    if !have_prlimit() {
        return;
    }
    // 300 listeners, and 300 connections per request with both ends here:
    // 300 + 2 × 300 + 64 = 964 descriptors at least.
    let path = write("chain300.yaml", &chain(300));
    let out = chaos_with_limit(512, &path, &["--requests", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs at least 964 open file descriptors (300 listeners, and 300 connections per user request, both ends in this process) but the limit is 512"),
        "{err}"
    );
}

#[test]
fn running_out_of_descriptors_is_reported_as_the_harness_s_failure() {
    if !have_prlimit() {
        return;
    }
    // One request needs 40 + 2 × 40 + 64 = 184 descriptors: it fits 300. Ten
    // clients may need 40 + 10 × 40 × 2 + 64 = 904: a warning, and in the
    // run the limit is really hit (each request holds a connection on every
    // hop of the chain while it runs).
    let path = write(
        "chain40.yaml",
        &chain(40).replace("calls: [", "latency: 20ms, calls: ["),
    );
    let out = chaos_with_limit(300, &path, &["--clients", "10", "--duration", "2s"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &v["harness"];
    assert_eq!(h["descriptors"]["limit"], 300);
    assert_eq!(h["descriptors"]["estimated"], 904);
    assert!(h["descriptor_errors"].as_u64().unwrap() > 0, "{h}");
    let warnings = h["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("may need 904"))
    );
    // No service is blamed for refusing what the harness could not open.
    for s in v["services"].as_array().unwrap() {
        assert!(s["dropped"].get("refused").is_none(), "{s}");
    }
}

/// [`chaos_with_limit`], killed after `bound`: `None` when it took longer.
fn chaos_with_limit_within(
    limit: u32,
    topology: &std::path::Path,
    extra: &[&str],
    bound: Duration,
) -> Option<std::process::Output> {
    let child = Command::new("prlimit")
        .arg(format!("--nofile={limit}:{limit}"))
        .arg(env!("CARGO_BIN_EXE_retrylint"))
        .args(["chaos", topology.to_str().unwrap()])
        .args(["--fault", "none", "--format", "json"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("prlimit runs");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(bound) {
        Ok(out) => Some(out.expect("the run ended")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            None
        }
    }
}

#[test]
fn more_slots_than_descriptors_stop_sending_at_the_horizon() {
    if !have_prlimit() {
        return;
    }
    // A million slots under a limit of 256 descriptors: every slot is free
    // again at once (its connection fails), so no wait for a slot ever
    // meets the horizon. 10⁷ requests are due in the second; the driver
    // cannot send them that fast, and must not go on sending the ones it
    // is behind on after the horizon.
    let path = write("chain2-slots.yaml", &chain(2));
    let began = std::time::Instant::now();
    let out = chaos_with_limit_within(
        256,
        &path,
        &[
            "--rate",
            "10000000",
            "--max-in-flight",
            "1000000",
            "--duration",
            "1s",
        ],
        Duration::from_secs(60),
    )
    .expect("the run ends within a minute");
    let took = began.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (requests, not_sent) = (
        v["end_to_end"]["requests"].as_u64().unwrap(),
        v["harness"]["not_sent"].as_u64().unwrap(),
    );
    assert_eq!(
        requests + not_sent,
        10_000_000,
        "every due request accounted for"
    );
    assert!(not_sent > 0, "{}", v["harness"]);
    assert!(v["harness"]["descriptor_errors"].as_u64().unwrap() > 0);
    // The horizon (1 s), the grace period (5 s), and starting and ending.
    assert!(took < Duration::from_secs(10), "took {took:?}");
}
