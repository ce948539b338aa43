//! Every `check` format on one topology, as snapshots, plus the properties the
//! snapshots cannot show: SARIF against the official schema, fingerprints that
//! stay put, colour only on request, safe mermaid ids.
//!
//! Paths are given relative ("examples/ecommerce.yaml") and cargo runs tests
//! from the crate root, so every output names the file the same way.

use crate::common;

use retrylint::formats::{CheckFormat, Style, render_check};
use retrylint::lint::{CheckReport, RULES, Severity};
use serde_json::Value;

fn report(path: &str) -> CheckReport {
    common::check(&common::load_file(path))
}

fn render(format: CheckFormat, r: &CheckReport) -> String {
    render_check(
        format,
        r,
        Style {
            color: false,
            link_base: None,
        },
    )
}

fn ecommerce() -> CheckReport {
    report("examples/ecommerce.yaml")
}

#[test]
fn table_ecommerce() {
    insta::assert_snapshot!(render(CheckFormat::Table, &ecommerce()));
}

#[test]
fn markdown_ecommerce() {
    insta::assert_snapshot!(render(CheckFormat::Markdown, &ecommerce()));
}

#[test]
fn json_ecommerce() {
    insta::assert_snapshot!(render(CheckFormat::Json, &ecommerce()));
}

#[test]
fn sarif_ecommerce() {
    insta::assert_snapshot!(render(CheckFormat::Sarif, &ecommerce()));
}

#[test]
fn github_ecommerce() {
    insta::assert_snapshot!(render(CheckFormat::Github, &ecommerce()));
}

/// A topology with breakers and a hedged call: the `with breakers` and
/// `healthy` columns, which the other snapshots leave out.
fn breakers_hedging() -> CheckReport {
    report("tests/fixtures/breakers-hedging.yaml")
}

#[test]
fn table_breakers_hedging() {
    insta::assert_snapshot!(render(CheckFormat::Table, &breakers_hedging()));
}

#[test]
fn markdown_breakers_hedging() {
    insta::assert_snapshot!(render(CheckFormat::Markdown, &breakers_hedging()));
}

#[test]
fn json_amplification_breakers_hedging() {
    let v: Value = serde_json::from_str(&render(CheckFormat::Json, &breakers_hedging())).unwrap();
    insta::assert_snapshot!(serde_json::to_string_pretty(&v["amplification"]).unwrap());
}

#[test]
fn table_clean() {
    insta::assert_snapshot!(render(CheckFormat::Table, &report("examples/clean.yaml")));
}

#[test]
fn markdown_clean() {
    insta::assert_snapshot!(render(
        CheckFormat::Markdown,
        &report("examples/clean.yaml")
    ));
}

fn sarif(r: &CheckReport) -> Value {
    serde_json::from_str(&render(CheckFormat::Sarif, r)).expect("SARIF is JSON")
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let schema: Value =
        serde_json::from_str(include_str!("data/sarif-schema-2.1.0.json")).expect("schema is JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles");
    for path in [
        "examples/ecommerce.yaml",
        "examples/clean.yaml",
        "examples/sidecar.yaml",
        "examples/sre-book.yaml",
        "examples/aws-five-layers.yaml",
    ] {
        let log = sarif(&report(path));
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:#?}");
    }
    // The validator does reject a log that breaks the schema.
    let mut broken = sarif(&ecommerce());
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn sarif_has_every_field_github_code_scanning_reads() {
    let r = ecommerce();
    let log = sarif(&r);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(
        log["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let run = &log["runs"][0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "retrylint");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), RULES.len());
    for (rule, sarif_rule) in RULES.iter().zip(rules) {
        assert_eq!(sarif_rule["id"], rule.code);
        assert_eq!(sarif_rule["name"], rule.name);
        assert_eq!(sarif_rule["shortDescription"]["text"], rule.summary);
        let full = sarif_rule["fullDescription"]["text"].as_str().unwrap();
        for heading in [
            "## What it finds",
            "## Why it matters",
            "## Example",
            "## Fix",
        ] {
            assert!(full.contains(heading), "{}: {heading}", rule.code);
        }
        assert_eq!(sarif_rule["help"]["text"], full);
        assert_eq!(sarif_rule["help"]["markdown"], full);
        assert!(
            ["error", "warning", "note"].contains(
                &sarif_rule["defaultConfiguration"]["level"]
                    .as_str()
                    .unwrap()
            )
        );
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), r.findings.len());
    let mut fingerprints = std::collections::HashSet::new();
    for (f, res) in r.findings.iter().zip(results) {
        let index = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(res["ruleId"], f.code);
        assert_eq!(rules[index]["id"], f.code);
        let level = res["level"].as_str().unwrap();
        assert_eq!(
            level,
            if f.severity.as_str() == "info" {
                "note"
            } else {
                f.severity.as_str()
            }
        );
        let text = res["message"]["text"].as_str().unwrap();
        assert_eq!(text, format!("{} — fix: {}", f.message, f.help));
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "examples/ecommerce.yaml");
        let region = &loc["region"];
        assert_eq!(region["startLine"], f.line);
        assert_eq!(region["endLine"], f.line);
        assert_eq!(region["startColumn"], f.column);
        assert!(region["endColumn"].as_u64().unwrap() > u64::from(f.column));
        let fp = res["partialFingerprints"]["primaryLocationLineHash"]
            .as_str()
            .unwrap();
        let (hash, n) = fp.split_once(':').expect("hash:occurrence");
        assert_eq!(hash.len(), 16);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(n.parse::<u32>().unwrap() >= 1);
        assert!(
            fingerprints.insert(fp.to_owned()),
            "fingerprint {fp} repeats"
        );
    }
}

#[test]
fn sarif_fingerprints_survive_moved_lines() {
    // The same hazard two lines lower (a comment added above it) keeps its
    // fingerprint, so code scanning keeps the same alert.
    let text = std::fs::read_to_string("examples/sidecar.yaml").unwrap();
    let moved = text.replacen("services:", "# a new comment\n# and another\nservices:", 1);
    let before = sarif(&common::check(&common::load(&text).unwrap()));
    let after = sarif(&common::check(&common::load(&moved).unwrap()));
    let prints = |log: &Value| -> Vec<(Value, Value)> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].clone(),
                    r["partialFingerprints"]["primaryLocationLineHash"].clone(),
                )
            })
            .collect()
    };
    assert!(!prints(&before).is_empty());
    assert_eq!(prints(&before), prints(&after));
    let line = |log: &Value| {
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_u64()
    };
    assert_eq!(line(&after), line(&before).map(|l| l + 2));
}

#[test]
fn colour_only_when_asked() {
    let r = ecommerce();
    let plain = render(CheckFormat::Table, &r);
    let coloured = render_check(
        CheckFormat::Table,
        &r,
        Style {
            color: true,
            link_base: None,
        },
    );
    assert!(!plain.contains('\x1b'));
    assert!(coloured.contains("\x1b["));
    for format in [
        CheckFormat::Markdown,
        CheckFormat::Json,
        CheckFormat::Sarif,
        CheckFormat::Github,
    ] {
        let out = render_check(
            format,
            &r,
            Style {
                color: true,
                link_base: None,
            },
        );
        assert!(!out.contains('\x1b'), "{format:?} has ANSI codes");
    }
}

#[test]
fn github_prints_one_command_per_finding_then_a_summary() {
    let r = ecommerce();
    let out = render(CheckFormat::Github, &r);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), r.findings.len() + 1);
    for (f, line) in r.findings.iter().zip(&lines) {
        let command = match f.severity.as_str() {
            "info" => "notice",
            s => s,
        };
        let prefix = format!(
            "::{command} file=examples/ecommerce.yaml,line={},col={},",
            f.line, f.column
        );
        assert!(line.starts_with(&prefix), "{line}");
        assert!(
            line.contains(&format!(",title={} {}::", f.code, f.rule)),
            "{line}"
        );
    }
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("retrylint: 11 errors, 29 warnings, 7 infos in ecommerce")
    );
}

#[test]
fn markdown_mermaid_ids_are_safe_for_any_service_name() {
    let t = common::load(
        "version: 1
entry: edge-proxy
services:
  edge-proxy:
    calls:
      - to: db.primary
        timeout: 1s
        retry: { max_attempts: 3, backoff: { kind: exponential, base: 10ms, cap: 1s, jitter: full } }
      - to: end
        timeout: 1s
  db.primary: {}
  end: {}
",
    )
    .unwrap();
    let out = render(CheckFormat::Markdown, &common::check(&t));
    let graph = out
        .split("```mermaid\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    assert!(
        graph.contains("s0_edge_proxy[\"edge-proxy<br/>1×\"]"),
        "{graph}"
    );
    assert!(
        graph.contains("s1_db_primary[\"db.primary<br/>3×\"]"),
        "{graph}"
    );
    assert!(
        graph.contains("s0_edge_proxy -->|\"3×\"| s1_db_primary"),
        "{graph}"
    );
    assert!(
        graph.contains("s0_edge_proxy -->|\"1×\"| s2_end"),
        "{graph}"
    );
}

#[test]
fn markdown_marks_unreachable_services() {
    let t = common::load(
        "version: 1
entry: web
services:
  web: { calls: [ { to: api, timeout: 1s } ] }
  api: {}
  orphan: { calls: [ { to: api, timeout: 1s } ] }
",
    )
    .unwrap();
    let r = common::check(&t);
    let md = render(CheckFormat::Markdown, &r);
    assert!(
        md.contains("| `orphan` | – | – | – | unreachable from `web` |"),
        "{md}"
    );
    assert!(md.contains("class s2_orphan unreachable"), "{md}");
    let table = render(CheckFormat::Table, &r);
    assert!(table.contains("unreachable from `web`"), "{table}");
}

#[test]
fn markdown_opens_on_the_errors_folds_the_rest_and_links_each_location() {
    let r = ecommerce();
    let base = "https://github.com/acme/shop/blob/0123abc";
    let md = render_check(
        CheckFormat::Markdown,
        &r,
        Style {
            color: false,
            link_base: Some(base),
        },
    );
    let findings = md.split("### Amplification").next().unwrap();
    let first_warning = findings.find("🟡 warning").expect("warnings");
    let last_error = findings.rfind("🔴 error").expect("errors");
    assert!(last_error < first_warning, "errors first");
    let details = findings.find("<details><summary>").expect("folded");
    assert!(
        last_error < details && details < first_warning,
        "{findings}"
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
        .unwrap();
    let link = format!("[`{}:{}`]({base}/{}#L{})", f.file, f.line, f.file, f.line);
    assert!(md.contains(&link), "{link} in {md}");
    // Without a base, or for a path outside the repository, no link.
    let plain = render(CheckFormat::Markdown, &r);
    assert!(!plain.contains("](http"), "{plain}");
    let mut outside = r.clone();
    for f in &mut outside.findings {
        f.file = "../elsewhere/t.yaml".into();
    }
    let md = render_check(
        CheckFormat::Markdown,
        &outside,
        Style {
            color: false,
            link_base: Some(base),
        },
    );
    assert!(!md.contains(base), "{md}");
}
