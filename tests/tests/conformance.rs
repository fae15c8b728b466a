//! The conformance corpus through the macro: every tool of
//! `proto/conformance/v1/conformance.proto`, expanded by `ai_tools!`, has
//! static renderings that pass their own dialect's checker, and the tool list
//! of a request stays within each provider's per-request limits (or is
//! reported with the limit and the tools named).

use proto_ai_tools::AgentTool;
use proto_ai_tools::schema::Dialect;
use proto_ai_tools::schema::check::{Rule, check_request, strict_counts};
use proto_ai_tools_tests::support::{check_every_rendering, renderings, request_violations};
use serde_json::Value;

use proto_ai_tools_tests::tools::conformance;

fn tools() -> &'static [&'static AgentTool] {
    conformance::all_tools()
}

#[test]
fn the_corpus_has_strict_and_loose_tools() {
    let names: Vec<(&str, bool)> = tools().iter().map(|t| (t.name, t.strict)).collect();
    assert_eq!(
        names,
        [
            ("conformance_everything", false),
            ("conformance_everything_strict", true),
            ("conformance_scalars", true),
            ("conformance_well_known", false),
            ("conformance_well_known_strict", true),
            ("conformance_maps", true),
            ("conformance_search", false),
            ("conformance_search_strict", true),
            ("conformance_deep", true),
            ("conformance_tree", false),
            ("conformance_tree_strict", true),
            ("conformance_nothing", true),
            ("conformance_nothing_loose", false),
        ]
    );
}

#[test]
fn every_static_rendering_passes_its_checker() {
    let checked = check_every_rendering(tools().iter().copied(), |_, _, _| {});
    // 13 tools in 5 dialects.
    assert_eq!(checked, 13 * 5);
}

/// Text of every rendering of every tool, per dialect.
fn all_text(dialect: Dialect) -> String {
    tools()
        .iter()
        .flat_map(|tool| renderings(tool))
        .filter(|(d, _)| *d == dialect)
        .map(|(_, v)| v.to_string())
        .collect()
}

#[test]
fn the_corpus_exercises_every_rule() {
    let canonical = all_text(Dialect::JsonSchema);
    let openai = all_text(Dialect::OpenAi);
    let anthropic = all_text(Dialect::Anthropic);
    let gemini = all_text(Dialect::Gemini);
    for (what, text, needle) in [
        // recursion by reference where the dialect allows it
        ("canonical $defs", &canonical, "\"$defs\""),
        ("openai $ref", &openai, "\"$ref\""),
        // maps as open objects, and as entry arrays
        (
            "canonical open map",
            &canonical,
            "\"additionalProperties\":{",
        ),
        (
            "openai map entries",
            &openai,
            "\"required\":[\"key\",\"value\"]",
        ),
        (
            "gemini map entries",
            &gemini,
            "\"required\":[\"key\",\"value\"]",
        ),
        // nulls per dialect
        ("openai nullable optional", &openai, "\"null\"]"),
        (
            "anthropic strict wrapper",
            &anthropic,
            "{\"type\":\"null\"}",
        ),
        ("gemini nullable", &gemini, "\"nullable\":true"),
        // well-known types
        ("date-time", &canonical, "\"format\":\"date-time\""),
        ("gemini date-time", &gemini, "\"format\":\"date-time\""),
        ("duration pattern", &canonical, "\"pattern\":"),
        ("gemini duration hint", &gemini, "A duration in seconds"),
        (
            "canonical any value",
            &canonical,
            "\"type\":[\"object\",\"array\",\"string\",\"number\",\"boolean\",\"null\"]",
        ),
        // cuts to JSON strings
        ("openai json string", &openai, "A JSON-encoded"),
        ("anthropic json string", &anthropic, "A JSON-encoded"),
        ("gemini json string", &gemini, "A JSON-encoded"),
        // enums without the zero value, nested enums
        ("enum", &canonical, "[\"PRIORITY_LOW\",\"PRIORITY_HIGH\"]"),
        (
            "nested enum",
            &canonical,
            "[\"ACTION_WEBHOOK\",\"ACTION_EMAIL\"]",
        ),
        // descriptions and usage notes
        (
            "usage notes",
            &canonical,
            "A note for the record.\\n\\nKeep it short.",
        ),
        // unsigned bounds
        ("uint minimum", &canonical, "\"minimum\":0"),
    ] {
        assert!(text.contains(needle), "{what}: `{needle}` not found");
    }
    for hidden in ["server_id", "internal"] {
        for dialect in [
            Dialect::JsonSchema,
            Dialect::OpenAi,
            Dialect::Anthropic,
            Dialect::Gemini,
        ] {
            assert!(
                !all_text(dialect).contains(&format!("\"{hidden}\"")),
                "{hidden} must be left out of {dialect}"
            );
        }
    }
}

#[test]
fn oneofs_and_required_fields() {
    let everything: Value =
        serde_json::from_str(conformance::CONFORMANCE_EVERYTHING.parameters()).expect("JSON");
    let required: Vec<&str> = everything["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // A oneof is one optional property (its value holds exactly one member);
    // `optional` fields are optional; REQUIRED wins over `optional`.
    for member in ["target", "maybe_priority"] {
        assert!(!required.contains(&member), "{member}");
    }
    let members: Vec<Vec<&str>> = everything["properties"]["target"]["anyOf"]
        .as_array()
        .expect("the oneof is an anyOf of its members")
        .iter()
        .map(|branch| {
            branch["required"]
                .as_array()
                .expect("required")
                .iter()
                .filter_map(Value::as_str)
                .collect()
        })
        .collect();
    assert_eq!(members, [["target_id"], ["target_node"], ["no_target"]]);
    for member in ["target_id", "target_node", "no_target"] {
        assert!(everything["properties"].get(member).is_none(), "{member}");
    }
    for field in ["scalars", "wkt", "note", "must", "node_ids"] {
        assert!(required.contains(&field), "{field}");
    }
    assert!(everything.get("anyOf").is_none() && everything.get("oneOf").is_none());
    // In OpenAI strict every property is required, optional ones nullable.
    let strict: Value = serde_json::from_str(
        conformance::CONFORMANCE_EVERYTHING_STRICT
            .renderings()
            .openai,
    )
    .expect("JSON");
    let props = strict["properties"].as_object().expect("properties");
    assert_eq!(
        strict["required"].as_array().map(Vec::len),
        Some(props.len())
    );
    let branches = strict["properties"]["target"]["anyOf"]
        .as_array()
        .expect("anyOf");
    assert_eq!(
        branches.last(),
        Some(&serde_json::json!({ "type": "null" }))
    );
}

#[test]
fn request_limits_of_the_whole_file() {
    let per_dialect = |dialect| request_violations(dialect, tools().iter().copied());
    assert!(per_dialect(Dialect::OpenAi).is_empty());
    assert!(per_dialect(Dialect::Gemini).is_empty());
    assert!(per_dialect(Dialect::GeminiJsonSchema).is_empty());

    // Anthropic strict: the strict tools of this file together spend more
    // than the per-request budgets; the violations say which and by whom.
    let anthropic = per_dialect(Dialect::Anthropic);
    let rules: Vec<Rule> = anthropic.iter().map(|v| v.rule).collect();
    assert!(
        rules.contains(&Rule::TooManyOptionalParameters),
        "{anthropic:#?}"
    );
    for v in &anthropic {
        assert_eq!(v.path, "/tools");
        assert!(
            v.message.contains("conformance_everything_strict"),
            "{}",
            v.message
        );
        assert!(
            !v.message.contains("conformance_everything:"),
            "a loose tool counted: {}",
            v.message
        );
    }
    // No strict tool alone spends more than Anthropic's budgets.
    // (`conformance_search_strict` did while each oneof member was an
    // optional parameter of its own, and `conformance_everything_strict`
    // while recursion was unrolled two levels instead of referring to one
    // definition.)
    let mut alone_over = Vec::new();
    for tool in tools().iter().filter(|t| t.strict) {
        let schema: Value = serde_json::from_str(tool.renderings().anthropic).expect("JSON");
        let counts = strict_counts(&schema);
        println!("{}: {counts:?}", tool.name);
        if !check_request(Dialect::Anthropic, &[(tool.name, true, &schema)]).is_empty() {
            alone_over.push(tool.name);
        }
    }
    assert_eq!(alone_over, Vec::<&str>::new());
}

/// A toolkit's Anthropic tool list keeps `strict` only within Anthropic's
/// per-request budgets, so the whole corpus is one request Anthropic accepts.
#[test]
fn the_toolkits_anthropic_list_stays_within_the_strict_budgets() {
    let executor = conformance::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    let toolkit = proto_ai_tools::Toolkit::builder()
        .generated(executor)
        .build()
        .expect("valid toolkit");
    let list = toolkit.to_anthropic();
    let list = list.as_array().expect("an array of tools");
    let shapes: Vec<(&str, bool, &Value)> = list
        .iter()
        .map(|tool| {
            (
                tool["name"].as_str().expect("a name"),
                tool.get("strict").and_then(Value::as_bool).unwrap_or(false),
                &tool["input_schema"],
            )
        })
        .collect();
    assert_eq!(check_request(Dialect::Anthropic, &shapes), []);
    let kept = shapes.iter().filter(|(_, strict, _)| *strict).count();
    let strict_tools = tools().iter().filter(|tool| tool.strict).count();
    assert!(kept > 0, "some strict tools keep `strict`");
    assert!(
        kept < strict_tools,
        "the corpus overspends Anthropic's budgets, so some strict tools lose `strict`"
    );
}

/// The examples of the corpus (`rpc_tool.examples` in `links.proto` and
/// `conformance.proto`) go to Anthropic as `input_examples`, in the form of
/// each tool's `input_schema`, and pass Anthropic's checkers: the tool's
/// schema admits every example (Anthropic answers 400 otherwise).
#[test]
fn the_anthropic_lists_carry_examples_that_pass_the_checker() {
    use proto_ai_tools::schema::check::{check, check_input_examples};
    use proto_ai_tools_tests::tools::links;

    let transport = proto_ai_tools::transport::InProcessTransport::new;
    let aliases = std::sync::Arc::new(proto_ai_tools::AliasManager::new());
    let toolkit = proto_ai_tools::Toolkit::builder()
        .generated(links::Executor::with_alias_manager(
            transport(),
            aliases.clone(),
        ))
        .generated(conformance::Executor::with_alias_manager(
            transport(),
            aliases,
        ))
        .build()
        .expect("valid toolkit");
    let list = toolkit.to_anthropic();
    let list = list.as_array().expect("an array of tools");
    let with_examples: Vec<&str> = list
        .iter()
        .filter(|tool| tool.get("input_examples").is_some())
        .map(|tool| tool["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        with_examples,
        ["links_create", "links_update", "conformance_maps"]
    );
    for tool in list {
        let strict = tool.get("strict").and_then(Value::as_bool).unwrap_or(false);
        assert_eq!(check(Dialect::Anthropic, strict, &tool["input_schema"]), []);
        assert_eq!(check_input_examples(tool), [], "{}", tool["name"]);
    }

    // Strict, so every map goes as `{key, value}` entries and a `Struct`
    // or `Value` object as its JSON text: the example too.
    let maps = list
        .iter()
        .find(|tool| tool["name"] == "conformance_maps")
        .expect("the maps tool");
    let example = &maps["input_examples"][0]["maps"];
    assert_eq!(
        example["labels"],
        serde_json::json!([{"key": "team", "value": "web"}])
    );
    assert_eq!(
        example["flags"],
        serde_json::json!([{"key": true, "value": "PRIORITY_HIGH"}])
    );
    assert_eq!(example["structs"][0]["value"], r#"{"owner":"ops"}"#);
    // As written in the proto, the example is not the strict form.
    let mut unshaped = maps.clone();
    unshaped["input_examples"][0]["maps"]["labels"] = serde_json::json!({"team": "web"});
    let refused = check_input_examples(&unshaped);
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert_eq!(refused[0].rule, Rule::InputExample);
    assert_eq!(refused[0].path, "/input_examples/0/maps/labels");

    // The same examples from the macro's statics and from a tool set built
    // at run time.
    assert_eq!(
        links::LINKS_CREATE
            .input_examples()
            .map(|text| serde_json::from_str::<Value>(text).expect("JSON")),
        Some(list[0]["input_examples"].clone())
    );
    let set = proto_ai_tools::tool_set::ToolSet::from_descriptor_set(
        &links::descriptor_pool().encode_to_vec(),
        &proto_ai_tools::tool_set::ToolSetOptions::new(),
    )
    .expect("a tool set");
    let from_set: Vec<Option<&str>> = set.tools().iter().map(|t| t.input_examples()).collect();
    let from_macro: Vec<Option<&str>> = links::all_tools()
        .iter()
        .map(|t| t.input_examples())
        .collect();
    assert_eq!(from_set, from_macro);
}
