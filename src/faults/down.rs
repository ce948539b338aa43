//! `down`: the listener is gone, so connections are refused and the request
//! never reaches the service (outcome `connect`). It takes the whole service
//! away, so a `ratio` below 1 does not apply (`ratio: 1.0`, the default, may
//! be written out): use `reset` or `status` for a share.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Down;

impl FaultKind for Down {
    const NAME: &'static str = "down";
    const KEYS: &'static [&'static str] = &[];
    const PER_REQUEST: bool = false;

    fn read(_f: Fields, _m: &MapView) -> Result<Self, LoadError> {
        Ok(Down)
    }

    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Refuse
    }

    fn describe(&self) -> String {
        "down (connection refused)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};
    use crate::policy::seeded_rng;

    #[test]
    fn refuses_and_takes_no_ratio() {
        let s = load_str(
            "phases: [{ after: 1s, for: 2s, inject: { kind: down } }]\n",
            "f.yaml",
        )
        .unwrap();
        assert_eq!(s.phases[0].inject, Inject::Down(Down));
        assert_eq!(Down.effect(&mut seeded_rng(1)), Effect::Refuse);
        let e = load_str(
            "phases: [{ inject: { kind: down, ratio: 0.5 } }]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("`ratio` does not apply"), "{e}");
        // The default written out is no share at all.
        for full in ["1.0", "1", "100%"] {
            let s = load_str(
                &format!("phases: [{{ inject: {{ kind: down, ratio: {full} }} }}]\n"),
                "f.yaml",
            )
            .unwrap();
            assert_eq!(s.phases[0].ratio, 1.0);
        }
    }
}
