//! Faults as a tower layer on a target's server: asks the run's fault plan
//! what to do to each arriving request (the plan rolls the ratio) and applies
//! the effect to the real request. `down` is applied by the listener (the
//! socket goes away, see `server.rs`); a request that slips in while the
//! listener closes is dropped like a reset.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::{HeaderValue, Request, Response, StatusCode};
use axum::response::IntoResponse;
use reqwest::header::RETRY_AFTER;
use tower::{Layer, Service};

use super::context::Run;
use super::draw::DrawKey;
use super::tier::OverloadCapacity;
use super::timer::sleep_until_precise;
use crate::faults::Effect;
use crate::policy::retry_after;
use crate::topology::ServiceId;

/// Why a server closed a connection without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Dropped {
    #[error("connection reset by the fault")]
    Reset,
    #[error("connection refused: the service is down")]
    Refused,
    #[error("the run ended while the request hung")]
    Hang,
}

#[derive(Clone)]
pub(crate) struct FaultLayer {
    pub run: Arc<Run>,
    pub service: ServiceId,
    /// The scenario targets the service; when not, requests pass untouched
    /// (no draw key read, no dice).
    pub active: bool,
}

impl<S> Layer<S> for FaultLayer {
    type Service = Fault<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Fault {
            inner,
            run: Arc::clone(&self.run),
            service: self.service,
            active: self.active,
        }
    }
}

#[derive(Clone)]
pub(crate) struct Fault<S> {
    inner: S,
    run: Arc<Run>,
    service: ServiceId,
    active: bool,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<Request<B>> for Fault<S>
where
    S: Service<Request<B>, Response = Response<axum::body::Body>, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<axum::body::Body>;
    type Error = Dropped;
    type Future = BoxFuture<Result<Self::Response, Dropped>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Dropped>> {
        // The inner service is an axum Router, which is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let mut inner = self.inner.clone();
        let run = Arc::clone(&self.run);
        let service = self.service;
        let active = self.active;
        Box::pin(async move {
            let ok = |r: Result<Self::Response, std::convert::Infallible>| match r {
                Ok(resp) => resp,
                Err(never) => match never {},
            };
            if !active {
                return Ok(ok(inner.call(req).await));
            }
            let now = run.now();
            let mut dice = DrawKey::from_headers(req.headers(), &run).fault_rng();
            let effect = run.plan.effect(service, now, &mut dice);
            match effect {
                None => Ok(ok(inner.call(req).await)),
                Some(Effect::Respond {
                    status,
                    retry_after,
                }) => {
                    let mut resp = StatusCode::from_u16(status)
                        .unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
                        .into_response();
                    if let Some(ra) = retry_after
                        && let Ok(v) = HeaderValue::from_str(&retry_after::header_value(ra))
                    {
                        resp.headers_mut().insert(RETRY_AFTER, v);
                    }
                    Ok(resp)
                }
                Some(Effect::Delay(d)) => {
                    // From the arrival, so the time spent getting here counts.
                    sleep_until_precise(run.instant(now.saturating_add(d))).await;
                    Ok(ok(inner.call(req).await))
                }
                Some(Effect::Hang) => {
                    run.metrics.dropped(service, Dropped::Hang);
                    run.cancel.cancelled().await;
                    Err(Dropped::Hang)
                }
                Some(Effect::Reset) => {
                    let _ = ok(inner.call(req).await);
                    Err(Dropped::Reset)
                }
                Some(Effect::Refuse) => Err(Dropped::Refused),
                Some(Effect::Overload { capacity }) => {
                    req.extensions_mut().insert(OverloadCapacity(capacity));
                    Ok(ok(inner.call(req).await))
                }
            }
        })
    }
}
