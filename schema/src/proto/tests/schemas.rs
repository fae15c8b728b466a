//! What a request message renders as: scalars, enums, maps, nested and
//! recursive messages, oneofs, well-known types, and required fields.

use super::*;

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
