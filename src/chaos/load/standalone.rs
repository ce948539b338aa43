//! One logical request through the harness's own retrying client
//! (`LayerClient`, the policy engine's loop over real HTTP) outside a
//! topology run: a client whose policy is known exactly, for `retrylint
//! probe` to measure in its tests and benches.

use std::sync::Arc;
use std::time::Duration;

use crate::chaos::ChaosError;
use crate::chaos::harness::api::http_client;
use crate::chaos::harness::caller::{CallCtx, CallerState};
use crate::chaos::harness::client::LayerClient;
use crate::chaos::harness::context::Run;
use crate::chaos::harness::draw::DrawKey;
use crate::chaos::harness::metrics::Metrics;
use crate::chaos::harness::transport::Transport;
use crate::faults::FaultPlan;
use crate::policy::{Outcome, RetryPolicy};
use crate::run::Layout;

/// One request and the layer that sends it.
#[derive(Debug, Clone)]
pub struct StandaloneRequest {
    /// `http://HOST:PORT/path`.
    pub url: String,
    pub method: String,
    pub policy: RetryPolicy,
    /// Per-attempt timeout; `None` waits as long as `horizon` allows.
    pub timeout: Option<Duration>,
    pub idempotency_key: Option<String>,
    /// Seeds the layer's jitter.
    pub seed: u64,
    /// No attempt starts after this long.
    pub horizon: Duration,
}

/// Sends `req` with retries on the caller's runtime; the last attempt's
/// outcome (`Timeout` when no attempt could start).
pub(crate) async fn standalone_request(req: StandaloneRequest) -> Result<Outcome, ChaosError> {
    let rest = req
        .url
        .strip_prefix("http://")
        .ok_or_else(|| ChaosError::Client(format!("`{}` is not a plain http:// URL", req.url)))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let method = reqwest::Method::from_bytes(req.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| ChaosError::Client(format!("`{}` is not an HTTP method", req.method)))?;
    let http = http_client()?;
    let plan = FaultPlan::none();
    let run = Arc::new(Run::new(
        req.horizon,
        http,
        plan,
        req.seed,
        Metrics::new(0, 1, Vec::new()),
    ));
    let client = LayerClient {
        run: Arc::clone(&run),
        slot: Layout::CLIENT,
        policy: req.policy.clone(),
        timeout: req.timeout,
        url: format!("http://{authority}"),
        transport: Transport::Reqwest(run.http.clone()),
        callee: None,
        propagate_deadline: false,
        hedging: None,
    };
    let state = CallerState::new(req.policy.budget.as_ref(), None, req.seed);
    let ctx = CallCtx {
        request_id: 1,
        method,
        path: Arc::from(path),
        non_idempotent: false,
        idempotency_key: req.idempotency_key.clone(),
        deadline: None,
        draw: DrawKey::user_request(req.seed, 0),
    };
    let result = client.call(&state, &ctx).await;
    run.cancel.cancel();
    Ok(result.outcome)
}

/// [`standalone_request`] on a runtime of its own.
pub fn standalone_request_blocking(req: StandaloneRequest) -> Result<Outcome, ChaosError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ChaosError::Runtime)?;
    let outcome = rt.block_on(standalone_request(req));
    rt.shutdown_timeout(Duration::from_millis(100));
    outcome
}
