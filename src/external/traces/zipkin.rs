//! Zipkin v2 JSON (`/api/v2/trace/{id}` gives a list of spans,
//! `/api/v2/traces` a list of such lists): `traceId`, `id`, `parentId`,
//! `kind` (`CLIENT`, `SERVER`, `PRODUCER`, `CONSUMER`), `duration` in
//! microseconds, `localEndpoint.serviceName`, `name` and `tags`. A server
//! span may share its client's id (`shared: true`).
//!
//! Zipkin's model lets `duration` and `localEndpoint` be absent (a span
//! whose end was not reported; an instrumentation that did not name its
//! service, as Envoy's tracer without a service cluster): a span without a
//! duration gives no latency, and one without a service is left out, said
//! once per file with the count.

use std::time::Duration;

use super::attempts::{self, Attr};
use super::{Span, SpanKind, grpc_attr, messaging_key, method_of};
use crate::external::facts::Facts;
use crate::external::node::{Cx, get, items, path, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Value};

fn required<'a>(cx: Cx, n: &'a Node, key: &str) -> Result<&'a Node, LoadError> {
    get(n, key).ok_or_else(|| {
        cx.f.error(n.pos, format!("a Zipkin span without `{key}`"))
            .with_help("Zipkin v2 spans carry traceId and id")
    })
}

pub(crate) fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let mut spans: Vec<&Node> = Vec::new();
    for item in items(root) {
        match &item.value {
            Value::Seq(inner) => spans.extend(inner.iter()),
            _ => spans.push(item),
        }
    }
    // The first span without a service, and how many there were.
    let mut nameless: Option<(&Node, usize)> = None;
    for span in spans {
        let Some(service) = path(span, &["localEndpoint", "serviceName"])
            .and_then(str_at)
            .filter(|s| !s.is_empty())
        else {
            // Checked as any span is, then left out.
            required(cx, span, "traceId")?;
            required(cx, span, "id")?;
            nameless.get_or_insert((span, 0)).1 += 1;
            continue;
        };
        let micros = get(span, "duration")
            .map(|d| crate::external::node::int(cx, d, "duration", 0, i128::from(u64::MAX)))
            .transpose()?;
        let start = get(span, "timestamp")
            .map(|t| crate::external::node::int(cx, t, "timestamp", 0, i128::from(u64::MAX)))
            .transpose()?;
        let tags = get(span, "tags");
        let tag = |k: &str| tags.and_then(|t| get(t, k)).and_then(str_at);
        let kind = match get(span, "kind").and_then(str_at) {
            Some("SERVER") => SpanKind::Server,
            Some("CLIENT") => SpanKind::Client,
            Some("PRODUCER" | "CONSUMER") => SpanKind::Messaging,
            _ => SpanKind::Other,
        }
        .or_messaging(tags.is_some_and(|t| {
            match &t.value {
                Value::Map(entries) => entries
                    .iter()
                    .any(|(k, _)| str_at(k).is_some_and(messaging_key)),
                _ => false,
            }
        }));
        let name = get(span, "name").and_then(str_at);
        let grpc = match tags.map(|t| &t.value) {
            Some(Value::Map(entries)) => entries
                .iter()
                .any(|(k, v)| str_at(k).is_some_and(|k| grpc_attr(k, str_at(v)))),
            _ => false,
        };
        let pushed = facts.traces.push(Span {
            trace: cx
                .f
                .str(required(cx, span, "traceId")?, "`traceId`")?
                .to_owned(),
            id: cx.f.str(required(cx, span, "id")?, "`id`")?.to_owned(),
            parent: get(span, "parentId").and_then(str_at).map(str::to_owned),
            service: service.to_owned(),
            kind,
            duration: micros.map(|m| Duration::from_micros(m as u64)),
            method: method_of(tag, name),
            name: name.map(str::to_owned),
            grpc,
            // Zipkin's model: an `error` tag, whatever its value (Brave
            // writes the message or the status), marks a failed span, and
            // its absence a span that did not fail.
            signals: attempts::read(
                |k| tag(k).map(Attr::Str),
                tags.and_then(|t| get(t, "error")).is_some(),
                true,
            ),
            start: start.map(|m| m as u128 * 1000),
            at: cx.at(span.pos),
        });
        if !pushed {
            return Err(super::otlp::too_many(cx, span));
        }
    }
    if let Some((first, n)) = nameless {
        facts.warn(
            Some(cx.at(first.pos)),
            format!(
                "{n} Zipkin span(s) without `localEndpoint.serviceName` are left out: the service they belong to is not known, so no call to or from them is read"
            ),
        );
    }
    Ok(())
}
