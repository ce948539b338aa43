use std::time::Duration;

use crate::declare_rule;
use crate::input::duration::format as dur;
use crate::lint::rule::{Context, Diagnostic, copies_text, edge, latency_default};
use crate::lint::{Intent, LayerAt, Section};

declare_rule! {
    /// ## What it finds
    /// A hedged call whose `delay` is below the callee's median (p50)
    /// response time: the callee's own `latency` (a log-normal with its p50
    /// and p99, as the simulator draws it), plus the healthy median time of
    /// the callee's own calls when it makes any.
    ///
    /// ## Why it matters
    /// Hedging is meant for the slow tail: a copy goes only when the first
    /// answer is later than most answers are. With the delay below the
    /// median, more than half of all requests get a second copy on a healthy
    /// day — the callee's load roughly doubles (or more, with more copies)
    /// when nothing is wrong, and the extra load makes it slower, which sends
    /// still more copies. The message gives the expected copies per request.
    ///
    /// ## Example
    /// ```yaml
    /// - to: search
    ///   hedging: { max_attempts: 2, delay: 10ms }   # search: { latency: { p50: 40ms, p99: 200ms } }
    /// ```
    ///
    /// ## Fix
    /// Set `delay` to about the callee's p95 (the message computes it from
    /// the same latency figures), so about one request in twenty sends a
    /// second copy.
    pub static RULE = {
        code: "RL019",
        name: "hedging-delay-below-p50",
        default: Warning,
        summary: "a hedging delay below the callee's median latency sends copies for most requests",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    for (s, svc) in t.services.iter().enumerate() {
        for (i, call) in svc.calls.iter().enumerate() {
            let Some((layer, hedging)) = call
                .layers
                .iter()
                .find_map(|l| l.hedging.as_ref().map(|h| (l, h)))
            else {
                continue;
            };
            let response = &a.response[call.to];
            let p50 = response.p50();
            let delay = hedging.value.delay;
            if delay >= p50 {
                continue;
            }
            let callee = &t.services[call.to].name;
            let default = latency_default(&t.services[call.to]);
            let whose = if response.calls.is_zero() {
                format!("`{callee}`'s p50 latency of {}{default}", dur(p50))
            } else {
                format!(
                    "`{callee}`'s p50 latency of {} (its own {}{default} plus {} for its calls)",
                    dur(p50),
                    dur(response.own.p50),
                    dur(response.calls)
                )
            };
            out.push(
                Diagnostic::new(
                    hedging.pos,
                    s,
                    format!(
                        "{} sends a hedged copy after {}, below {whose}: {} per request when nothing fails",
                        edge(t, call),
                        dur(delay),
                        copies_text(a.healthy_copies[s][i]),
                    ),
                )
                .on_layer(i, layer)
                .help(if response.p95() == p50 {
                    format!(
                        "set `delay` above {}: `{callee}` always answers by then, so no copy goes",
                        dur(p50)
                    )
                } else {
                    format!(
                        "set `delay: {}`, about `{callee}`'s p95, so only the slowest 5 % of requests send a copy",
                        dur(advice(response.p95()))
                    )
                })
                .label(format!("delay below p50 {}", dur(p50))),
            );
            // `delay: p95` is concrete; "above p50" leaves the value open.
            if response.p95() != p50
                && let Some(d) = out.last_mut()
            {
                let delay = dur(advice(response.p95()));
                d.fix = Some(
                    Intent::new(format!(
                        "set delay: {delay} in the hedging of {} (about `{callee}`'s p95)",
                        edge(t, call)
                    ))
                    .set(
                        LayerAt::call(s, i, 0),
                        Section::Hedging,
                        "delay",
                        delay,
                    ),
                );
            }
        }
    }
}

/// A duration to suggest writing: whole milliseconds from 1 ms up, whole
/// microseconds below.
fn advice(d: Duration) -> Duration {
    if d >= Duration::from_millis(1) {
        Duration::from_millis((d.as_secs_f64() * 1000.0).round() as u64)
    } else {
        Duration::from_micros((d.as_secs_f64() * 1e6).round().max(1.0) as u64)
    }
}
