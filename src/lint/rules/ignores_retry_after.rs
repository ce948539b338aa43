use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, layer_sites};
use crate::lint::{Intent, Section};
use crate::policy::Outcome;

declare_rule! {
    /// ## What it finds
    /// A retrying layer that retries 429 or 503 with `honor_retry_after: false`.
    ///
    /// ## Why it matters
    /// 429 and 503 often carry Retry-After: the server saying when it can take the
    /// request. Retrying sooner is refused again and spends the server's remaining
    /// capacity on rejections, prolonging the throttling or the outage.
    ///
    /// ## Example
    /// ```yaml
    /// retry: { max_attempts: 3, retry_on: [429, 503], honor_retry_after: false }
    /// ```
    ///
    /// ## Fix
    /// Set `honor_retry_after: true` (the default): the wait becomes the longer of
    /// the backoff and the server's Retry-After.
    pub static RULE = {
        code: "RL010",
        name: "ignores-retry-after",
        default: Warning,
        summary: "retries 429 or 503 without honouring Retry-After",
        check: check,
    };
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for site in layer_sites(cx) {
        let p = &site.layer.policy;
        if !p.retries() || p.honor_retry_after {
            continue;
        }
        let codes: Vec<&str> = [(429, "429"), (503, "503")]
            .into_iter()
            .filter(|(c, _)| p.retry_on.matches(Outcome::Status(*c)))
            .map(|(_, s)| s)
            .collect();
        if codes.is_empty() {
            continue;
        }
        let spans = &site.layer.spans;
        let pos = site.layer.at(spans.honor_retry_after.or(spans.retry_on));
        out.push(
            site.diagnostic(
                pos,
                format!(
                    "{} retries {} without honouring Retry-After",
                    site.describe(cx.topology),
                    codes.join(" and ")
                ),
            )
            .help("set honor_retry_after: true, so the wait is at least what the server asks for")
            .label("Retry-After ignored")
            .fix_with(cx, || {
                Intent::new(format!(
                    "set honor_retry_after: true at {}",
                    site.describe(cx.topology)
                ))
                .set(site.at(), Section::Retry, "honor_retry_after", "true")
            }),
        );
    }
}
