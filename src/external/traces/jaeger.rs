//! Jaeger JSON, as the query API (`/api/traces`) and the UI's download give
//! it: `data[]` traces, each with `spans[]` (`traceID`, `spanID`,
//! `references` with `CHILD_OF`, `duration` in microseconds, `tags`) and
//! `processes` naming each span's service; or one such trace alone (`{
//! traceID, spans, processes }`, what Jaeger's UI model holds and its
//! converter tests write).

use std::time::Duration;

use super::attempts::{self, Attr};
use super::{Span, SpanKind, grpc_attr, messaging_key, method_of};
use crate::external::facts::Facts;
use crate::external::node::{Cx, get, items, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Value};

fn tag<'a>(tags: Option<&'a Node>, key: &str) -> Option<&'a Node> {
    tags.map(items)
        .unwrap_or(&[])
        .iter()
        .find(|t| get(t, "key").and_then(str_at) == Some(key))
        .and_then(|t| get(t, "value"))
}

fn required<'a>(cx: Cx, n: &'a Node, key: &str) -> Result<&'a Node, LoadError> {
    get(n, key).ok_or_else(|| {
        cx.f.error(n.pos, format!("a Jaeger span without `{key}`"))
            .with_help(
                "Jaeger's JSON spans carry traceID, spanID, processID, startTime and duration",
            )
    })
}

pub(crate) fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let traces = if get(root, "data").is_some() {
        crate::external::node::list(cx, root, "data")?
    } else {
        std::slice::from_ref(root)
    };
    for trace in traces {
        let processes = get(trace, "processes");
        for span in crate::external::node::list(cx, trace, "spans")? {
            let pid_node = required(cx, span, "processID")?;
            let pid = cx.f.str(pid_node, "`processID`")?;
            let Some(service) = processes
                .and_then(|p| get(p, pid))
                .and_then(|p| get(p, "serviceName"))
                .and_then(str_at)
            else {
                return Err(cx
                    .f
                    .error(
                        pid_node.pos,
                        format!("processID `{pid}` is not in the trace's `processes`"),
                    )
                    .with_help("export the trace whole: each process names a span's service"));
            };
            let micros = crate::external::node::int(
                cx,
                required(cx, span, "duration")?,
                "duration",
                0,
                i128::from(u64::MAX),
            )?;
            let tags = get(span, "tags");
            let kind = match tag(tags, "span.kind").and_then(str_at) {
                Some("server") => SpanKind::Server,
                Some("client") => SpanKind::Client,
                Some("producer" | "consumer") => SpanKind::Messaging,
                _ => SpanKind::Other,
            }
            .or_messaging(
                tags.map(items)
                    .unwrap_or(&[])
                    .iter()
                    .any(|t| get(t, "key").and_then(str_at).is_some_and(messaging_key)),
            );
            let name = get(span, "operationName").and_then(str_at);
            let grpc = tags.map(items).unwrap_or(&[]).iter().any(|t| {
                get(t, "key")
                    .and_then(str_at)
                    .is_some_and(|k| grpc_attr(k, get(t, "value").and_then(str_at)))
            });
            let trace_id = cx.f.str(required(cx, span, "traceID")?, "`traceID`")?;
            // The parent is a CHILD_OF reference in the span's own trace: a
            // reference may name a span of another trace (Jaeger's own
            // converter fixture has one before the real parent).
            let parent = crate::external::node::items(get(span, "references").unwrap_or(span))
                .iter()
                .find(|r| {
                    get(r, "refType")
                        .and_then(str_at)
                        .is_none_or(|t| t == "CHILD_OF")
                        && get(r, "traceID")
                            .and_then(str_at)
                            .is_none_or(|t| t == trace_id)
                })
                .and_then(|r| get(r, "spanID"))
                .and_then(str_at)
                .map(str::to_owned);
            let signals = attempts::read(
                |k| {
                    tag(tags, k).and_then(|v| match &v.value {
                        Value::Int(n) => Some(Attr::Int(*n)),
                        Value::Bool(b) => Some(Attr::Bool(*b)),
                        Value::Str(s) => Some(Attr::Str(s.as_str())),
                        _ => None,
                    })
                },
                false,
                // OpenTracing's `error` tag is set when, and only when,
                // the operation failed: without it, the span succeeded.
                true,
            );
            let start = get(span, "startTime")
                .map(|t| crate::external::node::int(cx, t, "startTime", 0, i128::from(u64::MAX)))
                .transpose()?;
            let pushed = facts.traces.push(Span {
                trace: trace_id.to_owned(),
                id: cx
                    .f
                    .str(required(cx, span, "spanID")?, "`spanID`")?
                    .to_owned(),
                parent,
                service: service.to_owned(),
                kind,
                duration: Some(Duration::from_micros(micros as u64)),
                method: method_of(|k| tag(tags, k).and_then(str_at), name),
                name: name.map(str::to_owned),
                grpc,
                signals,
                start: start.map(|m| m as u128 * 1000),
                at: cx.at(span.pos),
            });
            if !pushed {
                return Err(super::otlp::too_many(cx, span));
            }
        }
    }
    Ok(())
}
