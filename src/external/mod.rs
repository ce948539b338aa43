//! Configuration that lives elsewhere, read where it lives: mesh, gateway and
//! gRPC configuration, trace exports and proxy metrics. One file per kind; each turns its
//! documents into plain facts (services, calls, retry layers to attach) with
//! the file, line and column of every value, and nothing else. Merging the
//! facts into a topology is `topology::merge`'s job.
//!
//! The flow: [`collect`] walks the paths (`--from`, `sources:`) within their
//! bounds, [`read_file`] splits a file into documents (multi-document YAML,
//! or one JSON value — JSON is YAML flow syntax, so the located YAML reader
//! gives JSON its positions too), [`detect`] names each document's kind from
//! its content, and the kind's reader adds its facts to [`Facts`]. A
//! Prometheus text exposition is no YAML: [`read_text`] tells it apart by its
//! content first and hands the whole file to `metrics`.

pub mod docs;
pub mod envoy;
pub(crate) mod envoy_gateway;
pub(crate) mod envoy_retry;
pub mod facts;
pub mod gateway_api;
pub(crate) mod glob;
pub(crate) mod grpc_service_config;
pub mod hosts;
pub(crate) mod http_retry_on_grpc;
pub mod istio;
pub mod kubernetes;
pub mod kuma;
pub mod kuma_ports;
pub mod linkerd;
pub(crate) mod linkerd_ports;
pub mod mesh;
pub mod metrics;
pub mod node;
pub mod template;
pub mod traces;

use std::path::{Path, PathBuf};

pub use facts::*;

use crate::input::error::{ErrorKind, LoadError};

/// How many files one import reads at most, and how many bytes in all: a
/// directory walk that strays into a repository's vendor tree stops with a
/// message rather than reading for minutes.
pub(crate) const MAX_FILES: usize = 20_000;
pub(crate) const MAX_TOTAL_BYTES: u64 = 512 * 1024 * 1024;

/// What the readers need to know beyond the documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Istio's minor version (1.x) for its default retry policy.
    pub istio_minor: u32,
    /// Files and bytes one import reads at most ([`MAX_FILES`],
    /// [`MAX_TOTAL_BYTES`] unless a test says otherwise).
    pub max_files: usize,
    pub max_total_bytes: u64,
    /// Paths in a topology's `sources:` may leave its directory
    /// (`--allow-outside`).
    pub allow_outside: bool,
    /// Which Gateway API implementation translates an HTTPRoute's `retry`
    /// (`--gateway`).
    pub gateway: gateway_api::Implementation,
}

/// Paths a directory walk skips on purpose (`--exclude GLOB`), kept apart
/// from [`Options`] (which is `Copy`).
pub(crate) type Excludes = [String];

impl Default for Options {
    fn default() -> Self {
        Options {
            istio_minor: istio::NEWEST_MINOR,
            max_files: MAX_FILES,
            max_total_bytes: MAX_TOTAL_BYTES,
            allow_outside: false,
            gateway: gateway_api::Implementation::default(),
        }
    }
}

impl Options {
    /// The defaults, for Istio `1.minor`.
    pub fn istio(minor: u32) -> Self {
        Options {
            istio_minor: minor,
            ..Options::default()
        }
    }
}

/// Parses `--istio-version 1.23` (or `1.23.4`) into the minor version.
pub fn parse_istio_version(text: &str) -> Result<u32, String> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.split('.');
    let (Some(major), Some(minor)) = (parts.next(), parts.next()) else {
        return Err(format!(
            "`{text}` is not an Istio version; write e.g. `1.23`"
        ));
    };
    if major != "1" {
        return Err(format!(
            "`{text}`: only Istio 1.x is known; write e.g. `1.23` or `1.24`"
        ));
    }
    minor
        .parse::<u32>()
        .map_err(|_| format!("`{text}` is not an Istio version; write e.g. `1.23`"))
}

/// One document kind this reader understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    IstioVirtualService,
    IstioDestinationRule,
    Envoy,
    GatewayHttpRoute,
    GatewayGrpcRoute,
    EnvoyGatewayBackendTrafficPolicy,
    KumaMeshRetry,
    KumaMeshTimeout,
    KumaMeshCircuitBreaker,
    LinkerdServiceProfile,
    KubernetesService,
    KubernetesNamespace,
    KubernetesWorkload,
    GrpcServiceConfig,
    Otlp,
    Jaeger,
    Zipkin,
    PrometheusExposition,
    PrometheusQuery,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::IstioVirtualService => "Istio VirtualService",
            Kind::IstioDestinationRule => "Istio DestinationRule",
            Kind::Envoy => "Envoy configuration",
            Kind::GatewayHttpRoute => "Gateway API HTTPRoute",
            Kind::GatewayGrpcRoute => "Gateway API GRPCRoute",
            Kind::KumaMeshRetry => "Kuma MeshRetry",
            Kind::KumaMeshTimeout => "Kuma MeshTimeout",
            Kind::KumaMeshCircuitBreaker => "Kuma MeshCircuitBreaker",
            Kind::EnvoyGatewayBackendTrafficPolicy => "Envoy Gateway BackendTrafficPolicy",
            Kind::LinkerdServiceProfile => "Linkerd ServiceProfile",
            Kind::KubernetesService => "Kubernetes Service",
            Kind::KubernetesNamespace => "Kubernetes Namespace",
            Kind::KubernetesWorkload => "Kubernetes workload",
            Kind::GrpcServiceConfig => "gRPC service config",
            Kind::Otlp => "OTLP/JSON trace",
            Kind::Jaeger => "Jaeger JSON trace",
            Kind::Zipkin => "Zipkin v2 JSON trace",
            Kind::PrometheusExposition => "Prometheus text exposition",
            Kind::PrometheusQuery => "Prometheus API query result",
        }
    }
}

/// A path the user named, and where it was named (a `sources:` entry), for
/// errors.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: PathBuf,
    /// A gRPC service config's target service, when the `sources:` entry
    /// names it (`{ path: retry.json, service: echo }`).
    pub service: Option<String>,
    /// The service whose proxy wrote a metrics file (`--metrics-caller`,
    /// or `caller:` in the `sources:` entry): a stats dump is one proxy's.
    pub caller: Option<String>,
    /// `(file, line, column)` of the `sources:` entry, if any.
    pub named_at: Option<(String, crate::input::Pos)>,
}

impl Request {
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Request {
            path: path.into(),
            service: None,
            caller: None,
            named_at: None,
        }
    }
}

/// A file to read, with what its request said of it.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub path: PathBuf,
    pub service: Option<String>,
    pub caller: Option<String>,
}

/// Reads every document under `requests` and returns their facts.
pub fn import(requests: &[Request], options: Options) -> Result<Facts, LoadError> {
    import_excluding(requests, options, &[])
}

/// [`import`], skipping what `exclude` (`--exclude GLOB`) names.
pub fn import_excluding(
    requests: &[Request],
    options: Options,
    exclude: &Excludes,
) -> Result<Facts, LoadError> {
    let files = collect_excluding(requests, options, exclude)?;
    let mut facts = Facts {
        istio_minor: options.istio_minor,
        ..Facts::default()
    };
    for Found {
        path,
        service,
        caller,
    } in files
    {
        use crate::input::read::{FileKind, STDIN, read_stdin};
        let (shown, text) = if path.as_os_str() == STDIN_PATH {
            (STDIN.to_owned(), read_stdin(FileKind::Topology)?)
        } else {
            let shown = path.display().to_string();
            let text = crate::input::read::read_text(&path, &shown, FileKind::Topology)?;
            (shown, text)
        };
        let given = Given {
            service: service.as_deref(),
            caller: caller.as_deref(),
        };
        read_text(&shown, text, given, options, &mut facts)?;
    }
    facts.finish();
    Ok(facts)
}

/// `--from -`: standard input.
pub(crate) const STDIN_PATH: &str = "-";

/// What a request says of the file beside its path.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    /// A gRPC service config's target service.
    pub service: Option<&'a str>,
    /// The service whose proxy wrote a metrics file.
    pub caller: Option<&'a str>,
}

/// Reads one file's text (already within its size limit) into `facts`.
pub fn read_text(
    shown: &str,
    text: String,
    given: Given,
    options: Options,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    // A text exposition is not YAML: told apart by its content before the
    // YAML reader sees it (its `{…}` label sets are no templates either).
    if metrics::exposition::looks_like(&text) {
        let file = facts.add_file(shown, text);
        let text = facts.files[file].text.clone();
        let cx = node::Cx {
            f: crate::input::fields::Fields::new(shown, &text),
            file,
        };
        let kind = Kind::PrometheusExposition;
        facts.account(
            file,
            crate::input::Pos { line: 1, column: 1 },
            Account::Read(kind),
        );
        facts.read_kinds.push(kind);
        return metrics::read_exposition(cx, &text, given.caller, facts);
    }
    template::refuse(shown, &text)?;
    let documents = docs::split(shown, &text)?;
    let file = facts.add_file(shown, text);
    let text = facts.files[file].text.clone();
    for doc in documents {
        let cx = node::Cx {
            f: crate::input::fields::Fields::new(shown, &text),
            file,
        };
        read_document(cx, &doc.root, given, options, facts, 0)?;
    }
    Ok(())
}

/// Accounts for one document (a file's, or an item of a Kubernetes `List`)
/// and hands it to its kind's reader.
fn read_document(
    cx: node::Cx,
    root: &crate::input::Node,
    given: Given,
    options: Options,
    facts: &mut Facts,
    depth: u32,
) -> Result<(), LoadError> {
    if let Some(items) = kubernetes::list_items(root)
        && depth < 4
    {
        // `kubectl get … -o yaml|json`: a `List` reads as its items.
        for item in items {
            read_document(cx, item, given, options, facts, depth + 1)?;
        }
        return Ok(());
    }
    let kind = match classify(root) {
        Detected::Kind(kind) => kind,
        Detected::NoRetry(what) => {
            facts.account(cx.file, root.pos, Account::NoRetry(what));
            return Ok(());
        }
        Detected::NotUnderstood(what) => {
            facts.account(cx.file, root.pos, Account::NotUnderstood(what));
            return Ok(());
        }
        Detected::LooksLike(what) => {
            return Err(cx
                .f
                .error(root.pos, format!("{what}: retrylint cannot read it, so its retry settings would be missed"))
                .with_help("remove it from what --from reads (`--exclude GLOB`) if it carries no retry settings; or report the kind so it can be read"));
        }
    };
    facts.account(cx.file, root.pos, Account::Read(kind));
    facts.read_kinds.push(kind);
    match kind {
        Kind::IstioVirtualService => istio::read(cx, root, options, facts)?,
        Kind::IstioDestinationRule => istio::read_destination_rule(cx, root, facts)?,
        Kind::Envoy => envoy::read(cx, root, facts)?,
        Kind::GatewayHttpRoute => gateway_api::read(cx, root, options, false, facts)?,
        Kind::GatewayGrpcRoute => gateway_api::read(cx, root, options, true, facts)?,
        Kind::KumaMeshRetry => kuma::read_retry(cx, root, facts)?,
        Kind::KumaMeshTimeout => kuma::read_timeout(cx, root, facts)?,
        Kind::KumaMeshCircuitBreaker => kuma::read_circuit_breaker(cx, root, facts)?,
        Kind::EnvoyGatewayBackendTrafficPolicy => {
            envoy_gateway::read_backend_traffic_policy(cx, root, facts)?
        }
        Kind::LinkerdServiceProfile => linkerd::read_profile(cx, root, facts)?,
        Kind::KubernetesService | Kind::KubernetesNamespace | Kind::KubernetesWorkload => {
            kubernetes::read(cx, root, kind, facts)?
        }
        Kind::GrpcServiceConfig => grpc_service_config::read(cx, root, given.service, facts)?,
        Kind::Otlp => traces::otlp::read(cx, root, facts)?,
        Kind::Jaeger => traces::jaeger::read(cx, root, facts)?,
        Kind::Zipkin => traces::zipkin::read(cx, root, facts)?,
        Kind::PrometheusQuery => metrics::read_query(cx, root, given.caller, facts)?,
        // Read in `read_text`, before the YAML reader.
        Kind::PrometheusExposition => {}
    }
    Ok(())
}

/// What [`classify`] makes of a document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Detected {
    /// A kind a reader takes.
    Kind(Kind),
    /// A kind known to carry no retry settings: named.
    NoRetry(String),
    /// Looks like a retry-carrying kind (a mesh resource, Envoy
    /// configuration, a trace export) that no reader takes: an error.
    LooksLike(String),
    /// Of no kind known: described.
    NotUnderstood(String),
}

/// The account of a document from its content: [`detect`] for the kinds
/// read, then the tables of kinds without retry settings and of look-alikes.
pub(crate) fn classify(root: &crate::input::Node) -> Detected {
    use node::{get, str_at};
    if let Some(kind) = detect(root) {
        return Detected::Kind(kind);
    }
    let what = docs::describe(root);
    let empty = match &root.value {
        crate::input::Value::Seq(v) => v.is_empty(),
        crate::input::Value::Map(v) => v.is_empty(),
        _ => false,
    };
    if empty {
        // `[]`, `{}`: an export with nothing in it (Envoy Gateway writes
        // `[]` for a proxy without routes).
        return Detected::NoRetry("an empty list or mapping".into());
    }
    if let Some(api) = get(root, "apiVersion").and_then(str_at) {
        let kind = get(root, "kind").and_then(str_at).unwrap_or("");
        let group = if api.contains('/') {
            api.split('/').next().unwrap_or("")
        } else {
            ""
        };
        return match mesh::retry_free(group, kind) {
            Some(true) => Detected::NoRetry(what),
            Some(false) => Detected::LooksLike(format!("{what} is a mesh resource")),
            None => Detected::NoRetry(what),
        };
    }
    // Kuma's universal form: `type:`, `name:`, `mesh:` (a Mesh has none).
    if let Some(kind) = get(root, "type").and_then(str_at)
        && (get(root, "mesh").is_some() || kind == "Mesh")
        && let Some(free) = mesh::retry_free("kuma.io", kind)
    {
        let name = get(root, "name").and_then(str_at).unwrap_or("");
        let what = format!("Kuma {kind} {name}");
        return if free {
            Detected::NoRetry(what)
        } else {
            Detected::LooksLike(format!("{what} is a mesh resource"))
        };
    }
    match envoy::looks_like(root) {
        Some(what) => Detected::LooksLike(what),
        None if traces_look_like(root) => {
            Detected::LooksLike("a trace export of a shape not known".into())
        }
        None => Detected::NotUnderstood(what),
    }
}

/// A document that looks like a trace export no reader took.
fn traces_look_like(root: &crate::input::Node) -> bool {
    use node::get;
    ["resourceSpans", "batches", "traceID", "traceId", "spans"]
        .iter()
        .any(|k| get(root, k).is_some())
}

/// The kind of a document, from its content alone.
pub(crate) fn detect(root: &crate::input::Node) -> Option<Kind> {
    use crate::input::Value;
    use node::{get, str_at};
    if let Some(api) = get(root, "apiVersion").and_then(str_at) {
        let kind = get(root, "kind").and_then(str_at).unwrap_or("");
        let group = api.split('/').next().unwrap_or("");
        return match (group, kind) {
            ("networking.istio.io", "VirtualService") => Some(Kind::IstioVirtualService),
            ("networking.istio.io", "DestinationRule") => Some(Kind::IstioDestinationRule),
            ("gateway.networking.k8s.io", "HTTPRoute") => Some(Kind::GatewayHttpRoute),
            ("gateway.networking.k8s.io", "GRPCRoute") => Some(Kind::GatewayGrpcRoute),
            ("kuma.io", "MeshRetry") => Some(Kind::KumaMeshRetry),
            ("kuma.io", "MeshTimeout") => Some(Kind::KumaMeshTimeout),
            ("kuma.io", "MeshCircuitBreaker") => Some(Kind::KumaMeshCircuitBreaker),
            ("gateway.envoyproxy.io", "BackendTrafficPolicy") => {
                Some(Kind::EnvoyGatewayBackendTrafficPolicy)
            }
            ("linkerd.io", "ServiceProfile") => Some(Kind::LinkerdServiceProfile),
            ("v1", "Service") => Some(Kind::KubernetesService),
            ("v1", "Namespace") => Some(Kind::KubernetesNamespace),
            ("apps", "Deployment" | "StatefulSet" | "DaemonSet") => Some(Kind::KubernetesWorkload),
            _ => None,
        };
    }
    if envoy::detect(root) {
        return Some(Kind::Envoy);
    }
    match &root.value {
        // Kuma's universal form: `type: MeshRetry`, `mesh:`, `spec:`.
        Value::Map(_) if get(root, "type").and_then(str_at) == Some("MeshRetry") => {
            Some(Kind::KumaMeshRetry)
        }
        Value::Map(_) if get(root, "type").and_then(str_at) == Some("MeshTimeout") => {
            Some(Kind::KumaMeshTimeout)
        }
        Value::Map(_) if get(root, "type").and_then(str_at) == Some("MeshCircuitBreaker") => {
            Some(Kind::KumaMeshCircuitBreaker)
        }
        Value::Map(_) if get(root, "methodConfig").is_some() => Some(Kind::GrpcServiceConfig),
        Value::Map(_) if get(root, "retryThrottling").is_some() => Some(Kind::GrpcServiceConfig),
        Value::Map(_) if get(root, "resourceSpans").is_some() => Some(Kind::Otlp),
        // Grafana Tempo's trace API: OTLP's resource spans as `batches`.
        Value::Map(_) if traces::tempo_batches(root) => Some(Kind::Otlp),
        // One Jaeger trace alone, not under `data`.
        Value::Map(_)
            if get(root, "traceID").is_some()
                && get(root, "spans").is_some()
                && get(root, "processes").is_some() =>
        {
            Some(Kind::Jaeger)
        }
        Value::Map(_) if metrics::prom_api::detect(root) => Some(Kind::PrometheusQuery),
        Value::Map(_) => {
            let data = get(root, "data")?;
            let Value::Seq(items) = &data.value else {
                return None;
            };
            items
                .first()
                .filter(|t| get(t, "spans").is_some() && get(t, "processes").is_some())
                .map(|_| Kind::Jaeger)
        }
        // Zipkin v2: a list of spans, or a list of traces (lists of spans).
        Value::Seq(items) => {
            let first = match items.first().map(|n| &n.value) {
                Some(Value::Seq(inner)) => inner.first()?,
                _ => items.first()?,
            };
            (get(first, "traceId").is_some() && get(first, "id").is_some()).then_some(Kind::Zipkin)
        }
        _ => None,
    }
}

/// The files to read: each path, or every `.yaml`, `.yml` and `.json` under a
/// directory (sorted, so the order and the first error are the same on every
/// machine), within `options`' file and byte counts, leaving out what
/// `exclude` names (`--exclude GLOB`, matched against the path as found and
/// against the file's name); a path given itself is read whatever `exclude`
/// says. `-` is standard input, once.
pub(crate) fn collect_excluding(
    requests: &[Request],
    options: Options,
    exclude: &Excludes,
) -> Result<Vec<Found>, LoadError> {
    let mut out = Vec::new();
    let mut bytes = 0u64;
    let mut stdin = false;
    for r in requests {
        if r.path.as_os_str() == STDIN_PATH {
            if std::mem::replace(&mut stdin, true) {
                return Err(LoadError::new(
                    ErrorKind::Io,
                    STDIN_PATH,
                    None,
                    "`--from -` (standard input) is given twice",
                ));
            }
            out.push(Found {
                path: r.path.clone(),
                service: r.service.clone(),
                caller: r.caller.clone(),
            });
            continue;
        }
        let err = |msg: String| match &r.named_at {
            Some((file, pos)) => LoadError::new(ErrorKind::Io, file, Some(*pos), msg),
            None => LoadError::new(ErrorKind::Io, &r.path.display().to_string(), None, msg),
        };
        let meta = std::fs::metadata(&r.path).map_err(|e| {
            err(match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("no such file or directory: {}", r.path.display())
                }
                _ => format!("cannot read {}: {e}", r.path.display()),
            })
            .with_help("give a configuration file, a trace export or a directory of them")
        })?;
        let mut found = Vec::new();
        if meta.is_dir() {
            walk(&r.path, &mut found, 0, options.max_files).map_err(|e| err(e.to_string()))?;
            found.retain(|p| !glob::excluded(exclude, p));
            found.sort();
        } else {
            found.push(r.path.clone());
        }
        for path in found {
            bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            out.push(Found {
                path,
                service: r.service.clone(),
                caller: r.caller.clone(),
            });
            if out.len() > options.max_files || bytes > options.max_total_bytes {
                return Err(err(format!(
                    "more than {} files or {} MiB to import under {}",
                    options.max_files,
                    options.max_total_bytes / (1024 * 1024),
                    r.path.display()
                ))
                .with_help(
                    "point --from at the directories that hold the mesh configuration and traces",
                ));
            }
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: u32, max: usize) -> std::io::Result<()> {
    // Deeper than any configuration tree; a symlink loop stops here.
    if depth > 32 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        // A link is followed only to a regular file in the walked directory:
        // a committed link to ~/.aws/credentials is not read.
        if kind.is_symlink()
            && !(crate::input::read::stays_inside(dir, &path)
                && std::fs::metadata(&path).is_ok_and(|m| m.is_file()))
        {
            continue;
        }
        if kind.is_dir() {
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if !hidden {
                walk(&path, out, depth + 1, max)?;
            }
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            out.push(path);
            if out.len() > max {
                return Ok(());
            }
        }
    }
    Ok(())
}
