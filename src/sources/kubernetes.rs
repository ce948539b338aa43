//! Kubernetes `Service` and `Namespace`: which hosts exist, and which sit
//! behind an Istio sidecar. A Service in a namespace labelled
//! `istio-injection: enabled` (or with an `istio.io/rev` revision label) is
//! meshed: calls to it that no VirtualService route covers get Istio's
//! default retry policy, located at the Service's name. Linkerd's
//! `retry.linkerd.io/*` annotations on a Service are read too (`linkerd`).

use super::Kind;
use super::facts::*;
use super::node::{Cx, entry, path, str_at};
use crate::source::Node;
use crate::source::error::LoadError;

pub fn read(cx: Cx, root: &Node, kind: Kind, facts: &mut Facts) -> Result<(), LoadError> {
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
            let injected = labels.is_some_and(|l| {
                path(l, &["istio-injection"]).and_then(str_at) == Some("enabled")
                    || path(l, &["istio.io/rev"]).is_some()
            });
            if injected {
                facts.injected_namespaces.push(name);
            }
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
            facts.k8s_services.push(host);
        }
    }
    Ok(())
}
