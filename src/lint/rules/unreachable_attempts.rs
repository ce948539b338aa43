use std::time::Duration;

use crate::declare_rule;
use crate::fix::{Intent, Section};
use crate::lint::rule::{Context, Diagnostic, layer_sites, where_layer};
use crate::source::duration::format as dur;

declare_rule! {
    /// ## What it finds
    /// Attempts that can never start: even if every earlier attempt failed at
    /// once, the shortest backoff waits alone reach the timeout of the layer
    /// around this one (or of the caller, or the topology's `deadline`) before
    /// the attempt could begin.
    ///
    /// ## Why it matters
    /// Such attempts are configuration that does nothing but mislead: the real
    /// retry behaviour is fewer attempts than written, and the waits still hold
    /// the caller's request until its timeout fires.
    ///
    /// ## Example
    /// ```yaml
    /// - to: api
    ///   timeout: 1s
    ///   via:
    ///     - name: sdk
    ///       retry: { max_attempts: 5, backoff: { kind: constant, base: 400ms, jitter: none } }
    /// # attempts 4 and 5 would start at 1.2 s and 1.6 s: after the 1 s timeout
    /// ```
    ///
    /// ## Fix
    /// Lower `max_attempts` to what fits, or shorten the backoff. A count meant
    /// as "until time runs out" is `max_attempts: unlimited`, which this rule
    /// leaves alone.
    pub static RULE = {
        code: "RL008",
        name: "unreachable-attempts",
        default: Warning,
        summary: "attempts that can never start before the caller's timeout or deadline",
        check: check,
    };
}

/// How long the callers of a service wait for it.
#[derive(Debug, Clone, Copy)]
enum Wait {
    NoCaller,
    AtMost(Duration),
    Unbounded,
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    // How long a service's most patient caller waits for it: an attempt is
    // unreachable only if it can start for none of them. Per call, the
    // innermost layer with a timeout bounds the wait; a call without one,
    // or a user without a `client:` timeout, waits without bound.
    let mut waited = vec![Wait::NoCaller; t.services.len()];
    waited[t.entry] = match t.client.as_ref().and_then(|c| c.timeout) {
        Some(tmo) => Wait::AtMost(tmo.value),
        None => Wait::Unbounded,
    };
    for c in t.calls() {
        let tmo = c.layers.iter().rev().find_map(|l| l.timeout);
        let w = &mut waited[c.to];
        *w = match (*w, tmo) {
            (Wait::Unbounded, _) | (_, None) => Wait::Unbounded,
            (Wait::NoCaller, Some(t)) => Wait::AtMost(t.value),
            (Wait::AtMost(x), Some(t)) => Wait::AtMost(x.max(t.value)),
        };
    }
    let deadline = t.deadline.map(|d| d.value);
    for site in layer_sites(cx) {
        let (layer, p) = (site.layer, &site.layer.policy);
        // `unlimited` means "until time runs out": that most attempts never
        // start is the point, not a mistake (RL015 asks whether time bounds it).
        if !p.retries() || p.is_unlimited() {
            continue;
        }
        // The nearest outer layer of the same call with a timeout bounds this
        // one; else the callers of the service; the client answers to no one.
        let (bound, by) = match site.call {
            None => (None, String::new()),
            Some((_, call)) => {
                let li = call
                    .layers
                    .iter()
                    .position(|l| std::ptr::eq(l, layer))
                    .unwrap_or(0);
                match call.layers[..li].iter().rev().find(|l| l.timeout.is_some()) {
                    Some(outer) => {
                        let tmo = outer.timeout.map(|x| x.value).unwrap_or_default();
                        (
                            Some(tmo),
                            format!(
                                "the {} timeout of {}",
                                dur(tmo),
                                where_layer(t, call, outer)
                            ),
                        )
                    }
                    None => (
                        match waited[site.service] {
                            Wait::AtMost(d) => Some(d),
                            Wait::NoCaller | Wait::Unbounded => None,
                        },
                        format!("the callers of {}", t.services[site.service].name),
                    ),
                }
            }
        };
        let (bound, by) = match (bound, deadline) {
            (Some(b), Some(d)) if d < b => (Some(d), format!("the {} deadline", dur(d))),
            (None, Some(d)) => (Some(d), format!("the {} deadline", dur(d))),
            (b, _) => (b, by),
        };
        let Some(bound) = bound else {
            continue;
        };
        let startable = p.attempts_startable_within(bound);
        if startable >= p.max_attempts {
            continue;
        }
        let by = if by.starts_with("the callers") {
            format!("{by}, the most patient of whom waits {}", dur(bound))
        } else {
            by
        };
        out.push(
            site.diagnostic(layer.at(layer.spans.max_attempts), format!(
                "{} allows {} attempts but only {startable} can start before {by}: attempt {} would wait {} first",
                site.describe(t),
                p.max_attempts,
                startable + 1,
                dur(p.min_start_of_retry(startable))
            ))
            .help(format!("set max_attempts: {startable}, or shorten the backoff"))
            .label(format!("only {startable} can start"))
            .fix_with(cx, || {
                Intent::new(format!("set max_attempts: {startable} at {}", site.describe(t)))
                    .set(site.at(), Section::Retry, "max_attempts", startable.to_string())
            }),
        );
    }
}
