//! Descriptors to IR: annotation reading, tool discovery and diagnostics.
//!
//! Annotations are recognised by extension number, whichever package declares
//! them: [`RPC_TOOL_EXTENSION`] or [`TOOLS_RPC_TOOL_EXTENSION`] on
//! `google.protobuf.MethodOptions` (the same `rpc_tool`, declared in two
//! packages; a method carries one of them) and
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
//! From the request message, recursively (ARCHITECTURE.md, "Decisions and
//! why", says why each rule is what it is):
//!
//! - scalars map to `string`, `integer` bounded by its type's range (32- and
//!   64-bit, signed and unsigned), `number` (`float`: bounded by its range),
//!   `boolean`; `bytes` to a base64 string (format `byte`, pattern
//!   [`ir::BASE64_PATTERN`]); enums to a string enum of the value names,
//!   without a zero value named `*_UNSPECIFIED` (see [`is_choice`]);
//! - `repeated` to arrays, maps to [`ir::Kind::Map`], messages to objects
//!   whose description is the message's leading comment;
//! - a message that can reach itself is defined once in the root's
//!   [`ir::Object::defs`] and referred to by [`ir::Kind::Ref`]; every other
//!   message is inlined, at each use (a request that would spell out more
//!   than [`MAX_SPELLED_OUT_FIELDS`] fields so, or nest messages more than
//!   [`MAX_NESTING_DEPTH`] deep, is refused, not built);
//! - a oneof of two or more members becomes one optional property named after
//!   the oneof, whose value is [`ir::Kind::OneOf`]: an object holding exactly
//!   one member (`"target": {"email": "a@b.c"}`), described by the oneof's
//!   comment; a oneof of one member is that member, an optional property;
//! - a field with an `alias_prefix` is a string (or array of strings) marked
//!   with [`ir::StringSchema::alias_prefix`];
//! - well-known types: `Timestamp` is a `date-time` string, `Duration` a
//!   string matching [`ir::DURATION_PATTERN`], `FieldMask` a string matching
//!   [`ir::FIELD_MASK_PATTERN`], `Struct`
//!   an open object, `Value` any value, `ListValue` an array of any, wrappers
//!   nullable scalars, `Empty` an object without properties, and `Any` an open
//!   object with a required `@type` string;
//! - fields with `(google.api.field_behavior) = OUTPUT_ONLY` or
//!   `(ai.tools.v1.tool_field).skip = true` are left out, and so are
//!   `deprecated` fields unless they carry a `tool_field` option (an
//!   annotated method is a tool even when `deprecated`: its `rpc_tool`
//!   option says so);
//! - a property is required as `(ai.tools.v1.tool_field).required` says when
//!   it is set; unset, it is required unless it is `optional` (proto3
//!   `optional`, or a proto2 singular non-`required` field) or a oneof
//!   member, and a field with `field_behavior = REQUIRED` (or proto2
//!   `required`) is always required. That is the rule for methods annotated
//!   inline. Whole-service mode ([`crate::overlay::annotate`]) writes
//!   `required: false` on the plain fields of the requests it exposes
//!   (unless told [`crate::overlay::PlainFields::Required`]), so there only
//!   `field_behavior = REQUIRED` fields are required, as in Google's API
//!   convention. `required: false` on a `REQUIRED` field is an error (the
//!   server would refuse the request), and so is `required: true` on a field
//!   left out of the schema or on a member of a oneof of two or more;
//! - a field's description is `tool_field.description`, else its leading
//!   comment, else (for message fields) the message's comment, then
//!   `tool_field.usage_notes` after a blank line; enum fields list the
//!   commented values.
//!
//! [`FIELD_BEHAVIOR_EXTENSION`]: crate::FIELD_BEHAVIOR_EXTENSION
//! [`RPC_TOOL_EXTENSION`]: crate::RPC_TOOL_EXTENSION
//! [`TOOLS_RPC_TOOL_EXTENSION`]: crate::TOOLS_RPC_TOOL_EXTENSION
//! [`ir::BASE64_PATTERN`]: crate::ir::BASE64_PATTERN
//! [`ir::Kind::Map`]: crate::ir::Kind::Map
//! [`ir::Object::defs`]: crate::ir::Object::defs
//! [`ir::Kind::Ref`]: crate::ir::Kind::Ref
//! [`ir::Kind::OneOf`]: crate::ir::Kind::OneOf
//! [`ir::StringSchema::alias_prefix`]: crate::ir::StringSchema::alias_prefix
//! [`ir::DURATION_PATTERN`]: crate::ir::DURATION_PATTERN
//! [`ir::FIELD_MASK_PATTERN`]: crate::ir::FIELD_MASK_PATTERN

use std::collections::{HashMap, HashSet};

use prost_reflect::{
    Cardinality, DescriptorPool, FieldDescriptor, Kind as PKind, MessageDescriptor,
    MethodDescriptor,
};

use crate::annotation_protos::TOOL_FIELD_EXTENSION;
use crate::diagnostic::Diagnostic;
use crate::ir::Schema;
use crate::names::{validate_alias_prefix, validate_tool_name};
use crate::tool_spec::ToolSpec;

mod annotations;
mod bounds;
mod build;
mod fields;
mod graph;
mod long_running;
mod rpc_tool;
mod sensitive;
mod source;
mod well_known;

#[cfg(test)]
mod tests;

// The public face: these are `proto_ai_tools_schema::proto::…`.
pub use annotations::MAX_TOOL_TIMEOUT;
pub use bounds::{MAX_NESTING_DEPTH, MAX_SPELLED_OUT_FIELDS};
pub use build::is_choice;
pub use long_running::{
    LongRunning, OPERATION, OPERATION_INFO_EXTENSION, OPERATIONS_SERVICE, long_running,
};
pub(crate) use rpc_tool::carried as carried_rpc_tool;
pub use rpc_tool::rpc_tool_extensions;
pub use sensitive::{REDACTED, is_sensitive, redact};
pub use source::{leading_comment, method_diagnostic};

// For `overlay`, which writes these annotations from outside the proto.
pub(crate) use annotations::{
    IDEMPOTENCY_IDEMPOTENT, IDEMPOTENCY_NO_SIDE_EFFECTS, METHOD_IDEMPOTENCY_LEVEL,
    RPC_TOOL_CONSENT, RPC_TOOL_DESTRUCTIVE, RPC_TOOL_EXAMPLES, RPC_TOOL_OUTPUT_SCHEMA,
    RPC_TOOL_TIMEOUT, TOOL_FIELD_REQUIRED, idempotency,
};
pub(crate) use fields::is_deprecated;
pub(crate) use rpc_tool::rpc_tool_number;
pub(crate) use sensitive::TOOL_FIELD_SENSITIVE;
pub(crate) use source::{METHOD_OPTIONS, option_location, option_location_field};

use annotations::{Annotations, tool_timeout};
use bounds::{chain_text, most_used_message, spelled_out_fields, too_deep_chain};
use fields::{is_optional, real_oneof};
use graph::{reachable, recursive_messages};
use source::{FIELD_OPTIONS, diag};
use well_known::well_known;

/// Finds the tools of `file`: the annotated methods of the services declared
/// in it (not in its imports), in declaration order.
///
/// `file` is the pool's name of the file, e.g. `links/v1/links.proto`.
///
/// # Errors
///
/// Every problem found, each located at the method, field or option it is
/// about (see [`Diagnostic`]): an invalid or duplicate tool name, an empty
/// description, a streaming RPC annotated as a tool, a request whose schema
/// would spell out more than [`MAX_SPELLED_OUT_FIELDS`] fields (each message
/// counted at each use) or nest messages more than [`MAX_NESTING_DEPTH`]
/// deep (the chain is shown), an `alias_prefix` on a field that is not a string
/// (or a repeated string) or not matching `^[a-z][a-z0-9_]*$`, a
/// `tool_field.required` that contradicts the field (`false` on a
/// `field_behavior = REQUIRED` or proto2 `required` field; `true` on a field
/// left out of the schema or on a member of a oneof of two or more), an
/// example (`rpc_tool.examples`) that does not fit the tool's schema (see
/// [`examples`](crate::examples)), a method that carries both
/// `rpc_tool`s (`ai.context.v1`'s and `ai.tools.v1`'s), and a file without
/// any annotated method.
///
/// # Examples
///
/// See the [crate-level example](crate).
pub fn tools_in_file(pool: &DescriptorPool, file: &str) -> Result<Vec<ToolSpec>, Vec<Diagnostic>> {
    let mut tools = Vec::new();
    tools_in_file_each(pool, file, |tool| tools.push(tool))?;
    Ok(tools)
}

/// [`tools_in_file`], handing each tool to `each` as soon as it is read,
/// in the same order: for a caller that starts working on the first tools
/// (`ai_tools!` checks their renderings) while the later ones are read.
///
/// # Errors
///
/// Those of [`tools_in_file`]; the tools already handed over are then not
/// the file's tools.
///
/// # Examples
///
/// ```
/// # let pool = prost_reflect::DescriptorPool::global();
/// // With no such file in the pool, nothing is handed over.
/// let mut names = Vec::new();
/// let result = proto_ai_tools_schema::proto::tools_in_file_each(&pool, "none.proto", |tool| {
///     names.push(tool.name)
/// });
/// assert!(result.is_err() && names.is_empty());
/// ```
pub fn tools_in_file_each(
    pool: &DescriptorPool,
    file: &str,
    mut each: impl FnMut(ToolSpec),
) -> Result<(), Vec<Diagnostic>> {
    let Some(fd) = pool.get_file_by_name(file) else {
        return Err(vec![Diagnostic::unlocated(
            file,
            format!(
                "`{file}` is not in the descriptor pool; compile it (with its imports) into the pool first"
            ),
        )]);
    };
    let ann = Annotations::new(pool);
    let mut diags = Vec::new();
    let mut tools = 0_usize;
    // tool name -> the method that took it first
    let mut seen: HashMap<String, MethodDescriptor> = HashMap::new();

    for service in fd.services() {
        for method in service.methods() {
            let mut def = match ann.rpc_tool_checked(&method) {
                Ok(Some(def)) => def,
                Ok(None) => continue,
                Err([first, second]) => {
                    diags.push(both_rpc_tools(&fd, &method, first, second));
                    continue;
                }
            };
            // Locations are looked up only for a diagnostic: a lookup scans
            // the file's source locations, and a large file has many.
            let opt =
                || option_location(&fd, method.path(), METHOD_OPTIONS, rpc_tool_number(&method));
            let option_field = |method: &MethodDescriptor, field| {
                option_location_field(
                    &fd,
                    method.path(),
                    METHOD_OPTIONS,
                    rpc_tool_number(method),
                    field,
                )
            };
            let rpc = method.name();

            if let Err(err) = validate_tool_name(&def.name) {
                diags.push(diag(
                    &fd,
                    option_field(&method, 1),
                    format!("rpc `{rpc}`: {err}"),
                ));
            } else if let Some(first) = seen.get(&def.name) {
                let first_at = match option_field(first, 1) {
                    (Some(l), Some(c)) => format!("{}:{l}:{c}", fd.name()),
                    _ => fd.name().to_owned(),
                };
                diags.push(diag(
                    &fd,
                    option_field(&method, 1),
                    format!(
                        "tool name `{}` is already used by rpc `{}` ({first_at}); give rpc `{}` a different `name`",
                        def.name,
                        first.full_name(),
                        method.full_name()
                    ),
                ));
            } else {
                seen.insert(def.name.clone(), method.clone());
            }
            if def.description.trim().is_empty() {
                diags.push(diag(
                    &fd,
                    option_field(&method, 2),
                    format!(
                        "rpc `{rpc}` has an empty tool `description`; say what the tool does, for the model, e.g. `description: \"Create a short link.\"`"
                    ),
                ));
            }
            // A server stream is collected into one result; a model has no
            // way to send a stream of requests.
            let streaming = match (method.is_client_streaming(), method.is_server_streaming()) {
                (true, true) => Some("bidirectional-streaming"),
                (true, false) => Some("client-streaming"),
                (false, _) => None,
            };
            if let Some(kind) = streaming {
                diags.push(diag(
                    &fd,
                    opt(),
                    format!(
                        "rpc `{rpc}` is {kind} and cannot be a tool: a model sends one request per call, so only unary and server-streaming methods can be tools; make it one of those or remove its `rpc_tool` option"
                    ),
                ));
            }
            if def.destructive == Some(true) && idempotency(&method) == IDEMPOTENCY_NO_SIDE_EFFECTS
            {
                diags.push(diag(
                    &fd,
                    option_field(&method, RPC_TOOL_DESTRUCTIVE as i32),
                    format!(
                        "rpc `{rpc}` has `idempotency_level = NO_SIDE_EFFECTS` and `destructive: true`; a method without side effects destroys nothing: drop one of them"
                    ),
                ));
            }
            if let Some((seconds, nanos)) = def.timeout
                && let Err(why) = tool_timeout(seconds, nanos)
            {
                diags.push(diag(
                    &fd,
                    option_field(&method, RPC_TOOL_TIMEOUT as i32),
                    format!("rpc `{rpc}`: {why}"),
                ));
            }
            // The schema is a tree: a message is spelled out at each use,
            // so messages that each use the next twice double it per level.
            // Count before building; a request past the bound is refused.
            let request = method.input();
            let recursive = recursive_messages(&ann, &request);
            if let Some(chain) = too_deep_chain(&ann, &request, &recursive) {
                diags.push(diag(
                    &fd,
                    opt(),
                    format!(
                        "rpc `{rpc}`: its request `{}` nests messages more than {MAX_NESTING_DEPTH} deep, the most a tool may have: {}; leave a field of the chain out with `[(ai.tools.v1.tool_field).skip = true]`",
                        request.full_name(),
                        chain_text(&chain)
                    ),
                ));
                continue;
            }
            let fields = spelled_out_fields(&ann, &request, &recursive);
            if fields > MAX_SPELLED_OUT_FIELDS {
                let (most_used, uses) = most_used_message(&ann, &request, &recursive);
                let repeated = if uses > 1 {
                    format!(" (`{most_used}` is spelled out {uses} times)")
                } else {
                    String::new()
                };
                diags.push(diag(
                    &fd,
                    opt(),
                    format!(
                        "rpc `{rpc}`: its request `{}` spells out {fields} fields, counting a message at each use{repeated}, more than the {MAX_SPELLED_OUT_FIELDS} a tool may have; leave fields out with `[(ai.tools.v1.tool_field).skip = true]`, or use a message in fewer places",
                        request.full_name()
                    ),
                ));
                continue;
            }
            let texts = std::mem::take(&mut def.examples);
            let mut spec = ann.tool_spec(&method, def, recursive);
            for (i, checked) in crate::examples::check_examples(&spec.parameters, &texts)
                .into_iter()
                .enumerate()
            {
                match checked {
                    Ok(example) => spec.examples.push(example),
                    Err(problems) => diags.push(diag(
                        &fd,
                        option_field(&method, RPC_TOOL_EXAMPLES as i32),
                        crate::examples::diagnostic(rpc, i, &texts[i], &problems),
                    )),
                }
            }
            each(spec);
            tools += 1;
        }
    }

    if tools == 0 && diags.is_empty() {
        diags.push(Diagnostic::unlocated(fd.name(), format!(
                "`{}` has no method annotated with `rpc_tool`; add `option (ai.context.v1.rpc_tool) = {{...}}` to at least one rpc",
                fd.name()
            )));
    }

    // Alias prefixes and `required`: every message the tools reach, and
    // every message of the file.
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
            let field_ann = ann.tool_field(&field);
            if let Some(problem) = ann.required_problem(&field, &field_ann) {
                let file = field.parent_file();
                let at = option_location_field(
                    &file,
                    field.path(),
                    FIELD_OPTIONS,
                    TOOL_FIELD_EXTENSION,
                    i32::try_from(TOOL_FIELD_REQUIRED).unwrap_or(i32::MAX),
                );
                diags.push(diag(&file, at, problem));
            }
            let Some(prefix) = field_ann.alias_prefix else {
                continue;
            };
            let file = field.parent_file();
            let at = || {
                option_location_field(&file, field.path(), FIELD_OPTIONS, TOOL_FIELD_EXTENSION, 2)
            };
            if field.is_map() || field.kind() != PKind::String {
                diags.push(diag(
                    &file,
                    at(),
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
                    at(),
                    format!("field `{}`: {err}", field.full_name()),
                ));
            }
        }
    }

    if diags.is_empty() { Ok(()) } else { Err(diags) }
}

/// The error of a method that carries `rpc_tool` under both numbers
/// (`first` and `second`, as the pool declares them): located at the one
/// written later, naming where the other is.
fn both_rpc_tools(
    fd: &prost_reflect::FileDescriptor,
    method: &MethodDescriptor,
    first: &prost_reflect::ExtensionDescriptor,
    second: &prost_reflect::ExtensionDescriptor,
) -> Diagnostic {
    let at = |ext: &prost_reflect::ExtensionDescriptor| {
        option_location(fd, method.path(), METHOD_OPTIONS, ext.number())
    };
    let (first_at, second_at) = (at(first), at(second));
    let ((later, later_at), (earlier, earlier_at)) = if second_at >= first_at {
        ((second, second_at), (first, first_at))
    } else {
        ((first, first_at), (second, second_at))
    };
    let earlier_place = match earlier_at {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", fd.name()),
        _ => fd.name().to_owned(),
    };
    diag(
        fd,
        later_at,
        format!(
            "rpc `{}` carries `({})` here and `({})` at {earlier_place}: the same annotation under two names; keep one of them",
            method.name(),
            later.full_name(),
            earlier.full_name(),
        ),
    )
}

/// Builds the root object schema of `message` (as [`ToolSpec::parameters`]),
/// reading the annotations in `message`'s pool.
///
/// It builds the whole tree without counting it first: for a pool you do
/// not trust, read its tools with [`tools_in_file`], which refuses a request
/// past [`MAX_SPELLED_OUT_FIELDS`] before building it.
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
/// use proto_ai_tools_schema::{proto::message_schema, render, Dialect};
///
/// let m = pool.get_message_by_name("p.M").unwrap();
/// let schema = message_schema(&m);
/// assert_eq!(
///     render::parameters(&schema, Dialect::JsonSchema, false)["properties"]["children"]["items"],
///     serde_json::json!({ "$ref": "#/$defs/p.M" })
/// );
/// ```
pub fn message_schema(message: &MessageDescriptor) -> Schema {
    let ann = Annotations::new(message.parent_pool());
    ann.root_schema(message, recursive_messages(&ann, message))
}

/// The parameters of `method`'s tool as [`tools_in_file`] builds them
/// (annotations read from its pool); `None` for a request past
/// [`MAX_NESTING_DEPTH`] or [`MAX_SPELLED_OUT_FIELDS`], which
/// [`tools_in_file`] refuses, saying so.
pub(crate) fn request_schema(method: &MethodDescriptor) -> Option<Schema> {
    let ann = Annotations::new(method.parent_pool());
    let request = method.input();
    let recursive = recursive_messages(&ann, &request);
    if too_deep_chain(&ann, &request, &recursive).is_some()
        || spelled_out_fields(&ann, &request, &recursive) > MAX_SPELLED_OUT_FIELDS
    {
        return None;
    }
    Some(ann.root_schema(&request, recursive))
}

/// The fields of the messages `roots` reach (well-known types and map
/// entries aside) whose property only the default rule makes required: not
/// `optional`, not a oneof member, not `field_behavior = REQUIRED` nor
/// proto2 `required`, not left out by `skip` or `OUTPUT_ONLY`, and without
/// a `tool_field.required` of their own. A `deprecated` field without a
/// `tool_field` option is among them, though the schema leaves it out.
/// Whole-service mode writes `required: false` on these
/// ([`crate::overlay::PlainFields::Optional`]).
pub(crate) fn plain_fields(roots: &[MessageDescriptor]) -> Vec<FieldDescriptor> {
    let Some(first) = roots.first() else {
        return Vec::new();
    };
    let ann = Annotations::new(first.parent_pool());
    let (mut visited, mut messages) = (HashSet::new(), Vec::new());
    for root in roots {
        reachable(root, &mut visited, &mut messages);
    }
    messages
        .iter()
        .filter(|m| !m.is_map_entry() && well_known(m).is_none())
        .flat_map(MessageDescriptor::fields)
        .filter(|field| {
            let a = ann.tool_field(field);
            a.required.is_none()
                && !a.skip
                && !a.output_only
                && !a.behavior_required
                && field.cardinality() != Cardinality::Required
                && real_oneof(field).is_none()
                && !is_optional(field)
        })
        .collect()
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
