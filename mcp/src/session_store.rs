//! MCP sessions that roam between gateways (feature `redis`): the record of
//! each handshake-era session in the Redis (or Redis Cluster) that holds the
//! aliases, so that every gateway sharing that store can serve it, and a
//! gateway's restart does not end it.
//!
//! One hash per session, at `PREFIX:{SESSION_ID}:mcp-session` (`PREFIX` is
//! the alias store's key prefix). The session id is the key's hash tag, as
//! it is of the session's aliases (a session's alias scope is its id), so on
//! a cluster a session's record and its aliases share a slot:
//!
//! | field | value |
//! |---|---|
//! | `v` | the record's format, `1` |
//! | `rmcp` | rmcp's [`SessionState`]: the client's `initialize` parameters, which a gateway that does not hold the session replays to restore it |
//! | `owner` | the hex SHA-256 of the OAuth caller (issuer and subject) who started the session; empty on a server that checks no tokens |
//! | `toolset:NAME` | `1` for each toolset the model enabled (tool search's `enable_toolset`) |
//!
//! The owner is kept as a digest: the store needs only to compare callers,
//! not to know them. Toolsets are fields of their own so that two gateways
//! enabling toolsets of one session at once both add theirs (`HSET` of a
//! field), where rewriting one list would lose one of them.
//!
//! The key lives as long as the session may go without a message (the
//! server's session idle timeout): every request naming the session sets
//! its TTL again, so the record expires when the session has been idle
//! everywhere. A request that finds the record gone (it expired, or the
//! client's `DELETE` reached another gateway) ends this gateway's copy of
//! the session too.
//!
//! This module only reads and writes records; what a request naming a
//! session may do (whose session it is, the caps) is the edge's
//! ([`super::edge`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionState;
use sha2::{Digest, Sha256};

use proto_ai_tools::store::{RedisStore, StoreError};

/// The record's format, in its `v` field.
const FORMAT: &str = "1";
/// The field of rmcp's state.
const RMCP: &str = "rmcp";
/// The field of the owner's digest.
const OWNER: &str = "owner";
/// The prefix of a toolset's field.
const TOOLSET: &str = "toolset:";

/// The longest session id looked up: rmcp mints UUIDs (36 bytes).
const MAX_ID_BYTES: usize = 64;

/// The records of one server's sessions, on the alias store's connection.
pub(super) struct SessionRecords {
    redis: RedisStore,
    /// How long a record lives without a request: the session idle timeout.
    ttl: Duration,
}

/// What a session's record holds.
#[derive(Clone, Debug)]
pub(super) struct StoredSession {
    /// rmcp's state, replayed to restore the session.
    pub(super) state: SessionState,
    /// The digest of the caller who started it ([`owner_digest`]), if the
    /// server checked tokens.
    pub(super) owner: Option<String>,
    /// The toolsets the model enabled.
    #[cfg_attr(not(feature = "tool-search"), allow(dead_code))]
    pub(super) toolsets: BTreeSet<String>,
}

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum LoadError {
    /// The store did not answer.
    #[error(transparent)]
    Unavailable(#[from] StoreError),
    /// The record is not one this server wrote: it is refused, never
    /// half-used.
    #[error("the stored MCP session is unreadable: {0}")]
    Corrupt(String),
}

/// The digest of a session's owner as the edge names owners (see
/// [`super::edge::CallerSessions`]), as it is stored: hex SHA-256, after a
/// label, so that the same text hashed elsewhere in the store is another
/// value.
pub(super) fn owner_digest(owner: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(b"mcp-session-owner\n");
    hash.update(owner.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in hash.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

impl SessionRecords {
    /// Records kept in `redis`, each `ttl` after the last request naming
    /// its session.
    pub(super) fn new(redis: RedisStore, ttl: Duration) -> Self {
        Self { redis, ttl }
    }

    /// Whether `id` could be a session id this server minted: anything
    /// else is unknown without asking the store, so no text a client
    /// chose beyond that shape reaches a key.
    pub(super) fn is_id(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= MAX_ID_BYTES
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    }

    /// The key of session `id`'s record.
    fn key(&self, id: &str) -> String {
        format!("{}:{{{id}}}:mcp-session", self.redis.options().key_prefix)
    }

    /// Writes the record of a session just started: rmcp's `state` and the
    /// digest of its `owner`.
    pub(super) async fn save(
        &self,
        id: &str,
        state: &SessionState,
        owner: Option<&str>,
    ) -> Result<(), StoreError> {
        let state = serde_json::to_string(state).map_err(StoreError::unavailable)?;
        let owner = owner.map(owner_digest).unwrap_or_default();
        self.redis
            .hash_set_with_ttl(
                &self.key(id),
                &[("v", FORMAT), (RMCP, &state), (OWNER, &owner)],
                self.ttl,
            )
            .await
    }

    /// The record of session `id`, if the store holds it.
    pub(super) async fn load(&self, id: &str) -> Result<Option<StoredSession>, LoadError> {
        if !Self::is_id(id) {
            return Ok(None);
        }
        let fields = self.redis.hash_get_all(&self.key(id)).await?;
        parse(fields).map_err(LoadError::Corrupt)
    }

    /// Sets the TTL of session `id`'s record again: the session was used.
    /// Whether the record is still there.
    pub(super) async fn touch(&self, id: &str) -> Result<bool, StoreError> {
        if !Self::is_id(id) {
            return Ok(false);
        }
        self.redis.expire_key(&self.key(id), self.ttl).await
    }

    /// Adds `toolset` to the toolsets session `id` enabled.
    #[cfg_attr(not(feature = "tool-search"), allow(dead_code))]
    pub(super) async fn enable_toolset(&self, id: &str, toolset: &str) -> Result<(), StoreError> {
        let field = format!("{TOOLSET}{toolset}");
        self.redis
            .hash_set_with_ttl(&self.key(id), &[(&field, "1")], self.ttl)
            .await
    }

    /// Deletes session `id`'s record: the client ended the session.
    pub(super) async fn delete(&self, id: &str) -> Result<(), StoreError> {
        if !Self::is_id(id) {
            return Ok(());
        }
        self.redis.delete_key(&self.key(id)).await
    }
}

/// A record from its fields; `None` for no record, or for what is left
/// when a toolset was written after the record expired (fields without
/// rmcp's state, which no session can be restored from).
fn parse(fields: Vec<(Vec<u8>, Vec<u8>)>) -> Result<Option<StoredSession>, String> {
    let mut text = Vec::with_capacity(fields.len());
    for (field, value) in fields {
        match (String::from_utf8(field), String::from_utf8(value)) {
            (Ok(field), Ok(value)) => text.push((field, value)),
            _ => return Err("a field is not UTF-8".to_owned()),
        }
    }
    let get = |name: &str| {
        text.iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    };
    let Some(state) = get(RMCP) else {
        return Ok(None);
    };
    match get("v") {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(format!(
                "its format is {:?}, not {FORMAT}",
                other.chars().take(16).collect::<String>()
            ));
        }
        None => return Err("it has no format".to_owned()),
    }
    let owner = match get(OWNER) {
        Some("") => None,
        Some(digest) if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(digest.to_owned())
        }
        Some(_) => return Err("its owner is not a digest".to_owned()),
        None => return Err("it has no owner field".to_owned()),
    };
    let state: SessionState =
        serde_json::from_str(state).map_err(|e| format!("rmcp's state does not parse: {e}"))?;
    let toolsets = text
        .iter()
        .filter_map(|(field, _)| field.strip_prefix(TOOLSET))
        .map(str::to_owned)
        .collect();
    Ok(Some(StoredSession {
        state,
        owner,
        toolsets,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> String {
        let params: rmcp::model::InitializeRequestParams =
            serde_json::from_value(serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            }))
            .expect("initialize params");
        serde_json::to_string(&SessionState::new(params)).expect("state")
    }

    fn fields(pairs: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        pairs
            .iter()
            .map(|(f, v)| (f.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn a_record_gives_back_its_state_owner_and_toolsets() {
        let state = state();
        let owner = owner_digest("https://issuer\nalice");
        let record = parse(fields(&[
            ("v", "1"),
            ("rmcp", &state),
            ("owner", &owner),
            ("toolset:links.v1.LinksService", "1"),
            ("toolset:feed.v1.FeedService", "1"),
        ]))
        .expect("parses")
        .expect("a record");
        assert_eq!(record.owner.as_deref(), Some(owner.as_str()));
        assert_eq!(
            record.toolsets.into_iter().collect::<Vec<_>>(),
            ["feed.v1.FeedService", "links.v1.LinksService"]
        );
        assert_eq!(
            record.state.initialize_params.client_info.name, "test",
            "the initialize parameters come back"
        );
        let ownerless = parse(fields(&[("v", "1"), ("rmcp", &state), ("owner", "")]))
            .expect("parses")
            .expect("a record");
        assert_eq!(ownerless.owner, None);
    }

    #[test]
    fn no_state_is_no_record_and_anything_else_unexpected_is_corrupt() {
        assert!(parse(Vec::new()).expect("parses").is_none());
        assert!(
            parse(fields(&[("toolset:x", "1")]))
                .expect("parses")
                .is_none(),
            "a toolset written after the record expired restores nothing"
        );
        let state = state();
        let digest = owner_digest("o");
        for (case, record) in [
            ("no format", fields(&[("rmcp", &state), ("owner", "")])),
            (
                "another format",
                fields(&[("v", "2"), ("rmcp", &state), ("owner", "")]),
            ),
            ("no owner", fields(&[("v", "1"), ("rmcp", &state)])),
            (
                "an owner in clear",
                fields(&[("v", "1"), ("rmcp", &state), ("owner", "alice")]),
            ),
            (
                "a state that is not rmcp's",
                fields(&[("v", "1"), ("rmcp", "{\"x\":1}"), ("owner", &digest)]),
            ),
            (
                "a state that is not JSON",
                fields(&[("v", "1"), ("rmcp", "{"), ("owner", &digest)]),
            ),
            (
                "bytes that are not UTF-8",
                vec![
                    (b"v".to_vec(), b"1".to_vec()),
                    (b"rmcp".to_vec(), vec![0xff, 0xfe]),
                ],
            ),
        ] {
            assert!(parse(record).is_err(), "{case} is refused");
        }
    }

    #[test]
    fn only_ids_of_the_shape_the_server_mints_are_looked_up() {
        assert!(SessionRecords::is_id(
            "0b6f9d1e-2c4a-4f7e-9a55-1f0c3b8d2e71"
        ));
        for id in ["", "a}b", "{x}", "x:y", "a b", &"a".repeat(65)] {
            assert!(!SessionRecords::is_id(id), "{id:?}");
        }
    }

    #[test]
    fn owners_are_kept_as_distinct_digests() {
        let alice = owner_digest("https://issuer\nalice");
        assert_eq!(alice.len(), 64);
        assert_ne!(alice, owner_digest("https://issuer\nbob"));
        assert_eq!(alice, owner_digest("https://issuer\nalice"));
    }
}
