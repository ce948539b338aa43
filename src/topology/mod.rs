//! Topology: schema version 1 read from YAML into validated `policy` values,
//! every value with the file, line and column it came from. The located
//! reading itself is `crate::input`'s.

mod capacity_schema;
mod containment_schema;
pub mod dns;
pub mod entries;
pub mod graph;
pub mod load;
pub mod merge;
pub mod model;
mod observed_schema;
mod policy_schema;
pub mod presets;
mod schema;
pub mod write;

pub use crate::input::{ErrorKind, LoadError};
pub use entries::EntryChoiceError;
pub use load::{load, load_str};
pub use merge::{Merged, load_with_sources};
pub use model::*;
pub use presets::Presets;
