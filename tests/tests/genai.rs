//! `proto_ai_tools::genai` against the real links service: conversations through
//! genai's own chat types, with the model's turns scripted as a provider
//! would return them (no provider is called), and genai's own client
//! sending the tools and the tool responses to providers on loopback.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use genai::ModelIden;
use genai::adapter::AdapterKind;
use genai::chat::{
    ChatMessage, ChatResponse, ChatRole, JsonSchemaDialect, MessageContent, ToolCall, ToolResponse,
    Usage, sanitize_json_schema,
};
use proto_ai_tools::genai::Conversation;
use proto_ai_tools::schema::{Dialect, check};
use proto_ai_tools::{Sessions, Toolkit, transport::TonicTransport};
use proto_ai_tools_tests::tools::links;
use proto_ai_tools_tests::{LinksBackend, Received, serve};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// The conversation's toolkit: the links tools over the conversation's
/// alias namespace in `sessions`.
fn toolkit_for(sessions: &Sessions<TonicTransport>, conversation_id: &str) -> Toolkit {
    let aliases = sessions.alias_manager(conversation_id);
    Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(links::Executor::with_alias_manager(
            sessions.transport().clone(),
            aliases,
        ))
        .build()
        .unwrap()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        call_id: id.to_owned(),
        fn_name: name.to_owned(),
        fn_arguments: arguments,
        thought_signatures: None,
    }
}

/// A model's turn as genai hands it over from `adapter`.
fn model_turn(adapter: AdapterKind, content: MessageContent) -> ChatResponse {
    let model = ModelIden::new(adapter, "scripted");
    ChatResponse {
        content,
        reasoning_content: None,
        model_iden: model.clone(),
        provider_model_iden: model,
        stop_reason: None,
        usage: Usage::default(),
        captured_raw_body: None,
        response_id: None,
    }
}

fn calls(adapter: AdapterKind, calls: Vec<ToolCall>) -> ChatResponse {
    model_turn(adapter, MessageContent::from_tool_calls(calls))
}

/// The tool responses of the conversation's last message (a tool message).
fn last_responses(conversation: &Conversation) -> Vec<ToolResponse> {
    let last = conversation.request().messages.last().unwrap();
    assert!(matches!(last.role, ChatRole::Tool), "{last:?}");
    last.content.tool_responses().into_iter().cloned().collect()
}

fn created_link_id(response: &ToolResponse) -> String {
    let output: Value = serde_json::from_str(&response.content).unwrap();
    output["link"]["id"].as_str().unwrap().to_owned()
}

fn step_link_ids(backend: &LinksBackend) -> Vec<String> {
    backend
        .received()
        .into_iter()
        .filter_map(|r| match r {
            Received::CreateWorkflowStep(request) => Some(request.link_id),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_through_genai_types() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.unwrap();
    let sessions = Sessions::new(
        TonicTransport::new(server.channel().unwrap()),
        Duration::from_secs(60),
    );
    let toolkit = toolkit_for(&sessions, "conversation-1");
    let openai = toolkit.to_openai();
    let mut conversation = Conversation::new(toolkit, Dialect::OpenAi);

    // The tools in the request are the OpenAI renderings, and each passes
    // OpenAI's checker as it stands in the genai tool.
    let tools = conversation.request().tools.clone().unwrap();
    assert_eq!(tools.len(), 5);
    for (tool, ours) in tools.iter().zip(openai.as_array().unwrap()) {
        let function = &ours["function"];
        assert_eq!(tool.name.to_string(), function["name"]);
        assert_eq!(
            tool.description.as_deref(),
            function["description"].as_str()
        );
        assert_eq!(tool.schema.as_ref(), Some(&function["parameters"]));
        assert_eq!(tool.strict, function["strict"].as_bool());
        let schema = tool.schema.as_ref().unwrap();
        let strict = tool.strict == Some(true);
        assert_eq!(check::check(Dialect::OpenAi, strict, schema), vec![]);
    }
    conversation.push(ChatMessage::user(
        "Shorten https://example.com/spring and email me on every visit.",
    ));

    // Turn 1: the model creates a link; the response shows its alias only.
    let results = conversation
        .answer(calls(
            AdapterKind::OpenAI,
            vec![call(
                "call_1",
                "links_create",
                json!({"destination": "https://example.com/spring"}),
            )],
        ))
        .await;
    assert_eq!(results.len(), 1);
    assert!(!results[0].is_error, "{}", results[0].output);
    let responses = last_responses(&conversation);
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].call_id, "call_1");
    assert_eq!(responses[0].fn_name.as_deref(), Some("links_create"));
    assert_eq!(responses[0].content, results[0].output);
    assert_eq!(created_link_id(&responses[0]), "link-1");
    let uuid = backend.links()[0].id.clone();
    assert!(
        !responses[0].content.contains(&uuid),
        "{}",
        responses[0].content
    );

    // Turn 2: the model uses the alias; the server receives the UUID.
    let results = conversation
        .answer(calls(
            AdapterKind::OpenAI,
            vec![call(
                "call_2",
                "workflow_steps_create",
                json!({"link_id": "link-1", "action": "ACTION_EMAIL"}),
            )],
        ))
        .await;
    assert!(!results[0].is_error, "{}", results[0].output);
    assert_eq!(step_link_ids(&backend), std::slice::from_ref(&uuid));
    let step: Value = serde_json::from_str(&last_responses(&conversation)[0].content).unwrap();
    assert_eq!(step["step"]["link_id"], "link-1");
    assert_eq!(step["step"]["id"], "step-1");

    // Turn 3: an invented alias is refused before any call, and the
    // response names it and the valid one.
    let sent = backend.received().len();
    let results = conversation
        .answer(calls(
            AdapterKind::OpenAI,
            vec![call(
                "call_3",
                "workflow_steps_create",
                json!({"link_id": "link-7", "action": "ACTION_WEBHOOK"}),
            )],
        ))
        .await;
    assert!(results[0].is_error);
    let refused = &last_responses(&conversation)[0];
    assert_eq!(refused.call_id, "call_3");
    assert!(
        refused.content.contains("link-7") && refused.content.contains("link-1"),
        "{}",
        refused.content
    );
    assert_eq!(backend.received().len(), sent, "nothing reached the server");

    // Turn 4: two calls at once; their aliases are numbered in the order
    // the model wrote them.
    let results = conversation
        .answer(calls(
            AdapterKind::OpenAI,
            vec![
                call(
                    "call_4",
                    "links_create",
                    json!({"destination": "https://a.example"}),
                ),
                call(
                    "call_5",
                    "links_create",
                    json!({"destination": "https://b.example"}),
                ),
            ],
        ))
        .await;
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    let responses = last_responses(&conversation);
    let ids: Vec<(String, String)> = responses
        .iter()
        .map(|r| (r.call_id.clone(), created_link_id(r)))
        .collect();
    assert_eq!(
        ids,
        [
            ("call_4".to_owned(), "link-2".to_owned()),
            ("call_5".to_owned(), "link-3".to_owned())
        ]
    );
    let destinations: Vec<String> = backend
        .links()
        .iter()
        .map(|l| l.destination.clone())
        .collect();
    assert_eq!(
        destinations,
        [
            "https://b.example",
            "https://a.example",
            "https://example.com/spring"
        ]
    );

    // Turn 5: a text answer ends the turn, and stays in the history.
    let results = conversation
        .answer(model_turn(
            AdapterKind::OpenAI,
            MessageContent::from_text("Done: link-1 emails you on every visit."),
        ))
        .await;
    assert!(results.is_empty());
    let roles: Vec<String> = conversation
        .request()
        .messages
        .iter()
        .map(|m| format!("{:?}", m.role))
        .collect();
    assert_eq!(
        roles,
        [
            "User",
            "Assistant",
            "Tool",
            "Assistant",
            "Tool",
            "Assistant",
            "Tool",
            "Assistant",
            "Tool",
            "Assistant"
        ]
    );
    // Each assistant message holds the calls its tool message answers.
    let messages = &conversation.request().messages;
    for pair in messages[1..9].chunks(2) {
        let asked: Vec<&str> = pair[0]
            .content
            .tool_calls()
            .iter()
            .map(|c| c.call_id.as_str())
            .collect();
        let answered: Vec<&str> = pair[1]
            .content
            .tool_responses()
            .iter()
            .map(|r| r.call_id.as_str())
            .collect();
        assert_eq!(asked, answered);
    }

    // The namespace is the session's: a conversation resumed from the kept
    // request with a fresh toolkit of the same id still knows link-1.
    let (_, kept) = conversation.into_parts();
    let kept: genai::chat::ChatRequest =
        serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
    let mut resumed = Conversation::resume(
        toolkit_for(&sessions, "conversation-1"),
        kept,
        Dialect::Anthropic,
    );
    let results = resumed
        .answer(calls(
            AdapterKind::Anthropic,
            vec![call(
                "toolu_6",
                "workflow_steps_create",
                json!({"link_id": "link-1", "action": "ACTION_WEBHOOK"}),
            )],
        ))
        .await;
    assert!(!results[0].is_error, "{}", results[0].output);
    assert_eq!(step_link_ids(&backend), [uuid.clone(), uuid]);
    assert_eq!(resumed.request().messages.len(), 12);
    // ... and its tools are now rendered for Anthropic.
    let anthropic = resumed.toolkit().to_anthropic();
    let tools = resumed.request().tools.as_ref().unwrap();
    for (tool, ours) in tools.iter().zip(anthropic.as_array().unwrap()) {
        assert_eq!(tool.schema.as_ref(), Some(&ours["input_schema"]));
    }
}

/// Arguments as genai hands them over from each provider: Gemini's `null`
/// for a call without arguments, and a string a streamed call was left as.
#[tokio::test]
async fn arguments_as_providers_leave_them() {
    let backend = LinksBackend::with_links(2);
    let server = serve(backend.clone()).await.unwrap();
    let sessions = Sessions::new(
        TonicTransport::new(server.channel().unwrap()),
        Duration::from_secs(60),
    );
    let toolkit = toolkit_for(&sessions, "c");

    let listed = toolkit
        .execute_genai(&call("1", "links_list", Value::Null))
        .await;
    let listed: Value = serde_json::from_str(&listed.content).unwrap();
    assert_eq!(listed["links"][1]["id"], "link-2", "{listed}");

    let text = call(
        "2",
        "links_update",
        Value::String(r#"{"link_id":"link-1","name":"Renamed"}"#.to_owned()),
    );
    let updated = toolkit.execute_genai(&text).await;
    assert!(updated.content.contains("Renamed"), "{}", updated.content);
    let Some(Received::UpdateLink(request)) = backend.received().last().cloned() else {
        panic!("no update")
    };
    assert_eq!(request.link_id, backend.links()[0].id);

    let broken = toolkit
        .execute_genai(&call(
            "3",
            "links_update",
            Value::String(r#"{"link_id":"#.to_owned()),
        ))
        .await;
    assert!(broken.content.contains("JSON"), "{}", broken.content);

    let unknown = toolkit
        .execute_genai(&call("4", "links_delete", json!({})))
        .await;
    assert_eq!(unknown.call_id, "4");
    assert!(
        unknown.content.contains("unknown tool `links_delete`")
            && unknown.content.contains("links_create"),
        "{}",
        unknown.content
    );
}

/// Two conversations at once, each a task of its own on a multi-threaded
/// runtime (so `Conversation::answer` is `Send`), over one session store:
/// each has its own `link-1`, resolved to its own link, and neither
/// resolves the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conversations_keep_separate_aliases() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.unwrap();
    let sessions = Arc::new(Sessions::new(
        TonicTransport::new(server.channel().unwrap()),
        Duration::from_secs(60),
    ));

    async fn run(
        sessions: Arc<Sessions<TonicTransport>>,
        id: &'static str,
        links: usize,
    ) -> (Conversation, Vec<String>) {
        let mut conversation =
            Conversation::new(toolkit_for(&sessions, id), Dialect::GeminiJsonSchema);
        conversation.push(ChatMessage::user("Make links."));
        let mut created = Vec::new();
        for n in 0..links {
            let results = conversation
                .answer(calls(
                    AdapterKind::Gemini,
                    vec![call(
                        &format!("{id}-{n}"),
                        "links_create",
                        json!({"destination": format!("https://{id}.example/{n}")}),
                    )],
                ))
                .await;
            assert!(!results[0].is_error, "{}", results[0].output);
            created.push(created_link_id(&last_responses(&conversation)[0]));
            tokio::task::yield_now().await;
        }
        let results = conversation
            .answer(calls(
                AdapterKind::Gemini,
                vec![call(
                    &format!("{id}-step"),
                    "workflow_steps_create",
                    json!({"link_id": "link-1", "action": "ACTION_EMAIL"}),
                )],
            ))
            .await;
        assert!(!results[0].is_error, "{}", results[0].output);
        (conversation, created)
    }

    let (a, b) = tokio::join!(
        tokio::spawn(run(sessions.clone(), "a", 2)),
        tokio::spawn(run(sessions.clone(), "b", 1))
    );
    let ((mut a, a_ids), (mut b, b_ids)) = (a.unwrap(), b.unwrap());
    assert_eq!(a_ids, ["link-1", "link-2"]);
    assert_eq!(b_ids, ["link-1"]);

    // Each conversation's link-1 reached the server as its own link.
    let uuid_of = |destination: &str| {
        backend
            .links()
            .into_iter()
            .find(|l| l.destination == destination)
            .unwrap()
            .id
    };
    let mut steps = step_link_ids(&backend);
    steps.sort();
    let mut expected = vec![
        uuid_of("https://a.example/0"),
        uuid_of("https://b.example/0"),
    ];
    expected.sort();
    assert_eq!(steps, expected);

    // a's link-2 means nothing in b.
    let results = b
        .answer(calls(
            AdapterKind::Gemini,
            vec![call(
                "b-x",
                "links_update",
                json!({"link_id": "link-2", "name": "Not yours"}),
            )],
        ))
        .await;
    assert!(results[0].is_error);
    assert!(
        results[0].output.contains("link-2"),
        "{}",
        results[0].output
    );
    let results = a
        .answer(calls(
            AdapterKind::Gemini,
            vec![call(
                "a-x",
                "links_update",
                json!({"link_id": "link-2", "name": "Mine"}),
            )],
        ))
        .await;
    assert!(!results[0].is_error, "{}", results[0].output);
    let renamed = backend
        .links()
        .into_iter()
        .find(|l| l.name == "Mine")
        .unwrap();
    assert_eq!(renamed.destination, "https://a.example/1");
}

/// What genai does to a strict tool's schema before sending it
/// (`sanitize_json_schema`) changes none of the renderings it is given,
/// over every shape the corpora hold: recursion, maps, oneofs, `Struct`,
/// `Value`, 64-bit integers, googleapis' and etcd's messages.
#[test]
fn genai_sends_strict_schemas_unchanged() {
    use proto_ai_tools::transport::InProcessTransport;
    use proto_ai_tools_tests::tools::{conformance, etcd, google_types, shapes};
    let toolkits = [
        Toolkit::builder().generated(links::Executor::new(InProcessTransport::new())),
        Toolkit::builder().generated(conformance::Executor::new(InProcessTransport::new())),
        Toolkit::builder().generated(shapes::Executor::new(InProcessTransport::new())),
        Toolkit::builder().generated(google_types::Executor::new(InProcessTransport::new())),
        Toolkit::builder().generated(etcd::Executor::new(InProcessTransport::new())),
    ];
    let mut strict = 0;
    for toolkit in toolkits {
        let toolkit = toolkit.build().unwrap();
        for (dialect, sanitizer) in [
            (Dialect::OpenAi, JsonSchemaDialect::OpenAiStrictTool),
            (Dialect::Anthropic, JsonSchemaDialect::AnthropicStructured),
        ] {
            // Every tool as if strict, whatever the budget: each rendering
            // genai could be handed with `strict` set.
            for tool in toolkit.tools() {
                if !tool.is_strict() {
                    continue;
                }
                strict += 1;
                let schema = tool.parameters(dialect);
                assert_eq!(
                    sanitize_json_schema(&schema, sanitizer),
                    schema,
                    "{dialect} {}",
                    tool.name()
                );
            }
        }
    }
    assert!(strict >= 20, "only {strict} strict renderings");
}

/// genai's Gemini adapter sends `parametersJsonSchema`: asked for Gemini's
/// OpenAPI `parameters`, the tools are the JSON Schema rendering, which
/// differs (no `nullable`, `additionalProperties` kept).
#[test]
fn gemini_tools_are_its_json_schema_rendering() {
    use proto_ai_tools::transport::InProcessTransport;
    use proto_ai_tools_tests::tools::shapes;
    let toolkit = Toolkit::builder()
        .generated(shapes::Executor::new(InProcessTransport::new()))
        .build()
        .unwrap();
    let schemas = |dialect| -> Vec<Value> {
        toolkit
            .to_genai_tools(dialect)
            .into_iter()
            .map(|t| {
                assert_eq!(t.strict, None, "Gemini has no strict");
                t.schema.unwrap()
            })
            .collect()
    };
    let sent = schemas(Dialect::Gemini);
    assert_eq!(sent, schemas(Dialect::GeminiJsonSchema));
    let json_schema: Vec<Value> = toolkit
        .tools()
        .iter()
        .map(|t| t.parameters(Dialect::GeminiJsonSchema))
        .collect();
    assert_eq!(sent, json_schema);
    let openapi: Vec<Value> = toolkit
        .tools()
        .iter()
        .map(|t| t.parameters(Dialect::Gemini))
        .collect();
    assert_ne!(sent, openapi);
}

// ---- genai's own client, against providers on loopback -------------------

/// A provider on loopback: answers each request with the next scripted
/// body and keeps what genai sent (path and JSON body).
struct Provider {
    url: String,
    sent: Arc<Mutex<Vec<(String, Value)>>>,
}

async fn provider(replies: Vec<Value>) -> Provider {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let kept = sent.clone();
    tokio::spawn(async move {
        for reply in replies {
            let (stream, _) = listener.accept().await.unwrap();
            let mut stream = BufReader::new(stream);
            let mut request_line = String::new();
            stream.read_line(&mut request_line).await.unwrap();
            let path = request_line
                .split(' ')
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let mut length = 0;
            loop {
                let mut line = String::new();
                stream.read_line(&mut line).await.unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            stream.read_exact(&mut body).await.unwrap();
            kept.lock()
                .unwrap()
                .push((path, serde_json::from_slice(&body).unwrap()));
            let reply = reply.to_string();
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            stream
                .get_mut()
                .write_all(response.as_bytes())
                .await
                .unwrap();
            stream.get_mut().shutdown().await.unwrap();
        }
    });
    Provider { url, sent }
}

/// A genai client whose every model goes to `url` through `adapter`.
fn client(adapter: AdapterKind, url: String) -> genai::Client {
    let resolver = genai::resolver::ServiceTargetResolver::from_resolver_fn(
        move |target: genai::ServiceTarget| -> Result<genai::ServiceTarget, genai::resolver::Error> {
            Ok(genai::ServiceTarget {
                endpoint: genai::resolver::Endpoint::from_owned(url.clone()),
                auth: genai::resolver::AuthData::from_single("test-key"),
                model: ModelIden::new(adapter, target.model.model_name),
            })
        },
    );
    genai::Client::builder()
        .with_service_target_resolver(resolver)
        .build()
        .unwrap()
}

/// One provider's wire: a reply calling `links_create`, a reply calling
/// `workflow_steps_create` on `link-1`, a text reply; and where genai puts
/// the tools and a tool response in its requests.
struct Wire {
    adapter: AdapterKind,
    dialect: Dialect,
    replies: Vec<Value>,
    /// The tools of a request, as the provider receives them.
    tools: fn(&Value) -> Value,
    /// Our own rendering of the same list.
    ours: fn(&Toolkit) -> Value,
    /// The text of the tool response in the second request.
    tool_response: fn(&Value) -> String,
}

fn openai_wire() -> Wire {
    let calling = |id: &str, name: &str, arguments: Value| {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]
            }}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        })
    };
    Wire {
        adapter: AdapterKind::OpenAI,
        dialect: Dialect::OpenAi,
        replies: vec![
            calling(
                "call_1",
                "links_create",
                json!({"destination": "https://example.com/spring"}),
            ),
            calling(
                "call_2",
                "workflow_steps_create",
                json!({"link_id": "link-1", "action": "ACTION_EMAIL"}),
            ),
            json!({
                "id": "chatcmpl-3", "object": "chat.completion", "model": "gpt-test",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Done."}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            }),
        ],
        tools: |body| body["tools"].clone(),
        ours: Toolkit::to_openai,
        tool_response: |body| {
            let messages = body["messages"].as_array().unwrap();
            let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
            assert_eq!(tool["tool_call_id"], "call_1");
            tool["content"].as_str().unwrap().to_owned()
        },
    }
}

fn anthropic_wire() -> Wire {
    let calling = |id: &str, name: &str, input: Value| {
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1}
        })
    };
    Wire {
        adapter: AdapterKind::Anthropic,
        dialect: Dialect::Anthropic,
        replies: vec![
            calling(
                "toolu_1",
                "links_create",
                json!({"destination": "https://example.com/spring"}),
            ),
            calling(
                "toolu_2",
                "workflow_steps_create",
                json!({"link_id": "link-1", "action": "ACTION_EMAIL"}),
            ),
            json!({
                "id": "msg_3", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "Done."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}
            }),
        ],
        tools: |body| body["tools"].clone(),
        // genai's `Tool` has no field for Anthropic's `input_examples`:
        // the one thing of ours that does not reach Anthropic.
        ours: |toolkit| {
            let mut tools = toolkit.to_anthropic();
            let examples = tools
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .filter_map(|tool| tool.as_object_mut()?.remove("input_examples"))
                .count();
            assert!(examples > 0, "links.proto has examples");
            tools
        },
        tool_response: |body| {
            let messages = body["messages"].as_array().unwrap();
            let result = messages
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .find(|part| part["type"] == "tool_result")
                .unwrap();
            assert_eq!(result["tool_use_id"], "toolu_1");
            match &result["content"] {
                Value::String(text) => text.clone(),
                parts => parts[0]["text"].as_str().unwrap().to_owned(),
            }
        },
    }
}

fn gemini_wire() -> Wire {
    let calling = |name: &str, args: Value| {
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
                "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        })
    };
    Wire {
        adapter: AdapterKind::Gemini,
        dialect: Dialect::GeminiJsonSchema,
        replies: vec![
            calling(
                "links_create",
                json!({"destination": "https://example.com/spring"}),
            ),
            calling(
                "workflow_steps_create",
                json!({"link_id": "link-1", "action": "ACTION_EMAIL"}),
            ),
            json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
            }),
        ],
        tools: |body| body["tools"][0].clone(),
        ours: Toolkit::to_gemini_json_schema,
        tool_response: |body| {
            let contents = body["contents"].as_array().unwrap();
            let response = contents
                .iter()
                .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
                .find_map(|part| part.get("functionResponse").cloned())
                .unwrap();
            assert_eq!(response["name"], "links_create");
            let content = &response["response"];
            content
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| content.to_string())
        },
    }
}

/// genai's client, through its OpenAI, Anthropic and Gemini adapters: the
/// tools it sends are our renderings for that provider, byte for byte in
/// value; the provider's tool calls come back as genai `ToolCall`s that run
/// against the links server; and the tool response genai sends next carries
/// the alias.
#[tokio::test]
async fn genai_client_sends_our_tools_and_responses() {
    for wire in [openai_wire(), anthropic_wire(), gemini_wire()] {
        let backend = LinksBackend::with_links(0);
        let server = serve(backend.clone()).await.unwrap();
        let sessions = Sessions::new(
            TonicTransport::new(server.channel().unwrap()),
            Duration::from_secs(60),
        );
        let provider = provider(wire.replies.clone()).await;
        let client = client(wire.adapter, provider.url.clone());
        let mut conversation = Conversation::new(toolkit_for(&sessions, "c"), wire.dialect);
        conversation.push(ChatMessage::user(
            "Shorten https://example.com/spring and email me.",
        ));

        let mut turns = 0;
        loop {
            let response = client
                .exec_chat("scripted-model", conversation.request().clone(), None)
                .await
                .unwrap_or_else(|e| panic!("{:?}: {e}", wire.adapter));
            turns += 1;
            if conversation.answer(response).await.is_empty() {
                break;
            }
        }
        assert_eq!(turns, 3, "{:?}", wire.adapter);
        let sent = provider.sent.lock().unwrap().clone();
        assert_eq!(sent.len(), 3);

        // The tools, as the provider received them, are ours.
        let ours = (wire.ours)(conversation.toolkit());
        for (_, body) in &sent {
            assert_eq!((wire.tools)(body), ours, "{:?}", wire.adapter);
        }
        // The second request answers the first call with the alias.
        let response: Value = serde_json::from_str(&(wire.tool_response)(&sent[1].1))
            .unwrap_or_else(|e| panic!("{:?}: {e}: {:?}", wire.adapter, sent[1].1));
        assert_eq!(response["link"]["id"], "link-1", "{:?}", wire.adapter);
        // The second call reached the server with the UUID.
        assert_eq!(
            step_link_ids(&backend),
            [backend.links()[0].id.clone()],
            "{:?}",
            wire.adapter
        );
        assert_eq!(
            conversation
                .request()
                .messages
                .last()
                .unwrap()
                .content
                .first_text(),
            Some("Done.")
        );
    }
}
