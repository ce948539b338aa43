//! retrylint: finds retry storms before production does.
//!
//! The flow is one way (DESIGN.md): `topology` turns YAML into `policy` values;
//! `lint` analyses them; `report` formats plain results. `policy` is the ground floor.

pub mod lint;
pub mod policy;
pub mod report;
pub mod topology;
