//! The tests that measure real time: the chaos harness's real-time
//! tolerances, and the probe against real clients and against the
//! harness's own client, which infers policies from measured waits. Cargo
//! runs test binaries one after another, so these have the machine to
//! themselves instead of sharing two cores with the rest of the suite,
//! which would stretch the waits they measure.

mod common;

mod chaos_smoke;
mod probe_clients;
mod probe_harness;
