//! The floor under everything that reads a file: a located YAML tree (every
//! node with its line and column), typed field readers over it, durations,
//! rates, lines, located errors, and reading files within their size limit.
//!
//! `topology`, `faults` and the configuration importers build on this; it
//! imports nothing of the project but `policy`-free plain types of its own.

pub mod duration;
pub mod embedded;
pub mod error;
pub mod fields;
pub mod lines;
pub mod quote;
pub mod rate;
pub mod read;
pub mod spans;

/// The located YAML tree. The reader is the workspace crate `retrylint-yaml`
/// (`crates/retrylint-yaml`: both parsers, the budget, spans and errors, with
/// their tests); its items keep their paths here. Inline rather than a
/// `yaml.rs`, so that git follows the reader's old `yaml.rs` to the crate's
/// `lib.rs`.
pub mod yaml {
    pub use retrylint_yaml::{
        Breach, Limit, Node, Pos, Span, SyntaxError, Text, Value, parse, parse_config,
    };
}

pub use error::{ErrorKind, LoadError};
pub use yaml::{Node, Pos, Value};
