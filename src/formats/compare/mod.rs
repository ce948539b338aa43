//! A simulation beside a chaos run (`--compare`): table, markdown and JSON.

pub mod json;
pub mod markdown;
pub mod table;
