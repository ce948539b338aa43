//! `with_breakers` and `healthy`, exactly, on topologies small enough to
//! work out by hand (each derivation is in the test's comment), and the rules
//! about breakers and hedging on the cases the issue names.

use crate::common;

use retrylint::lint::{AmplificationRow, CheckReport};

fn row<'r>(r: &'r CheckReport, service: &str) -> &'r AmplificationRow {
    r.amplification
        .iter()
        .find(|row| row.service == service)
        .unwrap_or_else(|| panic!("no service {service}"))
}

fn figures(y: &str, field: fn(&AmplificationRow) -> f64) -> Vec<(String, f64)> {
    let r = common::check(&common::load(y).unwrap_or_else(|e| panic!("{e}")));
    r.amplification
        .iter()
        .map(|row| (row.service.clone(), field(row)))
        .collect()
}

fn assert_close(got: &[(String, f64)], want: &[(&str, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((name, g), (wname, w)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{name}: got {g}, want {w} (all: {got:?})"
        );
    }
}

const RETRY3: &str =
    "{ max_attempts: 3, backoff: { kind: exponential, base: 50ms, cap: 1s, jitter: full } }";

/// web → api → db, 3 attempts on each call; `api_breaker` and `db_breaker`
/// go on the two calls when not empty.
fn chain(api_breaker: &str, db_breaker: &str) -> String {
    let b = |spec: &str| {
        if spec.is_empty() {
            String::new()
        } else {
            format!("\n        circuit_breaker: {spec}")
        }
    };
    format!(
        "version: 1\nservices:\n  web:\n    calls:\n      - to: api\n        timeout: 2s\n        retry: {RETRY3}{}\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: {RETRY3}{}\n  db: {{}}\n",
        b(api_breaker),
        b(db_breaker)
    )
}

#[test]
fn the_reference_rate_is_the_run_default() {
    assert_eq!(
        retrylint::prediction::REFERENCE_RATE,
        retrylint::run::LoadSettings::DEFAULT_RATE
    );
}

#[test]
fn an_outside_breaker_admits_its_probes_share_of_requests_and_their_retries() {
    // 20 user requests/s reach web, which calls api once each: 20 calls/s
    // reach the breaker. Open under the outage, it lets 1 probe through
    // every 5 s = 0.2/s: the share 0.2 / 20 = 1/100. Each admitted request
    // runs the whole retry loop: api gets 3 × 1/100 = 0.03 attempts per
    // user request, and api → db (no breaker) 3 more each: db 0.09.
    let y = chain(
        "{ failure_rate: 0.5, open_for: 5s, half_open_calls: 1, open_jitter: 0.2 }",
        "",
    );
    assert_close(
        &figures(&y, |r| r.with_breakers),
        &[("web", 1.0), ("api", 0.03), ("db", 0.09)],
    );
    // The worst case of one request is none of the breaker's business.
    assert_close(
        &figures(&y, |r| r.worst_case),
        &[("web", 1.0), ("api", 3.0), ("db", 9.0)],
    );
}

#[test]
fn an_inside_breaker_admits_each_attempt_separately() {
    // Inside the loop the breaker is asked before each of the 3 attempts:
    // 60 asks/s, 0.2 admitted: the share 1/300, and api gets
    // 3 × 1/300 = 0.01 attempts per user request; db 3 × 0.01 = 0.03.
    let y = chain(
        "{ failure_rate: 0.5, open_for: 5s, half_open_calls: 1, open_jitter: 0.2, position: inside }",
        "",
    );
    assert_close(
        &figures(&y, |r| r.with_breakers),
        &[("web", 1.0), ("api", 0.01), ("db", 0.03)],
    );
}

#[test]
fn a_breaker_below_another_sees_only_what_the_upper_one_lets_through() {
    // api's figure is 0.03 (as above), so api → db is made 20 × 0.03 =
    // 0.6 times a second and its inside breaker is asked 3 × 0.6 = 1.8
    // times a second. With 10 probes per 5 s (2/s) it admits them all:
    // db 0.03 × 3 = 0.09, as without it.
    let upper = "{ failure_rate: 0.5, open_for: 5s, half_open_calls: 1, open_jitter: 0.2 }";
    let y = chain(
        upper,
        "{ failure_rate: 0.5, open_for: 5s, half_open_calls: 10, open_jitter: 0.2, position: inside }",
    );
    assert_close(
        &figures(&y, |r| r.with_breakers),
        &[("web", 1.0), ("api", 0.03), ("db", 0.09)],
    );
    // With 1 probe per 5 s it admits 0.2 / 1.8 = 1/9 of the 3 attempts:
    // db 0.03 × 3 × 1/9 = 0.01.
    let y = chain(
        upper,
        "{ failure_rate: 0.5, open_for: 5s, half_open_calls: 1, open_jitter: 0.2, position: inside }",
    );
    assert_close(
        &figures(&y, |r| r.with_breakers),
        &[("web", 1.0), ("api", 0.03), ("db", 0.01)],
    );
}

#[test]
fn budgets_client_and_via_breakers_combine_as_stated() {
    // Client layer: 2 attempts, its breaker asked once per user request:
    // 20/s against 1 probe per 5 s, so web gets 2 × 1/100 = 0.02.
    // web → api: 3 attempts under a 10 % ratio budget (1.1 in the steady
    // state) and no breaker: api 0.02 × 1.1 = 0.022.
    // api → db: the app layer tries 3 times (no budget), so the mesh layer
    // is invoked 0.022 × 3 = 0.066 times per user request, 1.32 times a
    // second; its breaker (1 probe per 10 s = 0.1/s) admits 0.1 / 1.32, and
    // each admitted invocation sends its 2 attempts: db gets
    // 0.066 × 2 × 0.1 / 1.32 = 0.01.
    let y = "version: 1\nclient:\n  timeout: 10s\n  retry: { max_attempts: 2, backoff: { kind: constant, base: 100ms, jitter: full } }\n  circuit_breaker: { failure_rate: 0.5, open_for: 5s, half_open_calls: 1, open_jitter: 0.2 }\nservices:\n  web:\n    calls:\n      - to: api\n        timeout: 2s\n        retry: { max_attempts: 3, backoff: { kind: constant, base: 100ms, jitter: full }, budget: { kind: ratio, ratio: 0.1 } }\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, backoff: { kind: constant, base: 10ms, jitter: full } }\n        via:\n          - name: mesh\n            timeout: 200ms\n            retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms, jitter: full } }\n            circuit_breaker: { failure_rate: 0.5, open_for: 10s, half_open_calls: 1, open_jitter: 0.2 }\n  db: {}\n";
    assert_close(
        &figures(y, |r| r.with_breakers),
        &[("web", 0.02), ("api", 0.022), ("db", 0.01)],
    );
    assert_close(
        &figures(y, |r| r.with_budgets),
        &[("web", 2.0), ("api", 2.2), ("db", 13.2)],
    );
}

#[test]
fn without_breakers_the_figure_is_with_budgets() {
    let r = common::check(&common::load_file("examples/ecommerce.yaml"));
    assert!(!r.has_breakers);
    for row in &r.amplification {
        assert_eq!(row.with_breakers, row.with_budgets, "{}", row.service);
    }
}

/// web hedges its call to `callee` (`hedging`), and calls nothing else.
fn hedged(hedging: &str, services: &str) -> String {
    format!(
        "version: 1\nservices:\n  web:\n    calls:\n      - to: callee\n        timeout: 1s\n        hedging: {hedging}\n{services}"
    )
}

#[test]
fn a_fixed_latency_above_the_delay_sends_a_copy_every_time_and_below_it_none() {
    // callee always takes 30ms. Copies go at 0, 20ms and 40ms: the one at
    // 20ms goes (nothing answered yet), the one at 40ms does not (the
    // first answered at 30ms): 2 copies per request.
    let y = hedged(
        "{ max_attempts: 3, delay: 20ms }",
        "  callee: { latency: 30ms }\n",
    );
    assert_close(
        &figures(&y, |r| r.healthy),
        &[("web", 1.0), ("callee", 2.0)],
    );
    // Below the delay: the answer at 10ms comes before any copy.
    let y = hedged(
        "{ max_attempts: 3, delay: 20ms }",
        "  callee: { latency: 10ms }\n",
    );
    assert_close(
        &figures(&y, |r| r.healthy),
        &[("web", 1.0), ("callee", 1.0)],
    );
    // The worst case counts every copy.
    assert_eq!(
        common::amplification(&common::check(&common::load(&y).unwrap()), "callee"),
        3.0
    );
}

#[test]
fn a_log_normal_callee_gives_the_expected_copies_of_its_tail() {
    // callee: p50 40ms, p99 200ms, so ln(latency) is normal with
    // σ = ln(200/40) / z₉₉ = 1.6094379 / 2.3263479 = 0.69183028.
    // late(x) = P(latency > x) = ½ erfc(ln(x / 40ms) / (σ √2)):
    //   late(50ms)  = ½ erfc(0.22314355 / 0.97839...) = 0.37352148532725780
    //   late(100ms) = ½ erfc(0.91629073 / 0.97839...) = 0.09267775203190110
    // (the values from glibc's erfc, independent of ours). With 3 copies
    // 50ms apart: 1 + late(50) + late(100) × late(50) = 1.4081386169230048.
    let late50 = 0.373_521_485_327_257_8;
    let late100 = 0.092_677_752_031_901_1;
    let by_hand = 1.0 + late50 + late100 * late50;
    let y = hedged(
        "{ max_attempts: 3, delay: 50ms }",
        "  callee: { latency: { p50: 40ms, p99: 200ms } }\n",
    );
    let got = figures(&y, |r| r.healthy);
    assert_close(&got, &[("web", 1.0), ("callee", by_hand)]);
    assert!((got[1].1 - 1.408_138_616_923_004_8).abs() < 1e-12);
}

#[test]
fn a_callee_with_calls_is_shifted_by_their_median_and_copies_multiply_below() {
    // callee does 20ms of its own work, then calls db (15ms) and, in
    // parallel, cache (5ms) and search (40ms median): it answers after
    // 20 + 15 + max(5, 40) = 75ms when nothing fails. A copy after 70ms
    // goes every time: 2 copies, and each calls db, cache and search:
    // 2 attempts reach each of them.
    let services = "  callee:\n    latency: 20ms\n    calls:\n      - { to: db, timeout: 1s }\n      - { to: cache, timeout: 1s, parallel: true }\n      - { to: search, timeout: 1s, parallel: true }\n  db: { latency: 15ms }\n  cache: { latency: 5ms }\n  search: { latency: 40ms }\n";
    let y = hedged("{ max_attempts: 2, delay: 70ms }", services);
    assert_close(
        &figures(&y, |r| r.healthy),
        &[
            ("web", 1.0),
            ("callee", 2.0),
            ("db", 2.0),
            ("cache", 2.0),
            ("search", 2.0),
        ],
    );
    let y = hedged("{ max_attempts: 2, delay: 80ms }", services);
    assert_close(
        &figures(&y, |r| r.healthy),
        &[
            ("web", 1.0),
            ("callee", 1.0),
            ("db", 1.0),
            ("cache", 1.0),
            ("search", 1.0),
        ],
    );
}

#[test]
fn without_hedging_healthy_counts_call_paths() {
    // A diamond: web → a → db and web → b → db, retries everywhere: when
    // nothing fails db gets one attempt per path, 2.
    let y = format!(
        "version: 1\nservices:\n  web:\n    calls:\n      - {{ to: a, timeout: 1s, retry: {RETRY3} }}\n      - {{ to: b, timeout: 1s, retry: {RETRY3} }}\n  a: {{ calls: [ {{ to: db, timeout: 1s, retry: {RETRY3} }} ] }}\n  b: {{ calls: [ {{ to: db, timeout: 1s, retry: {RETRY3} }} ] }}\n  db: {{}}\n"
    );
    assert_close(
        &figures(&y, |r| r.healthy),
        &[("web", 1.0), ("a", 1.0), ("b", 1.0), ("db", 2.0)],
    );
    let r = common::check(&common::load(&y).unwrap());
    assert!(!r.has_hedging);
}

fn codes_at(y: &str, code: &str) -> Vec<(u32, String)> {
    let r = common::check(&common::load(y).unwrap_or_else(|e| panic!("{e}")));
    r.findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| (f.line, f.help.clone()))
        .collect()
}

#[test]
fn breaker_inside_vs_outside_the_rule_fires_on_the_inside_one_only() {
    let with = |position: &str| {
        chain(
            &format!(
                "{{ failure_rate: 0.5, open_for: 5s, open_jitter: 0.2, position: {position} }}"
            ),
            "",
        )
    };
    assert_eq!(
        codes_at(&with("inside"), "RL016"),
        [(
            8,
            "set `position: outside` so it judges each request after its retries".to_owned()
        )]
    );
    assert!(codes_at(&with("outside"), "RL016").is_empty());
}

#[test]
fn a_breaker_counting_attempts_inside_the_loop_is_told_both_fixes() {
    let y = chain(
        "{ failure_rate: 0.5, open_for: 5s, open_jitter: 0.2, position: inside, counts: attempts }",
        "",
    );
    assert_eq!(
        codes_at(&y, "RL016"),
        [(
            8,
            "set `position: outside` and `counts: outcomes` so it judges each request after its retries"
                .to_owned()
        )]
    );
}

#[test]
fn the_hedging_delay_fix_is_the_callees_p95() {
    // search: p50 40ms, p99 200ms; p95 = 40ms × 5^(z₉₅/z₉₉) = 40ms × 5^0.70705
    // = 124.9ms, written as 125ms.
    let y = hedged(
        "{ max_attempts: 2, delay: 10ms }",
        "  callee: { latency: { p50: 40ms, p99: 200ms } }\n",
    );
    let r = common::check(&common::load(&y).unwrap());
    let f = r.findings.iter().find(|f| f.code == "RL019").unwrap();
    assert_eq!(
        f.help,
        "set `delay: 125ms`, about `callee`'s p95, so only the slowest 5 % of requests send a copy"
    );
    // 1 + late(10ms) = 1 + ½ erfc(ln(1/4) / (σ √2)) = 1.97749... → 1.98.
    assert!(
        f.message
            .ends_with("about 1.98 copies per request when nothing fails"),
        "{}",
        f.message
    );
}

#[test]
fn the_missing_breaker_fix_names_the_hottest_call() {
    // db is reached from api (3 × 3 = 9 per request) and from web directly
    // (4): 13 over a limit of 10; api → db is the hottest call into it.
    let y = format!(
        "version: 1\nservices:\n  web:\n    calls:\n      - {{ to: api, timeout: 2s, retry: {RETRY3} }}\n      - {{ to: db, timeout: 1s, retry: {{ max_attempts: 4, backoff: {{ kind: constant, base: 10ms, jitter: full }} }} }}\n  api:\n    calls:\n      - {{ to: db, timeout: 1s, retry: {RETRY3} }}\n  db: {{}}\n"
    );
    let r = common::check(&common::load(&y).unwrap());
    let found: Vec<_> = r.findings.iter().filter(|f| f.code == "RL020").collect();
    assert_eq!(found.len(), 1);
    let f = found[0];
    assert_eq!((f.service.as_str(), f.line), ("db", 9));
    assert_eq!(f.severity, retrylint::lint::Severity::Info);
    assert_eq!(
        f.help,
        "add `circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 20, open_for: 5s, open_jitter: 0.2 }` to api → db, the hottest call into `db`"
    );
    assert_eq!(row(&r, "db").worst_case, 13.0);
}
