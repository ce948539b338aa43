//! The flags that read configuration where it lives (`--from`,
//! `--istio-version`, `--verbose`), shared by `check`, `chaos`, `simulate`
//! and `import`, and loading a topology with its sources merged in.

use std::path::{Path, PathBuf};

use clap::Args;

use super::outcome::{Failure, load_error};
use retrylint::external;
use retrylint::input::read::{FileKind, STDIN, read_stdin};
use retrylint::topology::{self, Merged, Presets};

#[derive(Args, Clone, Default)]
pub struct SourceArgs {
    /// Mesh, gateway or gRPC configuration, or a trace export, to merge into
    /// the topology: a file or a directory (walked for .yaml, .yml, .json),
    /// or `-` for standard input (`helm template … | retrylint check
    /// --from -`); repeatable. With traces, no topology file is needed.
    #[arg(long, value_name = "PATH")]
    pub from: Vec<PathBuf>,
    /// Skip the files a directory walk finds that match GLOB (`*` and `?`
    /// within a path segment, `**` across; a pattern without `/` also
    /// matches the file name): `--exclude '*.golden.json'`; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// The Istio version whose default retry policy applies (`1.23`: 503 is
    /// retried; `1.24` and later: not) [default: the newest].
    #[arg(long, value_name = "1.X", value_parser = parse_istio)]
    pub istio_version: Option<u32>,
    /// The Gateway API implementation whose translation of an HTTPRoute's
    /// `retry` applies: `envoy-gateway` (a rule without `codes` retries
    /// 503) or `istio` (it retries connection failures only)
    /// [default: envoy-gateway].
    #[arg(long, value_name = "IMPL", value_parser = parse_gateway)]
    pub gateway: Option<external::gateway_api::Implementation>,
    /// The service whose sidecar or proxy wrote the metrics files that
    /// --from names (an Envoy `/stats/prometheus` dump, a Prometheus query
    /// result): a proxy's counters are one caller's, and they do not say
    /// whose. Without it, counters with requests are an error.
    #[arg(long, value_name = "SERVICE")]
    pub metrics_caller: Option<String>,
    /// List the documents read and skipped from the sources.
    #[arg(long)]
    pub verbose: bool,
    /// Let a topology's `sources:` name files outside its directory
    /// (absolute paths, `..`, links that lead out). Off, so that a pull
    /// request cannot make CI read a file elsewhere on the runner.
    #[arg(long)]
    pub allow_outside: bool,
}

fn parse_gateway(s: &str) -> Result<external::gateway_api::Implementation, String> {
    external::gateway_api::Implementation::parse(s)
}

fn parse_istio(s: &str) -> Result<u32, String> {
    external::parse_istio_version(s)
}

impl SourceArgs {
    /// Each `--from` path with the caller `--metrics-caller` names.
    fn requests(&self) -> Vec<external::Request> {
        self.from
            .iter()
            .map(|p| external::Request {
                caller: self.metrics_caller.clone(),
                ..external::Request::path(p)
            })
            .collect()
    }

    fn options(&self) -> external::Options {
        external::Options {
            allow_outside: self.allow_outside,
            gateway: self.gateway.unwrap_or_default(),
            ..external::Options::istio(self.istio_version.unwrap_or(external::istio::NEWEST_MINOR))
        }
    }
}

/// Loads `path` (`-` is standard input; `None` needs `--from` traces) with
/// every source merged in, printing the notes to standard error.
pub fn load(path: Option<&Path>, args: &SourceArgs, presets: &Presets) -> Result<Merged, Failure> {
    let stdin_twice = path.is_some_and(|p| p.as_os_str() == "-")
        && args.from.iter().any(|p| p.as_os_str() == "-");
    if stdin_twice {
        return Err(Failure::Usage(
            "standard input can be the topology or a --from source, not both: give the topology as a file".into(),
        ));
    }
    let merged = if path.is_some_and(|p| p.as_os_str() == "-") {
        let text = read_stdin(FileKind::Topology).map_err(|e| Failure::Input(Box::new(e), None))?;
        let base = topology::load_str(&text, STDIN, "stdin", presets)
            .map_err(|e| Failure::Input(Box::new(e), Some(text)))?;
        if args.from.is_empty() {
            Merged {
                topology: base,
                notes: Vec::new(),
                skipped: Vec::new(),
                read: Vec::new(),
                measured: Vec::new(),
                summary: String::new(),
            }
        } else {
            let requests = args.requests();
            let facts = external::import_excluding(&requests, args.options(), &args.exclude)
                .map_err(load_error)?;
            topology::merge::merge(Some(base), &facts, presets).map_err(load_error)?
        }
    } else {
        if path.is_none() && args.from.is_empty() {
            return Err(Failure::Usage(
                "give a topology file, or --from with configuration and a trace export".into(),
            ));
        }
        topology::merge::load_with_sources_excluding(
            path,
            &args.requests(),
            args.options(),
            &args.exclude,
            presets,
        )
        .map_err(load_error)?
    };
    if args.verbose {
        for (kind, n) in &merged.read {
            eprintln!("read: {n} × {kind}");
        }
        for s in &merged.skipped {
            eprintln!("{s}");
        }
    }
    // Always: a clean result must say what it was a result of.
    if !merged.summary.is_empty() {
        eprintln!("{}", merged.summary);
    }
    for n in &merged.notes {
        eprintln!("{n}");
    }
    Ok(merged)
}
