//! A service of the topology as a real HTTP handler, as `crate::run` states
//! the shared semantics: it gets a worker when it queues (`workers.rs`, or
//! is turned away), enters (the overload model of `crate::run::overload`),
//! does its own work (a seeded latency draw, slept precisely, the worker
//! held), then makes its calls group by group (`crate::run::calls`) — a
//! group's calls concurrently — each through its retry layers, and answers
//! with the last failure, if any, or 504 when it was marked. Work finished
//! after the caller hung up is wasted, and counted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::task::JoinSet;

use super::caller::{CallCtx, CallerState};
use super::client::LayerClient;
use super::context::{Run, lock};
use super::draw::DrawKey;
use super::header;
use super::server::CallerGone;
use super::timer::sleep_until_precise;
use super::workers::{Entry, Workers};
use crate::policy::{Outcome, retry_after};
use crate::run::overload::InFlight;
use crate::topology::{Latency, Queueing, ServiceId};

/// The capacity an `overload` fault imposes on this request's arrival.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OverloadCapacity(pub u32);

/// One call of the service, ready to send.
pub(crate) struct TierCall {
    pub method: reqwest::Method,
    pub path: Arc<str>,
    pub idempotent: bool,
    pub idempotency_key: bool,
    pub parallel: bool,
    /// The app layer, pointed at the first `via` sidecar or the callee.
    pub client: Arc<LayerClient>,
    /// The app layer's budget and random stream: the service is one caller.
    pub state: Arc<Mutex<CallerState>>,
}

pub(crate) struct Tier {
    pub run: Arc<Run>,
    pub id: ServiceId,
    pub latency: Latency,
    pub capacity: Option<u32>,
    pub workers: Option<Workers>,
    pub deadline_propagation: bool,
    pub calls: Vec<TierCall>,
    pub in_flight: Mutex<InFlight>,
}

impl Tier {
    pub(crate) fn new(
        run: Arc<Run>,
        id: ServiceId,
        latency: Latency,
        capacity: Option<u32>,
        queueing: Option<Queueing>,
        deadline_propagation: bool,
        calls: Vec<TierCall>,
    ) -> Self {
        Tier {
            run,
            id,
            latency,
            capacity,
            workers: queueing.map(|q| Workers::new(id, q)),
            deadline_propagation,
            calls,
            in_flight: Mutex::default(),
        }
    }
}

/// The deadline a request carries, as absolute run time.
pub(crate) fn incoming_deadline(headers: &HeaderMap, run: &Run) -> Option<Duration> {
    let us = header::number(headers, header::DEADLINE_US)?;
    Some(run.now().saturating_add(Duration::from_micros(us)))
}

fn status(code: u16) -> Response {
    StatusCode::from_u16(code)
        .unwrap_or(StatusCode::BAD_GATEWAY)
        .into_response()
}

/// A full queue's answer, with Retry-After when the service sends one.
fn rejected(code: u16, retry: Option<Duration>) -> Response {
    let mut resp = status(code);
    if let Some(ra) = retry
        && let Ok(v) = HeaderValue::from_str(&retry_after::header_value(ra))
    {
        resp.headers_mut().insert(RETRY_AFTER, v);
    }
    resp
}

/// The axum handler of a tier server.
pub(crate) async fn handle(State(tier): State<Arc<Tier>>, req: Request) -> Response {
    let run = &tier.run;
    let _working = run.work.token();
    let headers = req.headers();
    let deadline = if tier.deadline_propagation {
        incoming_deadline(headers, run)
    } else {
        None
    };
    if deadline.is_some_and(|d| run.now() >= d) {
        // Nobody waits for the answer any more: do not start the work.
        return status(504);
    }
    let non_idempotent = headers.contains_key(header::NON_IDEMPOTENT);
    let keyed = headers.contains_key(header::IDEMPOTENCY_KEY);
    let request_id = header::number(headers, header::REQUEST_ID);
    let draw = DrawKey::from_headers(headers, run);
    let capacity = req
        .extensions()
        .get::<OverloadCapacity>()
        .map(|c| c.0)
        .or(tier.capacity);
    let gone = req.extensions().get::<CallerGone>().cloned();
    drop(req);
    // Drawn before the queue: it must know whether the request can still
    // finish by its deadline (`crate::run::queueing`).
    let work = tier.latency.sample(&mut draw.work_rng());
    let worker = match &tier.workers {
        None => None,
        Some(workers) => match workers
            .enter(run, deadline.map(|d| d.saturating_sub(work)))
            .await
        {
            Entry::Worker(w) => Some(w),
            Entry::Rejected {
                status: code,
                retry_after,
            } => return rejected(code, retry_after),
            Entry::Expired => return status(504),
        },
    };
    let ticket = lock(&tier.in_flight).enter(capacity);
    if non_idempotent
        && !keyed
        && let Some(id) = request_id
    {
        run.metrics.executed(tier.id, id);
    }
    if let Some(w) = &worker {
        w.serve(work);
    }
    sleep_until_precise(tokio::time::Instant::now() + work).await;
    drop(worker);
    if gone.is_some_and(|g| g.hung_up()) {
        run.metrics.wasted(tier.id);
    }
    let result = run_calls(&tier, deadline, draw).await;
    let marked = lock(&tier.in_flight).leave(ticket);
    if marked {
        return status(504);
    }
    match result {
        Ok(()) => (StatusCode::OK, Body::from("ok")).into_response(),
        Err(outcome) => status(outcome.propagated_status()),
    }
}

/// Makes the calls in order, groups of consecutive `parallel` calls together,
/// every one of them; the result is the last failure seen, if any.
async fn run_calls(
    tier: &Arc<Tier>,
    deadline: Option<Duration>,
    draw: DrawKey,
) -> Result<(), Outcome> {
    let mut failure = None;
    for group_calls in crate::run::calls::groups(tier.calls.len(), |i| tier.calls[i].parallel) {
        if group_calls.len() == 1 {
            if let Err(outcome) = one_call(tier, group_calls.start, deadline, draw).await {
                failure = Some(outcome);
            }
        } else {
            let mut group = JoinSet::new();
            for ci in group_calls {
                let tier = Arc::clone(tier);
                group.spawn(async move { one_call(&tier, ci, deadline, draw).await });
            }
            while let Some(done) = group.join_next().await {
                match done {
                    Ok(Ok(())) => {}
                    Ok(Err(outcome)) => failure = Some(outcome),
                    Err(_) => failure = Some(Outcome::Reset),
                }
            }
        }
    }
    failure.map_or(Ok(()), Err)
}

async fn one_call(
    tier: &Tier,
    ci: usize,
    deadline: Option<Duration>,
    draw: DrawKey,
) -> Result<(), Outcome> {
    let call = &tier.calls[ci];
    let request_id = tier.run.next_request_id();
    let ctx = CallCtx {
        request_id,
        method: call.method.clone(),
        path: call.path.clone(),
        non_idempotent: !call.idempotent,
        idempotency_key: call.idempotency_key.then(|| request_id.to_string()),
        deadline,
        draw: draw.call(ci),
    };
    let result = call.client.call(&call.state, &ctx).await;
    if result.outcome.is_success() {
        Ok(())
    } else {
        Err(result.outcome)
    }
}
