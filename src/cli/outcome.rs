//! How a command ends: the documented exit codes, input errors rendered with
//! the culprit's line, and printing that tolerates a closed pipe.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use retrylint::formats;
use retrylint::input::read::{FileKind, may_quote, read_text};
use retrylint::topology::{ErrorKind, LoadError, Presets};

/// How a command ended, mapped to the documented exit codes.
pub enum Outcome {
    Clean,
    Failed,
    Interrupted,
}

/// An error that is the user's input, not a bug: exit 2.
pub enum Failure {
    Input(Box<LoadError>, Option<String>),
    Usage(String),
}

impl Outcome {
    /// A run's end: interrupted before anything else, then whether its
    /// gates held.
    pub fn of_run(interrupted: bool, held: bool) -> Outcome {
        if interrupted {
            Outcome::Interrupted
        } else if held {
            Outcome::Clean
        } else {
            Outcome::Failed
        }
    }

    pub fn exit_code(result: Result<Outcome, Failure>) -> ExitCode {
        match result {
            Ok(Outcome::Clean) => ExitCode::SUCCESS,
            Ok(Outcome::Failed) => ExitCode::from(1),
            // 128 + the signal, as shells report it: 130, 143, 129.
            Ok(Outcome::Interrupted) => ExitCode::from(retrylint::stop_signal::exit_code()),
            Err(Failure::Input(e, source)) => {
                let color = std::io::stderr().is_terminal();
                eprint!("{}", formats::error::render(&e, source.as_deref(), color));
                ExitCode::from(2)
            }
            Err(Failure::Usage(msg)) => {
                eprintln!("error: {msg}");
                ExitCode::from(2)
            }
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn emit(text: &str) {
    emit_with(|out| out.write_all(text.as_bytes()));
}

/// Lets `write` print to stdout as it produces the output, buffered; a closed
/// pipe is not an error.
pub fn emit_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let _ = write(&mut out).and_then(|()| out.flush());
}

pub fn load_error(e: LoadError) -> Failure {
    // The source, for the caret under the culprit: read again within the size
    // limit, and not at all when reading it was the problem.
    let path = std::path::Path::new(&e.file);
    let source = match (e.kind, e.pos) {
        (ErrorKind::Io, _) | (_, None) => None,
        _ if !may_quote(path) => None,
        _ => read_text(path, &e.file, FileKind::Topology).ok(),
    };
    Failure::Input(Box::new(e), source)
}

/// The embedded presets plus those of every `--policies DIR`.
pub fn presets(dirs: &[PathBuf]) -> Result<Presets, Failure> {
    let mut presets = Presets::embedded();
    for dir in dirs {
        for r in presets.add_dir(dir).map_err(load_error)? {
            let old = if r.shipped {
                "the shipped preset of that name".to_owned()
            } else {
                format!("the one in {}", r.replaced)
            };
            eprintln!("note: preset `{}` from {} replaces {old}", r.name, r.file);
        }
    }
    Ok(presets)
}
