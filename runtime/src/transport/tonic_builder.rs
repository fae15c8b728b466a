//! [`TonicTransportBuilder`]: a [`TonicTransport`] from a URL, over TLS
//! and mTLS with feature `tls`, and [`TransportError`], what reaching the
//! server can fail with.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tonic::transport::Endpoint;

use crate::transport::TonicTransport;

/// Why a [`TonicTransport`] could not be built or could not reach its
/// server. Each names the URL or the host.
///
/// A call through a transport from [`TonicTransport::builder`] that fails
/// for one of these reasons (a lazy channel connects at its first call)
/// carries the same text in its [`Status`](crate::transport::Status), with
/// code `Unavailable`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The URL does not parse, or is not `http://` or `https://` with a host.
    #[error("`{url}` is not a gRPC server URL: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A CA or a client certificate was given for an `http://` URL.
    #[error("`{url}`: a CA or client certificate is for TLS: use an https:// URL")]
    TlsNeedsHttps {
        /// The URL given.
        url: String,
    },
    /// An `https://` URL without the crate's `tls` feature.
    #[error("`{url}`: https:// needs ai-tools' `tls` feature")]
    TlsNotEnabled {
        /// The URL given.
        url: String,
    },
    /// A certificate or key given to the builder does not parse.
    #[error("the {what} for {host} cannot be read: {reason}")]
    Certificate {
        /// The server's host.
        host: String,
        /// `CA certificate`, `client certificate` or `client key`.
        what: &'static str,
        /// Why it cannot be read.
        reason: String,
    },
    /// A certificate given to the builder parses but cannot be used (an
    /// X.509 version 1 client certificate, which rustls does not accept).
    #[error("the {what} for {host} cannot be used: {reason}")]
    UnusableCertificate {
        /// The server's host.
        host: String,
        /// `client certificate`.
        what: &'static str,
        /// Why it cannot be used, and what to give instead.
        reason: String,
    },
    /// The server's certificate did not verify.
    #[error(
        "TLS handshake with {host} failed: the server's certificate is not trusted for {host}: {reason}"
    )]
    UntrustedServer {
        /// The server's host.
        host: String,
        /// Why it did not verify.
        reason: String,
    },
    /// The server refused the client certificate, or wanted one; or it
    /// closed the connection during the handshake, as a gRPC C-core server
    /// (grpcio, grpc++…) does in both cases, without saying why.
    #[error("TLS handshake with {host} failed: {reason}")]
    ClientCertificateRefused {
        /// The server's host.
        host: String,
        /// What the server said.
        reason: String,
    },
    /// Another TLS failure (no common protocol, no HTTP/2, no system roots…).
    #[error("TLS with {host} failed: {reason}")]
    Tls {
        /// The server's host.
        host: String,
        /// What failed.
        reason: String,
    },
    /// Nothing listens at the address.
    #[error("cannot connect to {host}: connection refused")]
    Refused {
        /// The server's host and port.
        host: String,
    },
    /// No connection (TCP and TLS) within the connect timeout.
    #[error("cannot connect to {host}: no connection within {} s", timeout.as_secs_f64())]
    TimedOut {
        /// The server's host and port.
        host: String,
        /// The connect timeout.
        timeout: Duration,
    },
    /// Another failure to connect (a name that does not resolve…).
    #[error("cannot connect to {host}: {reason}")]
    Connect {
        /// The server's host and port.
        host: String,
        /// What failed.
        reason: String,
    },
}

/// The connect timeout when none is given: a server that does not complete
/// the TCP and TLS handshakes within it is an error, not a hang.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Builds a [`TonicTransport`] from a server's URL: plain `http://`, or
/// `https://` (feature `tls`) verified against the system's roots or a
/// private CA, with a client certificate for mTLS. Made by
/// [`TonicTransport::builder`].
///
/// Connecting, TCP and TLS handshakes together, is bounded by
/// [`connect_timeout`](Self::connect_timeout) (default 10 s).
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use proto_ai_tools::transport::TonicTransport;
///
/// let transport = TonicTransport::builder("http://links.internal:50051")
///     .connect_timeout(Duration::from_secs(3))
///     .connect()
///     .await?;
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
///
/// With feature `tls`, a private CA and a client certificate:
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use proto_ai_tools::transport::TonicTransport;
///
/// # #[cfg(feature = "tls")]
/// let transport = TonicTransport::builder("https://links.internal:443")
///     .ca_certificate(std::fs::read("ca.pem")?)
///     .client_identity(std::fs::read("client.pem")?, std::fs::read("client.key")?)
///     .connect()
///     .await?;
/// # #[cfg(feature = "tls")]
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TonicTransportBuilder {
    url: String,
    connect_timeout: Duration,
    #[cfg(feature = "tls")]
    ca: Option<Vec<u8>>,
    #[cfg(feature = "tls")]
    identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// The key stays out of logs.
impl fmt::Debug for TonicTransportBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("TonicTransportBuilder");
        s.field("url", &self.url)
            .field("connect_timeout", &self.connect_timeout);
        #[cfg(feature = "tls")]
        s.field("ca", &self.ca.as_ref().map(|_| ".."))
            .field("identity", &self.identity.as_ref().map(|_| ".."));
        s.finish()
    }
}

impl TonicTransport {
    /// A builder of a transport to the server at `url` (`http://host:port`
    /// or, with feature `tls`, `https://host:port`).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), proto_ai_tools::transport::TransportError> {
    /// use std::time::Duration;
    /// use proto_ai_tools::transport::TonicTransport;
    ///
    /// // Connects at the first call.
    /// let transport = TonicTransport::builder("http://127.0.0.1:50051")
    ///     .connect_timeout(Duration::from_secs(3))
    ///     .connect_lazy()?;
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder(url: impl Into<String>) -> TonicTransportBuilder {
        TonicTransportBuilder {
            url: url.into(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            #[cfg(feature = "tls")]
            ca: None,
            #[cfg(feature = "tls")]
            identity: None,
        }
    }
}

impl TonicTransportBuilder {
    /// How long connecting may take, TCP and TLS handshakes together
    /// (default 10 s); past it, [`TransportError::TimedOut`].
    ///
    /// # Examples
    ///
    /// See [`TonicTransport::builder`].
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Trust the CA certificate(s) in `pem` for the server's certificate,
    /// instead of the system's roots. Needs an `https://` URL.
    ///
    /// # Examples
    ///
    /// See [`TonicTransportBuilder`].
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn ca_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca = Some(pem.into());
        self
    }

    /// Present this client certificate (PEM, its chain may follow) and its
    /// private key (PEM: PKCS#8, PKCS#1 or SEC1) to the server: mTLS. Needs
    /// an `https://` URL.
    ///
    /// # Examples
    ///
    /// See [`TonicTransportBuilder`].
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn client_identity(
        mut self,
        certificate_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.identity = Some((certificate_pem.into(), key_pem.into()));
        self
    }

    /// Connects now, within the connect timeout: a server that cannot be
    /// reached, whose certificate does not verify, or that refuses the
    /// client certificate is an error here.
    ///
    /// Over TLS it makes a second handshake of its own and waits, up to a
    /// second, for the server's first bytes, sending none: under TLS 1.3 a
    /// server refuses a client certificate only after the client's half of
    /// the handshake, with an alert that a request written meanwhile can
    /// turn into a bare "broken pipe".
    ///
    /// # Errors
    ///
    /// A [`TransportError`] naming the URL or the host and what failed.
    ///
    /// # Examples
    ///
    /// See [`TonicTransportBuilder`].
    pub async fn connect(self) -> Result<TonicTransport, TransportError> {
        let (endpoint, peer) = self.endpoint()?;
        let host = &peer.host;
        let connecting = async {
            let channel = match endpoint.connect().await {
                Ok(channel) => channel,
                Err(e) => {
                    return Err(match classify(host, &e) {
                        Some(known) => known,
                        // A connection that ended without a reason (a
                        // C-core server refusing the client certificate):
                        // a handshake of its own hears it.
                        None => peer
                            .check_tls()
                            .await
                            .err()
                            .unwrap_or_else(|| connect_failed(host, &e)),
                    });
                }
            };
            peer.check_tls().await?;
            Ok(channel)
        };
        let channel = tokio::time::timeout(self.connect_timeout, connecting)
            .await
            .map_err(|_| TransportError::TimedOut {
                host: host.clone(),
                timeout: self.connect_timeout,
            })??;
        Ok(TonicTransport::with_peer(channel, peer))
    }

    /// A transport that connects at its first call (and reconnects after a
    /// failure). The URL, certificates and key are checked now; a failure to
    /// connect comes back from the call, as a
    /// [`Status`](crate::transport::Status) with code `Unavailable` and the
    /// [`TransportError`]'s text. Called within a tokio runtime, as tonic's
    /// `connect_lazy` is.
    ///
    /// # Errors
    ///
    /// A [`TransportError`] for the URL or a certificate or key that does
    /// not parse.
    ///
    /// # Examples
    ///
    /// See [`TonicTransport::builder`].
    pub fn connect_lazy(self) -> Result<TonicTransport, TransportError> {
        let (endpoint, peer) = self.endpoint()?;
        Ok(TonicTransport::with_peer(endpoint.connect_lazy(), peer))
    }

    /// The endpoint, TLS configured, and the peer it reaches.
    fn endpoint(&self) -> Result<(Endpoint, Peer), TransportError> {
        let url = &self.url;
        let invalid = |reason: String| TransportError::InvalidUrl {
            url: url.clone(),
            reason,
        };
        let uri: http::Uri = url.parse().map_err(|e| invalid(format!("{e}")))?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(invalid("give http://host:port or https://host:port".into())),
        };
        let Some(authority) = uri.authority() else {
            return Err(invalid("it names no host".into()));
        };
        let host = authority.to_string();
        let endpoint = Endpoint::from(uri.clone()).connect_timeout(self.connect_timeout);
        #[cfg(feature = "tls")]
        if !https && (self.ca.is_some() || self.identity.is_some()) {
            return Err(TransportError::TlsNeedsHttps { url: url.clone() });
        }
        if !https {
            return Ok((endpoint, Peer::plain(host)));
        }
        #[cfg(feature = "tls")]
        {
            let (config, check) = self.tls_config(&uri, &host)?;
            let endpoint = endpoint
                .tls_config(config)
                .map_err(|e| TransportError::Tls {
                    host: host.clone(),
                    reason: chain(&e),
                })?;
            Ok((
                endpoint,
                Peer {
                    host,
                    tls: Some(Arc::new(check)),
                },
            ))
        }
        #[cfg(not(feature = "tls"))]
        Err(TransportError::TlsNotEnabled { url: url.clone() })
    }

    /// The CA (else the system's roots) and the client identity, each
    /// checked to parse (tonic would skip a CA file with no certificate in
    /// it, and then trust nothing), for tonic and for [`TlsCheck`].
    #[cfg(feature = "tls")]
    fn tls_config(
        &self,
        uri: &http::Uri,
        host: &str,
    ) -> Result<(tonic::transport::ClientTlsConfig, TlsCheck), TransportError> {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
        use tonic::transport::{Certificate, ClientTlsConfig, Identity};

        let unreadable = |what, reason: String| TransportError::Certificate {
            host: host.to_owned(),
            what,
            reason,
        };
        let certificates = |what, pem: &[u8]| {
            let certs = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| unreadable(what, format!("{e:?}")))?;
            if certs.is_empty() {
                return Err(unreadable(
                    what,
                    "no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into(),
                ));
            }
            Ok(certs)
        };
        let tls_failed = |e: &dyn fmt::Display| TransportError::Tls {
            host: host.to_owned(),
            reason: e.to_string(),
        };
        let mut config = ClientTlsConfig::new().timeout(self.connect_timeout);
        let mut roots = rustls::RootCertStore::empty();
        config = match &self.ca {
            Some(pem) => {
                for cert in certificates("CA certificate", pem)? {
                    roots.add(cert).map_err(|e| {
                        unreadable("CA certificate", format!("not an X.509 certificate: {e}"))
                    })?;
                }
                config.ca_certificate(Certificate::from_pem(pem))
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
                config.with_native_roots()
            }
        };
        let check = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_failed(&e))?
        .with_root_certificates(roots);
        let mut check = match &self.identity {
            Some((cert, key)) => {
                let chain = certificates("client certificate", cert)?;
                let private = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
                    unreadable(
                        "client key",
                        format!("no PEM private key (PKCS#8, PKCS#1 or SEC1) in it: {e:?}"),
                    )
                })?;
                if chain.first().is_some_and(|leaf| x509_version_1(leaf)) {
                    return Err(TransportError::UnusableCertificate {
                        host: host.to_owned(),
                        what: "client certificate",
                        reason: VERSION_1.into(),
                    });
                }
                config = config.identity(Identity::from_pem(cert, key));
                check
                    .with_client_auth_cert(chain, private)
                    .map_err(|e| match e {
                        rustls::Error::InvalidCertificate(why) => {
                            unreadable("client certificate", why.to_string())
                        }
                        other => unreadable("client key", other.to_string()),
                    })?
            }
            None => check.with_no_client_auth(),
        };
        check.alpn_protocols = vec![b"h2".to_vec()];
        let bracketed = uri.host().unwrap_or_default();
        let name = bracketed
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(bracketed);
        let name = ServerName::try_from(name.to_owned()).map_err(|e| tls_failed(&e))?;
        Ok((
            config,
            TlsCheck {
                config: Arc::new(check),
                client_certificate: self.identity.is_some(),
                name,
                addr: format!("{bracketed}:{}", uri.port_u16().unwrap_or(443)),
                connect_timeout: self.connect_timeout,
            },
        ))
    }
}

/// Where a transport from the builder goes: its `host:port`, which its
/// errors name, and over TLS how to hear why a handshake was refused.
#[derive(Debug)]
pub(super) struct Peer {
    pub(super) host: String,
    #[cfg(feature = "tls")]
    tls: Option<Arc<TlsCheck>>,
}

impl Peer {
    fn plain(host: String) -> Self {
        Self {
            host,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Over TLS, [`TlsCheck::run`]; else nothing to check.
    pub(super) async fn check_tls(&self) -> Result<(), TransportError> {
        #[cfg(feature = "tls")]
        if let Some(check) = &self.tls {
            return check.run(&self.host).await;
        }
        Ok(())
    }
}

/// How long [`TlsCheck::run`] waits for the server's first bytes after the
/// handshake; a server that waits for the client to speak first gets no
/// verdict, not an error.
#[cfg(feature = "tls")]
const FIRST_BYTES: Duration = Duration::from_secs(1);

/// A handshake of its own, with the roots and identity tonic was given
/// (rustls on ring, as tonic's), to hear the server's verdict on it.
#[cfg(feature = "tls")]
struct TlsCheck {
    config: Arc<rustls::ClientConfig>,
    /// Whether a client certificate is presented.
    client_certificate: bool,
    name: rustls::pki_types::ServerName<'static>,
    addr: String,
    connect_timeout: Duration,
}

#[cfg(feature = "tls")]
impl fmt::Debug for TlsCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsCheck")
            .field("addr", &self.addr)
            .finish()
    }
}

#[cfg(feature = "tls")]
impl TlsCheck {
    /// Connects, shakes hands and waits up to [`FIRST_BYTES`] for the
    /// server's first bytes (an HTTP/2 server sends its SETTINGS at once),
    /// writing nothing, so that an alert the server sends after the
    /// handshake is read, not lost to a reset.
    async fn run(&self, host: &str) -> Result<(), TransportError> {
        use tokio::io::AsyncReadExt as _;

        let failed =
            |e: std::io::Error| classify(host, &e).unwrap_or_else(|| connect_failed(host, &e));
        let shake = async {
            let tcp = tokio::net::TcpStream::connect(&self.addr).await?;
            tokio_rustls::TlsConnector::from(self.config.clone())
                .connect(self.name.clone(), tcp)
                .await
        };
        let mut tls = tokio::time::timeout(self.connect_timeout, shake)
            .await
            .map_err(|_| TransportError::TimedOut {
                host: host.to_owned(),
                timeout: self.connect_timeout,
            })?
            .map_err(|e| self.closed(host, &e).unwrap_or_else(|| failed(e)))?;
        let mut byte = [0; 1];
        match tokio::time::timeout(FIRST_BYTES, tls.read(&mut byte)).await {
            Ok(Err(e)) => Err(self.closed(host, &e).unwrap_or_else(|| failed(e))),
            // The first bytes, a close or silence: nothing against the handshake.
            _ => Ok(()),
        }
    }

    /// A connection the server ended, during the handshake or before its
    /// first bytes, without a TLS alert (an end of stream without
    /// close_notify, or a reset), said as what it most likely means: a gRPC
    /// C-core server ends the connection so when it wants a client
    /// certificate and gets none, or one whose issuer it does not trust.
    /// An HTTP/2 server that took the handshake sends its SETTINGS first.
    fn closed(&self, host: &str, e: &std::io::Error) -> Option<TransportError> {
        use std::io::ErrorKind;

        let closed = matches!(
            e.kind(),
            ErrorKind::UnexpectedEof
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
        );
        if !closed {
            return None;
        }
        let likely = if self.client_certificate {
            "it may not trust the client certificate's issuer (give a client certificate \
             signed by a CA the server trusts)"
        } else {
            "it may require a client certificate (give one)"
        };
        Some(TransportError::ClientCertificateRefused {
            host: host.to_owned(),
            reason: format!("the server closed the connection during the handshake; {likely}"),
        })
    }
}

/// The reason an X.509 version 1 client certificate cannot be used.
#[cfg(feature = "tls")]
const VERSION_1: &str = "it is an X.509 version 1 certificate, which rustls does not \
    accept; make a version 3 certificate (e.g. `openssl x509 -req … -extfile FILE`, FILE \
    with an extension such as `extendedKeyUsage = clientAuth`)";

/// Whether `der` is an X.509 version 1 certificate: its TBSCertificate
/// (the first element of the Certificate SEQUENCE) begins with the serial
/// number (INTEGER), not the `[0]` version a version 2 or 3 one begins with.
#[cfg(feature = "tls")]
fn x509_version_1(der: &[u8]) -> bool {
    /// The contents of the DER SEQUENCE at the start of `der`.
    fn sequence(der: &[u8]) -> Option<&[u8]> {
        let (&tag, rest) = der.split_first()?;
        if tag != 0x30 {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let (bytes, rest) = rest.split_at(n);
            let len = bytes
                .iter()
                .fold(0usize, |len, &b| (len << 8) | usize::from(b));
            (len, rest)
        };
        rest.get(..len)
    }
    sequence(der)
        .and_then(sequence)
        .and_then(|tbs| tbs.first())
        .is_some_and(|&tag| tag == 0x02)
}

/// A failure to connect that [`classify`] did not recognize, its causes
/// joined.
fn connect_failed(host: &str, error: &(dyn StdError + 'static)) -> TransportError {
    TransportError::Connect {
        host: host.to_owned(),
        reason: chain(error),
    }
}

/// `error` and its sources, joined by `: `, each said once (tonic and
/// hyper repeat their source in their own text).
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let next = e.to_string();
        if !text.contains(&next) {
            text = format!("{text}: {next}");
        }
        source = e.source();
    }
    text
}

/// A TLS or TCP failure found among `error`'s causes, said for `host`; `None`
/// when there is none.
pub(super) fn classify(host: &str, error: &(dyn StdError + 'static)) -> Option<TransportError> {
    let host = host.to_owned();
    let mut source = Some(error);
    while let Some(e) = source {
        #[cfg(feature = "tls")]
        if let Some(tls) = rustls_error(e) {
            return Some(tls_failure(host, tls));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            // h2 keeps an I/O error's kind and text only: a TLS alert that
            // ends a connection after the handshake comes back as text.
            #[cfg(feature = "tls")]
            if let Some(alert) = io
                .get_ref()
                .and_then(|inner| inner.to_string().strip_prefix(ALERT).map(str::to_owned))
            {
                return Some(alert_failure(host, &alert));
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return Some(TransportError::Refused { host });
                }
                std::io::ErrorKind::TimedOut => {
                    return Some(TransportError::Connect {
                        host,
                        reason: "timed out".into(),
                    });
                }
                _ => {}
            }
        }
        source = e.source();
    }
    None
}

/// The rustls error `e` is or wraps: `io::Error::source` skips the error it
/// wraps, so that one is looked at through `get_ref`.
#[cfg(feature = "tls")]
fn rustls_error<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    e.downcast_ref::<rustls::Error>().or_else(|| {
        e.downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    })
}

/// What a failed handshake means for whoever configured it.
#[cfg(feature = "tls")]
fn tls_failure(host: String, error: &rustls::Error) -> TransportError {
    use rustls::CertificateError as Cert;
    match error {
        rustls::Error::InvalidCertificate(why) => {
            let reason = match why {
                Cert::UnknownIssuer => {
                    "it is not signed by a trusted CA (give the CA that signed it)".to_owned()
                }
                Cert::NotValidForName | Cert::NotValidForNameContext { .. } => {
                    format!("it is not issued for this name ({why})")
                }
                Cert::Expired | Cert::ExpiredContext { .. } => format!("it has expired ({why})"),
                other => other.to_string(),
            };
            TransportError::UntrustedServer { host, reason }
        }
        rustls::Error::AlertReceived(alert) => alert_failure(host, &format!("{alert:?}")),
        other => TransportError::Tls {
            host,
            reason: other.to_string(),
        },
    }
}

/// How rustls says it received an alert, before the alert's name.
#[cfg(feature = "tls")]
const ALERT: &str = "received fatal alert: ";

/// What the server's TLS alert `name` (as rustls spells it) means.
#[cfg(feature = "tls")]
fn alert_failure(host: String, name: &str) -> TransportError {
    match name {
        "CertificateRequired" => TransportError::ClientCertificateRefused {
            host,
            reason: "the server requires a client certificate (give one)".into(),
        },
        "BadCertificate"
        | "UnknownCA"
        | "CertificateUnknown"
        | "UnsupportedCertificate"
        | "CertificateRevoked"
        | "CertificateExpired"
        | "AccessDenied" => TransportError::ClientCertificateRefused {
            host,
            reason: format!("the server did not accept the client certificate (TLS alert {name})"),
        },
        _ => TransportError::Tls {
            host,
            reason: format!("{ALERT}{name}"),
        },
    }
}

impl TonicTransport {
    /// A transport over `channel` to `peer`, which its connection errors name.
    fn with_peer(channel: tonic::transport::Channel, peer: Peer) -> Self {
        Self {
            channel,
            peer: Some(Arc::new(peer)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(builder: TonicTransportBuilder) -> TransportError {
        match builder.connect_lazy() {
            Ok(_) => panic!("built"),
            Err(e) => e,
        }
    }

    #[tokio::test]
    async fn a_url_that_is_not_one_is_refused_naming_it() {
        let e = refused(TonicTransport::builder("links:50051"));
        assert!(
            e.to_string()
                .starts_with("`links:50051` is not a gRPC server URL"),
            "{e}"
        );
        let e = refused(TonicTransport::builder("ftp://links:21"));
        assert!(e.to_string().contains("give http://host:port"), "{e}");
        assert!(
            TonicTransport::builder("http://127.0.0.1:1")
                .connect_lazy()
                .is_ok()
        );
    }

    #[cfg(feature = "tls")]
    #[tokio::test]
    async fn certificates_that_do_not_parse_are_refused_naming_what() {
        let e = refused(TonicTransport::builder("http://h:1").ca_certificate("x"));
        assert_eq!(
            e.to_string(),
            "`http://h:1`: a CA or client certificate is for TLS: use an https:// URL"
        );
        let e = refused(TonicTransport::builder("https://h:1").ca_certificate("not a pem"));
        assert_eq!(
            e.to_string(),
            "the CA certificate for h:1 cannot be read: no PEM certificate (-----BEGIN CERTIFICATE-----) in it"
        );
        let e = refused(TonicTransport::builder("https://h:1").ca_certificate(PEM_BLOCK));
        assert!(
            e.to_string()
                .starts_with("the CA certificate for h:1 cannot be read: not an X.509 certificate"),
            "{e}"
        );
        let e =
            refused(TonicTransport::builder("https://h:1").client_identity(PEM_BLOCK, "no key"));
        assert!(
            e.to_string()
                .starts_with("the client key for h:1 cannot be read: no PEM private key"),
            "{e}"
        );
    }

    #[cfg(feature = "tls")]
    #[test]
    fn only_a_certificate_without_its_version_is_version_1() {
        // SEQUENCE { SEQUENCE { INTEGER 1 } }: a serial first.
        assert!(x509_version_1(&[0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x01]));
        // SEQUENCE { SEQUENCE { [0] { INTEGER 2 } } }: version 3.
        assert!(!x509_version_1(&[
            0x30, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x02, 0x01, 0x02
        ]));
        // Long-form lengths.
        assert!(x509_version_1(&[
            0x30, 0x81, 0x07, 0x30, 0x82, 0x00, 0x03, 0x02, 0x01, 0x01
        ]));
        for broken in [
            &[][..],
            &[0x30],
            &[0x30, 0x05, 0x30],
            &[0x30, 0x80, 0x30, 0x03, 0x02, 0x01, 0x01],
            &[0x30, 0x85, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0x04, 0x05, 0x30, 0x03, 0x02, 0x01, 0x01],
        ] {
            assert!(!x509_version_1(broken), "{broken:?}");
        }
    }

    /// A PEM certificate block whose three bytes are no certificate.
    #[cfg(feature = "tls")]
    const PEM_BLOCK: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
}
