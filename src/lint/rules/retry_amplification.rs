use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, edge};
use crate::topology::{Layer, Pos};

declare_rule! {
    /// ## What it finds
    /// Services that receive more than `--max-amplification` attempts (default 10)
    /// for one user request when every call on the way fails retryably: the sum over
    /// every call path from the entry of the product of `max_attempts` of every retry
    /// layer on the path (client layer, each call's `retry`, each `via` layer).
    ///
    /// ## Why it matters
    /// Retries multiply down a call chain. Three layers of four attempts send 64
    /// attempts to an overloaded database (Google SRE book); five layers of three
    /// send 243 (AWS Builders' Library). The service that is already failing
    /// receives the most load exactly when it can least take it, and the outage
    /// outlives its cause.
    ///
    /// ## Example
    /// ```yaml
    /// services:
    ///   web: { calls: [ { to: api, retry: { max_attempts: 4 } } ] }
    ///   api: { calls: [ { to: db,  retry: { max_attempts: 4 } } ] }
    ///   db: {}
    /// # with a client layer of 4 attempts: 4 × 4 × 4 = 64 attempts reach db
    /// ```
    ///
    /// ## Fix
    /// Retry at one layer only, usually the one nearest the user, and set
    /// `max_attempts: 1` everywhere below it; or give every retrying layer a retry
    /// budget (`budget: { kind: ratio, ratio: 0.1 }`), which bounds the steady state
    /// at about 1.1× per layer.
    pub static RULE = {
        code: "RL001",
        name: "retry-amplification",
        default: Error,
        summary: "worst-case attempts reaching a service exceed the amplification limit",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    for s in 0..t.services.len() {
        let count = a.worst_case[s];
        if !a.reachable[s] || count.value() <= cx.max_amplification {
            continue;
        }
        let path = a.hot_path(s);
        // The retrying layers on the hot path, outermost first.
        let mut retrying: Vec<(String, &Layer, Option<usize>, usize)> = Vec::new();
        if let Some(c) = t.client.as_ref().filter(|c| c.policy.retries()) {
            retrying.push(("the client layer".into(), c, None, t.entry));
        }
        for &(caller, i) in &path {
            let call = &t.services[caller].calls[i];
            for l in call.layers.iter().filter(|l| l.policy.retries()) {
                let name = match l.kind {
                    crate::topology::LayerKind::App => edge(t, call),
                    _ => format!("the {} layer of {}", l.name, edge(t, call)),
                };
                retrying.push((name, l, Some(i), caller));
            }
        }
        let factors: Vec<String> = retrying
            .iter()
            .map(|(_, l, _, _)| l.policy.max_attempts.to_string())
            .collect();
        let route: Vec<&str> = std::iter::once(t.services[t.entry].name.as_str())
            .chain(
                path.iter()
                    .map(|&(c, i)| t.services[t.services[c].calls[i].to].name.as_str()),
            )
            .collect();
        let figure = if count.saturated {
            format!("more than {:.3e}", count.approx)
        } else {
            count.exact.to_string()
        };
        let mut message = format!(
            "worst case {figure} attempts reach `{}` per user request (limit {})",
            t.services[s].name, cx.max_amplification
        );
        if !factors.is_empty() {
            message.push_str(&format!(
                "; hottest path {} multiplies {}",
                route.join(" → "),
                factors.join(" × ")
            ));
        }
        let help = match retrying.as_slice() {
            [] => "no layer on the hottest path retries; the fan-in of many paths adds up: reduce retries on the other paths".to_owned(),
            [(name, l, _, _)] => format!(
                "lower max_attempts at {name} (now {}), or add a retry budget: budget: {{ kind: ratio, ratio: 0.1 }}",
                l.policy.max_attempts
            ),
            [(keep, ..), rest @ ..] => format!(
                "retry only at {keep}; set max_attempts: 1 at {}",
                rest.iter().map(|(n, ..)| n.as_str()).collect::<Vec<_>>().join(", ")
            ),
        };
        // Point at the retrying layer nearest the service: the last multiplier.
        let (pos, call, layer): (Pos, Option<usize>, Option<String>) = match retrying.last() {
            Some((_, l, call, _)) => (l.at(l.spans.max_attempts), *call, Some(l.name.clone())),
            None => (t.services[s].pos, None, None),
        };
        let service = retrying.last().map_or(s, |r| r.3);
        let mut d = Diagnostic::new(pos, service, message)
            .help(help)
            .label(format!("{figure} attempts reach {}", t.services[s].name));
        d.call = call;
        d.layer = layer;
        out.push(d);
    }
}
