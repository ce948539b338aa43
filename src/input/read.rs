//! Reading a source file: the size limit, the UTF-8 check, and YAML syntax
//! errors turned into load errors a user can act on. Topologies, fault
//! scenarios, presets and imported configuration all come in through here.

use std::io::Read;
use std::path::Path;

use super::error::{ErrorKind, LoadError};
use super::yaml::{self, Breach, Limit, Pos};

/// Files over this many bytes are refused before parsing (docs/topology.md: 64 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads `path` as UTF-8 text within the size limit.
pub fn read_text(path: &Path, shown: &str, kind: FileKind) -> Result<String, LoadError> {
    let io = |msg: String| LoadError::new(ErrorKind::Io, shown, None, msg);
    // Looked at before it is opened: opening a FIFO blocks until something
    // writes to it, and a device may never end.
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
        && !m.is_dir()
    {
        return Err(io(format!(
            "is not a regular file (a FIFO, socket or device), not a {} file",
            kind.noun()
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => io("no such file".into()).with_help(kind.not_found_help()),
        _ => io(format!("cannot open: {e}")),
    })?;
    let metadata = file.metadata().ok();
    if metadata.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io(format!("is a directory, not a {} file", kind.noun())));
    }
    // Read into one allocation of the file's size (a large file would
    // otherwise be copied as the buffer doubles); the limit still holds.
    let size = metadata.map_or(0, |m| m.len().min(MAX_FILE_BYTES + 1));
    read_limited(file, shown, kind, size as usize)
}

/// Whether an error in `path` may quote its lines: only a document of a kind
/// retrylint reads (YAML, JSON or a `.prom` metrics exposition, by the name
/// of the file a link leads to),
/// and a regular file outside `/proc`, `/sys` and `/dev`. A topology that is
/// a link to `/proc/self/environ` or `~/.aws/credentials` must not have its
/// secrets shown in a CI log as "the line with the error".
pub fn may_quote(path: &Path) -> bool {
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    let system = ["/proc", "/sys", "/dev"]
        .iter()
        .any(|d| real.starts_with(d));
    let document = matches!(
        real.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json" | "prom")
    );
    !system && document && std::fs::metadata(&real).is_ok_and(|m| m.is_file())
}

/// Whether `path`, found in the directory `root`, stays in it once its links
/// are followed: walks take no file from elsewhere through a link.
pub(crate) fn stays_inside(root: &Path, path: &Path) -> bool {
    match (std::fs::canonicalize(root), std::fs::canonicalize(path)) {
        (Ok(root), Ok(real)) => real.starts_with(root),
        _ => false,
    }
}

/// The name errors give standard input (`retrylint check -`).
pub const STDIN: &str = "<stdin>";

/// Reads standard input as UTF-8 text within the size limit.
pub fn read_stdin(kind: FileKind) -> Result<String, LoadError> {
    read_limited(std::io::stdin().lock(), STDIN, kind, 0)
}

/// Reads everything from `from` as UTF-8 text within the size limit.
fn read_limited(
    from: impl Read,
    shown: &str,
    kind: FileKind,
    expected: usize,
) -> Result<String, LoadError> {
    let io = |msg: String| LoadError::new(ErrorKind::Io, shown, None, msg);
    let mut bytes = Vec::with_capacity(expected);
    from.take(MAX_FILE_BYTES + 1)
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
    /// `retrylint serve --peers`: service name → address.
    Peers,
    /// `retrylint probe --replay`: a saved `--format json` report.
    ProbeReport,
}

impl FileKind {
    fn noun(self) -> &'static str {
        match self {
            FileKind::Topology => "topology",
            FileKind::FaultScenario => "fault scenario",
            FileKind::Preset => "retry policy preset",
            FileKind::Peers => "peers",
            FileKind::ProbeReport => "saved probe report",
        }
    }

    fn not_found_help(self) -> &'static str {
        match self {
            FileKind::Topology => "check the path; examples/ has sample topologies",
            FileKind::FaultScenario => {
                "check the path, or name a shipped scenario (`retrylint chaos --help` lists them)"
            }
            FileKind::Preset | FileKind::Peers | FileKind::ProbeReport => "check the path",
        }
    }
}

/// `n` with thousands separators: `1,000,001`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A resource limit crossed, with the figures, and what to do.
fn breach_message(b: Breach) -> (String, String) {
    let max = thousands(b.limit.max());
    let count = thousands(b.count);
    let message = match b.limit {
        Limit::Depth => format!("YAML nested deeper than {max} levels"),
        Limit::Anchors => {
            format!("YAML refused: {count} anchors (`&name`), over the limit of {max}")
        }
        Limit::Aliases => {
            format!("YAML refused: {count} aliases (`*name`), over the limit of {max}")
        }
        Limit::AliasReplay => {
            format!("YAML refused: aliases expand to more than {max} events (an alias bomb?)")
        }
        Limit::RecordedAnchorEvents => format!(
            "YAML refused: anchored nodes copy more than {max} events in all, aliases inside anchors included (an alias bomb?)"
        ),
        Limit::Nodes => format!("YAML refused: more than {max} values (nodes), over the limit"),
        Limit::Events => format!("YAML refused: more than {max} parser events, over the limit"),
        Limit::ScalarBytes => format!(
            "YAML refused: more than {} MiB of text in values, aliases expanded",
            b.limit.max() / (1024 * 1024)
        ),
    };
    let help = match b.limit {
        Limit::Depth => "retrylint files need no deep nesting; a topology is a few levels deep",
        Limit::Anchors | Limit::Aliases => {
            "share defaults through a few anchors (`x-defaults: &defaults`, `<<: *defaults`) rather than one per value"
        }
        Limit::AliasReplay | Limit::RecordedAnchorEvents => {
            "each alias copies its anchor's whole node, and aliases inside anchors multiply: copy less, or write the values out"
        }
        Limit::Nodes | Limit::Events | Limit::ScalarBytes => {
            "check that this is the file you meant; a 10,000-service topology is far below the limit"
        }
    };
    (message, help.to_owned())
}

/// YAML's limit on a plain (implicit) key: the parser looks no further for
/// its `:` (YAML 1.2, 7.4.2).
pub(crate) const MAX_KEY_CHARS: usize = 1024;

/// [`syntax_error`] for an error in `text`: a key past YAML's length limit
/// is named as such (the parser only says it found no `:`).
pub(crate) fn syntax_error_in(file: &str, text: &str, e: yaml::SyntaxError) -> LoadError {
    let line = (e.pos.line as usize)
        .checked_sub(1)
        .and_then(|i| text.lines().nth(i))
        .unwrap_or("");
    let key_chars = line
        .trim_start()
        .split(": ")
        .next()
        .map_or(0, |k| k.chars().count());
    if e.breach.is_none() && e.message.contains("simple key") && key_chars > MAX_KEY_CHARS {
        return LoadError::new(
            ErrorKind::Syntax,
            file,
            Some(e.pos),
            format!(
                "a key of {key_chars} characters: YAML reads a plain key of at most {MAX_KEY_CHARS}"
            ),
        )
        .with_help("shorten the key (service and layer names are short words)");
    }
    syntax_error(file, e)
}

/// A YAML syntax error as a load error, in words a user can act on.
pub(crate) fn syntax_error(file: &str, e: yaml::SyntaxError) -> LoadError {
    // The parser appends " at line L, column C"; we lead with file:line:col.
    let message = match e.message.rfind(" at line ") {
        Some(i) => e.message[..i].to_owned(),
        None => e.message.clone(),
    };
    let (message, help) = if let Some(b) = e.breach {
        let (message, help) = breach_message(b);
        (message, Some(help))
    } else if let Some(rest) = message.strip_prefix("duplicate mapping key") {
        // "duplicate mapping key: KEY", or no key when the key is a list or mapping.
        let message = match rest.strip_prefix(": ") {
            Some(key) => format!("duplicate key `{key}`"),
            None => "duplicate key".to_owned(),
        };
        (
            message,
            Some("each key appears once per mapping; merge the two entries".to_owned()),
        )
    } else if let Some(tag) = message.strip_prefix("custom tag ") {
        (
            format!("unsupported YAML tag {tag}"),
            Some(
                "retrylint reads plain values and resolves no tags (CloudFormation's `!Ref`, `!!python/object`, …): remove the tag and write the value itself"
                    .to_owned(),
            ),
        )
    } else if message.contains("recursion limit") {
        let (message, help) = breach_message(Breach {
            limit: Limit::Depth,
            count: Limit::Depth.max() + 1,
        });
        (message, Some(help))
    } else {
        let help = if e.help.is_some() {
            e.help.clone()
        } else if message.contains("tab") {
            Some("indent with spaces; YAML does not allow tabs there".to_owned())
        } else if message.contains("unknown anchor") {
            Some("define the anchor (`&name`) before the alias (`*name`) that uses it".to_owned())
        } else if message.contains("':'") || message.contains("mapping values") {
            Some("check the indentation, and quote a value that contains `: `".to_owned())
        } else if message.contains("non-finite") {
            Some("write a finite number".to_owned())
        } else {
            None
        };
        (format!("invalid YAML: {message}"), help)
    };
    let err = LoadError::new(ErrorKind::Syntax, file, Some(e.pos), message);
    match help {
        Some(h) => err.with_help(h),
        None => err,
    }
}
