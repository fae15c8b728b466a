//! Fields that hold secrets or personal data (`tool_field.sensitive`), and
//! their values hidden from what ai-tools writes to logs.

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, Value as ProtoValue};
use serde_json::Value;

use crate::annotation_protos::TOOL_FIELD_EXTENSION;

/// The number of `sensitive` in `tool_field`'s `ToolFieldOptions`.
pub(crate) const TOOL_FIELD_SENSITIVE: u32 = 6;

/// What a sensitive field's value is written as in a log.
pub const REDACTED: &str = "[redacted]";

/// Whether `field` is marked `tool_field.sensitive` (in the proto, or by an
/// overlay), read by extension number whichever package declares it.
///
/// # Examples
///
/// ```
/// // The well-known types carry no `tool_field` option.
/// let api = prost_reflect::DescriptorPool::global()
///     .get_message_by_name("google.protobuf.Api")
///     .unwrap();
/// let name = api.get_field_by_name("name").unwrap();
/// assert!(!proto_ai_tools_schema::proto::is_sensitive(&name));
/// ```
pub fn is_sensitive(field: &FieldDescriptor) -> bool {
    let Some(extension) = field
        .parent_pool()
        .get_message_by_name("google.protobuf.FieldOptions")
        .and_then(|options| options.get_extension(TOOL_FIELD_EXTENSION))
    else {
        return false;
    };
    let options = field.options();
    if !options.has_extension(&extension) {
        return false;
    }
    match options.get_extension(&extension).as_ref() {
        ProtoValue::Message(tool_field) => tool_field
            .get_field_by_number(TOOL_FIELD_SENSITIVE)
            .and_then(|value| value.as_bool())
            .unwrap_or(false),
        _ => false,
    }
}

/// `value`, the JSON of a `message` (protojson names or proto names, as a
/// model or the executor writes them), with the value of every sensitive
/// field, at any depth, replaced by [`REDACTED`]: in nested messages, lists
/// of them and maps of them. Keys that name no field are left as they are.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::proto::{REDACTED, redact};
/// use serde_json::json;
///
/// // `google.protobuf.Api` has no sensitive field: nothing changes.
/// let api = prost_reflect::DescriptorPool::global()
///     .get_message_by_name("google.protobuf.Api")
///     .unwrap();
/// let mut value = json!({"name": "shop", "methods": [{"name": "Buy"}]});
/// redact(&mut value, &api);
/// assert_eq!(value, json!({"name": "shop", "methods": [{"name": "Buy"}]}));
/// assert_eq!(REDACTED, "[redacted]");
/// ```
pub fn redact(value: &mut Value, message: &MessageDescriptor) {
    redact_within(value, message, 0);
}

/// How deep [`redact`] follows nested messages: as deep as a tool's request
/// may nest (`MAX_NESTING_DEPTH`), with room for maps' and lists' levels.
const MAX_DEPTH: usize = 4 * super::MAX_NESTING_DEPTH;

fn redact_within(value: &mut Value, message: &MessageDescriptor, depth: usize) {
    let Value::Object(object) = value else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    for (key, field_value) in object.iter_mut() {
        let Some(field) = message
            .get_field_by_json_name(key)
            .or_else(|| message.get_field_by_name(key))
        else {
            continue;
        };
        if is_sensitive(&field) {
            *field_value = Value::String(REDACTED.to_owned());
            continue;
        }
        let Some(nested) = message_of(&field) else {
            continue;
        };
        match field_value {
            Value::Array(items) => {
                for item in items {
                    // A map sent as `{key, value}` entries, or a list.
                    match item.get_mut("value") {
                        Some(entry_value) if field.is_map() => {
                            redact_within(entry_value, &nested, depth + 1);
                        }
                        _ => redact_within(item, &nested, depth + 1),
                    }
                }
            }
            Value::Object(map) if field.is_map() => {
                for entry_value in map.values_mut() {
                    redact_within(entry_value, &nested, depth + 1);
                }
            }
            other => redact_within(other, &nested, depth + 1),
        }
    }
}

/// The message a field's values are (a map's value type for a map).
fn message_of(field: &FieldDescriptor) -> Option<MessageDescriptor> {
    let kind = match field.kind() {
        Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().kind(),
        kind => kind,
    };
    match kind {
        Kind::Message(message) => Some(message),
        _ => None,
    }
}
