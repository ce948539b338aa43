//! Several entry services: the one a run drives load through, and the
//! single-entry views the static analysis takes of each (docs/topology.md#entries).

use super::model::{ServiceId, Topology};

/// Why a run cannot take the entry it was given (or none). The messages
/// name no flag: each command says how it is chosen there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryChoiceError {
    /// Several entries and none chosen: a run sends each user request to
    /// one service, and splitting the load would be a guess of the mix.
    #[error("the topology has {} entry services ({})", .entries.len(), .entries.join(", "))]
    Ambiguous { entries: Vec<String> },
    /// The name given is not one of the entries.
    #[error("{}", not_an_entry(.name, .entries, *.is_service))]
    NotAnEntry {
        name: String,
        entries: Vec<String>,
        is_service: bool,
    },
}

fn not_an_entry(name: &str, entries: &[String], is_service: bool) -> String {
    let what = if is_service {
        format!("`{name}` is a service but not an entry")
    } else {
        format!("there is no service `{name}`")
    };
    format!("{what}; the entries are {}", entries.join(", "))
}

impl Topology {
    /// The names of the entries, in order.
    pub(crate) fn entry_names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|&e| self.services[e].name.clone())
            .collect()
    }

    /// This topology seen from `entry` alone (one of `entries`).
    pub(crate) fn seen_from(&self, entry: ServiceId) -> Topology {
        let mut t = self.clone();
        t.entry = entry;
        t.entries = vec![entry];
        t
    }

    /// Makes `name` (one of `entries`) the entry and keeps the others
    /// after it: for a topology that is passed on whole (`export` ships the
    /// file, and its driver is told which entry it drives).
    pub fn lead_entry(&mut self, name: &str) -> Result<(), EntryChoiceError> {
        let all = self.entries.clone();
        self.choose_entry(Some(name))?;
        let e = self.entry;
        self.entries = std::iter::once(e)
            .chain(all.into_iter().filter(|&o| o != e))
            .collect();
        Ok(())
    }

    /// Keeps only the entry `name` (any of `entries`); with `None`, a
    /// topology of one entry is taken as it is and one of several refused.
    pub fn choose_entry(&mut self, name: Option<&str>) -> Result<(), EntryChoiceError> {
        let Some(name) = name else {
            return if self.entries.len() > 1 {
                Err(EntryChoiceError::Ambiguous {
                    entries: self.entry_names(),
                })
            } else {
                Ok(())
            };
        };
        match self
            .entries
            .iter()
            .copied()
            .find(|&e| self.services[e].name == name)
        {
            Some(e) => {
                self.entry = e;
                self.entries = vec![e];
                Ok(())
            }
            None => Err(EntryChoiceError::NotAnEntry {
                name: name.to_owned(),
                entries: self.entry_names(),
                is_service: self.id_of(name).is_some(),
            }),
        }
    }
}
