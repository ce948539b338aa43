//! What contained the storm in a run, in words both run formats print:
//! per layer, its circuit breaker (short-circuited calls, transitions with
//! their times) and its hedging (extra copies, cancelled copies), and what
//! the breakers saved against the same run without them.

use super::table::ms;
use crate::run::{LayerReport, RunReport};

/// At most this many transitions are spelled out per breaker.
const SHOWN_TRANSITIONS: usize = 8;

/// One line per layer with a breaker or hedging, then the saving.
pub(crate) fn lines(r: &RunReport) -> Vec<String> {
    let mut out = Vec::new();
    let client = r
        .end_to_end
        .client
        .iter()
        .map(|l| ("users".to_owned(), "the entry".to_owned(), l));
    let calls = r.services.iter().flat_map(|s| {
        s.calls.iter().flat_map(move |c| {
            c.layers
                .iter()
                .map(move |l| (s.service.clone(), c.to.clone(), l))
        })
    });
    for (from, to, layer) in client.chain(calls) {
        out.extend(layer_lines(&from, &to, layer));
    }
    if let Some(e) = r.breakers {
        out.push(format!(
            "circuit breakers: {} attempts in all, {} in the same run without them ({} saved)",
            e.attempts, e.attempts_without_breakers, e.saved
        ));
    }
    out
}

fn layer_lines(from: &str, to: &str, l: &LayerReport) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(b) = &l.breaker {
        let mut line = format!(
            "{from} → {to} {}: breaker short-circuited {}; opened {}, half-open {}, closed {}",
            l.layer, b.short_circuited, b.opened, b.half_opened, b.closed
        );
        if !b.transitions.is_empty() {
            let shown: Vec<String> = b
                .transitions
                .iter()
                .take(SHOWN_TRANSITIONS)
                .map(|t| format!("{} at {}", t.to, ms(t.at_ms)))
                .collect();
            let more = b.transitions.len().saturating_sub(SHOWN_TRANSITIONS);
            line += &format!("; {}", shown.join(", "));
            if more > 0 {
                line += &format!(", … {more} more");
            }
        }
        out.push(line);
    }
    if let Some(h) = &l.hedging {
        out.push(format!(
            "{from} → {to} {}: hedging sent {} extra copies, cancelled {}",
            l.layer, h.hedges, h.cancelled
        ));
    }
    out
}
