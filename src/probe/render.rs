//! The measured policy in topology syntax: the call snippet a user pastes
//! (method, idempotency key, timeout and the `retry:` block), and the small
//! topology around it that the real loader and rules check. Also the way
//! back — a policy written in that syntax (or a preset name) read through
//! the same loader — so nothing here parses policies on its own.

use std::fmt::Write as _;
use std::time::Duration;

use super::infer::InferredPolicy;
use crate::input::duration::format as dur;
use crate::input::quote::scalar;
use crate::policy::{BackoffKind, Jitter, RetryPolicy};
use crate::topology::{self, LoadError, Presets};

/// The caller and callee of the topology the inferred policy is checked in.
pub const CALLER: &str = "caller";
pub const CALLEE: &str = "probed";

/// The `retry:` block, each line indented by `indent` spaces.
pub(crate) fn retry_block(
    policy: &RetryPolicy,
    inferred: &InferredPolicy,
    indent: usize,
) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    if !policy.retries() {
        let _ = writeln!(out, "{pad}retry: {{ max_attempts: 1 }}");
        return out;
    }
    let _ = writeln!(out, "{pad}retry:");
    let _ = writeln!(out, "{pad}  max_attempts: {}", policy.max_attempts);
    match &inferred.backoff {
        Some(f) if !f.explained => {
            let waits: Vec<String> = f
                .per_retry
                .iter()
                .map(|s| super::infer::fit::fmt_ms(s.median_ms))
                .collect();
            let _ = writeln!(
                out,
                "{pad}  # backoff: unknown — no schedule explains the measured waits ({} ms before retries 1..{}); write the client's own",
                waits.join("/"),
                waits.len()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "{pad}  # backoff: unknown — {}; write the client's own",
                super::infer::UNTIMED_RETRIES
            );
        }
        fit => {
            let _ = writeln!(out, "{pad}  backoff: {}", backoff(policy));
            for note in fit.as_ref().map(backoff_notes).unwrap_or_default() {
                let _ = writeln!(out, "{pad}  # {note}");
            }
        }
    }
    let conditions: Vec<String> = policy.retry_on.0.iter().map(ToString::to_string).collect();
    let _ = writeln!(out, "{pad}  retry_on: [{}]", conditions.join(", "));
    match inferred.honor_retry_after.value {
        Some(v) => {
            let _ = writeln!(out, "{pad}  honor_retry_after: {v}");
        }
        None => {
            let _ = writeln!(
                out,
                "{pad}  # honor_retry_after: not determined ({})",
                one_line(&inferred.honor_retry_after.evidence)
            );
        }
    }
    out
}

/// What the schema cannot say about the measured schedule, said beside it.
fn backoff_notes(f: &super::infer::fit::BackoffFit) -> Vec<String> {
    use super::infer::fit::fmt_ms;
    let mut out = Vec::new();
    if f.first_retry_immediate {
        out.push(
            "measured: the first retry is sent at once; the schedule acts from retry 2".into(),
        );
    }
    if let Some(w) = f.additive_jitter_ms {
        out.push(format!(
            "measured: U(0, {} ms) added to each wait; proportional is the schema's nearest",
            fmt_ms(w)
        ));
    }
    if f.kind_confidence == super::Confidence::Low {
        let medians: Vec<String> = f.per_retry.iter().map(|s| fmt_ms(s.median_ms)).collect();
        out.push(format!(
            "low confidence: a reading of median waits {} ms, not a schedule the runs fix; take the client's own setting where you know it",
            medians.join("/")
        ));
    }
    if let Some(above) = f.cap_unknown_above_ms {
        out.push(format!(
            "cap: not reached within the waits seen (longest {} ms); add the client's cap if it has one",
            fmt_ms(above)
        ));
    }
    out
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

fn backoff(p: &RetryPolicy) -> String {
    let b = &p.backoff;
    if b.kind == BackoffKind::None {
        return "{ kind: none }".into();
    }
    let kind = b.kind.as_str();
    let mut fields = vec![format!("kind: {kind}"), format!("base: {}", dur(b.base))];
    if b.kind == BackoffKind::Exponential && b.jitter != Jitter::Decorrelated {
        fields.push(format!("multiplier: {}", trim_number(b.multiplier)));
    }
    if let Some(c) = b.cap {
        fields.push(format!("cap: {}", dur(c)));
    }
    fields.push(format!("jitter: {}", b.jitter.as_str()));
    if let Jitter::Proportional { ratio } = b.jitter {
        fields.push(format!("jitter_ratio: {}", trim_number(ratio)));
    }
    format!("{{ {} }}", fields.join(", "))
}

fn trim_number(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The call as a `calls:` item, ready to paste under the caller.
pub(crate) fn call_snippet(policy: &RetryPolicy, inferred: &InferredPolicy, to: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "- to: {}", scalar(to));
    if let Some(m) = &inferred.method.value {
        let _ = writeln!(out, "  method: {}", scalar(m));
    }
    if inferred.idempotency_key.value == Some(true) {
        let _ = writeln!(out, "  idempotency_key: true");
    }
    match inferred.timeout() {
        Some(t) => {
            let _ = writeln!(out, "  timeout: {}", dur(t));
        }
        None if inferred.timeout_probed => {
            let _ = writeln!(out, "  # no per-attempt timeout measured");
        }
        None => {}
    }
    out += &retry_block(policy, inferred, 2);
    out
}

/// A topology with one call, caller → probed, carrying the measured policy.
pub(crate) fn lint_topology(policy: &RetryPolicy, inferred: &InferredPolicy) -> String {
    let mut out =
        format!("version: 1\nname: probe\nentry: {CALLER}\nservices:\n  {CALLER}:\n    calls:\n");
    for line in call_snippet(policy, inferred, CALLEE).lines() {
        let _ = writeln!(out, "      {line}");
    }
    let _ = writeln!(out, "  {CALLEE}: {{}}");
    out
}

/// Reads a policy written in topology syntax — a preset name, or a map
/// (flow or block style) — and an optional per-attempt timeout, through the
/// topology loader.
pub fn load_policy(
    text: &str,
    timeout: Option<Duration>,
    presets: &Presets,
) -> Result<RetryPolicy, LoadError> {
    let mut yaml = format!(
        "version: 1\nentry: {CALLER}\nservices:\n  {CALLER}:\n    calls:\n      - to: {CALLEE}\n"
    );
    if let Some(t) = timeout {
        let _ = writeln!(yaml, "        timeout: {}", dur(t));
    }
    yaml += "        retry:\n";
    for line in text.lines() {
        let _ = writeln!(yaml, "          {line}");
    }
    let _ = writeln!(yaml, "  {CALLEE}: {{}}");
    let t = topology::load_str(&yaml, "<policy>", "policy", presets)?;
    Ok(t.services[t.entry].calls[0].layers[0].policy.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Backoff, Condition, RetryOn};

    #[test]
    fn a_rendered_policy_loads_back_unchanged() {
        let p = RetryPolicy {
            max_attempts: 4,
            backoff: Backoff {
                kind: BackoffKind::Exponential,
                base: Duration::from_millis(100),
                multiplier: 1.5,
                cap: Some(Duration::from_millis(1500)),
                jitter: Jitter::Proportional { ratio: 0.15 },
            },
            retry_on: RetryOn(vec![
                Condition::Timeout,
                Condition::Status(429),
                Condition::Status(503),
            ]),
            honor_retry_after: false,
            budget: None,
        };
        let text = format!(
            "max_attempts: 4\nbackoff: {}\nretry_on: [timeout, 429, 503]\nhonor_retry_after: false\n",
            backoff(&p)
        );
        let back = load_policy(&text, None, &Presets::embedded()).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            backoff(&p),
            "{ kind: exponential, base: 100ms, multiplier: 1.5, cap: 1.5s, jitter: proportional, jitter_ratio: 0.15 }"
        );
    }

    #[test]
    fn presets_load_by_name() {
        let p = load_policy("recommended", None, &Presets::embedded()).unwrap();
        assert_eq!(p.max_attempts, 3);
        let e = load_policy("no-such-preset", None, &Presets::embedded()).unwrap_err();
        assert!(e.to_string().contains("no-such-preset"), "{e}");
    }
}
