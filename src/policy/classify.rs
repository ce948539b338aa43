//! Retry classification: which outcomes of an attempt a policy retries.

use std::fmt;
use std::str::FromStr;

/// What one attempt came back with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// An HTTP response; below 400 is a success.
    Status(u16),
    /// No answer within the per-attempt timeout.
    Timeout,
    /// Connection refused: the request never reached the server.
    Connect,
    /// Connection closed without a response: the server may have done the work.
    Reset,
}

impl Outcome {
    pub fn is_success(self) -> bool {
        matches!(self, Outcome::Status(s) if s < 400)
    }

    /// The status a service answers with when a call of its own ends in this
    /// outcome after its retries (docs/chaos.md, "Semantics shared by `chaos` and
    /// `simulate`").
    pub(crate) fn propagated_status(self) -> u16 {
        match self {
            Outcome::Status(s) => s,
            Outcome::Timeout => 504,
            Outcome::Reset | Outcome::Connect => 502,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Status(s) => write!(f, "{s}"),
            Outcome::Timeout => f.write_str("timeout"),
            Outcome::Connect => f.write_str("connect"),
            Outcome::Reset => f.write_str("reset"),
        }
    }
}

/// One entry of `retry_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Condition {
    Timeout,
    Connect,
    Reset,
    Status(u16),
    /// `4xx` is `Class(4)`, `5xx` is `Class(5)`.
    Class(u16),
}

impl Condition {
    pub fn matches(self, outcome: Outcome) -> bool {
        match (self, outcome) {
            (Condition::Timeout, Outcome::Timeout)
            | (Condition::Connect, Outcome::Connect)
            | (Condition::Reset, Outcome::Reset) => true,
            (Condition::Status(c), Outcome::Status(s)) => c == s,
            (Condition::Class(c), Outcome::Status(s)) => s / 100 == c,
            _ => false,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Timeout => f.write_str("timeout"),
            Condition::Connect => f.write_str("connect"),
            Condition::Reset => f.write_str("reset"),
            Condition::Status(s) => write!(f, "{s}"),
            Condition::Class(c) => write!(f, "{c}xx"),
        }
    }
}

/// Why a `retry_on` entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown retry condition `{0}`")]
pub struct UnknownCondition(pub String);

impl FromStr for Condition {
    type Err = UnknownCondition;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "timeout" => return Ok(Condition::Timeout),
            "connect" => return Ok(Condition::Connect),
            "reset" => return Ok(Condition::Reset),
            _ => {}
        }
        if let Some(class) = t.strip_suffix("xx")
            && let Ok(c @ 1..=5) = class.parse::<u16>()
        {
            return Ok(Condition::Class(c));
        }
        match t.parse::<u16>() {
            Ok(code @ 100..=599) => Ok(Condition::Status(code)),
            _ => Err(UnknownCondition(s.to_owned())),
        }
    }
}

/// The outcomes a policy retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOn(pub Vec<Condition>);

impl Default for RetryOn {
    /// `[timeout, connect, reset, 429, 502, 503, 504]`.
    fn default() -> Self {
        RetryOn(vec![
            Condition::Timeout,
            Condition::Connect,
            Condition::Reset,
            Condition::Status(429),
            Condition::Status(502),
            Condition::Status(503),
            Condition::Status(504),
        ])
    }
}

impl RetryOn {
    pub fn matches(&self, outcome: Outcome) -> bool {
        !outcome.is_success() && self.0.iter().any(|c| c.matches(outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let got: Vec<Condition> = ["timeout", "connect", "reset", "503", "5xx", "4XX"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(
            got,
            [
                Condition::Timeout,
                Condition::Connect,
                Condition::Reset,
                Condition::Status(503),
                Condition::Class(5),
                Condition::Class(4)
            ]
        );
        assert!("50".parse::<Condition>().is_err());
        assert!("refused".parse::<Condition>().is_err());
        assert!("9xx".parse::<Condition>().is_err());
    }

    #[test]
    fn default_retries_transient_failures_only() {
        let on = RetryOn::default();
        assert!(on.matches(Outcome::Status(503)));
        assert!(on.matches(Outcome::Timeout));
        assert!(!on.matches(Outcome::Status(500)));
        assert!(!on.matches(Outcome::Status(404)));
        assert!(!on.matches(Outcome::Status(200)));
        let classes = RetryOn(vec![Condition::Class(5)]);
        assert!(classes.matches(Outcome::Status(500)));
        assert!(!classes.matches(Outcome::Reset));
    }
}
