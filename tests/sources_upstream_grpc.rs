//! A call's protocol (#26 item 6): a topology's `protocol: grpc`, a
//! Kubernetes Service's gRPC port, a trace's `rpc.system: grpc`; and Envoy's
//! gRPC retry conditions (`unavailable`, `cancelled`, …) applying on gRPC
//! calls only. Upstream files; origin, commit and licence in
//! tests/data/README.md.

use std::path::{Path, PathBuf};

use retrylint::external::{self, Options, Request};
use retrylint::policy::Condition;
use retrylint::topology::{self, Call, Layer, Merged, Presets, Topology};

use crate::common;

const DATA: &str = "tests/data";

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-upstream-grpc");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn merged(name: &str, topology: &str, from: &[&str]) -> Merged {
    let topo = temp_file(name, topology);
    let from: Vec<PathBuf> = from
        .iter()
        .map(|f| PathBuf::from(format!("{DATA}/{f}")))
        .collect();
    topology::load_with_sources(
        Some(Path::new(&topo)),
        &from,
        Options::default(),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn calls<'a>(t: &'a Topology, from: &str) -> &'a [Call] {
    &t.services[t.id_of(from).unwrap()].calls
}

fn layer<'a>(c: &'a Call, name: &str) -> &'a Layer {
    c.layers.iter().find(|l| l.name == name).unwrap()
}

/// istioctl's routes dump (Istio's default policy as istiod writes it:
/// `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes`
/// with 503): on an HTTP call `unavailable` and `cancelled` match nothing
/// (an HTTP answer has no grpc-status), so it retries connect failures and
/// 503; on the same call with `protocol: grpc` UNAVAILABLE and CANCELLED
/// are gRPC statuses (read as the service config reads them: UNAVAILABLE
/// is 503, connect, reset; CANCELLED reset), so a reset is retried too.
/// Before, both calls got the HTTP conditions.
#[test]
fn envoy_grpc_conditions_apply_on_grpc_calls_only() {
    let m = merged(
        "envoy-grpc.yaml",
        "version: 1\nentry: web\nservices:\n  web:\n    calls:\n    - { to: httpbin, path: /get }\n    - { to: httpbin, path: /get, protocol: grpc }\n  httpbin: {}\n",
        &["envoy/istioctl-routes-path-separated-prefix.json"],
    );
    let c = calls(&m.topology, "web");
    assert!(!c[0].grpc);
    assert!(c[1].grpc);
    assert_eq!(
        layer(&c[0], "envoy").policy.retry_on.0,
        [Condition::Connect, Condition::Status(503)]
    );
    assert_eq!(
        layer(&c[1], "envoy").policy.retry_on.0,
        [Condition::Connect, Condition::Reset, Condition::Status(503)]
    );
    assert_eq!(layer(&c[1], "envoy").policy.max_attempts, 3);
}

/// emojivoto's `voting.yml`: Service voting-svc has ports `grpc` and `prom`
/// (metrics): calls to it are gRPC. Istio's `grpc-echo.yaml`: Service echo
/// has `http`, `grpc` and `tcp` ports, so a call could be either: read as
/// HTTP, and a note says to write `protocol: grpc`.
#[test]
fn kubernetes_grpc_ports_make_grpc_calls() {
    let m = merged(
        "k8s-grpc.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [voting-svc, echo] }\n  voting-svc: {}\n  echo: {}\n",
        &[
            "kubernetes-grpc/emojivoto-voting.yml",
            "kubernetes-grpc/grpc-echo.yaml",
        ],
    );
    let c = calls(&m.topology, "web");
    assert!(c[0].grpc, "voting-svc");
    assert!(!c[1].grpc, "echo");
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("gRPC and HTTP ports"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/kubernetes-grpc/grpc-echo.yaml:6:3: note: Service `echo` has gRPC and HTTP ports; calls to it are read as HTTP: write `protocol: grpc` on a call to its gRPC port"
        )]
    );
    let facts = external::import(
        &[Request::path(format!(
            "{DATA}/kubernetes-grpc/emojivoto-voting.yml"
        ))],
        Options::default(),
    )
    .unwrap();
    let hosts: Vec<(&str, Option<&str>)> = facts
        .grpc_hosts
        .iter()
        .map(|h| (h.host.as_str(), h.namespace.as_deref()))
        .collect();
    assert_eq!(hosts, [("voting-svc", Some("emojivoto"))]);
}

/// `protocol:` takes `http` or `grpc`; anything else is an error at its
/// value naming both.
#[test]
fn an_unknown_protocol_is_refused() {
    let topo = temp_file(
        "soap.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: a, protocol: soap }] }\n  a: {}\n",
    );
    let t = topo.to_str().unwrap();
    let (code, _, err) = common::run::retrylint(&["check", t]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{t}:4:37: unknown protocol `soap`")),
        "{err}"
    );
    assert!(
        err.contains("write `protocol: http` (the default) or `protocol: grpc`"),
        "{err}"
    );
}

/// A trace's `rpc.system: grpc` (OpenTelemetry's RPC conventions) makes the
/// call it shows a gRPC call. Generated: the OTLP/JSON shape of
/// tests/data/traces/upstream-otlp-trace.json, one client span of `web` and
/// its server span of `ledger`, both with `rpc.system: grpc`; no upstream
/// trace export of a gRPC call was found to copy.
#[test]
fn a_trace_of_a_grpc_call_makes_a_grpc_call() {
    let span = |id: &str, parent: Option<&str>, kind: u8| {
        format!(
            r#"{{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"{id}",{}"name":"ledger.Ledger/Post","kind":{kind},"startTimeUnixNano":"1000","endTimeUnixNano":"2000","attributes":[{{"key":"rpc.system","value":{{"stringValue":"grpc"}}}}]}}"#,
            parent.map_or(String::new(), |p| format!(r#""parentSpanId":"{p}","#))
        )
    };
    let resource = |service: &str, spans: String| {
        format!(
            r#"{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{service}"}}}}]}},"scopeSpans":[{{"spans":[{spans}]}}]}}"#
        )
    };
    let text = format!(
        r#"{{"resourceSpans":[{},{}]}}"#,
        resource("web", span("AAAAAAAAAAAAAAA1", None, 3)),
        resource(
            "ledger",
            span("AAAAAAAAAAAAAAA2", Some("AAAAAAAAAAAAAAA1"), 2)
        ),
    );
    let file = temp_file("grpc-trace.json", &text);
    let facts = external::import(&[Request::path(&file)], Options::default()).unwrap();
    assert_eq!(facts.calls.len(), 1);
    assert!(facts.calls[0].grpc);
    let t = topology::load_with_sources(None, &[file], Options::default(), &Presets::embedded())
        .unwrap()
        .topology;
    assert!(calls(&t, "web")[0].grpc);
}
