//! Writing the fixed text in place, atomically: a temporary file in the same
//! directory, flushed to disk, renamed over the original. A crash leaves the
//! old file or the new one, never half of each; the original's permissions
//! are kept.

use std::io::Write;
use std::path::Path;

pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let permissions = std::fs::metadata(path)?.permissions();
    let mut tmp = tempfile::Builder::new()
        .prefix(".retrylint-fix-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    std::fs::set_permissions(tmp.path(), permissions)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
