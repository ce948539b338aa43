//! Manifests that run a topology past one machine: every service as its own
//! `retrylint serve` process and the load driver as `retrylint drive`, on
//! Kubernetes (`kubernetes`) or Docker Compose (`compose`).
//!
//! What both targets share is decided here once — the DNS name of every
//! service (`dns`), the command lines (`command`, the contract with `serve`
//! and `drive`), the resources from the load (`sizing`), the shipped files
//! (`inputs`) — and each target only lays it out in its own format, written
//! by `yaml`. Nothing here prints; [`write`] is the only I/O.

pub mod command;
pub mod compose;
pub mod inputs;
pub mod kubernetes;
pub(crate) mod sizing;
pub mod yaml;

use std::path::Path;

use crate::faults::Scenario;
use crate::run::LoadSettings;
use crate::topology::Topology;

// The names live with the topology (`serve` dials them too); they are
// exported from here, where the manifests use them.
pub use crate::topology::dns::{self, dns_names};
pub(crate) use inputs::Shipped;
pub(crate) use sizing::Sizing;

/// The image the manifests run unless `--image` says otherwise: what
/// `docker build -t retrylint:latest .` builds from the repository's
/// Dockerfile.
pub const DEFAULT_IMAGE: &str = "retrylint:latest";
/// The namespace unless `--namespace` says otherwise; the export creates it.
pub(crate) const DEFAULT_NAMESPACE: &str = "retrylint";
/// The base name of the load driver's Job or Compose service.
pub(crate) const DRIVER: &str = "retrylint-drive";
/// Past this many services, waiting for each one in turn takes minutes.
const LARGE_FOR_INIT_CONTAINERS: usize = 100;
/// The image's user (distroless `nonroot`).
pub(crate) const RUN_AS: i64 = 65532;

/// Where the manifests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Kubernetes,
    Compose,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Kubernetes => "kubernetes",
            Target::Compose => "compose",
        }
    }
}

/// What an export is made of.
#[derive(Debug, Clone)]
pub struct Export<'a> {
    pub topology: &'a Topology,
    /// The topology as shipped (`inputs::topology_text`).
    pub topology_text: Shipped,
    pub scenario: Scenario,
    /// The scenario as shipped (`inputs::fault`).
    pub fault_text: Shipped,
    pub load: LoadSettings,
    /// `--expect` gates for the driver, as written (checked by the caller).
    pub expect: Vec<String>,
    pub image: String,
    /// `None`: [`DEFAULT_NAMESPACE`], created by the export.
    pub namespace: Option<String>,
    /// The run's token every process gets (`Token::generate` for a real
    /// export: a fresh one each time).
    pub token: crate::chaos::Token,
}

/// A service whose name is not a DNS label, and the label it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renamed {
    pub service: String,
    pub dns: String,
}

/// The files of an export (paths relative to the output directory) and
/// what the user should know about them.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    pub files: Vec<(String, String)>,
    pub renamed: Vec<Renamed>,
    /// The name of the driver's Job or Compose service.
    pub driver: String,
    /// Warnings and notes, one line each.
    pub notes: Vec<String>,
    /// The files of `files` that hold the token: written readable by their
    /// owner only.
    pub(crate) private: Vec<String>,
}

/// Settings that cannot make valid manifests.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    #[error(
        "--namespace `{0}` is not a valid namespace name; use lowercase letters, digits and `-`, at most 63, starting and ending with a letter or digit (e.g. `retrylint`)"
    )]
    Namespace(String),
    #[error(
        "--image `{0}` is not an image reference; write e.g. `registry.example.com/retrylint:0.1.0`"
    )]
    Image(String),
    #[error(
        "the topology and fault files take {0} bytes, over the 1 MiB a ConfigMap can hold; export compose instead, or split the topology"
    )]
    TooLarge(usize),
}

/// What every target is laid out from.
pub(crate) struct Plan<'a> {
    pub x: &'a Export<'a>,
    /// DNS name of every service, indexed like `t.services`.
    pub names: Vec<String>,
    /// The driver's name, which no service has.
    pub driver: String,
    pub(crate) sizing: Sizing,
    pub renamed: Vec<Renamed>,
}

impl<'a> Plan<'a> {
    fn new(x: &'a Export<'a>) -> Plan<'a> {
        let t = x.topology;
        let names = dns_names(t);
        let renamed = t
            .services
            .iter()
            .zip(&names)
            .filter(|(s, n)| s.name != **n)
            .map(|(s, n)| Renamed {
                service: s.name.clone(),
                dns: n.clone(),
            })
            .collect();
        Plan {
            x,
            driver: dns::unused(DRIVER, &names),
            sizing: sizing::size(t, &x.scenario, &x.load),
            names,
            renamed,
        }
    }

    /// The topology's name as a label value (`app.kubernetes.io/instance`,
    /// the Compose project).
    pub(crate) fn instance(&self) -> String {
        dns::to_label(&self.x.topology.name)
    }

    pub(crate) fn entry(&self) -> &str {
        &self.names[self.x.topology.entry]
    }

    /// `serve`'s command line for service `i`, its admin port reached by
    /// the names `hosts`.
    pub(crate) fn serve_args(&self, i: usize, hosts: &[String]) -> Vec<String> {
        command::serve(&self.x.topology.services[i].name, self.x.load.seed, hosts)
    }

    pub(crate) fn drive_args(&self) -> Vec<String> {
        let mut args = command::drive(self.entry(), &self.names, &self.x.load, &self.x.expect);
        // The driver reads the shipped file, every entry in it: it is told
        // which one its URL serves.
        let t = self.x.topology;
        if t.entries.len() > 1 {
            args.extend(["--entry-service".into(), t.services[t.entry].name.clone()]);
        }
        args
    }

    /// The comment every file starts with: where it came from, and the
    /// names that were mapped.
    pub(crate) fn header(&self, target: Target, what: &str) -> String {
        let t = self.x.topology;
        let mut h = format!(
            "{what}\nGenerated by `retrylint export {}` from {} (topology `{}`, fault `{}`).\nRe-export rather than edit: the names, commands and resources follow from the topology.",
            target.name(),
            t.file,
            t.name,
            self.x.scenario.name
        );
        if !self.renamed.is_empty() {
            h.push_str(
                "\nDNS names of services whose names are not DNS labels (retrylint::export::dns):",
            );
            for r in &self.renamed {
                h.push_str(&format!("\n  {} → {}", r.service, r.dns));
            }
        }
        h
    }

    /// Notes for the user: resources past the cap, names not kept.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (i, r) in self.sizing.services.iter().enumerate() {
            if r.cpu_capped {
                notes.push(format!(
                    "`{}` would need about {} cores at this load ({}); its CPU request is capped at {} m, so under the storm its figures may describe its pod rather than the retry policies: lower --rate or --clients",
                    self.x.topology.services[i].name,
                    sizing::figure(r.cpu_wanted_millis as f64 / 1000.0),
                    r.explain("requests"),
                    r.cpu_millis
                ));
            }
        }
        for (shipped, what, file) in [
            (&self.x.topology_text, "topology", command::TOPOLOGY_FILE),
            (&self.x.fault_text, "fault scenario", command::FAULT_FILE),
        ] {
            if shipped.renamed {
                notes.push(format!(
                    "the {what} takes its name from its file stem and `name:` could not be added to it; inside the containers it is `{}`: add `name:` to the file",
                    file.trim_end_matches(".yaml")
                ));
            }
        }
        notes
    }
}

/// The manifests of `x` for `target`.
pub fn export(target: Target, x: &Export) -> Result<Exported, ExportError> {
    if x.image.is_empty() || x.image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ExportError::Image(x.image.clone()));
    }
    if let Some(ns) = &x.namespace
        && !is_namespace(ns)
    {
        return Err(ExportError::Namespace(ns.clone()));
    }
    let plan = Plan::new(x);
    let mut notes = plan.notes();
    let (files, private) = match target {
        Target::Kubernetes => {
            if let Some(ns) = &x.namespace {
                notes.push(format!(
                    "namespace `{ns}` is assumed to exist; without --namespace the export creates `{DEFAULT_NAMESPACE}`"
                ));
            }
            if x.topology.services.len() > LARGE_FOR_INIT_CONTAINERS {
                notes.push(format!(
                    "the Job waits for the {} services one init container at a time, about a second each, before the load starts",
                    x.topology.services.len()
                ));
            }
            (
                kubernetes::files(&plan)?,
                vec![kubernetes::SECRET_FILE.to_owned()],
            )
        }
        Target::Compose => (
            compose::files(&plan),
            vec![compose::COMPOSE_FILE.to_owned()],
        ),
    };
    Ok(Exported {
        files,
        driver: plan.driver,
        renamed: plan.renamed,
        notes,
        private,
    })
}

/// Writes the files of `e` under `dir`, creating directories as needed;
/// those holding the token readable by their owner only. Other files in
/// `dir` are left alone.
pub fn write(dir: &Path, e: &Exported) -> std::io::Result<()> {
    for (name, text) in &e.files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if e.private.contains(name) {
            write_private(&path, text)?;
        } else {
            std::fs::write(path, text)?;
        }
    }
    Ok(())
}

/// Writes `text` to `path` with mode 0600, also over a file that was
/// readable by others before.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        open.mode(0o600);
        let mut f = open.open(path)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        f.write_all(text.as_bytes())
    }
    #[cfg(not(unix))]
    open.open(path)?.write_all(text.as_bytes())
}

/// An RFC 1123 label, as Kubernetes requires of namespace names.
pub(crate) fn is_namespace(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= dns::MAX_LABEL
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A stable fingerprint of the shipped files, put in every pod template so
/// that applying changed files restarts the pods that read them.
pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}
