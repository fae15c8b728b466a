//! Tokens: what each tool definition costs the model, counted with
//! o200k_base (the GPT-4o/o-series vocabulary) for every rendering of the
//! test corpus, per tool and per dialect; then what the renderings spend on
//! things that do not help the model, each measured as the tokens saved by
//! removing it.

use proto_ai_tools_benches::{CORPUS, corpus_tools, quick_mode};
use proto_ai_tools_schema::render::{
    MAX_SAFE_INTEGER, SIGNED_DIGITS_PATTERN, UNSIGNED_DIGITS_PATTERN,
};
use proto_ai_tools_schema::{Dialect, HostProfile, ToolSpec};
use serde_json::{Map, Value};
use tiktoken_rs::CoreBPE;

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_ordinary(text).len()
}

/// Whether an object member (key, value, the object it is in) is to go.
type DropRule = dyn Fn(&str, &Value, &Map<String, Value>) -> bool;

/// Removes, everywhere in `v`, object members for which `drop(key, value, parent)` holds.
fn strip(v: &mut Value, drop: &DropRule) {
    match v {
        Value::Object(map) => {
            let parent = map.clone();
            map.retain(|k, val| !drop(k, val, &parent));
            for val in map.values_mut() {
                strip(val, drop);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| strip(i, drop)),
        _ => {}
    }
}

/// A candidate waste: its name and how to remove it from a rendering.
struct Candidate {
    name: &'static str,
    drop: &'static DropRule,
    /// Dialects where removing it changes nothing the provider requires.
    applies: fn(Dialect, bool) -> bool,
}

fn candidates() -> Vec<Candidate> {
    vec![
        Candidate {
            name: "empty `description` strings",
            drop: &|k, v, _| k == "description" && v.as_str() == Some(""),
            applies: |_, _| true,
        },
        Candidate {
            name: "`required: []` (empty)",
            drop: &|k, v, _| k == "required" && v.as_array().is_some_and(Vec::is_empty),
            // OpenAI strict demands `required` on every object.
            applies: |d, strict| !(d == Dialect::OpenAi && strict),
        },
        Candidate {
            name: "`additionalProperties: false`",
            drop: &|k, v, _| k == "additionalProperties" && v == &Value::Bool(false),
            // Required by OpenAI strict and Anthropic strict; elsewhere a hint only.
            applies: |d, strict| !(strict && matches!(d, Dialect::OpenAi | Dialect::Anthropic)),
        },
        Candidate {
            name: "`properties: {}` (empty)",
            drop: &|k, v, _| k == "properties" && v.as_object().is_some_and(Map::is_empty),
            applies: |d, strict| !(d == Dialect::OpenAi && strict),
        },
        Candidate {
            name: "`type` beside `enum` (the values already say string)",
            drop: &|k, _, parent| k == "type" && parent.contains_key("enum"),
            // Every node carries a type by design (some providers reject typeless nodes).
            applies: |_, _| false,
        },
        Candidate {
            name: "`title` keywords",
            drop: &|k, v, _| k == "title" && v.is_string(),
            applies: |_, _| true,
        },
        Candidate {
            name: "`$schema` keywords",
            drop: &|k, _, _| k == "$schema",
            applies: |_, _| true,
        },
        Candidate {
            name: "`format` keywords",
            drop: &|k, _, _| k == "format",
            applies: |_, _| false,
        },
    ]
}

/// Descriptions repeated verbatim by a child of the node that has them (a
/// `$ref`/`anyOf` wrapper and its target, an array and its items).
fn repeated_descriptions(v: &mut Value) {
    fn walk(v: &mut Value, inherited: Option<&str>) {
        match v {
            Value::Object(map) => {
                if let (Some(parent), Some(Value::String(own))) =
                    (inherited, map.get("description"))
                    && parent == own
                {
                    map.remove("description");
                }
                let own = map
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                for (k, child) in map.iter_mut() {
                    if k == "properties" || k == "$defs" || k == "definitions" {
                        if let Value::Object(props) = child {
                            props.values_mut().for_each(|p| walk(p, None));
                        }
                    } else {
                        walk(child, own.as_deref());
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, inherited)),
            _ => {}
        }
    }
    walk(v, None);
}

/// Keeps the oneof note ("Set at most one of ...") on the first member of
/// each group only: every member repeats the same list today.
fn oneof_note_once(v: &mut Value) {
    const NOTE: &str = "\n\nSet at most one of ";
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                let mut seen = std::collections::HashSet::new();
                for prop in props.values_mut() {
                    if let Some(Value::String(d)) = prop.get_mut("description")
                        && let Some(at) = d.find(NOTE)
                        && !seen.insert(d[at..].to_owned())
                    {
                        d.truncate(at);
                    }
                }
            }
            map.values_mut().for_each(oneof_note_once);
        }
        Value::Array(items) => items.iter_mut().for_each(oneof_note_once),
        _ => {}
    }
}

/// Tokens spent on object subtrees that occur more than once, verbatim, in one
/// rendering (a message used by several fields, inlined each time), less the
/// `{"$ref":"#/$defs/x"}` that would replace each repeat.
fn repeated_subtrees(bpe: &CoreBPE, v: &Value) -> usize {
    fn collect(v: &Value, out: &mut std::collections::HashMap<String, usize>) {
        match v {
            Value::Object(map) => {
                if map.get("type").and_then(Value::as_str) == Some("object")
                    && map
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| p.len() >= 2)
                {
                    *out.entry(v.to_string()).or_default() += 1;
                }
                map.values().for_each(|c| collect(c, out));
            }
            Value::Array(items) => items.iter().for_each(|c| collect(c, out)),
            _ => {}
        }
    }
    let mut seen = std::collections::HashMap::new();
    collect(v, &mut seen);
    // Count only outermost repeats: a repeated subtree inside another repeated one is already counted.
    let mut repeats: Vec<(&String, usize)> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(s, n)| (s, *n))
        .collect();
    repeats.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    let mut counted: Vec<&String> = Vec::new();
    let mut saved = 0;
    let reference = tokens(bpe, r##"{"$ref":"#/$defs/pkg.v1.Message"}"##);
    for (text, n) in repeats {
        if counted.iter().any(|outer| outer.contains(text.as_str())) {
            continue;
        }
        saved += (n - 1) * tokens(bpe, text).saturating_sub(reference);
        saved = saved.saturating_sub(reference);
        counted.push(text);
    }
    saved
}

fn render(tool: &ToolSpec, dialect: Dialect) -> Value {
    tool.render(dialect)
}

/// The other candidate form of a 64-bit integer for a host that parses
/// doubles: every string-of-digits node (the chosen form) as an `anyOf` of
/// an integer within ±2^53 and that string, so the model may send either.
fn integer_or_digits(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let digits = map.get("type").and_then(Value::as_str) == Some("string")
                && map
                    .get("pattern")
                    .and_then(Value::as_str)
                    .is_some_and(|p| p == SIGNED_DIGITS_PATTERN || p == UNSIGNED_DIGITS_PATTERN);
            if digits {
                let string = Value::Object(std::mem::take(map));
                let integer = serde_json::json!({
                    "type": "integer",
                    "minimum": -(MAX_SAFE_INTEGER as i64),
                    "maximum": MAX_SAFE_INTEGER as i64,
                });
                map.insert("anyOf".into(), Value::Array(vec![integer, string]));
                return;
            }
            map.values_mut().for_each(integer_or_digits);
        }
        Value::Array(items) => items.iter_mut().for_each(integer_or_digits),
        _ => {}
    }
}

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    let quick = quick_mode();
    let mut per_dialect = [0usize; Dialect::ALL.len()];
    let mut pretty_per_dialect = [0usize; Dialect::ALL.len()];
    println!(
        "tokens: o200k_base; parameters = the minified parameters schema as a tool serves it; def = name + description + parameters"
    );
    println!(
        "| proto | tool | strict | {} |",
        Dialect::ALL.map(|d| d.as_str()).join(" | ")
    );
    println!("|---|---|---|{}", "---:|".repeat(Dialect::ALL.len()));
    let mut all: Vec<(ToolSpec, Dialect, Value)> = Vec::new();
    for proto in CORPUS {
        let tools = corpus_tools(proto).expect("corpus compiles");
        for tool in tools {
            let mut cells = Vec::new();
            for (i, dialect) in Dialect::ALL.into_iter().enumerate() {
                let schema = render(&tool, dialect);
                let text = schema.to_string();
                let n = tokens(&bpe, &text);
                let def = n + tokens(&bpe, &tool.name) + tokens(&bpe, &tool.description);
                per_dialect[i] += def;
                pretty_per_dialect[i] +=
                    tokens(&bpe, &serde_json::to_string_pretty(&schema).expect("json"))
                        + tokens(&bpe, &tool.name)
                        + tokens(&bpe, &tool.description);
                cells.push(format!("{n} ({def})"));
                all.push((tool.clone(), dialect, schema));
            }
            println!(
                "| {} | {} | {} | {} |",
                proto.file,
                tool.name,
                tool.strict,
                cells.join(" | ")
            );
            if quick {
                break;
            }
        }
    }
    println!(
        "| all | total def tokens | | {} |",
        per_dialect.map(|n| n.to_string()).join(" | ")
    );
    println!(
        "| all | total def tokens if sent pretty-printed | | {} |",
        pretty_per_dialect.map(|n| n.to_string()).join(" | ")
    );

    // What the alias sentence costs: every rendering without it.
    let mut alias_sentences = [0usize; Dialect::ALL.len()];
    for (_, dialect, schema) in &all {
        fn drop_alias_sentence(v: &mut Value) {
            match v {
                Value::Object(map) => {
                    if let Some(Value::String(d)) = map.get_mut("description")
                        && let Some(at) = d.find("An alias like `")
                    {
                        let end = d[at..]
                            .find("earlier result.")
                            .map_or(d.len(), |e| at + e + 15);
                        d.replace_range(at..end, "");
                        let trimmed = d.trim_end().to_owned();
                        *d = trimmed;
                        if d.is_empty() {
                            map.remove("description");
                        }
                    }
                    map.values_mut().for_each(drop_alias_sentence);
                }
                Value::Array(items) => items.iter_mut().for_each(drop_alias_sentence),
                _ => {}
            }
        }
        let mut without = schema.clone();
        drop_alias_sentence(&mut without);
        let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
        alias_sentences[i] +=
            tokens(&bpe, &schema.to_string()) - tokens(&bpe, &without.to_string());
    }
    println!(
        "| all | of which the alias sentence (\"An alias like `link-1`, from an earlier result.\") | | {} |",
        alias_sentences.map(|n| n.to_string()).join(" | ")
    );

    // Per host profile: the same definitions as an MCP server lists them
    // for that host, and, for a host that parses doubles, what the other
    // candidate form of a 64-bit integer would cost.
    for host in HostProfile::ALL {
        let mut per_host = [0usize; Dialect::ALL.len()];
        let mut either_form = [0usize; Dialect::ALL.len()];
        for (tool, dialect, _) in &all {
            let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
            let mut schema = tool.render_for(*dialect, host);
            let names = tokens(&bpe, &tool.name) + tokens(&bpe, &tool.description);
            per_host[i] += tokens(&bpe, &schema.to_string()) + names;
            integer_or_digits(&mut schema);
            either_form[i] += tokens(&bpe, &schema.to_string()) + names;
        }
        println!(
            "| all | total def tokens for a {host} host | | {} |",
            per_host.map(|n| n.to_string()).join(" | ")
        );
        if host.numbers_as_doubles() {
            println!(
                "| all | the same, 64-bit integers as anyOf(integer within 2^53, digits) | | {} |",
                either_form.map(|n| n.to_string()).join(" | ")
            );
        }
    }

    println!(
        "\ntokens: candidate waste (tokens saved by removing it, over every rendering where the provider does not require it)"
    );
    for candidate in candidates() {
        let mut saved = [0usize; Dialect::ALL.len()];
        let mut required_saved = 0usize;
        for (tool, dialect, schema) in &all {
            let before = tokens(&bpe, &schema.to_string());
            let mut stripped = schema.clone();
            strip(&mut stripped, candidate.drop);
            let gain = before - tokens(&bpe, &stripped.to_string()).min(before);
            if (candidate.applies)(*dialect, tool.strict) {
                let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
                saved[i] += gain;
            } else {
                required_saved += gain;
            }
        }
        println!(
            "tokens: waste {:<55} {} | where required or kept by design: {required_saved}",
            candidate.name,
            Dialect::ALL
                .iter()
                .zip(saved)
                .map(|(d, s)| format!("{d}={s}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let mut saved = [0usize; Dialect::ALL.len()];
    for (_, dialect, schema) in &all {
        let mut stripped = schema.clone();
        repeated_descriptions(&mut stripped);
        let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
        saved[i] += tokens(&bpe, &schema.to_string()) - tokens(&bpe, &stripped.to_string());
    }
    println!(
        "tokens: waste {:<55} {}",
        "descriptions repeated by a wrapped child",
        Dialect::ALL
            .iter()
            .zip(saved)
            .map(|(d, s)| format!("{d}={s}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut saved = [0usize; Dialect::ALL.len()];
    for (_, dialect, schema) in &all {
        let mut stripped = schema.clone();
        oneof_note_once(&mut stripped);
        let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
        saved[i] += tokens(&bpe, &schema.to_string()) - tokens(&bpe, &stripped.to_string());
    }
    println!(
        "tokens: waste {:<55} {}",
        "oneof note repeated on every member",
        Dialect::ALL
            .iter()
            .zip(saved)
            .map(|(d, s)| format!("{d}={s}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut saved = [0usize; Dialect::ALL.len()];
    for (_, dialect, schema) in &all {
        let i = Dialect::ALL.iter().position(|d| d == dialect).unwrap_or(0);
        saved[i] += repeated_subtrees(&bpe, schema);
    }
    println!(
        "tokens: waste {:<55} {} (estimate; only dialects with $defs could take it)",
        "identical message subtrees inlined more than once",
        Dialect::ALL
            .iter()
            .zip(saved)
            .map(|(d, s)| format!("{d}={s}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if std::env::var_os("AI_TOOLS_BENCH_DUMP").is_some() {
        for (tool, dialect, schema) in &all {
            println!("{} {dialect} {schema}", tool.name);
        }
    }
}
