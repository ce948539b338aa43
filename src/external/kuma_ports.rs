//! Which protocol Kuma gives a Kubernetes Service's port, as its pod
//! converter tags the Dataplane's inbound (`kumahq/kuma`,
//! `pkg/plugins/runtime/k8s/controllers/inbound_converter.go`
//! `ProtocolTagFor`, and `pkg/core/metadata/protocol.go`):
//!
//! - a port's `appProtocol`, when Kuma supports it (any case: `http`,
//!   `http2`, `grpc`, `tcp`, `tls`, `mysql`), wins;
//! - else the Service's `<port>.service.kuma.io/protocol` annotation, kept
//!   lowercased even when Kuma does not know it (`MONGO` tags `mongo`);
//! - else `tcp` ("to get user's attention").
//!
//! The protocol decides what Kuma's policies configure on the calls to it
//! (`meshretry/plugin/xds/configurer.go` `GetRouteRetryConfig`): `http`
//! takes a MeshRetry's `http` section, `grpc` its `grpc` section, `http2`
//! no retry at all; MeshTimeout's route timeout needs an HTTP connection
//! manager (`http`, `http2`, `grpc`); anything else is TCP, where only
//! `tcp.maxConnectAttempt` applies. A topology's call names no port, so a
//! Service's protocol is that of its HTTP-based ports when they agree (the
//! others take no HTTP calls), TCP when it has none, and unknown when they
//! differ.

use super::node::{entry, get, items, port_number, str_at};
use crate::input::{Node, Pos};

/// A port's protocol as Kuma tags it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protocol {
    Http,
    Http2,
    Grpc,
    /// `tcp`, `tls`, `mysql`, or a value Kuma does not know: the tag as
    /// Kuma writes it.
    Tcp(String),
}

impl Protocol {
    fn parse(text: &str) -> Self {
        match text.to_ascii_lowercase().as_str() {
            "http" => Self::Http,
            "http2" => Self::Http2,
            "grpc" => Self::Grpc,
            other => Self::Tcp(other.to_owned()),
        }
    }

    /// The tag as Kuma writes it.
    pub fn tag(&self) -> &str {
        match self {
            Self::Http => "http",
            Self::Http2 => "http2",
            Self::Grpc => "grpc",
            Self::Tcp(t) => t,
        }
    }

    /// Whether Kuma gives the port an HTTP connection manager.
    fn http_based(&self) -> bool {
        !matches!(self, Self::Tcp(_))
    }
}

/// The protocol Kuma gives one port, and where it was said (`None`: by
/// default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortProtocol {
    pub port: i128,
    pub protocol: Protocol,
    pub(crate) said_at: Option<Pos>,
    /// How it was decided, for a note: `appProtocol: http`,
    /// `80.service.kuma.io/protocol: grpc`, `Kuma's default`.
    pub why: String,
}

/// Kuma's `appProtocol` values (`ParseProtocol`).
const SUPPORTED: [&str; 6] = ["http", "http2", "grpc", "tcp", "tls", "mysql"];

/// `ProtocolTagFor` on each port of the Service whose `metadata` is `meta`
/// and whose `spec.ports` is `ports`.
pub fn ports(meta: &Node, ports: Option<&Node>) -> Vec<PortProtocol> {
    let annotations = get(meta, "annotations");
    let mut out = Vec::new();
    for p in ports.map(items).unwrap_or(&[]) {
        let Some(number) = port_number(p) else {
            continue;
        };
        let app = entry(p, "appProtocol").and_then(|(_, v)| Some((str_at(v)?, v.pos)));
        let key = format!("{number}.service.kuma.io/protocol");
        let annotated = annotations
            .and_then(|a| entry(a, &key))
            .and_then(|(k, v)| Some((str_at(v)?, k.pos)))
            .filter(|(v, _)| !v.is_empty());
        let (protocol, said_at, why) = match (app, annotated) {
            (Some((a, pos)), _) if SUPPORTED.contains(&a.to_ascii_lowercase().as_str()) => {
                (Protocol::parse(a), Some(pos), format!("appProtocol: {a}"))
            }
            (_, Some((v, pos))) => (Protocol::parse(v), Some(pos), format!("{key}: {v}")),
            (Some((a, _)), None) => (
                Protocol::Tcp("tcp".into()),
                None,
                format!("appProtocol `{a}` is not one Kuma knows, and no {key}: Kuma's default"),
            ),
            (None, None) => (
                Protocol::Tcp("tcp".into()),
                None,
                format!("no appProtocol and no {key}: Kuma's default"),
            ),
        };
        out.push(PortProtocol {
            port: number,
            protocol,
            said_at,
            why,
        });
    }
    out
}

/// A Service's protocol for the calls of a topology, which name no port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServiceProtocol {
    /// Its HTTP-based ports agree (the port whose protocol it is).
    Http(PortProtocol),
    /// No port is HTTP-based: every call is TCP to Kuma (the first port).
    Tcp(PortProtocol),
    /// Its HTTP-based ports differ: which one a call uses is unknown.
    Mixed(Vec<PortProtocol>),
}

/// What `ports` says of the Service as a whole; `None` without ports.
pub(crate) fn service(ports: Vec<PortProtocol>) -> Option<ServiceProtocol> {
    let (http, tcp): (Vec<PortProtocol>, Vec<PortProtocol>) =
        ports.into_iter().partition(|p| p.protocol.http_based());
    match http.first() {
        None => tcp.into_iter().next().map(ServiceProtocol::Tcp),
        Some(first) if http.iter().all(|p| p.protocol == first.protocol) => {
            Some(ServiceProtocol::Http(first.clone()))
        }
        Some(_) => Some(ServiceProtocol::Mixed(http)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::node::path;

    fn of(yaml: &str) -> Vec<(i128, String)> {
        let doc = crate::input::yaml::parse(yaml).expect("valid YAML");
        ports(
            get(&doc, "metadata").expect("metadata"),
            path(&doc, &["spec", "ports"]),
        )
        .into_iter()
        .map(|p| (p.port, p.protocol.tag().to_owned()))
        .collect()
    }

    #[test]
    fn a_supported_app_protocol_wins_over_the_annotation() {
        let got = of(
            "metadata: { name: a, annotations: { 80.service.kuma.io/protocol: grpc } }\nspec: { ports: [ { port: 80, appProtocol: HTTP2 } ] }\n",
        );
        assert_eq!(got, [(80, "http2".to_owned())]);
    }

    #[test]
    fn an_unknown_app_protocol_falls_to_the_annotation_then_tcp() {
        let got = of(
            "metadata: { name: a, annotations: { 80.service.kuma.io/protocol: GRPC } }\nspec: { ports: [ { port: 80, appProtocol: kubernetes.io/h2c }, { port: 81, appProtocol: MONGO } ] }\n",
        );
        assert_eq!(got, [(80, "grpc".to_owned()), (81, "tcp".to_owned())]);
    }

    #[test]
    fn the_service_is_its_http_ports_when_they_agree() {
        let doc = crate::input::yaml::parse(
            "metadata: { name: a }\nspec: { ports: [ { port: 80, appProtocol: http }, { port: 9090 }, { port: 81, appProtocol: grpc } ] }\n",
        )
        .unwrap();
        let p = ports(
            get(&doc, "metadata").unwrap(),
            path(&doc, &["spec", "ports"]),
        );
        let two = service(p[..2].to_vec());
        assert!(
            matches!(&two, Some(ServiceProtocol::Http(p)) if p.port == 80),
            "{two:?}"
        );
        assert!(matches!(
            service(p.clone()),
            Some(ServiceProtocol::Mixed(m)) if m.len() == 2
        ));
        assert!(matches!(
            service(p[1..2].to_vec()),
            Some(ServiceProtocol::Tcp(p)) if p.port == 9090
        ));
        assert_eq!(service(Vec::new()), None);
    }
}
