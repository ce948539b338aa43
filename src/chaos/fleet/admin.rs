//! The admin port of a `serve` process: `/healthz`, `/metrics` (Prometheus
//! text, `prometheus.rs`), `/retrylint/counters` (JSON, what `drive
//! --collect` reads), `POST /retrylint/start` and `POST /retrylint/stop`
//! (guarded by `admission.rs`, their bodies bounded). Its own accept loop,
//! not `axum::serve`, so that a connection that trickles its request head
//! is closed after the header timeout.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::prometheus::{self, Exposition};
use super::serve::{Served, StartError, StartRequest, StopRequest};

/// Where the admin port answers health checks and Prometheus scrapes; the
/// exported manifests probe and scrape these (`export::command`).
pub(crate) const HEALTH_PATH: &str = "/healthz";
pub(crate) const METRICS_PATH: &str = "/metrics";

/// The largest start or stop body read; a real one is under 200 bytes.
pub(crate) const MAX_BODY: usize = 16 * 1024;

pub(crate) fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route(HEALTH_PATH, get(healthz))
        .route(METRICS_PATH, get(metrics))
        .route("/retrylint/counters", get(counters))
        .route("/retrylint/start", post(start))
        .route("/retrylint/stop", post(stop))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(served)
}

/// Answers `router` on `listener` until `stop`; then closes the listener
/// and cuts the connections still open.
pub(crate) async fn listen(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    stop: CancellationToken,
) {
    let connections = TaskTracker::new();
    let cut = CancellationToken::new();
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let svc = TowerToHyperService::new(router.clone());
                    let cut = cut.clone();
                    connections.spawn(async move {
                        let conn = crate::chaos::harness::server::http1(header_timeout)
                            .serve_connection(TokioIo::new(stream), svc);
                        tokio::select! {
                            _ = conn => {}
                            _ = cut.cancelled() => {}
                        }
                    });
                }
                // Out of descriptors, or a connection aborted before accept.
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            },
        }
    }
    drop(listener);
    cut.cancel();
    connections.close();
    connections.wait().await;
}

async fn healthz() -> &'static str {
    "ok\n"
}

fn json(value: &impl serde::Serialize) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn counters(State(served): State<Arc<Served>>) -> Response {
    json(&served.counters().await)
}

async fn metrics(State(served): State<Arc<Served>>) -> Response {
    let answer = served.counters().await;
    let c = &served.config;
    let elapsed = Duration::from_nanos(answer.elapsed_ns);
    let phase = answer
        .running
        .then(|| served.plan.phase_at(c.service, elapsed))
        .flatten()
        .map(|p| {
            let index = served
                .plan
                .phases
                .iter()
                .position(|q| std::ptr::eq(q, p))
                .unwrap_or(0);
            (index, p.inject.kind())
        });
    let text = prometheus::render(&Exposition {
        topology: &c.topology,
        layout: &served.layout,
        service: c.service,
        snapshot: &answer.snapshot,
        run: answer.run,
        running: answer.running,
        elapsed,
        fault: &c.scenario.name,
        target: served.plan.is_target(c.service),
        phase,
    });
    ([(header::CONTENT_TYPE, prometheus::CONTENT_TYPE)], text).into_response()
}

fn refused(status: StatusCode, text: impl std::fmt::Display) -> Response {
    (status, format!("{text}\n")).into_response()
}

fn answer(result: Result<Response, StartError>) -> Response {
    match result {
        Ok(r) => r,
        Err(e @ (StartError::Mismatch(_) | StartError::Busy(_))) => {
            refused(StatusCode::CONFLICT, e)
        }
        Err(StartError::Chaos(e)) => refused(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// The admission checks, then the body as a `T` within its bounds.
fn admit<T: serde::de::DeserializeOwned>(
    served: &Served,
    headers: &HeaderMap,
    body: &[u8],
    shape: &str,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<T, (StatusCode, String)> {
    served.config.admission.check(headers)?;
    let bad = |e: String| (StatusCode::BAD_REQUEST, format!("{e}\n"));
    let req: T =
        serde_json::from_slice(body).map_err(|e| bad(format!("the body is JSON {shape}: {e}")))?;
    check(&req).map_err(bad)?;
    Ok(req)
}

async fn start(State(served): State<Arc<Served>>, headers: HeaderMap, body: Bytes) -> Response {
    let shape = "{run_id, seed, fault, horizon_ns, grace_ns}";
    let req = match admit(&served, &headers, &body, shape, StartRequest::check) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    answer(
        served
            .start(&req)
            .await
            .map(|run| json(&serde_json::json!({ "run": run }))),
    )
}

async fn stop(State(served): State<Arc<Served>>, headers: HeaderMap, body: Bytes) -> Response {
    // An empty body stops whatever runs (a person with the token, by hand).
    let body: &[u8] = if body.is_empty() { b"{}" } else { &body };
    let req = match admit(&served, &headers, body, "{run_id}", StopRequest::check) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    answer(
        served
            .stop(&req)
            .await
            .map(|()| StatusCode::NO_CONTENT.into_response()),
    )
}
