//! Measured against declared: the differences between the inferred policy
//! and a policy written down — a layer of the user's topology (the CI gate)
//! or a shipped preset (the nearest one). Only what the probe determined is
//! compared; what it could not see is listed as not checked, never as a
//! difference.

use std::time::Duration;

use serde::Serialize;

use super::infer::fit::fmt_ms;
use super::infer::{Confidence, InferredPolicy};
use crate::input::duration::format as dur;
use crate::policy::{BackoffKind, Jitter, Outcome, RetryPolicy};

/// One field where the client and the declaration disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub field: String,
    pub measured: String,
    pub declared: String,
}

impl Difference {
    fn new(
        field: impl Into<String>,
        measured: impl Into<String>,
        declared: impl Into<String>,
    ) -> Self {
        Difference {
            field: field.into(),
            measured: measured.into(),
            declared: declared.into(),
        }
    }
}

/// What to compare beyond the gate's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Attempts, retried outcomes, Retry-After, jitter present or not, and
    /// the per-attempt timeout when one is declared.
    Gate,
    /// Also the backoff kind, base, cap and jitter kind (for presets).
    Detailed,
}

/// The comparison's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Comparison {
    pub differences: Vec<Difference>,
    /// Fields the probe could not determine, so not compared.
    pub not_checked: Vec<String>,
}

fn attempts_text(n: u32) -> String {
    if n == 1 {
        "1 attempt (no retries)".into()
    } else if n == RetryPolicy::UNLIMITED {
        "unlimited attempts".into()
    } else {
        format!("{n} attempts")
    }
}

fn declared_retries(p: &RetryPolicy, o: Outcome) -> bool {
    p.retries() && p.retry_on.matches(o)
}

/// Compares `inferred` with `declared`; `timeout` is the declared
/// per-attempt timeout when it is to be compared (`Some(None)`: declared
/// without one).
pub(crate) fn compare(
    inferred: &InferredPolicy,
    declared: &RetryPolicy,
    timeout: Option<Option<Duration>>,
    depth: Depth,
) -> Comparison {
    let mut c = Comparison::default();
    let measured_attempts = inferred.max_attempts.value;
    match measured_attempts {
        Some(1) if declared.retries() => c.differences.push(Difference::new(
            "layer",
            "the client does not retry at all",
            format!(
                "a retrying layer ({})",
                attempts_text(declared.max_attempts)
            ),
        )),
        Some(n) if n != declared.max_attempts => c.differences.push(Difference::new(
            "max_attempts",
            attempts_text(n),
            attempts_text(declared.max_attempts),
        )),
        Some(_) => {}
        None => c.not_checked.push("max_attempts".into()),
    }
    for v in &inferred.retry_on {
        let Ok(condition) = v.outcome.parse::<crate::policy::Condition>() else {
            continue;
        };
        let outcome = match condition {
            crate::policy::Condition::Timeout => Outcome::Timeout,
            crate::policy::Condition::Connect => Outcome::Connect,
            crate::policy::Condition::Reset => Outcome::Reset,
            crate::policy::Condition::Status(s) => Outcome::Status(s),
            crate::policy::Condition::Class(_) => continue,
        };
        let Some(measured) = v.retried else {
            c.not_checked.push(format!("retry on {}", v.outcome));
            continue;
        };
        let decl = declared_retries(declared, outcome);
        if measured != decl {
            let say = |b: bool| if b { "retried" } else { "not retried" };
            c.differences.push(Difference::new(
                format!("retry_on {}", v.outcome),
                say(measured),
                say(decl),
            ));
        }
    }
    let throttled = [Outcome::Status(429), Outcome::Status(503)]
        .into_iter()
        .any(|o| declared_retries(declared, o));
    match inferred.honor_retry_after.value {
        Some(m) if throttled && m != declared.honor_retry_after => {
            let say = |b: bool| if b { "honoured" } else { "ignored" };
            c.differences.push(Difference::new(
                "honor_retry_after",
                say(m),
                say(declared.honor_retry_after),
            ));
        }
        Some(_) => {}
        None if throttled => c.not_checked.push("honor_retry_after".into()),
        None => {}
    }
    if let Some(fit) = &inferred.backoff {
        if fit.jitter_confidence >= Confidence::Medium && declared.retries() {
            let measured = fit.jitter != Jitter::None;
            let decl = declared.backoff.kind != BackoffKind::None
                && declared.backoff.jitter != Jitter::None;
            if measured != decl {
                c.differences.push(Difference::new(
                    "jitter",
                    if measured {
                        format!("{} jitter", fit.jitter.as_str())
                    } else {
                        "no jitter".into()
                    },
                    if decl {
                        format!("{} jitter", declared.backoff.jitter.as_str())
                    } else {
                        "no jitter".into()
                    },
                ));
            } else if measured
                && depth == Depth::Detailed
                && fit.jitter.as_str() != declared.backoff.jitter.as_str()
            {
                c.differences.push(Difference::new(
                    "jitter",
                    fit.jitter.as_str(),
                    declared.backoff.jitter.as_str(),
                ));
            }
        } else if declared.retries() {
            c.not_checked.push("jitter".into());
        }
        if depth == Depth::Detailed && declared.retries() {
            detailed_backoff(inferred, declared, &mut c);
        }
    }
    if let Some(decl) = timeout {
        if inferred.timeout_probed {
            let measured = inferred.timeout_ms.value;
            let differs = match (measured, decl) {
                (Some(m), Some(d)) => {
                    let d = d.as_secs_f64() * 1e3;
                    (m - d).abs() > 0.2 * d + 10.0
                }
                (None, None) => false,
                _ => true,
            };
            if differs {
                c.differences.push(Difference::new(
                    "timeout",
                    measured.map_or("none".to_owned(), |m| format!("{} ms", fmt_ms(m))),
                    decl.map_or("none".to_owned(), dur),
                ));
            }
        } else {
            c.not_checked.push("timeout".into());
        }
    }
    c
}

fn detailed_backoff(inferred: &InferredPolicy, declared: &RetryPolicy, c: &mut Comparison) {
    let Some(fit) = &inferred.backoff else { return };
    let b = &declared.backoff;
    if fit.kind_confidence >= Confidence::Medium
        && fit.kind != b.kind
        && fit.jitter != Jitter::Decorrelated
    {
        c.differences.push(Difference::new(
            "backoff kind",
            fit.kind.as_str(),
            b.kind.as_str(),
        ));
    }
    if b.kind != BackoffKind::None && fit.kind != BackoffKind::None {
        let d = b.base.as_secs_f64() * 1e3;
        if (fit.base_ms - d).abs() > 0.25 * d + 5.0 {
            c.differences.push(Difference::new(
                "base",
                format!("{} ms", fmt_ms(fit.base_ms)),
                dur(b.base),
            ));
        }
    }
    match (fit.cap_ms, b.cap) {
        (Some(m), Some(d)) => {
            let d_ms = d.as_secs_f64() * 1e3;
            if (m - d_ms).abs() > 0.25 * d_ms + 5.0 {
                c.differences
                    .push(Difference::new("cap", format!("{} ms", fmt_ms(m)), dur(d)));
            }
        }
        (Some(m), None) => {
            c.differences
                .push(Difference::new("cap", format!("{} ms", fmt_ms(m)), "none"))
        }
        // A cap beyond the waits a probe sees cannot be told from none.
        (None, _) => {}
    }
}

/// A score to rank presets by: each difference counts one, and a count
/// apart by an order of magnitude or more (3 against unlimited) three: no
/// client that stops after a few attempts is "nearest" a preset that never
/// stops.
pub(crate) fn distance(c: &Comparison) -> usize {
    c.differences
        .iter()
        .map(|d| {
            let far = d.field == "max_attempts"
                && (d.measured.contains("unlimited") || d.declared.contains("unlimited"));
            if far { 3 } else { 1 }
        })
        .sum()
}
