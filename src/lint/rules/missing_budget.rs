use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::lint::{Intent, Section};
use crate::prediction::Basis;

declare_rule! {
    /// ## What it finds
    /// A retrying layer without a retry budget.
    ///
    /// ## Why it matters
    /// Per-request limits (`max_attempts`) bound one request, not the fleet: under
    /// a total outage every request uses all its attempts and the load multiplies
    /// by `max_attempts` at every layer. A budget (Finagle, Linkerd, the SRE book's
    /// 10 % per client; AWS SDK's token bucket; gRPC's retry throttling) stops
    /// retrying when retries become a large share of traffic, which holds a total
    /// outage at about 1.1× load instead of 3×.
    ///
    /// ## Example
    /// ```yaml
    /// retry: { max_attempts: 3, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full } }
    /// ```
    ///
    /// ## Fix
    /// Add `budget: { kind: ratio, ratio: 0.1, min_per_second: 10 }`, or use a
    /// preset that has one (`recommended`, `linkerd-budget`, `aws-sdk-standard`).
    pub static RULE = {
        code: "RL012",
        name: "missing-budget",
        default: Warning,
        summary: "a retrying layer has no retry budget",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if !p.retries() || p.budget.is_some() {
            continue;
        }
        let attempts = site.attempts(cx.analysis);
        let load = match attempts.basis {
            Basis::Unbounded => "attempts without limit".to_owned(),
            _ => format!("{}× the load", attempts.count),
        };
        out.push(
            site.diagnostic(
                site.layer.at(None),
                format!(
                    "{} retries with no budget: under a total outage it sends {load}",
                    site.describe(cx.topology),
                ),
            )
            .help("add budget: { kind: ratio, ratio: 0.1, min_per_second: 10 }")
            .label("no retry budget")
            .fix_with(cx, || {
                Intent::new(format!(
                    "add budget: {{ kind: ratio, ratio: 0.1, min_per_second: 10 }} at {}",
                    site.describe(cx.topology)
                ))
                .set(
                    site.at(),
                    Section::Retry,
                    "budget",
                    "{ kind: ratio, ratio: 0.1, min_per_second: 10 }",
                )
            }),
        );
    }
}
