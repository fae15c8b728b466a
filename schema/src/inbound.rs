//! Inbound: a model's arguments made ready to decode, by the IR that rendered
//! the schema the model read.
//!
//! Every rendering shapes the IR for its provider (see [`crate::render`]);
//! this module undoes that shaping, so that whatever any rendering admits
//! arrives in one form: protojson's for a proto request, serde's for a
//! hand-written tool's input. Generated and hand-written tools both call it;
//! it is the one place that knows how shaping is undone.
//!
//! 1. [`parse`]: the arguments text, bounded by [`Limits`] (size, depth,
//!    string length, array items), checked before a value is built where it
//!    can be. A JSON string holding the object (some models double-encode)
//!    is the object.
//! 2. [`unshape`], walking the value along the IR:
//!    - `null` for a property that is not nullable means absent (strict
//!      dialects send it for every optional property they leave out);
//!    - a map may arrive as `[{"key": k, "value": v}, ...]`;
//!    - an object, map, array or any-value past a dialect's cut may arrive as
//!      a string holding its JSON (held to the same bounds);
//!    - a protobuf oneof ([`Kind::OneOf`] with `inline`) arrives as
//!      `{"target": {"email": ...}}` and is lifted to protojson's flat
//!      `{"email": ...}`, which is also accepted as sent; two members are
//!      refused, naming both;
//!    - integers are whole numbers within their bounds (`3.0` and the
//!      protojson string form `"3"` are whole numbers); numbers within
//!      theirs; enums one of their values; base64 in either alphabet, padded
//!      or not (sent on in the standard alphabet); durations, field masks and
//!      date-times of the form their pattern or format states;
//!    - a key no property has is refused (hidden fields are not in the IR,
//!      so they are refused the same way), naming the valid ones;
//!    - strings marked with an alias prefix are listed as [`AliasSlot`]s, for
//!      the caller to resolve (aliases live in a conversation, not here).
//!
//! Every problem names the path of the value at fault, e.g.
//! `cargo_by_stop["a"].manifest`, and every problem of one call is reported
//! at once.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::inbound::{parse, unshape, Limits};
//! use proto_ai_tools_schema::ir::{Object, Schema};
//! use serde_json::json;
//!
//! let schema = Schema::object(
//!     Object::new()
//!         .property("count", Schema::integer_within(0, 10), false)
//!         .property("labels", Schema::map(Schema::string(), Schema::string()), false),
//! );
//! let limits = Limits::default();
//!
//! // OpenAI strict sends `null` for a left-out optional, Gemini a map as entries.
//! let mut args = parse(r#"{"count": null, "labels": [{"key": "a", "value": "b"}]}"#, &limits).unwrap();
//! let aliases = unshape(&schema, &mut args, &limits).unwrap();
//! assert_eq!(args, json!({"labels": {"a": "b"}}));
//! assert!(aliases.is_empty());
//!
//! let mut args = json!({"count": 11, "colour": "red"});
//! let problems = unshape(&schema, &mut args, &limits).unwrap_err();
//! assert_eq!(problems, [
//!     "`count` is 11, outside its range: send an integer from 0 to 10",
//!     "unknown argument `colour`; the valid ones are: `count`, `labels`",
//! ]);
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::ir::{
    self, IntegerSchema, Kind, MapSchema, NumberSchema, Object, OneOf, Property, Schema,
    StringSchema,
};

/// Bounds on the arguments of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest arguments text, in bytes (default 256 KiB).
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects (default 32).
    pub max_depth: usize,
    /// The longest string value or object key, in bytes (default 64 KiB).
    /// A string that holds JSON is bounded by it before it is decoded.
    pub max_string_bytes: usize,
    /// The most items in one array, or entries in one map (default 1,000).
    pub max_array_items: usize,
    /// The arguments were parsed as doubles on their way (a JavaScript host:
    /// `JSON.parse`), so an integer sent as a JSON number past
    /// ±[`MAX_SAFE_INTEGER`](crate::render::MAX_SAFE_INTEGER) may have been
    /// rounded, and is refused, asking for the string of its digits, the
    /// form such a host's schema gives (default `false`).
    pub numbers_as_doubles: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 * 1024,
            max_depth: 32,
            max_string_bytes: 64 * 1024,
            max_array_items: 1_000,
            numbers_as_doubles: false,
        }
    }
}

/// A string of the arguments that holds an alias, for the caller to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasSlot {
    /// Where the string is in the unshaped value (a JSON pointer, for
    /// [`Value::pointer_mut`]).
    pub pointer: String,
    /// Where the model put it, for messages (`steps[2].link_id`).
    pub path: String,
    /// The alias prefix the field takes.
    pub prefix: String,
}

/// The longest value of the model's echoed back in a problem, in characters.
pub const MAX_ECHO_CHARS: usize = 64;

/// `s` cut to [`MAX_ECHO_CHARS`] characters, for echoing a model's value.
///
/// # Examples
///
/// ```
/// let long = "x".repeat(100);
/// assert_eq!(proto_ai_tools_schema::inbound::shorten(&long).chars().count(), 65);
/// assert_eq!(proto_ai_tools_schema::inbound::shorten("link-1"), "link-1");
/// ```
pub fn shorten(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(MAX_ECHO_CHARS) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => Cow::Owned(format!("{}…", &s[..cut])),
    }
}

/// Parses the arguments text of one call within `limits`; empty text is `{}`.
///
/// # Errors
///
/// A sentence for the model: the text is too long, nested too deeply, not
/// JSON, or holds a string or array past the limits.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::inbound::{parse, Limits};
/// let limits = Limits::default();
/// assert_eq!(parse("", &limits).unwrap(), serde_json::json!({}));
/// assert_eq!(parse(r#""{\"a\":1}""#, &limits).unwrap(), serde_json::json!({"a": 1}));
/// assert!(parse("[[[[", &Limits { max_depth: 2, ..limits }).unwrap_err().contains("deeper than 2"));
/// ```
pub fn parse(text: &str, limits: &Limits) -> Result<Value, String> {
    if text.len() > limits.max_bytes {
        return Err(format!(
            "the arguments are {} bytes, more than the limit of {}; send fewer or shorter values",
            text.len(),
            limits.max_bytes
        ));
    }
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    if json_depth(text) > limits.max_depth {
        return Err(nested_too_deep(limits.max_depth, ""));
    }
    let mut value: Value = serde_json::from_str(text)
        .map_err(|e| format!("the arguments are not valid JSON ({e}); send one JSON object"))?;
    // Some models double-encode: a JSON string that holds the object.
    if let Value::String(inner) = &value
        && let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(inner)
    {
        value = object;
    }
    check_shape(&value, limits, limits.max_depth, "")?;
    Ok(value)
}

/// Checks an already-parsed value against `limits`: nesting (at most
/// `max_depth` levels below it), string and key lengths, array sizes. The
/// error names the place at fault under `base`.
///
/// # Errors
///
/// A sentence for the model naming the first value past a limit.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::inbound::{check_shape, Limits};
/// let limits = Limits { max_array_items: 2, ..Limits::default() };
/// let err = check_shape(&serde_json::json!({"a": [1, 2, 3]}), &limits, 32, "").unwrap_err();
/// assert!(err.starts_with("`a` has 3 items"), "{err}");
/// ```
pub fn check_shape(
    value: &Value,
    limits: &Limits,
    max_depth: usize,
    base: &str,
) -> Result<(), String> {
    let mut stack = vec![(value, 0usize, base.to_owned())];
    while let Some((v, depth, path)) = stack.pop() {
        match v {
            Value::String(s) if s.len() > limits.max_string_bytes => {
                return Err(format!(
                    "{} is a string of {} bytes, more than the limit of {}; send a shorter value",
                    describe(&path),
                    s.len(),
                    limits.max_string_bytes
                ));
            }
            Value::Array(items) => {
                if depth + 1 > max_depth {
                    return Err(nested_too_deep(max_depth, &path));
                }
                if items.len() > limits.max_array_items {
                    return Err(format!(
                        "{} has {} items, more than the limit of {}; send at most {} items",
                        describe(&path),
                        items.len(),
                        limits.max_array_items,
                        limits.max_array_items
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, depth + 1, format!("{path}[{i}]")));
                }
            }
            Value::Object(map) => {
                if depth + 1 > max_depth {
                    return Err(nested_too_deep(max_depth, &path));
                }
                for (key, item) in map {
                    if key.len() > limits.max_string_bytes {
                        return Err(format!(
                            "{} has a key of {} bytes, more than the limit of {}; send shorter names",
                            describe(&path),
                            key.len(),
                            limits.max_string_bytes
                        ));
                    }
                    let path = if path.is_empty() {
                        shorten(key).into_owned()
                    } else {
                        format!("{path}.{}", shorten(key))
                    };
                    stack.push((item, depth + 1, path));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Undoes the providers' shaping of `value` in place, along `schema` (a
/// tool's parameters), and checks every value against its node; see the
/// [module docs](self). Returns the strings that hold aliases.
///
/// # Errors
///
/// Every problem found, each a sentence for the model naming the path of
/// the value at fault.
///
/// # Examples
///
/// See the [module docs](self).
pub fn unshape(
    schema: &Schema,
    value: &mut Value,
    limits: &Limits,
) -> Result<Vec<AliasSlot>, Vec<String>> {
    static NO_DEFS: BTreeMap<String, Schema> = BTreeMap::new();
    let defs = schema.as_object().map_or(&NO_DEFS, |root| &root.defs);
    let mut walk = Walk {
        defs,
        limits,
        steps: Vec::new(),
        problems: Vec::new(),
        slots: Vec::new(),
        in_text: 0,
    };
    if !value.is_object() && schema.as_object().is_some() {
        return Err(vec![format!(
            "the arguments must be a JSON object, not {}",
            kind_of(value)
        )]);
    }
    walk.node(schema, value, 0);
    if walk.problems.is_empty() {
        Ok(walk.slots)
    } else {
        Err(walk.problems)
    }
}

/// One step from the root to a value.
enum Step {
    /// A property: how the model wrote it (`target.email` for a lifted oneof
    /// member) and its key in the unshaped value.
    Key { shown: String, key: String },
    /// An array item.
    Index(usize),
    /// A map entry.
    MapKey(String),
}

struct Walk<'a> {
    defs: &'a BTreeMap<String, Schema>,
    limits: &'a Limits,
    steps: Vec<Step>,
    problems: Vec<String>,
    slots: Vec<AliasSlot>,
    /// How many JSON texts (a cut's string) the current value sits in. A
    /// host parses the arguments, not the text inside one of their
    /// strings, so numbers there arrive as the model wrote them.
    in_text: usize,
}

impl Walk<'_> {
    /// Where the model put the current value: `a.b[0]["k"].c`.
    fn path(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            match step {
                Step::Key { shown, .. } => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&shorten(shown));
                }
                Step::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Step::MapKey(k) => {
                    let _ = write!(out, "[{:?}]", shorten(k).as_ref());
                }
            }
        }
        out
    }

    /// The JSON pointer of the current value in the unshaped arguments.
    fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            out.push('/');
            match step {
                Step::Key { key, .. } | Step::MapKey(key) => {
                    crate::names::push_pointer_token(&mut out, key);
                }
                Step::Index(i) => {
                    let _ = write!(out, "{i}");
                }
            }
        }
        out
    }

    fn problem(&mut self, what: impl std::fmt::Display) {
        let path = self.path();
        self.problems.push(format!("{} {what}", describe(&path)));
    }

    fn node(&mut self, schema: &Schema, value: &mut Value, depth: usize) {
        if depth > self.limits.max_depth {
            let path = self.path();
            self.problems
                .push(nested_too_deep(self.limits.max_depth, &path));
            return;
        }
        if value.is_null() {
            if !schema.nullable && !matches!(schema.kind, Kind::Any | Kind::Ref(_)) {
                self.problem(format_args!("is null; send {}", expected(&schema.kind)));
            }
            return;
        }
        match &schema.kind {
            Kind::Ref(name) => {
                if let Some(def) = self.defs.get(name) {
                    self.node(def, value, depth);
                }
            }
            Kind::String(string) => self.string(string, value),
            Kind::Integer(bounds) => self.integer(bounds, value),
            Kind::Number(bounds) => self.number(bounds, value),
            Kind::Boolean => {
                if !value.is_boolean() {
                    self.problem(format_args!("is {}; send true or false", kind_of(value)));
                }
            }
            Kind::Enum(values) => self.enumeration(values, value),
            Kind::Array(items) => {
                let text = self.decode_json_string(value, Value::is_array, depth);
                let Value::Array(list) = value else {
                    self.not_a(value, "an array");
                    return;
                };
                self.in_text += usize::from(text);
                for (i, item) in list.iter_mut().enumerate() {
                    self.steps.push(Step::Index(i));
                    self.node(items, item, depth + 1);
                    self.steps.pop();
                }
                self.in_text -= usize::from(text);
            }
            Kind::Map(map) => self.map(map, value, depth),
            Kind::Object(object) => {
                let text = self.decode_json_string(value, Value::is_object, depth);
                match value {
                    Value::Object(fields) => {
                        self.in_text += usize::from(text);
                        self.object(object, fields, depth);
                        self.in_text -= usize::from(text);
                    }
                    other => {
                        let what = match &object.name {
                            Some(name) => {
                                format!("{} `{name}` object", crate::names::article(name))
                            }
                            None => "an object".to_owned(),
                        };
                        self.not_a(other, &what);
                    }
                }
            }
            Kind::OneOf(one_of) => self.one_of(one_of, value, depth),
            Kind::Any => {
                self.decode_json_string(value, |v| v.is_object() || v.is_array(), depth);
            }
        }
    }

    fn string(&mut self, string: &StringSchema, value: &mut Value) {
        let Value::String(s) = value else {
            self.problem(format_args!("is {}; send a string", kind_of(value)));
            return;
        };
        if string.pattern.as_deref() == Some(ir::BASE64_PATTERN) {
            match standard_base64(s) {
                Some(standard) => *s = standard,
                None => self.problem(format_args!(
                    "is `{}`, which is not base64; send the bytes base64-encoded (standard or URL-safe alphabet)",
                    shorten(s)
                )),
            }
        } else if string.pattern.as_deref() == Some(ir::DURATION_PATTERN) {
            if !is_duration(s) {
                self.problem(format_args!(
                    "is `{}`, which is not a duration; send seconds with an `s` suffix, e.g. `90s` or `1.5s`",
                    shorten(s)
                ));
            }
        } else if string.pattern.as_deref() == Some(ir::FIELD_MASK_PATTERN) {
            if !is_field_mask(s) {
                self.problem(format_args!(
                    "is `{}`, which is not a field mask; send comma-separated lowerCamelCase field paths, e.g. `displayName,address.city`",
                    shorten(s)
                ));
            }
        } else if string.format.as_deref() == Some(ir::FORMAT_DATE_TIME) {
            match date_time(s) {
                Some(normal) => *s = normal,
                None => self.problem(format_args!(
                    "is `{}`, which is not an RFC 3339 date-time; send e.g. `2024-01-31T09:00:00Z`",
                    shorten(s)
                )),
            }
        }
        if let Some(prefix) = &string.alias_prefix
            && !s.is_empty()
        {
            self.slots.push(AliasSlot {
                pointer: self.pointer(),
                path: self.path(),
                prefix: prefix.clone(),
            });
        }
    }

    fn integer(&mut self, bounds: &IntegerSchema, value: &mut Value) {
        let whole = match &*value {
            Value::Number(n) => whole_number(n),
            // protojson's string form of an integer (the form of 64-bit ones)
            Value::String(s) => s.trim().parse::<i128>().ok(),
            _ => None,
        };
        if self.limits.numbers_as_doubles
            && self.in_text == 0
            && value.is_number()
            && whole.is_some_and(|n| n.abs() > crate::render::MAX_SAFE_INTEGER)
        {
            self.problem(format_args!(
                "is {}, a number past 2^53 that may have been rounded on its way here; send the integer as a string of its digits",
                value
            ));
            return;
        }
        let Some(whole) = whole else {
            let got = match &*value {
                Value::Number(n) => format!("{n}"),
                Value::String(s) => {
                    format!("`{}`, which is not a whole number in digits", shorten(s))
                }
                other => kind_of(other).to_owned(),
            };
            self.problem(format_args!("is {got}; send a whole number"));
            return;
        };
        if self.within(whole, bounds.minimum, bounds.maximum, "an integer") {
            *value = integer_json(whole);
        }
    }

    fn number(&mut self, bounds: &NumberSchema, value: &mut Value) {
        let number = match &*value {
            Value::Number(n) => n.as_f64(),
            // protojson's string forms: "1.5", and "NaN"/"Infinity", which
            // only a string can carry and the decoder reads as they are.
            Value::String(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => return,
            Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            _ => None,
        };
        let Some(number) = number else {
            self.problem(format_args!("is {}; send a number", kind_of(value)));
            return;
        };
        if !self.within(number, bounds.minimum, bounds.maximum, "a number") {
            return;
        }
        if value.is_string()
            && let Some(n) = Number::from_f64(number)
        {
            *value = Value::Number(n);
        }
    }

    /// Whether `n` is within its bounds; if not, says so, naming `what` to send.
    fn within<T>(&mut self, n: T, min: Option<T>, max: Option<T>, what: &str) -> bool
    where
        T: PartialOrd + Copy + std::fmt::Display,
    {
        if min.is_some_and(|min| n < min) || max.is_some_and(|max| n > max) {
            self.problem(format_args!(
                "is {n}, outside its range: send {what} {}",
                range_text(min, max)
            ));
            return false;
        }
        true
    }

    fn enumeration(&mut self, values: &[String], value: &Value) {
        if let Value::String(s) = value
            && values.iter().any(|v| v == s)
        {
            return;
        }
        let got = match value {
            Value::String(s) => format!("`{}`", shorten(s)),
            other => kind_of(other).to_owned(),
        };
        self.problem(format_args!(
            "is {got}, not one of its values; send one of: {}",
            listing(values.iter().map(String::as_str))
        ));
    }

    fn map(&mut self, map: &MapSchema, value: &mut Value, depth: usize) {
        let text = self.decode_json_string(value, |v| v.is_object() || v.is_array(), depth);
        self.in_text += usize::from(text);
        self.map_entries(map, value, depth);
        self.in_text -= usize::from(text);
    }

    /// A map's entries, as an object or as a list of `{key, value}`.
    fn map_entries(&mut self, map: &MapSchema, value: &mut Value, depth: usize) {
        // Dialects without open objects (and integer keys everywhere) send a
        // map as [{key, value}, ...]; a repeated key keeps its last value,
        // as in a JSON object.
        if let Value::Array(items) = value {
            if self.limits.numbers_as_doubles
                && self.in_text == 0
                && matches!(map.key.kind, Kind::Integer(_))
                && items.iter().any(|entry| {
                    entry["key"]
                        .as_number()
                        .and_then(whole_number)
                        .is_some_and(|n| n.abs() > crate::render::MAX_SAFE_INTEGER)
                })
            {
                self.problem(
                    "has a `key` that is a number past 2^53, which may have been rounded on its way here; send each integer key as a string of its digits",
                );
                return;
            }
            match entries_to_map(items) {
                Some(entries) => *value = Value::Object(entries),
                None => {
                    self.problem(format_args!(
                        "is an array that is not a list of `{{\"key\": …, \"value\": …}}` entries; send {MAP_FORMS}"
                    ));
                    return;
                }
            }
        }
        let Value::Object(entries) = value else {
            let got = match &*value {
                Value::String(s) => not_json_text(s),
                other => kind_of(other).to_owned(),
            };
            self.problem(format_args!("is {got}; send {MAP_FORMS}"));
            return;
        };
        for (key, item) in entries.iter_mut() {
            self.steps.push(Step::MapKey(key.clone()));
            self.map_key(&map.key, key);
            self.node(&map.value, item, depth + 1);
            self.steps.pop();
        }
    }

    fn map_key(&mut self, schema: &Schema, key: &str) {
        match &schema.kind {
            Kind::Integer(bounds) => match key.trim().parse::<i128>() {
                Ok(n)
                    if bounds.minimum.is_none_or(|min| n >= min)
                        && bounds.maximum.is_none_or(|max| n <= max) => {}
                _ => self.problem(format_args!(
                    "has a key that is not an integer {}",
                    range_text(bounds.minimum, bounds.maximum)
                )),
            },
            Kind::Boolean if key != "true" && key != "false" => {
                self.problem("has a key that is neither `true` nor `false`");
            }
            _ => {}
        }
    }

    fn object(&mut self, object: &Object, fields: &mut Map<String, Value>, depth: usize) {
        let shown = self.lift_oneofs(object, fields, depth);
        let mut unknown = Vec::new();
        let keys: Vec<String> = fields.keys().cloned().collect();
        for key in keys {
            let Some(property) = find_property(object, &key) else {
                if !object.open {
                    unknown.push(key);
                }
                continue;
            };
            let Some(mut value) = fields.shift_remove(&key) else {
                continue;
            };
            // Strict dialects send `null` for every optional property left out.
            if value.is_null() && !property.required && !property.schema.nullable {
                continue;
            }
            let shown = shown.get(&property.name).cloned().unwrap_or(key);
            self.steps.push(Step::Key {
                shown,
                key: property.name.clone(),
            });
            self.node(&property.schema, &mut value, depth + 1);
            self.steps.pop();
            fields.insert(property.name.clone(), value);
        }
        if !unknown.is_empty() {
            self.unknown(object, &unknown);
        }
    }

    /// Lifts the member of each inline oneof property into `fields`
    /// (protojson's flat form), and refuses two members of one oneof.
    /// Returns how the model wrote each lifted member (`target.email`).
    fn lift_oneofs(
        &mut self,
        object: &Object,
        fields: &mut Map<String, Value>,
        depth: usize,
    ) -> BTreeMap<String, String> {
        let mut shown = BTreeMap::new();
        for property in &object.properties {
            let Kind::OneOf(one_of) = &property.schema.kind else {
                continue;
            };
            if !one_of.inline {
                continue;
            }
            // Members sent flat, as protojson has them (`null`: not sent).
            let mut present: Vec<String> = one_of
                .members
                .iter()
                .filter(|m| find_key(fields, m).is_some_and(|k| !fields[k].is_null()))
                .map(|m| m.name.clone())
                .collect();
            if let Some(mut wrapper) = fields.shift_remove(&property.name) {
                self.steps.push(Step::Key {
                    shown: property.name.clone(),
                    key: property.name.clone(),
                });
                // Its members are walked with the other fields (and read,
                // if it was a text, as sent through the host: strictly).
                self.decode_json_string(&mut wrapper, Value::is_object, depth + 1);
                match wrapper {
                    Value::Null => {}
                    Value::Object(chosen) => {
                        for (key, member_value) in chosen {
                            match one_of.members.iter().find(|m| names(m).any(|n| n == key)) {
                                Some(member) if !member_value.is_null() => {
                                    present.push(format!("{}.{}", property.name, member.name));
                                    shown.insert(
                                        member.name.clone(),
                                        format!("{}.{key}", property.name),
                                    );
                                    fields.insert(member.name.clone(), member_value);
                                }
                                Some(_) => {}
                                None => {
                                    let valid = one_of.members.iter().map(|m| m.name.as_str());
                                    self.problems.push(format!(
                                        "unknown member `{}` in `{}`; the valid ones are: {}",
                                        shorten(&key),
                                        property.name,
                                        listing(valid)
                                    ));
                                }
                            }
                        }
                    }
                    other => {
                        let got = kind_of(&other);
                        self.problem(format_args!(
                            "is {got}; send an object with exactly one of: {}",
                            listing(one_of.members.iter().map(|m| m.name.as_str()))
                        ));
                    }
                }
                self.steps.pop();
            }
            if present.len() > 1 {
                let base = self.path();
                let named: Vec<String> = present
                    .iter()
                    .map(|p| {
                        if base.is_empty() {
                            format!("`{p}`")
                        } else {
                            format!("`{base}.{p}`")
                        }
                    })
                    .collect();
                self.problems.push(format!(
                    "{} are alternatives (oneof `{}`): send only one of them",
                    named.join(" and "),
                    property.name
                ));
            }
        }
        shown
    }

    /// A oneof that is a value of its own (a Rust enum with data): an object
    /// with exactly one member.
    fn one_of(&mut self, one_of: &OneOf, value: &mut Value, depth: usize) {
        let members = || listing(one_of.members.iter().map(|m| m.name.as_str()));
        // Past a rendering's cut, the object comes as its JSON text.
        self.decode_json_string(value, Value::is_object, depth);
        let Value::Object(chosen) = value else {
            let got = kind_of(value);
            self.problem(format_args!(
                "is {got}; send an object with exactly one of: {}",
                members()
            ));
            return;
        };
        // A member sent as `null` is a member not chosen.
        chosen.retain(|_, member| !member.is_null());
        if chosen.len() != 1 {
            self.problem(format_args!(
                "has {} members; send exactly one of: {}",
                chosen.len(),
                members()
            ));
            return;
        }
        let Some((key, inner)) = chosen.iter_mut().next() else {
            return;
        };
        let Some(member) = one_of.members.iter().find(|m| names(m).any(|n| n == key)) else {
            self.problem(format_args!(
                "has the unknown member `{}`; send exactly one of: {}",
                shorten(key),
                members()
            ));
            return;
        };
        self.steps.push(Step::Key {
            shown: key.clone(),
            key: key.clone(),
        });
        self.node(&member.schema, inner, depth + 1);
        self.steps.pop();
    }

    fn unknown(&mut self, object: &Object, unknown: &[String]) {
        let path = self.path();
        let noun = match (path.is_empty(), unknown.len()) {
            (true, 1) => "unknown argument",
            (true, _) => "unknown arguments",
            (false, 1) => "unknown field",
            (false, _) => "unknown fields",
        };
        const SHOWN: usize = 10;
        let mut list = unknown
            .iter()
            .take(SHOWN)
            .map(|k| format!("`{}`", shorten(k)))
            .collect::<Vec<_>>()
            .join(", ");
        if unknown.len() > SHOWN {
            let _ = write!(list, " (and {} more)", unknown.len() - SHOWN);
        }
        let place = if path.is_empty() {
            String::new()
        } else {
            format!(" in `{path}`")
        };
        let valid = object.properties.iter().map(|p| p.name.as_str());
        self.problems.push(format!(
            "{noun} {list}{place}; the valid ones are: {}",
            listing(valid)
        ));
    }

    /// Replaces a string holding JSON with that JSON, when `accept` likes it.
    /// The decoded JSON is held to the same bounds as the arguments (its
    /// depth to what remains of the budget).
    /// `value` is not `what` (`a \`pkg.Msg\` object`, `an array`): said so
    /// in both forms a rendering may have given the model, the value itself
    /// or, past a dialect's cut, its JSON text in a string, so that the
    /// sentence never asks for a shape the model's schema forbids.
    fn not_a(&mut self, value: &Value, what: &str) {
        let got = match value {
            Value::String(s) => not_json_text(s),
            other => kind_of(other).to_owned(),
        };
        self.problem(format_args!(
            "is {got}; send {what}, or its JSON text where the schema asks for a string"
        ));
    }

    /// Replaces a string holding the JSON text of what `accept` takes by
    /// that value, held to the same bounds; whether it did.
    fn decode_json_string(
        &mut self,
        value: &mut Value,
        accept: fn(&Value) -> bool,
        depth: usize,
    ) -> bool {
        let Value::String(s) = value else {
            return false;
        };
        let t = s.trim_start();
        if !(t.starts_with('{') || t.starts_with('[')) {
            return false;
        }
        let budget = self.limits.max_depth.saturating_sub(depth);
        if json_depth(s) > budget {
            // Too deep to take apart: a problem if it is JSON, else it is text.
            if serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok() {
                let path = self.path();
                self.problems
                    .push(nested_too_deep(self.limits.max_depth, &path));
            }
            return false;
        }
        let Ok(parsed) = serde_json::from_str::<Value>(s) else {
            return false;
        };
        if !accept(&parsed) {
            return false;
        }
        let path = self.path();
        match check_shape(&parsed, self.limits, budget, &path) {
            Ok(()) => {
                *value = parsed;
                true
            }
            Err(problem) => {
                self.problems.push(problem);
                false
            }
        }
    }
}

/// How a map may be sent, in every rendering's form.
const MAP_FORMS: &str = "the map as its schema shows it: an object, a list of `{\"key\": …, \"value\": …}` entries, or the JSON text of one where the schema asks for a string";

/// What a string that should have held a value's JSON text holds instead.
fn not_json_text(s: &str) -> String {
    match serde_json::from_str::<Value>(s) {
        Ok(other) => format!("a string holding the JSON text of {}", kind_of(&other)),
        Err(e) if s.trim_start().starts_with(['{', '[']) => {
            format!("a string whose JSON text does not parse ({e})")
        }
        Err(_) => format!("the string `{}`, which is not JSON text", shorten(s)),
    }
}

/// The names a property is accepted under: its name, and its JSON name.
fn names(property: &Property) -> impl Iterator<Item = &str> {
    std::iter::once(property.name.as_str()).chain(property.json_name.as_deref())
}

/// The key under which `property` is in `fields`, if it is.
fn find_key<'a>(fields: &'a Map<String, Value>, property: &Property) -> Option<&'a str> {
    names(property).find_map(|n| fields.get_key_value(n).map(|(k, _)| k.as_str()))
}

/// The property (or inline oneof member) sent as `key`.
fn find_property<'a>(object: &'a Object, key: &str) -> Option<&'a Property> {
    object.properties.iter().find_map(|p| match &p.schema.kind {
        Kind::OneOf(one_of) if one_of.inline => {
            one_of.members.iter().find(|m| names(m).any(|n| n == key))
        }
        _ => names(p).any(|n| n == key).then_some(p),
    })
}

/// `[{key, value}, ...]` as an object, if that is what `items` is.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// let entries = json!([{"key": 7, "value": "a"}, {"key": "b", "value": 1}]);
/// let map = proto_ai_tools_schema::inbound::entries_to_map(entries.as_array().unwrap()).unwrap();
/// assert_eq!(serde_json::Value::Object(map), json!({"7": "a", "b": 1}));
/// assert!(proto_ai_tools_schema::inbound::entries_to_map(&[json!(1)]).is_none());
/// ```
pub fn entries_to_map(items: &[Value]) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    for item in items {
        let Value::Object(entry) = item else {
            return None;
        };
        if entry.keys().any(|k| k != "key" && k != "value") {
            return None;
        }
        let key = match entry.get("key")? {
            Value::String(s) => s.clone(),
            // `3.0` is the key 3, as it is the integer 3 anywhere else
            // (Gemini hands every number back as a double).
            Value::Number(n) => whole_number(n).map_or_else(|| n.to_string(), |n| n.to_string()),
            Value::Bool(b) => b.to_string(),
            _ => return None,
        };
        map.insert(key, entry.get("value").cloned().unwrap_or(Value::Null));
    }
    Some(map)
}

/// The deepest nesting of arrays and objects in JSON text, found without
/// parsing it, so that deep text is refused before a `Value` is built
/// (serde_json stops at 128 levels with a less helpful message).
fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn nested_too_deep(max: usize, path: &str) -> String {
    if path.is_empty() {
        format!("the arguments are nested deeper than {max} levels")
    } else {
        format!("the arguments are nested deeper than {max} levels (at `{path}`)")
    }
}

fn describe(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// `a JSON value` as the model reads it in a problem.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_schema::inbound::kind_of(&serde_json::json!([1])), "an array");
/// ```
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expected(kind: &Kind) -> &'static str {
    match kind {
        Kind::String(_) => "a string",
        Kind::Integer(_) => "a whole number",
        Kind::Number(_) => "a number",
        Kind::Boolean => "true or false",
        Kind::Enum(_) => "one of its values",
        // Past a dialect's cut these are strings holding their JSON text.
        Kind::Array(_) => "an array, or its JSON text where the schema asks for a string",
        Kind::Map(_) => MAP_FORMS,
        Kind::Object(_) => "an object, or its JSON text where the schema asks for a string",
        Kind::OneOf(_) => "an object",
        Kind::Ref(_) | Kind::Any => "a value",
    }
}

/// "`A`, `B`, `C`" (at most 20, then how many more), or "none".
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    const SHOWN: usize = 20;
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        return "none".to_owned();
    }
    let mut out = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(out, " (and {} more)", names.len() - SHOWN);
    }
    out
}

fn range_text<T: std::fmt::Display>(min: Option<T>, max: Option<T>) -> String {
    match (min, max) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("of at least {min}"),
        (None, Some(max)) => format!("of at most {max}"),
        (None, None) => String::new(),
    }
}

/// The whole number a JSON number is, written as an integer or as a double
/// with no fraction (JSON Schema counts `3.0` as an integer).
fn whole_number(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
        .or_else(|| n.as_f64().and_then(whole_f64))
}

/// A double that is a whole number.
fn whole_f64(f: f64) -> Option<i128> {
    // 2^64: beyond it no integer field can hold the value anyway.
    const LIMIT: f64 = 18_446_744_073_709_551_616.0;
    #[allow(clippy::cast_possible_truncation)]
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= LIMIT).then_some(f as i128)
}

/// A whole number as JSON: a number within 64 bits, else its digits, which
/// keep the value a double would round.
fn integer_json(n: i128) -> Value {
    crate::render::exact_integer(n).unwrap_or_else(|| Value::String(n.to_string()))
}

/// Base64 in either alphabet, padded or not, as standard padded base64;
/// `None` if it is not base64 (the rule of [`ir::BASE64_PATTERN`]).
fn standard_base64(s: &str) -> Option<String> {
    let body = s
        .strip_suffix("==")
        .or_else(|| s.strip_suffix('='))
        .unwrap_or(s);
    let padding = s.len() - body.len();
    let valid_chars = body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'));
    let tail = body.len() % 4;
    let valid_length = match padding {
        0 => tail != 1,
        1 => tail == 3,
        _ => tail == 2,
    };
    if !(valid_chars && valid_length) {
        return None;
    }
    let mut out: String = body
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    Some(out)
}

/// The rule of [`ir::DURATION_PATTERN`]: `-?` up to 11 digits, an optional
/// fraction of up to 9, then `s`.
fn is_duration(s: &str) -> bool {
    duration_parts(s).is_some()
}

/// The seconds and nanos of protojson `Duration` text of the form
/// [`ir::DURATION_PATTERN`] states (`"30s"`, `"-1.25s"`), both with the
/// text's sign; `None` for any other text. The one reading of that text:
/// inbound checks arguments with it, the overlay reads a tool's deadline.
pub(crate) fn duration_parts(s: &str) -> Option<(i64, i32)> {
    let body = s.strip_suffix('s')?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (seconds, fraction) = match body.split_once('.') {
        Some((seconds, fraction)) => (seconds, Some(fraction)),
        None => (body, None),
    };
    let digits =
        |t: &str, max: usize| (1..=max).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(seconds, 11) || !fraction.is_none_or(|f| digits(f, 9)) {
        return None;
    }
    let seconds: i64 = seconds.parse().ok()?;
    let nanos: i32 = match fraction {
        Some(f) => format!("{f:0<9}").parse().ok()?,
        None => 0,
    };
    Some(if negative {
        (-seconds, -nanos)
    } else {
        (seconds, nanos)
    })
}

/// The rule of [`ir::FIELD_MASK_PATTERN`].
fn is_field_mask(s: &str) -> bool {
    s.is_empty()
        || s.split(',').all(|path| {
            path.split('.').all(|segment| {
                let mut bytes = segment.bytes();
                bytes.next().is_some_and(|b| b.is_ascii_lowercase())
                    && bytes.all(|b| b.is_ascii_alphanumeric())
            })
        })
}

/// An RFC 3339 date-time, its `T` and `Z` upper-cased as protojson parsers
/// require; `None` if it is not one.
fn date_time(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let date = digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-');
    let time = digits(8..10)
        && matches!(b.get(10), Some(b'T' | b't'))
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19);
    if !(date && time) {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return None;
        }
        rest = &fraction[n..];
    }
    let zone_ok = matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[1..3].iter().all(u8::is_ascii_digit)
            && rest.as_bytes()[3] == b':'
            && rest.as_bytes()[4..6].iter().all(u8::is_ascii_digit));
    zone_ok.then(|| s.replace('t', "T").replace('z', "Z"))
}

#[cfg(test)]
mod tests;
