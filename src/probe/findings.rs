//! The lint rules on the measured policy: the inferred call is rendered into
//! a one-call topology and checked by the same loader and rules as `check`,
//! so RL003/4/5/6/9/10/11/14 findings cannot disagree with it. Rules about
//! what a probe cannot see are set to allow: budgets (RL012) act across
//! requests, and a missing timeout (RL011) is only known when the hang
//! scenario ran.

use super::infer::InferredPolicy;
use super::render;
use crate::lint::{CliLevels, Config, Finding, Level, ResolveError};
use crate::policy::RetryPolicy;
use crate::topology::{self, ErrorKind, LoadError, Presets};

/// The findings on the measured policy.
pub(crate) fn lint(
    policy: &RetryPolicy,
    inferred: &InferredPolicy,
) -> Result<Vec<Finding>, LoadError> {
    let text = render::lint_topology(policy, inferred);
    let t = topology::load_str(&text, "probe.yaml", "probe", &Presets::embedded())?;
    let mut levels = vec![("RL012".to_owned(), Level::Allow)];
    for (code, _) in unchecked(inferred) {
        levels.push((code.to_owned(), Level::Allow));
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
    Ok(crate::fix::check(&t, &config).findings)
}

/// The rules the measurements cannot decide, each with why: a finding
/// from what the probe did not see would be a finding from absence of
/// evidence.
pub(crate) fn unchecked(inferred: &InferredPolicy) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if !inferred.timeout_probed {
        out.push(("RL011", "the hang scenario did not run".to_owned()));
    } else if inferred.timeout_cut_early {
        out.push((
            "RL011",
            "the hang runs were cut early, so a per-attempt timeout longer than the cut is not ruled out".to_owned(),
        ));
    }
    if inferred.backoff.is_none() && inferred.to_policy().retries() {
        for code in ["RL004", "RL005", "RL014"] {
            out.push((code, super::infer::UNTIMED_RETRIES.to_owned()));
        }
    }
    if let Some(f) = &inferred.backoff {
        if !f.explained {
            for code in ["RL004", "RL005", "RL014"] {
                out.push((
                    code,
                    "the waits follow no schedule the rules can read".to_owned(),
                ));
            }
        } else if let Some(above) = f.cap_unknown_above_ms {
            out.push((
                "RL014",
                format!(
                    "no cap was reached within the waits seen (longest {} ms); a cap, if any, lies above",
                    super::infer::fit::fmt_ms(above)
                ),
            ));
        }
    }
    out
}
