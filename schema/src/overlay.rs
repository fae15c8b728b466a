//! Annotations from outside the proto: an overlay file, and whole-service
//! mode.
//!
//! A proto you do not own (vendored etcd, Google APIs, a partner's service)
//! cannot carry `rpc_tool` and `tool_field`. An overlay gives the same
//! annotations by fully qualified selector, in TOML:
//!
//! ```toml
//! [methods."google.longrunning.Operations.GetOperation"]
//! name = "operations_get"
//! description = "Get the latest state of a long-running operation."
//! title = "Get an operation"   # optional; also `strict`, `destructive`, `output_schema`
//! consent = "confirm"           # optional: `allow`, `confirm` or `block` (a person's consent)
//! timeout = "30s"               # optional: the tool's deadline, over the server's default
//! read_only = true              # optional: it changes nothing
//! # optional: example calls, each one JSON object of the arguments
//! examples = ['{"name": "operations/build-42"}']
//!
//! # A method of a service exposed whole keeps its derived name and its
//! # comment: an entry without `name` marks it read-only and nothing else.
//! [methods."google.longrunning.Operations.ListOperations"]
//! read_only = true
//!
//! [fields."google.longrunning.GetOperationRequest.name"]
//! alias_prefix = "operation"   # also `skip`, `usage_notes`, `description`, `sensitive`
//! required = true              # optional; `false` lets the model leave it out
//! ```
//!
//! `read_only = true` says what `option idempotency_level =
//! NO_SIDE_EFFECTS;` says inline, and is written into the descriptors as
//! exactly that option: the tool's hints become read-only and idempotent
//! ([`ToolHints`](crate::ToolHints), MCP's `readOnlyHint`), and a selection
//! that keeps the read-only tools ([`select`](crate::select): `ai_tools!`'s
//! `read_only = true`, `--read-only`) keeps it, on protos you do not own.
//! An entry is either a tool (`name` and `description`, both, and any of
//! the other keys) or, for a method that is a tool already (annotated
//! inline, or of a service exposed whole), `read_only = true` alone. The
//! key says `true` only (`false` is what leaving it out says), and is an
//! error on a method that is no tool, one whose proto gives an
//! `idempotency_level` already (`NO_SIDE_EFFECTS`: annotate it in one
//! place; `IDEMPOTENT`: it may change something), and one that is
//! `destructive` too: each located at the key.
//!
//! `examples` are `rpc_tool.examples`: each string the JSON text of one
//! whole arguments object, checked against the tool's schema once the
//! overlay is written in ([`crate::examples`]); one that does not fit is
//! an error located at its string in the overlay.
//!
//! TOML, not a text-format proto: every diagnostic must point into the
//! overlay at `file:line:column`, and a TOML parser keeps the span of every
//! key, where prost-reflect's text-format parser keeps none.
//!
//! Whole-service mode ([`annotate`]'s `services`) makes every unary and
//! server-streaming method of the named services a tool without any
//! annotation: the name is [`derived_tool_name`], the description the
//! method's leading comment (or a sentence saying there is none).
//!
//! Which fields are required differs by mode. A method annotated inline
//! (`rpc_tool` in the proto) keeps the rule of its author: every field that
//! is not `optional` or a oneof member is required. The protos of a service
//! exposed whole were written for another purpose, where a plain proto3
//! field is one a caller may leave unset (an update request lists every
//! field it could change), so there only fields marked
//! `(google.api.field_behavior) = REQUIRED` are required: Google's API
//! convention, and the executor accepts the others missing.
//! [`PlainFields::Required`] brings the inline rule back for whole
//! services, and the overlay's `required = true|false` (the field option
//! `tool_field.required`) decides for one field, in any mode.
//!
//! Both work by writing the annotations into the descriptors themselves, as
//! if they were written inline, so everything downstream (schemas,
//! diagnostics, the executor reading the embedded descriptors at run time)
//! sees one set of annotations. An annotation given both inline and in the
//! overlay is an error; so is a selector that matches nothing (naming the
//! closest one). Diagnostics about an annotation that came from the overlay
//! are located in the overlay ([`Annotated::relocate`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use prost_reflect::ReflectMessage as _;
use prost_reflect::prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, ExtensionDescriptor, FieldDescriptor, FileDescriptor,
    MessageDescriptor, MethodDescriptor, Value,
};
use serde::Deserialize;
use toml::Spanned;

use crate::annotation_protos::{RPC_TOOL_EXTENSION, TOOL_FIELD_EXTENSION};
use crate::diagnostic::Diagnostic;
use crate::names::validate_tool_name;
use crate::proto::{
    IDEMPOTENCY_IDEMPOTENT, IDEMPOTENCY_NO_SIDE_EFFECTS, METHOD_IDEMPOTENCY_LEVEL, METHOD_OPTIONS,
    RPC_TOOL_CONSENT, RPC_TOOL_DESTRUCTIVE, RPC_TOOL_EXAMPLES, RPC_TOOL_OUTPUT_SCHEMA,
    RPC_TOOL_TIMEOUT, TOOL_FIELD_REQUIRED, TOOL_FIELD_SENSITIVE, carried_rpc_tool, idempotency,
    leading_comment, option_location, option_location_field,
};
use crate::tool_spec::ConsentPolicy;

mod naming;
pub use naming::{derived_tool_name, derived_tool_name_in_full};
#[cfg(test)]
use naming::{same_noun, snake_case};

/// A parsed overlay file.
#[derive(Debug, Clone)]
pub struct Overlay {
    file: String,
    text: String,
    methods: BTreeMap<Spanned<String>, MethodOverlay>,
    fields: BTreeMap<Spanned<String>, FieldOverlay>,
}

/// What `rpc_tool` gives inline (`name` and `description` make a tool;
/// [`Overlay::parse`] checks that both or neither are given), and
/// `read_only`, what `idempotency_level = NO_SIDE_EFFECTS` says inline.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MethodOverlay {
    name: Option<String>,
    description: Option<String>,
    strict: Option<bool>,
    title: Option<String>,
    destructive: Option<bool>,
    /// The tool's deadline, protojson Duration text (`"30s"`, `"0.5s"`).
    timeout: Option<Spanned<String>>,
    /// `true`: the method changes nothing (`false` is refused: it is what
    /// leaving the key out says).
    read_only: Option<Spanned<bool>>,
    /// Example calls, each the JSON text of one arguments object.
    examples: Option<Spanned<Vec<Spanned<String>>>>,
    /// Whether an MCP server lists the tool's `outputSchema` whatever its
    /// default (`rpc_tool.output_schema`).
    output_schema: Option<Spanned<bool>>,
    /// Whether a person must approve each call (`rpc_tool.consent`):
    /// `allow`, `confirm` or `block`.
    consent: Option<Spanned<String>>,
}

impl MethodOverlay {
    /// The tool this entry annotates the method as, `rpc_tool`'s `name` and
    /// `description`; `None` for an entry of hints only.
    fn tool(&self) -> Option<(&str, &str)> {
        Some((self.name.as_deref()?, self.description.as_deref()?))
    }

    /// Whether the entry says `read_only = true`.
    fn read_only(&self) -> bool {
        self.read_only.as_ref().is_some_and(|r| *r.get_ref())
    }

    /// The keys given that only a tool takes (`rpc_tool`'s), besides
    /// `name` and `description`.
    fn tool_keys(&self) -> Vec<&'static str> {
        [
            ("strict", self.strict.is_some()),
            ("title", self.title.is_some()),
            ("destructive", self.destructive.is_some()),
            ("timeout", self.timeout.is_some()),
            ("examples", self.examples.is_some()),
            ("output_schema", self.output_schema.is_some()),
            ("consent", self.consent.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, given)| given.then_some(key))
        .collect()
    }
}

/// What `tool_field` gives inline.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldOverlay {
    #[serde(default)]
    skip: bool,
    alias_prefix: Option<String>,
    usage_notes: Option<String>,
    description: Option<String>,
    required: Option<bool>,
    /// `tool_field.sensitive`: no log writes the field's value.
    #[serde(default)]
    sensitive: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverlayFile {
    #[serde(default)]
    methods: BTreeMap<Spanned<String>, MethodOverlay>,
    #[serde(default)]
    fields: BTreeMap<Spanned<String>, FieldOverlay>,
}

impl Overlay {
    /// Parses the overlay `text`, read from `file` (the name diagnostics use).
    ///
    /// # Errors
    ///
    /// A TOML syntax error, an unknown key or a value of the wrong type, and
    /// a `[methods]` entry that is neither a tool nor `read_only = true`
    /// alone (a `name` without a `description` or the reverse, a tool's key
    /// without them, nothing at all), that says `read_only = false`, or
    /// that says both `read_only = true` and `destructive = true`: each
    /// located in the overlay.
    ///
    /// # Examples
    ///
    /// ```
    /// let overlay = proto_ai_tools_schema::overlay::Overlay::parse(
    ///     "etcd.tools.toml",
    ///     "[methods.\"etcdserverpb.KV.Range\"]\nname = \"etcd_range\"\ndescription = \"Read keys.\"\n",
    /// )
    /// .expect("a valid overlay");
    /// assert_eq!(overlay.file(), "etcd.tools.toml");
    ///
    /// let bad = proto_ai_tools_schema::overlay::Overlay::parse("x.toml", "[methods.\"a.B.C\"]\nnmae = \"x\"\n")
    ///     .unwrap_err();
    /// assert!(bad[0].to_string().starts_with("x.toml:2:1: "), "{}", bad[0]);
    /// ```
    pub fn parse(file: &str, text: &str) -> Result<Self, Vec<Diagnostic>> {
        match toml::from_str::<OverlayFile>(text) {
            Ok(parsed) => {
                let overlay = Self {
                    file: file.to_owned(),
                    text: text.to_owned(),
                    methods: parsed.methods,
                    fields: parsed.fields,
                };
                let problems = overlay.method_entry_problems();
                if problems.is_empty() {
                    Ok(overlay)
                } else {
                    Err(problems)
                }
            }
            Err(error) => {
                let (line, column) = error
                    .span()
                    .map(|span| line_column(text, span.start))
                    .unzip();
                Err(vec![Diagnostic {
                    file: file.to_owned(),
                    line,
                    column,
                    message: format!("invalid overlay: {}", error.message()),
                }])
            }
        }
    }

    /// The file name diagnostics use.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// What is wrong with the `[methods]` entries on their own: a tool entry
    /// needs `name` and `description` both; an entry without them gives
    /// `read_only = true` and nothing else; `read_only = false` says
    /// nothing; a read-only method destroys nothing.
    fn method_entry_problems(&self) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        for (selector, entry) in &self.methods {
            let at = format!("`[methods.\"{}\"]`", selector.get_ref());
            match (&entry.name, &entry.description) {
                (Some(_), Some(_)) => {}
                (Some(_), None) | (None, Some(_)) => {
                    let (given, missing) = if entry.name.is_some() {
                        ("name", "description")
                    } else {
                        ("description", "name")
                    };
                    problems.push(self.diagnostic(
                        selector,
                        format!(
                            "{at} gives `{given}` but no `{missing}`: a tool needs both (an entry with neither only marks the method `read_only = true`)"
                        ),
                    ));
                }
                (None, None) => {
                    let tool_keys = entry.tool_keys();
                    if !tool_keys.is_empty() {
                        let keys: Vec<String> =
                            tool_keys.iter().map(|key| format!("`{key}`")).collect();
                        problems.push(self.diagnostic(
                            selector,
                            format!(
                                "{at} gives {} but no `name` and `description`: those are a tool's, give all of them (an entry without a name only marks the method `read_only = true`)",
                                keys.join(", ")
                            ),
                        ));
                    } else if entry.read_only.is_none() {
                        problems.push(self.diagnostic(
                            selector,
                            format!(
                                "{at} says nothing: give `name` and `description` to make the method a tool, or `read_only = true` to mark it read-only"
                            ),
                        ));
                    }
                }
            }
            if let Some(read_only) = &entry.read_only {
                if !*read_only.get_ref() {
                    problems.push(self.diagnostic(
                        read_only,
                        format!(
                            "`read_only = false` in {at} is what leaving it out says (a method is read-only only when its proto or its overlay says so); remove it"
                        ),
                    ));
                } else if entry.destructive == Some(true) {
                    problems.push(self.diagnostic(
                        read_only,
                        format!(
                            "{at} gives `read_only = true` and `destructive = true`; a method without side effects destroys nothing: drop one of them"
                        ),
                    ));
                }
            }
        }
        problems
    }

    fn diagnostic<T>(&self, selector: &Spanned<T>, message: String) -> Diagnostic {
        let (line, column) = line_column(&self.text, selector.span().start);
        Diagnostic {
            file: self.file.clone(),
            line: Some(line),
            column: Some(column),
            message,
        }
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// The descriptors with the overlay's and whole-service mode's annotations
/// written in.
#[derive(Debug)]
pub struct Annotated {
    /// The annotated pool.
    pub pool: DescriptorPool,
    /// The same, encoded as a `FileDescriptorSet` (custom options kept).
    pub encoded: Vec<u8>,
    /// Methods of the services exposed whole that are not tools, because a
    /// model cannot send a stream of requests: client- and
    /// bidirectional-streaming ones, by full name.
    pub left_out: Vec<String>,
    /// Proto location (file, line, column) of an element annotated from the
    /// overlay → the overlay location of that annotation.
    relocations: HashMap<(String, u32, u32), (String, u32, u32)>,
}

impl Annotated {
    /// `diagnostic` located in the overlay when it is about an annotation
    /// the overlay gave (its location is then the annotated element's, as
    /// an option written nowhere in the proto has no location of its own).
    pub fn relocate(&self, diagnostic: Diagnostic) -> Diagnostic {
        let (Some(line), Some(column)) = (diagnostic.line, diagnostic.column) else {
            return diagnostic;
        };
        match self
            .relocations
            .get(&(diagnostic.file.clone(), line, column))
        {
            Some((file, line, column)) => Diagnostic {
                file: file.clone(),
                line: Some(*line),
                column: Some(*column),
                ..diagnostic
            },
            None => diagnostic,
        }
    }
}

/// Whether whole-service mode makes the plain fields of the requests it
/// exposes required.
///
/// A plain field is one that is not `optional`, not a oneof member, not
/// `(google.api.field_behavior) = REQUIRED` (nor proto2 `required`), and
/// has no `tool_field.required` of its own, inline or from the overlay (see
/// the [module docs](self) for why the modes differ). The choice covers
/// every message the requests of the services' tools reach, except the
/// tools annotated inline; a message that such a request shares with an
/// inline tool's request is covered too (the rule is written on the
/// message's fields).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::PlainFields;
/// assert_eq!(PlainFields::default(), PlainFields::Optional);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PlainFields {
    /// The model may leave a plain field out; the server then sees it unset
    /// (its default value). Only `field_behavior = REQUIRED` fields are
    /// required. The default.
    #[default]
    Optional,
    /// Every plain field is required, as for a method annotated inline.
    Required,
}

/// Writes the overlay's annotations, and those of whole-service mode for
/// `services` (fully qualified service names; declared in `file` when it is
/// given), into the descriptors of `encoded` (a `FileDescriptorSet` of
/// `pool`).
///
/// `plain_fields` says whether the plain fields of the services' requests
/// are required ([`PlainFields`]); with [`PlainFields::Optional`] (the
/// default) this writes `tool_field.required = false` on each of them, and
/// never on a field whose `required` the proto or the overlay sets.
///
/// The annotation protos must be in `pool` (the macro compiles them in when
/// either is used).
///
/// # Errors
///
/// Every problem, each located: a selector that matches nothing (naming the
/// closest), an annotation given both inline and in the overlay, a
/// `read_only = true` on a method that is no tool, whose proto gives an
/// `idempotency_level` already, or that is `destructive`, a service
/// that is not in `file`, a derived name another method of the file already
/// has (the fix: name one of them in the overlay), and a `tool_field`
/// declared without `required` (a copy of the annotation protos older than
/// it) where `required` is to be written.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::{annotate, PlainFields};
/// use proto_ai_tools_schema::{AnnotationFileResolver, Dialect};
/// use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
///
/// // A proto written without ai-tools in mind.
/// struct Memory(&'static str);
/// impl FileResolver for Memory {
///     fn open_file(&self, name: &str) -> Result<File, protox::Error> {
///         match name {
///             "books.proto" => File::from_source(name, self.0),
///             _ => Err(protox::Error::file_not_found(name)),
///         }
///     }
/// }
/// let books = Memory(r#"
///     syntax = "proto3";
///     package books.v1;
///     import "google/api/field_behavior.proto";
///     message UpdateBookRequest {
///       string book_id = 1 [(google.api.field_behavior) = REQUIRED];
///       string title = 2;
///       int32 pages = 3;
///     }
///     message Book { string book_id = 1; }
///     service Books { rpc UpdateBook(UpdateBookRequest) returns (Book); }
/// "#);
/// let mut resolver = ChainFileResolver::new();
/// resolver.add(books);
/// resolver.add(AnnotationFileResolver);
/// resolver.add(GoogleFileResolver::new());
/// let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// compiler.include_imports(true).include_source_info(true);
/// compiler.open_file("books.proto").expect("compiles");
/// // Whole-service mode writes annotations: their protos must be in the pool.
/// for annotations in proto_ai_tools_schema::OVERLAY_ANNOTATION_PROTOS {
///     compiler.open_file(annotations).expect("compiles");
/// }
/// let (pool, encoded) = (compiler.descriptor_pool(), compiler.encode_file_descriptor_set());
///
/// let services = ["books.v1.Books".to_owned()];
/// let required = |plain_fields| {
///     let annotated = annotate(&pool, &encoded, Some("books.proto"), None, &services, plain_fields)
///         .expect("annotated");
///     let tools = proto_ai_tools_schema::tools_in_file(&annotated.pool, "books.proto").expect("tools");
///     tools[0].render(Dialect::JsonSchema)["required"].clone()
/// };
/// // By default an update sends only what it changes.
/// assert_eq!(required(PlainFields::Optional), serde_json::json!(["book_id"]));
/// assert_eq!(required(PlainFields::Required), serde_json::json!(["book_id", "title", "pages"]));
/// ```
pub fn annotate(
    pool: &DescriptorPool,
    encoded: &[u8],
    file: Option<&str>,
    overlay: Option<&Overlay>,
    services: &[String],
    plain_fields: PlainFields,
) -> Result<Annotated, Vec<Diagnostic>> {
    let origin = file.unwrap_or("the descriptor set");
    let missing = |what: &str| {
        vec![Diagnostic::unlocated(
            origin,
            format!(
                "{what} is missing from the descriptor pool; add `ai/context/v1/annotations.proto` and `ai/tools/v1/annotations.proto` (`ANNOTATION_DESCRIPTORS`)"
            ),
        )]
    };
    let rpc_tool = extension(pool, "google.protobuf.MethodOptions", RPC_TOOL_EXTENSION)
        .ok_or_else(|| missing("the `rpc_tool` extension"))?;
    let tool_field = extension(pool, "google.protobuf.FieldOptions", TOOL_FIELD_EXTENSION)
        .ok_or_else(|| missing("the `tool_field` extension"))?;
    let foreign = |ext: &ExtensionDescriptor| {
        vec![Diagnostic::unlocated(
            origin,
            format!(
                "`{}` (extension {} of `{}`) is not a message, so it is not ai-tools' annotation; another proto took its number",
                ext.full_name(),
                ext.number(),
                ext.containing_message().full_name()
            ),
        )]
    };
    let rpc_tool_type = message_of(&rpc_tool).ok_or_else(|| foreign(&rpc_tool))?;
    // What an option written in the proto may be under: `rpc_tool` by
    // either number (the overlay writes `rpc_tool` above).
    let inline = crate::proto::rpc_tool_extensions(pool);
    let tool_field_type = message_of(&tool_field).ok_or_else(|| foreign(&tool_field))?;
    // A copy of the annotation protos older than `required` cannot carry it.
    let takes_required = tool_field_type
        .get_field(TOOL_FIELD_REQUIRED)
        .is_some_and(|f| f.kind() == prost_reflect::Kind::Bool && !f.is_list());
    let no_required = || {
        format!(
            "`{}` has no `required` field (number {TOOL_FIELD_REQUIRED}): the descriptors hold a copy of `ai/tools/v1/annotations.proto` older than it; use the one ai-tools ships (`ANNOTATION_PROTOS`)",
            tool_field_type.full_name()
        )
    };
    let set_type = pool
        .get_message_by_name("google.protobuf.FileDescriptorSet")
        .ok_or_else(|| missing("`google/protobuf/descriptor.proto`"))?;
    let mut set = DynamicMessage::decode(set_type, encoded).map_err(|e| {
        vec![Diagnostic::unlocated(
            origin,
            format!("the compiled descriptors do not decode: {e}"),
        )]
    })?;

    let mut diags = Vec::new();
    let mut relocations = HashMap::new();
    let mut edits: Vec<Edit> = Vec::new();
    // Full name → tool name, for the methods the overlay names.
    let mut overlaid_methods: HashMap<String, String> = HashMap::new();
    // Full name → index in `edits`, for the fields the overlay names.
    let mut overlaid_fields: HashMap<String, usize> = HashMap::new();
    // The requests of the tools of the services exposed whole.
    let mut whole_requests: Vec<MessageDescriptor> = Vec::new();
    let mut left_out = Vec::new();

    // The methods the overlay marks `read_only = true`, with where it says so.
    let mut read_only: Vec<(&Spanned<bool>, MethodDescriptor)> = Vec::new();

    if let Some(overlay) = overlay {
        for (selector, entry) in &overlay.methods {
            let Some((name, description)) = entry.tool() else {
                // Hints only (`Overlay::parse` saw to it): the method may be
                // annotated inline or exposed whole.
                if let (Some(at), Some(method)) = (
                    &entry.read_only,
                    found::<MethodDescriptor>(pool, overlay, selector, &mut diags),
                ) {
                    read_only.push((at, method));
                }
                continue;
            };
            let Some(method) =
                overlaid::<MethodDescriptor>(pool, overlay, selector, &inline, &mut diags)
            else {
                continue;
            };
            let mut def = DynamicMessage::new(rpc_tool_type.clone());
            def.set_field_by_number(1, Value::String(name.to_owned()));
            def.set_field_by_number(2, Value::String(description.to_owned()));
            def.set_field_by_number(3, Value::Bool(entry.strict.unwrap_or(false)));
            if let Some(title) = &entry.title {
                def.set_field_by_number(4, Value::String(title.clone()));
            }
            if let Some(destructive) = entry.destructive {
                def.set_field_by_number(RPC_TOOL_DESTRUCTIVE, Value::Bool(destructive));
            }
            if let Some(timeout) = &entry.timeout {
                let Some(duration_type) = rpc_tool_type
                    .get_field(RPC_TOOL_TIMEOUT)
                    .and_then(|f| f.kind().as_message().cloned())
                    .filter(|m| m.full_name() == "google.protobuf.Duration")
                else {
                    diags.push(overlay.diagnostic(
                        timeout,
                        format!(
                            "`{}` has no `timeout` field (number {RPC_TOOL_TIMEOUT}): the descriptors hold a copy of the annotation protos older than it; use the ones ai-tools ships (`ANNOTATION_PROTOS`)",
                            rpc_tool_type.full_name()
                        ),
                    ));
                    continue;
                };
                let Some((seconds, nanos)) = crate::inbound::duration_parts(timeout.get_ref())
                else {
                    diags.push(overlay.diagnostic(
                        timeout,
                        format!(
                            "`timeout = \"{}\"` is not a duration: write seconds with an `s`, as protojson does, e.g. \"30s\" or \"0.5s\"",
                            timeout.get_ref()
                        ),
                    ));
                    continue;
                };
                let mut duration = DynamicMessage::new(duration_type);
                duration.set_field_by_number(1, Value::I64(seconds));
                duration.set_field_by_number(2, Value::I32(nanos));
                def.set_field_by_number(RPC_TOOL_TIMEOUT, Value::Message(duration));
            }
            if let Some(examples) = &entry.examples {
                let string = prost_reflect::Kind::String;
                let lacks =
                    lacks_field(&rpc_tool_type, RPC_TOOL_EXAMPLES, "examples", string, true);
                if let Some(why) = lacks {
                    diags.push(overlay.diagnostic(examples, why));
                    continue;
                }
                let texts = examples.get_ref().iter();
                def.set_field_by_number(
                    RPC_TOOL_EXAMPLES,
                    Value::List(texts.map(|t| Value::String(t.get_ref().clone())).collect()),
                );
            }
            if let Some(listed) = &entry.output_schema {
                let boolean = prost_reflect::Kind::Bool;
                let lacks = lacks_field(
                    &rpc_tool_type,
                    RPC_TOOL_OUTPUT_SCHEMA,
                    "output_schema",
                    boolean,
                    false,
                );
                if let Some(why) = lacks {
                    diags.push(overlay.diagnostic(listed, why));
                    continue;
                }
                def.set_field_by_number(RPC_TOOL_OUTPUT_SCHEMA, Value::Bool(*listed.get_ref()));
            }
            if let Some(consent) = &entry.consent {
                let takes_it = rpc_tool_type.get_field(RPC_TOOL_CONSENT).is_some_and(|f| {
                    matches!(f.kind(), prost_reflect::Kind::Enum(_)) && !f.is_list()
                });
                if !takes_it {
                    diags.push(overlay.diagnostic(
                        consent,
                        format!(
                            "`{}` has no `consent` field (number {RPC_TOOL_CONSENT}): the descriptors hold a copy of the annotation protos older than it; use the ones ai-tools ships (`ANNOTATION_PROTOS`)",
                            rpc_tool_type.full_name()
                        ),
                    ));
                    continue;
                }
                match consent.get_ref().parse::<ConsentPolicy>() {
                    Ok(policy) => {
                        def.set_field_by_number(
                            RPC_TOOL_CONSENT,
                            Value::EnumNumber(policy.number()),
                        );
                    }
                    Err(_) => {
                        diags.push(overlay.diagnostic(
                            consent,
                            format!(
                                "`consent = \"{}\"`: use \"allow\" (run without asking), \"confirm\" (a person approves each call) or \"block\" (never run)",
                                consent.get_ref()
                            ),
                        ));
                        continue;
                    }
                }
            }
            if let Some(at) = entry.read_only.as_ref().filter(|_| entry.read_only()) {
                read_only.push((at, method.clone()));
            }
            relocate_to(&mut relocations, overlay, selector, &method);
            overlaid_methods.insert(method.full_name().to_owned(), name.to_owned());
            edits.push(edit(&method, &rpc_tool, def));
        }
        for (selector, entry) in &overlay.fields {
            let Some(field) = overlaid::<FieldDescriptor>(
                pool,
                overlay,
                selector,
                std::slice::from_ref(&tool_field),
                &mut diags,
            ) else {
                continue;
            };
            let mut def = DynamicMessage::new(tool_field_type.clone());
            def.set_field_by_number(1, Value::Bool(entry.skip));
            let strings = [
                (2, &entry.alias_prefix),
                (3, &entry.usage_notes),
                (4, &entry.description),
            ];
            for (number, value) in strings {
                if let Some(value) = value {
                    def.set_field_by_number(number, Value::String(value.clone()));
                }
            }
            if let Some(required) = entry.required {
                if !takes_required {
                    diags.push(overlay.diagnostic(selector, no_required()));
                    continue;
                }
                def.set_field_by_number(TOOL_FIELD_REQUIRED, Value::Bool(required));
            }
            if entry.sensitive {
                let boolean = prost_reflect::Kind::Bool;
                let lacks = lacks_field(
                    &tool_field_type,
                    TOOL_FIELD_SENSITIVE,
                    "sensitive",
                    boolean,
                    false,
                );
                if let Some(why) = lacks {
                    diags.push(overlay.diagnostic(selector, why));
                    continue;
                }
                def.set_field_by_number(TOOL_FIELD_SENSITIVE, Value::Bool(true));
            }
            relocate_to(&mut relocations, overlay, selector, &field);
            overlaid_fields.insert(field.full_name().to_owned(), edits.len());
            edits.push(edit(&field, &tool_field, def));
        }
    }

    // The name each method exposed whole takes (see `derived_tool_name`).
    let derived_names = derived_names(pool, file, services, &overlaid_methods, &inline);
    // (file, tool name) → the method that has it, for the files of the
    // services exposed whole.
    let mut taken: HashMap<(String, String), String> = HashMap::new();
    let mut named_files: HashSet<String> = HashSet::new();
    // The methods whole-service mode makes tools under a derived name.
    let mut derived: HashSet<String> = HashSet::new();
    for service_name in services {
        let declared = |s: &prost_reflect::ServiceDescriptor| {
            file.is_none_or(|file| s.parent_file().name() == file)
        };
        let Some(service) = pool
            .get_service_by_name(service_name)
            .filter(|s| declared(s))
        else {
            let names: Vec<String> = pool
                .services()
                .filter(|s| declared(s))
                .map(|s| s.full_name().to_owned())
                .collect();
            diags.push(Diagnostic::unlocated(
                origin,
                format!(
                    "`services` names `{service_name}`, which `{origin}` does not declare{}",
                    closest_hint(service_name, &names)
                ),
            ));
            continue;
        };
        let fd = service.parent_file();
        if !named_files.contains(fd.name()) {
            named_files.insert(fd.name().to_owned());
            // The names given inline or by the overlay in this file: a
            // derived name must not take one (names are unique per file).
            for method in fd.services().flat_map(|s| s.methods().collect::<Vec<_>>()) {
                let given = overlaid_methods
                    .get(method.full_name())
                    .cloned()
                    .or_else(|| inline_tool_name(&method, &inline));
                if let Some(given) = given {
                    taken
                        .entry((fd.name().to_owned(), given))
                        .or_insert_with(|| method.full_name().to_owned());
                }
            }
        }
        for method in service.methods() {
            if carried_rpc_tool(&method, &inline).is_some() {
                continue;
            }
            if overlaid_methods.contains_key(method.full_name()) {
                // Named in the overlay, still a tool of the service.
                whole_requests.push(method.input());
                continue;
            }
            // A model sends one request per call: no client streams.
            if method.is_client_streaming() {
                left_out.push(method.full_name().to_owned());
                continue;
            }
            whole_requests.push(method.input());
            let description = leading_comment(&fd, method.path()).unwrap_or_else(|| {
                format!(
                    "Calls `{}`; the proto gives no description.",
                    method.full_name()
                )
            });
            let mut def = DynamicMessage::new(rpc_tool_type.clone());
            let name = derived_names
                .get(method.full_name())
                .cloned()
                .unwrap_or_else(|| derived_tool_name(service.name(), method.name()));
            debug_assert!(validate_tool_name(&name).is_ok(), "{name}");
            if let Some(other) = taken.get(&(fd.name().to_owned(), name.clone())) {
                let (line, column) = element_location(&fd, method.path()).unzip();
                diags.push(Diagnostic {
                    file: fd.name().to_owned(),
                    line,
                    column,
                    message: format!(
                        "whole-service mode derives the tool name `{name}` for `{}`, but `{other}` \
                         already has it; give one of them its own name in an overlay \
                         (`overlay = \"tools.toml\"`), whose entry takes the place of the \
                         derived name: `[methods.\"{}\"]` with `name = \"...\"` and \
                         `description = \"...\"`",
                        method.full_name(),
                        method.full_name()
                    ),
                });
                continue;
            }
            taken.insert(
                (fd.name().to_owned(), name.clone()),
                method.full_name().to_owned(),
            );
            derived.insert(method.full_name().to_owned());
            def.set_field_by_number(1, Value::String(name));
            def.set_field_by_number(2, Value::String(description));
            edits.push(edit(&method, &rpc_tool, def));
        }
    }
    if let Some(overlay) = overlay {
        for (at, method) in read_only {
            let is_tool = carried_rpc_tool(&method, &inline).is_some()
                || overlaid_methods.contains_key(method.full_name())
                || derived.contains(method.full_name());
            match read_only_problem(&method, &inline, is_tool) {
                Some(problem) => diags.push(overlay.diagnostic(at, problem)),
                None => edits.push((
                    method.parent_file().name().to_owned(),
                    method.path().to_vec(),
                    Target::Field(METHOD_IDEMPOTENCY_LEVEL),
                    Value::EnumNumber(IDEMPOTENCY_NO_SIDE_EFFECTS),
                )),
            }
        }
    }
    if plain_fields == PlainFields::Optional {
        let plain = crate::proto::plain_fields(&whole_requests);
        if !takes_required && !plain.is_empty() {
            diags.push(Diagnostic::unlocated(origin, no_required()));
        } else {
            optional_plain_fields(
                plain,
                &tool_field,
                &tool_field_type,
                &overlaid_fields,
                &mut edits,
            );
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }

    let options_field = |path: &[i32]| -> u32 {
        // `MethodDescriptorProto.options` is 4, `FieldDescriptorProto.options` 8:
        // a method path runs through `service` (6), a field path through
        // `message_type` (4) or `extension` (7).
        if path.first() == Some(&6) { 4 } else { 8 }
    };
    if let Some(Value::List(files)) = set.get_field_by_name_mut("file") {
        // File name → index, the first of a name winning: whole-service
        // mode may write an option on every field of a large set.
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (index, file) in files.iter().enumerate() {
            if let Value::Message(m) = file
                && let Some(name) = m.get_field_by_name("name")
                && let Some(name) = name.as_str()
            {
                by_name.entry(name.to_owned()).or_insert(index);
            }
        }
        for (file_name, path, target, value) in edits {
            let Some(Value::Message(file_proto)) =
                by_name.get(&file_name).and_then(|&i| files.get_mut(i))
            else {
                continue;
            };
            let Some(element) = at_path(file_proto, &path) else {
                continue;
            };
            let options = element.get_field_by_number_mut(options_field(&path));
            if let Some(Value::Message(options)) = options {
                match target {
                    Target::Extension(ext) => options.set_extension(&ext, value),
                    Target::Field(number) => {
                        if let Err(e) = options.try_set_field_by_number(number, value) {
                            return Err(vec![Diagnostic::unlocated(
                                origin,
                                format!(
                                    "`{}` cannot take field {number}: {e}; the descriptors hold a `google/protobuf/descriptor.proto` other than protobuf's",
                                    options.descriptor().full_name()
                                ),
                            )]);
                        }
                    }
                }
            }
        }
    }
    let encoded = set.encode_to_vec();
    let pool = DescriptorPool::decode(encoded.as_slice()).map_err(|e| {
        vec![Diagnostic::unlocated(
            origin,
            format!("the annotated descriptors do not build: {e}"),
        )]
    })?;
    if let Some(overlay) = overlay {
        let problems = example_problems(&pool, overlay);
        if !problems.is_empty() {
            return Err(problems);
        }
    }
    Ok(Annotated {
        pool,
        encoded,
        left_out,
        relocations,
    })
}

/// The overlay's examples that do not fit their tool's schema (in `pool`,
/// annotated), each located at its string in the overlay. A request past
/// the bounds of a tool is not checked here: reading the tools says so.
fn example_problems(pool: &DescriptorPool, overlay: &Overlay) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (selector, entry) in &overlay.methods {
        let Some(examples) = &entry.examples else {
            continue;
        };
        let Some(method) = <MethodDescriptor as Element>::find(pool, selector.get_ref()) else {
            continue;
        };
        let Some(schema) = crate::proto::request_schema(&method) else {
            continue;
        };
        let texts: Vec<String> = examples
            .get_ref()
            .iter()
            .map(|t| t.get_ref().clone())
            .collect();
        let checked = crate::examples::check_examples(&schema, &texts);
        for ((i, checked), at) in checked.into_iter().enumerate().zip(examples.get_ref()) {
            if let Err(why) = checked {
                let message = crate::examples::diagnostic(method.name(), i, &texts[i], &why);
                problems.push(overlay.diagnostic(at, message));
            }
        }
    }
    problems
}

/// `tool_field.required = false` for each of `plain`, the plain fields of
/// the requests of whole services ([`PlainFields::Optional`]): added to the field's
/// overlay entry in `edits`, or to a copy of its inline option, or as a new
/// option. Fields left out of the schema by the overlay's `skip`, or by
/// being `deprecated` without any `tool_field`, stay as they are (a
/// `tool_field` option would bring a deprecated field back).
fn optional_plain_fields(
    plain: Vec<FieldDescriptor>,
    tool_field: &ExtensionDescriptor,
    tool_field_type: &MessageDescriptor,
    overlaid_fields: &HashMap<String, usize>,
    edits: &mut Vec<Edit>,
) {
    let not_required = |def: &mut DynamicMessage| {
        def.set_field_by_number(TOOL_FIELD_REQUIRED, Value::Bool(false));
    };
    for field in plain {
        if let Some(&index) = overlaid_fields.get(field.full_name()) {
            if let Value::Message(def) = &mut edits[index].3 {
                let skip = def.get_field_by_number(1).and_then(|v| v.as_bool()) == Some(true);
                if !skip && !def.has_field_by_number(TOOL_FIELD_REQUIRED) {
                    not_required(def);
                }
            }
            continue;
        }
        let options = field.options();
        let mut def = if options.has_extension(tool_field) {
            // `plain_fields` left out an inline `skip` or `required`.
            match options.get_extension(tool_field).as_message() {
                Some(inline) => inline.clone(),
                None => continue,
            }
        } else {
            // Left out of the schema (the exposed-field rule of `proto.rs`).
            if crate::proto::is_deprecated(&field) {
                continue;
            }
            DynamicMessage::new(tool_field_type.clone())
        };
        not_required(&mut def);
        edits.push(edit(&field, tool_field, def));
    }
}

/// The name whole-service mode gives each method of `services` (declared
/// in `file` when given) that it makes a tool, by full name: its
/// [`derived_tool_name`], or its [`derived_tool_name_in_full`] where
/// another of them derives the same name or the proto or the overlay gives
/// it to a method of the same file. Counted over all of them at once, so no
/// name depends on the order of declaration; a clash left after this is
/// reported by [`annotate`].
fn derived_names(
    pool: &DescriptorPool,
    file: Option<&str>,
    services: &[String],
    overlaid_methods: &HashMap<String, String>,
    rpc_tools: &[ExtensionDescriptor],
) -> HashMap<String, String> {
    let mut seen = HashSet::new();
    let exposed: Vec<prost_reflect::ServiceDescriptor> = services
        .iter()
        .filter_map(|name| pool.get_service_by_name(name))
        .filter(|s| file.is_none_or(|file| s.parent_file().name() == file))
        .filter(|s| seen.insert(s.full_name().to_owned()))
        .collect();
    let mut given: HashSet<(String, String)> = HashSet::new();
    let files: HashSet<String> = exposed
        .iter()
        .map(|s| s.parent_file().name().to_owned())
        .collect();
    for fd in pool.files().filter(|fd| files.contains(fd.name())) {
        for method in fd.services().flat_map(|s| s.methods().collect::<Vec<_>>()) {
            let name = overlaid_methods
                .get(method.full_name())
                .cloned()
                .or_else(|| inline_tool_name(&method, rpc_tools));
            if let Some(name) = name {
                given.insert((fd.name().to_owned(), name));
            }
        }
    }
    let short: Vec<(MethodDescriptor, String)> = exposed
        .iter()
        .flat_map(|s| s.methods().collect::<Vec<_>>())
        .filter(|m| {
            carried_rpc_tool(m, rpc_tools).is_none()
                && !overlaid_methods.contains_key(m.full_name())
                && !m.is_client_streaming()
        })
        .map(|m| {
            let name = derived_tool_name(m.parent_service().name(), m.name());
            (m, name)
        })
        .collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, name) in &short {
        *count.entry(name.as_str()).or_default() += 1;
    }
    short
        .iter()
        .map(|(method, name)| {
            let file = method.parent_file().name().to_owned();
            let clashes = count.get(name.as_str()).is_some_and(|&n| n > 1)
                || given.contains(&(file, name.clone()));
            let name = if clashes {
                derived_tool_name_in_full(method.parent_service().name(), method.name())
            } else {
                name.clone()
            };
            (method.full_name().to_owned(), name)
        })
        .collect()
}

/// The tool name `method`'s inline `rpc_tool` option (under either number,
/// of `rpc_tools`) gives, if any.
fn inline_tool_name(
    method: &MethodDescriptor,
    rpc_tools: &[ExtensionDescriptor],
) -> Option<String> {
    let rpc_tool = carried_rpc_tool(method, rpc_tools)?;
    let options = method.options();
    let value = options.get_extension(rpc_tool);
    let name = value.as_message()?.get_field_by_number(1)?;
    name.as_str().map(str::to_owned)
}

fn extension(pool: &DescriptorPool, extendee: &str, number: u32) -> Option<ExtensionDescriptor> {
    pool.get_message_by_name(extendee)?.get_extension(number)
}

/// The message type of an annotation extension; `None` when a proto in the
/// pool declares an extension of another type under the same number.
/// Why the annotation type `annotation` (as the descriptors declare it)
/// cannot carry the overlay key `key`, field `number` of kind `kind` (a
/// list or not): a copy of the annotation protos older than that field.
/// `None` when it can.
fn lacks_field(
    annotation: &MessageDescriptor,
    number: u32,
    key: &str,
    kind: prost_reflect::Kind,
    list: bool,
) -> Option<String> {
    let takes_it = annotation
        .get_field(number)
        .is_some_and(|f| f.kind() == kind && f.is_list() == list);
    (!takes_it).then(|| {
        format!(
            "`{}` has no `{key}` field (number {number}): the descriptors hold a copy of the annotation protos older than it; use the ones ai-tools ships (`ANNOTATION_PROTOS`)",
            annotation.full_name()
        )
    })
}

fn message_of(ext: &ExtensionDescriptor) -> Option<MessageDescriptor> {
    match ext.kind() {
        prost_reflect::Kind::Message(m) => Some(m),
        _ => None,
    }
}

/// The message at `path` (pairs of field number and index) inside `root`.
fn at_path<'a>(root: &'a mut DynamicMessage, path: &[i32]) -> Option<&'a mut DynamicMessage> {
    let mut here = root;
    for pair in path.chunks(2) {
        let [number, index] = pair else { return None };
        let number = u32::try_from(*number).ok()?;
        let index = usize::try_from(*index).ok()?;
        let Some(Value::List(items)) = here.get_field_by_number_mut(number) else {
            return None;
        };
        let Some(Value::Message(next)) = items.get_mut(index) else {
            return None;
        };
        here = next;
    }
    Some(here)
}

/// What the overlay annotates: a method (with `rpc_tool`) or a field
/// (with `tool_field`).
trait Element: Sized {
    /// The word diagnostics name it by: `method` or `field`.
    const KIND: &'static str;
    /// The option that annotates it inline.
    const OPTION: &'static str;
    /// The element a selector (`package.Service.Method`,
    /// `package.Message.field`) names.
    fn find(pool: &DescriptorPool, selector: &str) -> Option<Self>;
    /// The full name of every element of the kind in `pool`.
    fn all_names(pool: &DescriptorPool) -> Vec<String>;
    fn full_name(&self) -> &str;
    fn parent_file(&self) -> FileDescriptor;
    fn path(&self) -> &[i32];
    fn options(&self) -> DynamicMessage;
}

/// The accessors of [`Element`], each the descriptor's own method of the
/// same name (an inherent method comes first in `Self::name`).
macro_rules! forward_accessors {
    () => {
        fn full_name(&self) -> &str {
            Self::full_name(self)
        }

        fn parent_file(&self) -> FileDescriptor {
            Self::parent_file(self)
        }

        fn path(&self) -> &[i32] {
            Self::path(self)
        }

        fn options(&self) -> DynamicMessage {
            Self::options(self)
        }
    };
}

impl Element for MethodDescriptor {
    const KIND: &'static str = "method";
    const OPTION: &'static str = "rpc_tool";

    fn find(pool: &DescriptorPool, selector: &str) -> Option<Self> {
        let (service, method) = selector.rsplit_once('.')?;
        pool.get_service_by_name(service)?
            .methods()
            .find(|m| m.name() == method)
    }

    fn all_names(pool: &DescriptorPool) -> Vec<String> {
        let mut names = Vec::new();
        for service in pool.services() {
            names.extend(service.methods().map(|m| m.full_name().to_owned()));
        }
        names
    }

    forward_accessors!();
}

impl Element for FieldDescriptor {
    const KIND: &'static str = "field";
    const OPTION: &'static str = "tool_field";

    fn find(pool: &DescriptorPool, selector: &str) -> Option<Self> {
        let (message, field) = selector.rsplit_once('.')?;
        pool.get_message_by_name(message)?.get_field_by_name(field)
    }

    fn all_names(pool: &DescriptorPool) -> Vec<String> {
        let mut names = Vec::new();
        for message in pool.all_messages() {
            names.extend(message.fields().map(|f| f.full_name().to_owned()));
        }
        names
    }

    forward_accessors!();
}

/// The element the overlay's `selector` names; else `None`, with the
/// diagnostic in `diags`, located at the selector, naming the closest.
fn found<E: Element>(
    pool: &DescriptorPool,
    overlay: &Overlay,
    selector: &Spanned<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<E> {
    let element = E::find(pool, selector.get_ref());
    if element.is_none() {
        diags.push(overlay.diagnostic(
            selector,
            format!(
                "no {} `{}` in the protos{}",
                E::KIND,
                selector.get_ref(),
                closest_hint(selector.get_ref(), &E::all_names(pool))
            ),
        ));
    }
    element
}

/// The element the overlay's `selector` names, when it can take the
/// overlay's annotation; else `None`, with the diagnostic in `diags`,
/// located at the selector: no such element (naming the closest), or one
/// annotated inline already (with an option of one of `exts`, the
/// extensions the annotation is read under).
fn overlaid<E: Element>(
    pool: &DescriptorPool,
    overlay: &Overlay,
    selector: &Spanned<String>,
    exts: &[ExtensionDescriptor],
    diags: &mut Vec<Diagnostic>,
) -> Option<E> {
    let element = found::<E>(pool, overlay, selector, diags)?;
    let options = element.options();
    if exts.iter().any(|ext| options.has_extension(ext)) {
        diags.push(overlay.diagnostic(
            selector,
            format!(
                "`{}` already has an inline `{}` option ({}); annotate it in one place",
                element.full_name(),
                E::OPTION,
                place(&element.parent_file(), element.path())
            ),
        ));
        return None;
    }
    Some(element)
}

/// What an edit writes in an element's options.
enum Target {
    /// An annotation: `rpc_tool`, `tool_field`.
    Extension(ExtensionDescriptor),
    /// A field of the options message itself: `idempotency_level`.
    Field(u32),
}

/// An annotation to write: file name, element path, what, value.
type Edit = (String, Vec<i32>, Target, Value);

/// The edit that writes `def` as `element`'s option `ext`.
fn edit<E: Element>(element: &E, ext: &ExtensionDescriptor, def: DynamicMessage) -> Edit {
    (
        element.parent_file().name().to_owned(),
        element.path().to_vec(),
        Target::Extension(ext.clone()),
        Value::Message(def),
    )
}

/// Why the overlay's `read_only = true` cannot be written on `method`
/// (a tool when `is_tool`), if it cannot: the method is no tool, its proto
/// says its `idempotency_level` already (the same, or `IDEMPOTENT`: that it
/// may change something), or its inline `rpc_tool` (under either number, of
/// `rpc_tools`) says `destructive: true`.
fn read_only_problem(
    method: &MethodDescriptor,
    rpc_tools: &[ExtensionDescriptor],
    is_tool: bool,
) -> Option<String> {
    let name = method.full_name();
    if !is_tool {
        return Some(format!(
            "`{name}` is marked `read_only = true` but is not a tool: annotate it (`rpc_tool` inline, or `name` and `description` in this entry) or expose its service whole (`services`)"
        ));
    }
    let file = method.parent_file();
    let place = |(line, column): (Option<u32>, Option<u32>)| match (line, column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", file.name()),
        _ => file.name().to_owned(),
    };
    let level = |text: &str| {
        let at = option_location(
            &file,
            method.path(),
            METHOD_OPTIONS,
            METHOD_IDEMPOTENCY_LEVEL,
        );
        format!(
            "`{name}` has `idempotency_level = {text}` inline ({})",
            place(at)
        )
    };
    match idempotency(method) {
        IDEMPOTENCY_NO_SIDE_EFFECTS => {
            return Some(format!(
                "{}: it is read-only already; annotate it in one place",
                level("NO_SIDE_EFFECTS")
            ));
        }
        IDEMPOTENCY_IDEMPOTENT => {
            return Some(format!(
                "{}, which says it may change something; `read_only = true` contradicts it: annotate it in one place",
                level("IDEMPOTENT")
            ));
        }
        _ => {}
    }
    let destructive = carried_rpc_tool(method, rpc_tools)
        .map(|rpc_tool| method.options().get_extension(rpc_tool).into_owned())
        .and_then(|def| {
            def.as_message()?
                .get_field_by_number(RPC_TOOL_DESTRUCTIVE)?
                .as_bool()
        });
    if destructive == Some(true) {
        let at = option_location_field(
            &file,
            method.path(),
            METHOD_OPTIONS,
            crate::proto::rpc_tool_number(method),
            i32::try_from(RPC_TOOL_DESTRUCTIVE).unwrap_or(i32::MAX),
        );
        return Some(format!(
            "`{name}` is `destructive: true` in its inline `rpc_tool` ({}); a method without side effects destroys nothing: drop one of them",
            place(at)
        ));
    }
    None
}

/// `; did you mean `x`?` for the closest of `names` by edit distance.
fn closest_hint(wanted: &str, names: &[String]) -> String {
    names
        .iter()
        .min_by_key(|name| edit_distance(wanted, name))
        .map(|name| format!("; did you mean `{name}`?"))
        .unwrap_or_default()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// `file:line:col` of the element at `path`, or the file name.
fn place(file: &FileDescriptor, path: &[i32]) -> String {
    match element_location(file, path) {
        Some((line, column)) => format!("{}:{line}:{column}", file.name()),
        None => file.name().to_owned(),
    }
}

fn element_location(file: &FileDescriptor, path: &[i32]) -> Option<(u32, u32)> {
    let info = file.file_descriptor_proto().source_code_info.as_ref()?;
    let loc = info.location.iter().find(|l| l.path == path)?;
    let [line, column, ..] = loc.span[..] else {
        return None;
    };
    let one_based = |n: i32| u32::try_from(n).ok().map(|n| n.saturating_add(1));
    Some((one_based(line)?, one_based(column)?))
}

/// Records that diagnostics located at `element` belong at the overlay's
/// `selector`.
fn relocate_to<E: Element>(
    relocations: &mut HashMap<(String, u32, u32), (String, u32, u32)>,
    overlay: &Overlay,
    selector: &Spanned<String>,
    element: &E,
) {
    let file = element.parent_file();
    if let Some((line, column)) = element_location(&file, element.path()) {
        let (to_line, to_column) = line_column(&overlay.text, selector.span().start);
        relocations.insert(
            (file.name().to_owned(), line, column),
            (overlay.file.clone(), to_line, to_column),
        );
    }
}

#[cfg(test)]
mod tests;
