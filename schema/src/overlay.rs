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
//! title = "Get an operation"   # optional; also `strict`, `destructive`
//!
//! [fields."google.longrunning.GetOperationRequest.name"]
//! alias_prefix = "operation"   # also `skip`, `usage_notes`, `description`
//! ```
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
//! Both work by writing the annotations into the descriptors themselves, as
//! if they were written inline, so everything downstream (schemas,
//! diagnostics, the executor reading the embedded descriptors at run time)
//! sees one set of annotations. An annotation given both inline and in the
//! overlay is an error; so is a selector that matches nothing (naming the
//! closest one). Diagnostics about an annotation that came from the overlay
//! are located in the overlay ([`Annotated::relocate`]).

use std::collections::{BTreeMap, HashMap};

use prost_reflect::prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, ExtensionDescriptor, FileDescriptor, MessageDescriptor, Value,
};
use serde::Deserialize;
use toml::Spanned;

use crate::names::{MAX_TOOL_NAME_LEN, validate_tool_name};
use crate::proto::leading_comment;
use crate::{Diagnostic, RPC_TOOL_EXTENSION, TOOL_FIELD_EXTENSION};

/// A parsed overlay file.
#[derive(Debug, Clone)]
pub struct Overlay {
    file: String,
    text: String,
    methods: BTreeMap<Spanned<String>, MethodOverlay>,
    fields: BTreeMap<Spanned<String>, FieldOverlay>,
}

/// What `rpc_tool` gives inline.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MethodOverlay {
    name: String,
    description: String,
    #[serde(default)]
    strict: bool,
    title: Option<String>,
    destructive: Option<bool>,
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
    /// A TOML syntax error, an unknown key or a value of the wrong type,
    /// located in the overlay.
    ///
    /// # Examples
    ///
    /// ```
    /// let overlay = ai_tools_schema::overlay::Overlay::parse(
    ///     "etcd.tools.toml",
    ///     "[methods.\"etcdserverpb.KV.Range\"]\nname = \"etcd_range\"\ndescription = \"Read keys.\"\n",
    /// )
    /// .expect("a valid overlay");
    /// assert_eq!(overlay.file(), "etcd.tools.toml");
    ///
    /// let bad = ai_tools_schema::overlay::Overlay::parse("x.toml", "[methods.\"a.B.C\"]\nnmae = \"x\"\n")
    ///     .unwrap_err();
    /// assert!(bad[0].to_string().starts_with("x.toml:2:1: "), "{}", bad[0]);
    /// ```
    pub fn parse(file: &str, text: &str) -> Result<Self, Vec<Diagnostic>> {
        match toml::from_str::<OverlayFile>(text) {
            Ok(parsed) => Ok(Self {
                file: file.to_owned(),
                text: text.to_owned(),
                methods: parsed.methods,
                fields: parsed.fields,
            }),
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

    fn diagnostic(&self, selector: &Spanned<String>, message: String) -> Diagnostic {
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
/// snake case (`google.longrunning.Operations.ListOperations` →
/// `operations_list_operations`), a letter first, at most 64 characters
/// (a longer name keeps its start and ends in a hash of the whole, so it
/// stays unique and stable).
///
/// # Examples
///
/// ```
/// use ai_tools_schema::overlay::derived_tool_name;
/// assert_eq!(derived_tool_name("Operations", "ListOperations"), "operations_list_operations");
/// assert_eq!(derived_tool_name("KV", "Range"), "kv_range");
/// assert_eq!(derived_tool_name("_Internal", "V2Get"), "internal_v2_get");
/// let long = derived_tool_name(&"VeryLongServiceName".repeat(3), &"AndAnEvenLongerMethodName".repeat(2));
/// assert_eq!(long.len(), 64);
/// assert!(ai_tools_schema::names::validate_tool_name(&long).is_ok());
/// ```
pub fn derived_tool_name(service: &str, method: &str) -> String {
    let mut name = format!("{}_{}", snake_case(service), snake_case(method));
    name = name
        .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
        .to_owned();
    if name.is_empty() {
        name = "tool".to_owned();
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        // FNV-1a: stable across builds and platforms.
        let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
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

/// Writes the overlay's annotations, and those of whole-service mode for
/// `services` (fully qualified service names; declared in `file` when it is
/// given), into the descriptors of `encoded` (a `FileDescriptorSet` of
/// `pool`).
///
/// The annotation protos must be in `pool` (the macro compiles them in when
/// either is used).
///
/// # Errors
///
/// Every problem, each located: a selector that matches nothing (naming the
/// closest), an annotation given both inline and in the overlay, a service
/// that is not in `file`, a derived name another method of the file already
/// has (the fix: name one of them in the overlay).
pub fn annotate(
    pool: &DescriptorPool,
    encoded: &[u8],
    file: Option<&str>,
    overlay: Option<&Overlay>,
    services: &[String],
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
    // (file name, element path, extension, value)
    let mut edits: Vec<(String, Vec<i32>, ExtensionDescriptor, Value)> = Vec::new();
    // Full name → tool name, for the methods the overlay names.
    let mut overlaid_methods: HashMap<String, String> = HashMap::new();
    let mut left_out = Vec::new();

    if let Some(overlay) = overlay {
        for (selector, entry) in &overlay.methods {
            let Some(method) = find_method(pool, selector.get_ref()) else {
                let names = all_method_names(pool);
                diags.push(overlay.diagnostic(
                    selector,
                    format!(
                        "no method `{}` in the protos{}",
                        selector.get_ref(),
                        closest_hint(selector.get_ref(), &names)
                    ),
                ));
                continue;
            };
            if method.options().has_extension(&rpc_tool) {
                diags.push(overlay.diagnostic(
                    selector,
                    format!(
                        "`{}` already has an inline `rpc_tool` option ({}); annotate it in one place",
                        method.full_name(),
                        place(&method.parent_file(), method.path())
                    ),
                ));
                continue;
            }
            let mut def = DynamicMessage::new(rpc_tool_type.clone());
            def.set_field_by_number(1, Value::String(entry.name.clone()));
            def.set_field_by_number(2, Value::String(entry.description.clone()));
            def.set_field_by_number(3, Value::Bool(entry.strict));
            if let Some(title) = &entry.title {
                def.set_field_by_number(4, Value::String(title.clone()));
            }
            if let Some(destructive) = entry.destructive {
                def.set_field_by_number(5, Value::Bool(destructive));
            }
            relocate_to(
                &mut relocations,
                overlay,
                selector,
                &method.parent_file(),
                method.path(),
            );
            overlaid_methods.insert(method.full_name().to_owned(), entry.name.clone());
            edits.push((
                method.parent_file().name().to_owned(),
                method.path().to_vec(),
                rpc_tool.clone(),
                Value::Message(def),
            ));
        }
        for (selector, entry) in &overlay.fields {
            let Some(field) = find_field(pool, selector.get_ref()) else {
                let names = all_field_names(pool);
                diags.push(overlay.diagnostic(
                    selector,
                    format!(
                        "no field `{}` in the protos{}",
                        selector.get_ref(),
                        closest_hint(selector.get_ref(), &names)
                    ),
                ));
                continue;
            };
            if field.options().has_extension(&tool_field) {
                diags.push(overlay.diagnostic(
                    selector,
                    format!(
                        "`{}` already has an inline `tool_field` option ({}); annotate it in one place",
                        field.full_name(),
                        place(&field.parent_file(), field.path())
                    ),
                ));
                continue;
            }
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
            relocate_to(
                &mut relocations,
                overlay,
                selector,
                &field.parent_file(),
                field.path(),
            );
            edits.push((
                field.parent_file().name().to_owned(),
                field.path().to_vec(),
                tool_field.clone(),
                Value::Message(def),
            ));
        }
    }

    // (file, tool name) → the method that has it, for the files of the
    // services exposed whole.
    let mut taken: HashMap<(String, String), String> = HashMap::new();
    let mut named_files: std::collections::HashSet<String> = std::collections::HashSet::new();
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
            let annotated = method.options().has_extension(&rpc_tool)
                || overlaid_methods.contains_key(method.full_name());
            if annotated {
                continue;
            }
            // A model sends one request per call: no client streams.
            if method.is_client_streaming() {
                left_out.push(method.full_name().to_owned());
                continue;
            }
            let description = leading_comment(&fd, method.path()).unwrap_or_else(|| {
                format!(
                    "Calls `{}`; the proto gives no description.",
                    method.full_name()
                )
            });
            let mut def = DynamicMessage::new(rpc_tool_type.clone());
            let name = derived_tool_name(service.name(), method.name());
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
            def.set_field_by_number(1, Value::String(name));
            def.set_field_by_number(2, Value::String(description));
            edits.push((
                fd.name().to_owned(),
                method.path().to_vec(),
                rpc_tool.clone(),
                Value::Message(def),
            ));
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
        for (file_name, path, ext, value) in edits {
            let Some(Value::Message(file_proto)) = files.iter_mut().find(|f| {
                matches!(f, Value::Message(m) if m.get_field_by_name("name").is_some_and(|n| n.as_str() == Some(file_name.as_str())))
            }) else {
                continue;
            };
            let Some(element) = at_path(file_proto, &path) else {
                continue;
            };
            let options = element.get_field_by_number_mut(options_field(&path));
            if let Some(Value::Message(options)) = options {
                options.set_extension(&ext, value);
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
    Ok(Annotated {
        pool,
        encoded,
        left_out,
        relocations,
    })
}

/// The tool name `method`'s inline `rpc_tool` option gives, if any.
fn inline_tool_name(
    method: &prost_reflect::MethodDescriptor,
    rpc_tool: &ExtensionDescriptor,
) -> Option<String> {
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

fn find_method(pool: &DescriptorPool, selector: &str) -> Option<prost_reflect::MethodDescriptor> {
    let (service, method) = selector.rsplit_once('.')?;
    pool.get_service_by_name(service)?
        .methods()
        .find(|m| m.name() == method)
}

fn find_field(pool: &DescriptorPool, selector: &str) -> Option<prost_reflect::FieldDescriptor> {
    let (message, field) = selector.rsplit_once('.')?;
    pool.get_message_by_name(message)?.get_field_by_name(field)
}

fn all_method_names(pool: &DescriptorPool) -> Vec<String> {
    pool.services()
        .flat_map(|s| {
            s.methods()
                .map(|m| m.full_name().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn all_field_names(pool: &DescriptorPool) -> Vec<String> {
    pool.all_messages()
        .flat_map(|m| {
            m.fields()
                .map(|f| f.full_name().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
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

fn relocate_to(
    relocations: &mut HashMap<(String, u32, u32), (String, u32, u32)>,
    overlay: &Overlay,
    selector: &Spanned<String>,
    file: &FileDescriptor,
    path: &[i32],
) {
    if let Some((line, column)) = element_location(file, path) {
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
        let annotated = annotate(
            &pool,
            &pool.encode_to_vec(),
            Some("test.proto"),
            None,
            &["t.Things".to_owned()],
        )
        .expect("annotated");
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
    fn derived_names_that_clash_are_refused_with_the_overlay_fix() {
        let pool = crate::test_support::compile(&format!(
            "{}message Req {{}}\nservice Things {{\n  rpc GetURL(Req) returns (Req);\n  rpc GetUrl(Req) returns (Req);\n  rpc Ping(Req) returns (Req) {{\n    option (ai.context.v1.rpc_tool) = {{ name: \"things_list\" description: \"Ping.\" }};\n  }}\n  rpc List(Req) returns (Req);\n}}\n",
            crate::test_support::HEADER
        ));
        let problems = annotate(
            &pool,
            &pool.encode_to_vec(),
            Some("test.proto"),
            None,
            &["t.Things".to_owned()],
        )
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
        let annotated = annotate(
            &pool,
            &pool.encode_to_vec(),
            Some("test.proto"),
            Some(&overlay),
            &["t.Things".to_owned()],
        )
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
        let pool = crate::test_support::compile_files(&[("x.proto", source)], "x.proto");
        let problems = annotate(
            &pool,
            &pool.encode_to_vec(),
            Some("x.proto"),
            None,
            &["x.S".to_owned()],
        )
        .expect_err("not ai-tools' annotation");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("`x.mine` (extension 52104")
                && problems[0].message.contains("is not a message"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn closest_names() {
        let names = vec!["a.B.Get".to_owned(), "a.B.List".to_owned()];
        assert_eq!(closest_hint("a.B.Gte", &names), "; did you mean `a.B.Get`?");
    }
}
