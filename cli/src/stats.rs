//! `ai-tools tools --stats`: what a tool list costs a model, per dialect,
//! before it is served: the tools, the bytes and tokens of the whole list
//! as a provider receives it (compact JSON), and the largest tools.
//!
//! A list that defers its tools to the provider's tool search
//! (`Toolkit::to_openai_tool_search`, `to_anthropic_tool_search`) sends
//! every definition, but the model reads only part of it before its first
//! search: that part gets a line of its own, against the whole list.

use proto_ai_tools::schema::deferred::{
    AnthropicToolSearch, OPENAI_TOOL_SEARCH, anthropic_loaded_up_front, openai_loaded_up_front,
};
use proto_ai_tools::schema::render::minified_len;
use proto_ai_tools::schema::{Dialect, HostProfile};
use serde_json::Value;

/// How many of the largest tools are named.
const LARGEST: usize = 5;

/// The lines of `--stats` for one dialect's `listing` (what `tools
/// --dialect NAME` prints).
pub(crate) fn of_listing(dialect: &str, listing: &Value) -> String {
    let top: &[Value] = listing
        .as_array()
        .or_else(|| listing["functionDeclarations"].as_array())
        .map_or(&[], Vec::as_slice);
    let search = Search::of(top);
    // The tools the model may call: an OpenAI namespace's functions, not
    // the namespace; not the search tool.
    let items: Vec<Value> = top
        .iter()
        .flat_map(|item| match item["type"].as_str() {
            Some("namespace") => item["tools"].as_array().cloned().unwrap_or_default(),
            _ => vec![item.clone()],
        })
        .filter(|item| !is_search_tool(item))
        .collect();
    let items = items.as_slice();
    let whole = listing.to_string();
    let mut sizes: Vec<(String, usize)> = items
        .iter()
        .map(|item| (name_of(item), item.to_string().len()))
        .collect();
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let largest: Vec<String> = sizes
        .iter()
        .take(LARGEST)
        .map(|(name, bytes)| format!("{name} ({bytes} bytes{})", tokens_of_item(items, name)))
        .collect();
    let mut text = format!(
        "{dialect}: {} tools, {} bytes, {}\n  largest: {}\n",
        items.len(),
        whole.len(),
        tokens(&whole),
        if largest.is_empty() {
            "none".to_owned()
        } else {
            largest.join(", ")
        }
    );
    if let Some(search) = search {
        text.push_str(&before_first_search(search, top, items, &whole));
    }
    text
}

/// The tools of `toolkit` that its budget cut (their parameters differ
/// from `whole`'s, the same tools kept whole, in some dialect for `host`),
/// each with the bytes of its largest whole rendering, largest first.
pub(crate) fn cut_tools(
    toolkit: &proto_ai_tools::Toolkit,
    whole: &proto_ai_tools::Toolkit,
    host: HostProfile,
) -> Vec<(String, usize)> {
    let mut cut: Vec<(String, usize)> = toolkit
        .tools()
        .iter()
        .zip(whole.tools())
        .filter_map(|(kept, whole)| {
            Dialect::ALL
                .into_iter()
                .filter_map(|dialect| {
                    let uncut = whole.parameters_for_host(dialect, host);
                    (kept.parameters_for_host(dialect, host) != uncut).then(|| minified_len(&uncut))
                })
                .max()
                .map(|bytes| (kept.name().to_owned(), bytes))
        })
        .collect();
    cut.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    cut
}

/// The line of `--stats` on the size budget: `budget` and the tools
/// ([`cut_tools`]) it cut.
pub(crate) fn of_budget(budget: usize, cut: &[(String, usize)]) -> String {
    let named: Vec<String> = cut
        .iter()
        .take(LARGEST)
        .map(|(name, bytes)| format!("{name} ({bytes} bytes whole)"))
        .collect();
    match cut.len() {
        0 => format!("budget: {budget} bytes per tool definition; no tool cut\n"),
        n => format!(
            "budget: {budget} bytes per tool definition; {n} tools cut to fit, nested objects \
             as JSON text: {}{}\n",
            named.join(", "),
            if n > LARGEST { ", …" } else { "" }
        ),
    }
}

/// Whose tool search a list uses.
#[derive(Clone, Copy)]
enum Search {
    /// OpenAI Responses: `{"type": "tool_search"}`.
    OpenAi,
    /// Anthropic: the regex or BM25 tool search tool.
    Anthropic,
}

impl Search {
    fn of(items: &[Value]) -> Option<Self> {
        items.iter().find_map(|item| match item["type"].as_str() {
            Some(OPENAI_TOOL_SEARCH) => Some(Search::OpenAi),
            Some(ty) if AnthropicToolSearch::from_type(ty).is_some() => Some(Search::Anthropic),
            _ => None,
        })
    }
}

fn is_search_tool(item: &Value) -> bool {
    Search::of(std::slice::from_ref(item)).is_some()
}

/// The line of a tool search list: what the model reads before its first
/// search, against the whole list (every definition, which the request
/// carries).
///
/// What is read up front is what each provider documents
/// (`proto_ai_tools::schema::deferred`): for OpenAI's tool search, the names and
/// descriptions of the namespaces and of the deferred functions outside
/// them, the tools not deferred, and `tool_search` itself
/// (<https://developers.openai.com/api/docs/guides/tools-tool-search>); for
/// Anthropic's tool search tool, the search tool and the tools not deferred
/// (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>).
/// Each provider writes these into the model's context in a form of its
/// own: the count is of the JSON, as for the whole list.
fn before_first_search(search: Search, top: &[Value], items: &[Value], whole: &str) -> String {
    let (up_front, namespaces) = match search {
        Search::OpenAi => (
            openai_loaded_up_front(top),
            top.iter()
                .filter(|item| item["type"] == "namespace")
                .count(),
        ),
        Search::Anthropic => (anthropic_loaded_up_front(top), 0),
    };
    let up_front = up_front.to_string();
    let deferred = items
        .iter()
        .filter(|item| item["defer_loading"] == true)
        .count();
    let share = match (count(&up_front), count(whole)) {
        (Some(part), Some(all)) => percent(part, all, "tokens"),
        _ => percent(up_front.len(), whole.len(), "bytes"),
    };
    // Without a token count the first line of the dialect says why.
    let tokens = count(&up_front)
        .map(|n| format!(", {n} tokens"))
        .unwrap_or_default();
    format!(
        "  before the first search: {} bytes{tokens}, {share}; {deferred} tools deferred{}\n",
        up_front.len(),
        if namespaces > 0 {
            format!(" in {namespaces} namespaces")
        } else {
            String::new()
        }
    )
}

/// `part` as a share of `all`, the list's: `2.5% of the list's tokens`.
fn percent(part: usize, all: usize, what: &str) -> String {
    if all == 0 {
        return format!("all of the list's {what}");
    }
    // Tenths of a percent, rounded, in integers.
    let tenths = part.saturating_mul(1000).saturating_add(all / 2) / all;
    format!("{}.{}% of the list's {what}", tenths / 10, tenths % 10)
}

/// A listed tool's name, in any dialect's shape.
fn name_of(item: &Value) -> String {
    item["name"]
        .as_str()
        .or_else(|| item["function"]["name"].as_str())
        .unwrap_or("?")
        .to_owned()
}

/// `, N tokens` of the item named `name`, when tokens are counted.
fn tokens_of_item(items: &[Value], name: &str) -> String {
    items
        .iter()
        .find(|item| name_of(item) == name)
        .and_then(|item| count(&item.to_string()))
        .map(|n| format!(", {n} tokens"))
        .unwrap_or_default()
}

/// `N tokens (o200k_base)`, or why tokens are not counted.
fn tokens(text: &str) -> String {
    match count(text) {
        Some(n) => format!("{n} tokens (o200k_base)"),
        None => "tokens not counted (build ai-tools with --features tokens)".to_owned(),
    }
}

/// The o200k_base tokens of `text` (feature `tokens`).
#[cfg(feature = "tokens")]
fn count(text: &str) -> Option<usize> {
    Some(
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len(),
    )
}

#[cfg(not(feature = "tokens"))]
fn count(_text: &str) -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_tools_come_first_and_every_shape_is_read() {
        let listing = serde_json::json!([
            {"type": "function", "function": {"name": "small", "parameters": {}}},
            {"type": "function", "function": {"name": "large", "parameters": {"description": "x".repeat(100)}}},
        ]);
        let text = of_listing("openai", &listing);
        assert!(
            text.starts_with(&format!(
                "openai: 2 tools, {} bytes, ",
                listing.to_string().len()
            )),
            "{text}"
        );
        let largest = text.lines().nth(1).unwrap();
        assert!(
            largest.find("large (").unwrap() < largest.find("small (").unwrap(),
            "{text}"
        );
        let gemini =
            serde_json::json!({"functionDeclarations": [{"name": "one", "parameters": {}}]});
        assert!(of_listing("gemini", &gemini).contains("gemini: 1 tools"));
        assert!(!of_listing("gemini", &gemini).contains("before the first search"));
    }

    fn function(name: &str, deferred: bool) -> Value {
        serde_json::json!({
            "type": "function",
            "name": name,
            "description": "Does a thing.",
            "parameters": {"type": "object", "properties": {"a": {"type": "string", "description": "x".repeat(400)}}},
            "defer_loading": deferred
        })
    }

    #[test]
    fn a_tool_search_list_says_what_is_read_before_the_first_search() {
        let openai = serde_json::json!([
            {"type": "namespace", "name": "ns", "description": "Things.", "tools": [function("a", true), function("b", true)]},
            function("c", false),
            {"type": "tool_search"}
        ]);
        let text = of_listing("openai_tool_search", &openai);
        assert!(text.starts_with("openai_tool_search: 3 tools, "), "{text}");
        let line = text.lines().nth(2).unwrap_or_default();
        let up_front = openai_loaded_up_front(openai.as_array().unwrap()).to_string();
        assert!(
            line.starts_with(&format!(
                "  before the first search: {} bytes, ",
                up_front.len()
            )),
            "{text}"
        );
        assert!(
            line.ends_with("; 2 tools deferred in 1 namespaces"),
            "{text}"
        );
        assert!(line.contains("% of the list's "), "{text}");

        let anthropic = serde_json::json!([
            AnthropicToolSearch::Bm25.definition(),
            {"name": "a", "description": "A.", "input_schema": {"type": "object"}, "defer_loading": true},
            {"name": "b", "description": "B.", "input_schema": {"type": "object"}}
        ]);
        let text = of_listing("anthropic_tool_search", &anthropic);
        assert!(
            text.starts_with("anthropic_tool_search: 2 tools, "),
            "{text}"
        );
        assert!(
            text.lines()
                .nth(2)
                .unwrap_or_default()
                .ends_with("; 1 tools deferred"),
            "{text}"
        );
    }

    #[test]
    fn the_links_tools_read_up_front_are_a_fraction_of_the_list() {
        use proto_ai_tools::transport::InProcessTransport;
        let executor = proto_ai_tools_tests::tools::links::Executor::new(InProcessTransport::new());
        let toolkit = proto_ai_tools::Toolkit::builder()
            .generated(executor)
            .build()
            .expect("a toolkit");
        for (name, listing) in [
            ("openai_tool_search", toolkit.to_openai_tool_search()),
            (
                "anthropic_tool_search",
                toolkit.to_anthropic_tool_search(AnthropicToolSearch::Regex),
            ),
        ] {
            let text = of_listing(name, &listing);
            assert!(text.starts_with(&format!("{name}: 5 tools, ")), "{text}");
            let line = text.lines().nth(2).unwrap_or_default();
            assert!(line.contains("; 5 tools deferred"), "{text}");
            // Five small tools: the namespaces' descriptions, or the search
            // tool, are still under a fifth of the list.
            let share = line
                .split(", ")
                .find(|part| part.contains("% of the list's "));
            let percent: f64 = share
                .and_then(|s| s.split('%').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(100.0);
            assert!(percent < 20.0, "{text}");
        }
    }

    #[test]
    fn a_budget_names_the_tools_it_cut_largest_first_and_each_then_fits() {
        use proto_ai_tools::schema::render::minified_len;
        use proto_ai_tools::transport::InProcessTransport;
        let toolkit = |bytes| {
            proto_ai_tools::Toolkit::builder()
                .generated(proto_ai_tools_tests::tools::conformance::Executor::new(
                    InProcessTransport::new(),
                ))
                .max_tool_bytes(bytes)
                .build()
                .expect("a toolkit")
        };
        let (small, whole) = (toolkit(3072), toolkit(usize::MAX));
        let cut = cut_tools(&small, &whole, HostProfile::Exact);
        assert!(
            cut.iter().any(|(name, _)| name == "conformance_everything"),
            "{cut:?}"
        );
        assert!(cut.windows(2).all(|w| w[0].1 >= w[1].1), "{cut:?}");
        // Every definition of a cut tool now fits, as a provider lists it,
        // or is as small as a cut makes it (every nested object cut).
        let smallest = toolkit(0).to_openai();
        let listed = small.to_openai();
        let items = listed.as_array().expect("a list");
        for (item, least) in items.iter().zip(smallest.as_array().expect("a list")) {
            let name = item["function"]["name"].as_str().unwrap_or_default();
            if cut.iter().any(|(cut, _)| cut == name) {
                assert!(
                    minified_len(item) <= 3072 || item == least,
                    "{name}: {}",
                    minified_len(item)
                );
            }
        }
        // Some cut tool fits now that did not whole.
        assert!(
            items.iter().any(|item| minified_len(item) <= 3072
                && cut
                    .iter()
                    .any(|(name, _)| item["function"]["name"] == name.as_str())),
            "{cut:?}"
        );
        let line = of_budget(3072, &cut);
        assert!(
            line.starts_with(&format!(
                "budget: 3072 bytes per tool definition; {} tools cut to fit",
                cut.len()
            )),
            "{line}"
        );
        assert_eq!(
            of_budget(16384, &[]),
            "budget: 16384 bytes per tool definition; no tool cut\n"
        );
    }

    #[test]
    fn shares_are_rounded_to_a_tenth() {
        assert_eq!(percent(1, 3, "tokens"), "33.3% of the list's tokens");
        assert_eq!(percent(2, 3, "bytes"), "66.7% of the list's bytes");
        assert_eq!(percent(0, 0, "bytes"), "all of the list's bytes");
    }
}
