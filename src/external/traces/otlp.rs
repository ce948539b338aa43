//! OpenTelemetry OTLP/JSON, as the collector's file exporter writes it:
//! `resourceSpans[].resource.attributes` (`service.name`) — or `batches`,
//! the same list under the name Grafana Tempo's trace API gives it — and
//! `scopeSpans[].spans[]` (`instrumentationLibrarySpans` before OTLP 0.15),
//! with `kind` as a number (2 server, 3 client) or its enum name, and
//! times in nanoseconds as strings or numbers.

use std::time::Duration;

use super::attempts::{self, Attr};
use super::{Span, SpanKind, grpc_attr, messaging_key, method_of};
use crate::external::facts::Facts;
use crate::external::node::{Cx, get, items, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Value};

/// `key` in an OTLP attribute list, as a string (`stringValue`) or a number
/// written as text (`intValue`).
fn attr<'a>(attrs: Option<&'a Node>, key: &str) -> Option<&'a str> {
    attrs.map(items).unwrap_or(&[]).iter().find_map(|a| {
        (get(a, "key").and_then(str_at) == Some(key))
            .then(|| get(a, "value"))
            .flatten()
            .and_then(|v| get(v, "stringValue").or_else(|| get(v, "intValue")))
            .and_then(|v| match &v.value {
                Value::Str(s) => Some(s.as_str()),
                _ => None,
            })
    })
}

/// `key` in an OTLP attribute list as an attempt signal: a string, an
/// integer (a number or its text), a boolean, or an array's first value
/// (request headers are string arrays).
fn signal_attr<'a>(attrs: Option<&'a Node>, key: &str) -> Option<Attr<'a>> {
    let a = attrs
        .map(items)
        .unwrap_or(&[])
        .iter()
        .find(|a| get(a, "key").and_then(str_at) == Some(key))?;
    let mut v = get(a, "value")?;
    if let Some(first) = get(v, "arrayValue")
        .and_then(|a| get(a, "values"))
        .and_then(|vs| items(vs).first())
    {
        v = first;
    }
    if let Some(n) = get(v, "intValue") {
        return match &n.value {
            Value::Int(n) => Some(Attr::Int(*n)),
            Value::Str(s) => s.parse().ok().map(Attr::Int),
            _ => None,
        };
    }
    if let Some(b) = get(v, "boolValue") {
        return match &b.value {
            Value::Bool(b) => Some(Attr::Bool(*b)),
            _ => None,
        };
    }
    get(v, "stringValue").and_then(str_at).map(Attr::Str)
}

/// OTLP's own status, `status.code`: 0 UNSET (says nothing), 1 OK, 2
/// ERROR, as a number or its enum name.
fn status_code(span: &Node) -> Option<i128> {
    match &get(span, "status").and_then(|s| get(s, "code"))?.value {
        Value::Int(n) => Some(*n),
        Value::Str(s) => match s.as_str() {
            "STATUS_CODE_OK" => Some(1),
            "STATUS_CODE_ERROR" => Some(2),
            other => other.parse().ok(),
        },
        _ => None,
    }
}

fn nanos(cx: Cx, span: &Node, key: &str) -> Result<u128, LoadError> {
    let Some(v) = get(span, key) else {
        return Err(cx
            .f
            .error(span.pos, format!("an OTLP span without `{key}`"))
            .with_help("OTLP/JSON spans carry startTimeUnixNano and endTimeUnixNano"));
    };
    crate::external::node::int(cx, v, key, 0, i128::MAX).map(|n| n as u128)
}

fn required<'a>(cx: Cx, span: &'a Node, key: &str) -> Result<&'a str, LoadError> {
    match get(span, key) {
        Some(v) => cx.f.str(v, &format!("`{key}`")),
        None => Err(cx
            .f
            .error(span.pos, format!("an OTLP span without `{key}`"))
            .with_help("each span has traceId and spanId (hex strings)")),
    }
}

pub(crate) fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let key = if get(root, "resourceSpans").is_some() {
        "resourceSpans"
    } else {
        "batches"
    };
    for rs in crate::external::node::list(cx, root, key)? {
        let attrs = get(rs, "resource").and_then(|r| get(r, "attributes"));
        let service = attr(attrs, "service.name")
            .unwrap_or("unknown_service")
            .to_owned();
        let scopes = get(rs, "scopeSpans").or_else(|| get(rs, "instrumentationLibrarySpans"));
        for scope in scopes.map(items).unwrap_or(&[]) {
            for span in crate::external::node::list(cx, scope, "spans")? {
                let start = nanos(cx, span, "startTimeUnixNano")?;
                let end = nanos(cx, span, "endTimeUnixNano")?;
                if end < start {
                    return Err(cx
                        .f
                        .error(span.pos, "an OTLP span that ends before it starts")
                        .with_help("endTimeUnixNano must be at least startTimeUnixNano"));
                }
                let kind = match get(span, "kind").map(|k| &k.value) {
                    Some(Value::Int(2)) => SpanKind::Server,
                    Some(Value::Int(3)) => SpanKind::Client,
                    Some(Value::Str(s)) if s == "SPAN_KIND_SERVER" => SpanKind::Server,
                    Some(Value::Str(s)) if s == "SPAN_KIND_CLIENT" => SpanKind::Client,
                    Some(Value::Int(4 | 5)) => SpanKind::Messaging,
                    Some(Value::Str(s))
                        if s == "SPAN_KIND_PRODUCER" || s == "SPAN_KIND_CONSUMER" =>
                    {
                        SpanKind::Messaging
                    }
                    _ => SpanKind::Other,
                };
                let sattrs = get(span, "attributes");
                let kind = kind.or_messaging(
                    sattrs
                        .map(items)
                        .unwrap_or(&[])
                        .iter()
                        .any(|a| get(a, "key").and_then(str_at).is_some_and(messaging_key)),
                );
                let name = get(span, "name").and_then(str_at);
                let grpc = sattrs.map(items).unwrap_or(&[]).iter().any(|a| {
                    get(a, "key")
                        .and_then(str_at)
                        .is_some_and(|k| grpc_attr(k, attr(sattrs, k)))
                });
                let parent = get(span, "parentSpanId")
                    .and_then(str_at)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned);
                let pushed = facts.traces.push(Span {
                    trace: required(cx, span, "traceId")?.to_owned(),
                    id: required(cx, span, "spanId")?.to_owned(),
                    parent,
                    service: service.clone(),
                    kind,
                    duration: Some(Duration::from_nanos(
                        u64::try_from(end - start).unwrap_or(u64::MAX),
                    )),
                    method: method_of(|k| attr(sattrs, k), name),
                    name: name.map(str::to_owned),
                    grpc,
                    signals: attempts::read(
                        |k| signal_attr(sattrs, k),
                        status_code(span) == Some(2),
                        status_code(span) == Some(1),
                    ),
                    start: Some(start),
                    at: cx.at(span.pos),
                });
                if !pushed {
                    return Err(too_many(cx, span));
                }
            }
        }
    }
    Ok(())
}

pub(crate) fn too_many(cx: Cx, span: &Node) -> LoadError {
    cx.f.error(
        span.pos,
        format!("more than {} spans in all", super::MAX_SPANS),
    )
    .with_help("a sample of traces gives the call graph: export fewer (an hour of a few services is plenty)")
}
