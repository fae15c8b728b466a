//! Opaque tokens checked by introspection (RFC 7662) at the test
//! authorization server, as the gateway's own client.

use super::*;

/// The gateway configured to introspect tokens at the test
/// authorization server, as its client with `secret`.
fn introspecting(secret: &'static str) -> impl FnOnce(OAuth, &str) -> OAuth {
    move |oauth, issuer| {
        oauth.introspection(format!("{issuer}/introspect"), INTROSPECTION_CLIENT, secret)
    }
}

/// Opaque tokens on a gateway with the issuer's keys and an
/// introspection endpoint: an active one for this audience is checked
/// there, with the gateway's client credentials, and its call reaches
/// the backend with the claim headers (a JWT is still checked against
/// the keys, not introspected). Once revoked it is 401
/// `invalid_token`, as are opaque tokens for another audience or none,
/// expired, not yet valid, of another issuer, or never issued; one
/// without the required scope is 403. None of those reaches the backend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected_and_refused_once_inactive_or_for_another_audience() {
    let Some(mut setup) =
        setup_with("introspection", &[], introspecting(INTROSPECTION_SECRET)).await
    else {
        return;
    };
    let metadata_url = setup.gateway.metadata_url();
    let opaque = [("token_format", "opaque")];
    let token = setup
        .token_for(
            "carol",
            ALL_SCOPES,
            &[opaque[0], ("claims", r#"{"email":"carol@example.com"}"#)],
        )
        .await;
    assert!(
        jsonwebtoken_like(&token).is_none(),
        "an opaque token, not a JWT: {token}"
    );
    let session = setup.gateway.session(&token).await;
    setup
        .call_reaching_backend(
            (&token, &session),
            1,
            ("carol", Some("carol@example.com")),
            "an active opaque token",
        )
        .await;
    let introspected = setup.authorization.introspections();
    assert!(
        !introspected.is_empty()
            && introspected
                .iter()
                .all(|i| i["client"] == INTROSPECTION_CLIENT
                    && i["authenticated"] == true
                    && i["active"] == true),
        "each request was introspected by the gateway's client, authenticated: {introspected:?}"
    );

    // A JWT of the same issuer is checked against its keys.
    let jwt = setup.token_for("carol", ALL_SCOPES, &[]).await;
    let called = setup
        .gateway
        .post(Some(&jwt), Some(&session), &list_links())
        .await;
    assert_called(&called, "a JWT on a gateway with keys and introspection");
    assert_eq!(
        setup.authorization.introspections().len(),
        introspected.len(),
        "a JWT is checked against the keys, not introspected"
    );
    assert_eq!(setup.backend.calls_when(2).await.len(), 2);

    setup.authorization.revoke(&token).await;
    let other_resource = format!("http://{}/other", setup.gateway.addr);
    let cases: Vec<(&str, String)> = vec![
        ("revoked", token.clone()),
        (
            "for another audience",
            setup
                .authorization
                .token(&[
                    ("sub", "carol"),
                    ("scope", ALL_SCOPES),
                    ("resource", &other_resource),
                    opaque[0],
                ])
                .await,
        ),
        (
            "for no audience",
            setup
                .authorization
                .token(&[("sub", "carol"), ("scope", ALL_SCOPES), opaque[0]])
                .await,
        ),
        (
            "expired ten minutes ago",
            setup
                .token_for("carol", ALL_SCOPES, &[opaque[0], ("expires_in", "-600")])
                .await,
        ),
        (
            "valid only ten minutes from now",
            setup
                .token_for("carol", ALL_SCOPES, &[opaque[0], ("not_before_in", "600")])
                .await,
        ),
        (
            "of another issuer",
            setup
                .token_for(
                    "carol",
                    ALL_SCOPES,
                    &[opaque[0], ("claims", r#"{"iss":"http://127.0.0.1:9/"}"#)],
                )
                .await,
        ),
        (
            "never issued",
            "opaque-token-the-issuer-never-issued".to_owned(),
        ),
    ];
    for (case, refused) in &cases {
        let response = setup
            .gateway
            .post(Some(refused), Some(&session), &list_links())
            .await;
        assert_unauthorized(&response, &metadata_url, true, case);
        let response = setup.gateway.post(Some(refused), None, INITIALIZE).await;
        assert_unauthorized(
            &response,
            &metadata_url,
            true,
            &format!("initialize, {case}"),
        );
    }
    let unscoped = setup
        .token_for("carol", &format!("{READ_SCOPE} {WRITE_SCOPE}"), &opaque)
        .await;
    let response = setup
        .gateway
        .post(Some(&unscoped), Some(&session), &list_links())
        .await;
    assert_eq!(
        response.status, 403,
        "an opaque token without {REQUIRED_SCOPE}: {response:?}"
    );
    assert!(
        response
            .header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"insufficient_scope\"")
                && c.contains(&format!("scope=\"{ALL_SCOPES}\""))),
        "{response:?}"
    );
    let after = setup.authorization.introspections();
    assert!(
        after.len() > introspected.len() + cases.len()
            && after.iter().all(|i| i["authenticated"] == true),
        "the refused opaque tokens were introspected, authenticated: {after:?}"
    );
    let calls = setup.backend.calls();
    assert_eq!(
        calls.len(),
        2,
        "no refused token reached the backend: {calls:?}"
    );

    let Setup { gateway, .. } = setup;
    gateway.stop().await;
}

/// The header of `token` if it reads as a JWT's (three segments, a JSON
/// header).
fn jsonwebtoken_like(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let header = parts.next()?;
    (parts.count() == 2)
        .then(|| base64url_decode(header))
        .flatten()
        .and_then(|h| serde_json::from_slice(&h).ok())
}

/// A gateway whose introspection secret is wrong cannot check an
/// opaque token: the authorization server refuses its client (401
/// `invalid_client`), and the gateway answers 503 with `Retry-After`,
/// no `WWW-Authenticate` (the token is not known to be bad), and sends
/// nothing. A JWT, checked against the keys, still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_introspection_secret_answers_503_with_retry_after_and_sends_nothing() {
    let Some(mut setup) = setup_with(
        "introspection-secret",
        &[],
        introspecting("not-the-introspection-secret"),
    )
    .await
    else {
        return;
    };
    let jwt = setup.token_for("carol", ALL_SCOPES, &[]).await;
    let session = setup.gateway.session(&jwt).await;
    let opaque = setup
        .token_for("carol", ALL_SCOPES, &[("token_format", "opaque")])
        .await;
    for (what, response) in [
        (
            "a call",
            setup
                .gateway
                .post(Some(&opaque), Some(&session), &list_links())
                .await,
        ),
        (
            "initialize",
            setup.gateway.post(Some(&opaque), None, INITIALIZE).await,
        ),
    ] {
        assert_eq!(response.status, 503, "{what}: {response:?}");
        assert!(
            response
                .header("retry-after")
                .is_some_and(|s| s.parse::<u64>().is_ok_and(|s| s > 0)),
            "{what}: a 503 says when to retry: {response:?}"
        );
        assert_eq!(
            response.header("www-authenticate"),
            None,
            "{what}: the token is not known to be invalid: {response:?}"
        );
        let body: Value = serde_json::from_str(&response.body)
            .unwrap_or_else(|e| panic!("{what}: JSON: {e}: {response:?}"));
        let description = body["error_description"].as_str().unwrap_or_default();
        assert!(
            body["error"] == "temporarily_unavailable"
                && description.contains("could not be checked")
                // The authorization server's own answer and address
                // are not for an unauthenticated caller.
                && !description.contains("401")
                && !description.contains("127.0.0.1"),
            "{what}: {body}"
        );
    }
    let introspected = setup.authorization.introspections();
    assert!(
        introspected.len() == 2
            && introspected
                .iter()
                .all(|i| i["client"] == INTROSPECTION_CLIENT && i["authenticated"] == false),
        "the gateway asked, and its credentials were refused: {introspected:?}"
    );
    setup.assert_nothing_sent("an opaque token the gateway could not check");

    setup
        .call_reaching_backend(
            (&jwt, &session),
            1,
            ("carol", None),
            "a JWT, checked against the keys",
        )
        .await;

    let Setup { gateway, .. } = setup;
    gateway.stop().await;
}

/// An issuer whose metadata names no `jwks_uri`: a gateway with
/// introspection checks every token there, JWTs included (a JWT the
/// issuer never issued is 401); one without introspection does not
/// start, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_whose_issuer_publishes_no_keys_introspects_every_token() {
    let Some(mut setup) = setup_with(
        "introspection-only",
        &["--no-jwks-uri"],
        introspecting(INTROSPECTION_SECRET),
    )
    .await
    else {
        return;
    };
    let metadata_url = setup.gateway.metadata_url();
    let jwt = setup
        .token_for(
            "dave",
            ALL_SCOPES,
            &[("claims", r#"{"email":"dave@example.com"}"#)],
        )
        .await;
    assert!(jsonwebtoken_like(&jwt).is_some(), "a JWT: {jwt}");
    let session = setup.gateway.session(&jwt).await;
    let called = setup
        .gateway
        .post(Some(&jwt), Some(&session), &list_links())
        .await;
    assert_called(&called, "a JWT, introspected");
    let introspected = setup.authorization.introspections();
    assert!(
        introspected.len() >= 3 && introspected.iter().all(|i| i["active"] == true),
        "each request of the JWT was introspected: {introspected:?}"
    );

    let response = setup
        .gateway
        .post(Some(&tampered(&jwt)), Some(&session), &list_links())
        .await;
    assert_unauthorized(
        &response,
        &metadata_url,
        true,
        "a JWT the issuer never issued",
    );

    let opaque = setup
        .token_for("dave", ALL_SCOPES, &[("token_format", "opaque")])
        .await;
    let called = setup
        .gateway
        .post(Some(&opaque), Some(&session), &list_links())
        .await;
    assert_called(&called, "an opaque token");
    let calls = setup.backend.calls_when(2).await;
    assert_eq!(calls.len(), 2, "exactly the two accepted calls: {calls:?}");
    assert_backend_saw(&calls[0], "dave", Some("dave@example.com"), &jwt);
    assert_backend_saw(&calls[1], "dave", None, &opaque);

    let issuer = setup.authorization.issuer.clone();
    let (error, _) = start_refused(&issuer, |oauth| oauth, |server| server).await;
    match &error {
        ServeError::OAuth(why) => {
            assert!(why.contains("jwks_uri") && why.contains(&issuer), "{error}")
        }
        other => panic!("a gateway without keys or introspection: {other:?}"),
    }

    let Setup { gateway, .. } = setup;
    gateway.stop().await;
}
