//! The admin port of a `serve` process: `/healthz`, `/metrics` (Prometheus
//! text, `report::prometheus`), `/retrylint/counters` (JSON, what `drive
//! --collect` reads), `POST /retrylint/start` and `POST /retrylint/stop`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::serve::{Served, StartError, StartRequest};
use crate::report::prometheus::{self, Exposition};

pub(crate) fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route(crate::export::command::HEALTH_PATH, get(healthz))
        .route(crate::export::command::METRICS_PATH, get(metrics))
        .route("/retrylint/counters", get(counters))
        .route("/retrylint/start", post(start))
        .route("/retrylint/stop", post(stop))
        .with_state(served)
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

async fn start(State(served): State<Arc<Served>>, body: Bytes) -> Response {
    let req: StartRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("a start request is JSON {{seed, fault, horizon_ns, grace_ns}}: {e}\n"),
            )
                .into_response();
        }
    };
    match served.start(&req).await {
        Ok(run) => json(&serde_json::json!({ "run": run })),
        Err(StartError::Mismatch(m)) => (StatusCode::CONFLICT, format!("{m}\n")).into_response(),
        Err(StartError::Chaos(e)) => {
            (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response()
        }
    }
}

async fn stop(State(served): State<Arc<Served>>) -> Response {
    served.stop().await;
    StatusCode::NO_CONTENT.into_response()
}
