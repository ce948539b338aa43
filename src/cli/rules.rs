//! `retrylint rules` and `retrylint explain`: the catalogue and each rule's
//! documentation, from the text that implements it.

use super::outcome::{Failure, Outcome, emit};
use retrylint::{lint, report};

pub fn rules() -> Result<Outcome, Failure> {
    emit(&report::rules::list(lint::RULES));
    Ok(Outcome::Clean)
}

pub fn explain(code: &str) -> Result<Outcome, Failure> {
    match lint::rules::find_rule(code) {
        Some(i) => {
            emit(&report::rules::explain(lint::RULES[i]));
            Ok(Outcome::Clean)
        }
        None => Err(Failure::Usage(format!(
            "unknown rule `{code}`; `retrylint rules` lists them"
        ))),
    }
}
