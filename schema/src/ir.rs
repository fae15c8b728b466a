//! The typed schema IR: what a tool's parameters are, before any provider's
//! dialect shapes them.
//!
//! The IR is plain data, constructible by hand: [`crate::proto`] builds it from
//! descriptors, and `#[derive(ToolInput)]` composes it at run time from Rust
//! types. [`crate::render`] turns it into JSON per [`crate::Dialect`].
//!
//! Recursion is expressed with [`Kind::Ref`]: a reference to a definition in
//! the [`Object::defs`] of an enclosing object (by convention the root). A
//! renderer either emits `$defs`/`$ref` or inlines the definition up to a
//! depth, where the field becomes a JSON-encoded string.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::ir::{Object, Schema};
//! use proto_ai_tools_schema::{render, Dialect};
//!
//! let schema = Schema::object(
//!     Object::new()
//!         .property("city", Schema::string().describe("City name."), true)
//!         .property("days", Schema::integer().minimum(0), false),
//! )
//! .describe("Where and how long.");
//!
//! assert_eq!(
//!     render::parameters(&schema, Dialect::OpenAi, true),
//!     serde_json::json!({
//!         "type": "object",
//!         "description": "Where and how long.",
//!         "properties": {
//!             "city": { "type": "string", "description": "City name." },
//!             "days": { "type": ["integer", "null"], "minimum": 0 }
//!         },
//!         "required": ["city", "days"],
//!         "additionalProperties": false
//!     })
//! );
//! ```

use std::collections::BTreeMap;

/// The JSON Schema `format` of an RFC 3339 timestamp.
pub const FORMAT_DATE_TIME: &str = "date-time";
/// The OpenAPI `format` of base64-encoded bytes.
pub const FORMAT_BYTE: &str = "byte";
/// Base64 as protojson parsers accept it: the standard or the URL-safe
/// alphabet, padded or not (a length of 4n+1 characters is never base64).
pub const BASE64_PATTERN: &str =
    r"^([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$";
/// The protojson form of `google.protobuf.Duration`: seconds with an `s`,
/// within protobuf's range (at most 11 digits of seconds, so never past its
/// 315,576,000,000; at most 9 of fraction).
pub const DURATION_PATTERN: &str = r"^-?[0-9]{1,11}(\.[0-9]{1,9})?s$";
/// The protojson form of `google.protobuf.FieldMask`: comma-separated field
/// paths in lowerCamelCase (`displayName,address.city`), maybe empty.
pub const FIELD_MASK_PATTERN: &str =
    r"^([a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*(,[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*)*)?$";

/// A schema node: a kind, a description, and whether `null` is a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// What values the node accepts.
    pub kind: Kind,
    /// Text for the model; `None` (or empty) emits no `description`.
    pub description: Option<String>,
    /// `null` is a meaningful value (protobuf wrappers such as
    /// `google.protobuf.StringValue`), in every dialect.
    pub nullable: bool,
}

/// What values a [`Schema`] node accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A string, maybe with a `format` and a `pattern`.
    String(StringSchema),
    /// An integer, maybe bounded.
    Integer(IntegerSchema),
    /// A number, maybe bounded.
    Number(NumberSchema),
    /// `true` or `false`.
    Boolean,
    /// One of these strings.
    Enum(Vec<String>),
    /// An array of the item schema.
    Array(Box<Schema>),
    /// A map: a JSON object with free keys in dialects that allow open
    /// objects, else an array of `{key, value}` entries.
    Map(MapSchema),
    /// An object with known properties (or an open object, see
    /// [`Object::open`]).
    Object(Object),
    /// A reference to a definition, by name, in the [`Object::defs`] of an
    /// enclosing object. Used for recursive types only.
    Ref(String),
    /// Exactly one of several named members: a JSON object with exactly one
    /// of the members as its property (a protobuf `oneof`, or a Rust enum
    /// whose variants carry data).
    OneOf(OneOf),
    /// Any JSON value (`google.protobuf.Value`).
    Any,
}

/// The members of a [`Kind::OneOf`].
#[derive(Debug, Clone, PartialEq)]
pub struct OneOf {
    /// The members, in order; each one's `required` is ignored (the chosen
    /// member is always present).
    pub members: Vec<Property>,
    /// The chosen member belongs in the enclosing object: a protobuf oneof,
    /// whose protojson form is flat (`{"email": "a@b.c"}`, not
    /// `{"target": {"email": "a@b.c"}}`). Inbound, the member is lifted out
    /// of the oneof's property, and the flat form is accepted as sent.
    pub inline: bool,
}

/// Constraints of a string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringSchema {
    /// The JSON Schema `format`, e.g. [`FORMAT_DATE_TIME`]; dialects that do
    /// not accept it drop it and say it in the description instead.
    pub format: Option<String>,
    /// A regular expression the whole string matches; dialects that do not
    /// accept it drop it and say it in the description instead.
    pub pattern: Option<String>,
    /// The string is an alias of this prefix (`link` for `link-1`): inbound,
    /// it is resolved to the UUID it stands for, and refused when the
    /// conversation never issued it. Not rendered.
    pub alias_prefix: Option<String>,
}

/// Bounds of an integer.
///
/// `i128` holds the bounds of every 64-bit type, signed and unsigned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntegerSchema {
    /// Inclusive lower bound (`0` for unsigned types).
    pub minimum: Option<i128>,
    /// Inclusive upper bound.
    pub maximum: Option<i128>,
}

/// Bounds of a number (a `float` holds at most about 3.4e38).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NumberSchema {
    /// Inclusive lower bound.
    pub minimum: Option<f64>,
    /// Inclusive upper bound.
    pub maximum: Option<f64>,
}

/// A map's key and value schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSchema {
    /// Schema of a key (string, integer or boolean); in the JSON-object form
    /// keys are always strings.
    pub key: Box<Schema>,
    /// Schema of a value.
    pub value: Box<Schema>,
}

/// An object: its properties in order, and the definitions its subtree refers
/// to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object {
    /// The type's name (a message's full name, e.g. `links.v1.Link`); used to
    /// describe the JSON-encoded string that replaces the object where a
    /// dialect has to cut recursion or depth.
    pub name: Option<String>,
    /// The properties, in the order the model sees them.
    pub properties: Vec<Property>,
    /// Extra properties are allowed (`google.protobuf.Struct`,
    /// `google.protobuf.Any`). Dialects that forbid open objects render an
    /// open object as a JSON-encoded string.
    pub open: bool,
    /// Definitions that [`Kind::Ref`] nodes in this subtree refer to, by name.
    /// Renderers hoist them to the root; the first definition of a name wins.
    pub defs: BTreeMap<String, Schema>,
}

/// One property of an [`Object`].
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// The JSON name (for protos, the field's proto name).
    pub name: String,
    /// Another name accepted inbound for the same property (for protos, the
    /// lowerCamelCase JSON name protojson also accepts); never rendered.
    pub json_name: Option<String>,
    /// The property's schema.
    pub schema: Schema,
    /// The model must send it. Dialects that require every property (OpenAI
    /// strict) list it anyway and make a non-required property nullable.
    pub required: bool,
}

impl Schema {
    /// A node of `kind`, with no description, not nullable.
    pub fn new(kind: Kind) -> Self {
        Schema {
            kind,
            description: None,
            nullable: false,
        }
    }

    /// A string.
    pub fn string() -> Self {
        Schema::new(Kind::String(StringSchema::default()))
    }

    /// A string with a `format` (e.g. [`FORMAT_DATE_TIME`]).
    pub fn string_format(format: impl Into<String>) -> Self {
        Schema::new(Kind::String(StringSchema {
            format: Some(format.into()),
            ..StringSchema::default()
        }))
    }

    /// A string matching `pattern`.
    pub fn string_pattern(pattern: impl Into<String>) -> Self {
        Schema::new(Kind::String(StringSchema {
            pattern: Some(pattern.into()),
            ..StringSchema::default()
        }))
    }

    /// Base64-encoded bytes: a string with format [`FORMAT_BYTE`] matching
    /// [`BASE64_PATTERN`].
    pub fn bytes() -> Self {
        Schema::new(Kind::String(StringSchema {
            format: Some(FORMAT_BYTE.to_owned()),
            pattern: Some(BASE64_PATTERN.to_owned()),
            alias_prefix: None,
        }))
    }

    /// An integer.
    pub fn integer() -> Self {
        Schema::new(Kind::Integer(IntegerSchema::default()))
    }

    /// A number.
    pub fn number() -> Self {
        Schema::new(Kind::Number(NumberSchema::default()))
    }

    /// A number within `minimum..=maximum`.
    pub fn number_within(minimum: f64, maximum: f64) -> Self {
        Schema::new(Kind::Number(NumberSchema {
            minimum: Some(minimum),
            maximum: Some(maximum),
        }))
    }

    /// A boolean.
    pub fn boolean() -> Self {
        Schema::new(Kind::Boolean)
    }

    /// A string enum of `values`.
    pub fn enumeration<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Schema::new(Kind::Enum(values.into_iter().map(Into::into).collect()))
    }

    /// An array of `items`.
    pub fn array(items: Schema) -> Self {
        Schema::new(Kind::Array(Box::new(items)))
    }

    /// A map from `key` to `value`.
    pub fn map(key: Schema, value: Schema) -> Self {
        Schema::new(Kind::Map(MapSchema {
            key: Box::new(key),
            value: Box::new(value),
        }))
    }

    /// An object.
    pub fn object(object: Object) -> Self {
        Schema::new(Kind::Object(object))
    }

    /// A reference to the definition `name` (see [`Object::define`]).
    pub fn reference(name: impl Into<String>) -> Self {
        Schema::new(Kind::Ref(name.into()))
    }

    /// Any JSON value.
    pub fn any() -> Self {
        Schema::new(Kind::Any)
    }

    /// Exactly one of `members` (see [`OneOf`]).
    pub fn one_of(members: Vec<Property>, inline: bool) -> Self {
        Schema::new(Kind::OneOf(OneOf { members, inline }))
    }

    /// Marks the strings of this node (a string, or the items of an array of
    /// strings) as aliases of `prefix`; no effect on other kinds.
    pub fn alias_prefix(mut self, prefix: impl Into<String>) -> Self {
        match &mut self.kind {
            Kind::String(string) => string.alias_prefix = Some(prefix.into()),
            Kind::Array(items) => {
                let items = std::mem::replace(items.as_mut(), Schema::any());
                self.kind = Kind::Array(Box::new(items.alias_prefix(prefix)));
            }
            _ => {}
        }
        self
    }

    /// Sets the description; an empty one is the same as none.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.description = (!description.trim().is_empty()).then_some(description);
        self
    }

    /// Makes `null` a value of this node.
    pub fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }

    /// Sets an inclusive lower bound; no effect unless this is an integer.
    pub fn minimum(mut self, minimum: impl Into<i128>) -> Self {
        if let Kind::Integer(int) = &mut self.kind {
            int.minimum = Some(minimum.into());
        }
        self
    }

    /// Sets an inclusive upper bound; no effect unless this is an integer.
    pub fn maximum(mut self, maximum: impl Into<i128>) -> Self {
        if let Kind::Integer(int) = &mut self.kind {
            int.maximum = Some(maximum.into());
        }
        self
    }

    /// An integer within `minimum..=maximum`.
    pub fn integer_within(minimum: impl Into<i128>, maximum: impl Into<i128>) -> Self {
        Schema::integer().minimum(minimum).maximum(maximum)
    }

    /// The object of this node, if it is one.
    pub fn as_object(&self) -> Option<&Object> {
        match &self.kind {
            Kind::Object(object) => Some(object),
            _ => None,
        }
    }
}

impl Object {
    /// An empty closed object with no name.
    pub fn new() -> Self {
        Object::default()
    }

    /// An empty closed object named `name` (e.g. a message's full name).
    pub fn named(name: impl Into<String>) -> Self {
        Object {
            name: Some(name.into()),
            ..Object::default()
        }
    }

    /// An open object: any properties (`google.protobuf.Struct`).
    pub fn open() -> Self {
        Object {
            open: true,
            ..Object::default()
        }
    }

    /// Appends a property.
    pub fn property(mut self, name: impl Into<String>, schema: Schema, required: bool) -> Self {
        self.properties.push(Property {
            name: name.into(),
            json_name: None,
            schema,
            required,
        });
        self
    }

    /// Adds the definition `name`, for [`Schema::reference`]s in this subtree.
    pub fn define(mut self, name: impl Into<String>, schema: Schema) -> Self {
        self.defs.entry(name.into()).or_insert(schema);
        self
    }
}

/// The deepest one tool's request may nest messages: a chain of message
/// fields, each inside the last, of at most this many messages (a recursive
/// message ends a chain: it is a reference).
///
/// Building, rendering and checking a schema recurse a few calls per level,
/// so without a bound a proto (or a server's reflection) that chains
/// messages a few thousand deep would overflow the stack instead of ending
/// with an error. At this depth every step fits in a 2 MiB stack (the
/// default of a spawned thread and of a tokio worker) even in a debug build,
/// and it is deeper than requests nest in practice: OpenAI's strict mode
/// takes 10 levels of objects, and protobuf's own decoders stop at 100.
pub const MAX_NESTING_DEPTH: usize = 32;
