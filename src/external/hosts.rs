//! Host names as meshes write them, resolved to a topology service:
//! `ratings`, `ratings.prod`, `ratings.prod.svc`, `ratings.prod.svc.cluster.local`
//! (any cluster domain) all name the Service `ratings` in namespace `prod`.

/// A host split into its service name and namespace, if it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostName<'a> {
    pub name: &'a str,
    pub namespace: Option<&'a str>,
}

/// Splits a Kubernetes host name; a port (`ratings:9080`) is dropped.
pub(crate) fn split(host: &str) -> HostName<'_> {
    let host = host.trim();
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let mut parts = host.splitn(3, '.');
    let name = parts.next().unwrap_or("");
    let namespace = parts.next().filter(|ns| !ns.is_empty());
    HostName { name, namespace }
}

/// What a host resolves to among `services`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    One(usize),
    /// Several services fit; their indices.
    Ambiguous(Vec<usize>),
    Unknown,
}

/// Resolves `host` (written in a document of `doc_namespace`) among service
/// names. A service name may itself be qualified (`ratings.prod`): then its
/// namespace must agree.
pub(crate) fn resolve<'a>(
    host: &str,
    doc_namespace: Option<&str>,
    services: impl Iterator<Item = &'a str>,
) -> Resolved {
    let h = split(host);
    if h.name.is_empty() || h.name == "*" {
        return Resolved::Unknown;
    }
    let ns = h.namespace.or(doc_namespace);
    let mut exact = None;
    let mut fits = Vec::new();
    for (i, s) in services.enumerate() {
        if s == host.trim() {
            exact = Some(i);
        }
        let sh = split(s);
        if sh.name != h.name {
            continue;
        }
        match (sh.namespace, ns) {
            (Some(a), Some(b)) if a != b => {}
            _ => fits.push(i),
        }
    }
    if let Some(i) = exact {
        return Resolved::One(i);
    }
    match fits.len() {
        0 => Resolved::Unknown,
        1 => Resolved::One(fits[0]),
        _ => Resolved::Ambiguous(fits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_spellings_name_one_service() {
        let services = ["productpage", "ratings", "reviews"];
        for host in [
            "ratings",
            "ratings.prod",
            "ratings.prod.svc",
            "ratings.prod.svc.cluster.local",
            "ratings:9080",
        ] {
            assert_eq!(
                resolve(host, None, services.iter().copied()),
                Resolved::One(1),
                "{host}"
            );
        }
        assert_eq!(
            resolve("details", None, services.iter().copied()),
            Resolved::Unknown
        );
    }

    #[test]
    fn namespaces_tell_qualified_services_apart() {
        let services = ["ratings.prod", "ratings.staging"];
        assert_eq!(
            resolve(
                "ratings.prod.svc.cluster.local",
                None,
                services.iter().copied()
            ),
            Resolved::One(0)
        );
        assert_eq!(
            resolve("ratings", Some("staging"), services.iter().copied()),
            Resolved::One(1)
        );
        assert_eq!(
            resolve("ratings", None, services.iter().copied()),
            Resolved::Ambiguous(vec![0, 1])
        );
    }
}
