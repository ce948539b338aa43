//! Load settings (`--rate R | --clients N`, `--requests M`, `--duration D`,
//! `--seed S`) with the semantics of docs/chaos.md, shared by chaos and the simulator.
//!
//! - Closed loop (`--clients N`): N callers start at t = 0; each sends its next
//!   user request when the previous one has finished, client-layer retries
//!   included.
//! - Open loop (`--rate R`): user request i is due at i / R, regardless of
//!   completions; latency counts from that intended time.
//! - `--requests M` caps user requests in total. `--duration D` is a horizon:
//!   no attempt (anywhere, at any layer) starts at or after D.
//! - Without `--duration` the horizon is [`LoadSettings::DEFAULT_DURATION`], or
//!   [`LoadSettings::MAX_HORIZON`] when `--requests` bounds the run instead.

use std::time::Duration;

use super::report::LoadSummary;

/// How user requests arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Open loop: user requests per second.
    Rate(f64),
    /// Closed loop: concurrent callers.
    Clients(u32),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadSettings {
    pub arrival: Arrival,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub seed: u64,
    /// Open loop: how arrivals are spaced (`--arrivals`).
    pub process: super::arrivals::Process,
}

/// Load settings that cannot drive a run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadSettingsError {
    #[error(
        "--rate `{0}` is not a rate above 0; write e.g. `--rate 50` or `--rate 50/s` (requests per second, more than 0)"
    )]
    Rate(String),
    #[error("--clients must be at least 1")]
    Clients,
    #[error("--requests must be at least 1")]
    Requests,
    #[error("--duration must be above 0, e.g. `--duration 5s`")]
    Duration,
    #[error(
        "--rate and --clients exclude each other: pick open loop (--rate) or closed loop (--clients)"
    )]
    Both,
}

impl Default for LoadSettings {
    /// Open loop at 20 requests/s for 5 s, seed 42: about 100 user requests,
    /// enough to see a storm and quick on a laptop.
    fn default() -> Self {
        LoadSettings {
            arrival: Arrival::Rate(Self::DEFAULT_RATE),
            requests: None,
            duration: None,
            seed: Self::DEFAULT_SEED,
            process: Default::default(),
        }
    }
}

impl LoadSettings {
    pub const DEFAULT_RATE: f64 = 20.0;
    pub const DEFAULT_SEED: u64 = 42;
    pub const DEFAULT_DURATION: Duration = Duration::from_secs(5);
    /// The horizon of a run bounded by `--requests` alone.
    pub(crate) const MAX_HORIZON: Duration = Duration::from_secs(60);

    /// Settings from the CLI's flags, checked.
    pub fn new(
        rate: Option<f64>,
        clients: Option<u32>,
        requests: Option<u64>,
        duration: Option<Duration>,
        seed: Option<u64>,
    ) -> Result<Self, LoadSettingsError> {
        let arrival = match (rate, clients) {
            (Some(_), Some(_)) => return Err(LoadSettingsError::Both),
            (Some(r), None) if r.is_finite() && r > 0.0 => Arrival::Rate(r),
            (Some(r), None) => return Err(LoadSettingsError::Rate(r.to_string())),
            (None, Some(0)) => return Err(LoadSettingsError::Clients),
            (None, Some(n)) => Arrival::Clients(n),
            (None, None) => Arrival::Rate(Self::DEFAULT_RATE),
        };
        if requests == Some(0) {
            return Err(LoadSettingsError::Requests);
        }
        if duration.is_some_and(|d| d.is_zero()) {
            return Err(LoadSettingsError::Duration);
        }
        Ok(LoadSettings {
            arrival,
            requests,
            duration,
            seed: seed.unwrap_or(Self::DEFAULT_SEED),
            process: Default::default(),
        })
    }

    /// Closed loop: the number of clients.
    pub fn clients(&self) -> Option<u32> {
        match self.arrival {
            Arrival::Clients(n) => Some(n),
            Arrival::Rate(_) => None,
        }
    }

    /// Reads `50`, `50/s`, `3000/m` or `3000/min` as requests per second
    /// (`input::rate`'s syntax).
    pub fn parse_rate(text: &str) -> Result<f64, LoadSettingsError> {
        crate::input::rate::parse(text).ok_or_else(|| LoadSettingsError::Rate(text.to_owned()))
    }

    /// No attempt starts at or after this time from the start of the run.
    pub fn horizon(&self) -> Duration {
        match (self.duration, self.requests) {
            (Some(d), _) => d,
            (None, Some(_)) => Self::MAX_HORIZON,
            (None, None) => Self::DEFAULT_DURATION,
        }
    }

    /// For a simulation: the same, except that `--requests` alone sets no
    /// time limit at all. Virtual time costs nothing, and every one of the
    /// requests asked for runs to its end (a deep chain under total failure
    /// can take minutes of virtual backoff).
    pub fn in_virtual_time(&self) -> LoadSettings {
        let mut load = self.clone();
        if load.duration.is_none() && load.requests.is_some() {
            load.duration = Some(crate::policy::FOREVER);
        }
        load
    }

    /// Open loop: when user request `i` (0-based) is due, or `None` when it is
    /// never sent (past `--requests` or at or after the horizon). Closed loop:
    /// `None`; callers send when they are free.
    pub fn due(&self, i: u64) -> Option<Duration> {
        let Arrival::Rate(rate) = self.arrival else {
            return None;
        };
        if self.requests.is_some_and(|m| i >= m) {
            return None;
        }
        let secs = i as f64 / rate;
        let at = Duration::try_from_secs_f64(secs).ok()?;
        (at < self.horizon()).then_some(at)
    }

    /// Open loop: how many user requests are due before the horizon (and
    /// within `--requests`); closed loop: 0.
    pub(crate) fn due_count(&self) -> u64 {
        let Arrival::Rate(rate) = self.arrival else {
            return 0;
        };
        // Request i is due at i / rate, sent when that is before the horizon.
        let by_time = (self.horizon().as_secs_f64() * rate).ceil();
        let n = if by_time >= u64::MAX as f64 {
            u64::MAX
        } else {
            by_time as u64
        };
        self.requests.map_or(n, |m| m.min(n))
    }

    /// The seed of stream `stream` of this run: distinct streams for every
    /// retrying caller and for the root of the per-request draws, all
    /// derived from `--seed`.
    pub(crate) fn stream_seed(&self, stream: u64) -> u64 {
        crate::policy::derive_seed(self.seed, stream)
    }

    pub(crate) fn summary(&self) -> LoadSummary {
        let (rate, clients) = match self.arrival {
            Arrival::Rate(r) => (Some(r), None),
            Arrival::Clients(n) => (None, Some(n)),
        };
        LoadSummary {
            rate,
            clients,
            requests: self.requests,
            duration_ms: (self.horizon() < crate::policy::FOREVER)
                .then(|| self.horizon().as_secs_f64() * 1e3),
            entry: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_loop_schedule_stops_at_the_horizon_and_the_cap() {
        let l =
            LoadSettings::new(Some(10.0), None, None, Some(Duration::from_secs(1)), None).unwrap();
        let due: Vec<_> = (0..20).filter_map(|i| l.due(i)).collect();
        assert_eq!(due.len(), 10);
        assert_eq!(due[3], Duration::from_millis(300));
        let l = LoadSettings::new(Some(10.0), None, Some(4), None, None).unwrap();
        assert_eq!((0..20).filter_map(|i| l.due(i)).count(), 4);
        assert_eq!(l.due_count(), 4);
        assert_eq!(l.horizon(), LoadSettings::MAX_HORIZON);
        let l =
            LoadSettings::new(Some(10.0), None, None, Some(Duration::from_secs(1)), None).unwrap();
        assert_eq!(l.due_count(), 10);
        let l = LoadSettings::new(Some(1e12), None, None, None, None).unwrap();
        assert_eq!(l.due_count(), 5_000_000_000_000);
    }

    #[test]
    fn validates_and_parses() {
        assert_eq!(LoadSettings::parse_rate("50/s"), Ok(50.0));
        assert_eq!(LoadSettings::parse_rate("120/min"), Ok(2.0));
        assert!(LoadSettings::parse_rate("fast").is_err());
        assert!(LoadSettings::parse_rate("-1").is_err());
        assert_eq!(
            LoadSettings::new(Some(1.0), Some(1), None, None, None),
            Err(LoadSettingsError::Both)
        );
        assert_eq!(
            LoadSettings::new(None, Some(0), None, None, None),
            Err(LoadSettingsError::Clients)
        );
        let d = LoadSettings::new(None, None, None, None, None).unwrap();
        assert_eq!(d, LoadSettings::default());
        assert_eq!(d.horizon(), LoadSettings::DEFAULT_DURATION);
        assert_ne!(d.stream_seed(1), d.stream_seed(2));
    }
}
