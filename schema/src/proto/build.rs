//! A method's [`ToolSpec`] and its request's schema IR, built from the
//! descriptors and their annotations.

use std::collections::{BTreeMap, HashMap, HashSet};

use prost_reflect::{
    EnumDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor, MethodDescriptor,
    OneofDescriptor,
};

use super::annotations::{
    Annotations, HttpVerb, IDEMPOTENCY_IDEMPOTENT, IDEMPOTENCY_NO_SIDE_EFFECTS, ToolDefinition,
    explicit_idempotency, tool_timeout,
};
use super::fields::{is_required, real_oneof};
use super::graph::reachable;
use super::well_known::{float_schema, well_known};
use crate::ir::{self, Object, Property, Schema};
use crate::tool_spec::{FieldAlias, ToolHints, ToolSpec};

impl Annotations {
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

    /// `recursive`: the messages the request reaches that reach themselves
    /// ([`recursive_messages`](super::graph::recursive_messages)).
    pub(super) fn tool_spec(
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
            hints: self.hints(method, def.destructive),
            timeout: def
                .timeout
                .and_then(|(seconds, nanos)| tool_timeout(seconds, nanos).ok()),
            service: method.parent_service().full_name().to_owned(),
            method: method.name().to_owned(),
            request: request.full_name().to_owned(),
            response: response.full_name().to_owned(),
            parameters: self.root_schema(&request, recursive),
            request_aliases: self.aliases(&request),
            response_aliases: self.response_aliases(method),
            output_prefix: self.output_prefix(&response),
            // Checked against the parameters by the caller.
            examples: Vec::new(),
            output_schema: def.output_schema,
            consent: def.consent,
        }
    }

    /// A method's hints: its `idempotency_level` and `rpc_tool.destructive`
    /// (or what an overlay wrote there), and where neither is written, its
    /// `google.api.http` verb (see [`ToolHints`]).
    fn hints(&self, method: &MethodDescriptor, destructive: Option<bool>) -> ToolHints {
        let verb = self.http_verb(method);
        let level = explicit_idempotency(method).unwrap_or(
            // A method that says it destroys is not read-only, whatever
            // its verb.
            if verb == Some(HttpVerb::Get) && destructive != Some(true) {
                IDEMPOTENCY_NO_SIDE_EFFECTS
            } else {
                0
            },
        );
        let read_only = level == IDEMPOTENCY_NO_SIDE_EFFECTS;
        ToolHints {
            read_only,
            idempotent: matches!(level, IDEMPOTENCY_NO_SIDE_EFFECTS | IDEMPOTENCY_IDEMPOTENT),
            destructive: destructive
                .or_else(|| (verb == Some(HttpVerb::Delete) && !read_only).then_some(true)),
        }
    }

    fn aliases(&self, root: &MessageDescriptor) -> Vec<FieldAlias> {
        self.aliases_of(std::slice::from_ref(root))
    }

    /// The aliases of what a method answers: its response's, and for a
    /// long-running method also those of the types its operation packs
    /// (`operation_info`), which the executor writes when the operation
    /// is done.
    fn response_aliases(&self, method: &MethodDescriptor) -> Vec<FieldAlias> {
        let mut roots = vec![method.output()];
        if let Some(Ok(operation)) = super::long_running::long_running(method) {
            roots.push(operation.response);
            roots.extend(operation.metadata);
        }
        self.aliases_of(&roots)
    }

    fn aliases_of(&self, roots: &[MessageDescriptor]) -> Vec<FieldAlias> {
        let mut messages = Vec::new();
        let mut visited = HashSet::new();
        for root in roots {
            reachable(root, &mut visited, &mut messages);
        }
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

    pub(super) fn root_schema(
        &self,
        message: &MessageDescriptor,
        recursive: HashSet<String>,
    ) -> Schema {
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
