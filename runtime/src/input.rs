//! The input of a hand-written tool: a Rust type that knows its own schema.
//!
//! [`ToolInput`] is implemented for the standard types a tool takes, and
//! derived for structs and enums with `#[derive(ToolInput)]`, so the schema a
//! model sees and the type its arguments decode into come from one source.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use proto_ai_tools_schema::FieldAlias;
use proto_ai_tools_schema::ir::{Kind, Object, Property, Schema};
use serde::de::DeserializeOwned;

/// Derives [`ToolInput`](trait@ToolInput) for a struct with named fields, a
/// newtype struct, or an enum, from the same attributes `serde` reads.
///
/// - Wire names and required-ness follow serde: `rename`, `rename_all`,
///   `skip`, `skip_deserializing`, `default` (field and container),
///   `flatten`, `transparent`. A field is required unless its type is an
///   `Option`, or it or the container has `#[serde(default)]`.
/// - Doc comments become descriptions (of the struct and of each field).
/// - `#[tool(description = "...")]` replaces a field's (or the type's) doc
///   comment for the model; `#[tool(usage_notes = "...")]` is appended after
///   a blank line; `#[tool(alias_prefix = "link")]` on a string field makes a
///   [`Toolkit`](crate::Toolkit) resolve the aliases the model sends there
///   (`link-1` → its UUID) and refuse invented ones.
/// - Enums of unit variants become string enums; externally tagged enums whose
///   variants all carry data become an object with one optional property per
///   variant (set exactly one). Tuple variants, a mix of unit and data
///   variants, internally/adjacently tagged and untagged enums, and generic
///   types are compile errors.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::ToolInput;
///
/// /// Search the docs.
/// #[derive(serde::Deserialize, ToolInput)]
/// struct SearchInput {
///     /// What to look for.
///     query: String,
///     #[serde(default)]
///     limit: Option<u32>,
///     #[serde(skip)]
///     secret: String,
///     #[tool(alias_prefix = "link", usage_notes = "Use an id a tool returned; never invent one.")]
///     link_id: Option<String>,
/// }
///
/// let schema = SearchInput::tool_schema();
/// let object = schema.as_object().unwrap();
/// let names: Vec<_> = object.properties.iter().map(|p| (p.name.as_str(), p.required)).collect();
/// assert_eq!(names, [("query", true), ("limit", false), ("link_id", false)]);
/// assert_eq!(schema.description.as_deref(), Some("Search the docs."));
/// assert_eq!(SearchInput::alias_fields()[0].prefix, "link");
/// ```
pub use proto_ai_tools_macros::ToolInput;

/// A type a hand-written tool can take as its input: it deserializes from
/// the model's JSON arguments and describes them with a schema in the IR of
/// [`proto_ai_tools_schema::ir`], so every provider rendering and checker applies.
///
/// Derive it with `#[derive(serde::Deserialize, proto_ai_tools::ToolInput)]`; it is
/// implemented for strings, `char`, integers (bounded by their range),
/// floats, `bool`, `Vec`/`VecDeque`/sets (arrays), `HashMap`/`BTreeMap`
/// with string or integer keys (maps), `Option` (an optional property),
/// `Box`/`Arc` (the inner type), and `serde_json::Value` (any value).
///
/// Implement [`schema_in`](ToolInput::schema_in) by hand for a type with a
/// custom `Deserialize`, and make sure the schema accepts nothing serde refuses.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{ToolInput, input::SchemaGenerator};
/// use proto_ai_tools::schema::ir::Schema;
///
/// /// A colour as `#rrggbb`.
/// #[derive(serde::Deserialize)]
/// struct Colour(String);
///
/// impl ToolInput for Colour {
///     fn schema_in(_: &mut SchemaGenerator) -> Schema {
///         Schema::string_pattern("^#[0-9a-f]{6}$").describe("A colour as `#rrggbb`.")
///     }
/// }
///
/// assert!(matches!(Colour::tool_schema().kind, proto_ai_tools::schema::ir::Kind::String(_)));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema: it does not implement `ToolInput`",
    label = "no `ToolInput` impl for this type, so no schema to show the model",
    note = "derive it with `#[derive(serde::Deserialize, proto_ai_tools::ToolInput)]`, implement it by hand, or leave the field out with `#[serde(skip)]`"
)]
pub trait ToolInput: DeserializeOwned {
    /// Whether a missing value deserializes (as `None`): `true` for `Option`
    /// and what wraps one. A struct field of such a type is not required.
    const OPTIONAL: bool = false;

    /// This type's schema, with named types (structs, enums) built through
    /// `generator` so that recursion becomes a reference and alias-carrying
    /// fields are recorded.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{ToolInput, input::SchemaGenerator};
    /// let mut generator = SchemaGenerator::new();
    /// let schema = <Vec<u8> as ToolInput>::schema_in(&mut generator);
    /// assert!(matches!(schema.kind, proto_ai_tools::schema::ir::Kind::Array(_)));
    /// ```
    fn schema_in(generator: &mut SchemaGenerator) -> Schema;

    /// The whole schema of this type as a tool's parameters: the root node,
    /// with the definitions of recursive types on the root object.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::ToolInput;
    /// assert_eq!(<u8 as ToolInput>::tool_schema(), proto_ai_tools::schema::ir::Schema::integer().minimum(0).maximum(255));
    /// ```
    fn tool_schema() -> Schema {
        InputSchema::of::<Self>().schema
    }

    /// Every property that carries an `alias_prefix`, keyed by the name of the
    /// object that declares it (as [`Object::name`] has it in
    /// [`tool_schema`](ToolInput::tool_schema)) and its wire name.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::ToolInput;
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Open {
    ///     #[tool(alias_prefix = "link")]
    ///     link_id: String,
    /// }
    /// let fields = Open::alias_fields();
    /// assert_eq!((fields[0].message.as_str(), fields[0].field.as_str(), fields[0].prefix.as_str()), ("Open", "link_id", "link"));
    /// ```
    fn alias_fields() -> Vec<FieldAlias> {
        InputSchema::of::<Self>().aliases
    }
}

/// A type's complete schema and the properties that carry alias prefixes,
/// from one pass of a [`SchemaGenerator`].
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{ToolInput, input::InputSchema};
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Input { #[tool(alias_prefix = "step")] step_id: String }
/// let input = InputSchema::of::<Input>();
/// assert!(input.schema.as_object().is_some());
/// assert_eq!(input.aliases.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InputSchema {
    /// The root schema; recursive types' definitions sit in the root object's
    /// [`Object::defs`].
    pub schema: Schema,
    /// Alias-carrying properties: `message` is the declaring object's
    /// [`Object::name`], `field` the property's wire name.
    pub aliases: Vec<FieldAlias>,
}

impl InputSchema {
    /// Runs a [`SchemaGenerator`] over `T`.
    ///
    /// # Examples
    ///
    /// See [`InputSchema`].
    pub fn of<T: ToolInput>() -> Self {
        let mut generator = SchemaGenerator::new();
        let root = T::schema_in(&mut generator);
        generator.finish(root)
    }
}

/// Builds a schema from nested [`ToolInput`] types: names each struct and
/// enum once, turns recursion into [`Kind::Ref`] with a definition, and
/// collects alias-carrying properties.
///
/// The derive calls it; a hand-written [`ToolInput`] impl for a named type
/// with nested inputs calls [`named_type`](Self::named_type) the same way.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{ToolInput, input::SchemaGenerator};
/// use proto_ai_tools::schema::ir::Kind;
///
/// /// A tree.
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Node {
///     label: String,
///     children: Vec<Node>,
/// }
///
/// let schema = Node::tool_schema();
/// let root = schema.as_object().unwrap();
/// assert!(root.defs.contains_key("Node"));
/// let Kind::Array(items) = &root.properties[1].schema.kind else { panic!() };
/// assert_eq!(items.kind, Kind::Ref("Node".into()));
/// ```
#[derive(Debug, Default)]
pub struct SchemaGenerator {
    defs: BTreeMap<String, Schema>,
    names: HashMap<&'static str, String>,
    taken: HashSet<String>,
    visiting: Vec<&'static str>,
    recursive: HashSet<&'static str>,
    aliases: Vec<FieldAlias>,
}

impl SchemaGenerator {
    /// An empty generator.
    ///
    /// # Examples
    ///
    /// ```
    /// let generator = proto_ai_tools::input::SchemaGenerator::new();
    /// let input = generator.finish(proto_ai_tools::schema::ir::Schema::string());
    /// assert!(input.aliases.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The schema of a named type: `id` is unique to the type (the derive uses
    /// its module path and name), `name` its short name. `build` gets the
    /// definition name the type has in this schema (`name`, or `name_2`… when
    /// two types share a short name) and builds its schema, naming its object
    /// with it. A type met again while it is being built is recursive: every
    /// use of it becomes a [`Kind::Ref`] to a definition.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::input::SchemaGenerator;
    /// use proto_ai_tools::schema::ir::{Object, Schema};
    ///
    /// let mut generator = SchemaGenerator::new();
    /// let schema = generator.named_type("my_crate::Point", "Point", |_, name| {
    ///     Schema::object(Object::named(name).property("x", Schema::number(), true))
    /// });
    /// assert_eq!(schema.as_object().unwrap().name.as_deref(), Some("Point"));
    /// ```
    pub fn named_type(
        &mut self,
        id: &'static str,
        name: &str,
        build: impl FnOnce(&mut Self, &str) -> Schema,
    ) -> Schema {
        let def_name = self.def_name(id, name);
        if self.visiting.contains(&id) {
            self.recursive.insert(id);
            return Schema::reference(def_name);
        }
        if self.defs.contains_key(&def_name) {
            return Schema::reference(def_name);
        }
        self.visiting.push(id);
        let schema = build(self, &def_name);
        self.visiting.pop();
        if self.recursive.contains(id) {
            self.defs.insert(def_name.clone(), schema);
            Schema::reference(def_name)
        } else {
            schema
        }
    }

    fn def_name(&mut self, id: &'static str, name: &str) -> String {
        if let Some(existing) = self.names.get(id) {
            return existing.clone();
        }
        let mut candidate = name.to_owned();
        let mut n = 1;
        while self.taken.contains(&candidate) {
            n += 1;
            candidate = format!("{name}_{n}");
        }
        self.taken.insert(candidate.clone());
        self.names.insert(id, candidate.clone());
        candidate
    }

    /// The schema of a property of type `T`: `T`'s schema, not nullable when
    /// `T` is optional (an `Option` field is left out, not sent as `null`).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::input::SchemaGenerator;
    /// let mut generator = SchemaGenerator::new();
    /// assert!(!generator.field::<Option<String>>().nullable);
    /// assert!(generator.field::<Vec<Option<String>>>().as_object().is_none());
    /// ```
    pub fn field<T: ToolInput>(&mut self) -> Schema {
        let mut schema = T::schema_in(self);
        if T::OPTIONAL {
            schema.nullable = false;
        }
        schema
    }

    /// Records that the property `property` of the object named `object`
    /// carries alias prefix `prefix`. The derive calls it (through
    /// `__private`), for each `#[tool(alias_prefix)]` field.
    pub(crate) fn alias_field(&mut self, object: &str, property: &str, prefix: &str) {
        let alias = FieldAlias {
            message: object.to_owned(),
            field: property.to_owned(),
            prefix: prefix.to_owned(),
        };
        if !self.aliases.contains(&alias) {
            self.aliases.push(alias);
        }
    }

    /// Merges the properties of `T` (a `#[serde(flatten)]` field) into
    /// `object`. They stay required only if `T` is not optional and
    /// `optional` is `false`; a flattened map opens the object. The derive
    /// calls it (through `__private`).
    pub(crate) fn flatten<T: ToolInput>(&mut self, object: &mut Object, optional: bool) {
        let optional = optional || T::OPTIONAL;
        let mut schema = T::schema_in(self);
        if let Kind::Ref(name) = &schema.kind
            && let Some(def) = self.defs.get(name)
        {
            schema = def.clone();
        }
        match schema.kind {
            Kind::Object(inner) => {
                if let (Some(from), Some(to)) = (&inner.name, &object.name) {
                    let moved: Vec<FieldAlias> = self
                        .aliases
                        .iter()
                        .filter(|a| &a.message == from)
                        .map(|a| FieldAlias {
                            message: to.clone(),
                            ..a.clone()
                        })
                        .collect();
                    for alias in moved {
                        self.alias_field(&alias.message, &alias.field, &alias.prefix);
                    }
                }
                for property in inner.properties {
                    if !object.properties.iter().any(|p| p.name == property.name) {
                        object.properties.push(Property {
                            required: property.required && !optional,
                            ..property
                        });
                    }
                }
                for (name, def) in inner.defs {
                    object.defs.entry(name).or_insert(def);
                }
                object.open |= inner.open;
            }
            Kind::Map(_) | Kind::Any => object.open = true,
            _ => {}
        }
    }

    /// Ends the pass: a root that is a recursive type is inlined, and every
    /// definition is put on the root object.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{ToolInput, input::SchemaGenerator};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { #[tool(alias_prefix = "link")] link_id: String }
    ///
    /// let mut generator = SchemaGenerator::new();
    /// let root = Input::schema_in(&mut generator);
    /// let input = generator.finish(root);
    /// assert_eq!(input.aliases[0].field, "link_id");
    /// ```
    pub fn finish(mut self, root: Schema) -> InputSchema {
        let mut root = match &root.kind {
            Kind::Ref(name) => match self.defs.get(name) {
                Some(def) => def.clone(),
                None => root,
            },
            _ => root,
        };
        if let Kind::Object(object) = &mut root.kind {
            for (name, def) in std::mem::take(&mut self.defs) {
                object.defs.entry(name).or_insert(def);
            }
        }
        mark_aliases(&mut root, &self.aliases);
        InputSchema {
            schema: root,
            aliases: self.aliases,
        }
    }
}

/// Marks the strings of every alias-carrying property in the IR, which the
/// inbound rules read: the property `field` of each object named `message`.
fn mark_aliases(schema: &mut Schema, aliases: &[FieldAlias]) {
    if aliases.is_empty() {
        return;
    }
    match &mut schema.kind {
        Kind::Object(object) => {
            for property in &mut object.properties {
                let alias = aliases.iter().find(|a| {
                    object.name.as_deref() == Some(a.message.as_str()) && a.field == property.name
                });
                if let Some(alias) = alias {
                    let plain = std::mem::replace(&mut property.schema, Schema::any());
                    property.schema = plain.alias_prefix(alias.prefix.clone());
                } else {
                    mark_aliases(&mut property.schema, aliases);
                }
            }
            for def in object.defs.values_mut() {
                mark_aliases(def, aliases);
            }
        }
        Kind::Array(items) => mark_aliases(items, aliases),
        Kind::Map(map) => mark_aliases(&mut map.value, aliases),
        Kind::OneOf(one_of) => {
            for member in &mut one_of.members {
                mark_aliases(&mut member.schema, aliases);
            }
        }
        _ => {}
    }
}

impl ToolInput for String {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::string()
    }
}

impl ToolInput for char {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::string().describe("A single character.")
    }
}

impl ToolInput for bool {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::boolean()
    }
}

macro_rules! bounded_integers {
    ($($t:ty => $min:expr, $max:expr);* $(;)?) => {$(
        impl ToolInput for $t {
            fn schema_in(_: &mut SchemaGenerator) -> Schema {
                Schema::integer_within($min, $max)
            }
        }
    )*};
}
// The arguments pass through `serde_json::Value`, whose numbers are 64-bit:
// a 128-bit integer takes what fits there.
bounded_integers!(
    i8 => i8::MIN, i8::MAX; i16 => i16::MIN, i16::MAX; i32 => i32::MIN, i32::MAX;
    i64 => i64::MIN, i64::MAX; i128 => i64::MIN, u64::MAX;
    isize => i64::try_from(isize::MIN).unwrap_or(i64::MIN), i64::try_from(isize::MAX).unwrap_or(i64::MAX);
    u8 => u8::MIN, u8::MAX; u16 => u16::MIN, u16::MAX; u32 => u32::MIN, u32::MAX;
    u64 => u64::MIN, u64::MAX; u128 => u64::MIN, u64::MAX;
    usize => u64::MIN, u64::try_from(usize::MAX).unwrap_or(u64::MAX);
);

impl ToolInput for f32 {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::number_within(f64::from(f32::MIN), f64::from(f32::MAX))
    }
}

impl ToolInput for f64 {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::number()
    }
}

impl ToolInput for serde_json::Value {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::any()
    }
}

impl ToolInput for serde_json::Map<String, serde_json::Value> {
    fn schema_in(_: &mut SchemaGenerator) -> Schema {
        Schema::object(Object::open())
    }
}

impl<T: ToolInput> ToolInput for Option<T> {
    const OPTIONAL: bool = true;

    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        T::schema_in(generator).nullable()
    }
}

impl<T: ToolInput> ToolInput for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        T::schema_in(generator)
    }
}

/// Available when serde's `rc` feature is on (serde has no `Deserialize` for
/// `Arc` without it).
impl<T: ToolInput> ToolInput for Arc<T>
where
    Arc<T>: DeserializeOwned,
{
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        T::schema_in(generator)
    }
}

impl<T: ToolInput> ToolInput for Vec<T> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::array(T::schema_in(generator))
    }
}

impl<T: ToolInput> ToolInput for VecDeque<T> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::array(T::schema_in(generator))
    }
}

impl<T: ToolInput + Eq + Hash> ToolInput for HashSet<T> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::array(T::schema_in(generator)).describe("Items are distinct.")
    }
}

impl<T: ToolInput + Ord> ToolInput for BTreeSet<T> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::array(T::schema_in(generator)).describe("Items are distinct.")
    }
}

/// A type that can carry an alias: a string, or an `Option`, `Box` or list
/// of strings. `#[tool(alias_prefix = "...")]` is accepted only on fields of
/// such a type, because aliases stand for UUIDs, which travel as strings.
///
/// Not public API: the derive names it through `proto_ai_tools::__private`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::__private::AliasString;
/// let () = <Option<Vec<String>> as AliasString>::IS_ALIAS_STRING;
/// ```
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`alias_prefix` needs a string field, but this field is `{Self}`",
    label = "not a `String`, or an `Option`, `Box` or list of `String`s",
    note = "aliases stand for UUIDs, which the model sends as strings; move `alias_prefix` to the string field that holds the id"
)]
pub trait AliasString: ToolInput {
    /// Names the trait in a check the derive emits; carries nothing.
    const IS_ALIAS_STRING: () = ();
}

impl AliasString for String {}
impl<T: AliasString> AliasString for Option<T> {}
impl<T: AliasString> AliasString for Box<T> {}
impl<T: AliasString> AliasString for Vec<T> {}
impl<T: AliasString> AliasString for VecDeque<T> {}
impl<T: AliasString + Eq + Hash> AliasString for HashSet<T> {}
impl<T: AliasString + Ord> AliasString for BTreeSet<T> {}

/// A map key type: a JSON object key serde can parse into it.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::input::MapKey;
/// assert!(matches!(<u32 as MapKey>::key_schema().kind, proto_ai_tools::schema::ir::Kind::Integer(_)));
/// ```
pub trait MapKey: ToolInput {
    /// The schema of a key.
    fn key_schema() -> Schema {
        Self::schema_in(&mut SchemaGenerator::new())
    }
}

impl MapKey for String {}
impl MapKey for i8 {}
impl MapKey for i16 {}
impl MapKey for i32 {}
impl MapKey for i64 {}
impl MapKey for u8 {}
impl MapKey for u16 {}
impl MapKey for u32 {}
impl MapKey for u64 {}

impl<K: MapKey + Eq + Hash, V: ToolInput> ToolInput for HashMap<K, V> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::map(K::key_schema(), V::schema_in(generator))
    }
}

impl<K: MapKey + Ord, V: ToolInput> ToolInput for BTreeMap<K, V> {
    fn schema_in(generator: &mut SchemaGenerator) -> Schema {
        Schema::map(K::key_schema(), V::schema_in(generator))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(
            u32::tool_schema(),
            Schema::integer().minimum(0).maximum(i64::from(u32::MAX))
        );
        assert_eq!(u64::tool_schema(), Schema::integer_within(0, u64::MAX));
        assert_eq!(
            i64::tool_schema(),
            Schema::integer_within(i64::MIN, i64::MAX)
        );
        assert_eq!(
            f32::tool_schema(),
            Schema::number_within(f64::from(f32::MIN), f64::from(f32::MAX))
        );
        assert_eq!(f64::tool_schema(), Schema::number());
        assert_eq!(String::tool_schema(), Schema::string());
        assert_eq!(Option::<bool>::tool_schema(), Schema::boolean().nullable());
        assert_eq!(
            Vec::<String>::tool_schema(),
            Schema::array(Schema::string())
        );
        assert_eq!(
            HashMap::<String, i64>::tool_schema(),
            Schema::map(Schema::string(), Schema::integer_within(i64::MIN, i64::MAX))
        );
        assert_eq!(serde_json::Value::tool_schema(), Schema::any());
        const { assert!(<Box<Option<u8>> as ToolInput>::OPTIONAL) };
        const { assert!(!<Vec<Option<u8>> as ToolInput>::OPTIONAL) };
    }

    #[test]
    fn short_names_are_disambiguated() {
        let mut generator = SchemaGenerator::new();
        assert_eq!(generator.def_name("a::X", "X"), "X");
        assert_eq!(generator.def_name("b::X", "X"), "X_2");
        assert_eq!(generator.def_name("a::X", "X"), "X");
    }
}
