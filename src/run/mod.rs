//! What a run means, once, free of I/O — the kernel both engines drive (the
//! simulator in virtual time, the chaos harness on real sockets) — and the
//! plain results they produce: the report types (the chaos/simulate
//! JSON contract, docs/json.md), latency histograms, load settings and `--expect` gates.
//!
//! # The semantics both engines share
//!
//! This is the one statement of them; `crate::sim` and `crate::chaos` link
//! here and implement it through the code named beside each point.
//!
//! - **Services.** A service that receives a request meets the fault plan
//!   first (`crate::faults::FaultPlan::effect`, the one place the ratio is
//!   rolled), then does its own work (a latency draw), then makes its calls
//!   in order, a run of consecutive `parallel` calls together
//!   ([`calls::group`]), each through its retry layers. Every call is made
//!   even when an earlier one failed (each is a dependency the request needs,
//!   and this is the case the static worst case counts: the sum over all call
//!   paths); once all are done, a request with a failed call answers at once
//!   with the last failure it saw, propagated (the same status, 504 for a
//!   timeout, 502 for a reset or a refused connection:
//!   `crate::policy::Outcome::propagated_status`).
//! - **Overload** ([`overload`]): the topology's `capacity:` applies the
//!   overload model at all times; an `overload` phase's capacity replaces it
//!   for the arrivals it covers. A request is in flight from entering the
//!   service (after an injected delay) to its answer, calls included. A
//!   marked request fails as a timeout at its caller, and the service counts
//!   the 504 it answers.
//! - **Faults.** A status fault answers at once without doing the work;
//!   Retry-After goes out in whole seconds, rounded up
//!   (`crate::policy::retry_after::whole_seconds`); a `reset` does the work,
//!   then closes without an answer; a `hang` never answers; `down` refuses
//!   connections, and a refused connection counts as `received` (and
//!   `dropped.refused`) at the service that is down; when a service goes
//!   down, connections open to it are cut (a reset) while its work in
//!   progress goes on.
//! - **Retry layers.** Every decision — classification, backoff, jitter,
//!   Retry-After, budgets, the deadline and the horizon, the per-attempt
//!   timeout capped by the deadline — is the policy engine's
//!   (`crate::policy::RetrySession`, `crate::policy::Bounds`). A layer's
//!   counters live in its slot ([`slots::Layout`]). Budgets are per caller:
//!   per call layer (a service's app layer, each sidecar), per closed-loop
//!   client, one for all open-loop user requests. Jitter draws come from one
//!   seeded stream per caller.
//! - **Caller gives up.** A service keeps working when its caller gives up
//!   (work nobody waits for); a `via` sidecar stops, cancelling its own
//!   attempt in flight (Envoy resets the upstream stream). Tiers do not
//!   forward their callee's Retry-After; sidecars do.
//! - **Deadlines.** A service with `deadline_propagation: true` honours an
//!   incoming deadline (answers 504 at once when it has passed, never starts
//!   an attempt at or after it, caps attempt timeouts by it) and sends
//!   min(remaining, attempt timeout) downstream; sidecars honour what they
//!   are sent; the `client:` layer sends the topology's `deadline`.
//! - **Duplicates.** A second execution of the same logical non-idempotent
//!   call without an Idempotency-Key is a duplicate; with the key the callee
//!   still does the work, but it is not a duplicate.
//! - **Load** ([`load`]): closed loop, N callers from t = 0, each sending
//!   its next user request when the previous one finished, none after one the
//!   horizon cut short (it would still be busy then); open loop, request i due
//!   at i / R whatever is in flight, latency from the intended time.
//!   `--requests` caps user requests; no attempt anywhere starts at or after
//!   the horizon. A user request still unanswered at the end is `unfinished`.
//! - **Counting** ([`counts`], [`timeline`], [`build`]): arrivals at the
//!   fault target per 100 ms; counters turned into a [`RunReport`] by one
//!   builder, with the predicted amplification from `crate::prediction`.
//!
//! Where the engines must differ, they say so in their own docs: a network
//! hop takes no virtual time; the simulator has no grace period after the
//! horizon (everything in flight runs to its end), chaos waits a grace period
//! and counts what is still open as unfinished; chaos keys its random draws
//! to each request so reruns match despite real interleaving.

pub mod arrivals;
pub mod build;
pub mod calls;
pub mod comparison;
pub mod counts;
pub mod expect;
pub mod goodput;
pub mod latency;
pub mod load;
pub mod overload;
pub mod queueing;
pub mod report;
pub mod slots;
pub mod timeline;
pub mod wire;

pub(crate) use build::{Mode, RunInfo, Tally};
pub(crate) use comparison::ComparisonRow;
pub use expect::{ExpectError, Expectation, evaluate_all};
pub(crate) use latency::Latency;
pub use load::{Arrival, LoadSettings};
pub use report::*;
pub use slots::Layout;
