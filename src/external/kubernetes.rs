//! Kubernetes `Service`, `Namespace` and workloads (`Deployment`,
//! `StatefulSet`, `DaemonSet`): which hosts exist, and which sit behind an
//! Istio sidecar. A Service is meshed when the pods it selects get a sidecar:
//! the pod template's `sidecar.istio.io/inject` label (`"true"` opts in,
//! `"false"` out; the legacy annotation only opts out) over the namespace's
//! `istio-injection: enabled` (or `istio.io/rev`) label, which alone decides
//! for a Service whose pods were not read (see `Workload::injected`). Calls
//! to a meshed Service that no VirtualService route covers get Istio's
//! default retry policy, located at the Service's name. Linkerd's
//! `retry.linkerd.io/*` annotations on a Service are read too (`linkerd`),
//! and which of its ports Linkerd routes as HTTP (`linkerd_ports`) and which
//! protocol Kuma gives them (`kuma_ports`).

use super::Kind;
use super::facts::*;
use super::node::{Cx, entry, path, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Value};

const INJECT: &str = "sidecar.istio.io/inject";

/// What a Service's ports say of its protocol, as Istio's protocol
/// selection reads them
/// (istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/):
/// `appProtocol` first, else the port name's prefix before `-` (`grpc`,
/// `grpc-ping`; `grpc-web` is gRPC-Web, HTTP to the proxy; `http`,
/// `http2`, `https`). A topology's call names no port, so the Service is
/// gRPC when a port is gRPC and none is HTTP (metrics or TCP ports beside
/// it take no calls); `None` when both are (said by the caller).
fn speaks_grpc(ports: Option<&Node>) -> Option<bool> {
    let (mut grpc, mut http) = (false, false);
    for p in ports.map(super::node::items).unwrap_or(&[]) {
        let app = path(p, &["appProtocol"]).and_then(str_at);
        let name = path(p, &["name"]).and_then(str_at).unwrap_or("");
        let proto = app.unwrap_or_else(|| {
            if name.starts_with("grpc-web") {
                "http"
            } else {
                name.split('-').next().unwrap_or("")
            }
        });
        match proto {
            "grpc" => grpc = true,
            "http" | "http2" | "https" | "kubernetes.io/h2c" => http = true,
            _ => {}
        }
    }
    match (grpc, http) {
        (true, true) => None,
        (g, _) => Some(g),
    }
}

pub(crate) fn read(cx: Cx, root: &Node, kind: Kind, facts: &mut Facts) -> Result<(), LoadError> {
    let Some(meta) = path(root, &["metadata"]) else {
        return Err(cx
            .f
            .error(root.pos, "a Kubernetes object without `metadata:`")
            .with_help("give it `metadata: { name: ... }`"));
    };
    let Some((nk, name)) = entry(meta, "name") else {
        return Err(cx
            .f
            .error(meta.pos, "a Kubernetes object without `metadata.name`")
            .with_help("name it: `metadata: { name: ratings }`"));
    };
    let name = cx.f.str(name, "`metadata.name`")?.to_owned();
    match kind {
        Kind::KubernetesNamespace => {
            let labels = path(meta, &["labels"]);
            let label = labels.and_then(|l| path(l, &["istio-injection"]).and_then(str_at));
            let injection = match label {
                Some("disabled") => Injection::Disabled,
                Some("enabled") => Injection::Enabled,
                _ if labels.is_some_and(|l| path(l, &["istio.io/rev"]).is_some()) => {
                    Injection::Enabled
                }
                _ => Injection::Unset,
            };
            facts.namespaces.push((name, injection));
        }
        Kind::KubernetesWorkload => {
            let namespace = path(meta, &["namespace"])
                .and_then(str_at)
                .unwrap_or("default")
                .to_owned();
            let pod = path(root, &["spec", "template", "metadata"]);
            let labels = string_map(pod.and_then(|m| path(m, &["labels"])));
            let annotations = string_map(pod.and_then(|m| path(m, &["annotations"])));
            let inject = match (said(&labels), said(&annotations)) {
                (Some("true"), _) => Injection::Enabled,
                (Some("false"), _) | (None, Some("false")) => Injection::Disabled,
                _ => Injection::Unset,
            };
            facts.workloads.push(Workload {
                namespace,
                labels,
                inject,
            });
        }
        _ => {
            let namespace = path(meta, &["namespace"])
                .and_then(str_at)
                .unwrap_or("default")
                .to_owned();
            let host = HostRef {
                host: name,
                namespace: Some(namespace),
                at: cx.at(nk.pos),
            };
            super::linkerd::annotations(cx, meta, vec![host.clone()], Matcher::default(), facts)?;
            let routing = super::linkerd_ports::routing(meta, path(root, &["spec", "ports"]));
            if routing != super::linkerd_ports::Routing::Http {
                facts.linkerd_routing.push((host.clone(), routing));
            }
            let kuma = super::kuma_ports::ports(meta, path(root, &["spec", "ports"]));
            if let Some(protocol) = super::kuma_ports::service(kuma) {
                facts.kuma_protocols.push((host.clone(), protocol));
            }
            match speaks_grpc(path(root, &["spec", "ports"])) {
                Some(true) => facts.grpc_hosts.push(host.clone()),
                Some(false) => {}
                None => facts.note(
                    Some(host.at),
                    format!("Service `{}` has gRPC and HTTP ports; calls to it are read as HTTP: write `protocol: grpc` on a call to its gRPC port", host.host),
                ),
            }
            let selector = string_map(path(root, &["spec", "selector"]));
            facts.k8s_services.push(K8sService { host, selector });
        }
    }
    Ok(())
}

/// The `sidecar.istio.io/inject` entry of labels or annotations.
fn said(map: &[(String, String)]) -> Option<&str> {
    map.iter()
        .find(|(k, _)| k == INJECT)
        .map(|(_, v)| v.as_str())
}

/// A map of labels or annotations as strings (`"true"` and `true` alike).
fn string_map(n: Option<&Node>) -> Vec<(String, String)> {
    let Some(Value::Map(entries)) = n.map(|n| &n.value) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(k, v)| {
            let value = match &v.value {
                Value::Str(s) => s.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Int(i) => i.to_string(),
                _ => return None,
            };
            Some((str_at(k)?.to_owned(), value))
        })
        .collect()
}

/// The items of a Kubernetes list (`kind: List`, or `ServiceList` and the
/// like, as `kubectl get … -o yaml|json` prints them): `None` for anything
/// else. Each item is read as a document of its own.
pub(crate) fn list_items(root: &Node) -> Option<&[Node]> {
    path(root, &["apiVersion"]).and_then(str_at)?;
    let kind = path(root, &["kind"]).and_then(str_at)?;
    if !kind.ends_with("List") {
        return None;
    }
    match &path(root, &["items"])?.value {
        Value::Seq(items) => Some(items),
        _ => None,
    }
}
