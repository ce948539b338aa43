//! Named retry-policy presets: the embedded `policies/*.yaml`, plus any a user
//! adds with `--policies DIR` (a user's file replaces an embedded one of the same
//! name).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::input::embedded;
use crate::input::error::{ErrorKind, LoadError};

/// The sources of every known preset, by name.
#[derive(Debug, Clone)]
pub struct Presets {
    sources: BTreeMap<String, PresetSource>,
}

#[derive(Debug, Clone)]
pub struct PresetSource {
    /// The file name shown in errors: `policies/NAME.yaml` or the user's path.
    pub file: String,
    pub text: String,
}

impl Default for Presets {
    fn default() -> Self {
        Self::embedded()
    }
}

/// A preset file that took the name of one already known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub name: String,
    pub file: String,
    /// The file of the preset it replaces (`policies/NAME.yaml` when shipped).
    pub replaced: String,
    /// The preset it replaces is one shipped in the binary.
    pub shipped: bool,
}

impl Presets {
    /// The presets shipped in the binary.
    pub fn embedded() -> Self {
        let sources = embedded::POLICIES
            .iter()
            .map(|(name, text)| {
                let source = PresetSource {
                    file: format!("policies/{name}.yaml"),
                    text: (*text).to_owned(),
                };
                ((*name).to_owned(), source)
            })
            .collect();
        Presets { sources }
    }

    /// Adds every `*.yaml` file of `dir`, named by its file stem. Returns
    /// the files that replace a preset already known (a shipped one, or one
    /// of an earlier directory), for the user to be told.
    pub fn add_dir(&mut self, dir: &Path) -> Result<Vec<Replaced>, LoadError> {
        let shown = dir.display().to_string();
        let io = |e: std::io::Error| {
            LoadError::new(
                ErrorKind::Io,
                &shown,
                None,
                format!("cannot read preset directory: {e}"),
            )
            .with_help("pass an existing directory of NAME.yaml retry policies to --policies")
        };
        let mut paths: Vec<_> = fs::read_dir(dir)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            // Links only to files in the directory itself (see `stays_inside`).
            .filter(|p| crate::input::read::stays_inside(dir, p))
            .collect();
        paths.sort();
        let mut replaced = Vec::new();
        for path in paths {
            let file = path.display().to_string();
            let text =
                crate::input::read::read_text(&path, &file, crate::input::read::FileKind::Preset)?;
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(old) = self.sources.insert(
                name.clone(),
                PresetSource {
                    file: file.clone(),
                    text,
                },
            ) {
                let shipped = embedded::policy(&name) == Some(old.text.as_str());
                replaced.push(Replaced {
                    name,
                    file,
                    replaced: old.file,
                    shipped,
                });
            }
        }
        Ok(replaced)
    }

    pub fn get(&self, name: &str) -> Option<&PresetSource> {
        self.sources.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sources.keys().map(String::as_str)
    }
}
