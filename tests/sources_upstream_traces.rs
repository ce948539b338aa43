//! Trace exports read from the projects' own test data (Zipkin's UI
//! fixtures, Jaeger's converter fixture, Grafana Tempo's trace; origin,
//! commit and licence in tests/data/README.md), against what each format
//! allows: Zipkin's nullable `duration` and `localEndpoint`, messaging
//! spans, call graphs with cycles, Tempo's `batches`, a Jaeger trace alone.

use retrylint::external::{self, Kind, Options, Request};

use crate::common;

const DIR: &str = "tests/data/traces/upstream";

fn read(file: &str) -> external::Facts {
    external::import(
        &[Request::path(format!("{DIR}/{file}"))],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `(from, to, method, calls, attempts_mean, attempts_max)` in the order
/// the traces give them.
type Row = (String, String, Option<String>, u64, f64, u32);

fn calls(f: &external::Facts) -> Vec<Row> {
    f.calls
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
        .collect()
}

fn row(from: &str, to: &str, method: Option<&str>, n: u64, mean: f64, max: u32) -> Row {
    (
        from.into(),
        to.into(),
        method.map(str::to_owned),
        n,
        mean,
        max,
    )
}

fn services(f: &external::Facts) -> Vec<&str> {
    f.services.iter().map(|s| s.name.as_str()).collect()
}

fn notes(f: &external::Facts) -> Vec<String> {
    f.notes
        .iter()
        .map(|n| {
            let at = n.at.map(|a| f.show(a)).unwrap_or_default();
            let level = if n.warning { "warning" } else { "note" };
            format!("{at}: {level}: {}", n.text)
        })
        .collect()
}

/// Zipkin's `messaging.json` (frontend publishes to RabbitMQ, backend
/// consumes) and `messaging-kafka.json` (two services polling and sending
/// on Kafka): PRODUCER and CONSUMER spans are messages, not calls. Before,
/// a CONSUMER span under another service's PRODUCER was read as a call
/// (`frontend → backend`; `servicea → serviceb` and `servicea → servicea`'s
/// peers), and the simulation would have retried a queue.
#[test]
fn producer_and_consumer_spans_are_no_calls() {
    let f = read("zipkin-messaging.json");
    assert_eq!(f.read_kinds, [Kind::Zipkin]);
    assert_eq!(services(&f), ["backend", "frontend"]);
    assert_eq!(calls(&f), []);
    let f = read("zipkin-messaging-kafka.json");
    assert_eq!(services(&f), ["servicea", "serviceb"]);
    assert_eq!(calls(&f), []);
}

/// Zipkin's `smartthings-oauth-authorization.json`, 175 spans of one OAuth
/// flow:
/// - 19 spans have no `duration` (Zipkin's model allows it): read, with no
///   latency from them. Before: "a Zipkin span without `duration`", exit 2.
/// - `datamgmt → stlogin` (a redirect) and `stlogin → datamgmt` form a
///   cycle; the walk from the root span's service (datamgmt) cuts the call
///   that closes it, with a warning at that call's first span. Before,
///   the topology was refused ("cycle in the call graph").
/// - The spans carry no `http.method`: the method comes from the name
///   (`post /tokens/access`), and the operations datamgmt sends auth under
///   one parent (`post /tokens/access`, `delete /authorization/code/_code_`
///   and four `get /clients/_uuid_`) are different logical calls, and so
///   are the four GETs: each was sent after the one before had come back
///   without Zipkin's `error` tag, and a request after a success is no
///   retry. 20 calls of one attempt, where one key per parent made 8 calls
///   of up to 6 attempts, and one key per operation 15 calls of up to 4.
/// - Pusher's five SERVER spans under bouncer's one CLIENT span carry
///   `kafka.partition` (Brave's Kafka tags): deliveries of a message, not a
///   proxy retrying five times.
#[test]
fn a_zipkin_flow_with_nulls_a_cycle_and_messages() {
    let file = "zipkin-smartthings-oauth-authorization.json";
    let f = read(file);
    assert_eq!(
        services(&f),
        [
            "auth", "datamgmt", "pusher", "paperboy", "dove", "bouncer", "account", "stlogin"
        ]
    );
    assert_eq!(
        calls(&f),
        [
            row("datamgmt", "auth", Some("POST"), 20, 1.0, 1),
            row("pusher", "paperboy", Some("POST"), 1, 1.0, 1),
            row("pusher", "dove", Some("POST"), 1, 1.0, 1),
            row("datamgmt", "bouncer", Some("POST"), 1, 1.0, 1),
            row("datamgmt", "account", Some("GET"), 5, 1.0, 1),
            row("stlogin", "auth", Some("POST"), 2, 1.0, 1),
            row("datamgmt", "stlogin", None, 2, 1.0, 1),
        ]
    );
    assert_eq!(
        notes(&f),
        [format!(
            "{DIR}/{file}:3345:5: warning: the traced calls form a cycle, datamgmt → stlogin → datamgmt; the call `stlogin → datamgmt` that closes it is left out, as a call graph must be acyclic"
        )]
    );
    // stlogin's 14 SERVER spans, 2 without a duration: its latency (own
    // work, nearest rank) from the other 12.
    let stlogin = &f.services[7];
    assert_eq!(stlogin.server_spans, 14);
    let us = std::time::Duration::from_micros;
    assert_eq!(stlogin.latency, Some((us(271), us(72_625))));
}

/// The same file through `check` without a topology: the graph has two
/// entries (datamgmt, and pusher, which only messages reach) and is
/// checked; the warning is on standard error. Before: exit 2.
#[test]
fn check_reads_the_cyclic_trace_and_says_what_it_cut() {
    let file = format!("{DIR}/zipkin-smartthings-oauth-authorization.json");
    let (code, _, err) = common::run::retrylint(&["check", "--from", &file]);
    assert_ne!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{file}:3345:5: warning: the traced calls form a cycle, datamgmt → stlogin → datamgmt"
        )),
        "{err}"
    );
    assert!(
        err.contains("sources: 1 document(s) in 1 file(s): 1 × Zipkin v2 JSON trace"),
        "{err}"
    );
}

/// Zipkin's `envoy.json`: Envoy's tracer wrote one SERVER span without
/// `localEndpoint` (no service cluster set). The span is left out, said
/// once with the count at the first such span. Before: "a Zipkin span
/// without `localEndpoint.serviceName`", exit 2.
#[test]
fn zipkin_spans_without_a_service_are_left_out_and_counted() {
    let file = "zipkin-envoy.json";
    let f = read(file);
    assert_eq!(f.read_kinds, [Kind::Zipkin]);
    assert_eq!(services(&f), Vec::<&str>::new());
    assert_eq!(
        notes(&f),
        [format!(
            "{DIR}/{file}:2:3: warning: 1 Zipkin span(s) without `localEndpoint.serviceName` are left out: the service they belong to is not known, so no call to or from them is read"
        )]
    );
}

/// Jaeger's `ui_01.json` converter fixture: one trace object alone
/// (`traceID`, `spans`, `processes`), no `data` around it. Before: "a trace
/// export of a shape not known", exit 2. Its span 4 names first a parent in
/// another trace (`00000000000000ff`), then span 2 in its own: the parent is
/// the one in its own trace. Spans 3 (`some-operation`) and 4
/// (`reference-test`) of service-y under service-x's span 2 are two
/// operations, so two calls of one attempt each, not one call retried.
#[test]
fn a_single_jaeger_trace_object_is_read() {
    let f = read("jaeger-ui_01.json");
    assert_eq!(f.read_kinds, [Kind::Jaeger]);
    assert_eq!(services(&f), ["service-x", "service-y"]);
    assert_eq!(calls(&f), [row("service-x", "service-y", None, 2, 1.0, 1)]);
}

/// Jaeger's trace read from two files, as when two exports share a trace:
/// each span is counted once, and a note says so. Before, service-y's
/// spans under service-x's were counted twice: 2 attempts a call, read as
/// an undeclared retry.
#[test]
fn a_trace_in_two_exports_is_counted_once() {
    let file = format!("{DIR}/jaeger-ui_01.json");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("traces-twice");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("jaeger-ui_01-again.json");
    std::fs::copy(&file, &copy).unwrap();
    let f = external::import(
        &[Request::path(&file), Request::path(&copy)],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(calls(&f), [row("service-x", "service-y", None, 2, 1.0, 1)]);
    let said = notes(&f);
    assert_eq!(said.len(), 1, "{said:?}");
    // Jaeger's fixture has span 2 twice itself: 1 + 5 dropped.
    assert_eq!(
        said,
        [format!(
            "{file}:37:5: note: 6 span(s) appear more than once among the traces (the same trace and span id, service, kind and start, as when two exports share a trace): each is counted once"
        )]
    );
}

/// Grafana Tempo's `pkg/tempopb/trace.json`: OTLP resource spans under
/// `batches` (Tempo's trace-by-ID answer). Before: "a trace export of a
/// shape not known", exit 2. One server span of `my.service`, 1 s long.
#[test]
fn tempo_batches_are_read_as_otlp() {
    let f = read("tempo-trace.json");
    assert_eq!(f.read_kinds, [Kind::Otlp]);
    assert_eq!(services(&f), ["my.service"]);
    let s = &f.services[0];
    assert_eq!(s.server_spans, 1);
    let second = std::time::Duration::from_secs(1);
    assert_eq!(s.latency, Some((second, second)));
    assert_eq!(calls(&f), []);
}

/// The method from a span name: Zipkin's lower-case `post /tokens/access`
/// and bare `get`, OpenTelemetry's `GET /users/{id}` and older `HTTP GET`;
/// a name that is no method says nothing.
#[test]
fn the_method_in_a_span_name() {
    use retrylint::external::traces::method_in_name;
    for (name, want) in [
        ("post /tokens/access", Some("POST")),
        ("get", Some("GET")),
        ("GET /users/{id}", Some("GET")),
        ("HTTP GET", Some("GET")),
        ("delete /authorization/code/_code_", Some("DELETE")),
        ("get_multi mobile_api_nonce", None),
        ("redirect", None),
        ("helloworld.Greeter/SayHello", None),
    ] {
        assert_eq!(method_in_name(name).as_deref(), want, "{name}");
    }
}
