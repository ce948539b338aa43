//! The Wilson score interval for a binomial proportion (Wilson 1927): the
//! interval the recovery fraction of a sweep point is reported with.

/// The normal quantile of a two-sided 95 % interval.
pub(crate) const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson interval `[lo, hi]` of `k` successes in `n` trials;
/// `[0, 1]` without trials.
pub(super) fn interval(k: u32, n: u32) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (k, n) = (f64::from(k.min(n)), f64::from(n));
    let z2 = Z95 * Z95;
    let p = k / n;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_figures() {
        // 8 of 8: [0.676, 1]; 0 of 8: [0, 0.324]; 4 of 8: [0.215, 0.785].
        let close = |a: f64, b: f64| (a - b).abs() < 1e-3;
        let [lo, hi] = interval(8, 8);
        assert!(close(lo, 0.6756) && close(hi, 1.0), "{lo} {hi}");
        let [lo, hi] = interval(0, 8);
        assert!(close(lo, 0.0) && close(hi, 0.3244), "{lo} {hi}");
        let [lo, hi] = interval(4, 8);
        assert!(close(lo, 0.2152) && close(hi, 0.7848), "{lo} {hi}");
        assert_eq!(interval(0, 0), [0.0, 1.0]);
    }
}
