//! `reset`: the service does its work, then closes the connection without a
//! response. The caller sees `reset` and cannot tell whether the work happened
//! — it did, so retrying a non-idempotent call executes it twice.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset;

impl FaultKind for Reset {
    const NAME: &'static str = "reset";
    const KEYS: &'static [&'static str] = &[];

    fn read(_f: Fields, _m: &MapView) -> Result<Self, LoadError> {
        Ok(Reset)
    }

    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Reset
    }

    fn describe(&self) -> String {
        "connection reset after the work".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};
    use crate::policy::seeded_rng;

    #[test]
    fn resets_a_share_of_requests() {
        let s = load_str(
            "phases: [{ inject: { kind: reset, ratio: 0.3 } }]\n",
            "f.yaml",
        )
        .unwrap();
        assert_eq!(s.phases[0].inject, Inject::Reset(Reset));
        assert_eq!(s.phases[0].ratio, 0.3);
        assert_eq!(Reset.effect(&mut seeded_rng(1)), Effect::Reset);
    }
}
