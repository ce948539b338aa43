//! `--from` on upstream's own files (tests/data/README.md says where each
//! comes from): Envoy as it is exported (proto3 JSON camelCase, top-level
//! lists, bare Listeners, xDS `resources:` files, routes-only dumps), Istio's
//! binding rules (`gateways`, `spec.hosts`, one VirtualService per host,
//! DestinationRule limits), Kubernetes `List`s, and the accounting that
//! leaves no document unmentioned.

use crate::common::run::{retrylint, retrylint_with_stdin};
use std::path::{Path, PathBuf};
use std::time::Duration;

use retrylint::external::{self, Account, Options, Request};
use retrylint::policy::{BudgetSpec, Condition};
use retrylint::topology::{self, Call, Layer, Merged, Presets, Topology};

const DATA: &str = "tests/data";

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-upstream");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn merged(topology: &str, from: &[&str]) -> Merged {
    let topo = temp_file(&format!("topo-{}.yaml", hash(topology)), topology);
    let from: Vec<PathBuf> = from.iter().map(PathBuf::from).collect();
    topology::load_with_sources(Some(&topo), &from, Options::default(), &Presets::embedded())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    })
}

fn calls_from<'a>(t: &'a Topology, from: &str) -> &'a [Call] {
    &t.services[t.id_of(from).unwrap()].calls
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

/// The 1-based line of the first line of `file` containing `needle`
/// after line `after`.
fn line_of(file: &str, needle: &str, after: u32) -> u32 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .enumerate()
        .skip(after as usize)
        .find(|(_, l)| l.contains(needle))
        .map(|(i, _)| i as u32 + 1)
        .unwrap_or_else(|| panic!("{needle} not in {file}"))
}

fn located(t: &Topology, pos: topology::Pos) -> (String, u32) {
    let (file, p) = t.locate(pos);
    (file.to_owned(), p.line)
}

fn accounts(files: &[&str]) -> Vec<Account> {
    let requests: Vec<Request> = files.iter().map(Request::path).collect();
    let facts = external::import(&requests, Options::default()).unwrap_or_else(|e| panic!("{e}"));
    facts.accounts.into_iter().map(|a| a.account).collect()
}

// Envoy Gateway's translator output (internal/xds/translator/testdata/out/
// xds-ir): proto3 JSON field names in YAML, each file a top-level list of
// RouteConfigurations or Clusters. The route's retryPolicy counts retries
// (numRetries 5 → 6 attempts), its cluster — in the other file — bounds
// retries in flight with `maxRetries: 1024`.
#[test]
fn envoy_gateway_camel_case_lists_join_routes_and_clusters_across_files() {
    let routes = format!("{DATA}/envoy/eg-retry-partial-invalid.routes.yaml");
    let clusters = format!("{DATA}/envoy/eg-retry-partial-invalid.clusters.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [first-route-dest] }\n  first-route-dest: {}\n",
        &[&routes, &clusters],
    );
    let t = &m.topology;
    let c = &calls_from(t, "web")[0];
    assert_eq!(names(c), ["app", "envoy-route", "envoy"]);
    let envoy = layer(c, "envoy");
    assert_eq!(envoy.policy.max_attempts, 6);
    assert_eq!(envoy.timeout.unwrap().value, Duration::from_millis(250));
    assert_eq!(envoy.policy.backoff.base, Duration::from_millis(100));
    assert_eq!(envoy.policy.backoff.cap, Some(Duration::from_secs(10)));
    use Condition::*;
    assert_eq!(
        envoy.policy.retry_on.0,
        vec![Reset, Timeout, Connect, Status(429), Status(503)]
    );
    assert_eq!(
        envoy.policy.budget,
        Some(BudgetSpec::Concurrency { max: 1024 })
    );
    assert_eq!(
        located(t, envoy.pos),
        (routes.clone(), line_of(&routes, "retryPolicy:", 0))
    );
    assert_eq!(
        located(t, envoy.spans.budget.unwrap()),
        (clusters.clone(), line_of(&clusters, "maxRetries: 1024", 0))
    );
    // No route timeout written: Envoy's 15 s.
    assert_eq!(
        layer(c, "envoy-route").timeout.unwrap().value,
        Duration::from_secs(15)
    );
    assert!(
        m.notes.iter().all(|n| !n.contains("warning")),
        "{:?}",
        m.notes
    );
    assert_eq!(
        m.summary,
        "sources: 2 document(s) in 2 file(s): 2 × Envoy configuration"
    );
}

// `istioctl proxy-config routes` testdata (a routes-only config dump): the
// `agent` and `prometheus_stats` routes are the proxy's own, and the
// Gateway API route is `path_separated_prefix: /get` to
// `outbound|8000||httpbin.default.svc.cluster.local`.
#[test]
fn a_routes_only_dump_maps_outbound_clusters_and_matches_path_separated_prefix() {
    let dump = format!("{DATA}/envoy/istioctl-routes-path-separated-prefix.json");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web:\n    calls:\n    - { to: httpbin, path: /get }\n    - { to: httpbin, path: /get/anything }\n    - { to: httpbin, path: /getx }\n  httpbin: {}\n",
        &[&dump],
    );
    let t = &m.topology;
    let calls = calls_from(t, "web");
    for c in &calls[..2] {
        let envoy = layer(c, "envoy");
        assert_eq!(envoy.policy.max_attempts, 3, "{:?}", c.path);
        assert_eq!(
            envoy.policy.retry_on.0,
            vec![Condition::Connect, Condition::Status(503)]
        );
        // `timeout: 0s`: no route timeout.
        assert_eq!(names(c), ["app", "envoy"]);
        assert_eq!(
            located(t, envoy.pos),
            (dump.clone(), line_of(&dump, "\"retry_policy\"", 0))
        );
    }
    // `/getx` is not under the `/get` segment: no route takes it.
    assert_eq!(names(&calls[2]), ["app"]);
    // The internal clusters are not warned about.
    assert!(
        m.notes
            .iter()
            .all(|n| !n.contains("agent") && !n.contains("prometheus_stats")),
        "{:?}",
        m.notes
    );
    assert!(
        m.notes.iter().all(|n| !n.contains("warning")),
        "{:?}",
        m.notes
    );
}

// The same istioctl dump with one stated change: `retriable-status-codes`
// cut from `retry_on`. Envoy matches `retriable_status_codes` only under
// that trigger (RetryStateImpl tests `retry_on_ &
// RETRY_ON_RETRIABLE_STATUS_CODES` before the list), so 503 is not retried,
// and the list is a warning at its key rather than a retry that never runs.
#[test]
fn retriable_status_codes_without_their_trigger_retry_nothing() {
    let dump = format!("{DATA}/envoy/istioctl-routes-path-separated-prefix.json");
    let text = std::fs::read_to_string(&dump).unwrap();
    let cut = text.replace("cancelled,retriable-status-codes\"", "cancelled\"");
    assert_ne!(cut, text, "the stated change applies");
    let changed = temp_file("istioctl-routes-no-status-trigger.json", &cut);
    let changed = changed.to_str().unwrap();
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: httpbin, path: /get }] }\n  httpbin: {}\n",
        &[changed],
    );
    let envoy = layer(&calls_from(&m.topology, "web")[0], "envoy");
    assert_eq!(envoy.policy.max_attempts, 3);
    assert_eq!(envoy.policy.retry_on.0, vec![Condition::Connect]);
    let at = line_of(changed, "\"retriable_status_codes\"", 0);
    assert!(
        m.notes.contains(&format!(
            "{changed}:{at}:13: warning: these status codes are retried only with `retriable-status-codes` in `retry_on`, which this policy does not list: Envoy retries none of them (add the trigger to `retry_on`, or drop the list)"
        )),
        "{:#?}",
        m.notes
    );
}

// Kuma's MeshRetry plugin golden: a bare Listener in camelCase YAML whose
// inline routeConfig retries 5xx and more with rate-limited back-off.
#[test]
fn a_kuma_listener_golden_is_read_in_camel_case() {
    let golden = format!("{DATA}/kuma/meshretry-http.listeners.golden.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [backend] }\n  backend: {}\n",
        &[&golden],
    );
    let t = &m.topology;
    let c = &calls_from(t, "web")[0];
    assert_eq!(names(c), ["app", "envoy"]);
    let envoy = layer(c, "envoy");
    assert_eq!(envoy.policy.max_attempts, 2);
    assert_eq!(envoy.timeout.unwrap().value, Duration::from_secs(2));
    assert_eq!(envoy.policy.backoff.base, Duration::from_secs(3));
    assert_eq!(envoy.policy.backoff.cap, Some(Duration::from_secs(4)));
    assert!(envoy.policy.honor_retry_after);
    use Condition::*;
    assert_eq!(
        envoy.policy.retry_on.0,
        vec![
            Class(5),
            Timeout,
            Reset,
            Connect,
            Status(502),
            Status(503),
            Status(504),
            Status(409),
            Status(429)
        ]
    );
    assert_eq!(
        located(t, envoy.pos),
        (golden.clone(), line_of(&golden, "retryPolicy:", 0))
    );
}

// Kuma's MeshRetry plugin golden for a `grpc` section whose retryOn lists
// all five of Kuma's gRPC conditions: Kuma writes `Canceled` as `canceled`,
// which is not Envoy's `cancelled`, so Envoy drops it (a warning at the
// `retryOn`); on a gRPC call the other four match their statuses
// (DEADLINE_EXCEEDED: timeout; INTERNAL: 500; RESOURCE_EXHAUSTED: 429;
// UNAVAILABLE: connect, reset, 503) and no reset from CANCELLED is among
// them. This is why the kuma reader warns on a MeshRetry `Canceled`.
#[test]
fn kuma_grpc_golden_canceled_is_dropped_by_envoy() {
    let golden = format!("{DATA}/kuma/meshretry-grpc.listeners.golden.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: backend, protocol: grpc }] }\n  backend: {}\n",
        &[&golden],
    );
    let envoy = layer(&calls_from(&m.topology, "web")[0], "envoy");
    assert_eq!(envoy.policy.max_attempts, 12);
    use Condition::*;
    assert_eq!(
        envoy.policy.retry_on.0,
        vec![
            Timeout,
            Status(500),
            Status(429),
            Connect,
            Reset,
            Status(503)
        ]
    );
    let line = line_of(&golden, "retryOn:", 0);
    let said: Vec<&String> = m
        .notes
        .iter()
        .filter(|n| n.contains("`canceled`"))
        .collect();
    assert_eq!(said.len(), 1, "{:#?}", m.notes);
    assert!(
        said[0].starts_with(&format!(
            "{golden}:{line}:26: warning: `canceled` is not an Envoy retry condition, so Envoy ignores it"
        )),
        "{}",
        said[0]
    );
}

// Envoy's examples/dynamic-config-fs: LDS and CDS as xDS `resources:` files
// with `@type`; the listener's route names a cluster the CDS file defines,
// whose endpoint is the DNS name `service1`.
#[test]
fn xds_resource_files_meet_across_lds_and_cds() {
    let lds = format!("{DATA}/envoy/dynamic-config-fs/lds.yaml");
    let cds = format!("{DATA}/envoy/dynamic-config-fs/cds.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [service1] }\n  service1: {}\n",
        &[&lds, &cds],
    );
    let c = &calls_from(&m.topology, "web")[0];
    assert_eq!(names(c), ["app", "envoy-route"]);
    assert_eq!(
        layer(c, "envoy-route").timeout.unwrap().value,
        Duration::from_secs(15)
    );
    assert!(m.notes.is_empty(), "{:?}", m.notes);
}

// Bookinfo's own bookinfo-gateway.yaml binds its VirtualService to the
// ingress gateway only: a mesh call to productpage takes the mesh
// VirtualService of virtual-service-all-v1.yaml, never the gateway's.
#[test]
fn a_gateway_bound_virtual_service_routes_no_mesh_calls() {
    let gw = format!("{DATA}/istio/bookinfo-gateway.yaml");
    let mesh = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let topo = "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: productpage, path: /productpage }] }\n  productpage: {}\n";
    for order in [[&gw, &mesh], [&mesh, &gw]] {
        let m = merged(topo, &[order[0], order[1]]);
        let t = &m.topology;
        let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
        assert_eq!(side.preset.as_deref(), Some("istio-default"));
        assert_eq!(
            located(t, side.pos),
            (mesh.clone(), line_of(&mesh, "host: productpage", 0))
        );
        let gw_line = line_of(&gw, "gateways:", 0);
        assert!(
            m.notes.contains(&format!(
                "{gw}:{gw_line}:3: note: 1 VirtualService(s) bind to gateways only (no `mesh` in `gateways`): they route no calls between services and are not applied"
            )),
            "{:?}",
            m.notes
        );
    }
    assert_eq!(
        accounts(&[&gw]),
        vec![
            Account::NoRetry("networking.istio.io/v1 Gateway bookinfo-gateway".into()),
            Account::NoRetry("an Istio VirtualService bound to gateways only (bookinfo-gateway), not `mesh`: it routes no calls between services".into()),
        ]
    );
}

// Istio's Gateway API conversion golden (pilot/pkg/config/kube/gateway/
// testdata/http.yaml.golden): twelve VirtualServices, all bound to the
// generated gateway. Before, `GET /explicit` to httpbin took another
// VirtualService's catch-all; none of them routes a mesh call.
#[test]
fn istio_gateway_golden_binds_no_mesh_call() {
    let golden = format!("{DATA}/istio/gateway-api-http.yaml.golden.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: httpbin, path: /explicit }] }\n  httpbin: {}\n",
        &[&golden],
    );
    assert_eq!(names(&calls_from(&m.topology, "web")[0]), ["app"]);
    assert_eq!(
        m.summary,
        "sources: 13 document(s) in 1 file(s): nothing read; 13 carry no retry settings (--verbose lists them)"
    );
}

// The same golden with ONE CHANGE, made here: each `gateways:` entry (the
// generated gateway) replaced by `mesh`, so that its twelve VirtualServices
// route mesh calls. Bound by `spec.hosts`, `GET /explicit` to
// retry.domain.example takes that VirtualService's own `/explicit` route
// (attempts 3, backoff 3 ms, 503 and 429), located at its `retries:`; no
// other VirtualService's route — all send to httpbin — is taken by it, and
// a call to httpbin (the destination, no VirtualService's host) takes none of
// the `/explicit` retries. Before, `GET /explicit` took another
// VirtualService's catch-all.
#[test]
fn istio_golden_explicit_takes_its_own_virtual_services_route() {
    let upstream = format!("{DATA}/istio/gateway-api-http.yaml.golden.yaml");
    let text = std::fs::read_to_string(&upstream).unwrap();
    let gateway = "  - istio-system/gateway~istio-autogenerated-k8s-gateway~default\n";
    assert_eq!(text.matches(gateway).count(), 12);
    let changed = temp_file("golden-mesh.yaml", &text.replace(gateway, "  - mesh\n"));
    let changed = changed.to_str().unwrap();
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web:\n    calls:\n    - { to: retry.domain.example, path: /explicit }\n    - { to: httpbin, path: /explicit }\n  retry.domain.example: {}\n  httpbin: {}\n",
        &[changed],
    );
    let t = &m.topology;
    let c = calls_from(t, "web");
    let l = layer(&c[0], "istio-sidecar");
    assert_eq!(l.policy.max_attempts, 4);
    assert_eq!(l.policy.backoff.base, Duration::from_millis(3));
    assert_eq!(
        l.policy.retry_on.0,
        [
            Condition::Connect,
            Condition::Status(503),
            Condition::Status(429)
        ]
    );
    let explicit = line_of(changed, "prefix: /explicit", 0);
    assert_eq!(
        located(t, l.pos),
        (changed.to_owned(), line_of(changed, "retries:", explicit))
    );
    assert!(
        c[1].layers.iter().all(|l| l.policy.max_attempts != 4),
        "{:?}",
        names(&c[1])
    );
}

// Bookinfo's virtual-service-reviews-test-v2.yaml and
// virtual-service-reviews-v3.yaml are one object (`reviews`) written twice:
// applied in order, the second replaces the first.
#[test]
fn two_virtual_services_for_one_host_warn_naming_both() {
    let a = format!("{DATA}/istio/virtual-service-reviews-test-v2.yaml");
    let b = format!("{DATA}/istio/virtual-service-reviews-v3.yaml");
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [reviews] }\n  reviews: {}\n",
        &[&a, &b],
    );
    let t = &m.topology;
    let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
    assert_eq!(
        located(t, side.pos),
        (b.clone(), line_of(&b, "host: reviews", 0))
    );
    let (la, lb) = (line_of(&a, "- reviews", 0), line_of(&b, "- reviews", 0));
    assert!(
        m.notes.contains(&format!(
            "{b}:{lb}:7: warning: VirtualService `reviews` is written twice (also at {a}:{la}:7): applied in this order, the last replaces the first, so this one is applied for `reviews`"
        )),
        "{:?}",
        m.notes
    );
    // Two differently named VirtualServices for one host: the first read
    // is applied, and the warning names both.
    let renamed = std::fs::read_to_string(&b)
        .unwrap()
        .replace("name: reviews", "name: reviews-v3");
    let b2 = temp_file("virtual-service-reviews-v3-renamed.yaml", &renamed);
    let b2 = b2.to_str().unwrap();
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [reviews] }\n  reviews: {}\n",
        &[&a, b2],
    );
    let t = &m.topology;
    let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
    // The first read routes: its second (catch-all) route, subset v1.
    assert_eq!(
        located(t, side.pos),
        (a.clone(), line_of(&a, "host: reviews", 14))
    );
    assert!(
        m.notes.contains(&format!(
            "{b2}:{lb}:7: warning: host `reviews` is bound by two VirtualServices, `reviews` ({a}:{la}:7) and `reviews-v3`: for sidecars Istio applies one (the oldest) and drops the other's routes as a duplicate domain; the first read, `reviews`, is applied"
        )),
        "{:?}",
        m.notes
    );
}

// Istio's tests/testdata/config/destination-rule-all.yaml (host changed to
// ratings.prod, as README says): `connectionPool.http.maxRetries: 4` bounds
// the retries of the Istio API reference's HTTPRetry example route (subset
// v1, which sets no traffic policy of its own, inherits it).
#[test]
fn destination_rule_max_retries_bounds_the_route_retries() {
    let vs = format!("{DATA}/istio/ratings-route-retries.yaml");
    let dr = format!("{DATA}/istio/destination-rule-all-ratings.yaml");
    let topo =
        "version: 1\nentry: web\nservices:\n  web: { calls: [ratings.prod] }\n  ratings.prod: {}\n";
    let m = merged(topo, &[&vs, &dr]);
    let t = &m.topology;
    let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
    assert_eq!(side.policy.max_attempts, 4);
    assert_eq!(side.policy.budget, Some(BudgetSpec::Concurrency { max: 4 }));
    // Without the DestinationRule nothing bounds them (istiod lifts
    // Envoy's max_retries to 2^32-1).
    let m = merged(topo, &[&vs]);
    let side = layer(&calls_from(&m.topology, "web")[0], "istio-sidecar");
    assert_eq!(side.policy.budget, None);
    // A subset's own retryBudget (Istio 1.27+; the shape of istiod's
    // cluster_builder_test.go case) replaces the rule's limit for it.
    let text = std::fs::read_to_string(&dr).unwrap().replace(
        "    - name: v1\n      labels:\n        version: v1\n",
        "    - name: v1\n      labels:\n        version: v1\n      trafficPolicy:\n        retryBudget:\n          percent: 30\n          minRetryConcurrency: 4\n",
    );
    let dr2 = temp_file("destination-rule-subset-budget.yaml", &text);
    let dr2 = dr2.to_str().unwrap();
    let m = merged(topo, &[&vs, dr2]);
    let t = &m.topology;
    let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
    match &side.policy.budget {
        Some(BudgetSpec::Ratio { ratio, .. }) => assert!((ratio - 0.3).abs() < 1e-9, "{ratio}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        located(t, side.spans.budget.unwrap()),
        (dr2.to_owned(), line_of(dr2, "retryBudget:", 0))
    );
}

// kubectl's list output: istio's analyzer testdata (a Gateway, then a
// `kind: List` of two) and its injector testdata (a List of Deployments).
#[test]
fn kubernetes_lists_read_as_their_items() {
    let gateways = format!("{DATA}/kubernetes-list/analyze-list-type.yaml");
    assert_eq!(
        accounts(&[&gateways]),
        vec![
            Account::NoRetry("networking.istio.io/v1 Gateway alpha".into()),
            Account::NoRetry("networking.istio.io/v1 Gateway beta-l".into()),
            Account::NoRetry("networking.istio.io/v1 Gateway alpha-l".into()),
        ]
    );
    let deployments = format!("{DATA}/kubernetes-list/inject-list.yaml");
    let requests = [Request::path(&deployments)];
    let facts = external::import(&requests, Options::default()).unwrap();
    assert_eq!(
        facts.summary(),
        "sources: 2 document(s) in 1 file(s): 2 × Kubernetes workload"
    );
    let at = &facts.accounts[1];
    assert_eq!(
        at.pos.line,
        line_of(&deployments, "- apiVersion: apps/v1", 5)
    );
}

#[test]
fn every_document_is_accounted_for_on_standard_error() {
    let gw = format!("{DATA}/istio/bookinfo-gateway.yaml");
    let mesh = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let topo = temp_file(
        "accounted.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [productpage] }\n  productpage: {}\n",
    );
    let (code, _, err) = retrylint(&[
        "check",
        topo.to_str().unwrap(),
        "--from",
        &gw,
        "--from",
        &mesh,
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        err.contains("sources: 6 document(s) in 2 file(s): 4 × Istio VirtualService; 2 carry no retry settings (--verbose lists them)"),
        "{err}"
    );
    let (_, _, err) = retrylint(&["check", topo.to_str().unwrap(), "--from", &gw, "--verbose"]);
    assert!(
        err.contains(&format!(
            "{gw}:1:1: skipped networking.istio.io/v1 Gateway bookinfo-gateway (no retry settings)"
        )),
        "{err}"
    );
}

#[test]
fn a_mesh_resource_no_reader_takes_is_an_error_at_its_line() {
    // Istio's EnvoyFilter can patch any route's retry policy.
    let filter = temp_file(
        "envoy-filter.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n---\napiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nmetadata:\n  name: retries\nspec: {}\n",
    );
    let (code, _, err) = retrylint(&["check", "--from", filter.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}:5:1: networking.istio.io/v1alpha3 EnvoyFilter retries is a mesh resource: retrylint cannot read it, so its retry settings would be missed",
            filter.display()
        )),
        "{err}"
    );
    // Envoy-looking configuration of an unknown shape.
    let odd = temp_file(
        "odd-envoy.json",
        "{\"dump\": {\"routeConfig\": {\"virtualHosts\": []}}}\n",
    );
    let (code, _, err) = retrylint(&["check", "--from", odd.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Envoy-looking configuration (`routeConfig`) of a shape not known"),
        "{err}"
    );
}

#[test]
fn helm_templates_are_refused_and_stdin_reads_the_rendered_output() {
    let chart = temp_file(
        "service-template.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"reviews.fullname\" . }}\n",
    );
    let (code, _, err) = retrylint(&["check", "--from", chart.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}:4:9: a Helm/Go template, not configuration: render it first",
            chart.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("helm template RELEASE CHART | retrylint check --from -"),
        "{err}"
    );
    // Rendered, on standard input.
    let topo = temp_file(
        "stdin-topo.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [productpage] }\n  productpage: {}\n",
    );
    let rendered =
        std::fs::read_to_string(format!("{DATA}/istio/virtual-service-all-v1.yaml")).unwrap();
    let (code, out, err) = retrylint_with_stdin(
        &["import", topo.to_str().unwrap(), "--from", "-", "-o", "-"],
        &rendered,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("istio-sidecar"), "{out}");
    assert!(
        err.contains("sources: 4 document(s) in 1 file(s): 4 × Istio VirtualService"),
        "{err}"
    );
    assert!(!Path::new("-").exists(), "`-o -` wrote a file named -");
}

#[test]
fn exclude_skips_what_it_names_on_purpose() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-exclude");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("chart/templates")).unwrap();
    std::fs::copy(
        format!("{DATA}/istio/virtual-service-all-v1.yaml"),
        dir.join("vs.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("chart/templates/svc.yaml"),
        "metadata:\n  name: {{ .Values.name }}\n",
    )
    .unwrap();
    let topo = temp_file(
        "exclude-topo.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [productpage] }\n  productpage: {}\n",
    );
    let d = dir.to_str().unwrap();
    let (code, _, err) = retrylint(&["check", topo.to_str().unwrap(), "--from", d]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&[
        "check",
        topo.to_str().unwrap(),
        "--from",
        d,
        "--exclude",
        "templates/*",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        err.contains("sources: 4 document(s) in 1 file(s): 4 × Istio VirtualService"),
        "{err}"
    );
}

// `egctl config envoy-proxy route` as Envoy Gateway's own testdata prints it
// (internal/cmd/egctl/testdata/config/out/out.route.json): the admin dump
// under its namespace and pod, in camelCase. Read, and its route's cluster
// (an Envoy Gateway name, no service of this topology) is named in a
// warning rather than skipped.
#[test]
fn egctl_config_output_is_read() {
    let out = format!("{DATA}/envoy/egctl-config-envoy-proxy-route.json");
    assert_eq!(
        accounts(&[&out]),
        vec![Account::Read(external::Kind::Envoy)]
    );
    let m = merged(
        "version: 1\nentry: web\nservices:\n  web: { calls: [backend] }\n  backend: {}\n",
        &[&out],
    );
    let line = line_of(&out, "\"cluster\"", 0);
    assert_eq!(
        m.notes,
        vec![format!(
            "{out}:{line}:23: warning: host `default-backend-rule-0-match-0-www.example.com` is not a service of the topology; its retry policy is not applied"
        )]
    );
}

// The same DestinationRule under Istio's default policy: a meshed Service
// (its namespace labelled for injection; written here, the rule is
// upstream's) that no VirtualService routes gets the preset with the
// rule's `maxRetries: 4`, located at the rule.
#[test]
fn destination_rule_max_retries_bounds_the_default_policy_of_a_meshed_service() {
    let dr = format!("{DATA}/istio/destination-rule-all-ratings.yaml");
    let k8s = temp_file(
        "meshed-ratings.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: { name: prod, labels: { istio-injection: enabled } }\n---\napiVersion: v1\nkind: Service\nmetadata: { name: ratings, namespace: prod }\n",
    );
    let topo =
        "version: 1\nentry: web\nservices:\n  web: { calls: [ratings.prod] }\n  ratings.prod: {}\n";
    let m = merged(topo, &[k8s.to_str().unwrap(), &dr]);
    let t = &m.topology;
    let side = layer(&calls_from(t, "web")[0], "istio-sidecar");
    assert_eq!(side.preset.as_deref(), Some("istio-default"));
    assert_eq!(side.policy.budget, Some(BudgetSpec::Concurrency { max: 4 }));
    assert_eq!(
        located(t, side.spans.budget.unwrap()),
        (dr.clone(), line_of(&dr, "maxRetries: 4", 0))
    );
}

// Rendered output that carries templates in its block scalars (Istio's
// injector ConfigMap, from istioctl's manifest-generate goldens) is read,
// not refused as a template.
#[test]
fn rendered_manifests_with_templates_in_block_scalars_are_read() {
    let golden = format!("{DATA}/istio/manifest-generate-sidecar-template.golden.yaml");
    assert!(
        std::fs::read_to_string(&golden)
            .unwrap()
            .contains("{{- define \"resources\"")
    );
    let requests = [Request::path(&golden)];
    let facts = external::import(&requests, Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        facts
            .accounts
            .iter()
            .map(|a| &a.account)
            .collect::<Vec<_>>(),
        vec![&Account::NoRetry(
            "v1 ConfigMap istio-sidecar-injector".into()
        )]
    );
}
