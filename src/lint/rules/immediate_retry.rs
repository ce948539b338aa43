use crate::declare_rule;
use crate::lint::Intent;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::policy::{BackoffKind, Jitter};

declare_rule! {
    /// ## What it finds
    /// A retrying layer with no wait between attempts: `backoff: { kind: none }`,
    /// no `backoff` at all, or a backoff whose `base` or `cap` is zero.
    ///
    /// ## Why it matters
    /// Immediate retries turn every failure into an instant burst of identical
    /// requests at the service that is failing. Under overload they keep it
    /// overloaded: in the overload model nobody gets through until the retries stop.
    ///
    /// ## Example
    /// ```yaml
    /// retry: { max_attempts: 3 }          # no backoff: retries at once
    /// ```
    ///
    /// ## Fix
    /// Wait between attempts with capped, jittered exponential backoff:
    /// `backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full }`.
    pub static RULE = {
        code: "RL005",
        name: "immediate-retry",
        default: Error,
        summary: "retries with no wait between attempts",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if !p.retries() || !p.backoff.never_waits() {
            continue;
        }
        let spans = &site.layer.spans;
        let pos = site.layer.at(spans.backoff_kind.or(spans.backoff));
        out.push(
            site.diagnostic(
                pos,
                if p.is_unlimited() {
                    format!(
                        "{} retries immediately and without a count limit: a tight loop until something stops it",
                        site.describe(cx.topology)
                    )
                } else {
                    format!(
                        "{} retries immediately, with no backoff between its {} attempts",
                        site.describe(cx.topology),
                        p.max_attempts
                    )
                },
            )
            .help("add backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full }")
            .label("no wait between attempts")
            .fix_with(cx, || {
                Intent::new(format!(
                    "back off at {}: kind: exponential, base: 100ms, cap: 2s, jitter: full",
                    site.describe(cx.topology)
                ))
                .backoff(
                    site.at(),
                    &[
                        ("kind", BackoffKind::Exponential.as_str()),
                        ("base", "100ms"),
                        ("cap", "2s"),
                        ("jitter", Jitter::Full.as_str()),
                    ],
                    true,
                )
            }),
        );
    }
}
