//! Loading a topology file: read, parse, schema, graph.

use std::path::Path;

use super::model::Topology;
use super::presets::Presets;
use crate::input::error::{ErrorKind, LoadError};
use crate::input::read::{FileKind, read_text, syntax_error_in};
use crate::input::yaml::{self, Pos};

/// Loads and validates the topology at `path`.
pub fn load(path: &Path, presets: &Presets) -> Result<Topology, LoadError> {
    let shown = path.display().to_string();
    let text = read_text(path, &shown, FileKind::Topology)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "topology".into());
    load_text(text, &shown, &stem, presets)
}

/// Loads a topology from text; `file` is the name errors and findings show.
pub fn load_str(
    text: &str,
    file: &str,
    default_name: &str,
    presets: &Presets,
) -> Result<Topology, LoadError> {
    load_text(text.to_owned(), file, default_name, presets)
}

/// [`load_str`] of a text the topology keeps without a copy.
fn load_text(
    text: String,
    file: &str,
    default_name: &str,
    presets: &Presets,
) -> Result<Topology, LoadError> {
    if text.trim().is_empty() {
        return Err(LoadError::new(
            ErrorKind::Io,
            file,
            Some(Pos { line: 1, column: 1 }),
            "the file is empty",
        )
        .with_help("a topology starts with `version: 1` and a `services:` map; see examples/"));
    }
    let root = yaml::parse_config(&text).map_err(|e| syntax_error_in(file, &text, e))?;
    let mut topology = super::schema::read(file, &text, &root, presets, default_name)?;
    topology.source = std::sync::Arc::new(text);
    topology.located = Some(std::sync::Arc::new(root));
    Ok(topology)
}
