//! `check --format sarif` streams: writing the log of a large chain grows the
//! process's peak memory by a few MB, not by the size of the log (it grew by
//! ten times the log's size when the log was built whole).

use crate::common;

use retrylint::formats::{self, CheckFormat, Style};

/// The process's peak resident memory, in kB (`VmHWM` in /proc/self/status).
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Counts what it is given and keeps none of it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_sarif_log_of_a_large_chain_is_written_as_it_is_made() {
    if !common::alone::in_own_process(
        "sarif_memory::the_sarif_log_of_a_large_chain_is_written_as_it_is_made",
    ) {
        return;
    }
    let n = 3_000;
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..n {
        y.push_str(&format!(
            "  s{i}: {{ calls: [ {{ to: s{}, timeout: 1s, retry: {{ max_attempts: 3 }} }} ] }}\n",
            i + 1
        ));
    }
    y.push_str(&format!("  s{n}: {{}}\n"));
    let t = common::load(&y).unwrap();
    let r = common::check(&t);
    let before = peak_kb();
    let mut out = Count(0);
    formats::write_check(CheckFormat::Sarif, &r, Style::default(), &mut out).unwrap();
    let grown_mb = (peak_kb() - before) / 1024;
    assert!(out.0 > 15_000_000, "{} bytes of SARIF", out.0);
    // The whole log as one value took about 13 bytes per byte written.
    assert!(
        grown_mb < 16,
        "peak memory grew by {grown_mb} MB for {} MB of SARIF",
        out.0 >> 20
    );
}
