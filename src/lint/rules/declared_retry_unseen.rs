use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, where_layer};

use super::undeclared_retry_layer::{call_of, seen_text};

declare_rule! {
    /// ## What it finds
    /// A layer declared to retry whose retries never appear in the traces,
    /// although its callee failed there: error statuses are present, and
    /// every logical call was seen exactly once.
    ///
    /// ## Why it matters
    /// The figures rest on the declared layers. A retry that does not happen
    /// (its `retry_on` misses the errors the callee returns, the retry code
    /// is not deployed, the SDK's retries are off) makes the amplification
    /// and worst-case figures too high, and the availability the retries are
    /// meant to buy is not there.
    ///
    /// ## Example
    /// ```yaml
    /// calls:
    ///   - to: payments
    ///     retry: { max_attempts: 3 }   # traces: 40 calls, 12 failed, 1 attempt each
    /// ```
    ///
    /// ## Fix
    /// Check that the layer is deployed as declared and that its `retry_on`
    /// covers the failures seen; or declare it as it is (`retry: { max_attempts: 1 }`).
    pub static RULE = {
        code: "RL022",
        name: "declared-retry-unseen",
        default: Info,
        summary: "a declared retrying layer whose retries never appear although its callee failed in the traces",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for o in &cx.topology.observed {
        // Counters say nothing of failures here: the rule is for traces.
        if o.counted.is_some() || o.figures.failed_calls == 0 || o.figures.attempts_max > 1 {
            continue;
        }
        let Some((i, call)) = call_of(cx, o) else {
            continue;
        };
        for layer in call.layers.iter().filter(|l| l.policy.retries()) {
            let failed = if o.figures.failed_calls == 1 {
                "call"
            } else {
                "calls"
            };
            out.push(
                Diagnostic::new(
                    layer.pos,
                    o.from,
                    format!(
                        "{} is declared to retry ({} attempts), but traces show {}, {} failed {failed} among them and none retried",
                        where_layer(cx.topology, call, layer),
                        layer.policy.attempts_text(),
                        seen_text(o),
                        o.figures.failed_calls,
                    ),
                )
                .on_layer(i, layer)
                .help("check that the layer is deployed as declared and that its retry_on covers the failures seen, or declare it without retries")
                .label("no retries seen"),
            );
        }
    }
}
