//! Issue 33: deadline overruns from the configuration alone. A callee may
//! hang, so each attempt may last its whole per-attempt timeout whatever the
//! declared latency; RL007 names the chain at the inner call, with the fix;
//! figures on declared latencies stay beside the hang figures; and figures
//! that rest on a default say which.

use crate::common;

use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

fn check_json(path: &str) -> Value {
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .args(["check", "--format", "json", path])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}{}", String::from_utf8_lossy(&out.stderr)))
}

fn of_code<'a>(report: &'a Value, code: &'a str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn row<'a>(report: &'a Value, service: &str) -> &'a Value {
    report["amplification"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["service"] == service)
        .unwrap_or_else(|| panic!("no row for {service}"))
}

/// Seed 002 as written: no latency declared anywhere. The 1 ms default
/// made api's worst case 304 ms and RL007 stayed silent; if db hangs, api
/// works 2 s × 3 + 300 ms of waits + its own 1 ms.
#[test]
fn seed_002_overruns_from_the_timeouts_alone() {
    let report = check_json("examples/seed-002-deadline.yaml");
    let found = of_code(&report, "RL007");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = found[0];
    // At api → db's timeout, where the fix goes, not at frontend's.
    assert_eq!(
        (&f["line"], &f["column"]),
        (&Value::from(26), &Value::from(9))
    );
    assert_eq!(f["service"], "api");
    assert_eq!(f["call"]["from"], "api");
    assert_eq!(f["call"]["to"], "db");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        f["message"],
        "api → db: 2s timeout × 3 attempts + 300ms of waits keep `api` working 6.301s if `db` hangs, past the 2s timeout of frontend → api: work nobody waits for; `api`'s own work counted at the 1ms default latency (none declared)"
    );
    // (2s − api's own 1ms − 300ms of waits) / 3 attempts = 566.33ms.
    assert_eq!(
        f["help"],
        "lower the timeout of api → db to 566ms so its attempts and waits fit in 2s with the rest of api's work, or set deadline_propagation: true on both frontend and api"
    );
    // The figures beside it: the old ones on the 1 ms default, and the hang ones.
    let api = row(&report, "api");
    assert_eq!(api["worst_response_ms"], 304.0);
    assert_eq!(api["worst_response_if_hang_ms"], 6301.0);
    assert_eq!(
        row(&report, "frontend")["worst_response_if_hang_ms"],
        2001.0
    );
}

/// The suggested timeout does fit: with it, the finding goes.
#[test]
fn the_timeout_rl007_suggests_fits() {
    let text = std::fs::read_to_string("examples/seed-002-deadline.yaml").unwrap();
    let at = |tmo: &str| {
        let fixed = text.replacen(
            "      - to: db\n        timeout: 2s",
            &format!("      - to: db\n        timeout: {tmo}"),
            1,
        );
        assert_ne!(fixed, text);
        let t = common::load(&fixed).unwrap();
        common::check(&t)
            .findings
            .iter()
            .filter(|f| f.code == "RL007")
            .count()
    };
    assert_eq!(at("566ms"), 0);
    assert_eq!(at("567ms"), 1);
}

/// With latencies declared, the figure of before issue 33 stays, beside the
/// hang figure: api 10ms + 3 × min(2s, db's 40ms) + 300ms = 430ms.
#[test]
fn declared_latencies_keep_their_figure_beside_the_hang_figure() {
    let text = "version: 1\nentry: frontend\nservices:\n  frontend:\n    latency: { p50: 2ms, p99: 8ms }\n    calls:\n      - to: api\n        timeout: 2s\n  api:\n    latency: { p50: 4ms, p99: 10ms }\n    calls:\n      - to: db\n        timeout: 2s\n        retry:\n          max_attempts: 3\n          backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full }\n  db: { latency: { p50: 5ms, p99: 40ms } }\n";
    let t = common::load(text).unwrap();
    let r = common::check(&t);
    let rl007: Vec<_> = r.findings.iter().filter(|f| f.code == "RL007").collect();
    assert_eq!(rl007.len(), 1, "{rl007:#?}");
    assert_eq!((rl007[0].line, rl007[0].column), (13, 9));
    assert_eq!(
        rl007[0].message,
        "api → db: 2s timeout × 3 attempts + 300ms of waits keep `api` working 6.31s if `db` hangs (430ms at p99 latencies), past the 2s timeout of frontend → api: work nobody waits for"
    );
    let figures: Vec<(&str, f64, Option<f64>)> = r
        .amplification
        .iter()
        .map(|a| {
            (
                a.service.as_str(),
                a.worst_response_ms,
                a.worst_response_if_hang_ms,
            )
        })
        .collect();
    // The p99 figures are those `check` printed before the hang figures.
    assert_eq!(
        figures,
        [
            ("frontend", 438.0, Some(2008.0)),
            ("api", 430.0, Some(6310.0)),
            ("db", 40.0, Some(40.0)),
        ]
    );
    let table = retrylint::formats::render_check(
        retrylint::formats::CheckFormat::Table,
        &r,
        Default::default(),
    );
    assert!(table.contains("6.31s (430ms at p99)"), "{table}");
    assert!(
        table.contains(
            "a user request to `frontend` takes 2.008s at worst through every retry layer if its callees hang (438ms at p99 latencies)"
        ),
        "{table}"
    );
}

/// Where no timeout bounds an attempt there is no hang figure: the output
/// names the call without one (RL011's finding) instead of a number.
#[test]
fn no_timeout_is_said_not_counted() {
    let text = "version: 1\nentry: web\nservices:\n  web: { calls: [ { to: api, timeout: 1s } ] }\n  api: { calls: [ { to: db } ] }\n  db: {}\n";
    let t = common::load(text).unwrap();
    let r = common::check(&t);
    let api = r.amplification.iter().find(|a| a.service == "api").unwrap();
    assert_eq!(api.worst_response_if_hang_ms, None);
    let untimed = api.untimed_call.as_ref().unwrap();
    assert_eq!((untimed.from.as_str(), untimed.to.as_str()), ("api", "db"));
    // web's call to api is bounded by its own timeout.
    let web = r.amplification.iter().find(|a| a.service == "web").unwrap();
    assert_eq!(web.worst_response_if_hang_ms, Some(1001.0));
    // RL007 leaves it to RL011, which fires at api → db.
    assert!(
        r.findings.iter().all(|f| f.code != "RL007"),
        "{:#?}",
        r.findings
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.code == "RL011" && f.service == "api"),
        "{:#?}",
        r.findings
    );
    let table = retrylint::formats::render_check(
        retrylint::formats::CheckFormat::Table,
        &r,
        Default::default(),
    );
    assert!(table.contains("no timeout"), "{table}");
    assert!(
        table.contains("`no timeout`: a call on the way has none (RL011)"),
        "{table}"
    );
    assert!(
        table.contains("own work at the 1ms default latency where none is declared"),
        "{table}"
    );
}

/// An Istio route without `perTryTimeout`: Envoy gives each attempt the
/// route timeout, so a hung callee leaves room for one attempt. The finding
/// says the timeout is that default.
#[test]
fn istio_without_a_per_try_timeout_says_which_default() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.yaml"),
        "version: 1\nentry: web\nsources: [ vs.yaml ]\nservices:\n  web:\n    calls:\n      - to: api\n        timeout: 3s\n  api: {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("vs.yaml"),
        "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: api\nspec:\n  hosts:\n  - api\n  http:\n  - route:\n    - destination:\n        host: api\n    timeout: 2s\n    retries:\n      attempts: 2\n      retryOn: 5xx\n",
    )
    .unwrap();
    let path = dir.path().join("t.yaml");
    let report = check_json(path.to_str().unwrap());
    let found = of_code(&report, "RL008");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = found[0];
    assert_eq!(f["layer"], "istio-sidecar");
    assert!(f["file"].as_str().unwrap().ends_with("vs.yaml"), "{f:#}");
    assert_eq!(
        (&f["line"], &f["column"]),
        (&Value::from(14), &Value::from(7))
    );
    assert_eq!(
        f["message"],
        "the istio-sidecar layer of web → api allows 3 attempts but if `api` hangs only 1 can start before the 2s timeout of the istio-route layer of web → api: each attempt lasts its 2s timeout (perTryTimeout unset: Envoy's default gives each attempt the route timeout), so attempt 2 would start at 2s"
    );
}

/// The examples of the nearest peer (RetryStorm), translated with each
/// service's timeout and retries on the calls it makes and no latency
/// declared: its timeout inversion (gateway 3 s over svc-a 5 s × 4) is found
/// from the timeouts alone, and its healthy topology stays quiet.
#[test]
fn the_peers_examples_need_no_latencies() {
    let unhealthy = "version: 1\nentry: gateway\nservices:\n  gateway:\n    calls: [ { to: svc-a, timeout: 3s, retry: { max_attempts: 3 } } ]\n  svc-a:\n    calls: [ { to: svc-b, timeout: 5s, retry: { max_attempts: 4 } } ]\n  svc-b: {}\n";
    let t = common::load(unhealthy).unwrap();
    let r = common::check(&t);
    let rl007: Vec<_> = r.findings.iter().filter(|f| f.code == "RL007").collect();
    assert_eq!(rl007.len(), 1, "{rl007:#?}");
    assert_eq!((rl007[0].service.as_str(), rl007[0].line), ("svc-a", 7));
    assert!(
        rl007[0].message.starts_with(
            "svc-a → svc-b: 5s timeout × 4 attempts keep `svc-a` working 20.001s if `svc-b` hangs, past the 3s timeout of gateway → svc-a"
        ),
        "{}",
        rl007[0].message
    );
    let healthy = "version: 1\nentry: api\nservices:\n  api:\n    calls: [ { to: backend, timeout: 10s, retry: { max_attempts: 2 } } ]\n  backend: { calls: [] }\n";
    let t = common::load(healthy).unwrap();
    let r = common::check(&t);
    assert!(
        r.findings
            .iter()
            .all(|f| f.code != "RL007" && f.code != "RL008"),
        "{:#?}",
        r.findings
    );
}

/// `--format short`: one line per finding for logs, with the route from the
/// entry down to it, then the summary; the exit code as for every format.
#[test]
fn short_format_is_one_line_per_finding_with_its_route() {
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .args([
            "check",
            "--format",
            "short",
            "examples/seed-002-deadline.yaml",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "examples/seed-002-deadline.yaml:26:9: warning[RL007] frontend → api → db: api → db: 2s timeout × 3 attempts + 300ms of waits keep `api` working 6.301s if `db` hangs, past the 2s timeout of frontend → api: work nobody waits for; `api`'s own work counted at the 1ms default latency (none declared) — fix: lower the timeout of api → db to 566ms so its attempts and waits fit in 2s with the rest of api's work, or set deadline_propagation: true on both frontend and api\n\
         examples/seed-002-deadline.yaml:27:9: warning[RL012] frontend → api → db: api → db retries with no budget: under a total outage it sends 3× the load — fix: add budget: { kind: ratio, ratio: 0.1, min_per_second: 10 }\n\
         retrylint: 2 warnings in seed-002-deadline; passes at --fail-on error\n"
    );
    // The route follows the hottest path; a finding about another service
    // than the caller whose layer it blames (RL001) ends at that service.
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .args(["check", "--format", "short", "examples/ecommerce.yaml"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let t = common::load_file("examples/ecommerce.yaml");
    assert_eq!(lines.len(), common::check(&t).findings.len() + 1);
    assert!(
        lines.contains(&"examples/ecommerce.yaml:81:11: error[RL001] web → api → cart → db: worst case 486 attempts reach `db` per user request (limit 10); hottest path web → api → cart → db multiplies 2 × 3 × 3 × 3 × 4 — fix: retry only at the client layer; set max_attempts: 1 at web → api, the istio-sidecar layer of web → api, api → cart, cart → db"),
        "{text}"
    );
    assert_eq!(
        lines.last(),
        Some(&"retrylint: 11 errors, 29 warnings, 7 infos in ecommerce; fails at --fail-on error")
    );
}
