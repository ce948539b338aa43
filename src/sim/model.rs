//! The topology, fault plan and load compiled once per run into what a trial
//! reads on its hot path: flat vectors indexed by service and by retry-layer
//! slot, times in nanoseconds. Shared read-only by every thread.
//!
//! Layers are indexed by their slot (`crate::run::slots::Layout`), the same
//! numbering the chaos harness and the report use.

use std::time::Duration;

use super::queue::Nanos;
use crate::faults::{FaultPlan, Scenario};
use crate::policy::{BreakerSpec, HedgingPolicy, RetryPolicy};
use crate::run::{Arrival, Layout, LoadSettings};
use crate::topology::{Latency, Topology};

/// Where an attempt of a layer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// The next `via` layer (a sidecar, an SDK), by slot.
    Layer(u32),
    /// The callee itself.
    Service(u32),
}

#[derive(Debug, Clone)]
pub(crate) struct LayerModel {
    pub policy: RetryPolicy,
    pub breaker: Option<BreakerSpec>,
    pub hedging: Option<HedgingPolicy>,
    /// Per-attempt timeout; `None` waits as long as it takes.
    pub timeout: Option<Nanos>,
    /// Sends the remaining time downstream (the caller has
    /// `deadline_propagation: true`; the client layer when the topology has a
    /// `deadline`).
    pub propagate: bool,
    pub next: Next,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct CallModel {
    /// Slot of the call's app layer; its `via` layers follow.
    pub(crate) first_layer: u32,
    /// Non-idempotent and sent without an Idempotency-Key: a second execution
    /// of the same logical request is a duplicate.
    pub(crate) tracked: bool,
    pub parallel: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct ServiceModel {
    pub latency: Latency,
    /// The topology's `capacity:`: the overload model at all times.
    pub capacity: Option<u32>,
    /// Workers and a bounded queue (`capacity: { workers, queue }`).
    pub queueing: Option<crate::topology::Queueing>,
    /// Honours an incoming deadline and propagates its own.
    pub deadline_propagation: bool,
    pub calls: Vec<CallModel>,
    /// The fault scenario targets it.
    pub target: bool,
    /// Its queue depth is the goodput series' (`run::queueing::watched`).
    pub(crate) watched_queue: bool,
    /// Starts of the windows in which it is down, ascending: connections open
    /// at that moment are cut.
    pub(crate) down_starts: Vec<Nanos>,
}

#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub services: Vec<ServiceModel>,
    /// Indexed by slot.
    pub layers: Vec<LayerModel>,
    pub plan: FaultPlan,
    pub load: LoadSettings,
    /// No attempt starts at or after it.
    pub horizon: Nanos,
    /// The topology's end-to-end deadline of one user request.
    pub deadline: Option<Nanos>,
}

/// The client layer's slot.
pub(crate) const CLIENT: u32 = 0;

pub(crate) fn nanos(d: Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Model {
    pub(super) fn new(
        t: &Topology,
        scenario: &Scenario,
        load: &LoadSettings,
    ) -> Result<Self, super::SimError> {
        let plan = scenario.plan(t)?;
        crate::run::arrivals::Schedule::new(load, &plan, 0)?;
        let layout = Layout::new(t);
        let mut layers = Vec::with_capacity(layout.slots());
        let client = t.client.as_ref();
        layers.push(LayerModel {
            policy: client.map(|l| l.policy.clone()).unwrap_or_default(),
            breaker: client.and_then(|l| l.breaker.as_ref().map(|b| b.value.clone())),
            hedging: None,
            timeout: client.and_then(|l| l.timeout).map(|x| nanos(x.value)),
            propagate: t.deadline.is_some(),
            next: Next::Service(t.entry as u32),
        });
        let mut services = Vec::with_capacity(t.services.len());
        for (id, s) in t.services.iter().enumerate() {
            let mut calls = Vec::with_capacity(s.calls.len());
            for (ci, c) in s.calls.iter().enumerate() {
                let first = layers.len() as u32;
                debug_assert_eq!(first as usize, layout.slot(id, ci, 0));
                let n = c.layers.len();
                for (li, layer) in c.layers.iter().enumerate() {
                    layers.push(LayerModel {
                        policy: layer.policy.clone(),
                        breaker: layer.breaker.as_ref().map(|b| b.value.clone()),
                        hedging: layer.hedging.as_ref().map(|h| h.value.clone()),
                        timeout: layer.timeout.map(|x| nanos(x.value)),
                        propagate: s.deadline_propagation,
                        next: if li + 1 < n {
                            Next::Layer(first + li as u32 + 1)
                        } else {
                            Next::Service(c.to as u32)
                        },
                    });
                }
                if n == 0 {
                    // A call without layers still has its slot: a layer that
                    // never retries.
                    layers.push(LayerModel {
                        policy: RetryPolicy::default(),
                        breaker: None,
                        hedging: None,
                        timeout: None,
                        propagate: s.deadline_propagation,
                        next: Next::Service(c.to as u32),
                    });
                }
                calls.push(CallModel {
                    first_layer: first,
                    tracked: !c.idempotent && !c.idempotency_key,
                    parallel: c.parallel,
                });
            }
            services.push(ServiceModel {
                latency: s.latency,
                capacity: s.capacity.map(|c| c.value),
                queueing: s.queueing.map(|q| q.value),
                deadline_propagation: s.deadline_propagation,
                calls,
                target: plan.is_target(id),
                watched_queue: false,
                down_starts: plan
                    .down_windows(id)
                    .into_iter()
                    .map(|(start, _)| nanos(start))
                    .collect(),
            });
        }
        let queues: Vec<bool> = services.iter().map(|s| s.queueing.is_some()).collect();
        let targets: Vec<bool> = services.iter().map(|s| s.target).collect();
        for (s, w) in services
            .iter_mut()
            .zip(crate::run::queueing::watched(&queues, &targets))
        {
            s.watched_queue = w;
        }
        Ok(Model {
            services,
            layers,
            plan,
            load: load.clone(),
            horizon: nanos(load.horizon()),
            deadline: t.deadline.map(|d| nanos(d.value)),
        })
    }

    pub(crate) fn closed_loop_clients(&self) -> Option<u32> {
        match self.load.arrival {
            Arrival::Clients(n) => Some(n),
            Arrival::Rate(_) => None,
        }
    }
}
