//! The check report as the human-readable formats (table, markdown, GitHub
//! annotations) show it: every name, message and quoted line with its
//! control characters escaped (`crate::visible`). Built only when some text
//! needs it, so the common report is shown as it is, uncopied.

use crate::lint::CheckReport;
use crate::visible;

/// A copy of `r` with control characters escaped, or `None` when it has none.
pub(crate) fn escaped(r: &CheckReport) -> Option<CheckReport> {
    if !needs_escape(r) {
        return None;
    }
    let name = |s: &mut String| {
        if let std::borrow::Cow::Owned(e) = visible::name(s) {
            *s = e;
        }
    };
    let mut r = r.clone();
    name(&mut r.topology);
    name(&mut r.file);
    name(&mut r.entry);
    for e in &mut r.entries {
        name(e);
    }
    r.source = std::sync::Arc::new(visible::text(&r.source).into_owned());
    for (file, text) in &mut r.sources {
        name(file);
        *text = visible::text(text).into_owned();
    }
    for f in &mut r.findings {
        name(&mut f.message);
        name(&mut f.help);
        name(&mut f.label);
        name(&mut f.service);
        name(&mut f.file);
        if let Some(layer) = &mut f.layer {
            name(layer);
        }
        if let Some(call) = &mut f.call {
            name(&mut call.from);
            name(&mut call.to);
        }
    }
    let call = |c: &mut crate::lint::CallRef| {
        name(&mut c.from);
        name(&mut c.to);
    };
    if let Some(c) = &mut r.entry_untimed {
        call(c);
    }
    for row in &mut r.amplification {
        name(&mut row.service);
        if let Some(e) = &mut row.entry {
            name(e);
        }
        if let Some(c) = &mut row.untimed_call {
            call(c);
        }
    }
    for e in &mut r.edges {
        name(&mut e.from);
        name(&mut e.to);
        for layer in &mut e.retrying_layers {
            name(layer);
        }
    }
    Some(r)
}

fn call_needs(c: &crate::lint::CallRef) -> bool {
    visible::needs_escape(&c.from) || visible::needs_escape(&c.to)
}

fn needs_escape(r: &CheckReport) -> bool {
    let line_text = |s: &str| visible::text(s).len() != s.len();
    visible::needs_escape(&r.topology)
        || visible::needs_escape(&r.file)
        || r.entries.iter().any(|e| visible::needs_escape(e))
        || line_text(&r.source)
        || r.sources
            .iter()
            .any(|(f, t)| visible::needs_escape(f) || line_text(t))
        || r.findings.iter().any(|f| {
            [&f.message, &f.help, &f.label, &f.service, &f.file]
                .iter()
                .any(|s| visible::needs_escape(s))
                || f.layer.as_deref().is_some_and(visible::needs_escape)
                || f.call.as_deref().is_some_and(call_needs)
        })
        || r.entry_untimed.as_ref().is_some_and(call_needs)
        || r.amplification.iter().any(|a| {
            visible::needs_escape(&a.service) || a.untimed_call.as_ref().is_some_and(call_needs)
        })
        || r.edges.iter().any(|e| {
            visible::needs_escape(&e.from)
                || visible::needs_escape(&e.to)
                || e.retrying_layers.iter().any(|l| visible::needs_escape(l))
        })
}
