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

use crate::names::{MAX_TOOL_NAME_LEN, validate_tool_name};
use crate::proto::{
    IDEMPOTENCY_IDEMPOTENT, IDEMPOTENCY_NO_SIDE_EFFECTS, METHOD_IDEMPOTENCY_LEVEL, METHOD_OPTIONS,
    RPC_TOOL_CONSENT, RPC_TOOL_DESTRUCTIVE, RPC_TOOL_EXAMPLES, RPC_TOOL_OUTPUT_SCHEMA,
    RPC_TOOL_TIMEOUT, TOOL_FIELD_REQUIRED, TOOL_FIELD_SENSITIVE, idempotency, leading_comment,
    option_location, option_location_field,
};
use crate::{Diagnostic, RPC_TOOL_EXTENSION, TOOL_FIELD_EXTENSION};

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

/// The tool name whole-service mode gives a method: `service_method` in
/// snake case, without the words that repeat, a letter first, at most 64
/// characters.
///
/// Two kinds of word are dropped, each only when something remains:
///
/// - a `Service` suffix of the service name (`SecretManagerService` →
///   `secret_manager`, `SqlInstancesService.List` → `sql_instances_list`);
/// - the service's resource noun where the method name repeats it, at
///   its start or as the object of its verb, right after its first word:
///   the service name's last words (the most that match), singular or
///   plural alike (`google.longrunning.Operations.ListOperations` →
///   `operations_list`, `Services.CreateService` → `services_create`,
///   `SqlBackupsService.GetBackup` → `sql_backups_get`,
///   `SchemaService.ListSchemaRevisions` → `schema_list_revisions`,
///   etcd's `Lease.LeaseGrant` → `lease_grant`). A noun further in is
///   part of another (`Instances.GetShieldedInstanceIdentity` keeps its
///   words).
///
/// A name still longer than 64 characters shortens the words of its
/// service part to their first three letters, the longest first, until it
/// fits (`OrganizationSecurityPolicies.ListPreconfiguredExpressionSets` →
/// `org_security_policies_list_preconfigured_expression_sets`); one that
/// does not fit even so keeps its start and ends in a hash of the whole, so
/// it stays unique and stable.
///
/// Where two methods of the services [`annotate`] exposes derive one name
/// (or a method derives a name the proto or the overlay gives another),
/// each of them keeps the words it dropped: it is named by
/// [`derived_tool_name_in_full`] instead. So no name depends on which of
/// them is declared first. A name given by `rpc_tool.name` or an overlay
/// entry is never derived.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::derived_tool_name;
/// assert_eq!(derived_tool_name("Operations", "ListOperations"), "operations_list");
/// assert_eq!(derived_tool_name("Services", "CreateService"), "services_create");
/// assert_eq!(derived_tool_name("SqlInstancesService", "List"), "sql_instances_list");
/// // Nothing would remain of the method, or of the service.
/// assert_eq!(derived_tool_name("Books", "Book"), "books_book");
/// assert_eq!(derived_tool_name("Service", "Get"), "service_get");
/// assert_eq!(derived_tool_name("KV", "Range"), "kv_range");
/// assert_eq!(derived_tool_name("_Internal", "V2Get"), "internal_v2_get");
/// let long = derived_tool_name(&"VeryLongServiceName".repeat(3), &"AndAnEvenLongerMethodName".repeat(2));
/// assert_eq!(long.len(), 64);
/// assert!(proto_ai_tools_schema::names::validate_tool_name(&long).is_ok());
/// ```
pub fn derived_tool_name(service: &str, method: &str) -> String {
    let mut service = words(service);
    if service.len() > 1 && service.last().is_some_and(|w| w == "service") {
        service.pop();
    }
    let mut method = words(method);
    if let Some((at, len)) = repeated_noun(&service, &method) {
        method.drain(at..at + len);
    }
    fitted(service, method)
}

/// The tool name whole-service mode gives a method whose
/// [`derived_tool_name`] another method derives too: every word kept
/// (`Operations.ListOperations` → `operations_list_operations`), shortened
/// past 64 characters as `derived_tool_name` shortens.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::overlay::derived_tool_name_in_full;
/// assert_eq!(derived_tool_name_in_full("Operations", "ListOperations"), "operations_list_operations");
/// assert_eq!(derived_tool_name_in_full("SecretManagerService", "GetSecret"), "secret_manager_service_get_secret");
/// ```
pub fn derived_tool_name_in_full(service: &str, method: &str) -> String {
    fitted(words(service), words(method))
}

/// The snake-case words of a proto name (`ListOperations` → `list`,
/// `operations`).
fn words(name: &str) -> Vec<String> {
    snake_case(name)
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Where `method` repeats the service's resource noun: the last words of
/// `service` (as many as match, at least one; its last word singular or
/// plural alike), first in `method` or else right after its first word
/// (its verb), with some word of `method` left beside them. The place and
/// how many words they are.
fn repeated_noun(service: &[String], method: &[String]) -> Option<(usize, usize)> {
    let at = |start: usize| {
        (1..=service.len()).rev().find(|&k| {
            let noun = &service[service.len() - k..];
            method.len() > k
                && method.get(start..start + k).is_some_and(|run| {
                    run[..k - 1] == noun[..k - 1] && same_noun(&run[k - 1], &noun[k - 1])
                })
        })
    };
    at(0).map(|k| (0, k)).or_else(|| at(1).map(|k| (1, k)))
}

/// Whether two words are one noun, singular or plural (`service`,
/// `services`; `policy`, `policies`; `address`, `addresses`).
fn same_noun(a: &str, b: &str) -> bool {
    let plural_of = |one: &str, many: &str| {
        many.strip_suffix('s')
            .is_some_and(|stem| stem == one || stem.strip_suffix('e') == Some(one))
            || many.strip_suffix("ies").is_some_and(|stem| {
                one.strip_suffix('y').is_some_and(|o| o == stem) && !stem.is_empty()
            })
    };
    a == b || plural_of(a, b) || plural_of(b, a)
}

/// `service` and `method` joined into a tool name of at most 64
/// characters, a letter first (see [`derived_tool_name`]).
fn fitted(mut service: Vec<String>, method: Vec<String>) -> String {
    let join = |service: &[String]| {
        let name = service
            .iter()
            .chain(&method)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("_");
        let name = name.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
        if name.is_empty() {
            "tool".to_owned()
        } else {
            name.to_owned()
        }
    };
    let whole = join(&service);
    let mut name = whole.clone();
    while name.len() > MAX_TOOL_NAME_LEN {
        // The longest word of the service part, the first of equals.
        let longest = service
            .iter()
            .enumerate()
            .filter(|(_, w)| w.len() > 3)
            .max_by(|(i, a), (j, b)| a.len().cmp(&b.len()).then(j.cmp(i)))
            .map(|(i, _)| i);
        let Some(i) = longest else { break };
        service[i].truncate(3);
        name = join(&service);
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        // FNV-1a: stable across builds and platforms.
        let hash = whole.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        name = whole;
        name.truncate(MAX_TOOL_NAME_LEN - 9);
        name = format!("{name}_{:08x}", hash & 0xffff_ffff);
    }
    name
}

fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
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
                overlaid::<MethodDescriptor>(pool, overlay, selector, &rpc_tool, &mut diags)
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
                match consent.get_ref().parse::<crate::ConsentPolicy>() {
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
            let Some(field) =
                overlaid::<FieldDescriptor>(pool, overlay, selector, &tool_field, &mut diags)
            else {
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
    let derived_names = derived_names(pool, file, services, &overlaid_methods, &rpc_tool);
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
                    .or_else(|| inline_tool_name(&method, &rpc_tool));
                if let Some(given) = given {
                    taken
                        .entry((fd.name().to_owned(), given))
                        .or_insert_with(|| method.full_name().to_owned());
                }
            }
        }
        for method in service.methods() {
            if method.options().has_extension(&rpc_tool) {
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
            let is_tool = method.options().has_extension(&rpc_tool)
                || overlaid_methods.contains_key(method.full_name())
                || derived.contains(method.full_name());
            match read_only_problem(&method, &rpc_tool, is_tool) {
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

/// The tool name `method`'s inline `rpc_tool` option gives, if any.
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
    rpc_tool: &ExtensionDescriptor,
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
                .or_else(|| inline_tool_name(&method, rpc_tool));
            if let Some(name) = name {
                given.insert((fd.name().to_owned(), name));
            }
        }
    }
    let short: Vec<(MethodDescriptor, String)> = exposed
        .iter()
        .flat_map(|s| s.methods().collect::<Vec<_>>())
        .filter(|m| {
            !m.options().has_extension(rpc_tool)
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

fn inline_tool_name(method: &MethodDescriptor, rpc_tool: &ExtensionDescriptor) -> Option<String> {
    let options = method.options();
    if !options.has_extension(rpc_tool) {
        return None;
    }
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
/// overlay's annotation `ext`; else `None`, with the diagnostic in `diags`,
/// located at the selector: no such element (naming the closest), or one
/// annotated inline already.
fn overlaid<E: Element>(
    pool: &DescriptorPool,
    overlay: &Overlay,
    selector: &Spanned<String>,
    ext: &ExtensionDescriptor,
    diags: &mut Vec<Diagnostic>,
) -> Option<E> {
    let element = found::<E>(pool, overlay, selector, diags)?;
    if element.options().has_extension(ext) {
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
/// may change something), or its inline `rpc_tool` says `destructive: true`.
fn read_only_problem(
    method: &MethodDescriptor,
    rpc_tool: &ExtensionDescriptor,
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
    let options = method.options();
    let destructive = options
        .has_extension(rpc_tool)
        .then(|| options.get_extension(rpc_tool))
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
            RPC_TOOL_EXTENSION,
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
mod tests {
    use super::*;
    use std::time::Duration;

    /// `annotate` on `test.proto` of `pool`, exposing `services` whole.
    fn annotate_test(
        pool: &DescriptorPool,
        overlay: Option<&Overlay>,
        services: &[&str],
        plain_fields: PlainFields,
    ) -> Result<Annotated, Vec<Diagnostic>> {
        let services: Vec<String> = services.iter().map(|&s| s.to_owned()).collect();
        let encoded = pool.encode_to_vec();
        let file = Some("test.proto");
        annotate(pool, &encoded, file, overlay, &services, plain_fields)
    }

    /// The tools of `test.proto` in `annotated`, or the diagnostics, each
    /// located where the annotation it is about was written.
    fn located_tools(annotated: &Annotated) -> Result<Vec<crate::ToolSpec>, Vec<String>> {
        crate::tools_in_file(&annotated.pool, "test.proto").map_err(|d| {
            d.into_iter()
                .map(|d| annotated.relocate(d).to_string())
                .collect()
        })
    }

    fn texts(diagnostics: Vec<Diagnostic>) -> Vec<String> {
        diagnostics.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("ListOperations"), "list_operations");
        assert_eq!(snake_case("KV"), "kv");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("getV2"), "get_v2");
    }

    #[test]
    fn whole_service_mode_takes_unary_and_server_streams_and_says_what_it_left() {
        let pool = crate::test_support::compile(&format!(
            "{}message Req {{}}\nservice Things {{\n  // Get a thing.\n  rpc Get(Req) returns (Req);\n  rpc Watch(Req) returns (stream Req);\n  rpc Upload(stream Req) returns (Req);\n  rpc Chat(stream Req) returns (stream Req);\n}}\n",
            crate::test_support::HEADER
        ));
        let annotated =
            annotate_test(&pool, None, &["t.Things"], PlainFields::default()).expect("annotated");
        assert_eq!(annotated.left_out, ["t.Things.Upload", "t.Things.Chat"]);
        let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["things_get", "things_watch"]);
        assert_eq!(tools[0].description, "Get a thing.");
        assert!(
            tools[1]
                .description
                .contains("the proto gives no description")
        );
    }

    #[test]
    fn derived_names_drop_the_words_that_repeat() {
        for (service, method, name) in [
            ("Services", "CreateService", "services_create"),
            ("SqlInstancesService", "List", "sql_instances_list"),
            (
                "SecretManagerService",
                "AccessSecretVersion",
                "secret_manager_access_secret_version",
            ),
            (
                "SchemaService",
                "ListSchemaRevisions",
                "schema_list_revisions",
            ),
            ("Operations", "GetOperation", "operations_get"),
            ("WorkerPools", "CreateWorkerPool", "worker_pools_create"),
            (
                "FirewallPolicies",
                "GetFirewallPolicy",
                "firewall_policies_get",
            ),
            ("Addresses", "MoveAddress", "addresses_move"),
            ("SqlBackupsService", "ListBackups", "sql_backups_list"),
            ("Lease", "LeaseGrant", "lease_grant"),
            ("Lease", "LeaseLeases", "lease_leases"),
            ("Auth", "AuthStatus", "auth_status"),
            ("Watch", "Watch", "watch_watch"),
            ("EkmService", "GetEkmConnection", "ekm_get_connection"),
            (
                "Instances",
                "GetShieldedInstanceIdentity",
                "instances_get_shielded_instance_identity",
            ),
            // Not the whole noun in a row, or nothing left beside it.
            (
                "FirewallPolicies",
                "GetIamPolicy",
                "firewall_policies_get_iam_policy",
            ),
            ("Books", "Book", "books_book"),
            ("Service", "Get", "service_get"),
        ] {
            assert_eq!(
                derived_tool_name(service, method),
                name,
                "{service}.{method}"
            );
        }
        assert!(same_noun("policy", "policies") && same_noun("address", "addresses"));
        assert!(!same_noun("policy", "police") && !same_noun("ies", "y"));
        // Too long even so: the service's words shortened, longest first.
        assert_eq!(
            derived_tool_name(
                "OrganizationSecurityPolicies",
                "ListPreconfiguredExpressionSets"
            ),
            "org_security_policies_list_preconfigured_expression_sets"
        );
    }

    /// The tool names `annotate` derives for every service of `source`.
    fn derived(source: &str, services: &[&str]) -> Vec<String> {
        let pool =
            crate::test_support::compile(&format!("{}{source}", crate::test_support::HEADER));
        let annotated =
            annotate_test(&pool, None, services, PlainFields::default()).expect("annotated");
        let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
        let mut names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
        names.sort();
        names
    }

    #[test]
    fn methods_whose_shortened_names_clash_keep_every_word() {
        // `Books.GetBook` and `Books.Get` both shorten to `books_get`;
        // `Books.DeleteBook` shortens to a name `Remove` is given inline;
        // `ShelvesService.ListShelves` and `Shelves.List` to `shelves_list`.
        let methods = [
            "  rpc GetBook(Req) returns (Req);\n",
            "  rpc Get(Req) returns (Req);\n",
            "  rpc ListBooks(Req) returns (Req);\n",
            "  rpc DeleteBook(Req) returns (Req);\n",
            "  rpc Remove(Req) returns (Req) {\n    option (ai.context.v1.rpc_tool) = { name: \"books_delete\" description: \"Remove.\" };\n  }\n",
        ];
        let shelves = "service ShelvesService {\n  rpc ListShelves(Req) returns (Req);\n}\nservice Shelves {\n  rpc List(Req) returns (Req);\n}\n";
        let expected = [
            "books_delete",
            "books_delete_book",
            "books_get",
            "books_get_book",
            "books_list",
            "shelves_list",
            "shelves_service_list_shelves",
        ];
        let services = ["t.Books", "t.ShelvesService", "t.Shelves"];
        let forward = format!(
            "message Req {{}}\nservice Books {{\n{}}}\n{shelves}",
            methods.concat()
        );
        assert_eq!(derived(&forward, &services), expected);
        // Declared the other way round, the same names.
        let backward = format!(
            "message Req {{}}\nservice Shelves {{\n  rpc List(Req) returns (Req);\n}}\nservice ShelvesService {{\n  rpc ListShelves(Req) returns (Req);\n}}\nservice Books {{\n{}}}\n",
            methods.iter().rev().copied().collect::<String>()
        );
        let mut reversed = services;
        reversed.reverse();
        assert_eq!(derived(&backward, &reversed), expected);
    }

    #[test]
    fn derived_names_that_clash_are_refused_with_the_overlay_fix() {
        let pool = crate::test_support::compile(&format!(
            "{}message Req {{}}\nservice Things {{\n  rpc GetURL(Req) returns (Req);\n  rpc GetUrl(Req) returns (Req);\n  rpc Ping(Req) returns (Req) {{\n    option (ai.context.v1.rpc_tool) = {{ name: \"things_list\" description: \"Ping.\" }};\n  }}\n  rpc List(Req) returns (Req);\n}}\n",
            crate::test_support::HEADER
        ));
        let problems = annotate_test(&pool, None, &["t.Things"], PlainFields::default())
            .expect_err("two methods derive `things_get_url`, and `things_list` is taken inline");
        assert_eq!(problems.len(), 2, "{problems:?}");
        let clash = &problems[0];
        assert!(clash.line.is_some(), "located at the method: {clash}");
        assert!(
            clash.message.contains("derives the tool name `things_get_url` for `t.Things.GetUrl`, but `t.Things.GetURL` already has it")
                && clash.message.contains("in an overlay")
                && clash.message.contains("`[methods.\"t.Things.GetUrl\"]` with `name = "),
            "{clash}"
        );
        assert!(
            problems[1]
                .message
                .contains("`things_list` for `t.Things.List`, but `t.Things.Ping` already has it"),
            "{}",
            problems[1]
        );
        // An overlay entry takes the place of the derived name.
        let overlay = Overlay::parse(
            "tools.toml",
            "[methods.\"t.Things.GetUrl\"]\nname = \"things_get_url_too\"\ndescription = \"Get.\"\n\n[methods.\"t.Things.List\"]\nname = \"things_list_all\"\ndescription = \"List.\"\n",
        )
        .expect("a valid overlay");
        let annotated = annotate_test(&pool, Some(&overlay), &["t.Things"], PlainFields::default())
            .expect("no clash left");
        let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "things_get_url",
                "things_get_url_too",
                "things_list",
                "things_list_all"
            ]
        );
    }

    #[test]
    fn another_extension_under_the_annotation_numbers_is_an_error_not_a_panic() {
        let source = "syntax = \"proto3\";\npackage x;\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MethodOptions { string mine = 52104; }\nextend google.protobuf.FieldOptions { string theirs = 52105; }\nmessage Req {}\nservice S { rpc Get(Req) returns (Req); }\n";
        let pool = crate::test_support::compile_files(&[("test.proto", source)], "test.proto");
        let problems = annotate_test(&pool, None, &["x.S"], PlainFields::default())
            .expect_err("not ai-tools' annotation");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("`x.mine` (extension 52104")
                && problems[0].message.contains("is not a message"),
            "{}",
            problems[0]
        );
    }

    /// `annotate` with `services` and `overlay` on `test.proto`, then the
    /// JSON Schema `required` of each tool, by name.
    fn required_by_tool(
        source: &str,
        overlay: Option<&Overlay>,
        plain_fields: PlainFields,
    ) -> Result<Vec<(String, serde_json::Value)>, Vec<String>> {
        let pool =
            crate::test_support::compile(&format!("{}{source}", crate::test_support::HEADER));
        let annotated = annotate_test(&pool, overlay, &["t.Books"], plain_fields).map_err(texts)?;
        let tools = located_tools(&annotated)?;
        Ok(tools
            .iter()
            .map(|t| {
                let schema = t.render(crate::Dialect::JsonSchema);
                (t.name.clone(), schema["required"].clone())
            })
            .collect())
    }

    const BOOKS: &str = "message Book { string book_id = 1; }
message UpdateBookRequest {
  string book_id = 1 [(google.api.field_behavior) = REQUIRED];
  string title = 2;
  string author = 3 [(ai.tools.v1.tool_field).usage_notes = 'Full name.'];
  int32 pages = 4;
  Details details = 5;
  string isbn = 6 [(ai.tools.v1.tool_field).required = true];
  string shelf = 7 [deprecated = true];
  repeated string tags = 8;
  map<string, string> labels = 9;
}
message Details { string publisher = 1; optional int32 year = 2; }
message Own { string name = 1; }
service Books {
  rpc UpdateBook(UpdateBookRequest) returns (Book);
  rpc Annotated(Own) returns (Book) {
    option (ai.context.v1.rpc_tool) = { name: \"books_own\" description: \"Own.\" };
  }
}
";

    #[test]
    fn whole_services_require_only_field_behavior_required_fields() {
        let required = required_by_tool(BOOKS, None, PlainFields::default()).expect("tools");
        assert_eq!(
            required,
            [
                (
                    "books_update".to_owned(),
                    serde_json::json!(["book_id", "isbn"])
                ),
                // Annotated inline: the inline rule.
                ("books_own".to_owned(), serde_json::json!(["name"])),
            ]
        );
        let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
        let annotated =
            annotate_test(&pool, None, &["t.Books"], PlainFields::Optional).expect("annotated");
        let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
        let update = tools[0].render(crate::Dialect::JsonSchema);
        // Nested messages too; an inline option keeps what it said; the
        // deprecated field stays out (an option would bring it back).
        assert_eq!(
            update["properties"]["details"]["required"],
            serde_json::Value::Null,
            "{update:#}"
        );
        assert!(
            update["properties"]["author"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("Full name.")),
            "{update:#}"
        );
        assert!(update["properties"].get("shelf").is_none(), "{update:#}");

        // The inline rule, asked for.
        let required = required_by_tool(BOOKS, None, PlainFields::Required).expect("tools");
        assert_eq!(
            required[0].1,
            serde_json::json!([
                "book_id", "title", "author", "pages", "details", "isbn", "tags", "labels"
            ])
        );
    }

    #[test]
    fn the_overlay_sets_required_and_whole_services_never_override_it() {
        let overlay = Overlay::parse(
            "tools.toml",
            "[fields.\"t.UpdateBookRequest.title\"]\nrequired = true\n\n[fields.\"t.UpdateBookRequest.pages\"]\ndescription = \"How many pages.\"\n\n[fields.\"t.Details.publisher\"]\nskip = true\n\n[fields.\"t.Own.name\"]\nrequired = false\n",
        )
        .expect("a valid overlay");
        let required =
            required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional).expect("tools");
        assert_eq!(
            required,
            [
                (
                    "books_update".to_owned(),
                    serde_json::json!(["book_id", "title", "isbn"])
                ),
                ("books_own".to_owned(), serde_json::Value::Null),
            ]
        );
        // Without whole services the overlay's `required` still decides.
        let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
        let annotated =
            annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional).expect("annotated");
        let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
        assert_eq!(tools.len(), 1);
        assert_eq!(
            tools[0].render(crate::Dialect::JsonSchema)["required"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn an_overlay_required_that_contradicts_the_proto_is_an_error_in_the_overlay() {
        let overlay = Overlay::parse(
            "tools.toml",
            "[fields.\"t.UpdateBookRequest.title\"]\nrequired = true\n\n[fields.\"t.UpdateBookRequest.book_id\"]\nrequired = false\n",
        )
        .expect("a valid overlay");
        let problems = required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional)
            .expect_err("a contradiction");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with("tools.toml:4:9: ")
                && problems[0].contains("field `t.UpdateBookRequest.book_id` is `(google.api.field_behavior) = REQUIRED`"),
            "{}",
            problems[0]
        );

        // Given inline and in the overlay: an error, as for every key.
        let overlay = Overlay::parse(
            "tools.toml",
            "[fields.\"t.UpdateBookRequest.isbn\"]\nrequired = false\n",
        )
        .expect("a valid overlay");
        let problems =
            required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional).expect_err("a conflict");
        assert!(
            problems[0].starts_with("tools.toml:1:9: ")
                && problems[0].contains("`t.UpdateBookRequest.isbn` already has an inline `tool_field` option (test.proto:"),
            "{problems:#?}"
        );

        let wrong = Overlay::parse(
            "tools.toml",
            "[fields.\"t.Own.name\"]\nrequired = \"yes\"\n",
        )
        .expect_err("not a boolean");
        assert!(
            wrong[0].to_string().starts_with("tools.toml:2:"),
            "{}",
            wrong[0]
        );
    }

    #[test]
    fn an_annotation_proto_without_required_is_an_error_where_it_is_needed() {
        // An older copy of `ai/tools/v1/annotations.proto`, shadowing ours.
        let old = "syntax = \"proto3\";\npackage ai.tools.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolFieldOptions { bool skip = 1; string alias_prefix = 2; string usage_notes = 3; string description = 4; }\nextend google.protobuf.FieldOptions { ToolFieldOptions tool_field = 52105; }\n";
        let source = "syntax = \"proto3\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\nimport \"ai/tools/v1/annotations.proto\";\nmessage Req { string name = 1; }\nservice Books { rpc Get(Req) returns (Req); }\n";
        let pool = crate::test_support::compile_files(
            &[
                ("test.proto", source),
                ("ai/tools/v1/annotations.proto", old),
            ],
            "test.proto",
        );
        let run = |plain_fields| annotate_test(&pool, None, &["t.Books"], plain_fields);
        let problems = run(PlainFields::Optional).expect_err("cannot write `required`");
        assert!(
            problems[0]
                .message
                .contains("has no `required` field (number 5)"),
            "{problems:?}"
        );
        // Nothing to write, nothing missing.
        assert!(run(PlainFields::Required).is_ok());
    }

    #[test]
    fn annotation_protos_older_than_output_schema_or_sensitive_are_an_error_at_the_key() {
        // Older copies of both annotation protos, shadowing ours: no
        // `rpc_tool.output_schema` (8), no `tool_field.sensitive` (6).
        let old_tools = "syntax = \"proto3\";\npackage ai.tools.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolFieldOptions { bool skip = 1; string alias_prefix = 2; string usage_notes = 3; string description = 4; optional bool required = 5; }\nextend google.protobuf.FieldOptions { ToolFieldOptions tool_field = 52105; }\n";
        let old_context = "syntax = \"proto3\";\npackage ai.context.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolDefinition { string name = 1; string description = 2; bool strict = 3; }\nextend google.protobuf.MethodOptions { ToolDefinition rpc_tool = 52104; }\n";
        let source = "syntax = \"proto3\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\nimport \"ai/tools/v1/annotations.proto\";\nmessage Req { string name = 1; }\nservice Books { rpc Get(Req) returns (Req); }\n";
        let pool = crate::test_support::compile_files(
            &[
                ("test.proto", source),
                ("ai/tools/v1/annotations.proto", old_tools),
                ("ai/context/v1/annotations.proto", old_context),
            ],
            "test.proto",
        );
        let overlay = Overlay::parse(
            "tools.toml",
            "[methods.\"t.Books.Get\"]\nname = \"get\"\ndescription = \"Get.\"\noutput_schema = true\n\n[fields.\"t.Req.name\"]\nsensitive = true\n",
        )
        .unwrap();
        let problems = annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional)
            .expect_err("neither key can be written");
        let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            texts.iter().any(|t| t.starts_with("tools.toml:4:")
                && t.contains(
                    "`ai.context.v1.ToolDefinition` has no `output_schema` field (number 8)"
                )),
            "{texts:#?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("tools.toml:6:")
                && t.contains(
                    "`ai.tools.v1.ToolFieldOptions` has no `sensitive` field (number 6)"
                )),
            "{texts:#?}"
        );
    }

    /// The tools of `BOOKS` with `overlay_text` annotating
    /// `t.Books.UpdateBook`, or the diagnostics, located.
    fn tools_with_overlay(overlay_text: &str) -> Result<Vec<crate::ToolSpec>, Vec<String>> {
        let overlay = Overlay::parse("tools.toml", overlay_text).map_err(texts)?;
        let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
        let annotated =
            annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional).map_err(texts)?;
        located_tools(&annotated)
    }

    #[test]
    fn the_overlay_gives_a_tool_its_deadline() {
        let method = "[methods.\"t.Books.UpdateBook\"]\nname = \"books_update\"\ndescription = \"Update.\"\n";
        let timeout_of = |text: &str| {
            tools_with_overlay(&format!("{method}timeout = \"{text}\"\n")).map(|tools| {
                let tool = tools
                    .iter()
                    .find(|t| t.name == "books_update")
                    .expect("the tool");
                tool.timeout
            })
        };
        assert_eq!(timeout_of("0.3s"), Ok(Some(Duration::from_millis(300))));
        assert_eq!(timeout_of("300s"), Ok(Some(Duration::from_secs(300))));
        assert_eq!(timeout_of("86400s"), Ok(Some(Duration::from_secs(86_400))));
        assert_eq!(timeout_of("1.000000001s"), Ok(Some(Duration::new(1, 1))));
        // No key, no deadline of its own; the inline tool has none either.
        let tools = tools_with_overlay(method).expect("tools");
        assert!(tools.iter().all(|t| t.timeout.is_none()), "{tools:?}");

        // Text that is not a protojson duration: located at the value.
        for bad in ["soon", "30", "1.s", "1.0000000001s", "s", "1m", " 1s"] {
            let problems = timeout_of(bad).expect_err(bad);
            assert_eq!(problems.len(), 1, "{problems:#?}");
            assert!(
                problems[0].starts_with("tools.toml:4:11: ")
                    && problems[0].contains("is not a duration"),
                "{bad}: {problems:#?}"
            );
        }
        // A duration that is no deadline: located at the method's selector.
        for (bad, why) in [
            ("0s", "is not a deadline"),
            ("-5s", "is not a deadline"),
            ("-0.5s", "is not a deadline"),
            ("86400.5s", "longer than a tool's deadline may be, 86400s"),
        ] {
            let problems = timeout_of(bad).expect_err(bad);
            assert_eq!(problems.len(), 1, "{problems:#?}");
            assert!(
                problems[0].starts_with("tools.toml:1:10: ")
                    && problems[0].contains("rpc `UpdateBook`: `timeout`")
                    && problems[0].contains(why),
                "{bad}: {problems:#?}"
            );
        }
        // Not a string: the TOML parser says where.
        let wrong = tools_with_overlay(&format!("{method}timeout = 30\n")).expect_err("a number");
        assert!(wrong[0].starts_with("tools.toml:4:"), "{wrong:#?}");
    }

    #[test]
    fn selectors_that_match_nothing_or_an_inline_option_are_located_in_the_overlay() {
        let problems = tools_with_overlay(
            "[methods.\"t.Books.UpdateBok\"]\nname = \"x\"\ndescription = \"X.\"\n\n\
             [methods.\"t.Books.Annotated\"]\nname = \"y\"\ndescription = \"Y.\"\n\n\
             [fields.\"t.UpdateBookRequest.titel\"]\nskip = true\n\n\
             [fields.\"t.UpdateBookRequest.author\"]\nskip = true\n",
        )
        .expect_err("four bad selectors");
        assert_eq!(
            problems,
            [
                "tools.toml:5:10: `t.Books.Annotated` already has an inline `rpc_tool` option (test.proto:22:3); annotate it in one place",
                "tools.toml:1:10: no method `t.Books.UpdateBok` in the protos; did you mean `t.Books.UpdateBook`?",
                "tools.toml:12:9: `t.UpdateBookRequest.author` already has an inline `tool_field` option (test.proto:10:3); annotate it in one place",
                "tools.toml:9:9: no field `t.UpdateBookRequest.titel` in the protos; did you mean `t.UpdateBookRequest.title`?",
            ]
        );
    }

    #[test]
    fn the_overlay_gives_a_tool_its_examples() {
        let method = "[methods.\"t.Books.UpdateBook\"]\nname = \"books_update\"\ndescription = \"Update.\"\n";
        let full = r#"{"book_id": "b-1", "title": "Dune", "author": "Frank Herbert", "pages": 412, "details": {"publisher": "Chilton", "year": 1965}, "isbn": "9780441013593", "tags": ["sf"], "labels": {"shelf": "a"}}"#;
        // Annotated from the overlay, the tool keeps the inline rule: every
        // plain field is required (the year is `optional`).
        let minimal = r#"{"book_id": "b-2", "title": "Emma", "author": "Jane Austen", "pages": 474, "details": {"publisher": "John Murray"}, "isbn": "9780141439587", "tags": [], "labels": {}}"#;
        let examples_of = |examples: &str| {
            tools_with_overlay(&format!("{method}examples = {examples}\n")).map(|tools| {
                let tool = tools
                    .iter()
                    .find(|t| t.name == "books_update")
                    .expect("the tool");
                tool.examples.clone()
            })
        };
        let examples = examples_of(&format!("['{full}', '{minimal}']")).expect("they fit");
        assert_eq!(
            examples,
            [
                serde_json::from_str::<serde_json::Value>(full).expect("JSON"),
                serde_json::from_str(minimal).expect("JSON"),
            ]
        );
        // The inline tool has none; a tool without the key has none.
        let tools = tools_with_overlay(method).expect("tools");
        assert!(tools.iter().all(|t| t.examples.is_empty()), "{tools:?}");

        // An example that does not fit: located at its own string, the
        // value at fault named.
        let many = minimal.replace("474", "\"many\"");
        let problems = examples_of(&format!("[\n  '{minimal}',\n  '{many}',\n]"))
            .expect_err("pages is no number");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with("tools.toml:6:3: rpc `UpdateBook`: example 2 (`{\"book_id\": \"b-2\"")
                && problems[0].ends_with("…`) does not fit the tool: `pages` is `many`, which is not a whole number in digits; send a whole number"),
            "{problems:#?}"
        );
        // Accepted inbound (proto3 sends defaults for what is missing), but
        // the schema requires it.
        let untitled = minimal.replace(r#""title": "Emma", "#, "");
        let problems = examples_of(&format!("['{untitled}']")).expect_err("no title");
        assert!(
            problems[0].ends_with(
                "does not fit the tool: the example lacks `title`, which the schema requires"
            ),
            "{problems:#?}"
        );
        // Not JSON; a key the schema does not have.
        let problems = examples_of("['{\"book_id\": ', '{\"book_id\": \"b\", \"colour\": 1}']")
            .expect_err("two bad examples");
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].starts_with("tools.toml:4:13: ") && problems[0].contains("is not JSON"),
            "{problems:#?}"
        );
        assert!(
            problems[1].starts_with("tools.toml:4:29: ")
                && problems[1].contains("unknown argument `colour`"),
            "{problems:#?}"
        );
        // Not a list of strings: the TOML parser says where.
        let wrong = tools_with_overlay(&format!("{method}examples = [{{ book_id = \"b\" }}]\n"))
            .expect_err("a table");
        assert!(wrong[0].starts_with("tools.toml:4:"), "{wrong:#?}");
        // A tool's key: not on an entry of hints only.
        let hints_only = Overlay::parse(
            "tools.toml",
            "[methods.\"t.Books.Annotated\"]\nread_only = true\nexamples = ['{}']\n",
        )
        .expect_err("examples without a tool");
        assert!(
            hints_only[0]
                .to_string()
                .contains("gives `examples` but no `name` and `description`"),
            "{hints_only:#?}"
        );
    }

    #[test]
    fn durations_parse_as_protojson_writes_them() {
        let parse_duration = crate::inbound::duration_parts;
        assert_eq!(parse_duration("30s"), Some((30, 0)));
        assert_eq!(parse_duration("0.5s"), Some((0, 500_000_000)));
        assert_eq!(parse_duration("-1.25s"), Some((-1, -250_000_000)));
        assert_eq!(parse_duration("1.000000001s"), Some((1, 1)));
        for bad in ["", "s", "1", "-s", "1.s", ".5s", "1e3s", "+1s", "1.5ms"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    const SHELF: &str = "message Req { string id = 1; }
service Shelf {
  // Get a book.
  rpc GetBook(Req) returns (Req);
  rpc DeleteBook(Req) returns (Req);
  rpc CountBooks(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: \"shelf_count\" description: \"Count the books.\" };
  }
  rpc Peek(Req) returns (Req) {
    option idempotency_level = NO_SIDE_EFFECTS;
  }
  rpc Audit(Req) returns (Req) {
    option idempotency_level = IDEMPOTENT;
  }
  rpc Burn(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: \"shelf_burn\" description: \"Burn a book.\" destructive: true };
  }
}
service Other { rpc Ping(Req) returns (Req); }
";

    /// The overlay's `consent` is `rpc_tool.consent`; a word it does not
    /// know is an error at the key.
    #[test]
    fn consent_from_the_overlay() {
        let pool = crate::test_support::compile(&format!("{}{SHELF}", crate::test_support::HEADER));
        let consent =
            |text: &str| -> Result<Vec<(String, Option<crate::ConsentPolicy>)>, Vec<String>> {
                let overlay = Overlay::parse("tools.toml", text).map_err(texts)?;
                let annotated = annotate_test(&pool, Some(&overlay), &[], PlainFields::default())
                    .map_err(texts)?;
                Ok(located_tools(&annotated)?
                    .into_iter()
                    .map(|t| (t.name, t.consent))
                    .collect())
            };
        let tools = consent(
            "[methods.\"t.Shelf.DeleteBook\"]\nname = \"shelf_delete\"\ndescription = \"Delete a book.\"\nconsent = \"block\"\n\n[methods.\"t.Shelf.GetBook\"]\nname = \"shelf_get\"\ndescription = \"Get a book.\"\nconsent = \"allow\"\n",
        )
        .expect("tools");
        assert!(
            tools.contains(&("shelf_delete".to_owned(), Some(crate::ConsentPolicy::Block))),
            "{tools:?}"
        );
        assert!(
            tools.contains(&("shelf_get".to_owned(), Some(crate::ConsentPolicy::Allow))),
            "{tools:?}"
        );
        assert!(
            tools.contains(&("shelf_count".to_owned(), None)),
            "{tools:?}"
        );
        let wrong = consent(
            "[methods.\"t.Shelf.DeleteBook\"]\nname = \"shelf_delete\"\ndescription = \"Delete a book.\"\nconsent = \"ask\"\n",
        )
        .expect_err("refused");
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(
            wrong[0].starts_with("tools.toml:4:11: `consent = \"ask\"`: use \"allow\""),
            "{wrong:?}"
        );
    }

    /// A tool as the read-only tests see it: name, description, read-only,
    /// idempotent.
    type Hinted = (String, String, bool, bool);

    /// The tools of `SHELF` with `overlay_text` and `services` exposed
    /// whole; or the problems, located.
    fn shelf(overlay_text: &str, services: &[&str]) -> Result<Vec<Hinted>, Vec<String>> {
        let overlay = Overlay::parse("tools.toml", overlay_text).map_err(texts)?;
        let pool = crate::test_support::compile(&format!("{}{SHELF}", crate::test_support::HEADER));
        let annotated = annotate_test(&pool, Some(&overlay), services, PlainFields::default())
            .map_err(texts)?;
        let tools = located_tools(&annotated)?;
        Ok(tools
            .into_iter()
            .map(|t| (t.name, t.description, t.hints.read_only, t.hints.idempotent))
            .collect())
    }

    fn tool(name: &str, description: &str, read_only: bool, idempotent: bool) -> Hinted {
        (
            name.to_owned(),
            description.to_owned(),
            read_only,
            idempotent,
        )
    }

    #[test]
    fn read_only_marks_tools_inline_whole_and_of_the_overlay() {
        // Alone in an entry: a method of a service exposed whole keeps its
        // derived name and comment, one annotated inline its annotation.
        let tools = shelf(
            "[methods.\"t.Shelf.GetBook\"]\nread_only = true\n\n[methods.\"t.Shelf.CountBooks\"]\nread_only = true\n",
            &["t.Shelf"],
        )
        .expect("tools");
        assert_eq!(
            tools,
            [
                tool("shelf_get_book", "Get a book.", true, true),
                tool(
                    "shelf_delete_book",
                    "Calls `t.Shelf.DeleteBook`; the proto gives no description.",
                    false,
                    false
                ),
                tool("shelf_count", "Count the books.", true, true),
                tool(
                    "shelf_peek",
                    "Calls `t.Shelf.Peek`; the proto gives no description.",
                    true,
                    true
                ),
                tool(
                    "shelf_audit",
                    "Calls `t.Shelf.Audit`; the proto gives no description.",
                    false,
                    true
                ),
                tool("shelf_burn", "Burn a book.", false, false),
            ]
        );

        // Beside a tool's keys, with no service exposed whole.
        let tools = shelf(
            "[methods.\"t.Other.Ping\"]\nname = \"ping\"\ndescription = \"Ping.\"\nread_only = true\ndestructive = false\n",
            &[],
        )
        .expect("tools");
        assert_eq!(
            tools,
            [
                tool("shelf_count", "Count the books.", false, false),
                tool("shelf_burn", "Burn a book.", false, false),
                tool("ping", "Ping.", true, true),
            ]
        );
    }

    #[test]
    fn a_read_only_that_conflicts_or_repeats_is_an_error_at_the_key() {
        let problems = shelf(
            "[methods.\"t.Shelf.Peek\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Audit\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Burn\"]\nread_only = true\n\n\
             [methods.\"t.Other.Ping\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Chek\"]\nread_only = true\n",
            &["t.Shelf"],
        )
        .expect_err("five problems");
        assert_eq!(
            problems,
            [
                "tools.toml:13:10: no method `t.Shelf.Chek` in the protos; did you mean `t.Shelf.Peek`?",
                "tools.toml:11:13: `t.Other.Ping` is marked `read_only = true` but is not a tool: annotate it (`rpc_tool` inline, or `name` and `description` in this entry) or expose its service whole (`services`)",
                "tools.toml:5:13: `t.Shelf.Audit` has `idempotency_level = IDEMPOTENT` inline (test.proto:18:5), which says it may change something; `read_only = true` contradicts it: annotate it in one place",
                "tools.toml:8:13: `t.Shelf.Burn` is `destructive: true` in its inline `rpc_tool` (test.proto:21:5); a method without side effects destroys nothing: drop one of them",
                "tools.toml:2:13: `t.Shelf.Peek` has `idempotency_level = NO_SIDE_EFFECTS` inline (test.proto:15:5): it is read-only already; annotate it in one place",
            ]
        );
    }

    #[test]
    fn method_entries_are_a_tool_or_read_only_and_say_something() {
        let problems = Overlay::parse(
            "tools.toml",
            "[methods.\"t.A.B\"]\nname = \"b\"\n\n\
             [methods.\"t.A.C\"]\ntitle = \"C\"\nstrict = true\nread_only = true\n\n\
             [methods.\"t.A.D\"]\n\n\
             [methods.\"t.A.E\"]\nread_only = false\n\n\
             [methods.\"t.A.F\"]\nname = \"f\"\ndescription = \"F.\"\ndestructive = true\nread_only = true\n\n\
             [methods.\"t.A.G\"]\ndescription = \"G.\"\n",
        )
        .map_err(texts)
        .expect_err("six problems");
        assert_eq!(
            problems,
            [
                "tools.toml:1:10: `[methods.\"t.A.B\"]` gives `name` but no `description`: a tool needs both (an entry with neither only marks the method `read_only = true`)",
                "tools.toml:4:10: `[methods.\"t.A.C\"]` gives `strict`, `title` but no `name` and `description`: those are a tool's, give all of them (an entry without a name only marks the method `read_only = true`)",
                "tools.toml:9:10: `[methods.\"t.A.D\"]` says nothing: give `name` and `description` to make the method a tool, or `read_only = true` to mark it read-only",
                "tools.toml:12:13: `read_only = false` in `[methods.\"t.A.E\"]` is what leaving it out says (a method is read-only only when its proto or its overlay says so); remove it",
                "tools.toml:18:13: `[methods.\"t.A.F\"]` gives `read_only = true` and `destructive = true`; a method without side effects destroys nothing: drop one of them",
                "tools.toml:20:10: `[methods.\"t.A.G\"]` gives `description` but no `name`: a tool needs both (an entry with neither only marks the method `read_only = true`)",
            ]
        );
        // The key is `true` or `false`.
        let wrong = Overlay::parse("tools.toml", "[methods.\"t.A.B\"]\nread_only = \"yes\"\n")
            .map_err(texts)
            .expect_err("not a boolean");
        assert!(
            wrong[0].starts_with("tools.toml:2:13: invalid overlay: "),
            "{wrong:?}"
        );
    }

    #[test]
    fn closest_names() {
        let names = vec!["a.B.Get".to_owned(), "a.B.List".to_owned()];
        assert_eq!(closest_hint("a.B.Gte", &names), "; did you mean `a.B.Get`?");
    }
}
