//! Who may start or stop a run on a `serve` admin port. A request must:
//!
//! - name a `Host` this port answers to: a loopback one (`127.0.0.1`,
//!   `localhost`, `[::1]`, any port) or one configured (`--allow-host`, and
//!   the IP `--admin` binds). A page whose DNS name was rebound to 127.0.0.1
//!   still sends its own name, and is refused (403);
//! - be `Content-Type: application/json` (415 otherwise): a browser sends
//!   that cross-origin only after a preflight this port never answers, so a
//!   page cannot post a `text/plain` "simple request" at it;
//! - carry the run's token (`Authorization: Bearer …`): 401 without one,
//!   403 with a wrong one.
//!
//! Reads (`/metrics`, `/healthz`, `/retrylint/counters`) need none of this:
//! Prometheus and probes ask by pod IP and change nothing.

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, StatusCode, header};

use super::token::Token;

/// The rules of one admin port.
#[derive(Debug, Clone)]
pub struct Admission {
    pub token: Token,
    /// Host names (or IPs) besides loopback, lower case, without a port.
    pub hosts: Vec<String>,
}

impl Admission {
    /// `token`, and the hosts `allow` plus the IP of `admin` when it is one
    /// a client can name (not `0.0.0.0` or `::`).
    pub fn new(token: Token, allow: &[String], admin: SocketAddr) -> Admission {
        let mut hosts: Vec<String> = allow.iter().map(|h| h.to_ascii_lowercase()).collect();
        if !admin.ip().is_unspecified() {
            hosts.push(match admin.ip() {
                IpAddr::V4(ip) => ip.to_string(),
                IpAddr::V6(ip) => format!("[{ip}]"),
            });
        }
        Admission { token, hosts }
    }

    /// Whether a start or stop with `headers` may go on; the refusal's
    /// status and text otherwise.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !self.allows_host(host) {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "Host `{}` is not one this admin port answers to (127.0.0.1, localhost, [::1]{}); give `serve` --allow-host NAME for a name it is reached by\n",
                    crate::visible::name(&host.chars().take(100).collect::<String>()),
                    self.hosts
                        .iter()
                        .map(|h| format!(", {h}"))
                        .collect::<String>()
                ),
            ));
        }
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "start and stop take a JSON body: send `Content-Type: application/json`\n".into(),
            ));
        }
        match headers.get(header::AUTHORIZATION) {
            None => Err((
                StatusCode::UNAUTHORIZED,
                "start and stop need the run's token: send `Authorization: Bearer TOKEN`, the token `serve` was given (`drive --token-file FILE`)\n".into(),
            )),
            Some(v) if self.token.admits(v.as_bytes()) => Ok(()),
            Some(_) => Err((
                StatusCode::FORBIDDEN,
                "the token is not this run's: give `drive` the token `serve` was given\n".into(),
            )),
        }
    }

    fn allows_host(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]")
            || (!name.is_empty() && self.hosts.contains(&name))
    }
}

/// The name in a `Host` value, without its port: `a:80` → `a`,
/// `[::1]:80` → `[::1]`. A value with anything after the port is not one.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) if host[end + 1..].is_empty() || is_port(&host[end + 1..]) => &host[..=end],
            _ => "",
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if is_port(&format!(":{port}")) => name,
        Some(_) => "",
        None => host,
    }
}

fn is_port(s: &str) -> bool {
    s.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn admission() -> Admission {
        Admission::new(
            Token::new("0123456789abcdef").unwrap(),
            &["Web.retrylint".into()],
            "10.0.0.7:9090".parse().unwrap(),
        )
    }

    fn headers(host: &str, ct: &str, auth: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        if let Some(a) = auth {
            h.insert(header::AUTHORIZATION, HeaderValue::from_str(a).unwrap());
        }
        h
    }

    const GOOD: Option<&str> = Some("Bearer 0123456789abcdef");

    #[test]
    fn loopback_and_configured_hosts_pass_any_other_is_forbidden() {
        let a = admission();
        for host in [
            "127.0.0.1",
            "127.0.0.1:9090",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9090",
            "[::1]",
            "web.retrylint:9090",
            "10.0.0.7:9090",
        ] {
            assert_eq!(
                a.check(&headers(host, "application/json", GOOD)),
                Ok(()),
                "{host}"
            );
        }
        for host in [
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost:80:80",
            "localhost:x",
            "[::1]x",
            "",
            "0.0.0.0:9090",
        ] {
            let (status, text) = a
                .check(&headers(host, "application/json", GOOD))
                .unwrap_err();
            assert_eq!(status, StatusCode::FORBIDDEN, "{host}");
            assert!(text.contains("--allow-host"), "{text}");
        }
        // `0.0.0.0` is no name a client sends: binding it adds none.
        let any = Admission::new(
            Token::new("0123456789abcdef").unwrap(),
            &[],
            "0.0.0.0:9090".parse().unwrap(),
        );
        assert!(any.hosts.is_empty());
    }

    #[test]
    fn json_only_and_the_token_is_checked_last() {
        let a = admission();
        let ok = "application/json; charset=utf-8";
        assert_eq!(a.check(&headers("localhost", ok, GOOD)), Ok(()));
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/jsonp",
        ] {
            let (status, _) = a.check(&headers("localhost", ct, GOOD)).unwrap_err();
            assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct}");
        }
        let (status, _) = a.check(&headers("localhost", ok, None)).unwrap_err();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        for auth in [
            "Bearer 0123456789abcdeX",
            "Basic 0123456789abcdef",
            "Bearer ",
        ] {
            let (status, text) = a.check(&headers("localhost", ok, Some(auth))).unwrap_err();
            assert_eq!(status, StatusCode::FORBIDDEN, "{auth}");
            assert!(!text.contains("0123456789abcdef"), "{text}");
        }
    }
}
