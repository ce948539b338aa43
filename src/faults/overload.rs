//! `overload`: the service can work on at most `capacity` requests at once
//! (the overload model, docs/chaos.md). Whenever an arriving request raises the number in
//! flight above capacity, every request then in flight, the new one included,
//! is marked failed; a marked request holds its slot for its full service time
//! and then fails as a timeout (the chaos server answers 504 at that moment).
//! While the phase is on, its capacity replaces the topology's `capacity:`,
//! which applies the same model the rest of the time. A `ratio` below 1
//! does not apply.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overload {
    pub capacity: u32,
}

impl FaultKind for Overload {
    const NAME: &'static str = "overload";
    const KEYS: &'static [&'static str] = &["capacity"];
    const PER_REQUEST: bool = false;

    fn read(f: Fields, m: &MapView) -> Result<Self, LoadError> {
        let Some(node) = m.get("capacity") else {
            return Err(f
                .error(m.pos, "an `overload` fault needs `capacity:`")
                .with_help("add e.g. `capacity: 4`, the requests it can work on at once"));
        };
        let capacity = f.int(node, "capacity", 1, i128::from(u32::MAX))? as u32;
        Ok(Overload { capacity })
    }

    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Overload {
            capacity: self.capacity,
        }
    }

    fn describe(&self) -> String {
        format!("overload (capacity {})", self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};
    use crate::policy::seeded_rng;

    #[test]
    fn reads_capacity() {
        let s = load_str(
            "phases: [{ inject: { kind: overload, capacity: 4 } }]\n",
            "f.yaml",
        )
        .unwrap();
        assert_eq!(
            s.phases[0].inject,
            Inject::Overload(Overload { capacity: 4 })
        );
        assert_eq!(
            Overload { capacity: 4 }.effect(&mut seeded_rng(1)),
            Effect::Overload { capacity: 4 }
        );
        let e = load_str(
            "phases: [{ inject: { kind: overload, capacity: 0 } }]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }
}
