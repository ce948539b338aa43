//! Inference: from the attempts recorded across scenarios and runs to a
//! retry policy, field by field, each with its evidence and a confidence.
//! It never claims more than the recordings show: an outcome no scenario
//! probed is not in `retry_on`, a field the client gave no way to see is
//! `None` with the reason, and where two readings fit equally both are named.

mod attempts;
pub mod fit;
mod refused;
mod request;
mod retry_after;
mod timeout;
mod waits;

use std::time::Duration;

use serde::Serialize;

use super::record::{Arrival, Exit, RunRecord, ScenarioRecord};
use super::scenario::{Purpose, Scenario};
use crate::policy::{Backoff, Condition, Jitter, Outcome, RetryOn, RetryPolicy};
use attempts::{attempts_text, failing_every_time, max_attempts, verdict, verdict_named};
use fit::{BackoffFit, fmt_ms};
use refused::{refused_verdict, with_refused_attempts};
use request::{deadline_header, idempotency_key, method, reuses_connection, stops_on_success};
use retry_after::{amz_retry_after, own_hold, retry_after};
use timeout::timeout;
use waits::{
    cause_differences, expected_wait, last_holds, noise_floor, overhead_ms, overhead_spread,
    throttling_note, waits_by_retry,
};

/// How sure the probe is of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// One inferred field: its value (`None`: not determined), how sure, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field<T> {
    pub value: Option<T>,
    pub confidence: Confidence,
    pub evidence: String,
}

impl<T> Field<T> {
    fn known(value: T, confidence: Confidence, evidence: impl Into<String>) -> Self {
        Field {
            value: Some(value),
            confidence,
            evidence: evidence.into(),
        }
    }

    fn unknown(evidence: impl Into<String>) -> Self {
        Field {
            value: None,
            confidence: Confidence::Low,
            evidence: evidence.into(),
        }
    }
}

/// Whether one probed outcome is retried.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeVerdict {
    /// `503`, `reset`, `timeout`, `connect`.
    pub outcome: String,
    pub scenario: String,
    pub retried: Option<bool>,
    pub confidence: Confidence,
    pub evidence: String,
}

/// What a wait follows: the waits after each are fitted apart, since
/// clients back off differently after an answer, a reset and a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    Status,
    Reset,
    Timeout,
    /// An AWS throttling error (`aws-throttling`): AWS SDKs back off from a
    /// base of their own after one (botocore: 1 s, against 50 ms).
    Throttling,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Status => "status",
            Cause::Reset => "reset",
            Cause::Timeout => "timeout",
            Cause::Throttling => "throttling",
        }
    }

    fn of(s: &Scenario) -> Option<Cause> {
        match s.purpose {
            Purpose::Every(Outcome::Status(_)) | Purpose::SuccessOn(_) => Some(Cause::Status),
            Purpose::Every(Outcome::Reset) => Some(Cause::Reset),
            Purpose::Every(Outcome::Timeout) => Some(Cause::Timeout),
            Purpose::Throttled => Some(Cause::Throttling),
            _ => None,
        }
    }
}

/// The schedule fitted to the waits after one cause.
#[derive(Debug, Clone, Serialize)]
pub struct CauseBackoff {
    pub cause: Cause,
    pub scenarios: Vec<String>,
    pub fit: BackoffFit,
}

/// Why no wait was fitted although the client retried: its only retries
/// were refused connections, counted from their SYNs, which are not timed.
pub const UNTIMED_RETRIES: &str = "the only retries seen were refused connection attempts, counted from their SYNs but not timed, so no wait between attempts was measured";

/// The policy as measured.
#[derive(Debug, Clone, Serialize)]
pub struct InferredPolicy {
    pub method: Field<String>,
    pub max_attempts: Field<u32>,
    pub retry_on: Vec<OutcomeVerdict>,
    /// `None` when no retry was seen, so there is no wait to fit. The
    /// schedule after a status when one was retried, else after a reset,
    /// else after a timeout; each is in `backoff_by_cause`.
    pub backoff: Option<BackoffFit>,
    pub backoff_by_cause: Vec<CauseBackoff>,
    /// The timing noise the fits allowed, in ms: the spread of waits that
    /// draw nothing (an honoured Retry-After, the hold of a hanging attempt).
    pub noise_ms: f64,
    pub honor_retry_after: Field<bool>,
    /// Whether AWS's `x-amz-retry-after` is honoured; only when the
    /// `aws-throttling-retry-after` scenario ran.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub honor_amz_retry_after: Option<Field<bool>>,
    /// The per-attempt timeout in ms; `None` with the reason when there is
    /// none below the time bound or the hang scenario did not run.
    pub timeout_ms: Field<f64>,
    /// Whether the hang scenario ran (so a missing timeout is a finding).
    pub timeout_probed: bool,
    /// Whether its runs were cut before the time bound (a hang that
    /// outlasted every wait seen elsewhere), so a longer timeout is not
    /// ruled out.
    pub timeout_cut_early: bool,
    pub idempotency_key: Field<bool>,
    /// The header that carries a deadline downstream, if any.
    pub deadline_header: Field<String>,
    pub reuses_connection: Field<bool>,
    pub stops_on_success: Field<bool>,
    pub notes: Vec<String>,
}

impl InferredPolicy {
    /// The conditions seen retried, in the schema's order.
    pub(crate) fn retried_conditions(&self) -> Vec<Condition> {
        let mut out: Vec<Condition> = self
            .retry_on
            .iter()
            .filter(|v| v.retried == Some(true))
            .filter_map(|v| v.outcome.parse().ok())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The policy engine's value for what was measured: fields not
    /// determined take the schema's defaults, which the report says.
    pub(crate) fn to_policy(&self) -> RetryPolicy {
        let max_attempts = self.max_attempts.value.unwrap_or(1).max(1);
        let backoff =
            self.backoff
                .as_ref()
                .filter(|f| f.explained)
                .map_or_else(Backoff::default, |f| Backoff {
                    kind: f.kind,
                    base: ms_to_duration(round_sig(f.base_ms)),
                    multiplier: f.multiplier.unwrap_or(2.0),
                    cap: f.cap_ms.map(|c| ms_to_duration(round_sig(c))),
                    jitter: f.jitter,
                });
        RetryPolicy {
            max_attempts,
            backoff,
            retry_on: RetryOn(self.retried_conditions()),
            honor_retry_after: self.honor_retry_after.value.unwrap_or(true),
            budget: None,
        }
    }

    /// The per-attempt timeout, rounded like the rendered YAML.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout_ms.value.map(|t| ms_to_duration(round_sig(t)))
    }

    /// Whether the verdict for `outcome` is known, and what it is.
    #[cfg(test)]
    pub(crate) fn retries(&self, outcome: Outcome) -> Option<bool> {
        let name = outcome.to_string();
        self.retry_on
            .iter()
            .find(|v| v.outcome == name)
            .and_then(|v| v.retried)
    }
}

pub(crate) fn ms_to_duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms.max(0.0)) / 1e3)
}

/// Two significant digits (whole microseconds below 1 ms): how the rendered
/// policy writes measured durations, since more digits would be noise.
pub(crate) fn round_sig(ms: f64) -> f64 {
    if ms <= 0.0 || !ms.is_finite() {
        return 0.0;
    }
    let mag = 10f64.powi(ms.log10().floor() as i32 - 1);
    let r = (ms / mag).round() * mag;
    if r < 1.0 {
        (r * 1000.0).round() / 1000.0
    } else {
        r.round()
    }
}

/// What the probe was asked, for the inference to weigh.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub declared_method: Option<&'a str>,
    pub bound: Duration,
}

/// Infers the policy from every scenario's runs.
pub(crate) fn infer(records: &[(Scenario, ScenarioRecord)], cx: &Context) -> InferredPolicy {
    let mut notes = Vec::new();
    let mut retry_on: Vec<OutcomeVerdict> = records
        .iter()
        .filter(|(s, _)| !s.refuses())
        .filter_map(|(s, r)| Some(verdict(s, s.outcome()?, &r.runs)))
        .collect();
    // Not a condition the schema has: reported, never in the snippet.
    retry_on.extend(
        records
            .iter()
            .filter(|(s, _)| s.purpose == Purpose::Throttled)
            .map(|(s, r)| verdict_named(s, "throttling".to_owned(), &r.runs)),
    );
    let max_attempts = max_attempts(records, &mut notes);
    let (timeout_ms, timeout_probed) = timeout(records, cx.bound);
    let hold = timeout_ms.value;
    let timeout_cut_early = hold.is_none()
        && records.iter().any(|(s, r)| {
            s.outcome() == Some(Outcome::Timeout)
                && r.bound_ms.is_some_and(|b| b < cx.bound.as_secs_f64() * 1e3)
        });
    if let Some(v) = retry_on.iter_mut().find(|v| v.outcome == "timeout")
        && hold.is_none()
        && v.retried.is_some()
    {
        v.retried = None;
        v.confidence = Confidence::Low;
        v.evidence = format!(
            "{}: the client never gave up on a hanging attempt, so whether it retries a timeout is not seen",
            v.evidence
        );
    }
    let noise_ms = noise_floor(records, hold);
    let mut backoff_by_cause = Vec::new();
    let mut unfitted = 0;
    for cause in [
        Cause::Status,
        Cause::Reset,
        Cause::Timeout,
        Cause::Throttling,
    ] {
        let (waits, over, scenarios) = waits_by_retry(records, cause, hold);
        unfitted += over;
        if let Some(fit) = fit::fit(&waits, noise_ms) {
            backoff_by_cause.push(CauseBackoff {
                cause,
                scenarios,
                fit,
            });
        }
    }
    if unfitted > 0 {
        notes.push(format!(
            "{unfitted} waits after retry {} are not fitted: the schedule is read from the first {} retries",
            fit::MAX_FITTED_RETRIES,
            fit::MAX_FITTED_RETRIES
        ));
    }
    cause_differences(&backoff_by_cause, noise_ms, &mut notes);
    let backoff = backoff_by_cause.first().map(|c| c.fit.clone());
    if let Some(f) = &backoff {
        throttling_note(records, f, hold, &mut notes);
    }
    if let Some((s, r)) = records.iter().find(|(s, _)| s.refuses()) {
        retry_on.push(refused_verdict(
            s,
            &r.runs,
            records,
            backoff.as_ref(),
            max_attempts.value,
        ));
    }
    let max_attempts = with_refused_attempts(max_attempts, records);
    let honor_retry_after = retry_after(records, backoff.as_ref());
    let throttled = backoff_by_cause
        .iter()
        .find(|c| c.cause == Cause::Throttling)
        .map(|c| &c.fit);
    let honor_amz_retry_after = amz_retry_after(records, throttled);
    let method = method(records, cx.declared_method, &mut notes);
    let idempotency_key = idempotency_key(records);
    let deadline_header = deadline_header(records, &mut notes);
    let reuses_connection = reuses_connection(records);
    let stops_on_success = stops_on_success(records);
    let killed = records
        .iter()
        .filter(|(_, r)| r.bound_ms.is_none())
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| r.exit == Exit::TimedOut)
        .count();
    if let Some((_, r)) = records.iter().find(|(_, r)| r.bound_ms.is_some()) {
        let cut = Duration::from_secs_f64(r.bound_ms.unwrap_or(0.0).max(0.0) / 1e3);
        let n = r.runs.iter().filter(|r| r.exit == Exit::TimedOut).count();
        if n > 0 {
            notes.push(format!(
                "{n} `{}` run(s) were cut at {}, well past the longest wait seen elsewhere, instead of the {} bound",
                r.name,
                crate::input::duration::format(cut),
                crate::input::duration::format(cx.bound)
            ));
        }
    }
    handshake_note(records, &mut notes);
    if killed > 0 {
        notes.push(format!(
            "{killed} run(s) outlived the time bound of {} and were killed: counts from them are lower bounds",
            crate::input::duration::format(cx.bound)
        ));
    }
    InferredPolicy {
        method,
        max_attempts,
        retry_on,
        backoff,
        backoff_by_cause,
        noise_ms,
        honor_retry_after,
        honor_amz_retry_after,
        timeout_ms,
        timeout_probed,
        timeout_cut_early,
        idempotency_key,
        deadline_header,
        reuses_connection,
        stops_on_success,
        notes,
    }
}

/// Says so when TLS handshakes failed: those connections carried no
/// request, so they are neither attempts nor resets the client retried.
fn handshake_note(records: &[(Scenario, ScenarioRecord)], notes: &mut Vec<String>) {
    let runs = || records.iter().flat_map(|(_, r)| &r.runs);
    let failed: u32 = runs().map(|r| r.handshakes_failed).sum();
    if failed == 0 {
        return;
    }
    let in_runs = runs().filter(|r| r.handshakes_failed > 0).count();
    let first = runs()
        .find_map(|r| r.handshake_error.as_deref())
        .unwrap_or("unknown");
    notes.push(format!(
        "{failed} TLS handshake(s) failed in {in_runs} run(s) (the first: {first}): the client did not trust the probe's CA or did not speak TLS; no request was sent on those connections, so they are not counted as attempts, and not as resets"
    ));
}

#[cfg(test)]
mod tests;
