//! `retrylint serve`: one service of the topology as its own process.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::outcome::{Failure, Outcome, load_error, presets};
use super::token_args::{self, TokenArgs};
use super::values::whole;
use retrylint::chaos::{self, Admission, Resolver, ServeConfig};
use retrylint::{faults, topology};

#[derive(Args)]
pub struct ServeArgs {
    /// The topology file (schema version 1).
    pub topology: PathBuf,
    /// The service to serve, as the topology names it.
    #[arg(long, value_name = "NAME")]
    pub service: String,
    /// Where the service listens: `PORT`, `127.0.0.1:PORT`, or another IP
    /// written out (`0.0.0.0:8080` listens on every interface) [default:
    /// 127.0.0.1:0, a port the OS picks, printed on the ready line].
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub listen: Option<SocketAddr>,
    /// Where `/metrics`, `/retrylint/*` and `/healthz` listen; as --listen.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub admin: Option<SocketAddr>,
    /// Where the other services are: a YAML file of `NAME: HOST:PORT` lines.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "resolve",
        required_unless_present = "resolve"
    )]
    pub peers: Option<PathBuf>,
    /// Find callees by DNS name, as inside a Kubernetes namespace or a
    /// Compose project: `http://<name>:<--peer-port>`.
    #[arg(long, value_enum)]
    pub resolve: Option<Resolve>,
    /// The port callees listen on under `--resolve dns`.
    #[arg(long, value_name = "PORT", default_value_t = 8080,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub peer_port: u16,
    /// The fault scenario (as `chaos --fault`); the same as the driver's.
    #[arg(long, default_value = "503-burst", value_name = "NAME|PATH")]
    pub fault: String,
    /// Inject into this service instead of the scenario's target.
    #[arg(long, value_name = "SERVICE")]
    pub target: Option<String>,
    /// Seed of every random draw; the same as the driver's `--seed`.
    #[arg(long, value_name = "S", default_value_t = retrylint::run::LoadSettings::DEFAULT_SEED,
          value_parser = whole(0u64, u64::MAX))]
    pub seed: u64,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    pub policies: Vec<PathBuf>,
    #[command(flatten)]
    pub token: TokenArgs,
    /// A host name the admin port is reached by (its DNS name in a cluster):
    /// start and stop naming another `Host` than loopback, this or the IP of
    /// --admin are refused. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Close a connection (to either port) that has not sent a whole
    /// request head this long after it opened or after its last answer.
    #[arg(long, value_name = "D", default_value = "30s", value_parser = header_timeout)]
    pub header_timeout: Duration,
}

fn header_timeout(text: &str) -> Result<Duration, String> {
    match retrylint::input::duration::parse(text) {
        Ok(d) if !d.is_zero() && d <= Duration::from_secs(3600) => Ok(d),
        Ok(_) => Err(format!("`{text}`: write a time from 1ms to 1h, e.g. `30s`")),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Resolve {
    /// `http://<DNS name of the service>:<--peer-port>`.
    Dns,
}

/// An address to listen on. A bare port and `localhost` mean 127.0.0.1; any
/// other address must be an IP written out — a host name is refused, so a
/// non-loopback address is never chosen by a resolver or a default.
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    Err(format!(
        "`{text}` is not an IP address and port: write `127.0.0.1:8080` (or a bare port) for this machine only, or an IP such as `0.0.0.0:8080` to listen beyond it — a non-loopback address is only ever taken as written, never from a host name or a default"
    ))
}

pub fn serve(args: ServeArgs) -> Result<Outcome, Failure> {
    let presets = presets(&args.policies)?;
    let t = topology::load(&args.topology, &presets).map_err(load_error)?;
    let service = t
        .services
        .iter()
        .position(|s| s.name == args.service)
        .ok_or_else(|| {
            Failure::Usage(format!(
                "--service {}: no such service in {}; the services are: {}",
                args.service,
                args.topology.display(),
                t.services
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    let mut scenario = faults::load(&args.fault).map_err(load_error)?;
    if let Some(target) = &args.target {
        scenario.target = target
            .parse()
            .map_err(|e| Failure::Usage(format!("--target {target}: {e}")))?;
        scenario.target_at = None;
    }
    let resolver = match (&args.peers, args.resolve) {
        (Some(file), _) => chaos::fleet::peers::load(file, &t).map_err(load_error)?,
        (None, _) => Resolver::dns(&t, args.peer_port),
    };
    let token = args
        .token
        .token(true)?
        .ok_or_else(|| token_args::missing("serve"))?;
    for h in &args.allow_host {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_graphic()) || h.contains([':', '/']) {
            return Err(Failure::Usage(format!(
                "--allow-host `{}` is not a host name: write the name alone, without a port (e.g. `--allow-host web.retrylint.svc`)",
                retrylint::visible::name(h)
            )));
        }
    }
    let loopback = SocketAddr::from((IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    let listen = args.listen.unwrap_or(loopback);
    let admin = args.admin.unwrap_or(loopback);
    for (flag, addr) in [("--listen", listen), ("--admin", admin)] {
        if !addr.ip().is_loopback() {
            eprintln!(
                "warning: {flag} {addr} listens beyond this machine: anyone who can reach it can send requests{}; bind 127.0.0.1 unless other machines must reach it",
                if flag == "--admin" {
                    " and read the counters (start and stop still need the token)"
                } else {
                    " to the service"
                }
            );
        }
    }
    let config = ServeConfig {
        topology: t,
        scenario,
        service,
        listen,
        admin,
        resolver,
        seed: args.seed,
        admission: Admission::new(token, &args.allow_host, admin),
        header_timeout: args.header_timeout,
    };
    let name = args.service.clone();
    let result = chaos::serve_blocking(config, |bound| {
        // The readiness line: tests and scripts wait for it.
        super::outcome::emit(&format!(
            "ready service={name} http={} admin={}\n",
            bound.http, bound.admin
        ));
    });
    match result {
        Ok(()) => Ok(Outcome::Clean),
        Err(
            e @ (chaos::ChaosError::Target(_)
            | chaos::ChaosError::Unresolved(_)
            | chaos::ChaosError::Bind(_)),
        ) => Err(Failure::Usage(e.to_string())),
        Err(e) => Err(Failure::Usage(format!("serve failed: {e}"))),
    }
}
