//! Typed conversions into [`async-openai`](https://docs.rs/async-openai)'s
//! tool types, for code that already builds its requests with that crate
//! (feature `async-openai`; only its type modules are pulled in, no HTTP
//! client).
//!
//! The values are the same as [`Tool::to_openai`] and
//! [`Tool::to_openai_responses`]: the OpenAI rendering that `ai_tools!`
//! checked at compile time (or the native tool's, checked when the
//! [`Toolkit`] was built).
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
//! use async_openai::types::chat::ChatCompletionTool;
//!
//! /// Shout the text.
//! #[derive(serde::Deserialize, ToolInput)]
//! struct Input {
//!     /// What to shout.
//!     text: String,
//! }
//!
//! let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
//! let toolkit = Toolkit::builder().native(shout).build().unwrap();
//!
//! let chat: Vec<ChatCompletionTool> = toolkit.to_async_openai_chat_tools();
//! assert_eq!(chat[0].function.name, "shout");
//! assert_eq!(chat[0].function.parameters.as_ref().unwrap()["required"][0], "text");
//! ```

use async_openai::types::chat::{ChatCompletionTool, FunctionObject};
use async_openai::types::responses::FunctionTool;
use serde_json::Value;

use crate::toolkit::{Tool, Toolkit};

fn openai_function(tool: &Tool) -> (String, String, Value, bool) {
    (
        tool.name().to_owned(),
        tool.description().to_owned(),
        tool.parameters(proto_ai_tools_schema::Dialect::OpenAi),
        tool.is_strict(),
    )
}

impl From<&Tool> for FunctionObject {
    /// The tool as a Chat Completions function.
    fn from(tool: &Tool) -> Self {
        let (name, description, parameters, strict) = openai_function(tool);
        FunctionObject {
            name,
            description: Some(description),
            parameters: Some(parameters),
            strict: Some(strict),
        }
    }
}

impl From<&Tool> for ChatCompletionTool {
    /// The tool as a Chat Completions `tools` entry.
    fn from(tool: &Tool) -> Self {
        ChatCompletionTool {
            function: tool.into(),
        }
    }
}

impl From<&Tool> for FunctionTool {
    /// The tool as a Responses function tool.
    fn from(tool: &Tool) -> Self {
        let (name, description, parameters, strict) = openai_function(tool);
        FunctionTool {
            name,
            description: Some(description),
            parameters: Some(parameters),
            strict: Some(strict),
            ..FunctionTool::default()
        }
    }
}

impl Toolkit {
    /// Every tool as an `async_openai` Chat Completions tool: serialized,
    /// the same JSON as [`Toolkit::to_openai`] gives.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    ///
    /// /// Look something up.
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Lookup {
    ///     /// What to look up.
    ///     query: String,
    ///     /// How many results.
    ///     limit: Option<u32>,
    /// }
    ///
    /// let lookup = NativeTool::new::<Lookup, _, _>("lookup", "Look something up.", |_, l: Lookup| async move { l.query })
    ///     .strict(true);
    /// let toolkit = Toolkit::builder().native(lookup).build().unwrap();
    /// let typed = serde_json::to_value(toolkit.to_async_openai_chat_tools()).unwrap();
    /// assert_eq!(typed[0]["function"], toolkit.to_openai()[0]["function"]);
    /// ```
    pub fn to_async_openai_chat_tools(&self) -> Vec<ChatCompletionTool> {
        self.tools().iter().map(ChatCompletionTool::from).collect()
    }

    /// Every tool as an `async_openai` Responses function tool: serialized,
    /// the same name, description, parameters and strictness as
    /// [`Toolkit::to_openai_responses`] gives.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
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
    /// let typed = serde_json::to_value(toolkit.to_async_openai_responses_tools()).unwrap();
    /// let ours = toolkit.to_openai_responses();
    /// for key in ["name", "description", "parameters", "strict"] {
    ///     assert_eq!(typed[0][key], ours[0][key], "{key}");
    /// }
    /// assert_eq!(typed[0]["strict"], true);
    /// ```
    pub fn to_async_openai_responses_tools(&self) -> Vec<FunctionTool> {
        self.tools().iter().map(FunctionTool::from).collect()
    }
}
