//! Gemini tool lists as a toolkit sends them, taken by the google-genai
//! SDK's own models (`tests/gemini/check.py`): no key the SDK does not know,
//! no value of the wrong type, nothing dropped or renamed when the SDK
//! writes them back, and every `parametersJsonSchema` a valid JSON Schema.
//! Every generated tool set of the tests crate is sent, third-party protos
//! (etcd, googleapis) included, and a native tool of every shape the derive
//! makes.
//!
//! Needs a Python with `google-genai` and `jsonschema` (see
//! [`proto_ai_tools_tests::support::python_importing`]); without one the test is
//! skipped, saying why, unless `AI_TOOLS_REQUIRE_PYTHON` is set.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proto_ai_tools::{NativeTool, ToolInput, Toolkit, transport::InProcessTransport};
use proto_ai_tools_tests::support::{python_importing, python_required};
use proto_ai_tools_tests::tools::{
    conformance, etcd, feed, google_types, links, longrunning_overlay, longrunning_whole, shapes,
};
use serde_json::{Value, json};

fn lists(toolkit: &Toolkit) -> Value {
    json!({ "gemini": toolkit.to_gemini(), "gemini_json_schema": toolkit.to_gemini_json_schema() })
}

/// Plan a delivery.
#[derive(serde::Deserialize, ToolInput)]
#[allow(dead_code)]
struct PlanInput {
    /// Where it starts.
    home: Stop,
    /// Where it stops on the way, in order.
    stops: Vec<Stop>,
    speed: Speed,
    /// Who hears of it.
    notify: Notify,
    /// Crates per product.
    crates: HashMap<String, u32>,
    #[serde(default)]
    note: Option<String>,
}

/// A place on the route.
#[derive(serde::Deserialize, ToolInput)]
#[allow(dead_code)]
struct Stop {
    /// The street address.
    address: String,
    /// Minutes to stay.
    minutes: u16,
}

#[derive(serde::Deserialize, ToolInput)]
#[allow(dead_code)]
enum Speed {
    Slow,
    Fast,
}

#[derive(serde::Deserialize, ToolInput)]
#[allow(dead_code)]
enum Notify {
    /// By email.
    Email { to: String },
    /// By a webhook at this URL.
    Webhook(String),
}

/// Each module's tool lists by name, and how many tools the modules have.
macro_rules! tool_sets {
    ($($module:ident),* $(,)?) => {
        (
            json!({ $(
                stringify!($module): lists(
                    &Toolkit::builder()
                        .generated($module::Executor::new(InProcessTransport::new()))
                        .build()
                        .expect("a valid toolkit"),
                ),
            )* }),
            0 $(+ $module::ALL_TOOLS.len())*,
        )
    };
}

#[test]
fn the_google_genai_sdk_takes_every_gemini_tool_list() {
    let Some(python) = python() else {
        return;
    };
    let (mut sets, generated) = tool_sets!(
        links,
        conformance,
        feed,
        google_types,
        etcd,
        shapes,
        longrunning_overlay,
        longrunning_whole,
    );
    let plan =
        NativeTool::new::<PlanInput, _, _>("plan", "Plan a delivery.", |_, _| async { "planned" });
    let native = Toolkit::builder()
        .native(plan)
        .build()
        .expect("a valid toolkit");
    sets["native"] = lists(&native);
    let tools = generated + 1;
    let declarations: usize = sets
        .as_object()
        .expect("an object")
        .values()
        .map(|set| {
            set["gemini"]["functionDeclarations"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(declarations, tools, "every tool is in its set's list");

    let (success, stdout) = check(&python, &sets);
    let _ = writeln!(std::io::stderr(), "{stdout}");
    assert!(success, "google-genai refused a tool list:\n{stdout}");
    assert!(
        stdout.contains("google-genai: every declaration taken"),
        "{stdout}"
    );
}

/// The checker refuses what the SDK would not take or would change, naming
/// where: a `$ref` in a Gemini `parameters` schema, a bound the SDK would
/// send as another value (a string it turns into a number), a
/// `parametersJsonSchema` that is no JSON Schema.
#[test]
fn the_checker_refuses_what_google_genai_would_not_send_as_given() {
    let Some(python) = python() else {
        return;
    };
    let declaration = |key: &str, schema: Value| json!({ "functionDeclarations": [{ "name": "t", "description": "T.", key: schema }] });
    let fine_gemini = declaration("parameters", json!({ "type": "object" }));
    let fine_json_schema = declaration("parametersJsonSchema", json!({ "type": "object" }));
    let (success, stdout) = check(
        &python,
        &json!({
            "fine": { "gemini": fine_gemini, "gemini_json_schema": fine_json_schema },
            "with_ref": {
                "gemini": declaration("parameters", json!({
                    "type": "object",
                    "properties": { "a": { "$ref": "#/$defs/A" } }
                })),
                "gemini_json_schema": fine_json_schema,
            },
            "coerced": {
                "gemini": declaration("parameters", json!({
                    "type": "object",
                    "properties": { "n": { "type": "integer", "minimum": "5" } }
                })),
                "gemini_json_schema": fine_json_schema,
            },
            "not_a_schema": {
                "gemini": fine_gemini,
                "gemini_json_schema": declaration("parametersJsonSchema", json!({ "type": "objekt" })),
            },
        }),
    );
    assert!(!success, "{stdout}");
    assert!(!stdout.contains("FAIL fine"), "{stdout}");
    assert!(
        stdout.contains("FAIL with_ref gemini: the SDK refuses it")
            && stdout.contains("properties.a.$ref"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "FAIL coerced gemini: $.functionDeclarations[0].parameters.properties.n.minimum: sent '5', back 5.0"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL not_a_schema t: not a valid JSON Schema"),
        "{stdout}"
    );
}

/// A Python with google-genai and jsonschema; `None` (the test skips,
/// saying why) unless `AI_TOOLS_REQUIRE_PYTHON` is set.
fn python() -> Option<PathBuf> {
    match python_importing("google.genai, jsonschema") {
        Ok(python) => Some(python),
        Err(reason) if python_required() => panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}"),
        Err(reason) => {
            let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
            None
        }
    }
}

/// Runs `tests/gemini/check.py` on `sets`: whether it passed, and what it
/// printed (its stderr too, when it has any).
fn check(python: &Path, sets: &Value) -> (bool, String) {
    let checker = concat!(env!("CARGO_MANIFEST_DIR"), "/gemini/check.py");
    let mut child = Command::new(python)
        .arg(checker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", python.display()));
    let input = serde_json::to_vec(sets).expect("JSON");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(&input)
        .expect("the checker reads its input");
    let output = child.wait_with_output().expect("the checker runs");
    let mut printed = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stderr.trim().is_empty() {
        printed.push_str(&format!("\nstderr:\n{stderr}"));
    }
    (output.status.success(), printed)
}
