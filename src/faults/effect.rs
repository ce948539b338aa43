//! What a fault does to one request it affects, and the interface every fault
//! kind implements to say so.

use std::time::Duration;

use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

/// What to do to one request that a fault affects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// Answer at once with `status` (and `Retry-After` when set), without doing
    /// the service's work.
    Respond {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// Wait this long, then serve the request normally.
    Delay(Duration),
    /// Never answer; the caller's timeout decides.
    Hang,
    /// Do the work (own latency and calls), then close the connection without a
    /// response: the caller sees `reset` although the work happened.
    Reset,
    /// Refuse the connection: the request never reaches the service.
    Refuse,
    /// Serve the request under the overload model (docs/chaos.md) with this capacity.
    Overload { capacity: u32 },
}

/// One fault kind: how it is read from a fault file and what it does to a
/// request it affects. Each kind is its own file; none rolls `ratio` itself.
pub(crate) trait FaultKind: Sized {
    /// The `kind:` value.
    const NAME: &'static str;
    /// The keys of `inject:` this kind reads, besides `kind` and `ratio`.
    const KEYS: &'static [&'static str];
    /// Whether `ratio` makes sense: a fault on the whole service (`down`,
    /// `overload`) affects every request or none.
    const PER_REQUEST: bool = true;

    /// Reads the kind's own keys of an `inject:` map.
    fn read(f: Fields, m: &MapView) -> Result<Self, LoadError>;

    /// What to do to one affected request; `rng` is the run's seeded generator,
    /// for kinds that draw (a delay distribution).
    fn effect(&self, rng: &mut Rng) -> Effect;

    /// `503 with Retry-After 1s`, `delay 50ms`: how reports name the fault.
    fn describe(&self) -> String;
}
