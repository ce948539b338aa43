//! Rule levels: defaults, then the topology's `lint:` section, then the command
//! line (`--deny/--warn/--allow CODE`, `--fail-on`, `--max-amplification`).

use crate::topology::{ErrorKind, LevelSetting, LoadError, Topology};

use super::finding::Severity;
use super::rules::{RULES, find_rule};

/// A level a rule can be set to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Report(Severity),
    Allow,
}

impl From<LevelSetting> for Level {
    fn from(s: LevelSetting) -> Self {
        match s {
            LevelSetting::Error => Level::Report(Severity::Error),
            LevelSetting::Warning => Level::Report(Severity::Warning),
            LevelSetting::Info => Level::Report(Severity::Info),
            LevelSetting::Allow => Level::Allow,
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, Default)]
pub struct CliLevels {
    /// (code or name, level) in the order given.
    pub levels: Vec<(String, Level)>,
    pub fail_on: Option<Severity>,
    pub max_amplification: Option<f64>,
}

/// Resolved settings for one run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Per rule, in `RULES` order.
    pub levels: Vec<Level>,
    /// Per rule: whether the topology's `lint:` or the command line set its
    /// level (then a rule's own escalation no longer applies).
    pub(crate) set_by_user: Vec<bool>,
    /// Findings at or above this fail the check (exit 1).
    pub fail_on: Severity,
    pub max_amplification: f64,
    /// Whether findings carry their fixes as edits (JSON, SARIF, `--fix`,
    /// the review's what-if). Resolving them costs a walk of the located
    /// tree per fix; the table, GitHub and markdown formats do not show them.
    pub resolve_fixes: bool,
}

pub(crate) const DEFAULT_MAX_AMPLIFICATION: f64 = 10.0;

/// Why the command line's levels are wrong: a usage error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule `{0}`; `retrylint rules` lists them")]
pub struct UnknownRule(pub String);

impl Config {
    pub fn resolve(t: &Topology, cli: &CliLevels) -> Result<Config, ResolveError> {
        let mut levels: Vec<Level> = RULES.iter().map(|r| Level::Report(r.default)).collect();
        let mut set_by_user = vec![false; RULES.len()];
        for (code, setting) in &t.lint.levels {
            let i = find_rule(&code.value).ok_or_else(|| {
                ResolveError::Topology(
                    LoadError::new(
                        ErrorKind::Schema,
                        &t.file,
                        Some(code.pos),
                        format!("unknown rule `{}` in `lint:`", code.value),
                    )
                    .with_help(suggest(&code.value)),
                )
            })?;
            levels[i] = (*setting).into();
            set_by_user[i] = true;
        }
        for (code, level) in &cli.levels {
            let i = find_rule(code).ok_or_else(|| ResolveError::Cli(UnknownRule(code.clone())))?;
            levels[i] = *level;
            set_by_user[i] = true;
        }
        let fail_on = cli
            .fail_on
            .or(t.lint.fail_on.and_then(|f| match Level::from(f.value) {
                Level::Report(s) => Some(s),
                Level::Allow => None,
            }))
            .unwrap_or(Severity::Error);
        let max_amplification = cli
            .max_amplification
            .or(t.lint.max_amplification.map(|m| m.value))
            .unwrap_or(DEFAULT_MAX_AMPLIFICATION);
        Ok(Config {
            levels,
            set_by_user,
            fail_on,
            max_amplification,
            resolve_fixes: true,
        })
    }
}

fn suggest(code: &str) -> String {
    let names = RULES.iter().flat_map(|r| [r.code, r.name]);
    match crate::input::error::nearest(code, names) {
        Some(n) => format!("did you mean `{n}`?"),
        None => "use a code such as RL004 or a name such as missing-jitter; `retrylint rules` lists them".into(),
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Topology(LoadError),
    #[error(transparent)]
    Cli(UnknownRule),
}
