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
    /// An AWS throttling error on every attempt: is it retried, and on
    /// which schedule (AWS SDKs back off from a longer base after one).
    Throttled,
    /// An AWS throttling error with `x-amz-retry-after` on the first
    /// attempt, then success: is that header honoured.
    ThrottledRetryAfter { after: Duration },
}

/// A throttling error as AWS services send it: HTTP 400 with the error code
/// in the body — JSON (`__type`, with `x-amzn-ErrorType`) to a JSON-protocol
/// request, XML (`<ErrorResponse><Error><Code>`) otherwise, which botocore's
/// query and rest-xml parsers both read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsThrottle {
    /// `x-amz-retry-after`, in milliseconds, when sent.
    pub retry_after_ms: Option<u32>,
}

/// The status AWS answers a throttled request with.
pub const AWS_THROTTLE_STATUS: u16 = 400;

impl AwsThrottle {
    /// The body and content type for a request whose content type is
    /// `request_type`.
    pub(crate) fn body(&self, request_type: Option<&str>) -> (&'static str, &'static str) {
        let json = request_type.is_some_and(|t| t.starts_with("application/x-amz-json"));
        if json {
            (
                "application/x-amz-json-1.0",
                r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#,
            )
        } else {
            (
                "text/xml",
                "<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>retrylint-probe</RequestId></ErrorResponse>",
            )
        }
    }

    /// The error code the body carries, for `x-amzn-ErrorType`.
    pub(crate) fn code(&self, request_type: Option<&str>) -> &'static str {
        if self
            .body(request_type)
            .0
            .starts_with("application/x-amz-json")
        {
            "ThrottlingException"
        } else {
            "Throttling"
        }
    }
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
    /// Failing answers carry an AWS throttling error.
    pub aws: Option<AwsThrottle>,
}

impl Scenario {
    fn every(name: &'static str, outcome: Outcome, inject: Inject) -> Self {
        Scenario {
            name,
            purpose: Purpose::Every(outcome),
            script: vec![Some(inject)],
            aws: None,
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
            aws: None,
        }
    }

    fn aws_throttling(name: &'static str, retry_after_ms: Option<u32>) -> Self {
        let fail = Some(Inject::Status(Status {
            status: AWS_THROTTLE_STATUS,
            retry_after: None,
        }));
        let (purpose, script) = match retry_after_ms {
            None => (Purpose::Throttled, vec![fail]),
            Some(ms) => (
                Purpose::ThrottledRetryAfter {
                    after: Duration::from_millis(u64::from(ms)),
                },
                vec![fail, None],
            ),
        };
        Scenario {
            name,
            purpose,
            script,
            aws: Some(AwsThrottle { retry_after_ms }),
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
            aws: None,
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

    /// Scenarios run only when named: signals only one family of clients
    /// reads (AWS SDKs' throttling errors and `x-amz-retry-after`).
    pub(crate) fn on_request() -> Vec<Scenario> {
        vec![
            Self::aws_throttling("aws-throttling", None),
            // Well past botocore's throttling draw (at most 1 s before the
            // first retry), so honouring it shows.
            Self::aws_throttling("aws-throttling-retry-after", Some(2500)),
        ]
    }

    /// The names of every scenario, the default ones first.
    pub fn names() -> Vec<&'static str> {
        Self::all()
            .iter()
            .chain(&Self::on_request())
            .map(|s| s.name)
            .collect()
    }

    /// The scenario called `name`.
    pub fn named(name: &str) -> Option<Scenario> {
        Self::all()
            .into_iter()
            .chain(Self::on_request())
            .find(|s| s.name == name)
    }

    /// The outcome whose retrying this scenario shows, if it shows one.
    pub(crate) fn outcome(&self) -> Option<Outcome> {
        match self.purpose {
            Purpose::Every(o) => Some(o),
            _ => None,
        }
    }

    /// Whether no server listens: the port is closed and every attempt is
    /// refused before it arrives (so none can be recorded).
    pub(crate) fn refuses(&self) -> bool {
        matches!(self.script.first(), Some(Some(Inject::Down(_))))
    }

    /// What the probe server does to attempt `n` (from 1); `None` answers 200.
    pub(crate) fn effect(&self, n: u32) -> Option<Effect> {
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
            Purpose::Throttled => {
                "400 with an AWS ThrottlingException (JSON) or Throttling (XML) error on every attempt".to_owned()
            }
            Purpose::ThrottledRetryAfter { after } => format!(
                "400 with an AWS throttling error and x-amz-retry-after: {} on the first attempt, then 200",
                after.as_millis()
            ),
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
        let aws = Scenario::named("aws-throttling-retry-after").unwrap();
        assert_eq!(aws.aws.unwrap().retry_after_ms, Some(2500));
        assert_eq!(
            aws.effect(1),
            Some(Effect::Respond {
                status: 400,
                retry_after: None
            })
        );
        assert_eq!(aws.effect(2), None);
        assert!(!Scenario::all().iter().any(|s| s.aws.is_some()));
        assert!(!Scenario::named("reset").unwrap().refuses());
    }

    #[test]
    fn aws_errors_follow_the_request_protocol() {
        let t = AwsThrottle {
            retry_after_ms: None,
        };
        let (ty, body) = t.body(Some("application/x-amz-json-1.0"));
        assert_eq!(ty, "application/x-amz-json-1.0");
        assert!(body.contains(r#""__type":"ThrottlingException""#));
        assert_eq!(
            t.code(Some("application/x-amz-json-1.1")),
            "ThrottlingException"
        );
        let (ty, body) = t.body(Some("application/x-www-form-urlencoded; charset=utf-8"));
        assert_eq!(ty, "text/xml");
        assert!(body.contains("<Code>Throttling</Code>"));
        assert_eq!(t.code(None), "Throttling");
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
