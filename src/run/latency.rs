//! Latency histograms: hdrhistogram in microseconds, summarised into the
//! report's quantiles and into buckets a reporter can draw.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::report::{Bucket, LatencyMs};

/// A latency histogram in µs, 3 significant figures, growing as needed,
/// with the exact extremes beside it: a quantile is clamped between them, so
/// a constant 100 ms reads 100 ms, not the top of its histogram bucket
/// (100.031 ms), and an exact gate like `p99 <= 100ms` holds.
#[derive(Debug, Clone)]
pub struct Latency {
    hist: Histogram<u64>,
    lowest: Duration,
    highest: Duration,
}

/// An empty µs histogram with the project's precision.
pub(crate) fn new_histogram() -> Histogram<u64> {
    // 1 µs .. 1 h at 3 significant figures; auto-resize covers the rest.
    // Creation only fails for more than 5 significant figures.
    #[allow(clippy::expect_used)]
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .expect("3 significant figures over 1 µs .. 1 h are valid bounds");
    h.auto(true);
    h
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: new_histogram(),
            lowest: Duration::MAX,
            highest: Duration::ZERO,
        }
    }
}

impl Latency {
    /// An empty histogram with the same precision that starts small and grows
    /// to the largest value recorded: for producers that keep one per service
    /// of a large topology (the simulator, per thread). Quantiles are the same
    /// as from [`Latency::default`].
    pub(crate) fn compact() -> Self {
        // Bounds 1..2 at 3 significant figures are valid; auto-resize grows it.
        #[allow(clippy::expect_used)]
        let mut hist = Histogram::new_with_bounds(1, 2, 3)
            .expect("3 significant figures over 1 .. 2 µs are valid bounds");
        hist.auto(true);
        // Not `..Latency::default()`: that builds (and zeroes) a full
        // 1 µs .. 1 h histogram only to drop it, which was three quarters of
        // a simulated trial's instructions.
        Latency {
            hist,
            lowest: Duration::MAX,
            highest: Duration::ZERO,
        }
    }

    pub fn record(&mut self, d: Duration) {
        self.lowest = self.lowest.min(d);
        self.highest = self.highest.max(d);
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
        // With auto-resize, recording only fails past u64 range; saturate instead.
        if self.hist.record(us).is_err() {
            let _ = self.hist.record(self.hist.high());
        }
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latency) {
        let _ = self.hist.add(&other.hist);
        self.lowest = self.lowest.min(other.lowest);
        self.highest = self.highest.max(other.highest);
    }

    /// Every recorded value (µs, as its bucket's highest equivalent) with its
    /// count, and the exact extremes: recording these into an empty
    /// histogram of the same precision ([`Latency::from_parts`]) gives back
    /// the same histogram, bucket for bucket.
    pub(crate) fn to_parts(&self) -> (Vec<(u64, u64)>, Duration, Duration) {
        let values = self
            .hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        (values, self.lowest, self.highest)
    }

    /// The histogram [`Latency::to_parts`] took apart.
    pub(crate) fn from_parts(values: &[(u64, u64)], lowest: Duration, highest: Duration) -> Self {
        let mut l = Latency::default();
        for &(value, count) in values {
            if l.hist.record_n(value.max(1), count).is_err() {
                let _ = l.hist.record_n(l.hist.high(), count);
            }
        }
        if !l.hist.is_empty() {
            l.lowest = lowest;
            l.highest = highest;
        }
        l
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// p50, p90, p99, p99.9 and max in ms; all zero without samples.
    pub fn quantiles(&self) -> LatencyMs {
        if self.hist.is_empty() {
            return LatencyMs::default();
        }
        let (lo, hi) = (exact_ms(self.lowest), exact_ms(self.highest));
        let q = |x: f64| ms(self.hist.value_at_quantile(x)).clamp(lo, hi);
        LatencyMs {
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: hi,
        }
    }

    /// Counts in buckets doubling from 0.125 ms, each labelled by its upper
    /// bound (inclusive), up to the bucket holding the max. Empty without samples.
    pub fn buckets(&self) -> Vec<Bucket> {
        if self.hist.is_empty() {
            return Vec::new();
        }
        let max = self.hist.max();
        let mut bounds = vec![125u64];
        while bounds.last().is_some_and(|&b| b < max) && bounds.len() < 48 {
            let next = bounds.last().map_or(125, |b| b.saturating_mul(2));
            bounds.push(next);
        }
        let mut counts = vec![0u64; bounds.len()];
        for v in self.hist.iter_recorded() {
            let value = self.hist.highest_equivalent(v.value_iterated_to()).min(max);
            let i = bounds.partition_point(|&b| b < value).min(bounds.len() - 1);
            counts[i] += v.count_at_value();
        }
        bounds
            .into_iter()
            .zip(counts)
            .map(|(b, count)| Bucket {
                le_ms: ms(b),
                count,
            })
            .collect()
    }
}

/// A duration in ms, exact to the ns.
fn exact_ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// µs to ms, exact to the µs.
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_reads_exactly_and_zero_is_zero() {
        // 100 ms falls in the bucket [99.968, 100.031] ms at 3 figures.
        let mut l = Latency::compact();
        for _ in 0..5 {
            l.record(Duration::from_millis(100));
        }
        let q = l.quantiles();
        assert_eq!((q.p50, q.p99, q.p999, q.max), (100.0, 100.0, 100.0, 100.0));
        let mut z = Latency::default();
        z.record(Duration::ZERO);
        assert_eq!(z.quantiles().p99, 0.0);
        // Merging keeps the exact extremes of both.
        let mut m = Latency::default();
        m.merge(&l);
        m.merge(&z);
        let q = m.quantiles();
        assert_eq!((q.p50, q.max), (100.0, 100.0));
    }

    #[test]
    fn quantiles_and_buckets() {
        let mut l = Latency::default();
        assert_eq!(l.quantiles(), LatencyMs::default());
        for i in 1..=1000u64 {
            l.record(Duration::from_micros(i * 100));
        }
        let q = l.quantiles();
        assert!((q.p50 - 50.0).abs() < 0.1, "{q:?}");
        assert!((q.p99 - 99.0).abs() < 0.1, "{q:?}");
        assert!((q.max - 100.0).abs() < 0.1, "{q:?}");
        let b = l.buckets();
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert!(b.last().is_some_and(|b| b.le_ms >= 100.0));
        let mut m = Latency::default();
        m.record(Duration::from_secs(2));
        m.merge(&l);
        assert_eq!(m.len(), 1001);
        assert!((m.quantiles().max - 2000.0).abs() < 2.0);
    }
}
