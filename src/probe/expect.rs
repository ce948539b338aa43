//! The CI gate: `--expect-policy TOPOLOGY --call FROM→TO [--layer NAME]`
//! holds the measured client to what the topology declares for one retry
//! layer of one call. The declaration is read with the real loader and
//! presets; the differences are `compare`'s.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::compare::{self, Comparison, Depth, Difference};
use super::infer::InferredPolicy;
use crate::policy::RetryPolicy;
use crate::topology::{self, LoadError, Presets};

/// The layer a topology declares for the probed client.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub topology: String,
    /// `web→api`.
    pub call: String,
    pub layer: String,
    pub policy: RetryPolicy,
    pub timeout: Option<Duration>,
}

/// Why the declaration could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ExpectError {
    #[error(transparent)]
    Load(#[from] Box<LoadError>),
    /// The call or layer is not in the topology, or `--call` is malformed.
    #[error("{0}")]
    Usage(String),
}

/// `FROM→TO` or `FROM->TO`.
pub(crate) fn parse_call(s: &str) -> Result<(String, String), ExpectError> {
    let (from, to) = s
        .split_once('→')
        .or_else(|| s.split_once("->"))
        .ok_or_else(|| {
            ExpectError::Usage(format!(
                "--call `{s}`: write the call as FROM→TO or FROM->TO, e.g. web->api"
            ))
        })?;
    let (from, to) = (from.trim(), to.trim());
    if from.is_empty() || to.is_empty() {
        return Err(ExpectError::Usage(format!(
            "--call `{s}`: name both services, e.g. web->api"
        )));
    }
    Ok((from.to_owned(), to.to_owned()))
}

/// Finds the declared layer: `layer` by name (`app` is the call's own
/// `retry:` and `timeout:`; a `via` layer by its name), `app` by default.
pub fn load_declared(
    path: &Path,
    call: &str,
    layer: Option<&str>,
    presets: &Presets,
) -> Result<Declared, ExpectError> {
    let (from, to) = parse_call(call)?;
    let t = topology::load(path, presets).map_err(Box::new)?;
    let names = || t.services.iter().map(|s| s.name.as_str());
    let unknown = |name: &str| {
        let hint = crate::input::error::nearest(name, names())
            .map_or(String::new(), |n| format!("; did you mean `{n}`?"));
        ExpectError::Usage(format!(
            "--call {call}: no service `{name}` in {}{hint}",
            t.file
        ))
    };
    let from_id = t.id_of(&from).ok_or_else(|| unknown(&from))?;
    let to_id = t.id_of(&to).ok_or_else(|| unknown(&to))?;
    let c = t.services[from_id]
        .calls
        .iter()
        .find(|c| c.to == to_id)
        .ok_or_else(|| {
            ExpectError::Usage(format!(
                "--call {call}: `{from}` does not call `{to}` in {}",
                t.file
            ))
        })?;
    let want = layer.unwrap_or("app");
    let l = c.layers.iter().find(|l| l.name == want).ok_or_else(|| {
        let have: Vec<&str> = c.layers.iter().map(|l| l.name.as_str()).collect();
        ExpectError::Usage(format!(
            "--layer {want}: the call {from}→{to} has the layers {}",
            have.join(", ")
        ))
    })?;
    Ok(Declared {
        topology: t.file.clone(),
        call: format!("{from}→{to}"),
        layer: l.name.clone(),
        policy: l.policy.clone(),
        timeout: l.timeout.map(|t| t.value),
    })
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectResult {
    pub topology: String,
    pub call: String,
    pub layer: String,
    /// No difference.
    pub held: bool,
    pub differences: Vec<Difference>,
    pub not_checked: Vec<String>,
}

/// Holds the measured policy to the declared layer.
pub(crate) fn check(inferred: &InferredPolicy, declared: &Declared) -> ExpectResult {
    let Comparison {
        differences,
        not_checked,
    } = compare::compare(
        inferred,
        &declared.policy,
        Some(declared.timeout),
        Depth::Gate,
    );
    ExpectResult {
        topology: declared.topology.clone(),
        call: declared.call.clone(),
        layer: declared.layer.clone(),
        held: differences.is_empty(),
        differences,
        not_checked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_with_either_arrow() {
        assert_eq!(parse_call("web→api").unwrap(), ("web".into(), "api".into()));
        assert_eq!(
            parse_call(" web -> api ").unwrap(),
            ("web".into(), "api".into())
        );
        assert!(
            parse_call("web api")
                .unwrap_err()
                .to_string()
                .contains("FROM→TO")
        );
        assert!(parse_call("->api").is_err());
    }
}
