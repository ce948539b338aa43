use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, call_layers, layer_of, where_layer};
use crate::lint::{Intent, LayerAt, Section};

declare_rule! {
    /// ## What it finds
    /// A retry layer that retries beneath another retrying layer on the same call
    /// path: an app that retries a call its sidecar already retries, an SDK under
    /// an app retry loop, a service that retries while its caller retries too.
    /// Hidden `via` layers and the client layer count.
    ///
    /// ## Why it matters
    /// Nested retries multiply: an app's 3 attempts through Istio's default of 3
    /// attempts send 9 requests; each further layer multiplies again. Teams rarely
    /// see all layers at once, so the product is usually discovered in an outage.
    ///
    /// ## Example
    /// ```yaml
    /// calls:
    ///   - to: api
    ///     retry: { max_attempts: 3 }     # the app retries
    ///     via:
    ///       - name: istio-sidecar
    ///         retry: istio-default       # and so does the sidecar: 3 × 3 = 9
    /// ```
    ///
    /// ## Fix
    /// Retry in one layer per path. Either keep the app's retries and disable the
    /// sidecar's (`retry: { max_attempts: 1 }`), or the other way round.
    pub static RULE = {
        code: "RL002",
        name: "multi-layer-retry",
        default: Warning,
        summary: "more than one layer on one call path retries",
        check: check,
    };
}

/// Outer layers a finding names; past them it gives a count.
const MAX_NAMED: usize = 6;

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    // The layers above a service are the same for each of its calls: named
    // once per service (a large topology has tens of thousands of calls).
    let mut above_named: Option<(usize, Vec<String>)> = None;
    for (s, i, call, li, layer) in call_layers(cx) {
        if !layer.policy.retries() {
            continue;
        }
        let outer_in_call: Vec<&str> = call.layers[..li]
            .iter()
            .filter(|l| l.policy.retries())
            .map(|l| l.name.as_str())
            .collect();
        let above = above_count(cx, s) + outer_in_call.len();
        if above == 0 {
            continue;
        }
        let above_names = match &above_named {
            Some((named, names)) if *named == s => names,
            _ => &above_named.insert((s, above_service(cx, s))).1,
        };
        // Then the outer layers of this call, as many as are named: a call
        // through 2,000 `via` layers would otherwise name 1,999 in each of
        // its 2,000 findings.
        let room = MAX_NAMED.saturating_sub(above_names.len());
        let in_call: Vec<String> = outer_in_call
            .iter()
            .take(room)
            .map(|n| layer_of(t, call, n))
            .collect();
        let mut outer: Vec<&str> = above_names
            .iter()
            .chain(&in_call)
            .map(String::as_str)
            .take(MAX_NAMED)
            .collect();
        let unnamed = above_names.len() + outer_in_call.len() - outer.len();
        let more = (unnamed > 0).then(|| {
            format!(
                "{} more layer{}",
                crate::input::read::thousands(unnamed),
                if unnamed == 1 { "" } else { "s" }
            )
        });
        if let Some(m) = &more {
            outer.push(m);
        }
        // Joined rather than formatted: a large topology has tens of
        // thousands of these.
        let message = [
            where_layer(t, call, layer).as_str(),
            " retries (",
            &layer.policy.attempts_text(),
            " attempts) beneath ",
            &crate::input::read::thousands(above),
            " other retrying layer",
            if above == 1 { "" } else { "s" },
            ": ",
            &outer.join(", "),
        ]
        .concat();
        out.push(
            Diagnostic::new(layer.at(layer.spans.max_attempts), s, message)
                .on_layer(i, layer)
                .help(
                    [
                        "retry in one layer per path: set max_attempts: 1 here, or stop retrying in ",
                        &outer.join(" and "),
                    ]
                    .concat(),
                )
                .label("nested retry layer")
                .fix_with(cx, || {
                    Intent::new(format!(
                        "set max_attempts: 1 at {}",
                        where_layer(t, call, layer)
                    ))
                    .set(
                        LayerAt::call(s, i, li),
                        Section::Retry,
                        "max_attempts",
                        "1",
                    )
                }),
        );
    }
}

/// The retrying layers above service `s`, named: on the hottest path down to
/// it, the client layer first, and how many more there are beyond those shown.
fn above_service(cx: &Context, s: usize) -> Vec<String> {
    let t = cx.topology;
    let mut outer: Vec<String> = Vec::new();
    // Only user traffic passes the client layer.
    if cx.analysis.reachable[s] && t.client.as_ref().is_some_and(|c| c.policy.retries()) {
        outer.push("the client layer".into());
    }
    let (tail, _) = cx.analysis.hot_path_tail(s, 4);
    for (caller, ci) in tail {
        let above = &t.services[caller].calls[ci];
        outer.extend(
            above
                .layers
                .iter()
                .filter(|l| l.policy.retries())
                .map(|l| where_layer(t, above, l)),
        );
    }
    let hidden = above_count(cx, s).saturating_sub(outer.len());
    if hidden > 0 {
        outer.insert(0, format!("{hidden} more above"));
    }
    outer
}

/// Retrying layers above service `s` on its most-retried path.
fn above_count(cx: &Context, s: usize) -> usize {
    cx.analysis.retrying_above[s] as usize
}
