//! Request encoding that keeps `-0.0`.
//!
//! The proto3 language guide says a `float` or `double` set to `-0` "is
//! considered distinct and will be serialized"; the C++, Java and Go
//! runtimes compare the bit pattern. prost and prost-reflect compare with
//! `0.0` and leave the field out, so a model's `-0.0` would reach the
//! service as `+0.0` (tokio-rs/prost#1177). A request holding no `-0.0` in
//! such a field (nearly every one) is encoded by prost-reflect as is; one
//! that does is encoded here field by field along the paths that lead to a
//! `-0.0`, and by prost-reflect everywhere else.
//!
//! prost-reflect's protojson reader loses the sign on the way in too, for a
//! `FloatValue` or `DoubleValue` (it builds them through prost):
//! [`restore_negative_zero_wrappers`] puts it back.

// Without tonic nothing encodes requests; the reader's half is still used.
#![cfg_attr(not(feature = "tonic"), allow(dead_code))]

use prost::Message;
use prost::bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};
use serde_json::Value as JsonValue;

/// Encodes `message` into `buf` (one that grows, as tonic's does) as the
/// proto3 spec asks, `-0.0` included.
pub(crate) fn encode(
    message: &DynamicMessage,
    buf: &mut impl BufMut,
) -> Result<(), prost::EncodeError> {
    if !holds_negative_zero(message) {
        return message.encode(buf);
    }
    buf.put_slice(&encode_keeping_negative_zero(message));
    Ok(())
}

/// `message` encoded, `-0.0` included.
fn encode_to_vec(message: &DynamicMessage) -> Vec<u8> {
    if holds_negative_zero(message) {
        encode_keeping_negative_zero(message)
    } else {
        message.encode_to_vec()
    }
}

/// A field prost-reflect leaves out although it holds `-0.0`: a singular
/// `float` or `double` without presence (a proto3 field, or a map entry's).
fn is_dropped_negative_zero(field: &FieldDescriptor, value: &Value) -> bool {
    !field.supports_presence()
        && match value {
            Value::F32(v) => *v == 0.0 && v.is_sign_negative(),
            Value::F64(v) => *v == 0.0 && v.is_sign_negative(),
            _ => false,
        }
}

/// Whether `value` of `field`, or a message inside it, holds a `-0.0` that
/// prost-reflect would leave out.
fn field_holds_negative_zero(field: &FieldDescriptor, value: &Value) -> bool {
    match value {
        Value::Message(message) => holds_negative_zero(message),
        Value::List(items) => items.iter().any(|item| match item {
            Value::Message(message) => holds_negative_zero(message),
            _ => false,
        }),
        Value::Map(entries) => {
            let Some(value_field) = map_value_field(field) else {
                return false;
            };
            entries
                .values()
                .any(|value| field_holds_negative_zero(&value_field, value))
        }
        other => is_dropped_negative_zero(field, other),
    }
}

fn holds_negative_zero(message: &DynamicMessage) -> bool {
    message.descriptor().fields().any(|field| {
        let float = matches!(field.kind(), Kind::Float | Kind::Double);
        let message_like = matches!(field.kind(), Kind::Message(_));
        (float && !field.is_list() || message_like && message.has_field(&field))
            && field_holds_negative_zero(&field, &message.get_field(&field))
    })
}

/// The `value` field of a map field's entry message.
fn map_value_field(field: &FieldDescriptor) -> Option<FieldDescriptor> {
    match field.kind() {
        Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().into(),
        _ => None,
    }
}

/// prost-reflect's encoding of every field that holds no `-0.0`, then the
/// fields that do, encoded here. Field order on the wire does not matter,
/// and each such field is written whole (every element, in order).
fn encode_keeping_negative_zero(message: &DynamicMessage) -> Vec<u8> {
    let mut plain = message.clone();
    let mut tail = Vec::new();
    for field in message.descriptor().fields() {
        let value = message.get_field(&field);
        if !field_holds_negative_zero(&field, &value) {
            continue;
        }
        plain.clear_field(&field);
        let number = field.number();
        match &*value {
            Value::F32(v) => {
                encode_key(number, WireType::ThirtyTwoBit, &mut tail);
                tail.put_f32_le(*v);
            }
            Value::F64(v) => {
                encode_key(number, WireType::SixtyFourBit, &mut tail);
                tail.put_f64_le(*v);
            }
            Value::Message(inner) => put_message(&field, inner, &mut tail),
            Value::List(items) => {
                for item in items {
                    if let Value::Message(inner) = item {
                        put_message(&field, inner, &mut tail);
                    }
                }
            }
            Value::Map(entries) => {
                let Kind::Message(entry_type) = field.kind() else {
                    continue;
                };
                for (key, value) in entries {
                    let mut entry = DynamicMessage::new(entry_type.clone());
                    entry.set_field(&entry_type.map_entry_key_field(), key.clone().into());
                    entry.set_field(&entry_type.map_entry_value_field(), value.clone());
                    put_message(&field, &entry, &mut tail);
                }
            }
            _ => {}
        }
    }
    let mut out = plain.encode_to_vec();
    out.extend_from_slice(&tail);
    out
}

/// One message-typed field: length-delimited, or a proto2 group.
fn put_message(field: &FieldDescriptor, message: &DynamicMessage, buf: &mut Vec<u8>) {
    let bytes = encode_to_vec(message);
    if field.is_group() {
        encode_key(field.number(), WireType::StartGroup, buf);
        buf.extend_from_slice(&bytes);
        encode_key(field.number(), WireType::EndGroup, buf);
    } else {
        encode_key(field.number(), WireType::LengthDelimited, buf);
        encode_varint(bytes.len() as u64, buf);
        buf.extend_from_slice(&bytes);
    }
}

/// Sets every singular `FloatValue`/`DoubleValue` field of `message` (and
/// of its messages, through lists too) whose protojson in `args` is a
/// negative zero (or a negative `float` too small to be other than `-0.0`)
/// to `-0.0`, which prost-reflect's reader turned into `+0.0`.
pub(crate) fn restore_negative_zero_wrappers(message: &mut DynamicMessage, args: &JsonValue) {
    if holds_negative_zero_number(args) {
        restore_wrappers(message, args);
    }
}

fn is_negative_zero_as(number: f64, float: bool) -> bool {
    let rounded = if float {
        f64::from(number as f32)
    } else {
        number
    };
    rounded == 0.0 && number.is_sign_negative()
}

fn holds_negative_zero_number(json: &JsonValue) -> bool {
    match json {
        JsonValue::Number(n) => n.as_f64().is_some_and(|x| is_negative_zero_as(x, true)),
        JsonValue::Array(items) => items.iter().any(holds_negative_zero_number),
        JsonValue::Object(fields) => fields.values().any(holds_negative_zero_number),
        _ => false,
    }
}

fn restore_wrappers(message: &mut DynamicMessage, args: &JsonValue) {
    let JsonValue::Object(fields) = args else {
        return;
    };
    for field in message.descriptor().fields() {
        let Kind::Message(type_) = field.kind() else {
            continue;
        };
        let Some(json) = fields
            .get(field.name())
            .or_else(|| fields.get(field.json_name()))
        else {
            continue;
        };
        if field.is_map() {
            let value_field = type_.map_entry_value_field();
            let key_kind = type_.map_entry_key_field().kind();
            let (JsonValue::Object(entries), Value::Map(map)) =
                (json, message.get_field_mut(&field))
            else {
                continue;
            };
            for (key, json) in entries {
                if let Some(value) = map_key(&key_kind, key).and_then(|key| map.get_mut(&key)) {
                    restore_value(&value_field.kind(), value, json);
                }
            }
        } else if field.is_list() {
            let (JsonValue::Array(items), Value::List(list)) =
                (json, message.get_field_mut(&field))
            else {
                continue;
            };
            for (item, json) in list.iter_mut().zip(items) {
                restore_value(&field.kind(), item, json);
            }
        } else if message.has_field(&field) {
            restore_value(&field.kind(), message.get_field_mut(&field), json);
        }
    }
}

/// Restores one message-typed value read from `json`.
fn restore_value(kind: &Kind, value: &mut Value, json: &JsonValue) {
    let (Kind::Message(type_), Value::Message(inner)) = (kind, value) else {
        return;
    };
    let float = match type_.full_name() {
        "google.protobuf.FloatValue" => true,
        "google.protobuf.DoubleValue" => false,
        _ => return restore_in(inner, json),
    };
    if let JsonValue::Number(n) = json
        && n.as_f64().is_some_and(|x| is_negative_zero_as(x, float))
    {
        let zero = if float {
            Value::F32(-0.0)
        } else {
            Value::F64(-0.0)
        };
        inner.set_field_by_number(1, zero);
    }
}

/// A map key as protojson writes it (always a string).
fn map_key(kind: &Kind, key: &str) -> Option<MapKey> {
    Some(match kind {
        Kind::String => MapKey::String(key.to_owned()),
        Kind::Bool => MapKey::Bool(key.parse().ok()?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => MapKey::I32(key.parse().ok()?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => MapKey::I64(key.parse().ok()?),
        Kind::Uint32 | Kind::Fixed32 => MapKey::U32(key.parse().ok()?),
        Kind::Uint64 | Kind::Fixed64 => MapKey::U64(key.parse().ok()?),
        _ => return None,
    })
}

/// Restores inside one message; an `Any` is packed by prost-reflect's
/// reader (and encoder), so its payload is read and packed again here.
fn restore_in(message: &mut DynamicMessage, json: &JsonValue) {
    if message.descriptor().full_name() != "google.protobuf.Any" {
        restore_wrappers(message, json);
        return;
    }
    let Some(JsonValue::String(url)) = json.get("@type") else {
        return;
    };
    let name = url.rsplit('/').next().unwrap_or(url);
    let Some(payload_type) = message.descriptor().parent_pool().get_message_by_name(name) else {
        return;
    };
    // protojson puts a well-known type's own JSON form under `value`.
    let payload_json = if has_own_json_form(name) {
        json.get("value").cloned().unwrap_or(JsonValue::Null)
    } else {
        let mut fields = json.as_object().cloned().unwrap_or_default();
        fields.remove("@type");
        JsonValue::Object(fields)
    };
    let Ok(mut payload) = DynamicMessage::deserialize(payload_type, &payload_json) else {
        return;
    };
    restore_in(&mut payload, &payload_json);
    message.set_field_by_number(2, Value::Bytes(encode_to_vec(&payload).into()));
}

/// The `google.protobuf` types whose protojson is not an object of fields.
fn has_own_json_form(name: &str) -> bool {
    matches!(
        name.strip_prefix("google.protobuf."),
        Some(
            "Any"
                | "Duration"
                | "Timestamp"
                | "FieldMask"
                | "Struct"
                | "Value"
                | "ListValue"
                | "Empty"
                | "DoubleValue"
                | "FloatValue"
                | "Int64Value"
                | "UInt64Value"
                | "Int32Value"
                | "UInt32Value"
                | "BoolValue"
                | "StringValue"
                | "BytesValue"
        )
    )
}

/// The words for a response that is not a message of the method's output
/// type, wherever it is decoded.
pub(crate) fn undecodable_response(
    desc: &prost_reflect::MessageDescriptor,
    e: &impl std::fmt::Display,
) -> String {
    format!(
        "the service's response does not decode as {} {} ({e}): the service and this tool disagree on the message type",
        proto_ai_tools_schema::names::article(desc.full_name()),
        desc.full_name()
    )
}

#[cfg(test)]
mod tests {
    use prost_reflect::DescriptorPool;
    use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
    use prost_reflect::prost_types::{
        DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
        MessageOptions,
    };

    use super::*;

    fn field(
        name: &str,
        number: i32,
        kind: Type,
        label: Label,
        type_name: &str,
    ) -> FieldDescriptorProto {
        FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            r#type: Some(kind as i32),
            label: Some(label as i32),
            type_name: (!type_name.is_empty()).then(|| type_name.into()),
            json_name: Some(name.into()),
            ..Default::default()
        }
    }

    /// `message Point { double x = 1; float y = 2; repeated Point near = 3;
    /// map<string, double> weights = 4; Point next = 5; }`
    fn point() -> prost_reflect::MessageDescriptor {
        use Label::{Optional, Repeated};
        let entry = DescriptorProto {
            name: Some("WeightsEntry".into()),
            field: vec![
                field("key", 1, Type::String, Optional, ""),
                field("value", 2, Type::Double, Optional, ""),
            ],
            options: Some(MessageOptions {
                map_entry: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let point = DescriptorProto {
            name: Some("Point".into()),
            field: vec![
                field("x", 1, Type::Double, Optional, ""),
                field("y", 2, Type::Float, Optional, ""),
                field("near", 3, Type::Message, Repeated, ".t.Point"),
                field(
                    "weights",
                    4,
                    Type::Message,
                    Repeated,
                    ".t.Point.WeightsEntry",
                ),
                field("next", 5, Type::Message, Optional, ".t.Point"),
            ],
            nested_type: vec![entry],
            ..Default::default()
        };
        let file = FileDescriptorProto {
            name: Some("t.proto".into()),
            package: Some("t".into()),
            message_type: vec![point],
            syntax: Some("proto3".into()),
            ..Default::default()
        };
        DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: vec![file] })
            .expect("a valid pool")
            .get_message_by_name("t.Point")
            .expect("t.Point")
    }

    fn negative_zero(value: &Value) -> bool {
        match value {
            Value::F64(v) => *v == 0.0 && v.is_sign_negative(),
            Value::F32(v) => *v == 0.0 && v.is_sign_negative(),
            _ => false,
        }
    }

    fn round_trip(message: &DynamicMessage) -> DynamicMessage {
        let mut buf = Vec::new();
        encode(message, &mut buf).expect("encodes");
        DynamicMessage::decode(message.descriptor(), buf.as_slice()).expect("decodes")
    }

    #[test]
    fn negative_zero_survives_at_every_depth() {
        let desc = point();
        let json = serde_json::json!({
            "x": -0.0,
            "y": -0.0,
            "near": [{ "x": 1.5 }, { "x": -0.0 }],
            "weights": { "a": -0.0, "b": 2.0 },
            "next": { "next": { "y": -0.0, "x": 3.0 } }
        });
        let message = DynamicMessage::deserialize(desc.clone(), json).expect("protojson");
        // prost-reflect alone loses every one of them.
        let lossy = DynamicMessage::decode(desc.clone(), message.encode_to_vec().as_slice())
            .expect("decodes");
        assert!(!negative_zero(&lossy.get_field_by_name("x").expect("x")));

        let back = round_trip(&message);
        assert!(negative_zero(&back.get_field_by_name("x").expect("x")));
        assert!(negative_zero(&back.get_field_by_name("y").expect("y")));
        let near = back.get_field_by_name("near").expect("near");
        let near = near.as_list().expect("a list");
        assert_eq!(near.len(), 2, "order and count kept");
        assert_eq!(
            near[0]
                .as_message()
                .expect("msg")
                .get_field_by_name("x")
                .expect("x")
                .as_f64(),
            Some(1.5)
        );
        assert!(negative_zero(
            &near[1]
                .as_message()
                .expect("msg")
                .get_field_by_name("x")
                .expect("x")
        ));
        let weights = back.get_field_by_name("weights").expect("weights");
        let weights = weights.as_map().expect("a map");
        assert_eq!(weights.len(), 2);
        assert!(weights.values().any(negative_zero));
        let next = back.get_field_by_name("next").expect("next");
        let inner = next
            .as_message()
            .expect("msg")
            .get_field_by_name("next")
            .expect("next");
        let inner = inner.as_message().expect("msg");
        assert!(negative_zero(&inner.get_field_by_name("y").expect("y")));
        assert_eq!(inner.get_field_by_name("x").expect("x").as_f64(), Some(3.0));
        // Everything else arrives as prost-reflect would send it.
        let mut expected = message.clone();
        let mut got = back.clone();
        for m in [&mut expected, &mut got] {
            m.clear_field_by_name("x");
            m.clear_field_by_name("y");
        }
        assert_eq!(
            serde_json::to_value(&got).expect("json")["near"][0],
            serde_json::to_value(&expected).expect("json")["near"][0]
        );
    }

    #[test]
    fn negative_zero_wrappers_are_restored_after_protojson() {
        let pool = DescriptorPool::global();
        let float = pool
            .get_message_by_name("google.protobuf.FloatValue")
            .expect("wkt");
        let json = serde_json::json!(-0.0);
        let mut message = DynamicMessage::deserialize(float.clone(), &json).expect("protojson");
        // Reading the wrapper went through prost, which dropped the sign.
        assert!(!negative_zero(
            &message.get_field_by_number(1).expect("value")
        ));
        // Restored as a field of a message holding it: a `Struct`'s
        // `Value` is no wrapper, so use a hand-built holder.
        let holder = holder();
        let pool = holder.parent_pool().clone();
        let args = serde_json::json!({
            "f": -1e-50, "d": -0.0, "many": [{ "d": -0.0 }], "by_id": { "7": -0.0 }
        });
        let mut held = DynamicMessage::deserialize(holder, &args).expect("protojson");
        restore_negative_zero_wrappers(&mut held, &args);
        let back = round_trip(&held);
        let inner = |m: &DynamicMessage, name: &str| {
            let v = m.get_field_by_name(name).expect("field");
            let value = v.as_message().expect("wrapper").get_field_by_number(1);
            value.expect("value").into_owned()
        };
        assert!(negative_zero(&inner(&back, "f")));
        assert!(negative_zero(&inner(&back, "d")));
        let many = back.get_field_by_name("many").expect("many");
        let first = many.as_list().expect("list")[0]
            .as_message()
            .expect("msg")
            .clone();
        assert!(negative_zero(&inner(&first, "d")));
        let by_id = back.get_field_by_name("by_id").expect("by_id");
        let seven = &by_id.as_map().expect("map")[&MapKey::U32(7)];
        let seven = seven.as_message().expect("wrapper").get_field_by_number(1);
        assert!(negative_zero(&seven.expect("value")));
        // Inside an `Any`, at any depth.
        let any = pool
            .get_message_by_name("google.protobuf.Any")
            .expect("wkt");
        let args =
            serde_json::json!({ "@type": "type.googleapis.com/h.Holder", "many": [{ "d": -0.0 }] });
        let mut packed = DynamicMessage::deserialize(any, &args).expect("protojson");
        restore_in(&mut packed, &args);
        let payload = packed.get_field_by_number(2).expect("value");
        let payload = payload.as_bytes().expect("bytes");
        let held = pool.get_message_by_name("h.Holder").expect("h.Holder");
        let unpacked = DynamicMessage::decode(held, payload.clone()).expect("decodes");
        let many = unpacked.get_field_by_name("many").expect("many");
        let first = many.as_list().expect("list")[0]
            .as_message()
            .expect("msg")
            .clone();
        assert!(negative_zero(&inner(&first, "d")));

        message.set_field_by_number(1, Value::F32(1.0));
        restore_negative_zero_wrappers(&mut message, &serde_json::json!(1.0));
        assert_eq!(
            message.get_field_by_number(1).expect("value").as_f32(),
            Some(1.0)
        );
    }

    /// `message Holder { FloatValue f = 1; DoubleValue d = 2; repeated Holder
    /// many = 3; map<uint32, FloatValue> by_id = 4; }`
    fn holder() -> prost_reflect::MessageDescriptor {
        use Label::{Optional, Repeated};
        let holder = DescriptorProto {
            name: Some("Holder".into()),
            field: vec![
                field(
                    "f",
                    1,
                    Type::Message,
                    Optional,
                    ".google.protobuf.FloatValue",
                ),
                field(
                    "d",
                    2,
                    Type::Message,
                    Optional,
                    ".google.protobuf.DoubleValue",
                ),
                field("many", 3, Type::Message, Repeated, ".h.Holder"),
                field("by_id", 4, Type::Message, Repeated, ".h.Holder.ByIdEntry"),
            ],
            nested_type: vec![DescriptorProto {
                name: Some("ByIdEntry".into()),
                field: vec![
                    field("key", 1, Type::Uint32, Optional, ""),
                    field(
                        "value",
                        2,
                        Type::Message,
                        Optional,
                        ".google.protobuf.FloatValue",
                    ),
                ],
                options: Some(MessageOptions {
                    map_entry: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let file = FileDescriptorProto {
            name: Some("h.proto".into()),
            package: Some("h".into()),
            dependency: vec!["google/protobuf/wrappers.proto".into()],
            message_type: vec![holder],
            syntax: Some("proto3".into()),
            ..Default::default()
        };
        let mut pool = DescriptorPool::global();
        pool.add_file_descriptor_proto(file).expect("a valid file");
        pool.get_message_by_name("h.Holder").expect("h.Holder")
    }

    #[test]
    fn a_request_without_negative_zero_is_prost_reflects_encoding() {
        let desc = point();
        let json = serde_json::json!({ "x": 0.0, "y": 1.0, "near": [{ "x": 2.0 }], "weights": { "a": 0.0 } });
        let message = DynamicMessage::deserialize(desc, json).expect("protojson");
        let mut buf = Vec::new();
        encode(&message, &mut buf).expect("encodes");
        assert_eq!(buf, message.encode_to_vec());
    }
}
