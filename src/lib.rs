//! retrylint: finds retry storms before production does.
//!
//! The flow is one way (DESIGN.md): `topology` turns YAML into `policy` values;
//! `lint` analyses them; `report` formats plain results. `policy` is the ground floor.

pub mod chaos;
pub mod faults;
pub mod policy;
pub mod run;
pub mod topology;
