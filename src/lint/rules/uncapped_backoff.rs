use crate::declare_rule;
use crate::lint::Intent;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::policy::{BackoffKind, Jitter};

declare_rule! {
    /// ## What it finds
    /// A retrying layer with exponential backoff, or decorrelated jitter, and no
    /// `cap`.
    ///
    /// ## Why it matters
    /// Uncapped exponential waits grow without bound: 100 ms doubled ten times is
    /// 102 s. Requests sit in retry loops long after anyone is waiting, holding
    /// resources, and retries of a recovered dependency arrive minutes late.
    ///
    /// ## Example
    /// ```yaml
    /// backoff: { kind: exponential, base: 100ms, jitter: full }
    /// ```
    ///
    /// ## Fix
    /// Add `cap:`, for example `cap: 2s`, below the caller's timeout.
    pub static RULE = {
        code: "RL014",
        name: "uncapped-backoff",
        default: Warning,
        summary: "exponential or decorrelated backoff without a cap",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        let b = &p.backoff;
        let exponential = b.kind == BackoffKind::Exponential;
        let grows = !b.never_waits() && (exponential || b.jitter == Jitter::Decorrelated);
        if !p.retries() || !grows || b.cap.is_some() {
            continue;
        }
        let how = if exponential {
            "backs off exponentially"
        } else {
            "has decorrelated jitter"
        };
        let spans = &site.layer.spans;
        let pos = site.layer.at(spans.backoff);
        out.push(
            site.diagnostic(
                pos,
                format!(
                    "{} {how} without a cap: waits grow without bound",
                    site.describe(cx.topology)
                ),
            )
            .help("add `cap: 2s` to the backoff")
            .label("no cap")
            .fix_with(cx, || {
                Intent::new(format!(
                    "add cap: 2s to the backoff of {}",
                    site.describe(cx.topology)
                ))
                .backoff(site.at(), &[("cap", "2s")], false)
            }),
        );
    }
}
