//! `hang`: accept the request and never answer (a blackhole). Only the caller's
//! per-attempt timeout ends the attempt; without one it waits to the end of
//! the run.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hang;

impl FaultKind for Hang {
    const NAME: &'static str = "hang";
    const KEYS: &'static [&'static str] = &[];

    fn read(_f: Fields, _m: &MapView) -> Result<Self, LoadError> {
        Ok(Hang)
    }

    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Hang
    }

    fn describe(&self) -> String {
        "hang (no answer)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};
    use crate::policy::seeded_rng;

    #[test]
    fn never_answers() {
        let s = load_str(
            "phases: [{ inject: { kind: hang, ratio: 0.5 } }]\n",
            "f.yaml",
        )
        .unwrap();
        assert_eq!(s.phases[0].inject, Inject::Hang(Hang));
        assert_eq!(s.phases[0].ratio, 0.5);
        assert_eq!(Hang.effect(&mut seeded_rng(1)), Effect::Hang);
        let e = load_str(
            "phases: [{ inject: { kind: hang, delay: 1s } }]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown key `delay`"), "{e}");
    }
}
