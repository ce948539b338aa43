//! A chaos run, a simulation, a sweep and a calibration: table, markdown and JSON.

pub mod calibration;
pub(crate) mod containment;
pub mod formats;
pub mod goodput;
pub mod json;
pub mod markdown;
pub(crate) mod sweep_json;
pub(crate) mod sweep_markdown;
pub(crate) mod sweep_table;
pub mod table;
