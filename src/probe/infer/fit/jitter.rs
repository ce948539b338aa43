//! Which jitter explains the spread of one retry's waits across runs: each
//! kind draws from a known interval around the nominal wait, and a spread
//! within this machine's timing noise is no jitter.

use super::*;

pub(super) struct JitterVerdict {
    pub(super) jitter: Jitter,
    pub(super) confidence: Confidence,
    pub(super) evidence: String,
    pub(super) alternatives: Vec<String>,
    pub(super) additive_ms: Option<f64>,
}

pub(super) fn classify_jitter(stats: &[IndexStats], floor_ms: f64) -> JitterVerdict {
    let spread_seen = stats.iter().filter(|s| s.n >= 2).collect::<Vec<_>>();
    let samples: usize = spread_seen.iter().map(|s| s.n).sum();
    if spread_seen.is_empty() {
        return JitterVerdict {
            jitter: Jitter::None,
            confidence: Confidence::Low,
            evidence:
                "one wait per retry index: no spread to judge jitter from (use --runs 3 or more)"
                    .into(),
            alternatives: vec!["any jitter".into()],
            additive_ms: None,
        };
    }
    let jittered: Vec<&&IndexStats> = spread_seen
        .iter()
        .filter(|s| s.jittered(floor_ms))
        .collect();
    let spreads: Vec<String> = spread_seen
        .iter()
        .map(|s| {
            format!(
                "retry {}: {}–{} ms",
                s.retry,
                fmt_ms(s.min_ms),
                fmt_ms(s.max_ms)
            )
        })
        .collect();
    let by_samples = |n: usize| match n {
        n if n >= 20 => Confidence::High,
        n if n >= 8 => Confidence::Medium,
        _ => Confidence::Low,
    };
    // Noise strikes one retry here and there; jitter spreads them all.
    if jittered.len() * 2 <= spread_seen.len() {
        // Half of them spread (one retry of two: got's additive U(0, 100 ms)
        // over five runs, whose first retry's lower waits happened to
        // bunch) is no "here and there": not ruled out.
        let tie = !jittered.is_empty() && jittered.len() * 2 == spread_seen.len();
        let spread: Vec<String> = jittered
            .iter()
            .map(|s| format!("retry {}", s.retry))
            .collect();
        return JitterVerdict {
            jitter: Jitter::None,
            confidence: if tie {
                Confidence::Low
            } else {
                by_samples(samples.max(spread_seen[0].n * 4))
            },
            evidence: if tie {
                format!(
                    "{} of the {} retries spread beyond the timing noise of {} ms ({}): too few to tell jitter from noise",
                    jittered.len(),
                    spread_seen.len(),
                    fmt_ms(floor_ms.max(NOISE_MS)),
                    spreads.join(", ")
                )
            } else {
                format!(
                    "every retry waits the same across runs, within the timing noise of {} ms ({})",
                    fmt_ms(floor_ms.max(NOISE_MS)),
                    spreads.join(", ")
                )
            },
            alternatives: if tie {
                vec![format!("jitter ({} spread)", spread.join(", "))]
            } else {
                Vec::new()
            },
            additive_ms: None,
        };
    }
    // Judge from indices with enough waits to place the interval's ends.
    let judged: Vec<&IndexStats> = stats.iter().filter(|s| s.n >= 3).collect();
    let judged = if judged.is_empty() {
        spread_seen.clone()
    } else {
        judged
    };
    let weight: f64 = judged.iter().map(|s| s.n as f64).sum();
    let rho = judged
        .iter()
        .map(|s| s.end_ratio() * s.n as f64)
        .sum::<f64>()
        / weight;
    let n_min = judged.iter().map(|s| s.n).min().unwrap_or(0);
    let mut confidence = by_samples(n_min);
    let mut alternatives = Vec::new();
    let ends = format!(
        "{}; lower end / upper end of the drawn interval ≈ {rho:.2}",
        spreads.join(", ")
    );
    // Decorrelated: the same lower end (base) at every index while the
    // upper end grows by 3× the previous wait.
    if let [first, second, ..] = judged.as_slice()
        && (0.2..=0.5).contains(&first.end_ratio())
        && second.end_ratio() < 0.6 * first.end_ratio()
        && second.min_ms <= 1.6 * first.min_ms + NOISE_MS
    {
        return JitterVerdict {
            jitter: Jitter::Decorrelated,
            confidence,
            evidence: format!(
                "every retry's shortest wait stays near {} ms while the longest grows ({})",
                fmt_ms(first.min_ms),
                spreads.join(", ")
            ),
            alternatives,
            additive_ms: None,
        };
    }
    // Additive: the same spread at every retry while the waits grow, so
    // the jitter is U(0, w) added to the schedule, not a share of it.
    if let Some(w) = additive_width(&judged) {
        let b1 = judged[0].lo_end.max(1.0);
        let ratio = ((w / (2.0 * b1)) * 100.0).round() / 100.0;
        // Two retries cannot tell a fixed spread from a growing one
        // blurred by the client's own timing.
        let confidence = if judged.len() >= 3 {
            confidence.min(Confidence::Medium)
        } else {
            Confidence::Low
        };
        return JitterVerdict {
            jitter: Jitter::Proportional { ratio },
            confidence,
            evidence: format!(
                "{}; the spread stays near {} ms while the waits grow: U(0, {} ms) added to each wait (the schema has no additive jitter; proportional ±{} % at the first wait is its nearest)",
                spreads.join(", "),
                fmt_ms(w),
                fmt_ms(w),
                (ratio * 100.0).round()
            ),
            alternatives: vec![format!("additive U(0, {} ms)", fmt_ms(w))],
            additive_ms: Some(w),
        };
    }
    // Where each kind's ratio lies: full 0, equal ½, proportional
    // (1-r)/(1+r), so ±20 % at ⅔; the bands leave room for the estimate's
    // spread over a few dozen waits.
    let jitter = if rho < 0.25 {
        Jitter::Full
    } else if (rho - 0.5).abs() <= 0.1 {
        alternatives.push("proportional ±33 % around ¾ of the wait (the same draws)".into());
        Jitter::Equal
    } else {
        let r = ((1.0 - rho) / (1.0 + rho)).clamp(0.0, 1.0);
        Jitter::Proportional {
            ratio: (r * 100.0).round() / 100.0,
        }
    };
    if stats.len() == 1 && (rho - 1.0 / 3.0).abs() < 0.1 {
        alternatives.push("decorrelated (one wait cannot tell them apart)".into());
    }
    if !alternatives.is_empty() && confidence == Confidence::High {
        confidence = Confidence::Medium;
    }
    JitterVerdict {
        jitter,
        confidence,
        evidence: ends,
        alternatives,
        additive_ms: None,
    }
}

/// The common width of the drawn intervals when it stays the same (within
/// half) while the lower ends grow at least 1.6-fold; `None` otherwise.
fn additive_width(judged: &[&IndexStats]) -> Option<f64> {
    let [first, .., last] = judged else {
        return None;
    };
    let widths: Vec<f64> = judged.iter().map(|s| s.hi_end - s.lo_end).collect();
    let (lo, hi) = widths
        .iter()
        .fold((f64::MAX, 0.0_f64), |(a, b), &w| (a.min(w), b.max(w)));
    let width = widths.iter().sum::<f64>() / widths.len() as f64;
    // The interval itself must move, by half its width at least: full
    // jitter's lower ends also "grow" from about 0 (the shortest of a few
    // dozen draws of U(0, b) is near b / n), but by far less than the width.
    let grows =
        last.lo_end >= 1.6 * first.lo_end.max(1.0) && last.lo_end - first.lo_end >= width / 2.0;
    (lo > 0.0 && hi <= 1.5 * lo && grows).then_some(width)
}

/// b_k under the jitter kind.
pub(super) fn nominal_of(s: &IndexStats, jitter: Jitter) -> f64 {
    match jitter {
        Jitter::None => s.median_ms,
        Jitter::Full | Jitter::Equal => s.hi_end,
        Jitter::Proportional { .. } => (s.lo_end + s.hi_end) / 2.0,
        Jitter::Decorrelated => s.lo_end,
    }
}

pub(super) fn decorrelated(
    stats: Vec<IndexStats>,
    jitter: JitterVerdict,
    nominal: Vec<f64>,
    evidence: String,
) -> BackoffFit {
    // Base: the common lower end, and a third of the first upper end.
    let base = (stats[0].lo_end + stats[0].hi_end / 3.0) / 2.0;
    // A cap shows as a pile of waits at the longest one.
    let longest = stats.iter().map(|s| s.max_ms).fold(0.0, f64::max);
    let later: Vec<&IndexStats> = stats.iter().skip(1).collect();
    let at_cap = later
        .iter()
        .filter(|s| s.max_ms >= longest - noise(longest))
        .count();
    let cap = (later.len() >= 2 && at_cap >= 2).then_some(longest);
    BackoffFit {
        kind: BackoffKind::Exponential,
        base_ms: base,
        multiplier: None,
        cap_ms: cap,
        jitter: Jitter::Decorrelated,
        nominal_ms: nominal,
        per_retry: stats,
        // The base is read through decorrelated jitter's interval: where
        // that jitter is itself unsure, so is the base (botocore's full
        // jitter over 50 ms and 100 ms, two small draws, read as
        // decorrelated from 11 ms).
        kind_confidence: Confidence::Medium.min(jitter.confidence),
        kind_evidence: format!(
            "{evidence}; decorrelated jitter draws each wait from [base, 3 × the previous one], so the schedule is its own"
        ),
        kind_alternatives: Vec::new(),
        jitter_confidence: jitter.confidence,
        jitter_evidence: jitter.evidence,
        jitter_alternatives: jitter.alternatives,
        explained: true,
        first_retry_immediate: false,
        // No pile of waits at the longest: a cap, if any, lies above it
        // (botocore caps at 20 s, far past two retries), so no finding
        // comes from its absence.
        cap_unknown_above_ms: cap.is_none().then_some(longest),
        additive_jitter_ms: None,
    }
}
