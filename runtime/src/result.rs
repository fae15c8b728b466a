//! What a tool call gives back to the model ([`ToolResult`]), and the
//! sentences every caller of a tool (an executor, a toolkit, an MCP server)
//! answers with in the same words.

use proto_ai_tools_schema::inbound::shorten;

/// The outcome of one tool call, ready to hand back to the model.
///
/// On success `output` is the response as JSON text; on failure it is a
/// sentence the model can act on (which argument was wrong and what is
/// valid, or the gRPC status). Either way it goes to the model as the tool
/// result; `is_error` tells providers that mark failed tool calls (Anthropic's
/// `is_error`) which one it is.
///
/// # Examples
///
/// ```
/// let r = proto_ai_tools::ToolResult::error("unknown tool `x`");
/// assert!(r.is_error);
/// assert_eq!(r.output, "unknown tool `x`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// JSON text (success) or an actionable error sentence (failure).
    pub output: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolResult {
    /// The longest error text handed to the model, in bytes (before the
    /// closing ` …` of a text that was cut).
    pub const MAX_ERROR_BYTES: usize = 4_000;

    /// A successful result.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!proto_ai_tools::ToolResult::ok("{}").is_error);
    /// ```
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: false,
        }
    }

    /// A failed result. A text longer than [`MAX_ERROR_BYTES`](Self::MAX_ERROR_BYTES) is cut
    /// there (at a character boundary) and ends in ` …`: whatever built the
    /// sentence (a server's message, a native tool's error), the model is
    /// never handed a page of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::ToolResult;
    /// assert!(ToolResult::error("no").is_error);
    /// let long = ToolResult::error("é".repeat(5_000));
    /// assert!(long.output.len() <= ToolResult::MAX_ERROR_BYTES + " …".len());
    /// assert!(long.output.ends_with(" …"));
    /// ```
    pub fn error(output: impl Into<String>) -> Self {
        let mut output = output.into();
        if output.len() > Self::MAX_ERROR_BYTES {
            let mut cut = Self::MAX_ERROR_BYTES;
            while !output.is_char_boundary(cut) {
                cut -= 1;
            }
            output.truncate(cut);
            output.push_str(" …");
        }
        Self {
            output,
            is_error: true,
        }
    }
}

/// The one answer to a call of a tool that is not there, wherever it is
/// made (an executor, a toolkit, an MCP server): the name as sent, shortened
/// (a model may send anything), and the tools there are.
#[doc(hidden)]
pub fn unknown_tool_message<'a>(tool: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    let tool = shorten(tool);
    if known.is_empty() {
        format!("unknown tool `{tool}`; no tools are available here")
    } else {
        format!(
            "unknown tool `{tool}`; the available tools are: {}",
            known.join(", ")
        )
    }
}

/// The one answer to a call whose options (metadata keys, a deadline) are
/// refused, wherever it is made (an executor, a toolkit): nothing was sent.
pub(crate) fn refused_options_message(tool: &str, problem: &str) -> String {
    format!(
        "{} could not run: {problem}; nothing was sent. Tell the user.",
        shorten(tool)
    )
}

/// The one WARN event of a failed call an operator has to act on, with the
/// cause the model is not shown (guide/src/observability.md, "Logs"). The INFO `tool call` event
/// follows it, with the same `outcome`.
pub(crate) fn warn_failure(tool: &str, outcome: &'static str, cause: &str) {
    tracing::warn!(tool, outcome, cause, "tool call failed");
}

/// What the model is told when the alias store did not answer before
/// `tool`'s call: nothing was sent. No cause: it names servers and
/// addresses, and the logs have it.
pub(crate) fn store_before_call(tool: &str) -> String {
    format!(
        "{tool} could not run: the alias store is unavailable, so the ids in the arguments could not be resolved; nothing was sent to the service. A retry may help: try again in a moment, or tell the user."
    )
}

/// What the model is told when the alias store did not answer after
/// `tool`'s call: the call took effect, its answer is withheld.
pub(crate) fn store_after_call(tool: &str) -> String {
    format!(
        "{tool} ran and the service answered, but the answer is withheld: the alias store is unavailable, so the ids in it could not be given aliases, and none was registered. The call took effect: do not repeat it blindly (when it creates or changes something, check first, for example by listing, once the store is back); tell the user."
    )
}
