//! Every rule fires exactly at the lines its fixture marks with `# expect: CODE`,
//! and never on its `_ok` fixture.

use crate::common;

use retrylint::lint::RULES;

fn fixture(name: &str) -> String {
    let path = format!("tests/fixtures/rules/{name}.yaml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn lines_of(code: &str, text: &str, name: &str) -> Vec<u32> {
    // A fixture that names traces in `sources:` (RL021, RL022) is loaded
    // from its file, with them merged in.
    let t = if text.contains("\nsources:") {
        common::load_file_with_sources(&format!("tests/fixtures/rules/{name}.yaml"))
    } else {
        retrylint::topology::load_str(text, name, name, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let report = common::check(&t);
    let mut lines: Vec<u32> = report
        .findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| f.line)
        .collect();
    lines.dedup();
    lines
}

#[test]
fn each_rule_fires_at_the_marked_lines() {
    for rule in RULES {
        let text = fixture(&format!("{}_fires", rule.code));
        let want = common::expected_lines(&text, rule.code);
        assert!(!want.is_empty(), "{}_fires marks no line", rule.code);
        let got = lines_of(rule.code, &text, &format!("{}_fires", rule.code));
        assert_eq!(
            got, want,
            "{} ({}) fired at the wrong lines",
            rule.code, rule.name
        );
    }
}

#[test]
fn each_rule_is_quiet_on_its_ok_fixture() {
    for rule in RULES {
        let text = fixture(&format!("{}_ok", rule.code));
        let got = lines_of(rule.code, &text, &format!("{}_ok", rule.code));
        assert!(
            got.is_empty(),
            "{} fired on its ok fixture at {got:?}",
            rule.code
        );
    }
}

#[test]
fn the_clean_example_has_no_errors_or_warnings() {
    let t = common::load_file("examples/clean.yaml");
    let report = common::check(&t);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
}

#[test]
fn findings_name_the_call_and_carry_a_fix() {
    let text = fixture("RL003_fires");
    let t = common::load(&text).unwrap();
    let report = common::check(&t);
    let sidecar = report
        .findings
        .iter()
        .find(|f| f.code == "RL003" && f.layer.as_deref() == Some("istio-sidecar"))
        .expect("RL003 on the sidecar layer");
    assert_eq!(sidecar.service, "api");
    let call = sidecar.call.as_ref().unwrap();
    assert_eq!((call.from.as_str(), call.to.as_str()), ("api", "payments"));
    assert_eq!((sidecar.line, sidecar.column), (14, 13));
    assert_eq!(
        sidecar.help,
        "add idempotency_key: true or stop retrying POST /payouts in the istio-sidecar layer (max_attempts: 1, or retry_on: [connect])"
    );
}

#[test]
fn amplification_fix_keeps_the_outermost_layer() {
    let t = common::load(&fixture("RL001_fires")).unwrap();
    let report = common::check(&t);
    let db = report
        .findings
        .iter()
        .find(|f| f.code == "RL001" && f.message.contains("`db`"))
        .unwrap();
    assert_eq!(
        db.help,
        "retry only at the client layer; set max_attempts: 1 at web → api, api → db"
    );
    assert!(
        db.message.starts_with("worst case 64 attempts reach `db`"),
        "{}",
        db.message
    );
}

#[test]
fn services_user_traffic_cannot_reach_are_checked_too() {
    // `b` is a second root (a batch job, say) beside the entry `a`: its call
    // is configuration like any other.
    let text = "version: 1\nentry: a\nservices:\n  a: {}\n  b: { calls: [ { to: c, retry: { max_attempts: 4 } } ] }\n  c: {}\n";
    let t = retrylint::topology::load_str(text, "t.yaml", "t", &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut found: Vec<(String, u32, u32)> = common::check(&t)
        .findings
        .iter()
        .map(|f| (f.code.to_string(), f.line, f.column))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("RL005".to_owned(), 5, 26),
            ("RL011".to_owned(), 5, 19),
            ("RL012".to_owned(), 5, 26),
        ]
    );
}

/// RL007 names what the timed-out layer waits for, and the side that must
/// still propagate the deadline: both, only the caller, or only the callee.
#[test]
fn deadline_overrun_names_the_side_that_does_not_propagate() {
    let text = |web: bool, api: bool, sidecar: bool| {
        let via = if sidecar {
            "\n        via: [{ name: mesh, retry: { max_attempts: 2 }, timeout: 900ms }]"
        } else {
            ""
        };
        format!(
            "version: 1\nentry: web\nservices:\n  web:\n    deadline_propagation: {web}\n    calls:\n      - to: api\n        timeout: 100ms{via}\n  api:\n    deadline_propagation: {api}\n    latency: {{ p50: 100ms, p99: 400ms }}\n"
        )
    };
    for (web, api, sidecar, message, side) in [
        (
            false,
            false,
            false,
            "web → api times out after 100ms but `api` can take 400ms at worst: work nobody waits for",
            "both web and api",
        ),
        (
            false,
            true,
            false,
            "web → api times out after 100ms but `api` can take 400ms at worst: work nobody waits for",
            "web",
        ),
        (
            true,
            false,
            false,
            "web → api times out after 100ms but `api` can take 400ms at worst: work nobody waits for",
            "api",
        ),
        (
            false,
            false,
            true,
            "web → api times out after 100ms but the inner retry layers and `api` can take",
            "both web and api",
        ),
    ] {
        let t = retrylint::topology::load_str(
            &text(web, api, sidecar),
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let report = common::check(&t);
        let f = report
            .findings
            .iter()
            .find(|f| f.code == "RL007" && f.layer.as_deref() == Some("app"))
            .unwrap_or_else(|| panic!("no RL007 on the app layer: {:#?}", report.findings));
        assert!(
            f.message.starts_with(message),
            "{web} {api} {sidecar}: {}",
            f.message
        );
        assert_eq!(
            f.help,
            format!(
                "fit the work under api inside 100ms (fewer inner attempts or shorter inner timeouts), or set deadline_propagation: true on {side}"
            ),
            "{web} {api} {sidecar}"
        );
        assert!(f.label.starts_with("100ms < "), "{}", f.label);
    }
}

/// RL001 on a hot path longer than it shows: the route and the factors say
/// how much is left out, and the help counts the layers it does not name.
#[test]
fn retry_amplification_on_a_long_path_says_what_it_leaves_out() {
    let mut text = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..12 {
        if i < 11 {
            text.push_str(&format!(
                "  s{i}:\n    calls:\n      - to: s{}\n        retry: {{ max_attempts: 2, backoff: {{ kind: exponential, base: 10ms, cap: 100ms, jitter: full }} }}\n        timeout: 1s\n",
                i + 1
            ));
        } else {
            text.push_str("  s11: {}\n");
        }
    }
    let t = retrylint::topology::load_str(&text, "chain.yaml", "chain", &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let report = common::check(&t);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "RL001" && f.service == "s11")
        .expect("RL001 on s11");
    assert_eq!(
        f.message,
        "worst case 2048 attempts reach `s11` per user request (limit 10); hottest path s0 → … → s4 → s5 → s6 → s7 → s8 → s9 → s10 → s11 multiplies …(3 more) × 2 × 2 × 2 × 2 × 2 × 2 × 2 × 2"
    );
    assert_eq!(
        f.help,
        "retry only at s0 → s1; set max_attempts: 1 at s3 → s4, s4 → s5, s5 → s6, s6 → s7, s7 → s8, s8 → s9, s9 → s10, s10 → s11 and 2 more layers above them"
    );
    assert_eq!(f.label, "2048 attempts reach s11");
}
