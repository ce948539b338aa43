//! How figures read in the human formats (table, markdown, github): counts of
//! findings, the verdict, amplification factors and durations. Written once so
//! the terminal, the PR comment and the annotations say the same thing.

use std::time::Duration;

use crate::input::duration;
use crate::lint::{AmplificationRow, CheckReport, Summary};
use crate::policy::FOREVER;

/// `11 errors, 26 warnings`, `1 warning, 2 infos`; empty when there is nothing.
pub(crate) fn counts(s: &Summary) -> String {
    let mut parts = Vec::new();
    for (n, one, many) in [
        (s.errors, "error", "errors"),
        (s.warnings, "warning", "warnings"),
        (s.infos, "info", "infos"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    }
    parts.join(", ")
}

/// `fails at --fail-on error` or `passes at --fail-on error`.
pub fn gate(r: &CheckReport) -> String {
    let verb = if r.failed() { "fails" } else { "passes" };
    format!("{verb} at --fail-on {}", r.fail_on.as_str())
}

/// The one-line summary: `3 errors, 9 warnings; fails at --fail-on error`, or
/// `no findings`.
pub(crate) fn summary_line(r: &CheckReport) -> String {
    let counts = counts(&r.summary);
    if counts.is_empty() {
        "no findings".into()
    } else {
        format!("{counts}; {}", gate(r))
    }
}

/// A worst-case amplification: `486×`, exact however large; `≈3.4e38×` once
/// the count saturated.
pub fn worst_case(row: &AmplificationRow) -> String {
    row.worst_case_text()
}

/// A factor that may be fractional (`with_budgets`): `343.8×`, `1.1×`, `2×`;
/// below 1 (`with_breakers`) to three significant digits: `0.0121×`.
pub fn factor(x: f64) -> String {
    // Most factors are whole (a table has one per service and column):
    // written with integers alone, as the general case would write them.
    if x.fract() == 0.0 && (1.0..1e15).contains(&x) {
        return [itoa::Buffer::new().format(x as u64), "×"].concat();
    }
    any_factor(x)
}

/// [`factor`] for any value.
fn any_factor(x: f64) -> String {
    if !x.is_finite() || x >= 1e15 {
        format!("{x:.1e}×")
    } else if x > 0.0 && x < 1e-6 {
        format!("{x:.2e}×")
    } else {
        let decimals = if x > 0.0 && x < 1.0 {
            (2.0 - x.log10().floor()) as usize
        } else {
            2
        };
        let s = format!("{x:.decimals$}");
        format!("{}×", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// The amplification limit as written: `10×`, `12.5×`.
pub fn limit(r: &CheckReport) -> String {
    factor(r.max_amplification)
}

/// A worst-case time in milliseconds as the schema writes durations (docs/topology.md): `25ms`,
/// `6.21s`; `unbounded` at the engine's ceiling (a hang nobody times out).
pub fn millis(ms: f64) -> String {
    let d = if ms.is_finite() && ms >= 0.0 {
        Duration::from_micros((ms * 1000.0).round().min(u64::MAX as f64) as u64)
    } else {
        FOREVER
    };
    if d >= FOREVER {
        "unbounded".into()
    } else {
        duration::format(d)
    }
}

/// A time as the human formats write it: `6.21s`, `unbounded` at the
/// engine's ceiling.
fn time(d: Duration) -> String {
    if d >= FOREVER {
        "unbounded".into()
    } else {
        duration::format(d)
    }
}

/// `a user request to `web` takes 8.2s at worst through every retry layer
/// if its callees hang (910ms at p99 latencies; deadline 5s)`; without a
/// bound, the call that has no timeout.
pub(crate) fn request_line(r: &CheckReport) -> String {
    let worst = match (r.entry_hang, &r.entry_untimed) {
        (Some(d), _) if d >= FOREVER => "has no bound on its time".to_owned(),
        (Some(d), _) => format!("takes {} at worst", time(d)),
        (None, Some(c)) => format!(
            "has no bound on its time if a callee hangs ({} → {} has no timeout: RL011)",
            c.from, c.to
        ),
        (None, None) => "has no bound on its time".to_owned(),
    };
    let hang = if r.entry_hang.is_some_and(|d| d < FOREVER) {
        " if its callees hang"
    } else {
        ""
    };
    let mut notes = Vec::new();
    if r.latency_declared && r.entry_hang != Some(r.entry_worst) {
        notes.push(format!("{} at p99 latencies", time(r.entry_worst)));
    }
    if let Some(d) = r.deadline {
        notes.push(format!("deadline {}", duration::format(d)));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    let entry = r.entries.get(r.worst_entry).unwrap_or(&r.entry);
    let of = if r.entries.len() > 1 {
        format!(" (the slowest of {} entries)", r.entries.len())
    } else {
        String::new()
    };
    format!("a user request to `{entry}`{of} {worst} through every retry layer{hang}{notes}")
}

/// A row's worst response as the tables print it: the figure when callees
/// hang, `no timeout` where none bounds it (RL011's finding), and the p99
/// figure beside it where the service or one below it declares a latency:
/// `6.3s (40ms at p99)`.
pub fn response(row: &AmplificationRow) -> String {
    let hang = match row.worst_response_if_hang_ms {
        Some(ms) => millis(ms),
        None => "no timeout".to_owned(),
    };
    if row.latency_declared && row.worst_response_if_hang_ms != Some(row.worst_response_ms) {
        [
            hang.as_str(),
            " (",
            &millis(row.worst_response_ms),
            " at p99)",
        ]
        .concat()
    } else {
        hang
    }
}

/// What the worst-response column means and which defaults it rests on.
pub(crate) fn response_note(r: &CheckReport) -> String {
    let mut s =
        String::from("worst response: when callees hang, each attempt lasting its whole timeout");
    if r.latency_declared {
        s.push_str("; in brackets, at the declared p99 latencies");
    }
    if r.latency_defaulted {
        s.push_str("; own work at the 1ms default latency where none is declared");
    }
    if r.amplification
        .iter()
        .any(|row| row.worst_response_if_hang_ms.is_none())
    {
        s.push_str("; `no timeout`: a call on the way has none (RL011)");
    }
    s
}

/// What the optional amplification columns mean, one line each (none when
/// neither is shown): `with breakers` needs a rate, and says which.
pub(crate) fn column_notes(r: &CheckReport) -> Vec<String> {
    let mut lines = Vec::new();
    if r.has_breakers {
        lines.push(format!(
            "with breakers: the same under a sustained outage once every circuit breaker is open, half-open probes counted, at {} user requests/s into `{}`",
            factor(r.reference_rate).trim_end_matches('×'),
            r.entry
        ));
    }
    if r.has_hedging {
        lines.push(
            "healthy: attempts per user request when nothing fails, each hedged call counted at its expected copies".to_owned(),
        );
    }
    lines
}

/// The reachable service the most attempts reach (the first of equals).
pub(crate) fn worst_service(r: &CheckReport) -> Option<&AmplificationRow> {
    r.amplification
        .iter()
        .filter(|row| row.reachable)
        .reduce(|best, row| {
            if row.worst_case > best.worst_case {
                row
            } else {
                best
            }
        })
}

/// What the simulation of a review side measured, for its verdict line:
/// `(collapsed, text)`, the text like `simulated 503-burst: 96.0 % of user
/// requests succeeded, recovered at once`. `None` without a simulation.
pub(crate) fn measured_outcome(
    sim: Option<&crate::run::RunReport>,
    scenario: &str,
) -> Option<(bool, String)> {
    let run = sim?;
    let verdict = run.goodput.as_ref().and_then(|g| g.verdict.as_ref());
    let collapsed = verdict.is_some_and(|v| v.state != "recovered");
    let after = match verdict {
        Some(_) => format!(", {}", crate::formats::compare::table::verdict(verdict)),
        None => String::new(),
    };
    Some((
        collapsed,
        format!(
            "simulated {scenario}: {:.1} % of user requests succeeded{after}",
            100.0 * run.end_to_end.success_ratio()
        ),
    ))
}

/// The review's line on fixes held back from its what-if.
pub fn held_back(n: usize) -> String {
    format!(
        "{n} fix{} held back from the what-if: with {} the simulator measured the topology worse than as written (`retrylint check --fix` lists the figures)",
        if n == 1 { "" } else { "es" },
        if n == 1 { "it" } else { "them" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_naturally() {
        let s = |errors, warnings, infos| Summary {
            errors,
            warnings,
            infos,
        };
        assert_eq!(counts(&s(3, 9, 0)), "3 errors, 9 warnings");
        assert_eq!(counts(&s(1, 0, 2)), "1 error, 2 infos");
        assert_eq!(counts(&s(0, 1, 0)), "1 warning");
        assert_eq!(counts(&s(0, 0, 0)), "");
    }

    #[test]
    fn factors_and_times() {
        assert_eq!(factor(2.0), "2×");
        assert_eq!(factor(1.0), "1×");
        assert_eq!(factor(0.0), "0×");
        assert_eq!(factor(999_999_999_999_999.0), "999999999999999×");
        assert_eq!(factor(1e15), "1.0e15×");
        for x in (1..2000u64).chain([12_345, 1 << 40, 999_999_999_999_999]) {
            let x = x as f64;
            assert_eq!(factor(x), any_factor(x), "{x}");
        }
        assert_eq!(factor(343.8), "343.8×");
        assert_eq!(factor(0.1 * 11.0), "1.1×");
        assert_eq!(factor(1.21), "1.21×");
        assert_eq!(factor(1.8e19), "1.8e19×");
        assert_eq!(factor(0.011), "0.011×");
        assert_eq!(factor(0.0121), "0.0121×");
        assert_eq!(factor(0.3), "0.3×");
        assert_eq!(factor(0.999_9), "1×");
        assert_eq!(factor(1.234e-9), "1.23e-9×");
        assert_eq!(millis(25.0), "25ms");
        assert_eq!(millis(6210.0), "6.21s");
        assert_eq!(millis(0.5), "500us");
        assert_eq!(millis(FOREVER.as_secs_f64() * 1000.0), "unbounded");
        assert_eq!(millis(f64::INFINITY), "unbounded");
    }
}
