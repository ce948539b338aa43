//! Booting a run: binds every server on 127.0.0.1 (OS-assigned ports), wires
//! each tier's calls through their retry layers — `via` layers as real
//! retrying proxies on their own ports — puts the fault layer and the meter
//! in front of every tier, and builds the load driver for the entry.
//!
//! One service boots alone ([`boot_service`]): its callees come from a
//! [`Resolver`], so the same wiring serves the whole topology in one process
//! (`chaos`) and one service per process (`retrylint serve`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;

use super::api::{ChaosError, STREAM_LAYERS};
use super::caller::CallerState;
use super::client::LayerClient;
use super::context::Run;
use super::fault_layer::FaultLayer;
use super::server::{self, Detach, Meter};
use super::transport::{DirectPool, Transport};
use super::{sidecar, tier};
use crate::chaos::fleet::resolve::Resolver;
use crate::chaos::load::driver::Driver;
use crate::run::{Layout, Listener, LoadSettings};
use crate::topology::{ServiceId, Topology};

/// Binds every server, wires tiers, sidecars and the client layer, and starts
/// serving. Returns where everything listens and the load driver.
pub(crate) fn boot(
    run: &Arc<Run>,
    t: &Topology,
    layout: &Layout,
    load: &LoadSettings,
    max_in_flight: usize,
) -> Result<(Vec<Listener>, Arc<Driver>), ChaosError> {
    let mut listeners = Vec::new();
    let mut sockets = Vec::with_capacity(t.services.len());
    for s in &t.services {
        let l = server::bind(0).map_err(ChaosError::Bind)?;
        let addr = l.local_addr().map_err(ChaosError::Bind)?;
        listeners.push(Listener {
            name: s.name.clone(),
            addr: addr.to_string(),
        });
        sockets.push((l, addr));
    }
    let resolver = Resolver::Local(sockets.iter().map(|(_, a)| format!("http://{a}")).collect());
    let entry_addr = sockets[t.entry].1;
    let mut sidecars = Vec::new();
    for (sid, (l, _)) in sockets.into_iter().enumerate() {
        sidecars.extend(boot_service(run, t, layout, load, sid, l, &resolver)?);
    }
    listeners.extend(sidecars);
    let driver = driver(
        run,
        t,
        load,
        format!("http://{entry_addr}"),
        entry_addr,
        "/",
        max_in_flight,
    );
    Ok((listeners, driver))
}

/// Wires service `sid` — its calls through their retry layers, a sidecar on
/// its own loopback port for every `via` layer, the fault layer and the meter
/// — and serves it on `listener` until the run ends. Its callees are found
/// through `resolver`. Returns where its sidecars listen.
pub(crate) fn boot_service(
    run: &Arc<Run>,
    t: &Topology,
    layout: &Layout,
    load: &LoadSettings,
    sid: ServiceId,
    listener: TcpListener,
    resolver: &Resolver,
) -> Result<Vec<Listener>, ChaosError> {
    let s = &t.services[sid];
    let callees = resolver.callees(t, sid)?;
    let mut listeners = Vec::new();
    // Sidecar sockets: `vias[c][li - 1]` for layer li ≥ 1 of call c.
    let mut vias = Vec::with_capacity(s.calls.len());
    for c in &s.calls {
        let mut per_call = Vec::new();
        for layer in c.layers.iter().skip(1) {
            let l = server::bind(0).map_err(ChaosError::Bind)?;
            let addr = l.local_addr().map_err(ChaosError::Bind)?;
            listeners.push(Listener {
                name: format!("{}→{}/{}", s.name, t.services[c.to].name, layer.name),
                addr: addr.to_string(),
            });
            per_call.push((l, format!("http://{addr}")));
        }
        vias.push(per_call);
    }
    let mut calls = Vec::with_capacity(s.calls.len());
    for (ci, c) in s.calls.iter().enumerate() {
        let vias = &mut vias[ci];
        let n = c.layers.len();
        let callee_url = callees.get(&c.to).cloned().unwrap_or_default();
        // Layer li sends to sidecar li + 1, the last one to the callee.
        let next_url = |li: usize, vias: &Vec<(TcpListener, String)>| {
            if li + 1 < n {
                vias[li].1.clone()
            } else {
                callee_url.clone()
            }
        };
        let client_for = |li: usize, vias: &Vec<(TcpListener, String)>| {
            let layer = &c.layers[li];
            LayerClient {
                run: Arc::clone(run),
                slot: layout.slot(sid, ci, li),
                policy: layer.policy.clone(),
                timeout: layer.timeout.map(|l| l.value),
                url: next_url(li, vias),
                transport: Transport::Reqwest(run.http.clone()),
                callee: (li + 1 == n).then_some(c.to),
                propagate_deadline: s.deadline_propagation,
                hedging: layer.hedging.as_ref().map(|h| h.value.clone()),
            }
        };
        let breaker_of = |li: usize| c.layers[li].breaker.as_ref().map(|b| &b.value);
        let app = client_for(0, vias);
        let sidecars: Vec<LayerClient> = (1..n).map(|li| client_for(li, vias)).collect();
        for (li, (client, (listener, _))) in sidecars.into_iter().zip(vias.drain(..)).enumerate() {
            let seed = load.stream_seed(STREAM_LAYERS + layout.slot(sid, ci, li + 1) as u64);
            let state = CallerState::new(client.policy.budget.as_ref(), breaker_of(li + 1), seed);
            let proxy = Arc::new(sidecar::Sidecar { client, state });
            let router = Router::new().fallback(sidecar::handle).with_state(proxy);
            server::serve(run, listener, Vec::new(), router);
        }
        let seed = load.stream_seed(STREAM_LAYERS + layout.slot(sid, ci, 0) as u64);
        let path = match &c.path {
            Some(p) if p.starts_with('/') => p.clone(),
            Some(p) => format!("/{p}"),
            None => "/".into(),
        };
        calls.push(tier::TierCall {
            method: reqwest::Method::from_bytes(c.method.value.as_bytes())
                .unwrap_or(reqwest::Method::GET),
            path: path.into(),
            idempotent: c.idempotent,
            idempotency_key: c.idempotency_key,
            parallel: c.parallel,
            state: Arc::new(CallerState::new(
                app.policy.budget.as_ref(),
                breaker_of(0),
                seed,
            )),
            client: Arc::new(app),
        });
    }
    let tier = Arc::new(tier::Tier::new(
        Arc::clone(run),
        sid,
        s.latency,
        s.capacity.map(|c| c.value),
        s.queueing.map(|q| q.value),
        s.deadline_propagation,
        calls,
    ));
    let router = Router::new().fallback(tier::handle).with_state(tier);
    let faults = tower::Layer::layer(
        &FaultLayer {
            run: Arc::clone(run),
            service: sid,
            active: run.plan.is_target(sid),
        },
        router,
    );
    let svc = Detach {
        inner: Meter {
            inner: faults,
            run: Arc::clone(run),
            service: sid,
        },
        run: Arc::clone(run),
    };
    server::serve(run, listener, run.plan.down_windows(sid), svc);
    Ok(listeners)
}

/// The load driver: user requests through the topology's `client:` layer
/// into the entry at `entry_url` (`entry_addr` resolved), asking for `path`.
pub(crate) fn driver(
    run: &Arc<Run>,
    t: &Topology,
    load: &LoadSettings,
    entry_url: String,
    entry_addr: SocketAddr,
    path: &str,
    max_in_flight: usize,
) -> Arc<Driver> {
    let client_layer = t.client.as_ref();
    let client = LayerClient {
        run: Arc::clone(run),
        slot: Layout::CLIENT,
        policy: client_layer.map(|l| l.policy.clone()).unwrap_or_default(),
        timeout: client_layer.and_then(|l| l.timeout.map(|x| x.value)),
        url: entry_url,
        transport: Transport::Direct(DirectPool::new(entry_addr)),
        callee: Some(t.entry),
        propagate_deadline: t.deadline.is_some(),
        hedging: None,
    };
    Arc::new(Driver {
        run: Arc::clone(run),
        budget: client.policy.budget.clone(),
        breaker: client_layer.and_then(|l| l.breaker.as_ref().map(|b| b.value.clone())),
        client: Arc::new(client),
        deadline: t.deadline.map(|d| d.value),
        load: load.clone(),
        path: path.into(),
        max_in_flight,
        started: Default::default(),
        finished: Default::default(),
    })
}
