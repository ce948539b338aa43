use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::prediction::BoundBy;

/// A count above this bounds nothing a caller would wait for: it is
/// "unlimited" written as a number (Kafka's `retries = 2147483647`).
const HUGE: u32 = 1_000;

declare_rule! {
    /// ## What it finds
    /// A layer that retries without bound in count or in time:
    /// `max_attempts: unlimited` (or a count above 1,000) with nothing that
    /// stops it starting attempts — no deadline it is given (the topology's
    /// `deadline` for the client layer, a deadline its caller propagates with
    /// `deadline_propagation: true`), no outer layer of the same call whose
    /// per-attempt timeout cancels it — and no retry budget. A caller's own
    /// timeout does not count: the caller gives up, but the service it called
    /// goes on retrying, work nobody waits for.
    ///
    /// ## Why it matters
    /// Every user request that meets the outage leaves one more retry loop
    /// behind, and none of them ends until the outage does. The load on the
    /// failing service grows for as long as it is down, and the recovery
    /// meets every loop at once. Systems that retry without limit bound it in
    /// time: Kafka's producer by `delivery.timeout.ms`, a Temporal activity by
    /// its schedule-to-close timeout.
    ///
    /// ## Example
    /// ```yaml
    /// - to: ledger
    ///   timeout: 30s
    ///   retry: { max_attempts: unlimited, backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full } }
    /// ```
    ///
    /// ## Fix
    /// Bound it in time: put the retrying layer under an outer layer whose
    /// timeout cancels it (`timeout: 120s` on the call, the retries in a `via`
    /// layer with `timeout: 30s`, as a Kafka producer's `delivery.timeout.ms`
    /// over `request.timeout.ms`), or propagate the deadline
    /// (`deadline_propagation: true` here and on the callers), or add a retry
    /// budget — or write the count you mean (`max_attempts: 3`).
    pub static RULE = {
        code: "RL015",
        name: "unbounded-retry",
        default: Error,
        summary: "a layer retries without bound in count or in time",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if !(p.is_unlimited() || p.max_attempts > HUGE) || p.budget.is_some() {
            continue;
        }
        // The horizon of a run is no bound of the configuration.
        let attempts = site.attempts(cx.analysis);
        if attempts.time.is_some_and(|b| b.by != BoundBy::Horizon) {
            continue;
        }
        let count = if p.is_unlimited() {
            "without a count limit".to_owned()
        } else {
            format!("up to {} times", p.max_attempts - 1)
        };
        let (why, help) = match site.call {
            None => (
                "the topology has no `deadline` to end it".to_owned(),
                "set a topology `deadline` (the client layer stops at it), add a retry budget, or set a finite max_attempts".to_owned(),
            ),
            Some((_, call)) if site.index == 0 => (
                format!(
                    "nothing stops it in time: the timeouts of {}'s callers do not reach it",
                    t.services[site.service].name
                ),
                format!(
                    "propagate the deadline (deadline_propagation: true on {} and its callers), or move the retries into a `via` layer under a call timeout that cancels them, add a retry budget, or set a finite max_attempts",
                    t.services[call.from].name
                ),
            ),
            Some(_) => (
                "no outer layer of the call has a timeout that cancels it".to_owned(),
                "give the call a timeout (the outer layer's attempt cancels this layer when it fires), propagate the deadline, add a retry budget, or set a finite max_attempts".to_owned(),
            ),
        };
        out.push(
            site.diagnostic(
                site.layer.at(site.layer.spans.max_attempts),
                format!(
                    "{} retries {count}, has no budget, and {why}",
                    site.describe(t)
                ),
            )
            .help(help)
            .label("retries without bound"),
        );
    }
}
