//! The JSON Schema flavours of the providers a tool is rendered for.

use std::fmt;

/// The JSON Schema flavour a provider accepts for tool parameters.
///
/// See [`render`](crate::render) for what each dialect renders and
/// [`check`](crate::check) for the rules each one is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Canonical JSON Schema (draft 2020-12): the truth the executor enforces.
    JsonSchema,
    /// OpenAI function tools (Chat Completions and Responses); with `strict`,
    /// the Structured Outputs subset.
    OpenAi,
    /// Anthropic `input_schema`; with `strict`, the strict tool-use subset.
    Anthropic,
    /// Gemini `functionDeclarations[].parameters`: a subset of the OpenAPI 3.0
    /// schema object.
    Gemini,
    /// Gemini `functionDeclarations[].parametersJsonSchema`: JSON Schema.
    GeminiJsonSchema,
}

impl Dialect {
    /// Every dialect, canonical first.
    pub const ALL: [Dialect; 5] = [
        Dialect::JsonSchema,
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::GeminiJsonSchema,
    ];

    /// A short stable name: `json_schema`, `openai`, `anthropic`, `gemini`,
    /// `gemini_json_schema`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::JsonSchema => "json_schema",
            Dialect::OpenAi => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::GeminiJsonSchema => "gemini_json_schema",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
