//! `ai-tools tools --stats`: what a tool list costs a model, per dialect,
//! before it is served: the tools, the bytes and tokens of the whole list
//! as a provider receives it (compact JSON), and the largest tools.

use serde_json::Value;

/// How many of the largest tools are named.
const LARGEST: usize = 5;

/// The lines of `--stats` for one dialect's `listing` (what `tools
/// --dialect NAME` prints).
pub(crate) fn of_listing(dialect: &str, listing: &Value) -> String {
    let items: &[Value] = listing
        .as_array()
        .or_else(|| listing["functionDeclarations"].as_array())
        .map_or(&[], Vec::as_slice);
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
    format!(
        "{dialect}: {} tools, {} bytes, {}\n  largest: {}\n",
        items.len(),
        whole.len(),
        tokens(&whole),
        if largest.is_empty() {
            "none".to_owned()
        } else {
            largest.join(", ")
        }
    )
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
    }
}
