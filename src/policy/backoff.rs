//! Backoff schedules and jitter (docs/topology.md, "Retry policy semantics").
//!
//! `nominal(k)` is b_k, the wait before retry k before jitter; `wait` draws the
//! jittered wait; `min_wait` and `max_wait` bound every draw, which is what the
//! static analysis uses for worst and best cases.

use std::time::Duration;

use rand::RngExt;

use super::{FOREVER, Rng};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackoffKind {
    None,
    Constant,
    Linear,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
    /// delay × uniform(1 - ratio, 1 + ratio)
    Proportional {
        ratio: f64,
    },
}

named!(BackoffKind {
    None => "none",
    Constant => "constant",
    Linear => "linear",
    Exponential => "exponential",
});

impl Jitter {
    /// The ratio `proportional` takes when none is written.
    pub(crate) const DEFAULT_RATIO: f64 = 0.2;
    /// Every jitter's name, in the order the schema lists them.
    pub(crate) const NAMES: &'static [&'static str] =
        &["none", "full", "equal", "decorrelated", "proportional"];

    /// The name the schema gives it (a proportional one's ratio aside).
    pub fn as_str(self) -> &'static str {
        match self {
            Jitter::None => Self::NAMES[0],
            Jitter::Full => Self::NAMES[1],
            Jitter::Equal => Self::NAMES[2],
            Jitter::Decorrelated => Self::NAMES[3],
            Jitter::Proportional { .. } => Self::NAMES[4],
        }
    }
}

impl std::str::FromStr for Jitter {
    type Err = super::names::UnknownName;

    /// `proportional` reads with [`Jitter::DEFAULT_RATIO`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
            Jitter::Proportional {
                ratio: Jitter::DEFAULT_RATIO,
            },
        ]
        .into_iter()
        .find(|j| j.as_str() == s)
        .ok_or(super::names::UnknownName)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Backoff {
    pub kind: BackoffKind,
    pub base: Duration,
    /// Exponential only.
    pub multiplier: f64,
    /// `None` is uncapped.
    pub cap: Option<Duration>,
    pub jitter: Jitter,
}

impl Default for Backoff {
    /// No wait at all: what a policy without a `backoff` section does.
    fn default() -> Self {
        Backoff {
            kind: BackoffKind::None,
            base: Duration::ZERO,
            multiplier: 2.0,
            cap: None,
            jitter: Jitter::None,
        }
    }
}

fn saturating_mul_f64(d: Duration, factor: f64) -> Duration {
    let secs = d.as_secs_f64() * factor;
    if !secs.is_finite() || secs >= FOREVER.as_secs_f64() {
        FOREVER
    } else if secs <= 0.0 {
        Duration::ZERO
    } else {
        Duration::from_secs_f64(secs)
    }
}

impl Backoff {
    /// Whether every wait is zero: no backoff at all, or one whose base or
    /// cap is zero (each kind and jitter then yields 0).
    pub fn never_waits(&self) -> bool {
        self.kind == BackoffKind::None
            || self.base.is_zero()
            || self.cap.is_some_and(|c| c.is_zero())
    }

    fn cap_or_forever(&self) -> Duration {
        self.cap.unwrap_or(FOREVER)
    }

    /// b_k: the wait before retry `retry` (1-based) before jitter.
    pub(crate) fn nominal(&self, retry: u32) -> Duration {
        let k = retry.max(1);
        let raw = match self.kind {
            BackoffKind::None => return Duration::ZERO,
            BackoffKind::Constant => self.base,
            BackoffKind::Linear => saturating_mul_f64(self.base, f64::from(k)),
            BackoffKind::Exponential => {
                saturating_mul_f64(self.base, self.multiplier.powi(exponent(k - 1)))
            }
        };
        raw.min(self.cap_or_forever())
    }

    /// The longest wait any draw can give before retry `retry`.
    pub(crate) fn max_wait(&self, retry: u32) -> Duration {
        let b = self.nominal(retry);
        let cap = self.cap_or_forever();
        match self.jitter {
            _ if self.kind == BackoffKind::None => Duration::ZERO,
            Jitter::None | Jitter::Full | Jitter::Equal => b,
            Jitter::Proportional { ratio } => saturating_mul_f64(b, 1.0 + ratio).min(cap),
            Jitter::Decorrelated => {
                saturating_mul_f64(self.base, 3f64.powi(exponent(retry.max(1)))).min(cap)
            }
        }
    }

    /// The shortest wait any draw can give before retry `retry`.
    pub(crate) fn min_wait(&self, retry: u32) -> Duration {
        let b = self.nominal(retry);
        match self.jitter {
            _ if self.kind == BackoffKind::None => Duration::ZERO,
            Jitter::None => b,
            Jitter::Full => Duration::ZERO,
            Jitter::Equal => b / 2,
            Jitter::Proportional { ratio } => {
                saturating_mul_f64(b, 1.0 - ratio).min(self.cap_or_forever())
            }
            Jitter::Decorrelated => self.base.min(self.cap_or_forever()),
        }
    }

    /// The mean of the draws before retry `retry`: what a jittered schedule
    /// waits typically, where its shortest draw says little (full jitter can
    /// always draw 0). Decorrelated jitter counts the middle of its range.
    pub(crate) fn mean_wait(&self, retry: u32) -> Duration {
        let b = self.nominal(retry);
        match self.jitter {
            _ if self.kind == BackoffKind::None => Duration::ZERO,
            Jitter::None | Jitter::Proportional { .. } => b,
            Jitter::Full => b / 2,
            Jitter::Equal => b / 2 + b / 4,
            Jitter::Decorrelated => (self.min_wait(retry) + self.max_wait(retry)) / 2,
        }
    }

    /// Draws the wait before retry `retry`; `prev` is the previous wait of this
    /// request (decorrelated jitter only; pass `base` before the first retry).
    pub fn wait(&self, retry: u32, prev: Duration, rng: &mut Rng) -> Duration {
        if self.kind == BackoffKind::None {
            return Duration::ZERO;
        }
        let b = self.nominal(retry);
        let cap = self.cap_or_forever();
        let drawn = match self.jitter {
            Jitter::None => b,
            Jitter::Full => uniform(Duration::ZERO, b, rng),
            Jitter::Equal => b / 2 + uniform(Duration::ZERO, b - b / 2, rng),
            Jitter::Decorrelated => {
                let hi = saturating_mul_f64(prev.max(self.base), 3.0);
                uniform(self.base, hi, rng)
            }
            Jitter::Proportional { ratio } => {
                let r = ratio.clamp(0.0, 1.0);
                let factor = if r == 0.0 {
                    1.0
                } else {
                    rng.random_range((1.0 - r)..=(1.0 + r))
                };
                saturating_mul_f64(b, factor)
            }
        };
        drawn.min(cap)
    }

    /// The wait a decorrelated schedule starts from; other kinds ignore it.
    pub fn initial_prev(&self) -> Duration {
        self.base
    }
}

fn exponent(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// uniform(lo, hi) in whole nanoseconds, both ends included.
fn uniform(lo: Duration, hi: Duration, rng: &mut Rng) -> Duration {
    let lo_ns = u64::try_from(lo.as_nanos()).unwrap_or(u64::MAX);
    let hi_ns = u64::try_from(hi.as_nanos()).unwrap_or(u64::MAX);
    if hi_ns <= lo_ns {
        return lo;
    }
    Duration::from_nanos(rng.random_range(lo_ns..=hi_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::seeded_rng;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn exp(base: u64, cap: Option<u64>, jitter: Jitter) -> Backoff {
        Backoff {
            kind: BackoffKind::Exponential,
            base: ms(base),
            multiplier: 2.0,
            cap: cap.map(ms),
            jitter,
        }
    }

    #[test]
    fn exponential_doubles_up_to_the_cap() {
        let b = exp(100, Some(1000), Jitter::None);
        let got: Vec<_> = (1..=6).map(|k| b.nominal(k).as_millis()).collect();
        assert_eq!(got, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn linear_and_constant() {
        let mut b = exp(100, Some(250), Jitter::None);
        b.kind = BackoffKind::Linear;
        assert_eq!(b.nominal(1), ms(100));
        assert_eq!(b.nominal(2), ms(200));
        assert_eq!(b.nominal(3), ms(250));
        b.kind = BackoffKind::Constant;
        assert_eq!(b.nominal(7), ms(100));
        b.kind = BackoffKind::None;
        assert_eq!(b.nominal(3), Duration::ZERO);
        assert_eq!(b.max_wait(3), Duration::ZERO);
    }

    #[test]
    fn uncapped_exponential_saturates_instead_of_overflowing() {
        let b = exp(1000, None, Jitter::None);
        assert_eq!(b.nominal(10_000), FOREVER);
        assert_eq!(b.max_wait(u32::MAX), FOREVER);
    }

    fn any_jitter() -> impl Strategy<Value = Jitter> {
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated),
            (0.0f64..=1.0).prop_map(|ratio| Jitter::Proportional { ratio }),
        ]
    }

    fn any_backoff() -> impl Strategy<Value = Backoff> {
        (
            prop_oneof![
                Just(BackoffKind::Constant),
                Just(BackoffKind::Linear),
                Just(BackoffKind::Exponential)
            ],
            1u64..5_000,
            1.0f64..4.0,
            proptest::option::of(1u64..60_000),
            any_jitter(),
        )
            .prop_map(|(kind, base, multiplier, cap, jitter)| Backoff {
                kind,
                base: ms(base),
                multiplier,
                cap: cap.map(ms),
                jitter,
            })
    }

    proptest! {
        #[test]
        fn every_draw_lies_within_its_formula_bounds(b in any_backoff(), seed: u64) {
            let mut rng = seeded_rng(seed);
            let mut prev = b.initial_prev();
            for k in 1..12 {
                let w = b.wait(k, prev, &mut rng);
                prop_assert!(w >= b.min_wait(k), "k={k} w={w:?} min={:?}", b.min_wait(k));
                prop_assert!(w <= b.max_wait(k), "k={k} w={w:?} max={:?}", b.max_wait(k));
                if let Some(cap) = b.cap {
                    prop_assert!(w <= cap);
                }
                let nominal = b.nominal(k);
                match b.jitter {
                    Jitter::None => prop_assert_eq!(w, nominal),
                    Jitter::Full => prop_assert!(w <= nominal),
                    Jitter::Equal => prop_assert!(w >= nominal / 2 && w <= nominal),
                    Jitter::Proportional { ratio } => {
                        let lo = nominal.as_secs_f64() * (1.0 - ratio) - 1e-9;
                        let hi = nominal.as_secs_f64() * (1.0 + ratio) + 1e-9;
                        prop_assert!(w.as_secs_f64() >= lo.min(b.cap.map_or(f64::MAX, |c| c.as_secs_f64())) && w.as_secs_f64() <= hi);
                    }
                    Jitter::Decorrelated => {
                        let cap = b.cap.unwrap_or(FOREVER);
                        prop_assert!(w >= b.base.min(cap) && w <= cap);
                        prop_assert!(w <= (prev * 3).max(b.base));
                    }
                }
                prev = w;
            }
        }

        #[test]
        fn same_seed_same_schedule(b in any_backoff(), seed: u64) {
            let schedule = |seed| {
                let mut rng = seeded_rng(seed);
                let mut prev = b.initial_prev();
                (1..10).map(|k| { prev = b.wait(k, prev, &mut rng); prev }).collect::<Vec<_>>()
            };
            prop_assert_eq!(schedule(seed), schedule(seed));
        }
    }
}
