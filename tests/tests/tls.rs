//! TLS and mTLS to backends: the links service served over TLS, and over
//! mTLS requiring a client certificate, by tonic with certificates made at
//! test time; tool calls through `TonicTransport::builder`, and the errors
//! of a CA that did not sign the server's certificate and of client
//! certificates the server refuses, by tonic (rustls) and by a Python
//! grpcio server (gRPC C-core), which refuses without saying why.

use std::time::{Duration, Instant};

use proto_ai_tools::executor::ProtoExecutor;
use proto_ai_tools::transport::{TonicTransport, TonicTransportBuilder, TransportError};
use proto_ai_tools_tests::support::{error_text, ok_json};
use proto_ai_tools_tests::tls::{Ca, GrpcioMtls, serve_tls};
use proto_ai_tools_tests::{LINKS_POOL, LinksBackend, Received, RunningServer, tools};

/// Well under the builder's default of 10 s: a refusal is quick, not a
/// timeout.
const QUICK: Duration = Duration::from_secs(5);

/// A tool call that creates a link (aliased `link-1`) and one that passes
/// the alias back, which reaches the server as the link's UUID.
async fn aliases_round_trip(server: &RunningServer, transport: TonicTransport) {
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x.y"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-1");
    let out = ok_json(
        &exec
            .execute("links_update", r#"{"link_id":"link-1","name":"Promo"}"#)
            .await,
    );
    assert_eq!(out["link"]["name"], "Promo");
    let id = server.backend.links()[0].id.clone();
    assert!(
        matches!(&server.backend.received()[1], Received::UpdateLink(r) if r.link_id == id),
        "{:?}",
        server.backend.received()
    );
}

/// A fresh CA, and the links service over TLS with a certificate it
/// signed; over mTLS, requiring a client certificate it signed, with `mtls`.
async fn tls_server(mtls: bool) -> (Ca, RunningServer) {
    let ca = Ca::new("test ca");
    let client_ca = mtls.then_some(ca.pem.as_str());
    let server = serve_tls(LinksBackend::default(), &ca.server(), client_ca, None)
        .await
        .expect("a TLS server");
    (ca, server)
}

/// A lazy transport from `builder` fails its first call quickly with
/// `text`, as `UNAVAILABLE`, and nothing reaches the service.
async fn first_call_says(builder: TonicTransportBuilder, text: &str, server: &RunningServer) {
    let transport = builder.connect_lazy().expect("builds");
    // The transport says why, for the logs; the model is told only that
    // the service could not be reached, without its address.
    let method = LINKS_POOL
        .get_service_by_name("links.v1.LinksService")
        .and_then(|s| s.methods().find(|m| m.name() == "ListLinks"))
        .expect("ListLinks");
    let request = proto_ai_tools::prost_reflect::DynamicMessage::new(method.input());
    let status = proto_ai_tools::Transport::unary(
        &transport,
        &method,
        request,
        &proto_ai_tools::CallOptions::new(),
    )
    .await
    .expect_err("refused");
    assert_eq!(status.origin, proto_ai_tools::transport::Origin::Unreached);
    assert_eq!(status.message, text);
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    let started = Instant::now();
    let said = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(started.elapsed() < QUICK, "took {:?}", started.elapsed());
    assert!(
        said.contains("could not reach its service") && said.contains("nothing was sent"),
        "{said}"
    );
    assert!(!said.contains(&server.addr.to_string()), "{said}");
    assert!(server.backend.received().is_empty());
}

/// `connect`'s error, within [`QUICK`].
async fn connect_error(builder: TonicTransportBuilder) -> TransportError {
    let started = Instant::now();
    let result = builder.connect().await;
    assert!(started.elapsed() < QUICK, "took {:?}", started.elapsed());
    match result {
        Ok(_) => panic!("connected"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn tool_calls_go_over_tls_to_a_server_a_private_ca_signed() {
    let (ca, server) = tls_server(false).await;
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let transport = TonicTransport::builder(server.url())
        .ca_certificate(ca.pem.clone())
        .connect()
        .await
        .expect("connects over TLS");
    aliases_round_trip(&server, transport).await;
    // Lazily too: the first call connects.
    let lazy = TonicTransport::builder(server.url())
        .ca_certificate(ca.pem.clone())
        .connect_lazy()
        .expect("builds");
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, lazy);
    ok_json(&exec.execute("links_list", "{}").await);
    server.shutdown().await;
}

#[tokio::test]
async fn tool_calls_go_over_mtls_with_a_client_certificate() {
    let (ca, server) = tls_server(true).await;
    let client = ca.client("gateway");
    let transport = TonicTransport::builder(server.url())
        .ca_certificate(ca.pem.clone())
        .client_identity(client.cert, client.key)
        .connect()
        .await
        .expect("connects over mTLS");
    aliases_round_trip(&server, transport).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_wrong_ca_is_a_quick_error_naming_the_host() {
    let (_, server) = tls_server(false).await;
    let host = server.addr.to_string();
    let other = Ca::new("another ca");
    let builder = TonicTransport::builder(server.url()).ca_certificate(other.pem.clone());
    let e = connect_error(builder.clone()).await;
    assert!(
        matches!(&e, TransportError::UntrustedServer { host: h, .. } if *h == host),
        "{e:?}"
    );
    let text = e.to_string();
    assert_eq!(
        text,
        format!(
            "TLS handshake with {host} failed: the server's certificate is not trusted for \
             {host}: it is not signed by a trusted CA (give the CA that signed it)"
        )
    );
    // A lazy transport says the same at its first call.
    first_call_says(builder, &text, &server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn without_a_ca_the_system_roots_decide() {
    let (_, server) = tls_server(false).await;
    let host = server.addr.to_string();
    let e = connect_error(TonicTransport::builder(server.url())).await;
    // The test CA is in no system store; a machine with no store at all is
    // told so.
    match &e {
        TransportError::UntrustedServer { host: h, .. } => assert_eq!(*h, host),
        TransportError::Tls { host: h, reason } => {
            assert_eq!(*h, host);
            assert!(reason.contains("native certs"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_certificate_the_server_does_not_trust_is_refused_clearly() {
    let (ca, server) = tls_server(true).await;
    let host = server.addr.to_string();
    let stranger = Ca::new("another ca").client("gateway");
    let builder = TonicTransport::builder(server.url())
        .ca_certificate(ca.pem.clone())
        .client_identity(stranger.cert, stranger.key);
    let e = connect_error(builder.clone()).await;
    assert!(
        matches!(&e, TransportError::ClientCertificateRefused { host: h, .. } if *h == host),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "TLS handshake with {host} failed: the server did not accept the client certificate"
        )),
        "{text}"
    );
    first_call_says(builder, &text, &server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn no_client_certificate_for_an_mtls_server_is_refused_clearly() {
    let (ca, server) = tls_server(true).await;
    let host = server.addr.to_string();
    let builder = TonicTransport::builder(server.url()).ca_certificate(ca.pem.clone());
    let e = connect_error(builder.clone()).await;
    assert_eq!(
        e.to_string(),
        format!(
            "TLS handshake with {host} failed: the server requires a client certificate (give one)"
        )
    );
    first_call_says(builder, &e.to_string(), &server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn plain_http_to_a_tls_server_and_nothing_listening_are_errors_naming_the_host() {
    let (ca, server) = tls_server(false).await;
    let addr = server.addr;
    server.shutdown().await;
    let e =
        connect_error(TonicTransport::builder(format!("https://{addr}")).ca_certificate(ca.pem))
            .await;
    assert_eq!(
        e.to_string(),
        format!("cannot connect to {addr}: connection refused")
    );
}

/// The message of a lazy transport's first call, which fails without
/// reaching the server.
async fn first_call_message(builder: TonicTransportBuilder) -> String {
    let transport = builder.connect_lazy().expect("builds");
    let method = LINKS_POOL
        .get_service_by_name("links.v1.LinksService")
        .and_then(|s| s.methods().find(|m| m.name() == "ListLinks"))
        .expect("ListLinks");
    let request = proto_ai_tools::prost_reflect::DynamicMessage::new(method.input());
    let status = proto_ai_tools::Transport::unary(
        &transport,
        &method,
        request,
        &proto_ai_tools::CallOptions::new(),
    )
    .await
    .expect_err("refused");
    assert_eq!(status.origin, proto_ai_tools::transport::Origin::Unreached);
    status.message
}

/// A gRPC C-core server (Python grpcio) that requires a client
/// certificate ends the connection without a TLS alert when it gets none,
/// or one from a CA it does not trust: each is said with its likely cause,
/// not as a TLS close_notify missing. One from its CA is taken.
#[tokio::test]
async fn a_grpcio_server_requiring_a_client_certificate_says_the_likely_cause() {
    let Some(server) = GrpcioMtls::start() else {
        return;
    };
    let host = &server.host;
    let builder = || TonicTransport::builder(&server.url).ca_certificate(server.ca.pem.clone());
    let client = server.ca.client("gateway");
    builder()
        .client_identity(client.cert, client.key)
        .connect()
        .await
        .expect("connects over mTLS");

    let e = connect_error(builder()).await;
    assert!(
        matches!(&e, TransportError::ClientCertificateRefused { host: h, .. } if h == host),
        "{e:?}"
    );
    let none = format!(
        "TLS handshake with {host} failed: the server closed the connection during the \
         handshake; it may require a client certificate (give one)"
    );
    assert_eq!(e.to_string(), none);
    assert_eq!(first_call_message(builder()).await, none);

    let stranger = Ca::new("another ca").client("gateway");
    let stranger = builder().client_identity(stranger.cert, stranger.key);
    let e = connect_error(stranger.clone()).await;
    let untrusted = format!(
        "TLS handshake with {host} failed: the server closed the connection during the \
         handshake; it may not trust the client certificate's issuer (give a client \
         certificate signed by a CA the server trusts)"
    );
    assert_eq!(e.to_string(), untrusted);
    assert_eq!(first_call_message(stranger).await, untrusted);
}

/// An X.509 version 1 client certificate (what `openssl x509 -req` makes
/// without extensions), which rustls does not accept, is said to be one,
/// not blamed on the key, when the transport is built.
#[tokio::test]
async fn a_version_1_client_certificate_is_said_to_be_one() {
    let v1 = GrpcioMtls::version_1_client();
    let ca = Ca::new("test ca");
    let e = match TonicTransport::builder("https://localhost:1")
        .ca_certificate(ca.pem)
        .client_identity(v1.cert, v1.key)
        .connect_lazy()
    {
        Ok(_) => panic!("built"),
        Err(e) => e,
    };
    assert!(
        matches!(
            &e,
            TransportError::UnusableCertificate {
                what: "client certificate",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the client certificate for localhost:1 cannot be used: it is an X.509 version 1 \
         certificate, which rustls does not accept; make a version 3 certificate (e.g. \
         `openssl x509 -req … -extfile FILE`, FILE with an extension such as \
         `extendedKeyUsage = clientAuth`)"
    );
    // A version 3 certificate with a key that is not its own: the key's fault.
    let client = Ca::new("test ca").client("gateway");
    let other = Ca::new("test ca").client("gateway");
    let e = match TonicTransport::builder("https://localhost:1")
        .client_identity(client.cert, other.key)
        .connect_lazy()
    {
        Ok(_) => panic!("built"),
        Err(e) => e,
    };
    assert!(
        e.to_string()
            .starts_with("the client key for localhost:1 cannot be read"),
        "{e}"
    );
}
