//! The plain counts (`counts.rs`) and latency histograms of one process, as
//! JSON that crosses processes: what a `retrylint serve` process hands to
//! `retrylint drive`. Exact: integers as they are, histograms as their
//! recorded values and counts (the same buckets once read back), breaker
//! logs and last-success times in nanoseconds. Sums of integers do not
//! depend on the order they are added in, so merging every process's counts
//! gives the counts one process would have made.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::counts::Counts;
use super::latency::Latency;
use crate::policy::{Outcome, Transition};

/// What one process counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Snapshot {
    pub counts: Counts,
    /// Per service, the latency of its answers.
    #[serde(with = "latencies")]
    pub latency: Vec<Latency>,
    #[serde(with = "latency")]
    pub(crate) end_to_end_latency: Latency,
}

impl Snapshot {
    /// Adds every count and histogram of `o`. The end-to-end figures' time of
    /// the last success is the latest of both, and queue depths are the
    /// deepest of both: a queue lives in one process, so across processes
    /// depths are not added (over a simulator's trials they are, for a mean).
    pub fn add(&mut self, o: &Snapshot) {
        let depths = std::mem::take(&mut self.counts.goodput.queue_depth);
        let deepest: Vec<u64> = self.counts.services.iter().map(|s| s.max_queue).collect();
        let last = match (
            self.counts.end_to_end.last_success,
            o.counts.end_to_end.last_success,
        ) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if self.counts.services.len() < o.counts.services.len() {
            self.counts
                .services
                .resize_with(o.counts.services.len(), Default::default);
        }
        if self.counts.layers.len() < o.counts.layers.len() {
            self.counts
                .layers
                .resize_with(o.counts.layers.len(), Default::default);
        }
        self.counts.add(&o.counts);
        let series = &mut self.counts.goodput.queue_depth;
        if series.len() < depths.len() {
            series.resize(depths.len(), 0);
        }
        for (a, b) in series.iter_mut().zip(depths) {
            *a = (*a).max(b);
        }
        for ((s, before), theirs) in self
            .counts
            .services
            .iter_mut()
            .zip(deepest)
            .zip(&o.counts.services)
        {
            s.max_queue = before.max(theirs.max_queue);
        }
        self.counts.end_to_end.last_success = last;
        self.counts.end = self.counts.end.max(o.counts.end);
        if self.latency.len() < o.latency.len() {
            self.latency.resize_with(o.latency.len(), Latency::default);
        }
        for (a, b) in self.latency.iter_mut().zip(&o.latency) {
            a.merge(b);
        }
        self.end_to_end_latency.merge(&o.end_to_end_latency);
    }
}

/// An outcome as one integer: a status as itself, the rest negative.
fn outcome_code(o: Outcome) -> i32 {
    match o {
        Outcome::Status(s) => i32::from(s),
        Outcome::Timeout => -1,
        Outcome::Connect => -2,
        Outcome::Reset => -3,
    }
}

fn outcome_of<E: serde::de::Error>(code: i32) -> Result<Outcome, E> {
    match code {
        -1 => Ok(Outcome::Timeout),
        -2 => Ok(Outcome::Connect),
        -3 => Ok(Outcome::Reset),
        c => u16::try_from(c)
            .map(Outcome::Status)
            .map_err(|_| E::custom(format!("{c} is not an outcome code"))),
    }
}

/// `Vec<(Outcome, u64)>` as `[[code, count], …]`.
pub(crate) mod outcomes {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &[(Outcome, u64)], s: S) -> Result<S::Ok, S::Error> {
        let coded: Vec<(i32, u64)> = v.iter().map(|&(o, n)| (outcome_code(o), n)).collect();
        coded.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(Outcome, u64)>, D::Error> {
        let coded: Vec<(i32, u64)> = Vec::deserialize(d)?;
        coded
            .into_iter()
            .map(|(c, n)| Ok((outcome_of(c)?, n)))
            .collect()
    }
}

/// `Vec<(Duration, Transition)>` as `[[ns, index], …]`.
pub(crate) mod transitions {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        v: &[(Duration, Transition)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let coded: Vec<(u64, usize)> = v.iter().map(|&(at, t)| (nanos(at), t.index())).collect();
        coded.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(Duration, Transition)>, D::Error> {
        let coded: Vec<(u64, usize)> = Vec::deserialize(d)?;
        coded
            .into_iter()
            .map(|(ns, i)| {
                let t = Transition::ALL.get(i).copied().ok_or_else(|| {
                    serde::de::Error::custom(format!("{i} is not a breaker transition"))
                })?;
                Ok((Duration::from_nanos(ns), t))
            })
            .collect()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A duration as whole nanoseconds.
pub(crate) mod duration_ns {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        nanos(*d).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_nanos(u64::deserialize(d)?))
    }
}

/// An optional duration as whole nanoseconds.
pub(crate) mod option_ns {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        d.map(nanos).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_nanos))
    }
}

/// A latency histogram: its recorded values (µs) with their counts, and
/// the exact extremes in ns.
#[derive(Serialize, Deserialize)]
struct LatencyWire {
    values: Vec<(u64, u64)>,
    lowest_ns: u64,
    highest_ns: u64,
}

impl From<&Latency> for LatencyWire {
    fn from(l: &Latency) -> Self {
        let (values, lowest, highest) = l.to_parts();
        LatencyWire {
            values,
            lowest_ns: nanos(lowest),
            highest_ns: nanos(highest),
        }
    }
}

impl From<LatencyWire> for Latency {
    fn from(w: LatencyWire) -> Self {
        Latency::from_parts(
            &w.values,
            Duration::from_nanos(w.lowest_ns),
            Duration::from_nanos(w.highest_ns),
        )
    }
}

pub(crate) mod latency {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(l: &Latency, s: S) -> Result<S::Ok, S::Error> {
        LatencyWire::from(l).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Latency, D::Error> {
        Ok(LatencyWire::deserialize(d)?.into())
    }
}

pub(crate) mod latencies {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &[Latency], s: S) -> Result<S::Ok, S::Error> {
        let w: Vec<LatencyWire> = v.iter().map(LatencyWire::from).collect();
        w.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Latency>, D::Error> {
        let w: Vec<LatencyWire> = Vec::deserialize(d)?;
        Ok(w.into_iter().map(Latency::from).collect())
    }
}

/// The attempt timeline as its buckets and the count past them.
pub(crate) mod timeline {
    use super::super::timeline::TimelineCounts;
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &TimelineCounts, s: S) -> Result<S::Ok, S::Error> {
        (t.buckets(), t.beyond()).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimelineCounts, D::Error> {
        let (buckets, beyond): (Vec<u64>, u64) = Deserialize::deserialize(d)?;
        Ok(TimelineCounts::from_parts(buckets, beyond))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_depths_across_processes_are_the_deepest_not_the_sum() {
        let snap = |depth: u64, at_ms: u64| {
            let mut s = Snapshot {
                counts: Counts::new(2, 0),
                ..Snapshot::default()
            };
            s.counts.services[1].max_queue = depth;
            s.counts.services[1].received = 1;
            s.counts.goodput.depth(Duration::from_millis(at_ms), depth);
            s
        };
        let mut all = snap(3, 150);
        all.add(&snap(5, 150));
        all.add(&snap(2, 350));
        assert_eq!(all.counts.services[1].max_queue, 5);
        assert_eq!(all.counts.services[1].received, 3);
        assert_eq!(all.counts.goodput.queue_depth, vec![0, 5, 0, 2]);
    }

    #[test]
    fn counts_and_histograms_cross_exactly() {
        let mut snap = Snapshot {
            counts: Counts::new(2, 2),
            latency: vec![Latency::default(), Latency::default()],
            end_to_end_latency: Latency::default(),
        };
        let c = &mut snap.counts;
        c.services[1].received = 7;
        c.services[1].answered(503);
        c.layers[1].retried(Outcome::Status(503), true);
        c.layers[1].retried(Outcome::Timeout, false);
        c.layers[1].transition(Duration::from_millis(3), Transition::ALL[1]);
        c.end_to_end
            .finished(Outcome::Reset, Duration::from_millis(9));
        c.end_to_end
            .finished(Outcome::Status(200), Duration::from_millis(11));
        c.timeline.record(Duration::from_millis(250));
        c.goodput
            .succeeded(Duration::from_millis(1500), Duration::from_micros(1234));
        for us in [1, 999, 1234, 98_765, 4_000_000] {
            snap.latency[1].record(Duration::from_micros(us));
        }
        snap.end_to_end_latency.record(Duration::from_micros(77));
        let json = serde_json::to_string(&snap).unwrap();
        let back: Snapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert_eq!(
            back.counts.layers[1].by_reason,
            snap.counts.layers[1].by_reason
        );
        assert_eq!(
            back.counts.end_to_end.last_success,
            Some(Duration::from_millis(11))
        );
        assert_eq!(back.latency[1].quantiles(), snap.latency[1].quantiles());
        assert_eq!(back.latency[1].buckets(), snap.latency[1].buckets());
        let mut merged = back.clone();
        merged.add(&snap);
        assert_eq!(merged.counts.services[1].received, 14);
        assert_eq!(merged.latency[1].len(), 10);
        assert_eq!(merged.counts.end_to_end.requests, 4);
    }
}
