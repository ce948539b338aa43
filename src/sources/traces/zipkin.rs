//! Zipkin v2 JSON (`/api/v2/trace/{id}` gives a list of spans,
//! `/api/v2/traces` a list of such lists): `traceId`, `id`, `parentId`,
//! `kind` (`CLIENT`, `SERVER`), `duration` in microseconds,
//! `localEndpoint.serviceName` and `tags`. A server span may share its
//! client's id (`shared: true`).

use std::time::Duration;

use super::attempts::{self, Attr};
use super::{Span, SpanKind, method_of};
use crate::source::error::LoadError;
use crate::source::{Node, Value};
use crate::sources::facts::Facts;
use crate::sources::node::{Cx, get, items, path, str_at};

fn required<'a>(cx: Cx, n: &'a Node, key: &str) -> Result<&'a Node, LoadError> {
    get(n, key).ok_or_else(|| {
        cx.f.error(n.pos, format!("a Zipkin span without `{key}`"))
            .with_help("Zipkin v2 spans carry traceId, id, duration and localEndpoint.serviceName")
    })
}

pub fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let mut spans: Vec<&Node> = Vec::new();
    for item in items(root) {
        match &item.value {
            Value::Seq(inner) => spans.extend(inner.iter()),
            _ => spans.push(item),
        }
    }
    for span in spans {
        let Some(service) = path(span, &["localEndpoint", "serviceName"]).and_then(str_at) else {
            return Err(cx
                .f
                .error(span.pos, "a Zipkin span without `localEndpoint.serviceName`")
                .with_help("the span's service names a topology service; export spans with their endpoints"));
        };
        let micros = crate::sources::node::int(
            cx,
            required(cx, span, "duration")?,
            "duration",
            0,
            i128::from(u64::MAX),
        )?;
        let kind = match get(span, "kind").and_then(str_at) {
            Some("SERVER") => SpanKind::Server,
            Some("CLIENT") => SpanKind::Client,
            _ => SpanKind::Other,
        };
        let tags = get(span, "tags");
        let tag = |k: &str| tags.and_then(|t| get(t, k)).and_then(str_at);
        let pushed = facts.traces.push(Span {
            trace: cx
                .f
                .str(required(cx, span, "traceId")?, "`traceId`")?
                .to_owned(),
            id: cx.f.str(required(cx, span, "id")?, "`id`")?.to_owned(),
            parent: get(span, "parentId").and_then(str_at).map(str::to_owned),
            service: service.to_owned(),
            kind,
            duration: Duration::from_micros(micros as u64),
            method: method_of(tag),
            signals: attempts::read(|k| tag(k).map(Attr::Str), false),
            at: cx.at(span.pos),
        });
        if !pushed {
            return Err(super::otlp::too_many(cx, span));
        }
    }
    Ok(())
}
