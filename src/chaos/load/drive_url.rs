//! The load driver alone against any plain-HTTP URL: for benchmarks and for
//! pointing a game day at a real service.

use std::sync::Arc;
use std::time::Instant;

use super::driver::Driver;
use crate::chaos::harness::api::{ChaosError, RunOptions, drive_until_done, http_client};
use crate::chaos::harness::client::LayerClient;
use crate::chaos::harness::context::Run;
use crate::chaos::harness::metrics::Metrics;
use crate::chaos::harness::transport::{DirectPool, Transport};
use crate::run::{Layout, LoadSettings, Mode, RunReport};

/// Drives `load` against any HTTP server at `url` (plain `http://`, loopback
/// or not) through a client layer without retries: the load driver alone,
/// for benchmarks and for pointing a game day at a real service. The report
/// has only end-to-end figures.
pub async fn drive_url(
    url: &str,
    load: &LoadSettings,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let wall = Instant::now();
    let http = http_client()?;
    let plan = crate::faults::FaultPlan::none();
    let metrics = Metrics::new(0, 1, Vec::new());
    let run = Arc::new(Run::new(load.horizon(), http, plan, 0, metrics));
    let (authority, path, addr) = entry(url).await?;
    let client = LayerClient {
        run: Arc::clone(&run),
        slot: Layout::CLIENT,
        policy: Default::default(),
        timeout: None,
        url: format!("http://{authority}"),
        transport: Transport::Direct(DirectPool::new(addr)),
        callee: None,
        propagate_deadline: false,
        hedging: None,
    };
    let driver = Arc::new(Driver {
        run: Arc::clone(&run),
        client: Arc::new(client),
        budget: None,
        breaker: None,
        deadline: None,
        load: load.clone(),
        path: path.into(),
        max_in_flight: options.max_in_flight,
        started: Default::default(),
        finished: Default::default(),
    });
    let interrupted = drive_until_done(&run, driver, options).await;
    let report = RunReport {
        fault: "none".into(),
        seed: load.seed,
        mode: Mode::Drive.as_str().into(),
        topology: url.to_owned(),
        target: url.to_owned(),
        load: load.summary(),
        end_to_end: run.metrics.end_to_end(None),
        elapsed_ms: wall.elapsed().as_secs_f64() * 1e3,
        interrupted,
        harness: run.metrics.harness(),
        ..RunReport::default()
    };
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// A plain `http://HOST[:PORT][/PATH]` URL as its authority, its path (the
/// fragment dropped) and the address it resolves to.
pub(crate) async fn entry(url: &str) -> Result<(String, String, std::net::SocketAddr), ChaosError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| ChaosError::Client(format!("`{url}` is not a plain http:// URL")))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_owned()),
        None => (rest, "/".to_owned()),
    };
    // The fragment stays with the client; the rest goes on the request line
    // as written, so it must be one visible-ASCII token.
    let path = path.split('#').next().unwrap_or("/").to_owned();
    if !path.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ChaosError::Client(format!(
            "`{url}`: the path must be visible ASCII without spaces (percent-encode the rest)"
        )));
    }
    let with_port = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let addr = tokio::net::lookup_host(with_port.as_str())
        .await
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| ChaosError::Client(format!("cannot resolve `{authority}`")))?;
    Ok((authority.to_owned(), path, addr))
}
