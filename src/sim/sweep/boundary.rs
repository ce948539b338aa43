//! The tipping point of a sweep: the highest value at which at least half
//! the trials recover, and its interval from the points' Wilson intervals.

use serde::Serialize;

use super::Point;

/// Where the boundary lies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Boundary {
    /// The highest value tested at which at least half the trials
    /// recovered, below the lowest one above it at which fewer did; `null`
    /// when the grid does not bracket it (`bracket` says which way).
    pub value: Option<f64>,
    /// 95 %: `[lo, hi]`, `lo` the highest value at or below the boundary
    /// whose recovery interval lies wholly at or above one half, `hi` the
    /// lowest value above it whose interval lies wholly below one half;
    /// `null` where no point tested is that sure.
    pub ci: [Option<f64>; 2],
    /// `bracketed`, `below-lo` (no point recovered: the boundary is below
    /// the grid) or `above-hi` (every point recovered: it is above it).
    pub bracket: &'static str,
    /// Why there is no value, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether at least half the trials of `p` recovered.
pub(crate) fn recovers(p: &Point) -> bool {
    2 * p.recovered_trials >= p.trials
}

/// The pair of neighbours (by value) to bisect between: the highest
/// recovering point followed by one that does not.
pub(super) fn bracket(points: &[Point]) -> Option<(f64, f64)> {
    points
        .windows(2)
        .rev()
        .find(|w| recovers(&w[0]) && !recovers(&w[1]))
        .map(|w| (w[0].value, w[1].value))
}

/// The boundary of `points`, sorted by value.
pub(super) fn find(points: &[Point], lo: f64, hi: f64) -> Boundary {
    let Some((value, above)) = bracket(points) else {
        // Sorted by value, with no recovering point followed by a failing
        // one: either the top point recovers or none does.
        return if points.last().is_some_and(recovers) {
            Boundary {
                value: None,
                ci: [None, None],
                bracket: "above-hi",
                reason: Some(format!(
                    "the highest point recovered: the boundary is above {hi}, the top of the grid; sweep higher"
                )),
            }
        } else {
            Boundary {
                value: None,
                ci: [None, None],
                bracket: "below-lo",
                reason: Some(format!(
                    "no point recovered: the boundary is below {lo}, the bottom of the grid; sweep lower"
                )),
            }
        };
    };
    let ci_lo = points
        .iter()
        .filter(|p| p.value <= value && p.recovered_ci[0] >= 0.5)
        .map(|p| p.value)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let ci_hi = points
        .iter()
        .filter(|p| p.value >= above && p.recovered_ci[1] < 0.5)
        .map(|p| p.value)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
    Boundary {
        value: Some(value),
        ci: [ci_lo, ci_hi],
        bracket: "bracketed",
        reason: None,
    }
}
