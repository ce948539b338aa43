//! When open-loop user requests arrive, once for both engines: at the
//! load's `--rate`, or during a `surge` phase at the surge's rate, spaced
//! evenly (`--arrivals uniform`, the default: request i is due when i
//! requests' worth of the rate has elapsed) or as a Poisson process
//! (`--arrivals poisson`: exponential gaps, seeded).
//!
//! Both are one construction: the intensity N(t) = ∫₀ᵗ rate(s) ds is
//! piecewise linear, and request i is due at N⁻¹(uᵢ), with uᵢ = i evenly,
//! or uᵢ = E₀ + … + Eᵢ for independent Exp(1) draws (a Poisson process is a
//! unit-rate one run on the intensity's clock). No request is due at or
//! after the horizon or beyond `--requests`.

use std::time::Duration;

use rand::RngExt;

use super::load::{Arrival, LoadSettings};
use crate::faults::FaultPlan;
use crate::policy::{Rng, seeded_rng};

/// How open-loop arrivals are spaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Process {
    /// Evenly, at the rate.
    #[default]
    Uniform,
    /// Exponential gaps at the rate (seeded).
    Poisson,
}

/// A surge needs an arrival rate to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the scenario surges the arrival rate, which a closed loop does not have: use --rate (open loop) with a `surge` scenario"
)]
pub struct SurgeNeedsRate;

/// A stretch of constant rate, from `start` to the next one's start.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Piece {
    start: f64,
    rate: f64,
    /// N(start).
    intensity: f64,
}

/// The arrival times of one run (one trial).
#[derive(Debug)]
pub(crate) struct Schedule {
    pieces: Vec<Piece>,
    process: Process,
    rng: Rng,
    /// u of the next request.
    next_u: f64,
    sent: u64,
    requests: Option<u64>,
    horizon: Duration,
}

impl Schedule {
    /// The schedule of `load` under `plan`'s surges, with `seed` for Poisson
    /// gaps; `Ok(None)` for a closed loop (no schedule).
    pub(crate) fn new(
        load: &LoadSettings,
        plan: &FaultPlan,
        seed: u64,
    ) -> Result<Option<Self>, SurgeNeedsRate> {
        let surges = plan.surges();
        let Arrival::Rate(base) = load.arrival else {
            return if surges.is_empty() {
                Ok(None)
            } else {
                Err(SurgeNeedsRate)
            };
        };
        let mut s = Schedule {
            pieces: pieces(base, &surges),
            process: load.process,
            rng: seeded_rng(seed),
            next_u: 0.0,
            sent: 0,
            requests: load.requests,
            horizon: load.horizon(),
        };
        s.next_u = s.first_u();
        Ok(Some(s))
    }

    fn first_u(&mut self) -> f64 {
        match self.process {
            Process::Uniform => 0.0,
            Process::Poisson => exp1(&mut self.rng),
        }
    }

    /// The time of the next request, if one is due before the horizon and
    /// within `--requests`.
    pub(crate) fn next_due(&mut self) -> Option<Duration> {
        if self.requests.is_some_and(|m| self.sent >= m) {
            return None;
        }
        let at = Duration::try_from_secs_f64(self.time_of(self.next_u)).ok()?;
        if at >= self.horizon {
            return None;
        }
        self.sent += 1;
        self.next_u += match self.process {
            Process::Uniform => 1.0,
            Process::Poisson => exp1(&mut self.rng),
        };
        Some(at)
    }

    /// How many requests in all are due before the horizon (expected, for
    /// Poisson arrivals), within `--requests`.
    pub(crate) fn expected_count(&self) -> u64 {
        let n = intensity(&self.pieces, self.horizon.as_secs_f64());
        let n = match self.process {
            Process::Uniform => n.ceil(),
            Process::Poisson => n.round(),
        };
        let n = if n >= u64::MAX as f64 {
            u64::MAX
        } else {
            n as u64
        };
        self.requests.map_or(n, |m| m.min(n))
    }

    /// N⁻¹(u): the time at which the intensity reaches `u`.
    fn time_of(&self, u: f64) -> f64 {
        let i = self
            .pieces
            .partition_point(|p| p.intensity <= u)
            .saturating_sub(1);
        let p = self.pieces[i];
        if p.rate <= 0.0 {
            return f64::INFINITY;
        }
        p.start + (u - p.intensity) / p.rate
    }
}

/// N(t).
fn intensity(pieces: &[Piece], t: f64) -> f64 {
    let i = pieces.partition_point(|p| p.start <= t).saturating_sub(1);
    let p = pieces[i];
    p.intensity + (t - p.start) * p.rate
}

/// The piecewise-constant rate: `base`, replaced by each surge while it is
/// on (the first in file order where surges overlap).
fn pieces(base: f64, surges: &[(Duration, Option<Duration>, f64)]) -> Vec<Piece> {
    let mut edges: Vec<f64> = vec![0.0];
    for &(start, end, _) in surges {
        edges.push(start.as_secs_f64());
        if let Some(e) = end {
            edges.push(e.as_secs_f64());
        }
    }
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    let rate_at = |t: f64| {
        surges
            .iter()
            .find(|(s, e, _)| t >= s.as_secs_f64() && e.is_none_or(|e| t < e.as_secs_f64()))
            .map_or(base, |s| s.2)
    };
    let mut out: Vec<Piece> = Vec::with_capacity(edges.len());
    for t in edges {
        let rate = rate_at(t);
        let intensity = out
            .last()
            .map_or(0.0, |p| p.intensity + (t - p.start) * p.rate);
        if out.last().is_some_and(|p| p.rate == rate) {
            continue;
        }
        out.push(Piece {
            start: t,
            rate,
            intensity,
        });
    }
    out
}

/// An Exp(1) draw.
fn exp1(rng: &mut Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    -u.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> FaultPlan {
        let t = crate::topology::load_str(
            "version: 1\nservices:\n  a: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        crate::faults::load_str(text, "f.yaml")
            .unwrap()
            .plan(&t)
            .unwrap()
    }

    #[test]
    fn uniform_arrivals_follow_the_rate_and_the_surge() {
        let load =
            LoadSettings::new(Some(10.0), None, None, Some(Duration::from_secs(3)), None).unwrap();
        let p = plan(
            "target: entry\nphases: [ { after: 1s, for: 1s, inject: { kind: surge, rate: 20 } } ]\n",
        );
        let mut s = Schedule::new(&load, &p, 1).unwrap().unwrap();
        let times: Vec<u128> = std::iter::from_fn(|| s.next_due())
            .map(|d| d.as_millis())
            .collect();
        // 10/s for 1 s, 20/s for 1 s, 10/s for 1 s.
        assert_eq!(times.len(), 40);
        assert_eq!(&times[..3], &[0, 100, 200]);
        assert_eq!(&times[10..13], &[1000, 1050, 1100]);
        assert_eq!(&times[30..32], &[2000, 2100]);
        assert_eq!(s.expected_count(), 40);
        // Without a surge, the same as `LoadSettings::due`.
        let mut s = Schedule::new(&load, &FaultPlan::none(), 1)
            .unwrap()
            .unwrap();
        for i in 0..30 {
            assert_eq!(s.next_due(), load.due(i));
        }
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn poisson_arrivals_average_the_rate_and_reproduce_by_seed() {
        let load = LoadSettings {
            process: Process::Poisson,
            ..LoadSettings::new(
                Some(100.0),
                None,
                None,
                Some(Duration::from_secs(100)),
                None,
            )
            .unwrap()
        };
        let count = |seed| {
            let mut s = Schedule::new(&load, &FaultPlan::none(), seed)
                .unwrap()
                .unwrap();
            std::iter::from_fn(|| s.next_due()).count()
        };
        let n = count(7);
        assert_eq!(n, count(7));
        // 10,000 expected, standard deviation 100.
        assert!((9_600..10_400).contains(&n), "{n}");
        let closed = LoadSettings::new(None, Some(1), None, None, None).unwrap();
        let surge = plan("target: entry\nphases: [ { inject: { kind: surge, rate: 20 } } ]\n");
        assert_eq!(
            Schedule::new(&closed, &surge, 1).unwrap_err(),
            SurgeNeedsRate
        );
        assert!(
            Schedule::new(&closed, &FaultPlan::none(), 1)
                .unwrap()
                .is_none()
        );
    }
}
