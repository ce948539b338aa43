use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, copies_text, edge};
use crate::lint::{Intent, LayerAt, Section};

declare_rule! {
    /// ## What it finds
    /// A hedged call (`hedging:`) that is not idempotent — POST and PATCH by
    /// RFC 9110, or `idempotent: false` — and sends no idempotency key
    /// (`idempotency_key: true`).
    ///
    /// ## Why it matters
    /// Hedging sends a second copy of a request whenever the first is slow,
    /// and does not wait for a failure: on a healthy day a share of requests
    /// run two or more times, and on a slow day nearly all do. For a payment
    /// or an order, each copy the server executes is another charge or
    /// another order. gRPC's A6 design allows hedging only for idempotent
    /// methods for this reason.
    ///
    /// ## Example
    /// ```yaml
    /// - to: payments
    ///   method: POST
    ///   hedging: { max_attempts: 3, delay: 50ms }
    /// ```
    ///
    /// ## Fix
    /// Send an idempotency key the server deduplicates on
    /// (`idempotency_key: true`), or remove `hedging` from this call (retry
    /// refused connections only, if anything).
    pub static RULE = {
        code: "RL018",
        name: "non-idempotent-hedging",
        default: Error,
        summary: "a non-idempotent call is hedged without an idempotency key",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    for (s, svc) in t.services.iter().enumerate() {
        for (i, call) in svc.calls.iter().enumerate() {
            if call.idempotent || call.idempotency_key {
                continue;
            }
            let Some((layer, hedging)) = call
                .layers
                .iter()
                .find_map(|l| l.hedging.as_ref().map(|h| (l, h)))
            else {
                continue;
            };
            let op = call.operation();
            let n = hedging.value.max_attempts;
            out.push(
                Diagnostic::new(
                    hedging.pos,
                    s,
                    format!(
                        "{} hedges {op} (up to {n} copies, {} per request when nothing fails) but {op} is not idempotent: requests are executed several times even when nothing fails",
                        edge(t, call),
                        copies_text(cx.analysis.healthy_copies[s][i]),
                    ),
                )
                .on_layer(i, layer)
                .help(format!(
                    "add idempotency_key: true so `{}` deduplicates the copies, or remove `hedging` from this call",
                    t.services[call.to].name
                ))
                .label(format!("hedges non-idempotent {op}"))
                .fix_with(cx, || {
                    Intent::new(format!(
                        "add idempotency_key: true to the call {} (`{}` must deduplicate on the key)",
                        edge(t, call),
                        t.services[call.to].name
                    ))
                    .set(LayerAt::call(s, i, 0), Section::Call, "idempotency_key", "true")
                }),
            );
        }
    }
}
