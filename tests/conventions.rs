//! The conventions that keep the rule catalogue honest: codes unique and sorted,
//! names kebab-case, the four doc headings, a fixture pair and an `explain`
//! snapshot for every rule, and every preset file embedded and valid.

use retrylint::formats::rules::explain;
use retrylint::lint::RULES;

#[test]
fn codes_are_unique_sorted_and_dense() {
    let codes: Vec<&str> = RULES.iter().map(|r| r.code).collect();
    let want: Vec<String> = (1..=RULES.len()).map(|i| format!("RL{i:03}")).collect();
    assert_eq!(codes, want);
}

#[test]
fn names_are_kebab_case_and_unique() {
    let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
    for n in &names {
        // Digits are words too (`hedging-delay-below-p50`); a name starts
        // with a letter.
        assert!(
            n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && n.starts_with(|c: char| c.is_ascii_lowercase()),
            "{n}"
        );
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), RULES.len());
}

#[test]
fn every_doc_has_the_four_headings_in_order() {
    for r in RULES {
        let mut at = 0;
        for h in [
            "## What it finds",
            "## Why it matters",
            "## Example",
            "## Fix",
        ] {
            let found = r.doc[at..]
                .find(h)
                .unwrap_or_else(|| panic!("{}: no `{h}`", r.code));
            at += found + h.len();
        }
        assert!(
            !r.summary.ends_with('.'),
            "{}: summary ends with a period",
            r.code
        );
        assert!(
            r.summary.chars().next().unwrap().is_lowercase(),
            "{}",
            r.code
        );
    }
}

#[test]
fn every_rule_has_its_fixture_pair() {
    for r in RULES {
        for kind in ["fires", "ok"] {
            let path = format!("tests/fixtures/rules/{}_{kind}.yaml", r.code);
            assert!(std::path::Path::new(&path).exists(), "missing {path}");
        }
    }
}

#[test]
fn every_rule_explains_itself() {
    for r in RULES {
        insta::assert_snapshot!(format!("explain_{}", r.code), explain(r));
    }
}

#[test]
fn every_preset_file_is_embedded_and_loads() {
    let presets = retrylint::topology::Presets::embedded();
    let mut files: Vec<String> = std::fs::read_dir("policies")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let names: Vec<String> = presets.names().map(str::to_owned).collect();
    assert_eq!(names, files);
    for name in &names {
        let y = format!(
            "version: 1\nservices:\n  a: {{ calls: [ {{ to: b, timeout: 1s, retry: {name} }} ] }}\n  b: {{}}\n"
        );
        retrylint::topology::load_str(&y, "t.yaml", "t", &presets)
            .unwrap_or_else(|e| panic!("preset {name}: {e}"));
    }
}

#[test]
fn the_design_presets_are_all_shipped() {
    let presets = retrylint::topology::Presets::embedded();
    for name in [
        "istio-default",
        "envoy-default",
        "linkerd-budget",
        "grpc-a6-example",
        "aws-sdk-standard",
        "aws-sdk-standard-2026",
        "polly-v8-default",
        "resilience4j-default",
        "finagle-budget",
        "sre-book",
        "recommended",
    ] {
        assert!(presets.get(name).is_some(), "{name}");
    }
}
