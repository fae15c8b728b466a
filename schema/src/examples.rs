//! Examples of a tool's arguments: `rpc_tool.examples` in the proto (or
//! `examples` in an [overlay](crate::overlay)), each the JSON text of one
//! whole arguments object as the model would send it.
//!
//! An example is checked where it is read ([`check_examples`]; the macro
//! and a tool set at run time report a bad one at the option, or at the
//! overlay's string, with `file:line:column`). It must:
//!
//! 1. parse as one JSON object, within the inbound [`Limits`];
//! 2. be accepted by the executor's own inbound pipeline,
//!    [`inbound::unshape`] over the tool's IR (the same call a model's
//!    arguments go through), every string of an aliased field an alias of
//!    its prefix (`link-1`: what a model sends there, never a UUID);
//! 3. be admitted by the tool's canonical JSON Schema
//!    ([`Dialect::JsonSchema`], not strict) as rendered, held to it by
//!    [`check::check_arguments`]: the form the schema states, not only one
//!    the executor also accepts (`"5"` for an integer, `null` for a left-out
//!    field, a oneof's member sent flat are accepted inbound but are not
//!    what a model reads in the schema, so an example must not teach them).
//!
//! Rendered, an example follows the schema it goes with: [`shape`] writes it
//! in the form of a rendering (a map as `{key, value}` entries, a value past
//! a cut as its JSON text, a 64-bit integer as a string of digits, where
//! the rendering says so), and reading it back through the inbound
//! pipeline gives the very call the example is ([`reads_back`]). Anthropic
//! takes examples, as `input_examples` beside `input_schema`
//! ([`ToolSpec::input_examples`](crate::ToolSpec::input_examples)); OpenAI's
//! function tools, Gemini's function declarations and MCP's tools document
//! no field for examples of a call, so their renderings carry none (nor do
//! an MCP server's host-adapted ones). Gemini's `Schema.example` is one
//! value of the root schema, not said to reach the model, and JSON
//! Schema's `examples` keyword is one OpenAI's strict mode refuses: neither
//! is used.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::examples::{check_examples, shape};
//! use proto_ai_tools_schema::ir::{Object, Schema};
//! use proto_ai_tools_schema::{render, Dialect};
//! use serde_json::json;
//!
//! let schema = Schema::object(
//!     Object::new()
//!         .property("name", Schema::string(), true)
//!         .property("labels", Schema::map(Schema::string(), Schema::string()), false),
//! );
//! let texts = [
//!     r#"{"name": "docs", "labels": {"team": "web"}}"#.to_owned(),
//!     r#"{"name": 7}"#.to_owned(),
//! ];
//! let checked = check_examples(&schema, &texts);
//! let example = checked[0].as_ref().expect("fits");
//! assert_eq!(checked[1], Err(vec!["`name` is a number; send a string".to_owned()]));
//!
//! // Anthropic strict gives a map as a list of entries; so does the example.
//! let strict = render::parameters(&schema, Dialect::Anthropic, true);
//! assert_eq!(
//!     shape(&strict, example),
//!     json!({"name": "docs", "labels": [{"key": "team", "value": "web"}]})
//! );
//! ```

use serde_json::{Map, Value};

use crate::check::{self, admitted};
use crate::dialect::Dialect;
use crate::inbound::{self, Limits};
use crate::ir::Schema;
use crate::names::split_alias;
use crate::render;

/// How many schemas one value may be shaped against on the way down (see
/// [`check::check_arguments`]).
const MAX_STEPS: usize = 512;

/// Checks each example of `texts` against `schema` (a tool's parameters),
/// in order: the example as a JSON value, or every problem with it, each a
/// sentence naming the path of the value at fault (see the
/// [module docs](self) for what is checked).
///
/// # Examples
///
/// See the [module docs](self).
pub fn check_examples(schema: &Schema, texts: &[String]) -> Vec<Result<Value, Vec<String>>> {
    if texts.is_empty() {
        return Vec::new();
    }
    let canonical = render::parameters(schema, Dialect::JsonSchema, false);
    texts
        .iter()
        .map(|text| {
            let example = parse(text)?;
            let problems = problems(schema, &canonical, &example);
            if problems.is_empty() {
                Ok(example)
            } else {
                Err(problems)
            }
        })
        .collect()
}

/// The problems of `example` (a parsed example) against `schema` and its
/// canonical rendering `canonical`: the inbound pipeline's first, else the
/// canonical schema's.
pub(crate) fn problems(schema: &Schema, canonical: &Value, example: &Value) -> Vec<String> {
    let limits = Limits::default();
    if !example.is_object() {
        return vec![format!(
            "the example is {}; an example is one JSON object of the tool's arguments",
            inbound::kind_of(example)
        )];
    }
    if let Err(problem) = inbound::check_shape(example, &limits, limits.max_depth, "") {
        return vec![problem];
    }
    let mut unshaped = example.clone();
    let slots = match inbound::unshape(schema, &mut unshaped, &limits) {
        Ok(slots) => slots,
        Err(problems) => return problems,
    };
    let mut out = Vec::new();
    for slot in slots {
        let Some(Value::String(sent)) = unshaped.pointer(&slot.pointer) else {
            continue;
        };
        if split_alias(sent).is_none_or(|(prefix, _)| prefix != slot.prefix) {
            out.push(format!(
                "`{}` is `{}`; a model sends this field's ids as aliases, such as `{}-1`, which the executor resolves in the conversation",
                slot.path,
                inbound::shorten(sent),
                slot.prefix
            ));
        }
    }
    for violation in check::check_arguments(canonical, example) {
        out.push(format!(
            "{} {}",
            place(example, &violation.path),
            violation.message
        ));
    }
    out
}

/// Parses one example's text: one JSON object, within the inbound limits
/// of a call's arguments.
fn parse(text: &str) -> Result<Value, Vec<String>> {
    let limits = Limits::default();
    if text.len() > limits.max_bytes {
        return Err(vec![format!(
            "the example is {} bytes, more than a call's arguments may be ({}); keep it short",
            text.len(),
            limits.max_bytes
        )]);
    }
    serde_json::from_str::<Value>(text).map_err(|e| {
        vec![format!(
            "the example is not JSON ({e}); write the tool's arguments as one JSON object, e.g. `{{\"name\": \"value\"}}`"
        )]
    })
}

/// Where the value at `pointer` sits in `example`, as inbound problems say
/// it: `steps[2].link_id`, or `the example` for the whole.
fn place(example: &Value, pointer: &str) -> String {
    if pointer.is_empty() {
        return "the example".to_owned();
    }
    let mut out = String::new();
    let mut here = Some(example);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match here {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{token}]"));
                here = token.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&inbound::shorten(&token));
                here = other.and_then(|v| v.get(&token));
            }
        }
    }
    format!("`{out}`")
}

/// `example` (in the canonical form, as checked) written in the form of
/// the rendered schema `rendered` (a tool's parameters in some dialect):
/// where the rendering gives a value another form than the canonical
/// schema, the example's value takes that form too. An object or array
/// where the rendering has a string (a cut) becomes its JSON text; an
/// integer where it has a string (a 64-bit integer rendered as digits)
/// becomes its digits; a map where it has an array of `{key, value}`
/// entries becomes those entries; a union takes the first branch the
/// shaped value fits. Everything else stays as it is.
///
/// The inbound pipeline undoes each of these, so the shaped example reads
/// back as the same call ([`reads_back`]).
///
/// # Examples
///
/// See the [module docs](self).
pub fn shape(rendered: &Value, example: &Value) -> Value {
    Shaper { root: rendered }.value(rendered, example, 0)
}

/// Whether `shaped` (an example in some rendering's form) reads back
/// through the inbound pipeline over `schema` as the same call as
/// `example`, in the canonical form.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::examples::reads_back;
/// use proto_ai_tools_schema::ir::{Object, Schema};
/// use serde_json::json;
///
/// let schema = Schema::object(
///     Object::new().property("id", Schema::integer_within(i64::MIN, i64::MAX), true),
/// );
/// assert!(reads_back(&schema, &json!({"id": 5}), &json!({"id": "5"})));
/// assert!(!reads_back(&schema, &json!({"id": 5}), &json!({"id": "6"})));
/// ```
pub fn reads_back(schema: &Schema, example: &Value, shaped: &Value) -> bool {
    let limits = Limits::default();
    let read = |value: &Value| {
        let mut value = value.clone();
        inbound::unshape(schema, &mut value, &limits).map(|_| value)
    };
    match (read(example), read(shaped)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

struct Shaper<'s> {
    root: &'s Value,
}

impl<'s> Shaper<'s> {
    fn value(&self, schema: &'s Value, v: &Value, steps: usize) -> Value {
        let Some(node) = schema.as_object().filter(|_| steps <= MAX_STEPS) else {
            return v.clone();
        };
        if let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|t| t.strip_prefix('#'))
            .and_then(|pointer| self.root.pointer(pointer))
        {
            return self.value(target, v, steps + 1);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                return branches
                    .iter()
                    .map(|branch| self.value(branch, v, steps + 1))
                    .zip(branches)
                    .find(|(shaped, branch)| admitted(self.root, branch, shaped))
                    .map_or_else(|| v.clone(), |(shaped, _)| shaped);
            }
        }
        let types: Vec<&str> = match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return v.clone(),
        };
        let is = |name: &str| types.contains(&name);
        match v {
            Value::Object(fields) if is("object") => {
                Value::Object(self.fields(node, fields, steps))
            }
            Value::Array(items) if is("array") => match node.get("items") {
                Some(schema) => Value::Array(
                    items
                        .iter()
                        .map(|item| self.value(schema, item, steps + 1))
                        .collect(),
                ),
                None => v.clone(),
            },
            Value::Object(fields) if is("array") => self.entries(node, fields, steps),
            // A cut: the value's JSON text.
            Value::Object(_) | Value::Array(_) if is("string") => Value::String(v.to_string()),
            // A 64-bit integer as the string of its digits.
            Value::Number(n) if is("string") && !is("number") && !is("integer") => {
                if n.is_i64() || n.is_u64() {
                    Value::String(n.to_string())
                } else {
                    v.clone()
                }
            }
            _ => v.clone(),
        }
    }

    /// An object's fields, each shaped by its property (or by
    /// `additionalProperties`, a map's values).
    fn fields(
        &self,
        node: &'s Map<String, Value>,
        fields: &Map<String, Value>,
        steps: usize,
    ) -> Map<String, Value> {
        let properties = node.get("properties").and_then(Value::as_object);
        let additional = node.get("additionalProperties").filter(|a| a.is_object());
        fields
            .iter()
            .map(|(key, item)| {
                let shaped = match properties.and_then(|p| p.get(key)).or(additional) {
                    Some(schema) => self.value(schema, item, steps + 1),
                    None => item.clone(),
                };
                (key.clone(), shaped)
            })
            .collect()
    }

    /// A map where the rendering has a list of `{key, value}` entries: the
    /// entries, each key in the form of the entries' `key` (an integer or
    /// a boolean key as one, where the rendering says so).
    fn entries(
        &self,
        node: &'s Map<String, Value>,
        fields: &Map<String, Value>,
        steps: usize,
    ) -> Value {
        let entry = node
            .get("items")
            .and_then(|items| self.resolved(items, steps))
            .and_then(|items| items.get("properties"));
        let (Some(key_schema), Some(value_schema)) = (
            entry.and_then(|p| p.get("key")),
            entry.and_then(|p| p.get("value")),
        ) else {
            return Value::Object(fields.clone());
        };
        let key_types = self
            .resolved(key_schema, steps)
            .and_then(|k| k.get("type"))
            .cloned()
            .unwrap_or(Value::Null);
        let key_is = |name: &str| match &key_types {
            Value::String(t) => t == name,
            Value::Array(ts) => ts.iter().any(|t| t == name),
            _ => false,
        };
        let entries = fields
            .iter()
            .map(|(key, item)| {
                let key = if key_is("integer") {
                    integer(key).unwrap_or_else(|| Value::String(key.clone()))
                } else if key_is("boolean") && (key == "true" || key == "false") {
                    Value::Bool(key == "true")
                } else {
                    Value::String(key.clone())
                };
                let mut entry = Map::new();
                entry.insert("key".into(), key);
                entry.insert("value".into(), self.value(value_schema, item, steps + 1));
                Value::Object(entry)
            })
            .collect();
        Value::Array(entries)
    }

    /// `schema`, or what its local `$ref` points at.
    fn resolved(&self, schema: &'s Value, steps: usize) -> Option<&'s Value> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(target) if steps <= MAX_STEPS => {
                let target = self.root.pointer(target.strip_prefix('#')?)?;
                self.resolved(target, steps + 1)
            }
            Some(_) => None,
            None => Some(schema),
        }
    }
}

/// A map key written as digits, as a JSON integer.
fn integer(key: &str) -> Option<Value> {
    key.parse::<i64>()
        .map(Value::from)
        .or_else(|_| key.parse::<u64>().map(Value::from))
        .ok()
}

/// The text of a diagnostic about the `index`th (from 0) example `text` of
/// the rpc `rpc`, with its problems.
pub(crate) fn diagnostic(rpc: &str, index: usize, text: &str, problems: &[String]) -> String {
    let shown = inbound::shorten(text.trim());
    format!(
        "rpc `{rpc}`: example {} (`{shown}`) does not fit the tool: {}",
        index + 1,
        problems.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Object, Schema};
    use serde_json::json;

    fn schema() -> Schema {
        let node = Schema::object(
            Object::new()
                .property("name", Schema::string(), true)
                .property("next", Schema::reference("t.Node"), false),
        );
        Schema::object(
            Object::new()
                .property("id", Schema::integer_within(i64::MIN, i64::MAX), true)
                .property("link_id", Schema::string().alias_prefix("link"), false)
                .property(
                    "by_id",
                    Schema::map(
                        Schema::integer_within(i64::MIN, i64::MAX),
                        Schema::boolean(),
                    ),
                    false,
                )
                .property(
                    "labels",
                    Schema::map(Schema::string(), Schema::string()),
                    false,
                )
                .property("extra", Schema::object(Object::open()), false)
                .property("head", Schema::reference("t.Node"), false)
                .define("t.Node", node),
        )
    }

    fn problems_of(text: &str) -> Vec<String> {
        match check_examples(&schema(), &[text.to_owned()]).remove(0) {
            Ok(_) => Vec::new(),
            Err(problems) => problems,
        }
    }

    #[test]
    fn what_an_example_must_be() {
        assert_eq!(
            problems_of(r#"{"id": 1, "link_id": "link-2"}"#),
            Vec::<String>::new()
        );
        let not_json = problems_of(r#"{"id": 1,"#);
        assert!(
            not_json[0].starts_with("the example is not JSON (EOF while parsing"),
            "{not_json:?}"
        );
        assert_eq!(
            problems_of("[1]"),
            ["the example is an array; an example is one JSON object of the tool's arguments"]
        );
        // Inbound refuses: the executor's own sentence.
        assert_eq!(problems_of(r#"{"id": 1, "size": 2}"#).len(), 1);
        // An aliased field holds an alias of its prefix.
        let raw = problems_of(r#"{"id": 1, "link_id": "0b7c6a1e-8a51-4c63-9a0e-3f1e0d8c2a11"}"#);
        assert!(raw[0].starts_with("`link_id` is `0b7c6a1e"), "{raw:?}");
        assert!(problems_of(r#"{"id": 1, "link_id": "step-1"}"#)[0].contains("such as `link-1`"));
        // Accepted inbound, but not the form the schema states.
        let digits = problems_of(r#"{"id": "1"}"#);
        assert_eq!(digits, ["`id` is a string; the schema asks for an integer"]);
        let null = problems_of(r#"{"id": 1, "labels": null}"#);
        assert!(null[0].starts_with("`labels` is null"), "{null:?}");
    }

    #[test]
    fn each_rendering_gets_the_example_in_its_form_and_reads_it_back() {
        let schema = schema();
        let example = json!({
            "id": 9_007_199_254_740_993_i64,
            // Integer keys: `{key, value}` entries in every rendering.
            "by_id": [{"key": -3, "value": true}],
            "labels": {"a": "b"},
            "extra": {"any": [1]},
            "head": {"name": "a", "next": {"name": "b", "next": {"name": "c"}}}
        });
        assert_eq!(
            problems(
                &schema,
                &render::parameters(&schema, Dialect::JsonSchema, false),
                &example
            ),
            Vec::<String>::new()
        );
        for dialect in Dialect::ALL {
            for strict in [false, true] {
                for host in [crate::HostProfile::Exact, crate::HostProfile::JavaScript] {
                    let rendered = render::parameters_for(&schema, dialect, strict, host);
                    let shaped = shape(&rendered, &example);
                    let found = check::check_arguments(&rendered, &shaped);
                    // OpenAI strict lists every property as required, so an
                    // example that leaves some out is not its form; nothing
                    // renders examples for it.
                    let all_required =
                        strict && matches!(dialect, Dialect::OpenAi | Dialect::JsonSchema);
                    if !all_required {
                        assert_eq!(found, [], "{dialect} strict={strict} {host:?}: {shaped}");
                    }
                    assert!(
                        reads_back(&schema, &example, &shaped),
                        "{dialect} strict={strict} {host:?}: {shaped}"
                    );
                }
            }
        }
        let strict = shape(
            &render::parameters(&schema, Dialect::Anthropic, true),
            &example,
        );
        assert_eq!(strict["labels"], json!([{"key": "a", "value": "b"}]));
        assert_eq!(strict["extra"], json!(r#"{"any":[1]}"#));
        let javascript = shape(
            &render::parameters_for(
                &schema,
                Dialect::Anthropic,
                false,
                crate::HostProfile::JavaScript,
            ),
            &example,
        );
        assert_eq!(javascript["id"], json!("9007199254740993"));
        assert_eq!(javascript["by_id"], json!([{"key": "-3", "value": true}]));
    }

    #[test]
    fn places_read_as_inbound_problems_do() {
        let example = json!({"steps": [{"link_id": 1}], "a/b": 2});
        assert_eq!(place(&example, "/steps/0/link_id"), "`steps[0].link_id`");
        assert_eq!(place(&example, "/a~1b"), "`a/b`");
        assert_eq!(place(&example, ""), "the example");
    }
}
