//! A complete agent loop: a model, the links tools `ai_tools!` generates plus
//! one native tool, and a real gRPC server (started in-process on loopback).
//!
//! With `OPENAI_API_KEY` set, the model is OpenAI's, over the Chat Completions
//! API with a plain HTTP client (`OPENAI_MODEL` picks the model, default
//! `gpt-4.1-mini`; `OPENAI_BASE_URL` another compatible endpoint). Without
//! it, a scripted model plays the same part offline, so this always runs:
//!
//! ```text
//! cargo run -p proto-ai-tools-tests --example agent_openai
//! OPENAI_API_KEY=sk-... cargo run -p proto-ai-tools-tests --example agent_openai -- "Make a link to https://example.com/spring called Spring sale, and email me on every visit"
//! ```
//!
//! The loop is what any provider needs: send the conversation and the tool
//! list, run every tool call the model makes through `Toolkit::execute`, send
//! each result back as a `tool` message (errors too: the model reads them and
//! corrects itself), until the model answers in text.

use std::time::Duration;

use proto_ai_tools::{
    NativeTool, Sessions, ToolError, ToolInput, Toolkit, transport::TonicTransport,
};
use proto_ai_tools_tests::{LinksBackend, serve};
use serde_json::{Value, json};

mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

/// The most model turns one user request may take.
const MAX_TURNS: usize = 8;

/// Write the text a user can paste to share a link.
#[derive(serde::Deserialize, ToolInput)]
struct ShareInput {
    /// The link to share.
    #[tool(
        alias_prefix = "link",
        usage_notes = "Use an id returned by a links tool; never invent one."
    )]
    link_id: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Something that answers a conversation with the next assistant message
/// (Chat Completions shape: `content` and/or `tool_calls`).
enum Model {
    OpenAi {
        key: String,
        model: String,
        base_url: String,
    },
    Scripted {
        turn: usize,
    },
}

impl Model {
    fn from_env() -> Self {
        match std::env::var("OPENAI_API_KEY") {
            Ok(key) if !key.trim().is_empty() => Model::OpenAi {
                key: key.trim().to_owned(),
                model: std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned()),
                base_url: std::env::var("OPENAI_BASE_URL")
                    .unwrap_or_else(|_| "https://api.openai.com/v1".to_owned()),
            },
            _ => Model::Scripted { turn: 0 },
        }
    }

    fn name(&self) -> String {
        match self {
            Model::OpenAi { model, .. } => format!("OpenAI {model}"),
            Model::Scripted { .. } => "a scripted model (set OPENAI_API_KEY for OpenAI's)".into(),
        }
    }

    async fn next(&mut self, messages: &[Value], tools: &Value) -> Result<Value, BoxError> {
        match self {
            Model::OpenAi {
                key,
                model,
                base_url,
            } => {
                let body = json!({
                    "model": model,
                    "messages": messages,
                    "tools": tools,
                    // Strict schemas are only guaranteed one call at a time.
                    "parallel_tool_calls": false,
                });
                let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
                let key = key.clone();
                // ureq is a small blocking client: run it off the async threads.
                let reply =
                    tokio::task::spawn_blocking(move || post_json(&url, &key, &body)).await??;
                reply["choices"][0]["message"]
                    .as_object()
                    .map(|m| Value::Object(m.clone()))
                    .ok_or_else(|| format!("unexpected reply from OpenAI: {reply}").into())
            }
            Model::Scripted { turn } => {
                *turn += 1;
                Ok(scripted(*turn, messages))
            }
        }
    }
}

/// POSTs `body` as JSON with a bearer key; the reply's JSON, or the API's error text.
fn post_json(url: &str, key: &str, body: &Value) -> Result<Value, BoxError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(url)
        .header("authorization", &format!("Bearer {key}"))
        .header("content-type", "application/json")
        .send(body.to_string().as_bytes())?;
    let status = response.status();
    let text = response.body_mut().read_to_string()?;
    if !status.is_success() {
        return Err(format!("OpenAI answered {status}: {text}").into());
    }
    Ok(serde_json::from_str(&text)?)
}

/// The scripted model: what a model typically does with this request,
/// reading the ids it needs from the tool results it got, and inventing one
/// once to show the correction.
fn scripted(turn: usize, messages: &[Value]) -> Value {
    let call = |id: &str, name: &str, args: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    // The id of the entity the last tool result returned, as the model sees it.
    let last_id = |key: &str| {
        messages
            .iter()
            .rev()
            .filter(|m| m["role"] == "tool")
            .find_map(|m| {
                let out: Value = serde_json::from_str(m["content"].as_str()?).ok()?;
                out[key]["id"].as_str().map(str::to_owned)
            })
            .unwrap_or_default()
    };
    match turn {
        1 => json!({"role": "assistant", "content": null, "tool_calls": [call(
            "call_1",
            "links_create",
            json!({"destination": "https://example.com/spring", "name": "Spring sale", "shortlink": null, "tags": ["promo"]}),
        )]}),
        2 => {
            let link = last_id("link");
            json!({"role": "assistant", "content": null, "tool_calls": [
                call("call_2", "workflow_steps_create", json!({"link_id": link, "action": "ACTION_EMAIL"})),
                call("call_3", "links_share_text", json!({"link_id": link})),
            ]})
        }
        // The model gets an id wrong: the tool says so, naming the valid ones.
        3 => json!({"role": "assistant", "content": null, "tool_calls": [call(
            "call_4",
            "links_update",
            json!({"link_id": "link-7", "name": "Spring sale 2027", "destination": null}),
        )]}),
        4 => json!({"role": "assistant", "content": null, "tool_calls": [call(
            "call_5",
            "links_update",
            json!({"link_id": last_id("link"), "name": "Spring sale 2027", "destination": null}),
        )]}),
        _ => {
            let share = messages
                .iter()
                .find(|m| m["tool_call_id"] == "call_3")
                .and_then(|m| m["content"].as_str())
                .unwrap_or("the link is ready");
            json!({"role": "assistant", "content": format!(
                "Done: {} is named \"Spring sale 2027\", and you get an email on every visit. {share}",
                last_id("link")
            )})
        }
    }
}

fn toolkit(
    sessions: &Sessions<TonicTransport>,
    conversation: &str,
    backend: LinksBackend,
) -> Result<Toolkit, proto_ai_tools::toolkit::ToolkitError> {
    let aliases = sessions.alias_manager(conversation);
    let share = NativeTool::new::<ShareInput, _, _>(
        "links_share_text",
        "Write the text a user can paste to share a link.",
        move |_ctx, input: ShareInput| {
            let link = backend.links().into_iter().find(|l| l.id == input.link_id);
            async move {
                let link = link.ok_or_else(|| ToolError::new("that link no longer exists"))?;
                Ok(format!(
                    "Share it as https://sho.rt/{} (goes to {}).",
                    link.shortlink, link.destination
                ))
            }
        },
    );
    Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(links::Executor::with_alias_manager(
            sessions.transport().clone(),
            aliases,
        ))
        .native(share)
        .build()
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let request = std::env::args().nth(1).unwrap_or_else(|| {
        "Make a short link to https://example.com/spring called \"Spring sale\", email me on \
         every visit, give me the text to share it, then rename it to \"Spring sale 2027\"."
            .to_owned()
    });

    let server = serve(LinksBackend::with_links(2)).await?;
    let channel = tonic::transport::Channel::from_shared(server.url())?
        .connect()
        .await?;
    let sessions = Sessions::new(TonicTransport::new(channel), Duration::from_secs(1800));
    let conversation = "conversation-42";
    let toolkit = toolkit(&sessions, conversation, server.backend.clone())?;
    let tools = toolkit.to_openai();

    // Context that names an id goes through the same namespace: the model
    // never meets a raw UUID.
    let aliases = toolkit.alias_manager();
    let existing = server.backend.links()[0].id.clone();
    aliases.register("link", &existing).await?;
    let system = aliases.aliasify_text(&format!(
        "You manage short links. The user was last looking at link {existing}. \
         Ids look like link-1: use them exactly as tools return them."
    ));

    let mut model = Model::from_env();
    println!("model: {}", model.name());
    println!("system: {system}");
    println!("user: {request}\n");
    let mut messages = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": request}),
    ];
    let mut answered = false;
    for _ in 0..MAX_TURNS {
        let message = model.next(&messages, &tools).await?;
        messages.push(message.clone());
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if calls.is_empty() {
            println!(
                "assistant: {}",
                message["content"].as_str().unwrap_or_default()
            );
            answered = true;
            break;
        }
        for call in calls {
            let name = call["function"]["name"].as_str().unwrap_or_default();
            let args = call["function"]["arguments"].as_str().unwrap_or("{}");
            println!("model → {name} {args}");
            let result = toolkit.execute(name, args).await;
            let tag = if result.is_error { "error" } else { "ok" };
            println!("model ← [{tag}] {}\n", clip(&result.output, 400));
            messages.push(json!({
                "role": "tool",
                "tool_call_id": call["id"],
                "content": result.output,
            }));
        }
    }
    if !answered {
        println!("(stopped after {MAX_TURNS} model turns)");
    }

    let seen: Vec<String> = aliases
        .snapshot()
        .entries
        .iter()
        .map(|e| e.alias.clone())
        .collect();
    println!("\naliases of {conversation}: {seen:?}");
    server.shutdown().await;
    Ok(())
}
