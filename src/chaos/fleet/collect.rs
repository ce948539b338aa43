//! `drive`'s side of the admin ports: starting every `serve` process's run,
//! stopping them, and fetching and merging their counters. Start and stop
//! carry the run's token and id; what each process answers to the start
//! (its run number) is checked again at the collect, so a run replaced in
//! between is reported, not merged.
//!
//! Clocks: each process counts its run from the moment it got the start
//! signal, and the driver from the moment every process had answered its
//! start; nothing compares wall clocks, so a clock offset between machines
//! changes nothing. What is assumed: the starts reach every process within
//! a few round trips of each other, so the 100 ms timeline buckets of
//! different processes line up to within that (on loopback, well under a
//! millisecond each).

use std::time::Duration;

use super::serve::{CountersAnswer, StartRequest, StopRequest};
use super::token::Token;
use crate::chaos::harness::api::ChaosError;

/// How long one admin request may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);
/// What a counters answer may take besides its share per service and
/// layer (a process's own latency histograms, its timeline).
const COUNTERS_BASE: usize = 16 * 1024 * 1024;
/// Per service and per layer slot of the topology: a counters answer holds
/// every one (about 430 bytes each, measured on a 2,000-service chain).
const COUNTERS_PER_ITEM: usize = 1024;

/// The most `drive` reads of one process's counters, for a topology of
/// `items` services and layer slots: a process that streams more (or an
/// endpoint that is no `serve`) is cut off there, not read into memory.
pub(crate) fn counters_limit(items: usize) -> usize {
    COUNTERS_BASE.saturating_add(items.saturating_mul(COUNTERS_PER_ITEM))
}

/// The admin ports of one run, and what they need to be told.
pub(crate) struct Admins<'a> {
    pub http: &'a reqwest::Client,
    pub(crate) urls: &'a [String],
    pub token: Option<&'a Token>,
    pub run_id: &'a str,
    /// The most read of one counters answer ([`counters_limit`]).
    pub(crate) max_body: usize,
}

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

fn failed(url: &str, what: &str, e: impl std::fmt::Display) -> ChaosError {
    ChaosError::Collect(format!("--collect {url}: cannot {what}: {e}"))
}

fn size(bytes: usize) -> String {
    format!("{} MiB", bytes.div_ceil(1024 * 1024))
}

#[derive(serde::Deserialize)]
struct Started {
    run: u64,
}

impl Admins<'_> {
    fn post(&self, url: &str, path: &str, body: String) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(format!("{}{path}", base(url)))
            .header("content-type", "application/json")
            .body(body)
            .timeout(ADMIN_TIMEOUT);
        if let Some(t) = self.token {
            req = req.header("authorization", format!("Bearer {}", t.expose()));
        }
        req
    }

    /// Posts the start to every admin URL, in order: the run number each
    /// one gave. Should one refuse, those already started are stopped.
    pub(crate) async fn start_all(&self, req: &StartRequest) -> Result<Vec<u64>, ChaosError> {
        let body = serde_json::to_string(req).map_err(|e| ChaosError::Collect(e.to_string()))?;
        let mut numbers = Vec::with_capacity(self.urls.len());
        for url in self.urls {
            match self.start(url, body.clone()).await {
                Ok(n) => numbers.push(n),
                Err(e) => {
                    self.stop(&self.urls[..numbers.len()]).await;
                    return Err(e);
                }
            }
        }
        Ok(numbers)
    }

    async fn start(&self, url: &str, body: String) -> Result<u64, ChaosError> {
        let what = "start the run";
        let resp = self
            .post(url, "/retrylint/start", body)
            .send()
            .await
            .map_err(|e| failed(url, what, e))?;
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(failed(url, what, format!("{status}: {}", text.trim())));
        }
        let started: Started = serde_json::from_str(&text).map_err(|e| failed(url, what, e))?;
        Ok(started.run)
    }

    /// Ends this run on every one of `urls` (best effort: one already gone
    /// is no reason not to stop the others).
    async fn stop(&self, urls: &[String]) {
        let body = serde_json::to_string(&StopRequest {
            run_id: Some(self.run_id.to_owned()),
        })
        .unwrap_or_default();
        for url in urls {
            let _ = self.post(url, "/retrylint/stop", body.clone()).send().await;
        }
    }

    /// Every process's counters, without stopping anything: who serves what.
    pub(crate) async fn counters(&self) -> Result<Vec<CountersAnswer>, ChaosError> {
        self.fetch_all().await.into_iter().collect()
    }

    /// Ends every process's run, then fetches every process's counters:
    /// each one's, or why it could not be read (one process gone is no
    /// reason to lose the others').
    pub(crate) async fn stop_and_collect(&self) -> Vec<Result<CountersAnswer, ChaosError>> {
        self.stop(self.urls).await;
        self.fetch_all().await
    }

    async fn fetch_all(&self) -> Vec<Result<CountersAnswer, ChaosError>> {
        let mut answers = Vec::with_capacity(self.urls.len());
        for url in self.urls {
            answers.push(self.fetch(url).await);
        }
        answers
    }

    async fn fetch(&self, url: &str) -> Result<CountersAnswer, ChaosError> {
        let what = "read the counters";
        let resp = self
            .http
            .get(format!("{}/retrylint/counters", base(url)))
            .timeout(ADMIN_TIMEOUT)
            .send()
            .await
            .map_err(|e| failed(url, what, e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(failed(url, what, status));
        }
        let body = self
            .bounded_body(resp)
            .await
            .map_err(|e| failed(url, what, e))?;
        serde_json::from_slice(&body).map_err(|e| failed(url, what, e))
    }

    /// The body of `resp`, refused past [`Admins::max_body`] bytes.
    async fn bounded_body(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
        let limit = self.max_body;
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err(format!("the answer is over the {} limit", size(limit)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > limit {
                return Err(format!(
                    "the answer is over the {} limit for this topology (is this a `retrylint serve` admin port?)",
                    size(limit)
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}
