//! The HTTP edge as an OAuth 2.1 resource server (feature `oauth`), the way
//! the MCP authorization spec asks: every request to the MCP endpoint carries
//! a bearer token issued **for this server** by a trusted authorization
//! server, and the token is never passed on.
//!
//! - [`OAuth`], the configuration: this server's resource URI (the audience
//!   its tokens must name, RFC 8707), the issuer, where its keys are, the
//!   scopes every request needs, the scopes that open read-only and other
//!   tools, and the validated claims sent on to the backend as gRPC
//!   metadata.
//! - [`Verifier`], what serves it: the protected resource metadata (RFC 9728)
//!   at `/.well-known/oauth-protected-resource` (and under the endpoint's
//!   path), and [`authenticate`], an axum middleware in front of everything
//!   else of the endpoint that answers `401` with
//!   `WWW-Authenticate: Bearer resource_metadata="…"` when the token is
//!   missing or does not validate, and `403` with
//!   `error="insufficient_scope"` when it lacks a required scope.
//! - A JWT is checked against the issuer's JSON Web Key Set: the signature
//!   (asymmetric algorithms only), `iss`, `aud`, `exp` and `nbf` (with a
//!   small leeway). The key set is fetched at start and again when a token
//!   names a key it does not hold (a rotation), at most once per
//!   [`JWKS_REFRESH_INTERVAL`]. An opaque token is checked by token
//!   introspection (RFC 7662) when an introspection endpoint is configured.
//!
//! - Every URL of the authorization server is `https` (plain `http` on
//!   loopback only). A session belongs to the caller whose `initialize`
//!   started it ([`Authenticator`] holds requests to that), and one caller
//!   holds at most [`OAuth::max_sessions_per_caller`] of them.
//!
//! JOSE is `jsonwebtoken`'s; the HTTP client is hyper's, with rustls.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::edge::SESSION_HEADER;

/// How long a fetch from the authorization server (discovery, keys,
/// introspection) may take.
pub const AUTHORIZATION_SERVER_TIMEOUT: Duration = Duration::from_secs(5);

/// The least time between two fetches of the key set: a flood of tokens
/// naming unknown keys fetches it at most this often.
pub const JWKS_REFRESH_INTERVAL: Duration = Duration::from_secs(10);

/// The most keys kept from one key set.
pub const MAX_JWKS_KEYS: usize = 64;

/// The most introspection requests in flight at once: past it a request
/// with an opaque token is answered `503` at once, so that a flood of
/// made-up tokens cannot turn this server into a flood at the
/// authorization server's door.
pub const MAX_INTROSPECTIONS_IN_FLIGHT: usize = 64;

/// The largest document read from the authorization server.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The largest bearer token read from a request.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The default bound on the MCP sessions one caller (issuer and subject)
/// holds at once ([`OAuth::max_sessions_per_caller`]).
pub const DEFAULT_MAX_SESSIONS_PER_CALLER: usize = 16;

/// The default leeway on `exp` and `nbf`, for clocks that drift apart.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// An MCP server over HTTP as an OAuth 2.1 resource server: who may call it,
/// and what of a caller's token its backend sees (see
/// [`McpServer::with_oauth`](super::McpServer::with_oauth)).
///
/// # Examples
///
/// ```
/// let oauth = proto_ai_tools_mcp::OAuth::new("https://tools.example.com/mcp", "https://auth.example.com")
///     .required_scope("mcp:use")
///     .tool_scopes("tools:read", "tools:write")
///     .claim_header("sub", "x-user-id");
/// assert_eq!(oauth.resource(), "https://tools.example.com/mcp");
/// ```
#[derive(Debug, Clone)]
pub struct OAuth {
    resource: String,
    issuer: String,
    jwks_uri: Option<String>,
    introspection: Option<Introspection>,
    required_scopes: Vec<String>,
    tool_scopes: Option<ToolScopes>,
    claim_headers: Vec<(String, String)>,
    leeway: Duration,
    max_sessions_per_caller: usize,
}

/// The introspection endpoint and this server's credentials there.
#[derive(Clone)]
struct Introspection {
    endpoint: String,
    client_id: String,
    client_secret: String,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The scopes that open tools: read-only ones (by their hint) and the rest.
#[derive(Debug, Clone)]
pub(super) struct ToolScopes {
    pub(super) read: String,
    pub(super) write: String,
}

impl OAuth {
    /// Tokens for `resource`, this server's MCP endpoint as clients reach it
    /// (`https://tools.example.com/mcp`): the audience (`aud`) every token
    /// must name. `issuer` is the authorization server that issues them
    /// (`iss`); its keys are found from its metadata
    /// (`/.well-known/oauth-authorization-server`, else
    /// `/.well-known/openid-configuration`) unless [`jwks_uri`](Self::jwks_uri) says.
    ///
    /// # Examples
    ///
    /// See [`OAuth`].
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            issuer: issuer.into(),
            jwks_uri: None,
            introspection: None,
            required_scopes: Vec::new(),
            tool_scopes: None,
            claim_headers: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            max_sessions_per_caller: DEFAULT_MAX_SESSIONS_PER_CALLER,
        }
    }

    /// The resource URI tokens must name.
    ///
    /// # Examples
    ///
    /// See [`OAuth`].
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the issuer's JSON Web Key Set is, instead of its metadata's
    /// `jwks_uri`.
    ///
    /// # Examples
    ///
    /// ```
    /// let oauth = proto_ai_tools_mcp::OAuth::new("https://t.example/mcp", "https://auth.example")
    ///     .jwks_uri("https://auth.example/keys");
    /// # let _ = oauth;
    /// ```
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Checks tokens that are not JWTs (opaque tokens) at the authorization
    /// server's introspection endpoint (RFC 7662), authenticating as
    /// `client_id` with `client_secret` (HTTP Basic). A JWT is still
    /// checked against the keys.
    ///
    /// # Examples
    ///
    /// ```
    /// let secret = std::env::var("INTROSPECTION_SECRET").unwrap_or_default();
    /// let oauth = proto_ai_tools_mcp::OAuth::new("https://t.example/mcp", "https://auth.example")
    ///     .introspection("https://auth.example/introspect", "tools-gateway", secret);
    /// # let _ = oauth;
    /// ```
    pub fn introspection(
        mut self,
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some(Introspection {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        });
        self
    }

    /// A scope every request needs: a token without it is answered `403`
    /// with `error="insufficient_scope"`. Call again for more.
    ///
    /// # Examples
    ///
    /// See [`OAuth`].
    pub fn required_scope(mut self, scope: impl Into<String>) -> Self {
        self.required_scopes.push(scope.into());
        self
    }

    /// Tools by scope: a tool whose hints say it is read-only needs `read`,
    /// any other needs `write`. `tools/list` shows a caller only the tools
    /// its token opens; a call of another is refused, and nothing is sent.
    ///
    /// # Examples
    ///
    /// See [`OAuth`].
    pub fn tool_scopes(mut self, read: impl Into<String>, write: impl Into<String>) -> Self {
        self.tool_scopes = Some(ToolScopes {
            read: read.into(),
            write: write.into(),
        });
        self
    }

    /// Sends the token's validated claim `claim` (`sub`, `email`, …) to the
    /// backend as the gRPC metadata `header` of every call. A claim the
    /// token lacks is not sent; one whose value gRPC metadata cannot carry
    /// refuses the call.
    ///
    /// # Examples
    ///
    /// See [`OAuth`].
    pub fn claim_header(mut self, claim: impl Into<String>, header: impl Into<String>) -> Self {
        self.claim_headers.push((claim.into(), header.into()));
        self
    }

    /// The most MCP sessions one caller (the token's issuer and subject)
    /// holds at once: [`DEFAULT_MAX_SESSIONS_PER_CALLER`] unless set (at
    /// least one). Past it the caller's `initialize` is answered `429` with
    /// `Retry-After`, so that one user cannot take every session of the
    /// server's cap; ending a session (`DELETE`, or its idle expiry) frees
    /// its place.
    ///
    /// # Examples
    ///
    /// ```
    /// let oauth = proto_ai_tools_mcp::OAuth::new("https://t.example/mcp", "https://auth.example")
    ///     .max_sessions_per_caller(4);
    /// # let _ = oauth;
    /// ```
    pub fn max_sessions_per_caller(mut self, max: usize) -> Self {
        self.max_sessions_per_caller = max.max(1);
        self
    }

    /// The leeway on `exp` and `nbf`: [`DEFAULT_LEEWAY`] unless set.
    ///
    /// # Examples
    ///
    /// ```
    /// let oauth = proto_ai_tools_mcp::OAuth::new("https://t.example/mcp", "https://auth.example")
    ///     .leeway(std::time::Duration::from_secs(5));
    /// # let _ = oauth;
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The scopes that open tools, if set.
    pub(super) fn tool_scope_rule(&self) -> Option<&ToolScopes> {
        self.tool_scopes.as_ref()
    }

    /// The claims sent to the backend: `(claim, metadata key)`.
    pub(super) fn claim_headers(&self) -> &[(String, String)] {
        &self.claim_headers
    }

    /// Every metadata key a claim is sent under, for the server's checks at
    /// start.
    pub(super) fn claim_metadata_keys(&self) -> impl Iterator<Item = &str> {
        self.claim_headers.iter().map(|(_, header)| header.as_str())
    }

    /// Refuses a URL of the authorization server that is not `https`, but on
    /// loopback: tokens, keys and the introspection secret travel on it
    /// (the MCP authorization spec requires HTTPS for every such endpoint).
    fn check_https(what: &str, url: &str) -> Result<(), String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("the {what} `{url}` is not a URL: {e}"))?;
        let loopback = uri.host().is_some_and(|host| {
            host == "localhost"
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });
        match uri.scheme_str() {
            Some("https") => Ok(()),
            Some("http") if loopback => Ok(()),
            _ => Err(format!(
                "the {what} `{url}` must be an https:// URL (plain http is accepted on loopback only): tokens, keys and secrets travel on it"
            )),
        }
    }

    /// Every URL of the configuration held to [`check_https`](Self::check_https).
    fn check_urls(&self) -> Result<(), String> {
        Self::check_https("resource URI", &self.resource)?;
        Self::check_https("issuer", &self.issuer)?;
        if let Some(jwks) = &self.jwks_uri {
            Self::check_https("key set URL", jwks)?;
        }
        if let Some(introspection) = &self.introspection {
            Self::check_https("introspection endpoint", &introspection.endpoint)?;
        }
        for scope in self
            .required_scopes
            .iter()
            .chain(self.tool_scopes.iter().flat_map(|t| [&t.read, &t.write]))
        {
            // RFC 6749 section 3.3: a scope token is printable ASCII but
            // for the space, `"` and `\`.
            if scope.is_empty()
                || !scope
                    .bytes()
                    .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
            {
                return Err(format!(
                    "the scope `{scope}` is not a scope token (printable ASCII, no spaces, quotes or backslashes)"
                ));
            }
        }
        Ok(())
    }

    /// The path of the endpoint inside the resource URI (`/mcp`), and the
    /// URL of its protected resource metadata (RFC 9728 section 3.1: the
    /// well-known path, then the resource's own path).
    fn metadata_url(&self) -> Result<(String, String), String> {
        let uri: http::Uri = self
            .resource
            .parse()
            .map_err(|e| format!("the resource URI `{}` is not a URI: {e}", self.resource))?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(format!(
                "the resource URI `{}` must be absolute (`https://host/mcp`)",
                self.resource
            ));
        };
        if uri.query().is_some() || self.resource.contains('#') {
            return Err(format!(
                "the resource URI `{}` must have no query or fragment (RFC 8707)",
                self.resource
            ));
        }
        let path = uri.path().trim_end_matches('/');
        Ok((
            path.to_owned(),
            format!("{scheme}://{authority}{WELL_KNOWN}{path}"),
        ))
    }
}

/// Where protected resource metadata lives (RFC 9728).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Who a validated token speaks for.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Principal {
    /// `iss`.
    pub(super) issuer: String,
    /// `sub`, else the client id (a token a client got for itself).
    pub(super) subject: String,
    /// `client_id` or `azp`.
    pub(super) client_id: Option<String>,
    /// `scope` (space-separated) or `scp`.
    pub(super) scopes: Vec<String>,
    /// Every claim, for the claim headers.
    pub(super) claims: Map<String, Value>,
}

impl Principal {
    fn has(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Whether this caller may see and call a tool of these hints.
    pub(super) fn may_use(&self, scopes: Option<&ToolScopes>, read_only: bool) -> bool {
        match scopes {
            None => true,
            Some(scopes) if read_only => self.has(&scopes.read) || self.has(&scopes.write),
            Some(scopes) => self.has(&scopes.write),
        }
    }

    /// The scope a tool of these hints needs.
    pub(super) fn scope_for(scopes: &ToolScopes, read_only: bool) -> &str {
        if read_only {
            &scopes.read
        } else {
            &scopes.write
        }
    }

    /// The value of `claim` as metadata text: a string, or a number or
    /// boolean written out; `None` when the token lacks it; an error when
    /// it is something else.
    pub(super) fn claim_text(&self, claim: &str) -> Result<Option<String>, &'static str> {
        match self.claims.get(claim) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(Value::Array(_) | Value::Object(_)) => {
                Err("is a list or an object, which is not one metadata value")
            }
        }
    }
}

/// Why a request was not let through.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Rejection {
    /// No bearer token.
    Missing,
    /// A token that does not validate, and why (never the token).
    Invalid(String),
    /// A request whose `Authorization` header cannot be read as one bearer
    /// token (RFC 6750 `invalid_request`).
    Malformed(String),
    /// A valid token without some of these scopes (all that are needed).
    InsufficientScope(Vec<String>),
    /// The authorization server could not be asked.
    Unavailable(String),
}

/// An [`OAuth`] at work: its keys, its client, the answers it gives.
pub(super) struct Verifier {
    pub(super) config: OAuth,
    /// `/mcp`: the endpoint's path in the resource URI.
    resource_path: String,
    metadata_url: String,
    metadata: Value,
    /// The scopes every challenge names, the metadata's `scopes_supported`
    /// joined: those every request needs and those that open tools. A
    /// client asks for what the challenge names (MCP scope selection), and
    /// tool scopes are told apart only per call, as tool errors, where no
    /// client can step up: naming fewer would leave it unable to use a tool.
    challenge_scopes: String,
    client: HttpClient,
    /// Whether JWTs are checked against the issuer's keys (else every
    /// token is introspected).
    uses_keys: bool,
    /// Read by every token check without waiting on a fetch in progress.
    keys: std::sync::RwLock<KeySet>,
    /// Held while the key set is fetched again: one fetch at a time, and a
    /// token naming an unknown key waits for it rather than starting one.
    refreshing: tokio::sync::Mutex<()>,
    /// Slots for introspection requests ([`MAX_INTROSPECTIONS_IN_FLIGHT`]).
    introspections: tokio::sync::Semaphore,
}

#[derive(Default)]
struct KeySet {
    uri: Option<String>,
    by_id: HashMap<String, (DecodingKey, Option<Algorithm>)>,
    /// Keys without a `kid`, for tokens without one.
    unnamed: Vec<(DecodingKey, Option<Algorithm>)>,
    fetched: Option<Instant>,
}

type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

impl Verifier {
    /// Checks `config`, finds the issuer's keys and fetches them: a server
    /// that cannot check tokens does not start.
    pub(super) async fn start(config: OAuth) -> Result<Self, String> {
        config.check_urls()?;
        let (resource_path, metadata_url) = config.metadata_url()?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| format!("the system's TLS roots cannot be read: {e}"))?
            .https_or_http()
            .enable_http1()
            .build();
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(connector);
        let mut scopes: Vec<&str> = config.required_scopes.iter().map(String::as_str).collect();
        if let Some(tools) = &config.tool_scopes {
            scopes.extend([tools.read.as_str(), tools.write.as_str()]);
        }
        scopes.sort_unstable();
        scopes.dedup();
        let metadata = json!({
            "resource": config.resource,
            "authorization_servers": [config.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        });
        let challenge_scopes = scopes.join(" ");
        let mut verifier = Self {
            config,
            resource_path,
            metadata_url,
            metadata,
            challenge_scopes,
            client,
            uses_keys: false,
            keys: std::sync::RwLock::new(KeySet::default()),
            refreshing: tokio::sync::Mutex::new(()),
            introspections: tokio::sync::Semaphore::new(MAX_INTROSPECTIONS_IN_FLIGHT),
        };
        let jwks_uri = match &verifier.config.jwks_uri {
            Some(uri) => Some(uri.clone()),
            None => verifier.discover_jwks_uri().await?,
        };
        if let Some(uri) = &jwks_uri {
            OAuth::check_https("key set URL", uri)?;
        }
        match jwks_uri {
            Some(uri) => {
                verifier.uses_keys = true;
                verifier.write_keys().uri = Some(uri);
                verifier.refresh().await?;
            }
            None if verifier.config.introspection.is_none() => {
                return Err(format!(
                    "the authorization server `{}` names no `jwks_uri` in its metadata, and no introspection endpoint is set: tokens could not be checked",
                    verifier.config.issuer
                ));
            }
            None => {}
        }
        Ok(verifier)
    }

    /// The paths the protected resource metadata is served at: the
    /// endpoint's own (`/.well-known/oauth-protected-resource/mcp`, which
    /// clients ask first) and the bare one.
    pub(super) fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![format!("{WELL_KNOWN}{}", self.resource_path)];
        if !self.resource_path.is_empty() {
            paths.push(WELL_KNOWN.to_owned());
        }
        paths
    }

    /// The protected resource metadata document.
    pub(super) fn metadata_response(&self) -> Response {
        let mut response = json_response(StatusCode::OK, &self.metadata);
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=300"),
        );
        response
    }

    /// The `jwks_uri` of the issuer's metadata (RFC 8414, else OpenID
    /// Connect discovery). An issuer that does not answer the first is not
    /// asked the second: start fails within one
    /// [`AUTHORIZATION_SERVER_TIMEOUT`], not two.
    async fn discover_jwks_uri(&self) -> Result<Option<String>, String> {
        let issuer = self.config.issuer.trim_end_matches('/');
        // RFC 8414 puts the well-known segment between the host and the
        // issuer's path; OpenID Connect discovery appends it.
        let (origin, path) = match issuer.find("://").map(|at| at + 3) {
            Some(start) => match issuer[start..].find('/') {
                Some(slash) => issuer.split_at(start + slash),
                None => (issuer, ""),
            },
            None => (issuer, ""),
        };
        let mut candidates = vec![format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        )];
        candidates.push(format!("{issuer}/.well-known/openid-configuration"));
        if !path.is_empty() {
            candidates.push(format!("{issuer}/.well-known/oauth-authorization-server"));
        }
        let mut last = String::new();
        for url in candidates {
            match self.fetch_json(&url, None).await {
                Ok(document) => {
                    // Exactly the configured issuer: tokens carry it in
                    // `iss`, compared exactly, so a mismatch here would
                    // refuse every token later.
                    if document.get("issuer").and_then(Value::as_str) != Some(&self.config.issuer) {
                        return Err(format!(
                            "the metadata at `{url}` names the issuer {}, not `{}` (RFC 8414 requires them to match)",
                            document
                                .get("issuer")
                                .map_or("(none)".to_owned(), Value::to_string),
                            self.config.issuer
                        ));
                    }
                    return Ok(document
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .map(str::to_owned));
                }
                Err(e) if e.answered => last = e.message,
                Err(e) => {
                    last = e.message;
                    break;
                }
            }
        }
        Err(format!(
            "the authorization server `{}` could not be discovered: {last}",
            self.config.issuer
        ))
    }

    fn read_keys(&self) -> std::sync::RwLockReadGuard<'_, KeySet> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write_keys(&self) -> std::sync::RwLockWriteGuard<'_, KeySet> {
        self.keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Fetches the key set again, holding no lock the token checks read
    /// while the authorization server answers.
    async fn refresh(&self) -> Result<(), String> {
        let uri = {
            let mut keys = self.write_keys();
            keys.fetched = Some(Instant::now());
            keys.uri.clone()
        };
        let Some(uri) = uri else {
            return Ok(());
        };
        let document = self.fetch_json(&uri, None).await?;
        let set: JwkSet = serde_json::from_value(document)
            .map_err(|e| format!("the key set at `{uri}` is not a JWK set: {e}"))?;
        let mut by_id = HashMap::new();
        let mut unnamed = Vec::new();
        for jwk in set.keys.iter().take(MAX_JWKS_KEYS) {
            // A key this server cannot use (a symmetric one, an unknown
            // type) is passed over: only tokens that name it fail.
            let Some(key) = usable_key(jwk) else {
                continue;
            };
            match &jwk.common.key_id {
                Some(kid) => {
                    by_id.insert(kid.clone(), key);
                }
                None => unnamed.push(key),
            }
        }
        if by_id.is_empty() && unnamed.is_empty() {
            // Keep the keys held: a set with none usable is more likely a
            // bad answer than an issuer that signs with nothing.
            return Err(format!(
                "the key set at `{uri}` has no key this server can verify signatures with"
            ));
        }
        let mut keys = self.write_keys();
        keys.by_id = by_id;
        keys.unnamed = unnamed;
        Ok(())
    }

    /// Who `token` speaks for, if it validates; scopes are not checked here.
    pub(super) async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::Invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        // A JWT is checked against the keys when the server has them; any
        // other token, or every token of a server without keys, is asked
        // about at the introspection endpoint.
        match jsonwebtoken::decode_header(token) {
            Ok(header) if self.uses_keys => self.verify_jwt(token, &header).await,
            _ if self.config.introspection.is_some() => self.introspect(token).await,
            _ => Err(Rejection::Invalid("the token is not a JWT".to_owned())),
        }
    }

    async fn verify_jwt(
        &self,
        token: &str,
        header: &jsonwebtoken::Header,
    ) -> Result<Principal, Rejection> {
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {:?}, a shared-secret algorithm this server does not accept",
                header.alg
            )));
        }
        let (key, alg) = self.key_for(header.kid.as_deref()).await?;
        if let Some(alg) = alg
            && alg != header.alg
        {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {:?}, but its key is for {alg:?}",
                header.alg
            )));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway.as_secs();
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| Rejection::Invalid(jwt_problem(&e, &self.config)))?;
        principal(data.claims, &self.config.issuer)
    }

    /// The key a token names, fetching the key set again (at most once per
    /// [`JWKS_REFRESH_INTERVAL`]) when it is not held: a rotation.
    async fn key_for(
        &self,
        kid: Option<&str>,
    ) -> Result<(DecodingKey, Option<Algorithm>), Rejection> {
        if self.read_keys().uri.is_none() {
            return Err(Rejection::Invalid(
                "the token is a JWT, and this server checks tokens by introspection only"
                    .to_owned(),
            ));
        }
        let find = |keys: &KeySet| match kid {
            Some(kid) => keys.by_id.get(kid).cloned(),
            None if keys.unnamed.len() + keys.by_id.len() == 1 => keys
                .unnamed
                .first()
                .cloned()
                .or_else(|| keys.by_id.values().next().cloned()),
            None => None,
        };
        if let Some(found) = find(&self.read_keys()) {
            return Ok(found);
        }
        let _one_fetch = self.refreshing.lock().await;
        // A fetch that ended while this check waited may have brought it.
        if let Some(found) = find(&self.read_keys()) {
            return Ok(found);
        }
        let due = self
            .read_keys()
            .fetched
            .is_none_or(|at| at.elapsed() >= JWKS_REFRESH_INTERVAL);
        if due {
            self.refresh().await.map_err(Rejection::Unavailable)?;
            if let Some(found) = find(&self.read_keys()) {
                return Ok(found);
            }
        }
        Err(Rejection::Invalid(match kid {
            Some(kid) => {
                format!("the token names the key `{kid}`, which the issuer does not publish")
            }
            None => "the token names no key (`kid`), and the issuer publishes several".to_owned(),
        }))
    }

    /// Asks the introspection endpoint about an opaque token (RFC 7662).
    async fn introspect(&self, token: &str) -> Result<Principal, Rejection> {
        let Some(introspection) = &self.config.introspection else {
            return Err(Rejection::Invalid("the token is not a JWT".to_owned()));
        };
        let Ok(_slot) = self.introspections.try_acquire() else {
            return Err(Rejection::Unavailable(format!(
                "{MAX_INTROSPECTIONS_IN_FLIGHT} introspections are already in flight"
            )));
        };
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let credentials = {
            use base64::Engine as _;
            let pair = format!(
                "{}:{}",
                form_urlencoded::byte_serialize(introspection.client_id.as_bytes())
                    .collect::<String>(),
                form_urlencoded::byte_serialize(introspection.client_secret.as_bytes())
                    .collect::<String>()
            );
            base64::engine::general_purpose::STANDARD.encode(pair)
        };
        let answer = self
            .fetch_json(&introspection.endpoint, Some((body, credentials)))
            .await
            .map_err(|e| Rejection::Unavailable(e.message))?;
        let Value::Object(claims) = answer else {
            return Err(Rejection::Unavailable(
                "the introspection endpoint answered something other than a JSON object".to_owned(),
            ));
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(Rejection::Invalid(
                "the authorization server says the token is not active".to_owned(),
            ));
        }
        let audience_ok = match claims.get("aud") {
            Some(Value::String(aud)) => *aud == self.config.resource,
            Some(Value::Array(auds)) => auds
                .iter()
                .any(|a| a.as_str() == Some(&self.config.resource)),
            _ => false,
        };
        if !audience_ok {
            return Err(Rejection::Invalid(format!(
                "the token is not for this server: its audience does not include `{}`",
                self.config.resource
            )));
        }
        if let Some(iss) = claims.get("iss")
            && iss.as_str() != Some(&self.config.issuer)
        {
            return Err(Rejection::Invalid(format!(
                "the token was issued by {iss}, not by `{}`",
                self.config.issuer
            )));
        }
        let now = jsonwebtoken::get_current_timestamp();
        let leeway = self.config.leeway.as_secs();
        if let Some(exp) = claims.get("exp").and_then(Value::as_u64)
            && exp.saturating_add(leeway) < now
        {
            return Err(Rejection::Invalid("the token has expired".to_owned()));
        }
        principal(claims, &self.config.issuer)
    }

    /// GETs `url` (or POSTs a form to it with HTTP Basic credentials) and
    /// reads a JSON document, bounded in time and size.
    async fn fetch_json(
        &self,
        url: &str,
        form: Option<(String, String)>,
    ) -> Result<Value, FetchError> {
        let unreached = |message: String| FetchError {
            message,
            answered: false,
        };
        let answered = |message: String| FetchError {
            message,
            answered: true,
        };
        let request = match form {
            None => http::Request::get(url).body(Full::default()),
            Some((body, credentials)) => http::Request::post(url)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::AUTHORIZATION, format!("Basic {credentials}"))
                .body(Full::new(Bytes::from(body))),
        }
        .map_err(|e| unreached(format!("`{url}` is not a URL to fetch: {e}")))?;
        let mut request = request;
        request
            .headers_mut()
            .insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| unreached(format!("`{url}` could not be reached: {e}")))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_DOCUMENT_BYTES)
                .collect()
                .await
                .map_err(|e| {
                    answered(format!(
                        "`{url}` answered a body that could not be read: {e}"
                    ))
                })?
                .to_bytes();
            if !status.is_success() {
                return Err(answered(format!("`{url}` answered {status}")));
            }
            serde_json::from_slice::<Value>(&body)
                .map_err(|e| answered(format!("`{url}` answered something other than JSON: {e}")))
        };
        tokio::time::timeout(AUTHORIZATION_SERVER_TIMEOUT, exchange)
            .await
            .map_err(|_| {
                unreached(format!(
                    "`{url}` did not answer within {} s",
                    AUTHORIZATION_SERVER_TIMEOUT.as_secs()
                ))
            })?
    }

    /// The answer to a request that is not let through.
    pub(super) fn reject(&self, rejection: &Rejection) -> Response {
        let metadata = &self.metadata_url;
        let required = &self.challenge_scopes;
        let scope_hint = if required.is_empty() {
            String::new()
        } else {
            format!(", scope=\"{}\"", quoted(required))
        };
        let (status, challenge, error, description) = match rejection {
            Rejection::Missing => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\"{scope_hint}"),
                "invalid_request",
                "this MCP endpoint needs a bearer token issued for it; see the resource metadata"
                    .to_owned(),
            ),
            Rejection::Malformed(why) => (
                StatusCode::BAD_REQUEST,
                format!(
                    "Bearer error=\"invalid_request\", error_description=\"{}\", resource_metadata=\"{metadata}\"",
                    quoted(why)
                ),
                "invalid_request",
                why.clone(),
            ),
            Rejection::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata}\"{scope_hint}",
                    quoted(why)
                ),
                "invalid_token",
                why.clone(),
            ),
            Rejection::InsufficientScope(missing) => (
                StatusCode::FORBIDDEN,
                // Every scope needed, not only those missing: a client that
                // asks again for these keeps the ones it had.
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
                    quoted(required)
                ),
                "insufficient_scope",
                format!(
                    "the token lacks the scope(s) `{}` this endpoint requires",
                    missing.join(" ")
                ),
            ),
            Rejection::Unavailable(_) => {
                // The reason (an internal URL, a status) is not for an
                // unauthenticated caller.
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &json!({
                        "error": "temporarily_unavailable",
                        "error_description": "the token could not be checked: the authorization server did not answer as expected; try again shortly",
                    }),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                response
                    .extensions_mut()
                    .insert(super::edge::Refused("token_check_unavailable"));
                return response;
            }
        };
        let mut response = json_response(
            status,
            &json!({"error": error, "error_description": description}),
        );
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
            .extensions_mut()
            .insert(super::edge::Refused(match rejection {
                Rejection::InsufficientScope(_) => "token_scope",
                _ => "token",
            }));
        response
    }
}

/// Why a fetch from the authorization server failed, and whether the
/// server answered at all (an answer that is no document is worth asking
/// elsewhere; no answer is not).
struct FetchError {
    message: String,
    answered: bool,
}

impl From<FetchError> for String {
    fn from(error: FetchError) -> Self {
        error.message
    }
}

/// A JSON document as a response.
fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A key of a JWK set this server can check signatures with, and the
/// algorithm it is for, if it says.
fn usable_key(jwk: &Jwk) -> Option<(DecodingKey, Option<Algorithm>)> {
    use jsonwebtoken::jwk::{KeyOperations, PublicKeyUse};
    // A key published for encryption, or whose operations leave out
    // verifying, is not a signing key.
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    if let Some(ops) = &jwk.common.key_operations
        && !ops.iter().any(|op| matches!(op, KeyOperations::Verify))
    {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(alg) => Some(match alg {
            KeyAlgorithm::RS256 => Algorithm::RS256,
            KeyAlgorithm::RS384 => Algorithm::RS384,
            KeyAlgorithm::RS512 => Algorithm::RS512,
            KeyAlgorithm::PS256 => Algorithm::PS256,
            KeyAlgorithm::PS384 => Algorithm::PS384,
            KeyAlgorithm::PS512 => Algorithm::PS512,
            KeyAlgorithm::ES256 => Algorithm::ES256,
            KeyAlgorithm::ES384 => Algorithm::ES384,
            KeyAlgorithm::EdDSA => Algorithm::EdDSA,
            _ => return None,
        }),
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some((key, alg))
}

/// The sentence for a JWT that does not validate.
fn jwt_problem(error: &jsonwebtoken::errors::Error, config: &OAuth) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".to_owned(),
        ErrorKind::InvalidAudience => format!(
            "the token is not for this server: its audience (`aud`) does not include `{}`",
            config.resource
        ),
        ErrorKind::InvalidIssuer => format!("the token was not issued by `{}`", config.issuer),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key".to_owned(),
        _ => format!("the token cannot be read: {error}"),
    }
}

/// The principal of validated claims.
fn principal(claims: Map<String, Value>, issuer: &str) -> Result<Principal, Rejection> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let client_id = text("client_id").or_else(|| text("azp"));
    let Some(subject) = text("sub").or_else(|| client_id.clone()) else {
        return Err(Rejection::Invalid(
            "the token names no subject (`sub`) and no client (`client_id`)".to_owned(),
        ));
    };
    let scopes = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => scope.split_whitespace().map(str::to_owned).collect(),
        (_, Some(Value::Array(scp))) => scp
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        (_, Some(Value::String(scp))) => scp.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Ok(Principal {
        issuer: text("iss").unwrap_or_else(|| issuer.to_owned()),
        subject,
        client_id,
        scopes,
        claims,
    })
}

/// `text` made safe inside a quoted string of a `WWW-Authenticate` header:
/// printable ASCII, no `"` or `\`.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if (' '..='~').contains(&c) => c,
            _ => '?',
        })
        .collect()
}

/// The bearer token of a request: one `Authorization: Bearer …` header.
fn bearer(request: &axum::extract::Request) -> Result<&str, Rejection> {
    let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Rejection::Missing);
    };
    if values.next().is_some() {
        return Err(Rejection::Malformed(
            "the request has more than one Authorization header".to_owned(),
        ));
    }
    let value = value
        .to_str()
        .map_err(|_| Rejection::Malformed("the Authorization header is not ASCII".to_owned()))?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            let token = token.trim();
            if token.is_empty() {
                Err(Rejection::Malformed(
                    "the Authorization header names no token after `Bearer`".to_owned(),
                ))
            } else {
                Ok(token)
            }
        }
        // Another scheme (Basic, …) carries no bearer token: the request
        // is answered as one without (RFC 6750 section 3.1).
        _ => Err(Rejection::Missing),
    }
}

/// What [`authenticate`] needs: the token checks, and the sessions, whose
/// owners it records and holds requests to.
#[derive(Clone)]
pub(super) struct Authenticator {
    pub(super) verifier: Arc<Verifier>,
    pub(super) sessions: Arc<super::edge::CappedSessions>,
}

/// The middleware in front of the MCP endpoint: a request goes on only with
/// a token that validates and holds every required scope; its
/// [`Principal`] goes with it, in the request's extensions. A session
/// belongs to the caller whose `initialize` started it: a request of
/// another caller naming it, whatever its method (a `GET` of its event
/// stream, a `DELETE`), is answered as for a session that does not exist.
/// `response` with `Connection: close`. A refusal is answered before the
/// request's body is read, and hyper then closes the connection, at times
/// after the answer went out without saying so: a client that sends its next
/// request on it at once (the MCP SDKs retry with a token) would see the
/// connection drop unanswered. Saying so makes it open a new one.
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

pub(super) async fn authenticate(
    axum::extract::State(auth): axum::extract::State<Authenticator>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let verifier = &auth.verifier;
    let checked = match bearer(&request) {
        Ok(token) => verifier.verify(token).await,
        Err(rejection) => Err(rejection),
    };
    let principal = match checked {
        Ok(principal) => principal,
        Err(rejection) => return closing(verifier.reject(&rejection)),
    };
    let missing: Vec<String> = verifier
        .config
        .required_scopes
        .iter()
        .filter(|scope| !principal.has(scope))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return closing(verifier.reject(&Rejection::InsufficientScope(missing)));
    }
    let owner = format!("{}\n{}", principal.issuer, principal.subject);
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &session
        && auth.sessions.owner(id).is_some_and(|kept| kept != owner)
    {
        return super::edge::unknown_session();
    }
    // Only an `initialize` starts a session, and only the edge knows the
    // method: it applies the cap (a stateless call is not held to it) and
    // binds the new session to its caller. A request naming a session held
    // elsewhere (sessions that roam) is checked against the stored owner,
    // and a restore is held to the cap too.
    request
        .extensions_mut()
        .insert(super::edge::CallerSessions {
            owner,
            max: verifier.config.max_sessions_per_caller,
        });
    // The caller's alias scope, for a request without a session: the one
    // place that decides scopes is told who this is.
    request
        .extensions_mut()
        .insert(super::scope::Scope::principal(
            &principal.issuer,
            &principal.subject,
            principal.client_id.as_deref(),
        ));
    request.extensions_mut().insert(Arc::new(principal));
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_metadata_url_is_the_well_known_path_then_the_resources() {
        let oauth = OAuth::new("https://tools.example.com/mcp", "https://auth.example.com");
        assert_eq!(
            oauth.metadata_url().unwrap(),
            (
                "/mcp".to_owned(),
                "https://tools.example.com/.well-known/oauth-protected-resource/mcp".to_owned()
            )
        );
        let root = OAuth::new("https://tools.example.com/", "https://auth.example.com");
        assert_eq!(
            root.metadata_url().unwrap().1,
            "https://tools.example.com/.well-known/oauth-protected-resource"
        );
        assert!(OAuth::new("/mcp", "x").metadata_url().is_err());
        assert!(
            OAuth::new("https://t.example/mcp?x=1", "x")
                .metadata_url()
                .is_err()
        );
    }

    #[test]
    fn scopes_come_from_scope_or_scp_and_the_subject_from_sub_or_the_client() {
        let p = principal(
            claims(json!({"sub": "u1", "scope": "tools:read  mcp:use", "azp": "c"})),
            "i",
        )
        .unwrap();
        assert_eq!(p.scopes, ["tools:read", "mcp:use"]);
        assert_eq!(
            (p.subject.as_str(), p.client_id.as_deref()),
            ("u1", Some("c"))
        );
        let p = principal(claims(json!({"client_id": "svc", "scp": ["a", "b"]})), "i").unwrap();
        assert_eq!((p.subject.as_str(), p.scopes.len()), ("svc", 2));
        assert!(principal(claims(json!({"scope": "a"})), "i").is_err());
    }

    #[test]
    fn read_only_tools_open_with_either_scope_others_only_with_write() {
        let scopes = ToolScopes {
            read: "r".into(),
            write: "w".into(),
        };
        let reader = principal(claims(json!({"sub": "a", "scope": "r"})), "i").unwrap();
        let writer = principal(claims(json!({"sub": "b", "scope": "w"})), "i").unwrap();
        assert!(reader.may_use(Some(&scopes), true));
        assert!(!reader.may_use(Some(&scopes), false));
        assert!(writer.may_use(Some(&scopes), true) && writer.may_use(Some(&scopes), false));
        assert!(reader.may_use(None, false));
    }

    #[test]
    fn claims_become_metadata_text_or_refuse() {
        let p = principal(
            claims(json!({"sub": "a", "n": 7, "groups": ["x"], "ok": true})),
            "i",
        )
        .unwrap();
        assert_eq!(p.claim_text("sub"), Ok(Some("a".to_owned())));
        assert_eq!(p.claim_text("n"), Ok(Some("7".to_owned())));
        assert_eq!(p.claim_text("ok"), Ok(Some("true".to_owned())));
        assert_eq!(p.claim_text("email"), Ok(None));
        assert!(p.claim_text("groups").is_err());
    }

    #[test]
    fn a_quoted_header_text_holds_no_quote_or_control() {
        assert_eq!(quoted("a \"b\"\\\n"), "a 'b''?");
    }

    #[test]
    fn the_authorization_servers_urls_are_https_but_on_loopback() {
        assert!(OAuth::check_https("issuer", "https://auth.example.com").is_ok());
        assert!(OAuth::check_https("issuer", "http://127.0.0.1:9000").is_ok());
        assert!(OAuth::check_https("issuer", "http://[::1]:9000").is_ok());
        assert!(OAuth::check_https("issuer", "http://localhost/realm").is_ok());
        let refused = OAuth::check_https("issuer", "http://auth.example.com").unwrap_err();
        assert!(refused.contains("https://"), "{refused}");
        assert!(OAuth::check_https("issuer", "ftp://127.0.0.1").is_err());
        let oauth = OAuth::new("https://t.example/mcp", "https://auth.example").introspection(
            "http://auth.example/introspect",
            "id",
            "secret",
        );
        assert!(
            oauth
                .check_urls()
                .unwrap_err()
                .contains("introspection endpoint")
        );
        let spaced =
            OAuth::new("https://t.example/mcp", "https://auth.example").required_scope("a b");
        assert!(spaced.check_urls().unwrap_err().contains("scope token"));
    }
}
