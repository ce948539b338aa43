//! `check` of a topology with several entries: each entry analysed as the
//! only one, the reports merged (docs/check.md#several-entries).
//!
//! Worst-case amplification is defined for one user request, and a request
//! arrives at one entry: a service's figure is the worst over entries, not
//! their sum. The rules that read the entry (amplification limits, the
//! deadline at the entry, the client layer in front of it) see each entry
//! in turn; a finding two entries both give is reported once.

use std::collections::HashMap;

use super::finding::{CallRef, Finding, Severity};
use super::{CheckReport, Config, Resolve, Summary, check_resolving};
use crate::topology::Topology;

/// The merged report of `t`'s entries (two or more).
pub(super) fn check_each(
    t: &Topology,
    config: &Config,
    threads: usize,
    resolve: Option<&Resolve>,
) -> CheckReport {
    let reports: Vec<CheckReport> = t
        .entries
        .iter()
        .map(|&e| check_resolving(&t.from_entry(e), config, threads, resolve))
        .collect();
    merge(t, reports)
}

/// The index of the report with the most attempts at each service (the
/// first of equals, so an entry that does not reach it never wins over one
/// that does).
fn worst_per_service(reports: &[CheckReport]) -> Vec<usize> {
    let services = reports[0].amplification.len();
    (0..services)
        .map(|s| {
            let mut best = 0;
            for (i, r) in reports.iter().enumerate().skip(1) {
                let (row, top) = (&r.amplification[s], &reports[best].amplification[s]);
                if row.reachable && (!top.reachable || row.worst_case > top.worst_case) {
                    best = i;
                }
            }
            best
        })
        .collect()
}

/// Where a finding is and what it is about: two entries giving findings
/// equal in these are giving the same finding.
type Place = (
    &'static str,
    String,
    u32,
    u32,
    String,
    Option<CallRef>,
    Option<String>,
);

fn place(f: &Finding) -> Place {
    (
        f.code,
        f.file.clone(),
        f.line,
        f.column,
        f.service.clone(),
        f.call.as_deref().cloned(),
        f.layer.clone(),
    )
}

fn merge(t: &Topology, mut reports: Vec<CheckReport>) -> CheckReport {
    let names = t.entry_names();
    let worst = worst_per_service(&reports);
    let index: HashMap<&str, usize> = t
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    // A finding is kept from the entry whose figures its service's row
    // shows (RL001's message then matches the table), else from the first
    // entry that gives it.
    let mut kept: Vec<(usize, Finding)> = Vec::new();
    let mut at: HashMap<Place, usize> = HashMap::new();
    for (e, r) in reports.iter_mut().enumerate() {
        for f in std::mem::take(&mut r.findings) {
            let p = place(&f);
            match at.get(&p) {
                None => {
                    at.insert(p, kept.len());
                    kept.push((e, f));
                }
                Some(&k) => {
                    let shows = index.get(f.service.as_str()).map(|&s| worst[s]);
                    if shows == Some(e) && shows != Some(kept[k].0) {
                        kept[k] = (e, f);
                    }
                }
            }
        }
    }
    // Each entry's list is in file order; a stable sort keeps a place's
    // findings in rule order, the first entry's before the next's.
    kept.sort_by(|(_, a), (_, b)| {
        ((a.file != t.file), &a.file, a.line, a.column, a.code).cmp(&(
            (b.file != t.file),
            &b.file,
            b.line,
            b.column,
            b.code,
        ))
    });
    let findings: Vec<Finding> = kept.into_iter().map(|(_, f)| f).collect();
    let mut summary = Summary::default();
    for f in &findings {
        match f.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            Severity::Info => summary.infos += 1,
        }
    }
    let amplification = worst
        .iter()
        .enumerate()
        .map(|(s, &e)| {
            let mut row = reports[e].amplification[s].clone();
            row.entry = Some(names[e].clone());
            row
        })
        .collect();
    let mut edges = reports[0].edges.clone();
    for r in &reports[1..] {
        for (edge, other) in edges.iter_mut().zip(&r.edges) {
            edge.hot |= other.hot;
        }
    }
    let hot_caller = worst
        .iter()
        .enumerate()
        .map(|(s, &e)| reports[e].hot_caller[s])
        .collect();
    // The slowest user request: no bound is slower than any.
    let slowest = (0..reports.len())
        .max_by_key(|&e| {
            let r = &reports[e];
            (
                r.entry_hang.is_none(),
                r.entry_hang,
                r.entry_worst,
                std::cmp::Reverse(e),
            )
        })
        .unwrap_or(0);
    let mut merged = reports.swap_remove(slowest);
    let first = &names[0];
    merged.entry = first.clone();
    merged.entries = names.clone();
    merged.worst_entry = slowest;
    merged.findings = findings;
    merged.summary = summary;
    merged.amplification = amplification;
    merged.edges = edges;
    merged.hot_caller = hot_caller;
    merged
}
