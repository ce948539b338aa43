//! Where a callee is: the base URL a retry layer sends to, for every way the
//! services can be spread out — all in this process (the loopback ports
//! `boot` bound), a peers file (name → address, `retrylint serve --peers`),
//! or DNS names as inside a Kubernetes namespace or a Compose project
//! (`http://<dns name>:<port>`, `--resolve dns`). Booting one service needs
//! only its callees' URLs, so it can be booted alone.

use std::collections::HashMap;

use crate::topology::{ServiceId, Topology};

/// The base URL (`http://HOST:PORT`) of every service a caller may need.
#[derive(Debug, Clone)]
pub enum Resolver {
    /// One URL per service, by id: the in-process harness.
    Local(Vec<String>),
    /// Service name → base URL, from a peers file.
    Peers(HashMap<String, String>),
    /// `http://<topology::dns::dns_names()[id]>:<port>`.
    Dns { names: Vec<String>, port: u16 },
}

/// A callee no address is known for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no address for `{callee}`, which `{caller}` calls: add `{callee}: HOST:PORT` to the peers file, or use --resolve dns"
)]
pub struct Unresolved {
    pub caller: String,
    pub callee: String,
}

impl Resolver {
    /// Callees found by the DNS names `retrylint export` gives the services.
    pub fn dns(t: &Topology, port: u16) -> Self {
        Resolver::Dns {
            names: crate::topology::dns::dns_names(t),
            port,
        }
    }

    /// The base URL of service `id` of `t`, if known.
    pub fn url(&self, t: &Topology, id: ServiceId) -> Option<String> {
        match self {
            Resolver::Local(urls) => urls.get(id).cloned(),
            Resolver::Peers(map) => map.get(&t.services.get(id)?.name).cloned(),
            Resolver::Dns { names, port } => Some(format!("http://{}:{port}", names.get(id)?)),
        }
    }

    /// The base URL of every callee of `caller`, by callee id; an error names
    /// the first callee without one.
    pub fn callees(
        &self,
        t: &Topology,
        caller: ServiceId,
    ) -> Result<HashMap<ServiceId, String>, Unresolved> {
        let mut out = HashMap::new();
        for c in &t.services[caller].calls {
            let url = self.url(t, c.to).ok_or_else(|| Unresolved {
                caller: t.services[caller].name.clone(),
                callee: t.services[c.to].name.clone(),
            })?;
            out.insert(c.to, url);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_are_the_exported_services_names() {
        let t = crate::topology::load_str(
            "version: 1\nentry: web\nservices:\n  web:\n    calls: [ { to: Payments_API } ]\n  Payments_API: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        let r = Resolver::dns(&t, 8080);
        assert_eq!(
            r.callees(&t, 0).unwrap().get(&1).map(String::as_str),
            Some("http://payments-api:8080")
        );
        let none = Resolver::Peers(HashMap::new());
        assert_eq!(
            none.callees(&t, 0).unwrap_err().to_string(),
            "no address for `Payments_API`, which `web` calls: add `Payments_API: HOST:PORT` to the peers file, or use --resolve dns"
        );
    }
}
