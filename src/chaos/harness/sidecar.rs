//! A `via` layer as a real retrying proxy (an SDK, a mesh sidecar, a gateway)
//! in front of the next hop of one call. It forwards the logical request with
//! its own policy, and answers with the last response it got, Retry-After
//! included, or the propagated status of its last failure.
//!
//! Unlike a tier, a sidecar stops when its caller hangs up (Envoy resets the
//! upstream stream when the downstream one goes away), so its handler is not
//! detached from the connection.

use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use reqwest::header::RETRY_AFTER;

use super::caller::{CallCtx, CallerState};
use super::client::LayerClient;
use super::draw::DrawKey;
use super::header;
use super::tier::incoming_deadline;
use crate::policy::retry_after;

pub(crate) struct Sidecar {
    pub client: LayerClient,
    /// The proxy is one caller: one budget, one random stream.
    pub state: Mutex<CallerState>,
}

pub(crate) async fn handle(State(proxy): State<Arc<Sidecar>>, req: Request) -> Response {
    let headers = req.headers();
    let run = &proxy.client.run;
    let deadline = incoming_deadline(headers, run);
    if deadline.is_some_and(|d| run.now() >= d) {
        return StatusCode::GATEWAY_TIMEOUT.into_response();
    }
    let ctx = CallCtx {
        request_id: header::number(headers, header::REQUEST_ID)
            .unwrap_or_else(|| run.next_request_id()),
        method: req.method().clone(),
        path: req
            .uri()
            .path_and_query()
            .map_or_else(|| "/".into(), |p| p.as_str().into()),
        non_idempotent: headers.contains_key(header::NON_IDEMPOTENT),
        idempotency_key: headers
            .get(header::IDEMPOTENCY_KEY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        deadline,
        draw: DrawKey::from_headers(headers, run),
    };
    drop(req);
    let result = proxy.client.call(&proxy.state, &ctx).await;
    let code = match result.outcome {
        crate::policy::Outcome::Status(s) => s,
        other => other.propagated_status(),
    };
    let mut resp = StatusCode::from_u16(code)
        .unwrap_or(StatusCode::BAD_GATEWAY)
        .into_response();
    if let Some(ra) = result.retry_after
        && let Ok(v) = HeaderValue::from_str(&retry_after::header_value(ra))
    {
        resp.headers_mut().insert(RETRY_AFTER, v);
    }
    resp
}
