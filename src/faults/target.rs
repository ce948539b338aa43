//! Which services a scenario strikes: a service by name, the entry, the
//! leaves or all, resolved against a topology with a located error for a
//! name it does not have.

use std::fmt;
use std::str::FromStr;

use crate::topology::Topology;

/// Which services a scenario hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Service(String),
    /// The topology's entry service.
    Entry,
    /// Every service that calls nobody.
    Leaves,
    All,
}

impl FromStr for Target {
    type Err = std::convert::Infallible;

    /// `entry`, `leaves`, `all`, or a service name (checked by [`Target::resolve`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim() {
            "entry" => Target::Entry,
            "leaves" => Target::Leaves,
            "all" => Target::All,
            name => Target::Service(name.to_owned()),
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Service(s) => f.write_str(s),
            Target::Entry => f.write_str("entry"),
            Target::Leaves => f.write_str("leaves"),
            Target::All => f.write_str("all"),
        }
    }
}

/// A target names a service the topology does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    pub name: String,
    pub topology: String,
    pub suggestion: Option<String>,
    /// Where the scenario file names the target; `None` for `--target`.
    pub at: Option<TargetAt>,
}

/// Where a scenario file wrote its `target:` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetAt {
    pub file: String,
    pub pos: crate::input::yaml::Pos,
}

impl UnknownTarget {
    fn message(&self) -> String {
        format!(
            "fault target `{}` is not a service of topology `{}`",
            self.name, self.topology
        )
    }

    fn help(&self) -> String {
        match &self.suggestion {
            Some(n) => format!("did you mean `{n}`?"),
            None => "use a service name, `entry`, `leaves` or `all`".into(),
        }
    }

    /// As a load error at the scenario's `target:` value, when the file named
    /// it; `None` when the target came from elsewhere.
    pub fn located(&self) -> Option<crate::topology::LoadError> {
        let at = self.at.as_ref()?;
        Some(
            crate::topology::LoadError::new(
                crate::topology::ErrorKind::Schema,
                &at.file,
                Some(at.pos),
                self.message(),
            )
            .with_help(self.help()),
        )
    }
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.help())
    }
}

impl std::error::Error for UnknownTarget {}

impl Target {
    /// The targeted services, as a flag per service of `t`.
    pub(crate) fn resolve(&self, t: &Topology) -> Result<Vec<bool>, UnknownTarget> {
        let n = t.services.len();
        Ok(match self {
            Target::All => vec![true; n],
            Target::Entry => (0..n).map(|i| t.entries.contains(&i)).collect(),
            Target::Leaves => t.services.iter().map(|s| s.calls.is_empty()).collect(),
            Target::Service(name) => {
                let Some(id) = t.id_of(name) else {
                    let suggestion = crate::input::error::nearest(
                        name,
                        t.services.iter().map(|s| s.name.as_str()),
                    )
                    .map(str::to_owned);
                    return Err(UnknownTarget {
                        name: name.clone(),
                        topology: t.name.clone(),
                        suggestion,
                        at: None,
                    });
                };
                (0..n).map(|i| i == id).collect()
            }
        })
    }
}
