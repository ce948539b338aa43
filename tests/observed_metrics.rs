//! Metrics against the declared layers (issue 31 item 3): a caller's Envoy
//! counters (`upstream_rq_total`, `upstream_rq_retry`) give its proxy's
//! attempts per request, and RL021 fires at the call's line when they are
//! more than the layers below the caller allow. The files are in
//! tests/data/metrics/ (see its README entry for which are upstream's and
//! which are derived).

use crate::common::run::retrylint;
use std::path::PathBuf;

use serde_json::Value;

const DATA: &str = "tests/data/metrics";

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("observed-metrics")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn temp_file(dir: &str, name: &str, text: &str) -> String {
    let path = temp_dir(dir).join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// `web` calls `api` with the app layer retrying 3 times and the `via`
/// layers given; the call's `- to: api` is on line 7 (line 9 with the
/// two-line `sources:` prefix).
fn topology_text(sources: &str, via: &str) -> String {
    format!(
        "version: 1
{sources}entry: web
services:
  web:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: api
        timeout: 1s
        retry: {{ max_attempts: 3, backoff: {{ kind: exponential, base: 50ms, cap: 1s, jitter: full }}, budget: {{ kind: ratio, ratio: 0.1 }} }}
{via}  api:
    latency: {{ p50: 5ms, p99: 20ms }}
"
    )
}

const CALL_LINE: u64 = 7;

const SIDECAR: &str = "        via:
          - name: envoy-sidecar
            timeout: 500ms
            retry: { max_attempts: 2, backoff: { kind: exponential, base: 25ms, cap: 250ms, jitter: full }, budget: { kind: ratio, ratio: 0.2 } }
";

fn findings(args: &[&str]) -> (i32, Vec<Value>, String) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let (code, out, err) = retrylint(&all);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (
        code,
        v["findings"].as_array().cloned().unwrap_or_default(),
        err,
    )
}

fn of<'a>(findings: &'a [Value], code: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["code"] == code).collect()
}

#[test]
fn envoy_counters_of_an_undeclared_sidecar_are_rl021_at_the_calls_line() {
    let t = temp_file("undeclared", "t.yaml", &topology_text("", ""));
    let prom = format!("{DATA}/web-sidecar.prom");
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "web"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    let f = rl021[0];
    assert_eq!(f["severity"], "error");
    assert_eq!(f["line"], CALL_LINE, "{f}");
    assert!(f["file"].as_str().unwrap().ends_with("t.yaml"), "{f}");
    // The app's three attempts do not explain the proxy's: the counters
    // are held to the layers below the caller, of which there are none.
    assert_eq!(
        f["message"],
        "Envoy's counters show 1.37 attempts per request on web → api (137 upstream requests for 100 requests, 37 retries, since the proxy started), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's sidecar/proxy (it counts its own retries)"
    );
    assert!(f["help"].as_str().unwrap().contains("via:"), "{f}");
    assert_ne!(code, 0);
    // Standard error says what was read and where each figure comes from;
    // the internal clusters, an idle one and the inbound one are left out.
    assert!(
        err.contains("sources: 1 document(s) in 1 file(s): 1 × Prometheus text exposition"),
        "{err}"
    );
    assert!(
        err.contains(
            "web-sidecar.prom:21:1: note: Envoy counters: `web` → `api`: 1.37 attempts per request (137 upstream requests for 100 requests, 37 retries; not retried: 5 for the retry limit, 0 for circuit breaking or the budget), since the proxy started"
        ),
        "{err}"
    );
    assert!(
        !err.contains("xds-grpc") && !err.contains("reviews"),
        "{err}"
    );
    assert!(of(&all, "RL022").is_empty(), "{all:#?}");
}

#[test]
fn no_rl021_once_the_sidecars_retry_layer_is_declared() {
    let t = temp_file("declared", "t.yaml", &topology_text("", SIDECAR));
    let prom = format!("{DATA}/web-sidecar.prom");
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "web"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert!(all.iter().all(|f| f["severity"] != "error"), "{all:#?}");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn the_caller_comes_from_the_sources_entry() {
    let dir = temp_dir("sources-caller");
    std::fs::copy(
        format!("{DATA}/web-sidecar.prom"),
        dir.join("web-sidecar.prom"),
    )
    .unwrap();
    let sources = "sources:\n  - { path: web-sidecar.prom, caller: web }\n";
    let t = temp_file("sources-caller", "t.yaml", &topology_text(sources, ""));
    let (code, all, err) = findings(&[&t]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], CALL_LINE + 2);
    assert_ne!(code, 0);
}

#[test]
fn counters_without_a_caller_or_with_an_unknown_one_are_exit_2() {
    let t = temp_file("no-caller", "t.yaml", &topology_text("", ""));
    let prom = format!("{DATA}/web-sidecar.prom");
    let (code, out, err) = retrylint(&["check", &t, "--from", &prom]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("web-sidecar.prom:21:1: counters of Envoy cluster `outbound|8080||api.default.svc.cluster.local` without a caller"),
        "{err}"
    );
    assert!(err.contains("--metrics-caller SERVICE"), "{err}");
    let (code, _, err) = retrylint(&["check", &t, "--from", &prom, "--metrics-caller", "webb"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "the metrics' caller `webb` is not one service of the topology; did you mean `web`?"
        ),
        "{err}"
    );
}

#[test]
fn a_malformed_exposition_is_exit_2_at_its_line_and_column_quoting_that_line_only() {
    let good = std::fs::read_to_string(format!("{DATA}/web-sidecar.prom")).unwrap();
    let bad = good.replacen(
        "api.default.svc.cluster.local\"} 137",
        "api.default.svc.cluster.local} 137",
        1,
    );
    assert_ne!(good, bad);
    let prom = temp_file("malformed", "bad.prom", &bad);
    let t = temp_file("malformed", "t.yaml", &topology_text("", ""));
    let (code, out, err) = retrylint(&["check", &t, "--from", &prom, "--metrics-caller", "web"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("bad.prom:21:52: not a Prometheus text exposition: a label value that is not closed by `\"` before the end of the line"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Of the file, only the offending line is shown.
    let offending = bad.lines().nth(20).unwrap();
    for (n, line) in bad.lines().enumerate() {
        if n != 20 && !line.trim().is_empty() && line != offending {
            assert!(!err.contains(line), "line {} quoted: {err}", n + 1);
        }
    }
    assert!(err.contains(offending), "{err}");

    // A bad value of a counter that is read: at the value's column.
    let bad = good.replacen("cluster.local\"} 137", "cluster.local\"} -3", 1);
    let prom = temp_file("malformed", "negative.prom", &bad);
    let (code, _, err) = retrylint(&["check", &t, "--from", &prom, "--metrics-caller", "web"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "negative.prom:21:100: `envoy_cluster_upstream_rq_total` is -3: not a counter's value"
        ),
        "{err}"
    );
}

#[test]
fn a_prometheus_api_result_sums_the_callers_pods() {
    let t = temp_file("api", "t.yaml", &topology_text("", ""));
    let json = format!("{DATA}/web-sidecars-query.json");
    let (code, all, err) = findings(&[&t, "--from", &json, "--metrics-caller", "web"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], CALL_LINE);
    // Two pods of `web`, Istio's `cluster_name` label: 90 + 110 requests
    // upstream, 20 + 30 retries.
    assert_eq!(
        rl021[0]["message"],
        "Envoy's counters show 1.33 attempts per request on web → api (200 upstream requests for 150 requests, 50 retries, since each proxy started, as read at Unix time 1764756000), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's sidecar/proxy (it counts its own retries)"
    );
    assert!(
        err.contains("sources: 1 document(s) in 1 file(s): 1 × Prometheus API query result"),
        "{err}"
    );
    assert!(
        err.contains("web-sidecars-query.json:6:10: note: Envoy counters"),
        "{err}"
    );
    assert_ne!(code, 0);
    // Declared, no finding.
    let t = temp_file("api", "declared.yaml", &topology_text("", SIDECAR));
    let (code, all, _) = findings(&[&t, "--from", &json, "--metrics-caller", "web"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}");
    assert_eq!(code, 0);
}

#[test]
fn an_api_series_that_lost_its_name_is_an_error() {
    let text = r#"{"status":"success","data":{"resultType":"vector","result":[
{"metric":{"envoy_cluster_name":"outbound|8080||api.default.svc.cluster.local"},"value":[1764756000,"1.37"]}]}}"#;
    let json = temp_file("api-nameless", "ratio.json", text);
    let t = temp_file("api-nameless", "t.yaml", &topology_text("", ""));
    let (code, _, err) = retrylint(&["check", &t, "--from", &json, "--metrics-caller", "web"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ratio.json:2:11: an Envoy cluster series without `__name__`"),
        "{err}"
    );
    assert!(
        err.contains("rate(), increase() and sum() drop the name"),
        "{err}"
    );
}

#[test]
fn upstream_files_without_envoy_request_counters_are_accounted_not_compared() {
    let t = temp_file("upstream", "t.yaml", &topology_text("", ""));
    for (file, what) in [
        (
            "envoy-prometheus-stats-test-sorted.prom",
            "skipped a Prometheus exposition without requests counted by Envoy, Istio, Linkerd or a gRPC client",
        ),
        (
            "prometheus-api-query-up.json",
            "skipped a Prometheus API result (vector) without requests counted by Envoy, Istio, Linkerd or a gRPC client",
        ),
        (
            "prometheus-api-query-range-up.json",
            "skipped a Prometheus API result (matrix) without requests counted by Envoy, Istio, Linkerd or a gRPC client",
        ),
    ] {
        let path = format!("{DATA}/{file}");
        let (code, all, err) = findings(&[&t, "--from", &path, "--verbose"]);
        assert_eq!(code, 0, "{file}: {err}");
        assert!(of(&all, "RL021").is_empty(), "{file}: {all:#?}");
        assert!(
            err.contains(&format!("{file}:1:1: {what}")),
            "{file}: {err}"
        );
        assert!(
            err.contains("1 document(s) in 1 file(s): nothing read; 1 carry no retry settings"),
            "{file}: {err}"
        );
    }
}

#[test]
fn clusters_and_calls_the_topology_lacks_are_warned_about() {
    let text = "# TYPE envoy_cluster_upstream_rq_total counter
envoy_cluster_upstream_rq_total{envoy_cluster_name=\"outbound|9080||ratings.default.svc.cluster.local\"} 40
envoy_cluster_upstream_rq_total{envoy_cluster_name=\"outbound|8080||web.default.svc.cluster.local\"} 12
# TYPE envoy_cluster_upstream_rq_retry counter
envoy_cluster_upstream_rq_retry{envoy_cluster_name=\"outbound|9080||ratings.default.svc.cluster.local\"} 4
envoy_cluster_upstream_rq_retry{envoy_cluster_name=\"outbound|8080||web.default.svc.cluster.local\"} 0
";
    let prom = temp_file("unknown", "api-sidecar.prom", text);
    let t = temp_file("unknown", "t.yaml", &topology_text("", ""));
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "api"]);
    assert_eq!(code, 0, "{all:#?}\n{err}");
    assert!(
        err.contains("api-sidecar.prom:2:1: warning: Envoy cluster `outbound|9080||ratings.default.svc.cluster.local` names no service of the topology: its 40 requests are not compared"),
        "{err}"
    );
    assert!(
        err.contains("api-sidecar.prom:3:1: warning: Envoy counters show `api` calling `web` (12 requests), a call the topology does not have: not compared"),
        "{err}"
    );
}

#[test]
fn counters_without_retries_do_not_make_rl022() {
    // RL022 needs failures, which these counters do not give.
    let text = "envoy_cluster_upstream_rq_total{envoy_cluster_name=\"api\"} 50
envoy_cluster_upstream_rq_retry{envoy_cluster_name=\"api\"} 0
";
    let prom = temp_file("no-retries", "web.prom", text);
    let t = temp_file("no-retries", "t.yaml", &topology_text("", ""));
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "web"]);
    assert!(
        of(&all, "RL021").is_empty() && of(&all, "RL022").is_empty(),
        "{all:#?}"
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("1.00 attempts per request (50 upstream requests for 50 requests, 0 retries)"),
        "{err}"
    );
}

#[test]
fn attempts_that_failed_waiting_for_a_connection_are_counted_too() {
    // 100 requests; 90 first attempts fail to connect (not in
    // upstream_rq_total, in upstream_rq_pending_failure_eject) and their
    // retries succeed: 190 attempts, 1.90 per request, within the
    // sidecar's 2. Without the correction it would read 100 / 10 = 10.
    let text = "# TYPE envoy_cluster_upstream_rq_pending_failure_eject counter
envoy_cluster_upstream_rq_pending_failure_eject{envoy_cluster_name=\"outbound|8080||api.default.svc.cluster.local\"} 90
# TYPE envoy_cluster_upstream_rq_retry counter
envoy_cluster_upstream_rq_retry{envoy_cluster_name=\"outbound|8080||api.default.svc.cluster.local\"} 90
# TYPE envoy_cluster_upstream_rq_total counter
envoy_cluster_upstream_rq_total{envoy_cluster_name=\"outbound|8080||api.default.svc.cluster.local\"} 100
";
    let prom = temp_file("eject", "web.prom", text);
    let t = temp_file("eject", "t.yaml", &topology_text("", SIDECAR));
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "web"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("web.prom:6:1: note: Envoy counters: `web` → `api`: 1.90 attempts per request (190 upstream requests (90 of them failed waiting for a connection) for 100 requests, 90 retries), since the proxy started"),
        "{err}"
    );
}

#[test]
fn a_range_query_is_read_at_its_last_point_and_an_error_answer_is_exit_2() {
    let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
{"metric":{"__name__":"envoy_cluster_upstream_rq_total","envoy_cluster_name":"api"},"values":[[1764752400,"10"],[1764756000,"120"]]},
{"metric":{"__name__":"envoy_cluster_upstream_rq_retry","envoy_cluster_name":"api"},"values":[[1764752400,"0"],[1764756000,"20"]]}]}}"#;
    let json = temp_file("api-range", "range.json", text);
    let t = temp_file("api-range", "t.yaml", &topology_text("", ""));
    let (code, all, err) = findings(&[&t, "--from", &json, "--metrics-caller", "web"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert!(
        rl021[0]["message"].as_str().unwrap().contains(
            "1.20 attempts per request on web → api (120 upstream requests for 100 requests, 20 retries, since each proxy started, as read at Unix time 1764756000)"
        ),
        "{}",
        rl021[0]["message"]
    );
    assert_ne!(code, 0);

    let text = r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#;
    let json = temp_file("api-range", "error.json", text);
    let (code, _, err) = retrylint(&["check", &t, "--from", &json, "--metrics-caller", "web"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "error.json:1:1: a Prometheus API result with status `error`: parse error at char 3"
        ),
        "{err}"
    );
}

#[test]
fn written_figures_of_other_counters_follow_their_kind_and_a_lower_bound_says_at_least() {
    // Istio's figures are the least the counters prove (each request once,
    // `URX` for those whose retries ran out): the message says "at least".
    let istio = "        observed: { source: istio, destination: api.default.svc.cluster.local, attempts_at_least: 104, retries_exhausted: 4 }\n";
    let t = temp_file("kinds", "istio.yaml", &topology_text("", istio));
    let (code, all, err) = findings(&[&t]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], CALL_LINE);
    assert_eq!(
        rl021[0]["message"],
        "Istio's counters show at least 1.04 attempts per request on web → api (at least 104 attempts for 100 requests, 4 of them with retries exhausted (response flag URX), since the proxy started), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's sidecar/proxy (it counts its own retries)"
    );
    assert_ne!(code, 0);
    // The sidecar declared with 2 attempts explains 1.04: no finding.
    let declared = format!("{istio}{SIDECAR}");
    let t = temp_file(
        "kinds",
        "istio-declared.yaml",
        &topology_text("", &declared),
    );
    let (code, all, err) = findings(&[&t]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");

    // Linkerd's are counts: no "at least".
    let linkerd =
        "        observed: { source: linkerd, parent: api, attempts: 150, retries: 50 }\n";
    let t = temp_file("kinds", "linkerd.yaml", &topology_text("", linkerd));
    let (_, all, err) = findings(&[&t]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(
        rl021[0]["message"],
        "Linkerd's counters show 1.50 attempts per request on web → api (150 attempts for 100 requests, 50 retries, since the proxy started), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's Linkerd proxy (it counts its own retries)"
    );

    // Another kind's keys are not taken: located, with what to write.
    let wrong = "        observed: { source: istio, upstream_requests: 104, retries: 4 }\n";
    let t = temp_file("kinds", "wrong.yaml", &topology_text("", wrong));
    let (code, out, err) = retrylint(&["check", &t]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("wrong.yaml:10:"), "{err}");
    assert!(err.contains("upstream_requests"), "{err}");
    let few = "        observed: { source: istio, attempts_at_least: 4, retries_exhausted: 4 }\n";
    let t = temp_file("kinds", "few.yaml", &topology_text("", few));
    let (code, _, err) = retrylint(&["check", &t]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("few.yaml:10:")
            && err.contains("4 retries exhausted among 4 attempts leave no first attempt"),
        "{err}"
    );
}

/// Bookinfo's `productpage` calling `reviews` (line 7) and `details`
/// (line 9), the app retrying neither; `via` under the reviews call.
fn bookinfo(via: &str) -> String {
    format!(
        "version: 1
entry: productpage
services:
  productpage:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: reviews
        timeout: 2s
{via}      - to: details
        timeout: 2s
  reviews:
    latency: {{ p50: 5ms, p99: 20ms }}
  details:
    latency: {{ p50: 5ms, p99: 20ms }}
"
    )
}

const ISTIO_SIDECAR: &str = "        via:
          - name: istio-sidecar
            timeout: 500ms
            retry: { max_attempts: 3, backoff: { kind: exponential, base: 25ms, cap: 250ms, jitter: full }, budget: { kind: ratio, ratio: 0.2 } }
";

#[test]
fn istio_requests_total_with_urx_is_a_lower_bound_and_rl021_where_no_sidecar_is_declared() {
    let t = temp_file("istio", "t.yaml", &bookinfo(""));
    let prom = format!("{DATA}/istio-productpage-sidecar.prom");
    // No --metrics-caller: the series' source_canonical_service names it.
    let (code, all, err) = findings(&[&t, "--from", &prom]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], 7, "{}", rl021[0]);
    // 96 + 3 + 1 + 2 requests; URX on 3 + 1 ("URX" and "URX,UF"), not
    // on the 2 flagged UO (overflow: not retried).
    assert_eq!(
        rl021[0]["message"],
        "Istio's counters show at least 1.04 attempts per request on productpage → reviews (at least 106 attempts for 102 requests, 4 of them with retries exhausted (response flag URX), since the proxy started), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's sidecar/proxy (it counts its own retries)"
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("istio-productpage-sidecar.prom:4:1: note: Istio counters: `productpage` → `reviews`: at least 1.04 attempts per request (at least 106 attempts for 102 requests, 4 of them with retries exhausted (response flag URX)), since the proxy started"),
        "{err}"
    );
    // details: 150 requests, none exhausted: 1.00, no finding.
    assert!(
        err.contains("istio-productpage-sidecar.prom:3:1: note: Istio counters: `productpage` → `details`: at least 1.00 attempts per request (at least 150 attempts for 150 requests, 0 of them with retries exhausted (response flag URX))"),
        "{err}"
    );
    // The reporter="destination" series (the gateway calling productpage,
    // as productpage's sidecar saw it come in) is not read.
    assert!(!err.contains("istio-ingressgateway"), "{err}");

    // Istio's default sidecar policy declared: 3 attempts explain it.
    let t = temp_file("istio", "declared.yaml", &bookinfo(ISTIO_SIDECAR));
    let (code, all, err) = findings(&[&t, "--from", &prom]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn istio_series_without_urx_or_from_other_callers_make_no_finding() {
    let t = temp_file("istio-quiet", "t.yaml", &bookinfo(""));
    // A gateway reporting as a source (a federation dump holds every
    // proxy's series): its caller is not in the topology, a warning.
    let text = "# TYPE istio_requests_total counter
istio_requests_total{reporter=\"source\",source_canonical_service=\"istio-ingressgateway\",source_workload=\"istio-ingressgateway\",source_workload_namespace=\"istio-system\",destination_service=\"productpage.default.svc.cluster.local\",destination_service_name=\"productpage\",response_code=\"503\",response_flags=\"URX\"} 9
istio_requests_total{reporter=\"source\",source_canonical_service=\"productpage\",source_workload=\"productpage-v1\",source_workload_namespace=\"default\",destination_service=\"reviews.default.svc.cluster.local\",destination_service_name=\"reviews\",response_code=\"503\",response_flags=\"UF,UO\"} 7
istio_requests_total{reporter=\"waypoint\",source_canonical_service=\"productpage\",source_workload=\"productpage-v1\",source_workload_namespace=\"default\",destination_service=\"reviews.default.svc.cluster.local\",destination_service_name=\"reviews\",response_code=\"503\",response_flags=\"URX\"} 5
";
    let prom = temp_file("istio-quiet", "federate.prom", text);
    let (code, all, err) = findings(&[&t, "--from", &prom]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("federate.prom:2:1: warning: Istio counters name the caller `istio-ingressgateway.istio-system`, no service of the topology: its 9 requests to `productpage.default.svc.cluster.local` are not compared"),
        "{err}"
    );
    // Only the source's 7 requests, none URX; the waypoint's are not read.
    assert!(
        err.contains("at least 1.00 attempts per request (at least 7 attempts for 7 requests, 0 of them with retries exhausted"),
        "{err}"
    );
}

/// Linkerd's booksapp: `webapp` calling `books` (line 7) and `authors`
/// (line 9); `via` under the books call.
fn booksapp(via: &str) -> String {
    format!(
        "version: 1
entry: webapp
services:
  webapp:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: books
        timeout: 2s
{via}      - to: authors
        timeout: 2s
  books:
    latency: {{ p50: 5ms, p99: 20ms }}
  authors:
    latency: {{ p50: 5ms, p99: 20ms }}
"
    )
}

const LINKERD_PROXY: &str = "        via:
          - name: linkerd-proxy
            timeout: 500ms
            retry: { max_attempts: 2, backoff: { kind: exponential, base: 25ms, cap: 250ms, jitter: full }, budget: { kind: ratio, ratio: 0.2 } }
";

#[test]
fn linkerd_route_and_retry_counters_give_attempts_per_request_and_rl021_where_undeclared() {
    let t = temp_file("linkerd", "t.yaml", &booksapp(""));
    let prom = format!("{DATA}/linkerd-webapp-proxy.prom");
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "webapp"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], 7, "{}", rl021[0]);
    // 2000 + 222 requests at the route (before retries), 469 retry
    // requests: 2691 attempts, as the backends' 2000 + 691 responses say.
    assert_eq!(
        rl021[0]["message"],
        "Linkerd's counters show 1.21 attempts per request on webapp → books (2691 attempts for 2222 requests, 469 retries, since the proxy started), more than its declared layers below the caller allow (1): a retry layer nobody declared, the caller's Linkerd proxy (it counts its own retries)"
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("linkerd-webapp-proxy.prom:3:1: note: Linkerd counters: `webapp` → `books`: 1.21 attempts per request (2691 attempts for 2222 requests, 469 retries; not retried: 222 for the retry limit, 0 for circuit breaking or the budget), since the proxy started"),
        "{err}"
    );
    // authors has no retry counters: its backends' 500 responses for 500
    // requests are 0 retries.
    assert!(
        err.contains("linkerd-webapp-proxy.prom:5:1: note: Linkerd counters: `webapp` → `authors`: 1.00 attempts per request (500 attempts for 500 requests, 0 retries)"),
        "{err}"
    );
    // Declared, no finding.
    let t = temp_file("linkerd", "declared.yaml", &booksapp(LINKERD_PROXY));
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "webapp"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    // Without a caller and without a `deployment` label: exit 2 at the
    // parent's first request line.
    let t = temp_file("linkerd", "t2.yaml", &booksapp(""));
    let (code, _, err) = retrylint(&["check", &t, "--from", &prom]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "linkerd-webapp-proxy.prom:3:1: Linkerd route metrics to `books` without a caller"
        ),
        "{err}"
    );
}

/// Series the readers cannot turn into attempts are said, not dropped:
/// the booksapp scrape cut so that `authors` has its backends' responses
/// but no route requests, one series has lost `parent_name`, and `books`
/// has no retry counter and fewer backend responses than requests; a gRPC
/// client scrape with retries for a target that has no call counts, and a
/// series without `grpc_target`. Each is a warning at its line, and
/// nothing is compared.
#[test]
fn metrics_series_that_cannot_be_counted_are_warned_at_their_line() {
    let upstream = std::fs::read_to_string(format!("{DATA}/linkerd-webapp-proxy.prom")).unwrap();
    let lines: Vec<String> = upstream
        .lines()
        .filter(|l| {
            !(l.starts_with("outbound_http_route_request_statuses_total")
                && l.contains("parent_name=\"authors\""))
        })
        .filter(|l| !l.starts_with("outbound_http_route_retry_requests_total"))
        .map(|l| {
            if l.starts_with("outbound_http_route_backend_response_statuses_total")
                && l.contains("parent_name=\"books\"")
                && l.ends_with(" 691")
            {
                l.replace(" 691", " 100")
            } else if l.starts_with("outbound_http_route_retry_overflow_total") {
                l.replace("parent_name=\"books\",", "")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let text = lines.join("\n") + "\n";
    let line_of = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap() + 1;
    let prom = temp_file("uncounted", "linkerd.prom", &text);
    let t = temp_file("uncounted", "t.yaml", &booksapp(""));
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "webapp"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    let authors = line_of("backend_name=\"authors\"");
    let books = line_of("outbound_http_route_request_statuses_total{");
    let overflow = line_of("outbound_http_route_retry_overflow_total{");
    for want in [
        format!(
            "linkerd.prom:{authors}:1: warning: Linkerd route metrics to `authors` without `outbound_http_route_request_statuses_total` (or its gRPC twin): its requests cannot be told, so it is not compared"
        ),
        format!(
            "linkerd.prom:{books}:1: warning: Linkerd route metrics to `books` count 2100 backend responses for 2222 requests and no `outbound_http_route_retry_requests_total`"
        ),
        format!(
            "linkerd.prom:{overflow}:1: warning: 1 Linkerd route series without a `parent_name` label"
        ),
    ] {
        assert!(err.contains(&want), "{want}\n{err}");
    }
    let grpc = "grpc_client_call_retries_sum{grpc_method=\"a.A/B\",grpc_target=\"dns:///ledger:50051\"} 3\n\
grpc_client_call_duration_seconds_count{grpc_method=\"a.A/B\"} 10\n";
    let prom = temp_file("uncounted", "grpc.prom", grpc);
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "webapp"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    for want in [
        "grpc.prom:1:1: warning: gRPC client metrics for target `dns:///ledger:50051` without `grpc_client_call_duration_seconds_count`: its calls cannot be told, so it is not compared",
        "grpc.prom:2:1: warning: 1 gRPC client series without a `grpc_target` label",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
}

#[test]
fn a_linkerd_query_names_its_caller_by_the_deployment_label() {
    let text = r#"{"status":"success","data":{"resultType":"vector","result":[
{"metric":{"__name__":"outbound_grpc_route_request_statuses_total","deployment":"webapp","namespace":"booksapp","parent_name":"books","parent_namespace":"booksapp","grpc_status":"OK","error":""},"value":[1764756000,"90"]},
{"metric":{"__name__":"outbound_grpc_route_request_statuses_total","deployment":"webapp","namespace":"booksapp","parent_name":"books","parent_namespace":"booksapp","grpc_status":"UNAVAILABLE","error":""},"value":[1764756000,"10"]},
{"metric":{"__name__":"outbound_grpc_route_retry_requests_total","deployment":"webapp","namespace":"booksapp","parent_name":"books","parent_namespace":"booksapp"},"value":[1764756000,"60"]}]}}"#;
    let json = temp_file("linkerd-api", "q.json", text);
    let t = temp_file("linkerd-api", "t.yaml", &booksapp(""));
    let (code, all, err) = findings(&[&t, "--from", &json]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert!(
        rl021[0]["message"].as_str().unwrap().starts_with(
            "Linkerd's counters show 1.60 attempts per request on webapp → books (160 attempts for 100 requests, 60 retries, since each proxy started, as read at Unix time 1764756000)"
        ),
        "{}",
        rl021[0]["message"]
    );
    assert_ne!(code, 0);
}

/// `checkout` calling `payments` (line 7, `retry` given) and `ledger`
/// (line 9) over gRPC.
fn checkout(retry: &str) -> String {
    format!(
        "version: 1
entry: checkout
services:
  checkout:
    latency: {{ p50: 5ms, p99: 20ms }}
    calls:
      - to: payments
        timeout: 2s
{retry}      - to: ledger
        timeout: 2s
  payments:
    latency: {{ p50: 5ms, p99: 20ms }}
  ledger:
    latency: {{ p50: 5ms, p99: 20ms }}
"
    )
}

#[test]
fn grpc_a96_retries_over_calls_are_the_clients_attempts_and_transparent_retries_are_not() {
    let t = temp_file("grpc", "t.yaml", &checkout(""));
    let prom = format!("{DATA}/grpc-checkout-client.prom");
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "checkout"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert_eq!(rl021[0]["line"], 7, "{}", rl021[0]);
    // 90 + 10 calls (grpc.client.call.duration's count), 40 retries (the
    // retries histogram's sum over the 30 calls that retried); the 5
    // transparent retries are not counted: 140, not 145.
    assert_eq!(
        rl021[0]["message"],
        "gRPC's counters show 1.40 attempts per request on checkout → payments (140 attempts for 100 calls, 40 retries and hedges, since the client started), more than its declared gRPC client retries allow (1): a retry layer nobody declared, the caller's gRPC client (its retry policy, from the service config)"
    );
    assert!(
        rl021[0]["help"]
            .as_str()
            .unwrap()
            .contains("gRPC client's retry policy"),
        "{}",
        rl021[0]
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("grpc-checkout-client.prom:5:1: note: gRPC counters: `checkout` → `payments`: 1.40 attempts per request (140 attempts for 100 calls, 40 retries and hedges), since the client started"),
        "{err}"
    );
    // ledger: only transparent retries, and A96 records nothing for a call
    // not retried: not compared, and said.
    assert!(
        err.contains("grpc-checkout-client.prom:11:1: warning: gRPC calls to `dns:///ledger:50051` without `grpc_client_call_retries` or `…_hedges`"),
        "{err}"
    );
    // The client's retry policy declared (3 attempts): no finding.
    let declared = "        retry: { max_attempts: 3, backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full }, budget: { kind: grpc_throttling, max_tokens: 10, token_ratio: 0.1 } }\n";
    let t = temp_file("grpc", "declared.yaml", &checkout(declared));
    let (_, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "checkout"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    // A sidecar's retries below do not: the client's counters see its own
    // retries only, and a sidecar's attempts are not among its calls.
    let sidecar = "        via: [{ name: istio-sidecar, retry: { max_attempts: 3 } }]\n";
    let t = temp_file("grpc", "sidecar.yaml", &checkout(sidecar));
    let (_, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "checkout"]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert!(
        rl021[0]["message"]
            .as_str()
            .unwrap()
            .contains("more than its declared gRPC client retries allow (1)"),
        "{}",
        rl021[0]
    );
}

#[test]
fn grpc_gos_own_codelab_metrics_are_read_without_a_finding() {
    // Upstream's exposition (grpc-go's client with its OpenTelemetry
    // plugin): 26 calls to `dns:///:50051`, no retry metrics.
    let t = temp_file("grpc-codelab", "t.yaml", &checkout(""));
    let prom = format!("{DATA}/grpc-go-codelab-client.prom");
    let (code, all, err) = findings(&[&t, "--from", &prom, "--metrics-caller", "checkout"]);
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("grpc-go-codelab-client.prom:226:1: warning: gRPC target `dns:///:50051` names no host: its 26 calls are not compared"),
        "{err}"
    );
    // 27 attempts started (one still running) are not read as a retry.
    assert!(!err.contains("27"), "{err}");
}

#[test]
fn import_writes_each_counters_figures_and_check_reads_them_back() {
    let cases = [
        (
            "istio",
            bookinfo(""),
            vec![
                "--from",
                "tests/data/metrics/istio-productpage-sidecar.prom",
            ],
            "observed: { source: istio, destination: reviews.default.svc.cluster.local, calls: 102, attempts_per_call: 1.04, attempts_at_least: 106, retries_exhausted: 4, window: \"since the proxy started\" }",
        ),
        (
            "linkerd",
            booksapp(""),
            vec![
                "--from",
                "tests/data/metrics/linkerd-webapp-proxy.prom",
                "--metrics-caller",
                "webapp",
            ],
            "observed: { source: linkerd, parent: books, calls: 2222, attempts_per_call: 1.21, attempts: 2691, retries: 469, limit_exceeded: 222, overflow: 0, window: \"since the proxy started\" }",
        ),
        (
            "grpc",
            checkout(""),
            vec![
                "--from",
                "tests/data/metrics/grpc-checkout-client.prom",
                "--metrics-caller",
                "checkout",
            ],
            "observed: { source: grpc, target: dns:///payments:50051, calls: 100, attempts_per_call: 1.40, attempts: 140, retries: 40, window: \"since the client started\" }",
        ),
    ];
    for (name, text, from, written) in cases {
        let t = temp_file("import", &format!("{name}.yaml"), &text);
        let mut args = vec![t.as_str()];
        args.extend_from_slice(&from);
        let (_, all, err) = findings(&args);
        let seen = of(&all, "RL021");
        assert_eq!(seen.len(), 1, "{name}: {all:#?}\n{err}");

        let out = temp_dir("import").join(format!("{name}-imported.yaml"));
        let out = out.to_str().unwrap();
        let mut import = vec!["import", t.as_str(), "-o", out];
        import.extend_from_slice(&from);
        let (code, _, err) = retrylint(&import);
        assert_eq!(code, 0, "{name}: {err}");
        let imported = std::fs::read_to_string(out).unwrap();
        assert!(imported.contains(written), "{name}: {imported}");
        // Read back alone, the same finding at the same call.
        let (_, again, err) = findings(&[out]);
        let again = of(&again, "RL021");
        assert_eq!(again.len(), 1, "{name}: {again:#?}\n{err}");
        assert_eq!(again[0]["message"], seen[0]["message"], "{name}");
    }
}

#[test]
fn a_scrape_with_envoys_and_istios_counters_for_one_call_compares_envoys() {
    let text = "# TYPE envoy_cluster_upstream_rq_total counter
envoy_cluster_upstream_rq_total{cluster_name=\"outbound|9080||reviews.default.svc.cluster.local\"} 130
# TYPE envoy_cluster_upstream_rq_retry counter
envoy_cluster_upstream_rq_retry{cluster_name=\"outbound|9080||reviews.default.svc.cluster.local\"} 30
# TYPE istio_requests_total counter
istio_requests_total{reporter=\"source\",source_canonical_service=\"productpage\",source_workload_namespace=\"default\",destination_service=\"reviews.default.svc.cluster.local\",response_code=\"503\",response_flags=\"URX\"} 4
istio_requests_total{reporter=\"source\",source_canonical_service=\"productpage\",source_workload_namespace=\"default\",destination_service=\"reviews.default.svc.cluster.local\",response_code=\"200\",response_flags=\"-\"} 96
";
    let prom = temp_file("both", "productpage.prom", text);
    let t = temp_file("both", "t.yaml", &bookinfo(""));
    // No --metrics-caller: the one caller Istio's series name is the
    // Envoy counters' too (the scrape is that sidecar's).
    let (_, all, err) = findings(&[&t, "--from", &prom]);
    let rl021 = of(&all, "RL021");
    assert_eq!(rl021.len(), 1, "{all:#?}\n{err}");
    assert!(
        rl021[0]["message"].as_str().unwrap().starts_with(
            "Envoy's counters show 1.30 attempts per request on productpage → reviews"
        ),
        "{}",
        rl021[0]["message"]
    );
    assert!(
        err.contains("note: `productpage` → `reviews`: Envoy's cluster counters are compared, not Istio's `istio_requests_total` (Envoy's count every attempt)"),
        "{err}"
    );
    // An ingress gateway's own scrape: the caller its series name is no
    // service of the topology, which is a warning for its Envoy counters
    // as for its Istio series, not an error.
    let gateway = text.replace("productpage\",", "istio-ingressgateway\",");
    let prom = temp_file("both", "gateway.prom", &gateway);
    let (code, all, err) = findings(&[&t, "--from", &prom]);
    assert_ne!(code, 2, "{err}");
    assert!(of(&all, "RL021").is_empty(), "{all:#?}\n{err}");
    assert!(
        err.contains("warning: Envoy counters name the caller `istio-ingressgateway.default`, no service of the topology"),
        "{err}"
    );
}

#[test]
fn the_review_page_names_who_counted_and_what_the_series_called_the_callee() {
    let t = temp_file("page", "t.yaml", &bookinfo(""));
    let (code, md, err) = retrylint(&[
        "report",
        &t,
        "--from",
        "tests/data/metrics/istio-productpage-sidecar.prom",
        "--format",
        "markdown",
        "--trials",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains("| `productpage → reviews` | Istio counters (destination reviews.default.svc.cluster.local) | ≥ 1.04 | – | 102 requests since the proxy started | 1 (1 below the caller) | RL021 |\n"),
        "{md}"
    );
    // A gRPC client's figure is per call and held to all the layers.
    let t = temp_file("page", "grpc.yaml", &checkout(""));
    let (code, md, err) = retrylint(&[
        "report",
        &t,
        "--from",
        "tests/data/metrics/grpc-checkout-client.prom",
        "--metrics-caller",
        "checkout",
        "--format",
        "markdown",
        "--trials",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains("| `checkout → payments` | gRPC counters (target dns:\u{2060}///payments:50051) | 1.40 | – | 100 calls since the client started | 1 | RL021 |\n"),
        "{md}"
    );
}

#[test]
fn calibrate_sets_a_grpc_clients_figure_beside_the_models_calls() {
    let t = temp_file("calibrate", "grpc.yaml", &checkout(""));
    let (code, out, err) = retrylint(&[
        "simulate",
        &t,
        "--from",
        "tests/data/metrics/grpc-checkout-client.prom",
        "--metrics-caller",
        "checkout",
        "--calibrate",
        "--fault",
        "none",
        "--trials",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let c = &v["calibration"]["calls"][0];
    assert_eq!(c["to"], "payments", "{c}");
    assert_eq!(c["source"], "grpc", "{c}");
    assert_eq!(c["observed_calls"], 100, "{c}");
    assert_eq!(c["observed_attempts_per_call"], 1.4, "{c}");
    // Nothing fails in the model and nothing retries: 1 attempt per call.
    assert_eq!(c["simulated_attempts_per_call"], 1.0, "{c}");
}

#[test]
fn calibrate_says_an_istio_figure_is_a_lower_bound() {
    let t = temp_file("calibrate", "istio.yaml", &bookinfo(""));
    let (code, out, err) = retrylint(&[
        "simulate",
        &t,
        "--from",
        "tests/data/metrics/istio-productpage-sidecar.prom",
        "--calibrate",
        "--fault",
        "none",
        "--trials",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let calls = v["calibration"]["calls"].as_array().unwrap();
    let reviews = calls
        .iter()
        .find(|c| c["to"] == "reviews")
        .expect("reviews");
    assert_eq!(reviews["source"], "istio", "{reviews}");
    assert_eq!(reviews["observed_at_least"], true, "{reviews}");
    assert_eq!(reviews["simulated_attempts_per_call"], 1.0, "{reviews}");
    // Below the bound the model disagrees, and the words say "at least".
    assert_eq!(
        v["calibration"]["furthest"],
        "productpage → reviews: the model makes 1.00 attempts per call where production showed at least 1.04 (0.96×)"
    );
    let (_, table, _) = retrylint(&[
        "simulate",
        &t,
        "--from",
        "tests/data/metrics/istio-productpage-sidecar.prom",
        "--calibrate",
        "--fault",
        "none",
        "--trials",
        "2",
    ]);
    assert!(table.contains("≥ 1.04"), "{table}");
}
