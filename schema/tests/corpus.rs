//! Every rendering of every tool of `tests/corpus.proto` passes its own
//! dialect's checker, and renderings are deterministic.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proto_ai_tools_schema::check::check;
use proto_ai_tools_schema::{Dialect, HostProfile, ToolSpec, tools_in_file};

fn corpus() -> Vec<ToolSpec> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut compiler = protox::Compiler::new([format!("{root}/proto"), format!("{root}/tests")])
        .expect("include paths");
    compiler.include_imports(true).include_source_info(true);
    compiler.open_file("corpus.proto").expect("corpus compiles");
    let pool = compiler.descriptor_pool();
    tools_in_file(&pool, "corpus.proto").expect("corpus is valid")
}

#[test]
fn every_rendering_passes_its_checker() {
    let tools = corpus();
    assert_eq!(tools.len(), 5);
    let mut failures = Vec::new();
    for tool in &tools {
        for dialect in Dialect::ALL {
            for strict in [false, true] {
                for host in HostProfile::ALL {
                    let schema = proto_ai_tools_schema::render::parameters_for(
                        &tool.parameters,
                        dialect,
                        strict,
                        host,
                    );
                    for v in check(dialect, strict, &schema) {
                        failures.push(format!(
                            "{} {dialect} strict={strict} host={host}: {v}",
                            tool.name
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn renderings_are_deterministic() {
    let a = corpus();
    let b = corpus();
    for (a, b) in a.iter().zip(&b) {
        for dialect in Dialect::ALL {
            assert_eq!(
                a.render(dialect).to_string(),
                b.render(dialect).to_string(),
                "{} {dialect}",
                a.name
            );
        }
    }
}

#[test]
fn no_empty_descriptions_and_every_node_typed() {
    fn walk(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if map.get("description").and_then(|d| d.as_str()) == Some("") {
                    out.push(format!("{path}: empty description"));
                }
                for (k, v) in map {
                    walk(v, &format!("{path}/{k}"), out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for tool in corpus() {
        for dialect in Dialect::ALL {
            walk(
                &tool.render(dialect),
                &format!("{} {dialect}", tool.name),
                &mut out,
            );
        }
    }
    assert!(out.is_empty(), "{out:#?}");
}

#[test]
fn corpus_aliases() {
    let tools = corpus();
    let everything = &tools[0];
    let fields: Vec<(&str, &str, &str)> = everything
        .request_aliases
        .iter()
        .map(|a| (a.message.as_str(), a.field.as_str(), a.prefix.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("corpus.v1.EverythingRequest", "target_id", "node"),
            ("corpus.v1.EverythingRequest", "node_ids", "node"),
            ("corpus.v1.Node", "id", "node"),
        ]
    );
    assert_eq!(everything.output_prefix.as_deref(), Some("node"));
    assert_eq!(tools[3].output_prefix.as_deref(), Some("node"));
}

/// Golden renderings of every tool of `proto/links/v1/links.proto` and of
/// `tests/corpus.proto`, per dialect and, where it differs, per host profile: a schema change shows as a diff to
/// review. Regenerate with
/// `AI_TOOLS_BLESS=1 cargo test -p proto-ai-tools-schema --test corpus golden`.
#[test]
fn golden_renderings() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut compiler = protox::Compiler::new([format!("{root}/proto"), format!("{root}/../proto")])
        .expect("include paths");
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file("links/v1/links.proto")
        .expect("links compiles");
    let links =
        tools_in_file(&compiler.descriptor_pool(), "links/v1/links.proto").expect("links is valid");
    for (name, tools) in [("links", links), ("corpus", corpus())] {
        let mut out = serde_json::Map::new();
        for tool in &tools {
            let mut per = serde_json::Map::new();
            for dialect in Dialect::ALL {
                let exact = tool.render(dialect);
                // Each host profile's rendering, where it differs.
                for host in HostProfile::ALL {
                    let rendered = tool.render_for(dialect, host);
                    if rendered != exact {
                        per.insert(format!("{dialect} for a {host} host"), rendered);
                    }
                }
                per.insert(dialect.to_string(), exact);
            }
            out.insert(tool.name.clone(), serde_json::Value::Object(per));
        }
        let text = serde_json::to_string_pretty(&out).expect("serializable") + "\n";
        let path = format!("{root}/tests/golden/{name}.json");
        if std::env::var_os("AI_TOOLS_BLESS").is_some() {
            std::fs::create_dir_all(format!("{root}/tests/golden")).expect("mkdir");
            std::fs::write(&path, &text).expect("write golden");
        } else {
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                expected == text,
                "{name}: renderings differ from tests/golden/{name}.json; review and re-run with AI_TOOLS_BLESS=1"
            );
        }
    }
}

/// What a host profile promises: no `$ref`/`$defs` where the host refuses
/// them, and no integer past 2^53 where it parses numbers as doubles.
#[test]
fn host_renderings_keep_their_profile() {
    fn walk(v: &serde_json::Value, path: &str, host: HostProfile, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    if !host.takes_refs() && (k == "$ref" || k == "$defs") {
                        out.push(format!("{path}/{k}: `{k}` for a host that refuses it"));
                    }
                    let integer = match map.get("type") {
                        Some(serde_json::Value::String(t)) => t == "integer",
                        Some(serde_json::Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                        _ => false,
                    };
                    if host.numbers_as_doubles()
                        && integer
                        && (k == "minimum" || k == "maximum")
                        && v.as_f64()
                            .is_some_and(|n| n.abs() > 9_007_199_254_740_991.0)
                    {
                        out.push(format!("{path}/{k}: {v} is past what a double holds"));
                    }
                    walk(v, &format!("{path}/{k}"), host, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, &format!("{path}/{i}"), host, out);
                }
            }
            _ => {}
        }
    }
    let mut failures = Vec::new();
    let mut refs_seen = false;
    for tool in corpus() {
        for dialect in Dialect::ALL {
            refs_seen |= tool.render(dialect).to_string().contains("\"$ref\"");
            for host in HostProfile::ALL {
                let path = format!("{} {dialect} {host}", tool.name);
                walk(&tool.render_for(dialect, host), &path, host, &mut failures);
            }
        }
    }
    // The corpus has recursive and repeated messages, so the exact
    // renderings do use `$ref`: the check above is not vacuous.
    assert!(refs_seen);
    assert!(failures.is_empty(), "{failures:#?}");
}
