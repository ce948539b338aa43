//! A service of the topology as a real HTTP handler (DESIGN, "Semantics
//! shared by the simulator and the chaos harness"): it does its own work (a
//! seeded latency draw), then makes its calls in order — concurrently where
//! `parallel` — each through its retry layers. Every call is made even when an
//! earlier one failed (each is a dependency the request needs, and this is the
//! case the static worst case counts: the sum over all call paths); once all
//! are done, a request with a failed call answers at once with the last
//! failure it saw, propagated (the same status, 504 for a timeout, 502 for a
//! reset or refused connection).
//!
//! Capacity follows DESIGN's overload model: when an arriving request raises
//! the number in flight above capacity, every request then in flight is
//! marked; a marked request keeps its slot for its full service time and then
//! answers 504.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::task::JoinSet;

use super::client::LayerClient;
use super::context::{CallCtx, CallerState, DrawKey, Run, header, lock, sleep_until_precise};
use crate::policy::Outcome;
use crate::topology::{Latency, ServiceId};

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
    pub deadline_propagation: bool,
    pub calls: Vec<TierCall>,
    pub in_flight: InFlight,
}

impl Tier {
    pub fn new(
        run: Arc<Run>,
        id: ServiceId,
        latency: Latency,
        capacity: Option<u32>,
        deadline_propagation: bool,
        calls: Vec<TierCall>,
    ) -> Self {
        Tier {
            run,
            id,
            latency,
            capacity,
            deadline_propagation,
            calls,
            in_flight: InFlight::default(),
        }
    }
}

/// In-flight accounting for the overload model.
#[derive(Default)]
pub(crate) struct InFlight {
    /// (requests in flight, overflow events so far)
    state: Mutex<(u64, u64)>,
}

/// A request's place in flight.
#[derive(Debug)]
pub(crate) struct Ticket {
    overflows_seen: u64,
}

impl InFlight {
    /// A request arrives; with `capacity`, raising the count above it is an
    /// overflow that marks every request in flight, this one included.
    pub fn enter(&self, capacity: Option<u32>) -> Ticket {
        let mut s = lock(&self.state);
        s.0 += 1;
        if capacity.is_some_and(|c| s.0 > u64::from(c)) {
            s.1 += 1;
            return Ticket {
                overflows_seen: s.1 - 1,
            };
        }
        Ticket {
            overflows_seen: s.1,
        }
    }

    /// The request ends; whether it was marked while in flight.
    pub fn leave(&self, ticket: Ticket) -> bool {
        let mut s = lock(&self.state);
        s.0 = s.0.saturating_sub(1);
        s.1 > ticket.overflows_seen
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

/// The axum handler of a tier server.
pub(crate) async fn handle(State(tier): State<Arc<Tier>>, req: Request) -> Response {
    let run = &tier.run;
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
    drop(req);
    let ticket = tier.in_flight.enter(capacity);
    if non_idempotent
        && !keyed
        && let Some(id) = request_id
    {
        run.metrics.executed(tier.id, id);
    }
    let work = tier.latency.sample(&mut draw.work_rng());
    sleep_until_precise(tokio::time::Instant::now() + work).await;
    let result = run_calls(&tier, deadline, draw).await;
    let marked = tier.in_flight.leave(ticket);
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
    let mut i = 0;
    while i < tier.calls.len() {
        let end = if tier.calls[i].parallel {
            i + tier.calls[i..].iter().take_while(|c| c.parallel).count()
        } else {
            i + 1
        };
        if end - i == 1 {
            if let Err(outcome) = one_call(tier, i, deadline, draw).await {
                failure = Some(outcome);
            }
        } else {
            let mut group = JoinSet::new();
            for ci in i..end {
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
        i = end;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_marks_everyone_in_flight_and_only_them() {
        let f = InFlight::default();
        let a = f.enter(Some(2));
        let b = f.enter(Some(2));
        let c = f.enter(Some(2)); // 3 > 2: a, b and c are marked
        assert!(f.leave(a));
        assert!(f.leave(b));
        let d = f.enter(Some(2)); // c and d: 2 in flight, d unmarked
        assert!(f.leave(c));
        assert!(!f.leave(d));
        let e = f.enter(Some(1));
        let g = f.enter(Some(1)); // 2 > 1: both marked
        assert!(f.leave(e) && f.leave(g));
        let h = f.enter(None);
        assert!(!f.leave(h));
    }
}
