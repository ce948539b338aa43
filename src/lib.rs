//! retrylint: finds retry storms before production does.
//!
//! The flow is one way: `input` reads files and their spans (the located
//! YAML tree is the workspace crate `retrylint-yaml`, `crates/retrylint-yaml`,
//! re-exported as `input::yaml`); `topology`
//! turns YAML into `policy` values, merged with what `external` reads where
//! it lives (mesh, gateway and gRPC configuration, traces); `prediction`
//! counts what a call chain may send; `lint` analyses them; `chaos` runs them
//! for real on loopback under `faults`, `sim` in virtual time over seeded
//! trials; `run` holds the plain results of a run; `probe` measures a real
//! client's retry policy against scripted faults; `export` lays the topology
//! out as Kubernetes or Compose manifests; `fix` turns findings' proposed
//! fixes into edits of the YAML; `review` gathers the architecture review
//! page's data; `formats` renders plain results (tables, Markdown, JSON,
//! SARIF); `large` holds what `check` of a large topology runs on several
//! cores with, each device with what it buys.
//! `policy` is the ground floor. The modules are layers, lowest first, as
//! `tests/layering.rs` declares them, and a module imports only those below
//! it: `lint` states a fix as an intent, `fix` above it resolves it.

// Lets unit tests include helpers written for the integration tests.
#[cfg(test)]
extern crate self as retrylint;

pub mod chaos;
pub mod export;
pub mod external;
pub mod faults;
pub mod fix;
pub mod formats;
pub mod input;
mod large;
pub mod lint;
pub mod memory_limits;
pub mod policy;
pub mod prediction;
pub mod probe;
pub mod review;
pub mod run;
pub mod sim;
pub mod stop_signal;
pub mod topology;
pub mod visible;
