use crate::declare_rule;
use crate::lint::Intent;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::policy::Jitter;

declare_rule! {
    /// ## What it finds
    /// A retrying layer whose backoff waits (constant, linear or exponential) have
    /// `jitter: none`, the default when `jitter` is not written.
    ///
    /// ## Why it matters
    /// Without jitter every client that failed together retries together: the
    /// retries arrive as synchronized waves that knock the recovering service over
    /// again. Marc Brooker's simulations (AWS Architecture Blog, "Exponential
    /// Backoff And Jitter") show full jitter completing the same work with far
    /// fewer calls.
    ///
    /// ## Example
    /// ```yaml
    /// retry:
    ///   max_attempts: 3
    ///   backoff: { kind: exponential, base: 100ms, cap: 2s }   # jitter: none
    /// ```
    ///
    /// ## Fix
    /// Add `jitter: full` (or `decorrelated`) to the backoff.
    pub static RULE = {
        code: "RL004",
        name: "missing-jitter",
        default: Warning,
        summary: "a retry policy with backoff has no jitter",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        // Zero waits are RL005's; there is nothing to spread.
        if !p.retries() || p.backoff.never_waits() || p.backoff.jitter != Jitter::None {
            continue;
        }
        let spans = &site.layer.spans;
        let pos = site.layer.at(spans.jitter.or(spans.backoff));
        out.push(
            site.diagnostic(
                pos,
                format!(
                    "{} backs off without jitter: clients that failed together retry together, in waves",
                    site.describe(cx.topology)
                ),
            )
            .help("add `jitter: full` to the backoff")
            .label("backoff without jitter")
            .fix_with(cx, || {
                Intent::new(format!(
                    "add jitter: full to the backoff of {}",
                    site.describe(cx.topology)
                ))
                .backoff(site.at(), &[("jitter", Jitter::Full.as_str())], false)
            }),
        );
    }
}
