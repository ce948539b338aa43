//! Open file descriptors: every listener, and both ends of every loopback
//! connection, are descriptors of this one process. A run that runs out of
//! them would show refused connections and 502s that no fault injected, so
//! the harness raises its soft limit to the hard one at start, estimates
//! what the topology and the load need, refuses a run that cannot fit even
//! one user request, warns when the estimate is past the limit, and counts
//! every failure that was really the limit's.
//!
//! The estimate: one listener per service and per `via` sidecar; per user
//! request in flight, both ends of one connection per hop on its deepest
//! path (a parallel group holds all its calls' hops at once); plus a margin
//! for the runtime, standard streams and the HTTP client's own.

use std::io;

use crate::topology::Topology;

/// Descriptors the process uses besides listeners and connections.
const MARGIN: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the limit now
/// in force (`None`: unknown, or unlimited).
pub(crate) fn raise_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let now = getrlimit(Resource::Nofile);
        if now.current != now.maximum {
            let raised = Rlimit {
                current: now.maximum,
                maximum: now.maximum,
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                return now.maximum;
            }
        }
        now.current
    }
    #[cfg(not(unix))]
    None
}

/// What a run of `t` with `in_flight` user requests at once needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Need {
    pub listeners: u64,
    /// Connections one user request holds at once, at worst.
    pub per_request: u64,
    pub in_flight: u64,
}

impl Need {
    pub(crate) fn of(t: &Topology, in_flight: u64) -> Need {
        let sidecars: usize = t.calls().map(|c| c.layers.len().saturating_sub(1)).sum();
        Need {
            listeners: (t.services.len() + sidecars) as u64,
            per_request: 1 + connections_below(t),
            in_flight,
        }
    }

    /// With `in_flight` requests at once.
    pub(crate) fn total(&self) -> u64 {
        self.descriptors_for(self.in_flight)
    }

    /// The least a run needs: one user request at a time.
    pub(crate) fn minimum(&self) -> u64 {
        self.descriptors_for(1)
    }

    fn descriptors_for(&self, requests: u64) -> u64 {
        // Both ends of each connection live in this process.
        self.listeners
            .saturating_add(requests.saturating_mul(self.per_request).saturating_mul(2))
            .saturating_add(MARGIN)
    }
}

/// Connections a request at the entry holds at once at worst below it: one
/// per hop (a call through n layers is n connections), the deepest group of
/// each service, all calls of a parallel group together.
fn connections_below(t: &Topology) -> u64 {
    let order = crate::topology::graph::topo_order(t);
    let mut below = vec![0u64; t.services.len()];
    for &s in order.iter().rev() {
        let svc = &t.services[s];
        below[s] = crate::run::calls::groups(svc.calls.len(), |i| svc.calls[i].parallel)
            .map(|g| {
                g.map(|i| {
                    let c = &svc.calls[i];
                    (c.layers.len().max(1) as u64).saturating_add(below[c.to])
                })
                .fold(0u64, u64::saturating_add)
            })
            .max()
            .unwrap_or(0);
    }
    below[t.entry]
}

/// Whether `e` is the process (or the system) out of file descriptors.
pub(crate) fn is_exhaustion(e: &io::Error) -> bool {
    // EMFILE and ENFILE on Linux and the BSDs.
    matches!(e.raw_os_error(), Some(24 | 23))
}

/// The same for any error whose chain holds an I/O error (reqwest, hyper).
pub(crate) fn in_chain(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(err) = at {
        if let Some(io) = err.downcast_ref::<io::Error>()
            && is_exhaustion(io)
        {
            return true;
        }
        at = err.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_holds_a_connection_per_hop_of_its_deepest_path() {
        let t = crate::topology::load_str(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b, via: [ { name: mesh } ] }, c ] }\n  b: { calls: [ { to: d, parallel: true }, { to: c, parallel: true } ] }\n  c: {}\n  d: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        let need = Need::of(&t, 10);
        // a → mesh → b (2 hops), then b → d and b → c together (2): 4 below
        // a, plus the driver's connection to a.
        assert_eq!(need.per_request, 5);
        assert_eq!(need.listeners, 5, "four services and the mesh sidecar");
        assert_eq!(need.total(), 5 + 10 * 5 * 2 + MARGIN);
        assert_eq!(need.minimum(), 5 + 5 * 2 + MARGIN);
        assert!(is_exhaustion(&io::Error::from_raw_os_error(24)));
        assert!(!is_exhaustion(&io::Error::from_raw_os_error(111)));
    }
}
