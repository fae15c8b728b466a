//! What OAuth rules out is refused at start, and an issuer that cannot be
//! reached fails start in time, naming it.

use super::*;

/// An address nothing listens on.
async fn closed_port() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    listener.local_addr().expect("addr")
}

/// What OAuth rules out is refused at start, before the authorization
/// server is asked (it is unreachable here, which would be another
/// error): forwarding the caller's `authorization` header
/// (`TokenPassthrough`, saying the token must not reach the backend), a
/// claim header that is also forwarded or is no metadata key
/// (`ServeError::OAuth`), and OAuth over stdio (`OAuthOverStdio`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_refuses_to_start_with_token_passthrough_a_forgeable_claim_or_over_stdio() {
    let issuer = format!("http://{}", closed_port().await);

    let (error, _) = start_refused(
        &issuer,
        |oauth| oauth,
        |server| {
            server
                .forward_headers(["Authorization", "x-tenant"])
                .expect("forwardable headers")
        },
    )
    .await;
    assert!(matches!(error, ServeError::TokenPassthrough), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("`authorization`")
            && message.contains("must never reach the backend")
            && message.contains("no token passthrough"),
        "the error says why: {message}"
    );

    let (error, _) = start_refused(
        &issuer,
        |oauth| oauth,
        |server| {
            server
                .forward_headers(["x-user-email"])
                .expect("a forwardable header")
        },
    )
    .await;
    match &error {
        ServeError::OAuth(why) => assert!(
            why.contains("`x-user-email` is both a claim header and a forwarded header"),
            "{error}"
        ),
        other => panic!("a claim header also forwarded: {other:?}"),
    }

    let (error, _) = start_refused(
        &issuer,
        |oauth| oauth.claim_header("groups", "grpc-groups"),
        |server| server,
    )
    .await;
    match &error {
        ServeError::OAuth(why) => assert!(
            why.contains("a claim cannot be sent as the metadata `grpc-groups`"),
            "{error}"
        ),
        other => panic!("a claim header that is no metadata key: {other:?}"),
    }

    let resource = "http://127.0.0.1:1/mcp";
    let server = gateway_server(
        SocketAddr::from(([127, 0, 0, 1], 9)),
        oauth_config(resource, &issuer),
    );
    let (_client, server_end) = tokio::io::duplex(1024);
    let (read, write) = tokio::io::split(server_end);
    let error = tokio::time::timeout(
        PATIENCE,
        server.serve_io(read, write, std::future::pending()),
    )
    .await
    .expect("serve_io answers in time")
    .expect_err("OAuth over stdio does not start");
    assert!(matches!(error, ServeError::OAuthOverStdio), "{error:?}");
    assert!(error.to_string().contains("stdio"), "{error}");
}

/// An issuer that cannot be reached fails start with `ServeError::OAuth`
/// naming its URL, in time: at once when nothing listens, within
/// `AUTHORIZATION_SERVER_TIMEOUT` when it accepts connections and never
/// answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_that_cannot_be_reached_fails_start_naming_it_in_time() {
    let refusing = format!("http://{}", closed_port().await);
    let (error, took) = start_refused(&refusing, |oauth| oauth, |server| server).await;
    match &error {
        ServeError::OAuth(why) => assert!(
            why.contains(&format!("`{refusing}`")) && why.contains("could not be reached"),
            "{error}"
        ),
        other => panic!("an issuer nothing listens at: {other:?}"),
    }
    assert!(
        took < AUTHORIZATION_SERVER_TIMEOUT,
        "a refused connection fails start at once, not after {took:?}"
    );

    // Accepts connections, reads nothing, answers nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_issuer = format!("http://{}", silent.local_addr().expect("addr"));
    let holding = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let (error, took) = start_refused(&silent_issuer, |oauth| oauth, |server| server).await;
    holding.abort();
    match &error {
        ServeError::OAuth(why) => assert!(
            why.contains(&format!("`{silent_issuer}`"))
                && why.contains(&format!(
                    "did not answer within {} s",
                    AUTHORIZATION_SERVER_TIMEOUT.as_secs()
                )),
            "{error}"
        ),
        other => panic!("an issuer that never answers: {other:?}"),
    }
    assert!(
        took >= AUTHORIZATION_SERVER_TIMEOUT
            && took < AUTHORIZATION_SERVER_TIMEOUT + Duration::from_secs(2),
        "an issuer that never answers fails start after one timeout ({AUTHORIZATION_SERVER_TIMEOUT:?}), not {took:?}"
    );
}
