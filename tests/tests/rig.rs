//! `proto_ai_tools::rig` against the real links service: rig agents (rig-agent
//! 0.44) driven by a scripted completion model, a transport of this test's
//! own over rig's scripted wire that replays recorded model turns and keeps
//! every request the agent sent; and rig's tool retrieval over an in-memory
//! vector store, with a toy bag-of-words embedding model written here.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto_ai_tools::rig::{ConversationTools, RigTools, embedding_documents};
use proto_ai_tools::{CallOptions, Sessions, Toolkit, transport::TonicTransport};
use proto_ai_tools_tests::tools::links;
use proto_ai_tools_tests::{LinksBackend, Received, serve};
use rig_agent::AgentBuilder;
use rig_core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
use rig_core::driver::{Exchange, Local, Model, Opened, Opening, Step, Transport};
use rig_core::embeddings::{Embedding, EmbeddingResponse, EmbeddingsBuilder};
use rig_core::error::ProviderError;
use rig_core::message::{Origin, ToolCall, ToolFunction, ToolName};
use rig_core::operation::Embedding as EmbeddingOp;
use rig_core::test_utils::{MOCK_API, MOCK_PROVIDER, MockFrame, MockScript};
use rig_core::vector_store::in_memory_store::InMemoryVectorStore;
use rig_core::wire::{Capabilities, Mode};
use serde_json::{Value, json};

/// One recorded model turn: what the model answered.
#[derive(Clone)]
enum Turn {
    /// A call of `name` with `arguments`.
    Call(&'static str, Value),
    /// A text answer, which ends the run.
    Text(&'static str),
}

/// A completion model that replays recorded turns, in order, one per
/// request, and keeps every request it received: rig's scripted wire over
/// a transport of ours (`rig_core::driver::Transport`).
#[derive(Clone)]
struct Replay {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<CompletionRequest>>>,
}

impl Replay {
    fn model(turns: impl IntoIterator<Item = Turn>) -> (Model<MockScript, Replay>, Replay) {
        let replay = Replay {
            turns: Arc::new(Mutex::new(turns.into_iter().collect())),
            requests: Arc::default(),
        };
        (Model::new(MockScript::default(), replay.clone()), replay)
    }

    fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap().clone()
    }

    fn response(turn: Turn, number: usize) -> CompletionResponse {
        let content = match turn {
            Turn::Call(name, arguments) => AssistantContent::ToolCall(ToolCall::from_wire(
                format!("call-{number}"),
                ToolFunction::new(ToolName::new(name).unwrap(), arguments),
            )),
            Turn::Text(text) => AssistantContent::text(text),
        };
        let raw = json!({ "turn": number });
        CompletionResponse::new(
            vec![content],
            Usage::default(),
            Origin::new(MOCK_API, MOCK_PROVIDER, ""),
            raw,
        )
    }
}

impl Transport<MockScript> for Replay {
    fn send(&self, request: CompletionRequest, exchange: Exchange) -> Opening<MockFrame> {
        let number = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(request);
            requests.len()
        };
        if !matches!(exchange.mode, Mode::Unary) {
            return Opening::failed(ProviderError::Provider(
                "the replay answers unary requests only".into(),
            ));
        }
        let Some(turn) = self.turns.lock().unwrap().pop_front() else {
            return Opening::failed(ProviderError::Provider(
                "the model has no recorded turn left".into(),
            ));
        };
        let response = Self::response(turn, number);
        let document = response.raw.clone();
        Opening::ready(
            Opened::new(futures_util::stream::iter([Ok(MockFrame::Response(
                Box::new(response),
            ))]))
            .with_document(document),
        )
    }
}

/// Every string inside `value`, in order: the texts a message carries,
/// whatever rig's message types nest them in.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The texts of the last message of `request`: the tool result the agent
/// sent back after a call.
fn last_message_texts(request: &CompletionRequest) -> String {
    let last = request.chat_history.last().expect("a message");
    let mut out = Vec::new();
    strings(&serde_json::to_value(last).unwrap(), &mut out);
    out.join("\n")
}

fn links_tools(sessions: Arc<Sessions<TonicTransport>>) -> RigTools {
    let transport = sessions.transport().clone();
    RigTools::new(sessions, move |aliases| {
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(links::Executor::with_alias_manager(
                transport.clone(),
                aliases,
            ))
            .build()
    })
}

async fn links_server(backend: LinksBackend) -> (proto_ai_tools_tests::RunningServer, RigTools) {
    let server = serve(backend).await.expect("bind loopback");
    let sessions = Arc::new(Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(60),
    ));
    let tools = links_tools(sessions);
    (server, tools)
}

#[tokio::test]
async fn an_agent_sees_aliases_that_resolve_back_and_an_invented_one_refused() {
    let backend = LinksBackend::with_links(0);
    let (_server, tools) = links_server(backend.clone()).await;
    // Every call of the conversation carries its user's metadata.
    let conversation = tools
        .conversation("conversation-1")
        .unwrap()
        .with_call_options(CallOptions::new().metadata("x-user", "user-42"));

    let (model, replay) = Replay::model([
        Turn::Call(
            "links_create",
            json!({"destination": "https://example.com/a", "name": "A"}),
        ),
        Turn::Call(
            "links_update",
            json!({"link_id": "link-1", "name": "renamed"}),
        ),
        Turn::Call(
            "links_update",
            json!({"link_id": "link-7", "name": "invented"}),
        ),
        Turn::Call(
            "links_update",
            json!({"link_id": "link-1", "nmae": "misspelt"}),
        ),
        Turn::Text("Renamed link-1."),
    ]);
    let agent = conversation
        .agent(AgentBuilder::new(model))
        .preamble("You manage short links.")
        .build();
    let response = agent
        .prompt("Shorten https://example.com/a and rename it.")
        .max_turns(10)
        .run()
        .await
        .unwrap();
    assert_eq!(response.output(), "Renamed link-1.");

    // The model was offered every tool of the toolkit, by name.
    let requests = replay.requests();
    assert_eq!(requests.len(), 5, "one request per recorded turn");
    let offered: Vec<String> = requests[0]
        .tools
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let expected: Vec<String> = conversation
        .toolkit()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(offered, expected);

    // The create's result, as the model read it next: the alias, not the UUID.
    let created_uuid = backend.links()[0].id.clone();
    let created = last_message_texts(&requests[1]);
    assert!(created.contains(r#""id":"link-1""#), "{created}");
    assert!(!created.contains(&created_uuid), "{created}");

    // The alias resolved back: the server received the UUID behind link-1.
    let received = backend.received();
    let Received::UpdateLink(update) = &received[1] else {
        panic!("expected an UpdateLink, got {received:?}")
    };
    assert_eq!(update.link_id, created_uuid);
    assert_eq!(update.name.as_deref(), Some("renamed"));
    let updated = last_message_texts(&requests[2]);
    assert!(
        updated.contains(r#""id":"link-1""#) && updated.contains("renamed"),
        "{updated}"
    );

    // The invented alias never reached the server, and the model was told
    // why, with the alias it may use.
    assert_eq!(received.len(), 2, "{received:?}");
    let refused = last_message_texts(&requests[3]);
    assert!(refused.contains("link-7"), "{refused}");
    assert!(
        refused.contains("link-1"),
        "names the valid alias: {refused}"
    );
    assert!(!refused.contains(&created_uuid), "{refused}");

    // So was a misspelt argument, named in what the model read.
    let misspelt = last_message_texts(&requests[4]);
    assert!(misspelt.contains("nmae"), "{misspelt}");
    assert_eq!(backend.received().len(), 2);

    // Both calls that ran carried the conversation's call options.
    let calls = backend.requests();
    assert_eq!(calls.len(), 2);
    for (_, metadata) in calls {
        assert_eq!(metadata.ascii("x-user"), Some("user-42"));
    }
}

#[tokio::test]
async fn two_agents_at_once_never_share_aliases() {
    let backend = LinksBackend::with_links(0);
    // Calls take a while, so that the two conversations interleave.
    backend.set_delay(Duration::from_millis(30));
    let (_server, tools) = links_server(backend.clone()).await;

    let run = |who: &'static str, destination: &'static str| {
        let conversation = tools.conversation(who).unwrap();
        async move {
            let (model, replay) = Replay::model([
                Turn::Call("links_create", json!({ "destination": destination })),
                Turn::Call("links_update", json!({"link_id": "link-1", "name": who})),
                Turn::Text("done"),
            ]);
            let agent = conversation.agent(AgentBuilder::new(model)).build();
            let response = agent
                .prompt("Shorten and name it.")
                .max_turns(5)
                .run()
                .await
                .unwrap();
            assert_eq!(response.output(), "done");
            (conversation, replay)
        }
    };
    let ((alice, alice_model), (bob, bob_model)) = tokio::join!(
        run("alice", "https://alice.example/"),
        run("bob", "https://bob.example/")
    );

    // Both models read the same alias text ...
    for replay in [&alice_model, &bob_model] {
        let created = last_message_texts(&replay.requests()[1]);
        assert!(created.contains(r#""id":"link-1""#), "{created}");
    }
    // ... and each update reached its own conversation's link.
    let destination_of = |uuid: &str| {
        backend
            .links()
            .into_iter()
            .find(|l| l.id == uuid)
            .map(|l| l.destination)
    };
    let updates: Vec<_> = backend
        .received()
        .into_iter()
        .filter_map(|r| match r {
            Received::UpdateLink(u) => Some(u),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 2);
    for update in &updates {
        let expected = match update.name.as_deref() {
            Some("alice") => "https://alice.example/",
            Some("bob") => "https://bob.example/",
            other => panic!("unexpected update name {other:?}"),
        };
        assert_eq!(destination_of(&update.link_id).as_deref(), Some(expected));
    }
    // The namespaces themselves: link-1 is a different link in each.
    let alice_link = alice.toolkit().alias_manager().resolve("link-1").unwrap();
    let bob_link = bob.toolkit().alias_manager().resolve("link-1").unwrap();
    assert_ne!(alice_link, bob_link);
    // A conversation asked for again is the same namespace.
    let again = tools.conversation("alice").unwrap();
    assert_eq!(
        again.toolkit().alias_manager().resolve("link-1"),
        Some(alice_link)
    );
}

/// A toy embedding model: bag-of-words, each lower-case word hashed into
/// one of `DIMS` buckets, the counts normalised. Deterministic, and a real
/// runtime of rig's local embedding wire.
#[derive(Clone)]
struct BagOfWords;

const DIMS: usize = 256;

impl BagOfWords {
    fn model() -> Model<Local<EmbeddingOp>, BagOfWords> {
        Model::new(
            Local::new("bag-of-words").with_capabilities(Capabilities::embedding(64, DIMS)),
            BagOfWords,
        )
    }

    fn embed(text: &str) -> Vec<f64> {
        let mut vec = vec![0.0; DIMS];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
        {
            let word = word.to_lowercase();
            // FNV-1a: stable across runs and platforms.
            let hash = word.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            vec[(hash % DIMS as u64) as usize] += 1.0;
        }
        let norm = vec.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            vec.iter_mut().for_each(|x| *x /= norm);
        }
        vec
    }
}

impl Transport<Local<EmbeddingOp>> for BagOfWords {
    fn send(&self, texts: Vec<String>, _exchange: Exchange) -> Opening<Step<EmbeddingOp>> {
        let embeddings = texts
            .into_iter()
            .map(|document| Embedding {
                vec: Self::embed(&document),
                document,
            })
            .collect();
        let response = EmbeddingResponse {
            provider: "bag-of-words".to_owned(),
            ..EmbeddingResponse::new(embeddings)
        };
        Opening::ready(Opened::new(futures_util::stream::iter([Ok(Step::End(
            response,
        ))])))
    }
}

#[tokio::test]
async fn retrieval_documents_are_ours_and_an_index_offers_the_tool_asked_for() {
    let backend = LinksBackend::with_links(0);
    let (_server, tools) = links_server(backend.clone()).await;
    let conversation: ConversationTools = tools.conversation("retrieval").unwrap();
    let toolkit = conversation.toolkit();

    // The documents: name, description, and the search index's text.
    let update = toolkit.get("links_update").unwrap();
    let documents = embedding_documents(update);
    assert_eq!(documents.len(), 3);
    assert_eq!(documents[0], "links_update");
    assert_eq!(documents[1], update.description());
    // The search index's text: service and method in words, the verb's
    // everyday words, the description's first sentence.
    for words in [
        "links service update link",
        "change modify edit",
        "Rename a link or change where it redirects.",
    ] {
        assert!(documents[2].contains(words), "{words}: {}", documents[2]);
    }
    // rig keeps them: its tool set's schemas are what we give the builder.
    let schemas = conversation.tool_set().schemas().unwrap();
    assert!(schemas == conversation.tool_schemas());
    assert_eq!(schemas.len(), toolkit.tools().len());
    for (schema, tool) in schemas.iter().zip(toolkit.tools()) {
        assert_eq!(schema.name, tool.name());
        assert_eq!(schema.embedding_docs, embedding_documents(tool));
        assert_eq!(schema.context["name"], tool.name());
    }

    // An index over them, and an agent offered one tool per request.
    let (model, replay) = Replay::model([
        Turn::Call("workflow_steps_delete", json!({"step_id": "step-3"})),
        Turn::Text("There is no such step."),
    ]);
    let agent = conversation
        .agent_retrieving(
            AgentBuilder::new(model),
            1,
            bag_of_words_index(&conversation).await,
        )
        .build();
    let response = agent
        .prompt("Delete the workflow step of my link")
        .max_turns(5)
        .run()
        .await
        .unwrap();
    assert_eq!(response.output(), "There is no such step.");

    let requests = replay.requests();
    let offered: Vec<String> = requests[0]
        .tools
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(offered, ["workflow_steps_delete"]);
    // The retrieved tool runs through the toolkit: an alias never issued is
    // refused before any call, and the model reads why.
    let refused = last_message_texts(&requests[1]);
    assert!(refused.contains("step-3"), "{refused}");
    assert!(backend.received().is_empty());

    // Other requests, other tools: the index ranks, it does not pick one.
    for (prompt, expected) in [
        ("Change or edit the name of a link", "links_update"),
        ("Show me every link in a list", "links_list"),
        ("Add a workflow step to a link", "workflow_steps_create"),
    ] {
        let (model, replay) = Replay::model([Turn::Text("ok")]);
        let agent = conversation
            .agent_retrieving(
                AgentBuilder::new(model),
                1,
                bag_of_words_index(&conversation).await,
            )
            .build();
        agent.prompt(prompt).max_turns(2).run().await.unwrap();
        let offered: Vec<String> = replay.requests()[0]
            .tools
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(offered, [expected], "{prompt}");
    }
}

/// An in-memory index of the conversation's tools, embedded by the toy
/// model, each under its tool's name.
async fn bag_of_words_index(
    conversation: &ConversationTools,
) -> rig_core::vector_store::in_memory_store::InMemoryVectorIndex<rig_core::embeddings::ToolSchema>
{
    let embedder = BagOfWords::model();
    let embedded = EmbeddingsBuilder::new(embedder.clone())
        .documents(conversation.tool_schemas())
        .unwrap()
        .build()
        .await
        .unwrap();
    InMemoryVectorStore::from_documents_with_id_f(embedded, |tool| tool.name.clone())
        .index(embedder)
}

#[tokio::test]
async fn each_conversation_is_offered_its_own_toolkit_s_tools() {
    // A factory that builds a read-only toolkit every other time: what a
    // conversation is offered follows its toolkit, though definitions are
    // shared between conversations whose toolkits hold the same tools.
    let backend = LinksBackend::with_links(0);
    let server = serve(backend).await.expect("bind loopback");
    let sessions = Arc::new(Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(60),
    ));
    let transport = sessions.transport().clone();
    let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tools = RigTools::new(sessions, move |aliases| {
        let read_only = built.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 2 == 1;
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(links::Executor::with_alias_manager(
                transport.clone(),
                aliases,
            ))
            .read_only(read_only)
            .build()
    });
    let names = |tools: &ConversationTools| -> Vec<String> {
        tools
            .dynamic_tools()
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    };
    for (id, read_only) in [("a", false), ("b", true), ("c", false), ("d", true)] {
        let conversation = tools.conversation(id).unwrap();
        let expected: Vec<String> = conversation
            .toolkit()
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(expected.len() < 5, read_only, "{id}: {expected:?}");
        assert_eq!(names(&conversation), expected, "{id}");
        let schemas: Vec<String> = conversation
            .tool_schemas()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(schemas, expected, "{id}");
    }
}

#[tokio::test]
async fn one_id_keys_both_rig_memory_and_the_aliases_across_turns() {
    use rig_core::memory::{ConversationMemory, InMemoryConversationMemory};

    let backend = LinksBackend::with_links(0);
    let (_server, tools) = links_server(backend.clone()).await;
    let memory = InMemoryConversationMemory::new();

    // Turn 1: a fresh agent creates a link; rig keeps the turn in memory.
    let (model, _) = Replay::model([
        Turn::Call("links_create", json!({"destination": "https://a.example/"})),
        Turn::Text("Created link-1."),
    ]);
    let agent = tools
        .conversation("memory-1")
        .unwrap()
        .agent(AgentBuilder::new(model).memory(memory.clone()))
        .build();
    agent
        .prompt("Shorten it.")
        .max_turns(5)
        .run()
        .await
        .unwrap();
    let kept = memory.load(&"memory-1".into()).await.unwrap();
    let mut texts = Vec::new();
    strings(&serde_json::to_value(&kept).unwrap(), &mut texts);
    assert!(
        texts.iter().any(|t| t.contains(r#""id":"link-1""#)),
        "{texts:?}"
    );

    // Turn 2: another agent of the same conversation reads that history,
    // and the alias in it still resolves: the same id keys both.
    let (model, replay) = Replay::model([
        Turn::Call(
            "links_update",
            json!({"link_id": "link-1", "name": "second turn"}),
        ),
        Turn::Text("Renamed."),
    ]);
    let agent = tools
        .conversation("memory-1")
        .unwrap()
        .agent(AgentBuilder::new(model).memory(memory.clone()))
        .build();
    agent.prompt("Rename it.").max_turns(5).run().await.unwrap();
    let mut seen = Vec::new();
    strings(
        &serde_json::to_value(&replay.requests()[0].chat_history).unwrap(),
        &mut seen,
    );
    assert!(
        seen.iter().any(|t| t.contains("Created link-1.")),
        "{seen:?}"
    );
    let created = backend.links()[0].id.clone();
    let updates: Vec<_> = backend
        .received()
        .into_iter()
        .filter_map(|r| match r {
            Received::UpdateLink(u) => Some(u.link_id),
            _ => None,
        })
        .collect();
    assert_eq!(updates, [created]);

    // An empty id has a throwaway namespace, so it names no conversation
    // and rig keeps no history under it for the next one to read.
    let (model, _) = Replay::model([Turn::Text("ok")]);
    let agent = tools
        .conversation("")
        .unwrap()
        .agent(AgentBuilder::new(model).memory(memory.clone()))
        .build();
    agent.prompt("Hello.").max_turns(2).run().await.unwrap();
    assert!(memory.load(&"".into()).await.unwrap().is_empty());
}
