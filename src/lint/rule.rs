//! How a rule is declared: a doc comment with the four headings (*What it finds /
//! Why it matters / Example / Fix*), a code, a kebab-case name, a default level,
//! a one-line summary and one check function. The doc text is written once and
//! feeds `retrylint explain`, SARIF and the Markdown report.

use crate::topology::{Call, Layer, Pos, ServiceId, Topology};

use super::finding::Severity;
use super::intent::{Intent, LayerAt};
use crate::input::duration::format as dur;
use crate::prediction::{Analysis, Basis, BoundBy, Count, LayerAttempts, TimeBound};

/// What a rule's check function sees.
pub(crate) struct Context<'a> {
    pub topology: &'a Topology,
    pub analysis: &'a Analysis,
    /// Findings of RL001 fire above this worst-case amplification.
    pub max_amplification: f64,
    /// Whether the findings' fixes are resolved; their intents are built only then.
    pub fixes: bool,
}

/// A finding before its rule's code and level are attached.
#[derive(Debug, Clone)]
pub(crate) struct Diagnostic {
    pub pos: Pos,
    pub service: ServiceId,
    /// Index of the call in the service's `calls`, for call findings.
    pub call: Option<usize>,
    pub layer: Option<String>,
    pub message: String,
    pub help: String,
    pub label: String,
    /// Set by rules whose level depends on the case (RL007); else the rule's.
    pub severity: Option<Severity>,
    /// The service the finding is about when it is not the one whose YAML
    /// is blamed (RL001: the amplified service, blamed on a caller's layer).
    pub about: Option<ServiceId>,
    /// The concrete edit the help proposes, when it proposes one.
    pub fix: Option<Intent>,
}

impl Diagnostic {
    pub(crate) fn new(pos: Pos, service: ServiceId, message: impl Into<String>) -> Self {
        Diagnostic {
            pos,
            service,
            call: None,
            layer: None,
            message: message.into(),
            help: String::new(),
            label: String::new(),
            severity: None,
            about: None,
            fix: None,
        }
    }

    /// About `layer` of call number `index` of `service`.
    pub(crate) fn on_layer(mut self, index: usize, layer: &Layer) -> Self {
        self.call = Some(index);
        self.layer = Some(layer.name.clone());
        self
    }

    pub(crate) fn on_call(mut self, index: usize) -> Self {
        self.call = Some(index);
        self
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    pub(crate) fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The edit the help proposes, built only when fixes are resolved (the
    /// JSON and SARIF formats, `--fix`, the review): a large topology has
    /// tens of thousands of findings.
    pub(crate) fn fix_with(mut self, cx: &Context, intent: impl FnOnce() -> Intent) -> Self {
        if cx.fixes {
            self.fix = Some(intent());
        }
        self
    }

    pub(crate) fn severity(mut self, s: Severity) -> Self {
        self.severity = Some(s);
        self
    }
}

pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub default: Severity,
    pub summary: &'static str,
    /// Markdown with the four headings.
    pub doc: &'static str,
    pub(crate) check: fn(&Context, &mut Vec<Diagnostic>),
}

/// Declares a rule; the doc comment becomes `Rule::doc`.
#[macro_export]
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        pub static $ident:ident = {
            code: $code:literal,
            name: $name:literal,
            default: $default:ident,
            summary: $summary:literal,
            check: $check:path $(,)?
        };
    ) => {
        pub static $ident: $crate::lint::rule::Rule = $crate::lint::rule::Rule {
            code: $code,
            name: $name,
            default: $crate::lint::finding::Severity::$default,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}

/// Every layer of every call: (caller, call index, call, layer index, layer).
/// Services user traffic cannot reach from the entry (a batch job beside the
/// web tier) are checked too: their policies are configuration all the same.
pub(crate) fn call_layers<'t>(
    cx: &'t Context,
) -> impl Iterator<Item = (ServiceId, usize, &'t Call, usize, &'t Layer)> + 't {
    cx.topology
        .services
        .iter()
        .enumerate()
        .flat_map(|(s, svc)| {
            svc.calls.iter().enumerate().flat_map(move |(i, c)| {
                c.layers
                    .iter()
                    .enumerate()
                    .map(move |(li, l)| (s, i, c, li, l))
            })
        })
}

/// ` (the 1ms default: no latency declared)` after a latency figure of a
/// service that declares none, so no figure rests on the default silently;
/// empty when it declares one.
pub(crate) fn latency_default(svc: &crate::topology::Service) -> &'static str {
    if svc.latency.pos.is_some() {
        ""
    } else {
        " (the 1ms default: no latency declared)"
    }
}

/// `web → api`.
pub fn edge(t: &Topology, call: &Call) -> String {
    edge_parts(t, call).concat()
}

/// [`edge`] in pieces, for texts that join it with more. Joined rather than
/// formatted: rules name tens of thousands of calls.
fn edge_parts<'t>(t: &'t Topology, call: &Call) -> [&'t str; 3] {
    [
        &t.services[call.from].name,
        " → ",
        &t.services[call.to].name,
    ]
}

/// `the istio-sidecar layer of web → api`, or `web → api` for the app layer.
pub(crate) fn where_layer(t: &Topology, call: &Call, layer: &Layer) -> String {
    match layer.kind {
        crate::topology::LayerKind::App => edge(t, call),
        _ => layer_of(t, call, &layer.name),
    }
}

/// `the sdk layer of web → api` (the app layer named too).
pub(crate) fn layer_of(t: &Topology, call: &Call, name: &str) -> String {
    let [from, arrow, to] = edge_parts(t, call);
    ["the ", name, " layer of ", from, arrow, to].concat()
}

/// A worst case as messages state it, and the message's opening:
/// `64`, and ``worst case 64 attempts reach `db` per user request (limit
/// 10)``; `more than 3.403e38` when the count saturated. Joined rather than
/// formatted: a large topology has thousands.
pub(crate) fn worst_case_reach(count: &Count, service: &str, limit: &str) -> (String, String) {
    let figure = if count.saturated {
        format!("more than {:.3e}", count.approx)
    } else {
        itoa::Buffer::new().format(count.exact).to_owned()
    };
    let message = [
        "worst case ",
        &figure,
        " attempts reach `",
        service,
        "` per user request (limit ",
        limit,
        ")",
    ]
    .concat();
    (figure, message)
}

/// Where a layer sits: a call of a service, or the client in front of the entry.
#[derive(Clone, Copy)]
pub(crate) struct LayerSite<'t> {
    pub service: ServiceId,
    /// (index in the service's calls, the call); `None` for the client layer.
    pub call: Option<(usize, &'t Call)>,
    /// Index of the layer in the call's layers (0 for the client layer).
    pub index: usize,
    pub layer: &'t Layer,
}

impl LayerSite<'_> {
    /// Where a fix finds this layer.
    pub(crate) fn at(&self) -> LayerAt {
        LayerAt {
            call: self.call.map(|(i, _)| (self.service, i)),
            index: self.index,
        }
    }

    /// The attempts the analysis counts for this layer, and why.
    pub(crate) fn attempts(&self, a: &Analysis) -> LayerAttempts {
        match self.call {
            Some((i, _)) => a.layer_attempts[self.service][i][self.index],
            None => a
                .client_attempts
                .unwrap_or_else(|| LayerAttempts::of(&self.layer.policy, None)),
        }
    }

    /// A diagnostic about this layer at `pos`.
    pub(crate) fn diagnostic(&self, pos: Pos, message: impl Into<String>) -> Diagnostic {
        let d = Diagnostic::new(pos, self.service, message);
        let d = match self.call {
            Some((i, _)) => d.on_call(i),
            None => d,
        };
        Diagnostic {
            layer: Some(self.layer.name.clone()),
            ..d
        }
    }

    /// How messages name this layer.
    pub(crate) fn describe(&self, t: &Topology) -> String {
        match self.call {
            Some((_, c)) => where_layer(t, c, self.layer),
            None => format!("the client layer in front of {}", t.services[t.entry].name),
        }
    }
}

/// Every layer: the client layer, then each call's layers.
pub(crate) fn layer_sites<'t>(cx: &'t Context) -> impl Iterator<Item = LayerSite<'t>> + 't {
    let client = cx.topology.client.as_ref().map(|layer| LayerSite {
        service: cx.topology.entry,
        call: None,
        index: 0,
        layer,
    });
    client
        .into_iter()
        .chain(call_layers(cx).map(|(s, i, c, li, l)| LayerSite {
            service: s,
            call: Some((i, c)),
            index: li,
            layer: l,
        }))
}

/// How messages name what bounds a layer in time: `the 2s deadline`,
/// `the 2m timeout of the app layer of web → ledger`.
pub(crate) fn bound_text(t: &Topology, call: Option<&Call>, bound: &TimeBound) -> String {
    let within = dur(bound.within);
    match bound.by {
        BoundBy::Deadline => format!("the {within} deadline"),
        BoundBy::PropagatedDeadline => format!("the deadline its caller sends (at most {within})"),
        BoundBy::Horizon => format!("the {within} horizon"),
        BoundBy::OuterTimeout(j) => match call.and_then(|c| c.layers.get(j).map(|l| (c, l))) {
            Some((c, l)) => format!("the {within} timeout of {}", layer_of(t, c, &l.name)),
            None => format!("a {within} outer timeout"),
        },
    }
}

/// A layer's attempts as messages state them: `3`, `unlimited`, or `up to
/// 154 in the 2m timeout of …` when time bounds them.
pub(crate) fn attempts_text(
    t: &Topology,
    call: Option<&Call>,
    layer: &Layer,
    a: &LayerAttempts,
) -> String {
    match (a.basis, a.time) {
        (Basis::Time, Some(b)) => format!(
            "{} ({} can start within {})",
            layer.policy.attempts_text(),
            a.count,
            bound_text(t, call, &b)
        ),
        (Basis::TimeTypical, Some(b)) => format!(
            "{} (about {} start within {})",
            layer.policy.attempts_text(),
            a.count,
            bound_text(t, call, &b)
        ),
        _ => layer.policy.attempts_text(),
    }
}

/// Expected copies as messages state them: `3 copies`, `1 copy`, `about
/// 1.42 copies`, `slightly more than 1 copy`.
pub(crate) fn copies_text(x: f64) -> String {
    let noun = |n: &str| if n == "1" { "copy" } else { "copies" };
    let whole = x.round();
    if (x - whole).abs() < 1e-9 {
        let n = format!("{whole}");
        return format!("{n} {}", noun(&n));
    }
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.contains('.') {
        format!("about {s} copies")
    } else if x > whole {
        format!("slightly more than {s} {}", noun(s))
    } else {
        format!("slightly fewer than {s} copies")
    }
}
