//! Checkers: does a JSON Schema value obey a provider's documented rules?
//!
//! [`check`] works on any [`serde_json::Value`], not only on this crate's
//! renderings, and reports every rule broken, each with the JSON pointer of the
//! node (e.g. `/properties/a/items`).
//!
//! What is checked, per dialect (see [`crate::render`] for the sources):
//!
//! - every dialect: the root is `type: "object"` and not a union
//!   (`anyOf`/`oneOf`/`allOf`); every node has a `type`, except union and
//!   `$ref` nodes; a `$ref` points at a definition that exists;
//! - OpenAI strict (and canonical strict): only the Structured Outputs
//!   keywords and formats; `additionalProperties: false` on every object;
//!   every property listed in `required`; no keyword beside `$ref`; at most 10 levels of object nesting,
//!   5000 properties, 1000 enum values, 120,000 characters of property names,
//!   definition names, enum and const values, and 15,000 characters for an
//!   enum of more than 250 values;
//! - Anthropic strict: no numeric or length bounds, accepted formats only,
//!   `additionalProperties: false` on every object, no recursive `$ref`;
//! - Gemini (`parameters`): only fields of Gemini's `Schema`; no type arrays,
//!   no `additionalProperties`, no `$ref`/`$defs`, string enums only, the
//!   `date-time` and `enum` formats only.
//!
//! Per-request limits that span several tools (Anthropic's 20 strict tools,
//! 24 optional and 16 union-typed parameters; Gemini's 128 declarations) are
//! not a property of one schema and are not checked here.
//!
//! # Examples
//!
//! ```
//! use ai_tools_schema::check::{check, Rule};
//! use ai_tools_schema::Dialect;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "a": { "type": "string" } }
//! });
//! let violations = check(Dialect::OpenAi, true, &schema);
//! let rules: Vec<Rule> = violations.iter().map(|v| v.rule).collect();
//! assert_eq!(rules, [Rule::OpenObject, Rule::NotRequired]);
//! assert_eq!(violations[1].path, "/properties/a");
//! assert!(check(Dialect::Anthropic, false, &schema).is_empty());
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use crate::Dialect;
use crate::render::Profile;

/// OpenAI: total object properties in one schema.
pub const OPENAI_MAX_PROPERTIES: usize = 5000;
/// OpenAI: total enum values in one schema.
pub const OPENAI_MAX_ENUM_VALUES: usize = 1000;
/// OpenAI: total characters of property names, definition names, enum values
/// and const values.
pub const OPENAI_MAX_CHARS: usize = 120_000;
/// OpenAI: an enum of more than this many values ...
pub const OPENAI_LONG_ENUM: usize = 250;
/// ... may total at most this many characters.
pub const OPENAI_LONG_ENUM_CHARS: usize = 15_000;

/// A rule a schema broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The root is not `type: "object"`.
    RootNotObject,
    /// The root is a union (`anyOf`, `oneOf`, `allOf`).
    RootUnion,
    /// A node has no `type` (and is not a union or `$ref`), or is not an object.
    MissingType,
    /// A keyword the dialect does not accept.
    UnsupportedKeyword,
    /// A string `format` the dialect does not accept.
    UnsupportedFormat,
    /// An object that allows extra properties where the dialect forbids it
    /// (strict: `additionalProperties` must be `false`).
    OpenObject,
    /// `additionalProperties` in a dialect that does not accept the keyword.
    AdditionalProperties,
    /// A property missing from `required` where every property must be listed.
    NotRequired,
    /// `type` is an array in a dialect that accepts only one type.
    TypeArray,
    /// `$ref` or `$defs` in a dialect without references.
    RefNotAllowed,
    /// A `$ref` that is part of a cycle, in a dialect without recursion.
    RecursiveRef,
    /// A `$ref` to a definition that does not exist.
    DanglingRef,
    /// A `$ref` node with other keywords, in a dialect that rejects them.
    RefSiblings,
    /// A non-string enum value in a dialect with string enums only.
    NonStringEnum,
    /// Objects nested deeper than the dialect's limit.
    TooDeep,
    /// More properties in total than the dialect's limit.
    TooManyProperties,
    /// More enum values in total than the dialect's limit.
    TooManyEnumValues,
    /// A large enum whose values are too long in total.
    EnumTooLong,
    /// More characters of names and values than the dialect's limit.
    TooManyChars,
}

/// One broken rule, at one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the node, e.g. `/properties/a/items`; empty for the
    /// root.
    pub path: String,
    /// The rule.
    pub rule: Rule,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Checks `schema` against the rules of `dialect` (with `strict` where the
/// dialect has a strict mode) and returns every violation, in document order
/// (limits last).
pub fn check(dialect: Dialect, strict: bool, schema: &Value) -> Vec<Violation> {
    let mut c = Checker {
        p: Profile::of(dialect, strict),
        out: Vec::new(),
        properties: 0,
        enum_values: 0,
        chars: 0,
        def: None,
        refs: Vec::new(),
        def_refs: BTreeMap::new(),
        def_names: BTreeSet::new(),
    };
    c.root(schema);
    c.out
}

struct Checker {
    p: Profile,
    out: Vec<Violation>,
    properties: usize,
    enum_values: usize,
    chars: usize,
    /// The definition being walked.
    def: Option<String>,
    /// Every `$ref`: (path, target definition or `None` for the root `#`).
    refs: Vec<(String, Option<String>)>,
    /// Definition (or `""` for the root) -> definitions it refers to.
    def_refs: BTreeMap<String, BTreeSet<String>>,
    /// Every definition name met.
    def_names: BTreeSet<String>,
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn unescape(key: &str) -> String {
    key.replace("~1", "/").replace("~0", "~")
}

impl Checker {
    fn push(&mut self, path: &str, rule: Rule, message: String) {
        self.out.push(Violation {
            path: path.to_owned(),
            rule,
            message,
        });
    }

    fn root(&mut self, schema: &Value) {
        match schema.as_object() {
            Some(root) => {
                if root.get("type").and_then(Value::as_str) != Some("object") {
                    self.push(
                        "",
                        Rule::RootNotObject,
                        "the root schema is not `\"type\": \"object\"`; tool parameters must be an object, so wrap the value in a property".into(),
                    );
                }
                for key in ["anyOf", "oneOf", "allOf"] {
                    if root.contains_key(key) {
                        self.push(
                            "",
                            Rule::RootUnion,
                            format!("the root schema uses `{key}`; providers reject a union at the root, so make the root a plain object whose members are optional properties"),
                        );
                    }
                }
            }
            None => self.push(
                "",
                Rule::RootNotObject,
                "the root schema is not a JSON object; tool parameters must be `{\"type\": \"object\", ...}`".into(),
            ),
        }
        self.node(schema, "", 0);
        self.finish();
    }

    fn node(&mut self, v: &Value, path: &str, depth: usize) {
        let Some(node) = v.as_object() else {
            self.push(
                path,
                Rule::MissingType,
                format!("schema node is `{v}`, not an object with a `type`; write an explicit schema such as `{{\"type\": \"string\"}}`"),
            );
            return;
        };
        let types: Vec<&str> = match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => {
                if !self.p.type_arrays {
                    self.push(
                        path,
                        Rule::TypeArray,
                        "`type` is an array, which this dialect does not accept; use one type (and `nullable: true` for null)".into(),
                    );
                }
                ts.iter().filter_map(Value::as_str).collect()
            }
            _ => Vec::new(),
        };
        let union = ["anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| node.contains_key(*k));
        if types.is_empty() && !union && !node.contains_key("$ref") {
            self.push(
                path,
                Rule::MissingType,
                "schema node has no `type`; some providers reject typeless nodes, so add one (e.g. `\"type\": \"string\"`)".into(),
            );
        }
        self.keywords(node, path);
        self.format(node, path);
        self.enums(node, path);
        self.reference(node, path);

        let is_object = types.contains(&"object") || node.contains_key("properties");
        let depth = if is_object { depth + 1 } else { depth };
        if is_object {
            if let Some(max) = self.p.max_depth
                && depth == max + 1
            {
                self.push(
                    path,
                    Rule::TooDeep,
                    format!("objects are nested {depth} levels deep here; the limit is {max}, so flatten the structure or pass the inner object as a JSON-encoded string"),
                );
            }
            self.object(node, path);
        }
        self.children(node, path, depth);
    }

    fn keywords(&mut self, node: &Map<String, Value>, path: &str) {
        for key in node.keys() {
            let key = key.as_str();
            if key == "additionalProperties" && !self.p.closed_keyword {
                self.push(
                    path,
                    Rule::AdditionalProperties,
                    "`additionalProperties` is not accepted by this dialect; remove it (and turn maps into arrays of `{key, value}` entries)".into(),
                );
                continue;
            }
            if matches!(key, "$ref" | "$defs" | "definitions") && !self.p.refs {
                self.push(
                    path,
                    Rule::RefNotAllowed,
                    format!("`{key}` is not accepted by this dialect; inline the definition (cutting recursion with a JSON-encoded string)"),
                );
                continue;
            }
            if let Some(allowed) = self.p.keywords
                && !allowed.contains(&key)
            {
                self.push(
                    path,
                    Rule::UnsupportedKeyword,
                    format!("keyword `{key}` is not supported by this dialect; remove it (say it in the `description` if the model needs it)"),
                );
            }
        }
    }

    fn format(&mut self, node: &Map<String, Value>, path: &str) {
        let (Some(allowed), Some(format)) = (self.p.formats, node.get("format")) else {
            return;
        };
        let Some(format) = format.as_str() else {
            return;
        };
        let gemini_enum = self.p.string_enums && format == "enum";
        if !allowed.contains(&format) && !gemini_enum {
            self.push(
                path,
                Rule::UnsupportedFormat,
                format!(
                    "format `{format}` is not supported by this dialect (supported: {}); remove it and describe the format in the `description`",
                    allowed
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }

    fn enums(&mut self, node: &Map<String, Value>, path: &str) {
        if let Some(Value::Array(values)) = node.get("enum") {
            self.enum_values += values.len();
            let mut chars = 0;
            for value in values {
                match value {
                    Value::String(s) => chars += s.chars().count(),
                    Value::Null if !self.p.string_enums => {}
                    other if self.p.string_enums => {
                        self.push(
                            path,
                            Rule::NonStringEnum,
                            format!("enum value `{other}` is not a string; this dialect accepts string enums only, so use the value's name"),
                        );
                    }
                    _ => {}
                }
            }
            self.chars += chars;
            if self.p.openai_limits
                && values.len() > OPENAI_LONG_ENUM
                && chars > OPENAI_LONG_ENUM_CHARS
            {
                self.push(
                    path,
                    Rule::EnumTooLong,
                    format!("this enum has {} values totalling {chars} characters; above {OPENAI_LONG_ENUM} values the limit is {OPENAI_LONG_ENUM_CHARS} characters, so shorten or split it", values.len()),
                );
            }
        }
        if let Some(Value::String(s)) = node.get("const") {
            self.chars += s.chars().count();
        }
    }

    fn reference(&mut self, node: &Map<String, Value>, path: &str) {
        let Some(target) = node.get("$ref").and_then(Value::as_str) else {
            return;
        };
        if !self.p.ref_siblings && self.p.refs && node.len() > 1 {
            let others: Vec<String> = node
                .keys()
                .filter(|k| *k != "$ref")
                .map(|k| format!("`{k}`"))
                .collect();
            self.push(
                path,
                Rule::RefSiblings,
                format!("`$ref` sits beside {}, which this dialect rejects; move them to an `anyOf` wrapping the `$ref`", others.join(", ")),
            );
        }
        let target = if target == "#" {
            None
        } else if let Some(name) = target
            .strip_prefix("#/$defs/")
            .or_else(|| target.strip_prefix("#/definitions/"))
        {
            Some(unescape(name))
        } else {
            // Remote or deep pointers: not ours to resolve.
            return;
        };
        let from = self.def.clone().unwrap_or_default();
        self.def_refs
            .entry(from)
            .or_default()
            .insert(target.clone().unwrap_or_default());
        self.refs.push((path.to_owned(), target));
    }

    fn object(&mut self, node: &Map<String, Value>, path: &str) {
        if !self.p.open_objects
            && self.p.closed_keyword
            && node.get("additionalProperties") != Some(&Value::Bool(false))
        {
            self.push(
                path,
                Rule::OpenObject,
                "object does not say `\"additionalProperties\": false`; this dialect forbids open objects, so add it (pass free-form data as a JSON-encoded string)".into(),
            );
        }
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            return;
        };
        self.properties += properties.len();
        self.chars += properties.keys().map(|k| k.chars().count()).sum::<usize>();
        if self.p.all_required {
            let required: BTreeSet<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in properties.keys() {
                if !required.contains(name.as_str()) {
                    self.push(
                        &format!("{path}/properties/{}", escape(name)),
                        Rule::NotRequired,
                        format!("property `{name}` is not in `required`; strict mode requires every property, so list it and make it nullable if it is optional"),
                    );
                }
            }
        }
    }

    fn children(&mut self, node: &Map<String, Value>, path: &str, depth: usize) {
        if let Some(Value::Object(properties)) = node.get("properties") {
            for (name, sub) in properties {
                self.node(sub, &format!("{path}/properties/{}", escape(name)), depth);
            }
        }
        for key in ["items", "additionalProperties", "not"] {
            match node.get(key) {
                Some(sub @ Value::Object(_)) => self.node(sub, &format!("{path}/{key}"), depth),
                // `true`/`false` are schemas too, but for `additionalProperties`
                // they are the open/closed switch.
                Some(sub @ Value::Bool(_)) if key != "additionalProperties" => {
                    self.node(sub, &format!("{path}/{key}"), depth);
                }
                Some(Value::Array(subs)) if key == "items" => {
                    for (i, sub) in subs.iter().enumerate() {
                        self.node(sub, &format!("{path}/{key}/{i}"), depth);
                    }
                }
                _ => {}
            }
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            if let Some(Value::Array(subs)) = node.get(key) {
                for (i, sub) in subs.iter().enumerate() {
                    self.node(sub, &format!("{path}/{key}/{i}"), depth);
                }
            }
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = node.get(key) {
                for (name, sub) in defs {
                    self.chars += name.chars().count();
                    self.def_names.insert(name.clone());
                    let outer = self.def.replace(name.clone());
                    self.node(sub, &format!("{path}/{key}/{}", escape(name)), 0);
                    self.def = outer;
                }
            }
        }
    }

    /// Whole-schema rules: reference targets, recursion, totals.
    fn finish(&mut self) {
        let refs = std::mem::take(&mut self.refs);
        for (path, target) in &refs {
            if let Some(name) = target
                && !self.def_names.contains(name)
            {
                self.push(
                    path,
                    Rule::DanglingRef,
                    format!("`$ref` points at `{name}`, which is not in `$defs`; define it or fix the reference"),
                );
                continue;
            }
            if self.p.refs && !self.p.recursion {
                let name = target.clone().unwrap_or_default();
                if self.reaches(&name, &name) {
                    self.push(
                        path,
                        Rule::RecursiveRef,
                        "this `$ref` is recursive, which this dialect does not accept; inline the type to a fixed depth and pass deeper levels as a JSON-encoded string".into(),
                    );
                }
            }
        }
        if !self.p.openai_limits {
            return;
        }
        if self.properties > OPENAI_MAX_PROPERTIES {
            self.push(
                "",
                Rule::TooManyProperties,
                format!("the schema has {} properties; the limit is {OPENAI_MAX_PROPERTIES}, so split the tool or skip fields with `(ai.tools.v1.tool_field).skip`", self.properties),
            );
        }
        if self.enum_values > OPENAI_MAX_ENUM_VALUES {
            self.push(
                "",
                Rule::TooManyEnumValues,
                format!("the schema has {} enum values; the limit is {OPENAI_MAX_ENUM_VALUES}, so use plain strings for the largest enums", self.enum_values),
            );
        }
        if self.chars > OPENAI_MAX_CHARS {
            self.push(
                "",
                Rule::TooManyChars,
                format!("property names, definition names and enum values total {} characters; the limit is {OPENAI_MAX_CHARS}, so shorten or remove some", self.chars),
            );
        }
    }

    /// Whether `to` is reachable from `from` through `$ref`s (`""`: the root).
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = vec![from];
        while let Some(node) = stack.pop() {
            for next in self.def_refs.get(node).into_iter().flatten() {
                if next == to {
                    return true;
                }
                if seen.insert(next.as_str()) {
                    stack.push(next);
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(dialect: Dialect, strict: bool, schema: &Value) -> Vec<(String, Rule)> {
        check(dialect, strict, schema)
            .into_iter()
            .map(|v| (v.path, v.rule))
            .collect()
    }

    fn at(path: &str, rule: Rule) -> (String, Rule) {
        (path.to_owned(), rule)
    }

    #[test]
    fn root_must_be_a_plain_object() {
        let schema = json!({ "anyOf": [{ "type": "object" }, { "type": "string" }] });
        for dialect in Dialect::ALL {
            let found = rules(dialect, false, &schema);
            assert!(found.contains(&at("", Rule::RootNotObject)), "{dialect}");
            assert!(found.contains(&at("", Rule::RootUnion)), "{dialect}");
        }
        assert_eq!(
            rules(Dialect::JsonSchema, false, &json!("x")),
            [at("", Rule::RootNotObject), at("", Rule::MissingType)]
        );
    }

    #[test]
    fn typeless_nodes() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "description": "no type" },
                "b": { "type": "array", "items": true },
                "c": { "anyOf": [{ "type": "string" }, {}] }
            }
        });
        assert_eq!(
            rules(Dialect::Anthropic, false, &schema),
            [
                at("/properties/a", Rule::MissingType),
                at("/properties/b/items", Rule::MissingType),
                at("/properties/c/anyOf/1", Rule::MissingType),
            ]
        );
    }

    #[test]
    fn openai_strict_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": "string", "format": "byte", "minLength": 1 },
                "b/c": { "type": "object", "properties": {}, "additionalProperties": true, "required": [] },
                "d": { "$ref": "#/$defs/D", "description": "beside" },
                "e": { "$ref": "#/$defs/Missing" }
            },
            "required": ["a", "d", "e"],
            "additionalProperties": false,
            "$defs": { "D": { "type": "object", "properties": {}, "required": [], "additionalProperties": false } }
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &schema),
            [
                at("/properties/b~1c", Rule::NotRequired),
                at("/properties/a", Rule::UnsupportedKeyword),
                at("/properties/a", Rule::UnsupportedFormat),
                at("/properties/b~1c", Rule::OpenObject),
                at("/properties/d", Rule::RefSiblings),
                at("/properties/e", Rule::DanglingRef),
            ]
        );
        // Canonical strict follows the same rules; non-strict canonical does not.
        assert_eq!(rules(Dialect::JsonSchema, true, &schema).len(), 6);
        assert_eq!(
            rules(Dialect::JsonSchema, false, &schema),
            [at("/properties/e", Rule::DanglingRef)]
        );
    }

    #[test]
    fn openai_limits() {
        // Depth: eleven nested objects.
        let mut deep = json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false });
        for _ in 0..10 {
            deep = json!({ "type": "object", "properties": { "x": deep }, "required": ["x"], "additionalProperties": false });
        }
        let found = rules(Dialect::OpenAi, true, &deep);
        assert_eq!(found, [at(&"/properties/x".repeat(10), Rule::TooDeep)]);

        // Properties, enum values and characters.
        let names: Map<String, Value> = (0..5001)
            .map(|i| (format!("p{i}"), json!({ "type": "string" })))
            .collect();
        let required: Vec<Value> = names.keys().map(|k| json!(k)).collect();
        let many = json!({ "type": "object", "properties": names, "required": required, "additionalProperties": false });
        assert_eq!(
            rules(Dialect::OpenAi, true, &many),
            [at("", Rule::TooManyProperties)]
        );

        let values: Vec<Value> = (0..1001).map(|i| json!(format!("{i:0>60}"))).collect();
        let enums = json!({
            "type": "object",
            "properties": { "e": { "type": "string", "enum": values } },
            "required": ["e"],
            "additionalProperties": false
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &enums),
            [
                at("/properties/e", Rule::EnumTooLong),
                at("", Rule::TooManyEnumValues)
            ]
        );

        let long = "n".repeat(OPENAI_MAX_CHARS + 1);
        let chars = json!({
            "type": "object",
            "properties": { long.clone(): { "type": "string" } },
            "required": [long],
            "additionalProperties": false
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &chars),
            [at("", Rule::TooManyChars)]
        );
        // Non-strict OpenAI does not apply the Structured Outputs limits.
        assert!(rules(Dialect::OpenAi, false, &chars).is_empty());
    }

    #[test]
    fn gemini_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "null"] },
                "b": { "type": "object", "additionalProperties": { "type": "string" } },
                "c": { "$ref": "#/$defs/C" },
                "d": { "type": "integer", "enum": [1, 2] },
                "e": { "type": "string", "format": "uuid" },
                "f": { "type": "string", "format": "enum", "enum": ["X"] },
                "g": { "type": "string", "const": "x" }
            },
            "$defs": { "C": { "type": "string" } }
        });
        assert_eq!(
            rules(Dialect::Gemini, false, &schema),
            [
                at("", Rule::RefNotAllowed),
                at("/properties/a", Rule::TypeArray),
                at("/properties/b", Rule::AdditionalProperties),
                at("/properties/c", Rule::RefNotAllowed),
                at("/properties/d", Rule::NonStringEnum),
                at("/properties/d", Rule::NonStringEnum),
                at("/properties/e", Rule::UnsupportedFormat),
                at("/properties/g", Rule::UnsupportedKeyword),
            ]
        );
        // The JSON Schema path of Gemini accepts all of it.
        assert!(rules(Dialect::GeminiJsonSchema, false, &schema).is_empty());
    }

    #[test]
    fn anthropic_strict_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": { "type": "integer", "minimum": 0 },
                "open": { "type": "object" },
                "tree": { "$ref": "#/$defs/Tree" },
                "flat": { "$ref": "#/$defs/Flat" }
            },
            "additionalProperties": false,
            "$defs": {
                "Tree": {
                    "type": "object",
                    "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Tree" } } },
                    "additionalProperties": false
                },
                "Flat": { "type": "object", "properties": {}, "additionalProperties": false }
            }
        });
        assert_eq!(
            rules(Dialect::Anthropic, true, &schema),
            [
                at("/properties/n", Rule::UnsupportedKeyword),
                at("/properties/open", Rule::OpenObject),
                at("/properties/tree", Rule::RecursiveRef),
                at("/$defs/Tree/properties/kids/items", Rule::RecursiveRef),
            ]
        );
        // Non-strict Anthropic accepts recursion and open objects.
        assert!(rules(Dialect::Anthropic, false, &schema).is_empty());
    }

    #[test]
    fn violations_display_path_and_message() {
        let v = check(Dialect::OpenAi, true, &json!({ "type": "string" }));
        assert_eq!(v[0].to_string().split(": ").next(), Some("/"));
        assert!(v[0].message.starts_with("the root schema"));
    }
}
