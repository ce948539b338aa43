use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, edge, layer_of, layer_sites, where_layer};
use crate::lint::{Intent, Section};
use crate::policy::{BreakerCounts, BreakerPosition};
use crate::topology::LayerKind;

declare_rule! {
    /// ## What it finds
    /// A circuit breaker that judges single attempts of a retry loop instead
    /// of requests after their retries:
    ///
    /// - on a layer that retries, with `position: inside` (asked before
    ///   every attempt) or `counts: attempts` (every attempt recorded); or
    /// - on a `via` layer below a layer of the same call that retries (the
    ///   app layer above a sidecar, say): that loop's attempts reach the
    ///   breaker one by one, whatever its `position` and `counts` say.
    ///
    /// ## Why it matters
    /// A breaker should open when requests fail, not when a transient blip
    /// fails an attempt that the next retry would have fixed. Counting
    /// attempts, a 30 % rate of transient 503s looks like a 30 % failure
    /// rate although every request succeeds after its retries: the breaker
    /// trips spuriously, rejects the healthy traffic, and flaps. Inside the
    /// loop it also turns the loop's retries into rejected calls. The
    /// canonical order is retry inside, breaker on top counting outcomes
    /// (Resilience4j `withRetry(...).withCircuitBreaker(...)`, Polly
    /// `AddRetry(...).AddCircuitBreaker(...)`).
    ///
    /// ## Example
    /// ```yaml
    /// - to: db
    ///   retry: { max_attempts: 3, backoff: { kind: exponential, base: 50ms, cap: 1s, jitter: full } }
    ///   circuit_breaker: { failure_rate: 0.5, open_for: 5s, position: inside, counts: attempts }
    /// ```
    ///
    /// ## Fix
    /// Set `position: outside` and `counts: outcomes` (the defaults), so the
    /// breaker sees each request once, after its retries. A breaker on a
    /// `via` layer below a retrying layer moves up to that layer.
    pub static RULE = {
        code: "RL016",
        name: "breaker-inside-retry",
        default: Warning,
        summary: "a circuit breaker judges single attempts of a retry loop",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    for site in layer_sites(cx) {
        let Some(breaker) = &site.layer.breaker else {
            continue;
        };
        let spec = &breaker.value;
        let here = site.describe(t);
        let diagnostic = if site.layer.policy.retries() {
            let mut wrong = Vec::new();
            if spec.inside() {
                wrong.push(("`position: inside`", "`position: outside`"));
            }
            if spec.counts_attempts() {
                wrong.push(("`counts: attempts`", "`counts: outcomes`"));
            }
            if wrong.is_empty() {
                continue;
            }
            let said: Vec<&str> = wrong.iter().map(|w| w.0).collect();
            let fix: Vec<&str> = wrong.iter().map(|w| w.1).collect();
            let intent = || {
                let mut intent = Intent::new(format!(
                    "set {} on the circuit breaker of {here}",
                    fix.join(" and ").replace('`', "")
                ));
                if spec.inside() {
                    intent = intent.set(
                        site.at(),
                        Section::Breaker,
                        "position",
                        BreakerPosition::Outside.as_str(),
                    );
                }
                if spec.counts_attempts() {
                    intent = intent.set(
                        site.at(),
                        Section::Breaker,
                        "counts",
                        BreakerCounts::Outcomes.as_str(),
                    );
                }
                intent
            };
            site.diagnostic(
                breaker.pos,
                format!(
                    "the circuit breaker of {here} judges every attempt of its retry loop ({}, {} attempts): transient failures the retries absorb trip it",
                    said.join(", "),
                    site.layer.policy.attempts_text()
                ),
            )
            .help(format!(
                "set {} so it judges each request after its retries",
                fix.join(" and ")
            ))
            .fix_with(cx, intent)
        } else {
            // A retrying layer further out on the same call sends its
            // attempts through this breaker one by one.
            let Some((_, call)) = site.call else {
                continue;
            };
            let Some(outer) = call.layers[..site.index]
                .iter()
                .find(|l| l.policy.retries())
            else {
                continue;
            };
            let (outer_name, move_to) = match outer.kind {
                LayerKind::App => (
                    layer_of(t, call, "app"),
                    format!(
                        "up to the call {} itself (beside its `retry:`)",
                        edge(t, call)
                    ),
                ),
                _ => {
                    let name = where_layer(t, call, outer);
                    (name.clone(), format!("to {name}"))
                }
            };
            site.diagnostic(
                breaker.pos,
                format!(
                    "the circuit breaker of {here} sits inside the retry loop of {outer_name} ({} attempts) and judges each attempt: transient failures the retries absorb trip it",
                    outer.policy.attempts_text()
                ),
            )
            .help(format!(
                "move the `circuit_breaker` {move_to}, with `position: outside` and `counts: outcomes`"
            ))
        };
        out.push(diagnostic.label("breaker inside the retry loop"));
    }
}
