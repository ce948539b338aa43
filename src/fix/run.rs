//! Fixing a topology's text in memory: check, plan, apply, and again on the
//! result until nothing more changes. A fix skipped only because it collided
//! with another is planned again on the fixed text, so one `--fix` makes
//! every fix that can be made, and a second changes nothing.

use super::edit::apply;
use super::plan::{FixNote, plan};
use crate::lint::{self, CliLevels, Config, ResolveError};
use crate::topology::{self, LoadError, Presets, Topology};

/// Passes at most: each pass makes at least one edit, and fixes only remove
/// findings, so real topologies settle in two or three.
pub const MAX_PASSES: usize = 8;

/// What fixing a text did.
#[derive(Debug, Clone, PartialEq)]
pub struct FixRun {
    /// The text with every fix made.
    pub text: String,
    /// Fixes made, in order; positions are in the text of their pass.
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
    let report = lint::check(&t, &config);
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
    let mut run = FixRun {
        text: text.to_owned(),
        applied: Vec::new(),
        skipped: Vec::new(),
        passes: 0,
    };
    for pass in 1..=MAX_PASSES {
        let (_, report) = check_text(&run.text, file, default_name, presets, cli)?;
        let p = plan(&report.findings);
        run.skipped = p.skipped;
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
        run.applied.extend(p.applied);
        run.text = next;
        run.passes = pass;
    }
    Ok(run)
}

/// The what-if of the review page: the topology in `text` with every fix
/// made, loaded again, beside the run that made them; `None` when no fix
/// changes anything.
pub fn what_if(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
) -> Result<Option<(Topology, FixRun)>, FixError> {
    let run = fix_text(text, file, default_name, presets, &CliLevels::default())?;
    if !run.changed() {
        return Ok(None);
    }
    let t = topology::load_str(&run.text, file, default_name, presets).map_err(FixError::Load)?;
    Ok(Some((t, run)))
}
