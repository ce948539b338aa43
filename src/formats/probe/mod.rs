//! What `probe` measured of a client: table, markdown and JSON.

pub mod json;
pub mod markdown;
pub mod table;
