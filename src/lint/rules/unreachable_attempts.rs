use std::time::Duration;

use crate::declare_rule;
use crate::input::duration::format as dur;
use crate::lint::hang_text::timeout_note;
use crate::lint::rule::{Context, Diagnostic, LayerSite, layer_sites, where_layer};
use crate::lint::{Intent, Section};
use crate::prediction::hang::{Hang, per_attempt};

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
        let Some((bound, by, cancels)) = bound_of(cx, &site, &waited, deadline) else {
            continue;
        };
        let startable = p.attempts_startable_within(bound);
        if startable < p.max_attempts {
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
                .fix_with(cx, || max_attempts_fix(cx, &site, startable)),
            );
        } else if cancels {
            out.extend(if_the_callee_hangs(cx, &site, bound, &by));
        }
    }
}

/// What bounds the layer's attempts in time, how messages name it, and
/// whether it ends the layer's session (`cancels`): an outer layer of the
/// same call is cancelled with its attempt, and the client layer's session
/// ends with the deadline, so an attempt they leave no time for never
/// starts, also when the callee hangs. A caller's timeout stops nothing
/// below it: the callee's work past it is RL007's finding.
fn bound_of(
    cx: &Context,
    site: &LayerSite,
    waited: &[Wait],
    deadline: Option<Duration>,
) -> Option<(Duration, String, bool)> {
    let t = cx.topology;
    // The nearest outer layer of the same call with a timeout bounds this
    // one; else the callers of the service; the client answers to no one.
    let (bound, by, cancels) = match site.call {
        None => (None, String::new(), false),
        Some((_, call)) => match call.layers[..site.index]
            .iter()
            .rev()
            .find(|l| l.timeout.is_some())
        {
            Some(outer) => {
                let tmo = outer.timeout.map(|x| x.value).unwrap_or_default();
                (
                    Some(tmo),
                    format!(
                        "the {} timeout of {}",
                        dur(tmo),
                        where_layer(t, call, outer)
                    ),
                    true,
                )
            }
            None => (
                match waited[site.service] {
                    Wait::AtMost(d) => Some(d),
                    Wait::NoCaller | Wait::Unbounded => None,
                },
                format!("the callers of {}", t.services[site.service].name),
                false,
            ),
        },
    };
    let client = site.call.is_none();
    match (bound, deadline) {
        (Some(b), Some(d)) if d < b => Some((d, format!("the {} deadline", dur(d)), client)),
        (None, Some(d)) => Some((d, format!("the {} deadline", dur(d)), client)),
        (b, _) => b.map(|b| (b, by, cancels)),
    }
}

/// The finding when every attempt can start if the callee fails at once,
/// but not if it hangs: each attempt then lasts its whole timeout (issue
/// 33), and the retries the layer is configured for never happen.
fn if_the_callee_hangs(
    cx: &Context,
    site: &LayerSite,
    bound: Duration,
    by: &str,
) -> Option<Diagnostic> {
    let (t, a) = (cx.topology, cx.analysis);
    let (layer, p) = (site.layer, &site.layer.policy);
    // What one attempt of this layer lasts when the callee hangs: its own
    // timeout, or the layers inside it when they give up sooner.
    let (callee, inner) = match site.call {
        Some((i, call)) => (
            call.to,
            a.hang.layer[site.service][i]
                .get(site.index + 1)
                .copied()
                .unwrap_or(Hang::Unbounded {
                    service: site.service,
                    call: i,
                }),
        ),
        None => (
            t.entry,
            Hang::Unbounded {
                service: t.entry,
                call: 0,
            },
        ),
    };
    // No timeout ends a hung attempt: RL011's finding.
    let each = per_attempt(layer, inner).within()?;
    let startable = p.attempts_startable_lasting(bound, each);
    if startable >= p.max_attempts {
        return None;
    }
    let callee = &t.services[callee].name;
    let own = layer.timeout.is_some_and(|x| x.value == each);
    let lasting = if own {
        format!("its {} timeout{}", dur(each), timeout_note(layer))
    } else {
        format!("{} (the layers inside it)", dur(each))
    };
    // A timeout at which every attempt starts: n − 1 attempts and the
    // shortest waits before the last one, strictly before the bound.
    let retries = p.max_attempts - 1;
    let fit = bound
        .checked_sub(p.min_start_of_retry(retries))
        .map(|room| room.saturating_sub(Duration::from_millis(1)) / retries)
        .map(|d| Duration::from_millis(d.as_millis() as u64))
        .filter(|d| !d.is_zero() && own);
    let help = match fit {
        Some(fit) => format!(
            "set max_attempts: {startable}, or a timeout of at most {} so that all {} can start",
            dur(fit),
            p.max_attempts
        ),
        None => format!("set max_attempts: {startable}, or shorten the backoff and the timeout"),
    };
    Some(
        site.diagnostic(
            layer.at(layer.spans.max_attempts),
            format!(
                "{} allows {} attempts but if `{callee}` hangs only {startable} can start before {by}: each attempt lasts {lasting}, so attempt {} would start at {}",
                site.describe(t),
                p.max_attempts,
                startable + 1,
                dur(p.min_start_lasting(startable, each))
            ),
        )
        .help(help)
        // No machine fix: a shorter timeout or fewer attempts is the
        // owner's choice, and every attempt still starts when the callee
        // fails at once.
        .label(format!("only {startable} can start if {callee} hangs")),
    )
}

fn max_attempts_fix(cx: &Context, site: &LayerSite, n: u32) -> Intent {
    Intent::new(format!(
        "set max_attempts: {n} at {}",
        site.describe(cx.topology)
    ))
    .set(site.at(), Section::Retry, "max_attempts", n.to_string())
}
