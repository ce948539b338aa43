//! `retrylint export kubernetes|compose`: manifests that run every service
//! as its own `retrylint serve` process and the load as `retrylint drive`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::outcome::{Failure, Outcome, load_error};
use super::run_args::{EntryFlag, LoadArgs, RunArgs, load_target, prepare};
use retrylint::export::{self, Export, Target, inputs};

#[derive(Subcommand)]
pub enum ExportCommand {
    /// A Deployment and a Service per topology service, a ConfigMap with the
    /// topology and fault, a Job running the driver, and a
    /// kustomization.yaml: `kubectl apply --server-side -k DIR`.
    Kubernetes {
        #[command(flatten)]
        common: ExportArgs,
        /// The namespace of every object; assumed to exist [default:
        /// `retrylint`, created by the export].
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
    },
    /// A compose.yaml with one service per topology service and the driver:
    /// `docker compose up -d --wait && docker compose run --rm retrylint-drive`.
    Compose {
        #[command(flatten)]
        common: ExportArgs,
    },
}

#[derive(Args)]
pub struct ExportArgs {
    /// The topology file (schema version 1).
    topology: PathBuf,
    /// The fault scenario to inject: a shipped name or a path; it goes into
    /// the manifests as its YAML text [default: none, a baseline].
    #[arg(long, value_name = "NAME|PATH")]
    fault: Option<String>,
    /// The image that runs retrylint (built from the repository's
    /// Dockerfile).
    #[arg(long, value_name = "IMG", default_value = export::DEFAULT_IMAGE)]
    image: String,
    /// The directory to write into [default: TOPOLOGY-NAME-kubernetes or
    /// TOPOLOGY-NAME-compose]. A directory that holds anything is refused
    /// unless --force; other files in it are then left alone.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// Write into a directory that is not empty, replacing the files of the
    /// same names (`kustomization.yaml`, `compose.yaml`, …).
    #[arg(long)]
    force: bool,
    /// The driver's load, open loop: user requests per second [default: 20/s].
    #[arg(long, value_name = "R", conflicts_with = "clients")]
    rate: Option<String>,
    /// The driver's load, closed loop: this many callers.
    #[arg(long, value_name = "N")]
    clients: Option<u32>,
    /// Send at most this many user requests in total.
    #[arg(long, value_name = "M")]
    requests: Option<u64>,
    /// No attempt starts after this time (`10s`) [default: 5s, or 60s with --requests].
    #[arg(long, value_name = "D")]
    duration: Option<String>,
    /// Seed of every random draw, in every process [default: 42].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// A gate for the driver (`amplification(db) <= 3`, `success >= 0.99`);
    /// repeatable: the driver exits 1, failing the Job, when one is broken.
    #[arg(long, value_name = "EXPR")]
    expect: Vec<String>,
    /// The entry service the driver sends user requests to; needed when the
    /// topology has several.
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
}

pub fn export(command: ExportCommand) -> Result<Outcome, Failure> {
    let (target, args, namespace) = match command {
        ExportCommand::Kubernetes { common, namespace } => (Target::Kubernetes, common, namespace),
        ExportCommand::Compose { common } => (Target::Compose, common, None),
    };
    // The same checks as `chaos` and `simulate`: load flags, gates naming
    // services, a scenario whose target the topology has.
    let run = RunArgs {
        fault: args.fault.clone().unwrap_or_else(|| "none".into()),
        load: LoadArgs {
            target: None,
            rate: args.rate,
            clients: args.clients,
            requests: args.requests,
            duration: args.duration,
        },
        seed: args.seed,
        arrivals: None,
        format: None,
        expect: args.expect.clone(),
        policies: Vec::new(),
        sources: Default::default(),
    };
    let p = prepare(&run)?;
    let entry = EntryFlag {
        keep_others: true,
        ..EntryFlag::entry(args.entry.as_deref(), "export")
    };
    let t = load_target(Some(&args.topology), &p, entry)?;
    let (scenario, fault_text) = inputs::fault(args.fault.as_deref()).map_err(load_error)?;
    let x = Export {
        topology: &t,
        topology_text: inputs::topology_text(&t, &p.presets),
        scenario,
        fault_text,
        load: p.load,
        expect: args.expect,
        image: args.image,
        namespace,
        token: retrylint::chaos::Token::generate()
            .map_err(|e| Failure::Usage(format!("cannot make the run's token: {e}")))?,
    };
    let exported = export::export(target, &x).map_err(|e| Failure::Usage(e.to_string()))?;
    let dir = args.output.unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}-{}",
            export::dns::to_label(&t.name),
            target.name()
        ))
    });
    if !args.force
        && let Ok(mut entries) = std::fs::read_dir(&dir)
        && entries.next().is_some()
    {
        let replaced: Vec<&str> = exported
            .files
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(|name| dir.join(name).exists())
            .collect();
        let what = if replaced.is_empty() {
            String::new()
        } else {
            format!(" (it would replace {})", replaced.join(", "))
        };
        return Err(Failure::Usage(format!(
            "{} is not empty{what}: name an empty or new directory with -o, or pass --force to write into it",
            dir.display()
        )));
    }
    export::write(&dir, &exported)
        .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", dir.display())))?;
    for r in &exported.renamed {
        eprintln!(
            "note: service `{}` is `{}` in DNS (its name is not a DNS label)",
            r.service, r.dns
        );
    }
    for n in &exported.notes {
        eprintln!("note: {n}");
    }
    let next = match target {
        Target::Kubernetes => format!("kubectl apply --server-side -k {}", dir.display()),
        Target::Compose => format!(
            "cd {} && docker compose up -d --wait && docker compose run --rm {}",
            dir.display(),
            exported.driver
        ),
    };
    eprintln!(
        "wrote {} files to {}; next: {next}",
        exported.files.len(),
        dir.display()
    );
    Ok(Outcome::Clean)
}
