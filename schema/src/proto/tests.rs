use super::*;
use crate::ir::{self, Kind};
use crate::test_support::{HEADER, compile, compile_files};
use crate::{Dialect, FieldAlias, ToolHints};
use serde_json::json;

fn tools(body: &str) -> Vec<ToolSpec> {
    let pool = compile(&format!("{HEADER}{body}"));
    match tools_in_file(&pool, "test.proto") {
        Ok(tools) => tools,
        Err(diags) => panic!("unexpected diagnostics: {diags:#?}"),
    }
}

fn diagnostics(body: &str) -> Vec<String> {
    let pool = compile(&format!("{HEADER}{body}"));
    match tools_in_file(&pool, "test.proto") {
        Ok(_) => panic!("expected diagnostics"),
        Err(diags) => diags.iter().map(ToString::to_string).collect(),
    }
}

/// A service with one tool `t` taking `Req`.
fn with_tool(messages: &str, strict: bool) -> String {
    format!(
        "{messages}\nmessage Resp {{}}\nservice S {{\n  rpc M(Req) returns (Resp) {{\n    option (ai.context.v1.rpc_tool) = {{ name: \"t\" description: \"Do it.\" strict: {strict} }};\n  }}\n}}\n"
    )
}

fn params(messages: &str, dialect: Dialect, strict: bool) -> serde_json::Value {
    tools(&with_tool(messages, strict))[0].render(dialect)
}

#[test]
fn scalars() {
    let schema = params(
        "message Req {
  double d = 1; float f = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
  sint32 s32 = 7; sint64 s64 = 8; fixed32 f32 = 9; fixed64 f64 = 10; sfixed32 sf32 = 11;
  sfixed64 sf64 = 12; bool b = 13; string s = 14; bytes by = 15;
}",
        Dialect::JsonSchema,
        false,
    );
    // Every integer carries its type's range; `float` its range too.
    let int = json!({ "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX });
    let uint = json!({ "type": "integer", "minimum": 0, "maximum": u32::MAX });
    let long = json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX });
    let ulong = json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX });
    let float =
        json!({ "type": "number", "minimum": f64::from(f32::MIN), "maximum": f64::from(f32::MAX) });
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "d": { "type": "number" }, "f": float,
                "i32": int, "i64": long, "u32": uint, "u64": ulong, "s32": int, "s64": long,
                "f32": uint, "f64": ulong, "sf32": int, "sf64": long,
                "b": { "type": "boolean" }, "s": { "type": "string" },
                "by": { "type": "string", "format": "byte", "pattern": ir::BASE64_PATTERN }
            },
            "required": ["d", "f", "i32", "i64", "u32", "u64", "s32", "s64", "f32", "f64",
                         "sf32", "sf64", "b", "s", "by"],
            "additionalProperties": false
        })
    );
    // Property order is proto order.
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys[..3], ["d", "f", "i32"]);
    // OpenAI strict: no `byte` format, said in the description instead;
    // the pattern stays.
    let strict = params("message Req { bytes by = 1; }", Dialect::OpenAi, true);
    assert_eq!(
        strict["properties"]["by"],
        json!({ "type": "string", "description": "Base64-encoded bytes.", "pattern": ir::BASE64_PATTERN })
    );
    // Gemini: neither, one sentence.
    let gemini = params("message Req { bytes by = 1; }", Dialect::Gemini, false);
    assert_eq!(
        gemini["properties"]["by"],
        json!({ "type": "string", "description": "Base64-encoded bytes." })
    );
    // Anthropic strict: no numeric bounds, said in the description.
    let strict = params("message Req { uint32 n = 1; }", Dialect::Anthropic, true);
    assert_eq!(
        strict["properties"]["n"],
        json!({ "type": "integer", "description": "An integer from 0 to 4294967295." })
    );
}

#[test]
fn enums_leave_out_unspecified_zero_and_list_commented_values() {
    let messages = "// A color.
enum Color {
  COLOR_UNSPECIFIED = 0;
  // Like the sky.
  BLUE = 1;
  RED = 2;
}
message Req {
  // Pick one.
  Color color = 1;
  optional Color maybe = 2;
  repeated Color many = 3;
}";
    let schema = params(messages, Dialect::JsonSchema, false);
    assert_eq!(
        schema["properties"],
        json!({
            "color": { "type": "string", "description": "Pick one.\n\n- `BLUE`: Like the sky.", "enum": ["BLUE", "RED"] },
            "maybe": { "type": "string", "description": "- `BLUE`: Like the sky.", "enum": ["BLUE", "RED"] },
            "many": { "type": "array", "description": "- `BLUE`: Like the sky.", "items": { "type": "string", "enum": ["BLUE", "RED"] } }
        })
    );
    assert_eq!(schema["required"], json!(["color", "many"]));
    let strict = params(messages, Dialect::OpenAi, true);
    assert_eq!(
        strict["properties"]["maybe"],
        json!({ "type": ["string", "null"], "description": "- `BLUE`: Like the sky.", "enum": ["BLUE", "RED", null] })
    );
}

#[test]
fn enum_zero_values_with_a_meaning_stay() {
    // etcd's `SortOrder`, `CompareResult`: the zero value is a real choice.
    let messages = "enum SortOrder { NONE = 0; ASCEND = 1; DESCEND = 2; }
enum CompareResult { EQUAL = 0; GREATER = 1; LESS = 2; NOT_EQUAL = 3; }
// Only a zero value: kept, or nothing could be sent.
enum Lonely { LONELY_UNSPECIFIED = 0; }
message Req { SortOrder order = 1; CompareResult result = 2; Lonely lonely = 3; }";
    let schema = params(messages, Dialect::JsonSchema, false);
    assert_eq!(
        schema["properties"]["order"]["enum"],
        json!(["NONE", "ASCEND", "DESCEND"])
    );
    assert_eq!(
        schema["properties"]["result"]["enum"],
        json!(["EQUAL", "GREATER", "LESS", "NOT_EQUAL"])
    );
    assert_eq!(
        schema["properties"]["lonely"]["enum"],
        json!(["LONELY_UNSPECIFIED"])
    );
}

#[test]
fn maps_per_dialect() {
    let messages = "message Req { map<string, bool> counts = 1; }";
    assert_eq!(
        params(messages, Dialect::JsonSchema, false)["properties"]["counts"],
        json!({ "type": "object", "additionalProperties": { "type": "boolean" } })
    );
    let entries = json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": { "key": { "type": "string" }, "value": { "type": "boolean" } },
            "required": ["key", "value"],
            "additionalProperties": false
        }
    });
    assert_eq!(
        params(messages, Dialect::OpenAi, true)["properties"]["counts"],
        entries
    );
    assert_eq!(
        params(messages, Dialect::Anthropic, true)["properties"]["counts"],
        entries
    );
    let mut gemini = entries.clone();
    gemini["items"]
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    assert_eq!(
        params(messages, Dialect::Gemini, false)["properties"]["counts"],
        gemini
    );
}

#[test]
fn nested_messages_and_descriptions() {
    let messages = r#"// An address.
message Address {
  string city = 1;
}
// The request.
message Req {
  // Where to ship.
  Address to = 1;
  Address from = 2;
  repeated Address stops = 3;
  string note = 4 [(ai.tools.v1.tool_field) = { description: "For the driver." usage_notes: "Keep it short." }];
}"#;
    let address = json!({
        "type": "object",
        "properties": { "city": { "type": "string" } },
        "required": ["city"],
        "additionalProperties": false
    });
    // Used three times: spelled out once, referred to at each use, each
    // use keeping its own description (the field's, else the message's).
    let address_ref =
        |description: &str| json!({ "description": description, "$ref": "#/$defs/t.Address" });
    assert_eq!(
        params(messages, Dialect::JsonSchema, false),
        json!({
            "type": "object",
            "description": "The request.",
            "properties": {
                "to": address_ref("Where to ship."),
                "from": address_ref("An address."),
                "stops": { "type": "array", "items": address_ref("An address.") },
                "note": { "type": "string", "description": "For the driver.\n\nKeep it short." }
            },
            "required": ["to", "from", "stops", "note"],
            "additionalProperties": false,
            "$defs": { "t.Address": address }
        })
    );
    // OpenAI takes no keyword beside `$ref`: a described reference is
    // a one-branch `anyOf`.
    assert_eq!(
        params(messages, Dialect::OpenAi, false)["properties"]["to"],
        json!({ "description": "Where to ship.", "anyOf": [{ "$ref": "#/$defs/t.Address" }] })
    );
    // Gemini `parameters` has no `$ref`: every use is spelled out.
    let gemini = params(messages, Dialect::Gemini, false);
    assert!(gemini.get("$defs").is_none());
    assert_eq!(
        gemini["properties"]["from"]["properties"]["city"],
        json!({ "type": "string" })
    );
    assert_eq!(
        gemini["properties"]["stops"]["items"]["description"],
        "An address."
    );
    // `description` comes right after `type`.
    let text = params(messages, Dialect::JsonSchema, false).to_string();
    assert!(text.starts_with(r#"{"type":"object","description":"The request.","properties""#));
}

#[test]
fn a_repeated_message_is_shared_where_that_is_shorter() {
    let messages = "message Inner { string a = 1; string b = 2; }
message Outer { Inner x = 1; Inner y = 2; }
message Req { Outer o1 = 1; optional Outer o2 = 2; Inner i = 3; }";
    let schema = params(messages, Dialect::JsonSchema, false);
    let to = |name: &str| json!({ "$ref": format!("#/$defs/t.{name}") });
    // The outer message is shared, then the inner one: used once at the
    // root and twice in the outer one's definition.
    assert_eq!(schema["properties"]["o1"], to("Outer"));
    assert_eq!(schema["properties"]["o2"], to("Outer"));
    assert_eq!(schema["properties"]["i"], to("Inner"));
    assert_eq!(schema["$defs"]["t.Outer"]["properties"]["x"], to("Inner"));
    assert_eq!(
        schema["$defs"]["t.Inner"]["properties"]["b"],
        json!({ "type": "string" })
    );
    let names: Vec<&String> = schema["$defs"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["t.Inner", "t.Outer"]);
    assert!(
        !schema.to_string().contains('\u{0}'),
        "a name note is left: {schema}"
    );
    // A nullable use is a reference or null.
    assert_eq!(
        params(messages, Dialect::OpenAi, true)["properties"]["o2"],
        json!({ "anyOf": [to("Outer"), { "type": "null" }] })
    );

    // An empty message with a long name: each reference would be longer
    // than the object it replaces.
    let empty = "message AnEmptyMessageWithAVeryLongNameIndeed {}
message Req { AnEmptyMessageWithAVeryLongNameIndeed a = 1; AnEmptyMessageWithAVeryLongNameIndeed b = 2; }";
    let schema = params(empty, Dialect::JsonSchema, false);
    assert!(schema.get("$defs").is_none(), "{schema}");
    assert_eq!(schema["properties"]["a"], schema["properties"]["b"]);
    assert_eq!(schema["properties"]["a"]["type"], "object");
}

const TREE: &str = "// A tree node.
message Node {
  string name = 1;
  // Child nodes.
  repeated Node children = 2;
}
message Req { Node root = 1; }";

#[test]
fn recursion_uses_defs_where_allowed() {
    let node = json!({
        "type": "object",
        "description": "A tree node.",
        "properties": {
            "name": { "type": "string" },
            "children": { "type": "array", "description": "Child nodes.", "items": { "$ref": "#/$defs/t.Node" } }
        },
        "required": ["name", "children"],
        "additionalProperties": false
    });
    assert_eq!(
        params(TREE, Dialect::JsonSchema, false),
        json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/t.Node" } },
            "required": ["root"],
            "additionalProperties": false,
            "$defs": { "t.Node": node }
        })
    );
    for dialect in [
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::GeminiJsonSchema,
    ] {
        let schema = params(TREE, dialect, false);
        assert_eq!(schema["$defs"]["t.Node"], node, "{dialect}");
    }
    let strict = params(TREE, Dialect::OpenAi, true);
    assert_eq!(
        strict["properties"]["root"],
        json!({ "$ref": "#/$defs/t.Node" })
    );
}

#[test]
fn recursion_is_cut_where_not_allowed() {
    let cut = json!({ "type": "string", "description": "A tree node.\n\nA JSON-encoded `t.Node` object." });
    // Gemini has no `$ref`: one level inline, its own children a JSON string.
    let gemini = params(TREE, Dialect::Gemini, false);
    assert!(gemini.get("$defs").is_none());
    let root = &gemini["properties"]["root"];
    assert_eq!(root["description"], "A tree node.");
    assert_eq!(root["type"], "object");
    assert_eq!(root["properties"]["children"]["items"], cut);
    // Anthropic strict takes a `$ref` but not a recursive one: the root
    // refers to the definition, whose own reference is cut.
    let anthropic = params(TREE, Dialect::Anthropic, true);
    assert_eq!(
        anthropic["properties"]["root"],
        json!({ "$ref": "#/$defs/t.Node" })
    );
    let node = &anthropic["$defs"]["t.Node"];
    assert_eq!(node["description"], "A tree node.");
    assert_eq!(node["properties"]["children"]["items"], cut);
}

#[test]
fn without_refs_a_recursive_type_is_spelled_out_once() {
    let messages = TREE.replace(
        "message Req { Node root = 1; }",
        "message Req { Node root = 1; repeated Node more = 2; }",
    );
    let gemini = params(&messages, Dialect::Gemini, false);
    assert_eq!(gemini["properties"]["root"]["type"], "object");
    assert_eq!(
        gemini["properties"]["more"]["items"],
        json!({ "type": "string", "description": "A tree node.\n\nA JSON-encoded `t.Node` object, shaped as `root`." })
    );
}

#[test]
fn openai_cuts_at_depth_ten() {
    let mut messages = String::from("message L11 { string leaf = 1; }\n");
    for i in (1..=10).rev() {
        messages.push_str(&format!("message L{i} {{ L{} next = 1; }}\n", i + 1));
    }
    messages.push_str("message Req { L1 first = 1; }");
    let schema = params(&messages, Dialect::OpenAi, true);
    let mut node = &schema["properties"]["first"];
    for _ in 1..9 {
        node = &node["properties"]["next"];
        assert_eq!(node["type"], "object");
    }
    // Root is level 1, `first` level 2, ... the 10th object is the last.
    assert_eq!(
        node["properties"]["next"],
        json!({ "type": "string", "description": "A JSON-encoded `t.L10` object." })
    );
    // Canonical keeps everything.
    let canonical = params(&messages, Dialect::JsonSchema, false);
    assert!(canonical.to_string().contains("\"leaf\""));
}

#[test]
fn oneof_members_are_optional_and_exclusive() {
    let messages = "message Req {
  oneof target {
    // By id.
    string id = 1;
    string slug = 2;
  }
  string other = 3;
}";
    // One optional property per oneof; its value holds exactly one member,
    // which the schema itself says (no prose), and the root stays a plain object.
    let schema = params(messages, Dialect::JsonSchema, false);
    let branch = |name: &str, member: serde_json::Value| {
        json!({
            "type": "object",
            "properties": { name: member },
            "required": [name],
            "additionalProperties": false
        })
    };
    let id = json!({ "type": "string", "description": "By id." });
    let slug = json!({ "type": "string" });
    assert_eq!(
        schema["properties"],
        json!({
            "target": { "anyOf": [branch("id", id.clone()), branch("slug", slug.clone())] },
            "other": { "type": "string" }
        })
    );
    assert_eq!(schema["required"], json!(["other"]));
    assert!(schema.get("anyOf").is_none());
    // OpenAI strict: required and nullable, by a `null` branch of the same `anyOf`.
    let strict = params(messages, Dialect::OpenAi, true);
    assert_eq!(
        strict["properties"]["target"],
        json!({ "anyOf": [branch("id", id.clone()), branch("slug", slug.clone()), { "type": "null" }] })
    );
    assert_eq!(strict["required"], json!(["target", "other"]));
    // Gemini: closed by construction (no `additionalProperties` there), nullable by keyword.
    let gemini = params(messages, Dialect::Gemini, false);
    assert_eq!(
        gemini["properties"]["target"]["anyOf"][1],
        json!({ "type": "object", "properties": { "slug": slug }, "required": ["slug"] })
    );
    assert_eq!(gemini["properties"]["target"]["nullable"], true);
    // A oneof of one member is that member, optional.
    let single = params(
        "message Req { oneof only { string a = 1; } }",
        Dialect::JsonSchema,
        false,
    );
    assert_eq!(single["properties"], json!({ "a": { "type": "string" } }));
}

const WKT: &str = r#"import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/any.proto";
message Req {
  google.protobuf.Timestamp at = 1;
  google.protobuf.Duration wait = 2;
  google.protobuf.FieldMask mask = 3;
  google.protobuf.Struct meta = 4;
  google.protobuf.Value value = 5;
  google.protobuf.ListValue list = 6;
  google.protobuf.StringValue name = 7;
  google.protobuf.UInt32Value count = 8;
  google.protobuf.Empty nothing = 9;
  google.protobuf.Any any = 10;
}"#;

#[test]
fn well_known_types_canonical() {
    let any_type = json!(["object", "array", "string", "number", "boolean", "null"]);
    let text = "An object or array may also be sent as its JSON text.";
    assert_eq!(
        params(WKT, Dialect::JsonSchema, false)["properties"],
        json!({
            "at": { "type": "string", "format": "date-time" },
            "wait": { "type": "string", "pattern": ir::DURATION_PATTERN },
            "mask": { "type": "string", "pattern": ir::FIELD_MASK_PATTERN },
            "meta": { "type": "object", "additionalProperties": true },
            "value": { "type": any_type, "description": text },
            "list": { "type": "array", "items": { "type": any_type, "description": text } },
            "name": { "type": ["string", "null"] },
            "count": { "type": ["integer", "null"], "minimum": 0, "maximum": u32::MAX },
            "nothing": { "type": "object", "properties": {}, "additionalProperties": false },
            "any": {
                "type": "object",
                "properties": { "@type": { "type": "string", "description": "The type URL of the message, e.g. `type.googleapis.com/pkg.Message`; the message's fields sit beside it, or, for a `google.protobuf` well-known type, its JSON value in `value` (`{\"@type\": \"type.googleapis.com/google.protobuf.Duration\", \"value\": \"1.5s\"}`)." } },
                "required": ["@type"],
                "additionalProperties": true
            }
        })
    );
}

#[test]
fn well_known_types_strict_and_gemini() {
    let strict = params(WKT, Dialect::OpenAi, true);
    let p = &strict["properties"];
    assert_eq!(
        p["meta"],
        json!({ "type": "string", "description": "A JSON-encoded object." })
    );
    let any_value = json!({
        "description": "Any JSON value: a string, number, boolean or null as itself; an object or array as its JSON text.",
        "anyOf": [
            { "type": "string" },
            { "type": "number" },
            { "type": "boolean" },
            { "type": "null" }
        ]
    });
    // An optional field's `null` and the value's own `null` are one branch.
    assert_eq!(p["value"], any_value);
    assert_eq!(p["list"]["items"], any_value);
    assert_eq!(
        p["nothing"],
        json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false })
    );
    assert_eq!(
        p["any"],
        json!({ "type": "string", "description": "A JSON-encoded `google.protobuf.Any` object." })
    );
    let gemini = params(WKT, Dialect::Gemini, false);
    let p = &gemini["properties"];
    assert_eq!(p["at"], json!({ "type": "string", "format": "date-time" }));
    assert_eq!(
        p["wait"],
        json!({ "type": "string", "description": "A duration in seconds with an `s` suffix (at most 11 digits, then at most 9 after a point), e.g. `90s` or `1.5s`." })
    );
    assert_eq!(p["name"], json!({ "type": "string", "nullable": true }));
    assert_eq!(p["nothing"], json!({ "type": "object" }));
    let anthropic = params(WKT, Dialect::Anthropic, true);
    assert_eq!(
        anthropic["properties"]["name"],
        json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] })
    );
}

#[test]
fn typed_map_keys_and_field_masks() {
    use crate::check::check;
    let messages = "import \"google/protobuf/field_mask.proto\";
message Req {
  map<int32, string> by_i32 = 1;
  map<uint64, string> by_u64 = 2;
  map<bool, string> flags = 3;
  map<string, string> labels = 4;
  google.protobuf.FieldMask mask = 5;
}";
    let canonical = params(messages, Dialect::JsonSchema, false);
    let p = &canonical["properties"];
    // Integer keys go as entries everywhere: only an integer schema can
    // state their range.
    assert_eq!(
        p["by_i32"],
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "key": { "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX },
                    "value": { "type": "string" }
                },
                "required": ["key", "value"],
                "additionalProperties": false
            }
        })
    );
    assert_eq!(
        p["by_u64"]["items"]["properties"]["key"]["maximum"],
        u64::MAX
    );
    assert_eq!(p["flags"]["propertyNames"]["pattern"], "^(true|false)$");
    assert!(p["labels"].get("propertyNames").is_none());
    let strict = params(messages, Dialect::OpenAi, true);
    assert_eq!(
        strict["properties"]["by_i32"]["items"]["properties"]["key"],
        json!({ "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX })
    );
    let gemini = params(messages, Dialect::Gemini, false);
    assert_eq!(
        gemini["properties"]["mask"],
        json!({
            "type": "string",
            "description": "Comma-separated field paths in lowerCamelCase, e.g. `displayName,address.city`."
        })
    );
    for dialect in Dialect::ALL {
        for strict in [false, true] {
            let rendered = params(messages, dialect, strict);
            assert!(
                check(dialect, strict, &rendered).is_empty(),
                "{dialect} {strict}"
            );
        }
    }
}

#[test]
fn left_out_and_required_fields() {
    let messages = "message Req {
  string id = 1 [(google.api.field_behavior) = OUTPUT_ONLY];
  string secret = 2 [(ai.tools.v1.tool_field).skip = true];
  optional string must = 3 [(google.api.field_behavior) = REQUIRED];
  optional string may = 4;
  string plain = 5;
  string old = 6 [deprecated = true];
  string old_but_shown = 7 [deprecated = true, (ai.tools.v1.tool_field).usage_notes = 'Still honoured.'];
}";
    let schema = params(messages, Dialect::JsonSchema, false);
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["must", "may", "plain", "old_but_shown"]);
    assert_eq!(
        schema["required"],
        json!(["must", "plain", "old_but_shown"])
    );
}

#[test]
fn tool_field_required_decides_when_set() {
    let messages = "message Req {
  string may = 1 [(ai.tools.v1.tool_field).required = false];
  optional string must = 2 [(ai.tools.v1.tool_field).required = true];
  string plain = 3;
  repeated string tags = 4 [(ai.tools.v1.tool_field) = { required: false, usage_notes: 'Any.' }];
  oneof only { string alone = 5 [(ai.tools.v1.tool_field).required = true]; }
  string also_required = 6 [(google.api.field_behavior) = REQUIRED, (ai.tools.v1.tool_field).required = true];
  optional string unset = 7 [(ai.tools.v1.tool_field).usage_notes = 'No `required`: the default rule.'];
}";
    let schema = params(messages, Dialect::JsonSchema, false);
    assert_eq!(
        schema["required"],
        json!(["must", "plain", "alone", "also_required"])
    );
    // OpenAI strict lists every property; a required one is not nullable.
    let strict = params(messages, Dialect::OpenAi, true);
    assert_eq!(strict["properties"]["must"]["type"], "string");
    assert_eq!(
        strict["properties"]["may"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn a_required_that_contradicts_the_field_is_a_located_error() {
    let diags = diagnostics(&with_tool(
        "message Req {
  string id = 1 [(google.api.field_behavior) = REQUIRED, (ai.tools.v1.tool_field).required = false];
  string secret = 2 [(ai.tools.v1.tool_field) = { skip: true required: true }];
  string etag = 3 [(google.api.field_behavior) = OUTPUT_ONLY, (ai.tools.v1.tool_field).required = true];
  oneof target {
    string email = 4 [(ai.tools.v1.tool_field).required = true];
    string phone = 5;
  }
  oneof single { string alone = 6 [(ai.tools.v1.tool_field).required = false]; }
  string hidden = 7 [(ai.tools.v1.tool_field) = { skip: true required: false }];
}",
        false,
    ));
    assert_eq!(diags.len(), 4, "{diags:#?}");
    // At the option's `required`, in the proto (HEADER is 5 lines).
    assert!(diags[0].starts_with("test.proto:7:"), "{}", diags[0]);
    assert!(
        diags[0].contains("field `t.Req.id` is `(google.api.field_behavior) = REQUIRED`")
            && diags[0].contains("remove `required: false`"),
        "{}",
        diags[0]
    );
    assert!(diags[1].starts_with("test.proto:8:"), "{}", diags[1]);
    assert!(
        diags[1].contains("field `t.Req.secret` is left out of the tool schema (`skip: true`)"),
        "{}",
        diags[1]
    );
    assert!(diags[2].starts_with("test.proto:9:"), "{}", diags[2]);
    assert!(diags[2].contains("`t.Req.etag`") && diags[2].contains("OUTPUT_ONLY"));
    assert!(diags[3].starts_with("test.proto:11:"), "{}", diags[3]);
    assert!(
        diags[3].contains("field `t.Req.email` is a member of oneof `target`")
            && diags[3].contains("cannot apply to one member"),
        "{}",
        diags[3]
    );
}

#[test]
fn proto2_required_fields_cannot_be_made_optional() {
    let source = "syntax = \"proto2\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\nimport \"ai/tools/v1/annotations.proto\";\nmessage Req {\n  required string id = 1 [(ai.tools.v1.tool_field).required = false];\n  optional string note = 2 [(ai.tools.v1.tool_field).required = true];\n}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"t\" description: \"Do it.\" };\n  }\n}\n";
    let pool = compile(source);
    let diags: Vec<String> = tools_in_file(&pool, "test.proto")
        .expect_err("a proto2 `required` field")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].starts_with("test.proto:6:")
            && diags[0].contains("field `t.Req.id` is a proto2 `required` field"),
        "{}",
        diags[0]
    );
    // `message_schema` builds anyway: the contract wins, and `required:
    // true` makes an `optional` field required.
    let schema = message_schema(&pool.get_message_by_name("t.Req").expect("Req"));
    let required: Vec<(&str, bool)> = match &schema.kind {
        Kind::Object(object) => object
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.required))
            .collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(required, [("id", true), ("note", true)]);
}

#[test]
fn tool_hints_from_the_proto() {
    let body = r#"
message Req {}
message Resp {}
service S {
  rpc Get(Req) returns (Resp) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." title: "Get a thing" };
  }
  rpc Put(Req) returns (Resp) {
    option idempotency_level = IDEMPOTENT;
    option (ai.context.v1.rpc_tool) = { name: "put" description: "Put it." destructive: true };
  }
  rpc Add(Req) returns (Resp) {
    option (ai.context.v1.rpc_tool) = { name: "add" description: "Add it." destructive: false };
  }
  rpc Old(Req) returns (Resp) {
    option deprecated = true;
    option (ai.context.v1.rpc_tool) = { name: "old" description: "Still a tool: it is annotated." };
  }
}
"#;
    let tools = tools(body);
    let hints: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.hints)).collect();
    let h = |read_only, idempotent, destructive| ToolHints {
        read_only,
        idempotent,
        destructive,
    };
    assert_eq!(
        hints,
        [
            ("get", h(true, true, None)),
            ("put", h(false, true, Some(true))),
            ("add", h(false, false, Some(false))),
            ("old", h(false, false, None)),
        ]
    );
    assert_eq!(tools[0].title.as_deref(), Some("Get a thing"));
    assert_eq!(tools[1].title, None);
}

#[test]
fn diagnostic_read_only_and_destructive() {
    let diags = diagnostics(
        r#"
message Req {}
service S {
  rpc Get(Req) returns (Req) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." destructive: true };
  }
}
"#,
    );
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].contains("`idempotency_level = NO_SIDE_EFFECTS` and `destructive: true`"),
        "{diags:?}"
    );
    assert!(diags[0].starts_with("test.proto:"), "{diags:?}");
}

#[test]
fn rpc_tool_timeout_is_the_tools_deadline() {
    let tools = tools(
        r#"
message Req {}
service S {
  rpc Slow(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "slow" description: "Slow." timeout: { seconds: 300 } };
  }
  rpc Quick(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "quick" description: "Quick." timeout: { nanos: 300000000 } };
  }
  rpc Plain(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "plain" description: "Plain." };
  }
}
"#,
    );
    let timeouts: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.timeout)).collect();
    assert_eq!(
        timeouts,
        [
            ("slow", Some(std::time::Duration::from_secs(300))),
            ("quick", Some(std::time::Duration::from_millis(300))),
            ("plain", None),
        ]
    );
}

#[test]
fn diagnostic_timeout_that_is_no_deadline() {
    for (timeout, why) in [
        ("{}", "`timeout` 0s is not a deadline"),
        ("{ seconds: -5 }", "`timeout` -5s is not a deadline"),
        ("{ nanos: -1 }", "`timeout` -0.000000001s is not a deadline"),
        (
            "{ seconds: 86401 }",
            "`timeout` 86401s is longer than a tool's deadline may be, 86400s (one day)",
        ),
        (
            "{ seconds: 1 nanos: 1000000000 }",
            "nanos 1000000000, out of range",
        ),
    ] {
        let diags = diagnostics(&format!(
            r#"
message Req {{}}
service S {{
  rpc Get(Req) returns (Req) {{
    option (ai.context.v1.rpc_tool) = {{ name: "get" description: "Get it." timeout: {timeout} }};
  }}
}}
"#
        ));
        assert_eq!(diags.len(), 1, "{timeout}: {diags:?}");
        assert!(diags[0].contains(why), "{timeout}: {diags:?}");
        assert!(diags[0].starts_with("test.proto:"), "{diags:?}");
        // Located on the option's line.
        let line: u32 = diags[0]
            .split(':')
            .nth(1)
            .and_then(|l| l.parse().ok())
            .expect("located");
        assert!(line >= 5, "{diags:?}");
    }
}

#[test]
fn rpc_tool_examples_are_checked_and_kept() {
    let body = r#"
message Req {
  string name = 1;
  optional int64 size = 2;
  map<string, string> labels = 3;
}
service S {
  rpc Put(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = {
      name: "put"
      description: "Put it."
      strict: true
      examples: '{"name": "a", "labels": {}}'
      examples: '{"name": "b", "size": 9007199254740993, "labels": {"team": "web"}}'
    };
  }
  rpc Get(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." };
  }
}
"#;
    let tools = tools(body);
    assert_eq!(
        tools[0].examples,
        [
            json!({"name": "a", "labels": {}}),
            json!({"name": "b", "size": 9_007_199_254_740_993_i64, "labels": {"team": "web"}}),
        ]
    );
    assert!(tools[1].examples.is_empty());
    // Anthropic strict gives the map as entries: so do its examples.
    assert_eq!(
        tools[0].input_examples(),
        Some(json!([
            {"name": "a", "labels": []},
            {"name": "b", "size": 9_007_199_254_740_993_i64, "labels": [{"key": "team", "value": "web"}]}
        ]))
    );
    assert_eq!(tools[0].violations(), Vec::<String>::new());
    assert_eq!(tools[1].input_examples(), None);
    let (rendered, _) = tools[0].render_checked();
    assert_eq!(
        rendered.input_examples.as_deref(),
        Some(
            r#"[{"name":"a","labels":[]},{"name":"b","size":9007199254740993,"labels":[{"key":"team","value":"web"}]}]"#
        )
    );
}

#[test]
fn diagnostic_example_that_does_not_fit() {
    let diags = diagnostics(
        r#"
message Req {
  string name = 1;
  repeated int32 sizes = 2;
}
service S {
  rpc Put(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = {
      name: "put"
      description: "Put it."
      examples: '{"name": "a", "sizes": [1, "two"]}'
      examples: '{"name": "b", "sizes": []}'
      examples: 'name=c'
    };
  }
}
"#,
    );
    assert_eq!(
        diags,
        [
            "test.proto:13:5: rpc `Put`: example 1 (`{\"name\": \"a\", \"sizes\": [1, \"two\"]}`) does not fit the tool: `sizes[1]` is `two`, which is not a whole number in digits; send a whole number",
            "test.proto:13:5: rpc `Put`: example 3 (`name=c`) does not fit the tool: the example is not JSON (expected ident at line 1 column 2); write the tool's arguments as one JSON object, e.g. `{\"name\": \"value\"}`",
        ]
    );
}

#[test]
fn aliases_and_output_prefix() {
    let body = r#"
message Item {
  string id = 1 [(ai.tools.v1.tool_field).alias_prefix = "item"];
  repeated string tag_ids = 2 [(ai.tools.v1.tool_field).alias_prefix = "tag"];
  repeated Item children = 3;
}
message Req {
  string item_id = 1 [(ai.tools.v1.tool_field).alias_prefix = "item"];
  Item item = 2;
  Item other = 3;
}
message Resp { string note = 1; repeated Item items = 2; }
message Wrapped { string id = 1 [(ai.tools.v1.tool_field).alias_prefix = "wrap"]; Item item = 2; }
service S {
  rpc A(Req) returns (Resp) { option (ai.tools.v1.rpc_tool) = { name: "a" description: "A." }; }
  rpc B(Req) returns (Wrapped) { option (ai.tools.v1.rpc_tool) = { name: "b" description: "B." }; }
}"#;
    let source = format!(
        "syntax = \"proto3\";\npackage t;\nimport \"ai/tools/v1/rpc_tool.proto\";\nimport \"ai/tools/v1/annotations.proto\";\n{body}"
    );
    let pool = compile(&source);
    let tools = tools_in_file(&pool, "test.proto").expect("valid");
    let alias = |m: &str, f: &str, p: &str| FieldAlias {
        message: m.into(),
        field: f.into(),
        prefix: p.into(),
    };
    assert_eq!(
        tools[0].request_aliases,
        [
            alias("t.Req", "item_id", "item"),
            alias("t.Item", "id", "item"),
            alias("t.Item", "tag_ids", "tag"),
        ]
    );
    assert_eq!(
        tools[0].response_aliases,
        [
            alias("t.Item", "id", "item"),
            alias("t.Item", "tag_ids", "tag")
        ]
    );
    assert_eq!(tools[0].output_prefix.as_deref(), Some("item"));
    assert_eq!(tools[1].output_prefix.as_deref(), Some("wrap"));
    assert_eq!(tools[1].service, "t.S");
    assert_eq!(tools[1].method, "B");
    assert_eq!(tools[1].request, "t.Req");
    assert_eq!(tools[1].response, "t.Wrapped");
}

#[test]
fn tools_of_imports_are_not_listed() {
    let dep = format!(
        "{HEADER}message Req {{}}\nmessage Resp {{}}\nservice Dep {{ rpc M(Req) returns (Resp) {{ option (ai.context.v1.rpc_tool) = {{ name: \"dep\" description: \"D.\" }}; }} }}"
    );
    let main = format!(
        "{HEADER}import \"dep.proto\";\nservice Main {{ rpc M(t.Req) returns (t.Resp) {{ option (ai.context.v1.rpc_tool) = {{ name: \"main\" description: \"M.\" strict: true }}; }} }}"
    );
    let pool = compile_files(&[("dep.proto", &dep), ("main.proto", &main)], "main.proto");
    let tools = tools_in_file(&pool, "main.proto").expect("valid");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["main"]);
    assert!(tools[0].strict);
}

#[test]
fn diagnostic_bad_tool_name() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"links.create\" description: \"D.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("rpc `M`: tool name `links.create` contains `.`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_duplicate_tool_name() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc A(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"same\" description: \"A.\" };\n  }\n  rpc B(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"same\" description: \"B.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:13:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("tool name `same` is already used by rpc `t.S.A` (test.proto:10:5)"),
        "{}",
        diags[0]
    );
    assert!(
        diags[0].contains("give rpc `t.S.B` a different `name`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_empty_description() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"m\" description: \"  \" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("rpc `M` has an empty tool `description`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_streaming() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc A(stream Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"a\" description: \"A.\" };\n  }\n  rpc B(Req) returns (stream Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"b\" description: \"B.\" };\n  }\n  rpc C(stream Req) returns (stream Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"c\" description: \"C.\" };\n  }\n}\n",
    );
    // A server stream is a tool (collected into one result).
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(diags[0].contains("rpc `A` is client-streaming and cannot be a tool"));
    assert!(diags[0].contains("only unary and server-streaming methods"));
    assert!(diags[1].contains("rpc `C` is bidirectional-streaming"));
}

#[test]
fn diagnostic_alias_prefix() {
    let diags = diagnostics(
        "message Req {\n  int32 n = 1 [(ai.tools.v1.tool_field).alias_prefix = \"num\"];\n  string s = 2 [(ai.tools.v1.tool_field).alias_prefix = \"Bad-Prefix\"];\n  repeated string ok = 3 [(ai.tools.v1.tool_field).alias_prefix = \"ok\"];\n  map<string, string> m = 4 [(ai.tools.v1.tool_field).alias_prefix = \"map\"];\n}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"m\" description: \"M.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:7:"), "{}", diags[0]);
    assert!(
        diags[0].contains("field `t.Req.n` has an `alias_prefix` but is of type `int32`"),
        "{}",
        diags[0]
    );
    assert!(diags[1].starts_with("test.proto:8:"), "{}", diags[1]);
    assert!(
        diags[1].contains("field `t.Req.s`: alias prefix `Bad-Prefix` must start with a lowercase"),
        "{}",
        diags[1]
    );
    assert!(
        diags[2].contains("field `t.Req.m` has an `alias_prefix` but is a map"),
        "{}",
        diags[2]
    );
}

#[test]
fn diagnostic_no_annotated_method() {
    let diags = diagnostics("message Req {}\nservice S { rpc M(Req) returns (Req); }\n");
    assert_eq!(
        diags,
        [
            "test.proto: `test.proto` has no method annotated with `rpc_tool`; add `option (ai.context.v1.rpc_tool) = {...}` to at least one rpc"
        ]
    );
    // Without any annotation proto in the pool, nothing is annotated either.
    let pool =
        compile("syntax = \"proto3\";\nmessage Req {}\nservice S { rpc M(Req) returns (Req); }\n");
    let err = tools_in_file(&pool, "test.proto").unwrap_err();
    assert!(err[0].message.contains("has no method annotated"));
    let err = tools_in_file(&pool, "missing.proto").unwrap_err();
    assert_eq!(
        err[0].to_string(),
        "missing.proto: `missing.proto` is not in the descriptor pool; compile it (with its imports) into the pool first"
    );
}

/// The fields an IR schema spells out, as [`spelled_out_fields`] counts
/// them: every property, a oneof's members rather than its own property.
fn fields_in(schema: &Schema) -> usize {
    match &schema.kind {
        Kind::Object(object) => {
            let props: usize = object
                .properties
                .iter()
                .map(|p| match &p.schema.kind {
                    Kind::OneOf(one_of) => one_of
                        .members
                        .iter()
                        .map(|m| 1 + fields_in(&m.schema))
                        .sum(),
                    _ => 1 + fields_in(&p.schema),
                })
                .sum();
            props + object.defs.values().map(fields_in).sum::<usize>()
        }
        Kind::Array(item) => fields_in(item),
        Kind::Map(map) => fields_in(&map.value),
        _ => 0,
    }
}

/// `Req` spells out exactly 100 * (1 + 27 * (1 + 36)) = 100,000 fields:
/// 100 uses of `Mid`, each using `Leaf` (36 fields) 27 times.
fn at_the_bound(extra: &str) -> String {
    let numbered = |n: usize, kind: &str| {
        (1..=n)
            .map(|i| format!("{kind} f{i} = {i};"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    with_tool(
        &format!(
            "message Leaf {{ {} }}\nmessage Mid {{ {} }}\nmessage Req {{ {} {extra} }}",
            numbered(36, "string"),
            numbered(27, "Leaf"),
            numbered(100, "Mid"),
        ),
        false,
    )
}

#[test]
fn a_request_at_the_bound_is_built_and_counted_as_built() {
    let tool = tools(&at_the_bound("")).remove(0);
    assert_eq!(fields_in(&tool.parameters), MAX_SPELLED_OUT_FIELDS);
}

#[test]
fn a_request_past_the_bound_is_refused_at_its_rpc() {
    let diags = diagnostics(&at_the_bound("string one_more = 101;"));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].starts_with("test.proto:")
            && diags[0].contains("rpc `M`: its request `t.Req` spells out 100001 fields")
            && diags[0].contains("`t.Leaf` is spelled out 2700 times"),
        "{}",
        diags[0]
    );
}

#[test]
fn messages_that_double_at_each_level_are_refused_not_built() {
    // 2^30 copies of `L30` if built (and within the nesting bound: `Req`
    // and 31 levels): the count ends, the build would not.
    let levels: String = (0..30)
        .map(|k| format!("message L{k} {{ L{n} a = 1; L{n} b = 2; }}\n", n = k + 1))
        .collect();
    let diags = diagnostics(&with_tool(
        &format!("{levels}message L30 {{ string s = 1; }}\nmessage Req {{ L0 root = 1; }}"),
        false,
    ));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("`t.L30` is spelled out 1073741824 times"),
        "{}",
        diags[0]
    );
}

#[test]
fn recursion_and_repetition_are_counted_as_built() {
    // `Node` is a definition (counted once); `Pair` is spelled out at
    // each use, three in `Req` and one in the definition; a map's values
    // and a oneof's members count.
    let body = with_tool(
        "message Pair { string k = 1; string v = 2; }\n\
             message Node { repeated Node children = 1; Pair label = 2; }\n\
             message Req { Node tree = 1; Pair first = 2; map<string, Pair> more = 3;\n\
               oneof pick { string a = 4; Pair b = 5; } }",
        false,
    );
    let tool = tools(&body).remove(0);
    let pool = compile(&format!("{HEADER}{body}"));
    let ann = Annotations::new(&pool);
    let req = pool.get_message_by_name("t.Req").unwrap();
    let recursive = recursive_messages(&ann, &req);
    let counted = spelled_out_fields(&ann, &req, &recursive);
    assert_eq!(counted, fields_in(&tool.parameters));
    // Req: 5 fields, 3 uses of Pair (2 each); Node: 2 fields and 1 Pair.
    assert_eq!(counted, 5 + 3 * 2 + 2 + 2);
    assert_eq!(
        most_used_message(&ann, &req, &recursive),
        ("t.Pair".to_owned(), 4)
    );
}

/// Runs `f` on a thread with a 2 MiB stack, the default of a spawned
/// thread and of a tokio worker, and returns what it returns.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no panic")
}

/// `levels` messages `L0` … nested each in the last, in turn as a map's
/// value, a oneof's member and an optional repeated field (the shapes
/// that render deepest), under `Req`.
fn chain_of(levels: usize) -> String {
    let mut out = String::from("message Req { L0 top = 1; }\n");
    for i in 0..levels - 1 {
        let next = i + 1;
        let field = match i % 3 {
            0 => format!("map<string, L{next}> next = 1;"),
            1 => format!("oneof pick {{ L{next} next = 1; string none = 2; }}"),
            _ => format!("repeated L{next} next = 1;"),
        };
        out.push_str(&format!(
            "message L{i} {{ {field} optional string s = 3; }}\n"
        ));
    }
    out.push_str(&format!("message L{} {{ string s = 1; }}", levels - 1));
    out
}

#[test]
fn a_chain_at_the_nesting_bound_is_rendered_and_checked_on_a_small_stack() {
    // `Req` and `MAX_NESTING_DEPTH - 1` more: exactly at the bound.
    let body = with_tool(&chain_of(MAX_NESTING_DEPTH - 1), false);
    let (rendered, violations) = on_a_small_stack(move || tools(&body).remove(0).render_checked());
    assert!(violations.is_empty(), "{violations:#?}");
    // Every level is spelled out where the dialect does not cut by depth.
    for text in [&rendered.canonical, &rendered.anthropic, &rendered.gemini] {
        assert_eq!(
            text.matches("\"next\":").count(),
            MAX_NESTING_DEPTH - 2,
            "{text}"
        );
    }
}

#[test]
fn a_chain_one_past_the_nesting_bound_is_refused_at_its_rpc_naming_it() {
    let diags = diagnostics(&with_tool(&chain_of(MAX_NESTING_DEPTH), false));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains(&format!(
            "rpc `M`: its request `t.Req` nests messages more than {MAX_NESTING_DEPTH} deep"
        )) && diags[0]
            .contains("`t.Req` → `t.L0` → `t.L1` → … 27 more … → `t.L29` → `t.L30` → `t.L31`"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_chain_thousands_deep_is_refused_without_recursing_down_it() {
    // A proto (or a server's reflection) may chain messages deeper than
    // a stack: the walks before the bound are iterative, the ones after
    // it stop at it.
    let levels: String = (0..5_000)
        .map(|k| format!("message L{k} {{ L{n} next = 1; }}\n", n = k + 1))
        .collect();
    let body = with_tool(
        &format!("{levels}message L5000 {{ string s = 1; }}\nmessage Req {{ L0 top = 1; }}"),
        false,
    );
    let diags = on_a_small_stack(move || diagnostics(&body));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("nests messages more than"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_long_cycle_is_recursive_and_what_hangs_off_it_is_not() {
    // C0 → C1 → … → C4999 → C0, and C0 → Tail: Tarjan's components,
    // found without recursing down the cycle.
    let cycle: String = (0..5_000)
        .map(|k| {
            format!(
                "message C{k} {{ C{n} next = 1; Tail tail = 2; }}\n",
                n = (k + 1) % 5_000
            )
        })
        .collect();
    let body = with_tool(
        &format!("{cycle}message Tail {{ string s = 1; }}\nmessage Req {{ C0 top = 1; }}"),
        false,
    );
    let recursive = on_a_small_stack(move || {
        let pool = compile(&format!("{HEADER}{body}"));
        let req = pool.get_message_by_name("t.Req").expect("Req");
        recursive_messages(&Annotations::new(&pool), &req)
    });
    assert_eq!(recursive.len(), 5_000);
    assert!(recursive.contains("t.C0") && recursive.contains("t.C4999"));
    assert!(!recursive.contains("t.Tail") && !recursive.contains("t.Req"));
}

#[test]
fn recursive_types_inlined_inside_one_another_stop_at_the_nesting_bound() {
    // Each `T` is recursive, so each chain of plain messages is one long;
    // Gemini `parameters` inlines a recursive type where it is first
    // used, and would nest 200 of them without the bound.
    let types: String = (0..200)
        .map(|k| {
            format!(
                "message T{k} {{ T{k} again = 1; T{n} next = 2; }}\n",
                n = k + 1
            )
        })
        .collect();
    let body = with_tool(
        &format!("{types}message T200 {{ string s = 1; }}\nmessage Req {{ T0 top = 1; }}"),
        false,
    );
    let (gemini, violations) = on_a_small_stack(move || {
        let tool = tools(&body).remove(0);
        (tool.render(Dialect::Gemini), tool.violations())
    });
    assert!(violations.is_empty(), "{violations:#?}");
    fn objects_deep(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => {
                let below = m.values().map(objects_deep).max().unwrap_or(0);
                below + usize::from(m.get("type") == Some(&"object".into()))
            }
            serde_json::Value::Array(items) => items.iter().map(objects_deep).max().unwrap_or(0),
            _ => 0,
        }
    }
    let depth = objects_deep(&gemini);
    assert!(
        (MAX_NESTING_DEPTH..=MAX_NESTING_DEPTH + 1).contains(&depth),
        "{depth} levels of objects"
    );
}

#[test]
fn diagnostics_are_all_collected() {
    let diags = diagnostics(
        "message Req { int32 n = 1 [(ai.tools.v1.tool_field).alias_prefix = \"n\"]; }\nmessage Resp {}\nservice S {\n  rpc A(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: \"9\" description: \"\" }; }\n}\n",
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");
}

#[test]
fn rpc_tool_output_schema_is_read_as_written() {
    let body = r#"
message Req { string name = 1; }
service S {
  rpc On(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "on" description: "On." output_schema: true };
  }
  rpc Off(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "off" description: "Off." output_schema: false };
  }
  rpc Unset(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "unset" description: "Unset." };
  }
}
"#;
    let chosen: Vec<Option<bool>> = tools(body).iter().map(|t| t.output_schema).collect();
    assert_eq!(chosen, [Some(true), Some(false), None]);
}

#[test]
fn sensitive_fields_are_redacted_at_any_depth_in_either_naming() {
    let pool = crate::test_support::compile(
        r#"
syntax = "proto3";
package t;
import "ai/tools/v1/annotations.proto";
message Card { string number = 1 [(ai.tools.v1.tool_field).sensitive = true]; string holder_name = 2; }
message Req {
  string api_key = 1 [(ai.tools.v1.tool_field).sensitive = true];
  Card card = 2;
  repeated Card cards = 3;
  map<string, Card> by_name = 4;
  string note = 5;
}
"#,
    );
    let req = pool.get_message_by_name("t.Req").unwrap();
    assert!(super::is_sensitive(
        &req.get_field_by_name("api_key").unwrap()
    ));
    assert!(!super::is_sensitive(
        &req.get_field_by_name("note").unwrap()
    ));
    let mut value = json!({
        "apiKey": "k-1",
        "card": {"number": "4111", "holderName": "A"},
        "cards": [{"number": "4222"}],
        "by_name": {"a": {"number": "4333"}},
        "note": "hello",
    });
    super::redact(&mut value, &req);
    assert_eq!(
        value,
        json!({
            "apiKey": "[redacted]",
            "card": {"number": "[redacted]", "holderName": "A"},
            "cards": [{"number": "[redacted]"}],
            "by_name": {"a": {"number": "[redacted]"}},
            "note": "hello",
        })
    );
    // A map as `{key, value}` entries, as strict dialects send it.
    let mut entries = json!({"by_name": [{"key": "a", "value": {"number": "4444"}}]});
    super::redact(&mut entries, &req);
    assert_eq!(entries["by_name"][0]["value"]["number"], "[redacted]");
}

/// Issue 40: where a method sets no `idempotency_level` and no
/// `destructive`, its `google.api.http` verb speaks for it: `get` is
/// read-only, `delete` destructive. What is written explicitly wins.
#[test]
fn tool_hints_from_the_http_binding_where_nothing_else_is_said() {
    const HTTP: &str = include_str!("../../../proto/third_party/googleapis/google/api/http.proto");
    const ANNOTATIONS: &str =
        include_str!("../../../proto/third_party/googleapis/google/api/annotations.proto");
    let body = r#"
import "google/api/annotations.proto";
message Req {}
message Resp {}
service S {
  rpc Get(Req) returns (Resp) {
    option (google.api.http) = { get: "/v1/things/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." };
  }
  rpc Delete(Req) returns (Resp) {
    option (google.api.http) = { delete: "/v1/things/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "delete" description: "Delete it." };
  }
  rpc Create(Req) returns (Resp) {
    option (google.api.http) = { post: "/v1/things" body: "*" };
    option (ai.context.v1.rpc_tool) = { name: "create" description: "Create it." };
  }
  rpc Fetch(Req) returns (Resp) {
    option idempotency_level = IDEMPOTENT;
    option (google.api.http) = { get: "/v1/things:fetch" };
    option (ai.context.v1.rpc_tool) = { name: "fetch" description: "Fetch it." };
  }
  rpc Touch(Req) returns (Resp) {
    option (google.api.http) = { get: "/v1/things:touch" };
    option (ai.context.v1.rpc_tool) = { name: "touch" description: "Touch it." destructive: true };
  }
  rpc Forget(Req) returns (Resp) {
    option (google.api.http) = { delete: "/v1/cache/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "forget" description: "Forget it." destructive: false };
  }
  rpc Peek(Req) returns (Resp) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (google.api.http) = { delete: "/v1/odd/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "peek" description: "Peek." };
  }
}
"#;
    let source = format!("{HEADER}{body}");
    let pool = compile_files(
        &[
            ("test.proto", &source),
            ("google/api/http.proto", HTTP),
            ("google/api/annotations.proto", ANNOTATIONS),
        ],
        "test.proto",
    );
    let tools = tools_in_file(&pool, "test.proto").expect("valid");
    let hints: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.hints)).collect();
    let h = |read_only, idempotent, destructive| ToolHints {
        read_only,
        idempotent,
        destructive,
    };
    assert_eq!(
        hints,
        [
            ("get", h(true, true, None)),
            ("delete", h(false, false, Some(true))),
            ("create", h(false, false, None)),
            ("fetch", h(false, true, None)),
            ("touch", h(false, false, Some(true))),
            ("forget", h(false, false, Some(false))),
            ("peek", h(true, true, None)),
        ]
    );
}

/// `rpc_tool.consent` is the tool's own consent policy; unset (and the
/// unspecified value) leaves it to the server.
#[test]
fn consent_from_the_proto() {
    let body = r#"
message Req {}
message Resp {}
service S {
  rpc A(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "a" description: "A." consent: ALLOW }; }
  rpc C(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "c" description: "C." consent: CONFIRM }; }
  rpc B(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "b" description: "B." consent: BLOCK }; }
  rpc U(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "u" description: "U." consent: CONSENT_UNSPECIFIED }; }
  rpc N(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "n" description: "N." }; }
}
"#;
    let consent: Vec<_> = tools(body)
        .into_iter()
        .map(|t| (t.name, t.consent))
        .collect();
    use crate::ConsentPolicy::*;
    assert_eq!(
        consent,
        [
            ("a".to_owned(), Some(Allow)),
            ("c".to_owned(), Some(Confirm)),
            ("b".to_owned(), Some(Block)),
            ("u".to_owned(), None),
            ("n".to_owned(), None),
        ]
    );
}
