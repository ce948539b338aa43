//! A scenario bound to a topology: which services it strikes, and, for any
//! moment of the run, which phase is in force — looked up in O(log n) in an
//! index of non-overlapping segments built once, so a scenario with 100,000
//! phases costs nothing per request. Where phases overlap, the first in file
//! order wins, as it always has.

use std::collections::BTreeSet;
use std::time::Duration;

use rand::RngExt;

use super::{Effect, Inject, Phase};
use crate::policy::Rng;
use crate::topology::ServiceId;

/// A stretch of the run `[start, end)` during which one phase is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    start: Duration,
    /// `None`: to the end of the run.
    end: Option<Duration>,
    phase: usize,
}

/// A scenario bound to a topology.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// One flag per service of the topology.
    pub targets: Vec<bool>,
    pub phases: Vec<Phase>,
    /// Sorted by start, disjoint.
    segments: Vec<Segment>,
}

impl FaultPlan {
    pub fn new(targets: Vec<bool>, phases: Vec<Phase>) -> Self {
        let segments = segments(&phases);
        FaultPlan {
            targets,
            phases,
            segments,
        }
    }

    /// No fault anywhere.
    pub fn none() -> Self {
        FaultPlan::new(Vec::new(), Vec::new())
    }

    pub fn is_target(&self, service: ServiceId) -> bool {
        self.targets.get(service).copied().unwrap_or(false)
    }

    /// The phase in force at `now` on the scenario's targets, if any.
    fn phase_now(&self, now: Duration) -> Option<&Phase> {
        let i = self.segments.partition_point(|s| s.start <= now);
        let seg = self.segments.get(i.checked_sub(1)?)?;
        seg.end
            .is_none_or(|end| now < end)
            .then(|| &self.phases[seg.phase])
    }

    /// The phase in force at `service` at `now`, if any.
    pub(crate) fn phase_at(&self, service: ServiceId, now: Duration) -> Option<&Phase> {
        if !self.is_target(service) {
            return None;
        }
        self.phase_now(now)
    }

    /// What happens to one request arriving at `service` at `now`: the ONE place
    /// where `ratio` is rolled, with the run's seeded generator. A ratio of 1
    /// (and a whole-service kind) draws nothing, so it does not shift the stream.
    pub fn effect(&self, service: ServiceId, now: Duration, rng: &mut Rng) -> Option<Effect> {
        let phase = self.phase_at(service, now)?;
        if phase.ratio < 1.0 && !(phase.ratio > 0.0 && rng.random::<f64>() < phase.ratio) {
            return None;
        }
        Some(phase.inject.effect(rng))
    }

    /// The overload capacity in force at `service` at `now`, if an `overload`
    /// phase is on.
    pub fn overload_capacity(&self, service: ServiceId, now: Duration) -> Option<u32> {
        match &self.phase_at(service, now)?.inject {
            Inject::Overload(o) => Some(o.capacity),
            _ => None,
        }
    }

    /// The surges: (start, end, user requests per second), in file order.
    pub(crate) fn surges(&self) -> Vec<(Duration, Option<Duration>, f64)> {
        self.phases
            .iter()
            .filter_map(|p| match p.inject {
                Inject::Surge(s) => Some((p.after, p.end(), s.rate)),
                _ => None,
            })
            .collect()
    }

    /// How much of `[0, horizon)` some phase is in force (on the targets).
    pub(crate) fn active_time(&self, horizon: Duration) -> Duration {
        if !self.targets.iter().any(|&t| t) {
            return Duration::ZERO;
        }
        self.segments
            .iter()
            .map(|s| {
                let end = s.end.unwrap_or(horizon).min(horizon);
                end.saturating_sub(s.start.min(horizon))
            })
            .fold(Duration::ZERO, Duration::saturating_add)
    }

    /// The windows `[start, end)` during which `service` is down (`end: None`
    /// lasts to the end of the run), in time order, merged where they touch.
    pub fn down_windows(&self, service: ServiceId) -> Vec<(Duration, Option<Duration>)> {
        if !self.is_target(service) {
            return Vec::new();
        }
        let mut windows: Vec<(Duration, Option<Duration>)> = Vec::new();
        for seg in &self.segments {
            if !matches!(self.phases[seg.phase].inject, Inject::Down(_)) {
                continue;
            }
            match windows.last_mut() {
                Some((_, end @ Some(_))) if *end == Some(seg.start) => *end = seg.end,
                _ => windows.push((seg.start, seg.end)),
            }
        }
        windows
    }
}

/// The disjoint segments of `phases`, first in file order winning where they
/// overlap: a sweep over the phase edges keeping the phases in force in an
/// ordered set, O(n log n).
fn segments(phases: &[Phase]) -> Vec<Segment> {
    // (time, starts?, phase): at one instant, ends go before starts, so a
    // phase ending at t is not in force at t.
    let mut edges: Vec<(Duration, bool, usize)> = Vec::with_capacity(phases.len() * 2);
    for (i, p) in phases.iter().enumerate() {
        // A surge changes the arrivals, not a request: not in the index.
        if p.length.is_some_and(|l| l.is_zero()) || matches!(p.inject, Inject::Surge(_)) {
            continue;
        }
        edges.push((p.after, true, i));
        if let Some(end) = p.end() {
            edges.push((end, false, i));
        }
    }
    edges.sort_unstable();
    let mut active = BTreeSet::new();
    let mut out: Vec<Segment> = Vec::new();
    let mut k = 0;
    while k < edges.len() {
        let at = edges[k].0;
        while k < edges.len() && edges[k].0 == at {
            let (_, starts, i) = edges[k];
            if starts {
                active.insert(i);
            } else {
                active.remove(&i);
            }
            k += 1;
        }
        // Close the open segment at this edge, and open the next one.
        if let Some(last) = out.last_mut()
            && last.end.is_none()
        {
            last.end = Some(at);
        }
        if let Some(&phase) = active.first() {
            match out.last_mut() {
                // The same phase goes on across an edge of another one.
                Some(last) if last.phase == phase && last.end == Some(at) => last.end = None,
                _ => out.push(Segment {
                    start: at,
                    end: None,
                    phase,
                }),
            }
        }
    }
    // A segment still open at the last edge lasts to the end of the run only
    // if its phase does.
    if let Some(last) = out.last_mut()
        && last.end.is_none()
    {
        last.end = phases[last.phase].end();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Down, Status};
    use super::*;
    use crate::policy::seeded_rng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn plan(phases: Vec<Phase>) -> FaultPlan {
        FaultPlan::new(vec![true, false], phases)
    }

    fn phase(after: u64, len: Option<u64>, ratio: f64, inject: Inject) -> Phase {
        Phase {
            after: ms(after),
            length: len.map(ms),
            ratio,
            inject,
        }
    }

    fn status(code: u16) -> Inject {
        Inject::Status(Status {
            status: code,
            retry_after: None,
        })
    }

    #[test]
    fn phases_are_half_open_and_only_hit_targets() {
        let p = plan(vec![phase(100, Some(200), 1.0, status(503))]);
        let mut rng = seeded_rng(1);
        assert_eq!(p.effect(0, ms(99), &mut rng), None);
        assert!(p.effect(0, ms(100), &mut rng).is_some());
        assert!(p.effect(0, ms(299), &mut rng).is_some());
        assert_eq!(p.effect(0, ms(300), &mut rng), None);
        assert_eq!(p.effect(1, ms(150), &mut rng), None);
    }

    #[test]
    fn ratio_is_rolled_with_the_seeded_rng() {
        let p = plan(vec![phase(0, None, 0.25, status(503))]);
        let hits = |seed| {
            let mut rng = seeded_rng(seed);
            (0..10_000)
                .filter(|_| p.effect(0, ms(1), &mut rng).is_some())
                .count()
        };
        let n = hits(7);
        assert_eq!(n, hits(7), "same seed, same draws");
        assert!((2300..2700).contains(&n), "about a quarter: {n}");
        let none = plan(vec![phase(0, None, 0.0, status(503))]);
        let mut rng = seeded_rng(1);
        assert!((0..100).all(|_| none.effect(0, ms(1), &mut rng).is_none()));
    }

    #[test]
    fn down_windows_merge_and_respect_precedence() {
        let down = || Inject::Down(Down);
        let p = plan(vec![
            phase(0, Some(100), 1.0, down()),
            phase(100, Some(100), 1.0, down()),
            phase(500, None, 1.0, down()),
        ]);
        assert_eq!(
            p.down_windows(0),
            vec![(ms(0), Some(ms(200))), (ms(500), None)]
        );
        assert!(p.down_windows(1).is_empty());
        // An earlier status phase covering the start wins over a later down.
        let p = plan(vec![
            phase(0, Some(50), 1.0, status(503)),
            phase(0, Some(100), 1.0, down()),
        ]);
        assert_eq!(p.down_windows(0), vec![(ms(50), Some(ms(100)))]);
    }

    /// The index agrees with the plain rule (the first phase in file order
    /// that is on) at every edge and between edges, overlaps included.
    #[test]
    fn the_index_is_the_first_active_phase_in_file_order() {
        let phases = vec![
            phase(100, Some(100), 1.0, status(500)),
            phase(0, None, 1.0, status(501)),
            phase(150, Some(500), 1.0, status(502)),
            phase(50, Some(0), 1.0, status(503)),
            phase(700, Some(10), 1.0, status(504)),
        ];
        let p = plan(phases.clone());
        for t in 0..900 {
            let want = phases.iter().find(|ph| ph.active_at(ms(t)));
            assert_eq!(p.phase_at(0, ms(t)), want, "at {t} ms");
        }
        let gaps = plan(vec![
            phase(10, Some(10), 1.0, status(500)),
            phase(30, Some(10), 1.0, status(501)),
        ]);
        for t in 0..50 {
            let on = (10..20).contains(&t) || (30..40).contains(&t);
            assert_eq!(gaps.phase_at(0, ms(t)).is_some(), on, "at {t} ms");
        }
    }

    #[test]
    fn active_time_is_the_covered_part_of_the_horizon() {
        let p = plan(vec![
            phase(100, Some(200), 1.0, status(503)),
            phase(200, Some(200), 1.0, status(503)),
            phase(900, None, 1.0, status(503)),
        ]);
        assert_eq!(p.active_time(ms(1000)), ms(400));
        assert_eq!(p.active_time(ms(250)), ms(150));
        let nobody = FaultPlan::new(vec![false], p.phases.clone());
        assert_eq!(nobody.active_time(ms(1000)), Duration::ZERO);
    }

    #[test]
    fn a_hundred_thousand_phases_index_in_order() {
        let phases: Vec<Phase> = (0..100_000)
            .map(|i| phase(i * 10, Some(5), 1.0, status(503)))
            .collect();
        let p = plan(phases);
        assert!(p.phase_at(0, ms(999_990)).is_some());
        assert!(p.phase_at(0, ms(999_995)).is_none());
        assert!(p.phase_at(0, ms(12_343)).is_some());
        assert!(p.phase_at(0, ms(12_347)).is_none());
    }
}
