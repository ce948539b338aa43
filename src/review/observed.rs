//! Observed beside declared: each call that traces or a proxy's counters
//! saw (`report --from`, `sources:`, or `observed:` written by `import`),
//! with the attempts per call seen, what they cover, the worst case its
//! declared layers allow, and the findings RL021 and RL022 made of it.

use crate::lint::CheckReport;
use crate::prediction::attempts_allowed;
use crate::topology::{CounterKind, LayerKind, Topology};

/// The rules that hold observed attempts to the declared layers.
pub const RULES: &[&str] = &["RL021", "RL022"];

/// One call as production showed it and as the topology declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub from: String,
    pub to: String,
    /// `traces`, or `Envoy counters (cluster api)`.
    pub(crate) seen_in: String,
    /// Attempts per call on average (per request, from counters).
    pub mean: f64,
    /// The most attempts one call made; not known from counters.
    pub most: Option<u32>,
    /// What the figure covers: `10 calls`, `100 requests since the proxy
    /// started`.
    pub over: String,
    /// The attempts the call's layers allow together (the worst case);
    /// `None` when a layer is unlimited.
    pub declared: Option<u64>,
    /// From counters: what the layers below the caller (`via`) allow, which
    /// a proxy's figure is held to.
    pub below: Option<Option<u64>>,
    /// The findings of [`RULES`] on this call, by code.
    pub findings: Vec<&'static str>,
    /// The mean is the least the counters prove (Istio's), shown `≥ 1.04`.
    pub at_least: bool,
}

/// The rows of `t`'s observed calls, in the topology's order.
pub fn rows(t: &Topology, check: &CheckReport) -> Vec<Row> {
    // In the topology's order, whichever order the sources gave them in.
    let mut observed: Vec<_> = t.observed.iter().collect();
    observed.sort_by_key(|o| {
        let at = t.services[o.from].calls.iter().position(|c| c.to == o.to);
        (o.from, at)
    });
    let mut rows = Vec::with_capacity(observed.len());
    for o in observed {
        let Some(call) = t.services[o.from].calls.iter().find(|c| c.to == o.to) else {
            continue;
        };
        let from = &t.services[o.from].name;
        let to = &t.services[o.to].name;
        let findings = check
            .findings
            .iter()
            .filter(|f| RULES.contains(&f.code))
            .filter(|f| {
                f.call
                    .as_ref()
                    .is_some_and(|c| &c.from == from && &c.to == to)
            })
            .map(|f| f.code)
            .fold(Vec::new(), |mut v, c| {
                if !v.contains(&c) {
                    v.push(c);
                }
                v
            });
        let (seen_in, most, over, below, at_least) = match &o.counted {
            None => (
                "traces".to_owned(),
                Some(o.figures.attempts_max),
                plural(o.figures.calls, "call"),
                None,
                false,
            ),
            Some(c) => {
                let cluster = if c.cluster.is_empty() {
                    String::new()
                } else {
                    format!(" ({} {})", c.kind.subject(), c.cluster)
                };
                // A proxy's figure is held to the layers below the caller
                // (RL021); a gRPC client's, to its own retries, which are
                // not below it.
                let below = (c.kind != CounterKind::Grpc)
                    .then(|| attempts_allowed(call, |l| l.kind == LayerKind::Via));
                let unit = if c.kind == CounterKind::Grpc {
                    "call"
                } else {
                    "request"
                };
                (
                    format!("{} counters{cluster}", c.by()),
                    None,
                    format!("{} {}", plural(o.figures.calls, unit), c.window),
                    below,
                    c.lower_bound(),
                )
            }
        };
        rows.push(Row {
            from: from.clone(),
            to: to.clone(),
            seen_in,
            mean: o.figures.attempts_mean,
            most,
            over,
            declared: attempts_allowed(call, |_| true),
            below,
            findings,
            at_least,
        });
    }
    rows
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

impl Row {
    /// `3`, `3 (1 below the caller)`, `unlimited`.
    pub(crate) fn declared_text(&self) -> String {
        let n = |d: Option<u64>| d.map_or("unlimited".to_owned(), |d| d.to_string());
        match self.below {
            Some(b) => format!("{} ({} below the caller)", n(self.declared), n(b)),
            None => n(self.declared),
        }
    }

    /// `6.00` (`≥ 1.04` for a lower bound), the mean as every format
    /// shows it.
    pub(crate) fn mean_text(&self) -> String {
        let least = if self.at_least { "≥ " } else { "" };
        format!("{least}{:.2}", self.mean)
    }

    /// `6`, or `–` when the counters do not say.
    pub(crate) fn most_text(&self) -> String {
        self.most.map_or("–".to_owned(), |m| m.to_string())
    }

    /// `RL021`, `RL021, RL022`, or `none`.
    pub(crate) fn findings_text(&self) -> String {
        if self.findings.is_empty() {
            "none".to_owned()
        } else {
            self.findings.join(", ")
        }
    }
}
