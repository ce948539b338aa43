//! Fitting a backoff schedule and its jitter to measured waits.
//!
//! The input is every wait the client took before retry k, for each k,
//! pooled over the scenarios and runs that retried. Jitter shows in the
//! spread of one index across runs; each kind draws from a known interval
//! around the nominal wait b_k (full [0, b], equal [b/2, b], proportional
//! [b(1-r), b(1+r)], decorrelated [base, 3·previous]), so the interval's
//! estimated ends give both the kind and b_k. The kind of schedule
//! (constant, linear, exponential, with a cap) is then the simplest model
//! that reproduces b_1..b_K. Where two explanations fit the data equally
//! (two waits of 100 and 200 ms are linear and exponential alike; equal
//! jitter is proportional ±33 % around three quarters of the wait), the fit
//! says so instead of guessing quietly.

mod jitter;
mod schedule;

use jitter::{classify_jitter, decorrelated, nominal_of};
use schedule::fit_schedule;

use serde::Serialize;

use super::Confidence;
use crate::policy::{BackoffKind, Jitter};

/// Timing noise the probe allows on any wait: process wake-up, the client's
/// own timer resolution, loopback, and scheduling on a busy machine.
const NOISE_MS: f64 = 4.0;
/// And in proportion to the wait.
const NOISE_REL: f64 = 0.02;

/// The retries whose waits are fitted: the first this many. A client that
/// retries thousands of times has long reached its cap by then, and fitting
/// every index would cost time and text in proportion to their square.
pub const MAX_FITTED_RETRIES: usize = 32;

fn noise(ms: f64) -> f64 {
    NOISE_MS + NOISE_REL * ms
}

/// The timing noise on this machine for this client: at least [`NOISE_MS`],
/// more when the waits that draw nothing (an honoured Retry-After, the
/// hold of a hanging attempt) spread wider.
fn noise_at(ms: f64, floor_ms: f64) -> f64 {
    floor_ms.max(NOISE_MS) + NOISE_REL * ms
}

/// A retry sent within this long of the failure is sent at once: a wait of
/// a few ms is the client's own work (a new connection, an exception
/// raised and caught), not a backoff, and its spread is not jitter.
pub(crate) fn immediate_ms(floor_ms: f64) -> f64 {
    IMMEDIATE_MS.max(2.0 * floor_ms)
}

/// The shortest wait the probe calls a wait.
pub const IMMEDIATE_MS: f64 = 25.0;

/// Drawn waits all under this many times [`immediate_ms`] are not read for
/// their schedule or jitter at more than low confidence: the client's own
/// work per retry is a large, varying part of them.
pub const SMALL_DRAWS: f64 = 6.0;

/// The spread of one retry index's waits.
#[derive(Debug, Clone, Serialize)]
pub struct IndexStats {
    /// 1 for the wait before the first retry.
    pub retry: u32,
    pub n: usize,
    pub min_ms: f64,
    pub median_ms: f64,
    pub max_ms: f64,
    /// Waits set aside as outliers (a stall far above the rest).
    pub outliers: usize,
    /// The estimated ends of the interval the waits are drawn from.
    #[serde(skip)]
    lo_end: f64,
    #[serde(skip)]
    hi_end: f64,
    /// The spread of the middle 80 % of the waits (all of them when few).
    #[serde(skip)]
    middle_spread: f64,
    /// From the lowest waits (the 10th percentile, or the least) to the
    /// median: a late wake-up only delays, so noise piles the waits at
    /// the bottom and stretches the top, while jitter spreads both halves.
    #[serde(skip)]
    lower_half: f64,
}

impl IndexStats {
    fn new(retry: u32, samples: &[f64]) -> Option<IndexStats> {
        let mut xs: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if xs.is_empty() {
            return None;
        }
        xs.sort_by(f64::total_cmp);
        // A stall on a busy machine makes one wait far longer than the rest;
        // drawn waits are never that far apart when there are many of them.
        let mut outliers = 0;
        while xs.len() > 5 {
            let n = xs.len();
            let range = xs[n - 2] - xs[0];
            if xs[n - 1] - xs[n - 2] > 0.25 * range + noise(xs[n - 2]) {
                xs.pop();
                outliers += 1;
            } else {
                break;
            }
        }
        let n = xs.len();
        let (lo, hi) = (xs[0], xs[n - 1]);
        let median = if n % 2 == 1 {
            xs[n / 2]
        } else {
            (xs[n / 2 - 1] + xs[n / 2]) / 2.0
        };
        let q = |p: f64| xs[((n - 1) as f64 * p).round() as usize];
        let middle_spread = if n >= 10 { q(0.9) - q(0.1) } else { hi - lo };
        let lower_half = median - if n >= 10 { q(0.1) } else { lo };
        // The ends of a uniform interval from n draws: the i-th smallest
        // lies at a + (b - a)·i/(n + 1) on average, the draws evenly spaced.
        // A busy machine makes a few waits late by up to 20 ms (beside the
        // usual 2): with many draws, a wait that stands off from the next
        // by several spacings at either end is set aside, and the ends come
        // from the outermost waits kept, by their ranks.
        let (lo_end, hi_end) = if n >= 10 {
            let spacing = (xs[n - 2] - xs[1]) / (n - 3) as f64;
            let stands_off = |gap: f64| gap > 4.0 * spacing + 1.0;
            let (mut bottom, mut top) = (0, 0);
            while top < n / 5 && stands_off(xs[n - 1 - top] - xs[n - 2 - top]) {
                top += 1;
            }
            while bottom < n / 5 && stands_off(xs[bottom + 1] - xs[bottom]) {
                bottom += 1;
            }
            let (i_lo, i_hi) = (bottom + 1, n - top);
            let width = (xs[i_hi - 1] - xs[i_lo - 1]) * (n + 1) as f64 / (i_hi - i_lo) as f64;
            let a = xs[i_lo - 1] - width * i_lo as f64 / (n + 1) as f64;
            (a, a + width)
        } else if n > 1 {
            let pad = (hi - lo) / (n - 1) as f64;
            (lo - pad, hi + pad)
        } else {
            (lo, hi)
        };
        Some(IndexStats {
            retry,
            n,
            min_ms: lo,
            median_ms: median,
            max_ms: hi,
            outliers,
            lo_end: lo_end.max(0.0),
            hi_end,
            middle_spread,
            lower_half,
        })
    }

    /// Whether the waits spread beyond timing noise. Noise is a few late
    /// waits, so with many waits the middle 80 % decides; jitter spreads
    /// them all.
    fn jittered(&self, floor_ms: f64) -> bool {
        // Timers oversleep by a few ms and a busy machine adds a late tail,
        // neither of which spreads the lower half by more than a little.
        let low = floor_ms.max(NOISE_MS) + 0.01 * self.median_ms;
        self.middle_spread > noise_at(self.median_ms, floor_ms) && self.lower_half > low
    }

    /// Lower end over upper end of the interval: 0 for full jitter, 1/2
    /// for equal, (1-r)/(1+r) for proportional.
    fn end_ratio(&self) -> f64 {
        if self.hi_end <= 0.0 {
            1.0
        } else {
            self.lo_end / self.hi_end
        }
    }
}

/// A fitted schedule.
#[derive(Debug, Clone, Serialize)]
pub struct BackoffFit {
    #[serde(serialize_with = "ser_kind")]
    pub kind: BackoffKind,
    pub base_ms: f64,
    /// Exponential only; `None` when the waits do not show it.
    pub multiplier: Option<f64>,
    pub cap_ms: Option<f64>,
    #[serde(serialize_with = "ser_jitter")]
    pub jitter: Jitter,
    /// The nominal wait before each retry, as estimated.
    pub nominal_ms: Vec<f64>,
    pub per_retry: Vec<IndexStats>,
    pub kind_confidence: Confidence,
    pub kind_evidence: String,
    /// Other schedules that reproduce the waits as well.
    pub kind_alternatives: Vec<Alternative>,
    pub jitter_confidence: Confidence,
    pub jitter_evidence: String,
    pub jitter_alternatives: Vec<String>,
    /// Whether the schedule's figures reproduce the measured waits within
    /// the noise; when not, the figures are not reported as the policy.
    pub explained: bool,
    /// The first retry is sent at once and the schedule starts at retry 2
    /// (urllib3's and requests' `backoff_factor`).
    pub first_retry_immediate: bool,
    /// A growing schedule whose cap, if any, lies above this: no cap was
    /// reached within the waits seen.
    pub cap_unknown_above_ms: Option<f64>,
    /// Jitter added to the schedule, U(0, this): the same spread at every
    /// retry while the waits grow (got's `noise`).
    pub additive_jitter_ms: Option<f64>,
}

fn ser_kind<S: serde::Serializer>(k: &BackoffKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.as_str())
}

fn ser_jitter<S: serde::Serializer>(j: &Jitter, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(j.as_str())
}

/// Another schedule that fits the waits.
#[derive(Debug, Clone, Serialize)]
pub struct Alternative {
    #[serde(serialize_with = "ser_kind")]
    pub kind: BackoffKind,
    pub base_ms: f64,
    pub multiplier: Option<f64>,
    pub cap_ms: Option<f64>,
    /// `linear from 100 ms capped at 300 ms`.
    pub text: String,
}

/// Fits the waits, `by_retry[k-1]` holding every wait before retry k (ms),
/// on the first [`MAX_FITTED_RETRIES`] retries, with `floor_ms` the timing
/// noise measured on waits that draw nothing. `None` when there is no wait
/// at all.
pub(crate) fn fit(by_retry: &[Vec<f64>], floor_ms: f64) -> Option<BackoffFit> {
    // Past the first retries the caller has set them aside already; the
    // schedule's fit below is quadratic in the number of indices.
    let by_retry = &by_retry[..by_retry.len().min(MAX_FITTED_RETRIES)];
    let stats: Vec<IndexStats> = by_retry
        .iter()
        .enumerate()
        .map_while(|(i, s)| IndexStats::new(i as u32 + 1, s))
        .collect();
    if stats.is_empty() {
        return None;
    }
    let evidence = waits_evidence(&stats);
    let at_once_ms = immediate_ms(floor_ms);
    let at_once: Vec<bool> = stats.iter().map(|s| s.max_ms <= at_once_ms).collect();
    if at_once.iter().all(|&a| a) {
        return Some(immediate(stats, evidence, at_once_ms));
    }
    // urllib3 and requests send the first retry at once and back off from
    // the second on: the schedule is fitted where it acts.
    // One slow wake-up on a loaded machine must not hide a first retry sent
    // at once: it still is when its median is, and even its slowest wait is
    // under a tenth of the second retry's quickest (a jittered first wait
    // overlaps the second's range instead).
    let first_at_once = at_once[0]
        || (stats.len() > 1
            && stats[0].median_ms <= at_once_ms
            && stats[0].max_ms < 0.1 * stats[1].min_ms);
    let skip = usize::from(first_at_once && at_once[1..].iter().all(|&a| !a));
    let tail = &stats[skip..];
    let jitter = classify_jitter(tail, floor_ms);
    let mut nominal: Vec<f64> = vec![0.0; skip];
    nominal.extend(tail.iter().map(|s| match jitter.additive_ms {
        Some(_) => s.lo_end,
        None => nominal_of(s, jitter.jitter),
    }));
    let mut jitter = jitter;
    let longest = tail.iter().map(|s| s.max_ms).fold(0.0, f64::max);
    let blurred = jitter.jitter != Jitter::None && longest < SMALL_DRAWS * at_once_ms;
    if blurred {
        // botocore draws U(0, 50 ms) then U(0, 100 ms) after a 5xx; its own
        // work per retry (re-signing, on a loaded machine) adds 15-45 ms,
        // and the waits read as a constant 105 ms.
        jitter.confidence = Confidence::Low;
        jitter.evidence += &format!(
            "; every wait is under {} ms, within a few times a client's own work per retry, so the draws are not read apart from it",
            fmt_ms(SMALL_DRAWS * at_once_ms)
        );
    }
    if jitter.jitter == Jitter::Decorrelated {
        return Some(decorrelated(stats, jitter, nominal, evidence));
    }
    let schedule = fit_schedule(&nominal[skip..], skip + 1, jitter.jitter != Jitter::None);
    let mut kind_evidence = format!("{evidence}; {}", schedule.why);
    if skip == 1 {
        kind_evidence += &if at_once[0] {
            format!(
                "; the first retry follows at once (within {} ms), the schedule acts from retry 2",
                fmt_ms(at_once_ms)
            )
        } else {
            format!(
                "; the first retry follows at once (median within {} ms; its slowest, {} ms, under a tenth of retry 2's quickest), the schedule acts from retry 2",
                fmt_ms(at_once_ms),
                fmt_ms(stats[0].max_ms)
            )
        };
    }
    let growing = matches!(
        schedule.kind,
        BackoffKind::Linear | BackoffKind::Exponential
    );
    let cap_unknown_above_ms = (schedule.explained && growing && schedule.cap.is_none())
        .then(|| nominal.last().copied().unwrap_or(0.0));
    Some(BackoffFit {
        kind: schedule.kind,
        base_ms: schedule.base,
        multiplier: schedule.multiplier,
        cap_ms: schedule.cap,
        jitter: jitter.jitter,
        nominal_ms: nominal,
        per_retry: stats,
        // The nominal waits are read through the jitter's interval (the
        // top of the draws for full jitter): where the kind of jitter is
        // unsure, so is the schedule (botocore's full jitter over two
        // retries read as exponential ×3 from 675 ms, not 1 s ×2).
        kind_confidence: if jitter.jitter == Jitter::None {
            schedule.confidence
        } else {
            schedule.confidence.min(jitter.confidence)
        },
        kind_evidence,
        kind_alternatives: schedule.alternatives,
        jitter_confidence: jitter.confidence,
        jitter_evidence: jitter.evidence,
        jitter_alternatives: jitter.alternatives,
        explained: schedule.explained,
        first_retry_immediate: skip == 1,
        cap_unknown_above_ms,
        additive_jitter_ms: jitter.additive_ms,
    })
}

/// Every retry follows at once: no backoff, and no jitter to judge.
fn immediate(stats: Vec<IndexStats>, evidence: String, at_once_ms: f64) -> BackoffFit {
    let n: usize = stats.iter().map(|s| s.n).sum();
    let confidence = if n >= 4 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let longest = stats.iter().map(|s| s.max_ms).fold(0.0, f64::max);
    BackoffFit {
        kind: BackoffKind::None,
        base_ms: 0.0,
        multiplier: None,
        cap_ms: None,
        jitter: Jitter::None,
        nominal_ms: vec![0.0; stats.len()],
        per_retry: stats,
        kind_confidence: confidence,
        kind_evidence: format!(
            "{evidence}; every retry follows within {} ms of the failure (longest {} ms): sent at once, the spread is the client's own work and timing noise",
            fmt_ms(at_once_ms),
            fmt_ms(longest)
        ),
        kind_alternatives: Vec::new(),
        jitter_confidence: confidence,
        jitter_evidence: "no wait to jitter".into(),
        jitter_alternatives: Vec::new(),
        explained: true,
        first_retry_immediate: false,
        cap_unknown_above_ms: None,
        additive_jitter_ms: None,
    }
}

/// `waits 98/204/395 ms (median of 30/30/25)`.
fn waits_evidence(stats: &[IndexStats]) -> String {
    let medians: Vec<String> = stats.iter().map(|s| fmt_ms(s.median_ms)).collect();
    let counts: Vec<String> = stats.iter().map(|s| s.n.to_string()).collect();
    format!(
        "median waits {} ms before retries 1..{} (from {} waits)",
        medians.join("/"),
        stats.len(),
        counts.join("/")
    )
}

pub(crate) fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Backoff, seeded_rng};
    use std::time::Duration;

    /// Waits drawn by the policy engine itself for `runs` requests.
    fn drawn(b: &Backoff, retries: u32, runs: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = seeded_rng(seed);
        let mut by = vec![Vec::new(); retries as usize];
        for _ in 0..runs {
            let mut prev = b.initial_prev();
            for k in 1..=retries {
                let w = b.wait(k, prev, &mut rng);
                prev = w;
                by[k as usize - 1].push(w.as_secs_f64() * 1e3);
            }
        }
        by
    }

    /// The fit at the default noise floor.
    fn fit(by_retry: &[Vec<f64>]) -> Option<BackoffFit> {
        super::fit(by_retry, 0.0)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn backoff(kind: BackoffKind, base: u64, cap: Option<u64>, jitter: Jitter) -> Backoff {
        Backoff {
            kind,
            base: ms(base),
            multiplier: 2.0,
            cap: cap.map(ms),
            jitter,
        }
    }

    #[test]
    fn exact_exponential_with_a_plateau() {
        let f = fit(&[
            vec![100.0; 5],
            vec![200.0; 5],
            vec![300.0; 5],
            vec![300.0; 5],
        ])
        .unwrap();
        assert_eq!(f.kind, BackoffKind::Exponential);
        assert_eq!(f.jitter, Jitter::None);
        assert!((f.base_ms - 100.0).abs() < 1.0, "{f:?}");
        assert_eq!(f.multiplier, Some(2.0));
        assert_eq!(f.cap_ms, Some(300.0));
    }

    /// urllib3 `backoff_factor=0.2` as the real-time smoke test saw it on a
    /// loaded CI machine: one first wait woke 32 ms late. The first retry is
    /// still at once, and the schedule is 400 ms ×2 from retry 2.
    #[test]
    fn one_late_wake_up_does_not_hide_a_first_retry_at_once() {
        let f = super::fit(
            &[
                vec![0.68, 4.66, 31.97],
                vec![401.58, 403.13, 404.23],
                vec![801.33, 801.65, 801.67],
            ],
            0.0,
        )
        .unwrap();
        assert!(f.first_retry_immediate, "{f:?}");
        assert_eq!(f.kind, BackoffKind::Exponential);
        assert!(
            (f.base_ms * f.multiplier.unwrap() - 400.0).abs() < 40.0,
            "{f:?}"
        );
        assert!(
            f.kind_evidence.contains("its slowest, 32.0 ms"),
            "{}",
            f.kind_evidence
        );
    }

    /// A jittered first wait whose range reaches the second's is not at
    /// once, even when its median is small.
    #[test]
    fn a_jittered_first_wait_is_not_taken_for_at_once() {
        let f = super::fit(&[vec![1.0, 3.0, 60.0], vec![10.0, 150.0, 190.0]], 0.0).unwrap();
        assert!(!f.first_retry_immediate, "{f:?}");
    }

    #[test]
    fn two_waits_that_double_are_ambiguous() {
        let f = fit(&[vec![100.0; 5], vec![200.0; 5]]).unwrap();
        assert_eq!(f.kind, BackoffKind::Exponential);
        assert_eq!(f.kind_confidence, Confidence::Low);
        assert_eq!(f.kind_alternatives[0].kind, BackoffKind::Linear, "{f:?}");
    }

    #[test]
    fn constant_linear_and_none() {
        let f = fit(&[
            vec![1000.0, 1001.0],
            vec![1000.5, 1002.0],
            vec![1001.0, 1000.0],
        ])
        .unwrap();
        assert_eq!((f.kind, f.jitter), (BackoffKind::Constant, Jitter::None));
        let f = fit(&[vec![100.0], vec![200.0], vec![300.0], vec![400.0]]).unwrap();
        assert_eq!(f.kind, BackoffKind::Linear);
        let f = fit(&[vec![0.3, 0.5], vec![0.4, 0.2]]).unwrap();
        assert_eq!(f.kind, BackoffKind::None);
        assert!(fit(&[]).is_none());
    }

    #[test]
    fn jitter_kinds_from_the_engines_own_draws() {
        let cases = [
            (Jitter::Full, "full"),
            (Jitter::Equal, "equal"),
            (Jitter::Proportional { ratio: 0.15 }, "proportional"),
            (Jitter::Decorrelated, "decorrelated"),
        ];
        for (jitter, name) in cases {
            for seed in 0..5 {
                let b = backoff(BackoffKind::Exponential, 100, Some(10_000), jitter);
                let f = fit(&drawn(&b, 3, 30, seed)).unwrap();
                assert_eq!(f.jitter.as_str(), name, "seed {seed}: {f:#?}");
                assert_eq!(
                    f.jitter_confidence,
                    if jitter == Jitter::Equal {
                        Confidence::Medium
                    } else {
                        Confidence::High
                    }
                );
                let base_err = (f.base_ms - 100.0).abs() / 100.0;
                assert!(base_err < 0.1, "{name} seed {seed}: base {}", f.base_ms);
                if jitter != Jitter::Decorrelated {
                    assert_eq!(f.kind, BackoffKind::Exponential, "{name} {f:#?}");
                    let m = f.multiplier.unwrap();
                    assert!((m - 2.0).abs() < 0.3, "{name} seed {seed}: ×{m}");
                }
                if let Jitter::Proportional { ratio } = f.jitter {
                    assert!((ratio - 0.15).abs() < 0.05, "{ratio}");
                }
            }
        }
    }

    /// The harness's reference client: 3 attempts (2 waits), full jitter
    /// on 100 ms ×2, 25 runs, each wait a few ms late as on a busy machine.
    /// Its shortest waits rise from about 0 to about b/26, which the
    /// additive test once took for an interval that moves.
    #[test]
    fn full_jitter_over_two_retries_is_not_additive() {
        let b = backoff(BackoffKind::Exponential, 100, None, Jitter::Full);
        for seed in 0..200 {
            let mut by = drawn(&b, 2, 25, seed);
            for (k, waits) in by.iter_mut().enumerate() {
                for (i, w) in waits.iter_mut().enumerate() {
                    *w += ((i * 7 + k * 3 + seed as usize) % 5) as f64;
                }
            }
            let f = fit(&by).unwrap();
            assert_eq!(f.additive_jitter_ms, None, "seed {seed}: {f:#?}");
        }
    }

    #[test]
    fn a_stall_is_an_outlier_not_jitter() {
        let mut waits = vec![100.0; 29];
        waits.push(160.0);
        let f = fit(&[waits.clone(), waits.iter().map(|w| w * 2.0).collect()]).unwrap();
        assert_eq!(f.jitter, Jitter::None, "{f:#?}");
        assert_eq!(f.per_retry[0].outliers, 1);
    }

    /// got's waits after a reset in a field run of 2026-12-06 (got 14:
    /// 1 s, 2 s, each plus U(0, 100 ms)): the first retry's lower waits
    /// bunched within the noise, the second's spread 66 ms. Read as "no
    /// jitter" at high confidence before; a tie of one retry in two is
    /// now low, with jitter named as the alternative.
    #[test]
    fn one_retry_of_two_spread_is_not_no_jitter_with_confidence() {
        let waits = vec![
            vec![1035.9, 1041.2, 1047.4, 1071.8, 1096.5],
            vec![2029.1, 2049.7, 2065.0, 2081.3, 2095.1],
        ];
        let f = super::fit(&waits, 4.81).unwrap();
        assert_eq!(f.jitter, Jitter::None, "{f:?}");
        assert_eq!(f.jitter_confidence, Confidence::Low, "{f:?}");
        assert_eq!(f.jitter_alternatives, ["jitter (retry 2 spread)"], "{f:?}");
        // Both retries within the noise: still no jitter, with confidence.
        let steady = vec![
            vec![1000.4, 1000.9, 1001.2, 1001.6, 1003.5],
            vec![2000.4, 2000.7, 2000.9, 2001.2, 2001.4],
        ];
        let f = super::fit(&steady, 4.81).unwrap();
        assert_eq!(f.jitter, Jitter::None, "{f:?}");
        assert_eq!(f.jitter_confidence, Confidence::High, "{f:?}");
    }

    /// boto3's 5xx waits as measured (botocore: U(0, 50 ms) then
    /// U(0, 100 ms), plus its own work per retry): read as a constant 105 ms
    /// with full jitter at medium confidence before; now low.
    #[test]
    fn small_drawn_waits_are_not_read_confidently() {
        let waits = vec![
            vec![15.1, 40.2, 59.2, 70.3, 96.0, 22.5, 61.0, 88.1],
            vec![32.4, 50.0, 76.6, 90.2, 116.0, 44.3, 70.8, 101.5],
        ];
        let f = super::fit(&waits, 0.0).unwrap();
        assert_ne!(f.jitter, Jitter::None, "{f:?}");
        assert_eq!(f.kind_confidence, Confidence::Low, "{f:?}");
        assert_eq!(f.jitter_confidence, Confidence::Low, "{f:?}");
    }
}
