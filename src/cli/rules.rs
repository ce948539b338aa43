//! `retrylint rules` and `retrylint explain`: the catalogue and each rule's
//! documentation, from the text that implements it. `rules --format markdown`
//! is the rules page, docs/rules.md, which a test holds equal to it.

use std::fmt::Write as _;

use clap::Args;

use super::outcome::{Failure, Outcome, emit};
use retrylint::formats;
use retrylint::lint::{self, Rule};

#[derive(Args)]
pub struct RulesArgs {
    /// `text`: one line per rule; `markdown`: every rule's documentation as
    /// one page (docs/rules.md).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Text,
    Markdown,
}

pub fn rules(args: RulesArgs) -> Result<Outcome, Failure> {
    match args.format {
        Format::Text => emit(&formats::rules::list(lint::RULES)),
        Format::Markdown => emit(&page(lint::RULES)),
    }
    Ok(Outcome::Clean)
}

pub fn explain(code: &str) -> Result<Outcome, Failure> {
    match lint::rules::find_rule(code) {
        Some(i) => {
            emit(&formats::rules::explain(lint::RULES[i]));
            Ok(Outcome::Clean)
        }
        None => Err(Failure::Usage(format!(
            "unknown rule `{code}`; `retrylint rules` lists them"
        ))),
    }
}

/// The rules page: a table of the rules, then each rule's `explain` text
/// with its headings one level down under the page's title.
fn page(rules: &[&Rule]) -> String {
    let mut out = String::from(
        "# Rules\n\n\
         <!-- Generated from the rules' doc comments (src/lint/rules/) by\n\
         `retrylint rules --format markdown > docs/rules.md`; edit those, not this. -->\n\n\
         `retrylint explain CODE` prints one of these; SARIF carries the same text.\n\
         Levels can be changed with `--deny`, `--warn` and `--allow` or the\n\
         topology's `lint:` section ([check.md](check.md#levels)).\n\n\
         | code | name | default | finds |\n|---|---|---|---|\n",
    );
    for r in rules {
        // GitHub's anchor for the heading `## RL001 retry-amplification`.
        let anchor = format!("{}-{}", r.code, r.name).to_lowercase();
        let _ = writeln!(
            out,
            "| [{}](#{anchor}) | `{}` | {} | {} |",
            r.code,
            r.name,
            r.default.as_str(),
            r.summary
        );
    }
    for r in rules {
        out.push('\n');
        out.push_str(&demote(&formats::rules::explain(r)));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Every Markdown heading one level deeper; `#` lines inside code fences
/// (YAML comments) are not headings.
fn demote(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::with_capacity(text.len() + 32);
    for line in text.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::demote;

    #[test]
    fn demotes_headings_but_not_yaml_comments() {
        let text = "# RL001 x\n\n## Fix\n```yaml\n# a comment\nretry: 1\n```\n## Example\n";
        assert_eq!(
            demote(text),
            "## RL001 x\n\n### Fix\n```yaml\n# a comment\nretry: 1\n```\n### Example\n"
        );
    }
}
