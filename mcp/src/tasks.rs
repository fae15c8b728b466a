//! Long-running operations as MCP tasks (the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663, as rmcp implements it), and the `operations_get`
//! tool for clients without tasks.
//!
//! A tool whose method returns `google.longrunning.Operation` and names its
//! types in `operation_info` is long-running
//! ([`proto_ai_tools_schema::proto::long_running`]). When the server lists one, it
//! advertises the tasks extension; a `tools/call` of such a tool from a
//! client that declared tasks makes the gRPC call and answers with a task.
//! The task lives at the service, not here: its id names the tool and the
//! operation, and `tasks/get` and `tasks/cancel` call
//! `google.longrunning.Operations` on the same backend, with the options a
//! call of the tool would have. So a task outlives the session that started
//! it, works on every replica of a stateless server, and costs the server no
//! memory.
//!
//! **A task id works only in the scope that was given it.** The id carries a
//! tag, the SHA-256 of the scope's key and the id's contents: presented in
//! another scope (another session, another caller), it does not match and
//! is refused as unknown. The tag is not a secret and need not be: anyone may
//! make an id for an operation *in their own scope*, which is what
//! `operations_get` lets them do anyway; whether they may see an operation
//! is the service's to decide, from the metadata a call forwards.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{JsonObject, Task, TaskStatus};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The tool that polls an operation by name, listed for clients without
/// tasks when some listed tool is long-running.
pub const OPERATIONS_GET: &str = "operations_get";

/// How often a client is asked to poll a task, in milliseconds.
pub(super) const POLL_INTERVAL_MS: u64 = 1_000;

/// Bytes of the tag of a task id.
const TAG_BYTES: usize = 16;

/// What a task id names: the tool whose call started the operation, the
/// operation's name at the service, and when the task was made.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TaskRef {
    pub(super) tool: String,
    pub(super) operation: String,
    pub(super) created_ms: u64,
}

impl TaskRef {
    /// A task for operation `operation` of `tool`, made now.
    pub(super) fn new(tool: &str, operation: String) -> Self {
        Self {
            tool: tool.to_owned(),
            operation,
            created_ms: now_ms(),
        }
    }

    /// The id of this task in the scope whose key is `scope`.
    pub(super) fn id(&self, scope: &str) -> String {
        let payload = json!([self.tool, self.operation, self.created_ms]).to_string();
        let payload = URL_SAFE_NO_PAD.encode(payload);
        let tag = URL_SAFE_NO_PAD.encode(tag(scope, &payload));
        format!("{payload}.{tag}")
    }

    /// The task `id` names, if it was given in the scope whose key is
    /// `scope`; `None` for any other text.
    pub(super) fn read(scope: &str, id: &str) -> Option<Self> {
        let (payload, tag_text) = id.split_once('.')?;
        let given = URL_SAFE_NO_PAD.decode(tag_text).ok()?;
        if given != tag(scope, payload) {
            return None;
        }
        let text = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let (tool, operation, created_ms): (String, String, u64) =
            serde_json::from_slice(&text).ok()?;
        Some(Self {
            tool,
            operation,
            created_ms,
        })
    }

    /// The task as it stands, `status` now.
    pub(super) fn task(&self, scope: &str, status: TaskStatus) -> Task {
        let mut task = Task::new(
            self.id(scope),
            status,
            rfc3339(self.created_ms),
            rfc3339(now_ms()),
        );
        if !status.is_terminal() {
            task = task.with_poll_interval_ms(POLL_INTERVAL_MS);
        }
        task
    }
}

/// The tag binding a task id's `payload` to a scope: the first
/// [`TAG_BYTES`] of the SHA-256 of both, each length-prefixed.
fn tag(scope: &str, payload: &str) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(b"ai-tools task\0");
    for part in [scope, payload] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize()[..TAG_BYTES].to_vec()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` after the Unix epoch as an RFC 3339 UTC timestamp
/// (`2026-07-28T09:30:00.250Z`), what MCP's task times are.
fn rfc3339(ms: u64) -> String {
    let seconds = ms / 1000;
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
}

/// The `operations_get` tool as listed: it takes the operation's name (or
/// its alias) and, when several tools are long-running, the tool whose
/// call returned it.
pub(super) fn operations_get_tool(long_running: &[String]) -> rmcp::model::Tool {
    let mut properties = JsonObject::new();
    properties.insert(
        "name".to_owned(),
        json!({
            "type": "string",
            "description": "The operation's `name` (or its alias) as the tool that started it returned it."
        }),
    );
    let mut required = vec![Value::String("name".to_owned())];
    if long_running.len() > 1 {
        properties.insert(
            "tool".to_owned(),
            json!({
                "type": "string",
                "enum": long_running,
                "description": "The tool whose call returned the operation."
            }),
        );
        required.push(Value::String("tool".to_owned()));
    }
    let mut schema = JsonObject::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), Value::Array(required));
    schema.insert("additionalProperties".to_owned(), json!(false));
    let mut tool = rmcp::model::Tool::new(
        OPERATIONS_GET,
        format!(
            "Check on a long-running operation started by {}: while it runs, says so (with its progress, if any); \
             once done, gives the finished result, or the error it ended with. \
             Work takes a while: call again later rather than at once.",
            long_running.join(", ")
        ),
        std::sync::Arc::new(schema),
    );
    tool.annotations = Some(rmcp::model::ToolAnnotations::from_raw(
        None,
        Some(true),
        None,
        None,
        None,
    ));
    tool
}

/// The arguments of an `operations_get` call: the operation's name or
/// alias, and the tool named (if any); or why they are not usable.
pub(super) fn operations_get_arguments(
    arguments: &JsonObject,
) -> Result<(String, Option<String>), String> {
    if let Some(unknown) = arguments.keys().find(|k| *k != "name" && *k != "tool") {
        return Err(format!(
            "{OPERATIONS_GET}: `{}` is not a parameter; give `name` (and `tool` when asked)",
            proto_ai_tools_schema::inbound::shorten(unknown)
        ));
    }
    let name = match arguments.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        _ => {
            return Err(format!(
                "{OPERATIONS_GET}: `name` must be the operation's name (or alias), as the tool that started it returned it"
            ));
        }
    };
    let tool = match arguments.get("tool") {
        None | Some(Value::Null) => None,
        Some(Value::String(tool)) => Some(tool.clone()),
        Some(_) => {
            return Err(format!(
                "{OPERATIONS_GET}: `tool` must be the name of the tool that started the operation"
            ));
        }
    };
    Ok((name, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_reads_back_in_its_own_scope_only() {
        let task = TaskRef::new("reports_build", "operations/42".to_owned());
        let id = task.id("session-a");
        assert_eq!(TaskRef::read("session-a", &id), Some(task));
        assert_eq!(TaskRef::read("session-b", &id), None);
        let (payload, _) = id.split_once('.').unwrap();
        assert_eq!(TaskRef::read("session-a", payload), None);
        assert_eq!(TaskRef::read("session-a", &format!("{payload}.AAAA")), None);
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_250), "2000-02-29T00:00:00.250Z");
        assert_eq!(rfc3339(1_785_231_000_000), "2026-07-28T09:30:00.000Z");
    }
}
