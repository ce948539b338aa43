//! `check --fix` never makes the storm worse (issue 28): on every shipped
//! example and every fix fixture, the file `--fix` writes, simulated under
//! the default burst and a total outage exactly as the judge runs them
//! (`--seed 42 --trials 10`, default load and length), succeeds no less and
//! sends no service more attempts than the file as written — within the
//! judge's stated noise (`retrylint::fix::judge::beyond_noise`).

use crate::common;

use common::run::{retrylint, retrylint_within};
use retrylint::fix::judge::beyond_noise;
use serde_json::Value;

/// (succeeded, requests, attempts per service) of one seeded run.
fn simulate(path: &str, fault: &str) -> (u64, u64, Vec<(String, u64)>) {
    let (code, out, err) = retrylint(&[
        "simulate", path, "--fault", fault, "--seed", "42", "--trials", "10", "--format", "json",
    ]);
    assert!(code == 0 || code == 1, "{path} {fault}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}: {err}"));
    let e = &v["end_to_end"];
    let received = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["service"].as_str().unwrap().to_owned(),
                s["received"].as_u64().unwrap(),
            )
        })
        .collect();
    (
        e["succeeded"].as_u64().unwrap(),
        e["requests"].as_u64().unwrap(),
        received,
    )
}

/// Fixes `source` in a copy and holds the fixed file to the file as written.
fn never_worse(source: &str) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fix_judged");
    std::fs::create_dir_all(&dir).unwrap();
    let name = source.replace('/', "_");
    let fixed = dir.join(&name);
    std::fs::copy(source, &fixed).unwrap();
    let fixed = fixed.to_str().unwrap();
    // The judge simulates every candidate fix, about 17 s for ecommerce in
    // a debug build on an idle 2-core machine; the suite's other tests share
    // those cores, so the bound is three minutes rather than one.
    let (code, _, err) = retrylint_within(
        &["check", fixed, "--fix", "--exit-zero"],
        std::time::Duration::from_secs(180),
    );
    assert_eq!(code, 0, "{source}: {err}");
    assert!(!err.contains("could not be judged"), "{source}: {err}");
    for fault in ["503-burst", "total-outage"] {
        let (ok_before, n, before) = simulate(source, fault);
        let (ok_after, _, after) = simulate(fixed, fault);
        assert!(
            !beyond_noise(ok_before, ok_after, n),
            "{source} under {fault}: success {ok_before} → {ok_after} of {n}\n{err}"
        );
        for ((service, was), (_, now)) in before.iter().zip(&after) {
            assert!(
                !beyond_noise(*now, *was, *was),
                "{source} under {fault}: {service} receives {was} → {now} attempts\n{err}"
            );
        }
    }
}

#[test]
fn fixing_ecommerce_never_makes_it_worse() {
    never_worse("examples/ecommerce.yaml");
}

#[test]
fn fixing_the_literature_examples_never_makes_them_worse() {
    for e in ["aws-five-layers", "sre-book"] {
        never_worse(&format!("examples/{e}.yaml"));
    }
}

#[test]
fn fixing_the_other_examples_never_makes_them_worse() {
    for e in [
        "clean",
        "sidecar",
        "surge",
        "surge-budget",
        "seed-002-deadline",
    ] {
        never_worse(&format!("examples/{e}.yaml"));
    }
}

#[test]
fn fixing_every_fix_fixture_never_makes_it_worse() {
    let mut fixtures: Vec<String> = std::fs::read_dir("tests/fixtures/fix")
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with("-before.yaml"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 18, "{fixtures:?}");
    for f in &fixtures {
        never_worse(f);
    }
}

/// The rules whose fixes a SARIF log offers, and its stderr.
fn sarif_fixes(path: &str) -> (Vec<String>, Vec<String>, String) {
    let (code, out, err) = retrylint(&["check", path, "--format", "sarif", "--exit-zero"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}: {err}"));
    let results = v["runs"][0]["results"].as_array().unwrap();
    let rule = |r: &Value| r["ruleId"].as_str().unwrap().to_owned();
    (
        results
            .iter()
            .filter(|r| r.get("fixes").is_some())
            .map(rule)
            .collect(),
        results.iter().map(rule).collect(),
        err,
    )
}

#[test]
fn sarif_offers_only_the_fixes_check_fix_would_make() {
    // `check --fix` holds back every fix of sre-book.yaml: the simulation
    // measures each rule's fixes worse (retrying only at the top sends
    // the layer below more attempts). SARIF offers none of them, and says so.
    let (fixed, all, err) = sarif_fixes("examples/sre-book.yaml");
    assert!(fixed.is_empty(), "{fixed:?}");
    assert_eq!(all.len(), 9, "{all:?}");
    assert!(
        err.contains(
            "9 fixes left out of the SARIF: with them, the simulation measured the topology worse"
        ),
        "{err}"
    );
    // seed-002's one fix is not worse: offered, as `--fix` makes it.
    let (fixed, _, err) = sarif_fixes("examples/seed-002-deadline.yaml");
    assert_eq!(fixed.len(), 1, "{fixed:?} {err}");
    assert!(!err.contains("left out"), "{err}");
}

#[test]
fn a_fix_held_back_is_not_suggested_on_a_pull_request() {
    // The whole file is new (an empty base): every finding is on a changed
    // line, and every fix of sre-book.yaml is held back.
    let dir = std::env::temp_dir().join(format!("retrylint-held-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("base.yaml");
    std::fs::write(&base, "").unwrap();
    let comments = dir.join("review.json");
    let (code, md, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--format",
        "markdown",
        "--base",
        base.to_str().unwrap(),
        "--review-comments",
        comments.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!md.contains("```suggestion"), "{md}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&comments).unwrap()).unwrap();
    assert_eq!(v["comments"].as_array().unwrap().len(), 0, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every topology file under tests/ that loads on its own (no `sources:`,
/// one entry), fixed by `--fix` and held to the file as written like the
/// examples above. About 90 s of debug simulation, so it runs with
/// `RETRYLINT_LARGE_TESTS=1` (`.ci/run` sets it) or in release, and says so
/// when it does not.
#[test]
fn fixing_every_topology_the_tests_use_never_makes_it_worse() {
    if cfg!(debug_assertions) && std::env::var_os("RETRYLINT_LARGE_TESTS").is_none() {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "NOT RUN fixing_every_topology_the_tests_use_never_makes_it_worse: set RETRYLINT_LARGE_TESTS=1 (or cargo test --release)"
        );
        return;
    }
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from("tests")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut judged = 0;
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        if !text.contains("\nservices:") || text.contains("\nsources:") || text.len() > 20_000 {
            continue;
        }
        let path = p.display().to_string();
        let (code, out, _) = retrylint(&["check", &path, "--format", "json", "--exit-zero"]);
        if code != 0 {
            continue; // invalid on purpose: a bad-input fixture
        }
        let v: Value = serde_json::from_str(&out).unwrap();
        if v.get("entries").is_some() {
            continue; // several entries: simulate needs --entry
        }
        // A fixture too large to judge within the budget is fixed unjudged,
        // with a note: not what this test holds.
        let copy = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-judged.yaml");
        std::fs::copy(p, &copy).unwrap();
        let (_, _, err) = retrylint(&["check", copy.to_str().unwrap(), "--fix", "--exit-zero"]);
        if err.contains("could not be judged") {
            continue;
        }
        never_worse(&path);
        judged += 1;
    }
    assert!(judged >= 50, "only {judged} topologies judged");
}
