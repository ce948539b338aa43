//! Writing the fixed text in place, atomically: a temporary file in the same
//! directory as the file itself (a link's target, written through the link),
//! flushed to disk, renamed over the original. A crash leaves the old file or
//! the new one, never half of each; the original's permissions are kept.
//! Just before the rename the file is compared with the text the fixes were
//! made from: a line written to it meanwhile is not silently lost.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why the fixed text was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(
        "{0} changed while it was being fixed; nothing was written: run `retrylint check --fix` again"
    )]
    Changed(String),
}

/// What writing in place did besides replacing the text, for the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The file written when `path` is a link: its target.
    pub through_link: Option<PathBuf>,
    /// Other names of the file (hard links) that keep the old text: the
    /// rename gives this name a new file.
    pub other_links: u64,
}

/// Replaces `path`'s text `original` with `text`, atomically.
pub fn write_atomically(path: &Path, original: &str, text: &str) -> Result<Written, WriteError> {
    let real = std::fs::canonicalize(path)?;
    let through_link =
        (std::fs::symlink_metadata(path)?.file_type().is_symlink()).then(|| real.clone());
    let dir = match real.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let metadata = std::fs::metadata(&real)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".retrylint-fix-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    std::fs::set_permissions(tmp.path(), metadata.permissions())?;
    // The window between this read and the rename is a few system calls.
    if std::fs::read(&real)? != original.as_bytes() {
        return Err(WriteError::Changed(path.display().to_string()));
    }
    tmp.persist(&real).map_err(|e| e.error)?;
    Ok(Written {
        through_link,
        other_links: hard_links(&metadata).saturating_sub(1),
    })
}

#[cfg(unix)]
fn hard_links(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(m)
}

#[cfg(not(unix))]
fn hard_links(_: &std::fs::Metadata) -> u64 {
    1
}

/// `text` with the line endings of `like`: when `like` ends its lines in
/// CRLF, every bare LF in `text` (those of inserted lines) becomes CRLF.
pub(crate) fn with_line_endings_of(like: &str, text: String) -> String {
    let crlf = like
        .find('\n')
        .is_some_and(|i| i > 0 && like.as_bytes()[i - 1] == b'\r');
    if !crlf {
        return text;
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = '\0';
    for c in text.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_since_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.yaml");
        std::fs::write(&path, "a: 1\nappended: by someone else\n").unwrap();
        let e = write_atomically(&path, "a: 1\n", "a: 2\n").unwrap_err();
        assert!(matches!(e, WriteError::Changed(_)), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "a: 1\nappended: by someone else\n"
        );
        assert_eq!(
            write_atomically(&path, "a: 1\nappended: by someone else\n", "a: 2\n").unwrap(),
            Written::default()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: 2\n");
    }

    #[test]
    fn inserted_lines_take_the_files_line_ending() {
        assert_eq!(
            with_line_endings_of("a: 1\r\n", "a: 1\r\nb: 2\n".into()),
            "a: 1\r\nb: 2\r\n"
        );
        assert_eq!(with_line_endings_of("a: 1\n", "a\nb\n".into()), "a\nb\n");
    }
}
