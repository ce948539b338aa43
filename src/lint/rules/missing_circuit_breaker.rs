use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, edge, worst_case_reach};
use crate::lint::{Intent, LayerAt, Section};

declare_rule! {
    /// ## What it finds
    /// A service whose worst-case amplification exceeds
    /// `--max-amplification` (RL001's figure and limit) while none of the
    /// calls into it — nor the `client:` layer, for the entry — has a
    /// `circuit_breaker`. Reported on the hottest incoming call, the one
    /// that contributes most attempts.
    ///
    /// ## Why it matters
    /// Budgets and lower attempt counts bound how much retries multiply; a
    /// breaker bounds how long. Under a sustained outage of the service every
    /// request still runs through every retry layer above it, and the load
    /// that keeps it down never stops. A breaker in front of it stops calling
    /// once most calls fail and lets a few probes through until it recovers
    /// (`check` shows the difference as the `with breakers` figure).
    ///
    /// ## Example
    /// ```yaml
    /// api:
    ///   calls:
    ///     - to: db          # 64 attempts reach db at worst; nothing stops them
    ///       retry: { max_attempts: 4 }
    /// ```
    ///
    /// ## Fix
    /// Add a breaker on the hottest incoming call, outside its retries:
    /// `circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 20,
    /// open_for: 5s, open_jitter: 0.2 }`.
    pub static RULE = {
        code: "RL020",
        name: "missing-circuit-breaker",
        default: Info,
        summary: "no circuit breaker in front of a service retries can amplify past the limit",
        check: check,
    };
}

/// The breaker the fix suggests: Resilience4j-like rate and Hystrix-like
/// timing, with the jitter RL017 asks for.
const SUGGESTED: &str = "circuit_breaker: { failure_rate: 0.5, window: 10s, min_calls: 20, open_for: 5s, open_jitter: 0.2 }";
const BREAKER: &str =
    "{ failure_rate: 0.5, window: 10s, min_calls: 20, open_for: 5s, open_jitter: 0.2 }";

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    let mut guarded = vec![false; t.services.len()];
    for call in t.calls() {
        if call.layers.iter().any(|l| l.breaker.is_some()) {
            guarded[call.to] = true;
        }
    }
    if t.client.as_ref().is_some_and(|c| c.breaker.is_some()) {
        guarded[t.entry] = true;
    }
    let limit = cx.max_amplification.to_string();
    for (s, svc) in t.services.iter().enumerate() {
        let count = a.worst_case[s];
        if !a.reachable[s] || guarded[s] || count.value() <= cx.max_amplification {
            continue;
        }
        let (_, mut message) = worst_case_reach(&count, &svc.name, &limit);
        message.push_str(
            " and no call into it has a circuit breaker: nothing stops them during a sustained outage",
        );
        let mut d = match (a.hottest_caller[s], &t.client) {
            (Some((caller, i)), _) => {
                let call = &t.services[caller].calls[i];
                Diagnostic::new(call.pos, caller, message)
                    .on_call(i)
                    .help(
                        [
                            "add `",
                            SUGGESTED,
                            "` to ",
                            &edge(t, call),
                            ", the hottest call into `",
                            &svc.name,
                            "`",
                        ]
                        .concat(),
                    )
                    .fix_with(cx, || {
                        Intent::new(format!(
                            "add a circuit breaker to the call {}",
                            edge(t, call)
                        ))
                        .set(
                            LayerAt::call(caller, i, 0),
                            Section::Call,
                            "circuit_breaker",
                            BREAKER,
                        )
                    })
            }
            (None, Some(client)) => {
                Diagnostic::new(client.at(client.spans.max_attempts), t.entry, message)
                    .help(format!("add `{SUGGESTED}` to the client layer"))
                    .fix_with(cx, || {
                        Intent::new("add a circuit breaker to the client layer").set(
                            LayerAt::CLIENT,
                            Section::Layer,
                            "circuit_breaker",
                            BREAKER,
                        )
                    })
            }
            // The entry with no client layer receives one attempt per request.
            (None, None) => continue,
        };
        d = d.label("no circuit breaker");
        d.about = Some(s);
        out.push(d);
    }
}
