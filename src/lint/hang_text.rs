//! How messages state the figures of `prediction::hang` (a callee may hang):
//! the chain of timeouts, attempts and waits behind a figure, the timeout
//! that would fit, and the defaults a figure rests on — said, never silent
//! (issue 33). Used by RL007 and RL008.

use std::time::Duration;

use crate::input::duration::format as dur;
use crate::lint::rule::edge;
use crate::policy::FOREVER;
use crate::prediction::hang::{Hang, layer_hang};
use crate::prediction::{Analysis, Basis, LayerAttempts};
use crate::topology::{Layer, LayerKind, ServiceId, Topology};

/// The figure each of `layers` wraps when the innermost wraps `last`, and
/// the figure of them all.
fn wraps(layers: &[Layer], attempts: &[LayerAttempts], last: Hang) -> (Vec<Hang>, Hang) {
    let mut w = vec![last; layers.len()];
    let mut h = last;
    for k in (0..layers.len()).rev() {
        w[k] = h;
        h = layer_hang(&layers[k], &attempts[k], h);
    }
    (w, h)
}

/// Whether layer `l`'s own timeout ends each of its attempts when what it
/// wraps takes `inner`.
fn bounded_by_timeout(l: &Layer, inner: Hang) -> bool {
    match (l.timeout, inner) {
        (Some(t), Hang::Within(d)) => t.value <= d,
        (Some(_), Hang::Unbounded { .. }) => true,
        (None, _) => false,
    }
}

/// What `layers` add up to over `last` (described by `last_text`):
/// `2s timeout × 3 attempts + 300ms of waits`, or nested,
/// `(sdk's 1s timeout × 2 attempts + 50ms of waits) × 3 attempts`.
pub(crate) fn chain(
    layers: &[Layer],
    attempts: &[LayerAttempts],
    last: Hang,
    last_text: &str,
) -> String {
    let (w, _) = wraps(layers, attempts, last);
    describe(layers, attempts, &w, 0, last_text)
}

fn describe(
    layers: &[Layer],
    attempts: &[LayerAttempts],
    w: &[Hang],
    k: usize,
    last_text: &str,
) -> String {
    let (l, a) = (&layers[k], &attempts[k]);
    let n = a.count;
    let waits = l.policy.max_wait_over(n);
    let bounded = bounded_by_timeout(l, w[k]);
    let core = match l.timeout {
        Some(t) if bounded => {
            let own = [time(t.value).as_str(), " timeout", &timeout_note(l)].concat();
            match l.kind {
                LayerKind::Via => [l.name.as_str(), "'s ", &own].concat(),
                _ => own,
            }
        }
        _ if k + 1 < layers.len() => describe(layers, attempts, w, k + 1, last_text),
        _ => last_text.to_owned(),
    };
    if n <= 1 && waits.is_zero() {
        return core;
    }
    // Only a nested chain needs brackets: `(sdk's 1s timeout × 2 attempts) × 3 attempts`.
    let nested = !bounded && k + 1 < layers.len();
    let mut s = if nested && n > 1 {
        ["(", &core, ")"].concat()
    } else {
        core
    };
    if n > 1 {
        s.push_str(match a.basis {
            Basis::Time | Basis::TimeTypical => " × up to ",
            _ => " × ",
        });
        if a.basis == Basis::Unbounded {
            s.push_str("unlimited");
        } else {
            s.push_str(itoa::Buffer::new().format(n));
        }
        // Hedged copies are summed like attempts, as the latency-based figure sums them.
        s.push_str(if l.hedging.is_some() {
            " copies"
        } else {
            " attempts"
        });
    }
    // Waits between unlimited attempts add up to the engine's ceiling: not a figure.
    if !waits.is_zero() && a.basis != Basis::Unbounded {
        s.push_str(" + ");
        s.push_str(&time(waits));
        s.push_str(" of waits");
    }
    s
}

/// ` (perTryTimeout unset: …)` after a timeout that rests on a default, so
/// no figure hides it; empty otherwise.
pub(crate) fn timeout_note(l: &Layer) -> String {
    match l.timeout_default {
        Some(why) => [" (", why, ")"].concat(),
        None => String::new(),
    }
}

/// `api → db: 2s timeout × 3 attempts + 300ms of waits`: call `i` of `s`
/// when its callee hangs.
pub(crate) fn call_chain(t: &Topology, a: &Analysis, s: ServiceId, i: usize) -> String {
    let call = &t.services[s].calls[i];
    let hang = Hang::Unbounded {
        service: s,
        call: i,
    };
    [
        edge(t, call),
        ": ".into(),
        chain(&call.layers, &a.layer_attempts[s][i], hang, "no timeout"),
    ]
    .concat()
}

/// The timeout that fits: which of `layers` to change (the outermost whose
/// timeout ends its attempts, when the innermost wraps `last`), and the
/// longest timeout for it that keeps the whole within `budget`; `None` for
/// the timeout when none does (the waits alone fill it) or no layer's
/// timeout decides the figure.
pub(crate) fn fitting_timeout(
    layers: &[Layer],
    attempts: &[LayerAttempts],
    last: Hang,
    budget: Duration,
) -> Option<(usize, Option<Duration>)> {
    let (w, total) = wraps(layers, attempts, last);
    let bl = (0..layers.len()).find(|&k| bounded_by_timeout(&layers[k], w[k]))?;
    let tmo = layers[bl].timeout?.value;
    // The whole grows by this many timeouts per unit of `tmo`: the attempts
    // of the layers down to the one that is changed.
    let many: u32 = attempts[..=bl]
        .iter()
        .fold(1u32, |m, a| m.saturating_mul(a.count.max(1)));
    let total = total.within()?;
    let fixed = total.saturating_sub(tmo.saturating_mul(many));
    let room = budget.checked_sub(fixed)?;
    let fit = room / many;
    // Whole milliseconds where that is a real timeout, else microseconds.
    let fit = if fit >= Duration::from_millis(10) {
        Duration::from_millis(fit.as_millis() as u64)
    } else {
        Duration::from_micros(fit.as_micros() as u64)
    };
    Some((bl, (!fit.is_zero()).then_some(fit)))
}

/// `no per-attempt timeout bounds api → db (RL011)`: why a figure is unbounded.
pub(crate) fn unbounded(t: &Topology, h: Hang) -> String {
    match h {
        Hang::Unbounded { service, call } => [
            "no per-attempt timeout bounds ",
            &edge(t, &t.services[service].calls[call]),
            " (RL011)",
        ]
        .concat(),
        Hang::Within(_) => String::new(),
    }
}

/// A time as messages state it: `6.301s`; `unbounded` at the engine's
/// ceiling (an `unlimited` layer nothing stops).
pub(crate) fn time(d: Duration) -> String {
    if d >= FOREVER {
        "unbounded".into()
    } else {
        dur(d)
    }
}

/// A hang figure as messages state it: `6.301s`, or the reason it has none.
pub(crate) fn figure(t: &Topology, h: Hang) -> String {
    match h {
        Hang::Within(d) => time(d),
        u => ["no bound: ", &unbounded(t, u)].concat(),
    }
}

/// ` (45ms at p99 latencies)` beside a hang figure of `c`'s, when it or a
/// service below it declares a latency; the latency-based figure is then
/// the one of before issue 33. Empty when every latency is the default.
pub(crate) fn beside(a: &Analysis, c: ServiceId, latency_figure: Duration) -> String {
    if !a.latency_declared_below[c] {
        return String::new();
    }
    let default = if a.latency_defaulted_below[c] {
        ", the 1ms default where none is declared"
    } else {
        ""
    };
    [
        " (",
        &time(latency_figure),
        " at p99 latencies",
        default,
        ")",
    ]
    .concat()
}

/// `; `api`'s own work counted at the 1ms default latency (none declared)`
/// when `c`'s own work in a figure is the default.
pub(crate) fn own_default(t: &Topology, c: ServiceId) -> String {
    let svc = &t.services[c];
    if svc.latency.pos.is_some() {
        return String::new();
    }
    [
        "; `",
        &svc.name,
        "`'s own work counted at the ",
        &dur(crate::topology::Latency::DEFAULT),
        " default latency (none declared)",
    ]
    .concat()
}

/// `` `payments`'s 900ms if `db` hangs ``: service `c`'s figure as the end of
/// a chain; just `` `db`'s 25ms `` for a service without calls.
pub(crate) fn service_work(t: &Topology, a: &Analysis, c: ServiceId) -> String {
    let h = a.hang.service[c];
    let calls = timed_calls(a, c, t.services[c].calls.len());
    let mut s = ["`", &t.services[c].name, "`'s ", &figure(t, h)].concat();
    if !calls.is_empty() && h.within().is_some() {
        s.push_str(" if ");
        s.push_str(&who_hangs(t, c, &calls));
    }
    s
}

/// The calls of `s` that add time to its figure when their callees hang.
pub(crate) fn timed_calls(a: &Analysis, s: ServiceId, n: usize) -> Vec<usize> {
    (0..n)
        .filter(|&k| a.hang.call(s, k).within().is_some_and(|d| !d.is_zero()))
        .collect()
}

/// `db hangs`, `db and cache hang`, `its callees hang`: who hangs in a
/// figure made of these calls of `s`.
pub(crate) fn who_hangs(t: &Topology, s: ServiceId, calls: &[usize]) -> String {
    let names: Vec<&str> = calls
        .iter()
        .map(|&i| t.services[t.services[s].calls[i].to].name.as_str())
        .collect();
    match names.as_slice() {
        [one] => ["`", one, "` hangs"].concat(),
        [a, b] => ["`", a, "` and `", b, "` hang"].concat(),
        _ => "its callees hang".to_owned(),
    }
}
