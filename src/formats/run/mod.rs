//! A chaos run, a simulation, a sweep and a calibration: table, markdown and JSON.

pub mod calibration;
pub mod containment;
pub mod formats;
pub mod goodput;
pub mod json;
pub mod markdown;
pub mod sweep_json;
pub mod sweep_markdown;
pub mod sweep_table;
pub mod table;
