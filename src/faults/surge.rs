//! `surge`: for the phase, user requests arrive at `rate` per second instead
//! of the load's `--rate` (a launch, a retry storm from outside, a failover
//! landing on this region). It changes the arrivals at the entry, not what
//! happens to a request, so it needs an open-loop load and ignores the
//! scenario's target; its phases may overlap other faults'.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::input::yaml::Value;
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Surge {
    /// User requests per second while the phase is on.
    pub rate: f64,
}

impl FaultKind for Surge {
    const NAME: &'static str = "surge";
    const KEYS: &'static [&'static str] = &["rate"];
    const PER_REQUEST: bool = false;

    fn read(f: Fields, m: &MapView) -> Result<Self, LoadError> {
        let Some(node) = m.get("rate") else {
            return Err(f
                .error(m.pos, "a `surge` fault needs `rate:`")
                .with_help("add e.g. `rate: 2500` (user requests per second during the phase)"));
        };
        let text = match &node.value {
            Value::Int(n) => n.to_string(),
            Value::Float(x) => x.to_string(),
            Value::Str(s) => s.to_string(),
            _ => return Err(f.expected(node, "a rate such as `2500` or `2500/s`")),
        };
        let rate = crate::input::rate::parse(&text).ok_or_else(|| {
            f.error(node.pos, format!("`rate: {text}` is not a rate"))
                .with_help(
                    "write requests per second above 0, e.g. `rate: 2500` or `rate: 150000/m`",
                )
        })?;
        Ok(Surge { rate })
    }

    /// Never asked: a surge changes the arrivals, not a request (the plan
    /// keeps surge phases out of its per-request index).
    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Delay(std::time::Duration::ZERO)
    }

    fn describe(&self) -> String {
        format!("surge to {}/s", self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};

    #[test]
    fn reads_a_rate_and_refuses_nonsense() {
        let s = load_str(
            "target: entry\nphases: [ { after: 20s, for: 10s, inject: { kind: surge, rate: 2500/s } } ]\n",
            "f.yaml",
        )
        .unwrap();
        assert!(matches!(s.phases[0].inject, Inject::Surge(Surge { rate }) if rate == 2500.0));
        let e = load_str(
            "target: entry\nphases: [ { inject: { kind: surge, rate: -3 } } ]\n",
            "f.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("is not a rate"), "{e}");
    }
}
