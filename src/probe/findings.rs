//! The lint rules on the measured policy: the inferred call is rendered into
//! a one-call topology and checked by the same loader and rules as `check`,
//! so RL003/4/5/6/9/10/11/14 findings cannot disagree with it. Rules about
//! what a probe cannot see are set to allow: budgets (RL012) act across
//! requests, and a missing timeout (RL011) is only known when the hang
//! scenario ran.

use super::infer::InferredPolicy;
use super::render;
use crate::lint::{self, CliLevels, Config, Finding, Level, ResolveError};
use crate::policy::RetryPolicy;
use crate::topology::{self, ErrorKind, LoadError, Presets};

/// The findings on the measured policy.
pub fn lint(policy: &RetryPolicy, inferred: &InferredPolicy) -> Result<Vec<Finding>, LoadError> {
    let text = render::lint_topology(policy, inferred);
    let t = topology::load_str(&text, "probe.yaml", "probe", &Presets::embedded())?;
    let mut levels = vec![("RL012".to_owned(), Level::Allow)];
    if !inferred.timeout_probed {
        levels.push(("RL011".to_owned(), Level::Allow));
    }
    let cli = CliLevels {
        levels,
        ..CliLevels::default()
    };
    let config = Config::resolve(&t, &cli).map_err(|e| match e {
        ResolveError::Topology(e) => e,
        ResolveError::Cli(e) => {
            LoadError::new(ErrorKind::Schema, "probe.yaml", None, e.to_string())
        }
    })?;
    Ok(lint::check(&t, &config).findings)
}
