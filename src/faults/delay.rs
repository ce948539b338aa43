//! `delay`: add latency before the service does its work — a fixed duration or
//! a log-normal spread given by two quantiles, like a service's own latency.

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::input::yaml::Value;
use crate::policy::Rng;
use crate::topology::{Latency, LoadError};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delay {
    /// Fixed when `p50 == p99`.
    pub delay: Latency,
}

impl FaultKind for Delay {
    const NAME: &'static str = "delay";
    const KEYS: &'static [&'static str] = &["delay"];

    fn read(f: Fields, m: &MapView) -> Result<Self, LoadError> {
        let Some(node) = m.get("delay") else {
            return Err(f
                .error(m.pos, "a `delay` fault needs `delay:`")
                .with_help("add `delay: 50ms` or `delay: { p50: 50ms, p99: 200ms }`"));
        };
        let (p50, p99) = if let Value::Map(_) = node.value {
            let q = f.map(node, "a delay distribution", &["p50", "p99"])?;
            let get = |k: &str| q.get(k).map(|n| f.duration(n, k)).transpose();
            match (get("p50")?, get("p99")?) {
                (Some(a), Some(b)) if b >= a => (a, b),
                (Some(_), Some(_)) => {
                    return Err(f
                        .error(node.pos, "delay p99 is below p50")
                        .with_help("p99 is the slower tail: it must be at least p50"));
                }
                (Some(a), None) | (None, Some(a)) => (a, a),
                (None, None) => {
                    return Err(f
                        .error(node.pos, "a delay distribution needs `p50` and `p99`")
                        .with_help("write `delay: { p50: 50ms, p99: 200ms }` or `delay: 50ms`"));
                }
            }
        } else {
            let d = f.duration(node, "delay")?;
            (d, d)
        };
        Ok(Delay {
            delay: Latency {
                p50,
                p99,
                pos: Some(node.pos),
                exponential_mean: None,
            },
        })
    }

    fn effect(&self, rng: &mut Rng) -> Effect {
        Effect::Delay(self.delay.sample(rng))
    }

    fn describe(&self) -> String {
        let f = crate::input::duration::format;
        if self.delay.p50 == self.delay.p99 {
            format!("delay {}", f(self.delay.p50))
        } else {
            format!("delay p50 {} p99 {}", f(self.delay.p50), f(self.delay.p99))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Inject, load_str};
    use crate::policy::seeded_rng;
    use std::time::Duration;

    fn read(inject: &str) -> Result<Delay, LoadError> {
        let s = load_str(&format!("phases: [{{ inject: {inject} }}]\n"), "f.yaml")?;
        match &s.phases[0].inject {
            Inject::Delay(d) => Ok(*d),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fixed_delay_is_exact() {
        let d = read("{ kind: delay, delay: 50ms }").unwrap();
        let mut rng = seeded_rng(3);
        for _ in 0..10 {
            assert_eq!(d.effect(&mut rng), Effect::Delay(Duration::from_millis(50)));
        }
        assert_eq!(d.describe(), "delay 50ms");
    }

    #[test]
    fn distribution_hits_its_quantiles() {
        let d = read("{ kind: delay, delay: { p50: 50ms, p99: 200ms } }").unwrap();
        let mut rng = seeded_rng(3);
        let mut v: Vec<Duration> = (0..20_000)
            .map(|_| match d.effect(&mut rng) {
                Effect::Delay(x) => x,
                e => panic!("{e:?}"),
            })
            .collect();
        v.sort();
        let ms = |i: usize| v[i].as_secs_f64() * 1e3;
        assert!((45.0..55.0).contains(&ms(10_000)), "p50 {}", ms(10_000));
        assert!((170.0..235.0).contains(&ms(19_800)), "p99 {}", ms(19_800));
    }

    #[test]
    fn rejects_an_inverted_spread() {
        let e = read("{ kind: delay, delay: { p50: 50ms, p99: 10ms } }").unwrap_err();
        assert!(e.to_string().contains("below p50"), "{e}");
        let e = read("{ kind: delay }").unwrap_err();
        assert!(e.to_string().contains("needs `delay:`"), "{e}");
    }
}
