//! Provider-side deferred loading ("tool search") of the corpus: every
//! tool of the test protos in one toolkit, rendered for OpenAI's tool search
//! and Anthropic's tool search tool, passes each provider's checker; and
//! each checker rejects a rendering broken in a way its provider documents.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use proto_ai_tools::schema::check::{Rule, Violation};
use proto_ai_tools::schema::deferred::{
    anthropic_loaded_up_front, check_anthropic_tool_search, check_openai_tool_search,
    openai_loaded_up_front,
};
use proto_ai_tools::toolkit::deferred::AnthropicToolSearch;
use proto_ai_tools::transport::InProcessTransport;
use proto_ai_tools::{AliasManager, NativeTool, ToolInput, Toolkit};
use proto_ai_tools_tests::tools::{
    conformance, etcd, feed, google_types, links, longrunning_whole, shapes,
};
use serde_json::{Value, json};

/// Echo a text.
#[derive(serde::Deserialize, ToolInput)]
struct Echo {
    /// The text.
    text: String,
}

fn echo() -> NativeTool {
    NativeTool::new::<Echo, _, _>("echo", "Echo a text.", |_, e: Echo| async move { e.text })
}

/// Every generated tool of the test protos (nine services and more), and a
/// native tool, in one toolkit; with `native` false, the generated tools
/// only.
fn corpus(native: bool) -> Toolkit {
    let aliases = Arc::new(AliasManager::new());
    let t = InProcessTransport::new;
    let mut builder = Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(links::Executor::with_alias_manager(t(), aliases.clone()))
        .generated(conformance::Executor::with_alias_manager(
            t(),
            aliases.clone(),
        ))
        .generated(feed::Executor::with_alias_manager(t(), aliases.clone()))
        .generated(shapes::Executor::with_alias_manager(t(), aliases.clone()))
        .generated(google_types::Executor::with_alias_manager(
            t(),
            aliases.clone(),
        ))
        .generated(etcd::Executor::with_alias_manager(t(), aliases.clone()))
        .generated(longrunning_whole::Executor::with_alias_manager(
            t(),
            aliases,
        ));
    if native {
        builder = builder.native(echo());
    }
    builder.build().expect("the corpus is one valid toolkit")
}

fn array(value: &Value) -> &[Value] {
    value.as_array().expect("a list of tools")
}

fn rules(violations: &[Violation]) -> Vec<(String, Rule)> {
    violations
        .iter()
        .map(|v| (v.path.clone(), v.rule))
        .collect()
}

#[test]
fn the_corpus_renders_for_openai_tool_search_and_passes_the_checker() {
    let toolkit = corpus(true);
    let rendered = toolkit.to_openai_tool_search();
    let tools = array(&rendered);
    assert_eq!(check_openai_tool_search(tools), []);

    // One namespace per service, in the order the services first come.
    let services: Vec<&str> = toolkit
        .tools()
        .iter()
        .filter_map(|tool| tool.agent_tool().map(|t| t.method.service))
        .fold(Vec::new(), |mut seen, service| {
            if !seen.contains(&service) {
                seen.push(service);
            }
            seen
        });
    assert!(services.len() >= 9, "{services:?}");
    let namespaces: Vec<&Value> = tools.iter().filter(|t| t["type"] == "namespace").collect();
    assert_eq!(namespaces.len(), services.len());
    let names: BTreeSet<&str> = namespaces
        .iter()
        .map(|ns| ns["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names.len(), namespaces.len(), "namespace names are unique");

    // Every generated tool is deferred in its service's namespace; the
    // native tool is loaded at the top level; `tool_search` comes last.
    let mut namespace_of: HashMap<&str, &str> = HashMap::new();
    for (ns, service) in namespaces.iter().zip(&services) {
        assert!(
            ns["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{ns}"
        );
        for function in array(&ns["tools"]) {
            assert_eq!(function["defer_loading"], true, "{function}");
            let name = function["name"].as_str().expect("a name");
            let tool = toolkit.get(name).expect("a tool of the toolkit");
            assert_eq!(tool.agent_tool().map(|t| t.method.service), Some(*service));
            namespace_of.insert(name, ns["name"].as_str().unwrap_or_default());
        }
    }
    assert_eq!(namespace_of.len(), toolkit.tools().len() - 1);
    let echo = tools
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("the native tool");
    assert_eq!(echo, &toolkit.get("echo").unwrap().to_openai_responses());
    assert_eq!(tools.last(), Some(&json!({ "type": "tool_search" })));

    // Before its first search the model reads a small part of the list.
    let up_front = openai_loaded_up_front(tools).to_string().len();
    let full = toolkit.to_openai_responses().to_string().len();
    assert!(up_front * 10 < full, "{up_front} of {full} bytes up front");
}

#[test]
fn the_corpus_renders_for_anthropic_tool_search_and_passes_the_checker() {
    for native in [true, false] {
        let toolkit = corpus(native);
        for search in AnthropicToolSearch::ALL {
            let rendered = toolkit.to_anthropic_tool_search(search);
            let tools = array(&rendered);
            assert_eq!(check_anthropic_tool_search(tools), [], "{search:?}");
            assert_eq!(tools[0], search.definition());
            for tool in &tools[1..] {
                let generated = toolkit
                    .get(tool["name"].as_str().expect("a name"))
                    .and_then(|t| t.agent_tool())
                    .is_some();
                assert_eq!(tool.get("defer_loading").is_some(), generated, "{tool}");
            }
            let up_front = anthropic_loaded_up_front(tools);
            let loaded = if native { 2 } else { 1 };
            assert_eq!(array(&up_front).len(), loaded);
        }
    }
}

/// The index in `tools` of the first namespace, and of the `tool_search` tool.
fn positions(tools: &[Value]) -> (usize, usize) {
    let at = |ty: &str| {
        tools
            .iter()
            .position(|t| t["type"] == ty)
            .unwrap_or_else(|| panic!("no {ty}"))
    };
    (at("namespace"), at("tool_search"))
}

#[test]
fn the_openai_checker_rejects_broken_renderings() {
    let toolkit = corpus(true);
    let good = toolkit.to_openai_tool_search();
    let (ns, search) = positions(array(&good));

    // A namespace with an empty name, and one without a description.
    let mut broken = good.clone();
    broken[ns]["name"] = json!("");
    broken[ns + 1]
        .as_object_mut()
        .unwrap()
        .remove("description");
    let found = check_openai_tool_search(array(&broken));
    assert_eq!(
        rules(&found),
        [
            (format!("/tools/{ns}"), Rule::NamespaceName),
            (format!("/tools/{}", ns + 1), Rule::NamespaceDescription),
        ]
    );
    assert!(
        found[0].message.contains("minLength"),
        "{}",
        found[0].message
    );

    // `defer_loading` on the namespace object instead of its functions.
    let mut broken = good.clone();
    broken[ns]["defer_loading"] = json!(true);
    assert_eq!(
        rules(&check_openai_tool_search(array(&broken))),
        [(format!("/tools/{ns}"), Rule::DeferredNamespace)]
    );

    // No `tool_search`: nothing loads the deferred functions.
    let mut broken = good.clone();
    broken.as_array_mut().unwrap().remove(search);
    let found = check_openai_tool_search(array(&broken));
    assert_eq!(rules(&found), [("/tools".to_owned(), Rule::NoToolSearch)]);
    assert!(
        found[0].message.contains("links_create"),
        "{}",
        found[0].message
    );

    // A function inside a namespace still goes through the OpenAI checkers,
    // and is named by where it is in the request.
    let mut broken = good.clone();
    broken[ns]["tools"][0]["name"] = json!("links.create");
    broken[ns]["tools"][1]["parameters"] = json!({ "type": "string" });
    assert_eq!(
        rules(&check_openai_tool_search(array(&broken))),
        [
            (format!("/tools/{ns}/tools/0"), Rule::ToolName),
            (
                format!("/tools/{ns}/tools/1/parameters"),
                Rule::RootNotObject
            ),
        ]
    );
}

#[test]
fn the_anthropic_checker_rejects_broken_renderings() {
    // With generated tools only, the search tool is the one tool loaded.
    let toolkit = corpus(false);
    let good = toolkit.to_anthropic_tool_search(AnthropicToolSearch::Regex);

    // The search tool deferred: refused, and then every tool is deferred.
    let mut broken = good.clone();
    broken[0]["defer_loading"] = json!(true);
    let found = check_anthropic_tool_search(array(&broken));
    assert_eq!(
        rules(&found),
        [
            ("/tools/0".to_owned(), Rule::DeferredToolSearch),
            ("/tools".to_owned(), Rule::AllToolsDeferred),
        ]
    );
    assert!(
        found[1]
            .message
            .contains("At least one tool must be non-deferred")
    );

    // No search tool: nothing loads the deferred tools.
    let mut broken = good.clone();
    broken.as_array_mut().unwrap().remove(0);
    let found = check_anthropic_tool_search(array(&broken));
    assert_eq!(
        rules(&found),
        [
            ("/tools".to_owned(), Rule::NoToolSearch),
            ("/tools".to_owned(), Rule::AllToolsDeferred),
        ]
    );

    // A type and a name that are not a documented pair; tool use examples.
    let mut broken = good.clone();
    broken[0]["name"] = json!("tool_search_tool_bm25");
    broken[1]["input_examples"] = json!([{}]);
    assert_eq!(
        rules(&check_anthropic_tool_search(array(&broken))),
        [
            ("/tools/0".to_owned(), Rule::ToolSearchShape),
            ("/tools/1".to_owned(), Rule::NotWithToolSearch),
        ]
    );

    // A deferred tool still goes through the Anthropic checkers.
    let mut broken = good.clone();
    broken[2]["name"] = broken[1]["name"].clone();
    assert_eq!(
        rules(&check_anthropic_tool_search(array(&broken))),
        [("/tools/2".to_owned(), Rule::DuplicateToolName)]
    );
}
