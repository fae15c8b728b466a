//! Prints one tool of `proto/links/v1/links.proto` in the full tool-list
//! shape of every provider: OpenAI Chat Completions and Responses,
//! Anthropic, and Gemini (`parameters` and `parametersJsonSchema`), and
//! checks each list against the provider's per-request limits.
//!
//! Run with `cargo run --example providers` (or pass another tool name:
//! `cargo run --example providers -- links_list`).

use proto_ai_tools::schema::Dialect;
use proto_ai_tools::schema::check::{check, check_request};
use proto_ai_tools::{AgentTool, Toolkit, executor::ProtoExecutor, transport::InProcessTransport};
use serde_json::{Value, json};

mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

fn print(title: &str, value: &Value) {
    println!("== {title}");
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}\n"),
        Err(e) => println!("(not printable: {e})\n"),
    }
}

fn main() {
    let wanted = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "links_update".to_owned());
    let all: &'static [&'static AgentTool] = links::all_tools();
    let Some(agent_tool) = all.iter().find(|t| t.name == wanted) else {
        let names: Vec<&str> = all.iter().map(|t| t.name).collect();
        eprintln!("no tool `{wanted}`; the tools are: {}", names.join(", "));
        std::process::exit(2);
    };

    // The Toolkit renders each provider's shape from the static renderings
    // that `ai_tools!` checked at compile time.
    let executor = ProtoExecutor::new(all, links::descriptor_pool(), InProcessTransport::new());
    let toolkit = match Toolkit::builder().generated(executor).build() {
        Ok(toolkit) => toolkit,
        Err(e) => {
            eprintln!("toolkit: {e}");
            std::process::exit(1);
        }
    };
    let Some(tool) = toolkit.get(&wanted) else {
        eprintln!("the toolkit has no `{wanted}`");
        std::process::exit(1);
    };

    // OpenAI Chat Completions: `tools`.
    let chat = json!([tool.to_openai()]);
    print("OpenAI Chat Completions `tools`", &chat);

    // OpenAI Responses: the same function, flattened.
    let responses = json!([tool.to_openai_responses()]);
    print("OpenAI Responses `tools`", &responses);

    // Anthropic Messages: `tools`.
    let anthropic = json!([tool.to_anthropic()]);
    print("Anthropic `tools`", &anthropic);

    // Gemini: one tool holding the function declarations (OpenAPI subset).
    let gemini = json!([{ "functionDeclarations": [tool.to_gemini()] }]);
    print("Gemini `tools` (parameters)", &gemini);

    // Gemini: the JSON Schema form.
    let gemini_json = json!([{ "functionDeclarations": [tool.to_gemini_json_schema()] }]);
    print("Gemini `tools` (parametersJsonSchema)", &gemini_json);

    // Every schema obeys its dialect, and the list its per-request limits.
    let strict = agent_tool.strict;
    let mut problems = Vec::new();
    for dialect in [
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::GeminiJsonSchema,
    ] {
        let schema = tool.parameters(dialect);
        problems.extend(
            check(dialect, strict, &schema)
                .iter()
                .map(|v| format!("{dialect}: {v}")),
        );
        let request = [(tool.name(), strict, &schema)];
        problems.extend(
            check_request(dialect, &request)
                .iter()
                .map(|v| format!("{dialect} request: {v}")),
        );
    }
    if problems.is_empty() {
        println!("== checks: every shape obeys its provider's rules");
    } else {
        println!("== checks failed:");
        for p in &problems {
            println!("  {p}");
        }
        std::process::exit(1);
    }
}
