//! Long-running methods (`google.longrunning.Operation`): the call that
//! starts one, and the `google.longrunning.Operations` calls that poll and
//! cancel it on the same transport, a finished one written as the tool's
//! answer. The MCP server serves them as tasks.

use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor, Value as ProtoValue};
use proto_ai_tools_schema::proto::{LongRunning, OPERATIONS_SERVICE, long_running};
use tracing::Instrument as _;

use super::sentences::{CallError, failure_sentence, status_sentence};
use super::{JsonNames, ProtoExecutor};
use crate::inbound::Arguments;
use crate::result::ToolResult;
use crate::tool::AgentTool;
use crate::transport::wire::undecodable_response;
use crate::transport::{CallOptions, Code, Status, Transport};

/// Where an operation stands, as `GetOperation` answered.
#[derive(Debug)]
#[doc(hidden)]
pub enum OperationState {
    /// Still running; its metadata written as JSON, when it has some.
    Running { metadata: Option<String> },
    /// Done: the tool's answer (its unpacked response, or an error result
    /// with the operation's status).
    Done(ToolResult),
    /// Done with the status `CANCELLED`: the answer says so.
    Cancelled(ToolResult),
}

/// Why an operation could not be polled or cancelled: the sentence of the
/// failure, and whether the service does not know the operation (or has no
/// Operations service at all) rather than failing to answer.
#[derive(Debug)]
#[doc(hidden)]
pub struct OperationError {
    /// What went wrong, for a person or a model.
    pub message: String,
    /// The service said it does not know the operation, or has no
    /// `google.longrunning.Operations`: asking again will not help.
    pub unknown: bool,
}

impl<T: Transport> ProtoExecutor<T> {
    /// What `tool`'s operation holds when it is done, if `tool` is
    /// long-running ([`long_running`]).
    pub(crate) fn long_running(
        &self,
        tool: &'static AgentTool,
    ) -> Option<Result<LongRunning, String>> {
        self.method(tool).ok().as_ref().and_then(long_running)
    }

    /// Calls long-running `tool` and returns the name of the operation it
    /// started; every failure is the error result a call would give.
    pub(crate) async fn start_operation(
        &self,
        tool: &'static AgentTool,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> Result<String, ToolResult> {
        let span = tracing::info_span!(
            "ai_tools.call",
            tool = tool.name,
            rpc.service = tool.method.service,
            rpc.method = tool.method.method,
            error = tracing::field::Empty,
        );
        let started = async {
            let method = self.method(tool)?;
            let request = self
                .build_request(&method.input(), args, options)
                .instrument(tracing::debug_span!("ai_tools.arguments"))
                .await?;
            let bytes = self
                .unary_traced(&method, request, options)
                .await
                .map_err(CallError::Status)?;
            let operation = decode(&method.output(), &bytes)?;
            match text_field(&operation, "name") {
                Some(name) if !name.is_empty() => Ok(name),
                _ => Err(CallError::Unreadable(
                    "the service answered with an operation that has no name, so it cannot be followed"
                        .to_owned(),
                )),
            }
        }
        .instrument(span.clone())
        .await;
        match started {
            Ok(name) => Ok(name),
            Err(error) => {
                span.record("error", error.kind());
                Err(ToolResult::error(
                    failure_sentence(tool.name, &self.aliases, error).await,
                ))
            }
        }
    }

    /// Asks the service where operation `name` of `tool` stands
    /// (`google.longrunning.Operations/GetOperation`, on this executor's
    /// transport with `options`), a finished one written as `tool`'s
    /// answer, its fields (and a running one's metadata's) under `names`.
    pub(crate) async fn poll_operation(
        &self,
        tool: &'static AgentTool,
        name: &str,
        options: &CallOptions,
        names: JsonNames,
    ) -> Result<OperationState, OperationError> {
        let bytes = self
            .operations_call(tool, "GetOperation", name, options)
            .await?;
        let (method, _) = self.operations_method(tool, "GetOperation")?;
        let operation = decode(&method.output(), &bytes).map_err(|e| self.plain(tool, e))?;
        let declared = self.long_running(tool).and_then(Result::ok);
        if !bool_field(&operation, "done") {
            let metadata = match any_field(
                &operation,
                "metadata",
                declared.as_ref().and_then(|d| d.metadata.as_ref()),
            ) {
                Some((desc, bytes)) => self
                    .aliased_json_of_encoded(tool, &desc, &bytes, names)
                    .await
                    .ok(),
                None => None,
            };
            return Ok(OperationState::Running { metadata });
        }
        if let Some(error) = message_field(&operation, "error") {
            let code = error
                .get_field_by_name("code")
                .and_then(|v| v.as_i32())
                .unwrap_or(2);
            let message = text_field(&error, "message").unwrap_or_default();
            let status = Status::new(Code::from_i32(code), message);
            let _ = self.aliases.fetch_text(&status.message).await;
            let result = ToolResult::error(status_sentence(tool.name, &self.aliases, &status));
            return Ok(if status.code == Code::Cancelled {
                OperationState::Cancelled(result)
            } else {
                OperationState::Done(result)
            });
        }
        let Some((desc, bytes)) = any_field(
            &operation,
            "response",
            declared.as_ref().map(|d| &d.response),
        ) else {
            return Ok(OperationState::Done(ToolResult::error(format!(
                "{} finished, but its operation holds no response of a type the descriptors know, \
                 and no error; the work may have taken effect: check before repeating it, and tell the user.",
                tool.name
            ))));
        };
        Ok(OperationState::Done(
            match self
                .aliased_json_of_encoded(tool, &desc, &bytes, names)
                .await
            {
                Ok(json) => ToolResult::ok(json),
                Err(error) => {
                    ToolResult::error(failure_sentence(tool.name, &self.aliases, error).await)
                }
            },
        ))
    }

    /// Asks the service to cancel operation `name` of `tool`
    /// (`google.longrunning.Operations/CancelOperation`).
    pub(crate) async fn cancel_operation(
        &self,
        tool: &'static AgentTool,
        name: &str,
        options: &CallOptions,
    ) -> Result<(), OperationError> {
        self.operations_call(tool, "CancelOperation", name, options)
            .await
            .map(drop)
    }

    /// `google.longrunning.Operations/{rpc}` with `{name}` on the same
    /// transport as `tool`'s calls.
    async fn operations_call(
        &self,
        tool: &'static AgentTool,
        rpc: &str,
        name: &str,
        options: &CallOptions,
    ) -> Result<Vec<u8>, OperationError> {
        let (method, mut request) = self.operations_method(tool, rpc)?;
        request
            .try_set_field_by_name("name", ProtoValue::String(name.to_owned()))
            .map_err(|e| {
                internal(
                    tool,
                    format!("{OPERATIONS_SERVICE}/{rpc} cannot take a name: {e}"),
                )
            })?;
        self.unary_traced(&method, request, options)
            .await
            .map_err(|status| {
                let unknown = matches!(status.code, Code::NotFound | Code::Unimplemented);
                let message = match status.code {
                    Code::NotFound => format!(
                        "the service does not know the operation `{name}` of {} (it may have expired or been deleted): {}",
                        tool.name,
                        status_sentence(tool.name, &self.aliases, &status)
                    ),
                    Code::Unimplemented => format!(
                        "the service behind {} does not implement {OPERATIONS_SERVICE}/{rpc}, so its operations cannot be followed here: {}",
                        tool.name,
                        status_sentence(tool.name, &self.aliases, &status)
                    ),
                    _ => status_sentence(tool.name, &self.aliases, &status),
                };
                OperationError { message, unknown }
            })
    }

    /// The method `google.longrunning.Operations/{rpc}` and an empty request
    /// of it, from `tool`'s pool.
    fn operations_method(
        &self,
        tool: &'static AgentTool,
        rpc: &str,
    ) -> Result<(MethodDescriptor, DynamicMessage), OperationError> {
        let method = self
            .pool
            .get_service_by_name(OPERATIONS_SERVICE)
            .and_then(|service| service.methods().find(|m| m.name() == rpc))
            .ok_or_else(|| {
                internal(
                    tool,
                    format!(
                        "the descriptors of {} lack {OPERATIONS_SERVICE}/{rpc}",
                        tool.name
                    ),
                )
            })?;
        let request = DynamicMessage::new(method.input());
        Ok((method, request))
    }

    fn plain(&self, tool: &'static AgentTool, error: CallError) -> OperationError {
        let message = match error {
            CallError::Unreadable(problem) | CallError::Internal(problem) => problem,
            other => other.kind().to_owned(),
        };
        internal(tool, message)
    }
}

fn internal(tool: &AgentTool, message: String) -> OperationError {
    OperationError {
        message: format!("{}: {message}", tool.name),
        unknown: false,
    }
}

fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage, CallError> {
    DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| CallError::Unreadable(undecodable_response(desc, &e)))
}

fn text_field(message: &DynamicMessage, name: &str) -> Option<String> {
    message
        .get_field_by_name(name)
        .and_then(|v| v.as_str().map(str::to_owned))
}

fn bool_field(message: &DynamicMessage, name: &str) -> bool {
    message
        .get_field_by_name(name)
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// The message field `name`, when it is set.
fn message_field(message: &DynamicMessage, name: &str) -> Option<DynamicMessage> {
    if !message.has_field_by_name(name) {
        return None;
    }
    message
        .get_field_by_name(name)
        .and_then(|v| v.as_message().cloned())
}

/// The `google.protobuf.Any` field `name`, when it is set: the type its URL
/// names (else `declared`, the type `operation_info` names) and the packed
/// bytes. `None` when it is unset, or names a type neither the pool nor
/// `declared` gives.
fn any_field(
    message: &DynamicMessage,
    name: &str,
    declared: Option<&MessageDescriptor>,
) -> Option<(MessageDescriptor, Vec<u8>)> {
    let any = message_field(message, name)?;
    let url = text_field(&any, "type_url").unwrap_or_default();
    let type_name = url.rsplit('/').next().unwrap_or_default();
    let desc = prost_reflect::ReflectMessage::descriptor(message)
        .parent_pool()
        .get_message_by_name(type_name)
        .or_else(|| declared.cloned())?;
    let bytes = any
        .get_field_by_name("value")
        .and_then(|v| v.as_bytes().map(|b| b.to_vec()))
        .unwrap_or_default();
    Some((desc, bytes))
}
