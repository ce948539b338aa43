//! Configuration read where it lives (`--from`, `sources:`): exact policies
//! per kind, findings located in the source files, defaults, malformed
//! documents, the same system written three ways.

use crate::common::run::retrylint;
use std::path::{Path, PathBuf};
use std::time::Duration;

use retrylint::external::{self, Options, Request};
use retrylint::policy::{Condition, Jitter};
use retrylint::topology::{self, Call, Layer, Merged, Presets, Topology};

const DATA: &str = "tests/data";

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn merged(topology: Option<&str>, from: &[&str], istio_minor: u32) -> Merged {
    let from: Vec<PathBuf> = from.iter().map(PathBuf::from).collect();
    topology::load_with_sources(
        topology.map(Path::new),
        &from,
        Options::istio(istio_minor),
        &Presets::embedded(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn call<'a>(t: &'a Topology, from: &str, to: &str) -> &'a Call {
    let (f, to) = (t.id_of(from).unwrap(), t.id_of(to).unwrap());
    t.services[f].calls.iter().find(|c| c.to == to).unwrap()
}

fn layer<'a>(c: &'a Call, name: &str) -> &'a Layer {
    c.layers.iter().find(|l| l.name == name).unwrap_or_else(|| {
        panic!(
            "no layer {name}: {:?}",
            c.layers.iter().map(|l| &l.name).collect::<Vec<_>>()
        )
    })
}

/// The 1-based line of the first line of `file` containing `needle`
/// (after line `after`).
fn line_of(file: &str, needle: &str, after: u32) -> u32 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .enumerate()
        .skip(after as usize)
        .find(|(_, l)| l.contains(needle))
        .map(|(i, _)| i as u32 + 1)
        .unwrap_or_else(|| panic!("{needle} not in {file}"))
}

fn conditions(text: &str) -> Vec<Condition> {
    text.split(',').map(|c| c.trim().parse().unwrap()).collect()
}

#[test]
fn istio_retries_count_retries_and_point_into_the_virtual_service() {
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let m = merged(Some(&format!("{DATA}/import/shop-topology.yaml")), &[], 28);
    let t = &m.topology;
    let c = call(t, "checkout", "payments");
    let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "istio-route", "istio-sidecar"]);
    let route = layer(c, "istio-route");
    assert_eq!(route.timeout.unwrap().value, Duration::from_secs(1));
    assert_eq!(route.policy.max_attempts, 1);
    let side = layer(c, "istio-sidecar");
    // attempts: 2 counts retries.
    assert_eq!(side.policy.max_attempts, 3);
    assert_eq!(side.timeout.unwrap().value, Duration::from_millis(300));
    assert_eq!(
        side.policy.retry_on.0,
        conditions("5xx, timeout, reset, connect")
    );
    assert_eq!(side.policy.backoff.base, Duration::from_millis(25));
    assert_eq!(side.policy.backoff.cap, Some(Duration::from_millis(250)));
    assert_eq!(side.policy.backoff.jitter, Jitter::Full);
    assert!(!side.policy.honor_retry_after);
    assert_eq!(side.policy.budget, None);
    // Every value keeps its own file and line.
    let (file, pos) = t.locate(side.spans.max_attempts.unwrap());
    assert_eq!(
        (file, pos.line, pos.column),
        (mesh.as_str(), line_of(&mesh, "attempts: 2", 0), 7)
    );
    let (file, pos) = t.locate(side.timeout.unwrap().pos);
    assert_eq!(
        (file, pos.line),
        (mesh.as_str(), line_of(&mesh, "perTryTimeout: 300ms", 0))
    );
    let (file, pos) = t.locate(route.timeout.unwrap().pos);
    assert_eq!(
        (file, pos.line),
        (mesh.as_str(), line_of(&mesh, "timeout: 1s", 0))
    );
    // The topology's own values keep theirs.
    let (file, pos) = t.locate(c.pos);
    assert_eq!(file, format!("{DATA}/import/shop-topology.yaml"));
    assert_eq!(pos.line, 17);
}

#[test]
fn a_match_sends_each_call_to_its_route() {
    let m = merged(Some(&format!("{DATA}/import/shop-topology.yaml")), &[], 28);
    let t = &m.topology;
    // GET to cart takes the first route (1 retry on connect-failure,reset).
    let side = layer(call(t, "frontend", "cart"), "istio-sidecar");
    assert_eq!(side.policy.max_attempts, 2);
    assert_eq!(
        side.policy.retry_on.0,
        conditions("connect, reset, timeout")
    );
    assert_eq!(side.timeout.unwrap().value, Duration::from_millis(100));
    // A POST to cart would take the second: Istio's default.
    let text = std::fs::read_to_string(format!("{DATA}/import/shop-topology.yaml"))
        .unwrap()
        .replace(
            "sources: [shop-mesh.yaml]",
            &format!(
                "sources: [{}/{DATA}/import/shop-mesh.yaml]",
                env!("CARGO_MANIFEST_DIR")
            ),
        )
        .replace(
            "      - to: cart\n      - { to: payments",
            "      - { to: cart, method: POST }\n      - { to: payments",
        );
    let path = temp_file("post-to-cart.yaml", &text);
    // An absolute path leaves the topology's directory: refused by default.
    let e = topology::load_with_sources(Some(&path), &[], Options::istio(28), &Presets::embedded())
        .unwrap_err();
    assert!(
        e.to_string().contains("leaves the topology's directory"),
        "{e}"
    );
    let outside = Options {
        allow_outside: true,
        ..Options::istio(28)
    };
    let t = topology::load_with_sources(Some(&path), &[], outside, &Presets::embedded())
        .unwrap()
        .topology;
    let side = layer(call(&t, "checkout", "cart"), "istio-sidecar");
    assert_eq!(side.preset.as_deref(), Some("istio-default"));
    assert_eq!(side.policy.retry_on.0, conditions("connect"));
}

#[test]
fn the_upstream_http_retry_example_with_a_fully_qualified_host() {
    let text =
        "version: 1\nentry: reviews\nservices:\n  reviews: { calls: [ratings] }\n  ratings: {}\n";
    let topo = temp_file("ratings.yaml", text);
    let vs = format!("{DATA}/istio/ratings-route-retries.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&vs], 28);
    let side = layer(call(&m.topology, "reviews", "ratings"), "istio-sidecar");
    assert_eq!(side.policy.max_attempts, 4, "attempts: 3 is 3 retries");
    assert_eq!(side.timeout.unwrap().value, Duration::from_secs(2));
    assert_eq!(
        side.policy.retry_on.0,
        conditions("502, 503, 504, timeout, connect")
    );
    let (file, pos) = m.topology.locate(side.pos);
    assert_eq!((file, pos.line, pos.column), (vs.as_str(), 13, 5));
}

/// The RL003 findings of `check --format json` with `args`.
fn rl003(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = retrylint(&all);
    assert!(code == 0 || code == 1, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RL003")
        .cloned()
        .collect()
}

#[test]
fn istio_default_retries_503_on_a_post_before_1_24_only() {
    let vs = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let topo = format!("{DATA}/import/bookinfo.yaml");
    // reviews POSTs to ratings, whose route sets no retries: Istio's default.
    let old = rl003(&[&topo, "--from", &vs, "--istio-version", "1.23"]);
    assert_eq!(old.len(), 1, "{old:?}");
    let old = &old[0];
    // At the destination of the route that sets no retries: `host: ratings`.
    assert_eq!(old["file"], vs.as_str());
    assert_eq!(
        (old["line"].as_u64(), old["column"].as_u64()),
        (Some(37), Some(9))
    );
    assert!(
        old["message"]
            .as_str()
            .unwrap()
            .ends_with("retries it on 503 — the server may already have done the work"),
        "{old}"
    );
    // From 1.24 the default retries connect-failure and refused-stream only:
    // requests the server never processed. The newest is the default.
    for version in [
        &["--istio-version", "1.24"][..],
        &["--istio-version", "1.28"],
        &[],
    ] {
        let mut args = vec![topo.as_str(), "--from", vs.as_str()];
        args.extend_from_slice(version);
        assert_eq!(rl003(&args), Vec::<serde_json::Value>::new(), "{version:?}");
    }
    // Unless the VirtualService adds an unsafe condition: then RL003 is back,
    // at the `retries:` that adds it.
    let text = std::fs::read_to_string(&vs).unwrap().replace(
        "  http:\n  - route:\n    - destination:\n        host: ratings\n        subset: v1\n",
        "  http:\n  - route:\n    - destination:\n        host: ratings\n        subset: v1\n    retries:\n      attempts: 2\n      retryOn: 5xx\n",
    );
    let added = temp_file("ratings-5xx.yaml", &text);
    let added = added.to_str().unwrap();
    let retries = line_of(added, "retryOn: 5xx", 0) - 2;
    assert_eq!(line_of(added, "    retries:", 0), retries);
    for version in ["1.23", "1.24"] {
        let found = rl003(&[&topo, "--from", added, "--istio-version", version]);
        assert_eq!(found.len(), 1, "{version}: {found:?}");
        let f = &found[0];
        assert_eq!(f["file"], added, "{version}");
        assert_eq!(
            (f["line"].as_u64(), f["column"].as_u64()),
            (Some(u64::from(retries)), Some(5)),
            "{version}"
        );
        assert!(
            f["message"].as_str().unwrap().ends_with(
                "retries it on 5xx, timeout, reset — the server may already have done the work"
            ),
            "{f}"
        );
    }
}

#[test]
fn the_default_policy_matches_its_preset() {
    let vs = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let topo = format!("{DATA}/import/bookinfo.yaml");
    let presets = Presets::embedded();
    for (minor, preset) in [(23, "istio-default-1.23"), (24, "istio-default")] {
        let m = merged(Some(&topo), &[&vs], minor);
        let side = layer(call(&m.topology, "reviews", "ratings"), "istio-sidecar");
        let text = format!(
            "version: 1\nservices:\n  a: {{ calls: [{{ to: b, via: [{preset}] }}] }}\n  b: {{}}\n"
        );
        let want = topology::load_str(&text, "p.yaml", "p", &presets).unwrap();
        let want = &want.services[0].calls[0].layers[1];
        assert_eq!(side.policy, want.policy, "{preset}");
        assert_eq!(side.preset.as_deref(), Some(preset));
        assert_eq!(side.timeout, None, "no per-try timeout by default");
    }
}

#[test]
fn a_meshed_service_without_a_virtual_service_gets_the_default() {
    let text = "version: 1\nentry: web\nservices:\n  web: { calls: [frontend] }\n  frontend: {}\n";
    let topo = temp_file("meshed.yaml", text);
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&mesh], 23);
    let side = layer(call(&m.topology, "web", "frontend"), "istio-sidecar");
    assert_eq!(side.preset.as_deref(), Some("istio-default-1.23"));
    let (file, pos) = m.topology.locate(side.pos);
    assert_eq!(
        (file, pos.line),
        (mesh.as_str(), line_of(&mesh, "name: frontend", 0))
    );
}

#[test]
fn grpc_service_config_counts_attempts() {
    let text = "version: 1\nentry: client\nservices:\n  client: { calls: [{ to: echo, timeout: 1s }] }\n  echo: {}\n";
    let topo = temp_file("echo.yaml", text);
    let cfg = format!("{DATA}/grpc/grpc-go-retry-example.json");
    let m = merged(Some(topo.to_str().unwrap()), &[&cfg], 28);
    let g = layer(call(&m.topology, "client", "echo"), "grpc");
    assert_eq!(g.policy.max_attempts, 4, "MaxAttempts counts attempts");
    assert_eq!(g.policy.backoff.base, Duration::from_millis(10));
    assert_eq!(g.policy.backoff.cap, Some(Duration::from_millis(10)));
    assert_eq!(g.policy.backoff.multiplier, 1.0);
    assert_eq!(g.policy.backoff.jitter, Jitter::Proportional { ratio: 0.2 });
    assert_eq!(g.policy.retry_on.0, conditions("connect, reset, 503"));
    assert!(g.policy.honor_retry_after);
    // JSON with tab indentation, located by the YAML reader.
    let (file, pos) = m.topology.locate(g.spans.max_attempts.unwrap());
    assert_eq!((file, pos.line, pos.column), (cfg.as_str(), 6, 6));
}

#[test]
fn grpc_throttling_timeout_and_a_named_target() {
    let cfg = temp_file(
        "throttled.json",
        r#"{
  "methodConfig": [{
    "name": [{ "service": "pkg.Ledger" }],
    "timeout": "2s",
    "retryPolicy": {
      "maxAttempts": 7,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED", 4]
    }
  }],
  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
}
"#,
    );
    let text = format!(
        "version: 1\nentry: api\nsources: [{{ path: {}, service: books }}]\nservices:\n  api: {{ calls: [books] }}\n  books: {{}}\n",
        cfg.file_name().unwrap().to_str().unwrap()
    );
    let topo = temp_file("books.yaml", &text);
    let m = merged(Some(topo.to_str().unwrap()), &[], 28);
    let c = call(&m.topology, "api", "books");
    let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "grpc-deadline", "grpc"]);
    assert_eq!(
        layer(c, "grpc-deadline").timeout.unwrap().value,
        Duration::from_secs(2)
    );
    let g = layer(c, "grpc");
    assert_eq!(g.policy.max_attempts, 5, "clients cap maxAttempts at 5");
    assert_eq!(
        g.policy.retry_on.0,
        conditions("connect, reset, 503, 429, timeout")
    );
    assert_eq!(
        g.policy.budget,
        Some(retrylint::policy::BudgetSpec::GrpcThrottling {
            max_tokens: 10.0,
            token_ratio: 0.1
        })
    );
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("treat maxAttempts 7 as 5")),
        "{:?}",
        m.notes
    );
}

fn traces(file: &str) -> external::Facts {
    external::import(
        &[Request::path(format!("{DATA}/traces/{file}"))],
        Options::default(),
    )
    .unwrap()
}

#[test]
fn three_trace_formats_give_one_call_graph() {
    for file in ["otlp.json", "jaeger.json", "zipkin.json"] {
        let f = traces(file);
        type Row = (String, Option<(Duration, Duration)>, u64);
        let mut services: Vec<Row> = f
            .services
            .iter()
            .map(|s| (s.name.clone(), s.latency, s.server_spans))
            .collect();
        services.sort_by(|a, b| a.0.cmp(&b.0));
        let ms = |n| Some((Duration::from_millis(n), Duration::from_millis(n)));
        assert_eq!(
            services,
            [
                ("cart".to_owned(), ms(5), 20),
                ("checkout".to_owned(), ms(10), 10),
                ("frontend".to_owned(), ms(2), 10),
                ("payments".to_owned(), ms(20), 12),
            ],
            "{file}"
        );
        type Call = (String, String, Option<String>, u64, f64, u32);
        let mut calls: Vec<Call> = f
            .calls
            .iter()
            .map(|c| {
                (
                    c.from.clone(),
                    c.to.clone(),
                    c.method.clone(),
                    c.figures.calls,
                    c.figures.attempts_mean,
                    c.figures.attempts_max,
                )
            })
            .collect();
        calls.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let get = Some("GET".to_owned());
        let post = Some("POST".to_owned());
        assert_eq!(
            calls,
            [
                ("checkout".into(), "cart".into(), get.clone(), 10, 1.0, 1),
                (
                    "checkout".into(),
                    "payments".into(),
                    post.clone(),
                    10,
                    1.2,
                    2
                ),
                ("frontend".into(), "cart".into(), get, 10, 1.0, 1),
                ("frontend".into(), "checkout".into(), post, 10, 1.0, 1),
            ],
            "{file}"
        );
    }
}

/// The figures of `check --format json`: amplification and edges, by name.
fn figures(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = retrylint(&all);
    assert!(code == 0 || code == 1, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sorted = |v: &serde_json::Value, key: &dyn Fn(&serde_json::Value) -> String| {
        let mut items = v.as_array().unwrap().clone();
        items.sort_by_key(|x| key(x));
        serde_json::Value::Array(items)
    };
    (
        sorted(&r["amplification"], &|x| x["service"].to_string()),
        sorted(&r["edges"], &|x| format!("{}{}", x["from"], x["to"])),
    )
}

#[test]
fn the_same_system_written_three_ways_gives_the_same_figures() {
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let hand = figures(&[&format!("{DATA}/import/shop-hand.yaml")]);
    assert_eq!(hand.0.as_array().unwrap().len(), 4);
    assert_eq!(
        figures(&[&format!("{DATA}/import/shop-topology.yaml")]),
        hand
    );
    for file in ["otlp.json", "jaeger.json", "zipkin.json"] {
        let traces = format!("{DATA}/traces/{file}");
        assert_eq!(
            figures(&["--from", &traces, "--from", &mesh]),
            hand,
            "{file}"
        );
    }
}

#[test]
fn sarif_and_github_point_into_the_virtual_service() {
    let topo = format!("{DATA}/import/shop-topology.yaml");
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let attempts = line_of(&mesh, "retries:", line_of(&mesh, "name: payments", 0));
    let (_, out, _) = retrylint(&["check", &topo, "--format", "github"]);
    let want = format!(
        "::error file={mesh},line={attempts},col=5,endColumn=12,title=RL003 non-idempotent-retry::"
    );
    assert!(out.contains(&want), "{out}");
    let (_, out, _) = retrylint(&["check", &topo, "--format", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| {
        let l = &r["locations"][0]["physicalLocation"];
        l["artifactLocation"]["uri"] == mesh.as_str() && l["region"]["startLine"] == attempts
    }));
    // The table draws the VirtualService's own line.
    let (_, out, _) = retrylint(&["check", &topo, "--format", "table"]);
    assert!(out.contains(&format!("--> {mesh}:{attempts}:5")), "{out}");
    assert!(out.contains(&format!("{attempts} |     retries:")), "{out}");
}

#[test]
fn malformed_documents_are_located_errors() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "bad-attempts.yaml",
            "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: r }\nspec:\n  hosts: [r]\n  http:\n  - route: [{ destination: { host: r } }]\n    retries: { attempts: -1 }\n",
            ":8:26: `attempts: -1` is out of range",
        ),
        (
            "bad-retry-on.yaml",
            "---\napiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata: { name: r }\nspec:\n  http:\n  - route: [{ destination: { host: r } }]\n    retries:\n      attempts: 2\n      retryOn: 5xx,sometimes\n",
            ":10:16: unknown retryOn condition `sometimes`",
        ),
        (
            "no-host.yaml",
            "apiVersion: networking.istio.io/v1alpha3\nkind: VirtualService\nmetadata: { name: r }\nspec:\n  http:\n  - route:\n    - destination: { subset: v1 }\n",
            ":7:20: a destination without `host:`",
        ),
        (
            "grpc-missing.json",
            "{\"methodConfig\": [{\"name\": [{\"service\": \"a.B\"}],\n  \"retryPolicy\": {\"maxAttempts\": 3}}]}\n",
            ":2:18: a gRPC retryPolicy needs `initialBackoff`",
        ),
        (
            // Zipkin allows a span without a service or a duration
            // (tests/sources_upstream_traces.rs), not one without its id.
            "zipkin-bad.json",
            "[{\"traceId\": \"1\", \"id\": \"2\", \"localEndpoint\": {\"serviceName\": \"a\"}},\n {\"traceId\": \"1\"}]\n",
            ":2:2: a Zipkin span without `id`",
        ),
        (
            "syntax.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: { name: a }\n---\nspec: [1, 2\n",
            ":5:7: invalid YAML: unclosed bracket",
        ),
    ];
    for (name, text, want) in cases {
        let path = temp_file(name, text);
        let (code, _, err) = retrylint(&["check", "--from", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {err}");
        let want = format!("{}{want}", path.display());
        assert!(err.contains(&want), "{name}: want {want}\n{err}");
    }
}

#[test]
fn unknown_and_ambiguous_hosts_are_warned_by_name() {
    let text = "version: 1\nentry: web\nservices:\n  web: { calls: [ratings.prod, ratings.staging] }\n  ratings.prod: {}\n  ratings.staging: {}\n";
    let topo = temp_file("hosts.yaml", text);
    let vs = temp_file(
        "hosts-vs.yaml",
        "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: r }\nspec:\n  http:\n  - route:\n    - destination: { host: ratings }\n    - destination: { host: reviews }\n",
    );
    let (code, _, err) = retrylint(&[
        "check",
        topo.to_str().unwrap(),
        "--from",
        vs.to_str().unwrap(),
    ]);
    assert!(code <= 1, "{err}");
    let vs = vs.display();
    assert!(
        err.contains(&format!(
            "{vs}:7:22: warning: host `ratings` could be any of `ratings.prod`, `ratings.staging`"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{vs}:8:22: warning: host `reviews` is not a service of the topology"
        )),
        "{err}"
    );
}

#[test]
fn directories_are_walked_and_other_kinds_listed_with_verbose() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-walk");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mesh/.git")).unwrap();
    std::fs::copy(
        format!("{DATA}/import/shop-mesh.yaml"),
        dir.join("mesh/shop.yaml"),
    )
    .unwrap();
    std::fs::copy(
        format!("{DATA}/traces/zipkin.json"),
        dir.join("traces.json"),
    )
    .unwrap();
    std::fs::write(dir.join("mesh/.git/config.yaml"), "not: read\n").unwrap();
    std::fs::write(
        dir.join("mesh/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: settings }\n",
    )
    .unwrap();
    std::fs::write(dir.join("README.md"), "# not read\n").unwrap();
    let (code, _, err) = retrylint(&[
        "check",
        "--from",
        dir.to_str().unwrap(),
        "--verbose",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("read: 1 × Kubernetes Namespace"), "{err}");
    assert!(err.contains("read: 3 × Istio VirtualService"), "{err}");
    assert!(err.contains("read: 1 × Zipkin v2 JSON trace"), "{err}");
    assert!(err.contains("read: 1 × Kubernetes workload"), "{err}");
    let skipped = format!(
        "{}:1:1: skipped v1 ConfigMap settings",
        dir.join("mesh/settings.yaml").display()
    );
    assert!(err.contains(&skipped), "{err}");
    assert!(!err.contains("not: read"));
    assert_eq!(
        figures(&["--from", dir.to_str().unwrap()]),
        figures(&[&format!("{DATA}/import/shop-hand.yaml")])
    );
}

#[test]
fn without_a_call_graph_a_topology_is_needed() {
    let vs = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let (code, _, err) = retrylint(&["check", "--from", &vs]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the sources give no call graph and no topology was given"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["check"]);
    assert_eq!(code, 2);
    assert!(err.contains("give a topology file, or --from"), "{err}");
    let (code, _, err) = retrylint(&["check", "--from", "no/such/dir"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no such file or directory: no/such/dir"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["check", "--from", &vs, "--istio-version", "2.0"]);
    assert_eq!(code, 2);
    assert!(err.contains("only Istio 1.x is known"), "{err}");
}

#[test]
fn a_source_layer_replaces_the_topology_layer_of_the_same_name() {
    let text = std::fs::read_to_string(format!("{DATA}/import/shop-hand.yaml"))
        .unwrap()
        .replacen("name: shop\n", "name: shop\nsources: [shop-mesh.yaml]\n", 1);
    // Beside the topology, wherever the target directory is.
    let mesh = std::fs::read_to_string(format!("{DATA}/import/shop-mesh.yaml")).unwrap();
    temp_file("shop-mesh.yaml", &mesh);
    let path = temp_file("hand-plus-mesh.yaml", &text);
    let (code, _, err) = retrylint(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("note: the `istio-sidecar` layer here replaces the one at"),
        "{err}"
    );
    let hand = figures(&[&format!("{DATA}/import/shop-hand.yaml")]);
    assert_eq!(figures(&[path.to_str().unwrap()]), hand);
}

/// Findings as (code, message): the same wherever they point.
fn messages(args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (_, out, _) = retrylint(&all);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut m: Vec<(String, String)> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    m.sort();
    m
}

#[test]
fn import_then_check_equals_check_from() {
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let vs = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    let shop = format!("{DATA}/import/shop-topology.yaml");
    let bookinfo = format!("{DATA}/import/bookinfo.yaml");
    let otlp = format!("{DATA}/traces/otlp.json");
    let zipkin = format!("{DATA}/traces/zipkin.json");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("traces-otlp", vec!["--from", &otlp, "--from", &mesh]),
        ("traces-zipkin", vec!["--from", &zipkin, "--from", &mesh]),
        ("topology-sources", vec![&shop]),
        (
            "bookinfo-1.23",
            vec![&bookinfo, "--from", &vs, "--istio-version", "1.23"],
        ),
    ];
    for (name, args) in cases {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("imported-{name}.yaml"));
        let mut import = vec!["import", "-o", out.to_str().unwrap()];
        import.extend_from_slice(&args);
        let (code, _, err) = retrylint(&import);
        assert_eq!(code, 0, "{name}: {err}");
        let written = out.to_str().unwrap();
        assert_eq!(figures(&[written]), figures(&args), "{name}");
        assert_eq!(messages(&[written]), messages(&args), "{name}");
    }
    // Each imported value names where it came from.
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-traces-otlp.yaml");
    let text = std::fs::read_to_string(out).unwrap();
    let attempts = line_of(&mesh, "attempts: 2", 0);
    assert!(
        text.contains(&format!("max_attempts: 3  # {mesh}:{attempts}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "timeout: 1s  # {mesh}:{}\n",
            line_of(&mesh, "timeout: 1s", 0)
        )),
        "{text}"
    );
    assert!(
        text.contains("- to: payments  # tests/data/traces/otlp.json:"),
        "{text}"
    );
    assert!(
        text.contains("traces: 1.20 attempts per call seen (at most 2, over 10 calls)"),
        "{text}"
    );
    assert!(
        text.contains("latency: 20ms  # tests/data/traces/otlp.json:"),
        "{text}"
    );
    let (_, text, _) = retrylint(&["import", &bookinfo, "--from", &vs]);
    assert!(
        text.contains(&format!(
            "- name: istio-sidecar  # {vs}:37; the `istio-default` preset\n"
        )),
        "{text}"
    );
}

#[test]
fn import_with_grpc_budget_round_trips() {
    let cfg = temp_file(
        "rt.json",
        r#"{"methodConfig": [{"name": [{"service": "x.Books"}], "timeout": "2s",
  "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.05s", "maxBackoff": "0.4s",
    "backoffMultiplier": 1.5, "retryableStatusCodes": ["UNAVAILABLE"]}}],
 "retryThrottling": {"maxTokens": 20, "tokenRatio": 0.25}}
"#,
    );
    let text = "version: 1\nentry: api\ndeadline: 3s\nservices:\n  api: { latency: { p50: 5ms, p99: 40ms }, capacity: 32, calls: [{ to: books, method: PUT, retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms } } }] }\n  books: {}\nlint: { RL012: allow, max_amplification: 4 }\n";
    let topo = temp_file("rt.yaml", text);
    let args = [topo.to_str().unwrap(), "--from", cfg.to_str().unwrap()];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-rt.yaml");
    let mut import = vec!["import", "-o", out.to_str().unwrap()];
    import.extend_from_slice(&args);
    let (code, _, err) = retrylint(&import);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains("budget: { kind: grpc_throttling, max_tokens: 20, token_ratio: 0.25 }"),
        "{written}"
    );
    assert_eq!(figures(&[out.to_str().unwrap()]), figures(&args));
    assert_eq!(messages(&[out.to_str().unwrap()]), messages(&args));
}

#[test]
fn envoy_route_retry_policy_and_cluster_budget() {
    let text = "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: orders }, { to: orders, method: POST, path: /orders }] }\n  orders: {}\n";
    let topo = temp_file("orders.yaml", text);
    let envoy = format!("{DATA}/envoy/front-proxy.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&envoy], 28);
    let t = &m.topology;
    let web = &t.services[t.id_of("web").unwrap()];
    let get = &web.calls[0];
    let names: Vec<&str> = get.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "envoy-route", "envoy"]);
    assert_eq!(
        layer(get, "envoy-route").timeout.unwrap().value,
        Duration::from_secs(2)
    );
    let e = layer(get, "envoy");
    assert_eq!(e.policy.max_attempts, 4, "num_retries: 3 counts retries");
    assert_eq!(e.timeout.unwrap().value, Duration::from_millis(500));
    // connect-failure,refused-stream,retriable-status-codes: refused-stream
    // is a request never processed, like a refused connection.
    assert_eq!(e.policy.retry_on.0, conditions("connect, 503"));
    assert_eq!(e.policy.backoff.base, Duration::from_millis(100));
    assert_eq!(e.policy.backoff.cap, Some(Duration::from_secs(1)));
    assert!(
        e.policy.honor_retry_after,
        "rate_limited_retry_back_off reads Retry-After"
    );
    assert_eq!(
        e.policy.budget,
        Some(retrylint::policy::BudgetSpec::Ratio {
            ratio: 0.25,
            min_per_second: 0.0,
            window: Duration::from_secs(10)
        })
    );
    let (file, pos) = t.locate(e.spans.max_attempts.unwrap());
    assert_eq!(
        (file, pos.line),
        (envoy.as_str(), line_of(&envoy, "num_retries: 3", 0))
    );
    let (_, pos) = t.locate(e.spans.budget.unwrap());
    assert_eq!(pos.line, line_of(&envoy, "retry_budget:", 0));
    // The POST takes the first route: a 3 s timeout, no retries.
    let post = &web.calls[1];
    let names: Vec<&str> = post.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "envoy-route"]);
    assert_eq!(
        layer(post, "envoy-route").timeout.unwrap().value,
        Duration::from_secs(3)
    );
    // And import writes it back with the same figures.
    let args = [topo.to_str().unwrap(), "--from", envoy.as_str()];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-envoy.yaml");
    let mut import = vec!["import", "-o", out.to_str().unwrap()];
    import.extend_from_slice(&args);
    assert_eq!(retrylint(&import).0, 0);
    assert_eq!(figures(&[out.to_str().unwrap()]), figures(&args));
}

#[test]
fn gateway_api_retry_counts_retries_and_timeouts_nest() {
    let text = "version: 1\nentry: gw\nservices:\n  gw: { calls: [backend-svc, { to: timeout-svc, path: /timeout/x }] }\n  backend-svc: {}\n  timeout-svc: {}\n";
    let topo = temp_file("gateway.yaml", text);
    let retries = format!("{DATA}/gateway-api/http-retries.yaml");
    let timeouts = format!("{DATA}/gateway-api/timeout-example.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&retries, &timeouts], 28);
    let t = &m.topology;
    let g = layer(call(t, "gw", "backend-svc"), "gateway");
    assert_eq!(g.policy.max_attempts, 3, "attempts: 2 counts retries");
    assert_eq!(
        g.policy.retry_on.0,
        conditions("connect, 500, 502, 503, 504")
    );
    assert_eq!(g.policy.backoff.base, Duration::from_millis(100));
    assert_eq!(g.timeout, None);
    let (file, pos) = t.locate(g.spans.max_attempts.unwrap());
    assert_eq!((file, pos.line), (retries.as_str(), 18));
    let c = call(t, "gw", "timeout-svc");
    let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "gateway-route", "gateway"]);
    assert_eq!(
        layer(c, "gateway-route").timeout.unwrap().value,
        Duration::from_secs(10)
    );
    let per_try = layer(c, "gateway");
    assert_eq!(per_try.timeout.unwrap().value, Duration::from_secs(2));
    assert_eq!(per_try.policy.max_attempts, 1);
}

#[test]
fn linkerd_profiles_and_annotations() {
    let text = "version: 1\nentry: web\nservices:\n  web: { calls: [{ to: webapp, path: /api/annotations }, { to: authors, method: PUT }] }\n  webapp: {}\n  authors: {}\n";
    let topo = temp_file("linkerd.yaml", text);
    let sp = format!("{DATA}/linkerd/service-profile.yaml");
    let ann = format!("{DATA}/linkerd/annotated-service.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&sp, &ann], 28);
    let t = &m.topology;
    let l = layer(call(t, "web", "webapp"), "linkerd");
    // Matches the linkerd-budget preset: 3 attempts (our bound), 5xx, no backoff.
    let want = topology::load_str(
        "version: 1\nservices:\n  a: { calls: [{ to: b, via: [linkerd-budget] }] }\n  b: {}\n",
        "p.yaml",
        "p",
        &Presets::embedded(),
    )
    .unwrap();
    assert_eq!(l.policy, want.services[0].calls[0].layers[1].policy);
    let (file, pos) = t.locate(l.spans.budget.unwrap());
    assert_eq!((file, pos.line), (sp.as_str(), 13));
    let a = layer(call(t, "web", "authors"), "linkerd");
    assert_eq!(a.policy.max_attempts, 3, "limit: 2 counts retries");
    assert_eq!(a.policy.retry_on.0, conditions("5xx, timeout"));
    assert_eq!(a.timeout.unwrap().value, Duration::from_millis(300));
    assert_eq!(a.policy.budget, None);
    let (file, pos) = t.locate(a.spans.max_attempts.unwrap());
    assert_eq!((file, pos.line), (ann.as_str(), 10));
}

#[test]
fn imports_are_bounded_in_files_and_bytes() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sources-bound");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..4 {
        std::fs::write(dir.join(format!("{i}.yaml")), "a: 1\n").unwrap();
    }
    let request = [Request::path(&dir)];
    let few = Options {
        max_files: 3,
        ..Options::default()
    };
    let e = external::import(&request, few).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: more than 3 files or 512 MiB to import under {}; point --from at the directories that hold the mesh configuration and traces",
            dir.display(),
            dir.display()
        )
    );
    let small = Options {
        max_total_bytes: 15,
        ..Options::default()
    };
    assert!(external::import(&request, small).is_err(), "20 bytes > 15");
    let facts = external::import(&request, Options::default()).unwrap();
    let unknown: Vec<_> = facts.accounts.iter().map(|a| &a.account).collect();
    assert_eq!(
        unknown,
        vec![&external::Account::NotUnderstood("a document of no known kind".into()); 4]
    );
    assert_eq!(
        facts.summary(),
        "sources: 4 document(s) in 4 file(s): nothing read; 4 not understood (--verbose lists them)"
    );
}

#[test]
fn an_envoy_gateway_backend_traffic_policy_retries_its_routes() {
    let text = "version: 1\nentry: gw\nservices:\n  gw: { calls: [backend] }\n  backend: {}\n";
    let topo = temp_file("eg.yaml", text);
    let btp = format!("{DATA}/envoy-gateway/retry-for-route.yaml");
    let route = format!("{DATA}/envoy-gateway/backend-route.yaml");
    let m = merged(Some(topo.to_str().unwrap()), &[&btp, &route], 28);
    let c = call(&m.topology, "gw", "backend");
    let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "gateway-route", "gateway"]);
    assert_eq!(
        layer(c, "gateway-route").timeout.unwrap().value,
        Duration::from_secs(5)
    );
    let g = layer(c, "gateway");
    assert_eq!(g.policy.max_attempts, 6, "numRetries: 5 counts retries");
    assert_eq!(g.timeout.unwrap().value, Duration::from_millis(250));
    assert_eq!(g.policy.backoff.base, Duration::from_millis(100));
    assert_eq!(g.policy.backoff.cap, Some(Duration::from_secs(10)));
    assert_eq!(g.policy.retry_on.0, conditions("connect, 500"));
    let (file, pos) = m.topology.locate(g.spans.max_attempts.unwrap());
    assert_eq!((file, pos.line), (btp.as_str(), 12));
}

#[test]
fn simulate_reads_the_sources_too() {
    let services = |args: &[&str]| received(&simulated(args));
    let hand = services(&[&format!("{DATA}/import/shop-hand.yaml")]);
    // 20 requests, each POSTed to payments with Istio's 3 attempts.
    assert!(hand.contains(&("payments".to_owned(), 60.0)), "{hand:?}");
    assert_eq!(
        services(&[&format!("{DATA}/import/shop-topology.yaml")]),
        hand
    );
    let bare = temp_file(
        "shop-bare.yaml",
        &std::fs::read_to_string(format!("{DATA}/import/shop-topology.yaml"))
            .unwrap()
            .replace("sources: [shop-mesh.yaml]\n", ""),
    );
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    assert_eq!(services(&[bare.to_str().unwrap(), "--from", &mesh]), hand);
}

/// `(line, column)` of the first `needle` in `file` after line `after`.
fn position_of(file: &str, needle: &str, after: u32) -> (u64, u64) {
    let line = line_of(file, needle, after);
    let text = std::fs::read_to_string(file).unwrap();
    let column = text
        .lines()
        .nth(line as usize - 1)
        .unwrap()
        .find(needle)
        .unwrap()
        + 1;
    (u64::from(line), column as u64)
}

#[test]
fn an_envoy_admin_config_dump_is_read() {
    let dump = format!("{DATA}/envoy/config-dump.json");
    let topo = format!("{DATA}/import/bookinfo.yaml");
    let m = merged(Some(&topo), &[&dump], 28);
    let t = &m.topology;
    // details: num_retries 3 under a 2 s route timeout, 500 ms per try, and
    // its cluster's 25 % retry budget.
    let c = call(t, "productpage", "details");
    let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "envoy-route", "envoy"]);
    assert_eq!(
        layer(c, "envoy-route").timeout.unwrap().value,
        Duration::from_secs(2)
    );
    let e = layer(c, "envoy");
    assert_eq!(e.policy.max_attempts, 4, "num_retries: 3 counts retries");
    assert_eq!(e.timeout.unwrap().value, Duration::from_millis(500));
    assert_eq!(
        e.policy.retry_on.0,
        conditions("5xx, timeout, reset, connect")
    );
    assert_eq!(e.policy.backoff.base, Duration::from_millis(25));
    assert_eq!(e.policy.backoff.cap, Some(Duration::from_millis(250)));
    assert!(!e.policy.honor_retry_after);
    assert_eq!(
        e.policy.budget,
        Some(retrylint::policy::BudgetSpec::Ratio {
            ratio: 0.25,
            min_per_second: 0.0,
            window: Duration::from_secs(10)
        })
    );
    let (file, pos) = t.locate(e.spans.max_attempts.unwrap());
    assert_eq!(
        (file, u64::from(pos.line), u64::from(pos.column)),
        (
            dump.as_str(),
            position_of(&dump, "\"num_retries\": 3", 0).0,
            position_of(&dump, "\"num_retries\": 3", 0).1
        )
    );
    let (_, pos) = t.locate(e.spans.budget.unwrap());
    assert_eq!(pos.line, line_of(&dump, "\"retry_budget\"", 0));
    // ratings: Istio's pre-1.24 default as istiod writes it; `timeout: 0s`
    // disables the route timeout, and Istio lifts max_retries.
    let r = call(t, "reviews", "ratings");
    let names: Vec<&str> = r.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["app", "envoy"]);
    let e = layer(r, "envoy");
    assert_eq!(e.policy.max_attempts, 3);
    assert_eq!(e.timeout, None);
    assert_eq!(e.policy.retry_on.0, conditions("connect, 503"));
    assert_eq!(
        e.policy.budget,
        Some(retrylint::policy::BudgetSpec::Concurrency { max: u32::MAX })
    );
    // The gRPC-only conditions are dropped with a note at the retry_on value.
    let retry_on = position_of(&dump, "\"connect-failure,refused-stream", 0);
    for grpc in ["unavailable", "cancelled"] {
        let want = format!(
            "{dump}:{}:{}: note: `{grpc}` matches a gRPC status in the response headers only",
            retry_on.0, retry_on.1
        );
        assert!(
            m.notes.iter().any(|n| n.starts_with(&want)),
            "{want}\n{:?}",
            m.notes
        );
    }
    // The POST to ratings is RL003 at that route's `retry_policy`, on 503.
    let found = rl003(&[&topo, "--from", &dump]);
    assert_eq!(found.len(), 1, "{found:?}");
    let after = line_of(
        &dump,
        "\"name\": \"ratings.default.svc.cluster.local:9080\"",
        0,
    );
    assert_eq!(found[0]["file"], dump.as_str());
    assert_eq!(
        (
            found[0]["line"].as_u64().unwrap(),
            found[0]["column"].as_u64().unwrap()
        ),
        position_of(&dump, "\"retry_policy\"", after)
    );
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("retries it on 503 — the server may already have done the work"),
        "{}",
        found[0]
    );
    let (code, _, err) = retrylint(&["check", &topo, "--from", &dump, "--verbose"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("read: 1 × Envoy configuration"), "{err}");
}

#[test]
fn import_writes_breakers_hedging_and_queueing() {
    let text = "version: 1
entry: web
deadline: 3s
services:
  web:
    latency: { p50: 5ms, p99: 40ms }
    calls:
      - to: orders
        timeout: 1s
        retry: { max_attempts: 2, backoff: { kind: exponential, base: 20ms, cap: 200ms, jitter: full } }
        circuit_breaker: { failure_rate: 0.4, window: { calls: 20 }, min_calls: 10, open_for: 5s, open_jitter: 0.2, half_open_calls: 2 }
        via:
          - name: outlier
            circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 5, open_for: 30s, counts: attempts, position: inside }
      - to: search
        timeout: 500ms
        hedging: { max_attempts: 3, delay: 30ms, non_fatal: [503, 502] }
  orders:
    latency: 10ms
    deadline_propagation: true
    capacity: { workers: 8, queue: 32, discipline: lifo, reject_status: 429, retry_after: 1s, drop_expired: true }
  search:
    latency: { p50: 20ms, p99: 90ms }
    capacity: 16
";
    let topo = temp_file("contained.yaml", text);
    let envoy = format!("{DATA}/envoy/front-proxy.yaml");
    let args = [topo.to_str().unwrap(), "--from", envoy.as_str()];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-contained.yaml");
    let mut import = vec!["import", "-o", out.to_str().unwrap()];
    import.extend_from_slice(&args);
    let (code, _, err) = retrylint(&import);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&out).unwrap();
    for want in [
        "    capacity: { workers: 8, queue: 32, discipline: lifo, reject_status: 429, retry_after: 1s, drop_expired: true }\n",
        "    capacity: 16\n",
        "        circuit_breaker: { failure_rate: 0.4, window: { calls: 20 }, min_calls: 10, open_for: 5s, open_jitter: 0.2, half_open_calls: 2, counts: outcomes, position: outside }\n",
        "            circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 5, open_for: 30s, open_jitter: 0, half_open_calls: 10, counts: attempts, position: inside }\n",
        "        hedging: { max_attempts: 3, delay: 30ms, non_fatal: [503, 502] }\n",
        "          - name: envoy  # tests/data/envoy/front-proxy.yaml:",
    ] {
        assert!(written.contains(want), "want {want}\n{written}");
    }
    let imported = out.to_str().unwrap();
    assert_eq!(figures(&[imported]), figures(&args));
    assert_eq!(messages(&[imported]), messages(&args));
    // The breaker figures are there to compare.
    let (_, json, _) = retrylint(&["check", imported, "--format", "json"]);
    assert!(json.contains("with_breakers"), "{json}");
}

/// `simulate --format json`'s services under a seeded outage of payments.
fn simulated(args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "simulate",
        "--trials",
        "1",
        "--requests",
        "20",
        "--fault",
        "total-outage",
        "--target",
        "payments",
        "--seed",
        "3",
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    let (code, out, err) = retrylint(&all);
    assert!(code == 0 || code == 1, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    r["services"].clone()
}

fn received(services: &serde_json::Value) -> Vec<(String, f64)> {
    let mut r: Vec<(String, f64)> = services
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["service"].as_str().unwrap().to_owned(),
                s["received"].as_f64().unwrap(),
            )
        })
        .collect();
    r.sort_by(|a, b| a.0.cmp(&b.0));
    r
}

#[test]
fn simulate_and_chaos_need_no_topology_when_traces_give_the_graph() {
    let otlp = format!("{DATA}/traces/otlp.json");
    let mesh = format!("{DATA}/import/shop-mesh.yaml");
    let from = ["--from", otlp.as_str(), "--from", mesh.as_str()];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-for-runs.yaml");
    let mut import = vec!["import", "-o", out.to_str().unwrap()];
    import.extend_from_slice(&from);
    let (code, _, err) = retrylint(&import);
    assert_eq!(code, 0, "{err}");
    let sources_only = simulated(&from);
    assert_eq!(sources_only, simulated(&[out.to_str().unwrap()]));
    // 20 requests; cart is called by frontend and checkout; the POST to
    // payments is sent 3 times (`attempts: 2`, retryOn 5xx); the failed
    // checkout is not retried by Istio's default (connect only).
    let owned = |v: &[(&str, f64)]| -> Vec<(String, f64)> {
        v.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect()
    };
    assert_eq!(
        received(&sources_only),
        owned(&[
            ("cart", 40.0),
            ("checkout", 20.0),
            ("frontend", 20.0),
            ("payments", 60.0)
        ])
    );
    // Chaos on real servers, bounded by its request count.
    let mut args = vec![
        "chaos",
        "--fault",
        "total-outage",
        "--target",
        "payments",
        "--requests",
        "3",
        "--rate",
        "50",
        "--seed",
        "1",
        "--format",
        "json",
    ];
    args.extend_from_slice(&from);
    let (code, out, err) = retrylint(&args);
    assert!(code == 0 || code == 1, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        received(&r["services"]),
        owned(&[
            ("cart", 6.0),
            ("checkout", 3.0),
            ("frontend", 3.0),
            ("payments", 9.0)
        ])
    );
    // Without a call graph, both say what is missing.
    let vs = format!("{DATA}/istio/virtual-service-all-v1.yaml");
    for cmd in ["simulate", "chaos"] {
        let (code, _, err) = retrylint(&[cmd, "--from", &vs]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains("the sources give no call graph and no topology was given"),
            "{cmd}: {err}"
        );
        let (code, _, err) = retrylint(&[cmd]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains("give a topology file, or --from"),
            "{cmd}: {err}"
        );
    }
}

/// The preset of the `istio-sidecar` layer on `from → to`, if any.
fn sidecar_preset(t: &Topology, from: &str, to: &str) -> Option<String> {
    call(t, from, to)
        .layers
        .iter()
        .find(|l| l.name == "istio-sidecar")
        .map(|l| l.preset.clone().unwrap_or_default())
}

#[test]
fn pod_injection_labels_decide_which_services_are_meshed() {
    let k8s = temp_file(
        "injection.yaml",
        r#"apiVersion: v1
kind: Namespace
metadata: { name: plain }
---
apiVersion: v1
kind: Namespace
metadata: { name: meshed, labels: { istio-injection: enabled } }
---
apiVersion: v1
kind: Service
metadata: { name: ratings, namespace: plain }
spec: { selector: { app: ratings } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ratings-v1, namespace: plain }
spec:
  template:
    metadata:
      labels: { app: ratings, version: v1, sidecar.istio.io/inject: "true" }
---
apiVersion: v1
kind: Service
metadata: { name: details, namespace: meshed }
spec: { selector: { app: details } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: details-v1, namespace: meshed }
spec:
  template:
    metadata:
      labels: { app: details, sidecar.istio.io/inject: "false" }
---
apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: meshed }
spec: { selector: { app: reviews } }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: reviews, namespace: meshed }
spec:
  template:
    metadata:
      labels: { app: reviews }
      annotations: { sidecar.istio.io/inject: "false" }
---
apiVersion: v1
kind: Service
metadata: { name: productpage, namespace: meshed }
spec: { selector: { app: productpage } }
---
apiVersion: v1
kind: Service
metadata: { name: mysql, namespace: plain }
spec: { selector: { app: mysql } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: mysql, namespace: plain }
spec:
  template:
    metadata:
      labels: { app: mysql }
      annotations: { sidecar.istio.io/inject: "true" }
"#,
    );
    let topo = temp_file(
        "injection-topology.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [productpage, details, reviews, ratings, mysql] }\n  productpage: {}\n  details: {}\n  reviews: {}\n  ratings: {}\n  mysql: {}\n",
    );
    let k8s = k8s.to_str().unwrap();
    let m = merged(Some(topo.to_str().unwrap()), &[k8s], 28);
    let t = &m.topology;
    let got: Vec<(&str, Option<String>)> =
        ["productpage", "details", "reviews", "ratings", "mysql"]
            .into_iter()
            .map(|s| (s, sidecar_preset(t, "web", s)))
            .collect();
    let default = Some("istio-default".to_owned());
    assert_eq!(
        got,
        [
            // Pods not read: the namespace's label decides.
            ("productpage", default.clone()),
            // The pod label opts out of an injected namespace.
            ("details", None),
            // So does the legacy annotation.
            ("reviews", None),
            // The pod label opts in where the namespace says nothing.
            ("ratings", default),
            // The annotation alone does not opt in (the webhook selects on labels).
            ("mysql", None),
        ]
    );
    let side = layer(call(t, "web", "ratings"), "istio-sidecar");
    let (file, pos) = t.locate(side.pos);
    assert_eq!(
        (file, pos.line),
        (
            k8s,
            line_of(k8s, "metadata: { name: ratings, namespace: plain }", 0)
        )
    );
    let (code, _, err) = retrylint(&["check", topo.to_str().unwrap(), "--from", k8s, "--verbose"]);
    assert!(code <= 1, "{err}");
    assert!(err.contains("read: 4 × Kubernetes workload"), "{err}");
}

#[test]
fn every_weighted_destination_gets_the_route_policy() {
    let vs = temp_file(
        "weighted-vs.yaml",
        r#"apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: reviews, namespace: shop }
spec:
  hosts: [reviews]
  http:
  - match: [{ method: { exact: GET } }]
    route:
    - destination: { host: reviews }
      weight: 80
    - destination: { host: reviews-canary }
      weight: 20
    retries: { attempts: 2, perTryTimeout: 200ms, retryOn: "5xx" }
  - route:
    - destination: { host: reviews }
      weight: 90
    - destination: { host: reviews-canary }
      weight: 10
"#,
    );
    let topo = temp_file(
        "weighted.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [reviews, reviews-canary, { to: reviews, method: PUT }, { to: reviews-canary, method: PUT }] }\n  reviews: {}\n  reviews-canary: {}\n",
    );
    let vs = vs.to_str().unwrap();
    let m = merged(Some(topo.to_str().unwrap()), &[vs], 28);
    let t = &m.topology;
    let web = &t.services[t.id_of("web").unwrap()];
    let retries = line_of(vs, "retries:", 0);
    // The VirtualService binds the calls to its `hosts` (reviews): a GET
    // to reviews takes the first route, whichever destination serves it.
    let side = layer(&web.calls[0], "istio-sidecar");
    assert_eq!(side.policy.max_attempts, 3);
    assert_eq!(side.timeout.unwrap().value, Duration::from_millis(200));
    assert_eq!(
        side.policy.retry_on.0,
        conditions("5xx, timeout, reset, connect")
    );
    assert_eq!(t.locate(side.pos).1.line, retries);
    // A PUT takes the second route: Istio's default, at its first
    // destination's host.
    let side = layer(&web.calls[2], "istio-sidecar");
    assert_eq!(side.preset.as_deref(), Some("istio-default"));
    let (file, pos) = t.locate(side.pos);
    assert_eq!(
        (file, pos.line),
        (vs, line_of(vs, "host: reviews }", retries))
    );
    // Calls straight to reviews-canary are not the VirtualService's: it
    // binds `hosts: [reviews]` only.
    for c in [&web.calls[1], &web.calls[3]] {
        assert!(
            c.layers.iter().all(|l| l.name != "istio-sidecar"),
            "{:?}",
            c.layers.iter().map(|l| &l.name).collect::<Vec<_>>()
        );
    }
}

#[test]
fn envoy_weighted_clusters_each_get_the_route_policy_and_their_own_limit() {
    let envoy = temp_file(
        "weighted-envoy.yaml",
        r#"static_resources:
  listeners:
  - name: ingress
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          route_config:
            virtual_hosts:
            - name: orders
              domains: ["*"]
              routes:
              - match: { prefix: "/" }
                route:
                  weighted_clusters:
                    clusters:
                    - { name: orders_stable, weight: 90 }
                    - { name: orders_canary, weight: 10 }
                  timeout: 3s
                  retry_policy: { retry_on: "5xx", num_retries: 2, per_try_timeout: 1s }
  clusters:
  - name: orders_stable
    circuit_breakers: { thresholds: [ { retry_budget: { budget_percent: { value: 10 } } } ] }
    load_assignment: { endpoints: [ { lb_endpoints: [ { endpoint: { address: { socket_address: { address: orders, port_value: 8080 } } } } ] } ] }
  - name: orders_canary
    load_assignment: { endpoints: [ { lb_endpoints: [ { endpoint: { address: { socket_address: { address: orders-canary, port_value: 8080 } } } } ] } ] }
"#,
    );
    let topo = temp_file(
        "weighted-orders.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [orders, orders-canary] }\n  orders: {}\n  orders-canary: {}\n",
    );
    let envoy = envoy.to_str().unwrap();
    let m = merged(Some(topo.to_str().unwrap()), &[envoy], 28);
    let t = &m.topology;
    let budgets = [
        retrylint::policy::BudgetSpec::Ratio {
            ratio: 0.1,
            min_per_second: 0.0,
            window: Duration::from_secs(10),
        },
        retrylint::policy::BudgetSpec::Concurrency { max: 3 },
    ];
    for (to, budget) in ["orders", "orders-canary"].into_iter().zip(budgets) {
        let c = call(t, "web", to);
        let names: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["app", "envoy-route", "envoy"], "{to}");
        assert_eq!(
            layer(c, "envoy-route").timeout.unwrap().value,
            Duration::from_secs(3)
        );
        let e = layer(c, "envoy");
        assert_eq!(e.policy.max_attempts, 3, "{to}");
        assert_eq!(e.timeout.unwrap().value, Duration::from_secs(1));
        assert_eq!(e.policy.budget, Some(budget), "{to}");
        let (file, pos) = t.locate(e.spans.max_attempts.unwrap());
        assert_eq!(
            (file, pos.line),
            (envoy, line_of(envoy, "num_retries: 2", 0))
        );
        let (_, pos) = t.locate(layer(c, "envoy-route").timeout.unwrap().pos);
        assert_eq!(pos.line, line_of(envoy, "timeout: 3s", 0));
    }
}

#[test]
fn a_trace_of_a_sixty_thousand_service_chain_is_written_in_linear_time() {
    // One trace, each service's server span the child of its caller's: a
    // chain 60,000 deep. Writing the imported topology looked up every
    // call's measured attempts in the list of all of them: 1.8 × 10⁹ string
    // comparisons, most of an import that took 13 s at 40,000.
    const N: usize = 60_000;
    let mut spans = String::new();
    for i in 0..N {
        let parent = if i == 0 {
            String::new()
        } else {
            format!(r#","parentSpanId":"{:x}""#, i - 1)
        };
        spans += &format!(
            r#"{}{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"s{i}"}}}}]}},"scopeSpans":[{{"spans":[{{"traceId":"t1","spanId":"{i:x}"{parent},"startTimeUnixNano":"{}","endTimeUnixNano":"{}"}}]}}]}}"#,
            if i == 0 { "" } else { "," },
            1000 + i,
            1000 + 2 * N - i
        );
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("deep-trace");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chain.json");
    std::fs::write(&file, format!(r#"{{"resourceSpans":[{spans}]}}"#)).unwrap();
    let facts = external::import(&[Request::path(&file)], Options::default()).unwrap();
    assert_eq!(facts.calls.len(), N - 1);
    let merged = topology::merge::merge(None, &facts, &Presets::embedded()).unwrap();
    assert_eq!(merged.topology.services.len(), N);
    let began = std::time::Instant::now();
    let text = topology::write::write(&merged.topology, &merged.measured);
    let took = began.elapsed();
    assert!(
        text.contains(&format!(
            "- to: s{}  # {}:1; traces: 1.00 attempts per call seen (at most 1, over 1 calls)\n",
            N - 1,
            file.display()
        )),
        "the last call's measured attempts are written"
    );
    // A hash lookup per call: well under a second here; the scan took tens.
    assert!(took < Duration::from_secs(5), "writing took {took:?}");
}

/// A call known to be gRPC from the sources (emojivoto's voting-svc has a
/// port named `grpc`) is written `protocol: grpc` by `import`, so `check` of
/// the written file reads the call as the sources did: the same findings
/// and figures, and the call is gRPC again. Kuma's default MeshRetry makes
/// the protocol matter (its `grpc` section, not its `http` one, on it; the
/// port given `appProtocol: grpc`, which Kuma needs).
/// Before, the written call read as HTTP.
#[test]
fn import_writes_the_grpc_protocol_it_read() {
    let topo = temp_file(
        "grpc-roundtrip-topo.yaml",
        "version: 1\nentry: web\nservices:\n  web: { calls: [voting-svc] }\n  voting-svc: {}\n",
    );
    let topo = topo.to_str().unwrap();
    // Kuma reads no port names: its `grpc` needs `appProtocol` (without
    // it, Kuma's default `tcp` takes no MeshRetry section at all).
    let voting =
        std::fs::read_to_string(format!("{DATA}/kubernetes-grpc/emojivoto-voting.yml")).unwrap();
    let tagged = voting.replace(
        "  - name: grpc\n    port: 8080\n",
        "  - name: grpc\n    appProtocol: grpc\n    port: 8080\n",
    );
    assert_ne!(tagged, voting);
    let svc = temp_file("emojivoto-voting-appprotocol.yml", &tagged);
    let svc = svc.to_str().unwrap();
    let kuma = format!("{DATA}/kuma/mesh-retry-all-default.yaml");
    let args = [topo, "--from", svc, "--from", &kuma];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-grpc.yaml");
    let mut import = vec!["import", "-o", out.to_str().unwrap()];
    import.extend_from_slice(&args);
    let (code, _, err) = retrylint(&import);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.matches("        protocol: grpc\n").count(),
        1,
        "{text}"
    );
    let written = out.to_str().unwrap();
    assert_eq!(figures(&[written]), figures(&args));
    assert_eq!(messages(&[written]), messages(&args));
    let m = merged(Some(written), &[], 25);
    let c = &m.topology.services[m.topology.id_of("web").unwrap()].calls[0];
    assert!(c.grpc);
    let l = c.layers.iter().find(|l| l.name == "kuma").unwrap();
    assert_eq!(
        l.policy.retry_on.0,
        "reset, connect, 502, 503, 504, timeout, 429"
            .split(", ")
            .map(|c| c.parse::<Condition>().unwrap())
            .collect::<Vec<_>>(),
        "the grpc section's default conditions, as written"
    );
}

/// `import -o -` writes the topology to standard output, byte for byte what
/// `-o FILE` writes, and no file named `-`.
#[test]
fn import_to_dash_writes_standard_output() {
    let shop = format!("{DATA}/import/shop-topology.yaml");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imported-dash.yaml");
    let (code, _, err) = retrylint(&["import", "-o", out.to_str().unwrap(), &shop]);
    assert_eq!(code, 0, "{err}");
    let file = std::fs::read_to_string(&out).unwrap();
    let (code, stdout, err) = retrylint(&["import", "-o", "-", &shop]);
    assert_eq!(code, 0, "{err}");
    assert!(!file.is_empty());
    assert_eq!(stdout, file);
    assert!(!Path::new("-").exists(), "`-o -` wrote a file named -");
}
