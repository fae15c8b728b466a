//! The JSON Schema of a tool's result: what the executor writes for a
//! response, so that a host or a program can take the result as data (MCP's
//! `outputSchema`, with the result as `structuredContent`).
//!
//! The executor writes a response as protojson with prost-reflect's default
//! options but for the field names ([`JsonNames`]: the proto names a tool's
//! arguments use, by default), its ids given aliases; a server stream is
//! collected into `{"messages": [...]}`. Every rule here is a rule of that
//! writer, so a result always validates against its schema:
//!
//! | Protobuf | Written as | Schema |
//! |---|---|---|
//! | a field without presence at its default (`0`, `""`, `false`, an empty list or map) | left out | no field is `required` |
//! | a field name | its proto name (`display_name`), or with [`JsonNames::Camel`] its `json_name` (`displayName`) | the property is the name written |
//! | `int32`, `sint32`, `sfixed32` / `uint32`, `fixed32` | a number | `integer` within the type's range |
//! | `int64`, `sint64`, `sfixed64` / `uint64`, `fixed64` | a string of digits | `string` with [`SIGNED_DIGITS_PATTERN`] / [`UNSIGNED_DIGITS_PATTERN`] |
//! | `double`, `float` | a number, or `"NaN"`, `"Infinity"`, `"-Infinity"` | `number` or a string of those three |
//! | `bytes` | standard base64, padded | `string`, `contentEncoding: base64`, with its pattern |
//! | an enum | the value's name; a number the type does not name (an open enum) as that number | `anyOf` the names and an `int32` |
//! | `google.protobuf.NullValue` | `null` | `null` |
//! | a string with an alias prefix | an alias (`link-1`) where the server sent a UUID, else the text as sent | `string`, the alias in the description |
//! | a map | an object; integer and boolean keys as their text | `additionalProperties`, keys by `propertyNames` |
//! | a message | an object of its fields; no others (unknown fields are dropped) | `additionalProperties: false` (`true` where the message has extension ranges) |
//! | a message used more than once, or recursive | | a `$ref` into the root's `$defs` (the root itself is `#`); for a host that refuses `$ref` ([`result_schema_for`]), spelled out at each use, a recursive one [`RECURSION_UNROLL`] level deep and then `{"type": "object"}` |
//! | well-known types | protojson's own forms | [see below](#well-known-types) |
//!
//! A oneof's members are properties like any other; protojson writes at
//! most one of them, which the schema does not state.
//!
//! # Well-known types
//!
//! `Timestamp`: a `date-time` string. `Duration`: seconds with an `s`.
//! `FieldMask`: a string (its paths in lowerCamelCase, as protojson writes
//! them whatever the field names; an argument takes them so). `Struct`: an object; `Value`: any JSON value;
//! `ListValue`: an array. The wrappers: their value (`Int64Value` and
//! `UInt64Value` as strings of digits; `DoubleValue` and `FloatValue` as a
//! number, or `null` for a value that is not finite, as prost-reflect writes
//! it). `Empty`: `{}`. `Any`: an object with `@type`.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::output::{ResultShape, result_schema};
//!
//! // `google.protobuf.Api`: a name, a list of methods, an enum.
//! let api = prost_reflect::DescriptorPool::global()
//!     .get_message_by_name("google.protobuf.Api")
//!     .unwrap();
//! let schema = result_schema(&api, ResultShape::Unary, [("google.protobuf.Api", "name", "api")]).unwrap();
//! assert_eq!(schema["type"], "object");
//! assert_eq!(schema["properties"]["methods"]["type"], "array");
//! assert!(schema["properties"]["name"]["description"].as_str().unwrap().contains("`api-1`"));
//! assert_eq!(schema["properties"]["syntax"]["anyOf"][1]["type"], "integer");
//! assert!(schema.get("required").is_none());
//!
//! let stream = result_schema(&api, ResultShape::ServerStream, []).unwrap();
//! assert_eq!(stream["required"], serde_json::json!(["messages"]));
//!
//! // A `Timestamp` is written as a string: no object to describe.
//! let timestamp = prost_reflect::DescriptorPool::global()
//!     .get_message_by_name("google.protobuf.Timestamp")
//!     .unwrap();
//! assert!(result_schema(&timestamp, ResultShape::Unary, []).is_none());
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, SerializeOptions};
use serde_json::{Map, Value, json};

use crate::host::HostProfile;
use crate::render::{RECURSION_UNROLL, SIGNED_DIGITS_PATTERN, UNSIGNED_DIGITS_PATTERN};

/// The names a result's fields are written under: the one rule the
/// executor's writers (its transcoder and prost-reflect's serialiser, through
/// [`serialize_options`](Self::serialize_options)) and [`result_schema_with`]
/// follow, so that a result and its schema never differ.
///
/// A tool's arguments use proto names (`book_id`, with the lowerCamelCase
/// `json_name` accepted too), so by default a result does as well: a model
/// that reads `book_id` in one tool's result sends `book_id` to the next.
/// [`Camel`](Self::Camel) writes protojson's lowerCamelCase instead, for a
/// client that expects the canonical JSON mapping.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::output::JsonNames;
/// let api = prost_reflect::DescriptorPool::global()
///     .get_message_by_name("google.protobuf.Api")
///     .unwrap();
/// let field = api.get_field_by_name("source_context").unwrap();
/// assert_eq!(JsonNames::default(), JsonNames::Proto);
/// assert_eq!(JsonNames::Proto.name(&field), "source_context");
/// assert_eq!(JsonNames::Camel.name(&field), "sourceContext");
/// assert_eq!("camel".parse::<JsonNames>(), Ok(JsonNames::Camel));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum JsonNames {
    /// The field's name in the proto (`book_id`), as arguments use it. The
    /// default.
    #[default]
    Proto,
    /// protojson's lowerCamelCase `json_name` (`bookId`).
    Camel,
}

impl JsonNames {
    /// The name `field` is written under.
    pub fn name(self, field: &FieldDescriptor) -> &str {
        match self {
            JsonNames::Proto => field.name(),
            JsonNames::Camel => field.json_name(),
        }
    }

    /// prost-reflect's serialiser options that write these names (the rest
    /// its defaults: the protojson mapping).
    pub fn serialize_options(self) -> SerializeOptions {
        SerializeOptions::new().use_proto_field_name(self == JsonNames::Proto)
    }

    /// `proto` or `camel`, as the command line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonNames::Proto => "proto",
            JsonNames::Camel => "camel",
        }
    }
}

impl std::str::FromStr for JsonNames {
    type Err = String;

    /// `proto` or `camel`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "proto" => Ok(JsonNames::Proto),
            "camel" => Ok(JsonNames::Camel),
            other => Err(format!(
                "`{other}` is no choice of field names: use proto (`book_id`) or camel (`bookId`)"
            )),
        }
    }
}

/// What a call of the method gives back: one response, or the messages of a
/// server stream collected into one result.
///
/// # Examples
///
/// See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultShape {
    /// A unary method: the result is the response message.
    Unary,
    /// A server-streaming method: the result is
    /// `{"messages": [...], "stopped_early": "…"}`, `stopped_early` there only
    /// when collecting stopped before the stream ended.
    ServerStream,
}

/// The strings prost-reflect writes for a `double` or `float` that is not
/// finite (any other string is not a number it writes).
const NON_FINITE_PATTERN: &str = "^(NaN|Infinity|-Infinity)$";

/// Standard base64 with padding, as prost-reflect writes `bytes`.
const STANDARD_BASE64_PATTERN: &str =
    "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$";

/// A `Duration` as prost-types writes it: seconds (up to protobuf's 12
/// digits), maybe a fraction, then `s`.
const DURATION_OUT_PATTERN: &str = r"^-?[0-9]{1,12}(\.[0-9]{1,9})?s$";

/// The JSON Schema of what a call of a method returning `response` gives
/// back in `shape`, given which fields carry aliases: `aliases` yields
/// `(message, field, prefix)` with the message fully qualified and the
/// field's proto name, as [`FieldAlias`](crate::FieldAlias) holds them.
///
/// The root is always an object, as MCP requires: `None` for a unary
/// method whose response is a well-known type protojson writes as
/// something else (a `Timestamp` is a string). See the [module docs](self)
/// for the rules.
///
/// # Examples
///
/// See the [module docs](self).
pub fn result_schema<'a>(
    response: &MessageDescriptor,
    shape: ResultShape,
    aliases: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> Option<Value> {
    result_schema_for(response, shape, aliases, HostProfile::Exact)
}

/// [`result_schema`] for hosts of profile `host`: where the host refuses
/// `$ref` ([`HostProfile::takes_refs`]), a message used twice is spelled
/// out at each use and a recursive one is followed [`RECURSION_UNROLL`]
/// level and then described as `{"type": "object"}` (true of what is
/// written there, if less exact). The rest is the same for every host:
/// the result's 64-bit integers are strings of digits already.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::HostProfile;
/// use proto_ai_tools_schema::output::{ResultShape, result_schema_for};
///
/// // `google.protobuf.DescriptorProto` nests itself (`nested_type`).
/// let message = prost_reflect::DescriptorPool::global()
///     .get_message_by_name("google.protobuf.DescriptorProto")
///     .unwrap();
/// let schema = result_schema_for(&message, ResultShape::Unary, [], HostProfile::JavaScript).unwrap();
/// assert!(!schema.to_string().contains("$ref"));
/// let exact = result_schema_for(&message, ResultShape::Unary, [], HostProfile::Exact).unwrap();
/// assert!(exact.to_string().contains("$ref"));
/// ```
pub fn result_schema_for<'a>(
    response: &MessageDescriptor,
    shape: ResultShape,
    aliases: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    host: HostProfile,
) -> Option<Value> {
    result_schema_with(response, shape, aliases, host, JsonNames::default())
}

/// [`result_schema_for`] of a result written with field names `names`
/// ([`JsonNames`]; the others write the default, proto names).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::HostProfile;
/// use proto_ai_tools_schema::output::{JsonNames, ResultShape, result_schema_with};
///
/// let api = prost_reflect::DescriptorPool::global()
///     .get_message_by_name("google.protobuf.Api")
///     .unwrap();
/// let schema = |names| {
///     result_schema_with(&api, ResultShape::Unary, [], HostProfile::Exact, names).unwrap()
/// };
/// assert!(schema(JsonNames::Proto)["properties"].get("source_context").is_some());
/// assert!(schema(JsonNames::Camel)["properties"].get("sourceContext").is_some());
/// ```
pub fn result_schema_with<'a>(
    response: &MessageDescriptor,
    shape: ResultShape,
    aliases: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    host: HostProfile,
    names: JsonNames,
) -> Option<Value> {
    // Only a host that takes `$ref` shares types: the walk that finds them
    // is for it alone.
    let shared = if host.takes_refs() {
        let mut uses = Uses::default();
        uses.visit(response);
        uses.shared()
    } else {
        HashSet::new()
    };
    let mut writer = Writer {
        aliases: aliases
            .into_iter()
            .map(|(message, field, prefix)| ((message, field), prefix))
            .collect(),
        shared,
        refs: host.takes_refs(),
        names,
        path: Vec::new(),
        root: None,
        defs: BTreeMap::new(),
    };
    let mut root = match shape {
        ResultShape::Unary => match well_known(response) {
            Some(schema) if schema["type"] == "object" => schema,
            Some(_) => return None,
            None if writer.refs => {
                writer.root = Some(response.full_name().to_owned());
                writer.object(response)
            }
            None => writer.spelled_out(response),
        },
        ResultShape::ServerStream => json!({
            "type": "object",
            "properties": {
                "messages": {
                    "type": "array",
                    "description": "The stream's messages, in order.",
                    "items": writer.message(response),
                },
                "stopped_early": {
                    "type": "string",
                    "description": "Why collecting stopped before the stream ended, and how many messages came; absent when the whole stream was collected.",
                },
            },
            "required": ["messages"],
            "additionalProperties": false,
        }),
    };
    if !writer.defs.is_empty()
        && let Value::Object(root) = &mut root
    {
        root.insert(
            "$defs".to_owned(),
            Value::Object(writer.defs.into_iter().collect()),
        );
    }
    Some(root)
}

/// How often each message type is written, to share the ones written more
/// than once.
#[derive(Default)]
struct Uses {
    /// Message-typed fields (or map values) of each type, one per field of a
    /// type that is written.
    count: HashMap<String, usize>,
    /// Types that reach themselves.
    recursive: HashSet<String>,
    /// The walk's path of types.
    stack: Vec<String>,
    seen: HashSet<String>,
}

impl Uses {
    fn visit(&mut self, message: &MessageDescriptor) {
        let name = message.full_name().to_owned();
        if !self.seen.insert(name.clone()) {
            return;
        }
        self.stack.push(name);
        for field in message.fields() {
            let Some(used) = field_message(&field) else {
                continue;
            };
            if well_known(&used).is_some() {
                continue;
            }
            let used_name = used.full_name();
            *self.count.entry(used_name.to_owned()).or_default() += 1;
            if self.stack.iter().any(|on_path| on_path == used_name) {
                self.recursive.insert(used_name.to_owned());
            }
            self.visit(&used);
        }
        self.stack.pop();
    }

    fn shared(self) -> HashSet<String> {
        let mut shared = self.recursive;
        shared.extend(
            self.count
                .into_iter()
                .filter(|(_, uses)| *uses > 1)
                .map(|(name, _)| name),
        );
        shared
    }
}

/// The message a field writes as an object: its type, or a map's value type.
fn field_message(field: &FieldDescriptor) -> Option<MessageDescriptor> {
    let kind = if field.is_map() {
        match field.kind() {
            Kind::Message(entry) => entry.map_entry_value_field().kind(),
            _ => return None,
        }
    } else {
        field.kind()
    };
    match kind {
        Kind::Message(message) => Some(message),
        _ => None,
    }
}

struct Writer<'a> {
    aliases: HashMap<(&'a str, &'a str), &'a str>,
    /// Types written once into `$defs` and referred to.
    shared: HashSet<String>,
    /// Whether the host takes `$ref`; without, every message is spelled out
    /// and a recursive one cut.
    refs: bool,
    /// The names the fields are written under.
    names: JsonNames,
    /// The messages being spelled out, outermost first (hosts without `$ref`).
    path: Vec<String>,
    /// The unary result's type, referred to as `#`.
    root: Option<String>,
    defs: BTreeMap<String, Value>,
}

impl Writer<'_> {
    fn object(&mut self, message: &MessageDescriptor) -> Value {
        let mut properties = Map::new();
        for field in message.fields() {
            let schema = self.field(message, &field);
            properties.insert(self.names.name(&field).to_owned(), schema);
        }
        let mut object = Map::new();
        object.insert("type".to_owned(), json!("object"));
        if !properties.is_empty() {
            object.insert("properties".to_owned(), Value::Object(properties));
        }
        // Extensions the pool knows are written beside the fields, under
        // names of their own.
        let extensible = message.extension_ranges().next().is_some();
        object.insert("additionalProperties".to_owned(), json!(extensible));
        Value::Object(object)
    }

    fn field(&mut self, owner: &MessageDescriptor, field: &FieldDescriptor) -> Value {
        if field.is_map()
            && let Kind::Message(entry) = field.kind()
        {
            let value = self.kind(&entry.map_entry_value_field().kind(), None);
            let mut map = json!({"type": "object", "additionalProperties": value});
            if let Some(names) = map_key_names(&entry.map_entry_key_field().kind()) {
                map["propertyNames"] = names;
            }
            return map;
        }
        let alias = self
            .aliases
            .get(&(owner.full_name(), field.name()))
            .copied();
        let item = self.kind(&field.kind(), alias);
        if field.is_list() {
            json!({"type": "array", "items": item})
        } else {
            item
        }
    }

    fn kind(&mut self, kind: &Kind, alias: Option<&str>) -> Value {
        match kind {
            Kind::Double | Kind::Float => {
                json!({"type": ["number", "string"], "pattern": NON_FINITE_PATTERN})
            }
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX})
            }
            Kind::Uint32 | Kind::Fixed32 => {
                json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
            }
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                json!({"type": "string", "pattern": SIGNED_DIGITS_PATTERN})
            }
            Kind::Uint64 | Kind::Fixed64 => {
                json!({"type": "string", "pattern": UNSIGNED_DIGITS_PATTERN})
            }
            Kind::Bool => json!({"type": "boolean"}),
            Kind::String => match alias {
                Some(prefix) => json!({"type": "string", "description": alias_description(prefix)}),
                None => json!({"type": "string"}),
            },
            Kind::Bytes => bytes(),
            Kind::Enum(e) if e.full_name() == "google.protobuf.NullValue" => {
                json!({"type": "null"})
            }
            Kind::Enum(e) => {
                let names: Vec<String> = e.values().map(|v| v.name().to_owned()).collect();
                json!({"anyOf": [
                    {"type": "string", "enum": names},
                    {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                ]})
            }
            Kind::Message(message) => self.message(message),
        }
    }

    fn message(&mut self, message: &MessageDescriptor) -> Value {
        if let Some(schema) = well_known(message) {
            return schema;
        }
        let name = message.full_name();
        if !self.refs {
            return self.spelled_out(message);
        }
        if self.root.as_deref() == Some(name) {
            return json!({"$ref": "#"});
        }
        if !self.shared.contains(name) {
            return self.object(message);
        }
        if !self.defs.contains_key(name) {
            // Reserved first: the definition may refer to itself.
            self.defs.insert(name.to_owned(), Value::Null);
            let definition = self.object(message);
            self.defs.insert(name.to_owned(), definition);
        }
        json!({"$ref": format!("#/$defs/{name}")})
    }
}

impl Writer<'_> {
    /// `message` spelled out for a host without `$ref`: a message already
    /// spelled out [`RECURSION_UNROLL`] times on the way here is only said
    /// to be an object.
    fn spelled_out(&mut self, message: &MessageDescriptor) -> Value {
        let name = message.full_name();
        let around = self.path.iter().filter(|on_path| *on_path == name).count();
        if around > RECURSION_UNROLL {
            return json!({
                "type": "object",
                "description": format!("A `{name}`, as above (it nests itself)."),
            });
        }
        self.path.push(name.to_owned());
        let object = self.object(message);
        self.path.pop();
        object
    }
}

/// What a string with an alias prefix holds, for the reader of a result.
fn alias_description(prefix: &str) -> String {
    format!(
        "An alias like `{prefix}-1` standing for an id; pass it as it is to a tool that takes one."
    )
}

fn bytes() -> Value {
    json!({"type": "string", "contentEncoding": "base64", "pattern": STANDARD_BASE64_PATTERN})
}

/// The keys of a map whose keys are not strings, written as their text.
fn map_key_names(key: &Kind) -> Option<Value> {
    match key {
        Kind::Bool => Some(json!({"enum": ["true", "false"]})),
        Kind::Int32
        | Kind::Sint32
        | Kind::Sfixed32
        | Kind::Int64
        | Kind::Sint64
        | Kind::Sfixed64 => Some(json!({"pattern": SIGNED_DIGITS_PATTERN})),
        Kind::Uint32 | Kind::Fixed32 | Kind::Uint64 | Kind::Fixed64 => {
            Some(json!({"pattern": UNSIGNED_DIGITS_PATTERN}))
        }
        _ => None,
    }
}

/// A well-known type's protojson form, as prost-reflect writes it.
fn well_known(message: &MessageDescriptor) -> Option<Value> {
    let schema = match message.full_name() {
        "google.protobuf.Timestamp" => json!({"type": "string", "format": "date-time"}),
        "google.protobuf.Duration" => json!({"type": "string", "pattern": DURATION_OUT_PATTERN}),
        "google.protobuf.FieldMask" => json!({"type": "string"}),
        "google.protobuf.Struct" => json!({"type": "object"}),
        "google.protobuf.Value" => {
            json!({"type": ["null", "boolean", "number", "string", "array", "object"]})
        }
        "google.protobuf.ListValue" => json!({"type": "array"}),
        // Written by serde_json as they are, so a value that is not finite
        // becomes `null`.
        "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => {
            json!({"type": ["number", "null"]})
        }
        "google.protobuf.Int64Value" => json!({"type": "string", "pattern": SIGNED_DIGITS_PATTERN}),
        "google.protobuf.UInt64Value" => {
            json!({"type": "string", "pattern": UNSIGNED_DIGITS_PATTERN})
        }
        "google.protobuf.Int32Value" => {
            json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX})
        }
        "google.protobuf.UInt32Value" => {
            json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
        }
        "google.protobuf.BoolValue" => json!({"type": "boolean"}),
        "google.protobuf.StringValue" => json!({"type": "string"}),
        "google.protobuf.BytesValue" => bytes(),
        "google.protobuf.Empty" => json!({"type": "object", "additionalProperties": false}),
        "google.protobuf.Any" => json!({
            "type": "object",
            "properties": {"@type": {"type": "string"}},
            "required": ["@type"],
        }),
        _ => return None,
    };
    Some(schema)
}

#[cfg(test)]
mod tests;
