//! The chaos run itself: the servers of a topology booted in one process,
//! their retrying layers and sidecars, faults on real requests, and what the
//! run counts.

pub(super) mod api;
pub(super) mod boot;
pub(super) mod caller;
pub(super) mod client;
pub(super) mod context;
pub(super) mod descriptors;
pub(super) mod draw;
pub(super) mod fault_layer;
pub(super) mod header;
pub(super) mod metrics;
pub(super) mod progress;
pub(super) mod server;
pub(super) mod sidecar;
pub(super) mod tier;
pub(super) mod timer;
pub(super) mod transport;
pub(super) mod workers;
