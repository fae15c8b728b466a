//! TLS to the `--grpc` server: the files that give it (`--ca-cert`,
//! `--client-cert`, `--client-key`), the transport built with them, and a
//! transport's error said in the words of these flags.

use std::path::{Path, PathBuf};

use proto_ai_tools::transport::{TonicTransport, TonicTransportBuilder, TransportError};

use crate::failure::Failure;

/// `--ca-cert`, `--client-cert` and `--client-key`: TLS to the `--grpc`
/// server.
#[derive(clap::Args, Default, Debug, PartialEq)]
#[command(next_help_heading = "TLS to the server (--grpc https://)")]
pub(crate) struct TlsFiles {
    /// Trust this CA (PEM) for the https:// server's certificate, instead of
    /// the system's roots
    #[arg(long, value_name = "FILE")]
    pub(crate) ca_cert: Option<PathBuf>,
    /// With --client-key: present this certificate (PEM) to the https://
    /// server (mTLS)
    #[arg(long, value_name = "FILE")]
    pub(crate) client_cert: Option<PathBuf>,
    /// The private key (PEM) of --client-cert
    #[arg(long, value_name = "FILE")]
    pub(crate) client_key: Option<PathBuf>,
}

impl TlsFiles {
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// A usage error for files given without their pair, or without an
    /// `https://` server.
    pub(crate) fn check(&self, grpc: Option<&str>) -> Result<(), Failure> {
        if self.client_cert.is_some() != self.client_key.is_some() {
            return Err(Failure::Usage(
                "`--client-cert FILE` and `--client-key FILE` go together: give both".into(),
            ));
        }
        match grpc {
            _ if self.is_empty() => Ok(()),
            None => Err(Failure::Usage(
                "`--ca-cert`, `--client-cert` and `--client-key` are for the server of `--grpc URL`: give it"
                    .into(),
            )),
            Some(url) if !url.starts_with("https://") => Err(Failure::Usage(format!(
                "`--ca-cert`, `--client-cert` and `--client-key` are for TLS: use an https:// URL, not `--grpc {url}`"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// A transport builder for `url`, the files read.
    pub(crate) fn builder(&self, url: &str) -> Result<TonicTransportBuilder, Failure> {
        let read = |what: &str, path: &Path| {
            std::fs::read(path)
                .map_err(|e| Failure::Run(format!("the {what} {}: {e}", path.display())))
        };
        let mut builder = TonicTransport::builder(url);
        if let Some(path) = &self.ca_cert {
            builder = builder.ca_certificate(read("CA certificate", path)?);
        }
        if let (Some(cert), Some(key)) = (&self.client_cert, &self.client_key) {
            builder = builder
                .client_identity(read("client certificate", cert)?, read("client key", key)?);
        }
        Ok(builder)
    }
}

/// A transport error: of the URL, a usage error; else a failure, a server
/// that wants a client certificate told which flags give one.
pub(crate) fn transport_failure(e: TransportError) -> Failure {
    match e {
        TransportError::InvalidUrl { .. } | TransportError::TlsNeedsHttps { .. } => {
            Failure::Usage(format!("`--grpc`: {e}"))
        }
        TransportError::ClientCertificateRefused { .. } => {
            let text = e.to_string();
            Failure::Run(match text.strip_suffix("(give one)") {
                Some(said) => format!("{said}(give one with --client-cert and --client-key)"),
                None => text,
            })
        }
        _ => Failure::Run(e.to_string()),
    }
}
