//! "Headroom after a surge": the recovery map of `review::recovery` as a
//! table per side — surge sizes down, loads across, trials recovered in
//! each cell, shaded by the share — with the headroom sentence above it and
//! the command that reproduces each row below.

use std::fmt::Write as _;

use super::{capital, esc, n};
use crate::review::Review;
use crate::review::recovery::{RecoveryMap, higher_rate_hint};

/// Present only when some side has a map or a reason it has none.
pub(super) fn section(out: &mut String, r: &Review) {
    if r.sides.iter().all(|s| s.recovery.is_none()) {
        return;
    }
    out.push_str("<section id=\"recovery\">\n<h2>Headroom after a surge</h2>\n");
    for side in &r.sides {
        let label = if r.sides.len() > 1 {
            format!("<strong>{}</strong>: ", esc(&capital(&side.label)))
        } else {
            String::new()
        };
        match &side.recovery {
            Some(Ok(map)) => {
                let _ = writeln!(
                    out,
                    "<p class=\"headroom\">{label}{}.</p>",
                    esc(&capital(map.headroom()))
                );
            }
            Some(Err(why)) => {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">{label}the recovery map is {}.</p>",
                    esc(why)
                );
            }
            None => {}
        }
    }
    let hint = r
        .sides
        .iter()
        .filter_map(|s| s.recovery.as_ref()?.as_ref().ok())
        .find_map(RecoveryMap::grid_below_boundary);
    if let Some(h) = hint {
        let text = esc(&higher_rate_hint(h));
        // The hint's `--rate` spans as code, as the markdown writes them.
        let mut parts = text.split('`');
        let mut html = parts.next().unwrap_or_default().to_owned();
        for (i, part) in parts.enumerate() {
            html.push_str(if i % 2 == 0 { "<code>" } else { "</code>" });
            html.push_str(part);
        }
        let _ = writeln!(out, "<p class=\"note\">{html}</p>");
    }
    out.push_str("<div class=\"sides\">\n");
    for side in &r.sides {
        if let Some(Ok(map)) = &side.recovery {
            table(
                out,
                map,
                &side.label,
                &side.check.file,
                &r.scenario.name,
                r.seed,
            );
        }
    }
    out.push_str("</div>\n</section>\n");
}

fn table(out: &mut String, map: &RecoveryMap, label: &str, file: &str, fault: &str, seed: u64) {
    let _ = writeln!(
        out,
        "<figure class=\"recovery\">\n<h3>{}</h3>\n<table class=\"recovery-map\">\n<tr><th>surge \\ load</th>",
        esc(&capital(label))
    );
    for rate in &map.rates {
        let _ = write!(out, "<th class=\"num\">{}/s</th>", n(*rate));
    }
    out.push_str("<th>recovers up to</th></tr>\n");
    // The largest surge on top, as a map's north.
    for (i, row) in map.rows.iter().enumerate().rev() {
        let own = if i == map.own { " class=\"own\"" } else { "" };
        let _ = write!(out, "<tr{own}><th class=\"num\">{}/s</th>", n(row.surge));
        for (rate, &k) in map.rates.iter().zip(&row.recovered) {
            let _ = write!(
                out,
                "<td class=\"num {}\" title=\"{} of {} trials recovered at {}/s under a surge to {}/s\">{k}/{}</td>",
                shade(k, map.trials),
                k,
                map.trials,
                n(*rate),
                n(row.surge),
                map.trials
            );
        }
        let limit = match (row.boundary, row.bracket) {
            (Some(b), _) => format!("{}/s", n(b)),
            (None, "above-hi") => format!("above {}/s", n(map.rates[map.rates.len() - 1])),
            (None, _) => format!("below {}/s", n(map.rates[0])),
        };
        let _ = writeln!(out, "<td class=\"num\">{}</td></tr>", esc(&limit));
    }
    out.push_str("</table>\n");
    let length = map
        .surge_for_s
        .map_or(String::new(), |s| format!("{} s ", n(s)));
    let _ = writeln!(
        out,
        "<figcaption>Trials recovered of {} a cell after a {length}surge (rows; the scenario's own outlined), in runs of {} s, seed {seed} (trial i uses seed + i). Rule <code>{}</code>: recovered when the mean goodput over the run's last half is at least 0.80× its level before the surge. The outlined row is <code>retrylint simulate {} --fault {} --sweep rate={}..{} --steps {} --trials {} --duration {}s --seed {seed}</code>; the others the same with the surge's rate changed.</figcaption>\n</figure>",
        map.trials,
        n(map.duration_s),
        esc(map.rule),
        esc(file),
        esc(fault),
        n(map.rates[0]),
        n(map.rates[map.rates.len() - 1]),
        map.rates.len(),
        map.trials,
        n(map.duration_s),
    );
}

/// The cell's class by the share of its trials that recovered.
fn shade(k: u32, trials: u32) -> &'static str {
    match (k, trials) {
        (_, 0) | (0, _) => "rec-none",
        (k, n) if k == n => "rec-all",
        (k, n) if 2 * k >= n => "rec-most",
        _ => "rec-some",
    }
}
