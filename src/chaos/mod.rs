//! The chaos harness: boots the topology as real axum servers on 127.0.0.1,
//! each tier calling the next over real HTTP (reqwest) through its retry
//! layers — `via` layers as real retrying proxies — injects the scenario's
//! faults as a tower layer on the target servers, drives load through the
//! `client:` layer into the entry, and measures what happens.
//!
//! What a run means — services, overload, faults, retry layers, deadlines,
//! duplicates, load, counting — is stated once in `crate::run`, and the
//! harness implements it through the run kernel and the policy engine. What
//! is the harness's own: a network hop takes real time; after the horizon,
//! answers in flight get a grace period, and what is still open then is
//! unfinished; fault dice and work-time draws are keyed to each request
//! (`draw.rs`), not taken from a shared stream in arrival order, so a rerun
//! with the same seed differs only where real timing decides; the `client:`
//! layer is one caller per closed-loop client (own budget and random stream).
//!
//! Every run is seeded and bounded in time; every server and task belongs to
//! the run and is gone when [`run`] returns — after the load ends, on error,
//! and on Ctrl-C. Nothing here prints (the progress bar is opt-in).
//!
//! Three rooms. `harness/` is the run: `api` (the entry points), `boot`
//! (binding and wiring the servers), `server` (listening, down windows,
//! detaching work), `tier` (a service), `sidecar` (a `via` proxy), `client`
//! (one retrying layer), `transport` (reqwest between tiers), `fault_layer`
//! (faults on real requests), `metrics` (counters), `progress`, `context`
//! (what a run shares), `header`, `draw`, `caller`, `timer`, `workers`,
//! `descriptors`. `load/` sends the requests: `driver`, `drive_url` (the
//! driver against any URL), `http1` (its lean client), `standalone` (one
//! retrying request) and `fuzz_hook`. `fleet/` is each service as its own
//! process: `serve` with its `admin` port (`admission`: host, content type
//! and `token`; `prometheus`, the `/metrics` text), `drive` (the driver
//! against a running entry) with `collect` (the counters of every `serve`
//! process), `resolve` and `peers` (where a callee is).

pub mod fleet;
mod harness;
pub mod load;

pub(crate) use fleet::admin::{HEALTH_PATH, METRICS_PATH};
pub use fleet::admission::Admission;
pub use fleet::drive::{drive, drive_blocking};
pub use fleet::resolve::{Resolver, Unresolved};
pub use fleet::serve::{Bound, CountersAnswer, ServeConfig, serve, serve_blocking};
pub use fleet::token::{Token, TokenError};
pub use harness::api::{ChaosError, RunOptions, StopHandle, run, run_with};
pub use load::drive_url::drive_url;
pub use load::standalone::{StandaloneRequest, standalone_request_blocking};
