//! An HTTP retry a gRPC call takes: its status conditions never match,
//! because a gRPC server answers its errors with HTTP 200 and the status in
//! `grpc-status` trailers (gRPC's PROTOCOL-HTTP2.md). Said once per layer,
//! at the key that lists them, with what is still retried.

use super::facts::{At, LayerFact, PolicyFact};
use crate::policy::Condition;

/// The warning for `fact` on the gRPC call `from` → `to`, when its HTTP
/// conditions hold statuses its gRPC ones drop; `None` for any other
/// layer.
pub(crate) fn warning(fact: &LayerFact, from: &str, to: &str) -> Option<(At, String)> {
    let (PolicyFact::Inline { policy, spans }, Some(grpc)) = (&fact.policy, &fact.grpc_retry_on)
    else {
        return None;
    };
    let statuses: Vec<String> = policy
        .retry_on
        .0
        .iter()
        .filter_map(|c| match c {
            Condition::Status(n) => Some(n.to_string()),
            Condition::Class(n) => Some(format!("{n}xx")),
            _ => None,
        })
        .collect();
    if statuses.is_empty() {
        return None;
    }
    let kept: Vec<String> = grpc.iter().map(ToString::to_string).collect();
    let (key, still, fix) = if fact.name == super::gateway_api::LAYER {
        (
            "HTTPRoute retry `codes`",
            format!(
                "only the translation's own conditions apply ({})",
                kept.join(", ")
            ),
            "retry gRPC statuses with the implementation's gRPC retry (Envoy Gateway's BackendTrafficPolicy `retryOn.triggers`) or a gRPC service config",
        )
    } else if fact.name == super::linkerd::LAYER {
        // linkerd2-proxy's HTTP route retry has no gRPC codes
        // (`retryable_grpc_statuses: None`); it still retries a response
        // headers timeout.
        let still = if kept.is_empty() {
            "the layer retries nothing on it".to_owned()
        } else {
            format!("only {} is retried", kept.join(", "))
        };
        (
            "`retry.linkerd.io/http`",
            format!(
                "without a GRPCRoute among the sources Linkerd serves the call as HTTP, and its HTTP retry reads no gRPC status: {still}"
            ),
            "attach a GRPCRoute to the Service and retry gRPC statuses with `retry.linkerd.io/grpc`",
        )
    } else {
        return None;
    };
    // Linkerd without `retry.linkerd.io/http` retries 5xx: said at the
    // annotation that made the layer. A route without `codes` keeps only
    // the translation's conditions, which the gRPC ones already are.
    let at = match spans.retry_on {
        Some(at) => at,
        None if fact.name == super::linkerd::LAYER => spans.policy?,
        None => return None,
    };
    Some((
        At {
            file: fact.file,
            pos: at,
        },
        format!(
            "{key} ({}) match the HTTP status, but the call `{from}` → `{to}` is gRPC: a gRPC server answers its errors with HTTP 200 and the status in `grpc-status` trailers (gRPC's PROTOCOL-HTTP2.md), so the codes retry nothing on it; {still}; {fix}",
            statuses.join(", "),
        ),
    ))
}
