//! `probe --host NAME`: the name the client's URL carries. The server still
//! listens on 127.0.0.1 alone, so the name must be `localhost` or under
//! `.localhost` (RFC 6761 keeps those on loopback) and must resolve to
//! 127.0.0.1 on this machine before any client runs — the probe never sends
//! a client anywhere else.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Why the name cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    #[error(
        "--host `{0}`: the probe serves on 127.0.0.1 only, so the name must be `localhost` or end in `.localhost` (e.g. probe.localhost)"
    )]
    NotLocal(String),
    #[error(
        "--host `{name}` does not resolve to 127.0.0.1 on this machine ({why}); {HOW_TO_RESOLVE}"
    )]
    Unresolved { name: String, why: String },
    #[error(
        "--host `{name}` resolves to {addrs}, not only to loopback; the probe will not send a client there. {HOW_TO_RESOLVE}"
    )]
    NotLoopback { name: String, addrs: String },
}

/// How to make a `.localhost` name resolve, for the error.
pub const HOW_TO_RESOLVE: &str = "with glibc, install nss-myhostname (`apt-get install libnss-myhostname`) and put `myhostname` on the `hosts:` line of /etc/nsswitch.conf, or add a line `127.0.0.1 NAME bucket.NAME` to /etc/hosts";

/// Whether `name` is one the probe may put in a URL.
pub(crate) fn is_local_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let labels_ok = name
        .split('.')
        .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    labels_ok && (name == "localhost" || name.ends_with(".localhost"))
}

/// Checks what `name` resolves to: every address on loopback, and 127.0.0.1
/// among them (the only address the server listens on).
pub(crate) fn judge(name: &str, addrs: &[SocketAddr]) -> Result<(), HostError> {
    if addrs.is_empty() {
        return Err(HostError::Unresolved {
            name: name.to_owned(),
            why: "no address".to_owned(),
        });
    }
    if addrs.iter().any(|a| !a.ip().is_loopback()) {
        let mut shown: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
        shown.dedup();
        return Err(HostError::NotLoopback {
            name: name.to_owned(),
            addrs: shown.join(", "),
        });
    }
    if !addrs
        .iter()
        .any(|a| a.ip() == IpAddr::V4(Ipv4Addr::LOCALHOST))
    {
        return Err(HostError::Unresolved {
            name: name.to_owned(),
            why: "only to IPv6 loopback".to_owned(),
        });
    }
    Ok(())
}

/// Resolves `name` as the client will (getaddrinfo) and [`judge`]s it.
pub(crate) async fn check(name: &str) -> Result<(), HostError> {
    if !is_local_name(name) {
        return Err(HostError::NotLocal(name.to_owned()));
    }
    let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((name, 0)).await {
        Ok(a) => a.collect(),
        Err(e) => {
            return Err(HostError::Unresolved {
                name: name.to_owned(),
                why: e.to_string(),
            });
        }
    };
    judge(name, &addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 0)
    }

    #[test]
    fn only_loopback_names_are_taken() {
        for ok in [
            "localhost",
            "probe.localhost",
            "bucket.probe.localhost",
            "Probe.LOCALHOST.",
        ] {
            assert!(is_local_name(ok), "{ok}");
        }
        for bad in [
            "example.com",
            "localhost.example.com",
            "mylocalhost",
            "a..localhost",
            "a b.localhost",
            "",
        ] {
            assert!(!is_local_name(bad), "{bad}");
        }
    }

    #[test]
    fn what_it_resolves_to_is_judged() {
        assert_eq!(judge("p.localhost", &[sa("::1"), sa("127.0.0.1")]), Ok(()));
        let e = judge("p.localhost", &[]).unwrap_err();
        assert!(e.to_string().contains("libnss-myhostname"), "{e}");
        assert!(matches!(
            judge("p.localhost", &[sa("::1")]),
            Err(HostError::Unresolved { .. })
        ));
        let e = judge("p.localhost", &[sa("127.0.0.1"), sa("10.0.0.8")]).unwrap_err();
        assert!(matches!(e, HostError::NotLoopback { .. }));
        assert!(e.to_string().contains("10.0.0.8"), "{e}");
    }

    #[tokio::test]
    async fn a_name_outside_localhost_is_refused_before_any_lookup() {
        assert_eq!(
            check("example.com").await,
            Err(HostError::NotLocal("example.com".into()))
        );
    }
}
