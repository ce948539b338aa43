//! `retrylint import`: the merged model (a topology, if given, and every
//! `--from` source) written as an editable topology.

use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome, emit, presets};
use retrylint::topology::write;

#[derive(Args)]
pub struct ImportArgs {
    /// A hand topology to merge the sources into (optional with traces).
    pub topology: Option<PathBuf>,
    #[command(flatten)]
    pub sources: super::sources::SourceArgs,
    /// Write the topology here instead of standard output (`-`: standard
    /// output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    pub policies: Vec<PathBuf>,
}

pub fn import(args: ImportArgs) -> Result<Outcome, Failure> {
    let presets = presets(&args.policies)?;
    let merged = super::sources::load(args.topology.as_deref(), &args.sources, &presets)?;
    let text = write::write(&merged.topology, &merged.measured);
    match &args.output {
        Some(path) if path.as_os_str() != "-" => std::fs::write(path, text)
            .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))?,
        _ => emit(&text),
    }
    Ok(Outcome::Clean)
}
