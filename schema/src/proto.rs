//! Descriptors to IR: annotation reading, tool discovery and diagnostics.
//!
//! Annotations are recognised by extension number, whichever package declares
//! them: [`RPC_TOOL_EXTENSION`] on `google.protobuf.MethodOptions` and
//! [`TOOL_FIELD_EXTENSION`] on `google.protobuf.FieldOptions` (see
//! [`crate::ANNOTATION_PROTOS`]), plus `(google.api.field_behavior)`
//! ([`FIELD_BEHAVIOR_EXTENSION`]). If no file in the pool declares an
//! extension, nothing carries it.
//!
//! Leading comments and diagnostic locations come from the files'
//! `source_code_info`, so compile with source info (`protox`:
//! `include_source_info(true)`); without it descriptions are empty and
//! diagnostics carry no line.
//!
//! # The request schema
//!
//! From the request message, recursively (see the crate's DESIGN "Schema
//! rules"):
//!
//! - scalars map to `string`, `integer` (unsigned: `minimum: 0`), `number`,
//!   `boolean`; `bytes` to a base64 string (format `byte`); enums to a string
//!   enum of the value names without the zero value;
//! - `repeated` to arrays, maps to [`ir::Kind::Map`], messages to objects
//!   whose description is the message's leading comment;
//! - a message that can reach itself is defined once in the root's
//!   [`ir::Object::defs`] and referred to by [`ir::Kind::Ref`]; every other
//!   message is inlined;
//! - oneof members become optional properties whose description says
//!   "Set at most one of `a`, `b`.";
//! - well-known types: `Timestamp` is a `date-time` string, `Duration` a
//!   string matching [`ir::DURATION_PATTERN`], `FieldMask` a string, `Struct`
//!   an open object, `Value` any value, `ListValue` an array of any, wrappers
//!   nullable scalars, `Empty` an object without properties, and `Any` an open
//!   object with a required `@type` string;
//! - fields with `(google.api.field_behavior) = OUTPUT_ONLY` or
//!   `(ai.tools.v1.tool_field).skip = true` are left out;
//! - a property is required unless it is `optional` (proto3 `optional`, or a
//!   proto2 singular non-`required` field) or a oneof member; a field with
//!   `field_behavior = REQUIRED` is always required;
//! - a field's description is `tool_field.description`, else its leading
//!   comment, else (for message fields) the message's comment, then
//!   `tool_field.usage_notes` after a blank line; enum fields list the
//!   commented values.

use std::collections::{BTreeMap, HashMap, HashSet};

use prost_reflect::{
    Cardinality, DescriptorPool, DynamicMessage, EnumDescriptor, ExtensionDescriptor,
    FieldDescriptor, FileDescriptor, Kind as PKind, MessageDescriptor, MethodDescriptor, Syntax,
    Value,
};

use crate::ir::{self, Object, Schema};
use crate::names::{validate_alias_prefix, validate_tool_name};
use crate::{
    Diagnostic, FIELD_BEHAVIOR_EXTENSION, FieldAlias, RPC_TOOL_EXTENSION, TOOL_FIELD_EXTENSION,
    ToolSpec,
};

/// `FieldDescriptorProto.options`
const FIELD_OPTIONS: i32 = 8;
/// `MethodDescriptorProto.options`
const METHOD_OPTIONS: i32 = 4;
/// `google.api.FieldBehavior.REQUIRED`
const BEHAVIOR_REQUIRED: i32 = 2;
/// `google.api.FieldBehavior.OUTPUT_ONLY`
const BEHAVIOR_OUTPUT_ONLY: i32 = 3;

/// Finds the tools of `file`: the annotated methods of the services declared
/// in it (not in its imports), in declaration order.
///
/// `file` is the pool's name of the file, e.g. `links/v1/links.proto`.
///
/// # Errors
///
/// Every problem found, each located at the method, field or option it is
/// about (see [`Diagnostic`]): an invalid or duplicate tool name, an empty
/// description, a streaming RPC annotated as a tool, an `alias_prefix` on a
/// field that is not a string (or a repeated string) or not matching
/// `^[a-z][a-z0-9_]*$`, and a file without any annotated method.
///
/// # Examples
///
/// See the [crate-level example](crate).
pub fn tools_in_file(pool: &DescriptorPool, file: &str) -> Result<Vec<ToolSpec>, Vec<Diagnostic>> {
    let Some(fd) = pool.get_file_by_name(file) else {
        return Err(vec![Diagnostic {
            file: file.to_owned(),
            line: None,
            column: None,
            message: format!(
                "`{file}` is not in the descriptor pool; compile it (with its imports) into the pool first"
            ),
        }]);
    };
    let ann = Annotations::new(pool);
    let mut diags = Vec::new();
    let mut tools = Vec::new();
    // tool name -> (method full name, "file:line:col")
    let mut seen: HashMap<String, (String, String)> = HashMap::new();

    for service in fd.services() {
        for method in service.methods() {
            let Some(def) = ann.rpc_tool(&method) else {
                continue;
            };
            let opt = option_location(&fd, method.path(), METHOD_OPTIONS, RPC_TOOL_EXTENSION);
            let name_at =
                option_location_field(&fd, method.path(), METHOD_OPTIONS, RPC_TOOL_EXTENSION, 1);
            let desc_at =
                option_location_field(&fd, method.path(), METHOD_OPTIONS, RPC_TOOL_EXTENSION, 2);
            let rpc = method.name();

            if let Err(err) = validate_tool_name(&def.name) {
                diags.push(diag(&fd, name_at, format!("rpc `{rpc}`: {err}")));
            } else if let Some((first, first_at)) = seen.get(&def.name) {
                diags.push(diag(
                    &fd,
                    name_at,
                    format!(
                        "tool name `{}` is already used by rpc `{first}` ({first_at}); give rpc `{}` a different `name`",
                        def.name,
                        method.full_name()
                    ),
                ));
            } else {
                let (line, column) = name_at;
                let at = match (line, column) {
                    (Some(l), Some(c)) => format!("{}:{l}:{c}", fd.name()),
                    _ => fd.name().to_owned(),
                };
                seen.insert(def.name.clone(), (method.full_name().to_owned(), at));
            }
            if def.description.trim().is_empty() {
                diags.push(diag(
                    &fd,
                    desc_at,
                    format!(
                        "rpc `{rpc}` has an empty tool `description`; say what the tool does, for the model, e.g. `description: \"Create a short link.\"`"
                    ),
                ));
            }
            let streaming = match (method.is_client_streaming(), method.is_server_streaming()) {
                (true, true) => Some("bidirectional-streaming"),
                (true, false) => Some("client-streaming"),
                (false, true) => Some("server-streaming"),
                (false, false) => None,
            };
            if let Some(kind) = streaming {
                diags.push(diag(
                    &fd,
                    opt,
                    format!(
                        "rpc `{rpc}` is {kind} and cannot be a tool; make it unary or remove its `rpc_tool` option"
                    ),
                ));
            }
            tools.push(ann.tool_spec(&method, def));
        }
    }

    if tools.is_empty() && diags.is_empty() {
        diags.push(Diagnostic {
            file: fd.name().to_owned(),
            line: None,
            column: None,
            message: format!(
                "`{}` has no method annotated with `rpc_tool`; add `option (ai.context.v1.rpc_tool) = {{...}}` to at least one rpc",
                fd.name()
            ),
        });
    }

    // Alias prefixes: every message the tools reach, and every message of the file.
    let mut messages: Vec<MessageDescriptor> = Vec::new();
    let mut visited = HashSet::new();
    for service in fd.services() {
        for method in service.methods() {
            if ann.rpc_tool(&method).is_some() {
                reachable(&method.input(), &mut visited, &mut messages);
                reachable(&method.output(), &mut visited, &mut messages);
            }
        }
    }
    for message in fd.messages() {
        reachable(&message, &mut visited, &mut messages);
    }
    for message in &messages {
        for field in message.fields() {
            let Some(prefix) = ann.tool_field(&field).alias_prefix else {
                continue;
            };
            let file = field.parent_file();
            let at =
                option_location_field(&file, field.path(), FIELD_OPTIONS, TOOL_FIELD_EXTENSION, 2);
            if field.is_map() || field.kind() != PKind::String {
                diags.push(diag(
                    &file,
                    at,
                    format!(
                        "field `{}` has an `alias_prefix` but is {}; only `string` and `repeated string` fields carry ids: remove `alias_prefix` or make the field a string",
                        field.full_name(),
                        type_name(&field)
                    ),
                ));
            }
            if let Err(err) = validate_alias_prefix(&prefix) {
                diags.push(diag(
                    &file,
                    at,
                    format!("field `{}`: {err}", field.full_name()),
                ));
            }
        }
    }

    if diags.is_empty() {
        Ok(tools)
    } else {
        Err(diags)
    }
}

/// Builds the root object schema of `message` (as [`ToolSpec::parameters`]),
/// reading the annotations in `message`'s pool.
///
/// # Examples
///
/// ```
/// # use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
/// # struct Memory(&'static str);
/// # impl FileResolver for Memory {
/// #     fn open_file(&self, name: &str) -> Result<File, protox::Error> {
/// #         if name == "m.proto" { File::from_source(name, self.0) }
/// #         else { Err(protox::Error::file_not_found(name)) }
/// #     }
/// # }
/// # let mut resolver = ChainFileResolver::new();
/// # resolver.add(Memory("syntax = \"proto3\"; package p; message M { repeated M children = 1; }"));
/// # resolver.add(GoogleFileResolver::new());
/// # let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// # compiler.include_source_info(true).open_file("m.proto").unwrap();
/// # let pool = compiler.descriptor_pool();
/// use ai_tools_schema::{proto::message_schema, render, Dialect};
///
/// let m = pool.get_message_by_name("p.M").unwrap();
/// let schema = message_schema(&m);
/// assert_eq!(
///     render::parameters(&schema, Dialect::JsonSchema, false)["properties"]["children"]["items"],
///     serde_json::json!({ "$ref": "#/$defs/p.M" })
/// );
/// ```
pub fn message_schema(message: &MessageDescriptor) -> Schema {
    Annotations::new(message.parent_pool()).root_schema(message)
}

/// The leading comment of the element at `path` in `file`: comment lines with
/// one leading space stripped, joined with `\n`, trimmed; `None` if empty or
/// the file has no source info.
pub fn leading_comment(file: &FileDescriptor, path: &[i32]) -> Option<String> {
    let info = file.file_descriptor_proto().source_code_info.as_ref()?;
    let location = info.location.iter().find(|l| l.path == path)?;
    let raw = location.leading_comments.as_deref()?;
    let text = raw
        .lines()
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The `rpc_tool` option of a method, read by number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct ToolDefinition {
    name: String,
    description: String,
    strict: bool,
}

/// The `tool_field` option and `field_behavior` of a field, read by number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct FieldAnnotations {
    skip: bool,
    alias_prefix: Option<String>,
    usage_notes: Option<String>,
    description: Option<String>,
    output_only: bool,
    required: bool,
}

/// The extensions of one pool, found by number.
struct Annotations {
    rpc_tool: Option<ExtensionDescriptor>,
    tool_field: Option<ExtensionDescriptor>,
    field_behavior: Option<ExtensionDescriptor>,
}

impl Annotations {
    fn new(pool: &DescriptorPool) -> Self {
        let method = pool.get_message_by_name("google.protobuf.MethodOptions");
        let field = pool.get_message_by_name("google.protobuf.FieldOptions");
        Annotations {
            rpc_tool: method.and_then(|m| m.get_extension(RPC_TOOL_EXTENSION)),
            tool_field: field
                .as_ref()
                .and_then(|m| m.get_extension(TOOL_FIELD_EXTENSION)),
            field_behavior: field.and_then(|m| m.get_extension(FIELD_BEHAVIOR_EXTENSION)),
        }
    }

    fn rpc_tool(&self, method: &MethodDescriptor) -> Option<ToolDefinition> {
        let ext = self.rpc_tool.as_ref()?;
        let options = method.options();
        if !options.has_extension(ext) {
            return None;
        }
        let value = options.get_extension(ext);
        let Value::Message(msg) = value.as_ref() else {
            return None;
        };
        Some(ToolDefinition {
            name: string_field(msg, 1).unwrap_or_default(),
            description: string_field(msg, 2).unwrap_or_default(),
            strict: bool_field(msg, 3),
        })
    }

    fn tool_field(&self, field: &FieldDescriptor) -> FieldAnnotations {
        let mut out = FieldAnnotations::default();
        let options = field.options();
        if let Some(ext) = &self.tool_field
            && options.has_extension(ext)
            && let Value::Message(msg) = options.get_extension(ext).as_ref()
        {
            out.skip = bool_field(msg, 1);
            out.alias_prefix = string_field(msg, 2).filter(|s| !s.is_empty());
            out.usage_notes = string_field(msg, 3).filter(|s| !s.trim().is_empty());
            out.description = string_field(msg, 4).filter(|s| !s.trim().is_empty());
        }
        if let Some(ext) = &self.field_behavior
            && options.has_extension(ext)
        {
            let value = options.get_extension(ext);
            let values: &[Value] = match value.as_ref() {
                Value::List(list) => list,
                single => std::slice::from_ref(single),
            };
            for v in values {
                match v.as_enum_number() {
                    Some(BEHAVIOR_OUTPUT_ONLY) => out.output_only = true,
                    Some(BEHAVIOR_REQUIRED) => out.required = true,
                    _ => {}
                }
            }
        }
        out
    }

    fn tool_spec(&self, method: &MethodDescriptor, def: ToolDefinition) -> ToolSpec {
        let request = method.input();
        let response = method.output();
        ToolSpec {
            name: def.name,
            description: def.description.trim().to_owned(),
            strict: def.strict,
            service: method.parent_service().full_name().to_owned(),
            method: method.name().to_owned(),
            request: request.full_name().to_owned(),
            response: response.full_name().to_owned(),
            parameters: self.root_schema(&request),
            request_aliases: self.aliases(&request),
            response_aliases: self.aliases(&response),
            output_prefix: self.output_prefix(&response),
        }
    }

    fn aliases(&self, root: &MessageDescriptor) -> Vec<FieldAlias> {
        let mut messages = Vec::new();
        reachable(root, &mut HashSet::new(), &mut messages);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for message in messages {
            for field in message.fields() {
                if let Some(prefix) = self.tool_field(&field).alias_prefix
                    && seen.insert(field.full_name().to_owned())
                {
                    out.push(FieldAlias {
                        message: message.full_name().to_owned(),
                        field: field.name().to_owned(),
                        prefix,
                    });
                }
            }
        }
        out
    }

    fn id_prefix(&self, message: &MessageDescriptor) -> Option<String> {
        let id = message.get_field_by_name("id")?;
        self.tool_field(&id).alias_prefix
    }

    fn output_prefix(&self, response: &MessageDescriptor) -> Option<String> {
        self.id_prefix(response).or_else(|| {
            response.fields().find_map(|field| match field.kind() {
                PKind::Message(m) if !field.is_map() => self.id_prefix(&m),
                _ => None,
            })
        })
    }

    fn root_schema(&self, message: &MessageDescriptor) -> Schema {
        let mut builder = Builder {
            ann: self,
            recursive: recursive_messages(self, message),
            defs: BTreeMap::new(),
        };
        let mut object = builder.object(message);
        object.defs = std::mem::take(&mut builder.defs);
        let mut schema = Schema::object(object);
        schema.description = message_comment(message);
        schema
    }

    /// The fields of `message` that appear in the schema.
    fn schema_fields<'m>(
        &'m self,
        message: &'m MessageDescriptor,
    ) -> impl Iterator<Item = (FieldDescriptor, FieldAnnotations)> + 'm {
        message.fields().filter_map(|field| {
            let ann = self.tool_field(&field);
            (!ann.skip && !ann.output_only).then_some((field, ann))
        })
    }
}

struct Builder<'a> {
    ann: &'a Annotations,
    /// Full names of the messages that can reach themselves.
    recursive: HashSet<String>,
    defs: BTreeMap<String, Schema>,
}

impl Builder<'_> {
    fn object(&mut self, message: &MessageDescriptor) -> Object {
        let mut object = Object::named(message.full_name());
        let fields: Vec<_> = self.ann.schema_fields(message).collect();
        // Oneof member lists, of the members that appear in the schema.
        let mut oneofs: HashMap<String, Vec<String>> = HashMap::new();
        for (field, _) in &fields {
            if let Some(oneof) = real_oneof(field) {
                oneofs
                    .entry(oneof)
                    .or_default()
                    .push(format!("`{}`", field.name()));
            }
        }
        for (field, ann) in fields {
            let mut schema = self.field_schema(&field);
            let mut description = ann
                .description
                .clone()
                .or_else(|| leading_comment(&field.parent_file(), field.path()));
            if description.is_none() && !field.is_list() && !field.is_map() {
                description = schema.description.take();
            }
            if let PKind::Enum(e) = field.kind() {
                description = join(description, enum_value_notes(&e));
            }
            if let Some(notes) = ann.usage_notes {
                description = join(description, Some(notes.trim().to_owned()));
            }
            let oneof = real_oneof(&field);
            if let Some(members) = oneof.as_ref().and_then(|o| oneofs.get(o))
                && members.len() > 1
            {
                description = join(
                    description,
                    Some(format!("Set at most one of {}.", members.join(", "))),
                );
            }
            schema.description = description;
            let optional = oneof.is_some() || is_optional(&field);
            object = object.property(field.name(), schema, ann.required || !optional);
        }
        object
    }

    /// The schema of a field, without its description (which the caller sets).
    fn field_schema(&mut self, field: &FieldDescriptor) -> Schema {
        if field.is_map()
            && let PKind::Message(entry) = field.kind()
        {
            let key = self.kind_schema(&entry.map_entry_key_field().kind());
            let value = self.kind_schema(&entry.map_entry_value_field().kind());
            return Schema::map(key, value);
        }
        let schema = self.kind_schema(&field.kind());
        if field.is_list() {
            Schema::array(schema)
        } else {
            schema
        }
    }

    fn kind_schema(&mut self, kind: &PKind) -> Schema {
        match kind {
            PKind::Double | PKind::Float => Schema::number(),
            PKind::Int32
            | PKind::Sint32
            | PKind::Sfixed32
            | PKind::Int64
            | PKind::Sint64
            | PKind::Sfixed64 => Schema::integer(),
            PKind::Uint32 | PKind::Fixed32 | PKind::Uint64 | PKind::Fixed64 => {
                Schema::integer().minimum(0)
            }
            PKind::Bool => Schema::boolean(),
            PKind::String => Schema::string(),
            PKind::Bytes => Schema::bytes(),
            PKind::Enum(e) => enum_schema(e),
            PKind::Message(m) => self.message_schema(m),
        }
    }

    fn message_schema(&mut self, message: &MessageDescriptor) -> Schema {
        if let Some(schema) = well_known(message) {
            return schema;
        }
        let name = message.full_name();
        if self.recursive.contains(name) {
            if !self.defs.contains_key(name) {
                // Reserve the name first: the definition refers to itself.
                self.defs.insert(name.to_owned(), Schema::string());
                let mut def = Schema::object(self.object(message));
                def.description = message_comment(message);
                self.defs.insert(name.to_owned(), def);
            }
            return Schema::reference(name);
        }
        let mut schema = Schema::object(self.object(message));
        schema.description = message_comment(message);
        schema
    }
}

fn well_known(message: &MessageDescriptor) -> Option<Schema> {
    let schema = match message.full_name() {
        "google.protobuf.Timestamp" => Schema::string_format(ir::FORMAT_DATE_TIME),
        "google.protobuf.Duration" => Schema::string_pattern(ir::DURATION_PATTERN),
        "google.protobuf.FieldMask" => Schema::string(),
        "google.protobuf.Struct" => Schema::object(Object::open()),
        "google.protobuf.Value" => Schema::any(),
        "google.protobuf.ListValue" => Schema::array(Schema::any()),
        "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => Schema::number().nullable(),
        "google.protobuf.Int64Value" | "google.protobuf.Int32Value" => {
            Schema::integer().nullable()
        }
        "google.protobuf.UInt64Value" | "google.protobuf.UInt32Value" => {
            Schema::integer().minimum(0).nullable()
        }
        "google.protobuf.BoolValue" => Schema::boolean().nullable(),
        "google.protobuf.StringValue" => Schema::string().nullable(),
        "google.protobuf.BytesValue" => Schema::bytes().nullable(),
        "google.protobuf.Empty" => Schema::object(Object::named("google.protobuf.Empty")),
        "google.protobuf.Any" => Schema::object(Object {
            open: true,
            ..Object::named("google.protobuf.Any")
        }
        .property(
            "@type",
            Schema::string().describe(
                "The type URL of the message, e.g. `type.googleapis.com/google.protobuf.Duration`.",
            ),
            true,
        )),
        _ => return None,
    };
    Some(schema)
}

fn enum_schema(e: &EnumDescriptor) -> Schema {
    let values: Vec<String> = e
        .values()
        .filter(|v| v.number() != 0)
        .map(|v| v.name().to_owned())
        .collect();
    if values.is_empty() {
        // Only a zero value: leaving it out would leave nothing to send.
        Schema::enumeration(e.values().map(|v| v.name().to_owned()))
    } else {
        Schema::enumeration(values)
    }
}

/// "- `NAME`: comment" for every commented non-zero value, if any.
fn enum_value_notes(e: &EnumDescriptor) -> Option<String> {
    let file = e.parent_file();
    let lines: Vec<String> = e
        .values()
        .filter(|v| v.number() != 0)
        .filter_map(|v| {
            leading_comment(&file, v.path())
                .map(|c| format!("- `{}`: {}", v.name(), c.replace('\n', " ")))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn message_comment(message: &MessageDescriptor) -> Option<String> {
    leading_comment(&message.parent_file(), message.path())
}

fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b),
    }
}

/// The name of the real (not synthetic `optional`) oneof of a field.
fn real_oneof(field: &FieldDescriptor) -> Option<String> {
    field
        .containing_oneof()
        .filter(|o| !o.is_synthetic())
        .map(|o| o.full_name().to_owned())
}

/// Proto3 `optional`, or a proto2/editions singular non-`required` field.
fn is_optional(field: &FieldDescriptor) -> bool {
    if field.field_descriptor_proto().proto3_optional() {
        return true;
    }
    field.parent_file().syntax() != Syntax::Proto3
        && !field.is_list()
        && !field.is_map()
        && field.cardinality() == Cardinality::Optional
}

fn type_name(field: &FieldDescriptor) -> String {
    if field.is_map() {
        return "a map".to_owned();
    }
    let kind = match field.kind() {
        PKind::Double => "double".to_owned(),
        PKind::Float => "float".to_owned(),
        PKind::Int32 => "int32".to_owned(),
        PKind::Int64 => "int64".to_owned(),
        PKind::Uint32 => "uint32".to_owned(),
        PKind::Uint64 => "uint64".to_owned(),
        PKind::Sint32 => "sint32".to_owned(),
        PKind::Sint64 => "sint64".to_owned(),
        PKind::Fixed32 => "fixed32".to_owned(),
        PKind::Fixed64 => "fixed64".to_owned(),
        PKind::Sfixed32 => "sfixed32".to_owned(),
        PKind::Sfixed64 => "sfixed64".to_owned(),
        PKind::Bool => "bool".to_owned(),
        PKind::String => "string".to_owned(),
        PKind::Bytes => "bytes".to_owned(),
        PKind::Message(m) => m.full_name().to_owned(),
        PKind::Enum(e) => e.full_name().to_owned(),
    };
    if field.is_list() {
        format!("of type `repeated {kind}`")
    } else {
        format!("of type `{kind}`")
    }
}

/// Every message reachable from `root` through fields (map values included),
/// `root` first, then depth-first in field order.
fn reachable(
    root: &MessageDescriptor,
    visited: &mut HashSet<String>,
    out: &mut Vec<MessageDescriptor>,
) {
    if !visited.insert(root.full_name().to_owned()) {
        return;
    }
    out.push(root.clone());
    for field in root.fields() {
        if let PKind::Message(m) = field.kind() {
            reachable(&m, visited, out);
        }
    }
}

/// Messages reachable from `root` (through fields in the schema) that can reach
/// themselves.
fn recursive_messages(ann: &Annotations, root: &MessageDescriptor) -> HashSet<String> {
    // Edges of the schema graph: message -> messages of its schema fields.
    fn children(ann: &Annotations, m: &MessageDescriptor) -> Vec<MessageDescriptor> {
        let mut out = Vec::new();
        for (field, _) in ann.schema_fields(m) {
            if let PKind::Message(child) = field.kind() {
                if child.is_map_entry() {
                    if let PKind::Message(v) = child.map_entry_value_field().kind() {
                        out.push(v);
                    }
                } else {
                    out.push(child);
                }
            }
        }
        out.retain(|m| well_known(m).is_none());
        out
    }
    let mut all = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(m) = stack.pop() {
        if seen.insert(m.full_name().to_owned()) {
            stack.extend(children(ann, &m));
            all.push(m);
        }
    }
    let mut recursive = HashSet::new();
    for m in &all {
        let mut seen = HashSet::new();
        let mut stack = children(ann, m);
        while let Some(c) = stack.pop() {
            if c.full_name() == m.full_name() {
                recursive.insert(m.full_name().to_owned());
                break;
            }
            if seen.insert(c.full_name().to_owned()) {
                stack.extend(children(ann, &c));
            }
        }
    }
    recursive
}

fn string_field(msg: &DynamicMessage, number: u32) -> Option<String> {
    msg.get_field_by_number(number)
        .and_then(|v| v.as_str().map(str::to_owned))
}

fn bool_field(msg: &DynamicMessage, number: u32) -> bool {
    msg.get_field_by_number(number)
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

type Location = (Option<u32>, Option<u32>);

/// The 1-based start of the most specific of `paths` that has a location.
fn location_of(file: &FileDescriptor, paths: &[Vec<i32>]) -> Location {
    let Some(info) = file.file_descriptor_proto().source_code_info.as_ref() else {
        return (None, None);
    };
    for path in paths {
        if let Some(loc) = info.location.iter().find(|l| &l.path == path)
            && let [line, column, ..] = loc.span[..]
        {
            let one_based = |n: i32| u32::try_from(n).ok().map(|n| n.saturating_add(1));
            return (one_based(line), one_based(column));
        }
    }
    (None, None)
}

fn option_location(file: &FileDescriptor, path: &[i32], options: i32, ext: u32) -> Location {
    let ext = i32::try_from(ext).unwrap_or(i32::MAX);
    let mut with_option = path.to_vec();
    with_option.extend([options, ext]);
    location_of(file, &[with_option, path.to_vec()])
}

fn option_location_field(
    file: &FileDescriptor,
    path: &[i32],
    options: i32,
    ext: u32,
    field: i32,
) -> Location {
    let ext = i32::try_from(ext).unwrap_or(i32::MAX);
    let mut with_field = path.to_vec();
    with_field.extend([options, ext, field]);
    let mut with_option = path.to_vec();
    with_option.extend([options, ext]);
    location_of(file, &[with_field, with_option, path.to_vec()])
}

fn diag(file: &FileDescriptor, (line, column): Location, message: String) -> Diagnostic {
    Diagnostic {
        file: file.name().to_owned(),
        line,
        column,
        message,
    }
}
