//! `check` with the fixes: the rules state intents (`lint`), and here each
//! one is resolved against the topology file's located tree into its edits —
//! what the JSON and SARIF formats, `--fix` and the review page show.

use std::borrow::Cow;

use super::doc::Doc;
use super::resolve::resolve;
use crate::lint::{self, CheckReport, Config, Intent};
use crate::topology::Topology;

/// [`lint::check`], each finding's fix resolved when `config.resolve_fixes`
/// asks for them (the default).
pub fn check(t: &Topology, config: &Config) -> CheckReport {
    check_on(t, config, lint::threads_for(t))
}

/// [`check`] with the rules shared among `threads` threads.
pub fn check_on(t: &Topology, config: &Config, threads: usize) -> CheckReport {
    if !config.resolve_fixes {
        return lint::check_on(t, config, threads);
    }
    // On the file's located tree: the loader's, or read again when there is
    // none.
    let doc = match &t.located {
        Some(root) => Some(Doc::with_tree(&t.source, &t.file, Cow::Borrowed(root))),
        None => Doc::new(&t.source, &t.file),
    };
    let fix = |intent: &Intent| resolve(t, doc.as_ref(), intent);
    lint::check_resolving(t, config, threads, Some(&fix))
}
