//! `status`: answer a status code at once, optionally with Retry-After, without
//! doing the service's work (a 503 from a failing dependency, a 429 from a rate
//! limiter).

use std::time::Duration;

use super::{Effect, FaultKind};
use crate::input::fields::{Fields, MapView};
use crate::policy::Rng;
use crate::topology::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub status: u16,
    /// Sent as `Retry-After` in whole seconds, rounded up.
    pub retry_after: Option<Duration>,
}

impl FaultKind for Status {
    const NAME: &'static str = "status";
    const KEYS: &'static [&'static str] = &["status", "retry_after"];

    fn read(f: Fields, m: &MapView) -> Result<Self, LoadError> {
        let Some(node) = m.get("status") else {
            return Err(f
                .error(m.pos, "a `status` fault needs `status:`")
                .with_help("add e.g. `status: 503`"));
        };
        let status = f.int(node, "status", 100, 599)? as u16;
        if status < 400 {
            return Err(f
                .error(
                    node.pos,
                    format!(
                        "`status: {}` is not a fault: only 4xx and 5xx answers fail a request",
                        f.written(node, status)
                    ),
                )
                .with_help(
                    "write the error to inject, e.g. `status: 503` or `status: 429` with `retry_after: 1s`; for a run without faults use `--fault none`",
                ));
        }
        let retry_after = m
            .get("retry_after")
            .map(|n| f.duration(n, "retry_after"))
            .transpose()?;
        Ok(Status {
            status,
            retry_after,
        })
    }

    fn effect(&self, _rng: &mut Rng) -> Effect {
        Effect::Respond {
            status: self.status,
            retry_after: self.retry_after,
        }
    }

    fn describe(&self) -> String {
        match self.retry_after {
            Some(ra) => format!(
                "{} with Retry-After {}",
                self.status,
                crate::input::duration::format(ra)
            ),
            None => self.status.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::load_str;
    use crate::policy::seeded_rng;

    #[test]
    fn answers_the_status_with_retry_after() {
        let s = load_str(
            "target: db\nphases: [{ inject: { kind: status, status: 429, retry_after: 1s } }]\n",
            "f.yaml",
        )
        .unwrap();
        let k = Status {
            status: 429,
            retry_after: Some(Duration::from_secs(1)),
        };
        assert_eq!(s.phases[0].inject, super::super::Inject::Status(k));
        assert_eq!(
            k.effect(&mut seeded_rng(1)),
            Effect::Respond {
                status: 429,
                retry_after: Some(Duration::from_secs(1))
            }
        );
        assert_eq!(k.describe(), "429 with Retry-After 1s");
    }

    #[test]
    fn needs_a_valid_status() {
        let e = load_str("phases: [{ inject: { kind: status } }]\n", "f.yaml").unwrap_err();
        assert!(e.to_string().contains("needs `status:`"), "{e}");
        let e = load_str(
            "phases: [{ inject: { kind: status, status: 99 } }]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("f.yaml:1:"), "{e}");
        let e = load_str(
            "phases: [{ inject: { kind: status, status: 200 } }]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.yaml:1:44: `status: 200` is not a fault: only 4xx and 5xx answers fail a request; write the error to inject, e.g. `status: 503` or `status: 429` with `retry_after: 1s`; for a run without faults use `--fault none`"
        );
    }
}
