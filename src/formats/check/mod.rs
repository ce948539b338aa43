//! `check` results: one file per format (table, markdown, json, sarif, github, short).

pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod short;
pub(crate) mod shown;
pub mod table;
