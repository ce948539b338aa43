use crate::declare_rule;
use crate::lint::finding::Severity;
use crate::lint::rule::{Context, Diagnostic, call_layers, where_layer};
use crate::source::duration::format as dur;

declare_rule! {
    /// ## What it finds
    /// A per-attempt timeout shorter than the worst case of what it waits for (the
    /// callee with all its own calls and retries, or the inner retry layers), so
    /// the callee keeps working after the caller has given up (a warning); and a
    /// user request whose worst case, through every layer, exceeds the topology's
    /// `deadline` (an error).
    ///
    /// ## Why it matters
    /// Work nobody waits for is pure waste: the caller has timed out and, often,
    /// already retried, so the callee does the same work twice while overloaded.
    /// A worst case beyond the deadline means users see failures the retries were
    /// meant to hide, after waiting the longest.
    ///
    /// ## Example
    /// ```yaml
    /// - to: api
    ///   timeout: 500ms           # api may take 1.2s: 3 × 300ms to db + waits
    /// ```
    ///
    /// ## Fix
    /// Make inner timeouts and retries fit inside the outer timeout (fewer inner
    /// attempts, shorter inner timeouts), or propagate the deadline: with
    /// `deadline_propagation: true` on both caller and callee, the caller sends
    /// its remaining time and the callee starts nothing past it, so the rule
    /// is satisfied. (For the client layer: a topology `deadline` and
    /// propagation on the entry.)
    pub static RULE = {
        code: "RL007",
        name: "deadline-overrun",
        default: Warning,
        summary: "a callee outlives its caller's timeout, or a request outlives the deadline",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    for (s, i, call, li, layer) in call_layers(cx) {
        let Some(timeout) = layer.timeout else {
            continue;
        };
        // Both ends propagate: the callee stops when the caller stops.
        let (caller_sends, callee_honours) = (
            t.services[s].deadline_propagation,
            t.services[call.to].deadline_propagation,
        );
        if caller_sends && callee_honours {
            continue;
        }
        // What this layer's attempt waits for: the inner layers, then the callee.
        let inner = a.inner_worst(t, s, i, li);
        if inner <= timeout.value {
            continue;
        }
        let callee = &t.services[call.to].name;
        let caller = &t.services[s].name;
        let (limit, worst) = (dur(timeout.value), dur(inner));
        let waited = if li + 1 < call.layers.len() {
            "the inner retry layers and `"
        } else {
            "`"
        };
        let propagate = match (caller_sends, callee_honours) {
            (false, false) => ["both ", caller, " and ", callee].concat(),
            (false, true) => caller.clone(),
            _ => callee.clone(),
        };
        // Joined rather than formatted: a large topology has tens of
        // thousands of these.
        let message = [
            &where_layer(t, call, layer),
            " times out after ",
            &limit,
            " but ",
            waited,
            callee,
            "` can take ",
            &worst,
            " at worst: work nobody waits for",
        ]
        .concat();
        let help = [
            "fit the work under ",
            callee,
            " inside ",
            &limit,
            " (fewer inner attempts or shorter inner timeouts), or set deadline_propagation: true on ",
            &propagate,
        ]
        .concat();
        out.push(
            Diagnostic::new(timeout.pos, s, message)
                .on_layer(i, layer)
                .help(help)
                .label([&*limit, " < ", &worst, " worst case"].concat()),
        );
    }
    // The client layer waits for the entry service.
    let client_propagates = t.deadline.is_some() && t.services[t.entry].deadline_propagation;
    if let Some(client) = &t.client
        && let Some(timeout) = client.timeout
        && a.service_worst[t.entry] > timeout.value
        && !client_propagates
    {
        let entry = &t.services[t.entry].name;
        let inner = a.service_worst[t.entry];
        out.push(
            Diagnostic::new(timeout.pos, t.entry, format!(
                "the client layer times out after {} but `{entry}` can take {} at worst: work nobody waits for",
                dur(timeout.value),
                dur(inner)
            ))
            .help(format!(
                "fit the work under {entry} inside {} (fewer attempts or shorter timeouts below it), or set a topology `deadline` and deadline_propagation: true on {entry}",
                dur(timeout.value)
            ))
            .label(format!("{} < {} worst case", dur(timeout.value), dur(inner))),
        );
    }
    if let Some(deadline) = t.deadline
        && a.entry_worst > deadline.value
    {
        out.push(
            Diagnostic::new(
                deadline.pos,
                t.entry,
                format!(
                    "a user request can take {} at worst through every retry layer, beyond the {} deadline",
                    dur(a.entry_worst),
                    dur(deadline.value)
                ),
            )
            .help("lower attempts or timeouts on the slowest path until its worst case fits the deadline")
            .label(format!("worst case {}", dur(a.entry_worst)))
            .severity(Severity::Error),
        );
    }
}
