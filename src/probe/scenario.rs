//! The probe's scenarios: what the probe server does to each attempt of one
//! run, written with the fault kinds of `crate::faults` (a scenario is a
//! script of `Inject`s by attempt number, so the effects are the same plain
//! data the chaos servers apply) and which outcome it teaches the inference
//! about.

use std::time::Duration;

use crate::faults::{Down, Effect, Hang, Inject, Reset, Status};
use crate::policy::{Outcome, seeded_rng};

/// What a scenario is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The same failure on every attempt: is this outcome retried, how
    /// often, and with which waits.
    Every(Outcome),
    /// A failure with `Retry-After` on the first attempt, then success: is
    /// Retry-After honoured.
    RetryAfter { status: u16, after: Duration },
    /// Failures until attempt `k` succeeds: does a success end the retries.
    SuccessOn(u32),
}

/// One scripted scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `503`, `reset`, `hang`, `refused`, `503-retry-after`, `success-on-3`.
    pub name: &'static str,
    pub purpose: Purpose,
    /// What attempt `n` (from 1) gets, by position; past the end the last
    /// entry repeats. `None` answers `200 OK`.
    script: Vec<Option<Inject>>,
}

impl Scenario {
    fn every(name: &'static str, outcome: Outcome, inject: Inject) -> Self {
        Scenario {
            name,
            purpose: Purpose::Every(outcome),
            script: vec![Some(inject)],
        }
    }

    fn status(name: &'static str, status: u16) -> Self {
        Self::every(
            name,
            Outcome::Status(status),
            Inject::Status(Status {
                status,
                retry_after: None,
            }),
        )
    }

    fn retry_after(name: &'static str, status: u16, secs: u64) -> Self {
        let after = Duration::from_secs(secs);
        Scenario {
            name,
            purpose: Purpose::RetryAfter { status, after },
            script: vec![
                Some(Inject::Status(Status {
                    status,
                    retry_after: Some(after),
                })),
                None,
            ],
        }
    }

    fn success_on(name: &'static str, k: u32) -> Self {
        let fail = Inject::Status(Status {
            status: 503,
            retry_after: None,
        });
        let mut script: Vec<Option<Inject>> = (1..k).map(|_| Some(fail.clone())).collect();
        script.push(None);
        Scenario {
            name,
            purpose: Purpose::SuccessOn(k),
            script,
        }
    }

    /// Every shipped scenario, in the order reports list them.
    pub fn all() -> Vec<Scenario> {
        vec![
            Self::status("500", 500),
            Self::status("502", 502),
            Self::status("503", 503),
            Self::status("504", 504),
            Self::status("429", 429),
            Self::status("400", 400),
            Self::status("404", 404),
            Self::retry_after("503-retry-after", 503, 2),
            Self::retry_after("429-retry-after", 429, 1),
            Self::every("reset", Outcome::Reset, Inject::Reset(Reset)),
            Self::every("hang", Outcome::Timeout, Inject::Hang(Hang)),
            Self::every("refused", Outcome::Connect, Inject::Down(Down)),
            Self::success_on("success-on-3", 3),
        ]
    }

    /// The names of every shipped scenario.
    pub fn names() -> Vec<&'static str> {
        Self::all().iter().map(|s| s.name).collect()
    }

    /// The shipped scenario called `name`.
    pub fn named(name: &str) -> Option<Scenario> {
        Self::all().into_iter().find(|s| s.name == name)
    }

    /// The outcome whose retrying this scenario shows, if it shows one.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.purpose {
            Purpose::Every(o) => Some(o),
            _ => None,
        }
    }

    /// Whether no server listens: the port is closed and every attempt is
    /// refused before it arrives (so none can be recorded).
    pub fn refuses(&self) -> bool {
        matches!(self.script.first(), Some(Some(Inject::Down(_))))
    }

    /// What the probe server does to attempt `n` (from 1); `None` answers 200.
    pub fn effect(&self, n: u32) -> Option<Effect> {
        let i = (n.max(1) as usize - 1).min(self.script.len() - 1);
        // None of the kinds used here draws; the generator only satisfies
        // the trait.
        self.script[i]
            .as_ref()
            .map(|inject| inject.effect(&mut seeded_rng(0)))
    }

    /// One line for reports: `503 with Retry-After 2s, then 200`.
    pub fn describe(&self) -> String {
        let step = |s: &Option<Inject>| s.as_ref().map_or("200".to_owned(), Inject::describe);
        match self.purpose {
            Purpose::Every(_) => format!("{} on every attempt", step(&self.script[0])),
            Purpose::RetryAfter { .. } => {
                format!("{} on the first attempt, then 200", step(&self.script[0]))
            }
            Purpose::SuccessOn(k) => {
                format!(
                    "{} until attempt {k}, which gets 200",
                    step(&self.script[0])
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_by_attempt() {
        let s = Scenario::named("success-on-3").unwrap();
        let e503 = Some(Effect::Respond {
            status: 503,
            retry_after: None,
        });
        assert_eq!(s.effect(1), e503);
        assert_eq!(s.effect(2), e503);
        assert_eq!(s.effect(3), None);
        assert_eq!(s.effect(9), None);
        let ra = Scenario::named("503-retry-after").unwrap();
        assert_eq!(
            ra.effect(1),
            Some(Effect::Respond {
                status: 503,
                retry_after: Some(Duration::from_secs(2))
            })
        );
        assert_eq!(ra.effect(2), None);
        assert_eq!(
            Scenario::named("hang").unwrap().effect(4),
            Some(Effect::Hang)
        );
        assert!(Scenario::named("refused").unwrap().refuses());
        assert!(!Scenario::named("reset").unwrap().refuses());
    }

    #[test]
    fn names_are_unique_and_described() {
        let names = Scenario::names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(
            Scenario::named("429-retry-after").unwrap().describe(),
            "429 with Retry-After 1s on the first attempt, then 200"
        );
        assert_eq!(
            Scenario::named("reset").unwrap().describe(),
            "connection reset after the work on every attempt"
        );
    }
}
