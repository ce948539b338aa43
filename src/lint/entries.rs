//! `check` of a topology with several entries: each entry analysed as the
//! only one, the reports merged (docs/check.md#several-entries).
//!
//! Worst-case amplification is defined for one user request, and a request
//! arrives at one entry: a service's figure is the worst over entries, not
//! their sum. The rules that read the entry (amplification limits, the
//! deadline at the entry, the client layer in front of it) see each entry
//! in turn; a finding two entries both give is reported once.

use std::collections::HashMap;
use std::time::Duration;

use super::finding::{CallRef, Finding, Severity};
use super::{CheckReport, Config, Resolve, Summary, check_resolving};
use crate::topology::Topology;

/// Work a check of several entries may do, in services and calls visited
/// over all its entries: each entry costs one whole check, so a file of
/// thousands of services nobody calls would otherwise take time quadratic
/// in its size. Some 25 entries of a 10,000-service topology.
pub(crate) const MAX_ENTRY_WORK: usize = 1_000_000;

/// A topology whose entries cost more to check than [`MAX_ENTRY_WORK`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{file}: checking each of the {entries} entry services over the topology ({size} services and calls) would visit {work} in all, over the limit of {limit}; name the few services that receive user traffic with `entry: [a, b]`, or check one with --entry NAME",
    limit = MAX_ENTRY_WORK
)]
pub struct TooManyEntries {
    pub file: String,
    pub entries: usize,
    pub size: usize,
    pub work: usize,
}

/// Whether `t`'s entries can be checked within [`MAX_ENTRY_WORK`]; one
/// entry always can.
pub fn affordable(t: &Topology) -> Result<(), TooManyEntries> {
    if t.entries.len() < 2 {
        return Ok(());
    }
    let size = t.services.len() + t.calls().count();
    let work = size.saturating_mul(t.entries.len());
    if work > MAX_ENTRY_WORK {
        return Err(TooManyEntries {
            file: t.file.clone(),
            entries: t.entries.len(),
            size,
            work,
        });
    }
    Ok(())
}

/// The merged report of `t`'s entries (two or more). Each entry's report
/// is folded in as it is made: only one is held beside the merge.
pub(super) fn check_each(
    t: &Topology,
    config: &Config,
    threads: usize,
    resolve: Option<&Resolve>,
) -> CheckReport {
    let mut merge: Option<Merge> = None;
    for (e, &entry) in t.entries.iter().enumerate() {
        let r = check_resolving(&t.seen_from(entry), config, threads, resolve);
        match merge.as_mut() {
            None => merge = Some(Merge::new(r)),
            Some(m) => m.add(e, r),
        }
    }
    match merge {
        Some(m) => m.finish(t),
        None => check_resolving(t, config, threads, resolve),
    }
}

/// The reports folded so far.
struct Merge {
    /// The first entry's report: the fields every entry shares.
    base: CheckReport,
    /// Per service, the entry whose row is shown (the most attempts; the
    /// first of equals, so one that does not reach it never wins over one
    /// that does).
    shown: Vec<usize>,
    /// Every finding kept, with the entry it is from.
    kept: Vec<(usize, Finding)>,
    at: HashMap<Place, usize>,
    /// Services by name, for the findings' rows.
    index: HashMap<String, usize>,
    /// The slowest user request: its entry and figures.
    slowest: (usize, Duration, Option<Duration>, Option<CallRef>),
}

impl Merge {
    fn new(mut base: CheckReport) -> Merge {
        let findings = std::mem::take(&mut base.findings);
        let mut m = Merge {
            shown: vec![0; base.amplification.len()],
            kept: Vec::with_capacity(findings.len()),
            at: HashMap::with_capacity(findings.len()),
            index: base
                .amplification
                .iter()
                .enumerate()
                .map(|(i, row)| (row.service.clone(), i))
                .collect(),
            slowest: (
                0,
                base.entry_worst,
                base.entry_hang,
                base.entry_untimed.clone(),
            ),
            base,
        };
        let mut places = Places::default();
        for f in findings {
            m.at.insert(places.of(&f), m.kept.len());
            m.kept.push((0, f));
        }
        m
    }

    fn add(&mut self, e: usize, mut r: CheckReport) {
        for (s, row) in std::mem::take(&mut r.amplification).into_iter().enumerate() {
            let top = &self.base.amplification[s];
            if row.reachable && (!top.reachable || row.worst_case > top.worst_case) {
                self.base.amplification[s] = row;
                self.base.hot_caller[s] = r.hot_caller[s];
                self.shown[s] = e;
            }
        }
        for (edge, other) in self.base.edges.iter_mut().zip(&r.edges) {
            edge.hot |= other.hot;
        }
        // No bound is slower than any.
        let slower =
            |hang: Option<Duration>,
             worst: Duration,
             than: &(usize, Duration, Option<Duration>, Option<CallRef>)| {
                (hang.is_none(), hang, worst) > (than.2.is_none(), than.2, than.1)
            };
        if slower(r.entry_hang, r.entry_worst, &self.slowest) {
            self.slowest = (e, r.entry_worst, r.entry_hang, r.entry_untimed.take());
        }
        // A finding is kept from the entry whose figures its service's row
        // shows (RL001's message then matches the table), else from the
        // first entry that gives it. Rows are settled before findings are
        // weighed: this entry may just have taken a row.
        let mut places = Places::default();
        for f in std::mem::take(&mut r.findings) {
            let p = places.of(&f);
            match self.at.get(&p) {
                None => {
                    self.at.insert(p, self.kept.len());
                    self.kept.push((e, f));
                }
                Some(&k) => {
                    if self.shows(&f) == Some(e)
                        && self.shows(&self.kept[k].1) != Some(self.kept[k].0)
                    {
                        self.kept[k] = (e, f);
                    }
                }
            }
        }
    }

    /// The entry whose row the finding's service shows.
    fn shows(&self, f: &Finding) -> Option<usize> {
        self.index.get(&f.service).map(|&s| self.shown[s])
    }

    fn finish(self, t: &Topology) -> CheckReport {
        let Merge {
            mut base,
            shown,
            mut kept,
            slowest,
            ..
        } = self;
        let names = t.entry_names();
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
        base.findings = kept.into_iter().map(|(_, f)| f).collect();
        let mut summary = Summary::default();
        for f in &base.findings {
            match f.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.infos += 1,
            }
        }
        base.summary = summary;
        for (row, &e) in base.amplification.iter_mut().zip(&shown) {
            row.entry = Some(names[e].clone());
        }
        (
            base.worst_entry,
            base.entry_worst,
            base.entry_hang,
            base.entry_untimed,
        ) = slowest;
        base.entry = names[0].clone();
        base.entries = names;
        base
    }
}

/// Where a finding is and what it is about, and which of the entry's
/// findings there it is (a rule may give two at one place): two entries
/// giving findings equal in these are giving the same finding.
type Place = (
    &'static str,
    String,
    u32,
    u32,
    String,
    Option<CallRef>,
    Option<String>,
    u32,
);

/// Numbers each finding of one entry's list among the list's findings at
/// its place.
#[derive(Default)]
struct Places(HashMap<Place, u32>);

impl Places {
    fn of(&mut self, f: &Finding) -> Place {
        let p = place(f, 0);
        let n = self.0.entry(p.clone()).or_insert(0);
        *n += 1;
        place(f, *n - 1)
    }
}

fn place(f: &Finding, nth: u32) -> Place {
    (
        f.code,
        f.file.clone(),
        f.line,
        f.column,
        f.service.clone(),
        f.call.as_deref().cloned(),
        f.layer.clone(),
        nth,
    )
}
