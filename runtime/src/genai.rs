//! A [`Toolkit`] in [`genai`](https://docs.rs/genai)'s chat types (feature
//! `genai`): its tools as `genai::chat::Tool`s, and a model's
//! `genai::chat::ToolCall` run into the `genai::chat::ToolResponse` that
//! goes back to the model, aliases included.
//!
//! The model sees aliases (`link-1`), the backend receives the UUIDs behind
//! them; an alias the conversation never issued is refused before any call,
//! with a response that names it and the valid ones, which the model can act
//! on. Aliases belong to one conversation: a [`Toolkit`] holds one alias
//! namespace, so build one per conversation (with
//! [`Sessions::alias_manager`](crate::Sessions::alias_manager) when
//! conversations outlive a request), and keep it beside the conversation's
//! `ChatRequest`. [`Conversation`] does both: it owns the toolkit and the
//! request, so the history and the aliases it mentions cannot part.
//!
//! # Which rendering
//!
//! genai sends a tool's `schema` to the provider the model name resolves to,
//! as that provider's field: OpenAI's `parameters`, Anthropic's
//! `input_schema`, Gemini's `parametersJsonSchema` (never Gemini's OpenAPI
//! `parameters`). No one rendering suits them all: OpenAI strict requires
//! every property and keeps integer bounds, which Anthropic strict refuses;
//! Gemini hands numbers back as doubles, so a 64-bit integer must go as a
//! string of digits there. So the caller names the [`Dialect`] of the
//! provider it talks to:
//!
//! | genai adapter | dialect | `Tool::strict` |
//! |---|---|---|
//! | OpenAI, OpenAI Responses and the OpenAI-compatible ones (Groq, DeepSeek, xAI, Ollama, …) | [`Dialect::OpenAi`] | the tool's `strict` |
//! | Anthropic | [`Dialect::Anthropic`] | the tool's `strict`, within Anthropic's per-request budgets (as [`Toolkit::to_anthropic`]) |
//! | Gemini | [`Dialect::GeminiJsonSchema`] ([`Dialect::Gemini`] is rendered as it: genai sends `parametersJsonSchema`) | unset (Gemini has none) |
//!
//! The adapters that front several providers (Vertex, Bedrock, OpenRouter,
//! GitHub Copilot) and Cohere's have not been checked here; they carry the
//! schema to the provider behind them, so start from that provider's
//! dialect.
//!
//! These are the renderings `ai_tools!` checked against each provider's
//! rules. genai rewrites a strict tool's schema for OpenAI and Anthropic
//! (`genai::chat::sanitize_json_schema`); on these renderings that changes
//! nothing, because they already are the strict subsets
//! (`tests/tests/genai.rs` holds it over every strict tool of the test
//! corpora). Anthropic's `input_examples` are not sent: genai's `Tool` has
//! no field for them.
//!
//! # Errors
//!
//! genai's `ToolResponse` has no error flag: a failed call's response is the
//! sentence saying what went wrong and what to do (the model reads it and
//! corrects itself). [`Toolkit::execute_genai`] and [`Conversation::answer`]
//! never fail: an unknown tool, bad arguments or a failed gRPC call are
//! responses too. Where the flag matters to you (logging, a retry budget),
//! [`Conversation::answer`] returns the [`ToolResult`]s, or run
//! [`Toolkit::execute_with`] and make the response with [`tool_response`].
//!
//! # Examples
//!
//! The tools as genai sends them, and one call:
//!
//! ```
//! use proto_ai_tools::{NativeTool, ToolInput, Toolkit, schema::Dialect};
//! use genai::chat::ToolCall;
//!
//! /// Shout the text.
//! #[derive(serde::Deserialize, ToolInput)]
//! struct Input {
//!     /// What to shout.
//!     text: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
//! let toolkit = Toolkit::builder().native(shout).build().unwrap();
//!
//! let tools = toolkit.to_genai_tools(Dialect::OpenAi);
//! assert_eq!(tools[0].schema.as_ref().unwrap()["required"][0], "text");
//!
//! let call = ToolCall {
//!     call_id: "call_1".into(),
//!     fn_name: "shout".into(),
//!     fn_arguments: serde_json::json!({"text": "hi"}),
//!     thought_signatures: None,
//! };
//! let response = toolkit.execute_genai(&call).await;
//! assert_eq!((response.call_id.as_str(), response.content.as_str()), ("call_1", "hi!"));
//! # }
//! ```
//!
//! A whole conversation, one [`Conversation`] per conversation id, against a
//! gRPC server and a real model:
//!
//! ```no_run
//! mod gentools {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//! # #[cfg(feature = "tonic")] // the transport over tonic
//! use proto_ai_tools::{Sessions, Toolkit, genai::Conversation, schema::Dialect, transport::TonicTransport};
//! use genai::chat::ChatMessage;
//!
//! # #[cfg(feature = "tonic")] // the transport over tonic
//! # async fn run(sessions: &Sessions<TonicTransport>, conversation_id: &str) -> Result<(), Box<dyn std::error::Error>> {
//! let aliases = sessions.alias_manager(conversation_id);
//! let toolkit = Toolkit::builder()
//!     .alias_manager(aliases)
//!     .executor::<gentools::Executor<_>>(sessions.transport().clone())
//!     .build()?;
//! let mut conversation = Conversation::new(toolkit, Dialect::OpenAi);
//! conversation.push(ChatMessage::user("Shorten https://example.com/spring and add an email step."));
//!
//! let client = genai::Client::new()?; // rustls unless your `genai` dependency says otherwise
//! loop {
//!     let response = client.exec_chat("gpt-5-mini", conversation.request().clone(), None).await?;
//!     // Records the model's turn, runs its tool calls and records their responses.
//!     let results = conversation.answer(response).await;
//!     if results.is_empty() {
//!         break; // a text answer: the turn is over
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use genai::chat::{ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolResponse};
use proto_ai_tools_schema::Dialect;
use serde_json::Value;

use crate::inbound::Arguments;
use crate::result::ToolResult;
use crate::toolkit::{Tool, Toolkit};
use crate::transport::CallOptions;

/// The rendering genai sends for `dialect`: its Gemini adapter sends
/// `parametersJsonSchema`, so Gemini's OpenAPI `parameters` never applies.
fn sent_dialect(dialect: Dialect) -> Dialect {
    match dialect {
        Dialect::Gemini => Dialect::GeminiJsonSchema,
        other => other,
    }
}

impl Tool {
    /// The tool as a `genai::chat::Tool`, its parameters rendered for
    /// `dialect` (see the [module docs](crate::genai) for which one).
    ///
    /// `strict` is the tool's own for OpenAI, Anthropic and the canonical
    /// dialect, and unset for Gemini. A list for Anthropic should come from
    /// [`Toolkit::to_genai_tools`], which keeps strict tools within
    /// Anthropic's per-request budgets.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput, schema::Dialect};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { text: String }
    /// let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" })
    ///     .strict(true);
    /// let toolkit = Toolkit::builder().native(shout).build().unwrap();
    /// let tool = toolkit.get("shout").unwrap();
    ///
    /// let openai = tool.to_genai(Dialect::OpenAi);
    /// assert_eq!(openai.description.as_deref(), Some("Shout."));
    /// assert_eq!(openai.schema, Some(tool.parameters(Dialect::OpenAi)));
    /// assert_eq!(openai.strict, Some(true));
    /// assert_eq!(tool.to_genai(Dialect::Gemini).strict, None);
    /// ```
    pub fn to_genai(&self, dialect: Dialect) -> genai::chat::Tool {
        let dialect = sent_dialect(dialect);
        let tool = genai::chat::Tool::new(self.name())
            .with_description(self.description())
            .with_schema(self.parameters(dialect));
        match dialect {
            Dialect::Gemini | Dialect::GeminiJsonSchema => tool,
            Dialect::JsonSchema | Dialect::OpenAi | Dialect::Anthropic => {
                tool.with_strict(self.is_strict())
            }
        }
    }
}

impl Toolkit {
    /// Every tool as a `genai::chat::Tool`, for
    /// `ChatRequest::with_tools`, rendered for `dialect` (see the [module
    /// docs](crate::genai) for which one).
    ///
    /// For Anthropic, the schemas and strictness are those of
    /// [`Toolkit::to_anthropic`]: a strict tool that would overspend
    /// Anthropic's per-request budgets (20 strict tools, 24 optional and 16
    /// union-typed parameters) is sent without `strict`, since Anthropic
    /// refuses the whole request past them.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput, schema::Dialect};
    ///
    /// /// Look something up.
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Lookup {
    ///     /// What to look up.
    ///     query: String,
    /// }
    ///
    /// let lookup = NativeTool::new::<Lookup, _, _>("lookup", "Look something up.", |_, l: Lookup| async move { l.query })
    ///     .strict(true);
    /// let toolkit = Toolkit::builder().native(lookup).build().unwrap();
    /// let tools = toolkit.to_genai_tools(Dialect::Anthropic);
    /// let ours = &toolkit.to_anthropic()[0];
    /// assert_eq!(tools[0].schema.as_ref(), Some(&ours["input_schema"]));
    /// assert_eq!(tools[0].strict, Some(true));
    /// let request = genai::chat::ChatRequest::from_user("Look up genai.").with_tools(tools);
    /// assert_eq!(request.tools.unwrap().len(), 1);
    /// ```
    pub fn to_genai_tools(&self, dialect: Dialect) -> Vec<genai::chat::Tool> {
        let dialect = sent_dialect(dialect);
        if dialect != Dialect::Anthropic {
            return self.tools().iter().map(|t| t.to_genai(dialect)).collect();
        }
        // One rendering, budget included: `to_anthropic` leaves `strict`
        // out of the strict tools past the budgets.
        let rendered = self.to_anthropic();
        let rendered = rendered.as_array().map(Vec::as_slice).unwrap_or_default();
        self.tools()
            .iter()
            .zip(rendered)
            .map(|(tool, shape)| {
                let schema = shape
                    .get("input_schema")
                    .cloned()
                    .unwrap_or_else(|| tool.parameters(Dialect::Anthropic));
                let tool = genai::chat::Tool::new(tool.name())
                    .with_description(tool.description())
                    .with_schema(schema);
                match shape.get("strict").and_then(Value::as_bool) {
                    Some(strict) => tool.with_strict(strict),
                    None => tool,
                }
            })
            .collect()
    }

    /// Runs a model's tool call and makes the response that goes back to it:
    /// the result's text (JSON on success, a sentence saying what to do on
    /// failure) under the call's id and function name (Gemini matches a
    /// response by name). Never fails; see [`execute`](Self::execute).
    ///
    /// Arguments that are `null` (Gemini's for a call without arguments) run
    /// as `{}`; arguments a provider left as a string (a streamed call
    /// genai could not parse) run as that JSON text, so a syntax error is
    /// reported where it is.
    ///
    /// # Examples
    ///
    /// See the [module docs](crate::genai).
    pub async fn execute_genai(&self, call: &ToolCall) -> ToolResponse {
        self.execute_genai_with(call, &CallOptions::new()).await
    }

    /// [`execute_genai`](Self::execute_genai) on behalf of one end user:
    /// `options` (credentials, tenant, a deadline) override the toolkit's
    /// defaults key by key, as in [`execute_with`](Self::execute_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{CallOptions, NativeTool, ToolInput, Toolkit};
    /// /// No arguments.
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Nothing {}
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let whoami = NativeTool::new::<Nothing, _, _>("whoami", "Who is calling.", |ctx, _| async move {
    ///     ctx.call_options().metadata.iter().find(|(k, _)| k == "x-user").map(|(_, v)| v.clone()).unwrap_or_default()
    /// });
    /// let toolkit = Toolkit::builder().native(whoami).build().unwrap();
    /// let call = genai::chat::ToolCall {
    ///     call_id: "call_7".into(),
    ///     fn_name: "whoami".into(),
    ///     fn_arguments: serde_json::Value::Null,
    ///     thought_signatures: None,
    /// };
    /// let user = CallOptions::new().metadata("x-user", "user-42");
    /// let response = toolkit.execute_genai_with(&call, &user).await;
    /// assert_eq!(response.content, "user-42");
    /// assert_eq!(response.fn_name.as_deref(), Some("whoami"));
    /// # }
    /// ```
    pub async fn execute_genai_with(&self, call: &ToolCall, options: &CallOptions) -> ToolResponse {
        let result = self
            .execute_with(&call.fn_name, arguments_of(call), options)
            .await;
        tool_response(call, &result)
    }
}

/// A call's arguments as the executor takes them: `null` (Gemini's for a
/// call without arguments) as `{}`, a string (arguments genai could not
/// parse) as the JSON text it holds, so that its error says where it breaks.
fn arguments_of(call: &ToolCall) -> Arguments<'_> {
    match &call.fn_arguments {
        Value::Null => Arguments::Text(""),
        Value::String(text) => Arguments::Text(text),
        value => Arguments::Value(value.clone()),
    }
}

/// The response to `call` carrying `result`: its output under the call's id
/// and function name. genai's `ToolResponse` has no error flag; a failed
/// result's output is a sentence the model can act on.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{ToolResult, genai::tool_response};
/// let call = genai::chat::ToolCall {
///     call_id: "call_1".into(),
///     fn_name: "links_create".into(),
///     fn_arguments: serde_json::json!({}),
///     thought_signatures: None,
/// };
/// let response = tool_response(&call, &ToolResult::error("destination is required"));
/// assert_eq!(response.call_id, "call_1");
/// assert_eq!(response.fn_name.as_deref(), Some("links_create"));
/// assert_eq!(response.content, "destination is required");
/// ```
pub fn tool_response(call: &ToolCall, result: &ToolResult) -> ToolResponse {
    ToolResponse::from_tool_call(call, result.output.clone())
}

/// One conversation with a model through genai: its `ChatRequest` (the
/// history, with the toolkit's tools) and its [`Toolkit`] (the alias
/// namespace of the ids in that history), kept together.
///
/// The toolkit is owned, and a [`Toolkit`] is not `Clone`: two
/// conversations hold two toolkits, so `link-1` of one never resolves in
/// the other unless both were built on the same
/// [`AliasManager`](crate::AliasManager) on purpose. For a conversation
/// that outlives a process or request, keep the request (genai's types are
/// serde) and the aliases ([`Sessions`](crate::Sessions), a
/// [`store`](crate::store)), and [`resume`](Self::resume) it.
///
/// # Examples
///
/// A turn of a scripted model (a real one comes from
/// `genai::Client::exec_chat(model, conversation.request().clone(), None)`):
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput, genai::Conversation, schema::Dialect};
/// use genai::ModelIden;
/// use genai::adapter::AdapterKind;
/// use genai::chat::{ChatMessage, ChatResponse, MessageContent, ToolCall, Usage};
///
/// /// Shout the text.
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Input {
///     /// What to shout.
///     text: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
/// let toolkit = Toolkit::builder().native(shout).build().unwrap();
/// let mut conversation = Conversation::new(toolkit, Dialect::Anthropic);
/// conversation.push(ChatMessage::user("Shout hello."));
/// assert_eq!(conversation.request().tools.as_ref().unwrap()[0].name.to_string(), "shout");
///
/// let model = ModelIden::new(AdapterKind::Anthropic, "claude-sonnet-4-5");
/// let response = ChatResponse {
///     content: MessageContent::from_tool_calls(vec![ToolCall {
///         call_id: "toolu_1".into(),
///         fn_name: "shout".into(),
///         fn_arguments: serde_json::json!({"text": "hello"}),
///         thought_signatures: None,
///     }]),
///     reasoning_content: None,
///     model_iden: model.clone(),
///     provider_model_iden: model,
///     stop_reason: None,
///     usage: Usage::default(),
///     captured_raw_body: None,
///     response_id: None,
/// };
/// let results = conversation.answer(response).await;
/// assert_eq!(results.len(), 1);
/// assert!(!results[0].is_error);
///
/// // user, assistant (the call), tool (the response)
/// let messages = &conversation.request().messages;
/// assert_eq!(messages.len(), 3);
/// let responses = messages[2].content.tool_responses();
/// assert_eq!((responses[0].call_id.as_str(), responses[0].content.as_str()), ("toolu_1", "hello!"));
/// # }
/// ```
#[derive(Debug)]
pub struct Conversation {
    toolkit: Toolkit,
    request: ChatRequest,
}

impl Conversation {
    /// A new conversation over `toolkit`: an empty request carrying its
    /// tools rendered for `dialect` ([`Toolkit::to_genai_tools`]).
    ///
    /// # Examples
    ///
    /// See [`Conversation`].
    pub fn new(toolkit: Toolkit, dialect: Dialect) -> Self {
        Self::resume(toolkit, ChatRequest::default(), dialect)
    }

    /// A conversation carried on: `request` as it was kept (its messages,
    /// system prompt and options), its tools replaced by `toolkit`'s
    /// rendered for `dialect`. `toolkit` must hold the conversation's
    /// aliases (built with the same conversation id's
    /// [`Sessions::alias_manager`](crate::Sessions::alias_manager)), or the
    /// aliases in the history will be refused as never issued.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{Sessions, Toolkit, genai::Conversation, schema::Dialect, transport::InProcessTransport};
    /// use genai::chat::{ChatMessage, ChatRequest};
    ///
    /// let sessions = Sessions::new(InProcessTransport::new(), std::time::Duration::from_secs(1800));
    /// let kept: ChatRequest = serde_json::from_str(r#"{"messages":[{"role":"User","content":[{"Text":"Hello"}]}]}"#).unwrap();
    /// let toolkit = Toolkit::builder().alias_manager(sessions.alias_manager("conversation-42")).build().unwrap();
    /// let mut conversation = Conversation::resume(toolkit, kept, Dialect::OpenAi);
    /// conversation.push(ChatMessage::user("And now?"));
    /// assert_eq!(conversation.request().messages.len(), 2);
    /// ```
    pub fn resume(toolkit: Toolkit, request: ChatRequest, dialect: Dialect) -> Self {
        let request = ChatRequest {
            tools: Some(toolkit.to_genai_tools(dialect)),
            ..request
        };
        Self { toolkit, request }
    }

    /// The request to send next: `client.exec_chat(model,
    /// conversation.request().clone(), options)`.
    ///
    /// # Examples
    ///
    /// See [`Conversation`].
    pub fn request(&self) -> &ChatRequest {
        &self.request
    }

    /// The request, to change what is not a message (the system prompt,
    /// `previous_response_id`) or to edit the history.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{Toolkit, genai::Conversation, schema::Dialect};
    /// let mut conversation = Conversation::new(Toolkit::builder().build().unwrap(), Dialect::OpenAi);
    /// conversation.request_mut().system = Some("Answer briefly.".into());
    /// assert_eq!(conversation.request().system.as_deref(), Some("Answer briefly."));
    /// ```
    pub fn request_mut(&mut self) -> &mut ChatRequest {
        &mut self.request
    }

    /// The conversation's toolkit (and through it, its
    /// [`alias_manager`](Toolkit::alias_manager): register ids you put into
    /// a prompt, and aliasify the prompt).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{Toolkit, genai::Conversation, schema::Dialect};
    /// let conversation = Conversation::new(Toolkit::builder().build().unwrap(), Dialect::OpenAi);
    /// assert!(conversation.toolkit().tools().is_empty());
    /// ```
    pub fn toolkit(&self) -> &Toolkit {
        &self.toolkit
    }

    /// The toolkit and the request, to keep the request elsewhere.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{Toolkit, genai::Conversation, schema::Dialect};
    /// let conversation = Conversation::new(Toolkit::builder().build().unwrap(), Dialect::OpenAi);
    /// let (_toolkit, request) = conversation.into_parts();
    /// let kept = serde_json::to_string(&request).unwrap();
    /// # let _ = kept;
    /// ```
    pub fn into_parts(self) -> (Toolkit, ChatRequest) {
        (self.toolkit, self.request)
    }

    /// Appends a message: the user's, or any other.
    ///
    /// # Examples
    ///
    /// See [`Conversation`].
    pub fn push(&mut self, message: impl Into<ChatMessage>) {
        self.request.messages.push(message.into());
    }

    /// Records the model's turn and runs its tool calls: the response
    /// becomes an assistant message (its reasoning and thought signatures
    /// kept, which providers want back), each tool call runs in the order
    /// the model gave them, and their responses are appended as one tool
    /// message. Returns the results, one per call in that order; none when
    /// the model answered without calling a tool (the turn is over).
    ///
    /// Calls run one after another, not at once: the aliases they issue are
    /// then numbered in the order the model wrote the calls, the same on
    /// every run.
    ///
    /// # Examples
    ///
    /// See [`Conversation`].
    pub async fn answer(&mut self, response: ChatResponse) -> Vec<ToolResult> {
        self.answer_with(response, &CallOptions::new()).await
    }

    /// [`answer`](Self::answer) on behalf of one end user: every call
    /// carries `options`, as in [`Toolkit::execute_with`].
    ///
    /// # Examples
    ///
    /// See [`Toolkit::execute_genai_with`] for what `options` do.
    pub async fn answer_with(
        &mut self,
        response: ChatResponse,
        options: &CallOptions,
    ) -> Vec<ToolResult> {
        let calls: Vec<ToolCall> = response.tool_calls().into_iter().cloned().collect();
        if calls.is_empty() {
            if !response.content.is_empty() {
                self.push(ChatMessage::assistant(response.content));
            }
            return Vec::new();
        }
        if let Some(message) = response.into_assistant_message_for_tool_use() {
            self.push(message);
        }
        let mut results = Vec::with_capacity(calls.len());
        let mut responses = Vec::with_capacity(calls.len());
        for call in &calls {
            let result = self
                .toolkit
                .execute_with(&call.fn_name, arguments_of(call), options)
                .await;
            responses.push(tool_response(call, &result));
            results.push(result);
        }
        self.push(responses);
        results
    }
}
