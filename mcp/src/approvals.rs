//! A stateless client's approval of one call (protocol 2026-07-28).
//!
//! A server of that protocol cannot send the client a request during a
//! call. It answers the call of a `confirm` tool with an input-required
//! result instead: an elicitation for the client to put to the user, and a
//! `requestState` the client sends back, unchanged, when it calls again
//! with the user's answer. The server keeps nothing between the two
//! requests, so the state carries what the approval is for: rmcp's
//! `RequestStateCodec` signs it (HMAC-SHA256) over the tool, the call's
//! arguments in canonical form and the caller's scope (associated data,
//! never stored in the state), with an expiry. Sent back for another tool,
//! changed arguments or by another caller, it does not open. Each state
//! holds a random nonce, redeemed once in this process: a replayed state is
//! refused. The key is made at start, so a state opens only on the
//! replica that minted it, unless the replicas share one
//! ([`McpServer::with_consent_key`](super::McpServer::with_consent_key));
//! the redeemed nonces are not shared, so such replicas may each redeem a
//! state once before it expires.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{RequestStateCodec, SealOptions};
use serde_json::Value;

/// How long a user has to answer before the approval expires.
pub(super) const APPROVAL_TTL: Duration = Duration::from_secs(10 * 60);

/// Why an approval sent back does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unapproved {
    /// It is not one this server minted for this tool, these arguments
    /// and this caller (or it was tampered with).
    Mismatch,
    /// It is older than [`APPROVAL_TTL`].
    Expired,
    /// It was redeemed already.
    Replayed,
}

impl Unapproved {
    pub(super) const fn reason(self) -> &'static str {
        match self {
            Unapproved::Mismatch => {
                "the approval sent back was not given for this call (another tool, other arguments or another caller)"
            }
            Unapproved::Expired => "the approval sent back has expired",
            Unapproved::Replayed => "the approval sent back was used already",
        }
    }
}

/// Mints and redeems approvals' states.
pub(super) struct Approvals {
    codec: RequestStateCodec,
    /// Nonces redeemed, until their state would have expired anyway.
    redeemed: Mutex<HashMap<String, Instant>>,
}

impl Approvals {
    /// With `key`, or a random one of 32 bytes.
    pub(super) fn new(key: Option<&[u8]>) -> Result<Self, String> {
        let key = match key {
            Some(key) => key.to_vec(),
            None => random_bytes::<32>()?.to_vec(),
        };
        let codec = RequestStateCodec::try_new(key).map_err(|e| e.to_string())?;
        Ok(Self {
            codec,
            redeemed: Mutex::new(HashMap::new()),
        })
    }

    /// A signed state for a call of `tool` with `arguments` by `scope`.
    pub(super) fn mint(
        &self,
        tool: &str,
        arguments: &Value,
        scope: &str,
    ) -> Result<String, String> {
        let nonce = hex(&random_bytes::<16>()?);
        let binding = binding(tool, arguments, scope);
        let options = SealOptions::new()
            .associated_data(&binding)
            .ttl(APPROVAL_TTL);
        Ok(self.codec.seal_with(nonce.as_bytes(), &options))
    }

    /// Whether `state` approves this call, redeeming it if so.
    pub(super) fn redeem(
        &self,
        state: &str,
        tool: &str,
        arguments: &Value,
        scope: &str,
    ) -> Result<(), Unapproved> {
        let binding = binding(tool, arguments, scope);
        let nonce = match self.codec.open_with(state, &binding) {
            Ok(nonce) => nonce,
            Err(rmcp::model::RequestStateError::Expired) => return Err(Unapproved::Expired),
            Err(_) => return Err(Unapproved::Mismatch),
        };
        let nonce = String::from_utf8_lossy(&nonce).into_owned();
        let now = Instant::now();
        let mut redeemed = self
            .redeemed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        redeemed.retain(|_, at| now.duration_since(*at) < APPROVAL_TTL + Duration::from_secs(60));
        if redeemed.insert(nonce, now).is_some() {
            return Err(Unapproved::Replayed);
        }
        Ok(())
    }
}

/// What an approval is bound to: the tool, the arguments in canonical form
/// (object keys sorted at every level) and the caller's scope.
fn binding(tool: &str, arguments: &Value, scope: &str) -> Vec<u8> {
    let mut bound = b"ai-tools consent v1\0".to_vec();
    for part in [tool, &canonical(arguments), scope] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part.as_bytes());
    }
    bound
}

/// `value` as JSON text with every object's keys sorted.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(object) => {
                let mut keys: Vec<&String> = object.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&object[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the consent key: {e}"))?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_opens_once_for_its_own_call_only() {
        let approvals = Approvals::new(None).unwrap();
        let args = json!({"step_id": "step-1", "force": {"b": 1, "a": 2}});
        let state = approvals.mint("steps_delete", &args, "alice").unwrap();
        let reordered = json!({"force": {"a": 2, "b": 1}, "step_id": "step-1"});
        for (tool, arguments, scope) in [
            (
                "steps_delete",
                &json!({"step_id": "step-2", "force": {"b": 1, "a": 2}}),
                "alice",
            ),
            ("links_delete", &args, "alice"),
            ("steps_delete", &args, "bob"),
        ] {
            assert_eq!(
                approvals.redeem(&state, tool, arguments, scope),
                Err(Unapproved::Mismatch)
            );
        }
        assert_eq!(
            approvals.redeem(&state, "steps_delete", &reordered, "alice"),
            Ok(())
        );
        assert_eq!(
            approvals.redeem(&state, "steps_delete", &args, "alice"),
            Err(Unapproved::Replayed)
        );
        let other = Approvals::new(None).unwrap();
        assert_eq!(
            other.redeem(&state, "steps_delete", &args, "alice"),
            Err(Unapproved::Mismatch),
            "another key"
        );
        assert_eq!(
            approvals.redeem("forged", "steps_delete", &args, "alice"),
            Err(Unapproved::Mismatch)
        );
    }
}
