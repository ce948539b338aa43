use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, call_layers, where_layer};
use crate::lint::{Intent, LayerAt, Section};
use crate::policy::Condition;

declare_rule! {
    /// ## What it finds
    /// A layer that retries a non-idempotent call (POST and PATCH by RFC 9110, or
    /// `idempotent: false`) without an idempotency key, on an outcome after which
    /// the server may already have done the work: anything but `connect` (a
    /// refused connection, which proves the request never arrived). Hidden `via`
    /// layers count: a POST retried only by a sidecar preset is a finding.
    ///
    /// ## Why it matters
    /// A timeout or a reset says nothing about whether the payment was taken or the
    /// order placed. Retrying it can charge a customer twice. Mesh sidecars have
    /// retried 503s by default whatever the method (Istio up to 1.23, Envoy
    /// Gateway still), and a `retryOn: 5xx` added for GETs catches POSTs too.
    ///
    /// ## Example
    /// ```yaml
    /// - to: payments
    ///   method: POST
    ///   via:
    ///     - name: istio-sidecar
    ///       retry: istio-default-1.23   # retries 503: double charges
    /// ```
    ///
    /// ## Fix
    /// Send an idempotency key the server deduplicates on (`idempotency_key: true`),
    /// or stop retrying this call in that layer (`max_attempts: 1`), or retry only
    /// refused connections (`retry_on: [connect]`).
    pub static RULE = {
        code: "RL003",
        name: "non-idempotent-retry",
        default: Error,
        summary: "a non-idempotent call is retried where the server may already have acted",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    for (s, i, call, _, layer) in call_layers(cx) {
        if call.idempotent || call.idempotency_key || !layer.policy.retries() {
            continue;
        }
        let unsafe_on: Vec<String> = layer
            .policy
            .retry_on
            .0
            .iter()
            .filter(|c| **c != Condition::Connect)
            .map(|c| c.to_string())
            .collect();
        if unsafe_on.is_empty() {
            continue;
        }
        let op = call.operation();
        let who = match layer.kind {
            crate::topology::LayerKind::App => {
                format!("{} retries", crate::lint::rule::edge(t, call))
            }
            _ => format!("{} retries", where_layer(t, call, layer)),
        };
        let message = format!(
            "{op} to `{}` is not idempotent, but {who} it on {} — the server may already have done the work",
            t.services[call.to].name,
            unsafe_on.join(", ")
        );
        let layer_name = match layer.kind {
            crate::topology::LayerKind::App => "the app layer".to_owned(),
            _ => format!("the {} layer", layer.name),
        };
        out.push(
            Diagnostic::new(layer.at(None), s, message)
                .on_layer(i, layer)
                .help(format!(
                    "add idempotency_key: true or stop retrying {op} in {layer_name} (max_attempts: 1, or retry_on: [connect])"
                ))
                .label(format!("retries non-idempotent {op}"))
                .fix_with(cx, || {
                    Intent::new(format!(
                        "add idempotency_key: true to the call {} (`{}` must deduplicate on the key)",
                        crate::lint::rule::edge(t, call),
                        t.services[call.to].name
                    ))
                    .set(LayerAt::call(s, i, 0), Section::Call, "idempotency_key", "true")
                }),
        );
    }
}
