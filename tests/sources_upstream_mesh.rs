//! Gateway API, Envoy Gateway, Linkerd and gRPC service configs read from
//! the projects' own files (tests/data/README.md says where each comes
//! from), against the semantics their code and docs state.

use std::path::{Path, PathBuf};
use std::time::Duration;

use retrylint::external::{self, Options, Request, gateway_api::Implementation};
use retrylint::policy::{BackoffKind, BudgetSpec, Condition, Jitter};
use retrylint::topology::{self, Call, Layer, Merged, Presets, Topology};

use crate::common;

const DATA: &str = "tests/data";

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-upstream-mesh");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn merged_with(topology: &str, from: &[&str], options: Options) -> Merged {
    // Named by its content: tests run in parallel, and two may read the
    // same sources with different topologies.
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&(topology, from), &mut h);
    let topo = temp_file(
        &format!("topo-{:x}.yaml", std::hash::Hasher::finish(&h)),
        topology,
    );
    let from: Vec<PathBuf> = from
        .iter()
        .map(|f| PathBuf::from(format!("{DATA}/{f}")))
        .collect();
    topology::load_with_sources(Some(Path::new(&topo)), &from, options, &Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn merged(topology: &str, from: &[&str]) -> Merged {
    merged_with(topology, from, Options::default())
}

fn call<'a>(t: &'a Topology, from: &str, to: &str) -> &'a Call {
    let (f, to) = (t.id_of(from).unwrap(), t.id_of(to).unwrap());
    t.services[f].calls.iter().find(|c| c.to == to).unwrap()
}

fn names(c: &Call) -> Vec<&str> {
    c.layers.iter().map(|l| l.name.as_str()).collect()
}

fn layer<'a>(c: &'a Call, name: &str) -> &'a Layer {
    c.layers
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no layer {name}: {:?}", names(c)))
}

fn conditions(text: &str) -> Vec<Condition> {
    text.split(',').map(|c| c.trim().parse().unwrap()).collect()
}

/// `(file, line)` of a located position.
fn at(t: &Topology, pos: Option<retrylint::input::Pos>) -> (String, u32) {
    let (file, p) = t.locate(pos.expect("located"));
    (file.to_owned(), p.line)
}

/// The 1-based line of the `nth` (0-based) line of `file` containing `needle`.
fn line_of(file: &str, needle: &str, nth: usize) -> u32 {
    let text = std::fs::read_to_string(format!("{DATA}/{file}")).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .map(|(i, _)| i as u32 + 1)
        .unwrap_or_else(|| panic!("{needle} #{nth} not in {file}"))
}

// ---- Gateway API and Envoy Gateway ----

/// Envoy Gateway's own translator test (`httproute-retry.in.yaml`, whose
/// `.out.yaml` is the expected IR): the `/v2` rule outranks `/` although
/// listed second (longest prefix), and each rule's own `retry` wins over the
/// BackendTrafficPolicy on the route (`GetRetry()`: `h.Retry` first). Before,
/// `/v2/x` took the `/` rule and the policy's `numRetries: 5` replaced both.
#[test]
fn envoy_gateway_rule_retry_wins_over_its_policy_and_the_longest_prefix_first() {
    let f = "envoy-gateway/httproute-retry.yaml";
    let m = merged(
        "version: 1\nentry: gw\nservices:\n  gw: { calls: [a, b] }\n  a: { calls: [{ to: service-1, path: /v2/x }] }\n  b: { calls: [{ to: service-1, path: /login }] }\n  service-1: {}\n",
        &[f],
    );
    let t = &m.topology;
    let v2 = layer(call(t, "a", "service-1"), "gateway");
    assert_eq!(v2.policy.max_attempts, 4, "attempts: 3 counts retries");
    assert_eq!(
        v2.policy.retry_on.0,
        conditions("connect, 503"),
        "no codes: EG's 503"
    );
    assert_eq!(v2.policy.backoff.base, Duration::from_millis(25));
    assert_eq!(
        v2.timeout.unwrap().value,
        Duration::from_secs(3),
        "backendRequest"
    );
    assert_eq!(
        at(t, v2.spans.max_attempts),
        (format!("{DATA}/{f}"), line_of(f, "attempts: 3", 1))
    );
    let root = layer(call(t, "b", "service-1"), "gateway");
    assert_eq!(root.policy.max_attempts, 4);
    assert_eq!(root.policy.retry_on.0, conditions("connect, 500"));
    assert_eq!(root.policy.backoff.base, Duration::from_millis(200));
    assert_eq!(root.policy.backoff.cap, Some(Duration::from_secs(2)));
    assert_eq!(
        at(t, root.spans.max_attempts),
        (format!("{DATA}/{f}"), line_of(f, "attempts: 3", 0))
    );
    // The policy on Gateway gateway-1: no route here attaches to it.
    let warned: Vec<&String> = m.notes.iter().filter(|n| n.contains("gateway-1")).collect();
    assert_eq!(
        warned,
        [&format!(
            "{DATA}/{f}:{}:5: warning: BackendTrafficPolicy targets Gateway `gateway-1`, to which no route among the sources attaches",
            line_of(f, "targetRef:", 0) + 1
        )]
    );
}

/// GEP-1731 leaves the defaults to the implementation: the same upstream
/// `retry: { attempts: 3 }` (conformance `httproute-retry-connection-error`)
/// retries 503 under Envoy Gateway (`retryDefaultRetriableStatusCode`) and
/// no status at all under Istio (`conversion.go`: `connect-failure,
/// refused-stream,unavailable,cancelled` plus the codes, none here).
#[test]
fn retry_without_codes_per_implementation() {
    let topo = "version: 1\nentry: gw\nservices:\n  gw: { calls: [{ to: infra-backend-v3, path: /retry/no-status-code-attempts-3 }] }\n  infra-backend-v3: {}\n";
    let f = "gateway-api/httproute-retry-connection-error.yaml";
    let eg = merged(topo, &[f]);
    let l = layer(call(&eg.topology, "gw", "infra-backend-v3"), "gateway");
    assert_eq!(l.policy.max_attempts, 4);
    assert_eq!(l.policy.retry_on.0, conditions("connect, 503"));
    let istio = merged_with(
        topo,
        &[f],
        Options {
            gateway: Implementation::Istio,
            ..Options::default()
        },
    );
    let l = layer(call(&istio.topology, "gw", "infra-backend-v3"), "gateway");
    assert_eq!(l.policy.max_attempts, 4);
    assert_eq!(l.policy.retry_on.0, conditions("connect"));
    assert!(
        istio.notes.iter().any(|n| n
            == &format!("{DATA}/{f}:14:7: note: HTTPRoute retry without `codes`: Istio retries connection failures only (no status code)")),
        "{:#?}",
        istio.notes
    );
}

/// Gateway API's own example `http-retries.yaml` (GEP-1731: `codes: [500,
/// 502, 503, 504]`) on a gRPC call to its backend: the codes are HTTP
/// statuses (Envoy's `retriable-status-codes`, matched against `:status`),
/// and a gRPC server answers errors with HTTP 200 and `grpc-status` in the
/// trailers (gRPC's PROTOCOL-HTTP2.md), so on the gRPC call only the
/// translation's own conditions apply (Envoy Gateway's
/// `connect-failure,refused-stream,unavailable,cancelled`, the gRPC ones
/// read as their statuses), and a warning at the `codes` key says so —
/// once, whatever the number of gRPC calls. The HTTP call keeps its codes.
/// Before, the HTTP codes were applied to the gRPC call in silence.
#[test]
fn http_route_codes_do_not_see_grpc_failures() {
    let f = "gateway-api/http-retries.yaml";
    let m = merged(
        "version: 1\nentry: gw\nservices:\n  gw:\n    calls:\n    - backend-svc\n    - { to: backend-svc, path: /a.A/B, protocol: grpc }\n    - { to: backend-svc, path: /a.A/C, protocol: grpc }\n  backend-svc: {}\n",
        &[f],
    );
    let t = &m.topology;
    let calls = &t.services[t.id_of("gw").unwrap()].calls;
    let http = layer(&calls[0], "gateway");
    assert_eq!(
        http.policy.retry_on.0,
        conditions("connect, 500, 502, 503, 504")
    );
    for c in &calls[1..] {
        let l = layer(c, "gateway");
        assert_eq!(l.policy.max_attempts, 3);
        assert_eq!(l.policy.retry_on.0, conditions("connect, reset, 503"));
    }
    let said: Vec<&String> = m.notes.iter().filter(|n| n.contains("gRPC")).collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{f}:13:7: warning: HTTPRoute retry `codes` (500, 502, 503, 504) match the HTTP status, but the call `gw` → `backend-svc` is gRPC: a gRPC server answers its errors with HTTP 200 and the status in `grpc-status` trailers (gRPC's PROTOCOL-HTTP2.md), so the codes retry nothing on it; only the translation's own conditions apply (connect, reset, 503); retry gRPC statuses with the implementation's gRPC retry (Envoy Gateway's BackendTrafficPolicy `retryOn.triggers`) or a gRPC service config"
        )]
    );
}

/// `check --gateway istio` reads the route as Istio translates it: the
/// same upstream file, and a note on standard error says what it did (the
/// default, Envoy Gateway, does not); `--gateway nginx` is a usage error
/// naming the choices.
#[test]
fn check_takes_the_gateway_flag() {
    let topo = temp_file(
        "cli-gateway.yaml",
        "version: 1\nentry: gw\nservices:\n  gw: { calls: [{ to: infra-backend-v3, path: /retry/no-status-code-attempts-3 }] }\n  infra-backend-v3: {}\n",
    );
    let f = format!("{DATA}/gateway-api/httproute-retry-connection-error.yaml");
    let t = topo.to_str().unwrap();
    let (_, _, err) = common::run::retrylint(&["check", t, "--from", &f, "--gateway", "istio"]);
    let note = format!(
        "{f}:14:7: note: HTTPRoute retry without `codes`: Istio retries connection failures only (no status code)"
    );
    assert!(err.contains(&note), "{err}");
    let (_, _, err) = common::run::retrylint(&["check", t, "--from", &f]);
    assert!(!err.contains(&note), "{err}");
    let (code, _, err) = common::run::retrylint(&["check", t, "--from", &f, "--gateway", "nginx"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "`nginx` is not a known Gateway API implementation; write one of envoy-gateway, istio"
        ),
        "{err}"
    );
}

/// `--gateway` names the implementation; an unknown one is refused with
/// the choices.
#[test]
fn the_gateway_flag_is_parsed() {
    assert_eq!(Implementation::parse("istio"), Ok(Implementation::Istio));
    assert_eq!(
        Implementation::parse("envoy-gateway"),
        Ok(Implementation::EnvoyGateway)
    );
    assert_eq!(
        Implementation::parse("nginx"),
        Err(
            "`nginx` is not a known Gateway API implementation; write one of envoy-gateway, istio"
                .into()
        )
    );
}

/// Conformance `httproute-retry-with-timeouts`: `timeouts.request` is the
/// outer bound, `backendRequest` each attempt's.
#[test]
fn retry_with_timeouts_nests_request_outside_backend_request() {
    let f = "gateway-api/httproute-retry-with-timeouts.yaml";
    let m = merged(
        "version: 1\nentry: gw\nservices:\n  gw: { calls: [{ to: infra-backend-v3, path: /retry/request-timeout-200ms }] }\n  infra-backend-v3: {}\n",
        &[f],
    );
    let c = call(&m.topology, "gw", "infra-backend-v3");
    assert_eq!(names(c), ["app", "gateway-route", "gateway"]);
    assert_eq!(
        layer(c, "gateway-route").timeout.unwrap().value,
        Duration::from_millis(400)
    );
    let g = layer(c, "gateway");
    assert_eq!(g.timeout.unwrap().value, Duration::from_millis(200));
    assert_eq!(g.policy.max_attempts, 6);
    assert_eq!(g.policy.retry_on.0, conditions("connect, 500"));
}

/// A BackendTrafficPolicy on a Gateway retries the GRPCRoute attached to
/// it (Envoy Gateway's `backendtrafficpolicy-with-retries` test: the
/// GRPCRoute's IR gets `cancelled, reset-before-request`); on a gRPC call
/// `cancelled` is the service config's CANCELLED (reset), not nothing.
#[test]
fn a_policy_on_a_gateway_retries_its_grpc_route_with_grpc_conditions() {
    let f = "envoy-gateway/backendtrafficpolicy-with-retries-grpc.yaml";
    let m = merged(
        "version: 1\nentry: gw\nservices:\n  gw: { calls: [{ to: service-1, method: POST, path: /helloworld.Greeter/SayHello }] }\n  service-1: {}\n",
        &[f],
    );
    let g = layer(call(&m.topology, "gw", "service-1"), "gateway");
    assert_eq!(g.policy.max_attempts, 3, "numRetries absent: 2 retries");
    assert_eq!(g.policy.retry_on.0, conditions("reset, connect"));
    assert_eq!(g.timeout.unwrap().value, Duration::from_millis(250));
    assert_eq!(g.policy.backoff.base, Duration::from_millis(100));
    assert_eq!(g.policy.backoff.cap, Some(Duration::from_secs(10)));
    assert_eq!(
        at(&m.topology, g.spans.policy),
        (format!("{DATA}/{f}"), line_of(f, "retry:", 0))
    );
    assert!(
        !m.notes.iter().any(|n| n.contains("retries nothing here")),
        "{:#?}",
        m.notes
    );
}

/// Envoy Gateway's `backendtrafficpolicy-with-circuitbreakers` test: the
/// route's policy has `retryBudget: { percent: { numerator: 10 } }` beside
/// `maxParallelRetries: 24`; the budget wins ("RetryBudget take precedence
/// over maxParallelRetries"). Read with the `httproute-retry` test's route
/// of the same name, whose rules retry.
#[test]
fn circuit_breaker_retry_budget_is_read() {
    let cb = "envoy-gateway/backendtrafficpolicy-with-circuitbreakers.yaml";
    let m = merged(
        "version: 1\nentry: gw\nservices:\n  gw: { calls: [{ to: service-1, path: /v2 }] }\n  service-1: {}\n",
        &["envoy-gateway/httproute-retry.yaml", cb],
    );
    let g = layer(call(&m.topology, "gw", "service-1"), "gateway");
    assert_eq!(g.policy.max_attempts, 4, "the rule's own retry");
    let Some(BudgetSpec::Ratio { ratio, .. }) = g.policy.budget else {
        panic!("{:?}", g.policy.budget)
    };
    assert!((ratio - 0.1).abs() < 1e-12, "{ratio}");
    assert!(
        m.notes.iter().any(|n| *n == format!("{DATA}/{cb}:{}:5: note: Envoy Gateway's retryBudget (10 % of requests in flight) is read as a ratio budget of 0.1; minRetryConcurrency (default 3) is not modelled", line_of(cb, "retryBudget:", 0))),
        "{:#?}",
        m.notes
    );
}

/// Conformance `grpcroute-exact-method-matching`: `Echo` and `EchoTwo` of
/// one service go to different backends; a GRPCRoute is read (before it was
/// not a known kind) and matches the call's path `/service/method`.
#[test]
fn a_grpc_route_is_read_and_matches_methods() {
    let f = "gateway-api/grpcroute-exact-method-matching.yaml";
    let facts =
        external::import(&[Request::path(format!("{DATA}/{f}"))], Options::default()).unwrap();
    assert_eq!(facts.read_kinds, [external::Kind::GatewayGrpcRoute]);
    assert_eq!(facts.routes.len(), 2);
    let svc = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";
    for (method, backend) in [
        ("Echo", "grpc-infra-backend-v1"),
        ("EchoTwo", "grpc-infra-backend-v2"),
    ] {
        let path = format!("{svc}/{method}");
        let taking: Vec<&str> = facts
            .routes
            .iter()
            .filter(|r| r.matcher.matches("POST", Some(&path)))
            .map(|r| r.hosts[0].host.as_str())
            .collect();
        assert_eq!(taking, [backend], "{path}");
    }
}

/// Conformance `httproute-path-match-order`: its requests and the rule each
/// must reach, in the order the precedence puts the rules (each rule sends
/// to a backend; here, which route a path takes first).
#[test]
fn path_match_order_follows_the_conformance_test() {
    let f = "gateway-api/httproute-path-match-order.yaml";
    let facts =
        external::import(&[Request::path(format!("{DATA}/{f}"))], Options::default()).unwrap();
    // (request path, backend) from httproute-path-match-order.go.
    let cases = [
        ("/match/exact/one", "infra-backend-v3"),
        ("/match/exact", "infra-backend-v2"),
        ("/match", "infra-backend-v1"),
        ("/match/prefix/one/any", "infra-backend-v2"),
        ("/match/prefix/any", "infra-backend-v1"),
        ("/match/any", "infra-backend-v3"),
    ];
    for (path, backend) in cases {
        let first = facts
            .routes
            .iter()
            .find(|r| r.matcher.matches("GET", Some(path)))
            .unwrap();
        assert_eq!(first.hosts[0].host, backend, "{path}");
    }
}

// ---- Linkerd ----

/// Linkerd's reference (`reference/retries.md`): annotations on an
/// HTTPRoute whose parentRef is the Service, no backendRefs. Before, the
/// route had no backendRefs and was dropped: no findings.
#[test]
fn linkerd_route_annotations_on_a_service_parent() {
    let f = "linkerd/retries-httproute.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: schlep, path: /any }] }\n  schlep: {}\n",
        &[f],
    );
    let l = layer(call(&m.topology, "web", "schlep"), "linkerd");
    assert_eq!(l.policy.max_attempts, 3, "limit: 2 counts retries");
    assert_eq!(l.policy.retry_on.0, conditions("5xx, timeout"));
    assert_eq!(l.timeout.unwrap().value, Duration::from_millis(300));
    assert_eq!(l.policy.backoff.kind, BackoffKind::Exponential);
    assert_eq!(l.policy.backoff.base, Duration::from_millis(25));
    assert_eq!(l.policy.backoff.cap, Some(Duration::from_millis(250)));
    assert_eq!(l.policy.backoff.jitter, Jitter::Full);
    assert_eq!(
        at(&m.topology, l.spans.max_attempts),
        (
            format!("{DATA}/{f}"),
            line_of(f, "retry.linkerd.io/limit", 0)
        )
    );
}

/// The same route on a gRPC call: with no GRPCRoute among the sources
/// Linkerd serves the call as HTTP, and linkerd2-proxy's HTTP retry has no
/// gRPC codes (`retryable_grpc_statuses: None` in its route `RetryPolicy`),
/// so `5xx` never matches a gRPC error (HTTP 200, the status in trailers);
/// the per-try timeout is still retried. Warned once at the annotation.
/// Before, the call took `5xx` as if it matched gRPC statuses.
#[test]
fn linkerd_http_retry_on_a_grpc_call_retries_timeouts_only() {
    let f = "linkerd/retries-httproute.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: schlep, path: /a.A/B, protocol: grpc }, { to: schlep, path: /a.A/C, protocol: grpc }] }\n  schlep: {}\n",
        &[f],
    );
    let t = &m.topology;
    for c in &t.services[t.id_of("web").unwrap()].calls {
        let l = layer(c, "linkerd");
        assert_eq!(l.policy.max_attempts, 3);
        assert_eq!(l.policy.retry_on.0, conditions("timeout"));
        assert_eq!(l.timeout.unwrap().value, Duration::from_millis(300));
    }
    let said: Vec<&String> = m.notes.iter().filter(|n| n.contains("gRPC")).collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{f}:{}:5: warning: `retry.linkerd.io/http` (5xx) match the HTTP status, but the call `web` → `schlep` is gRPC: a gRPC server answers its errors with HTTP 200 and the status in `grpc-status` trailers (gRPC's PROTOCOL-HTTP2.md), so the codes retry nothing on it; without a GRPCRoute among the sources Linkerd serves the call as HTTP, and its HTTP retry reads no gRPC status: only timeout is retried; attach a GRPCRoute to the Service and retry gRPC statuses with `retry.linkerd.io/grpc`",
            line_of(f, "retry.linkerd.io/http", 0)
        )]
    );
}

/// `reference/timeouts.md`: `timeout.linkerd.io/request` bounds the request,
/// `/response` the backend's answer; neither is retried.
#[test]
fn linkerd_timeout_annotations() {
    let f = "linkerd/timeouts-httproute.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [schlep] }\n  schlep: {}\n",
        &[f],
    );
    let c = call(&m.topology, "web", "schlep");
    assert_eq!(
        names(c),
        ["app", "linkerd-timeout", "linkerd-response-timeout"]
    );
    assert_eq!(
        layer(c, "linkerd-timeout").timeout.unwrap().value,
        Duration::from_secs(2)
    );
    let r = layer(c, "linkerd-response-timeout");
    assert_eq!(r.timeout.unwrap().value, Duration::from_secs(1));
    assert_eq!(r.policy.max_attempts, 1);
}

/// `reference/retries.md`'s GRPCRoute: `retry.linkerd.io/grpc: internal` on
/// `schlep.Schlep/Get` only (INTERNAL is 500, as in a service config).
#[test]
fn linkerd_grpc_route_annotations_apply_to_its_method() {
    let f = "linkerd/retries-grpcroute.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [a, b] }\n  a: { calls: [{ to: schlep, method: POST, path: /schlep.Schlep/Get }] }\n  b: { calls: [{ to: schlep, method: POST, path: /schlep.Schlep/Put }] }\n  schlep: {}\n",
        &[f],
    );
    let l = layer(call(&m.topology, "a", "schlep"), "linkerd");
    assert_eq!(l.policy.max_attempts, 3);
    assert_eq!(l.policy.retry_on.0, conditions("500, timeout"));
    assert_eq!(l.timeout.unwrap().value, Duration::from_millis(400));
    assert_eq!(names(call(&m.topology, "b", "schlep")), ["app"]);
}

/// Linkerd's own test `parent_retries_and_timeouts` (policy-test,
/// outbound_api_grpc.rs): the Service has `retry.linkerd.io/grpc: internal`
/// and `timeout.linkerd.io/response: 10s`, its GRPCRoute only
/// `timeout.linkerd.io/request: 5s`. Upstream asserts the rule's retry is
/// inherited from the Service (`conditions.internal`) while its timeouts
/// are the route's (request 5 s, no response timeout): a gRPC call gets
/// both, and no response-timeout layer. Before, the Service's gRPC
/// annotation was noted and not applied, and the route's timeout alone
/// replaced the Service's retry.
#[test]
fn linkerd_service_grpc_retry_is_inherited_by_its_grpc_route() {
    let svc = "linkerd/parent-retries-grpc.service.yaml";
    let route = "linkerd/parent-retries-grpc.route.yaml";
    let topo = "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: my-svc, protocol: grpc }] }\n  my-svc: {}\n";
    let m = merged(topo, &[svc, route]);
    let c = call(&m.topology, "web", "my-svc");
    assert_eq!(names(c), ["app", "linkerd-timeout", "linkerd"]);
    assert_eq!(
        layer(c, "linkerd-timeout").timeout.unwrap().value,
        Duration::from_secs(5)
    );
    let l = layer(c, "linkerd");
    assert_eq!(l.policy.max_attempts, 2, "limit absent: 1 retry");
    assert_eq!(l.policy.retry_on.0, conditions("500"), "INTERNAL");
    assert_eq!(
        at(&m.topology, l.spans.retry_on),
        (
            format!("{DATA}/{svc}"),
            line_of(svc, "retry.linkerd.io/grpc", 0)
        )
    );
    assert!(
        !m.notes.iter().any(|n| n.contains("retry.linkerd.io/grpc")),
        "{:?}",
        m.notes
    );
    // Without the GRPCRoute Linkerd serves the Service's traffic as HTTP:
    // the gRPC annotation does not apply (said at its line), the response
    // timeout does.
    let m = merged(topo, &[svc]);
    let c = call(&m.topology, "web", "my-svc");
    assert_eq!(names(c), ["app", "linkerd-response-timeout"]);
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("retry.linkerd.io/grpc"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{svc}:{}:5: note: a Service's retry.linkerd.io/grpc applies to the GRPCRoutes attached to it (Linkerd serves its traffic as gRPC only then); none is among the sources, so it is not applied, and its HTTP retry annotations apply to its calls (on gRPC ones they retry timeouts only: the HTTP retry reads no gRPC status)",
            line_of(svc, "retry.linkerd.io/grpc", 0)
        )]
    );
}

/// linkerd2's own `appProtocol` test Services (2.18's policy controller):
/// `appProtocol: linkerd.io/opaque` makes every port opaque TCP, so the
/// retry annotations of the HTTPRoute on it apply to nothing, said at the
/// Service's name; `appProtocol: http` is HTTP/1, whose HTTPRoutes apply.
/// Before, both calls took the route's 3 attempts.
#[test]
fn linkerd_routes_no_retry_on_an_opaque_service() {
    let apps = "linkerd/appprotocol_application.yaml";
    let routes = "linkerd/opaque-routes.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: svc-opaque, path: /a }, { to: svc-http1, path: /a }] }\n  svc-opaque: {}\n  svc-http1: {}\n",
        &[apps, routes],
    );
    let opaque = call(&m.topology, "web", "svc-opaque");
    assert_eq!(names(opaque), ["app"]);
    let http1 = call(&m.topology, "web", "svc-http1");
    assert_eq!(layer(http1, "linkerd").policy.max_attempts, 3);
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("opaque TCP"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{apps}:{}:3: note: Linkerd routes every port of Service `svc-opaque` as opaque TCP (port 8080: appProtocol `linkerd.io/opaque`): no retry or timeout of its annotations, routes or ServiceProfile applies to calls to it, so none is applied (Linkerd reads `appProtocol` so from 2.18; before, it detected the protocol and applied them)",
            line_of(apps, "name: svc-opaque", 0)
        )]
    );
}

/// The booksapp tutorial's profile for a `webapp` Service whose port is
/// `appProtocol: linkerd.io/opaque` (as linkerd2's own `svc-opaque`): the
/// destination controller does not read `appProtocol`, but the 2.18 sidecar
/// takes the policy controller's opaque protocol, and its opaque stack
/// builds no profile route, so the retryable route's retries do not apply.
/// Before, the profile's routes were kept on such a Service.
#[test]
fn linkerd_service_profile_routes_do_not_apply_to_an_opaque_app_protocol() {
    let profile = "linkerd/webapp-booksapp-profile.yaml";
    let apps =
        std::fs::read_to_string(format!("{DATA}/linkerd/appprotocol_application.yaml")).unwrap();
    let opaque = apps
        .split("\n---\n")
        .find(|d| d.contains("kind: Service\n") && d.contains("name: svc-opaque"))
        .expect("linkerd2's svc-opaque Service")
        .replace("name: svc-opaque", "name: webapp\n  namespace: booksapp");
    let svc = temp_file("webapp-opaque-service.yaml", &opaque);
    let topo = temp_file(
        "webapp-opaque-topology.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: webapp, method: POST, path: /authors/7/delete }] }\n  webapp: {}\n",
    );
    let m = topology::load_with_sources(
        Some(&topo),
        &[svc, PathBuf::from(format!("{DATA}/{profile}"))],
        Options::default(),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(call(&m.topology, "web", "webapp")), ["app"]);
    assert!(
        m.notes.iter().any(|n| n.contains(
            "Service `webapp` as opaque TCP (port 8080: appProtocol `linkerd.io/opaque`)"
        )),
        "{:#?}",
        m.notes
    );
}

/// `config.linkerd.io/opaque-ports` on the Service (the proxy injector's
/// own test Service): its one port is opaque in every Linkerd version, and
/// the route's retries do not apply.
#[test]
fn linkerd_opaque_ports_annotation_turns_off_route_retries() {
    let svc = "linkerd/service-with-opaque-ports.yaml";
    let routes = "linkerd/opaque-routes.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: svc.kube-public, path: /a }] }\n  svc.kube-public: {}\n",
        &[svc, routes],
    );
    let c = call(&m.topology, "web", "svc.kube-public");
    assert_eq!(names(c), ["app"]);
    assert!(
        m.notes.iter().any(|n| n.contains(
            "Service `svc` as opaque TCP (port 8080: config.linkerd.io/opaque-ports: \"8080\")"
        ) && !n.contains("2.18")),
        "{:?}",
        m.notes
    );
}

/// The proxy injector's Service with one stated change: a second port,
/// 9090, which no annotation or `appProtocol` makes opaque (Linkerd
/// detects HTTP there). A call names no port, so it is read as to 9090 and
/// keeps the route's retries; the note names port 8080, whose calls would
/// take none. Before, the opaque port went unsaid.
#[test]
fn linkerd_service_with_http_and_opaque_ports_names_the_opaque_one() {
    let text =
        std::fs::read_to_string(format!("{DATA}/linkerd/service-with-opaque-ports.yaml")).unwrap();
    let two = format!("{text}  - name: admin\n    port: 9090\n    targetPort: 9090\n");
    let svc = temp_file("service-with-opaque-and-http-ports.yaml", &two);
    let topo = temp_file(
        "svc-two-ports-topology.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: svc.kube-public, path: /a }] }\n  svc.kube-public: {}\n",
    );
    let m = topology::load_with_sources(
        Some(&topo),
        &[
            svc.clone(),
            PathBuf::from(format!("{DATA}/linkerd/opaque-routes.yaml")),
        ],
        Options::default(),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let c = call(&m.topology, "web", "svc.kube-public");
    assert_eq!(layer(c, "linkerd").policy.max_attempts, 3);
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("opaque TCP"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{}:5:3: note: Linkerd routes some ports of Service `svc` as opaque TCP (port 8080: config.linkerd.io/opaque-ports: \"8080\"): calls to them take no retry or timeout of its annotations, routes or ServiceProfile; a topology call names no port, so calls to `svc` are read as to its HTTP port 9090, which take them",
            svc.display()
        )]
    );
}

/// The Service of `parent_retries_and_timeouts` with `appProtocol: http` on
/// its ports: Linkerd 2.18 serves it as HTTP/1 only and sends no GRPCRoute,
/// so the Service's `retry.linkerd.io/grpc` is not inherited (said at its
/// line); the route's own request timeout is kept.
#[test]
fn linkerd_http1_service_takes_no_grpc_retry() {
    let svc = "linkerd/parent-retries-grpc.http1.service.yaml";
    let route = "linkerd/parent-retries-grpc.route.yaml";
    let topo = "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: my-svc, protocol: grpc }] }\n  my-svc: {}\n";
    let m = merged(topo, &[svc, route]);
    let c = call(&m.topology, "web", "my-svc");
    assert_eq!(names(c), ["app", "linkerd-timeout"]);
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("retry.linkerd.io/grpc"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{svc}:{}:5: note: every HTTP port of this Service is `appProtocol: http`, which Linkerd (2.18 and later) serves as HTTP/1 only, with no GRPCRoute: its retry.linkerd.io/grpc is not applied, and its HTTP retry annotations apply to its calls (a GRPCRoute's own annotations are kept as written: gRPC cannot run over HTTP/1 at all)",
            line_of(svc, "retry.linkerd.io/grpc", 0)
        )]
    );
}

/// The booksapp tutorial's generated profile (one route made retryable, as
/// the tutorial does for authors): `pathRegex` is matched, anchored, so
/// `POST /authors` takes its own route (not retryable) and only `POST
/// /authors/7/delete` the retryable one, cited at its line. Before, any POST
/// took the first retryable route.
#[test]
fn linkerd_service_profile_path_regex_is_evaluated() {
    let f = "linkerd/webapp-booksapp-profile.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [a, b] }\n  a: { calls: [{ to: webapp, method: POST, path: /authors }] }\n  b: { calls: [{ to: webapp, method: POST, path: /authors/7/delete }] }\n  webapp: {}\n",
        &[f],
    );
    assert_eq!(names(call(&m.topology, "a", "webapp")), ["app"]);
    let l = layer(call(&m.topology, "b", "webapp"), "linkerd");
    assert_eq!(
        at(&m.topology, l.spans.policy),
        (format!("{DATA}/{f}"), line_of(f, "isRetryable", 0))
    );
}

/// A profile for a Service the topology does not have: one warning, not one
/// per route (the profile has nine).
#[test]
fn one_warning_per_profile() {
    let f = "linkerd/webapp-booksapp-profile.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [books] }\n  books: {}\n",
        &[f],
    );
    let warned: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("not a service"))
        .collect();
    assert_eq!(
        warned,
        [&format!(
            "{DATA}/{f}:5:3: warning: host `webapp.booksapp.svc.cluster.local` is not a service of the topology; its retry policy is not applied"
        )]
    );
}

// ---- gRPC service config ----

fn grpc_merged(file: &str, service: Option<&str>, topology: &str) -> Merged {
    let facts = external::import(
        &[Request {
            path: PathBuf::from(format!("{DATA}/grpc/{file}")),
            service: service.map(str::to_owned),
            caller: None,
            named_at: None,
        }],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let base = topology::load_str(topology, "t.yaml", "t", &Presets::embedded()).unwrap();
    topology::merge::merge(Some(base), &facts, &Presets::embedded()).unwrap()
}

/// grpc-java's `test_retry_service_config.json`: `SimpleService1/Foo1` has
/// its own config (5 attempts) listed after the service's (3 attempts); the
/// method's wins (grpc-go `getMethodConfig`: `/service/method`, then
/// `/service/`). `SimpleService2` has no retry; its `Foo2` does.
#[test]
fn grpc_method_names_win_over_service_names() {
    let m = grpc_merged(
        "test_retry_service_config.json",
        None,
        "version: 1\nentry: c\nservices:\n  c: { calls: [a, b, d, e] }\n  a: { calls: [{ to: simpleservice1, method: POST, path: /SimpleService1/Foo1 }] }\n  b: { calls: [{ to: simpleservice1, method: POST, path: /SimpleService1/Bar }] }\n  d: { calls: [{ to: simpleservice2, method: POST, path: /SimpleService2/Foo2 }] }\n  e: { calls: [{ to: simpleservice2, method: POST }] }\n  simpleservice1: {}\n  simpleservice2: {}\n",
    );
    let t = &m.topology;
    let foo1 = layer(call(t, "a", "simpleservice1"), "grpc");
    assert_eq!(foo1.policy.max_attempts, 5);
    assert_eq!(foo1.policy.retry_on.0, conditions("connect, reset, 503"));
    let bar = layer(call(t, "b", "simpleservice1"), "grpc");
    assert_eq!(bar.policy.max_attempts, 3);
    assert_eq!(
        bar.policy.retry_on.0,
        conditions("connect, reset, 503, 429")
    );
    assert_eq!(
        layer(call(t, "d", "simpleservice2"), "grpc")
            .policy
            .max_attempts,
        5
    );
    assert_eq!(
        names(call(t, "e", "simpleservice2")),
        ["app"],
        "the service's config: no retry"
    );
}

/// `name: [{}]` is the channel default: it applies to methods no other
/// entry names (the same file with SimpleService2's name written `{}`).
#[test]
fn grpc_empty_name_is_the_channel_default() {
    let m = grpc_merged(
        "test_retry_service_config-channel-default.json",
        Some("ledger"),
        "version: 1\nentry: c\nservices:\n  c: { calls: [a, b] }\n  a: { calls: [{ to: ledger, method: POST, path: /Other/Get }] }\n  b: { calls: [{ to: ledger, method: POST, path: /SimpleService1/Get }] }\n  ledger: {}\n",
    );
    assert_eq!(
        names(call(&m.topology, "a", "ledger")),
        ["app"],
        "the default: no retry"
    );
    assert_eq!(
        layer(call(&m.topology, "b", "ledger"), "grpc")
            .policy
            .max_attempts,
        3
    );
}

/// A `.json` service config is strict JSON: a trailing comma or a comment
/// is an error at its line (the same file with one added), as gRPC rejects
/// it; before, the YAML reader took both.
#[test]
fn grpc_json_is_strict() {
    for (file, want) in [
        (
            "test_retry_service_config-trailing-comma.json",
            "tests/data/grpc/test_retry_service_config-trailing-comma.json:18:31: a trailing comma in a gRPC service config",
        ),
        (
            "test_retry_service_config-comment.json",
            "tests/data/grpc/test_retry_service_config-comment.json:54:3: a comment in a gRPC service config: key must be a string at line 54 column 3",
        ),
    ] {
        let e = external::import(
            &[Request::path(format!("{DATA}/grpc/{file}"))],
            Options::default(),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with(want), "{text}");
    }
}

// ---- Kuma ----

/// Kuma's e2e `meshretry/outbound` input, whose golden Envoy config has
/// `numRetries: 2`, `retryBackOff: { baseInterval: 3s, maxInterval: 240s }`,
/// `retryOn: 5xx` on the route to test-server.
#[test]
fn kuma_mesh_retry_to_a_mesh_service() {
    let f = "kuma/meshretry-outbound.input.yaml";
    let m = merged(
        "version: 1\nentry: demo-client\nservices:\n  demo-client: { calls: [test-server] }\n  test-server: {}\n",
        &[f],
    );
    let l = layer(call(&m.topology, "demo-client", "test-server"), "kuma");
    assert_eq!(l.policy.max_attempts, 3, "numRetries counts retries");
    assert_eq!(l.policy.backoff.base, Duration::from_secs(3));
    assert_eq!(l.policy.backoff.cap, Some(Duration::from_secs(240)));
    assert_eq!(
        l.policy.retry_on.0,
        conditions("5xx, timeout, reset, connect")
    );
    assert!(!l.policy.honor_retry_after);
    assert_eq!(
        at(&m.topology, l.spans.max_attempts),
        (format!("{DATA}/{f}"), line_of(f, "numRetries", 0))
    );
}

/// Kuma's e2e `meshretry/outbound-mix`: the MeshService entry (6 retries,
/// 5xx) wins over the Mesh one (3, Retriable4xx) for test-server, as the
/// golden config says; every other destination gets the Mesh entry.
#[test]
fn kuma_mesh_service_entry_wins_over_the_mesh_entry() {
    let f = "kuma/meshretry-outbound-mix.input.yaml";
    let m = merged(
        "version: 1\nentry: demo-client\nservices:\n  demo-client: { calls: [test-server, other] }\n  test-server: {}\n  other: {}\n",
        &[f],
    );
    let t = &m.topology;
    let l = layer(call(t, "demo-client", "test-server"), "kuma");
    assert_eq!(l.policy.max_attempts, 7);
    assert_eq!(
        l.policy.retry_on.0,
        conditions("5xx, timeout, reset, connect")
    );
    assert_eq!(l.policy.backoff.base, Duration::from_millis(25));
    assert_eq!(l.policy.backoff.cap, Some(Duration::from_millis(250)));
    let o = layer(call(t, "demo-client", "other"), "kuma");
    assert_eq!(o.policy.max_attempts, 4);
    assert_eq!(o.policy.retry_on.0, conditions("409"));
    assert_eq!(
        at(t, o.spans.retry_on),
        (format!("{DATA}/{f}"), line_of(f, "retryOn:", 1))
    );
}

/// Kuma's inspect-API test input `multiple_outbound_polices` has a
/// MeshCircuitBreaker on test-server-1 with `connectionLimits.maxRetries:
/// 2` (Envoy's circuit breaker `max_retries`: retries in flight). Read with
/// the e2e `meshretry/outbound-mix` policies, whose Mesh entry (3 retries,
/// 409) is the one test-server-1 gets: the breaker bounds them as a
/// concurrency budget, located at its key in its own file; `other` has no
/// breaker. Alone, the breaker bounds nothing (no MeshRetry retries the
/// calls), and a note says so. Before, a MeshCircuitBreaker was an error.
#[test]
fn kuma_mesh_circuit_breaker_max_retries_bounds_the_retries_in_flight() {
    let cb = "kuma/multiple_outbound_polices.input.yaml";
    let topo = "version: 1\nentry: demo-client\nservices:\n  demo-client: { calls: [test-server-1, other] }\n  test-server-1: {}\n  other: {}\n";
    let m = merged(topo, &["kuma/meshretry-outbound-mix.input.yaml", cb]);
    let t = &m.topology;
    let l = layer(call(t, "demo-client", "test-server-1"), "kuma");
    assert_eq!(l.policy.max_attempts, 4, "the Mesh entry's numRetries: 3");
    assert_eq!(l.policy.retry_on.0, conditions("409"));
    assert_eq!(l.policy.budget, Some(BudgetSpec::Concurrency { max: 2 }));
    assert_eq!(
        at(t, l.spans.budget),
        (format!("{DATA}/{cb}"), line_of(cb, "maxRetries: 2", 0))
    );
    let o = layer(call(t, "demo-client", "other"), "kuma");
    assert_eq!(o.policy.max_attempts, 4);
    assert_eq!(o.policy.budget, None);
    // Its universal Mesh, Dataplane and MeshService documents carry no
    // retry settings, and are named so (before: not understood).
    let facts =
        external::import(&[Request::path(format!("{DATA}/{cb}"))], Options::default()).unwrap();
    assert_eq!(
        facts.summary(),
        "sources: 5 document(s) in 1 file(s): 1 × Kuma MeshTimeout, 1 × Kuma MeshCircuitBreaker; 3 carry no retry settings (--verbose lists them)"
    );
    let m = merged(topo, &[cb]);
    assert_eq!(
        names(call(&m.topology, "demo-client", "test-server-1")),
        ["app"]
    );
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("MeshCircuitBreaker"))
        .collect();
    assert_eq!(
        said,
        [&format!(
            "{DATA}/{cb}:{}:11: note: MeshCircuitBreaker maxRetries 2 bounds the retries in flight to `test-server-1`, but no MeshRetry among the sources retries those calls: it bounds nothing here",
            line_of(cb, "maxRetries: 2", 0)
        )]
    );
}

/// Kuma's e2e `meshtimeout/outbound`: `http.requestTimeout: 52s` is the
/// route timeout (golden: `"timeout": "52s"`), the request with its retries.
#[test]
fn kuma_mesh_timeout_request_timeout() {
    let f = "kuma/meshtimeout-outbound.input.yaml";
    let m = merged(
        "version: 1\nentry: demo-client\nservices:\n  demo-client: { calls: [test-server] }\n  test-server: {}\n",
        &[f],
    );
    let c = call(&m.topology, "demo-client", "test-server");
    assert_eq!(names(c), ["app", "kuma-timeout"]);
    let l = layer(c, "kuma-timeout");
    assert_eq!(l.timeout.unwrap().value, Duration::from_secs(52));
    assert_eq!(l.policy.max_attempts, 1);
}

/// Kuma's default MeshRetry (`mesh-retry-all-default`, as Kuma's docs show
/// it and `pkg/defaults/mesh/meshretry.go` creates it) has an `http` and a
/// `grpc` section: Kuma's configurer takes the section of the call's
/// protocol (`GetRouteRetryConfig`), so an HTTP call gets the `http` one
/// with Kuma's HTTP `retry_on` default, a gRPC call the `grpc` one with
/// Kuma's gRPC default (`cancelled,connect-failure,gateway-error,
/// refused-stream,reset,resource-exhausted,unavailable`), each located at
/// its own section's `numRetries`. `tcp` is noted. Before, `grpc` was
/// noted and the `http` section was applied to gRPC calls too.
#[test]
fn kuma_mesh_retry_takes_the_section_of_the_calls_protocol() {
    let f = "kuma/mesh-retry-all-default.yaml";
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web:\n    calls:\n    - a\n    - { to: b, protocol: grpc }\n  a: {}\n  b: {}\n",
        &[f],
    );
    let t = &m.topology;
    let http = layer(call(t, "web", "a"), "kuma");
    let grpc = layer(call(t, "web", "b"), "kuma");
    for l in [http, grpc] {
        assert_eq!(l.policy.max_attempts, 6, "numRetries: 5 counts retries");
        assert_eq!(l.timeout.unwrap().value, Duration::from_secs(16));
        assert_eq!(l.policy.backoff.base, Duration::from_millis(25));
        assert_eq!(l.policy.backoff.cap, Some(Duration::from_millis(250)));
    }
    assert_eq!(
        http.policy.retry_on.0,
        conditions("502, 503, 504, timeout, connect")
    );
    assert_eq!(
        grpc.policy.retry_on.0,
        conditions("reset, connect, 502, 503, 504, timeout, 429")
    );
    assert_eq!(
        at(t, http.spans.max_attempts),
        (format!("{DATA}/{f}"), line_of(f, "numRetries: 5", 0))
    );
    assert_eq!(
        at(t, grpc.spans.max_attempts),
        (format!("{DATA}/{f}"), line_of(f, "numRetries: 5", 1))
    );
    let tcp: Vec<&String> = m.notes.iter().filter(|n| n.contains("`tcp`")).collect();
    assert_eq!(
        tcp,
        [&format!(
            "{DATA}/{f}:{}:9: note: MeshRetry `tcp` applies to TCP traffic (connection attempts); calls in a topology are HTTP or gRPC, so it is not applied",
            line_of(f, "tcp:", 0)
        )]
    );
    assert!(
        !m.notes.iter().any(|n| n.contains("`grpc`")),
        "{:?}",
        m.notes
    );
}

/// Kuma's docs example "gRPC frontend to backend on DeadlineExceeded": a
/// `grpc` section alone. A gRPC call to backend retries 5 times on
/// DEADLINE_EXCEEDED (read as a timeout, as the gRPC service config reads
/// it) with its back-off; an HTTP call to backend gets no retry policy
/// from it (no `http` section: Kuma configures none).
#[test]
fn kuma_grpc_section_alone_retries_grpc_calls_only() {
    let f = "kuma/meshretry-grpc-docs.yaml";
    let m = merged(
        "version: 1\nentry: frontend\nservices:\n  frontend:\n    calls:\n    - { to: backend, path: /a }\n    - { to: backend, path: /b, protocol: grpc }\n  backend: {}\n",
        &[f],
    );
    let t = &m.topology;
    let calls = &t.services[t.id_of("frontend").unwrap()].calls;
    assert_eq!(names(&calls[0]), ["app"], "the HTTP call");
    let l = layer(&calls[1], "kuma");
    assert_eq!(l.policy.max_attempts, 6);
    assert_eq!(l.policy.retry_on.0, conditions("timeout"));
    assert_eq!(l.policy.backoff.base, Duration::from_secs(5));
    assert_eq!(l.policy.backoff.cap, Some(Duration::from_secs(60)));
    assert_eq!(l.timeout, None);
    assert_eq!(
        at(t, l.spans.retry_on),
        (format!("{DATA}/{f}"), line_of(f, "retryOn:", 0))
    );
}

/// Kuma's docs example with its `retryOn` cut to `Canceled` alone: Kuma
/// writes it to Envoy as `canceled` (`GrpcRetryOnEnumToEnvoyValue`), which
/// Envoy ignores, so the policy retries nothing. The gRPC call gets no
/// retries (warned at the condition), and the perTryTimeout still bounds
/// its one attempt.
#[test]
fn kuma_grpc_retry_on_canceled_alone_retries_nothing() {
    let docs = std::fs::read_to_string(format!("{DATA}/kuma/meshretry-grpc-docs.yaml")).unwrap();
    let cut = docs
        .replace("- \"DeadlineExceeded\"", "- \"Canceled\"")
        .replace(
            "          numRetries: 5\n",
            "          numRetries: 5\n          perTryTimeout: 2s\n",
        );
    assert_ne!(cut, docs);
    let policy = temp_file("meshretry-grpc-canceled.yaml", &cut);
    let topo = temp_file(
        "meshretry-grpc-canceled-topology.yaml",
        "version: 1\nentry: frontend\nservices:\n  frontend:\n    calls:\n    - { to: backend, protocol: grpc }\n  backend: {}\n",
    );
    let m = topology::load_with_sources(
        Some(&topo),
        std::slice::from_ref(&policy),
        Options::default(),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let t = &m.topology;
    let c = &t.services[t.id_of("frontend").unwrap()].calls[0];
    let l = layer(c, "kuma");
    assert_eq!(l.policy.max_attempts, 1, "{names:?}", names = names(c));
    assert_eq!(l.timeout.unwrap().value, Duration::from_secs(2));
    let line = cut.lines().position(|l| l.contains("Canceled")).unwrap() + 1;
    let warned: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("`Canceled`"))
        .collect();
    assert_eq!(warned.len(), 1, "{:#?}", m.notes);
    assert!(
        warned[0].starts_with(&format!(
            "{}:{line}:15: warning: MeshRetry grpc retryOn `Canceled`",
            policy.display()
        )),
        "{}",
        warned[0]
    );
}

/// Conformance `httproute-matching`: each rule matches a path prefix or a
/// header. A topology's calls carry no headers, so the header matches are
/// not taken — said once per route — and `/v2/x` takes the `/v2` rule.
#[test]
fn header_matches_are_not_taken_and_said_so() {
    let f = "gateway-api/httproute-matching.yaml";
    let facts =
        external::import(&[Request::path(format!("{DATA}/{f}"))], Options::default()).unwrap();
    assert_eq!(facts.routes.len(), 2, "the two path matches");
    let first = facts
        .routes
        .iter()
        .find(|r| r.matcher.matches("GET", Some("/v2/x")))
        .unwrap();
    assert_eq!(first.hosts[0].host, "infra-backend-v2");
    let notes: Vec<String> = facts
        .notes
        .iter()
        .map(|n| format!("{}: {}", facts.show(n.at.unwrap()), n.text))
        .collect();
    assert_eq!(
        notes,
        [format!(
            "{DATA}/{f}:{}:7: HTTPRoute `matching`: a match on headers or query parameters is not taken by the topology's calls (they carry none); they take the route's other matches",
            line_of(f, "- headers:", 0)
        )]
    );
}

/// Conformance `httproute-hostname-intersection`: two routes send to
/// infra-backend-v1, one for `very.specific.com`, one for
/// `*.anotherwildcard.io`. The Host decides, which a call does not say: the
/// precise hostname's route is read first (most characters of a
/// non-wildcard hostname), and a note says so.
#[test]
fn routes_told_apart_by_hostnames_are_said_so() {
    let f = "gateway-api/httproute-hostname-intersection.yaml";
    let facts =
        external::import(&[Request::path(format!("{DATA}/{f}"))], Options::default()).unwrap();
    let notes: Vec<String> = facts
        .notes
        .iter()
        .map(|n| format!("{}: {}", facts.show(n.at.unwrap()), n.text))
        .collect();
    let say = |line: u32, a: &str, b: &str, backend: &str| {
        format!(
            "{DATA}/{f}:{line}:7: routes `gateway-conformance-infra/{a}` and `gateway-conformance-infra/{b}` both send to `{backend}` and differ by hostnames; the request's Host decides which applies, so calls to it are read with the more specific hostname's rules first (Gateway API precedence)"
        )
    };
    assert_eq!(
        notes,
        [
            say(
                65,
                "specific-host-matches-listener-specific-host",
                "wildcard-host-matches-listener-wildcard-host",
                "infra-backend-v1"
            ),
            say(
                // `specific.but.wrong.com` has the most characters.
                151,
                "no-intersecting-hosts",
                "httproute-hostname-intersection-all",
                "infra-backend-v2"
            ),
        ]
    );
    let first = facts
        .routes
        .iter()
        .find(|r| r.hosts.iter().any(|h| h.host == "infra-backend-v1"))
        .unwrap();
    assert_eq!(
        first.hosts[0].at.pos.line, 65,
        "the precise hostname's route first"
    );
}

/// Kuma's pod converter tags each inbound with the protocol of the Service
/// port in front of it (`ProtocolTagFor`); `kuma_ports` reads the same
/// Services to the same tags as Kuma's own goldens: `appProtocol: http`,
/// nothing (`tcp`), an `appProtocol` Kuma does not know (`MONGO`: `tcp`),
/// and an annotation it does not know either (`mongo`, kept).
#[test]
fn kuma_port_protocols_match_kumas_pod_converter_goldens() {
    use retrylint::input::yaml::parse;
    let docs = |file: &str| -> Vec<retrylint::input::Node> {
        let text = std::fs::read_to_string(format!("{DATA}/kuma/pod-converter/{file}")).unwrap();
        text.split("\n---\n")
            .map(|d| d.trim_start_matches("---\n"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| parse(d).unwrap())
            .collect()
    };
    let get = |n: &retrylint::input::Node, keys: &[&str]| -> Option<String> {
        let mut n = n.clone();
        for k in keys {
            n = retrylint::external::node::get(&n, k)?.clone();
        }
        match n.value {
            retrylint::input::Value::Int(i) => Some(i.to_string()),
            _ => retrylint::external::node::str_at(&n).map(str::to_owned),
        }
    };
    for (case, want) in [("01", 4), ("12", 3)] {
        let dataplane = &docs(&format!("{case}.dataplane.yaml"))[0];
        let inbound =
            retrylint::external::node::path(dataplane, &["spec", "networking", "inbound"]).unwrap();
        let mut compared = 0;
        for svc in docs(&format!("{case}.services-for-pod.yaml")) {
            let meta = retrylint::external::node::get(&svc, "metadata").unwrap();
            let ports = retrylint::external::node::path(&svc, &["spec", "ports"]);
            let got = external::kuma_ports::ports(meta, ports);
            for (p, port) in got
                .iter()
                .zip(retrylint::external::node::items(ports.unwrap()))
            {
                let target = get(port, &["targetPort"]).unwrap();
                let Some(i) = retrylint::external::node::items(inbound).iter().find(|i| {
                    get(i, &["port"]).as_ref() == Some(&target)
                        || get(i, &["name"]).as_ref() == Some(&target)
                }) else {
                    continue;
                };
                assert_eq!(
                    p.protocol.tag(),
                    get(i, &["protocol"]).unwrap(),
                    "{case}: port {} ({})",
                    p.port,
                    p.why
                );
                compared += 1;
            }
        }
        assert_eq!(compared, want, "{case}: inbounds compared");
    }
}

/// Kuma's counter demo (its Services `appProtocol: http`) under the
/// default MeshRetry: Kuma tags `kv` `http`, so its `http` section applies
/// to demo-app's call — even one the topology marks gRPC. With the
/// `appProtocol` cut, Kuma's default is `tcp`: no MeshRetry section
/// applies, said at `kv`; with `http2`, MeshRetry configures no retry.
/// Before, the `http` section was applied whatever the Service said.
#[test]
fn kuma_takes_the_section_of_the_protocol_it_gives_the_service() {
    let demo =
        std::fs::read_to_string(format!("{DATA}/kuma/counter-demo-000-with-kuma.yaml")).unwrap();
    let retry = PathBuf::from(format!("{DATA}/kuma/mesh-retry-all-default.yaml"));
    let topo = temp_file(
        "kuma-counter-topology.yaml",
        "version: 1\nentry: demo-app\nservices:\n  demo-app:\n    calls:\n    - { to: kv, protocol: grpc }\n  kv: {}\n",
    );
    let load = |name: &str, text: &str| {
        let demo = temp_file(name, text);
        topology::load_with_sources(
            Some(&topo),
            &[demo.clone(), retry.clone()],
            Options::default(),
            &Presets::embedded(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    // kv's Service: its ServiceAccount comes first, its Deployment after.
    let kv_line = demo
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "  name: kv")
        .nth(1)
        .expect("kv's Service")
        .0
        + 1;
    let m = load("counter-demo.yaml", &demo);
    let l = layer(call(&m.topology, "demo-app", "kv"), "kuma");
    assert_eq!(l.policy.max_attempts, 6);
    assert_eq!(
        l.policy.retry_on.0,
        conditions("502, 503, 504, timeout, connect"),
        "the http section's conditions"
    );
    assert!(
        !m.notes.iter().any(|n| n.contains("Kuma tags")),
        "{:#?}",
        m.notes
    );

    // The fourth `appProtocol: http` is kv's (after demo-app,
    // demo-app-v1 and demo-app-v2).
    let nth = |text: &str, n: usize, to: &str| {
        let at = text
            .match_indices("  - appProtocol: http\n    ")
            .nth(n)
            .unwrap()
            .0;
        format!(
            "{}{}{}",
            &text[..at],
            to,
            &text[at + "  - appProtocol: http\n    ".len()..]
        )
    };
    let cut = nth(&demo, 3, "  - ");
    assert!(cut.contains("  - port: 5050"));
    let m = load("counter-demo-tcp.yaml", &cut);
    let c = call(&m.topology, "demo-app", "kv");
    assert_eq!(names(c), ["app"], "no Kuma layer on a TCP destination");
    let said: Vec<&String> = m.notes.iter().filter(|n| n.contains("Kuma tags")).collect();
    assert_eq!(said.len(), 1, "{:#?}", m.notes);
    assert!(
        said[0].starts_with(&format!(
            "{}:{kv_line}:3: note: Kuma tags `kv` `tcp` (port 5050 `tcp`: no appProtocol and no 5050.service.kuma.io/protocol: Kuma's default)",
            temp_file("counter-demo-tcp.yaml", &cut).display()
        )),
        "{}",
        said[0]
    );

    let grpc = nth(&demo, 3, "  - appProtocol: grpc\n    ");
    let m = load("counter-demo-grpc.yaml", &grpc);
    assert_eq!(
        layer(call(&m.topology, "demo-app", "kv"), "kuma")
            .policy
            .retry_on
            .0,
        conditions("reset, connect, 502, 503, 504, timeout, 429"),
        "the grpc section's conditions"
    );

    let h2 = nth(&demo, 3, "  - appProtocol: http2\n    ");
    let m = load("counter-demo-http2.yaml", &h2);
    assert_eq!(names(call(&m.topology, "demo-app", "kv")), ["app"]);
    assert!(
        m.notes.iter().any(|n| n.contains("Kuma tags `kv` `http2`")
            && n.contains("`http` and `grpc` destinations only")),
        "{:#?}",
        m.notes
    );
}
