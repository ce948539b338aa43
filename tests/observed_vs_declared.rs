//! Attempts seen in traces against the declared layers (issue 31): RL021
//! when traces show a retry layer nobody declared, RL022 when a declared
//! retry never shows although the callee failed. The trace exports are
//! OTLP/JSON in the shape of opentelemetry-proto's `examples/trace.json`
//! (tests/data/traces/upstream-otlp-trace.json), as the collector's file
//! exporter writes it.

use crate::common::run::retrylint;
use std::path::PathBuf;

use serde_json::{Value, json};

fn temp_file(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("observed");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A topology where `web` calls `api` with the app layer `retry` and the
/// `via` layers given; the call's `- to: api` is on line 7.
fn topology(name: &str, retry: &str, via: &str) -> String {
    temp_file(
        name,
        &format!(
            "version: 1
entry: web
services:
  web:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: api
        timeout: 1s
        retry: {retry}
{via}  api:
    latency: {{ p50: 5ms, p99: 20ms }}
"
        ),
    )
}

const CALL_LINE: u64 = 7;

fn retry(attempts: u32) -> String {
    format!(
        "{{ max_attempts: {attempts}, backoff: {{ kind: exponential, base: 50ms, cap: 1s, jitter: full }}, budget: {{ kind: ratio, ratio: 0.1 }} }}"
    )
}

const SIDECAR: &str = "        via:
          - name: envoy-sidecar
            timeout: 500ms
            retry: { max_attempts: 2, backoff: { kind: exponential, base: 25ms, cap: 250ms, jitter: full }, budget: { kind: ratio, ratio: 0.2 } }
";

/// An OTLP attribute.
fn attr(key: &str, v: &Value) -> Value {
    let value = match v {
        Value::String(s) => json!({ "stringValue": s }),
        Value::Number(n) => json!({ "intValue": n.to_string() }),
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::Array(a) => {
            json!({ "arrayValue": { "values": a.iter().map(|s| json!({ "stringValue": s })).collect::<Vec<_>>() } })
        }
        _ => json!({}),
    };
    json!({ "key": key, "value": value })
}

/// Spans of one service, built up trace by trace.
#[derive(Default)]
struct Export {
    web: Vec<Value>,
    api: Vec<Value>,
    next: u64,
}

impl Export {
    fn span(
        &mut self,
        trace: u64,
        parent: Option<&str>,
        kind: u8,
        attrs: &[(&str, Value)],
        error: bool,
    ) -> String {
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
            "attributes": std::iter::once(attr("http.request.method", &json!("GET")))
                .chain(attrs.iter().map(|(k, v)| attr(k, v)))
                .collect::<Vec<_>>(),
            "status": if error { json!({ "code": 2 }) } else { json!({}) },
        });
        // A server span under a client span is `api`'s; the rest are `web`'s.
        if kind == 2 && parent.is_some() {
            self.api.push(span);
        } else {
            self.web.push(span);
        }
        id
    }

    /// A server span of `web` (a user request) in trace `trace`.
    fn request(&mut self, trace: u64) -> String {
        self.span(trace, None, 2, &[], false)
    }

    /// A client span of `web` under `parent`.
    fn client(&mut self, trace: u64, parent: &str, attrs: &[(&str, Value)]) -> String {
        self.span(trace, Some(parent), 3, attrs, false)
    }

    /// A server span of `api` under the client span `client`.
    fn server(&mut self, trace: u64, client: &str, attrs: &[(&str, Value)], error: bool) {
        self.span(trace, Some(client), 2, attrs, error);
    }

    fn write(&self, name: &str) -> String {
        let resource = |service: &str, spans: &[Value]| {
            json!({
                "resource": { "attributes": [ attr("service.name", &json!(service)) ] },
                "scopeSpans": [ {
                    "scope": { "name": "io.opentelemetry.http", "version": "1.0.0" },
                    "spans": spans,
                } ],
            })
        };
        let doc =
            json!({ "resourceSpans": [ resource("web", &self.web), resource("api", &self.api) ] });
        temp_file(name, &serde_json::to_string_pretty(&doc).unwrap())
    }
}

fn findings(topology: &str, traces: &str) -> (i32, Vec<Value>) {
    let (code, out, err) = retrylint(&["check", topology, "--from", traces, "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v["findings"].as_array().cloned().unwrap_or_default())
}

fn of<'a>(findings: &'a [Value], code: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["code"] == code).collect()
}

/// Ten user requests; in each the app tries `api` three times and the
/// sidecar below it twice per app attempt: six attempts reach `api`.
fn sidecar_traces() -> String {
    let mut x = Export::default();
    for t in 0..10 {
        let root = x.request(t);
        for _ in 0..3 {
            let c = x.client(t, &root, &[]);
            x.server(t, &c, &[], true);
            x.server(t, &c, &[], true);
        }
    }
    x.write("sidecar.json")
}

#[test]
fn a_sidecar_retrying_below_the_app_is_an_undeclared_layer_at_the_calls_line() {
    let traces = sidecar_traces();
    let t = topology("sidecar-undeclared.yaml", &retry(3), "");
    let (code, all) = findings(&t, &traces);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}");
    let f = rl021[0];
    assert_eq!(f["rule"], "undeclared-retry-layer");
    assert_eq!(f["severity"], "error", "{f}");
    assert_eq!(f["line"], CALL_LINE, "{f}");
    assert!(
        f["file"]
            .as_str()
            .unwrap()
            .ends_with("sidecar-undeclared.yaml"),
        "{f}"
    );
    let message = f["message"].as_str().unwrap();
    for part in [
        "up to 6 attempts per call (6.00 on average, over 10 calls)",
        "web → api",
        "allow (3)",
        "a sidecar/proxy",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert!(f["help"].as_str().unwrap().contains("via:"), "{f}");
    assert_ne!(code, 0, "an error finding fails the check");

    // Declared, the sidecar's attempts explain what the traces show.
    let t = topology("sidecar-declared.yaml", &retry(3), SIDECAR);
    let (code, all) = findings(&t, &traces);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}");
    assert!(of(&all, "RL022").is_empty(), "{all:#?}");
    assert!(all.iter().all(|f| f["severity"] != "error"), "{all:#?}");
    assert_eq!(code, 0);
}

#[test]
fn the_finding_is_in_sarif_and_gated_like_any_rule() {
    let traces = sidecar_traces();
    let t = topology("sidecar-sarif.yaml", &retry(3), "");
    let (code, out, err) = retrylint(&["check", &t, "--from", &traces, "--format", "sarif"]);
    assert_ne!(code, 0, "{err}");
    let sarif: Value = serde_json::from_str(&out).unwrap();
    let run = &sarif["runs"][0];
    let result = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "RL021")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(result["level"], "error");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        CALL_LINE
    );
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for code in ["RL021", "RL022"] {
        let rule = rules
            .iter()
            .find(|r| r["id"] == code)
            .unwrap_or_else(|| panic!("{code}"));
        assert!(
            rule["help"]["markdown"]
                .as_str()
                .unwrap()
                .contains("## Fix"),
            "{rule}"
        );
    }
    // --allow turns it off like any rule; the check then passes.
    let (code, out, _) = retrylint(&["check", &t, "--from", &traces, "--allow", "RL021"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("RL021"), "{out}");
    let (code, out, _) = retrylint(&["explain", "RL021"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("undeclared-retry-layer") && out.contains("sidecar/proxy"),
        "{out}"
    );
}

#[test]
fn resend_count_past_the_apps_attempts_is_the_sdk() {
    // The SDK resends under one app attempt: one span per resend, each
    // with `http.request.resend_count`; four attempts where the app
    // declares two.
    let mut x = Export::default();
    for t in 0..4 {
        let root = x.request(t);
        for n in 0..4 {
            let c = x.client(t, &root, &[("http.request.resend_count", json!(n))]);
            x.server(t, &c, &[], n < 3);
        }
    }
    let traces = x.write("resend.json");
    let t = topology("resend.yaml", &retry(2), "");
    let (_, all) = findings(&t, &traces);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}");
    let message = rl021[0]["message"].as_str().unwrap();
    assert!(message.contains("up to 4 attempts per call"), "{message}");
    assert!(message.contains("the SDK/HTTP client"), "{message}");

    // Older name, one span for the whole call: its count says it all.
    let mut x = Export::default();
    let root = x.request(0);
    let c = x.client(0, &root, &[("http.retry_count", json!(2))]);
    x.server(0, &c, &[], false);
    let traces = x.write("resend-old-name.json");
    let t = topology("resend-old-name.yaml", &retry(1), "");
    let (_, all) = findings(&t, &traces);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}");
    assert!(
        rl021[0]["message"]
            .as_str()
            .unwrap()
            .contains("up to 3 attempts")
    );
}

#[test]
fn envoy_attempt_count_on_the_server_span_is_a_proxy() {
    // Only the proxy's last attempt is traced, but it says it was the third.
    let mut x = Export::default();
    for t in 0..5 {
        let root = x.request(t);
        let c = x.client(t, &root, &[]);
        let count = if t == 0 { "3" } else { "1" };
        x.server(
            t,
            &c,
            &[("http.request.header.x-envoy-attempt-count", json!([count]))],
            false,
        );
    }
    let traces = x.write("envoy.json");
    let t = topology("envoy.yaml", &retry(1), "");
    let (_, all) = findings(&t, &traces);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}");
    let message = rl021[0]["message"].as_str().unwrap();
    assert!(
        message.contains("up to 3 attempts per call (1.40 on average, over 5 calls)"),
        "{message}"
    );
    assert!(message.contains("a sidecar/proxy"), "{message}");
}

/// One logical call resent once: after a 302 (a redirect, not a retry) or
/// after a 503 (a retry).
fn resent_after(status: u16, name: &str) -> String {
    let mut x = Export::default();
    let root = x.request(0);
    let first = x.client(
        0,
        &root,
        &[
            ("http.request.resend_count", json!(0)),
            ("http.response.status_code", json!(status)),
        ],
    );
    x.server(
        0,
        &first,
        &[("http.response.status_code", json!(status))],
        status >= 500,
    );
    let second = x.client(
        0,
        &root,
        &[
            ("http.request.resend_count", json!(1)),
            ("http.response.status_code", json!(200)),
        ],
    );
    x.server(0, &second, &[], false);
    x.write(name)
}

#[test]
fn a_redirect_is_not_counted_as_a_retry() {
    let t = topology("no-retry.yaml", &retry(1), "");
    let (code, all) = findings(&t, &resent_after(302, "redirect.json"));
    assert!(of(&all, "RL021").is_empty(), "{all:#?}");
    assert_eq!(code, 0, "{all:#?}");
    let (_, _, err) = retrylint(&["check", &t, "--from", &resent_after(302, "redirect.json")]);
    assert!(
        err.contains("1.00 attempts per call seen (at most 1, over 1 calls)"),
        "{err}"
    );
    // The same resend after a 503 is a retry nobody declared.
    let (code, all) = findings(&t, &resent_after(503, "after-503.json"));
    assert_eq!(of(&all, "RL021").len(), 1, "{all:#?}");
    assert_ne!(code, 0);
}

#[test]
fn a_declared_retry_never_seen_although_the_callee_failed_is_rl022() {
    let mut x = Export::default();
    for t in 0..8 {
        let root = x.request(t);
        let c = x.client(t, &root, &[]);
        x.server(t, &c, &[], t % 3 == 0);
    }
    let traces = x.write("unseen.json");
    let t = topology("unseen.yaml", &retry(3), "");
    let (code, all) = findings(&t, &traces);
    let rl022 = of(&all, "RL022");
    assert_eq!(rl022.len(), 1, "{all:#?}");
    let f = rl022[0];
    assert_eq!(f["rule"], "declared-retry-unseen");
    assert_eq!(f["severity"], "info");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("3 failed calls"), "{message}");
    assert!(message.contains("over 8 calls"), "{message}");
    assert!(of(&all, "RL021").is_empty(), "{all:#?}");
    assert_eq!(code, 0, "info does not fail the check");

    // No failure seen: nothing to say.
    let mut x = Export::default();
    let root = x.request(0);
    let c = x.client(0, &root, &[]);
    x.server(0, &c, &[], false);
    let (_, all) = findings(&t, &x.write("healthy.json"));
    assert!(of(&all, "RL022").is_empty(), "{all:#?}");
}

#[test]
fn the_upstream_otlp_example_is_read() {
    let (code, _, err) = retrylint(&[
        "import",
        "--from",
        "tests/data/traces/upstream-otlp-trace.json",
    ]);
    // A single server span gives a service and no call graph to speak of.
    assert!(code == 0 || code == 2, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_three_trace_formats_give_the_same_finding() {
    // The shop demo's traces: two of ten POSTs to payments are sent twice
    // (two client spans under one parent; in OTLP the second carries
    // resend_count 1), and nothing declares a retry.
    let mut messages = Vec::new();
    for format in ["otlp", "jaeger", "zipkin"] {
        let file = format!("tests/data/traces/{format}.json");
        let (code, out, err) = retrylint(&["check", "--from", &file, "--format", "json"]);
        assert_ne!(code, 0, "{format}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let all = v["findings"].as_array().unwrap();
        let rl021 = of(all, "RL021");
        assert_eq!(rl021.len(), 1, "{format}: {all:#?}");
        let message = rl021[0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("checkout → payments"), "{message}");
        assert!(
            message.contains("up to 2 attempts per call (1.20 on average, over 10 calls)"),
            "{message}"
        );
        let likely = if format == "otlp" {
            "the SDK/HTTP client"
        } else {
            "the caller itself"
        };
        assert!(message.contains(likely), "{message}");
        assert!(
            rl021[0]["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{format}.json"))
        );
        let figures = message.split(": a retry layer").next().unwrap().to_owned();
        messages.push(figures);
    }
    assert!(messages.windows(2).all(|w| w[0] == w[1]), "{messages:#?}");
}

#[test]
fn grpc_attempt_spans_count_and_transparent_retries_do_not() {
    // gRPC A72: a call span with one attempt span per attempt, each with
    // `previous-rpc-attempts`; the second is a transparent retry (the RPC
    // never left the client), not counted against the retry limit.
    let mut x = Export::default();
    let root = x.request(0);
    let call = x.client(0, &root, &[]);
    for n in 0..3 {
        let attempt = x.client(
            0,
            &call,
            &[
                ("previous-rpc-attempts", json!(n)),
                ("transparent-retry", json!(n == 1)),
            ],
        );
        x.server(0, &attempt, &[("rpc.grpc.status_code", json!(14))], true);
    }
    let traces = x.write("grpc-attempts.json");
    let t = topology("grpc-attempts.yaml", &retry(1), "");
    let (_, all) = findings(&t, &traces);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}");
    let message = rl021[0]["message"].as_str().unwrap();
    assert!(message.contains("up to 2 attempts per call"), "{message}");
    // Declared, the two attempts are what gRPC's retry policy allows.
    let t = topology("grpc-attempts-declared.yaml", &retry(2), "");
    let (_, all) = findings(&t, &traces);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}");
}

#[test]
fn github_and_markdown_carry_the_finding() {
    let traces = sidecar_traces();
    let t = topology("sidecar-formats.yaml", &retry(3), "");
    let (_, out, _) = retrylint(&["check", &t, "--from", &traces, "--format", "github"]);
    let line = out
        .lines()
        .find(|l| l.contains("RL021"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("::error "), "{line}");
    assert!(line.contains(&format!("line={CALL_LINE}")), "{line}");
    let (_, out, _) = retrylint(&["check", &t, "--from", &traces, "--format", "markdown"]);
    assert!(out.contains("RL021"), "{out}");
}
