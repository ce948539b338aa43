use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, attempts_text, layer_sites};
use crate::lint::{Intent, Section};

/// More attempts than this on a synchronous call is excessive.
const LIMIT: u32 = 5;

declare_rule! {
    /// ## What it finds
    /// A retry layer with `max_attempts` above 5, or `unlimited`, on a
    /// synchronous call. When a time bound lowers a huge count, the message
    /// says how many attempts can start within it.
    ///
    /// ## Why it matters
    /// Someone is waiting for a synchronous call. After a few attempts the odds
    /// that one more helps are small, while every extra attempt adds load to a
    /// service that is failing and latency for the user. Most SDKs default to 3.
    ///
    /// ## Example
    /// ```yaml
    /// retry: { max_attempts: 10 }
    /// ```
    ///
    /// ## Fix
    /// Use 2 to 3 attempts (`max_attempts: 3`); queue the work for later instead
    /// of retrying longer in line.
    pub static RULE = {
        code: "RL006",
        name: "excessive-attempts",
        default: Warning,
        summary: "max_attempts above 5 on a synchronous call",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if p.max_attempts <= LIMIT {
            continue;
        }
        let pos = site.layer.at(site.layer.spans.max_attempts);
        let attempts = site.attempts(cx.analysis);
        let call = site.call.map(|(_, c)| c);
        let many = attempts_text(cx.topology, call, site.layer, &attempts);
        let (message, label) = if p.is_unlimited() {
            (
                format!(
                    "{} retries a synchronous call without a count limit (max_attempts: {many})",
                    site.describe(cx.topology)
                ),
                "unlimited attempts".to_owned(),
            )
        } else {
            (
                format!(
                    "{} makes up to {many} attempts on a synchronous call (more than {LIMIT})",
                    site.describe(cx.topology)
                ),
                format!("{} attempts", p.max_attempts),
            )
        };
        out.push(
            site.diagnostic(pos, message)
                .help("set max_attempts: 3; queue work that must eventually succeed instead of retrying in line")
                .label(label)
                .fix_with(cx, || {
                    Intent::new(format!(
                        "set max_attempts: 3 at {}",
                        site.describe(cx.topology)
                    ))
                    .set(site.at(), Section::Retry, "max_attempts", "3")
                }),
        );
    }
}
