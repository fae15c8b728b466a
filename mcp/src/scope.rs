//! Which alias namespace a request uses: its *scope*, decided here and
//! nowhere else.
//!
//! A handshake-era request (protocol up to `2025-11-25`) names its MCP
//! session, and the session is its scope. A request of protocol
//! `2026-07-28` names none: it is stateless, so its scope comes from who is
//! calling, in this order:
//!
//! 1. the authenticated principal, when the server checks tokens
//!    ([`McpServer::with_oauth`](super::McpServer::with_oauth)): the token's
//!    issuer and subject, and the OAuth client id;
//! 2. a header the operator named ([`McpServer::with_alias_scope_header`](super::McpServer::with_alias_scope_header)),
//!    set by a trusted front proxy;
//! 3. the one local scope of a single-user server
//!    ([`McpServer::with_single_user`](super::McpServer::with_single_user),
//!    loopback only).
//!
//! A stateless request with none of these is refused at the edge, before
//! its body is read. Over stdio the scope is the process.
//!
//! # Invariants
//!
//! - **Scopes never share aliases.** The key of a caller's scope is a
//!   SHA-256 of its kind and its parts, each part length-prefixed, written
//!   in hex after the kind (`principal-…`, `header-…`): what a caller sends
//!   (a header value, a token's subject) never reaches a store key as text,
//!   so no delimiter, brace (a Redis Cluster hash tag), length or byte
//!   sequence can make one scope's key another's. A session's key is its
//!   id, which the server minted (a UUID; the edge refuses an id it does
//!   not hold); stdio's is the id its operator gave.
//! - **A header is trusted only when configured.** A request's header of
//!   the same name is ignored on a server that did not name it.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The longest value of the scope header that is read: past it the request
/// is refused (a proxy's user id is short; a long one is a mistake or an
/// attack).
pub const MAX_SCOPE_HEADER_BYTES: usize = 1024;

/// Where the scopes of stateless requests come from, as configured.
#[derive(Clone, Debug, Default)]
pub(super) struct ScopeSources {
    /// The header a trusted front proxy sets to the caller's identity.
    pub(super) header: Option<http::HeaderName>,
    /// Every stateless request without another source shares one scope.
    pub(super) single_user: bool,
}

impl ScopeSources {
    /// Whether any source can tell stateless callers apart (the principal
    /// counts when tokens are checked).
    pub(super) fn identifies_callers(&self, oauth: bool) -> bool {
        oauth || self.header.is_some()
    }
}

/// The alias namespace a request uses, as the key it is kept under (in a
/// [`Sessions`](proto_ai_tools::Sessions) and, with a store, in the store's keys).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Scope {
    key: String,
}

impl Scope {
    /// The scope of a handshake-era MCP session, kept under the session id
    /// itself: the server minted it (a UUID), and the edge refuses an id it
    /// does not hold, so a caller cannot choose it.
    pub(super) fn session(id: &str) -> Self {
        Self { key: id.to_owned() }
    }

    /// The scope of a stdio server: the process, kept under the id the
    /// operator gave ([`McpServer::with_stdio_session_id`](super::McpServer::with_stdio_session_id)).
    pub(super) fn stdio(id: &str) -> Self {
        Self { key: id.to_owned() }
    }

    /// The scope of an authenticated caller (the authentication layer
    /// puts it in the request's extensions).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) fn principal(issuer: &str, subject: &str, client_id: Option<&str>) -> Self {
        // "no client id" and "an empty client id" are different callers.
        let client = client_id.map_or(Vec::new(), |id| [b"+", id.as_bytes()].concat());
        Self::hashed(
            "principal",
            &[issuer.as_bytes(), subject.as_bytes(), &client],
        )
    }

    /// The scope named by the trusted header's value.
    pub(super) fn header(value: &[u8]) -> Self {
        Self::hashed("header", &[value])
    }

    /// The one scope of a single-user server.
    pub(super) fn local() -> Self {
        Self {
            key: "local".to_owned(),
        }
    }

    /// `kind-<hex of SHA-256(kind, then each part length-prefixed)>`.
    fn hashed(kind: &str, parts: &[&[u8]]) -> Self {
        let mut hash = Sha256::new();
        hash.update(kind.as_bytes());
        for part in parts {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part);
        }
        let mut key = String::with_capacity(kind.len() + 1 + 64);
        key.push_str(kind);
        key.push('-');
        for byte in hash.finalize() {
            let _ = write!(key, "{byte:02x}");
        }
        Self { key }
    }

    /// The key the scope's aliases are kept under.
    pub(super) fn key(&self) -> &str {
        &self.key
    }
}

/// The scope of a stateless HTTP request, from its (already authenticated)
/// parts; else why it has none, for the refusal.
pub(super) fn of_stateless_request(
    headers: &http::HeaderMap,
    extensions: &http::Extensions,
    sources: &ScopeSources,
) -> Result<Scope, String> {
    // The authentication layer, when on, put the principal's scope here.
    if let Some(scope) = extensions.get::<Scope>() {
        return Ok(scope.clone());
    }
    if let Some(name) = &sources.header {
        let mut values = headers.get_all(name).iter();
        let why = match (values.next(), values.next()) {
            (Some(value), None) if value.is_empty() => "is empty",
            (Some(value), None) if value.len() > MAX_SCOPE_HEADER_BYTES => "is too long",
            (Some(value), None) => return Ok(Scope::header(value.as_bytes())),
            (Some(_), Some(_)) => "appears more than once",
            (None, _) => "is missing",
        };
        return Err(format!(
            "Bad Request: this stateless request (no Mcp-Session-Id) needs the caller's identity, \
             which this server reads from the header `{name}` set by its front proxy, and that \
             header {why}; or start a session with initialize"
        ));
    }
    if sources.single_user {
        return Ok(Scope::local());
    }
    Err(
        "Bad Request: this server tells callers apart only by their MCP session, and this \
         request has none (protocol 2026-07-28 is stateless): start a session with initialize, \
         or run the server with an identity source (OAuth, a trusted proxy's scope header, or \
         one local user)"
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &[u8])]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn keys_are_hashed_and_kinds_kept_apart() {
        let a = Scope::header(b"alice");
        assert!(a.key().starts_with("header-"));
        assert_eq!(a.key().len(), "header-".len() + 64);
        assert!(
            a.key()["header-".len()..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit())
        );
        assert_eq!(a, Scope::header(b"alice"));
        assert_ne!(a, Scope::header(b"alice "));
        assert_ne!(
            Scope::session("d290f1ee-6c54-4b01-90e6-d701748f0851"),
            Scope::local()
        );
        // A delimiter in one part cannot move bytes into the next.
        assert_ne!(
            Scope::principal("iss", "a|b", None),
            Scope::principal("iss|a", "b", None)
        );
        assert_ne!(
            Scope::principal("iss", "sub", None),
            Scope::principal("iss", "sub", Some(""))
        );
        // Braces (Redis Cluster hash tags) never reach the key.
        assert!(!Scope::header(b"}{x").key().contains('{'));
    }

    #[test]
    fn the_header_is_read_only_when_configured() {
        let sent = headers(&[("x-user-id", b"alice")]);
        let none = ScopeSources::default();
        let refused = of_stateless_request(&sent, &http::Extensions::new(), &none).unwrap_err();
        assert!(refused.contains("initialize"), "{refused}");
        let configured = ScopeSources {
            header: Some(http::HeaderName::from_static("x-user-id")),
            single_user: false,
        };
        assert_eq!(
            of_stateless_request(&sent, &http::Extensions::new(), &configured),
            Ok(Scope::header(b"alice"))
        );
        for (bad, why) in [
            (headers(&[]), "is missing"),
            (headers(&[("x-user-id", b"")]), "is empty"),
            (
                headers(&[("x-user-id", b"a"), ("x-user-id", b"b")]),
                "more than once",
            ),
            (
                headers(&[("x-user-id", &[b'a'; MAX_SCOPE_HEADER_BYTES + 1])]),
                "too long",
            ),
        ] {
            let refused =
                of_stateless_request(&bad, &http::Extensions::new(), &configured).unwrap_err();
            assert!(
                refused.contains(why) && refused.contains("x-user-id"),
                "{refused}"
            );
        }
        // The principal, put there by the authentication layer, comes first.
        let mut authenticated = http::Extensions::new();
        let principal = Scope::principal("https://auth.example", "alice", Some("app"));
        authenticated.insert(principal.clone());
        assert_eq!(
            of_stateless_request(&sent, &authenticated, &configured),
            Ok(principal)
        );
        let single = ScopeSources {
            header: None,
            single_user: true,
        };
        assert_eq!(
            of_stateless_request(&sent, &http::Extensions::new(), &single),
            Ok(Scope::local())
        );
    }
}
