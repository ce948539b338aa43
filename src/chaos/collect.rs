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

use super::api::ChaosError;
use super::serve::{CountersAnswer, StartRequest, StopRequest};
use super::token::Token;

/// How long one admin request may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The admin ports of one run, and what they need to be told.
pub(crate) struct Admins<'a> {
    pub http: &'a reqwest::Client,
    pub urls: &'a [String],
    pub token: Option<&'a Token>,
    pub run_id: &'a str,
}

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

fn failed(url: &str, what: &str, e: impl std::fmt::Display) -> ChaosError {
    ChaosError::Collect(format!("--collect {url}: cannot {what}: {e}"))
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
    pub async fn start_all(&self, req: &StartRequest) -> Result<Vec<u64>, ChaosError> {
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
    pub async fn counters(&self) -> Result<Vec<CountersAnswer>, ChaosError> {
        self.fetch_all().await
    }

    /// Ends every process's run, then fetches every process's counters.
    pub async fn stop_and_collect(&self) -> Result<Vec<CountersAnswer>, ChaosError> {
        self.stop(self.urls).await;
        self.fetch_all().await
    }

    async fn fetch_all(&self) -> Result<Vec<CountersAnswer>, ChaosError> {
        let mut answers = Vec::with_capacity(self.urls.len());
        for url in self.urls {
            answers.push(self.fetch(url).await?);
        }
        Ok(answers)
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
        let body = resp.bytes().await.map_err(|e| failed(url, what, e))?;
        if !status.is_success() {
            return Err(failed(url, what, status));
        }
        serde_json::from_slice(&body).map_err(|e| failed(url, what, e))
    }
}
