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

/// The Python modules [`GrpcioMtls`] needs.
const GRPCIO_MODULES: &str = "grpc, grpc_reflection";

/// A Python grpcio server (gRPC C-core) on `https://localhost:PORT`
/// requiring a client certificate (`tests/tls/grpcio_mtls_server.py`),
/// with a server certificate from a fresh CA that also signs the client
/// certificates it accepts; reflection is its only service. Stopped when
/// dropped.
pub struct GrpcioMtls {
    /// The CA of the server's certificate and of the client certificates
    /// it accepts.
    pub ca: Ca,
    /// `https://localhost:PORT`.
    pub url: String,
    /// `localhost:PORT`, as errors name it.
    pub host: String,
    process: crate::oauth::Process,
    folder: std::path::PathBuf,
}

impl GrpcioMtls {
    /// Starts it, or says why not: `None` (the test then skips, saying why
    /// on stderr) when no Python imports grpcio and its reflection.
    ///
    /// # Panics
    ///
    /// When there is no such Python and `AI_TOOLS_REQUIRE_PYTHON` is set,
    /// or when the server does not start.
    pub fn start() -> Option<Self> {
        use std::io::{BufRead as _, Write as _};

        let python = match crate::support::python_importing(GRPCIO_MODULES) {
            Ok(python) => python,
            Err(reason) if crate::support::python_required() => {
                panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}")
            }
            Err(reason) => {
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
                return None;
            }
        };
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let folder = std::env::temp_dir().join(format!(
            "ai-tools-grpcio-mtls-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&folder).expect("a folder");
        let ca = Ca::new("grpcio test ca");
        let server = ca.server();
        for (name, text) in [
            ("ca.pem", &ca.pem),
            ("server.pem", &server.cert),
            ("server.key", &server.key),
        ] {
            std::fs::write(folder.join(name), text).expect("written");
        }
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tls/grpcio_mtls_server.py");
        let mut child = std::process::Command::new(python)
            .arg(script)
            .arg(&folder)
            // C-core logs each refused handshake at INFO.
            .env("GRPC_VERBOSITY", "ERROR")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("the grpcio server starts");
        let stdout = child.stdout.take().expect("piped");
        let process = crate::oauth::Process(child);
        let mut first = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .expect("the grpcio server says its port");
        let port = first
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the grpcio server said {first:?}, not `PORT n`"))
            .to_owned();
        Some(Self {
            ca,
            url: format!("https://localhost:{port}"),
            host: format!("localhost:{port}"),
            process,
            folder,
        })
    }

    /// The X.509 version 1 client certificate and its key in `tests/tls`
    /// (made once with `openssl x509 -req`, see its README).
    pub fn version_1_client() -> Pem {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tls");
        let read = |name: &str| std::fs::read_to_string(folder.join(name)).expect("read");
        Pem {
            cert: read("v1-client.pem"),
            key: read("v1-client.key"),
        }
    }
}

impl Drop for GrpcioMtls {
    fn drop(&mut self) {
        // Closing its stdin ends it; the process is killed anyway.
        drop(self.process.0.stdin.take());
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}
