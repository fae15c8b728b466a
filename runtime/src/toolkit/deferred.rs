//! A toolkit's tools for provider-side deferred loading ("tool search"):
//! the whole catalog goes in the request, and the provider loads a tool's
//! definition into the model's context only when the model searches for it.
//!
//! - OpenAI Responses with [tool search], [`Toolkit::to_openai_tool_search`]:
//!   one namespace per gRPC service, its functions deferred, and the
//!   `{"type": "tool_search"}` tool;
//! - Anthropic with the [tool search tool] (regex or BM25,
//!   [`AnthropicToolSearch`]), [`Toolkit::to_anthropic_tool_search`]: the
//!   generated tools deferred.
//!
//! A native tool (no service) is listed as it is elsewhere, loaded up
//! front. Each rendering passes its checker,
//! [`check_openai_tool_search`](proto_ai_tools_schema::deferred::check_openai_tool_search)
//! and
//! [`check_anthropic_tool_search`](proto_ai_tools_schema::deferred::check_anthropic_tool_search),
//! which hold the rules of these shapes and their sources.
//!
//! [tool search]: https://developers.openai.com/api/docs/guides/tools-tool-search
//! [tool search tool]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool

use std::collections::{HashMap, HashSet};

use prost_reflect::DescriptorPool;
pub use proto_ai_tools_schema::deferred::AnthropicToolSearch;
use proto_ai_tools_schema::deferred::{OPENAI_TOOL_SEARCH, openai_namespace_name};
use proto_ai_tools_schema::proto::leading_comment;
use serde_json::{Value, json};

use super::{Kind, Toolkit};

impl Toolkit {
    /// Every tool in the shape of OpenAI Responses' `tools` with
    /// [tool search]: the generated tools of each gRPC service in one
    /// namespace, `{"type": "namespace", name, description, tools}`, each
    /// function as [`to_openai_responses`](Self::to_openai_responses) has
    /// it plus `"defer_loading": true`; the native tools as they are, not
    /// deferred; then `{"type": "tool_search"}` (only when something is
    /// deferred: with native tools alone, this is
    /// [`to_openai_responses`](Self::to_openai_responses)).
    ///
    /// A namespace is named after its service
    /// ([`openai_namespace_name`]: `links.v1.LinksService` gives
    /// `links_v1_LinksService`, a repeated name gets `_2`, `_3`), and
    /// described by the service's leading comment in the proto, or else by
    /// a sentence naming the service and its tools. Before its first search
    /// the model reads only the namespaces' names and descriptions (and the
    /// tools not deferred): a service comment that says what its methods
    /// are for is what the model searches by.
    ///
    /// The guide documents tool search for `gpt-5.4` and later models, and
    /// advises fewer than 10 functions per namespace. The function calls
    /// the model makes carry the namespace beside the function's name; the
    /// function's name alone is what [`execute`](Self::execute) takes.
    ///
    /// [tool search]: https://developers.openai.com/api/docs/guides/tools-tool-search
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::deferred::check_openai_tool_search;
    /// use serde_json::json;
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
    ///
    /// let tools = toolkit.to_openai_tool_search();
    /// let tools = tools.as_array().unwrap();
    /// assert_eq!(tools[0]["type"], "namespace");
    /// assert_eq!(tools[0]["name"], "links_v1_LinksService");
    /// assert_eq!(tools[0]["tools"][0]["name"], "links_create");
    /// assert_eq!(tools[0]["tools"][0]["defer_loading"], true);
    /// assert_eq!(tools[1]["name"], "links_v1_WorkflowStepsService");
    /// assert_eq!(tools.last(), Some(&json!({"type": "tool_search"})));
    /// assert_eq!(check_openai_tool_search(tools), []);
    /// ```
    pub fn to_openai_tool_search(&self) -> Value {
        let mut out: Vec<Value> = Vec::new();
        // Service → where its namespace is in `out`.
        let mut namespaces: HashMap<&str, usize> = HashMap::new();
        // The namespaces whose service has no comment, described at the end.
        let mut uncommented: Vec<(usize, &str)> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for tool in &self.tools {
            let mut function = tool.to_openai_responses();
            let Kind::Generated {
                tool: generated,
                source,
            } = &tool.kind
            else {
                out.push(function);
                continue;
            };
            function["defer_loading"] = Value::Bool(true);
            let service = generated.method.service;
            let at = match namespaces.get(service) {
                Some(&at) => at,
                None => {
                    let name = unique(openai_namespace_name(service), &mut names);
                    let comment = service_comment(source.descriptor_pool(), service);
                    if comment.is_none() {
                        uncommented.push((out.len(), service));
                    }
                    out.push(json!({
                        "type": "namespace",
                        "name": name,
                        "description": comment.unwrap_or_default(),
                        "tools": [],
                    }));
                    namespaces.insert(service, out.len() - 1);
                    out.len() - 1
                }
            };
            if let Some(members) = out[at]["tools"].as_array_mut() {
                members.push(function);
            }
        }
        for (at, service) in uncommented {
            let members: Vec<&str> = out[at]["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|function| function["name"].as_str())
                .collect();
            let description = format!(
                "The tools of the gRPC service `{service}`: {}.",
                members.join(", ")
            );
            out[at]["description"] = Value::String(description);
        }
        if !namespaces.is_empty() {
            out.push(json!({ "type": OPENAI_TOOL_SEARCH }));
        }
        Value::Array(out)
    }

    /// Every tool in the shape of Anthropic's `tools` with the
    /// [tool search tool]: `search`'s definition first
    /// (`{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}`
    /// or the BM25 one), never deferred; then every tool as
    /// [`to_anthropic`](Self::to_anthropic) has it (`strict` kept within
    /// Anthropic's per-request budgets), a generated tool with
    /// `"defer_loading": true`, a native one loaded up front. Without a
    /// generated tool nothing is deferred, and this is
    /// [`to_anthropic`](Self::to_anthropic).
    ///
    /// No tool keeps its `input_examples` (`rpc_tool.examples`): the page
    /// says the tool search tool "is not compatible with tool use
    /// examples", and a request with both is refused.
    ///
    /// Before its first search the model reads only the search tool and
    /// the tools not deferred; a search loads the 3–5 tools it finds most
    /// relevant. The page lists the models that support tool search.
    ///
    /// [tool search tool]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::deferred::check_anthropic_tool_search;
    /// use proto_ai_tools::toolkit::deferred::AnthropicToolSearch;
    /// use serde_json::json;
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
    ///
    /// let tools = toolkit.to_anthropic_tool_search(AnthropicToolSearch::Bm25);
    /// let tools = tools.as_array().unwrap();
    /// assert_eq!(tools[0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
    /// assert_eq!(tools[1]["name"], "links_create");
    /// assert_eq!(tools[1]["defer_loading"], true);
    /// // `links_create` has examples; beside tool search they are left out.
    /// assert!(toolkit.to_anthropic()[0].get("input_examples").is_some());
    /// assert!(tools[1].get("input_examples").is_none());
    /// assert_eq!(check_anthropic_tool_search(tools), []);
    /// ```
    pub fn to_anthropic_tool_search(&self, search: AnthropicToolSearch) -> Value {
        let listed = match self.to_anthropic() {
            Value::Array(listed) => listed,
            _ => Vec::new(),
        };
        let mut deferred = false;
        let mut out: Vec<Value> = listed
            .into_iter()
            .zip(&self.tools)
            .map(|(mut shape, tool)| {
                if let Some(shape) = shape.as_object_mut() {
                    shape.remove("input_examples");
                }
                if matches!(tool.kind, Kind::Generated { .. }) {
                    shape["defer_loading"] = Value::Bool(true);
                    deferred = true;
                }
                shape
            })
            .collect();
        if deferred {
            out.insert(0, search.definition());
        }
        Value::Array(out)
    }
}

/// `name`, or `name_2`, `name_3`... if taken; recorded as taken.
fn unique(name: String, taken: &mut HashSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 1_usize;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{name}_{n}");
    }
    taken.insert(candidate.clone());
    candidate
}

/// The leading comment of the service `service` in `pool` (the
/// descriptors its executor embeds, comments included), if it has one.
fn service_comment(pool: &DescriptorPool, service: &str) -> Option<String> {
    pool.get_service_by_name(service)
        .and_then(|s| leading_comment(&s.parent_file(), s.path()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proto_ai_tools_schema::check::Violation;
    use proto_ai_tools_schema::deferred::{check_anthropic_tool_search, check_openai_tool_search};

    use super::*;
    use crate::transport::InProcessTransport;
    use crate::{AliasManager, NativeTool, ToolInput};

    mod links {
        proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    }

    mod conformance {
        proto_ai_tools::ai_tools!("proto/conformance/v1/conformance.proto");
    }

    /// googleapis' Operations service, every method a tool: its service has
    /// a leading comment.
    mod operations {
        proto_ai_tools::ai_tools!(
            "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
            includes = ["proto/third_party/googleapis"],
            services = ["google.longrunning.Operations"]
        );
    }

    /// Echo a text.
    #[derive(serde::Deserialize, ToolInput)]
    struct Echo {
        /// The text.
        text: String,
    }

    fn corpus() -> Toolkit {
        let aliases = Arc::new(AliasManager::new());
        let echo =
            NativeTool::new::<Echo, _, _>(
                "echo",
                "Echo a text.",
                |_, e: Echo| async move { e.text },
            );
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(links::Executor::with_alias_manager(
                InProcessTransport::new(),
                aliases.clone(),
            ))
            .native(echo)
            .generated(conformance::Executor::with_alias_manager(
                InProcessTransport::new(),
                aliases.clone(),
            ))
            .generated(operations::Executor::with_alias_manager(
                InProcessTransport::new(),
                aliases,
            ))
            .build()
            .unwrap()
    }

    fn array(v: &Value) -> &[Value] {
        v.as_array().map(Vec::as_slice).unwrap_or_default()
    }

    #[test]
    fn the_corpus_renders_for_openai_tool_search_and_passes_its_checker() {
        let toolkit = corpus();
        let rendered = toolkit.to_openai_tool_search();
        let tools = array(&rendered);
        assert_eq!(check_openai_tool_search(tools), Vec::<Violation>::new());

        let names: Vec<&str> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            names,
            [
                "links_v1_LinksService",
                "links_v1_WorkflowStepsService",
                "echo",
                "conformance_v1_ConformanceService",
                "google_longrunning_Operations",
                "",
            ]
        );
        assert_eq!(tools[5], json!({ "type": "tool_search" }));
        // The native tool is loaded up front, in Responses' own shape.
        let echo = toolkit.get("echo").unwrap().to_openai_responses();
        assert_eq!(tools[2], echo);
        // Every generated tool is in its service's namespace, deferred, in
        // Responses' shape.
        let mut inside = 0;
        for namespace in tools.iter().filter(|t| t["type"] == "namespace") {
            for function in array(&namespace["tools"]) {
                let name = function["name"].as_str().unwrap();
                let mut expected = toolkit.get(name).unwrap().to_openai_responses();
                expected["defer_loading"] = json!(true);
                assert_eq!(function, &expected);
                let service = toolkit
                    .get(name)
                    .unwrap()
                    .agent_tool()
                    .unwrap()
                    .method
                    .service;
                assert_eq!(namespace["name"], openai_namespace_name(service));
                inside += 1;
            }
        }
        assert_eq!(inside, toolkit.tools().len() - 1);
        // The service's leading comment, else a sentence naming it.
        assert!(
            tools[4]["description"]
                .as_str()
                .unwrap()
                .starts_with("Manages long-running operations with an API service."),
            "{}",
            tools[4]["description"]
        );
        assert_eq!(
            tools[0]["description"],
            "The tools of the gRPC service `links.v1.LinksService`: links_create, links_update, links_list."
        );
    }

    #[test]
    fn the_corpus_renders_for_anthropic_tool_search_and_passes_its_checker() {
        let toolkit = corpus();
        let plain = toolkit.to_anthropic();
        for search in AnthropicToolSearch::ALL {
            let rendered = toolkit.to_anthropic_tool_search(search);
            let tools = array(&rendered);
            assert_eq!(check_anthropic_tool_search(tools), Vec::<Violation>::new());
            assert_eq!(tools[0], search.definition());
            // The rest is `to_anthropic`, the generated tools deferred,
            // without examples.
            assert_eq!(tools.len(), toolkit.tools().len() + 1);
            for ((shape, plain), tool) in tools[1..].iter().zip(array(&plain)).zip(toolkit.tools())
            {
                let mut expected = plain.clone();
                if let Some(expected) = expected.as_object_mut() {
                    expected.remove("input_examples");
                }
                if tool.agent_tool().is_some() {
                    expected["defer_loading"] = json!(true);
                }
                assert_eq!(shape, &expected);
            }
        }
    }

    #[test]
    fn nothing_deferred_without_generated_tools() {
        let echo =
            NativeTool::new::<Echo, _, _>(
                "echo",
                "Echo a text.",
                |_, e: Echo| async move { e.text },
            );
        let toolkit = Toolkit::builder().native(echo).build().unwrap();
        assert_eq!(
            toolkit.to_openai_tool_search(),
            toolkit.to_openai_responses()
        );
        assert_eq!(
            toolkit.to_anthropic_tool_search(AnthropicToolSearch::Regex),
            toolkit.to_anthropic()
        );
    }

    #[test]
    fn repeated_namespace_names_are_numbered() {
        let mut taken = HashSet::new();
        assert_eq!(unique("a_b_S".into(), &mut taken), "a_b_S");
        assert_eq!(unique("a_b_S".into(), &mut taken), "a_b_S_2");
        assert_eq!(unique("a_b_S".into(), &mut taken), "a_b_S_3");
    }
}
