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

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use prost_reflect::{
    Cardinality, DescriptorPool, DynamicMessage, EnumDescriptor, ExtensionDescriptor,
    FieldDescriptor, FileDescriptor, Kind as PKind, MessageDescriptor, MethodDescriptor,
    OneofDescriptor, Syntax, Value,
};

use crate::ir::{self, Object, Property, Schema};
use crate::names::{validate_alias_prefix, validate_tool_name};
use crate::{
    Diagnostic, FIELD_BEHAVIOR_EXTENSION, FieldAlias, RPC_TOOL_EXTENSION, TOOL_FIELD_EXTENSION,
    ToolHints, ToolSpec,
};

/// `FieldDescriptorProto.options`
const FIELD_OPTIONS: i32 = 8;
/// `MethodDescriptorProto.options`
const METHOD_OPTIONS: i32 = 4;
/// `google.protobuf.MethodOptions.IdempotencyLevel.NO_SIDE_EFFECTS`
const IDEMPOTENCY_NO_SIDE_EFFECTS: i32 = 1;
/// `google.protobuf.MethodOptions.IdempotencyLevel.IDEMPOTENT`
const IDEMPOTENCY_IDEMPOTENT: i32 = 2;
/// `google.api.FieldBehavior.REQUIRED`
const BEHAVIOR_REQUIRED: i32 = 2;
/// `google.api.FieldBehavior.OUTPUT_ONLY`
const BEHAVIOR_OUTPUT_ONLY: i32 = 3;
/// `ai.tools.v1.ToolFieldOptions.required`
pub(crate) const TOOL_FIELD_REQUIRED: u32 = 5;

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
/// left out of the schema or on a member of a oneof of two or more), and a
/// file without any annotated method.
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
/// let result = ai_tools_schema::proto::tools_in_file_each(&pool, "none.proto", |tool| {
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
            let Some(def) = ann.rpc_tool(&method) else {
                continue;
            };
            // Locations are looked up only for a diagnostic: a lookup scans
            // the file's source locations, and a large file has many.
            let opt = || option_location(&fd, method.path(), METHOD_OPTIONS, RPC_TOOL_EXTENSION);
            let option_field = |method: &MethodDescriptor, field| {
                option_location_field(
                    &fd,
                    method.path(),
                    METHOD_OPTIONS,
                    RPC_TOOL_EXTENSION,
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
                    option_field(&method, 5),
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
            each(ann.tool_spec(&method, def, recursive));
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
    let ann = Annotations::new(message.parent_pool());
    ann.root_schema(message, recursive_messages(&ann, message))
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

/// The leading comment of the element at `path` in `file`: comment lines with
/// one leading space stripped, joined with `\n`, trimmed; `None` if empty or
/// the file has no source info.
///
/// This scans the file's source locations; [`tools_in_file`] looks comments
/// up through an index built once per file instead.
pub fn leading_comment(file: &FileDescriptor, path: &[i32]) -> Option<String> {
    let info = file.file_descriptor_proto().source_code_info.as_ref()?;
    let location = info.location.iter().find(|l| l.path == path)?;
    clean_comment(location.leading_comments.as_deref()?)
}

/// A raw leading comment as the model reads it: one leading space stripped
/// per line, lines joined with `\n`, trimmed; `None` when nothing is left.
fn clean_comment(raw: &str) -> Option<String> {
    let text = raw
        .lines()
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The leading comments of the files of a pool, indexed by descriptor path
/// once per file: looking each element's comment up by scanning every
/// location made schema building quadratic in the size of a file.
#[derive(Default)]
struct Comments {
    by_file: RefCell<HashMap<String, Rc<CommentIndex>>>,
}

/// One file's cleaned leading comments by descriptor path.
type CommentIndex = HashMap<Vec<i32>, String>;

impl Comments {
    fn get(&self, file: &FileDescriptor, path: &[i32]) -> Option<String> {
        let index = Rc::clone(
            self.by_file
                .borrow_mut()
                .entry(file.name().to_owned())
                .or_insert_with(|| Rc::new(index_comments(file))),
        );
        index.get(path).cloned()
    }
}

fn index_comments(file: &FileDescriptor) -> CommentIndex {
    let Some(info) = file.file_descriptor_proto().source_code_info.as_ref() else {
        return HashMap::new();
    };
    let mut index = HashMap::new();
    for location in &info.location {
        if let Some(text) = location.leading_comments.as_deref().and_then(clean_comment) {
            // The first location of a path wins, as with a linear scan.
            index.entry(location.path.clone()).or_insert(text);
        }
    }
    index
}

/// The `rpc_tool` option of a method, read by number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct ToolDefinition {
    name: String,
    description: String,
    strict: bool,
    title: Option<String>,
    destructive: Option<bool>,
    /// `timeout` as written: seconds and nanos.
    timeout: Option<(i64, i32)>,
}

/// The number of `timeout` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_TIMEOUT: u32 = 6;

/// The longest deadline `rpc_tool.timeout` may give a tool: one day.
pub const MAX_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// A tool's deadline from the seconds and nanos of its `rpc_tool.timeout`:
/// more than zero and at most [`MAX_TOOL_TIMEOUT`], or why not.
pub(crate) fn tool_timeout(seconds: i64, nanos: i32) -> Result<std::time::Duration, String> {
    let text = duration_text(seconds, nanos);
    let too_long = || {
        format!(
            "`timeout` {text} is longer than a tool's deadline may be, {}s (one day)",
            MAX_TOOL_TIMEOUT.as_secs()
        )
    };
    if nanos.unsigned_abs() >= 1_000_000_000 {
        return Err(format!(
            "`timeout` has nanos {nanos}, out of range for a Duration"
        ));
    }
    if seconds < 0 || nanos < 0 || (seconds == 0 && nanos == 0) {
        return Err(format!(
            "`timeout` {text} is not a deadline: give a duration more than zero, e.g. 30s"
        ));
    }
    let seconds = u64::try_from(seconds).map_err(|_| too_long())?;
    let nanos = u32::try_from(nanos).map_err(|_| too_long())?;
    let timeout = std::time::Duration::new(seconds, nanos);
    if timeout > MAX_TOOL_TIMEOUT {
        return Err(too_long());
    }
    Ok(timeout)
}

/// A Duration's seconds and nanos as protojson writes it (`1.5s`, `-2s`).
fn duration_text(seconds: i64, nanos: i32) -> String {
    if nanos == 0 {
        return format!("{seconds}s");
    }
    let sign = if seconds < 0 || nanos < 0 { "-" } else { "" };
    let fraction = format!("{:09}", nanos.unsigned_abs());
    format!(
        "{sign}{}.{}s",
        seconds.unsigned_abs(),
        fraction.trim_end_matches('0')
    )
}

/// The `tool_field` option and `field_behavior` of a field, read by number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct FieldAnnotations {
    skip: bool,
    alias_prefix: Option<String>,
    usage_notes: Option<String>,
    description: Option<String>,
    output_only: bool,
    /// `field_behavior = REQUIRED`.
    behavior_required: bool,
    /// `tool_field.required`, when set: it decides whether the property is
    /// required.
    required: Option<bool>,
    /// The field carries a `tool_field` option at all.
    annotated: bool,
}

/// The extensions of one pool, found by number.
struct Annotations {
    rpc_tool: Option<ExtensionDescriptor>,
    tool_field: Option<ExtensionDescriptor>,
    field_behavior: Option<ExtensionDescriptor>,
    comments: Comments,
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
            comments: Comments::default(),
        }
    }

    /// The leading comment of a message, for its object's description.
    fn message_comment(&self, message: &MessageDescriptor) -> Option<String> {
        self.comments.get(&message.parent_file(), message.path())
    }

    /// "- `NAME`: comment" for every commented value the model may send, if any.
    fn enum_value_notes(&self, e: &EnumDescriptor) -> Option<String> {
        let file = e.parent_file();
        let lines: Vec<String> = e
            .values()
            .filter(is_choice)
            .filter_map(|v| {
                self.comments
                    .get(&file, v.path())
                    .map(|c| format!("- `{}`: {}", v.name(), c.replace('\n', " ")))
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
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
            title: string_field(msg, 4).filter(|t| !t.trim().is_empty()),
            destructive: msg.has_field_by_number(5).then(|| bool_field(msg, 5)),
            timeout: duration_field(msg, RPC_TOOL_TIMEOUT),
        })
    }

    fn tool_field(&self, field: &FieldDescriptor) -> FieldAnnotations {
        let mut out = FieldAnnotations::default();
        let options = field.options();
        if let Some(ext) = &self.tool_field
            && options.has_extension(ext)
            && let Value::Message(msg) = options.get_extension(ext).as_ref()
        {
            out.annotated = true;
            out.skip = bool_field(msg, 1);
            out.alias_prefix = string_field(msg, 2).filter(|s| !s.is_empty());
            out.usage_notes = string_field(msg, 3).filter(|s| !s.trim().is_empty());
            out.description = string_field(msg, 4).filter(|s| !s.trim().is_empty());
            out.required = msg
                .has_field_by_number(TOOL_FIELD_REQUIRED)
                .then(|| bool_field(msg, TOOL_FIELD_REQUIRED));
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
                    Some(BEHAVIOR_REQUIRED) => out.behavior_required = true,
                    _ => {}
                }
            }
        }
        out
    }

    /// `recursive`: the messages the request reaches that reach themselves
    /// ([`recursive_messages`]).
    fn tool_spec(
        &self,
        method: &MethodDescriptor,
        def: ToolDefinition,
        recursive: HashSet<String>,
    ) -> ToolSpec {
        let request = method.input();
        let response = method.output();
        ToolSpec {
            name: def.name,
            description: def.description.trim().to_owned(),
            strict: def.strict,
            title: def.title.map(|t| t.trim().to_owned()),
            hints: ToolHints {
                read_only: idempotency(method) == IDEMPOTENCY_NO_SIDE_EFFECTS,
                idempotent: matches!(
                    idempotency(method),
                    IDEMPOTENCY_NO_SIDE_EFFECTS | IDEMPOTENCY_IDEMPOTENT
                ),
                destructive: def.destructive,
            },
            timeout: def
                .timeout
                .and_then(|(seconds, nanos)| tool_timeout(seconds, nanos).ok()),
            service: method.parent_service().full_name().to_owned(),
            method: method.name().to_owned(),
            request: request.full_name().to_owned(),
            response: response.full_name().to_owned(),
            parameters: self.root_schema(&request, recursive),
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

    fn root_schema(&self, message: &MessageDescriptor, recursive: HashSet<String>) -> Schema {
        let mut builder = Builder {
            ann: self,
            recursive,
            defs: BTreeMap::new(),
        };
        let mut object = builder.object(message);
        object.defs = std::mem::take(&mut builder.defs);
        let mut schema = Schema::object(object);
        schema.description = self.message_comment(message);
        schema
    }

    /// The fields of `message` that appear in the schema: not `skip`, not
    /// `OUTPUT_ONLY`, and not `deprecated` unless a `tool_field` option says
    /// the model should still see it.
    fn schema_fields<'m>(
        &'m self,
        message: &'m MessageDescriptor,
    ) -> impl Iterator<Item = (FieldDescriptor, FieldAnnotations)> + 'm {
        message.fields().filter_map(|field| {
            let ann = self.tool_field(&field);
            exposed(&field, &ann).then_some((field, ann))
        })
    }

    /// What is wrong with `field`'s `tool_field.required`, if it is set and
    /// contradicts the server's contract or means nothing.
    fn required_problem(&self, field: &FieldDescriptor, ann: &FieldAnnotations) -> Option<String> {
        let name = field.full_name();
        match ann.required? {
            false if ann.behavior_required || field.cardinality() == Cardinality::Required => {
                let contract = if ann.behavior_required {
                    "`(google.api.field_behavior) = REQUIRED`"
                } else {
                    "a proto2 `required` field"
                };
                Some(format!(
                    "field `{name}` is {contract}, so the server refuses a request without it, but its `tool_field` says `required: false`; remove `required: false`: the model must send this field"
                ))
            }
            true if ann.skip || ann.output_only => {
                let why = if ann.skip {
                    "`skip: true`"
                } else {
                    "`(google.api.field_behavior) = OUTPUT_ONLY`"
                };
                Some(format!(
                    "field `{name}` is left out of the tool schema ({why}), so `required: true` asks for a field the model never sees; remove one of the two"
                ))
            }
            true => {
                let oneof = real_oneof(field)?;
                let members = oneof
                    .fields()
                    .filter(|member| exposed(member, &self.tool_field(member)))
                    .count();
                (members > 1).then(|| {
                    format!(
                        "field `{name}` is a member of oneof `{}`, whose one property holds exactly one of its {members} members and may be left out; `required: true` cannot apply to one member: remove it",
                        oneof.name()
                    )
                })
            }
            false => None,
        }
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
        // How many members of each oneof appear in the schema: a oneof of two
        // or more becomes one property whose value picks exactly one member.
        let mut oneof_sizes: HashMap<String, usize> = HashMap::new();
        for (field, _) in &fields {
            if let Some(oneof) = real_oneof(field) {
                *oneof_sizes.entry(oneof.full_name().to_owned()).or_default() += 1;
            }
        }
        for (field, ann) in fields {
            let mut schema = self.field_schema(&field);
            if let Some(prefix) = &ann.alias_prefix {
                schema = schema.alias_prefix(prefix.clone());
            }
            let mut description = ann
                .description
                .clone()
                .or_else(|| self.ann.comments.get(&field.parent_file(), field.path()));
            if description.is_none() && !field.is_list() && !field.is_map() {
                description = schema.description.take();
            }
            if let PKind::Enum(e) = field.kind() {
                description = join(description, self.ann.enum_value_notes(&e));
            }
            if let Some(notes) = &ann.usage_notes {
                description = join(description, Some(notes.trim().to_owned()));
            }
            schema.description = description;
            let oneof = real_oneof(&field);
            let property = Property {
                name: field.name().to_owned(),
                json_name: (field.json_name() != field.name())
                    .then(|| field.json_name().to_owned()),
                schema,
                required: is_required(&field, &ann),
            };
            match oneof {
                Some(oneof) if oneof_sizes[oneof.full_name()] > 1 => {
                    add_oneof_member(&mut object, &oneof, property, || {
                        self.ann.comments.get(&oneof.parent_file(), oneof.path())
                    });
                }
                _ => object.properties.push(property),
            }
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
            PKind::Double => Schema::number(),
            PKind::Float => float_schema(),
            PKind::Int32 | PKind::Sint32 | PKind::Sfixed32 => {
                Schema::integer_within(i32::MIN, i32::MAX)
            }
            PKind::Uint32 | PKind::Fixed32 => Schema::integer_within(u32::MIN, u32::MAX),
            PKind::Int64 | PKind::Sint64 | PKind::Sfixed64 => {
                Schema::integer_within(i64::MIN, i64::MAX)
            }
            PKind::Uint64 | PKind::Fixed64 => Schema::integer_within(u64::MIN, u64::MAX),
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
                def.description = self.ann.message_comment(message);
                self.defs.insert(name.to_owned(), def);
            }
            return Schema::reference(name);
        }
        let mut schema = Schema::object(self.object(message));
        schema.description = self.ann.message_comment(message);
        schema
    }
}

fn well_known(message: &MessageDescriptor) -> Option<Schema> {
    let schema = match message.full_name() {
        "google.protobuf.Timestamp" => Schema::string_format(ir::FORMAT_DATE_TIME),
        "google.protobuf.Duration" => Schema::string_pattern(ir::DURATION_PATTERN),
        "google.protobuf.FieldMask" => Schema::string_pattern(ir::FIELD_MASK_PATTERN),
        "google.protobuf.Struct" => Schema::object(Object::open()),
        "google.protobuf.Value" => Schema::any(),
        "google.protobuf.ListValue" => Schema::array(Schema::any()),
        "google.protobuf.DoubleValue" => Schema::number().nullable(),
        "google.protobuf.FloatValue" => float_schema().nullable(),
        "google.protobuf.Int64Value" => Schema::integer_within(i64::MIN, i64::MAX).nullable(),
        "google.protobuf.Int32Value" => Schema::integer_within(i32::MIN, i32::MAX).nullable(),
        "google.protobuf.UInt64Value" => Schema::integer_within(u64::MIN, u64::MAX).nullable(),
        "google.protobuf.UInt32Value" => Schema::integer_within(u32::MIN, u32::MAX).nullable(),
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
                "The type URL of the message, e.g. `type.googleapis.com/pkg.Message`; the message's fields sit beside it, or, for a `google.protobuf` well-known type, its JSON value in `value` (`{\"@type\": \"type.googleapis.com/google.protobuf.Duration\", \"value\": \"1.5s\"}`).",
            ),
            true,
        )),
        _ => return None,
    };
    Some(schema)
}

/// A `float`: protojson refuses a number beyond its range.
fn float_schema() -> Schema {
    Schema::number_within(f64::from(f32::MIN), f64::from(f32::MAX))
}

/// The values of an enum the model may send (see [`is_choice`]).
fn enum_schema(e: &EnumDescriptor) -> Schema {
    let values: Vec<String> = e
        .values()
        .filter(is_choice)
        .map(|v| v.name().to_owned())
        .collect();
    if values.is_empty() {
        // Only an `_UNSPECIFIED` value: leaving it out would leave nothing to send.
        Schema::enumeration(e.values().map(|v| v.name().to_owned()))
    } else {
        Schema::enumeration(values)
    }
}

/// Whether the model may send an enum value: every value but a zero value
/// named `*_UNSPECIFIED`, the proto style guide's "not set". Any other zero
/// value (`NONE = 0`, `EQUAL = 0`, `KEY = 0`) is a real choice.
pub fn is_choice(value: &prost_reflect::EnumValueDescriptor) -> bool {
    !(value.number() == 0 && value.name().ends_with("_UNSPECIFIED"))
}

/// Adds `member` to the property of its oneof in `object`, creating that
/// property (optional, described by the oneof's comment) at the first member.
fn add_oneof_member(
    object: &mut Object,
    oneof: &OneofDescriptor,
    member: Property,
    comment: impl FnOnce() -> Option<String>,
) {
    let existing = object
        .properties
        .iter_mut()
        .find(|p| p.name == oneof.name());
    if let Some(Property {
        schema: Schema {
            kind: ir::Kind::OneOf(one_of),
            ..
        },
        ..
    }) = existing
    {
        one_of.members.push(member);
        return;
    }
    let mut schema = Schema::one_of(vec![member], true);
    schema.description = comment();
    object.properties.push(Property {
        name: oneof.name().to_owned(),
        json_name: None,
        schema,
        required: false,
    });
}

fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b),
    }
}

/// The real (not synthetic `optional`) oneof of a field.
fn real_oneof(field: &FieldDescriptor) -> Option<OneofDescriptor> {
    field.containing_oneof().filter(|o| !o.is_synthetic())
}

/// Whether `field` appears in the schema: not `skip`, not `OUTPUT_ONLY`,
/// and not `deprecated` unless a `tool_field` option says the model should
/// still see it.
fn exposed(field: &FieldDescriptor, ann: &FieldAnnotations) -> bool {
    !ann.skip && !ann.output_only && (!is_deprecated(field) || ann.annotated)
}

/// Whether `field` is marked `deprecated = true`: left out of the schema
/// unless a `tool_field` option says the model should still see it.
pub(crate) fn is_deprecated(field: &FieldDescriptor) -> bool {
    field
        .field_descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.deprecated)
        .unwrap_or(false)
}

/// Whether the property of `field` is required: `tool_field.required` when
/// set, else `field_behavior = REQUIRED`, else the field is neither
/// `optional` nor a oneof member. A `required: false` that contradicts the
/// server's contract (`REQUIRED`, a proto2 `required` field) is a diagnostic
/// of [`tools_in_file`]; here the contract wins.
fn is_required(field: &FieldDescriptor, ann: &FieldAnnotations) -> bool {
    let contract = ann.behavior_required || field.cardinality() == Cardinality::Required;
    match ann.required {
        Some(required) => required || contract,
        None => contract || !(real_oneof(field).is_some() || is_optional(field)),
    }
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
/// `root` first, then depth-first in field order. Iterative: a proto may
/// chain messages deeper than a thread's stack.
fn reachable(
    root: &MessageDescriptor,
    visited: &mut HashSet<String>,
    out: &mut Vec<MessageDescriptor>,
) {
    let mut pending = vec![root.clone()];
    while let Some(message) = pending.pop() {
        if !visited.insert(message.full_name().to_owned()) {
            continue;
        }
        // Reversed, so that the first field's message is visited next.
        let fields: Vec<MessageDescriptor> = message
            .fields()
            .filter_map(|field| match field.kind() {
                PKind::Message(m) => Some(m),
                _ => None,
            })
            .collect();
        pending.extend(fields.into_iter().rev());
        out.push(message);
    }
}

/// Edges of the schema graph: the messages `m`'s schema fields spell out
/// (map values included, well-known types not), one per field that has one.
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

/// The most fields one tool's request schema may spell out, counting each
/// message at each use (see [`tools_in_file`]'s errors).
///
/// Far above what a model can use (OpenAI's strict mode takes 5,000
/// properties), and a bound on the work of reading a proto whose messages
/// each use the next twice: without it, 40 such levels would build 2^40
/// objects rather than end with an error.
pub const MAX_SPELLED_OUT_FIELDS: usize = 100_000;

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

/// A chain of messages nested in `root`'s schema that is longer than
/// [`MAX_NESTING_DEPTH`], outermost first, if there is one: from `root` or
/// from a `recursive` message's definition, each through messages that are
/// not recursive (a recursive one is a reference). It recurses at most
/// [`MAX_NESTING_DEPTH`] + 1 deep, however deep the proto goes.
fn too_deep_chain(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> Option<Vec<String>> {
    /// For each message measured: how many messages deep it nests (itself
    /// included) and the child on its deepest chain. Without recursive
    /// messages the graph has no cycle, so this holds at every use.
    type Known = HashMap<String, (usize, Option<String>)>;
    /// Measures `m` below the chain `path`; `Err` once the chain is past the
    /// bound, with `path` holding it up to the message where that was seen.
    fn measure(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        known: &mut Known,
        path: &mut Vec<String>,
    ) -> Result<usize, ()> {
        if let Some(&(depth, _)) = known.get(m.full_name()) {
            if path.len() + depth > MAX_NESTING_DEPTH {
                path.push(m.full_name().to_owned());
                return Err(());
            }
            return Ok(depth);
        }
        path.push(m.full_name().to_owned());
        if path.len() > MAX_NESTING_DEPTH {
            return Err(());
        }
        let mut deepest = (0, None);
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                let depth = measure(ann, &child, recursive, known, path)?;
                if depth > deepest.0 {
                    deepest = (depth, Some(child.full_name().to_owned()));
                }
            }
        }
        path.pop();
        known.insert(m.full_name().to_owned(), (deepest.0 + 1, deepest.1));
        Ok(deepest.0 + 1)
    }
    let pool = root.parent_pool();
    let mut known = Known::new();
    // Definitions in name order, so that the chain named is the same from
    // one build to the next.
    let mut definitions: Vec<&String> = recursive.iter().collect();
    definitions.sort();
    let starts = std::iter::once(root.clone()).chain(
        definitions
            .into_iter()
            .filter_map(|name| pool.get_message_by_name(name)),
    );
    for start in starts {
        // A definition starts a chain of its own: its uses are references.
        let mut path = vec![start.full_name().to_owned()];
        for child in children(ann, &start) {
            if !recursive.contains(child.full_name())
                && measure(ann, &child, recursive, &mut known, &mut path).is_err()
            {
                // Where a measured message completed the chain, follow its
                // deepest children to show the whole of it.
                while let Some((_, Some(next))) = path.last().and_then(|last| known.get(last)) {
                    path.push(next.clone());
                }
                return Some(path);
            }
        }
    }
    None
}

/// A chain of message names as `A` → `B` → …, its middle left out when long.
fn chain_text(chain: &[String]) -> String {
    const ENDS: usize = 3;
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" → ")
    };
    if chain.len() <= 2 * ENDS + 1 {
        return quoted(chain);
    }
    format!(
        "{} → … {} more … → {}",
        quoted(&chain[..ENDS]),
        chain.len() - 2 * ENDS,
        quoted(&chain[chain.len() - ENDS..])
    )
}

/// How many fields the schema of `root` spells out, counted without building
/// it: each message at each use, a `recursive` one once in the definitions.
/// Linear in the messages reached (each is counted once and added at each
/// use); saturating.
fn spelled_out_fields(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> usize {
    fn below(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        counted: &mut HashMap<String, usize>,
    ) -> usize {
        if let Some(&n) = counted.get(m.full_name()) {
            return n;
        }
        let mut n = ann.schema_fields(m).count();
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                n = n.saturating_add(below(ann, &child, recursive, counted));
            }
        }
        counted.insert(m.full_name().to_owned(), n);
        n
    }
    let mut counted = HashMap::new();
    let pool = root.parent_pool();
    let definitions = recursive
        .iter()
        .filter_map(|name| pool.get_message_by_name(name));
    definitions.fold(below(ann, root, recursive, &mut counted), |sum, def| {
        sum.saturating_add(below(ann, &def, recursive, &mut counted))
    })
}

/// The message of `root`'s schema spelled out most often, and how often
/// (saturating): what to name when [`spelled_out_fields`] is too many.
fn most_used_message(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> (String, usize) {
    // Uses flow from a message to its children, so visit parents first:
    // the reverse of a depth-first post-order (recursive messages are
    // references, so what is left has no cycle).
    fn post_order(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        seen: &mut HashSet<String>,
        out: &mut Vec<MessageDescriptor>,
    ) {
        if !seen.insert(m.full_name().to_owned()) {
            return;
        }
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                post_order(ann, &child, recursive, seen, out);
            }
        }
        out.push(m.clone());
    }
    // The root and each definition are spelled out once of themselves.
    let pool = root.parent_pool();
    let starts: Vec<MessageDescriptor> = std::iter::once(root.clone())
        .chain(
            recursive
                .iter()
                .filter_map(|name| pool.get_message_by_name(name)),
        )
        .collect();
    let (mut order, mut seen) = (Vec::new(), HashSet::new());
    let mut uses: HashMap<String, usize> = HashMap::new();
    for start in &starts {
        post_order(ann, start, recursive, &mut seen, &mut order);
        *uses.entry(start.full_name().to_owned()).or_default() += 1;
    }
    for m in order.iter().rev() {
        let here = uses.get(m.full_name()).copied().unwrap_or(0);
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                let entry = uses.entry(child.full_name().to_owned()).or_default();
                *entry = entry.saturating_add(here);
            }
        }
    }
    uses.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .unwrap_or_else(|| (root.full_name().to_owned(), 1))
}

/// Messages reachable from `root` (through fields in the schema) that can reach
/// themselves.
fn recursive_messages(ann: &Annotations, root: &MessageDescriptor) -> HashSet<String> {
    // The schema graph from `root`, messages numbered in the order found.
    let mut messages = vec![root.clone()];
    let mut number = HashMap::from([(root.full_name().to_owned(), 0usize)]);
    let mut edges: Vec<Vec<usize>> = Vec::new();
    while edges.len() < messages.len() {
        let from = children(ann, &messages[edges.len()]);
        let mut to = Vec::with_capacity(from.len());
        for child in from {
            let next = messages.len();
            let n = *number.entry(child.full_name().to_owned()).or_insert(next);
            if n == next {
                messages.push(child);
            }
            to.push(n);
        }
        edges.push(to);
    }
    // A message can reach itself when its strongly connected component has
    // more than one message, or it uses itself. Tarjan's algorithm, with an
    // explicit stack (a chain of messages may be deeper than a thread's
    // stack) and in linear time (a long chain must not cost its square).
    let n = messages.len();
    let (mut order, mut low) = (vec![usize::MAX; n], vec![0usize; n]);
    let (mut on_stack, mut stack) = (vec![false; n], Vec::new());
    let mut found = 0usize;
    let mut recursive = HashSet::new();
    for start in 0..n {
        if order[start] != usize::MAX {
            continue;
        }
        // Each frame: a message and how many of its edges are followed.
        let mut frames = vec![(start, 0usize)];
        order[start] = found;
        low[start] = found;
        found += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&(v, followed)) = frames.last() {
            if let Some(&w) = edges[v].get(followed) {
                if let Some(frame) = frames.last_mut() {
                    frame.1 += 1;
                }
                if order[w] == usize::MAX {
                    order[w] = found;
                    low[w] = found;
                    found += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 || edges[v].contains(&v) {
                    recursive.extend(
                        component
                            .into_iter()
                            .map(|w| messages[w].full_name().to_owned()),
                    );
                }
            }
        }
    }
    recursive
}

/// A method's `idempotency_level` (0: unknown).
fn idempotency(method: &MethodDescriptor) -> i32 {
    method
        .method_descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.idempotency_level)
        .unwrap_or(0)
}

fn string_field(msg: &DynamicMessage, number: u32) -> Option<String> {
    msg.get_field_by_number(number)
        .and_then(|v| v.as_str().map(str::to_owned))
}

/// The seconds and nanos of the `google.protobuf.Duration` field `number`,
/// when set.
fn duration_field(msg: &DynamicMessage, number: u32) -> Option<(i64, i32)> {
    if !msg.has_field_by_number(number) {
        return None;
    }
    let value = msg.get_field_by_number(number)?;
    let Value::Message(duration) = value.as_ref() else {
        return None;
    };
    let seconds = duration
        .get_field_by_number(1)
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let nanos = duration
        .get_field_by_number(2)
        .and_then(|v| v.as_i32())
        .unwrap_or(0);
    Some((seconds, nanos))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;
    use crate::ir::Kind;
    use crate::test_support::{HEADER, compile, compile_files};
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
        let float = json!({ "type": "number", "minimum": f64::from(f32::MIN), "maximum": f64::from(f32::MAX) });
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
            diags[1]
                .contains("field `t.Req.s`: alias prefix `Bad-Prefix` must start with a lowercase"),
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
        let pool = compile(
            "syntax = \"proto3\";\nmessage Req {}\nservice S { rpc M(Req) returns (Req); }\n",
        );
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
        let (rendered, violations) =
            on_a_small_stack(move || tools(&body).remove(0).render_checked());
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
                serde_json::Value::Array(items) => {
                    items.iter().map(objects_deep).max().unwrap_or(0)
                }
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
}
