//! What the probe records: every attempt that reached the probe server, and
//! how each run of the client ended. Plain data, serialisable, in
//! milliseconds since the client was started.

use serde::{Deserialize, Serialize};

/// One attempt as the probe server saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// When the request head arrived, in ms since the client was started.
    pub at_ms: f64,
    pub method: String,
    pub path: String,
    /// The connection it came on: 1 for the run's first, in accept order.
    pub connection: u64,
    /// The client's port of that connection.
    pub peer_port: u16,
    pub body_bytes: usize,
    /// `Idempotency-Key`, when sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Headers that carry a deadline or an attempt count (`grpc-timeout`,
    /// `x-request-timeout`, `amz-sdk-request`, ...), by lowercase name.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notable_headers: Vec<(String, String)>,
    /// Hang scenario: when the client gave up on the attempt and closed the
    /// connection, in ms since the client was started; `None` when it never
    /// did before the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hung_up_ms: Option<f64>,
    /// The `Host` header when it names a host rather than an address
    /// (`--host`, or a virtual-hosted bucket's `bucket.NAME:PORT`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<String>,
}

/// How one run of the client ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it (not the probe's).
    Signal(i32),
    /// It outlived the time bound: the probe killed its process group.
    TimedOut,
    /// The probe was interrupted (Ctrl-C) and killed it.
    Interrupted,
    /// It could not be started.
    NotStarted,
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }

    /// `exit 0`, `killed at the time bound`.
    pub fn describe(self) -> String {
        match self {
            Exit::Code(c) => format!("exit {c}"),
            Exit::Signal(s) => format!("signal {s}"),
            Exit::TimedOut => "killed at the time bound".into(),
            Exit::Interrupted => "interrupted".into(),
            Exit::NotStarted => "not started".into(),
        }
    }
}

/// One run of the client against one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The URL the client was given.
    pub url: String,
    pub arrivals: Vec<Arrival>,
    pub exit: Exit,
    /// From start to exit (or to the kill), in ms.
    pub elapsed_ms: f64,
    /// Against a closed port: the connection attempts the kernel refused,
    /// counted as SYNs to the port (`None` where a raw socket is not
    /// permitted, and in every other scenario).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refused_connects: Option<u32>,
    /// The last lines the client wrote to stderr (at most a few KB).
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub stderr_tail: String,
    /// `--https`: TLS handshakes the client did not complete (no request
    /// was sent on them), and the first one's error.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub handshakes_failed: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub handshake_error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl RunRecord {
    /// Waits between consecutive attempts, in ms: from the end of one
    /// attempt (its answer, or the client hanging up) to the next arrival.
    pub(crate) fn waits_ms(&self) -> Vec<f64> {
        self.arrivals
            .windows(2)
            .map(|w| {
                let ended = w[0].hung_up_ms.unwrap_or(w[0].at_ms);
                (w[1].at_ms - ended).max(0.0)
            })
            .collect()
    }
}

impl RunRecord {
    /// The run as if it had been killed at `cut_ms`: a hang run started
    /// before its cut was known, and held past it, shows no more than one
    /// held for the cut alone (what came later is dropped).
    pub(crate) fn cut_to(&mut self, cut_ms: f64) {
        if self.elapsed_ms <= cut_ms {
            return;
        }
        self.arrivals.retain(|a| a.at_ms <= cut_ms);
        for a in &mut self.arrivals {
            if a.hung_up_ms.is_some_and(|h| h > cut_ms) {
                a.hung_up_ms = None;
            }
        }
        self.exit = Exit::TimedOut;
        self.elapsed_ms = cut_ms;
    }
}

/// Every run of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    pub name: String,
    pub description: String,
    pub runs: Vec<RunRecord>,
    /// The time bound of this scenario's runs when shorter than the
    /// probe's (the hang runs, cut once they outlast every wait seen).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bound_ms: Option<f64>,
}
