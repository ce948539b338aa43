//! The headers the harness adds to every hop, and rendering them for either
//! transport without allocating.

use super::draw::DrawKey;

/// The logical request: the same on every retry of every layer of one call.
pub(crate) const REQUEST_ID: &str = "x-retrylint-request";
/// Set on calls that are not idempotent, so the callee counts duplicates.
pub(crate) const NON_IDEMPOTENT: &str = "x-retrylint-non-idempotent";
/// Remaining time of the caller's deadline, in µs (like `grpc-timeout`).
pub(crate) const DEADLINE_US: &str = "x-retrylint-deadline-us";
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The attempt's draw key (`DrawKey`), in decimal.
pub(crate) const DRAW: &str = "x-retrylint-draw";

/// A harness header's decimal value, if present and well formed.
pub(crate) fn number(headers: &axum::http::HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.parse().ok()
}

/// The harness headers of one attempt, for either transport to render.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptHeaders<'a> {
    pub(crate) request_id: u64,
    pub(crate) non_idempotent: bool,
    pub idempotency_key: Option<&'a str>,
    /// The remaining deadline sent downstream, in µs.
    pub(crate) deadline_us: Option<u64>,
    pub draw: DrawKey,
}

/// Room to render the numeric header values without allocating.
#[derive(Default)]
pub(crate) struct HeaderScratch {
    request_id: itoa::Buffer,
    deadline: itoa::Buffer,
    draw: itoa::Buffer,
}

impl<'a> AttemptHeaders<'a> {
    /// Each header's name and value, numbers rendered into `scratch`.
    pub(crate) fn pairs<'s>(
        &self,
        scratch: &'s mut HeaderScratch,
    ) -> impl Iterator<Item = (&'static str, &'s str)>
    where
        'a: 's,
    {
        let HeaderScratch {
            request_id,
            deadline,
            draw,
        } = scratch;
        [
            Some((REQUEST_ID, request_id.format(self.request_id))),
            Some((DRAW, draw.format(self.draw.0))),
            self.non_idempotent.then_some((NON_IDEMPOTENT, "1")),
            self.idempotency_key.map(|k| (IDEMPOTENCY_KEY, k)),
            self.deadline_us
                .map(|us| (DEADLINE_US, deadline.format(us))),
        ]
        .into_iter()
        .flatten()
    }
}
