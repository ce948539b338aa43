use crate::declare_rule;
use crate::input::duration::format as dur;
use crate::lint::rule::{Context, Diagnostic, call_layers, latency_default, where_layer};
use crate::lint::{Intent, LayerAt, Section};

declare_rule! {
    /// ## What it finds
    /// A per-attempt timeout below the callee's p99 latency (its `latency`, or
    /// `latency.p99`).
    ///
    /// ## Why it matters
    /// More than 1 % of healthy attempts time out, get retried, and add load and
    /// latency; under a slowdown nearly all do, and the retries make it worse. The
    /// timeout turns normal tail latency into failures.
    ///
    /// ## Example
    /// ```yaml
    /// - to: db
    ///   timeout: 20ms            # db: { latency: { p50: 5ms, p99: 40ms } }
    /// ```
    ///
    /// ## Fix
    /// Set the timeout a little above the callee's p99 (for example p99 × 1.5), or
    /// make the callee faster.
    pub static RULE = {
        code: "RL013",
        name: "timeout-below-latency",
        default: Warning,
        summary: "per-attempt timeout below the callee's p99 latency",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    if let Some(timeout) = t.client.as_ref().and_then(|c| c.timeout) {
        let entry = &t.services[t.entry];
        let p99 = entry.latency.p99;
        if timeout.value < p99 {
            out.push(
                Diagnostic::new(
                    timeout.pos,
                    t.entry,
                    format!(
                        "the client layer times out after {}, below `{}`'s p99 latency of {}{}: healthy requests time out",
                        dur(timeout.value),
                        entry.name,
                        dur(p99),
                        latency_default(entry)
                    ),
                )
                .help(format!("raise the timeout above {} (e.g. {})", dur(p99), dur(p99.mul_f64(1.5))))
                .label(format!("below p99 {}", dur(p99)))
                .fix_with(cx, || raise(LayerAt::CLIENT, "the client layer", p99)),
            );
        }
    }
    for (s, i, call, li, layer) in call_layers(cx) {
        let Some(timeout) = layer.timeout else {
            continue;
        };
        let callee = &t.services[call.to];
        let p99 = callee.latency.p99;
        if timeout.value >= p99 {
            continue;
        }
        out.push(
            Diagnostic::new(
                timeout.pos,
                s,
                format!(
                    "{} times out after {}, below `{}`'s p99 latency of {}{}: healthy requests time out",
                    where_layer(t, call, layer),
                    dur(timeout.value),
                    callee.name,
                    dur(p99),
                    latency_default(callee)
                ),
            )
            .on_layer(i, layer)
            .help(format!(
                "raise the timeout above {} (e.g. {})",
                dur(p99),
                dur(p99.mul_f64(1.5))
            ))
            .label(format!("below p99 {}", dur(p99)))
            .fix_with(cx, || {
                raise(LayerAt::call(s, i, li), &where_layer(t, call, layer), p99)
            }),
        );
    }
}

/// The timeout raised to 1.5 × the p99 the help names.
fn raise(at: LayerAt, what: &str, p99: std::time::Duration) -> Intent {
    let timeout = dur(p99.mul_f64(1.5));
    Intent::new(format!("set timeout: {timeout} at {what}")).set(
        at,
        Section::Layer,
        "timeout",
        timeout,
    )
}
