//! `probe --https`: a throw-away certificate authority per probe, a server
//! certificate it signs for the probe's names, and the CA's PEM in a
//! temporary file handed to the client through the variables its TLS stack
//! reads. Nothing here is kept: the keys live in memory and the file is
//! removed when the probe ends.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// The variables that carry the CA's path: OpenSSL and Python's `ssl`
/// (`SSL_CERT_FILE`), requests, Node, curl, the AWS SDKs and CLI, and one of
/// the probe's own for a client that must be told by hand.
pub const CA_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "CURL_CA_BUNDLE",
    "AWS_CA_BUNDLE",
    "RETRYLINT_CA",
];

/// Why the certificates or the CA file could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot generate the probe's certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("cannot configure the TLS server: {0}")]
    Config(#[from] tokio_rustls::rustls::Error),
    #[error("cannot write the probe's CA certificate to a temporary file: {0}")]
    CaFile(#[from] std::io::Error),
}

/// One probe's TLS material: the acceptor every probe server uses and the
/// CA file the clients trust (removed on drop).
pub struct ProbeTls {
    acceptor: TlsAcceptor,
    ca_file: tempfile::TempPath,
}

impl std::fmt::Debug for ProbeTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeTls")
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

/// The names the server certificate is for: `localhost`, `127.0.0.1`, and
/// `host` with every name under it (a virtual-hosted S3 bucket is
/// `bucket.host`).
pub(crate) fn server_names(host: &str) -> Vec<String> {
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    for n in [host.to_owned(), format!("*.{host}")] {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

impl ProbeTls {
    /// A fresh CA and a server certificate for [`server_names`]`(host)`.
    pub(crate) fn generate(host: &str) -> Result<ProbeTls, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.distinguished_name
            .push(DnType::CommonName, "retrylint probe CA (one probe only)");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca, ca_key);
        let leaf_key = KeyPair::generate()?;
        let mut leaf = CertificateParams::new(server_names(host))?;
        leaf.distinguished_name
            .push(DnType::CommonName, "retrylint probe server");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        // Python 3.13's default strict verification wants the link to the
        // issuer spelled out.
        leaf.use_authority_key_identifier_extension = true;
        let leaf_cert = leaf.signed_by(&leaf_key, &issuer)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        // Deprecated in rustls 0.23.48 for lacking post-quantum key
        // exchange, which a loopback server with a CA that lives one probe
        // does not need; aws-lc-rs, which has it, needs cmake and nasm.
        #[allow(deprecated)]
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![leaf_cert.der().clone()], key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let ca_pem = ca_cert.pem();
        let mut file = tempfile::Builder::new()
            .prefix("retrylint-probe-ca-")
            .suffix(".pem")
            .tempfile()?;
        file.write_all(ca_pem.as_bytes())?;
        file.flush()?;
        Ok(ProbeTls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            ca_file: file.into_temp_path(),
        })
    }

    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.acceptor.clone()
    }

    /// Where the CA's PEM is, while the probe runs.
    pub(crate) fn ca_path(&self) -> &Path {
        &self.ca_file
    }

    /// The client's environment: every [`CA_VARIABLES`] name set to the CA.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let path = self.ca_path().display().to_string();
        CA_VARIABLES
            .iter()
            .map(|v| ((*v).to_owned(), path.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_the_host_and_what_is_under_it() {
        assert_eq!(
            server_names("probe.localhost"),
            [
                "localhost",
                "127.0.0.1",
                "probe.localhost",
                "*.probe.localhost"
            ]
        );
        assert_eq!(
            server_names("localhost"),
            ["localhost", "127.0.0.1", "*.localhost"]
        );
    }

    #[test]
    fn the_ca_file_is_written_and_removed() {
        let tls = ProbeTls::generate("probe.localhost").unwrap();
        let path = tls.ca_path().to_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(text.trim_end().ends_with("-----END CERTIFICATE-----"));
        let env = tls.env();
        assert_eq!(env.len(), CA_VARIABLES.len());
        assert!(env.iter().all(|(_, v)| Path::new(v) == path));
        drop(tls);
        assert!(!path.exists());
    }
}
