//! Fixing a topology's text in memory: check, plan, apply, and again on the
//! result until nothing more changes. A fix skipped only because it collided
//! with another is planned again on the fixed text, so one `--fix` makes
//! every fix that can be made, and a second changes nothing.

use super::edit::apply;
use super::plan::{FixNote, plan};
use crate::lint::{self, CliLevels, Config, Finding, ResolveError};
use crate::topology::{self, LoadError, Presets, Topology};

/// Passes at most: each pass makes at least one edit, and fixes only remove
/// findings, so real topologies settle in two or three.
pub(crate) const MAX_PASSES: usize = 8;

/// What fixing a text did.
#[derive(Debug, Clone, PartialEq)]
pub struct FixRun {
    /// The text with every fix made.
    pub text: String,
    /// Fixes made, in order; lines are the file's as written (columns those
    /// of the text of their pass).
    pub applied: Vec<FixNote>,
    /// Fixes that could not be made, with the reason (from the last pass).
    pub skipped: Vec<FixNote>,
    /// Passes that changed the text.
    pub passes: usize,
}

impl FixRun {
    pub fn changed(&self) -> bool {
        self.passes > 0
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The text given does not load: the ordinary input error.
    #[error(transparent)]
    Load(LoadError),
    #[error(transparent)]
    Levels(ResolveError),
    /// A bug: edits that should keep the file valid did not. Nothing is
    /// written.
    #[error(
        "the fixes of pass {pass} produced a topology that does not load ({error}); nothing was written. This is a retrylint bug: please report it with the file"
    )]
    Broke { pass: usize, error: Box<LoadError> },
}

/// Loads `text` as the topology `file` and checks it under `cli`'s levels.
pub fn check_text(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
    cli: &CliLevels,
) -> Result<(Topology, lint::CheckReport), FixError> {
    let t = topology::load_str(text, file, default_name, presets).map_err(FixError::Load)?;
    let config = Config::resolve(&t, cli).map_err(FixError::Levels)?;
    let report = super::check(&t, &config);
    Ok((t, report))
}

/// `text` (the topology `file`) with the fixes of every finding `check`
/// reports under `cli` made, repeated until nothing changes.
pub fn fix_text(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
    cli: &CliLevels,
) -> Result<FixRun, FixError> {
    fix_text_without(text, file, default_name, presets, cli, &[])
}

/// [`fix_text`] with the fixes of the rules `withheld` left out.
pub(crate) fn fix_text_without(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
    cli: &CliLevels,
    withheld: &[&str],
) -> Result<FixRun, FixError> {
    let mut run = FixRun {
        text: text.to_owned(),
        applied: Vec::new(),
        skipped: Vec::new(),
        passes: 0,
    };
    // Notes name the file as written, whichever pass planned them.
    let mut origin = super::origin::Origin::new(text);
    for pass in 1..=MAX_PASSES {
        let (_, mut report) = check_text(&run.text, file, default_name, presets, cli)?;
        if !withheld.is_empty() {
            report.findings.retain(|f| !withheld.contains(&f.code));
        }
        let p = plan(&report.findings);
        let to_original = |mut n: FixNote| {
            n.line = origin.of(n.line);
            n
        };
        run.skipped = p.skipped.into_iter().map(to_original).collect();
        if p.edits.is_empty() {
            break;
        }
        let next = apply(&run.text, &p.edits).map_err(|e| FixError::Broke {
            pass,
            error: Box::new(LoadError::new(
                topology::ErrorKind::Schema,
                file,
                None,
                e.reason,
            )),
        })?;
        // Inserted lines end as the file's lines do.
        let next = crate::fix::write::with_line_endings_of(text, next);
        if let Err(error) = topology::load_str(&next, file, default_name, presets) {
            return Err(FixError::Broke {
                pass,
                error: Box::new(error),
            });
        }
        run.applied.extend(p.applied.into_iter().map(to_original));
        origin = origin.after(&run.text, &next);
        run.text = next;
        run.passes = pass;
    }
    Ok(run)
}

/// Fixes made by [`fix_judged`], and those it held back.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedRun {
    /// The fixes that do not make the storm worse, made.
    pub run: FixRun,
    /// Fixes left out because, with them, the simulation measured the
    /// topology worse than as written: each with the measured reason.
    pub withheld: Vec<FixNote>,
    /// Why the fixes could not be judged (the simulation did not fit its
    /// budget); they are then made as the rules propose them.
    pub unjudged: Option<String>,
}

/// Marks the fixes of `findings` that the judgement held back as refused,
/// with its measured reason, so no output offers them as automatic (SARIF
/// `fixes`, PR suggestions); the finding itself stays. A withheld fix is
/// named by its rule and the finding's place in the text it was planned on.
pub fn withhold(findings: &mut [Finding], withheld: &[FixNote]) -> usize {
    let mut count = 0;
    for f in findings {
        let Some(fix) = f.fix.as_mut() else { continue };
        if fix.refused.is_some() {
            continue;
        }
        let held = withheld
            .iter()
            .find(|n| n.code == f.code && n.file == f.file && n.line == f.line);
        if let Some(n) = held {
            fix.refused = Some(format!(
                "held back: {}",
                n.reason
                    .as_deref()
                    .unwrap_or("the simulation measured it worse")
            ));
            fix.edits.clear();
            count += 1;
        }
    }
    count
}

/// [`fix_text`], judged by the simulator (`super::judge`). Each rule's fixes
/// are judged alone against the topology as written; a rule whose fixes
/// make it worse is held back with the measured reason. The fixes of the
/// rules kept are then judged together, and while together they are worse,
/// the last rule kept is held back too. Rules are held back whole: a rule's
/// fixes share their cause.
pub fn fix_judged(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
    cli: &CliLevels,
) -> Result<JudgedRun, FixError> {
    let all = fix_text(text, file, default_name, presets, cli)?;
    let unjudged = |run: FixRun, why: String| JudgedRun {
        run,
        withheld: Vec::new(),
        unjudged: Some(why),
    };
    if !all.changed() {
        return Ok(JudgedRun {
            run: all,
            withheld: Vec::new(),
            unjudged: None,
        });
    }
    let load =
        |text: &str| topology::load_str(text, file, default_name, presets).map_err(FixError::Load);
    let written = load(text)?;
    let runs = match super::judge::runs(&written, &load(&all.text)?) {
        Ok(r) => r,
        Err(why) => return Ok(unjudged(all, why)),
    };
    let before = match super::judge::measure(&written, &runs) {
        Ok(m) => m,
        Err(why) => return Ok(unjudged(all, why)),
    };
    // What makes `run` worse than as written; `Err` when it cannot be judged.
    let judge = |run: &FixRun| -> Result<Result<Vec<String>, String>, FixError> {
        if !run.changed() {
            return Ok(Ok(Vec::new()));
        }
        let t = load(&run.text)?;
        Ok(super::judge::measure(&t, &runs).map(|after| super::judge::worse(&before, &after)))
    };
    let mut codes: Vec<&'static str> = all.applied.iter().map(|n| n.code).collect();
    codes.sort_unstable();
    codes.dedup();
    let mut kept: Vec<&'static str> = Vec::new();
    let mut withheld: Vec<FixNote> = Vec::new();
    let hold_back = |code: &str, because: String, withheld: &mut Vec<FixNote>| {
        withheld.extend(
            all.applied
                .iter()
                .filter(|n| n.code == code)
                .map(|n| FixNote {
                    reason: Some(because.clone()),
                    ..n.clone()
                }),
        );
    };
    for &code in &codes {
        let others: Vec<&str> = codes.iter().copied().filter(|&c| c != code).collect();
        let alone = fix_text_without(text, file, default_name, presets, cli, &others)?;
        match judge(&alone)? {
            Ok(reasons) if reasons.is_empty() => kept.push(code),
            Ok(reasons) => hold_back(
                code,
                format!("measured worse than as written: {}", reasons.join("; ")),
                &mut withheld,
            ),
            Err(why) => return Ok(unjudged(all, why)),
        }
    }
    loop {
        let left_out: Vec<&str> = codes
            .iter()
            .copied()
            .filter(|c| !kept.contains(c))
            .collect();
        let run = fix_text_without(text, file, default_name, presets, cli, &left_out)?;
        let reasons = match judge(&run)? {
            Ok(r) => r,
            Err(why) => return Ok(unjudged(all, why)),
        };
        match (reasons.is_empty(), kept.pop()) {
            (true, popped) => {
                kept.extend(popped);
                return Ok(JudgedRun {
                    run,
                    withheld,
                    unjudged: None,
                });
            }
            (false, Some(code)) => hold_back(
                code,
                format!(
                    "not worse alone, but with the other fixes measured worse than as written: {}",
                    reasons.join("; ")
                ),
                &mut withheld,
            ),
            // Nothing kept and still worse cannot happen: no fix, no change.
            (false, None) => {
                return Ok(JudgedRun {
                    run,
                    withheld,
                    unjudged: None,
                });
            }
        }
    }
}

/// The what-if of the review page: the fixes `check --fix` would make.
#[derive(Debug, Clone)]
pub struct WhatIf {
    /// The topology with them made, loaded again; `None` when none is made.
    pub fixed: Option<Topology>,
    /// The fixes made and held back ([`fix_judged`]).
    pub judged: JudgedRun,
}

/// The what-if of the review page: the topology in `text` with every fix
/// `check --fix` would make (judged by the simulator), loaded again.
pub fn what_if(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
) -> Result<WhatIf, FixError> {
    let judged = fix_judged(text, file, default_name, presets, &CliLevels::default())?;
    let fixed = if judged.run.changed() {
        Some(
            topology::load_str(&judged.run.text, file, default_name, presets)
                .map_err(FixError::Load)?,
        )
    } else {
        None
    };
    Ok(WhatIf { fixed, judged })
}
