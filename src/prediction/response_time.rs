//! How long a service takes to answer when nothing fails, as a distribution:
//! what hedging's figures need (the chance a copy is still out when the next
//! one is due) and what RL019 compares a hedging delay with.
//!
//! A service's own work is the log-normal `Latency::sample` draws from
//! (median `p50`, 99th percentile `p99`, draws capped at 10 × p99; exactly
//! `p50` when fixed). A service with calls of its own answers after them too:
//! their healthy median time is added as a constant shift — the median of
//! the sum is exactly right for fixed callees and close for narrow ones; the
//! spread of the callees' own work is left out.

use std::time::Duration;

use super::normal;
use crate::topology::Latency;

/// z of the 99th percentile of the standard normal distribution: the value
/// `Latency::sample` derives its spread from (the sampler's tests tie the two).
const Z99: f64 = 2.326_347_874_040_841;

/// A service's healthy response time: its own work plus a fixed shift for
/// its calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ResponseTime {
    pub own: Latency,
    /// The healthy median time of the service's calls (sequential calls
    /// add up, a `parallel` group takes its slowest).
    pub calls: Duration,
}

impl ResponseTime {
    /// P(response time > x).
    pub(crate) fn late(&self, x: Duration) -> f64 {
        let Some(work) = x.checked_sub(self.calls) else {
            return 1.0;
        };
        if let Some(mean) = self.own.exponential_mean {
            if work >= self.cap() {
                return 0.0;
            }
            return (-work.as_secs_f64() / mean.as_secs_f64().max(f64::MIN_POSITIVE)).exp();
        }
        match self.log_normal() {
            None => f64::from(u8::from(self.own.p50 > work)),
            Some(_) if work >= self.cap() => 0.0,
            Some(_) if work.is_zero() => 1.0,
            Some((mu, sigma)) => normal::upper_tail((work.as_secs_f64().ln() - mu) / sigma),
        }
    }

    /// The median: own p50 plus the calls' shift.
    pub(crate) fn p50(&self) -> Duration {
        self.own.p50.saturating_add(self.calls)
    }

    /// The 95th percentile.
    pub(crate) fn p95(&self) -> Duration {
        if let Some(mean) = self.own.exponential_mean {
            // P(X > t) = e^(−t/mean) = 0.05.
            let t = Duration::try_from_secs_f64(mean.as_secs_f64() * 20f64.ln())
                .unwrap_or(crate::policy::FOREVER);
            return t.min(self.cap()).saturating_add(self.calls);
        }
        let work = match self.log_normal() {
            None => self.own.p50,
            Some((mu, sigma)) => Duration::try_from_secs_f64((mu + sigma * normal::Z95).exp())
                .unwrap_or(crate::policy::FOREVER)
                .min(self.cap()),
        };
        work.saturating_add(self.calls)
    }

    /// (μ, σ) of ln(own work), or `None` when the work is fixed or
    /// exponential — the same
    /// test and parameters as `Latency::sample`.
    fn log_normal(&self) -> Option<(f64, f64)> {
        let (p50, p99) = (self.own.p50, self.own.p99);
        if p99 <= p50 || p50.is_zero() || self.own.exponential_mean.is_some() {
            return None;
        }
        let mu = p50.as_secs_f64().ln();
        Some((mu, (p99.as_secs_f64() / p50.as_secs_f64()).ln() / Z99))
    }

    fn cap(&self) -> Duration {
        self.own.p99.saturating_mul(10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn spread(p50: u64, p99: u64, calls: u64) -> ResponseTime {
        ResponseTime {
            own: Latency {
                p50: ms(p50),
                p99: ms(p99),
                pos: None,
                exponential_mean: None,
            },
            calls: ms(calls),
        }
    }

    #[test]
    fn quantiles_of_the_log_normal() {
        let r = spread(20, 120, 0);
        assert!((r.late(ms(20)) - 0.5).abs() < 1e-15);
        assert!((r.late(ms(120)) - 0.01).abs() < 1e-12);
        // p95 = 20ms × (120/20)^(z95/z99) = 20ms × 6^0.70705 = 70.995ms.
        let p95 = r.p95().as_secs_f64();
        assert!((p95 - 0.020 * 6f64.powf(normal::Z95 / Z99)).abs() < 1e-9);
        assert!((p95 - 0.070_995).abs() < 1e-6, "{p95}");
        assert!((r.late(r.p95()) - 0.05).abs() < 1e-9);
        // Capped at 10 × p99 like the sampler: nothing later than 1.2 s.
        assert!(r.late(ms(1199)) > 0.0);
        assert_eq!(r.late(ms(1200)), 0.0);
        assert_eq!(r.late(Duration::ZERO), 1.0);
    }

    #[test]
    fn a_fixed_latency_and_a_shift_are_steps() {
        let r = spread(30, 30, 0);
        assert_eq!((r.late(ms(29)), r.late(ms(30))), (1.0, 0.0));
        assert_eq!((r.p50(), r.p95()), (ms(30), ms(30)));
        let r = spread(20, 120, 50);
        assert_eq!(r.late(ms(49)), 1.0);
        assert!((r.late(ms(70)) - 0.5).abs() < 1e-15);
        assert_eq!(r.p50(), ms(70));
    }

    #[test]
    fn the_tail_is_the_samplers() {
        // 200,000 seeded draws of `Latency::sample` against `late`: the
        // share above each point within 4 standard errors of a binomial.
        let r = spread(20, 120, 0);
        let mut rng = crate::policy::seeded_rng(7);
        let n = 200_000;
        let draws: Vec<Duration> = (0..n).map(|_| r.own.sample(&mut rng)).collect();
        for x in [5, 20, 50, 120, 300] {
            let p = r.late(ms(x));
            let seen = draws.iter().filter(|d| **d > ms(x)).count() as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((seen - p).abs() < 4.0 * se, "at {x}ms: {seen} vs {p}");
        }
    }
}
