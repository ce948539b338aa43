//! Fault scenarios: what goes wrong, where and when (DESIGN, "Faults").
//!
//! A scenario is plain data shared by the simulator and the chaos harness. Each
//! fault kind lives in its own file behind [`FaultKind`] and only says what to
//! do to one affected request ([`Effect`]); the simulator applies the effect in
//! virtual time, the chaos servers to real requests. Whether a request is
//! affected at all — the phase in time, the target, the `ratio` dice — is
//! decided here, in [`FaultPlan::effect`], and nowhere else.

pub mod delay;
pub mod down;
pub mod hang;
pub mod load;
pub mod overload;
pub mod reset;
pub mod status;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::RngExt;

use crate::policy::Rng;
use crate::topology::{LoadError, ServiceId, Topology};

pub use delay::Delay;
pub use down::Down;
pub use hang::Hang;
pub use load::{embedded_names, load, load_str};
pub use overload::Overload;
pub use reset::Reset;
pub use status::Status;

/// What to do to one request that a fault affects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// Answer at once with `status` (and `Retry-After` when set), without doing
    /// the service's work.
    Respond {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// Wait this long, then serve the request normally.
    Delay(Duration),
    /// Never answer; the caller's timeout decides.
    Hang,
    /// Do the work (own latency and calls), then close the connection without a
    /// response: the caller sees `reset` although the work happened.
    Reset,
    /// Refuse the connection: the request never reaches the service.
    Refuse,
    /// Serve the request under DESIGN's overload model with this capacity.
    Overload { capacity: u32 },
}

/// One fault kind: how it is read from a fault file and what it does to a
/// request it affects. Each kind is its own file; none rolls `ratio` itself.
pub trait FaultKind: Sized {
    /// The `kind:` value.
    const NAME: &'static str;
    /// The keys of `inject:` this kind reads, besides `kind` and `ratio`.
    const KEYS: &'static [&'static str];
    /// Whether `ratio` makes sense: a fault on the whole service (`down`,
    /// `overload`) affects every request or none.
    const PER_REQUEST: bool = true;

    /// Reads the kind's own keys of an `inject:` map.
    fn read(
        f: crate::source::fields::Fields,
        m: &crate::source::fields::MapView,
    ) -> Result<Self, LoadError>;

    /// What to do to one affected request; `rng` is the run's seeded generator,
    /// for kinds that draw (a delay distribution).
    fn effect(&self, rng: &mut Rng) -> Effect;

    /// `503 with Retry-After 1s`, `delay 50ms`: how reports name the fault.
    fn describe(&self) -> String;
}

/// The fault of one phase: one of the kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum Inject {
    Status(Status),
    Delay(Delay),
    Hang(Hang),
    Reset(Reset),
    Down(Down),
    Overload(Overload),
}

impl Inject {
    pub fn kind(&self) -> &'static str {
        match self {
            Inject::Status(_) => Status::NAME,
            Inject::Delay(_) => Delay::NAME,
            Inject::Hang(_) => Hang::NAME,
            Inject::Reset(_) => Reset::NAME,
            Inject::Down(_) => Down::NAME,
            Inject::Overload(_) => Overload::NAME,
        }
    }

    pub fn effect(&self, rng: &mut Rng) -> Effect {
        match self {
            Inject::Status(k) => k.effect(rng),
            Inject::Delay(k) => k.effect(rng),
            Inject::Hang(k) => k.effect(rng),
            Inject::Reset(k) => k.effect(rng),
            Inject::Down(k) => k.effect(rng),
            Inject::Overload(k) => k.effect(rng),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Inject::Status(k) => k.describe(),
            Inject::Delay(k) => k.describe(),
            Inject::Hang(k) => k.describe(),
            Inject::Reset(k) => k.describe(),
            Inject::Down(k) => k.describe(),
            Inject::Overload(k) => k.describe(),
        }
    }
}

/// A stretch of the run during which the target misbehaves.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Start, from the beginning of the run.
    pub after: Duration,
    /// Length; `None` lasts to the end of the run.
    pub length: Option<Duration>,
    /// Share of the target's requests affected, 0..=1.
    pub ratio: f64,
    pub inject: Inject,
}

impl Phase {
    /// The end of the phase, if it has one.
    pub fn end(&self) -> Option<Duration> {
        self.length.map(|l| self.after.saturating_add(l))
    }

    /// Whether the phase is on at `now`: from `after` included to its end excluded.
    pub fn active_at(&self, now: Duration) -> bool {
        now >= self.after && self.end().is_none_or(|end| now < end)
    }
}

/// Which services a scenario hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Service(String),
    /// The topology's entry service.
    Entry,
    /// Every service that calls nobody.
    Leaves,
    All,
}

impl FromStr for Target {
    type Err = std::convert::Infallible;

    /// `entry`, `leaves`, `all`, or a service name (checked by [`Target::resolve`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim() {
            "entry" => Target::Entry,
            "leaves" => Target::Leaves,
            "all" => Target::All,
            name => Target::Service(name.to_owned()),
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Service(s) => f.write_str(s),
            Target::Entry => f.write_str("entry"),
            Target::Leaves => f.write_str("leaves"),
            Target::All => f.write_str("all"),
        }
    }
}

/// A target names a service the topology does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    pub name: String,
    pub topology: String,
    pub suggestion: Option<String>,
    /// Where the scenario file names the target; `None` for `--target`.
    pub at: Option<TargetAt>,
}

/// Where a scenario file wrote its `target:` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetAt {
    pub file: String,
    pub pos: crate::source::yaml::Pos,
}

impl UnknownTarget {
    fn message(&self) -> String {
        format!(
            "fault target `{}` is not a service of topology `{}`",
            self.name, self.topology
        )
    }

    fn help(&self) -> String {
        match &self.suggestion {
            Some(n) => format!("did you mean `{n}`?"),
            None => "use a service name, `entry`, `leaves` or `all`".into(),
        }
    }

    /// As a load error at the scenario's `target:` value, when the file named
    /// it; `None` when the target came from elsewhere.
    pub fn located(&self) -> Option<crate::topology::LoadError> {
        let at = self.at.as_ref()?;
        Some(
            crate::topology::LoadError::new(
                crate::topology::ErrorKind::Schema,
                &at.file,
                Some(at.pos),
                self.message(),
            )
            .with_help(self.help()),
        )
    }
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.help())
    }
}

impl std::error::Error for UnknownTarget {}

impl Target {
    /// The targeted services, as a flag per service of `t`.
    pub fn resolve(&self, t: &Topology) -> Result<Vec<bool>, UnknownTarget> {
        let n = t.services.len();
        Ok(match self {
            Target::All => vec![true; n],
            Target::Entry => (0..n).map(|i| i == t.entry).collect(),
            Target::Leaves => t.services.iter().map(|s| s.calls.is_empty()).collect(),
            Target::Service(name) => {
                let Some(id) = t.id_of(name) else {
                    let suggestion = crate::source::error::nearest(
                        name,
                        t.services.iter().map(|s| s.name.as_str()),
                    )
                    .map(str::to_owned);
                    return Err(UnknownTarget {
                        name: name.clone(),
                        topology: t.name.clone(),
                        suggestion,
                        at: None,
                    });
                };
                (0..n).map(|i| i == id).collect()
            }
        })
    }
}

/// A fault scenario as read from `faults/NAME.yaml` or a user's file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub target: Target,
    /// Where the file wrote `target:`, for errors; `None` when it did not,
    /// or when `--target` replaced it.
    pub target_at: Option<TargetAt>,
    /// In file order; where phases overlap, the first active one wins.
    pub phases: Vec<Phase>,
}

impl Scenario {
    /// No fault at all: a baseline run.
    pub fn none() -> Self {
        Scenario {
            name: "none".into(),
            description: "No fault: a baseline run.".into(),
            target: Target::All,
            target_at: None,
            phases: Vec::new(),
        }
    }

    /// The scenario against `t`: targets resolved, ready to ask per request.
    /// A scenario without phases (a baseline) strikes nobody.
    pub fn plan(&self, t: &Topology) -> Result<FaultPlan, UnknownTarget> {
        let mut targets = self.target.resolve(t).map_err(|mut e| {
            e.at = self.target_at.clone();
            e
        })?;
        if self.phases.is_empty() {
            targets.fill(false);
        }
        Ok(FaultPlan {
            targets,
            phases: self.phases.clone(),
        })
    }
}

/// A scenario bound to a topology.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// One flag per service of the topology.
    pub targets: Vec<bool>,
    pub phases: Vec<Phase>,
}

impl FaultPlan {
    pub fn is_target(&self, service: ServiceId) -> bool {
        self.targets.get(service).copied().unwrap_or(false)
    }

    /// The phase in force at `service` at `now`, if any.
    pub fn phase_at(&self, service: ServiceId, now: Duration) -> Option<&Phase> {
        if !self.is_target(service) {
            return None;
        }
        self.phases.iter().find(|p| p.active_at(now))
    }

    /// What happens to one request arriving at `service` at `now`: the ONE place
    /// where `ratio` is rolled, with the run's seeded generator. A ratio of 1
    /// (and a whole-service kind) draws nothing, so it does not shift the stream.
    pub fn effect(&self, service: ServiceId, now: Duration, rng: &mut Rng) -> Option<Effect> {
        let phase = self.phase_at(service, now)?;
        if phase.ratio < 1.0 && !(phase.ratio > 0.0 && rng.random::<f64>() < phase.ratio) {
            return None;
        }
        Some(phase.inject.effect(rng))
    }

    /// The overload capacity in force at `service` at `now`, if an `overload`
    /// phase is on.
    pub fn overload_capacity(&self, service: ServiceId, now: Duration) -> Option<u32> {
        match &self.phase_at(service, now)?.inject {
            Inject::Overload(o) => Some(o.capacity),
            _ => None,
        }
    }

    /// The windows `[start, end)` during which `service` is down (`end: None`
    /// lasts to the end of the run), in time order, merged where they touch.
    pub fn down_windows(&self, service: ServiceId) -> Vec<(Duration, Option<Duration>)> {
        if !self.is_target(service) {
            return Vec::new();
        }
        // Walk the phase boundaries: at each, ask which phase is in force.
        let mut edges: Vec<Duration> = self
            .phases
            .iter()
            .flat_map(|p| std::iter::once(p.after).chain(p.end()))
            .collect();
        edges.sort();
        edges.dedup();
        let mut windows: Vec<(Duration, Option<Duration>)> = Vec::new();
        for (i, &at) in edges.iter().enumerate() {
            let down = matches!(
                self.phase_at(service, at).map(|p| &p.inject),
                Some(Inject::Down(_))
            );
            let next = edges.get(i + 1).copied();
            if !down {
                continue;
            }
            match windows.last_mut() {
                Some((_, end @ Some(_))) if *end == Some(at) => *end = next,
                _ => windows.push((at, next)),
            }
        }
        windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::seeded_rng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn plan(phases: Vec<Phase>) -> FaultPlan {
        FaultPlan {
            targets: vec![true, false],
            phases,
        }
    }

    fn phase(after: u64, len: Option<u64>, ratio: f64, inject: Inject) -> Phase {
        Phase {
            after: ms(after),
            length: len.map(ms),
            ratio,
            inject,
        }
    }

    fn s503() -> Inject {
        Inject::Status(Status {
            status: 503,
            retry_after: None,
        })
    }

    #[test]
    fn phases_are_half_open_and_only_hit_targets() {
        let p = plan(vec![phase(100, Some(200), 1.0, s503())]);
        let mut rng = seeded_rng(1);
        assert_eq!(p.effect(0, ms(99), &mut rng), None);
        assert!(p.effect(0, ms(100), &mut rng).is_some());
        assert!(p.effect(0, ms(299), &mut rng).is_some());
        assert_eq!(p.effect(0, ms(300), &mut rng), None);
        assert_eq!(p.effect(1, ms(150), &mut rng), None);
    }

    #[test]
    fn ratio_is_rolled_with_the_seeded_rng() {
        let p = plan(vec![phase(0, None, 0.25, s503())]);
        let hits = |seed| {
            let mut rng = seeded_rng(seed);
            (0..10_000)
                .filter(|_| p.effect(0, ms(1), &mut rng).is_some())
                .count()
        };
        let n = hits(7);
        assert_eq!(n, hits(7), "same seed, same draws");
        assert!((2300..2700).contains(&n), "about a quarter: {n}");
        let none = plan(vec![phase(0, None, 0.0, s503())]);
        let mut rng = seeded_rng(1);
        assert!((0..100).all(|_| none.effect(0, ms(1), &mut rng).is_none()));
    }

    #[test]
    fn down_windows_merge_and_respect_precedence() {
        let down = || Inject::Down(Down);
        let p = plan(vec![
            phase(0, Some(100), 1.0, down()),
            phase(100, Some(100), 1.0, down()),
            phase(500, None, 1.0, down()),
        ]);
        assert_eq!(
            p.down_windows(0),
            vec![(ms(0), Some(ms(200))), (ms(500), None)]
        );
        assert!(p.down_windows(1).is_empty());
        // An earlier status phase covering the start wins over a later down.
        let p = plan(vec![
            phase(0, Some(50), 1.0, s503()),
            phase(0, Some(100), 1.0, down()),
        ]);
        assert_eq!(p.down_windows(0), vec![(ms(50), Some(ms(100)))]);
    }

    #[test]
    fn targets_resolve_against_the_topology() {
        let t = crate::topology::load_str(
            "version: 1\nentry: web\nservices:\n  web: { calls: [api] }\n  api: { calls: [db] }\n  db: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        assert_eq!(Target::Leaves.resolve(&t).unwrap(), [false, false, true]);
        assert_eq!(Target::Entry.resolve(&t).unwrap(), [true, false, false]);
        assert_eq!(
            "api".parse::<Target>().unwrap().resolve(&t).unwrap(),
            [false, true, false]
        );
        let err = Target::Service("dv".into()).resolve(&t).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("db"));
        assert!(err.to_string().contains("did you mean `db`"));
    }
}
