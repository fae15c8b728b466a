//! Generated and native tools in one `Toolkit`, against the real links
//! service: one alias namespace, ids passed from one kind to the other.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto_ai_tools::schema::{Dialect, HostProfile, check};
use proto_ai_tools::{
    AliasManager, NativeTool, Sessions, ToolContext, ToolError, ToolInput, Toolkit,
    executor::ProtoExecutor, toolkit::ToolkitError, transport::TonicTransport,
};
use proto_ai_tools_tests::{LinksBackend, Received, serve};
use serde_json::{Value, json};

use proto_ai_tools_tests::tools::links;

/// Write a note about a link.
#[derive(serde::Deserialize, ToolInput)]
struct NoteInput {
    /// The link the note is about.
    #[tool(
        alias_prefix = "link",
        usage_notes = "Use an id a tool returned; never invent one."
    )]
    link_id: String,
    /// The note.
    text: String,
}

/// Pick the oldest link of the workspace.
#[derive(serde::Deserialize, ToolInput)]
struct PickInput {}

fn toolkit_for(
    transport: TonicTransport,
    aliases: Arc<AliasManager>,
    backend: LinksBackend,
    seen: Arc<Mutex<Vec<String>>>,
) -> Toolkit {
    let note = NativeTool::new::<NoteInput, _, _>(
        "links_note",
        "Write a note about a link.",
        move |_ctx, input: NoteInput| {
            let seen = seen.clone();
            async move {
                seen.lock()
                    .map_err(|_| ToolError::new("poisoned"))?
                    .push(input.link_id.clone());
                Ok(json!({ "link_id": input.link_id, "note": input.text }))
            }
        },
    );
    let pick = NativeTool::new::<PickInput, _, _>(
        "links_pick_oldest",
        "Pick the oldest link.",
        move |ctx: ToolContext, _: PickInput| {
            let backend = backend.clone();
            async move {
                let oldest = backend
                    .links()
                    .last()
                    .cloned()
                    .ok_or_else(|| ToolError::new("there are no links"))?;
                let alias = ctx.alias_manager().register("link", &oldest.id).await?;
                Ok(format!(
                    "The oldest link is {alias} ({}).",
                    oldest.destination
                ))
            }
        },
    );
    Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(links::Executor::with_alias_manager(transport, aliases))
        .native(note)
        .native(pick)
        .build()
        .expect("valid toolkit")
}

#[tokio::test]
async fn ids_move_between_generated_and_native_tools() {
    let backend = LinksBackend::with_links(1);
    let oldest = backend.links()[0].id.clone();
    let server = serve(backend.clone()).await.expect("bind loopback");
    let sessions = Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(60),
    );
    let aliases = sessions.alias_manager("conversation-1");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let toolkit = toolkit_for(
        sessions.transport().clone(),
        aliases.clone(),
        backend.clone(),
        seen.clone(),
    );

    // Generated → native: the alias the executor issued resolves in the native tool.
    let created = toolkit
        .execute("links_create", r#"{"destination":"https://a.b"}"#)
        .await;
    assert!(!created.is_error, "{}", created.output);
    let created: Value = serde_json::from_str(&created.output).unwrap();
    assert_eq!(created["link"]["id"], "link-1");
    let new_id = backend.links()[0].id.clone();

    let noted = toolkit
        .execute("links_note", r#"{"link_id":"link-1","text":"promo"}"#)
        .await;
    assert!(!noted.is_error, "{}", noted.output);
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        std::slice::from_ref(&new_id),
        "the native tool got the UUID"
    );
    // ... and its output shows the UUID as the alias again.
    assert_eq!(
        serde_json::from_str::<Value>(&noted.output).unwrap(),
        json!({"link_id": "link-1", "note": "promo"})
    );

    // Native → generated: an id a native tool registered is understood by the executor.
    let picked = toolkit.execute("links_pick_oldest", "").await;
    assert_eq!(
        picked.output,
        "The oldest link is link-2 (https://example.com/0)."
    );
    let updated = toolkit
        .execute("links_update", r#"{"link_id":"link-2","name":"Renamed"}"#)
        .await;
    assert!(!updated.is_error, "{}", updated.output);
    let Some(Received::UpdateLink(request)) = backend.received().last().cloned() else {
        panic!("no update")
    };
    assert_eq!(request.link_id, oldest);

    // An invented alias never reaches the tool; the error names the valid ones.
    let invented = toolkit
        .execute("links_note", r#"{"link_id":"link-7","text":"x"}"#)
        .await;
    assert!(invented.is_error);
    assert!(
        invented.output.contains("link-7") && invented.output.contains("link-1, link-2"),
        "{}",
        invented.output
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    // A wrong-prefix alias is refused the same way.
    aliases
        .register("step", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7")
        .await
        .unwrap();
    let wrong = toolkit
        .execute("links_note", r#"{"link_id":"step-1","text":"x"}"#)
        .await;
    assert!(
        wrong.is_error && wrong.output.contains("is a step id"),
        "{}",
        wrong.output
    );

    // The conversation's namespace is the session's: another toolkit of the same conversation sees link-1.
    let again = toolkit_for(
        sessions.transport().clone(),
        sessions.alias_manager("conversation-1"),
        backend.clone(),
        seen.clone(),
    );
    let noted = again
        .execute("links_note", r#"{"link_id":"link-1","text":"again"}"#)
        .await;
    assert!(!noted.is_error, "{}", noted.output);
    let other = toolkit_for(
        sessions.transport().clone(),
        sessions.alias_manager("conversation-2"),
        backend,
        seen,
    );
    assert!(
        other
            .execute("links_note", r#"{"link_id":"link-1","text":"x"}"#)
            .await
            .is_error
    );
}

/// Arguments a host parsed itself (as the MCP server does) take the same
/// path as text: aliases resolved, shaping undone, bounds kept.
#[tokio::test]
async fn parsed_arguments_run_as_their_text_does() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.expect("bind loopback");
    let aliases = Arc::new(AliasManager::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let toolkit = toolkit_for(
        TonicTransport::new(server.channel().expect("url")),
        aliases,
        backend.clone(),
        seen.clone(),
    );
    let call = proto_ai_tools::CallOptions::new();
    let created = toolkit
        .execute_with("links_create", json!({"destination": "https://a.b"}), &call)
        .await;
    assert!(!created.is_error, "{}", created.output);
    let created: Value = serde_json::from_str(&created.output).unwrap();
    assert_eq!(created["link"]["id"], "link-1");
    let noted = toolkit
        .execute_with(
            "links_note",
            json!({"link_id": "link-1", "text": "promo"}),
            &call,
        )
        .await;
    assert!(!noted.is_error, "{}", noted.output);
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [backend.links()[0].id.clone()]
    );
    // The same refusals as for text: an unknown argument, and a value nested
    // past the bound (which text would have hit while parsing).
    let unknown = toolkit
        .execute_with(
            "links_create",
            json!({"destination": "https://a.b", "colour": 1}),
            &call,
        )
        .await;
    assert!(
        unknown.is_error && unknown.output.contains("colour"),
        "{}",
        unknown.output
    );
    let mut deep = json!("leaf");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let too_deep = toolkit
        .execute_with(
            "links_note",
            json!({"link_id": "link-1", "text": deep}),
            &call,
        )
        .await;
    assert!(too_deep.is_error, "{}", too_deep.output);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "nothing ran for a refused call"
    );
}

#[tokio::test]
async fn tools_render_for_every_provider() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.expect("bind loopback");
    let transport = TonicTransport::new(server.channel().expect("url"));
    let toolkit = toolkit_for(
        transport,
        Arc::new(AliasManager::new()),
        backend,
        Arc::default(),
    );

    let names: Vec<&str> = toolkit.tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "links_create",
            "links_update",
            "links_list",
            "workflow_steps_create",
            "workflow_steps_delete",
            "links_note",
            "links_pick_oldest"
        ]
    );
    let create = toolkit.get("links_create").unwrap();
    assert!(create.agent_tool().is_some() && create.is_strict());
    assert_eq!(
        create.parameters(Dialect::OpenAi),
        serde_json::from_str::<Value>(links::LINKS_CREATE.renderings().openai).unwrap()
    );
    let note = toolkit.get("links_note").unwrap();
    assert!(note.native().is_some() && !note.is_strict());
    assert_eq!(
        note.parameters(Dialect::Anthropic)["properties"]["link_id"]["description"],
        "The link the note is about.\n\nUse an id a tool returned; never invent one.\n\nAn alias like `link-1`, from an earlier result."
    );
    // links.proto has no 64-bit integer and no `$ref` in any rendering, so
    // a JavaScript host's rendering, made at run time from the executor's
    // descriptors, is the very text the macro checked.
    for tool in toolkit.tools() {
        for dialect in Dialect::ALL {
            assert_eq!(
                tool.parameters_for_host(dialect, HostProfile::JavaScript),
                tool.parameters(dialect),
                "{} {dialect}",
                tool.name()
            );
        }
    }

    let openai = toolkit.to_openai();
    let anthropic = toolkit.to_anthropic();
    let gemini = toolkit.to_gemini();
    let responses = toolkit.to_openai_responses();
    let gemini_json = toolkit.to_gemini_json_schema();
    for (i, tool) in toolkit.tools().iter().enumerate() {
        let r = &responses[i];
        assert_eq!(r["type"], "function");
        assert_eq!(r["name"], tool.name());
        assert_eq!(r["strict"], tool.is_strict());
        assert_eq!(r["parameters"], openai[i]["function"]["parameters"]);
        let gj = &gemini_json["functionDeclarations"][i];
        assert_eq!(gj["name"], tool.name());
        let o = &openai[i];
        assert_eq!(o["type"], "function");
        assert_eq!(o["function"]["name"], tool.name());
        assert_eq!(o["function"]["description"], tool.description());
        assert_eq!(o["function"]["strict"], tool.is_strict());
        let a = &anthropic[i];
        assert_eq!(a["name"], tool.name());
        assert_eq!(a.get("strict").is_some(), tool.is_strict());
        let g = &gemini["functionDeclarations"][i];
        assert_eq!(g["name"], tool.name());
        for (dialect, schema) in [
            (Dialect::OpenAi, &o["function"]["parameters"]),
            (Dialect::Anthropic, &a["input_schema"]),
            (Dialect::Gemini, &g["parameters"]),
            (Dialect::GeminiJsonSchema, &gj["parametersJsonSchema"]),
        ] {
            let violations = check::check(dialect, tool.is_strict(), schema);
            assert!(
                violations.is_empty(),
                "{} in {dialect}: {violations:?}",
                tool.name()
            );
        }
    }
}

/// The alias manager named once: the toolkit builds the generated
/// executor on its own, and the ids a call returns are aliased there.
#[tokio::test]
async fn the_toolkit_builds_an_executor_on_its_own_alias_manager() {
    let server = serve(LinksBackend::with_links(0))
        .await
        .expect("bind loopback");
    let transport = TonicTransport::new(server.channel().expect("url"));
    let aliases = Arc::new(AliasManager::new());
    let toolkit = Toolkit::builder()
        .alias_manager(aliases.clone())
        .executor::<links::Executor<_>>(transport.clone())
        .build()
        .unwrap();
    assert!(Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    let created = toolkit
        .execute("links_create", r#"{"destination":"https://example.com"}"#)
        .await;
    assert!(!created.is_error, "{}", created.output);
    assert!(created.output.contains("link-1"), "{}", created.output);
    assert!(
        aliases.resolve("link-1").is_some(),
        "link-1 in the toolkit's aliases"
    );

    // Without `alias_manager`: a fresh namespace, the executor's too.
    let toolkit = Toolkit::builder()
        .executor::<links::Executor<_>>(transport)
        .build()
        .unwrap();
    assert!(!Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    let created = toolkit
        .execute("links_create", r#"{"destination":"https://example.com"}"#)
        .await;
    assert!(created.output.contains("link-1"), "{}", created.output);
    assert!(toolkit.alias_manager().resolve("link-1").is_some());
}

#[tokio::test]
async fn build_errors() {
    let server = serve(LinksBackend::with_links(0))
        .await
        .expect("bind loopback");
    let transport = TonicTransport::new(server.channel().expect("url"));
    let shadow = NativeTool::new::<PickInput, _, _>(
        "links_create",
        "Shadows the generated tool.",
        |_, _: PickInput| async { "x" },
    );
    let aliases = Arc::new(AliasManager::new());
    let generated = || {
        ProtoExecutor::with_alias_manager(
            links::all_tools(),
            links::descriptor_pool(),
            transport.clone(),
            aliases.clone(),
        )
    };

    let err = Toolkit::builder()
        .generated(generated())
        .native(shadow)
        .build()
        .unwrap_err();
    assert_eq!(err, ToolkitError::DuplicateName("links_create".into()));
    assert_eq!(
        err.to_string(),
        "two tools are named `links_create`; rename one of them"
    );

    let err = Toolkit::builder()
        .generated(generated())
        .generated(generated())
        .build()
        .unwrap_err();
    assert_eq!(err, ToolkitError::DuplicateName("links_create".into()));

    let bad =
        NativeTool::new::<PickInput, _, _>("links.pick", "Bad name.", |_, _: PickInput| async {
            "x"
        });
    let err = Toolkit::builder().native(bad).build().unwrap_err();
    assert!(
        matches!(&err, ToolkitError::InvalidName { name, .. } if name == "links.pick"),
        "{err}"
    );

    let separate = ProtoExecutor::new(
        links::all_tools(),
        links::descriptor_pool(),
        transport.clone(),
    );
    let err = Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(separate)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        ToolkitError::SeparateAliasManagers("links_create".into())
    );
    // The message says which tool, what is wrong and how to build both.
    let message = err.to_string();
    assert!(
        message.starts_with(
            "the executor of tool `links_create` keeps its aliases in another alias manager \
             than the toolkit's, so an alias one tool shows the model would mean nothing to \
             the other tools: build the executor and the toolkit on the same `AliasManager`"
        ) && message.contains("Sessions::alias_manager(conversation_id)")
            && message.contains(".executor::<Executor<_>>(transport)"),
        "{message}"
    );

    // Without `aliases`, the toolkit adopts the executor's namespace.
    let toolkit = Toolkit::builder().generated(generated()).build().unwrap();
    assert!(Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    let unknown = toolkit.execute("links_delete", "{}").await;
    assert!(
        unknown.is_error && unknown.output.contains("unknown tool `links_delete`"),
        "{}",
        unknown.output
    );
}

/// One end user per call: the toolkit's defaults reach the service as gRPC
/// metadata, a call's own options override them key by key, and a bad key
/// stops the call before anything is sent, without echoing the value.
#[tokio::test]
async fn call_options_reach_the_service_over_the_toolkits_defaults() {
    let backend = LinksBackend::with_links(1);
    let server = serve(backend.clone()).await.expect("bind loopback");
    let transport = TonicTransport::new(server.channel().expect("url"));
    let toolkit = Toolkit::builder()
        .generated(links::Executor::new(transport))
        .call_options(
            proto_ai_tools::CallOptions::new()
                .metadata("x-tenant", "acme")
                .metadata("x-user", "service"),
        )
        .build()
        .expect("valid toolkit");

    // The tenant and user the service saw on the last call.
    let seen = || {
        let mut seen = backend.last_metadata();
        seen.sort();
        seen
    };
    let as_user = |user: &str| {
        vec![
            ("x-tenant".to_owned(), "acme".to_owned()),
            ("x-user".to_owned(), user.to_owned()),
        ]
    };

    let listed = toolkit.execute("links_list", "{}").await;
    assert!(!listed.is_error, "{}", listed.output);
    assert_eq!(seen(), as_user("service"));

    let call = proto_ai_tools::CallOptions::new().metadata("X-User", "user-42");
    let listed = toolkit.execute_with("links_list", "{}", &call).await;
    assert!(!listed.is_error, "{}", listed.output);
    assert_eq!(seen(), as_user("user-42"));

    let before = backend.received().len();
    let bad = proto_ai_tools::CallOptions::new().metadata("x user", "s3cret");
    let refused = toolkit.execute_with("links_list", "{}", &bad).await;
    assert!(refused.is_error);
    assert!(refused.output.contains("`x user`"), "{}", refused.output);
    assert!(!refused.output.contains("s3cret"), "{}", refused.output);
    assert_eq!(
        backend.received().len(),
        before,
        "nothing reached the service"
    );
    server.shutdown().await;
}

/// A generated tool rendered for a JavaScript host, from its executor's
/// descriptors: every 64-bit integer a string of digits, no `$ref`, and each
/// rendering within its dialect's checker. The conformance proto has 64-bit
/// fields and recursive and repeated messages, so the exact renderings
/// differ.
#[tokio::test]
async fn generated_tools_render_for_a_javascript_host() {
    use proto_ai_tools_tests::tools::conformance;
    let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy();
    let executor = conformance::Executor::new(TonicTransport::new(channel));
    let toolkit = Toolkit::builder()
        .generated(executor)
        .build()
        .expect("builds");
    let mut differed = 0;
    for tool in toolkit.tools() {
        for dialect in Dialect::ALL {
            let exact = tool.parameters(dialect);
            let javascript = tool.parameters_for_host(dialect, HostProfile::JavaScript);
            let text = javascript.to_string();
            assert!(
                !text.contains("\"$ref\"") && !text.contains("\"$defs\""),
                "{} {dialect}",
                tool.name()
            );
            assert!(
                !text.contains("\"maximum\":9223372036854775807")
                    && !text.contains("\"maximum\":18446744073709551615"),
                "{} {dialect}: a 64-bit integer left as a number",
                tool.name()
            );
            let violations = check::check(dialect, tool.is_strict(), &javascript);
            assert!(
                violations.is_empty(),
                "{} {dialect}: {violations:?}",
                tool.name()
            );
            differed += usize::from(exact != javascript);
        }
    }
    assert!(differed > 0, "no rendering changed for the JavaScript host");
}
