//! Reading `circuit_breaker:` (on a call and on a `via` layer) and
//! `hedging:` (on a call) into `policy` values, every bad value located.

use std::time::Duration;

use crate::input::error::{LoadError, nearest};
use crate::input::fields::Fields;
use crate::input::yaml::{Node, Value};
use crate::policy::{
    BreakerCounts, BreakerPosition, BreakerSpec, BreakerWindow, Condition, HedgingPolicy, RetryOn,
};

const BREAKER_KEYS: &[&str] = &[
    "failure_rate",
    "window",
    "min_calls",
    "open_for",
    "open_jitter",
    "half_open_calls",
    "counts",
    "position",
];
const HEDGING_KEYS: &[&str] = &["max_attempts", "delay", "non_fatal"];

/// The most copies a hedging policy may send (gRPC A6 caps at 5; Envoy's
/// hedging is bounded by its retries).
pub(crate) const MAX_HEDGED_COPIES: i128 = 100;

/// A `circuit_breaker:` mapping.
pub(crate) fn read_breaker(f: Fields, node: &Node) -> Result<BreakerSpec, LoadError> {
    let m = f.map(node, "a circuit breaker", BREAKER_KEYS)?;
    let mut b = BreakerSpec::default();
    if let Some(v) = m.get("failure_rate") {
        b.failure_rate = f.ratio(v, "failure_rate")?;
        if b.failure_rate == 0.0 {
            return Err(f
                .error(v.pos, "`failure_rate: 0` would open on no failure at all")
                .with_help(
                    "write the share of failed calls that opens it, e.g. `failure_rate: 0.5`",
                ));
        }
    }
    if let Some(v) = m.get("window") {
        b.window = match &v.value {
            Value::Map(_) => {
                let w = f.map(v, "a count window (`{ calls: 20 }`)", &["calls"])?;
                let Some(n) = w.get("calls") else {
                    return Err(f.error(v.pos, "a count window needs `calls:`").with_help(
                        "write `window: { calls: 20 }`, or a time such as `window: 10s`",
                    ));
                };
                BreakerWindow::Calls(f.int(n, "calls", 1, i128::from(u32::MAX))? as u32)
            }
            _ => {
                let d = f.duration(v, "window")?;
                if d.is_zero() {
                    return Err(f.error(v.pos, "`window` is zero; write e.g. `window: 10s`"));
                }
                BreakerWindow::Time(d)
            }
        };
    }
    if let Some(v) = m.get("min_calls") {
        b.min_calls = f.int(v, "min_calls", 1, i128::from(u32::MAX))? as u32;
    }
    if let Some(v) = m.get("open_for") {
        b.open_for = f.duration(v, "open_for")?;
        if b.open_for.is_zero() {
            return Err(f.error(
                v.pos,
                "`open_for` is zero: the breaker would never stay open; write e.g. `open_for: 5s`",
            ));
        }
    }
    if let Some(v) = m.get("open_jitter") {
        b.open_jitter = f.ratio(v, "open_jitter")?;
    }
    if let Some(v) = m.get("half_open_calls") {
        b.half_open_calls = f.int(v, "half_open_calls", 1, i128::from(u32::MAX))? as u32;
    }
    if let Some(v) = m.get("counts") {
        let name = f.str(v, "`counts`")?;
        b.counts = name
            .parse::<BreakerCounts>()
            .map_err(|_| choice(f, v, "counts", name, BreakerCounts::NAMES))?;
    }
    if let Some(v) = m.get("position") {
        let name = f.str(v, "`position`")?;
        b.position = name
            .parse::<BreakerPosition>()
            .map_err(|_| choice(f, v, "position", name, BreakerPosition::NAMES))?;
    }
    Ok(b)
}

/// A `hedging:` mapping.
pub(crate) fn read_hedging(f: Fields, node: &Node) -> Result<HedgingPolicy, LoadError> {
    let m = f.map(node, "a hedging policy", HEDGING_KEYS)?;
    let Some(n) = m.get("max_attempts") else {
        return Err(f
            .error(node.pos, "a hedging policy needs `max_attempts:`")
            .with_help("add e.g. `max_attempts: 3` (copies in all, the first included)"));
    };
    let max_attempts = f.int(n, "max_attempts", 1, MAX_HEDGED_COPIES)? as u32;
    let Some(d) = m.get("delay") else {
        return Err(f
            .error(node.pos, "a hedging policy needs `delay:`")
            .with_help("add e.g. `delay: 50ms` (the wait before each next copy)"));
    };
    let delay: Duration = f.duration(d, "delay")?;
    let non_fatal = match m.get("non_fatal") {
        Some(v) => super::policy_schema::read_retry_on(f, v)?,
        None => RetryOn(vec![Condition::Status(503)]),
    };
    Ok(HedgingPolicy {
        max_attempts,
        delay,
        non_fatal,
    })
}

fn choice(f: Fields, v: &Node, key: &str, got: &str, allowed: &[&str]) -> LoadError {
    let err = f.error(v.pos, format!("unknown `{key}` value `{got}`"));
    match nearest(got, allowed.iter().copied()) {
        Some(n) => err.with_help(format!("did you mean `{n}`?")),
        None => err.with_help(format!("use {}", allowed.join(" or "))),
    }
}
