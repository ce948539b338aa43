//! What each fuzz target feeds and checks, written once: the targets in
//! `fuzz_targets/` call these functions, and `tests/fuzz_corpus.rs` at the
//! repository root replays every committed corpus and regression input
//! through the same functions on stable Rust, without cargo-fuzz.
//!
//! Beyond "no panic", each checks the contract for bad input (DESIGN): a
//! loader either accepts the text or names a file:line:column inside it.

use std::sync::OnceLock;
use std::time::Duration;

use retrylint::chaos::load::fuzz_hook;
use retrylint::faults;
use retrylint::formats::{self, CheckFormat, Style};
use retrylint::lint::{self, CliLevels, ResolveError};
use retrylint::run::{Expectation, RunReport, ServiceReport};
use retrylint::topology::{self, LoadError, Presets, Topology};

/// The name a fuzzed file goes by in errors.
const FILE: &str = "fuzz.yaml";

fn presets() -> &'static Presets {
    static PRESETS: OnceLock<Presets> = OnceLock::new();
    PRESETS.get_or_init(Presets::embedded)
}

/// The topology fault scenarios are planned against: the shipped example,
/// whose service names (`db`, `cache`, …) the seed scenarios target.
fn fault_topology() -> &'static Topology {
    static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
    TOPOLOGY.get_or_init(|| {
        let text = include_str!("../../examples/ecommerce.yaml");
        topology::load_str(text, "ecommerce.yaml", "ecommerce", presets())
            .expect("examples/ecommerce.yaml loads")
    })
}

/// A topology file as `retrylint check` takes it: loaded; when accepted,
/// linted and rendered in every format; when refused, a located error.
pub fn topology(data: &[u8]) {
    // Files come in through `input::read`, which refuses non-UTF-8 text
    // before any parsing.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let t = match topology::load_str(text, FILE, "fuzz", presets()) {
        Ok(t) => t,
        Err(e) => return assert_located(&e, text),
    };
    let config = match lint::Config::resolve(&t, &CliLevels::default()) {
        Ok(c) => c,
        Err(ResolveError::Topology(e)) => return assert_located(&e, text),
        Err(ResolveError::Cli(e)) => panic!("no command-line levels were given, yet: {e}"),
    };
    let check = lint::check(&t, &config);
    for format in [
        CheckFormat::Table,
        CheckFormat::Markdown,
        CheckFormat::Json,
        CheckFormat::Sarif,
        CheckFormat::Github,
    ] {
        formats::render_check(
            format,
            &check,
            Style {
                color: false,
                link_base: None,
            },
        );
    }
}

/// A fault scenario as `chaos` and `simulate` take it: loaded, planned
/// against a topology, and asked what it does at each phase boundary.
pub fn faults(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match faults::load_str(text, FILE) {
        Ok(s) => s,
        Err(e) => return assert_located(&e, text),
    };
    let t = fault_topology();
    let plan = match scenario.plan(t) {
        Ok(p) => p,
        Err(e) => {
            let located = e
                .located()
                .unwrap_or_else(|| panic!("a target from the file without a position: {e}"));
            return assert_located(&located, text);
        }
    };
    let mut rng = retrylint::policy::seeded_rng(7);
    for sid in 0..t.services.len() {
        if !plan.is_target(sid) {
            continue;
        }
        plan.down_windows(sid);
        for p in &scenario.phases {
            for at in [
                Some(p.after),
                p.end(),
                p.end().and_then(|e| e.checked_add(Duration::from_nanos(1))),
            ] {
                let Some(at) = at else { continue };
                plan.effect(sid, at, &mut rng);
                plan.overload_capacity(sid, at);
            }
        }
    }
    for p in &scenario.phases {
        p.inject.describe();
    }
}

/// An `--expect` gate: parsed; when accepted, its threshold is a finite
/// number, parsing what it kept gives the same gate, and it evaluates
/// against a report.
pub fn expect(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let gate = match Expectation::parse(text) {
        Ok(g) => g,
        Err(e) => {
            e.to_string();
            return;
        }
    };
    assert!(
        gate.threshold.is_finite(),
        "`{text}` was accepted with threshold {}",
        gate.threshold
    );
    assert_eq!(
        Expectation::parse(&gate.expr).as_ref(),
        Ok(&gate),
        "parsing the kept expression gives another gate"
    );
    let report = RunReport {
        services: vec![ServiceReport {
            service: "db".into(),
            received: 640,
            ..Default::default()
        }],
        ..Default::default()
    };
    let _ = gate.evaluate(&report);
}

/// A server's answer to the load driver's HTTP/1.1 client, over loopback:
/// the client either takes a final status from it or counts a broken
/// exchange, and never hangs.
pub fn http1_response(data: &[u8]) {
    if let Some(answer) = fuzz_hook::exchange(data) {
        assert!(
            (100..=999).contains(&answer.status),
            "status {} taken from the wire",
            answer.status
        );
        assert!(
            !(100..200).contains(&answer.status) || answer.status == 101,
            "the interim response {} was taken as the final one",
            answer.status
        );
    }
}

/// The contract for refused input: a position inside the text (line and
/// column from 1), a message on one line, and a rendering that works.
pub fn assert_located(e: &LoadError, text: &str) {
    let shown = e.to_string();
    let pos = e
        .pos
        .unwrap_or_else(|| panic!("an error without a position: {shown}"));
    // Any of CR, LF or CRLF may end a line for the YAML parser: this bound
    // counts a CRLF twice, which only makes it looser.
    let lines = 1 + text.bytes().filter(|&b| b == b'\n' || b == b'\r').count();
    assert!(
        pos.line >= 1 && pos.line as usize <= lines,
        "line {} is outside the text's 1..={lines}: {shown}",
        pos.line
    );
    assert!(pos.column >= 1, "column 0: {shown}");
    assert!(
        !shown.contains(char::is_control),
        "an error over several lines or with control characters: {shown:?}"
    );
    formats::error::render(e, Some(text), false);
}
