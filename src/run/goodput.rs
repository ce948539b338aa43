//! Goodput over time: per 100 ms, the user requests offered and those that
//! succeeded, the rejections of full queues, the attempt timeouts, the
//! retries and the queue depth at the fault target; per second, the latency
//! of the successes. And a verdict: after the fault (a surge, an outage),
//! did goodput come back within 10 % of its level before, and when — or is
//! the system still collapsed, and for how long (metastable failure:
//! Bronson et al., HotOS'21).
//!
//! One counter for both engines, bounded in memory like the timeline.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::latency::Latency;
use super::timeline::{BUCKET, MAX_BUCKETS};

/// Counts per 100 ms bucket, and success latencies per second.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GoodputCounts {
    pub offered: Vec<u64>,
    pub succeeded: Vec<u64>,
    pub rejected: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub retries: Vec<u64>,
    /// The deepest queue at the fault target(s) seen in the bucket.
    pub(crate) queue_depth: Vec<u64>,
    /// Per second.
    #[serde(with = "super::wire::latencies")]
    pub(crate) success_latency: Vec<Latency>,
    /// Success latencies not yet in `success_latency`, by second
    /// ([`GoodputCounts::succeeded_unrecorded`]): recorded when these counts
    /// are added to a sum.
    #[serde(skip)]
    unrecorded: Vec<(usize, Duration)>,
}

/// The most seconds of success latencies kept (an hour).
const MAX_SECONDS: usize = 3600;

fn bucket(at: Duration) -> Option<usize> {
    let i = usize::try_from(at.as_nanos() / BUCKET.as_nanos()).unwrap_or(usize::MAX);
    (i < MAX_BUCKETS).then_some(i)
}

fn bump(v: &mut Vec<u64>, at: Duration, n: u64) {
    if let Some(i) = bucket(at) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] += n;
    }
}

fn add_all(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

impl GoodputCounts {
    pub(crate) fn offered(&mut self, at: Duration) {
        bump(&mut self.offered, at, 1);
    }

    /// A user request succeeded at `at` after `latency`.
    pub(crate) fn succeeded(&mut self, at: Duration, latency: Duration) {
        bump(&mut self.succeeded, at, 1);
        let s = usize::try_from(at.as_secs()).unwrap_or(usize::MAX);
        if s < MAX_SECONDS {
            self.record_success(s, latency);
        }
    }

    /// As [`GoodputCounts::succeeded`], for counts that are only ever added
    /// to a sum (a simulated trial's): the latency is kept as a sample and
    /// recorded into the sum's histogram by [`GoodputCounts::add`], the
    /// same buckets as recording it here. A trial of a few requests then
    /// does not build, merge and clear a histogram per second (before, that
    /// was most of a simulated trial's instructions).
    pub(crate) fn succeeded_unrecorded(&mut self, at: Duration, latency: Duration) {
        bump(&mut self.succeeded, at, 1);
        let s = usize::try_from(at.as_secs()).unwrap_or(usize::MAX);
        if s < MAX_SECONDS {
            self.unrecorded.push((s, latency));
        }
    }

    fn record_success(&mut self, s: usize, latency: Duration) {
        if self.success_latency.len() <= s {
            self.success_latency.resize_with(s + 1, Latency::compact);
        }
        self.success_latency[s].record(latency);
    }

    pub(crate) fn rejected(&mut self, at: Duration) {
        bump(&mut self.rejected, at, 1);
    }

    pub(crate) fn timed_out(&mut self, at: Duration) {
        bump(&mut self.timeouts, at, 1);
    }

    pub(crate) fn retried(&mut self, at: Duration) {
        bump(&mut self.retries, at, 1);
    }

    /// The queue at the target is `depth` deep at `at`.
    pub(crate) fn depth(&mut self, at: Duration, depth: u64) {
        if let Some(i) = bucket(at) {
            if self.queue_depth.len() <= i {
                self.queue_depth.resize(i + 1, 0);
            }
            self.queue_depth[i] = self.queue_depth[i].max(depth);
        }
    }

    pub(crate) fn add(&mut self, o: &GoodputCounts) {
        add_all(&mut self.offered, &o.offered);
        add_all(&mut self.succeeded, &o.succeeded);
        add_all(&mut self.rejected, &o.rejected);
        add_all(&mut self.timeouts, &o.timeouts);
        add_all(&mut self.retries, &o.retries);
        // Over trials: the sum of each trial's deepest, reported as the mean.
        add_all(&mut self.queue_depth, &o.queue_depth);
        if self.success_latency.len() < o.success_latency.len() {
            self.success_latency
                .resize_with(o.success_latency.len(), Latency::compact);
        }
        for (a, b) in self.success_latency.iter_mut().zip(&o.success_latency) {
            a.merge(b);
        }
        for &(s, latency) in &o.unrecorded {
            self.record_success(s, latency);
        }
    }

    pub(crate) fn clear(&mut self) {
        for v in [
            &mut self.offered,
            &mut self.succeeded,
            &mut self.rejected,
            &mut self.timeouts,
            &mut self.retries,
            &mut self.queue_depth,
        ] {
            v.clear();
        }
        self.success_latency.clear();
        self.unrecorded.clear();
    }
}

/// Goodput over time, as reports show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    pub(crate) bucket_ms: u64,
    /// Per bucket (means per trial in a simulation).
    pub offered: Vec<u64>,
    pub goodput: Vec<u64>,
    pub rejected: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub retries: Vec<u64>,
    pub(crate) queue_depth: Vec<u64>,
    pub per_second: Vec<Second>,
    /// Absent without a fault window to judge recovery by, or without a
    /// full second of goodput before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// One second of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    pub offered: u64,
    pub goodput: u64,
    /// Latency of the successes, ms (0 without any).
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
}

/// Did goodput come back after the fault?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `recovered` or `collapsed`; under the `last-half` rule also
    /// `degraded`; under either, `collapsed-before-fault` when goodput before
    /// the fault was already below 5 % of the offered load, and `unjudged`
    /// when the run ends without a whole second after the fault.
    pub state: String,
    /// The rule the state was judged by: `within-tolerance` or `last-half`
    /// (absent in reports written before the rule was named:
    /// `within-tolerance`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rule: String,
    /// Mean successful user requests per second over the judged window
    /// after the fault (`last-half`: the run's second half, from the fault's
    /// end if later; `within-tolerance`: from the fault's end to the end).
    #[serde(default)]
    pub(crate) goodput_after_per_s: f64,
    /// Successful user requests per second before the fault.
    pub(crate) baseline_per_s: f64,
    /// When the fault (the last phase) ended.
    pub(crate) fault_end_ms: f64,
    /// The start of the first second back within 10 % of the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_at_ms: Option<f64>,
    /// How long goodput stayed below after the fault: to recovery, or to the
    /// end of the run.
    pub below_for_ms: f64,
}

/// Goodput within 10 % of the baseline counts as recovered.
pub(crate) const RECOVERED_WITHIN: f64 = 0.1;

/// `last-half`: the run's last half at or above this share of the
/// baseline is recovered.
pub(crate) const LAST_HALF_RECOVERED: f64 = 0.8;
/// `last-half`: below this share of the baseline, collapsed (between the
/// two, degraded); before the fault, goodput below this share of the
/// offered load is `collapsed-before-fault`.
pub(crate) const COLLAPSED_BELOW: f64 = 0.05;

/// How a run's recovery is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecoveryRule {
    /// Recovered when some whole second after the fault is back within 10 %
    /// of the baseline (the first rule; chaos and the library default).
    #[default]
    WithinTolerance,
    /// The published metastable experiment: the mean goodput over the run's
    /// last half (from the fault's end if later) against the pre-fault mean:
    /// recovered at 0.80× or above, collapsed below 0.05×, degraded between.
    LastHalf,
}

impl RecoveryRule {
    pub fn name(self) -> &'static str {
        match self {
            RecoveryRule::WithinTolerance => "within-tolerance",
            RecoveryRule::LastHalf => "last-half",
        }
    }
}

impl Goodput {
    /// Judges the per-second series again under `rule`, for a run of
    /// `horizon` whose fault is in force over `fault`.
    pub(crate) fn rejudge(
        &mut self,
        horizon: Duration,
        fault: Option<(Duration, Duration)>,
        rule: RecoveryRule,
    ) {
        self.verdict =
            fault.and_then(|(start, end)| judge(&self.per_second, start, end, horizon, rule));
    }
}

/// The report of `c` (sums over `k` trials), over a run of `horizon`, whose
/// fault is in force over `fault` (first start, last end), if any.
pub(crate) fn report(
    c: &GoodputCounts,
    k: u64,
    horizon: Duration,
    fault: Option<(Duration, Duration)>,
) -> Goodput {
    let mean =
        |v: &[u64]| -> Vec<u64> { v.iter().map(|&x| super::build::per_trial(x, k)).collect() };
    // Whole seconds within the horizon.
    let seconds = usize::try_from(horizon.as_secs())
        .unwrap_or(usize::MAX)
        .min(MAX_SECONDS)
        .min(c.offered.len().max(c.succeeded.len()).div_ceil(10));
    let per_bucket = |v: &[u64], s: usize| -> u64 { v.iter().skip(s * 10).take(10).sum() };
    let per_second: Vec<Second> = (0..seconds)
        .map(|s| {
            let q = c
                .success_latency
                .get(s)
                .filter(|l| !l.is_empty())
                .map(Latency::quantiles);
            Second {
                offered: super::build::per_trial(per_bucket(&c.offered, s), k),
                goodput: super::build::per_trial(per_bucket(&c.succeeded, s), k),
                p50_ms: q.map_or(0.0, |q| q.p50),
                p99_ms: q.map_or(0.0, |q| q.p99),
            }
        })
        .collect();
    let verdict = fault.and_then(|(start, end)| {
        judge(
            &per_second,
            start,
            end,
            horizon,
            RecoveryRule::WithinTolerance,
        )
    });
    Goodput {
        bucket_ms: BUCKET.as_millis() as u64,
        offered: mean(&c.offered),
        goodput: mean(&c.succeeded),
        rejected: mean(&c.rejected),
        timeouts: mean(&c.timeouts),
        retries: mean(&c.retries),
        queue_depth: mean(&c.queue_depth),
        per_second,
        verdict,
    }
}

/// The baseline is the mean goodput of the whole seconds before the fault
/// (the first second left out when there are more: it starts cold). When it
/// is below 5 % of the load offered over those seconds, the run had
/// collapsed before the fault: `collapsed-before-fault`. Otherwise, under
/// `within-tolerance`, the system has recovered at the first whole second
/// after the fault whose goodput is within 10 % of the baseline; under
/// `last-half`, by the mean goodput over the whole seconds of the run's last
/// half (from the fault's end if later) against the baseline; `unjudged`
/// when the run has no whole second after the fault. `None` without a whole
/// second before the fault or without any load offered then.
pub(crate) fn judge(
    seconds: &[Second],
    start: Duration,
    end: Duration,
    horizon: Duration,
    rule: RecoveryRule,
) -> Option<Verdict> {
    let before = usize::try_from(start.as_secs()).ok()?.min(seconds.len());
    let warm = if before > 1 { 1 } else { 0 };
    let pre = &seconds[warm..before];
    if pre.is_empty() {
        return None;
    }
    let mean = |s: &[Second], f: fn(&Second) -> u64| -> f64 {
        if s.is_empty() {
            0.0
        } else {
            s.iter().map(|x| f(x) as f64).sum::<f64>() / s.len() as f64
        }
    };
    let baseline = mean(pre, |s| s.goodput);
    let offered = mean(pre, |s| s.offered);
    let first_after = usize::try_from(end.as_nanos().div_ceil(1_000_000_000)).ok()?;
    let end_ms = end.as_secs_f64() * 1e3;
    let horizon_ms = horizon.as_secs_f64() * 1e3;
    let judged_from = match rule {
        RecoveryRule::WithinTolerance => first_after,
        RecoveryRule::LastHalf => first_after.max(seconds.len().div_ceil(2)),
    };
    let judged = seconds.get(judged_from..).unwrap_or(&[]);
    let after = mean(judged, |s| s.goodput);
    let back = seconds
        .iter()
        .enumerate()
        .skip(first_after)
        .find(|(_, s)| baseline > 0.0 && s.goodput as f64 >= (1.0 - RECOVERED_WITHIN) * baseline)
        .map(|(i, _)| i);
    let mut v = Verdict {
        state: String::new(),
        rule: rule.name().into(),
        goodput_after_per_s: after,
        baseline_per_s: baseline,
        fault_end_ms: end_ms,
        recovered_at_ms: back.map(|i| i as f64 * 1e3),
        below_for_ms: match back {
            Some(i) => (i as f64 * 1e3 - end_ms).max(0.0),
            None => (horizon_ms - end_ms).max(0.0),
        },
    };
    if offered <= 0.0 {
        return None;
    }
    v.state = if baseline < COLLAPSED_BELOW * offered {
        "collapsed-before-fault"
    } else if judged.is_empty() {
        // No whole second after the fault: nothing to judge recovery by,
        // and "collapsed" would be a guess.
        "unjudged"
    } else {
        match rule {
            RecoveryRule::WithinTolerance if back.is_some() => "recovered",
            RecoveryRule::WithinTolerance => "collapsed",
            RecoveryRule::LastHalf if after >= LAST_HALF_RECOVERED * baseline => "recovered",
            RecoveryRule::LastHalf if after < COLLAPSED_BELOW * baseline => "collapsed",
            RecoveryRule::LastHalf => "degraded",
        }
    }
    .into();
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(goodput: &[u64]) -> Vec<Second> {
        goodput
            .iter()
            .map(|&g| Second {
                goodput: g,
                offered: 100,
                ..Second::default()
            })
            .collect()
    }

    fn verdict(s: &[Second], start: Duration, end: Duration, h: Duration) -> Option<Verdict> {
        judge(s, start, end, h, RecoveryRule::WithinTolerance)
    }

    #[test]
    fn the_last_half_rule_judges_the_mean_of_the_runs_second_half() {
        let at = Duration::from_secs;
        // 10 s, fault 2–4 s: the last half is 5–9 s.
        let late = secs(&[100, 100, 100, 0, 0, 0, 0, 0, 95, 95]);
        let within = judge(&late, at(3), at(4), at(10), RecoveryRule::WithinTolerance).unwrap();
        assert_eq!(within.state, "recovered", "back within 10 % at 8 s");
        let half = judge(&late, at(3), at(4), at(10), RecoveryRule::LastHalf).unwrap();
        assert_eq!(
            (half.state.as_str(), half.rule.as_str()),
            ("degraded", "last-half")
        );
        assert_eq!(half.goodput_after_per_s, 38.0);
        let gone = secs(&[100, 100, 100, 0, 0, 0, 0, 0, 0, 4]);
        let v = judge(&gone, at(3), at(4), at(10), RecoveryRule::LastHalf).unwrap();
        assert_eq!(v.state, "collapsed");
        let fine = secs(&[100, 100, 100, 0, 0, 90, 80, 80, 80, 80]);
        let v = judge(&fine, at(3), at(4), at(10), RecoveryRule::LastHalf).unwrap();
        assert_eq!(v.state, "recovered");
        let before = secs(&[1, 2, 3, 0, 0, 100, 100, 100, 100, 100]);
        for rule in [RecoveryRule::LastHalf, RecoveryRule::WithinTolerance] {
            let v = judge(&before, at(3), at(4), at(10), rule).unwrap();
            assert_eq!(v.state, "collapsed-before-fault");
        }
    }

    #[test]
    fn a_run_that_ends_with_the_fault_is_unjudged_not_collapsed() {
        let at = Duration::from_secs;
        let s = secs(&[100, 100, 100, 0, 0]);
        for rule in [RecoveryRule::LastHalf, RecoveryRule::WithinTolerance] {
            let v = judge(&s, at(3), at(5), at(5), rule).unwrap();
            assert_eq!(v.state, "unjudged", "{rule:?}");
        }
        let v = judge(&s, at(3), at(4), at(5), RecoveryRule::LastHalf).unwrap();
        assert_eq!(v.state, "collapsed", "one whole second after the fault");
    }

    #[test]
    fn recovered_at_the_first_second_back_within_ten_percent() {
        let s = secs(&[50, 100, 100, 10, 0, 40, 91, 100]);
        let v = verdict(
            &s,
            Duration::from_secs(3),
            Duration::from_secs(5),
            Duration::from_secs(8),
        )
        .unwrap();
        assert_eq!(v.state, "recovered");
        assert_eq!(v.baseline_per_s, 100.0, "the cold first second left out");
        assert_eq!(v.recovered_at_ms, Some(6000.0));
        assert_eq!(v.below_for_ms, 1000.0);
        let s = secs(&[100, 100, 100, 10, 0, 40, 89, 80]);
        let v = verdict(
            &s,
            Duration::from_secs(3),
            Duration::from_secs(5),
            Duration::from_secs(8),
        )
        .unwrap();
        assert_eq!((v.state.as_str(), v.below_for_ms), ("collapsed", 3000.0));
        assert!(
            verdict(
                &s,
                Duration::ZERO,
                Duration::from_secs(5),
                Duration::from_secs(8)
            )
            .is_none()
        );
    }

    #[test]
    fn buckets_add_up_into_seconds() {
        let mut c = GoodputCounts::default();
        for ms in [0, 150, 999, 1000] {
            c.offered(Duration::from_millis(ms));
            c.succeeded(Duration::from_millis(ms), Duration::from_millis(5));
        }
        c.depth(Duration::from_millis(10), 3);
        c.depth(Duration::from_millis(20), 2);
        let g = report(&c, 1, Duration::from_secs(2), None);
        assert_eq!(g.per_second.len(), 2);
        assert_eq!((g.per_second[0].goodput, g.per_second[1].goodput), (3, 1));
        assert_eq!(g.per_second[0].p50_ms, 5.0);
        assert_eq!(g.queue_depth[0], 3);
    }
}
