use crate::declare_rule;
use crate::lint::Intent;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::policy::Condition;

/// Statuses that mean the same request will fail the same way again.
const PERMANENT: &[u16] = &[400, 401, 403, 404, 422];

declare_rule! {
    /// ## What it finds
    /// A retrying layer whose `retry_on` includes 400, 401, 403, 404 or 422, or the
    /// whole `4xx` class.
    ///
    /// ## Why it matters
    /// These statuses are permanent: the same request gets the same answer. Retrying
    /// them multiplies load and latency for nothing, and a bug that makes every
    /// request invalid becomes a retry storm.
    ///
    /// ## Example
    /// ```yaml
    /// retry_on: [5xx, 4xx]
    /// ```
    ///
    /// ## Fix
    /// Retry transient failures only: `retry_on: [timeout, connect, reset, 429,
    /// 502, 503, 504]` (the default). 429 is the one 4xx worth retrying, after
    /// its Retry-After.
    pub static RULE = {
        code: "RL009",
        name: "retries-permanent-error",
        default: Error,
        summary: "retry_on includes a permanent 4xx error",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if !p.retries() {
            continue;
        }
        let bad_conditions: Vec<Condition> = p
            .retry_on
            .0
            .iter()
            .filter(|c| {
                matches!(c, Condition::Class(4))
                    || matches!(c, Condition::Status(s) if PERMANENT.contains(s))
            })
            .copied()
            .collect();
        let bad: Vec<String> = bad_conditions.iter().map(|c| c.to_string()).collect();
        if bad.is_empty() {
            continue;
        }
        let pos = site.layer.at(site.layer.spans.retry_on);
        out.push(
            site.diagnostic(
                pos,
                format!(
                    "{} retries permanent errors ({}): the same request fails the same way again",
                    site.describe(cx.topology),
                    bad.join(", ")
                ),
            )
            .help(format!(
                "remove {} from retry_on; retry only timeout, connect, reset, 429, 502, 503, 504",
                bad.join(", ")
            ))
            .label("permanent errors retried")
            .fix_with(cx, || {
                Intent::new(format!(
                    "remove {} from the retry_on of {}",
                    bad.join(", "),
                    site.describe(cx.topology)
                ))
                .remove_retry_on(site.at(), bad_conditions)
            }),
        );
    }
}
