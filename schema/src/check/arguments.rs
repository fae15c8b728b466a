//! Values against a schema: does a tool call's arguments (or an example of
//! them) obey the JSON Schema a tool was given? And the Anthropic rules of
//! `input_examples`, which are such values.

use std::collections::HashMap;

use regex_automata::meta::Regex;
use serde_json::{Map, Value};

use super::{Rule, Violation};
use crate::names::push_pointer_token;

/// How many schemas one value may be checked against on the way down
/// (`$ref`s, unions and nesting together): a schema whose references loop
/// without nesting (`{"$ref": "#"}`) stops here instead of recursing on.
const MAX_STEPS: usize = 512;

/// Checks `instance` (a tool call's arguments, or an example of them)
/// against `schema`, a JSON Schema as tools carry it, and returns every
/// place it fails, each a [`Violation`] of [`Rule::NotAdmitted`] whose
/// `path` is the JSON pointer of the value at fault in `instance`
/// (`/labels/0/key`; empty for the whole).
///
/// The keywords of the renderings and of the dialects' checkers are
/// applied: `type` (an integer is a number without a fraction), `enum`,
/// `const`, `properties`, `required`, `additionalProperties`,
/// `propertyNames`, `minProperties`, `maxProperties`, `items`,
/// `prefixItems`, `minItems`, `maxItems`, `minLength`, `maxLength`
/// (characters), `pattern`, `minimum`, `maximum`, `exclusiveMinimum`,
/// `exclusiveMaximum`, `multipleOf`, `anyOf`, `oneOf`, `allOf`, `not`,
/// local `$ref`s (`#/$defs/…`, `#`), and OpenAPI's `nullable`. `format` is
/// an annotation, as in JSON Schema 2020-12 (the inbound checks of
/// [`crate::inbound`] hold a date-time to its form); a `pattern` this
/// crate's regex engine does not take (an ECMA-262 construct such as a
/// look-around) is not applied; remote `$ref`s are not followed.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::{check_arguments, Rule};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "count": { "type": "integer", "minimum": 0, "maximum": 10 },
///         "tags": { "type": "array", "items": { "type": "string" } }
///     },
///     "required": ["count"],
///     "additionalProperties": false
/// });
/// assert!(check_arguments(&schema, &json!({"count": 3, "tags": ["a"]})).is_empty());
///
/// let found = check_arguments(&schema, &json!({"count": "3", "tags": [1], "colour": "red"}));
/// let at: Vec<(&str, Rule)> = found.iter().map(|v| (v.path.as_str(), v.rule)).collect();
/// assert_eq!(at, [
///     ("/count", Rule::NotAdmitted),
///     ("/tags/0", Rule::NotAdmitted),
///     ("/colour", Rule::NotAdmitted),
/// ]);
/// assert_eq!(found[0].message, "is a string; the schema asks for an integer");
/// ```
pub fn check_arguments(schema: &Value, instance: &Value) -> Vec<Violation> {
    let mut walk = Admit::new(schema);
    walk.value(schema, instance, &mut String::new(), 0);
    walk.out
}

/// Whether `schema` (a node of the schema `root`, whose `$ref`s it may
/// use) admits `instance`: [`check_arguments`] finding nothing.
pub(crate) fn admitted(root: &Value, schema: &Value, instance: &Value) -> bool {
    let mut walk = Admit::new(root);
    walk.value(schema, instance, &mut String::new(), 0);
    walk.out.is_empty()
}

/// Checks the `input_examples` of one Anthropic tool definition
/// (`{name, description, input_schema, input_examples}`) against the rules
/// Anthropic documents for them, and returns every violation, each of
/// [`Rule::InputExample`] at its JSON pointer in the tool
/// (`/input_examples/1/count`):
///
/// - `input_examples` is "an array of example input objects" (the tool
///   definition's parameters, [Define tools]);
/// - each example is valid against the tool's `input_schema`, which
///   Anthropic validates (an invalid example is a 400 error, "Providing
///   tool use examples" on the same page): checked with
///   [`check_arguments`].
///
/// A tool without `input_examples` has nothing to check. That examples are
/// not accepted beside the tool search tool is a rule of the request, held
/// by [`deferred::check_anthropic_tool_search`](crate::deferred::check_anthropic_tool_search).
///
/// [Define tools]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::{check_input_examples, Rule};
/// use serde_json::json;
///
/// let mut tool = json!({
///     "name": "links_list",
///     "description": "List links.",
///     "input_schema": {
///         "type": "object",
///         "properties": { "page_size": { "type": "integer", "minimum": 0 } }
///     },
///     "input_examples": [{ "page_size": 10 }, {}]
/// });
/// assert!(check_input_examples(&tool).is_empty());
///
/// tool["input_examples"] = json!([{ "page_size": -1 }, "page_size=10"]);
/// let found = check_input_examples(&tool);
/// let at: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
/// assert_eq!(at, ["/input_examples/0/page_size", "/input_examples/1"]);
/// assert!(found.iter().all(|v| v.rule == Rule::InputExample));
/// ```
pub fn check_input_examples(tool: &Value) -> Vec<Violation> {
    let Some(examples) = tool.get("input_examples") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Some(examples) = examples.as_array() else {
        out.push(Violation {
            path: "/input_examples".into(),
            rule: Rule::InputExample,
            message: format!(
                "`input_examples` is {}; Anthropic takes an array of example input objects",
                kind(examples)
            ),
        });
        return out;
    };
    let schema = tool.get("input_schema");
    for (i, example) in examples.iter().enumerate() {
        let at = format!("/input_examples/{i}");
        if !example.is_object() {
            out.push(Violation {
                path: at,
                rule: Rule::InputExample,
                message: format!(
                    "this example is {}; an example is an object of the tool's arguments",
                    kind(example)
                ),
            });
            continue;
        }
        let Some(schema) = schema else {
            continue;
        };
        for found in check_arguments(schema, example) {
            out.push(Violation {
                path: format!("{at}{}", found.path),
                rule: Rule::InputExample,
                message: format!(
                    "{}; Anthropic refuses an example its tool's `input_schema` does not admit (a 400 error)",
                    found.message
                ),
            });
        }
    }
    out
}

struct Admit<'s> {
    root: &'s Value,
    out: Vec<Violation>,
    /// Each `pattern` met, compiled once (`None`: one the regex engine
    /// does not take).
    patterns: HashMap<&'s str, Option<Regex>>,
}

impl<'s> Admit<'s> {
    fn new(root: &'s Value) -> Self {
        Admit {
            root,
            out: Vec::new(),
            patterns: HashMap::new(),
        }
    }

    fn push(&mut self, path: &str, message: String) {
        self.out.push(Violation {
            path: path.to_owned(),
            rule: Rule::NotAdmitted,
            message,
        });
    }

    /// The violations of `v` against `schema` alone, not recorded.
    fn trial(
        &mut self,
        schema: &'s Value,
        v: &Value,
        path: &mut String,
        steps: usize,
    ) -> Vec<Violation> {
        let mut trial = Admit {
            root: self.root,
            out: Vec::new(),
            patterns: std::mem::take(&mut self.patterns),
        };
        trial.value(schema, v, path, steps);
        self.patterns = trial.patterns;
        trial.out
    }

    /// Checks `v`, at `path` (a JSON pointer, restored before returning),
    /// against `schema`.
    fn value(&mut self, schema: &'s Value, v: &Value, path: &mut String, steps: usize) {
        if steps > MAX_STEPS {
            self.push(
                path,
                format!("cannot be checked: the schema goes more than {MAX_STEPS} steps deep here (a `$ref` loop?)"),
            );
            return;
        }
        let node = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.push(path, "is here, where the schema admits no value".into());
                return;
            }
            Value::Object(node) => node,
            // Not a schema: nothing to hold the value to.
            _ => return,
        };
        if let Some(Value::String(target)) = node.get("$ref") {
            match self.resolve(target) {
                Some(target) => self.value(target, v, path, steps + 1),
                None if target.starts_with('#') => self.push(
                    path,
                    format!("cannot be checked: the schema's `$ref` `{target}` points at nothing"),
                ),
                // A remote reference: not followed.
                None => {}
            }
        }
        if v.is_null() && node.get("nullable") == Some(&Value::Bool(true)) {
            return;
        }
        if !self.types(node, v, path) {
            return;
        }
        self.literals(node, v, path);
        match v {
            Value::String(s) => self.string(node, s, path),
            Value::Number(_) => self.number(node, v, path),
            Value::Array(items) => self.array(node, items, path, steps),
            Value::Object(fields) => self.object(node, fields, path, steps),
            Value::Null | Value::Bool(_) => {}
        }
        self.unions(node, v, path, steps);
    }

    /// The schema a local `$ref` points at (`#`, `#/$defs/name`).
    fn resolve(&self, target: &str) -> Option<&'s Value> {
        let pointer = target.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    /// Whether `v` is of a `type` the node names (or the node names none);
    /// says so if not.
    fn types(&mut self, node: &Map<String, Value>, v: &Value, path: &str) -> bool {
        let names: Vec<&str> = match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return true,
        };
        if names.iter().any(|t| of_type(v, t)) {
            return true;
        }
        let wanted: Vec<String> = names.iter().map(|t| article(t)).collect();
        self.push(
            path,
            format!(
                "is {}; the schema asks for {}",
                kind(v),
                wanted.join(" or ")
            ),
        );
        false
    }

    fn literals(&mut self, node: &Map<String, Value>, v: &Value, path: &str) {
        if let Some(Value::Array(values)) = node.get("enum")
            && !values.iter().any(|allowed| same(allowed, v))
        {
            let listed: Vec<String> = values.iter().take(10).map(ToString::to_string).collect();
            let more = if values.len() > 10 { ", …" } else { "" };
            self.push(
                path,
                format!(
                    "is {}, not one of the schema's `enum` values ({}{more})",
                    shown(v),
                    listed.join(", ")
                ),
            );
        }
        if let Some(constant) = node.get("const")
            && !same(constant, v)
        {
            self.push(
                path,
                format!("is {}, not the schema's `const` {constant}", shown(v)),
            );
        }
    }

    fn string(&mut self, node: &'s Map<String, Value>, s: &str, path: &str) {
        let chars = s.chars().count();
        if let Some(min) = node.get("minLength").and_then(Value::as_u64)
            && (chars as u64) < min
        {
            self.push(
                path,
                format!("is {chars} characters long, fewer than the schema's `minLength` {min}"),
            );
        }
        if let Some(max) = node.get("maxLength").and_then(Value::as_u64)
            && (chars as u64) > max
        {
            self.push(
                path,
                format!("is {chars} characters long, more than the schema's `maxLength` {max}"),
            );
        }
        if let Some(Value::String(pattern)) = node.get("pattern")
            && let Some(regex) = self
                .patterns
                .entry(pattern)
                .or_insert_with(|| Regex::new(pattern).ok())
            && !regex.is_match(s)
        {
            self.push(
                path,
                format!(
                    "is {}, which does not match the schema's `pattern` `{pattern}`",
                    shown(&Value::String(s.to_owned()))
                ),
            );
        }
    }

    fn number(&mut self, node: &Map<String, Value>, v: &Value, path: &str) {
        let bounds = [
            ("minimum", false, true),
            ("maximum", true, true),
            ("exclusiveMinimum", false, false),
            ("exclusiveMaximum", true, false),
        ];
        for (keyword, upper, inclusive) in bounds {
            let Some(bound) = node.get(keyword).filter(|b| b.is_number()) else {
                continue;
            };
            let Some(order) = compare(v, bound) else {
                continue;
            };
            let outside = match (upper, inclusive) {
                (false, true) => order.is_lt(),
                (true, true) => order.is_gt(),
                (false, false) => order.is_le(),
                (true, false) => order.is_ge(),
            };
            if outside {
                let side = if upper { "above" } else { "below" };
                let reached = if inclusive { side } else { "not inside" };
                self.push(
                    path,
                    format!("is {v}, {reached} the schema's `{keyword}` {bound}"),
                );
            }
        }
        if let (Some(step), Some(n)) = (node.get("multipleOf").and_then(Value::as_f64), v.as_f64())
            && step > 0.0
            && (n / step).fract() != 0.0
        {
            self.push(
                path,
                format!("is {v}, not a multiple of the schema's `multipleOf` {step}"),
            );
        }
    }

    fn array(
        &mut self,
        node: &'s Map<String, Value>,
        items: &[Value],
        path: &mut String,
        steps: usize,
    ) {
        let count = items.len() as u64;
        if let Some(min) = node.get("minItems").and_then(Value::as_u64)
            && count < min
        {
            self.push(
                path,
                format!("has {count} items, fewer than the schema's `minItems` {min}"),
            );
        }
        if let Some(max) = node.get("maxItems").and_then(Value::as_u64)
            && count > max
        {
            self.push(
                path,
                format!("has {count} items, more than the schema's `maxItems` {max}"),
            );
        }
        let prefix: &[Value] = node
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        for (i, item) in items.iter().enumerate() {
            let schema = match (prefix.get(i), node.get("items")) {
                (Some(schema), _) => schema,
                (None, Some(schema @ (Value::Object(_) | Value::Bool(_)))) => schema,
                // Draft 4 to 2019's list form: one schema per position.
                (None, Some(Value::Array(list))) => match list.get(i) {
                    Some(schema) => schema,
                    None => continue,
                },
                _ => continue,
            };
            let len = path.len();
            path.push('/');
            path.push_str(&i.to_string());
            self.value(schema, item, path, steps + 1);
            path.truncate(len);
        }
    }

    fn object(
        &mut self,
        node: &'s Map<String, Value>,
        fields: &Map<String, Value>,
        path: &mut String,
        steps: usize,
    ) {
        let properties = node.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = node.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    self.push(path, format!("lacks `{name}`, which the schema requires"));
                }
            }
        }
        let count = fields.len() as u64;
        if let Some(min) = node.get("minProperties").and_then(Value::as_u64)
            && count < min
        {
            self.push(
                path,
                format!("has {count} properties, fewer than the schema's `minProperties` {min}"),
            );
        }
        if let Some(max) = node.get("maxProperties").and_then(Value::as_u64)
            && count > max
        {
            self.push(
                path,
                format!("has {count} properties, more than the schema's `maxProperties` {max}"),
            );
        }
        let additional = node.get("additionalProperties");
        let names = node.get("propertyNames");
        for (key, item) in fields {
            let len = path.len();
            path.push('/');
            push_pointer_token(path, key);
            if let Some(names) = names {
                for found in self.trial(names, &Value::String(key.clone()), path, steps + 1) {
                    self.push(
                        path,
                        format!(
                            "has a name the schema's `propertyNames` refuses: {}",
                            found.message
                        ),
                    );
                }
            }
            match (properties.and_then(|p| p.get(key)), additional) {
                (Some(schema), _) => self.value(schema, item, path, steps + 1),
                (None, Some(Value::Bool(false))) => {
                    let named: Vec<String> = properties
                        .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                        .unwrap_or_default();
                    let valid = if named.is_empty() {
                        "it names none".to_owned()
                    } else {
                        format!("it names {}", named.join(", "))
                    };
                    self.push(
                        path,
                        format!("is not a property the schema admits ({valid})"),
                    );
                }
                (None, Some(schema)) => self.value(schema, item, path, steps + 1),
                (None, None) => {}
            }
            path.truncate(len);
        }
    }

    fn unions(&mut self, node: &'s Map<String, Value>, v: &Value, path: &mut String, steps: usize) {
        if let Some(Value::Array(all)) = node.get("allOf") {
            for schema in all {
                self.value(schema, v, path, steps + 1);
            }
        }
        for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(Value::Array(branches)) = node.get(keyword) else {
                continue;
            };
            let trials: Vec<Vec<Violation>> = branches
                .iter()
                .map(|branch| self.trial(branch, v, path, steps + 1))
                .collect();
            let passed = trials.iter().filter(|t| t.is_empty()).count();
            if passed == 0 {
                // The branch it came closest to says what is wrong; a
                // `null` branch says only that the value is not null.
                let closest = trials
                    .into_iter()
                    .zip(branches)
                    .filter(|(_, branch)| !is_null_branch(branch) || v.is_null())
                    .min_by_key(|(found, _)| found.len());
                match closest {
                    Some((found, _)) => self.out.extend(found),
                    None => self.push(
                        path,
                        format!(
                            "is {}, which no branch of the schema's `{keyword}` admits",
                            kind(v)
                        ),
                    ),
                }
            } else if exactly_one && passed > 1 {
                self.push(
                    path,
                    format!("is admitted by {passed} branches of the schema's `oneOf`, which takes exactly one"),
                );
            }
        }
        if let Some(not) = node.get("not")
            && self.trial(not, v, path, steps + 1).is_empty()
        {
            self.push(
                path,
                "is admitted by the schema's `not`, which refuses it".into(),
            );
        }
    }
}

/// `{"type": "null"}`.
fn is_null_branch(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
}

/// Whether `v` is of the JSON Schema type `name`.
fn of_type(v: &Value, name: &str) -> bool {
    match (name, v) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// Equality of JSON values, numbers by value (`1` and `1.0` are one).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => {
            compare(a, b).is_some_and(std::cmp::Ordering::is_eq)
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The order of two numbers, exactly where both are integers.
fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    let whole = |v: &Value| {
        v.as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
    };
    match (whole(a), whole(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// `a string`, `an object`, … as a problem names a value's kind.
fn kind(v: &Value) -> &'static str {
    crate::inbound::kind_of(v)
}

/// A JSON Schema type name with its article: `an integer`, `a string`.
fn article(name: &str) -> String {
    match name {
        "integer" | "object" | "array" => format!("an {name}"),
        "null" => "null".to_owned(),
        _ => format!("a {name}"),
    }
}

/// A value as a problem shows it, cut short.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    crate::inbound::shorten(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(schema: &Value, v: &Value) -> Vec<(String, String)> {
        check_arguments(schema, v)
            .into_iter()
            .map(|v| (v.path, v.message))
            .collect()
    }

    #[test]
    fn references_unions_and_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "head": { "$ref": "#/$defs/Node" },
                "note": { "anyOf": [{ "type": "string", "maxLength": 3 }, { "type": "null" }] },
                "pick": { "anyOf": [
                    { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"], "additionalProperties": false },
                    { "type": "object", "properties": { "b": { "type": "integer" } }, "required": ["b"], "additionalProperties": false }
                ] },
                "old": { "type": "string", "nullable": true }
            },
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": { "next": { "$ref": "#/$defs/Node" }, "v": { "type": "integer" } }
                }
            }
        });
        let good = json!({"head": {"next": {"v": 2}}, "note": null, "pick": {"b": 1}, "old": null});
        assert_eq!(found(&schema, &good), []);
        let bad = json!({"head": {"next": {"v": 2.5}}, "note": "long", "pick": {"b": "x"}});
        assert_eq!(
            found(&schema, &bad),
            [
                (
                    "/head/next/v".to_owned(),
                    "is a number; the schema asks for an integer".to_owned()
                ),
                (
                    "/note".to_owned(),
                    "is 4 characters long, more than the schema's `maxLength` 3".to_owned()
                ),
                (
                    "/pick/b".to_owned(),
                    "is a string; the schema asks for an integer".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn numbers_exactly_and_patterns() {
        let schema = json!({
            "type": "object",
            "properties": {
                "big": { "type": "integer", "maximum": 9_223_372_036_854_775_807_i64 },
                "digits": { "type": "string", "pattern": "^(0|-?[1-9][0-9]*)$" },
                "keys": { "type": "object", "propertyNames": { "pattern": "^[0-9]+$" } }
            }
        });
        assert_eq!(
            found(
                &schema,
                &json!({"big": 9_223_372_036_854_775_807_i64, "digits": "-12"})
            ),
            []
        );
        let bad = found(
            &schema,
            &json!({"big": 9_223_372_036_854_775_808_u64, "digits": "012", "keys": {"a": 1}}),
        );
        let paths: Vec<&str> = bad.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["/big", "/digits", "/keys/a"], "{bad:?}");
        assert!(bad[0].1.contains("above the schema's `maximum`"), "{bad:?}");
    }

    #[test]
    fn a_loop_of_references_stops() {
        let schema = json!({ "$ref": "#" });
        let found = check_arguments(&schema, &json!({}));
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("steps deep"), "{found:?}");
    }
}
