//! `retrylint probe`: measures a real client's retry policy against
//! scripted faults on loopback; and the hidden `probe-client`, the
//! harness's own retrying client as a command, which the probe's tests and
//! benches measure because its policy is known exactly.

use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome, emit, load_error, presets};
use retrylint::chaos::{StandaloneRequest, standalone_request_blocking};
use retrylint::formats;
use retrylint::input::duration;
use retrylint::probe::{self, ClientCommand, ExpectError, ProbeError, ProbeOptions, Scenario};

#[derive(Args)]
pub struct ProbeArgs {
    /// Runs of the client per scenario.
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: u32,
    /// Only these scenarios (repeat or separate by commas): 500, 502, 503,
    /// 504, 429, 400, 404, 503-retry-after, 429-retry-after, reset, hang,
    /// refused, success-on-3 [default: all].
    #[arg(long = "scenario", value_name = "NAME", value_delimiter = ',')]
    scenarios: Vec<String>,
    /// The call's method as the topology declares it [default: as the
    /// client sends it].
    #[arg(long, value_name = "GET|POST|…")]
    method: Option<String>,
    /// The longest one run of the client may take; it is killed then, with
    /// everything it started.
    #[arg(long, default_value = "20s", value_name = "D")]
    timeout: String,
    /// Clients starting at once (up to four times as many alive, waiting
    /// between attempts). More is faster but, on a small machine, makes
    /// the measured waits noisier; 1 runs one client at a time, for a
    /// client that shares state across processes (a rate limiter in a file).
    #[arg(long, default_value_t = 4, value_name = "N")]
    parallel: usize,
    /// Output format [default: table].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Hold the client to the layer this topology declares (exit 1 on any
    /// difference); needs --call.
    #[arg(long, value_name = "TOPOLOGY", requires = "call")]
    expect_policy: Option<PathBuf>,
    /// The call whose layer the client implements: FROM→TO or FROM->TO.
    #[arg(long, value_name = "FROM→TO", requires = "expect_policy")]
    call: Option<String>,
    /// The layer of that call: `app` (its own retry:) or a `via` name.
    #[arg(long, value_name = "NAME", requires = "expect_policy")]
    layer: Option<String>,
    /// More retry-policy presets for --expect-policy: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    policies: Vec<PathBuf>,
    /// Serve HTTPS with a certificate authority made for this probe; its
    /// PEM's path is in SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
    /// NODE_EXTRA_CA_CERTS, CURL_CA_BUNDLE, AWS_CA_BUNDLE and RETRYLINT_CA,
    /// and removed afterwards.
    #[arg(long)]
    https: bool,
    /// The name in {url}: `localhost` or under `.localhost` (e.g.
    /// probe.localhost; bucket.probe.localhost reaches the same server).
    /// The server still listens on 127.0.0.1 only; the name must resolve
    /// there.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Infer again from a saved `--format json` report instead of running
    /// a client (its arrivals are all in it).
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = ["runs", "scenarios", "timeout", "parallel", "https", "host"])]
    replay: Option<PathBuf>,
    /// The client and its arguments, after `--`; `{url}` is replaced by the
    /// probe server's URL, also in $RETRYLINT_URL. Run without a shell.
    #[arg(last = true, required_unless_present = "replay", value_name = "CMD")]
    command: Vec<String>,
}

/// How a probe is printed (the CLI's names for `formats::ProbeFormat`).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Scenarios, the measured policy with evidence, YAML, preset, findings.
    Table,
    /// A PR comment.
    Markdown,
    /// One JSON object with every arrival.
    Json,
}

impl From<Format> for formats::ProbeFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => Self::Table,
            Format::Markdown => Self::Markdown,
            Format::Json => Self::Json,
        }
    }
}

pub fn probe(args: ProbeArgs) -> Result<Outcome, Failure> {
    let replayed = args.replay.is_some();
    let cmd = ClientCommand::from_argv(&args.command)
        .or_else(|| replayed.then(|| ClientCommand::from_argv(&["replay".to_owned()]))?);
    let cmd = cmd.ok_or_else(|| {
        Failure::Usage("give the client after `--`, e.g. -- curl -s {url}".into())
    })?;
    let bound =
        duration::parse(&args.timeout).map_err(|e| Failure::Usage(format!("--timeout: {e}")))?;
    if bound.is_zero() {
        return Err(Failure::Usage("--timeout must be longer than 0s".into()));
    }
    if args.runs == 0 || args.parallel == 0 {
        return Err(Failure::Usage(
            "--runs and --parallel must be at least 1".into(),
        ));
    }
    let scenarios = if args.scenarios.is_empty() {
        Scenario::all()
    } else {
        args.scenarios
            .iter()
            .map(|n| {
                Scenario::named(n.trim()).ok_or_else(|| {
                    Failure::Usage(format!(
                        "unknown scenario `{n}`; use {}",
                        Scenario::names().join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    if let Some(m) = &args.method
        && (m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        return Err(Failure::Usage(format!(
            "--method `{m}` is not an HTTP method such as GET or POST"
        )));
    }
    let expect = match (&args.expect_policy, &args.call) {
        (Some(path), Some(call)) => {
            let presets = presets(&args.policies)?;
            Some(
                probe::expect::load_declared(path, call, args.layer.as_deref(), &presets).map_err(
                    |e| match e {
                        ExpectError::Load(e) => load_error(*e),
                        ExpectError::Usage(m) => Failure::Usage(m),
                    },
                )?,
            )
        }
        _ => None,
    };
    let options = ProbeOptions {
        runs: args.runs,
        scenarios,
        method: args.method.clone(),
        bound,
        parallel: args.parallel,
        expect,
        progress: true,
        https: args.https,
        host: args.host.clone(),
        ..ProbeOptions::default()
    };
    let r = if let Some(path) = &args.replay {
        let shown = path.display().to_string();
        let text = retrylint::input::read::read_text(
            path,
            &shown,
            retrylint::input::read::FileKind::ProbeReport,
        )
        .map_err(load_error)?;
        probe::replay::replay(&text, &shown, &options).map_err(|e| Failure::Usage(e.to_string()))?
    } else {
        match probe::probe(&cmd, &options) {
            Ok(r) => r,
            Err(ProbeError::Interrupted) => return Ok(Outcome::Interrupted),
            Err(e) => return Err(Failure::Usage(e.to_string())),
        }
    };
    emit(&formats::render_probe(
        args.format.unwrap_or(Format::Table).into(),
        &r,
    ));
    Ok(if r.failed() {
        Outcome::Failed
    } else {
        Outcome::Clean
    })
}

#[derive(Args)]
pub struct ClientArgs {
    /// The retry policy in topology syntax: a preset name or a map.
    #[arg(long)]
    policy: String,
    /// Per-attempt timeout.
    #[arg(long, value_name = "D")]
    timeout: Option<String>,
    /// Seed of the jitter draws; each probe run adds its number
    /// ($RETRYLINT_RUN), so runs draw differently yet reproducibly.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value = "GET")]
    method: String,
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    /// No attempt starts after this long.
    #[arg(long, default_value = "60s", value_name = "D")]
    horizon: String,
    /// `http://HOST:PORT/path`.
    url: String,
}

/// One request with retries; exit 0 on a success, 1 otherwise.
pub fn client(args: ClientArgs) -> Result<Outcome, Failure> {
    let d = |flag: &str, s: &str| {
        duration::parse(s).map_err(|e| Failure::Usage(format!("--{flag}: {e}")))
    };
    let timeout = args
        .timeout
        .as_deref()
        .map(|t| d("timeout", t))
        .transpose()?;
    let horizon = d("horizon", &args.horizon)?;
    let policy = probe::render::load_policy(&args.policy, timeout, &presets(&[])?)
        .map_err(|e| Failure::Usage(format!("--policy: {e}")))?;
    let outcome = standalone_request_blocking(StandaloneRequest {
        url: args.url,
        method: args.method,
        policy,
        timeout,
        idempotency_key: args.idempotency_key,
        seed: args.seed.wrapping_add(
            std::env::var(probe::runner::RUN_ENV)
                .ok()
                .and_then(|r| r.parse().ok())
                .unwrap_or(0),
        ),
        horizon,
    })
    .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(if outcome.is_success() {
        Outcome::Clean
    } else {
        Outcome::Failed
    })
}
