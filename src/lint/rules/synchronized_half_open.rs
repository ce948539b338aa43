use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::lint::{Intent, Section};

declare_rule! {
    /// ## What it finds
    /// A circuit breaker with `open_jitter: 0` (the default) where many
    /// breakers guard the same dependency, so that they open together and
    /// go half-open together. It is reported on every breaker without open
    /// jitter that sits
    ///
    /// - on the `client:` layer: every user (every closed-loop client) has
    ///   a breaker of its own; or
    /// - on a call whose callee is reached through breakers from two or more
    ///   call sites (calls in `calls:`, from one service or several).
    ///
    /// A service in the topology may stand for a fleet of replicas, each
    /// with its own breaker, which synchronize the same way; the topology
    /// does not say how many there are, so a lone breaker on the only call
    /// site of its callee is not reported. If its caller runs as replicas,
    /// the fix applies all the same.
    ///
    /// ## Why it matters
    /// Breakers that saw the same outage open within moments of each other.
    /// Without jitter each stays open exactly `open_for`, so all of them go
    /// half-open in the same instant and their probes (and, once they close,
    /// all their traffic) hit the recovering dependency at once: a thundering
    /// herd that can knock it over again, and the breakers open again, in
    /// step, every `open_for`.
    ///
    /// ## Example
    /// ```yaml
    /// client:
    ///   circuit_breaker: { failure_rate: 0.5, open_for: 5s }   # open_jitter: 0
    /// ```
    ///
    /// ## Fix
    /// Add `open_jitter: 0.2`: each breaker stays open `open_for` × a random
    /// factor in 0.8..1.2, which spreads the probes over 2 s for a 5 s
    /// `open_for`.
    pub static RULE = {
        code: "RL017",
        name: "synchronized-half-open",
        default: Warning,
        summary: "circuit breakers sharing a dependency go half-open in step without open jitter",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    // Call sites that reach each service through a breaker.
    let mut guarded_sites = vec![0usize; t.services.len()];
    for call in t.calls() {
        if call.layers.iter().any(|l| l.breaker.is_some()) {
            guarded_sites[call.to] += 1;
        }
    }
    for site in layer_sites(cx) {
        let Some(breaker) = &site.layer.breaker else {
            continue;
        };
        if breaker.value.open_jitter > 0.0 {
            continue;
        }
        let why = match site.call {
            None => format!(
                "every user has a breaker of its own, and those that opened in one outage probe `{}` in the same instant",
                t.services[t.entry].name
            ),
            Some((_, call)) if guarded_sites[call.to] >= 2 => format!(
                "{} call sites reach `{}` through breakers, and those that opened together probe it in the same instant",
                guarded_sites[call.to], t.services[call.to].name
            ),
            Some(_) => continue,
        };
        out.push(
            site.diagnostic(
                breaker.pos,
                format!(
                    "the circuit breaker of {} has no open jitter: {why}",
                    site.describe(t)
                ),
            )
            .help("add `open_jitter: 0.2` to the circuit_breaker, so breakers that opened together go half-open apart")
            .label("half-open in step")
            .fix_with(cx, || {
                Intent::new(format!(
                    "add open_jitter: 0.2 to the circuit breaker of {}",
                    site.describe(t)
                ))
                .set(site.at(), Section::Breaker, "open_jitter", "0.2")
            }),
        );
    }
}
