use serde_json::json;

use super::{JsonNames, ResultShape, result_schema, result_schema_with};
use crate::HostProfile;
use crate::test_support::compile;

const PROTO: &str = r#"
syntax = "proto3";
package t.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/empty.proto";
message Tag { string label = 1; }
message Node { string node_id = 1; repeated Node children = 2; Tag tag = 3; }
message Resp {
  string owner_id = 1;
  Tag first = 2;
  repeated Tag more = 3;
  map<int64, Tag> by_number = 4;
  map<bool, string> flags = 5;
  Node tree = 6;
  Resp next = 7;
  google.protobuf.Timestamp at = 8;
  double ratio = 9;
  uint64 big = 10;
  bytes blob = 11;
  Color color = 12;
}
message Single { Tag only = 1; }
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }
service S {
  rpc A(Single) returns (Resp);
  rpc B(Single) returns (google.protobuf.Empty);
  rpc C(Single) returns (google.protobuf.Timestamp);
}
"#;

fn message(name: &str) -> prost_reflect::MessageDescriptor {
    compile(PROTO).get_message_by_name(name).unwrap()
}

#[test]
fn names_are_proto_names_by_default_and_nothing_is_required() {
    let schema = result_schema(&message("t.v1.Resp"), ResultShape::Unary, []).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    assert!(properties.contains_key("owner_id") && !properties.contains_key("ownerId"));
    assert!(properties.contains_key("by_number"));
    assert_eq!(
        schema["$defs"]["t.v1.Node"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["node_id", "children", "tag"]
    );
    assert!(schema.get("required").is_none());
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn camel_names_are_json_names_everywhere() {
    for host in [HostProfile::Exact, HostProfile::JavaScript] {
        let schema = result_schema_with(
            &message("t.v1.Resp"),
            ResultShape::ServerStream,
            [],
            host,
            JsonNames::Camel,
        )
        .unwrap();
        let text = schema.to_string();
        assert!(
            text.contains("\"ownerId\"")
                && text.contains("\"nodeId\"")
                && text.contains("\"byNumber\""),
            "{host:?}: {schema:#}"
        );
        assert!(
            !text.contains("owner_id") && !text.contains("node_id"),
            "{schema:#}"
        );
        // The stream's own keys are the collector's, not a message's.
        assert!(schema["properties"].get("stopped_early").is_some());
    }
}

#[test]
fn a_type_used_twice_or_recursive_is_defined_once_and_the_root_is_hash() {
    let schema = result_schema(&message("t.v1.Resp"), ResultShape::Unary, []).unwrap();
    let p = &schema["properties"];
    // Tag: first, more, by_number's values and Node.tag.
    assert_eq!(p["first"]["$ref"], "#/$defs/t.v1.Tag");
    assert_eq!(p["more"]["items"]["$ref"], "#/$defs/t.v1.Tag");
    assert_eq!(
        p["by_number"]["additionalProperties"]["$ref"],
        "#/$defs/t.v1.Tag"
    );
    // Node reaches itself; the root is referred to as `#`.
    assert_eq!(p["tree"]["$ref"], "#/$defs/t.v1.Node");
    assert_eq!(
        schema["$defs"]["t.v1.Node"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/t.v1.Node"
    );
    assert_eq!(p["next"]["$ref"], "#");
    let defs: Vec<&String> = schema["$defs"].as_object().unwrap().keys().collect();
    assert_eq!(defs, ["t.v1.Node", "t.v1.Tag"]);
}

#[test]
fn a_type_used_once_is_written_in_place() {
    let schema = result_schema(&message("t.v1.Single"), ResultShape::Unary, []).unwrap();
    assert_eq!(
        schema["properties"]["only"]["properties"]["label"]["type"],
        "string"
    );
    assert!(schema.get("$defs").is_none());
}

#[test]
fn scalars_are_written_as_protojson_writes_them() {
    let schema = result_schema(&message("t.v1.Resp"), ResultShape::Unary, []).unwrap();
    let p = &schema["properties"];
    assert_eq!(
        p["big"],
        json!({"type": "string", "pattern": "^(0|[1-9][0-9]*)$"})
    );
    assert_eq!(p["ratio"]["type"], json!(["number", "string"]));
    assert_eq!(p["at"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(
        p["by_number"]["propertyNames"]["pattern"],
        "^(0|-?[1-9][0-9]*)$"
    );
    assert_eq!(
        p["flags"]["propertyNames"]["enum"],
        json!(["true", "false"])
    );
    assert_eq!(p["blob"]["contentEncoding"], "base64");
    assert_eq!(
        p["color"]["anyOf"][0]["enum"],
        json!(["COLOR_UNSPECIFIED", "RED"])
    );
    assert_eq!(p["color"]["anyOf"][1]["type"], "integer");
}

#[test]
fn aliased_strings_say_so_in_every_message_that_has_them() {
    let aliases = [
        ("t.v1.Resp", "owner_id", "user"),
        ("t.v1.Node", "node_id", "node"),
    ];
    let schema = result_schema(&message("t.v1.Resp"), ResultShape::Unary, aliases).unwrap();
    let owner = schema["properties"]["owner_id"]["description"]
        .as_str()
        .unwrap();
    assert!(owner.contains("`user-1`"), "{owner}");
    let node = &schema["$defs"]["t.v1.Node"]["properties"]["node_id"]["description"];
    assert!(node.as_str().unwrap().contains("`node-1`"));
    assert!(
        schema["$defs"]["t.v1.Tag"]["properties"]["label"]
            .get("description")
            .is_none()
    );
}

#[test]
fn a_stream_is_an_object_of_messages_and_a_recursive_response_is_defined() {
    let schema = result_schema(&message("t.v1.Resp"), ResultShape::ServerStream, []).unwrap();
    assert_eq!(schema["required"], json!(["messages"]));
    assert_eq!(
        schema["properties"]["messages"]["items"]["$ref"],
        "#/$defs/t.v1.Resp"
    );
    assert_eq!(
        schema["$defs"]["t.v1.Resp"]["properties"]["next"]["$ref"],
        "#/$defs/t.v1.Resp"
    );
}

#[test]
fn a_well_known_response_is_described_only_where_it_is_an_object() {
    let empty = result_schema(&message("google.protobuf.Empty"), ResultShape::Unary, []).unwrap();
    assert_eq!(
        empty,
        json!({"type": "object", "additionalProperties": false})
    );
    let timestamp = message("google.protobuf.Timestamp");
    assert!(result_schema(&timestamp, ResultShape::Unary, []).is_none());
    let stream = result_schema(&timestamp, ResultShape::ServerStream, []).unwrap();
    assert_eq!(
        stream["properties"]["messages"]["items"]["format"],
        "date-time"
    );
}

#[test]
fn for_a_host_without_refs_every_type_is_spelled_out_and_recursion_cut() {
    use crate::HostProfile;
    let resp = message("t.v1.Resp");
    let schema =
        super::result_schema_for(&resp, ResultShape::Unary, [], HostProfile::JavaScript).unwrap();
    let text = schema.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    let p = &schema["properties"];
    assert_eq!(p["first"]["properties"]["label"]["type"], "string");
    assert_eq!(p["more"]["items"]["properties"]["label"]["type"], "string");
    // Node nests itself: spelled out one level more, then only an object.
    let children = &p["tree"]["properties"]["children"]["items"];
    assert_eq!(children["properties"]["node_id"]["type"], "string");
    let cut = &children["properties"]["children"]["items"];
    assert_eq!(cut["type"], "object");
    assert!(cut.get("properties").is_none());
    // The response itself, as a field of itself.
    assert_eq!(p["next"]["properties"]["next"]["type"], "object");
    assert!(p["next"]["properties"]["next"].get("properties").is_none());
    // The exact host keeps `$ref`.
    let exact =
        super::result_schema_for(&resp, ResultShape::Unary, [], HostProfile::Exact).unwrap();
    assert_eq!(
        exact,
        super::result_schema(&resp, ResultShape::Unary, []).unwrap()
    );
}
