//! The plain results of a run, shared by the chaos harness and the simulator
//! and read by the reporters: the report types (DESIGN's chaos/simulate JSON
//! contract), latency histograms, the load settings, and `--expect` gates over a report.
//!
//! Nothing here runs anything: `chaos` and `sim` fill these types in, `report`
//! formats them.

pub mod expect;
pub mod latency;
pub mod load;
pub mod report;

pub use expect::{ExpectError, ExpectErrorKind, Expectation, evaluate_all};
pub use latency::{Latency, new_histogram};
pub use load::{Arrival, LoadSettings, LoadSettingsError};
pub use report::*;
