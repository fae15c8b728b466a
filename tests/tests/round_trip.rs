//! Round trips: arguments valid against a tool's *rendered* schema, for every
//! dialect, decode into the tool's request message.
//!
//! The values come from `proto_ai_tools_tests::arguments::Generator`, which turns a
//! rendered schema into a proptest strategy of values it accepts (see that
//! module for what it generates). Each value goes through the real inbound
//! path, `ProtoExecutor::execute` over an in-process transport that
//! records the request it received; every call must arrive.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use prost_reflect::DescriptorPool;
use proto_ai_tools::{AgentTool, executor::ProtoExecutor, transport::InProcessTransport};
use proto_ai_tools_tests::arguments::{Generator, any_duration};
use proto_ai_tools_tests::support::{Recording, recording_transport};
use serde_json::{Value, json};

use proto_ai_tools_tests::tools::{conformance, links};

/// Cases per tool and dialect.
const CASES: u32 = 48;

/// An executor over an in-process service that records every request and
/// answers every method with its response type's default message.
fn recording_executor(
    tools: &'static [&'static AgentTool],
    pool: &'static DescriptorPool,
) -> (ProtoExecutor<InProcessTransport>, Recording) {
    let (transport, recording) = recording_transport(pool);
    (ProtoExecutor::new(tools, pool, transport), recording)
}

/// Registers two ids for every alias prefix the tools resolve; returns the
/// aliases to use per request field name.
async fn issue_aliases(
    exec: &ProtoExecutor<InProcessTransport>,
    tools: &[&AgentTool],
) -> BTreeMap<String, Vec<String>> {
    let mut by_prefix: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut by_field: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for tool in tools {
        for fp in tool.request_aliases {
            if !by_prefix.contains_key(fp.prefix) {
                let mut issued = Vec::new();
                for i in 0..2 {
                    let uuid = format!("6f1c2d3e-4b5a-4c6d-8e7f-{:012x}", fp.prefix.len() * 16 + i);
                    let alias = exec.alias_manager().register(fp.prefix, &uuid).await;
                    issued.push(alias.expect("a valid uuid"));
                }
                by_prefix.insert(fp.prefix, issued);
            }
            let aliases = &by_prefix[fp.prefix];
            by_field
                .entry(fp.field.to_owned())
                .or_default()
                .extend(aliases.iter().cloned());
        }
    }
    by_field
}

/// The renderings of a tool, per dialect name.
fn renderings(tool: &AgentTool) -> [(&'static str, &'static str); 5] {
    [
        ("json_schema", tool.parameters()),
        ("openai", tool.renderings().openai),
        ("anthropic", tool.renderings().anthropic),
        ("gemini", tool.renderings().gemini),
        ("gemini_json_schema", tool.renderings().gemini_json_schema),
    ]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn config() -> Config {
    Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Every tool, every dialect: generated arguments reach the service.
fn every_rendering_round_trips(
    tools: &'static [&'static AgentTool],
    pool: &'static DescriptorPool,
) -> usize {
    let rt = runtime();
    let (exec, log) = recording_executor(tools, pool);
    let aliases = rt.block_on(issue_aliases(&exec, tools));
    let calls = std::cell::Cell::new(0usize);
    let mut failures = Vec::new();
    for tool in tools {
        for (dialect, text) in renderings(tool) {
            let schema: Value = serde_json::from_str(text).expect("rendering is JSON");
            let strategy = Generator {
                root: &schema,
                aliases: &aliases,
            }
            .strategy();
            let mut runner = TestRunner::new(config());
            let outcome = runner.run(&strategy, |args| {
                let before = log.len();
                let result = rt.block_on(exec.execute(tool.name, args));
                calls.set(calls.get() + 1);
                if result.is_error {
                    return Err(TestCaseError::fail(format!(
                        "error result: {}",
                        result.output
                    )));
                }
                let after = log.len();
                prop_assert_eq!(after, before + 1, "the call did not reach the service");
                Ok(())
            });
            if let Err(e) = outcome {
                failures.push(format!("{} {dialect}: {e}", tool.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    calls.get()
}

#[test]
fn conformance_arguments_decode_in_every_dialect() {
    let calls =
        every_rendering_round_trips(conformance::all_tools(), conformance::descriptor_pool());
    println!("{calls} calls");
    assert!(calls >= conformance::all_tools().len() * 4 * CASES as usize);
}

#[test]
fn links_arguments_decode_in_every_dialect() {
    let calls = every_rendering_round_trips(links::all_tools(), links::descriptor_pool());
    assert!(calls >= links::all_tools().len() * 4 * CASES as usize);
}

#[test]
fn a_json_string_any_decodes() {
    let rt = runtime();
    let tools = conformance::all_tools();
    let (exec, log) = recording_executor(tools, conformance::descriptor_pool());
    // What the OpenAI strict rendering asks for: `any` is a JSON-encoded string.
    let schema: Value = serde_json::from_str(
        conformance::CONFORMANCE_WELL_KNOWN_STRICT
            .renderings()
            .openai,
    )
    .expect("JSON");
    assert_eq!(
        schema["properties"]["wkt"]["properties"]["any"]["type"],
        "string"
    );
    let args = json!({ "wkt": { "any": any_duration().to_string() } });
    let result = rt.block_on(exec.execute("conformance_well_known_strict", args));
    assert!(!result.is_error, "{}", result.output);
    assert_eq!(log.len(), 1);
}

/// Removes every object property whose value is `null`, at every level,
/// except one named `value`: the corpus's `google.protobuf.Value` fields and
/// map entry values, whose `null` is a value (`NullValue`), not absence.
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !v.is_null() || *k == "value")
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[test]
fn strict_openai_nulls_decode_like_absent_fields() {
    let rt = runtime();
    let tools = conformance::all_tools();
    let (exec, log) = recording_executor(tools, conformance::descriptor_pool());
    let aliases = rt.block_on(issue_aliases(&exec, tools));
    let mut failures = Vec::new();
    let compared = std::cell::Cell::new(0usize);
    for tool in tools.iter().filter(|t| t.strict) {
        let schema: Value = serde_json::from_str(tool.renderings().openai).expect("JSON");
        // All-null optionals: the minimal value of the strict schema.
        let minimal = Generator {
            root: &schema,
            aliases: &aliases,
        }
        .minimal();
        let any = Generator {
            root: &schema,
            aliases: &aliases,
        }
        .strategy();
        for strategy in [minimal, any] {
            let mut runner = TestRunner::new(config());
            let outcome = runner.run(&strategy, |args| {
                let mut decoded = Vec::new();
                for args in [args.clone(), without_nulls(&args)] {
                    let result = rt.block_on(exec.execute(tool.name, args));
                    prop_assert!(!result.is_error, "{}", result.output);
                    // As protojson: `Debug` of a recursive message's
                    // descriptor does not end.
                    let last = log.last().map(|call| call.request);
                    decoded.push(last.map(|m| serde_json::to_value(&m).expect("protojson")));
                }
                compared.set(compared.get() + 1);
                prop_assert_eq!(&decoded[0], &decoded[1]);
                Ok(())
            });
            if let Err(e) = outcome {
                failures.push(format!("{}: {e}", tool.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared.get() > 0);
}

#[test]
fn the_minimal_strict_value_is_all_nulls() {
    let schema: Value =
        serde_json::from_str(conformance::CONFORMANCE_SCALARS.renderings().openai).expect("JSON");
    let aliases = BTreeMap::new();
    let strategy = Generator {
        root: &schema,
        aliases: &aliases,
    }
    .minimal();
    let mut runner = TestRunner::new(config());
    let value = strategy.new_tree(&mut runner).expect("a value").current();
    assert_eq!(value["maybe"], Value::Null, "{value}");
    assert_eq!(value["scalars"]["maybe_s"], Value::Null, "{value}");
    assert!(
        value["all"].as_array().is_some_and(Vec::is_empty),
        "{value}"
    );
}

/// The generator is not degenerate: over a run it sets optional fields,
/// fills maps (as objects and as entry arrays) and picks oneof members.
#[test]
fn generated_arguments_cover_the_schema() {
    let aliases = BTreeMap::new();
    let mut runner = TestRunner::new(config());
    // Integer-keyed maps are entry arrays in every dialect.
    for (text, maps_are_arrays) in [
        (conformance::CONFORMANCE_EVERYTHING.parameters(), true),
        (
            conformance::CONFORMANCE_EVERYTHING.renderings().gemini,
            true,
        ),
    ] {
        let schema: Value = serde_json::from_str(text).expect("JSON");
        let strategy = Generator {
            root: &schema,
            aliases: &aliases,
        }
        .strategy();
        let (mut maps, mut oneofs, mut optionals) = (0, 0, 0);
        for _ in 0..CASES {
            let v = strategy.new_tree(&mut runner).expect("a value").current();
            let by_i64 = &v["maps"]["by_i64"];
            let filled = if maps_are_arrays {
                by_i64.as_array().is_some_and(|a| !a.is_empty())
            } else {
                by_i64.as_object().is_some_and(|m| !m.is_empty())
            };
            maps += usize::from(filled);
            // A oneof is one property holding exactly one member.
            oneofs += usize::from(
                v["filter"]["kind"]
                    .as_object()
                    .is_some_and(|chosen| chosen.len() == 1),
            );
            optionals += usize::from(v.get("maybe_priority").is_some_and(|x| !x.is_null()));
        }
        assert!(
            maps > 0 && oneofs > 0 && optionals > 0,
            "{maps} {oneofs} {optionals}"
        );
    }
}
