//! `drive`'s side of the admin ports: starting every `serve` process's run,
//! stopping them, and fetching and merging their counters.
//!
//! Clocks: each process counts its run from the moment it got the start
//! signal, and the driver from the moment every process had answered its
//! start; nothing compares wall clocks, so a clock offset between machines
//! changes nothing. What is assumed: the starts reach every process within
//! a few round trips of each other, so the 100 ms timeline buckets of
//! different processes line up to within that (on loopback, well under a
//! millisecond each).

use std::time::Duration;

use super::api::ChaosError;
use super::serve::{CountersAnswer, StartRequest};

/// How long one admin request may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

fn failed(url: &str, what: &str, e: impl std::fmt::Display) -> ChaosError {
    ChaosError::Collect(format!("--collect {url}: cannot {what}: {e}"))
}

/// Posts the start to every admin URL, in order.
pub(crate) async fn start_all(
    http: &reqwest::Client,
    urls: &[String],
    req: &StartRequest,
) -> Result<(), ChaosError> {
    let body = serde_json::to_string(req).map_err(|e| ChaosError::Collect(e.to_string()))?;
    for url in urls {
        let resp = http
            .post(format!("{}/retrylint/start", base(url)))
            .header("content-type", "application/json")
            .body(body.clone())
            .timeout(ADMIN_TIMEOUT)
            .send()
            .await
            .map_err(|e| failed(url, "start the run", e))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            return Err(failed(
                url,
                "start the run",
                format!("{status}: {}", text.trim()),
            ));
        }
    }
    Ok(())
}

/// Every process's counters, without stopping anything: who serves what.
pub(crate) async fn counters(
    http: &reqwest::Client,
    urls: &[String],
) -> Result<Vec<CountersAnswer>, ChaosError> {
    fetch_all(http, urls).await
}

/// Ends every process's run (best effort: one already gone is no reason
/// not to stop the others), then fetches every process's counters.
pub(crate) async fn stop_and_collect(
    http: &reqwest::Client,
    urls: &[String],
) -> Result<Vec<CountersAnswer>, ChaosError> {
    for url in urls {
        let _ = http
            .post(format!("{}/retrylint/stop", base(url)))
            .timeout(ADMIN_TIMEOUT)
            .send()
            .await;
    }
    fetch_all(http, urls).await
}

async fn fetch_all(
    http: &reqwest::Client,
    urls: &[String],
) -> Result<Vec<CountersAnswer>, ChaosError> {
    let mut answers = Vec::with_capacity(urls.len());
    for url in urls {
        let resp = http
            .get(format!("{}/retrylint/counters", base(url)))
            .timeout(ADMIN_TIMEOUT)
            .send()
            .await
            .map_err(|e| failed(url, "read the counters", e))?;
        let status = resp.status();
        let body = resp
            .bytes()
            .await
            .map_err(|e| failed(url, "read the counters", e))?;
        if !status.is_success() {
            return Err(failed(url, "read the counters", status));
        }
        let answer: CountersAnswer =
            serde_json::from_slice(&body).map_err(|e| failed(url, "read the counters", e))?;
        answers.push(answer);
    }
    Ok(answers)
}
