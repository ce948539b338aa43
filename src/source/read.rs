//! Reading a source file: the size limit, the UTF-8 check, and YAML syntax
//! errors turned into load errors a user can act on. Topologies, fault
//! scenarios, presets and imported configuration all come in through here.

use std::io::Read;
use std::path::Path;

use super::error::{ErrorKind, LoadError};
use super::yaml::{self, Pos};

/// Files over this many bytes are refused before parsing (DESIGN: 64 MiB).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads `path` as UTF-8 text within the size limit.
pub fn read_text(path: &Path, shown: &str, kind: FileKind) -> Result<String, LoadError> {
    let io = |msg: String| LoadError::new(ErrorKind::Io, shown, None, msg);
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => io("no such file".into()).with_help(kind.not_found_help()),
        _ => io(format!("cannot open: {e}")),
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(io(format!("is a directory, not a {} file", kind.noun())));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io(format!(
            "file is larger than the {} MiB limit",
            MAX_FILE_BYTES / (1024 * 1024)
        ))
        .with_help("check that this is the file you meant"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        LoadError::new(
            ErrorKind::Io,
            shown,
            Some(Pos {
                line: line as u32,
                column: column as u32,
            }),
            "not UTF-8 text (is this a binary file?)",
        )
        .with_help(format!("a {} is a YAML text file", kind.noun()))
    })
}

/// What a file read by `read_text` should hold, for its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Topology,
    FaultScenario,
    Preset,
}

impl FileKind {
    fn noun(self) -> &'static str {
        match self {
            FileKind::Topology => "topology",
            FileKind::FaultScenario => "fault scenario",
            FileKind::Preset => "retry policy preset",
        }
    }

    fn not_found_help(self) -> &'static str {
        match self {
            FileKind::Topology => "check the path; examples/ has sample topologies",
            FileKind::FaultScenario => {
                "check the path, or name a shipped scenario (`retrylint chaos --help` lists them)"
            }
            FileKind::Preset => "check the path",
        }
    }
}

/// A YAML syntax error as a load error, in words a user can act on.
pub fn syntax_error(file: &str, e: yaml::SyntaxError) -> LoadError {
    // The parser appends " at line L, column C"; we lead with file:line:col.
    let message = match e.message.rfind(" at line ") {
        Some(i) => e.message[..i].to_owned(),
        None => e.message.clone(),
    };
    let limits = "retrylint files need neither deep nesting (the limit is 64 levels) nor mass \
                  alias expansion";
    let (message, help) = if let Some(rest) = message.strip_prefix("duplicate mapping key") {
        // "duplicate mapping key: KEY", or no key when the key is a list or mapping.
        let message = match rest.strip_prefix(": ") {
            Some(key) => format!("duplicate key `{key}`"),
            None => "duplicate key".to_owned(),
        };
        (
            message,
            Some("each key appears once per mapping; merge the two entries".to_owned()),
        )
    } else if message.contains("recursion limit") || message.contains("Depth") {
        (
            "YAML nested deeper than 64 levels".to_owned(),
            Some(limits.to_owned()),
        )
    } else if message.contains("budget breached") {
        let what = if message.contains("Alias")
            || message.contains("Anchor")
            || message.contains("Replay")
        {
            "too many alias expansions (an alias bomb?)"
        } else {
            "too many YAML nodes or events"
        };
        (format!("YAML refused: {what}"), Some(limits.to_owned()))
    } else {
        let help = if message.contains("tab") {
            Some("indent with spaces; YAML does not allow tabs there")
        } else if message.contains("unknown anchor") {
            Some("define the anchor (`&name`) before the alias (`*name`) that uses it")
        } else if message.contains("':'") || message.contains("mapping values") {
            Some("check the indentation, and quote a value that contains `: `")
        } else if message.contains("non-finite") {
            Some("write a finite number")
        } else {
            None
        };
        (format!("invalid YAML: {message}"), help.map(str::to_owned))
    };
    let err = LoadError::new(ErrorKind::Syntax, file, Some(e.pos), message);
    match help {
        Some(h) => err.with_help(h),
        None => err,
    }
}
