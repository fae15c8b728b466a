//! A toolkit's long-running tools (`google.longrunning.Operation`), for the
//! MCP server's tasks: which tools are long-running, and the calls that
//! start, poll and cancel their operations, each with its options worked
//! out as [`Toolkit::run`] works them out.

use proto_ai_tools_schema::proto::LongRunning;

use super::{Kind, Tool, Toolkit};
use crate::executor::{JsonNames, OperationError, OperationState, ProtoExecutor};
use crate::inbound::Arguments;
use crate::result::{ToolResult, refused_options_message};
use crate::tool::AgentTool;
use crate::transport::{BoxFuture, CallOptions, Transport};

/// What an Operations call is made with: the generated tool, its executor,
/// and the call's options worked out.
type OperationCall<'t> = (
    &'static AgentTool,
    &'t std::sync::Arc<dyn super::GeneratedSource>,
    CallOptions,
);

/// What a generated executor does for long-running tools, whatever its
/// transport.
pub(super) trait Operations: Send + Sync {
    fn long_running(&self, tool: &'static AgentTool) -> Option<Result<LongRunning, String>>;
    fn start<'a>(
        &'a self,
        tool: &'static AgentTool,
        args: Arguments<'a>,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<String, ToolResult>>;
    fn poll<'a>(
        &'a self,
        tool: &'static AgentTool,
        name: &'a str,
        options: &'a CallOptions,
        names: JsonNames,
    ) -> BoxFuture<'a, Result<OperationState, OperationError>>;
    fn cancel<'a>(
        &'a self,
        tool: &'static AgentTool,
        name: &'a str,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<(), OperationError>>;
}

impl<T: Transport> Operations for ProtoExecutor<T> {
    fn long_running(&self, tool: &'static AgentTool) -> Option<Result<LongRunning, String>> {
        ProtoExecutor::long_running(self, tool)
    }

    fn start<'a>(
        &'a self,
        tool: &'static AgentTool,
        args: Arguments<'a>,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<String, ToolResult>> {
        Box::pin(self.start_operation(tool, args, options))
    }

    fn poll<'a>(
        &'a self,
        tool: &'static AgentTool,
        name: &'a str,
        options: &'a CallOptions,
        names: JsonNames,
    ) -> BoxFuture<'a, Result<OperationState, OperationError>> {
        Box::pin(self.poll_operation(tool, name, options, names))
    }

    fn cancel<'a>(
        &'a self,
        tool: &'static AgentTool,
        name: &'a str,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<(), OperationError>> {
        Box::pin(self.cancel_operation(tool, name, options))
    }
}

impl Tool {
    /// What this tool's operation holds when done, if it is a long-running
    /// generated tool.
    #[doc(hidden)]
    pub fn long_running(&self) -> Option<Result<LongRunning, String>> {
        match &self.kind {
            Kind::Generated { tool, source } => source.operations().long_running(tool),
            Kind::Native(_) => None,
        }
    }
}

impl Toolkit {
    /// `options` merged over the defaults of `tool`'s executor and this
    /// toolkit, as [`Toolkit::run`] merges them.
    fn operation_options(
        &self,
        tool: &'static AgentTool,
        defaults: &CallOptions,
        options: &CallOptions,
    ) -> Result<CallOptions, String> {
        let defaults = defaults.overriding(&self.call_options);
        options
            .for_tool(&defaults, tool.timeout)
            .map_err(|problem| refused_options_message(tool.name, &problem))
    }

    /// Calls long-running `tool` and returns the name of the operation it
    /// started, or the error result the call came to.
    #[doc(hidden)]
    pub async fn start_operation(
        &self,
        tool: &Tool,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> Result<String, ToolResult> {
        let Kind::Generated { tool, source } = &tool.kind else {
            return Err(ToolResult::error(format!(
                "{} is not a long-running tool",
                tool.name()
            )));
        };
        let options = self
            .operation_options(tool, source.call_defaults(), options)
            .map_err(ToolResult::error)?;
        source.operations().start(tool, args, &options).await
    }

    /// Where operation `name` of `tool` stands, a result written with the
    /// toolkit's field names.
    #[doc(hidden)]
    pub async fn poll_operation(
        &self,
        tool: &Tool,
        name: &str,
        options: &CallOptions,
    ) -> Result<OperationState, OperationError> {
        let (tool, source, options) = self.operation_call(tool, options)?;
        source
            .operations()
            .poll(tool, name, &options, self.json_names)
            .await
    }

    /// Asks the service to cancel operation `name` of `tool`.
    #[doc(hidden)]
    pub async fn cancel_operation(
        &self,
        tool: &Tool,
        name: &str,
        options: &CallOptions,
    ) -> Result<(), OperationError> {
        let (tool, source, options) = self.operation_call(tool, options)?;
        source.operations().cancel(tool, name, &options).await
    }

    /// The generated tool, its executor and the options of an Operations
    /// call of `tool`.
    fn operation_call<'t>(
        &self,
        tool: &'t Tool,
        options: &CallOptions,
    ) -> Result<OperationCall<'t>, OperationError> {
        let Kind::Generated { tool, source } = &tool.kind else {
            return Err(OperationError {
                message: format!("{} is not a long-running tool", tool.name()),
                unknown: true,
            });
        };
        let options = self
            .operation_options(tool, source.call_defaults(), options)
            .map_err(|message| OperationError {
                message,
                unknown: false,
            })?;
        Ok((tool, source, options))
    }
}
