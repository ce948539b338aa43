use std::collections::HashMap;

use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, where_layer, worst_case_reach};
use crate::lint::{Intent, LayerAt, Section};
use crate::prediction::{Basis, LayerAttempts};
use crate::topology::Layer;

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

/// Messages name at most this many hops and layers of a hot path.
const SHOWN: usize = 8;

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    // A layer is named the same in every finding whose hot path crosses it,
    // and hot paths share most of their layers: each is named once.
    let mut names: HashMap<(usize, usize, usize), String, foldhash::fast::RandomState> =
        HashMap::default();
    let limit = cx.max_amplification.to_string();
    for s in 0..t.services.len() {
        let count = a.worst_case[s];
        if !a.reachable[s] || count.value() <= cx.max_amplification {
            continue;
        }
        let (tail, truncated) = a.hot_path_tail(s, SHOWN);
        let retrying = |&(caller, i): &(usize, usize)| {
            t.services[caller].calls[i]
                .layers
                .iter()
                .enumerate()
                .filter(|(_, l)| l.policy.retries())
                .map(move |(li, l)| (caller, i, li, l))
        };
        for (caller, i, li, l) in tail.iter().flat_map(retrying) {
            names
                .entry((caller, i, li))
                .or_insert_with(|| where_layer(t, &t.services[caller].calls[i], l));
        }
        // The retrying layers on the shown part of the hot path, outermost first.
        let shown: Vec<(&str, &Layer, usize, usize, usize)> = tail
            .iter()
            .flat_map(retrying)
            .map(|(caller, i, li, l)| (names[&(caller, i, li)].as_str(), l, caller, i, li))
            .collect();
        let client = t.client.as_ref().filter(|c| c.policy.retries());
        let total = a.hot_retrying[s] as usize + usize::from(client.is_some());
        let outermost = match client {
            Some(_) => Some("the client layer".to_owned()),
            None => a.hot_outermost[s].map(|(c, i, li)| {
                let call = &t.services[c].calls[i];
                where_layer(t, call, &call.layers[li])
            }),
        };
        let (figure, mut message) = worst_case_reach(&count, &t.services[s].name, &limit);
        let mut route: Vec<&str> = tail
            .iter()
            .map(|&(c, i)| t.services[t.services[c].calls[i].to].name.as_str())
            .collect();
        match tail.first() {
            Some(_) if truncated => route.insert(0, "…"),
            Some(&(first, _)) => route.insert(0, &t.services[first].name),
            None => route.insert(0, &t.services[s].name),
        }
        if truncated {
            route.insert(0, &t.services[t.entry].name);
        }
        // Each layer's factor is the count the figure used: as written, or
        // what its time bound lets start.
        let factor = |l: &Layer, a: Option<LayerAttempts>| match a {
            Some(a) if a.basis == Basis::Unbounded => "unlimited".to_owned(),
            Some(a) if a.basis == Basis::TimeTypical => {
                ["~", itoa::Buffer::new().format(a.count)].concat()
            }
            Some(a) => itoa::Buffer::new().format(a.count).to_owned(),
            None => l.policy.attempts_text(),
        };
        let mut factors: Vec<String> =
            client
                .iter()
                .map(|c| factor(c, a.client_attempts))
                .chain(shown.iter().map(|(_, l, caller, i, li)| {
                    factor(l, Some(a.layer_attempts[*caller][*i][*li]))
                }))
                .collect();
        if total > factors.len() {
            factors.insert(0, format!("…({} more)", total - factors.len()));
        }
        if total > 0 {
            for piece in [
                "; hottest path ",
                &route.join(" → "),
                " multiplies ",
                &factors.join(" × "),
            ] {
                message.push_str(piece);
            }
        }
        let inner: Vec<&str> = shown
            .iter()
            .map(|(n, ..)| *n)
            .filter(|n| Some(*n) != outermost.as_deref())
            .collect();
        let help = match (&outermost, total) {
            (None, _) => "no layer on the hottest path retries: the fan-in of many paths adds up; call it from fewer places, or raise --max-amplification if that fan-in is intended".to_owned(),
            // A budget bounds the load under sustained failure (`with_budgets`)
            // but not the worst case this rule counts.
            (Some(keep), 1) => [
                "lower max_attempts at ",
                keep,
                " until the product is at most ",
                &limit,
                ", or cut the paths that fan in",
            ]
            .concat(),
            (Some(keep), _) => {
                let more = total - 1 - inner.len();
                let mut help = [
                    "retry only at ",
                    keep,
                    "; set max_attempts: 1 at ",
                    &inner.join(", "),
                ]
                .concat();
                if more > 0 {
                    for piece in [" and ", itoa::Buffer::new().format(more), " more layers above them"] {
                        help.push_str(piece);
                    }
                }
                help
            }
        };
        // Point at the retrying layer nearest the service: the last multiplier.
        let mut d = match shown.last() {
            Some((_, l, caller, i, _)) => {
                let mut d = Diagnostic::new(l.at(l.spans.max_attempts), *caller, message);
                d.call = Some(*i);
                d.layer = Some(l.name.clone());
                d
            }
            None => match client {
                Some(c) => Diagnostic::new(c.at(c.spans.max_attempts), t.entry, message),
                None => Diagnostic::new(t.services[s].pos, s, message),
            },
        };
        d = d
            .help(help)
            .label([&*figure, " attempts reach ", &t.services[s].name].concat());
        d.about = Some(s);
        // The fix of the many-layer case: `max_attempts: 1` at every inner
        // layer the message shows.
        if let (Some(keep), 2..) = (&outermost, total)
            && !inner.is_empty()
        {
            d = d.fix_with(cx, || {
                shown
                    .iter()
                    .filter(|(n, ..)| Some(*n) != outermost.as_deref())
                    .fold(
                        Intent::new(format!(
                            "set max_attempts: 1 at {} (retry only at {keep})",
                            inner.join(", ")
                        )),
                        |intent, (_, _, caller, i, li)| {
                            intent.set(
                                LayerAt::call(*caller, *i, *li),
                                Section::Retry,
                                "max_attempts",
                                "1",
                            )
                        },
                    )
            });
        }
        out.push(d);
    }
}
