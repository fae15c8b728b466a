//! TLS for the test servers: a CA, and the server and client certificates
//! it signs, made at test time with `rcgen`; the links service served over
//! TLS, or over mTLS requiring a client certificate.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tonic::transport::{Certificate, Identity, ServerTlsConfig};

use crate::{LOOPBACK_ANY, LinksBackend, Reflection, RunningServer, serve_routes};

/// A test certificate authority: its certificate and the key it signs with.
pub struct Ca {
    /// The CA's certificate, PEM.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A certificate the CA signed, and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct Pem {
    /// The certificate.
    pub cert: String,
    /// Its private key (PKCS#8).
    pub key: String,
}

impl Ca {
    /// A new CA named `name`, with a fresh key.
    ///
    /// # Panics
    ///
    /// When rcgen cannot make it (it always can).
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a key");
        let pem = params.self_signed(&key).expect("a CA certificate").pem();
        Self {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `localhost` and `127.0.0.1`.
    pub fn server(&self) -> Pem {
        self.issue(
            &["localhost", "127.0.0.1"],
            "links server",
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate for `name`.
    pub fn client(&self, name: &str) -> Pem {
        self.issue(&[], name, ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, names: &[&str], common_name: &str, usage: ExtendedKeyUsagePurpose) -> Pem {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("names");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        Pem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// The links service (and feed, and optionally reflection) on
/// `https://127.0.0.1:PORT` with `identity` as its certificate; with
/// `client_ca`, mTLS: a client must present a certificate that CA signed.
///
/// # Errors
///
/// When the port cannot be bound or the TLS configuration is refused.
pub async fn serve_tls(
    backend: LinksBackend,
    identity: &Pem,
    client_ca: Option<&str>,
    reflection: Option<Reflection>,
) -> std::io::Result<RunningServer> {
    let mut tls =
        ServerTlsConfig::new().identity(Identity::from_pem(&identity.cert, &identity.key));
    if let Some(ca) = client_ca {
        tls = tls.client_ca_root(Certificate::from_pem(ca));
    }
    serve_routes(LOOPBACK_ANY, backend, reflection, Some(tls)).await
}
