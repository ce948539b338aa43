//! `--expect` gates for CI: `amplification(db) <= 3`, `success >= 0.99`,
//! `p99 <= 500ms`, `p99(db) <= 200ms`, `duplicates == 0`, `received(db) < 100`.
//!
//! Grammar: `METRIC [ '(' SERVICE ')' ] OP NUMBER [UNIT]` with OP one of
//! `< <= == != >= >`. Metrics:
//!
//! | metric | without a service | with one |
//! |---|---|---|
//! | `amplification` | the highest of any service | measured at the service |
//! | `received` | — (needs a service) | requests it received |
//! | `success` | succeeded ÷ user requests (`0.99` or `99%`) | — |
//! | `requests`, `succeeded`, `failed` | end-to-end counts | — |
//! | `p50 p90 p99 p999 max` | end-to-end latency | the service's latency |
//! | `duplicates` | all services | the service |
//! | `retries`, `budget_refusals` | all layers | the service's outgoing calls |
//!
//! Latencies need a unit (`us`, `ms`, `s`, `m`); counts and ratios take none.

use std::fmt;

use super::report::{ExpectOutcome, RunReport, ServiceReport};
use crate::input::error::nearest;

const METRICS: &[&str] = &[
    "amplification",
    "received",
    "success",
    "requests",
    "succeeded",
    "failed",
    "p50",
    "p90",
    "p99",
    "p999",
    "max",
    "duplicates",
    "retries",
    "budget_refusals",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

impl Op {
    /// How an expression writes each comparison, two-character symbols
    /// first so that `<=` is not read as `<`.
    pub(crate) const SYMBOLS: [(&'static str, Op); 7] = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ];

    pub(crate) fn holds(self, a: f64, b: f64) -> bool {
        let eq = (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
        match self {
            Op::Lt => a < b && !eq,
            Op::Le => a <= b || eq,
            Op::Eq => eq,
            Op::Ne => !eq,
            Op::Ge => a >= b || eq,
            Op::Gt => a > b && !eq,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Ge => ">=",
            Op::Gt => ">",
        })
    }
}

/// One parsed gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// As written.
    pub expr: String,
    pub metric: String,
    pub service: Option<String>,
    pub(crate) op: Op,
    /// In ms for latencies, a 0..=1 ratio for `success`, a count otherwise.
    pub threshold: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExpectErrorKind {
    /// Not of the form `METRIC[(SERVICE)] OP NUMBER[UNIT]`.
    Syntax,
    UnknownMetric,
    /// The metric does not take (or needs) a service.
    Service,
    /// A unit missing, not allowed or unknown.
    Unit,
    /// Names a service the report does not have (found when evaluating).
    UnknownService,
    /// A threshold the metric can never take (a negative latency or count).
    Range,
}

/// Why an `--expect` expression cannot be used; the CLI exits 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --expect `{expr}`: {reason}")]
pub struct ExpectError {
    pub expr: String,
    pub(crate) kind: ExpectErrorKind,
    pub reason: String,
}

fn is_latency(metric: &str) -> bool {
    matches!(metric, "p50" | "p90" | "p99" | "p999" | "max")
}

impl std::str::FromStr for Expectation {
    type Err = ExpectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expectation::parse(s)
    }
}

impl Expectation {
    pub fn parse(expr: &str) -> Result<Self, ExpectError> {
        let err = |kind, reason: String| ExpectError {
            expr: expr.to_owned(),
            kind,
            reason,
        };
        let text = expr.trim();
        if text.is_empty() {
            return Err(err(
                ExpectErrorKind::Syntax,
                "empty; write e.g. `amplification(db) <= 3`".into(),
            ));
        }
        // The operator splits the expression; find the first one.
        let ops = Op::SYMBOLS;
        let found = text.char_indices().find_map(|(i, _)| {
            ops.iter()
                .find(|(sym, _)| text[i..].starts_with(sym))
                .map(|(sym, op)| (i, sym.len(), *op))
        });
        let Some((at, len, op)) = found else {
            return Err(err(
                ExpectErrorKind::Syntax,
                "no comparison; use one of < <= == != >= >, e.g. `success >= 0.99`".into(),
            ));
        };
        let (lhs, rhs) = (text[..at].trim(), text[at + len..].trim());
        let (metric, service) = match lhs.split_once('(') {
            Some((m, rest)) => {
                let Some(name) = rest.trim().strip_suffix(')') else {
                    return Err(err(
                        ExpectErrorKind::Syntax,
                        format!("`{lhs}` has no closing `)`"),
                    ));
                };
                let name = name.trim();
                if name.is_empty() {
                    return Err(err(
                        ExpectErrorKind::Syntax,
                        format!("`{lhs}` names no service; write `{}(SERVICE)`", m.trim()),
                    ));
                }
                (m.trim().to_ascii_lowercase(), Some(name.to_owned()))
            }
            None => (lhs.to_ascii_lowercase(), None),
        };
        let metric = match metric.as_str() {
            "p99.9" => "p999".to_owned(),
            "success_rate" | "success_ratio" => "success".to_owned(),
            _ => metric,
        };
        if !METRICS.contains(&metric.as_str()) {
            let reason = match nearest(&metric, METRICS.iter().copied()) {
                Some(n) => format!("unknown metric `{metric}`; did you mean `{n}`?"),
                None if metric.is_empty() => "nothing before the comparison".into(),
                None => format!(
                    "unknown metric `{metric}`; use one of {}",
                    METRICS.join(", ")
                ),
            };
            return Err(err(ExpectErrorKind::UnknownMetric, reason));
        }
        match (metric.as_str(), &service) {
            ("received", None) => {
                return Err(err(
                    ExpectErrorKind::Service,
                    "`received` needs a service: `received(db) < 100`".into(),
                ));
            }
            ("success" | "requests" | "succeeded" | "failed", Some(s)) => {
                return Err(err(
                    ExpectErrorKind::Service,
                    format!("`{metric}` is end to end and takes no service (got `{s}`)"),
                ));
            }
            _ => {}
        }
        if rhs.is_empty() {
            return Err(err(
                ExpectErrorKind::Syntax,
                format!("nothing after `{op}`; write a number"),
            ));
        }
        let num_end = rhs
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
            .unwrap_or(rhs.len());
        let (num, unit) = (rhs[..num_end].trim(), rhs[num_end..].trim());
        let value: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| err(ExpectErrorKind::Syntax, format!("`{rhs}` is not a number")))?;
        if value < 0.0 {
            let what = if is_latency(&metric) {
                format!("`{metric}` is a latency, never negative; write e.g. `{metric} {op} 500ms`")
            } else if metric == "success" {
                "`success` is a share of requests from 0 to 1; write e.g. `success >= 0.99`"
                    .to_owned()
            } else {
                format!("`{metric}` is never negative; write 0 or more, e.g. `{metric} {op} 0`")
            };
            return Err(err(
                ExpectErrorKind::Range,
                format!("`{num}` is below 0: {what}"),
            ));
        }
        let threshold = if is_latency(&metric) {
            let scale = match unit {
                "us" | "µs" => 1e-3,
                "ms" => 1.0,
                "s" => 1e3,
                "m" | "min" => 60e3,
                "" => {
                    return Err(err(
                        ExpectErrorKind::Unit,
                        format!("a latency needs a unit: write `{metric} {op} {num}ms`"),
                    ));
                }
                other => {
                    return Err(err(
                        ExpectErrorKind::Unit,
                        format!("unknown unit `{other}`; use us, ms, s or m"),
                    ));
                }
            };
            value * scale
        } else if metric == "success" {
            match unit {
                "%" => value / 100.0,
                "" if (0.0..=1.0).contains(&value) => value,
                "" => {
                    return Err(err(
                        ExpectErrorKind::Unit,
                        format!(
                            "`success` is a ratio between 0 and 1; write `0.99` or `99%`, not `{value}`"
                        ),
                    ));
                }
                other => {
                    return Err(err(
                        ExpectErrorKind::Unit,
                        format!("`success` takes a ratio or a percentage, not `{other}`"),
                    ));
                }
            }
        } else {
            if !unit.is_empty() {
                return Err(err(
                    ExpectErrorKind::Unit,
                    format!("`{metric}` is a plain number; remove `{unit}`"),
                ));
            }
            value
        };
        // A finite number times its unit can still overflow (`1e305` written
        // out, in minutes): an infinite threshold would compare "equal" to
        // any measurement.
        if !threshold.is_finite() {
            return Err(err(
                ExpectErrorKind::Syntax,
                format!("`{rhs}` is too large a number"),
            ));
        }
        Ok(Expectation {
            expr: expr.trim().to_owned(),
            metric,
            service,
            op,
            threshold,
        })
    }

    /// An error when the gate names a service not among `names`: checked
    /// against the topology before a run, so a typo costs no run.
    pub fn check_service<'a>(
        &self,
        names: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<(), ExpectError> {
        let Some(name) = &self.service else {
            return Ok(());
        };
        if names.clone().any(|n| n == name) {
            return Ok(());
        }
        let hint = nearest(name, names)
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        Err(ExpectError {
            expr: self.expr.clone(),
            kind: ExpectErrorKind::UnknownService,
            reason: format!("no service `{name}` in the topology{hint}"),
        })
    }

    /// The measured value in the report, or an error naming an unknown service.
    pub fn measure(&self, r: &RunReport) -> Result<f64, ExpectError> {
        self.check_service(r.services.iter().map(|s| s.service.as_str()))?;
        let service = self.service.as_deref().and_then(|name| r.service(name));
        let e2e = &r.end_to_end;
        let sum = |f: &dyn Fn(&ServiceReport) -> f64| match service {
            Some(s) => f(s),
            None => r.services.iter().map(f).sum(),
        };
        let layers = |s: &ServiceReport, f: fn(&super::report::LayerReport) -> u64| {
            s.calls.iter().flat_map(|c| &c.layers).map(f).sum::<u64>() as f64
        };
        Ok(match self.metric.as_str() {
            "amplification" => match service {
                Some(s) => s.amplification.measured,
                None => r
                    .services
                    .iter()
                    .map(|s| s.amplification.measured)
                    .fold(0.0, f64::max),
            },
            "received" => service.map_or(0.0, |s| s.received as f64),
            "success" => e2e.success_ratio(),
            "requests" => e2e.requests as f64,
            "succeeded" => e2e.succeeded as f64,
            "failed" => e2e.failed as f64,
            "duplicates" => sum(&|s| s.duplicates as f64),
            "retries" => {
                let client = match (service, &e2e.client) {
                    (None, Some(c)) => c.retries as f64,
                    _ => 0.0,
                };
                client + sum(&|s| layers(s, |l| l.retries))
            }
            "budget_refusals" => {
                let client = match (service, &e2e.client) {
                    (None, Some(c)) => c.budget_refusals as f64,
                    _ => 0.0,
                };
                client + sum(&|s| layers(s, |l| l.budget_refusals))
            }
            latency => {
                let q = service.map_or(e2e.latency_ms, |s| s.latency_ms);
                match latency {
                    "p50" => q.p50,
                    "p90" => q.p90,
                    "p99" => q.p99,
                    "p999" => q.p999,
                    _ => q.max,
                }
            }
        })
    }

    /// Held or broken, with the measured value.
    pub fn evaluate(&self, r: &RunReport) -> Result<ExpectOutcome, ExpectError> {
        let measured = self.measure(r)?;
        Ok(ExpectOutcome {
            expr: self.expr.clone(),
            held: self.op.holds(measured, self.threshold),
            measured,
            threshold: self.threshold,
            unit: if is_latency(&self.metric) {
                "ms".into()
            } else {
                String::new()
            },
        })
    }
}

/// Evaluates every gate against `report`, records the outcomes in
/// `report.expectations`, and says whether all held. An unknown service is an
/// error (exit 2 at the CLI); a broken gate is not (exit 1).
pub fn evaluate_all(report: &mut RunReport, gates: &[Expectation]) -> Result<bool, ExpectError> {
    let outcomes = gates
        .iter()
        .map(|g| g.evaluate(report))
        .collect::<Result<Vec<_>, _>>()?;
    let all_held = outcomes.iter().all(|o| o.held);
    report.expectations = outcomes;
    Ok(all_held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::report::{Amplification, EndToEnd, LatencyMs};

    fn report() -> RunReport {
        RunReport {
            services: vec![ServiceReport {
                service: "db".into(),
                received: 640,
                amplification: Amplification {
                    measured: 64.0,
                    predicted: 64.0,
                    saturated: false,
                    estimate: false,
                },
                latency_ms: LatencyMs {
                    p99: 150.0,
                    ..Default::default()
                },
                duplicates: 2,
                ..Default::default()
            }],
            end_to_end: EndToEnd {
                requests: 10,
                succeeded: 9,
                failed: 1,
                latency_ms: LatencyMs {
                    p99: 600.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn check(expr: &str) -> (bool, f64) {
        let o = Expectation::parse(expr)
            .unwrap()
            .evaluate(&report())
            .unwrap();
        (o.held, o.measured)
    }

    #[test]
    fn evaluates_every_form_of_the_brief() {
        assert_eq!(check("amplification(db) <= 3"), (false, 64.0));
        assert_eq!(check("amplification <= 64"), (true, 64.0));
        assert_eq!(check("success >= 0.9"), (true, 0.9));
        assert_eq!(check("success >= 99%"), (false, 0.9));
        assert_eq!(check("p99 <= 500ms"), (false, 600.0));
        assert_eq!(check("p99 <= 1s"), (true, 600.0));
        assert_eq!(check("p99(db) <= 200ms"), (true, 150.0));
        assert_eq!(check("duplicates == 0"), (false, 2.0));
        assert_eq!(check("received(db) < 100"), (false, 640.0));
        assert_eq!(check("received(db) != 640"), (false, 640.0));
        assert_eq!(check("failed > 0"), (true, 1.0));
        assert_eq!(check("requests=10"), (true, 10.0));
    }

    #[test]
    fn evaluate_all_records_every_gate() {
        let mut r = report();
        let gates: Vec<Expectation> = ["failed > 0", "duplicates == 0"]
            .iter()
            .map(|e| e.parse().unwrap())
            .collect();
        assert_eq!(evaluate_all(&mut r, &gates), Ok(false));
        assert_eq!(r.expectations.len(), 2);
        assert!(r.expectations[0].held && !r.expectations[1].held);
        let bad = vec![Expectation::parse("received(nope) < 1").unwrap()];
        assert!(evaluate_all(&mut r, &bad).is_err());
    }

    #[test]
    fn malformed_expressions_say_why() {
        let kind = |e: &str| Expectation::parse(e).unwrap_err().kind;
        assert_eq!(kind(""), ExpectErrorKind::Syntax);
        assert_eq!(kind("success 0.99"), ExpectErrorKind::Syntax);
        assert_eq!(kind("amplification(db <= 3"), ExpectErrorKind::Syntax);
        assert_eq!(
            kind("amplificaton(db) <= 3"),
            ExpectErrorKind::UnknownMetric
        );
        assert_eq!(kind("received < 3"), ExpectErrorKind::Service);
        assert_eq!(kind("success(db) > 0.5"), ExpectErrorKind::Service);
        assert_eq!(kind("p99 <= 500"), ExpectErrorKind::Unit);
        assert_eq!(kind("p99 <= 500 parsecs"), ExpectErrorKind::Unit);
        assert_eq!(kind("success >= 99"), ExpectErrorKind::Unit);
        assert_eq!(kind("duplicates == 0ms"), ExpectErrorKind::Unit);
        assert_eq!(kind("duplicates == lots"), ExpectErrorKind::Syntax);
        assert_eq!(kind("p99 <= -1ms"), ExpectErrorKind::Range);
        assert_eq!(kind("success >= -5%"), ExpectErrorKind::Range);
        assert_eq!(kind("received(db) > -3"), ExpectErrorKind::Range);
        assert_eq!(
            Expectation::parse("p99 <= -1ms").unwrap_err().to_string(),
            "invalid --expect `p99 <= -1ms`: `-1` is below 0: `p99` is a latency, never negative; write e.g. `p99 <= 500ms`"
        );
        let huge = format!("p99 > {}m", "9".repeat(306));
        assert_eq!(kind(&huge), ExpectErrorKind::Syntax);
        let e = Expectation::parse("amplificaton(db) <= 3").unwrap_err();
        assert!(
            e.to_string().contains("did you mean `amplification`"),
            "{e}"
        );
        let e = Expectation::parse("received(dv) < 3")
            .unwrap()
            .evaluate(&report())
            .unwrap_err();
        assert_eq!(e.kind, ExpectErrorKind::UnknownService);
        assert!(e.reason.contains("did you mean `db`"), "{e}");
    }
}
