//! The attempt timeline at the fault target: arrivals per 100 ms bucket from
//! the start of the run, so a retry wave shows against a smooth stream. One
//! counter for both engines, bounded in memory whatever the horizon.

use std::time::Duration;

/// Width of a bucket.
pub(crate) const BUCKET: Duration = Duration::from_millis(100);

/// The most buckets kept: 100,000 s of run (8 MB). Arrivals later than that
/// are counted in `beyond` instead of growing the vector.
pub(crate) const MAX_BUCKETS: usize = 1_000_000;

/// Arrivals per bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TimelineCounts {
    buckets: Vec<u64>,
    /// Arrivals past the last bucket kept.
    beyond: u64,
}

impl TimelineCounts {
    /// Counts one arrival at `at` from the start of the run.
    pub(crate) fn record(&mut self, at: Duration) {
        let i = usize::try_from(at.as_nanos() / BUCKET.as_nanos()).unwrap_or(usize::MAX);
        if i >= MAX_BUCKETS {
            self.beyond += 1;
            return;
        }
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += 1;
    }

    /// Adds every count of `o`.
    pub(crate) fn add(&mut self, o: &TimelineCounts) {
        if self.buckets.len() < o.buckets.len() {
            self.buckets.resize(o.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.beyond += o.beyond;
    }

    /// Empties the counts, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.buckets.clear();
        self.beyond = 0;
    }

    /// The counts [`buckets`](Self::buckets) and [`beyond`](Self::beyond)
    /// read, put back together (bounded like `record`).
    pub(crate) fn from_parts(mut buckets: Vec<u64>, beyond: u64) -> Self {
        let over: u64 = buckets.iter().skip(MAX_BUCKETS).sum();
        buckets.truncate(MAX_BUCKETS);
        TimelineCounts {
            buckets,
            beyond: beyond.saturating_add(over),
        }
    }

    pub(crate) fn buckets(&self) -> &[u64] {
        &self.buckets
    }

    pub(crate) fn beyond(&self) -> u64 {
        self.beyond
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_half_open_and_bounded() {
        let mut t = TimelineCounts::default();
        t.record(Duration::ZERO);
        t.record(Duration::from_millis(99));
        t.record(Duration::from_millis(100));
        t.record(Duration::from_millis(350));
        assert_eq!(t.buckets(), [2, 1, 0, 1]);
        t.record(Duration::from_secs(1_000_000));
        assert_eq!((t.buckets().len(), t.beyond()), (4, 1));
        let mut sum = TimelineCounts::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!(sum.buckets(), [4, 2, 0, 2]);
        assert_eq!(sum.beyond(), 2);
    }
}
