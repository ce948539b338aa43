//! What `check --fix` tells on stderr: each fix made (or, with `--diff`,
//! that would be made) and each skipped with its reason, then the counts.

use super::plan::FixNote;
use super::run::FixRun;

/// `fixed: FILE:LINE:COL CODE description` per fix made, `skipped: …` and an
/// indented `because: …` per fix skipped, and a last line with the counts
/// (`; FILE unchanged` when nothing changed and the file was to be written).
pub fn summary(run: &FixRun, file: &str, diff: bool) -> String {
    let mut out = String::new();
    let verb = if diff { "would fix" } else { "fixed" };
    for n in &run.applied {
        out.push_str(&line(verb, n));
    }
    for n in &run.skipped {
        out.push_str(&line("skipped", n));
    }
    let made = run.applied.len();
    out.push_str(&format!(
        "{made} fix{} {}, {} skipped{}\n",
        if made == 1 { "" } else { "es" },
        if diff { "to make" } else { "made" },
        run.skipped.len(),
        if run.changed() || diff {
            String::new()
        } else {
            format!("; {file} unchanged")
        }
    ));
    out
}

fn line(verb: &str, n: &FixNote) -> String {
    let mut line = format!(
        "{verb}: {}:{}:{} {} {}\n",
        n.file, n.line, n.column, n.code, n.description
    );
    if let Some(reason) = &n.reason {
        line.push_str(&format!("  because: {reason}\n"));
    }
    line
}
