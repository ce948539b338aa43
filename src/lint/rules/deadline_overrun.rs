use std::collections::BTreeMap;
use std::time::Duration;

use crate::declare_rule;
use crate::input::duration::format as dur;
use crate::lint::finding::Severity;
use crate::lint::hang_text::{self, call_chain, fitting_timeout};
use crate::lint::rule::{Context, Diagnostic, call_layers, where_layer};
use crate::prediction::LayerAttempts;
use crate::prediction::hang::{Hang, layer_hang};
use crate::topology::{Layer, Pos, ServiceId};

declare_rule! {
    /// ## What it finds
    /// A per-attempt timeout shorter than the worst case of what it waits for
    /// (the callee with all its own calls and retries, or the inner retry
    /// layers), so the callee keeps working after the caller has given up (a
    /// warning); and a user request whose worst case, through every layer,
    /// exceeds the topology's `deadline` (an error). The worst case lets the
    /// callee's callees hang: each of their attempts may last its whole
    /// per-attempt timeout, whatever latency is declared, so the overrun is
    /// found from the timeouts alone. The finding sits at the inner call
    /// whose timeouts and attempts add up past the caller's timeout, where
    /// the fix goes.
    ///
    /// ## Why it matters
    /// Work nobody waits for is pure waste: the caller has timed out and, often,
    /// already retried, so the callee does the same work twice while overloaded.
    /// A worst case beyond the deadline means users see failures the retries were
    /// meant to hide, after waiting the longest.
    ///
    /// ## Example
    /// ```yaml
    /// frontend:
    ///   calls: [ { to: api, timeout: 2s } ]
    /// api:
    ///   calls:
    ///     - to: db
    ///       timeout: 2s          # × 3 attempts + waits: 6.3s if db hangs
    ///       retry: { max_attempts: 3, backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full } }
    /// ```
    ///
    /// ## Fix
    /// Make inner timeouts and retries fit inside the outer timeout (the
    /// finding names the inner timeout that fits its attempts, or fewer inner
    /// attempts), or propagate the deadline: with `deadline_propagation: true`
    /// on both caller and callee, the caller sends its remaining time and the
    /// callee starts nothing past it, so the rule is satisfied. (For the client
    /// layer: a topology `deadline` and propagation on the entry.)
    pub static RULE = {
        code: "RL007",
        name: "deadline-overrun",
        default: Warning,
        summary: "a callee outlives its caller's timeout, or a request outlives the deadline",
        check: check,
    };
}

/// A layer with a timeout and what its attempt waits for.
struct Waiter<'t> {
    /// `frontend → api`, `the sdk layer of web → api`, `the client layer`.
    name: String,
    timeout: Duration,
    /// Where the layer's own finding goes: its timeout.
    pos: Pos,
    /// The caller, and (call index, layer) unless it is the client layer.
    service: ServiceId,
    layer: Option<(usize, &'t Layer)>,
    callee: ServiceId,
    /// The layers inside this one, and their attempts.
    inner: &'t [Layer],
    inner_attempts: &'t [LayerAttempts],
    /// The latency-based worst case of what the attempt waits for.
    latency: Duration,
    /// Who must set `deadline_propagation` (the help's second fix).
    propagate: String,
}

/// The tightest waiter whose timeout a call of its callee overruns: one
/// finding per inner call, however many callers it outlives.
struct Blame<'t> {
    waiter: Waiter<'t>,
    others: usize,
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    let t = cx.topology;
    let a = cx.analysis;
    let mut blamed: BTreeMap<(ServiceId, usize), Blame> = BTreeMap::new();
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
        let (caller, callee) = (&t.services[s].name, &t.services[call.to].name);
        let propagate = match (caller_sends, callee_honours) {
            (false, false) => ["both ", caller, " and ", callee].concat(),
            (false, true) => caller.clone(),
            _ => callee.clone(),
        };
        let w = Waiter {
            name: [where_layer(t, call, layer), hang_text::timeout_note(layer)].concat(),
            timeout: timeout.value,
            pos: timeout.pos,
            service: s,
            layer: Some((i, layer)),
            callee: call.to,
            inner: &call.layers[li + 1..],
            inner_attempts: &a.layer_attempts[s][i][li + 1..],
            latency: a.inner_worst(t, s, i, li),
            propagate: ["set deadline_propagation: true on ", &propagate].concat(),
        };
        judge(cx, w, &mut blamed, out);
    }
    // The client layer waits for the entry service.
    let client_propagates = t.deadline.is_some() && t.services[t.entry].deadline_propagation;
    if let Some(client) = &t.client
        && let Some(timeout) = client.timeout
        && !client_propagates
    {
        let entry = &t.services[t.entry].name;
        let w = Waiter {
            name: "the client layer".into(),
            timeout: timeout.value,
            pos: timeout.pos,
            service: t.entry,
            layer: None,
            callee: t.entry,
            inner: &[],
            inner_attempts: &[],
            latency: a.service_worst[t.entry],
            propagate: [
                "set a topology `deadline` and deadline_propagation: true on ",
                entry,
            ]
            .concat(),
        };
        judge(cx, w, &mut blamed, out);
    }
    for ((c, j), b) in blamed {
        out.push(inner_call(cx, c, j, &b));
    }
    if let Some(deadline) = t.deadline {
        out.extend(over_deadline(cx, deadline.value, deadline.pos));
    }
}

/// Whether `w`'s timeout is overrun, and where the finding goes: at the
/// callee's call that overruns it (kept in `blamed`), at the inner layers
/// that do, or at `w` itself.
fn judge<'t>(
    cx: &Context,
    w: Waiter<'t>,
    blamed: &mut BTreeMap<(ServiceId, usize), Blame<'t>>,
    out: &mut Vec<Diagnostic>,
) {
    let (t, a) = (cx.topology, cx.analysis);
    let c = w.callee;
    let of_callee = a.hang.service[c];
    let whole = w
        .inner
        .iter()
        .zip(w.inner_attempts)
        .rev()
        .fold(of_callee, |h, (l, la)| layer_hang(l, la, h));
    match whole {
        Hang::Within(h) if h > w.timeout => {}
        Hang::Within(_) => return,
        Hang::Unbounded { .. } if w.latency > w.timeout => {
            let rest = [
                " at p99 latencies: work nobody waits for; if a callee hangs there is ",
                &hang_text::figure(t, whole),
            ]
            .concat();
            out.push(at_waiter(cx, &w, w.latency, &rest));
            return;
        }
        Hang::Unbounded { .. } => return,
    }
    let svc = &t.services[c];
    let calls_overrun = of_callee.within().is_some_and(|d| d > w.timeout)
        && svc.latency.p99 <= w.timeout
        && !svc.calls.is_empty();
    if calls_overrun {
        // The callee's call that takes longest when its callee hangs.
        let j = (0..svc.calls.len())
            .max_by_key(|&j| a.hang.call(c, j).within().unwrap_or_default())
            .unwrap_or(0);
        let key = (c, j);
        match blamed.get_mut(&key) {
            Some(b) if b.waiter.timeout <= w.timeout => b.others += 1,
            Some(b) => {
                b.others += 1;
                b.waiter = w;
            }
            None => {
                blamed.insert(
                    key,
                    Blame {
                        waiter: w,
                        others: 0,
                    },
                );
            }
        }
        return;
    }
    let whole = whole.within().unwrap_or_default();
    if of_callee.within().is_none_or(|d| d <= w.timeout) && !w.inner.is_empty() {
        out.push(at_inner_layers(cx, &w, whole));
    } else {
        // The callee's own work is over the timeout (RL013's case too).
        let calls = hang_text::timed_calls(a, c, svc.calls.len());
        let mut rest = String::new();
        if !calls.is_empty() && whole != w.latency {
            rest = [" if ", &hang_text::who_hangs(t, c, &calls)].concat();
        }
        if whole != w.latency {
            rest.push_str(&hang_text::beside(a, c, w.latency));
        }
        rest.push_str(": work nobody waits for");
        rest.push_str(&hang_text::own_default(t, c));
        out.push(at_waiter(cx, &w, whole, &rest));
    }
}

/// The finding at the call of `c` whose timeouts and attempts make `c` work
/// past the waiter's timeout.
fn inner_call(cx: &Context, c: ServiceId, j: usize, b: &Blame) -> Diagnostic {
    let (t, a) = (cx.topology, cx.analysis);
    let w = &b.waiter;
    let svc = &t.services[c];
    let call = &svc.calls[j];
    let work = a.hang.service[c].within().unwrap_or_default();
    // The calls that make up the figure, the blamed one first.
    let mut named: Vec<usize> = vec![j];
    named.extend(
        hang_text::timed_calls(a, c, svc.calls.len())
            .into_iter()
            .filter(|&k| k != j),
    );
    let more = named.len().saturating_sub(3);
    named.truncate(3);
    let mut chains = named
        .iter()
        .map(|&k| call_chain(t, a, c, k))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        chains.push_str(&format!(
            " and {more} more {}",
            if more == 1 { "call" } else { "calls" }
        ));
    }
    let who = hang_text::who_hangs(t, c, &named);
    let beside = if a.service_worst[c] != work {
        hang_text::beside(a, c, a.service_worst[c])
    } else {
        String::new()
    };
    let others = match b.others {
        0 => String::new(),
        1 => " (and 1 more timeout)".into(),
        n => format!(" (and {n} more timeouts)"),
    };
    let limit = dur(w.timeout);
    let message = [
        &chains,
        " keep `",
        &svc.name,
        &if work >= crate::policy::FOREVER {
            "` working without bound".to_owned()
        } else {
            ["` working ", &dur(work)].concat()
        },
        " if ",
        &who,
        &beside,
        ", past the ",
        &limit,
        " timeout of ",
        &w.name,
        &others,
        ": work nobody waits for",
        &hang_text::own_default(t, c),
    ]
    .concat();
    let hang = Hang::Unbounded {
        service: c,
        call: j,
    };
    let attempts = &a.layer_attempts[c][j];
    let rest = a.hang.service_without(t, c, j).within().unwrap_or_default();
    let budget = w.timeout.checked_sub(rest).filter(|b| !b.is_zero());
    let fit = budget.and_then(|b| fitting_timeout(&call.layers, attempts, hang, b));
    let (li, fixed) = match fit {
        Some((li, tmo)) => (li, tmo),
        None => (0, None),
    };
    let layer = &call.layers[li];
    let at = layer.timeout.map_or(call.pos, |x| x.pos);
    let what = where_layer(t, call, layer);
    let help = match fixed {
        Some(tmo) => {
            let p99 = t.services[call.to].latency;
            let below = if p99.pos.is_some() && p99.p99 > tmo {
                format!(
                    " — below `{}`'s p99 of {}, so rather lower max_attempts",
                    t.services[call.to].name,
                    dur(p99.p99)
                )
            } else {
                String::new()
            };
            format!(
                "lower the timeout of {what} to {} so its attempts and waits fit in {limit} with the rest of {}'s work{below}, or {}",
                dur(tmo),
                svc.name,
                w.propagate
            )
        }
        None if budget.is_none() => format!(
            "`{}`'s other work alone takes {} if its callees hang, past {limit}: shorten the timeouts and attempts of every call it makes, or {}",
            svc.name,
            dur(rest),
            w.propagate
        ),
        None => format!(
            "no timeout of {what} fits its attempts and waits in {limit}: lower max_attempts or the backoff, or {}",
            w.propagate
        ),
    };
    Diagnostic::new(at, c, message)
        .on_layer(j, layer)
        .help(help)
        .label(format!("{} if {who} > {limit}", hang_text::time(work)))
}

/// The finding at the waiter's inner layers, whose attempts add up past its
/// timeout although the callee's own work fits.
fn at_inner_layers(cx: &Context, w: &Waiter, whole: Duration) -> Diagnostic {
    let (t, a) = (cx.topology, cx.analysis);
    let c = w.callee;
    let of_callee = a.hang.service[c];
    let callee_text = hang_text::service_work(t, a, c);
    let chain = hang_text::chain(w.inner, w.inner_attempts, of_callee, &callee_text);
    let limit = dur(w.timeout);
    let fit = fitting_timeout(w.inner, w.inner_attempts, of_callee, w.timeout);
    // At the timeout that decides the figure when one does, else at the
    // attempts of the first inner layer that retries.
    let (layer, pos) = match fit {
        Some((k, _)) => {
            let l = &w.inner[k];
            (l, l.timeout.map_or(l.pos, |x| x.pos))
        }
        None => {
            let l = w
                .inner
                .iter()
                .find(|l| l.max_sends() > 1)
                .unwrap_or(&w.inner[0]);
            (l, l.at(l.spans.max_attempts))
        }
    };
    let beside = if w.latency != whole {
        hang_text::beside(a, c, w.latency)
    } else {
        String::new()
    };
    let message = format!(
        "the inner retry layers of {}: {chain} take {} at worst{beside}, past its {limit} timeout: work nobody waits for{}",
        w.name,
        hang_text::time(whole),
        hang_text::own_default(t, c)
    );
    let help = match fit {
        Some((_, Some(tmo))) => format!(
            "lower the timeout of the {} layer to {} so its attempts and waits fit in {limit}, or {}",
            layer.name,
            dur(tmo),
            w.propagate
        ),
        _ => format!(
            "fewer attempts, shorter waits or shorter timeouts in the inner layers, so they fit in {limit}, or {}",
            w.propagate
        ),
    };
    let d = Diagnostic::new(pos, w.service, message)
        .help(help)
        .label(format!("{} > {limit}", hang_text::time(whole)));
    match w.layer {
        Some((i, _)) => d.on_layer(i, layer),
        None => d,
    }
}

/// The finding at the waiter's own timeout: the callee's own work, or a
/// latency-based overrun where a hang has no bound.
fn at_waiter(cx: &Context, w: &Waiter, worst: Duration, rest: &str) -> Diagnostic {
    let t = cx.topology;
    let callee = &t.services[w.callee].name;
    let limit = dur(w.timeout);
    let waited = if w.inner.is_empty() {
        "`"
    } else {
        "the inner retry layers and `"
    };
    // Joined rather than formatted: a large topology has tens of
    // thousands of these.
    let message = [
        &w.name,
        " times out after ",
        &limit,
        " but ",
        waited,
        callee,
        "` can take ",
        &hang_text::time(worst),
        " at worst",
        rest,
    ]
    .concat();
    let help = [
        "fit the work under ",
        callee,
        " inside ",
        &limit,
        if w.layer.is_some() {
            " (fewer inner attempts or shorter inner timeouts), or "
        } else {
            " (fewer attempts or shorter timeouts below it), or "
        },
        &w.propagate,
    ]
    .concat();
    let d = Diagnostic::new(w.pos, w.service, message)
        .help(help)
        .label([&*limit, " < ", &hang_text::time(worst), " worst case"].concat());
    match w.layer {
        Some((i, layer)) => d.on_layer(i, layer),
        None => d,
    }
}

/// The entry's worst case, callees hanging, beyond the topology's deadline.
fn over_deadline(cx: &Context, deadline: Duration, pos: Pos) -> Option<Diagnostic> {
    let (t, a) = (cx.topology, cx.analysis);
    let e = t.entry;
    let (worst, beside, rest) = match a.hang.entry {
        Hang::Within(h) if h > deadline => {
            let beside = if a.entry_worst != h {
                hang_text::beside(a, e, a.entry_worst)
            } else {
                String::new()
            };
            // What adds up: the client layer around the entry's work, or
            // the entry's calls.
            let chain = match (&t.client, &a.client_attempts) {
                (Some(l), Some(la)) if l.timeout.is_some() || la.count > 1 => [
                    "the client layer: ",
                    &hang_text::chain(
                        std::slice::from_ref(l),
                        std::slice::from_ref(la),
                        a.hang.service[e],
                        &hang_text::service_work(t, a, e),
                    ),
                ]
                .concat(),
                _ => {
                    let calls = hang_text::timed_calls(a, e, t.services[e].calls.len());
                    let chains: Vec<String> = calls
                        .iter()
                        .take(3)
                        .map(|&k| call_chain(t, a, e, k))
                        .collect();
                    if chains.is_empty() {
                        String::new()
                    } else {
                        [
                            "if ",
                            &hang_text::who_hangs(t, e, &calls),
                            ", ",
                            &chains.join(", "),
                        ]
                        .concat()
                    }
                }
            };
            let chain = if chain.is_empty() {
                chain
            } else {
                [": ", &chain].concat()
            };
            (h, beside, [chain, hang_text::own_default(t, e)].concat())
        }
        Hang::Within(_) => return None,
        u if a.entry_worst > deadline => (
            a.entry_worst,
            " at p99 latencies".to_owned(),
            ["; if a callee hangs there is ", &hang_text::figure(t, u)].concat(),
        ),
        Hang::Unbounded { .. } => return None,
    };
    let worst = hang_text::time(worst);
    Some(
        Diagnostic::new(
            pos,
            e,
            [
                "a user request can take ",
                &worst,
                &beside,
                " at worst through every retry layer, beyond the ",
                &dur(deadline),
                " deadline",
                &rest,
            ]
            .concat(),
        )
        .help(
            "lower attempts or timeouts on the slowest path until its worst case fits the deadline",
        )
        .label(["worst case ", &worst].concat())
        .severity(Severity::Error),
    )
}
