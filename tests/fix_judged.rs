//! `check --fix` never makes the storm worse (issue 28): on every shipped
//! example and every fix fixture, the file `--fix` writes, simulated under
//! the default burst and a total outage exactly as the judge runs them
//! (`--seed 42 --trials 10`, default load and length), succeeds no less and
//! sends no service more attempts than the file as written — within the
//! judge's stated noise (`retrylint::fix::judge::beyond_noise`).

mod common;

use common::run::retrylint;
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
    let (code, _, err) = retrylint(&["check", fixed, "--fix", "--exit-zero"]);
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
