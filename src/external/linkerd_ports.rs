//! Which ports of a Kubernetes Service Linkerd's proxies route as HTTP, as
//! the policy controller decides it (linkerd2 2.18,
//! `policy-controller/k8s/index/src/outbound/index.rs` and
//! `policy-controller/core/src/outbound.rs`):
//!
//! - A port's `appProtocol` (any case) wins: `http` is HTTP/1 only,
//!   `kubernetes.io/h2c` HTTP/2, and every other value — `linkerd.io/tcp`,
//!   `linkerd.io/opaque`, but also `grpc` or `https` — is opaque TCP
//!   ("If `appProtocol` is set to any other value, Linkerd will treat the
//!   connection as opaque TCP", protocol-detection.md). Before 2.18
//!   (edge-25.3.1) `appProtocol` was not read.
//! - Else a port listed in the Service's `config.linkerd.io/opaque-ports`
//!   (ports and ranges, `5432,6000-6010`; a list that does not parse is
//!   empty) is opaque; without the annotation, the control plane's default
//!   list (`25,587,3306,4444,5432,6379,9300,11211`).
//! - Else the proxy detects HTTP/1 or HTTP/2.
//!
//! On an opaque port the proxy has no HTTP routes: no retry and no timeout
//! from annotations, HTTPRoutes, GRPCRoutes or a ServiceProfile applies. A
//! topology's call names no port, so a Service is opaque to Linkerd only
//! when every port is; one with HTTP and opaque ports is read as called on
//! an HTTP port, and its opaque ports are named in a note.

use super::node::{get, items, path, port_number, str_at};
use crate::input::{Node, Value};

/// The control plane's default `opaquePorts`
/// (`charts/linkerd-control-plane/values.yaml`).
pub(crate) const DEFAULT_OPAQUE: [u16; 8] = [25, 587, 3306, 4444, 5432, 6379, 9300, 11211];

const OPAQUE_PORTS: &str = "config.linkerd.io/opaque-ports";

/// How Linkerd's outbound proxy routes a Service's traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Routing {
    /// Some port is HTTP (detected, or said so): its routes apply.
    Http,
    /// Every HTTP port is `appProtocol: http` (HTTP/1 only): HTTPRoutes
    /// apply, GRPCRoutes and `retry.linkerd.io/grpc` do not.
    Http1Only,
    /// Every port is opaque TCP; why, to be said.
    Opaque(Opaque),
    /// Some ports are HTTP (`http_ports`; HTTP/1 only when `http1`), the
    /// others opaque. A topology call names no port, so its calls are read
    /// as to an HTTP port, and the opaque ones are said.
    Mixed {
        opaque: Opaque,
        http_ports: Vec<i128>,
        http1: bool,
    },
}

impl Routing {
    /// Whether the HTTP ports, if any, are HTTP/1 only (`appProtocol: http`
    /// on every one).
    pub fn http1_only(&self) -> bool {
        matches!(
            self,
            Routing::Http1Only | Routing::Mixed { http1: true, .. }
        )
    }
}

/// Why every port of a Service is opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opaque {
    /// Each port and what made it opaque.
    pub ports: Vec<(i128, String)>,
    /// Some port is opaque by its `appProtocol` (2.18 and later only).
    pub(crate) by_app_protocol: bool,
}

impl Opaque {
    /// The ports and reasons, for a note: `port 5432: Linkerd's default
    /// opaque ports`.
    pub(crate) fn explain(&self) -> String {
        self.ports
            .iter()
            .map(|(p, why)| format!("port {p}: {why}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// How Linkerd routes the Service whose `metadata` is `meta` and whose
/// `spec.ports` is `ports`. A Service with no ports read is `Http`: there
/// is nothing to say otherwise.
pub(crate) fn routing(meta: &Node, ports: Option<&Node>) -> Routing {
    let annotation = get(meta, "annotations").and_then(|a| get(a, OPAQUE_PORTS));
    let listed = |port: i128| -> Option<String> {
        match annotation {
            Some(a) => {
                let text = scalar(a)?;
                portset(&text)
                    .is_some_and(|set| set.iter().any(|(lo, hi)| (*lo..=*hi).contains(&port)))
                    .then(|| format!("{OPAQUE_PORTS}: \"{text}\""))
            }
            None => u16::try_from(port)
                .is_ok_and(|p| DEFAULT_OPAQUE.contains(&p))
                .then(|| "Linkerd's default opaque ports".to_owned()),
        }
    };
    let (mut http, mut http1, mut opaque) = (Vec::new(), true, Vec::new());
    let mut by_app_protocol = false;
    for p in ports.map(items).unwrap_or(&[]) {
        let Some(number) = port_number(p) else {
            continue;
        };
        match path(p, &["appProtocol"]).and_then(str_at) {
            Some(app) => match app.to_ascii_lowercase().as_str() {
                "http" => http.push(number),
                "kubernetes.io/h2c" => {
                    http.push(number);
                    http1 = false;
                }
                _ => {
                    by_app_protocol = true;
                    opaque.push((number, format!("appProtocol `{app}`")));
                }
            },
            None => match listed(number) {
                Some(why) => opaque.push((number, why)),
                None => {
                    http.push(number);
                    http1 = false;
                }
            },
        }
    }
    if !http.is_empty() && !opaque.is_empty() {
        Routing::Mixed {
            opaque: Opaque {
                ports: opaque,
                by_app_protocol,
            },
            http_ports: http,
            http1,
        }
    } else if !http.is_empty() {
        if http1 {
            Routing::Http1Only
        } else {
            Routing::Http
        }
    } else if opaque.is_empty() {
        Routing::Http
    } else {
        Routing::Opaque(Opaque {
            ports: opaque,
            by_app_protocol,
        })
    }
}

/// An annotation's value as text (`5432` may be written unquoted).
fn scalar(n: &Node) -> Option<String> {
    match &n.value {
        Value::Str(s) => Some(s.to_string()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// `parse_portset` (`policy-controller/k8s/index/src/ports.rs`): ports and
/// increasing ranges, comma-separated, blanks skipped; `None` when any part
/// does not parse (Linkerd then takes the list as empty).
fn portset(text: &str) -> Option<Vec<(i128, i128)>> {
    let mut set = Vec::new();
    for spec in text.split(',') {
        match spec.split_once('-') {
            None if spec.trim().is_empty() => {}
            None => {
                let p = spec.trim().parse::<u16>().ok()?;
                set.push((i128::from(p), i128::from(p)));
            }
            Some((lo, hi)) => {
                let lo = lo.trim().parse::<u16>().ok().filter(|p| *p > 0)?;
                let hi = hi.trim().parse::<u16>().ok().filter(|p| *p > 0)?;
                if lo > hi {
                    return None;
                }
                set.push((i128::from(lo), i128::from(hi)));
            }
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routing_of(yaml: &str) -> Routing {
        let doc = crate::input::yaml::parse(yaml).expect("valid YAML");
        routing(
            get(&doc, "metadata").expect("metadata"),
            path(&doc, &["spec", "ports"]),
        )
    }

    #[test]
    fn a_postgres_port_is_opaque_by_default() {
        let r = routing_of("metadata: { name: db }\nspec: { ports: [ { port: 5432 } ] }\n");
        let Routing::Opaque(o) = r else {
            panic!("{r:?}")
        };
        assert_eq!(o.explain(), "port 5432: Linkerd's default opaque ports");
        assert!(!o.by_app_protocol);
    }

    #[test]
    fn the_annotation_replaces_the_default_list() {
        let r = routing_of(
            "metadata: { name: db, annotations: { config.linkerd.io/opaque-ports: \"8000-8100\" } }\nspec: { ports: [ { port: 5432 } ] }\n",
        );
        assert_eq!(r, Routing::Http);
        let r = routing_of(
            "metadata: { name: db, annotations: { config.linkerd.io/opaque-ports: \"8000-8100\" } }\nspec: { ports: [ { port: 8080 } ] }\n",
        );
        assert!(matches!(r, Routing::Opaque(_)), "{r:?}");
        // A list that does not parse is empty, not the default.
        let r = routing_of(
            "metadata: { name: db, annotations: { config.linkerd.io/opaque-ports: \"pg\" } }\nspec: { ports: [ { port: 5432 } ] }\n",
        );
        assert_eq!(r, Routing::Http);
    }

    #[test]
    fn app_protocol_wins_and_any_other_value_is_opaque() {
        let r = routing_of(
            "metadata: { name: api }\nspec: { ports: [ { port: 5432, appProtocol: HTTP } ] }\n",
        );
        assert_eq!(r, Routing::Http1Only);
        let r = routing_of(
            "metadata: { name: api }\nspec: { ports: [ { port: 9090, appProtocol: grpc } ] }\n",
        );
        let Routing::Opaque(o) = r else {
            panic!("{r:?}")
        };
        assert!(o.by_app_protocol);
        assert_eq!(o.explain(), "port 9090: appProtocol `grpc`");
        let r = routing_of(
            "metadata: { name: api }\nspec: { ports: [ { port: 80, appProtocol: http }, { port: 81, appProtocol: kubernetes.io/h2c } ] }\n",
        );
        assert_eq!(r, Routing::Http);
    }

    #[test]
    fn one_http_port_keeps_the_routes_and_the_opaque_ones_are_named() {
        let r = routing_of(
            "metadata: { name: api }\nspec: { ports: [ { port: 5432 }, { port: 8080 } ] }\n",
        );
        let Routing::Mixed {
            opaque,
            http_ports,
            http1,
        } = &r
        else {
            panic!("{r:?}")
        };
        assert_eq!(
            opaque.explain(),
            "port 5432: Linkerd's default opaque ports"
        );
        assert_eq!((http_ports.as_slice(), *http1), ([8080].as_slice(), false));
        assert!(!r.http1_only());
        let r = routing_of(
            "metadata: { name: api }\nspec: { ports: [ { port: 9090, appProtocol: grpc }, { port: 80, appProtocol: http } ] }\n",
        );
        assert!(r.http1_only(), "{r:?}");
        assert_eq!(routing_of("metadata: { name: api }\n"), Routing::Http);
    }
}
