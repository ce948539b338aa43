//! Inference: from the attempts recorded across scenarios and runs to a
//! retry policy, field by field, each with its evidence and a confidence.
//! It never claims more than the recordings show: an outcome no scenario
//! probed is not in `retry_on`, a field the client gave no way to see is
//! `None` with the reason, and where two readings fit equally both are named.

pub mod fit;

use std::time::Duration;

use serde::Serialize;

use super::record::{Arrival, Exit, RunRecord, ScenarioRecord};
use super::scenario::{Purpose, Scenario};
use crate::policy::{Backoff, Condition, Jitter, Outcome, RetryOn, RetryPolicy};
use fit::{BackoffFit, fmt_ms};

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
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Status => "status",
            Cause::Reset => "reset",
            Cause::Timeout => "timeout",
        }
    }

    fn of(s: &Scenario) -> Option<Cause> {
        match s.purpose {
            Purpose::Every(Outcome::Status(_)) | Purpose::SuccessOn(_) => Some(Cause::Status),
            Purpose::Every(Outcome::Reset) => Some(Cause::Reset),
            Purpose::Every(Outcome::Timeout) => Some(Cause::Timeout),
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
    pub fn retried_conditions(&self) -> Vec<Condition> {
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
    pub fn to_policy(&self) -> RetryPolicy {
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
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_ms.value.map(|t| ms_to_duration(round_sig(t)))
    }

    /// Whether the verdict for `outcome` is known, and what it is.
    pub fn retries(&self, outcome: Outcome) -> Option<bool> {
        let name = outcome.to_string();
        self.retry_on
            .iter()
            .find(|v| v.outcome == name)
            .and_then(|v| v.retried)
    }
}

pub fn ms_to_duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms.max(0.0)) / 1e3)
}

/// Two significant digits (whole microseconds below 1 ms): how the rendered
/// policy writes measured durations, since more digits would be noise.
pub fn round_sig(ms: f64) -> f64 {
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
pub fn infer(records: &[(Scenario, ScenarioRecord)], cx: &Context) -> InferredPolicy {
    let mut notes = Vec::new();
    let mut retry_on: Vec<OutcomeVerdict> = records
        .iter()
        .filter(|(s, _)| !s.refuses())
        .filter_map(|(s, r)| Some(verdict(s, s.outcome()?, &r.runs)))
        .collect();
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
    for cause in [Cause::Status, Cause::Reset, Cause::Timeout] {
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

fn attempts_text(counts: &[usize]) -> String {
    let first = counts.first().copied().unwrap_or(0);
    if counts.iter().all(|&c| c == first) {
        format!(
            "{first} attempt{} in each of {} run{}",
            if first == 1 { "" } else { "s" },
            counts.len(),
            if counts.len() == 1 { "" } else { "s" }
        )
    } else {
        let list: Vec<String> = counts.iter().map(usize::to_string).collect();
        format!("attempts per run: {}", list.join(", "))
    }
}

fn verdict(s: &Scenario, outcome: Outcome, runs: &[RunRecord]) -> OutcomeVerdict {
    let counts: Vec<usize> = runs
        .iter()
        .map(|r| r.arrivals.len())
        .filter(|&c| c > 0)
        .collect();
    let (retried, confidence, evidence) = if counts.is_empty() {
        (
            None,
            Confidence::Low,
            "the client sent no request in this scenario".to_owned(),
        )
    } else {
        let retried_runs = counts.iter().filter(|&&c| c >= 2).count();
        let text = attempts_text(&counts);
        if retried_runs == counts.len() {
            let c = if counts.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (Some(true), c, text)
        } else if retried_runs == 0 {
            let c = if counts.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (Some(false), c, text)
        } else {
            (
                Some(true),
                Confidence::Medium,
                format!(
                    "{text} (retried in {retried_runs} of {} runs)",
                    counts.len()
                ),
            )
        }
    };
    OutcomeVerdict {
        outcome: outcome.to_string(),
        scenario: s.name.to_owned(),
        retried,
        confidence,
        evidence,
    }
}

/// Scenarios whose every attempt fails, that reached the server.
fn failing_every_time(
    records: &[(Scenario, ScenarioRecord)],
) -> impl Iterator<Item = (&Scenario, &ScenarioRecord)> {
    records
        .iter()
        .filter(|(s, _)| matches!(s.purpose, Purpose::Every(_)) && !s.refuses())
        .map(|(s, r)| (s, r))
}

fn median_usize(xs: &mut [usize]) -> usize {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

fn max_attempts(records: &[(Scenario, ScenarioRecord)], notes: &mut Vec<String>) -> Field<u32> {
    let mut per_scenario: Vec<(&str, usize, Vec<usize>)> = Vec::new();
    let mut contacted = false;
    for (s, r) in failing_every_time(records) {
        let mut counts: Vec<usize> = r
            .runs
            .iter()
            .map(|r| r.arrivals.len())
            .filter(|&c| c > 0)
            .collect();
        if counts.is_empty() {
            continue;
        }
        contacted = true;
        let all = counts.clone();
        let m = median_usize(&mut counts);
        if m >= 2 {
            per_scenario.push((s.name, m, all));
        }
    }
    if per_scenario.is_empty() {
        return if contacted {
            Field::known(
                1,
                Confidence::High,
                "no failure was retried: one attempt in every run",
            )
        } else {
            Field::unknown("no failing scenario reached the server")
        };
    }
    let value = per_scenario.iter().map(|(_, m, _)| *m).max().unwrap_or(1);
    let agree = per_scenario
        .iter()
        .all(|(_, _, all)| all.iter().all(|&c| c == value));
    let evidence: Vec<String> = per_scenario
        .iter()
        .map(|(name, m, all)| {
            if all.iter().all(|c| c == m) {
                format!("{name}: {m}")
            } else {
                let list: Vec<String> = all.iter().map(usize::to_string).collect();
                format!("{name}: {}", list.join("/"))
            }
        })
        .collect();
    let fewer: Vec<&str> = per_scenario
        .iter()
        .filter(|(_, m, _)| *m < value)
        .map(|(n, _, _)| *n)
        .collect();
    if !fewer.is_empty() {
        notes.push(format!(
            "fewer attempts under {} than the {value} seen elsewhere: a limit on the whole call's time (like curl's --retry-max-time) may cut retries, or another layer retries that failure on a count of its own (aiohttp retries a reset once by itself, below aiohttp-retry)",
            fewer.join(", ")
        ));
    }
    let runs = per_scenario.iter().map(|(_, _, a)| a.len()).sum::<usize>();
    // A run cut at the time bound was still retrying: its count is only
    // the attempts it had time for.
    let cut = !failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .any(|r| r.exit != Exit::TimedOut && r.arrivals.len() == value);
    if cut {
        return Field::known(
            u32::try_from(value).unwrap_or(u32::MAX),
            Confidence::Low,
            format!(
                "at least {value}: every run with {value} attempts was cut at the time bound, none ended by itself (raise --timeout to see them end) — {}",
                evidence.join(", ")
            ),
        );
    }
    let confidence = if agree && runs >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    Field::known(
        u32::try_from(value).unwrap_or(u32::MAX),
        confidence,
        format!(
            "attempts per run where failures were retried — {}",
            evidence.join(", ")
        ),
    )
}

/// Every wait before retry k after `cause`, pooled over its scenarios and
/// their runs, for the first [`fit::MAX_FITTED_RETRIES`] retries; how many
/// waits came after those (not fitted); and the scenarios read.
fn waits_by_retry(
    records: &[(Scenario, ScenarioRecord)],
    cause: Cause,
    hold_ms: Option<f64>,
) -> (Vec<Vec<f64>>, usize, Vec<String>) {
    let mut by: Vec<Vec<f64>> = Vec::new();
    let mut unfitted = 0;
    let mut scenarios = Vec::new();
    for (s, r) in records {
        if Cause::of(s) != Some(cause) || s.refuses() {
            continue;
        }
        let mut any = false;
        for run in &r.runs {
            for (i, w) in waits_of(run, cause == Cause::Timeout, hold_ms)
                .into_iter()
                .enumerate()
            {
                let Some(w) = w else { continue };
                any = true;
                if i >= fit::MAX_FITTED_RETRIES {
                    unfitted += 1;
                    continue;
                }
                if by.len() <= i {
                    by.resize(i + 1, Vec::new());
                }
                by[i].push(w);
            }
        }
        if any {
            scenarios.push(s.name.to_owned());
        }
    }
    (by, unfitted, scenarios)
}

/// A run's waits. After a hanging attempt the wait runs from the moment
/// the client gave up on it — arrival plus its per-attempt timeout — since
/// some clients (urllib3) keep the connection open through the wait and
/// close it only to retry; `None` where that moment is unknown.
fn waits_of(run: &RunRecord, hangs: bool, hold_ms: Option<f64>) -> Vec<Option<f64>> {
    if !hangs {
        return run.waits_ms().into_iter().map(Some).collect();
    }
    run.arrivals
        .windows(2)
        .map(|w| {
            let gave_up = match (hold_ms, w[0].hung_up_ms) {
                (Some(t), Some(h)) => Some(h.min(w[0].at_ms + t)),
                (None, Some(h)) => Some(h),
                (_, None) => None,
            }?;
            Some((w[1].at_ms - gave_up).max(0.0))
        })
        .collect()
}

/// The timing noise of this client on this machine: the spread of the
/// waits that draw nothing — the wait after an honoured Retry-After, and
/// how long the client held the last hanging attempt of each run.
fn noise_floor(records: &[(Scenario, ScenarioRecord)], hold_ms: Option<f64>) -> f64 {
    let mut spreads: Vec<f64> = Vec::new();
    let spread = |xs: &mut Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        (xs.len() >= 3).then(|| xs[xs.len() - 2] - xs[1].min(xs[xs.len() - 2]))
    };
    for (s, r) in records {
        match s.purpose {
            Purpose::RetryAfter { after, .. } => {
                let ra = after.as_secs_f64() * 1e3;
                let mut firsts: Vec<f64> = r
                    .runs
                    .iter()
                    .filter(|r| r.arrivals.len() >= 2)
                    .map(|r| r.waits_ms()[0])
                    .filter(|w| (w - ra).abs() <= 0.1 * ra)
                    .collect();
                spreads.extend(spread(&mut firsts));
            }
            Purpose::Every(Outcome::Timeout) if hold_ms.is_some() => {
                let mut held = last_holds(r);
                spreads.extend(spread(&mut held));
            }
            _ => {}
        }
    }
    spreads.into_iter().fold(0.0, f64::max).min(50.0)
}

/// How long the client held the last attempt of each run that it ended
/// itself: after the last attempt there is no wait to hold it through.
fn last_holds(r: &ScenarioRecord) -> Vec<f64> {
    r.runs
        .iter()
        .filter(|run| run.exit != Exit::TimedOut)
        .filter_map(|run| run.arrivals.last())
        .filter_map(|a| Some(a.hung_up_ms? - a.at_ms))
        .collect()
}

/// Says so where the waits after one cause follow another schedule than
/// the first cause's.
fn cause_differences(by_cause: &[CauseBackoff], noise_ms: f64, notes: &mut Vec<String>) {
    let Some(first) = by_cause.first() else {
        return;
    };
    let medians =
        |c: &CauseBackoff| -> Vec<f64> { c.fit.per_retry.iter().map(|s| s.median_ms).collect() };
    let shown = |c: &CauseBackoff| -> String {
        let list: Vec<String> = medians(c).iter().map(|m| fmt_ms(*m)).collect();
        format!("after a {} {} ms", c.cause.as_str(), list.join("/"))
    };
    for other in &by_cause[1..] {
        let (a, b) = (medians(first), medians(other));
        let differs = a.iter().zip(&b).any(|(x, y)| {
            (x - y).abs() > 2.0 * (noise_ms.max(4.0) + 0.1 * x.max(*y)) + fit::IMMEDIATE_MS
        });
        if differs {
            notes.push(format!(
                "the waits differ by cause: {}, {}; the snippet carries the first (each is fitted apart under backoff_by_cause)",
                shown(first),
                shown(other)
            ));
        }
    }
}

fn is_hang(run: &RunRecord) -> bool {
    run.arrivals.iter().any(|a| a.hung_up_ms.is_some())
}

/// Says so when 429 backs off on another schedule than the 5xx failures
/// (AWS SDKs use a longer base for throttling).
fn throttling_note(
    records: &[(Scenario, ScenarioRecord)],
    f: &BackoffFit,
    hold_ms: Option<f64>,
    notes: &mut Vec<String>,
) {
    let Some(pooled) = f.per_retry.first().map(|s| s.median_ms) else {
        return;
    };
    for (s, r) in failing_every_time(records) {
        let mut firsts: Vec<f64> = r
            .runs
            .iter()
            .filter(|_| Cause::of(s) == Some(Cause::Status))
            .filter_map(|run| waits_of(run, false, hold_ms).first().copied().flatten())
            .collect();
        if firsts.len() < 2 || pooled < 5.0 {
            continue;
        }
        firsts.sort_by(f64::total_cmp);
        let m = firsts[firsts.len() / 2];
        if m > 2.0 * pooled + 5.0 || m < 0.5 * pooled - 5.0 {
            notes.push(format!(
                "`{}` waits {} ms before its first retry against {} ms overall: this outcome backs off on a schedule of its own",
                s.name,
                fmt_ms(m),
                fmt_ms(pooled)
            ));
        }
    }
}

/// The mean and longest wait before retry k under the fit.
fn expected_wait(f: &BackoffFit, k: usize) -> (f64, f64) {
    let b = f
        .nominal_ms
        .get(k)
        .or(f.nominal_ms.last())
        .copied()
        .unwrap_or(0.0);
    match f.jitter {
        Jitter::None => (b, b),
        Jitter::Full => (b / 2.0, b),
        Jitter::Equal => (0.75 * b, b),
        Jitter::Proportional { ratio } => (b, b * (1.0 + ratio)),
        Jitter::Decorrelated => (2.0 * f.base_ms, 3.0 * f.base_ms.max(b)),
    }
}

/// The time a run takes besides its waits: start-up and exit.
fn overhead_ms(records: &[(Scenario, ScenarioRecord)]) -> Option<f64> {
    let mut xs: Vec<f64> = failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| r.exit != Exit::TimedOut && !r.arrivals.is_empty() && !is_hang(r))
        .map(|r| {
            let waits: f64 = r.waits_ms().iter().sum();
            (r.elapsed_ms - waits).max(0.0)
        })
        .collect();
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

/// How much the client's start-up and exit time varies across runs.
fn overhead_spread(records: &[(Scenario, ScenarioRecord)]) -> f64 {
    let xs: Vec<f64> = failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| r.exit != Exit::TimedOut && !r.arrivals.is_empty() && !is_hang(r))
        .map(|r| (r.elapsed_ms - r.waits_ms().iter().sum::<f64>()).max(0.0))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, 0.0_f64), |(a, b), &x| (a.min(x), b.max(x)));
    if xs.len() < 2 { 0.0 } else { hi - lo }
}

/// A refused connection never reaches the server, so whether the client
/// retries it shows only in how long it keeps at it against a closed port,
/// measured against its start-up and exit time and the waits seen elsewhere.
fn refused_verdict(
    s: &Scenario,
    runs: &[RunRecord],
    records: &[(Scenario, ScenarioRecord)],
    f: Option<&BackoffFit>,
    attempts: Option<u32>,
) -> OutcomeVerdict {
    let mk = |retried, confidence, evidence: String| OutcomeVerdict {
        outcome: Outcome::Connect.to_string(),
        scenario: s.name.to_owned(),
        retried,
        confidence,
        evidence,
    };
    let counted: Vec<u32> = runs
        .iter()
        .filter(|r| r.exit != Exit::NotStarted)
        .filter_map(|r| r.refused_connects)
        .collect();
    if !counted.is_empty() && counted.len() == runs.len() {
        let mut sorted = counted.clone();
        sorted.sort_unstable();
        let text = format!(
            "{} refused connection attempts counted (SYNs to the closed port, per run: {})",
            sorted[sorted.len() / 2],
            counted
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        if sorted[sorted.len() - 1] == 0 {
            return mk(
                None,
                Confidence::Low,
                "the client made no connection attempt to the closed port".into(),
            );
        }
        // Whether a client retries a refused connection does not vary from
        // run to run: a lone run that disagrees is a stray SYN (another
        // process on the port's number, a kernel retransmission), so the
        // majority decides and a split is unknown.
        let (retrying, n) = (sorted.iter().filter(|&&c| c >= 2).count(), sorted.len());
        let retried = match (2 * retrying).cmp(&n) {
            std::cmp::Ordering::Greater => Some(true),
            std::cmp::Ordering::Less => Some(false),
            std::cmp::Ordering::Equal => None,
        };
        let dissent = retrying.min(n - retrying);
        let confidence = if dissent == 0 && n >= 2 {
            Confidence::High
        } else if 4 * dissent <= n && retried.is_some() {
            Confidence::Medium
        } else {
            Confidence::Low
        };
        let text = if dissent == 0 {
            text
        } else {
            format!("{text}; {dissent} of {n} runs disagree, read as noise")
        };
        return mk(retried, confidence, text);
    }
    let Some(overhead) = overhead_ms(records) else {
        return mk(
            None,
            Confidence::Low,
            "no other scenario shows the client's start-up and exit time to compare with".into(),
        );
    };
    let elapsed: Vec<f64> = runs
        .iter()
        .filter(|r| r.exit != Exit::NotStarted)
        .map(|r| r.elapsed_ms)
        .collect();
    if elapsed.is_empty() {
        return mk(None, Confidence::Low, "the client did not run".into());
    }
    let mut extra: Vec<f64> = elapsed.iter().map(|e| (e - overhead).max(0.0)).collect();
    extra.sort_by(f64::total_cmp);
    let median_extra = extra[extra.len() / 2];
    let shown = format!(
        "against a closed port the client ran {} ms beyond its usual {} ms start-up and exit",
        fmt_ms(median_extra),
        fmt_ms(overhead)
    );
    // A retry after a refusal shows once the waits add up to more than noise.
    let retries = attempts.unwrap_or(1).saturating_sub(1).max(1) as usize;
    let (mean_total, _) = f.map_or((0.0, 0.0), |f| {
        (0..retries).fold((0.0, 0.0), |(m, x), k| {
            let (mean, max) = expected_wait(f, k);
            (m + mean, x + max)
        })
    });
    // The client's start-up varies by seconds for some (boto3: 3.8–7.6 s):
    // only time beyond that spread is a retry's.
    let spread = overhead_spread(records);
    let min_visible = (20.0 + 0.1 * overhead).max(spread);
    if median_extra > min_visible.max(0.3 * mean_total) {
        let mut n = 1;
        let mut sum = 0.0;
        if let Some(f) = f {
            while n < 100 {
                let (mean, _) = expected_wait(f, n - 1);
                if sum + mean / 2.0 > median_extra {
                    break;
                }
                sum += mean;
                n += 1;
            }
        }
        return mk(
            Some(true),
            Confidence::Low,
            format!(
                "{shown} (its start-up varies by {} ms): about {n} attempts at the waits measured elsewhere; not counted, since a raw socket is not permitted here (run as root to count refused connections)",
                fmt_ms(spread)
            ),
        );
    }
    if mean_total < min_visible {
        return mk(
            None,
            Confidence::Low,
            format!(
                "{shown}; its waits ({} ms in all) are too short to tell retries from none without a listener to count them",
                fmt_ms(mean_total)
            ),
        );
    }
    mk(
        Some(false),
        Confidence::Low,
        format!(
            "{shown}: no time for a retry; not counted, since a raw socket is not permitted here (run as root to count refused connections)"
        ),
    )
}

/// A client that retries only refused connections (urllib3's POST) still
/// makes several attempts: the counted ones raise `max_attempts`.
fn with_refused_attempts(f: Field<u32>, records: &[(Scenario, ScenarioRecord)]) -> Field<u32> {
    let Some((_, r)) = records.iter().find(|(s, _)| s.refuses()) else {
        return f;
    };
    let mut counts: Vec<u32> = r.runs.iter().filter_map(|r| r.refused_connects).collect();
    if counts.is_empty() || counts.len() != r.runs.len() {
        return f;
    }
    counts.sort_unstable();
    let m = counts[counts.len() / 2];
    if f.value.is_some_and(|v| v >= m) || m < 2 {
        return f;
    }
    let agree = counts.iter().all(|&c| c == m);
    Field::known(
        m,
        if agree && counts.len() >= 2 {
            Confidence::High
        } else {
            Confidence::Medium
        },
        format!(
            "{} refused connection attempts counted in the refused scenario{}",
            m,
            match f.value {
                Some(v) => format!(", more than the {v} seen where the server answered"),
                None => String::new(),
            }
        ),
    )
}

fn retry_after(records: &[(Scenario, ScenarioRecord)], f: Option<&BackoffFit>) -> Field<bool> {
    let mut seen: Vec<(String, Option<bool>, String)> = Vec::new();
    for (s, r) in records {
        let Purpose::RetryAfter { status, after } = s.purpose else {
            continue;
        };
        let ra = after.as_secs_f64() * 1e3;
        let mut firsts: Vec<f64> = r
            .runs
            .iter()
            .filter(|r| r.arrivals.len() >= 2)
            .map(|r| r.waits_ms()[0])
            .collect();
        if firsts.is_empty() {
            seen.push((
                s.name.to_owned(),
                None,
                not_retried_after(records, r, status, after),
            ));
            continue;
        }
        firsts.sort_by(f64::total_cmp);
        let w = firsts[firsts.len() / 2];
        let own = f.map(|f| expected_wait(f, 0).1);
        let waited = format!(
            "waited {} ms after {status} with Retry-After {}",
            fmt_ms(w),
            crate::input::duration::format(after)
        );
        let verdict = if own.is_some_and(|o| o >= 0.8 * ra) {
            (
                None,
                format!(
                    "{waited}, but its own first wait ({} ms) is as long",
                    fmt_ms(own.unwrap_or(0.0))
                ),
            )
        } else if w >= 0.9 * ra {
            (Some(true), waited)
        } else if w < 0.6 * ra {
            (Some(false), format!("{waited} (its own backoff)"))
        } else {
            (
                None,
                format!("{waited}: neither its own backoff nor the header's"),
            )
        };
        seen.push((s.name.to_owned(), verdict.0, verdict.1));
    }
    if seen.is_empty() {
        return Field::unknown("no Retry-After scenario ran");
    }
    let evidence = seen
        .iter()
        .map(|(n, _, e)| format!("{n}: {e}"))
        .collect::<Vec<_>>()
        .join("; ");
    let known: Vec<bool> = seen.iter().filter_map(|(_, v, _)| *v).collect();
    match known.as_slice() {
        [] => Field::unknown(evidence),
        ks if ks.iter().all(|&k| k == ks[0]) => {
            let c = if ks.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            Field::known(ks[0], c, evidence)
        }
        // Honoured for one status and not the other: the policy has one
        // flag, and ignoring it anywhere is the hazard RL010 is about.
        _ => Field::known(
            false,
            Confidence::Medium,
            format!("{evidence} (honoured for one status only)"),
        ),
    }
}

/// Why a status with Retry-After was not retried: when the same status
/// without it is, the client did not refuse the status but the wait — it
/// gave up before the header's time, so a limit on the whole call (a timeout
/// budget the retries share, or a cap on Retry-After) is shorter.
fn not_retried_after(
    records: &[(Scenario, ScenarioRecord)],
    r: &ScenarioRecord,
    status: u16,
    after: Duration,
) -> String {
    let plain_retried = records.iter().any(|(s, rec)| {
        s.purpose == Purpose::Every(Outcome::Status(status))
            && rec.runs.iter().any(|run| run.arrivals.len() >= 2)
    });
    if !plain_retried {
        return format!("{status} is not retried");
    }
    let mut gave_up: Vec<f64> = r
        .runs
        .iter()
        .filter(|run| run.exit != Exit::TimedOut)
        .filter_map(|run| Some(run.elapsed_ms - run.arrivals.first()?.at_ms))
        .collect();
    gave_up.sort_by(f64::total_cmp);
    let when = gave_up
        .get(gave_up.len() / 2)
        .map(|g| format!(", ending {} ms after the answer", fmt_ms(*g)))
        .unwrap_or_default();
    format!(
        "{status} with Retry-After {} was not retried although a plain {status} is{when}: the client gives up rather than wait that long — a limit on the whole call (a timeout shared by the attempts, or a cap on Retry-After) shorter than the header, so whether it honours Retry-After is not seen",
        crate::input::duration::format(after)
    )
}

/// How long the client held a hanging attempt before it hung up; `None`
/// when it never did, or when the hang-up was the probe's own kill at the
/// run's bound (an attempt cut then says nothing of the client's timeout:
/// curl's second attempt, cut 1 s after it began, is no 1 s timeout).
fn own_hold(run: &RunRecord, a: &Arrival) -> Option<f64> {
    let h = a.hung_up_ms?;
    if run.exit == Exit::TimedOut && h >= run.elapsed_ms - 5.0 {
        return None;
    }
    Some(h - a.at_ms)
}

fn timeout(records: &[(Scenario, ScenarioRecord)], bound: Duration) -> (Field<f64>, bool) {
    let Some((_, r)) = records
        .iter()
        .find(|(s, _)| s.outcome() == Some(Outcome::Timeout))
    else {
        return (Field::unknown("the hang scenario did not run"), false);
    };
    let bound = r.bound_ms.map_or(bound, |ms| {
        Duration::from_secs_f64(ms.max(0.0) / 1e3).min(bound)
    });
    let mut gave_up: Vec<f64> = Vec::new();
    let mut hung_to_the_end = 0;
    for run in &r.runs {
        for a in &run.arrivals {
            match own_hold(run, a) {
                Some(held) => gave_up.push(held),
                None => hung_to_the_end += 1,
            }
        }
    }
    if gave_up.is_empty() {
        if hung_to_the_end == 0 {
            return (
                Field::unknown("the client sent no request in the hang scenario"),
                true,
            );
        }
        return (
            Field {
                value: None,
                confidence: Confidence::Medium,
                evidence: format!(
                    "no per-attempt timeout within {}: every hanging attempt was held until the run was cut",
                    crate::input::duration::format(bound)
                ),
            },
            true,
        );
    }
    // The client stops waiting on an attempt after its timeout, but may
    // hold the connection through its backoff and close it only to retry;
    // after the last attempt there is nothing to wait for, so that hold is
    // the timeout itself. Each run's shortest hold bounds it too.
    let mut last = last_holds(r);
    let (mut holds, from) = if last.is_empty() {
        let shortest: Vec<f64> = r
            .runs
            .iter()
            .filter_map(|run| {
                run.arrivals
                    .iter()
                    .filter_map(|a| own_hold(run, a))
                    .min_by(f64::total_cmp)
            })
            .collect();
        (shortest, "each run's shortest hold")
    } else {
        (std::mem::take(&mut last), "the last attempt of each run")
    };
    holds.sort_by(f64::total_cmp);
    gave_up.sort_by(f64::total_cmp);
    let median = holds[holds.len() / 2];
    let (lo, hi) = (holds[0], holds[holds.len() - 1]);
    let tight = hi - lo <= 0.1 * median + 10.0;
    let confidence = if tight && holds.len() >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let list: Vec<String> = holds.iter().take(8).map(|x| fmt_ms(*x)).collect();
    let longer = gave_up
        .last()
        .filter(|&&g| g > hi + 0.1 * hi + 10.0)
        .map(|g| {
            format!(
                "; earlier attempts were held up to {} ms, the client keeping the connection through its wait",
                fmt_ms(*g)
            )
        })
        .unwrap_or_default();
    (
        Field::known(
            median,
            confidence,
            format!(
                "the client gave up on hanging attempts after {} ms ({from}){}{longer}",
                list.join("/"),
                if holds.len() > 8 { "/…" } else { "" }
            ),
        ),
        true,
    )
}

fn method(
    records: &[(Scenario, ScenarioRecord)],
    declared: Option<&str>,
    notes: &mut Vec<String>,
) -> Field<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for a in records
        .iter()
        .flat_map(|(_, r)| &r.runs)
        .flat_map(|r| &r.arrivals)
    {
        *counts.entry(a.method.as_str()).or_default() += 1;
    }
    let observed = counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(m, _)| (*m).to_owned());
    match (declared, observed) {
        (Some(d), Some(o)) if !d.eq_ignore_ascii_case(&o) => {
            notes.push(format!("--method {d} was given, but the client sent {o}"));
            Field::known(
                d.to_ascii_uppercase(),
                Confidence::Low,
                format!("declared; the client sent {o}"),
            )
        }
        (Some(d), _) => Field::known(
            d.to_ascii_uppercase(),
            Confidence::High,
            "declared with --method",
        ),
        (None, Some(o)) => {
            let total: usize = counts.values().sum();
            Field::known(
                o.clone(),
                Confidence::High,
                format!("{o} on {} of {total} attempts", counts[o.as_str()]),
            )
        }
        (None, None) => Field::unknown("no attempt arrived"),
    }
}

fn idempotency_key(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let runs: Vec<&RunRecord> = records
        .iter()
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| !r.arrivals.is_empty())
        .collect();
    if runs.is_empty() {
        return Field::unknown("no attempt arrived");
    }
    let retried: Vec<&&RunRecord> = runs.iter().filter(|r| r.arrivals.len() >= 2).collect();
    let keyed = |r: &RunRecord| r.arrivals.iter().all(|a| a.idempotency_key.is_some());
    if retried.is_empty() {
        let with = runs.iter().filter(|r| keyed(r)).count();
        return Field::known(
            with == runs.len(),
            Confidence::Medium,
            format!(
                "Idempotency-Key on {with} of {} single attempts; no retry to compare keys across",
                runs.len()
            ),
        );
    }
    let same = retried
        .iter()
        .filter(|r| {
            keyed(r)
                && r.arrivals
                    .iter()
                    .all(|a| a.idempotency_key == r.arrivals[0].idempotency_key)
        })
        .count();
    let keyed_runs = retried.iter().filter(|r| keyed(r)).count();
    if same == retried.len() {
        Field::known(
            true,
            Confidence::High,
            format!(
                "the same Idempotency-Key on every attempt of each of {} retried runs",
                retried.len()
            ),
        )
    } else if keyed_runs > 0 {
        Field::known(
            false,
            Confidence::High,
            format!(
                "Idempotency-Key changes between attempts in {} of {} retried runs: the server cannot tell a retry from a new request",
                keyed_runs - same,
                retried.len()
            ),
        )
    } else {
        Field::known(
            false,
            Confidence::High,
            format!(
                "no Idempotency-Key on the attempts of {} retried runs",
                retried.len()
            ),
        )
    }
}

fn deadline_header(
    records: &[(Scenario, ScenarioRecord)],
    notes: &mut Vec<String>,
) -> Field<String> {
    const COUNTS: &[&str] = &[
        "x-envoy-attempt-count",
        "grpc-previous-rpc-attempts",
        "amz-sdk-request",
        "x-stainless-retry-count",
        "x-retry-attempt",
    ];
    let mut deadline: Option<(String, Vec<String>)> = None;
    let mut counted: Option<(String, Vec<String>)> = None;
    for run in records.iter().flat_map(|(_, r)| &r.runs) {
        for a in &run.arrivals {
            for (name, value) in &a.notable_headers {
                let slot = if COUNTS.contains(&name.as_str()) {
                    &mut counted
                } else {
                    &mut deadline
                };
                match slot {
                    None => *slot = Some((name.clone(), vec![value.clone()])),
                    Some((n, vals)) if n == name && vals.len() < 3 && run.arrivals.len() >= 2 => {
                        vals.push(value.clone())
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some((name, vals)) = counted {
        notes.push(format!(
            "the client counts its attempts in `{name}` ({})",
            vals.join(", ")
        ));
    }
    match deadline {
        Some((name, vals)) => Field::known(
            name.clone(),
            Confidence::High,
            format!("`{name}` sent: {}", vals.join(", ")),
        ),
        None => Field {
            value: None,
            confidence: Confidence::Medium,
            evidence: "no deadline header (grpc-timeout, x-request-timeout, …) on any attempt"
                .into(),
        },
    }
}

fn reuses_connection(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let mut same = 0;
    let mut retries = 0;
    for run in failing_every_time(records)
        .filter(|(s, _)| {
            s.outcome() != Some(Outcome::Reset) && s.outcome() != Some(Outcome::Timeout)
        })
        .flat_map(|(_, r)| &r.runs)
    {
        for w in run.arrivals.windows(2) {
            retries += 1;
            same += usize::from(w[0].connection == w[1].connection);
        }
    }
    if retries == 0 {
        return Field::unknown("no retry after an answer to compare connections");
    }
    Field::known(
        same * 2 > retries,
        Confidence::High,
        format!("{same} of {retries} retries after an answer came on the same connection"),
    )
}

fn stops_on_success(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let Some((s, r)) = records
        .iter()
        .find(|(s, _)| matches!(s.purpose, Purpose::SuccessOn(_)))
    else {
        return Field::unknown("the success-on-k scenario did not run");
    };
    let Purpose::SuccessOn(k) = s.purpose else {
        unreachable!()
    };
    let k = k as usize;
    let counts: Vec<usize> = r
        .runs
        .iter()
        .map(|r| r.arrivals.len())
        .filter(|&c| c > 0)
        .collect();
    if counts.is_empty() {
        return Field::unknown("the client sent no request in the success-on-k scenario");
    }
    let text = attempts_text(&counts);
    if counts.iter().any(|&c| c > k) {
        return Field::known(
            false,
            Confidence::High,
            format!("{text}: it went on after the 200 of attempt {k}"),
        );
    }
    if counts.iter().all(|&c| c == k) {
        let ok = r.runs.iter().filter(|r| r.exit.success()).count();
        return Field::known(
            true,
            Confidence::High,
            format!("{text}; exit 0 in {ok} of {} runs", r.runs.len()),
        );
    }
    Field::unknown(format!("{text}: it gave up before attempt {k}'s success"))
}

#[cfg(test)]
mod tests;
