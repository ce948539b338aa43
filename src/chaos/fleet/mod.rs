//! Each service as its own process (`serve`), its admin port (health,
//! counters, Prometheus text, the start/stop API behind a token), and
//! `drive`, which loads a running fleet and collects every process's
//! counters; `resolve` and `peers` say where a callee listens.

pub(super) mod admin;
pub mod admission;
pub(super) mod collect;
pub(super) mod drive;
pub mod peers;
pub mod prometheus;
pub(super) mod resolve;
pub(super) mod serve;
pub mod token;
