//! Protos this project did not write, through the macro: googleapis'
//! `google/longrunning/operations.proto` (an annotated copy), every
//! `google/type` message and enum (in our `proto/corpus/v1/google_types.proto`)
//! and etcd's `rpc.proto` (an annotated copy), all under `proto/third_party`
//! (see its README for the sources and what was changed). Like
//! `conformance.rs`: every static rendering of every tool passes its
//! dialect's checker, and the expected tools exist.

use std::collections::BTreeSet;

use prost_reflect::Kind;
use proto_ai_tools::AgentTool;
use proto_ai_tools::schema::Dialect;
use proto_ai_tools_tests::support::{check_every_rendering, renderings, request_violations};
use proto_ai_tools_tests::tools::{longrunning_overlay, longrunning_whole};
use serde_json::Value;

/// The annotated copy of googleapis' `google/longrunning/operations.proto`:
/// its own include root first, then the unmodified googleapis files.
mod longrunning {
    proto_ai_tools::ai_tools!(
        "proto/third_party/annotated/google/longrunning/operations.proto",
        includes = [
            "proto/third_party/annotated",
            "proto/third_party/googleapis"
        ]
    );
}

use proto_ai_tools_tests::tools::{etcd, google_types};

/// Every tool of the three files.
fn tools() -> Vec<&'static AgentTool> {
    longrunning::all_tools()
        .iter()
        .chain(google_types::all_tools())
        .chain(etcd::all_tools())
        .copied()
        .collect()
}

fn tool(name: &str) -> &'static AgentTool {
    tools()
        .into_iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

fn canonical(name: &str) -> Value {
    serde_json::from_str(tool(name).parameters()).expect("JSON")
}

/// Calls `visit` on `value` and every value inside it.
fn walk<'a>(value: &'a Value, visit: &mut impl FnMut(&'a Value)) {
    visit(value);
    match value {
        Value::Array(items) => items.iter().for_each(|item| walk(item, visit)),
        Value::Object(map) => map.values().for_each(|item| walk(item, visit)),
        _ => {}
    }
}

/// Every `enum` list anywhere in `schema`, as strings.
fn enum_lists(schema: &Value) -> Vec<Vec<String>> {
    let mut lists = Vec::new();
    walk(schema, &mut |value| {
        if let Some(Value::Array(values)) = value.get("enum") {
            lists.push(
                values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            );
        }
    });
    lists
}

/// Every object schema anywhere in `schema` that declares all of `properties`.
fn objects_with<'a>(schema: &'a Value, properties: &[&str]) -> Vec<&'a Value> {
    let mut found = Vec::new();
    walk(schema, &mut |value| {
        if let Some(Value::Object(props)) = value.get("properties")
            && properties.iter().all(|p| props.contains_key(*p))
        {
            found.push(value);
        }
    });
    found
}

fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn each_file_has_its_tools() {
    let names = |tools: &[&AgentTool]| -> Vec<(&'static str, bool)> {
        tools.iter().map(|t| (t.name, t.strict)).collect()
    };
    assert_eq!(
        names(longrunning::all_tools()),
        [
            ("operations_list", true),
            ("operations_get", false),
            ("operations_delete", false),
            ("operations_cancel", true),
            ("operations_wait", false),
        ]
    );
    assert_eq!(
        names(google_types::all_tools()),
        [
            ("types_schedule", false),
            ("types_schedule_strict", true),
            ("types_price", true),
            ("types_place", false),
            ("types_place_strict", true),
            ("types_keyed", false),
            ("types_keyed_strict", true),
        ]
    );
    assert_eq!(
        names(etcd::all_tools()),
        [
            ("etcd_range", false),
            ("etcd_put", true),
            ("etcd_delete_range", false),
            ("etcd_txn", true),
            ("etcd_compact", true),
            ("etcd_lease_grant", true),
            ("etcd_lease_revoke", false),
            ("etcd_lease_time_to_live", false),
            ("etcd_lease_list", false),
            ("etcd_member_list", false),
            ("etcd_alarm", false),
            ("etcd_status", false),
            ("etcd_role_grant_permission", false),
        ]
    );
    let methods: Vec<(&str, &str)> = etcd::all_tools()
        .iter()
        .map(|t| (t.method.service, t.method.method))
        .collect();
    assert_eq!(
        methods[..6],
        [
            ("etcdserverpb.KV", "Range"),
            ("etcdserverpb.KV", "Put"),
            ("etcdserverpb.KV", "DeleteRange"),
            ("etcdserverpb.KV", "Txn"),
            ("etcdserverpb.KV", "Compact"),
            ("etcdserverpb.Lease", "LeaseGrant"),
        ]
    );
    assert_eq!(
        longrunning::OPERATIONS_WAIT.method.request,
        "google.longrunning.WaitOperationRequest"
    );
    assert_eq!(
        longrunning::OPERATIONS_WAIT.method.response,
        "google.longrunning.Operation"
    );
}

#[test]
fn every_static_rendering_passes_its_checker() {
    let checked = check_every_rendering(tools(), |tool, dialect, schema| {
        // The root stays a plain object in every dialect.
        assert_eq!(schema["type"], "object", "{} {dialect}", tool.name);
        for union in ["anyOf", "oneOf", "allOf"] {
            assert!(
                schema.get(union).is_none(),
                "{} {dialect}: a union at the root",
                tool.name
            );
        }
    });
    // 5 + 7 + 13 tools in 5 dialects.
    assert_eq!(checked, 25 * 5);
}

/// Each file's tools, sent together as one request, stay within every
/// provider's per-request limits (Anthropic's strict budgets included).
#[test]
fn each_file_as_one_request() {
    for (file, list) in [
        ("longrunning", longrunning::all_tools()),
        ("google_types", google_types::all_tools()),
        ("etcd", etcd::all_tools()),
    ] {
        for dialect in [
            Dialect::OpenAi,
            Dialect::Anthropic,
            Dialect::Gemini,
            Dialect::GeminiJsonSchema,
        ] {
            let violations = request_violations(dialect, list.iter().copied());
            assert!(violations.is_empty(), "{file} {dialect}: {violations:#?}");
        }
    }
}

#[test]
fn longrunning_tools_read_googleapis_comments_and_types() {
    let list = canonical("operations_list");
    let props: Vec<&str> = list["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    for field in [
        "name",
        "filter",
        "page_size",
        "page_token",
        "return_partial_success",
    ] {
        assert!(props.contains(&field), "{field} in {props:?}");
    }
    assert_eq!(
        list["properties"]["filter"]["description"],
        "The standard list filter."
    );
    // Duration: a string of seconds, in every dialect.
    for (dialect, schema) in renderings(tool("operations_wait")) {
        let timeout = &schema["properties"]["timeout"];
        assert!(
            timeout["type"] == "string" || timeout["type"][0] == "string",
            "{dialect}: {timeout}"
        );
    }
    for name in ["operations_get", "operations_delete", "operations_cancel"] {
        assert_eq!(required(&canonical(name)), ["name"], "{name}");
    }
    // The tool's description is the annotation's, not the RPC comment.
    assert!(
        longrunning::OPERATIONS_CANCEL
            .description
            .starts_with("Start cancelling")
    );
}

/// googleapis' `google/api/field_behavior.proto` (proto3, so the extension
/// is packed) on the include path wins over the copy ai-tools serves
/// (`[packed = false]`), and its REQUIRED and OUTPUT_ONLY still work.
#[test]
fn googleapis_field_behavior_wins_and_works() {
    let pool = google_types::descriptor_pool();
    let extension = pool
        .get_extension_by_name("google.api.field_behavior")
        .expect("the extension is in the pool");
    assert!(
        extension.is_packed(),
        "the pool holds the field_behavior.proto ai-tools serves, not googleapis'"
    );
    for name in ["types_schedule", "types_schedule_strict"] {
        for (dialect, schema) in renderings(tool(name)) {
            let props = schema["properties"].as_object().expect("properties");
            assert!(
                !props.contains_key("scheduled_by"),
                "{name} {dialect}: OUTPUT_ONLY field shown"
            );
            assert!(
                required(&schema).contains(&"last_day"),
                "{name} {dialect}: REQUIRED `optional` field not required"
            );
            if name == "types_schedule" && dialect == Dialect::JsonSchema {
                assert!(!required(&schema).contains(&"skip_on"), "{name}");
            }
        }
    }
    let schedule = canonical("types_schedule");
    assert!(
        schedule["properties"]["skip_on"]["description"]
            .as_str()
            .expect("a description")
            .ends_with("\n\nLeave unset unless the user named a day to skip.")
    );
}

/// Every message and enum of every `google/type` file shipped under
/// `proto/third_party/googleapis` is the type of a request field.
#[test]
fn every_google_type_is_in_a_request() {
    let pool = google_types::descriptor_pool();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../proto/third_party/googleapis/google/type");
    let mut shipped = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("google/type is there") {
        let file_name = entry.expect("a directory entry").file_name();
        let file_name = file_name.to_str().expect("UTF-8");
        if !file_name.ends_with(".proto") {
            continue;
        }
        let file = pool
            .get_file_by_name(&format!("google/type/{file_name}"))
            .unwrap_or_else(|| {
                panic!("google_types.proto does not import google/type/{file_name}")
            });
        shipped.extend(file.messages().map(|m| m.full_name().to_owned()));
        shipped.extend(file.enums().map(|e| e.full_name().to_owned()));
    }
    assert!(shipped.len() >= 18, "{shipped:?}");

    let mut used = BTreeSet::new();
    let mut key_kinds = BTreeSet::new();
    for message in pool.all_messages() {
        if message.package_name() != "corpus.v1" || !message.name().ends_with("Request") {
            continue;
        }
        for field in message.fields() {
            let kind = if field.is_map() {
                let Kind::Message(entry) = field.kind() else {
                    unreachable!("a map field's kind is its entry message")
                };
                key_kinds.insert(format!("{:?}", entry.map_entry_key_field().kind()));
                entry.map_entry_value_field().kind()
            } else {
                field.kind()
            };
            match kind {
                Kind::Message(m) => used.insert(m.full_name().to_owned()),
                Kind::Enum(e) => used.insert(e.full_name().to_owned()),
                _ => false,
            };
        }
    }
    let missing: Vec<&String> = shipped.difference(&used).collect();
    assert!(
        missing.is_empty(),
        "google/type types in no request: {missing:?}"
    );
    // Every key type protobuf allows in a map.
    assert_eq!(
        key_kinds,
        [
            "bool", "fixed32", "fixed64", "int32", "int64", "sfixed32", "sfixed64", "sint32",
            "sint64", "string", "uint32", "uint64",
        ]
        .map(str::to_owned)
        .into_iter()
        .collect()
    );
}

/// Each map of every key type is an open object or an array of
/// `{key, value}` entries; an array where the dialect forbids open objects.
#[test]
fn maps_of_every_key_type_render_per_dialect() {
    const MAPS: [&str; 12] = [
        "by_int32",
        "by_int64",
        "by_uint32",
        "by_uint64",
        "by_sint32",
        "by_sint64",
        "by_fixed32",
        "by_fixed64",
        "by_sfixed32",
        "by_sfixed64",
        "by_bool",
        "by_string",
    ];
    for name in ["types_keyed", "types_keyed_strict"] {
        let strict = tool(name).strict;
        for (dialect, schema) in renderings(tool(name)) {
            let entries_only = dialect == Dialect::Gemini
                || (strict && matches!(dialect, Dialect::OpenAi | Dialect::Anthropic));
            for map in MAPS {
                let map_schema = &schema["properties"][map];
                let is_entries = map_schema["type"] == "array"
                    && required(&map_schema["items"]) == ["key", "value"];
                let is_object = map_schema["type"] == "object"
                    && map_schema["additionalProperties"].is_object();
                assert!(
                    is_entries || (is_object && !entries_only),
                    "{name} {dialect} {map}: {map_schema}"
                );
            }
        }
    }
    // Nested google/type messages as map values keep their fields, or,
    // where their long comments put the tool past the size budget (16 KiB
    // a definition), are cut to their JSON text, named.
    let keyed = canonical("types_keyed");
    let text = keyed.to_string();
    for (message, fields) in [
        ("google.type.LatLng", &["latitude", "longitude"][..]),
        (
            "google.type.Money",
            &["currency_code", "units", "nanos"][..],
        ),
    ] {
        assert!(
            !objects_with(&keyed, fields).is_empty()
                || text.contains(&format!("A JSON-encoded `{message}` object.")),
            "{message}: {keyed}"
        );
    }
}

#[test]
fn google_type_enums_leave_out_their_unspecified_zero_values() {
    for tool in google_types::all_tools() {
        for (dialect, schema) in renderings(tool) {
            for list in enum_lists(&schema) {
                assert!(!list.is_empty(), "{} {dialect}: an empty enum", tool.name);
                assert!(
                    list.iter().all(|v| !v.ends_with("_UNSPECIFIED")),
                    "{} {dialect}: {list:?}",
                    tool.name
                );
            }
        }
    }
    let schedule = canonical("types_schedule");
    assert!(
        enum_lists(&schedule)
            .iter()
            .any(|l| l.first().map(String::as_str) == Some("JANUARY") && l.len() == 12)
    );
}

/// etcd's `Compare.target_union` and `RequestOp.request` oneofs: every member
/// is offered, none is required, and the root stays a plain object.
#[test]
fn etcd_oneofs_offer_every_member_and_require_none() {
    let target_union = [
        "version",
        "create_revision",
        "mod_revision",
        "value",
        "lease",
    ];
    let request = [
        "request_range",
        "request_put",
        "request_delete_range",
        "request_txn",
    ];
    for (dialect, schema) in renderings(tool("etcd_txn")) {
        let text = schema.to_string();
        for member in target_union.iter().chain(&request) {
            assert!(
                text.contains(&format!("\"{member}\"")),
                "{dialect}: `{member}` not offered"
            );
        }
        // Compare: result, target and key are plain fields; the members of
        // its oneof are never required by the Compare object itself.
        let compares = objects_with(&schema, &["result", "target", "key"]);
        assert!(!compares.is_empty(), "{dialect}: no Compare object");
        for compare in compares {
            let required = required(compare);
            for member in target_union {
                assert!(
                    !required.contains(&member),
                    "{dialect}: oneof member `{member}` required"
                );
            }
        }
    }
    // Every op of a transaction can itself be a transaction: recursion by
    // reference where the dialect allows it, cut elsewhere.
    let txn = tool("etcd_txn");
    assert!(
        txn.parameters().contains("\"$ref\""),
        "{}",
        txn.parameters()
    );
    assert!(txn.renderings().openai.contains("\"$ref\""));
    assert!(!txn.renderings().gemini.contains("\"$ref\""));
    assert!(txn.renderings().gemini.contains("JSON-encoded"));
}

#[test]
fn etcd_enums_and_bytes() {
    let range = canonical("etcd_range");
    let lists = enum_lists(&range);
    for wanted in [["ASCEND", "DESCEND"], ["CREATE", "MOD"]] {
        assert!(
            lists
                .iter()
                .any(|l| wanted.iter().all(|w| l.iter().any(|v| v == w))),
            "{wanted:?} in {lists:?}"
        );
    }
    // `bytes key`: a base64 string.
    assert_eq!(range["properties"]["key"]["type"], "string");
    // Field names as etcd spells them (`TTL`, `ID`, `memberID`).
    assert!(canonical("etcd_lease_grant")["properties"]["TTL"].is_object());
    assert!(canonical("etcd_alarm")["properties"]["memberID"].is_object());
}

/// Streaming RPCs (`KV.RangeStream`, `Watch.Watch`, `Lease.LeaseKeepAlive`,
/// `Maintenance.Snapshot`) stay unannotated: no tool calls them.
#[test]
fn etcd_streaming_rpcs_are_not_tools() {
    let pool = etcd::descriptor_pool();
    let mut streaming = Vec::new();
    for service in pool.services() {
        for method in service.methods() {
            if method.is_client_streaming() || method.is_server_streaming() {
                streaming.push((service.full_name().to_owned(), method.name().to_owned()));
            }
        }
    }
    assert_eq!(streaming.len(), 4, "{streaming:?}");
    for tool in etcd::all_tools() {
        assert!(
            !streaming
                .iter()
                .any(|(s, m)| s == tool.method.service && m == tool.method.method),
            "{} calls a streaming RPC",
            tool.name
        );
    }
}

/// etcd's enums whose zero value is a real value, not "unspecified": each
/// told apart by its other values, with its zero value.
#[allow(clippy::type_complexity)]
const ETCD_ZERO_VALUES: [(&str, fn(&[String]) -> bool, &str); 7] = [
    ("RangeRequest.SortOrder", |l| has(l, "ASCEND"), "NONE"),
    (
        "RangeRequest.SortTarget",
        |l| has(l, "MOD") && !has(l, "LEASE"),
        "KEY",
    ),
    ("Compare.CompareResult", |l| has(l, "GREATER"), "EQUAL"),
    ("Compare.CompareTarget", |l| has(l, "LEASE"), "VERSION"),
    ("AlarmRequest.AlarmAction", |l| has(l, "ACTIVATE"), "GET"),
    ("AlarmType", |l| has(l, "NOSPACE"), "NONE"),
    ("authpb.Permission.Type", |l| has(l, "READWRITE"), "READ"),
];

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == value)
}

#[test]
fn etcd_enum_zero_values_stay_in_the_enums() {
    let mut seen = BTreeSet::new();
    for tool in etcd::all_tools() {
        for (dialect, schema) in renderings(tool) {
            for list in enum_lists(&schema) {
                for (enum_name, is_it, zero) in ETCD_ZERO_VALUES {
                    if is_it(&list) {
                        seen.insert(enum_name);
                        assert_eq!(
                            list.first().map(String::as_str),
                            Some(zero),
                            "{} {dialect}: {enum_name} must start with its zero value: {list:?}",
                            tool.name
                        );
                    }
                }
            }
        }
    }
    assert_eq!(seen.len(), ETCD_ZERO_VALUES.len(), "{seen:?}");
    let range = canonical("etcd_range");
    assert_eq!(
        range["properties"]["sort_order"]["enum"],
        serde_json::json!(["NONE", "ASCEND", "DESCEND"])
    );
    assert_eq!(
        range["properties"]["sort_target"]["enum"],
        serde_json::json!(["KEY", "VERSION", "CREATE", "MOD", "VALUE"])
    );
    let txn = canonical("etcd_txn");
    let compare = objects_with(&txn, &["result", "target", "key"])[0];
    assert_eq!(
        compare["properties"]["result"]["enum"],
        serde_json::json!(["EQUAL", "GREATER", "LESS", "NOT_EQUAL"])
    );
    assert_eq!(
        compare["properties"]["target"]["enum"],
        serde_json::json!(["VERSION", "CREATE", "MOD", "VALUE", "LEASE"])
    );
}

#[test]
fn an_overlay_annotates_a_proto_it_does_not_edit() {
    let names: Vec<&str> = longrunning_overlay::all_tools()
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["lro_list", "lro_get", "lro_cancel"]);
    let list = longrunning_overlay::all_tools()[0];
    assert_eq!(list.title, Some("List operations"));
    let params: Value = serde_json::from_str(list.parameters()).expect("JSON");
    // `skip = true` left the field out; the others stay.
    assert!(params["properties"].get("return_partial_success").is_none());
    assert!(params["properties"].get("filter").is_some());
    // `alias_prefix` from the overlay: in the request schema and in the
    // response's ids, and in the descriptors the executor reads at run time.
    let get: Value =
        serde_json::from_str(longrunning_overlay::all_tools()[1].parameters()).expect("JSON");
    let name = get["properties"]["name"]["description"]
        .as_str()
        .expect("described");
    assert!(
        name.contains("An operation id returned by lro_list."),
        "{name}"
    );
    assert!(
        longrunning_overlay::all_tools()[1]
            .response_aliases
            .iter()
            .any(|f| f.field == "name" && f.prefix == "operation")
    );
    assert!(
        longrunning_overlay::all_tools()[1]
            .request_aliases
            .iter()
            .any(|f| f.message == "google.longrunning.GetOperationRequest"
                && f.prefix == "operation")
    );
    every_rendering_passes(longrunning_overlay::all_tools());
}

#[test]
fn whole_service_mode_exposes_every_unary_method() {
    let tools = longrunning_whole::all_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "operations_list",
            "operations_get",
            "operations_delete",
            "operations_cancel",
            "operations_wait",
        ]
    );
    // Descriptions are the methods' comments; `WaitOperation` has one too.
    assert!(
        tools[0]
            .description
            .starts_with("Lists operations that match"),
        "{}",
        tools[0].description
    );
    every_rendering_passes(tools);
}

/// Every rendering of `tools` passes its provider's checker, one by one and
/// as one request.
fn every_rendering_passes(tools: &[&AgentTool]) {
    check_every_rendering(tools.iter().copied(), |_, _, _| {});
    for dialect in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini] {
        let violations = request_violations(dialect, tools.iter().copied());
        assert!(violations.is_empty(), "{dialect}: {violations:#?}");
    }
}

/// The overlay's annotations are in the descriptors the expansion embeds, so
/// the executor aliases and resolves by them at run time.
#[test]
fn overlay_aliases_work_at_run_time() {
    use prost_reflect::ReflectMessage as _;
    use proto_ai_tools::transport::InProcessTransport;
    let uuid = "7d444840-9dc0-11d1-b245-5ffdce74fad2";
    let pool = longrunning_overlay::descriptor_pool();
    let operation = pool
        .get_message_by_name("google.longrunning.Operation")
        .expect("Operation");
    let list_response = pool
        .get_message_by_name("google.longrunning.ListOperationsResponse")
        .expect("ListOperationsResponse");
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = received.clone();
    let transport = InProcessTransport::new()
        .with_handler(
            "/google.longrunning.Operations/ListOperations",
            move |_, _| {
                let mut op = prost_reflect::DynamicMessage::new(operation.clone());
                op.set_field_by_name("name", prost_reflect::Value::String(uuid.to_owned()));
                let mut response = prost_reflect::DynamicMessage::new(list_response.clone());
                response.set_field_by_name(
                    "operations",
                    prost_reflect::Value::List(vec![prost_reflect::Value::Message(op)]),
                );
                async move { Ok(response) }
            },
        )
        .with_handler(
            "/google.longrunning.Operations/GetOperation",
            move |req, _| {
                let name = req.get_field_by_name("name").expect("name");
                seen.lock()
                    .expect("lock")
                    .push(name.as_str().expect("a string").to_owned());
                let op = prost_reflect::DynamicMessage::new(
                    req.descriptor()
                        .parent_pool()
                        .get_message_by_name("google.longrunning.Operation")
                        .expect("Operation"),
                );
                async move { Ok(op) }
            },
        );
    let exec = longrunning_overlay::Executor::new(transport);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let listed = rt.block_on(exec.execute(
        "lro_list",
        r#"{"name": "", "filter": "", "page_size": 10, "page_token": ""}"#,
    ));
    assert!(!listed.is_error, "{}", listed.output);
    assert!(
        listed.output.contains("\"operation-1\""),
        "{}",
        listed.output
    );
    let got = rt.block_on(exec.execute("lro_get", r#"{"name": "operation-1"}"#));
    assert!(!got.is_error, "{}", got.output);
    assert_eq!(*received.lock().expect("lock"), [uuid]);
    let invented = rt.block_on(exec.execute("lro_get", r#"{"name": "operation-7"}"#));
    assert!(
        invented.is_error && invented.output.contains("operation-7"),
        "{}",
        invented.output
    );
}
