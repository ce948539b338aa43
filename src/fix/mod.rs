//! Machine-applicable edits on the located YAML tree (`check --fix`), and the
//! fixed topology in memory for a what-if.
//!
//! A rule whose help proposes a concrete change attaches an
//! [`Intent`](crate::lint::Intent) to its diagnostic, in the topology's terms
//! ("`max_attempts: 1` on the sidecar layer of web → api"). [`check`] (`lint`'s
//! check, given this module's [`resolve`]) resolves it against the file's
//! located tree into a [`Fix`]: byte [`Edit`]s, or none and the reason it was
//! refused. So every [`Finding`](crate::lint::Finding) it returns carries
//! `fix: Option<Fix>`, and the JSON (`fix`) and SARIF (`fixes`) outputs
//! include it.
//!
//! # API
//!
//! - [`check`]`(&topology, &config) -> CheckReport`: `lint::check` with the
//!   findings' fixes resolved (when `config.resolve_fixes`, the default).
//! - [`Edit`]: replace bytes `start..end` of `file` with `text` (kind
//!   `replace`, `insert` of `key: value` into a mapping, or `remove` of a
//!   sequence item), with line/column of both ends.
//! - [`Fix`]: `description`, `edits`, and `refused: Option<String>`.
//! - [`plan`]`(&findings) -> Plan { edits, applied, skipped }`: the fixes that
//!   can be made together, in finding order; a fix that collides with an
//!   earlier one, or was refused, is in `skipped` with its reason.
//! - [`apply`]`(text, &edits) -> Result<String, Skipped>`: the text with the
//!   edits made; everything outside them kept byte for byte.
//! - [`fix_text`]`(text, file, default_name, &presets, &cli_levels) ->
//!   Result<FixRun, FixError>`: the whole `--fix` in memory — check, plan,
//!   apply, repeated until nothing changes (at most [`MAX_PASSES`]); the
//!   fixed text is `FixRun::text`. A what-if loads that text again with
//!   `topology::load_str` (or calls [`check_text`]).
//! - [`unified`]`(file, old, new)`: the unified diff of `--fix --diff`;
//!   [`summary`]`(&run, file, diff)`: the fixed/skipped lines `--fix` prints.
//! - [`write_atomically`]`(path, original, text)`: temp file + rename, through
//!   a link, refused when the file changed since it was read.
//!
//! # What is edited, and what is refused
//!
//! Edits keep comments, key order and indentation outside their range: a
//! value is replaced where it is written; a key is inserted after the
//! mapping's last entry (block style: a new line at its indentation, after
//! that entry's comment; flow style: `, key: value` before the `}`); a
//! sequence item is removed with its separator (flow) or its line (block).
//! Refused, with the reason: a value a preset supplies (`retry: istio-default`
//! or a field a `preset:` fills in — retrylint never edits a preset's values),
//! a node under an anchor an alias or merge key uses elsewhere, an alias, a
//! shape the edit cannot keep valid (a backoff written as one word), and a
//! topology that was not read from its YAML file. A fix is made whole or not
//! at all.

mod check;
mod diff;
mod doc;
mod edit;
pub mod judge;
mod origin;
mod plan;
mod resolve;
mod run;
mod summary;
mod write;
mod yaml_edit;

pub use check::{check, check_on};
pub use diff::unified;
pub use doc::Doc;
pub use edit::apply;
#[cfg(test)]
pub(crate) use edit::edit_at;
pub(crate) use plan::FixNote;
pub use plan::plan;
pub use run::{FixError, check_text};
pub use run::{fix_judged, fix_text, what_if, withhold};
pub use summary::summary;
pub use write::WriteError;
pub use write::write_atomically;
// A finding carries its fix, so the fix and its edits are `lint`'s types;
// the API above works on them.
pub use crate::lint::Fix;
