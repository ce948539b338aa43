//! Observed figures wherever figures are shown (issue 31 item 4): the review
//! page sets each observed call beside its declared worst case, `import`
//! writes the observed attempts as `observed:` data that a later `check`
//! reads back as if the traces or metrics were given again, and `simulate
//! --calibrate` sets the simulated run beside what production showed.
//!
//! Trace exports are OTLP/JSON in the shape of opentelemetry-proto's
//! `examples/trace.json`, built here as tests/observed_vs_declared.rs builds
//! them, or tests/data/traces/otlp.json (the shop demo's ten traces); the
//! metrics file is tests/data/metrics/web-sidecar.prom (see
//! tests/data/README.md).

use crate::common;

use std::path::PathBuf;

use common::run::retrylint;
use serde_json::{Value, json};

fn scratch(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("observed-everywhere");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_str().unwrap().to_owned()
}

fn temp_file(name: &str, text: &str) -> String {
    let path = scratch(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `caller` calls `callee` with the app layer retrying `attempts` times and
/// the `via` layers given; the call's `- to:` is on line 7.
fn topology(name: &str, caller: &str, callee: &str, attempts: u32, via: &str) -> String {
    temp_file(
        name,
        &format!(
            "version: 1
entry: {caller:?}
services:
  {caller:?}:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: {callee:?}
        timeout: 1s
        retry: {{ max_attempts: {attempts}, backoff: {{ kind: exponential, base: 50ms, cap: 1s, jitter: full }}, budget: {{ kind: ratio, ratio: 0.1 }} }}
{via}  {callee:?}:
    latency: {{ p50: 5ms, p99: 20ms }}
"
        ),
    )
}

const CALL_LINE: u64 = 7;

const SIDECAR: &str = "        via:
          - name: envoy-sidecar
            timeout: 500ms
            retry: { max_attempts: 2, backoff: { kind: exponential, base: 25ms, cap: 250ms, jitter: full }, budget: { kind: ratio, ratio: 0.2 } }
";

fn attr(key: &str, v: &str) -> Value {
    json!({ "key": key, "value": { "stringValue": v } })
}

/// Spans of two services, built up trace by trace.
struct Export {
    caller: (String, Vec<Value>),
    callee: (String, Vec<Value>),
    next: u64,
}

impl Export {
    fn new(caller: &str, callee: &str) -> Self {
        Export {
            caller: (caller.into(), Vec::new()),
            callee: (callee.into(), Vec::new()),
            next: 0,
        }
    }

    fn span(&mut self, trace: u64, parent: Option<&str>, kind: u8, error: bool) -> String {
        self.next += 1;
        let id = format!("{:016X}", self.next);
        let start = 1_544_712_660_000_000_000u64 + self.next * 1_000_000;
        let span = json!({
            "traceId": format!("5B8EFFF798038103D269B633{trace:08X}"),
            "spanId": id,
            "parentSpanId": parent.unwrap_or(""),
            "name": if kind == 2 { "GET /items" } else { "GET" },
            "kind": kind,
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": (start + 500_000).to_string(),
            "attributes": [attr("http.request.method", "GET")],
            "status": if error { json!({ "code": 2 }) } else { json!({}) },
        });
        if kind == 2 && parent.is_some() {
            self.callee.1.push(span);
        } else {
            self.caller.1.push(span);
        }
        id
    }

    fn write(&self, name: &str) -> String {
        let resource = |(service, spans): &(String, Vec<Value>)| {
            json!({
                "resource": { "attributes": [ attr("service.name", service) ] },
                "scopeSpans": [ {
                    "scope": { "name": "io.opentelemetry.http", "version": "1.0.0" },
                    "spans": spans,
                } ],
            })
        };
        let doc = json!({ "resourceSpans": [ resource(&self.caller), resource(&self.callee) ] });
        temp_file(name, &serde_json::to_string_pretty(&doc).unwrap())
    }
}

/// Ten user requests; in each the app tries the callee three times and a
/// sidecar below it twice per app attempt: six attempts reach the callee.
fn sidecar_traces(name: &str, caller: &str, callee: &str) -> String {
    let mut x = Export::new(caller, callee);
    for t in 0..10 {
        let root = x.span(t, None, 2, false);
        for _ in 0..3 {
            let c = x.span(t, Some(&root), 3, false);
            x.span(t, Some(&c), 2, true);
            x.span(t, Some(&c), 2, true);
        }
    }
    x.write(name)
}

/// Eight user requests with one attempt each, three of them failed.
fn unseen_traces(name: &str) -> String {
    let mut x = Export::new("web", "api");
    for t in 0..8 {
        let root = x.span(t, None, 2, false);
        let c = x.span(t, Some(&root), 3, false);
        x.span(t, Some(&c), 2, t % 3 == 0);
    }
    x.write(name)
}

fn findings(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let (_, out, err) = retrylint(&all);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    v["findings"].as_array().cloned().unwrap_or_default()
}

fn of(findings: &[Value], code: &str) -> Vec<Value> {
    findings
        .iter()
        .filter(|f| f["code"] == code)
        .cloned()
        .collect()
}

/// The 1-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in:\n{text}")) as u64
        + 1
}

const SECTION: &str = "### Observed against declared\n\nAttempts per call as production showed them, beside the attempts the call's declared layers allow together (RL021 when more were seen, RL022 when a declared retry never showed although the callee failed).\n\n| call | seen in | attempts per call | most on one call | over | declared | finding |\n|---|---|---:|---:|---|---:|---|\n";

#[test]
fn the_review_page_sets_the_traces_beside_the_declared_worst_case() {
    let traces = sidecar_traces("page-sidecar.json", "web", "api");
    let t = topology("page-undeclared.yaml", "web", "api", 3, "");
    let (code, md, err) = retrylint(&[
        "report", &t, "--from", &traces, "--format", "markdown", "--trials", "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains(&format!(
            "{SECTION}| `web → api` | traces | 6.00 | 6 | 10 calls | 3 | RL021 |\n"
        )),
        "{md}"
    );
    // The finding as on the findings list.
    assert!(
        md.contains("| error | RL021 | `web` | traces show up to 6 attempts per call (6.00 on average, over 10 calls) on web → api, more than its declared layers allow (3): a retry layer nobody declared, likely a sidecar/proxy: several server spans sit under one client span |"),
        "{md}"
    );
    assert!(
        err.contains("report: with --from, the page shows no what-if side"),
        "{err}"
    );
    assert!(md.contains(&format!("--from {traces}")), "the footer: {md}");

    // The page itself.
    let page = scratch("page-undeclared.html");
    let (code, _, err) = retrylint(&[
        "report", &t, "--from", &traces, "-o", &page, "--trials", "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<tr class=\"over\"><td><code>web</code> → <code>api</code></td><td>traces</td><td class=\"num\">6.00</td><td class=\"num\">6</td><td>10 calls</td><td class=\"num\">3</td><td>RL021</td></tr>"),
        "{html}"
    );
    assert!(html.contains("<a href=\"#observed\">Observed</a>"));
    assert!(
        html.contains("<span class=\"code-id\">RL021</span> undeclared-retry-layer"),
        "{html}"
    );

    // Declared, the sidecar's attempts allow what the traces show.
    let t = topology("page-declared.yaml", "web", "api", 3, SIDECAR);
    let (code, md, err) = retrylint(&[
        "report", &t, "--from", &traces, "--format", "markdown", "--trials", "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains(&format!(
            "{SECTION}| `web → api` | traces | 6.00 | 6 | 10 calls | 6 | none |\n"
        )),
        "{md}"
    );
    assert!(!md.contains("| error | RL021"), "{md}");

    // Nothing observed, no section.
    let (code, md, err) = retrylint(&["report", &t, "--format", "markdown", "--trials", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(!md.contains("Observed against declared"), "{md}");
}

#[test]
fn the_page_escapes_the_names_traces_give() {
    let (caller, callee) = ("web<b>", "api&\"x\"");
    let traces = sidecar_traces("page-names.json", caller, callee);
    let t = topology("page-names.yaml", caller, callee, 3, "");
    let page = scratch("page-names.html");
    let (code, _, err) = retrylint(&[
        "report", &t, "--from", &traces, "-o", &page, "--trials", "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<tr class=\"over\"><td><code>web&lt;b&gt;</code> → <code>api&amp;&quot;x&quot;</code></td><td>traces</td><td class=\"num\">6.00</td>"),
        "{html}"
    );
    assert!(!html.contains("web<b>"), "an unescaped name");
}

#[test]
fn the_page_sets_a_proxys_counters_beside_the_layers_below_the_caller() {
    let t = topology("page-metrics.yaml", "web", "api", 3, "");
    let (code, md, err) = retrylint(&[
        "report",
        &t,
        "--from",
        "tests/data/metrics/web-sidecar.prom",
        "--metrics-caller",
        "web",
        "--format",
        "markdown",
        "--trials",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains(&format!(
            "{SECTION}| `web → api` | Envoy counters (cluster outbound\\|8080\\|\\|api.default.svc.cluster.local) | 1.37 | – | 100 requests since the proxy started | 3 (1 below the caller) | RL021 |\n"
        )),
        "{md}"
    );
    assert!(md.contains("--metrics-caller web"), "the footer: {md}");
}

#[test]
fn import_writes_the_traces_figures_and_check_reads_them_back() {
    let traces = sidecar_traces("import-sidecar.json", "web", "api");
    let t = topology("import-base.yaml", "web", "api", 3, "");
    let from_traces = of(&findings(&[&t, "--from", &traces]), "RL021");
    assert_eq!(from_traces.len(), 1);
    assert_eq!(from_traces[0]["line"], CALL_LINE);

    let out = scratch("imported-sidecar.yaml");
    let (code, _, err) = retrylint(&["import", &t, "--from", &traces, "-o", &out]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    // At the first client span of the call, in the export (its `{` line).
    assert!(
        text.contains(&format!(
            "        observed: {{ source: traces, calls: 10, attempts_per_call: 6, max_attempts: 6, proxy_max: 2, client_max: 3, resend_max: 1, failed_calls: 10 }}  # {traces}:39\n"
        )),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&traces).unwrap().lines().nth(48),
        Some("              \"kind\": 3,")
    );

    // The written file alone: the same finding, at its call's line.
    let alone = of(&findings(&[&out]), "RL021");
    assert_eq!(alone.len(), 1, "{alone:#?}");
    assert_eq!(alone[0]["message"], from_traces[0]["message"]);
    assert_eq!(alone[0]["line"], line_of(&text, "- to: api"));
    assert_eq!(alone[0]["file"], out.as_str());

    // Given the traces again, their figures replace the written ones: one
    // finding, not two.
    let again = of(&findings(&[&out, "--from", &traces]), "RL021");
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(again[0]["message"], from_traces[0]["message"]);

    // The sidecar declared in the written file: nothing to report.
    let declared = text.replace("        retry:\n", &format!("{SIDECAR}        retry:\n"));
    assert_ne!(declared, text);
    let fixed = temp_file("imported-sidecar-declared.yaml", &declared);
    assert!(of(&findings(&[&fixed]), "RL021").is_empty());
}

#[test]
fn a_declared_retry_never_seen_survives_the_round_trip() {
    let traces = unseen_traces("import-unseen.json");
    let t = topology("import-unseen.yaml", "web", "api", 3, "");
    let from_traces = of(&findings(&[&t, "--from", &traces]), "RL022");
    assert_eq!(from_traces.len(), 1);
    let out = scratch("imported-unseen.yaml");
    let (code, _, err) = retrylint(&["import", &t, "--from", &traces, "-o", &out]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("observed: { source: traces, calls: 8, attempts_per_call: 1, max_attempts: 1, proxy_max: 1, client_max: 1, resend_max: 1, failed_calls: 3 }"),
        "{text}"
    );
    let alone = of(&findings(&[&out]), "RL022");
    assert_eq!(alone.len(), 1, "{alone:#?}");
    assert_eq!(alone[0]["message"], from_traces[0]["message"]);
    assert_eq!(alone[0]["severity"], "info");
}

#[test]
fn import_writes_a_proxys_counters_and_check_reads_them_back() {
    let t = topology("import-metrics.yaml", "web", "api", 3, "");
    let metrics = [
        "--from",
        "tests/data/metrics/web-sidecar.prom",
        "--metrics-caller",
        "web",
    ];
    let mut args = vec![t.as_str()];
    args.extend_from_slice(&metrics);
    let from_metrics = of(&findings(&args), "RL021");
    assert_eq!(from_metrics.len(), 1);

    let out = scratch("imported-metrics.yaml");
    let mut import = vec!["import", t.as_str(), "-o", out.as_str()];
    import.extend_from_slice(&metrics);
    let (code, _, err) = retrylint(&import);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("        observed: { source: envoy, cluster: \"outbound|8080||api.default.svc.cluster.local\", calls: 100, attempts_per_call: 1.37, upstream_requests: 137, retries: 37, limit_exceeded: 5, overflow: 0, window: \"since the proxy started\" }  # tests/data/metrics/web-sidecar.prom:"),
        "{text}"
    );
    let alone = of(&findings(&[&out]), "RL021");
    assert_eq!(alone.len(), 1, "{alone:#?}");
    assert_eq!(alone[0]["message"], from_metrics[0]["message"]);
    assert_eq!(alone[0]["line"], line_of(&text, "- to: api"));
}

#[test]
fn bad_observed_figures_are_located_errors() {
    let base = std::fs::read_to_string(topology("bad-base.yaml", "web", "api", 3, "")).unwrap();
    let cases = [
        (
            "        observed: { source: jaeger, calls: 1, attempts_per_call: 1 }\n",
            "8:29",
            "unknown observed source `jaeger`",
        ),
        (
            "        observed: { source: traces, calls: 10, attempts_per_call: 0.5 }\n",
            "8:67",
            "`attempts_per_call` is 0.5, below 1",
        ),
        (
            "        observed: { source: traces, attempts_per_call: 2 }\n",
            "8:19",
            "`observed` from traces needs `calls:`",
        ),
        (
            "        observed: { source: envoy, upstream_requests: 10, retries: 4, calls: 7 }\n",
            "8:71",
            "`calls` is 7, but 10 upstream requests less 4 retries are 6",
        ),
        (
            "        observed: { source: traces, calls: 1, attempts_per_call: 1, most: 2 }\n",
            "8:69",
            "unknown key `most`",
        ),
    ];
    for (i, (line, at, message)) in cases.iter().enumerate() {
        let text = base.replacen(
            "        timeout: 1s\n",
            &format!("{line}        timeout: 1s\n"),
            1,
        );
        let file = temp_file(&format!("bad-observed-{i}.yaml"), &text);
        let (code, _, err) = retrylint(&["check", &file]);
        assert_eq!(code, 2, "{message}: {err}");
        assert!(err.contains(&format!("{file}:{at}")), "{message}: {err}");
        assert!(err.contains(message), "{err}");
    }
}

/// `simulate --calibrate` of the shop demo's traces: JSON's calibration.
fn calibration(args: &[&str]) -> Value {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--calibrate",
        "--fault",
        "none",
        "--trials",
        "5",
        "--format",
        "json",
    ]);
    let (code, out, err) = retrylint(&all);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(v["services"].is_array(), "the run's report is kept: {out}");
    v["calibration"].clone()
}

const SHOP: &str = "tests/data/traces/otlp.json";

#[test]
fn calibrate_sets_the_simulation_beside_the_traces() {
    let (code, table, err) = retrylint(&[
        "simulate",
        "--from",
        SHOP,
        "--calibrate",
        "--fault",
        "none",
        "--trials",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    let expected = "Calibration: the model (scenario none, seed 42, 5 trials) against what production showed; ratio = simulated / observed.

call                 seen in  calls seen  attempts/call seen  simulated  ratio
frontend → cart       traces          10                1.00       1.00  1.00×
frontend → checkout   traces          10                1.00       1.00  1.00×
checkout → cart       traces          10                1.00       1.00  1.00×
checkout → payments   traces          10                1.20       1.00  0.83×

service   p50/p99 seen ms  simulated ms  p50 ratio  p99 ratio  spans
frontend        42.0/62.0     42.0/42.0      1.00×      0.68×     10
cart              5.0/5.0       5.0/5.0      1.00×      1.00×     20
checkout        35.0/55.0     35.0/35.0      1.00×      0.64×     10
payments        20.0/20.0     20.0/20.0      1.00×      1.00×     12

Furthest from production: checkout: the model answers in 35.0 ms at p99 where production took 55.0 ms (0.64×).
";
    assert!(table.ends_with(expected), "{table}");

    let c = calibration(&["--from", SHOP]);
    assert_eq!(c["scenario"], "none");
    assert_eq!(c["seed"], 42);
    assert_eq!(c["trials"], 5);
    let payments = &c["calls"][3];
    assert_eq!(payments["from"], "checkout");
    assert_eq!(payments["to"], "payments");
    assert_eq!(payments["source"], "traces");
    assert_eq!(payments["observed_calls"], 10);
    assert_eq!(payments["observed_attempts_per_call"], 1.2);
    assert_eq!(payments["simulated_attempts_per_call"], 1.0);
    assert_eq!(payments["ratio"], 1.0 / 1.2);
    let checkout = &c["services"][2];
    assert_eq!(checkout["service"], "checkout");
    assert_eq!(checkout["observed_spans"], 10);
    assert_eq!(checkout["observed_p50_ms"], 35.0);
    assert_eq!(checkout["observed_p99_ms"], 55.0);
    assert_eq!(checkout["simulated_p50_ms"], 35.0);
    assert_eq!(checkout["simulated_p99_ms"], 35.0);
    assert_eq!(checkout["p99_ratio"], 35.0 / 55.0);

    // Seeded: the same again; and the same from the file `import` wrote.
    assert_eq!(calibration(&["--from", SHOP]), c);
    let out = scratch("imported-shop.yaml");
    let (code, _, err) = retrylint(&["import", "--from", SHOP, "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(calibration(&[&out]), c);
}

#[test]
fn calibrate_under_a_fault_counts_the_retries_the_model_makes() {
    // The app retries 3 times and the sidecar the traces show is not
    // declared: with `api` answering 503 throughout, the model makes 3
    // attempts per call where production made 6.
    let traces = sidecar_traces("calibrate-sidecar.json", "web", "api");
    let t = unbudgeted(topology("calibrate-undeclared.yaml", "web", "api", 3, ""));
    let c = calibration_under(&t, &traces);
    assert_eq!(c["calls"][0]["observed_attempts_per_call"], 6.0);
    assert_eq!(c["calls"][0]["simulated_attempts_per_call"], 3.0);
    assert_eq!(c["calls"][0]["simulated_calls"], 20);
    assert_eq!(c["calls"][0]["ratio"], 0.5);
    // Declared, the model reproduces it.
    let t = unbudgeted(topology(
        "calibrate-declared.yaml",
        "web",
        "api",
        3,
        SIDECAR,
    ));
    let c = calibration_under(&t, &traces);
    assert_eq!(c["calls"][0]["simulated_attempts_per_call"], 6.0);
    assert_eq!(c["calls"][0]["ratio"], 1.0);
}

/// The topology at `path` without its retry budgets, which would hold the
/// retries of a total outage to a tenth.
fn unbudgeted(path: String) -> String {
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace(", budget: { kind: ratio, ratio: 0.1 }", "")
        .replace(", budget: { kind: ratio, ratio: 0.2 }", "");
    assert!(!text.contains("budget"), "{text}");
    std::fs::write(&path, text).unwrap();
    path
}

fn calibration_under(t: &str, traces: &str) -> Value {
    let (code, out, err) = retrylint(&[
        "simulate",
        t,
        "--from",
        traces,
        "--calibrate",
        "--fault",
        "total-outage",
        "--trials",
        "3",
        // Every request's attempts end within the run.
        "--requests",
        "20",
        "--format",
        "json",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    v["calibration"].clone()
}

#[test]
fn calibrate_without_anything_observed_says_what_to_give() {
    let t = topology("calibrate-nothing.yaml", "web", "api", 3, "");
    let (code, _, err) = retrylint(&["simulate", &t, "--calibrate", "--trials", "2"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--calibrate needs what production showed"),
        "{err}"
    );
}
