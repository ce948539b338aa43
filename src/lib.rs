//! retrylint: finds retry storms before production does.
//!
//! The flow is one way (DESIGN.md): `topology` turns YAML into `policy` values;
//! `lint` analyses them; `report` formats plain results. `policy` is the ground floor.

pub mod chaos;
pub mod faults;
pub mod policy;
pub mod run;
pub mod topology;

/// Temporary on the `chaos` branch: the report formatters of a run. After the
/// merge these lines move into `src/report/mod.rs`.
pub mod report {
    pub mod run_json;
    pub mod run_markdown;
    pub mod run_table;
}
