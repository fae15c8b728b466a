//! The annotations of one pool, read by extension number: `rpc_tool` on a
//! method (under either of its numbers), `tool_field` and `field_behavior`
//! on a field, and a method's `idempotency_level`.

use prost_reflect::{
    DescriptorPool, DynamicMessage, ExtensionDescriptor, FieldDescriptor, MethodDescriptor, Value,
};

use super::rpc_tool::{carried, rpc_tool_extensions};
use super::source::Comments;
use crate::annotation_protos::{
    FIELD_BEHAVIOR_EXTENSION, HTTP_RULE_EXTENSION, TOOL_FIELD_EXTENSION,
};
use crate::tool_spec::ConsentPolicy;

/// `google.protobuf.MethodOptions.IdempotencyLevel.NO_SIDE_EFFECTS`
pub(crate) const IDEMPOTENCY_NO_SIDE_EFFECTS: i32 = 1;
/// `google.protobuf.MethodOptions.IdempotencyLevel.IDEMPOTENT`
pub(crate) const IDEMPOTENCY_IDEMPOTENT: i32 = 2;
/// The number of `idempotency_level` in `google.protobuf.MethodOptions`
/// (an overlay's `read_only = true` writes it).
pub(crate) const METHOD_IDEMPOTENCY_LEVEL: u32 = 34;
/// `google.api.FieldBehavior.REQUIRED`
const BEHAVIOR_REQUIRED: i32 = 2;
/// `google.api.FieldBehavior.OUTPUT_ONLY`
const BEHAVIOR_OUTPUT_ONLY: i32 = 3;
/// `ai.tools.v1.ToolFieldOptions.required`
pub(crate) const TOOL_FIELD_REQUIRED: u32 = 5;

/// The `rpc_tool` option of a method, read by number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct ToolDefinition {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) strict: bool,
    pub(super) title: Option<String>,
    pub(super) destructive: Option<bool>,
    /// `timeout` as written: seconds and nanos.
    pub(super) timeout: Option<(i64, i32)>,
    /// `examples` as written: the JSON text of each.
    pub(super) examples: Vec<String>,
    /// `output_schema`, when set.
    pub(super) output_schema: Option<bool>,
    /// `consent`, when set to a value other than unspecified.
    pub(super) consent: Option<ConsentPolicy>,
}

/// The number of `destructive` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_DESTRUCTIVE: u32 = 5;

/// The number of `timeout` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_TIMEOUT: u32 = 6;

/// The number of `examples` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_EXAMPLES: u32 = 7;

/// The number of `output_schema` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_OUTPUT_SCHEMA: u32 = 8;

/// The number of `consent` in `rpc_tool`'s `ToolDefinition`.
pub(crate) const RPC_TOOL_CONSENT: u32 = 9;

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
pub(super) struct FieldAnnotations {
    pub(super) skip: bool,
    pub(super) alias_prefix: Option<String>,
    pub(super) usage_notes: Option<String>,
    pub(super) description: Option<String>,
    pub(super) output_only: bool,
    /// `field_behavior = REQUIRED`.
    pub(super) behavior_required: bool,
    /// `tool_field.required`, when set: it decides whether the property is
    /// required.
    pub(super) required: Option<bool>,
    /// The field carries a `tool_field` option at all.
    pub(super) annotated: bool,
}

/// The extensions of one pool, found by number.
pub(super) struct Annotations {
    /// `rpc_tool`, under each of its numbers the pool declares.
    pub(super) rpc_tools: Vec<ExtensionDescriptor>,
    pub(super) tool_field: Option<ExtensionDescriptor>,
    pub(super) field_behavior: Option<ExtensionDescriptor>,
    /// `google.api.http`, when the pool declares it.
    pub(super) http: Option<ExtensionDescriptor>,
    pub(super) comments: Comments,
}

/// The HTTP verb a method's `google.api.http` binds it to, where it says
/// something of the method's effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HttpVerb {
    /// `get`: reads, changes nothing (AIP-131, AIP-132).
    Get,
    /// `delete`: removes the resource (AIP-135).
    Delete,
}

/// `get` and `delete` in `google.api.HttpRule`.
const HTTP_RULE_GET: u32 = 2;
const HTTP_RULE_DELETE: u32 = 5;

impl Annotations {
    pub(super) fn new(pool: &DescriptorPool) -> Self {
        let method = pool.get_message_by_name("google.protobuf.MethodOptions");
        let field = pool.get_message_by_name("google.protobuf.FieldOptions");
        Annotations {
            http: method
                .as_ref()
                .and_then(|m| m.get_extension(HTTP_RULE_EXTENSION)),
            rpc_tools: rpc_tool_extensions(pool),
            tool_field: field
                .as_ref()
                .and_then(|m| m.get_extension(TOOL_FIELD_EXTENSION)),
            field_behavior: field.and_then(|m| m.get_extension(FIELD_BEHAVIOR_EXTENSION)),
            comments: Comments::default(),
        }
    }

    /// `method`'s `rpc_tool` option, under whichever number it carries it:
    /// `Ok(None)` when it carries none, `Err` with the two extensions when it
    /// carries both (an error [`tools_in_file`](super::tools_in_file)
    /// reports).
    pub(super) fn rpc_tool_checked(
        &self,
        method: &MethodDescriptor,
    ) -> Result<Option<ToolDefinition>, [&ExtensionDescriptor; 2]> {
        let options = method.options();
        let mut carried = self
            .rpc_tools
            .iter()
            .filter(|ext| options.has_extension(ext));
        let Some(ext) = carried.next() else {
            return Ok(None);
        };
        if let Some(other) = carried.next() {
            return Err([ext, other]);
        }
        Ok(tool_definition(&options, ext))
    }

    /// `method`'s `rpc_tool` option, under whichever number it carries it
    /// (the first of [`RPC_TOOL_EXTENSIONS`] when both).
    ///
    /// [`RPC_TOOL_EXTENSIONS`]: crate::RPC_TOOL_EXTENSIONS
    pub(super) fn rpc_tool(&self, method: &MethodDescriptor) -> Option<ToolDefinition> {
        let ext = carried(method, &self.rpc_tools)?;
        tool_definition(&method.options(), ext)
    }

    /// The verb of `method`'s `google.api.http` binding, when it is `get`
    /// or `delete` (the verbs that say what a method does to its resource).
    pub(super) fn http_verb(&self, method: &MethodDescriptor) -> Option<HttpVerb> {
        let ext = self.http.as_ref()?;
        let options = method.options();
        if !options.has_extension(ext) {
            return None;
        }
        let rule = options.get_extension(ext);
        let rule = rule.as_message()?;
        if rule.has_field_by_number(HTTP_RULE_GET) {
            Some(HttpVerb::Get)
        } else if rule.has_field_by_number(HTTP_RULE_DELETE) {
            Some(HttpVerb::Delete)
        } else {
            None
        }
    }

    pub(super) fn tool_field(&self, field: &FieldDescriptor) -> FieldAnnotations {
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
}

/// The `ToolDefinition` of `options`' option `ext` (an `rpc_tool`), read
/// by field number.
fn tool_definition(options: &DynamicMessage, ext: &ExtensionDescriptor) -> Option<ToolDefinition> {
    let value = options.get_extension(ext);
    let Value::Message(msg) = value.as_ref() else {
        return None;
    };
    Some(ToolDefinition {
        name: string_field(msg, 1).unwrap_or_default(),
        description: string_field(msg, 2).unwrap_or_default(),
        strict: bool_field(msg, 3),
        title: string_field(msg, 4).filter(|t| !t.trim().is_empty()),
        destructive: msg
            .has_field_by_number(RPC_TOOL_DESTRUCTIVE)
            .then(|| bool_field(msg, RPC_TOOL_DESTRUCTIVE)),
        timeout: duration_field(msg, RPC_TOOL_TIMEOUT),
        examples: strings_field(msg, RPC_TOOL_EXAMPLES),
        output_schema: msg
            .has_field_by_number(RPC_TOOL_OUTPUT_SCHEMA)
            .then(|| bool_field(msg, RPC_TOOL_OUTPUT_SCHEMA)),
        consent: msg
            .get_field_by_number(RPC_TOOL_CONSENT)
            .and_then(|value| value.as_enum_number())
            .and_then(ConsentPolicy::from_number),
    })
}

/// A method's `idempotency_level` (0: unknown).
pub(crate) fn idempotency(method: &MethodDescriptor) -> i32 {
    explicit_idempotency(method).unwrap_or(0)
}

/// A method's `idempotency_level`, when written (even as
/// `IDEMPOTENCY_UNKNOWN`): an explicit word that no HTTP binding overrides.
pub(crate) fn explicit_idempotency(method: &MethodDescriptor) -> Option<i32> {
    method
        .method_descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.idempotency_level)
}

fn string_field(msg: &DynamicMessage, number: u32) -> Option<String> {
    msg.get_field_by_number(number)
        .and_then(|v| v.as_str().map(str::to_owned))
}

/// The values of the repeated string field `number` (none when the copy of
/// the annotation protos that declared the option is older than it).
fn strings_field(msg: &DynamicMessage, number: u32) -> Vec<String> {
    match msg.get_field_by_number(number).as_deref() {
        Some(Value::List(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
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
