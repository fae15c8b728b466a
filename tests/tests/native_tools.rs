//! `#[derive(ToolInput)]` and `NativeTool`: the schema follows serde's
//! attributes, and what the schema advertises, serde accepts (round trips in
//! every dialect).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use proto_ai_tools::schema::ir::Kind;
use proto_ai_tools::schema::{Dialect, check, render};
use proto_ai_tools::{AliasManager, CallOptions, NativeTool, ToolInput, ToolResult};
use serde_json::{Map, Value, json};

/// Search the docs.
#[derive(Debug, serde::Deserialize, ToolInput)]
#[allow(dead_code)]
struct SearchInput {
    /// What to look for.
    query: String,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(skip)]
    secret: String,
    #[tool(
        alias_prefix = "link",
        usage_notes = "Use an id a tool returned; never invent one."
    )]
    link_id: Option<String>,
}

#[test]
fn search_input_schema() {
    assert_eq!(
        render::parameters(&SearchInput::tool_schema(), Dialect::Anthropic, false),
        json!({
            "type": "object",
            "description": "Search the docs.",
            "properties": {
                "query": { "type": "string", "description": "What to look for." },
                "limit": { "type": "integer", "minimum": 0, "maximum": 4294967295u32 },
                "link_id": {
                    "type": "string",
                    "description": "Use an id a tool returned; never invent one.\n\nAn alias like `link-1`, from an earlier result."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
    let fields = SearchInput::alias_fields();
    assert_eq!(fields.len(), 1);
    assert_eq!(
        (
            fields[0].message.as_str(),
            fields[0].field.as_str(),
            fields[0].prefix.as_str()
        ),
        ("SearchInput", "link_id", "link")
    );
}

/// How fast to go.
#[derive(Debug, PartialEq, serde::Deserialize, ToolInput)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Speed {
    /// Slowly.
    Slow,
    FullThrottle,
    #[serde(rename = "warp")]
    Warp,
    #[serde(skip)]
    #[allow(dead_code)]
    Hidden,
}

/// Where to send it.
#[derive(Debug, PartialEq, serde::Deserialize, ToolInput)]
enum Target {
    /// By webhook.
    Webhook(Webhook),
    /// By email.
    Email {
        to: String,
        #[serde(default)]
        cc: Vec<String>,
    },
}

#[derive(Debug, PartialEq, serde::Deserialize, ToolInput)]
#[serde(deny_unknown_fields)]
struct Webhook {
    url: String,
}

#[derive(Debug, PartialEq, serde::Deserialize, ToolInput)]
struct Paging {
    page: u16,
    #[serde(default)]
    per_page: Option<u8>,
}

/// Everything serde can say about a field.
#[derive(Debug, serde::Deserialize, ToolInput)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Everything {
    /// A renamed field.
    #[serde(rename = "the-name")]
    name: String,
    link_ids: Vec<String>,
    #[serde(skip_deserializing)]
    computed: u64,
    #[serde(default = "default_count")]
    count: i32,
    ratio: f64,
    on: bool,
    letter: char,
    speed: Speed,
    tags: HashMap<String, u32>,
    sorted: BTreeMap<String, Vec<bool>>,
    pair: Vec<i8>,
    free: Value,
    boxed: Box<Option<String>>,
    #[serde(flatten)]
    paging: Paging,
    r#type: String,
}

fn default_count() -> i32 {
    7
}

#[test]
fn serde_attributes_decide_names_and_required() {
    let schema = Everything::tool_schema();
    let object = schema.as_object().unwrap();
    let props: Vec<(&str, bool)> = object
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.required))
        .collect();
    assert_eq!(
        props,
        [
            ("the-name", true),
            ("linkIds", true),
            ("count", false),
            ("ratio", true),
            ("on", true),
            ("letter", true),
            ("speed", true),
            ("tags", true),
            ("sorted", true),
            ("pair", true),
            ("free", true),
            ("boxed", false),
            ("page", true),
            ("per_page", false),
            ("type", true),
        ]
    );
    assert_eq!(
        object.properties[0].schema.description.as_deref(),
        Some("A renamed field.")
    );
    let speed = &object.properties[6].schema;
    assert_eq!(
        speed.kind,
        Kind::Enum(vec!["SLOW".into(), "FULL_THROTTLE".into(), "warp".into()])
    );
    assert_eq!(
        speed.description.as_deref(),
        Some("How fast to go.\n\n- `SLOW`: Slowly.")
    );
    assert!(matches!(object.properties[7].schema.kind, Kind::Map(_)));
    assert_eq!(object.properties[10].schema.kind, Kind::Any);
}

#[test]
fn data_enums_take_one_variant_by_schema() {
    // As a property, a data enum is an `anyOf` of one-variant objects: the
    // schema itself says "exactly one".
    let sends = render::parameters(&Sends::tool_schema(), Dialect::Anthropic, false);
    let branches = sends["properties"]["target"]["anyOf"]
        .as_array()
        .expect("anyOf");
    assert_eq!(
        sends["properties"]["target"]["description"],
        "Where to send it."
    );
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0]["required"], json!(["Webhook"]));
    assert_eq!(branches[0]["additionalProperties"], false);
    assert_eq!(
        branches[1]["properties"]["Email"]["required"],
        json!(["to"])
    );
    // As a tool's whole input it cannot be a root `anyOf` (providers refuse
    // one): an object of optional variants, the rule in the description.
    let schema = Target::tool_schema();
    assert_eq!(
        render::parameters(&schema, Dialect::Anthropic, false),
        json!({
            "type": "object",
            "description": "Where to send it.\n\nSet exactly one of `Webhook`, `Email`.",
            "properties": {
                "Webhook": {
                    "type": "object",
                    "description": "By webhook.",
                    "properties": { "url": { "type": "string" } },
                    "required": ["url"],
                    "additionalProperties": false
                },
                "Email": {
                    "type": "object",
                    "description": "By email.",
                    "properties": {
                        "to": { "type": "string" },
                        "cc": { "type": "array", "items": { "type": "string" } }
                    },
                    "required": ["to"],
                    "additionalProperties": false
                }
            },
            "additionalProperties": false
        })
    );
}

/// A tree of steps.
#[derive(Debug, serde::Deserialize, ToolInput)]
struct Tree {
    /// The step.
    #[tool(alias_prefix = "step")]
    step_id: String,
    /// Steps under this one.
    #[serde(default)]
    children: Vec<Tree>,
}

#[test]
fn recursion_is_a_definition() {
    let json_schema = render::parameters(&Tree::tool_schema(), Dialect::JsonSchema, false);
    assert_eq!(
        json_schema["$defs"]["Tree"]["properties"]["step_id"]["type"],
        "string"
    );
    assert!(
        json_schema["properties"]["children"]["items"]["$ref"].is_string(),
        "{json_schema}"
    );
    for dialect in Dialect::ALL {
        for strict in [false, true] {
            let rendered = render::parameters(&Tree::tool_schema(), dialect, strict);
            let violations = check::check(dialect, strict, &rendered);
            assert!(
                violations.is_empty(),
                "{dialect} strict={strict}: {violations:?}"
            );
        }
    }
}

fn echo<T: ToolInput + std::fmt::Debug + Send + 'static>(strict: bool) -> NativeTool {
    NativeTool::new::<T, _, _>(
        "echo",
        "Echo the decoded input.",
        |_, input: T| async move { format!("{input:?}") },
    )
    .strict(strict)
}

async fn call<T: ToolInput + std::fmt::Debug + Send + 'static>(args: &Value) -> ToolResult {
    echo::<T>(false)
        .call(
            Arc::new(AliasManager::new()),
            &args.to_string(),
            &CallOptions::new(),
        )
        .await
}

thread_local! {
    /// The canonical rendering of the type under test, for the definitions
    /// that recursion cuts refer to.
    static CANONICAL: std::cell::RefCell<Value> = const { std::cell::RefCell::new(Value::Null) };
}

/// A value the rendered `schema` allows: every property (`full`) or only the
/// required ones, the first enum value, one item per array.
fn example(schema: &Value, root: &Value, full: bool, depth: usize) -> Value {
    if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
        let target = root
            .pointer(pointer.trim_start_matches('#'))
            .cloned()
            .unwrap_or(Value::Null);
        return example(&target, root, full, depth + 1);
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let branch = branches
            .iter()
            .find(|b| b["type"] != "null")
            .unwrap_or(&branches[0]);
        return example(branch, root, full, depth);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values[0].clone();
    }
    let ty = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or(Value::Null),
        other => other.clone(),
    };
    match ty.as_str().unwrap_or("") {
        "object" => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    if (full && depth < 3) || required.contains(&name.as_str()) {
                        // Alias-carrying fields take an alias the conversation issued.
                        let value = match name.as_str() {
                            "link_id" => json!("link-1"),
                            "step_id" => json!("step-1"),
                            // Strict dialects list optional properties as required and nullable.
                            _ if !(full && depth < 3) && nullable(prop) => Value::Null,
                            _ => example(prop, root, full, depth + 1),
                        };
                        out.insert(name.clone(), value);
                    }
                }
            }
            if let Some(extra) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                out.insert("k".into(), example(extra, root, full, depth + 1));
            }
            Value::Object(out)
        }
        "array" => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            Value::Array(
                (0..n)
                    .map(|_| example(&schema["items"], root, full, depth + 1))
                    .collect(),
            )
        }
        "string"
            if schema["description"]
                .as_str()
                .is_some_and(|d| d.contains("single character")) =>
        {
            json!("x")
        }
        "string" => match schema["description"]
            .as_str()
            .and_then(|d| d.split("A JSON-encoded ").nth(1))
        {
            // A recursion cut: the JSON text of the type's minimal example.
            Some(what) => {
                let name = what.split('`').nth(1).unwrap_or_default();
                CANONICAL.with(|canonical| {
                    let canonical = canonical.borrow();
                    let def = &canonical["$defs"][name];
                    let inner = if def.is_object() {
                        example(def, &canonical, false, depth + 1)
                    } else {
                        json!({})
                    };
                    Value::String(inner.to_string())
                })
            }
            None => json!("text"),
        },
        "integer" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "number" => json!(1.5),
        "boolean" => json!(true),
        _ => json!({}),
    }
}

fn nullable(schema: &Value) -> bool {
    schema["type"]
        .as_array()
        .is_some_and(|t| t.contains(&json!("null")))
        || schema["anyOf"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b["type"] == "null"))
}

/// Every required property removed in turn.
fn without_each_required(value: &Value, schema: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for name in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let nullable = schema["properties"][name]["type"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("null")))
            || schema["properties"][name]["anyOf"].is_array();
        if nullable {
            continue; // OpenAI strict lists optional properties as required and nullable
        }
        let mut v = value.clone();
        if let Some(object) = v.as_object_mut() {
            object.remove(name);
        }
        out.push((name.to_owned(), v));
    }
    out
}

/// A conversation that has seen `link-1` and `step-1`.
async fn conversation() -> Arc<AliasManager> {
    let aliases = AliasManager::new();
    aliases
        .register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851")
        .await
        .unwrap();
    aliases
        .register("step", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7")
        .await
        .unwrap();
    Arc::new(aliases)
}

async fn round_trip<T: ToolInput + std::fmt::Debug + Send + 'static>(what: &str) {
    for dialect in [
        Dialect::JsonSchema,
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::Gemini,
    ] {
        for strict in [false, true] {
            let tool = echo::<T>(strict);
            CANONICAL.with(|c| *c.borrow_mut() = tool.parameters(Dialect::JsonSchema));
            let rendered = tool.parameters(dialect);
            assert!(
                check::check(dialect, strict, &rendered).is_empty(),
                "{what} {dialect} strict={strict}"
            );
            for full in [false, true] {
                let args = example(&rendered, &rendered, full, 0);
                let result = tool
                    .call(conversation().await, &args.to_string(), &CallOptions::new())
                    .await;
                assert!(
                    !result.is_error,
                    "{what} {dialect} strict={strict} full={full}: {args} → {}",
                    result.output
                );
            }
            // OpenAI strict sends every optional property as null.
            if dialect == Dialect::OpenAi && strict {
                let mut args = example(&rendered, &rendered, false, 0);
                for (name, prop) in rendered["properties"].as_object().unwrap() {
                    if prop["type"]
                        .as_array()
                        .is_some_and(|t| t.contains(&json!("null")))
                        || prop["anyOf"].is_array()
                    {
                        args[name] = Value::Null;
                    }
                }
                let result = tool
                    .call(conversation().await, &args.to_string(), &CallOptions::new())
                    .await;
                assert!(!result.is_error, "{what} nulls: {args} → {}", result.output);
            }
            let full = example(&rendered, &rendered, true, 0);
            for (name, args) in without_each_required(&full, &rendered) {
                let result = tool
                    .call(conversation().await, &args.to_string(), &CallOptions::new())
                    .await;
                assert!(
                    result.is_error,
                    "{what} {dialect}: without `{name}` it must fail: {args}"
                );
            }
        }
    }
}

#[derive(Debug, serde::Deserialize, ToolInput)]
#[serde(default)]
#[allow(dead_code)]
struct AllDefault {
    a: String,
    b: Vec<u8>,
}

impl Default for AllDefault {
    fn default() -> Self {
        AllDefault {
            a: "x".into(),
            b: vec![1],
        }
    }
}

#[derive(Debug, serde::Deserialize, ToolInput)]
#[allow(dead_code)]
struct Sends {
    target: Target,
    #[serde(default)]
    more: Option<Box<Paging>>,
}

#[tokio::test]
async fn what_the_schema_advertises_serde_accepts() {
    round_trip::<SearchInput>("SearchInput").await;
    round_trip::<Everything>("Everything").await;
    round_trip::<AllDefault>("AllDefault").await;
    round_trip::<Paging>("Paging").await;
    round_trip::<Tree>("Tree").await;
}

#[tokio::test]
async fn data_enums_take_exactly_one_variant() {
    let ok = call::<Sends>(&json!({"target": {"Webhook": {"url": "https://x"}}})).await;
    assert!(!ok.is_error, "{}", ok.output);
    let ok = call::<Sends>(&json!({"target": {"Email": {"to": "a@b"}, "Webhook": null}})).await;
    assert!(!ok.is_error, "strict nulls are dropped: {}", ok.output);
    let both =
        call::<Sends>(&json!({"target": {"Email": {"to": "a@b"}, "Webhook": {"url": "u"}}})).await;
    assert_eq!(
        both.output,
        "echo: `target` has 2 members; send exactly one of: `Webhook`, `Email`"
    );
}

#[tokio::test]
async fn decode_errors_name_the_field() {
    let missing = call::<SearchInput>(&json!({"limit": 3})).await;
    assert!(missing.is_error);
    assert_eq!(
        missing.output,
        "echo: the arguments are invalid: missing field `query`"
    );
    let wrong = call::<SearchInput>(&json!({"query": "q", "limit": "ten"})).await;
    assert_eq!(
        wrong.output,
        "echo: `limit` is `ten`, which is not a whole number in digits; send a whole number"
    );
    let unknown = call::<SearchInput>(&json!({"query": "q", "lmit": 3})).await;
    assert_eq!(
        unknown.output,
        "echo: unknown argument `lmit`; the valid ones are: `query`, `limit`, `link_id`"
    );
    let nested = call::<Sends>(&json!({"target": {"Webhook": {"url": "u", "x": 1}}})).await;
    assert!(
        nested
            .output
            .contains("unknown field `x` in `target.Webhook`"),
        "{}",
        nested.output
    );
}

#[tokio::test]
async fn aliases_resolve_in_nested_and_repeated_fields() {
    let aliases = Arc::new(AliasManager::new());
    let a = "d290f1ee-6c54-4b01-90e6-d701748f0851";
    let b = "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7";
    aliases.register("step", a).await.unwrap();
    aliases.register("step", b).await.unwrap();
    let tool = NativeTool::new::<Tree, _, _>("tree", "Walk a tree.", |_, tree: Tree| async move {
        Ok(
            json!({ "root": tree.step_id, "children": tree.children.iter().map(|c| c.step_id.clone()).collect::<Vec<_>>() }),
        )
    });
    let args = json!({"step_id": "step-1", "children": [{"step_id": "step-2"}]});
    let result = tool
        .call(aliases.clone(), &args.to_string(), &CallOptions::new())
        .await;
    assert!(!result.is_error, "{}", result.output);
    // The tool saw UUIDs; the model sees aliases again.
    assert_eq!(
        serde_json::from_str::<Value>(&result.output).unwrap(),
        json!({"root": "step-1", "children": ["step-2"]})
    );

    let seen = NativeTool::new::<Tree, _, _>("tree", "Walk a tree.", |_, tree: Tree| async move {
        tree.children[0].step_id.clone()
    });
    let result = seen
        .call(
            Arc::new(AliasManager::new()),
            &args.to_string(),
            &CallOptions::new(),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.output.contains("no step ids are known yet"),
        "{}",
        result.output
    );
    let result = seen
        .call(
            aliases.clone(),
            &json!({"step_id": "step-1", "children": [{"step_id": "step-9"}]}).to_string(),
            &CallOptions::new(),
        )
        .await;
    assert_eq!(
        result.output,
        "tree: `children[0].step_id` got `step-9`, which is not a step id this conversation has seen; use one of: step-1, step-2"
    );
    // Through a UUID the model copied from elsewhere: accepted only if known under the prefix.
    let result = seen
        .call(
            aliases,
            &json!({"step_id": a, "children": [{"step_id": b}]}).to_string(),
            &CallOptions::new(),
        )
        .await;
    assert_eq!(result.output, "step-2");
}

#[tokio::test]
async fn a_refused_alias_is_echoed_shortened_as_in_generated_tools() {
    let aliases = Arc::new(AliasManager::new());
    aliases
        .register("step", "d290f1ee-6c54-4b01-90e6-d701748f0851")
        .await
        .unwrap();
    let tool = NativeTool::new::<Tree, _, _>("tree", "Walk a tree.", |_, tree: Tree| async move {
        tree.step_id
    });
    let invented = format!("step-{}", "9".repeat(10_000));
    let result = tool
        .call(
            aliases,
            &json!({"step_id": invented}).to_string(),
            &CallOptions::new(),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.output.len() < 400,
        "the model's value is not echoed whole: {} bytes",
        result.output.len()
    );
    assert!(
        result.output.ends_with("use one of: step-1"),
        "{}",
        result.output
    );
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result() {
    let tool = NativeTool::new::<Paging, _, _>("boom", "Panics.", |_, p: Paging| async move {
        if p.page == 0 {
            panic!("page zero");
        }
        "fine"
    });
    let result = tool
        .call(
            Arc::new(AliasManager::new()),
            r#"{"page":0}"#,
            &CallOptions::new(),
        )
        .await;
    assert!(
        result.is_error && result.output.contains("page zero"),
        "{}",
        result.output
    );
    let result = tool
        .call(
            Arc::new(AliasManager::new()),
            r#"{"page":1}"#,
            &CallOptions::new(),
        )
        .await;
    assert_eq!(result, ToolResult::ok("fine"));
}

/// A native tool's error is bounded like a generated tool's: the model is
/// never handed more than `ToolResult::MAX_ERROR_BYTES` of it, however long
/// the tool's own message (a whole upstream error page, say).
#[tokio::test]
async fn a_native_tools_long_error_is_cut_to_the_bound() {
    /// No arguments.
    #[derive(serde::Deserialize, ToolInput)]
    struct Nothing {}
    let page = "upstream said: é ".repeat(2_000);
    let failing = NativeTool::new::<Nothing, _, _>("fetch_page", "Fetch.", move |_, _| {
        let page = page.clone();
        async move { Err::<String, _>(proto_ai_tools::ToolError::new(page)) }
    });
    let result = failing
        .call(Arc::new(AliasManager::new()), "{}", &CallOptions::new())
        .await;
    assert!(result.is_error);
    assert!(result.output.starts_with("fetch_page"), "{}", result.output);
    assert!(
        result.output.len() <= ToolResult::MAX_ERROR_BYTES + " …".len(),
        "{} bytes",
        result.output.len()
    );
    assert!(result.output.ends_with(" …"));
}
