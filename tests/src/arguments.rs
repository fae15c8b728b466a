//! Argument values generated from a tool's *rendered* schema.
//!
//! [`Generator`] turns a rendered schema (any `serde_json::Value`) into a
//! proptest strategy of argument values that the schema accepts: objects
//! with their required properties and some optional ones, `null` where a
//! type array, `anyOf` or `nullable` allows it, arrays, enums, map entry
//! arrays, and strings of the shape the schema (or, where the dialect
//! dropped the keyword, the description) asks for: RFC 3339 date-times,
//! durations, base64, JSON-encoded objects at cuts.
//!
//! Where the schema cannot say what decodes, the generator plays the model
//! that read the description: integers stay within `i32` (a 64-bit one
//! given as a string of digits takes its whole stated range), an `Any` names a
//! type the pool knows, alias-carrying fields get aliases the conversation
//! issued (by property name).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just, Union};
use serde_json::{Map, Value, json};

/// Past this many nested schema nodes, only minimal values are generated.
const GROW_DEPTH: usize = 12;

/// Turns a rendered schema into a strategy of values it accepts.
#[derive(Debug, Clone, Copy)]
pub struct Generator<'a> {
    /// The rendered schema (its `$defs` are looked up here).
    pub root: &'a Value,
    /// The aliases a string property takes, by property name.
    pub aliases: &'a BTreeMap<String, Vec<String>>,
}

impl Generator<'_> {
    /// Values the schema accepts, optional properties sometimes present.
    pub fn strategy(&self) -> BoxedStrategy<Value> {
        self.node(self.root, &[], 0, None, false)
    }

    /// The smallest values the schema accepts: required properties only,
    /// `null` wherever allowed (a strict schema's all-null optionals).
    pub fn minimal(&self) -> BoxedStrategy<Value> {
        self.node(self.root, &[], 0, None, true)
    }

    /// `refs`: definitions being expanded; `alias`: the aliases a string here
    /// takes; `minimal`: generate the smallest valid value.
    fn node(
        &self,
        node: &Value,
        refs: &[String],
        depth: usize,
        alias: Option<&Vec<String>>,
        minimal: bool,
    ) -> BoxedStrategy<Value> {
        let minimal = minimal || depth > GROW_DEPTH;
        let Some(obj) = node.as_object() else {
            // `true` (or a non-schema): anything goes.
            return small_json();
        };
        if depth > 64 {
            return Just(Value::Null).boxed();
        }
        if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
            let name = target
                .strip_prefix("#/$defs/")
                .unwrap_or(target)
                .replace("~1", "/")
                .replace("~0", "~");
            let def = &self.root["$defs"][&name];
            let again = refs.contains(&name);
            let mut refs = refs.to_vec();
            refs.push(name);
            return self.node(def, &refs, depth + 1, alias, minimal || again);
        }
        if let Some(Value::Array(branches)) = obj.get("anyOf") {
            let null = branches.iter().any(|b| b["type"] == "null");
            if minimal && null {
                return Just(Value::Null).boxed();
            }
            // The description (with the hints of dropped keywords) sits on
            // the union; its branches inherit it.
            let branches: Vec<Value> = branches
                .iter()
                .map(|b| match (b, obj.get("description")) {
                    (Value::Object(b), Some(d)) if !b.contains_key("description") => {
                        let mut b = b.clone();
                        b.insert("description".into(), d.clone());
                        Value::Object(b)
                    }
                    (b, _) => b.clone(),
                })
                .collect();
            if minimal || branches.len() == 1 {
                let first = branches.first().unwrap_or(&Value::Null);
                return self.node(first, refs, depth + 1, alias, minimal);
            }
            return Union::new(
                branches
                    .iter()
                    .map(|b| self.node(b, refs, depth + 1, alias, minimal)),
            )
            .boxed();
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec!["object", "array", "string", "number", "boolean", "null"],
        };
        let nullable = obj.get("nullable") == Some(&Value::Bool(true)) || types.contains(&"null");
        if minimal && nullable {
            return Just(Value::Null).boxed();
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            let values = values.clone();
            return (0..values.len())
                .prop_map(move |i| values[i].clone())
                .boxed();
        }
        let mut options: Vec<BoxedStrategy<Value>> = types
            .iter()
            .filter(|t| **t != "null")
            .map(|t| self.typed(t, obj, refs, depth, alias, minimal))
            .collect();
        if nullable {
            options.push(Just(Value::Null).boxed());
        }
        if options.len() == 1 {
            options.pop().unwrap_or_else(|| Just(Value::Null).boxed())
        } else {
            Union::new(options).boxed()
        }
    }

    fn typed(
        &self,
        t: &str,
        obj: &Map<String, Value>,
        refs: &[String],
        depth: usize,
        alias: Option<&Vec<String>>,
        minimal: bool,
    ) -> BoxedStrategy<Value> {
        match t {
            "string" => string(obj, alias),
            "integer" => {
                // Where the dialect has no bounds (Anthropic strict), the
                // description says "An integer from X to Y.".
                let hint = |first: bool| -> Option<i64> {
                    let description = obj.get("description").and_then(Value::as_str)?;
                    let rest = description.split("An integer from ").nth(1)?;
                    let (lo, rest) = rest.split_once(" to ")?;
                    let hi = rest.split('.').next()?;
                    (if first { lo } else { hi }).parse::<i128>().ok().map(|n| {
                        i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX })
                    })
                };
                let bound = |key: &str, first: bool, default: i64| {
                    obj.get(key)
                        .and_then(|b| b.as_i64().or_else(|| b.as_u64().map(|_| i64::MAX)))
                        .or_else(|| hint(first))
                        .unwrap_or(default)
                };
                let lo = bound("minimum", true, i64::from(i32::MIN)).max(i64::from(i32::MIN));
                let hi = bound("maximum", false, i64::from(i32::MAX)).min(i64::from(i32::MAX));
                (lo..=hi).prop_map(Value::from).boxed()
            }
            "number" => (-1.0e6f64..1.0e6).prop_map(|f| json!(f)).boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "array" => {
                if minimal {
                    return Just(json!([])).boxed();
                }
                let items = obj.get("items").unwrap_or(&Value::Bool(true));
                proptest::collection::vec(self.node(items, refs, depth + 1, alias, minimal), 0..3)
                    .prop_map(Value::Array)
                    .boxed()
            }
            "object" => self.object(obj, refs, depth, minimal),
            _ => Just(Value::Null).boxed(),
        }
    }

    fn object(
        &self,
        obj: &Map<String, Value>,
        refs: &[String],
        depth: usize,
        minimal: bool,
    ) -> BoxedStrategy<Value> {
        let empty = Map::new();
        let properties = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if properties.contains_key("@type") {
            // `google.protobuf.Any`: a type the pool knows, with its JSON form.
            return Just(any_duration()).boxed();
        }
        let required: BTreeSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
        for (name, schema) in properties {
            let alias = self.aliases.get(name);
            let is_required = required.contains(name.as_str());
            if !is_required && minimal {
                continue;
            }
            let name = name.clone();
            let value = self
                .node(schema, refs, depth + 1, alias, minimal)
                .prop_map(move |v| (name.clone(), v));
            fields.push(if is_required {
                value.prop_map(Some).boxed()
            } else {
                proptest::option::of(value).boxed()
            });
        }
        let extra: BoxedStrategy<Vec<(String, Value)>> = match obj.get("additionalProperties") {
            Some(schema @ Value::Object(_)) if !minimal => proptest::collection::vec(
                (
                    map_key(obj.get("propertyNames")),
                    self.node(schema, refs, depth + 1, None, minimal),
                ),
                0..3,
            )
            .boxed(),
            Some(Value::Bool(true)) if !minimal => {
                proptest::collection::vec(("[a-z]{1,4}", small_json()), 0..3).boxed()
            }
            _ => Just(Vec::new()).boxed(),
        };
        // A oneof is one property whose `anyOf` holds exactly one member:
        // the schema itself keeps the generator to one.
        (fields, extra)
            .prop_map(move |(fields, extra)| {
                let mut out: Map<String, Value> = fields.into_iter().flatten().collect();
                for (k, v) in extra {
                    out.entry(k).or_insert(v);
                }
                Value::Object(out)
            })
            .boxed()
    }
}

/// A string of the shape the node asks for, by keyword or by the hint the
/// renderer wrote into the description where the dialect dropped it.
fn string(obj: &Map<String, Value>, alias: Option<&Vec<String>>) -> BoxedStrategy<Value> {
    let description = obj.get("description").and_then(Value::as_str).unwrap_or("");
    let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
    let pattern = obj.get("pattern").and_then(Value::as_str).unwrap_or("");
    if let Some(aliases) = alias {
        let mut choices = aliases.clone();
        choices.push(String::new());
        return (0..choices.len())
            .prop_map(move |i| Value::String(choices[i].clone()))
            .boxed();
    }
    if let Some(range) = description
        .split("An integer from ")
        .nth(1)
        .and_then(|rest| rest.split_once(", as a string of digits."))
        .map(|(range, _)| range)
    {
        // A 64-bit integer where the arguments pass through doubles: its
        // digits, anywhere in the stated range, its ends included.
        let bound = |text: Option<&str>| text.and_then(|t| t.parse::<i128>().ok());
        let (lo, hi) = range
            .split_once(" to ")
            .map_or((None, None), |(lo, hi)| (bound(Some(lo)), bound(Some(hi))));
        let (lo, hi) = (
            lo.unwrap_or(i128::from(i64::MIN)),
            hi.unwrap_or(i128::from(u64::MAX)),
        );
        return prop_oneof![
            Just(lo),
            Just(hi),
            (lo..=hi),
            // Just past what a double holds exactly, where the range has it.
            Just((1i128 << 53) + 1).prop_filter("in range", move |n| *n <= hi),
        ]
        .prop_map(|n| Value::String(n.to_string()))
        .boxed();
    }
    if format == "date-time" || description.contains("RFC 3339") {
        return rfc3339().prop_map(Value::String).boxed();
    }
    if format == "byte" || description.contains("Base64") {
        return proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(|b| Value::String(base64(&b)))
            .boxed();
    }
    if pattern == proto_ai_tools::schema::ir::DURATION_PATTERN
        || description.contains("A duration in seconds")
    {
        return duration().prop_map(Value::String).boxed();
    }
    if pattern == proto_ai_tools::schema::ir::FIELD_MASK_PATTERN
        || description.contains("Comma-separated field paths")
    {
        return proptest::collection::vec(
            "[a-z][a-zA-Z0-9]{0,5}(\\.[a-z][a-zA-Z0-9]{0,5}){0,2}",
            0..3,
        )
        .prop_map(|paths| Value::String(paths.join(",")))
        .boxed();
    }
    if description.contains("an object or array as its JSON text") {
        // A `Value`'s string: itself, or the JSON text of what it stands for.
        return prop_oneof![
            "[a-zA-Z0-9 _.-]{0,10}".prop_map(Value::String),
            small_json().prop_map(|v| Value::String(v.to_string())),
        ]
        .boxed();
    }
    if description.contains("JSON-encoded `google.protobuf.Any` object") {
        return Just(Value::String(any_duration().to_string())).boxed();
    }
    if description.contains("A JSON-encoded object.") {
        return proptest::collection::btree_map("[a-z]{1,4}", small_json(), 0..3)
            .prop_map(|m| Value::String(json!(m).to_string()))
            .boxed();
    }
    if description.contains("A JSON-encoded") {
        // A message past a cut, or a map: the empty one always decodes.
        return Just(Value::String("{}".into())).boxed();
    }
    "[a-zA-Z0-9 _.-]{0,10}".prop_map(Value::String).boxed()
}

/// Keys of an open-object map: by `propertyNames`, else free strings.
fn map_key(names: Option<&Value>) -> BoxedStrategy<String> {
    match names.and_then(|n| n["pattern"].as_str()) {
        Some("^[0-9]+$") => (0u32..=u32::MAX).prop_map(|k| k.to_string()).boxed(),
        Some("^-?[0-9]+$") => any::<i32>().prop_map(|k| k.to_string()).boxed(),
        Some("^(true|false)$") => any::<bool>().prop_map(|k| k.to_string()).boxed(),
        _ => "[a-z]{1,4}".boxed(),
    }
}

/// The `google.protobuf.Any` the description of `@type` suggests: a
/// `google.protobuf.Duration`, a type every pool knows.
pub fn any_duration() -> Value {
    json!({ "@type": "type.googleapis.com/google.protobuf.Duration", "value": "1.5s" })
}

/// Small JSON values of every type.
fn small_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i32..1000).prop_map(Value::from),
        "[a-z ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..3).prop_map(|m| json!(m)),
        ]
    })
    .boxed()
}

/// RFC 3339 date-times, with `Z` or an offset and an optional fraction.
fn rfc3339() -> impl Strategy<Value = String> {
    (
        1971u32..2100,
        1u32..=12,
        1u32..=28,
        0u32..24,
        0u32..60,
        0u32..60,
        proptest::option::of(0u32..1_000_000_000),
        prop_oneof![
            Just("Z".to_owned()),
            (0u32..14, 0u32..60, any::<bool>())
                .prop_map(|(h, m, neg)| format!("{}{h:02}:{m:02}", if neg { '-' } else { '+' }))
        ],
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, zone)| {
            let frac = frac.map(|f| format!(".{f:09}")).unwrap_or_default();
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}{zone}")
        })
}

/// Durations matching the rendered pattern.
fn duration() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        // The pattern allows 11 digits of seconds, within protobuf's range.
        0u64..=99_999_999_999,
        proptest::option::of(0u32..1_000_000_000),
    )
        .prop_map(|(neg, secs, frac)| {
            let sign = if neg { "-" } else { "" };
            let frac = frac.map(|f| format!(".{f:09}")).unwrap_or_default();
            format!("{sign}{secs}{frac}s")
        })
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
