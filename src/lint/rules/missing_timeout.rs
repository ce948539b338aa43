use crate::declare_rule;
use crate::input::duration::format as dur;
use crate::lint::rule::{Context, Diagnostic, edge, latency_default, layer_sites};
use crate::lint::{Intent, Section};
use crate::topology::LayerKind;

declare_rule! {
    /// ## What it finds
    /// A call with no per-attempt timeout in any of its layers, and a layer that
    /// retries without a per-attempt timeout of its own (including the client
    /// layer and hidden `via` layers such as Istio's default, which has none).
    ///
    /// ## Why it matters
    /// Without a timeout a hung callee holds the caller's request, thread and
    /// connection forever; the caller's own callers time out and retry, and the
    /// stuck work piles up. A retry layer without a per-attempt timeout can never
    /// retry a hang, which is the failure that needs it most.
    ///
    /// ## Example
    /// ```yaml
    /// - to: api                  # no timeout: a hung api hangs web
    ///   retry: { max_attempts: 3 }
    /// ```
    ///
    /// ## Fix
    /// Give every call and every retrying layer a per-attempt `timeout:` a little
    /// above the callee's p99 latency.
    pub static RULE = {
        code: "RL011",
        name: "missing-timeout",
        default: Error,
        summary: "a call, or a retry layer, has no per-attempt timeout",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    for site in layer_sites(cx) {
        let layer = site.layer;
        if layer.timeout.is_some() {
            continue;
        }
        match site.call {
            Some((i, call)) if layer.kind == LayerKind::App => {
                if call.layers.iter().all(|l| l.timeout.is_none()) {
                    let callee = &t.services[call.to].name;
                    out.push(
                        Diagnostic::new(
                            call.pos,
                            site.service,
                            format!(
                                "the call {} has no timeout: a hung `{callee}` holds `{}` forever",
                                edge(t, call),
                                t.services[site.service].name
                            ),
                        )
                        .on_call(i)
                        .help(format!(
                            "add `timeout:` to the call, a little above {callee}'s p99 latency"
                        ))
                        .label("no timeout")
                        .fix_with(cx, || timeout_fix(cx, &site, true)),
                    );
                } else if layer.policy.retries() {
                    out.push(missing_layer_timeout(cx, &site));
                }
            }
            _ if layer.policy.retries() => out.push(missing_layer_timeout(cx, &site)),
            _ => {}
        }
    }
}

fn missing_layer_timeout(cx: &Context, site: &crate::lint::rule::LayerSite) -> Diagnostic {
    site.diagnostic(
        site.layer.pos,
        format!(
            "{} retries but has no per-attempt timeout: a hung attempt is never retried",
            site.describe(cx.topology)
        ),
    )
    .help(format!("add `timeout:` to the {} layer", site.layer.name))
    .label("retry layer without a timeout")
    .fix_with(cx, || timeout_fix(cx, site, false))
}

/// A timeout a little above the p99 latency of what the layer calls (the
/// callee; the entry, for the client layer): p99 × 1.5, as RL013 advises.
fn timeout_fix(cx: &Context, site: &crate::lint::rule::LayerSite, call: bool) -> Intent {
    let t = cx.topology;
    let callee = site.call.map_or(t.entry, |(_, c)| c.to);
    let timeout = dur(t.services[callee].latency.p99.mul_f64(1.5));
    let (what, section) = match site.call {
        Some((_, c)) if call => (format!("the call {}", edge(t, c)), Section::Call),
        _ => (site.describe(t), Section::Layer),
    };
    let intent = Intent::new(format!(
        "add timeout: {timeout} to {what} (1.5 × the p99 latency of `{}`{})",
        t.services[callee].name,
        latency_default(&t.services[callee])
    ))
    .set(site.at(), section, "timeout", timeout);
    // A timeout sized from the 1 ms default would fail a healthy callee.
    if t.services[callee].latency.pos.is_none() {
        return intent.refuse(format!(
            "`{}` declares no latency, so its p99 is unknown (the 1 ms default): declare `latency: {{ p50: …, p99: … }}` for it and run --fix again, or write the timeout yourself",
            t.services[callee].name
        ));
    }
    intent
}
