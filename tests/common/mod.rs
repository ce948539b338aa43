//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod absent;
pub mod alone;
pub mod generate;
pub mod html;
pub mod run;
pub mod sockets;

use retrylint::lint::{CheckReport, CliLevels, Config};
use retrylint::topology::{self, LoadError, Presets, Topology};

pub fn load(text: &str) -> Result<Topology, LoadError> {
    topology::load_str(text, "test.yaml", "test", &Presets::embedded())
}

pub fn load_file(path: &str) -> Topology {
    topology::load(std::path::Path::new(path), &Presets::embedded())
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// [`load_file`] with the topology's `sources:` merged in (the trace-based
/// rules' fixtures name their traces there).
#[allow(dead_code)]
pub fn load_file_with_sources(path: &str) -> Topology {
    topology::load_with_sources(
        Some(std::path::Path::new(path)),
        &[],
        retrylint::external::Options::default(),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{path}: {e}"))
    .topology
}

/// `check`'s report, the findings' fixes resolved (`fix::check`).
pub fn check(t: &Topology) -> CheckReport {
    let config = Config::resolve(t, &CliLevels::default()).expect("levels");
    retrylint::fix::check(t, &config)
}

/// Worst-case amplification at `service`.
pub fn amplification(report: &CheckReport, service: &str) -> f64 {
    report
        .amplification
        .iter()
        .find(|r| r.service == service)
        .unwrap_or_else(|| panic!("no service {service}"))
        .worst_case
}

/// Lines (1-based) that carry `# expect: CODE`.
pub fn expected_lines(text: &str, code: &str) -> Vec<u32> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split("# expect:")
                .nth(1)
                .is_some_and(|rest| rest.split([',', ' ']).any(|c| c.trim() == code))
        })
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Requests a latency histogram counts in buckets wholly below `ms`: those
/// that came in early, when `ms` is an injected delay.
pub fn counted_below(histogram: &[retrylint::run::Bucket], ms: f64) -> u64 {
    histogram
        .iter()
        .filter(|b| b.le_ms < ms)
        .map(|b| b.count)
        .sum()
}

/// Runs `attempt` until a run's figures are within a real-time tolerance, at
/// most three times: a stalled CI machine can only make a run slower, so one
/// quiet run shows what the code does. `attempt` asserts what is exact
/// itself, on every run, and returns why a tolerance was missed.
pub fn within_three_runs(mut attempt: impl FnMut() -> Result<(), String>) {
    let mut missed = Vec::new();
    for _ in 0..3 {
        match attempt() {
            Ok(()) => return,
            Err(why) => missed.push(why),
        }
    }
    panic!("out of tolerance on three runs:\n{}", missed.join("\n"));
}
