//! IR to JSON, per provider dialect.
//!
//! Every rendering is deterministic: properties keep IR order, `$defs` are
//! sorted by name, and every node carries a `type` (except `anyOf` nodes whose
//! branches do, and `$ref` nodes). No empty description is emitted.
//!
//! # What each dialect renders
//!
//! | IR | JsonSchema, OpenAi, Anthropic, GeminiJsonSchema (non-strict) | OpenAi strict (and JsonSchema strict) | Anthropic strict | Gemini |
//! |---|---|---|---|---|
//! | optional property | left out of `required` | in `required`, nullable | left out of `required` | left out of `required`, `nullable: true` |
//! | nullable scalar | `type: [T, "null"]` | `type: [T, "null"]` | `anyOf: [T, null]` | `nullable: true` |
//! | nullable object / `$ref` | `anyOf: [X, {"type":"null"}]` | the same | the same | `nullable: true` |
//! | [`Kind::Map`] | `object` + `additionalProperties: V` (integer or boolean keys: `propertyNames` with a pattern, and a hint) | array of `{key, value}` | array of `{key, value}` | array of `{key, value}` |
//! | a message used more than once (its rendered subtree repeated) | `$ref` into root `$defs`, where that is shorter than the copies | the same | the same | spelled out at each use |
//! | [`Kind::Ref`] (recursion) | `$ref` into root `$defs` (OpenAI: a described `$ref` is wrapped in a one-branch `anyOf`) | `$ref` into root `$defs` | `$ref` into root `$defs`, each definition's own references cut | inlined [`RECURSION_UNROLL`] level, then cut |
//! | open [`Object`] (`Struct`, `Any`) | `object`, `additionalProperties: true` | JSON-encoded string | JSON-encoded string | JSON-encoded string |
//! | [`Kind::Any`] (`Value`) | `type` of every JSON type | `anyOf` string, number, boolean, null; an object or array as its JSON text | the same | the same (`nullable: true`) |
//! | closed [`Object`] | `additionalProperties: false` | the same, `required: []` when empty | the same, `required: []` when empty | no `additionalProperties` |
//! | string `format` | kept | kept if in OpenAI's list, else said in the description | kept if in Anthropic's list | only `date-time` |
//! | `pattern` | kept | kept | kept | said in the description |
//! | integer bounds | kept | kept | said in the description | kept |
//! | an integer whose range a double cannot hold (64-bit) | `integer` with its range (GeminiJsonSchema: a string of digits) | `integer` with its range | `integer`, range in the description | a string of digits, range in the description |
//! | a string with an alias prefix | "An alias like `link-1`, from an earlier result." in the description | the same | the same | the same |
//!
//! Both Gemini renderings give an integer past ±[`MAX_SAFE_INTEGER`] as a
//! string of digits (with [`SIGNED_DIGITS_PATTERN`] or
//! [`UNSIGNED_DIGITS_PATTERN`] where the dialect takes patterns), because
//! Gemini hands a call's arguments back as a `google.protobuf.Struct`,
//! whose numbers are doubles: a 64-bit integer past 2^53 would arrive
//! rounded, and the executor, which sees only the rounded number, would
//! pass it on. A string of digits is protojson's own form of a 64-bit
//! integer, and arrives exactly.
//!
//! # Host profiles
//!
//! [`parameters_for`] renders for a model whose arguments pass through a
//! host of a [`HostProfile`]: where the host parses numbers as doubles (a
//! JavaScript host), 64-bit integers go as strings of digits in every
//! dialect, as in Gemini's; where it refuses `$ref`, every dialect renders
//! as Gemini `parameters` does without one (a recursive type inlined
//! [`RECURSION_UNROLL`] level then cut, a repeated message spelled out at
//! each use). [`parameters`] is the rendering for a client that changes
//! nothing ([`HostProfile::Exact`]).
//!
//! OpenAI (strict or not) also cuts objects nested deeper than
//! [`OPENAI_MAX_DEPTH`] levels. Where an object is cut (recursion or depth) it
//! becomes `{"type":"string","description":"… A JSON-encoded `pkg.Message` object."}`.
//!
//! # Undoing the shaping inbound
//!
//! An executor that turns a model's arguments back into a message, walking by
//! descriptor, undoes exactly these: `null` means absent; a map field may
//! arrive as an array of `{key, value}` objects; a `Struct`, `Any`, or a
//! message field past a cut may arrive as a string holding JSON; a `Value`
//! string holding an object's or array's JSON text is that object or array
//! (in every dialect: the executor does not know which one a call came from).
//!
//! Sources of the provider rules:
//! - OpenAI Structured Outputs, "Supported schemas":
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>
//! - Anthropic strict tool use:
//!   <https://docs.claude.com/en/docs/build-with-claude/structured-outputs>
//! - Gemini `Schema` (OpenAPI subset; the Gemini Developer API accepts only the
//!   `enum` and `date-time` formats): <https://ai.google.dev/api/caching#Schema>,
//!   <https://firebase.google.com/docs/reference/js/ai.schemashared>

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::host::HostProfile;
use crate::ir::{
    self, IntegerSchema, Kind, MapSchema, NumberSchema, Object, OneOf, Schema, StringSchema,
};

mod share;

/// Recursive types are inlined this many levels in Gemini `parameters`
/// (no `$ref` at all) before the JSON-string cut.
///
/// One level is the cheapest faithful form: the cut sits inside an object of
/// the very type it stands for, so the model reads that type's fields right
/// there, and the executor reads the cut's JSON text back. Each further level
/// repeats every recursive field's whole subtree (two levels cost two to
/// three times the tokens of the `$ref` dialects on the corpus's trees).
/// Anthropic strict, which takes `$ref` but not a recursive one, refers to
/// each recursive type's definition once and cuts the references inside the
/// definitions instead, for about the tokens of OpenAI strict.
pub const RECURSION_UNROLL: usize = 1;

/// How a `google.protobuf.Value` reads where objects cannot be open: a
/// string is a string unless it holds an object's or array's JSON text.
const ANY_VALUE_AS_TEXT: &str = "Any JSON value: a string, number, boolean or null as itself; an object or array as its JSON text.";

/// The same rule where a `Value` may be any JSON type.
const ANY_VALUE_TEXT_ACCEPTED: &str = "An object or array may also be sent as its JSON text.";

/// OpenAI's documented limit of object nesting levels.
pub const OPENAI_MAX_DEPTH: usize = 10;

/// String formats OpenAI strict mode accepts.
pub const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// String formats Anthropic strict mode accepts.
pub const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// String formats the Gemini `parameters` schema accepts (besides `enum`,
/// which this crate does not emit).
pub const GEMINI_FORMATS: &[&str] = &["date-time"];

/// The largest integer a double holds exactly, 2^53 − 1 (JavaScript's
/// `Number.MAX_SAFE_INTEGER`).
///
/// Where a model's arguments pass through doubles on their way to the
/// executor (Gemini hands them back as a `google.protobuf.Struct`; a
/// JavaScript host parses them with `JSON.parse`), an integer past it may
/// arrive rounded, and the executor could not tell. There every integer
/// whose range goes past it (64-bit ones) is rendered as a string of digits
/// instead, protojson's own form of a 64-bit integer, which arrives exactly.
///
/// # Examples
///
/// Both Gemini renderings, and any rendering for a JavaScript host, give an
/// int64 as a string of digits; the others keep the integer and its range.
///
/// ```
/// use proto_ai_tools_schema::ir::{Object, Schema};
/// use proto_ai_tools_schema::render::{self, MAX_SAFE_INTEGER};
/// use proto_ai_tools_schema::Dialect;
///
/// let schema = Schema::object(
///     Object::new()
///         .property("id", Schema::integer_within(i64::MIN, i64::MAX), true)
///         .property("count", Schema::integer_within(0, MAX_SAFE_INTEGER), true),
/// );
/// let gemini = render::parameters(&schema, Dialect::Gemini, false);
/// assert_eq!(gemini["properties"]["id"]["type"], "string");
/// assert_eq!(gemini["properties"]["count"]["type"], "integer");
/// let canonical = render::parameters(&schema, Dialect::JsonSchema, false);
/// assert_eq!(canonical["properties"]["id"]["maximum"], i64::MAX);
/// ```
pub const MAX_SAFE_INTEGER: i128 = (1 << 53) - 1;

/// The pattern of a signed integer written as a string of digits (no
/// leading zeros, no `-0`); its range is said in the description.
pub const SIGNED_DIGITS_PATTERN: &str = "^(0|-?[1-9][0-9]*)$";

/// The pattern of an unsigned integer written as a string of digits.
pub const UNSIGNED_DIGITS_PATTERN: &str = "^(0|[1-9][0-9]*)$";

/// How `null` is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nulls {
    /// `type: [T, "null"]`; `anyOf` for objects and refs.
    TypeArray,
    /// `anyOf: [X, {"type": "null"}]` everywhere.
    AnyOf,
    /// OpenAPI `nullable: true`.
    Keyword,
}

/// What a dialect (with a strictness) accepts; shared by renderer and checker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Profile {
    pub(crate) nulls: Nulls,
    /// Every property must be listed in `required` (OpenAI strict).
    pub(crate) all_required: bool,
    /// Optional properties are marked nullable.
    pub(crate) optional_nullable: bool,
    /// Open objects (`additionalProperties` other than `false`, any-typed nodes).
    pub(crate) open_objects: bool,
    /// `$ref`/`$defs` accepted.
    pub(crate) refs: bool,
    /// Recursive `$ref`s accepted.
    pub(crate) recursion: bool,
    /// Object nesting limit.
    pub(crate) max_depth: Option<usize>,
    /// Accepted string formats; `None`: any.
    pub(crate) formats: Option<&'static [&'static str]>,
    pub(crate) pattern: bool,
    /// `minimum`/`maximum` accepted.
    pub(crate) bounds: bool,
    /// The arguments pass through doubles on their way (Gemini's `Struct`,
    /// a JavaScript host): an integer whose range goes past
    /// [`MAX_SAFE_INTEGER`] is rendered as a string of digits.
    pub(crate) wide_integers_as_strings: bool,
    /// Closed objects say `additionalProperties: false`.
    pub(crate) closed_keyword: bool,
    /// Objects always carry `required`, even empty.
    pub(crate) empty_required: bool,
    /// `type` may be an array.
    pub(crate) type_arrays: bool,
    /// Accepted keywords; `None`: any.
    pub(crate) keywords: Option<&'static [&'static str]>,
    /// OpenAI's size limits apply.
    pub(crate) openai_limits: bool,
    /// Enum values must be strings.
    pub(crate) string_enums: bool,
    /// A `$ref` node may carry other keywords (`description`). OpenAI rejects
    /// them ("`$ref` cannot have keywords"), so there a described reference
    /// is wrapped in a one-branch `anyOf`.
    pub(crate) ref_siblings: bool,
}

/// Keywords OpenAI strict mode accepts.
const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords Anthropic strict mode accepts (no numeric or length bounds).
const ANTHROPIC_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "default",
    "examples",
    "minItems",
];

/// Fields of the Gemini `Schema` object.
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

impl Profile {
    const CANONICAL: Profile = Profile {
        nulls: Nulls::TypeArray,
        all_required: false,
        optional_nullable: false,
        open_objects: true,
        refs: true,
        recursion: true,
        max_depth: None,
        formats: None,
        pattern: true,
        bounds: true,
        wide_integers_as_strings: false,
        closed_keyword: true,
        empty_required: false,
        type_arrays: true,
        keywords: None,
        openai_limits: false,
        string_enums: false,
        ref_siblings: true,
    };

    const OPENAI_STRICT: Profile = Profile {
        all_required: true,
        optional_nullable: true,
        open_objects: false,
        max_depth: Some(OPENAI_MAX_DEPTH),
        formats: Some(OPENAI_FORMATS),
        empty_required: true,
        keywords: Some(OPENAI_KEYWORDS),
        openai_limits: true,
        ref_siblings: false,
        ..Profile::CANONICAL
    };

    /// What `dialect` accepts, as received by a client that changes
    /// nothing ([`HostProfile::Exact`]).
    pub(crate) fn of(dialect: Dialect, strict: bool) -> Profile {
        Profile::for_host(dialect, strict, HostProfile::Exact)
    }

    /// What `dialect` accepts, narrowed by what `host` does on the way:
    /// integers as strings where it parses numbers as doubles, no `$ref`
    /// where it refuses them.
    pub(crate) fn for_host(dialect: Dialect, strict: bool, host: HostProfile) -> Profile {
        let mut profile = Profile::of_dialect(dialect, strict);
        if host.numbers_as_doubles() {
            profile.wide_integers_as_strings = true;
        }
        if !host.takes_refs() {
            profile.refs = false;
            profile.recursion = false;
        }
        profile
    }

    fn of_dialect(dialect: Dialect, strict: bool) -> Profile {
        match (dialect, strict) {
            // Strict canonical tools look like the Go plugin's output: OpenAI strict.
            (Dialect::JsonSchema, true) | (Dialect::OpenAi, true) => Profile::OPENAI_STRICT,
            (Dialect::JsonSchema, false) | (Dialect::Anthropic, false) => Profile::CANONICAL,
            (Dialect::GeminiJsonSchema, _) => Profile {
                wide_integers_as_strings: true,
                ..Profile::CANONICAL
            },
            (Dialect::OpenAi, false) => Profile {
                max_depth: Some(OPENAI_MAX_DEPTH),
                ref_siblings: false,
                ..Profile::CANONICAL
            },
            (Dialect::Anthropic, true) => Profile {
                nulls: Nulls::AnyOf,
                open_objects: false,
                refs: true,
                recursion: false,
                formats: Some(ANTHROPIC_FORMATS),
                bounds: false,
                empty_required: true,
                keywords: Some(ANTHROPIC_STRICT_KEYWORDS),
                ..Profile::CANONICAL
            },
            (Dialect::Gemini, _) => Profile {
                nulls: Nulls::Keyword,
                optional_nullable: true,
                open_objects: false,
                refs: false,
                recursion: false,
                formats: Some(GEMINI_FORMATS),
                pattern: false,
                closed_keyword: false,
                type_arrays: false,
                keywords: Some(GEMINI_KEYWORDS),
                string_enums: true,
                wide_integers_as_strings: true,
                ..Profile::CANONICAL
            },
        }
    }
}

/// Renders `schema` as the JSON Schema `dialect` accepts, with `strict`
/// shaping where the dialect has a strict mode (OpenAI, Anthropic; canonical
/// strict renders like OpenAI strict; Gemini ignores it).
///
/// See the [module docs](self) for what each dialect renders.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::ir::{Object, Schema};
/// use proto_ai_tools_schema::{render, Dialect};
/// use serde_json::json;
///
/// let schema = Schema::object(
///     Object::new().property("labels", Schema::map(Schema::string(), Schema::string()), false),
/// );
/// assert_eq!(
///     render::parameters(&schema, Dialect::Anthropic, false)["properties"]["labels"],
///     json!({ "type": "object", "additionalProperties": { "type": "string" } })
/// );
/// assert_eq!(
///     render::parameters(&schema, Dialect::Gemini, false)["properties"]["labels"],
///     json!({
///         "type": "array",
///         "nullable": true,
///         "items": {
///             "type": "object",
///             "properties": { "key": { "type": "string" }, "value": { "type": "string" } },
///             "required": ["key", "value"]
///         }
///     })
/// );
/// ```
pub fn parameters(schema: &Schema, dialect: Dialect, strict: bool) -> Value {
    parameters_for(schema, dialect, strict, HostProfile::Exact)
}

/// [`parameters`] for a model whose arguments reach the executor through a
/// host of `host`'s profile: the dialect's rendering, with every integer a
/// double cannot hold as a string of digits where the host parses numbers
/// as doubles, and without `$ref` where it refuses them (recursion cut as in
/// Gemini `parameters`, repeated messages spelled out at each use). See the
/// [`host`](crate::host) module.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::ir::{Object, Schema};
/// use proto_ai_tools_schema::{render, Dialect, HostProfile};
///
/// let node = Schema::object(Object::new().property("next", Schema::reference("Node"), false))
///     .clone();
/// let schema = Schema::object(
///     Object::new()
///         .property("head", Schema::reference("Node"), true)
///         .define("Node", node),
/// );
/// let exact = render::parameters_for(&schema, Dialect::Anthropic, false, HostProfile::Exact);
/// assert!(exact.to_string().contains("$ref"));
/// let javascript = render::parameters_for(&schema, Dialect::Anthropic, false, HostProfile::JavaScript);
/// assert!(!javascript.to_string().contains("$ref"));
/// assert_eq!(javascript["properties"]["head"]["properties"]["next"]["type"], "string");
/// ```
pub fn parameters_for(schema: &Schema, dialect: Dialect, strict: bool, host: HostProfile) -> Value {
    render_with(schema, Profile::for_host(dialect, strict, host))
}

/// The size, in bytes of minified JSON, a whole tool definition is kept to
/// by default in every dialect and host profile: 16 KiB, about 4,000
/// tokens, so that one tool never fills a model's context. The largest
/// tools of large APIs (Compute Engine's) run to hundreds of KiB spelled
/// out. The parameters get what the rest of the definition leaves
/// ([`parameters_budget`]); a tool's `outputSchema` has a cap of its own.
pub const DEFAULT_MAX_TOOL_BYTES: usize = 16 * 1024;

/// What a tool definition spends, at most, beyond its parameters and the
/// texts [`parameters_budget`] counts: the keys, type tags and behaviour
/// annotations of the most verbose listing (an MCP `tools/list` item with
/// every annotation, an OpenAI function in a tool-search namespace).
pub const DEFINITION_ENVELOPE: usize = 512;

/// The bytes left for a tool's parameters when its whole definition is to
/// fit `max_tool_bytes`: less its name, its title (written twice, as MCP's
/// `title` and `annotations.title`), its description, as JSON strings, its
/// examples' JSON (`examples_bytes`, Anthropic's `input_examples`) and
/// [`DEFINITION_ENVELOPE`].
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::render::{DEFINITION_ENVELOPE, parameters_budget};
///
/// let left = parameters_budget(16 * 1024, "books_get", Some("Get a book"), "Gets a \"book\".", 0);
/// assert_eq!(left, 16 * 1024 - DEFINITION_ENVELOPE - 11 - 2 * 12 - 18);
/// assert_eq!(parameters_budget(100, "x", None, "", 0), 0);
/// ```
pub fn parameters_budget(
    max_tool_bytes: usize,
    name: &str,
    title: Option<&str>,
    description: &str,
    examples_bytes: usize,
) -> usize {
    let text = |t: &str| minified_len(&Value::from(t));
    let around = text(name)
        + 2 * title.map_or(0, text)
        + text(description)
        + examples_bytes
        + DEFINITION_ENVELOPE;
    max_tool_bytes.saturating_sub(around)
}

/// [`parameters_for`], kept to `max_bytes` of minified JSON (a tool's
/// [`parameters_budget`]): past it, the
/// objects nested deepest are cut to the form recursion and OpenAI's depth
/// limit already use, a string holding the object's JSON text, described in
/// the field's own words ("… A JSON-encoded `pkg.Message` object."), which
/// the executor reads back. The cut is made at the deepest level that fits
/// the budget, the same level everywhere in the tool; a tool that does not
/// fit even with every nested object cut is rendered so, over the budget.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::ir::{Object, Schema};
/// use proto_ai_tools_schema::{render, Dialect, HostProfile};
///
/// let mut leaf = Object::new();
/// for i in 0..40 {
///     leaf = leaf.property(&format!("field_{i}"), Schema::string(), false);
/// }
/// let middle = Schema::object(Object::new().property("leaf", Schema::object(leaf), false));
/// let root = Schema::object(Object::new().property("middle", middle, true));
/// let whole = render::parameters_within(&root, Dialect::OpenAi, false, HostProfile::Exact, 1 << 20);
/// assert_eq!(whole["properties"]["middle"]["properties"]["leaf"]["type"], "object");
/// let small = render::parameters_within(&root, Dialect::OpenAi, false, HostProfile::Exact, 1024);
/// assert!(small.to_string().len() <= 1024);
/// assert_eq!(small["properties"]["middle"]["properties"]["leaf"]["type"], "string");
/// ```
pub fn parameters_within(
    schema: &Schema,
    dialect: Dialect,
    strict: bool,
    host: HostProfile,
    max_bytes: usize,
) -> Value {
    let profile = Profile::for_host(dialect, strict, host);
    let whole = render_with(schema, profile);
    if minified_len(&whole) <= max_bytes {
        return whole;
    }
    // Cutting at a shallower depth never makes the rendering larger: find
    // the deepest level that fits by bisection.
    let deepest = profile
        .max_depth
        .unwrap_or(BUDGET_DEPTH_SEARCH)
        .min(BUDGET_DEPTH_SEARCH);
    let at_depth = |depth: usize| {
        render_with(
            schema,
            Profile {
                max_depth: Some(depth),
                ..profile
            },
        )
    };
    // Depths below `low` fit (`fits` holds the deepest of them tried);
    // `over` and deeper do not, or lie past the deepest level tried.
    let (mut fits, mut over) = (None, deepest + 1);
    let mut low = 1;
    while low < over {
        let middle = (low + over) / 2;
        let rendered = at_depth(middle);
        if minified_len(&rendered) <= max_bytes {
            fits = Some(rendered);
            low = middle + 1;
        } else {
            over = middle;
        }
    }
    fits.unwrap_or_else(|| at_depth(1))
}

/// The deepest level [`parameters_within`] tries to keep; a tool cut at all
/// is cut at most this deep.
const BUDGET_DEPTH_SEARCH: usize = 16;

/// The length of `value` as minified JSON.
pub fn minified_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// One rendering of `schema` under `profile`.
fn render_with(schema: &Schema, profile: Profile) -> Value {
    let mut defs = BTreeMap::new();
    let mut names = HashMap::new();
    collect_defs(schema, &mut defs, &mut names);
    let mut r = Renderer {
        p: profile,
        defs: defs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect(),
        stack: Vec::new(),
        ref_stack: Vec::new(),
        used: BTreeSet::new(),
        in_definition: false,
        path: Vec::new(),
        spelled_out: BTreeMap::new(),
        // Only a message the IR holds twice can render twice.
        repeated: if profile.refs {
            names
                .into_iter()
                .filter(|(_, count)| *count > 1)
                .map(|(name, _)| name.to_owned())
                .collect()
        } else {
            BTreeSet::new()
        },
    };
    let root_object;
    let schema = match &schema.kind {
        // Providers reject a root `anyOf`: a root oneof (a Rust enum with
        // data as a tool's whole input) goes as an object of optional
        // members, its "exactly one" said in the description; inbound still
        // takes exactly one.
        Kind::OneOf(one_of) => {
            root_object = root_one_of(schema, one_of);
            &root_object
        }
        _ => schema,
    };
    let mut root = r.node(schema, 0, false);
    if r.p.refs && !r.used.is_empty() {
        // Where recursion is refused, references met while rendering a
        // definition are cut, so no `$ref` cycle can form.
        r.in_definition = true;
        let mut rendered: BTreeMap<String, Value> = BTreeMap::new();
        while let Some(name) = r.used.iter().find(|n| !rendered.contains_key(*n)).cloned() {
            let value = match r.defs.get(name.as_str()).cloned() {
                Some(def) => r.node(&def, 0, false),
                None => json_string(None, &format!("`{name}`")),
            };
            rendered.insert(name, value);
        }
        if let Value::Object(map) = &mut root {
            map.insert(
                "$defs".to_owned(),
                Value::Object(rendered.into_iter().collect()),
            );
        }
    }
    if !r.repeated.is_empty() {
        share::share_repeated_objects(&mut root, r.p.ref_siblings);
    }
    root
}

/// The JSON pointer of a definition in the rendered root.
pub fn def_pointer(name: &str) -> String {
    let mut pointer = String::from("#/$defs/");
    crate::names::push_pointer_token(&mut pointer, name);
    pointer
}

/// The definitions of `schema`'s subtree (the first of each name), and how
/// many times each named object occurs in it (a definition's counted once).
fn collect_defs<'a>(
    schema: &'a Schema,
    defs: &mut BTreeMap<&'a str, &'a Schema>,
    names: &mut HashMap<&'a str, usize>,
) {
    match &schema.kind {
        Kind::Object(object) => {
            if let Some(name) = &object.name {
                *names.entry(name).or_default() += 1;
            }
            for (name, def) in &object.defs {
                if !defs.contains_key(name.as_str()) {
                    defs.insert(name, def);
                    collect_defs(def, defs, names);
                }
            }
            for p in &object.properties {
                collect_defs(&p.schema, defs, names);
            }
        }
        Kind::Array(items) => collect_defs(items, defs, names),
        Kind::Map(map) => {
            collect_defs(&map.key, defs, names);
            collect_defs(&map.value, defs, names);
        }
        Kind::OneOf(one_of) => {
            for member in &one_of.members {
                collect_defs(&member.schema, defs, names);
            }
        }
        _ => {}
    }
}

struct Renderer {
    p: Profile,
    defs: BTreeMap<String, Schema>,
    /// Names of the named objects being rendered, outermost first.
    stack: Vec<String>,
    /// Names of the references being inlined, outermost first (bounds
    /// recursion through unnamed definitions too).
    ref_stack: Vec<String>,
    /// Definitions referred to by `$ref`.
    used: BTreeSet<String>,
    /// Rendering the root's `$defs` rather than the root itself.
    in_definition: bool,
    /// Where the node being rendered sits: property names, `[]` for items.
    path: Vec<String>,
    /// Without `$ref`: where each recursive type was inlined first, so
    /// that later uses point there instead of repeating its subtree.
    spelled_out: BTreeMap<String, String>,
    /// With `$ref`: the messages that occur more than once in the IR, whose
    /// objects are noted with their name for `share`.
    repeated: BTreeSet<String>,
}

/// What a node is, for choosing how to make it nullable.
#[derive(PartialEq, Eq)]
enum Shape {
    /// Has a single string `type`.
    Typed,
    /// `$ref`, or already a type array / union.
    Other,
}

impl Renderer {
    /// Renders `s` whose objects sit under `depth` object levels; `null_ok`
    /// adds `null` to its values (besides `s.nullable`).
    fn node(&mut self, s: &Schema, depth: usize, null_ok: bool) -> Value {
        let mut hints: Vec<String> = Vec::new();
        let mut description = s.description.clone();
        let (body, shape) = self.body(s, depth, &mut hints, &mut description);
        let description = join_all(description, hints);
        let nullable = s.nullable || null_ok;
        self.finish(body, shape, description, nullable)
    }

    fn body(
        &mut self,
        s: &Schema,
        depth: usize,
        hints: &mut Vec<String>,
        description: &mut Option<String>,
    ) -> (Map<String, Value>, Shape) {
        let mut m = Map::new();
        match &s.kind {
            Kind::String(StringSchema {
                format,
                pattern,
                alias_prefix,
                ..
            }) => {
                m.insert("type".into(), "string".into());
                if let Some(prefix) = alias_prefix {
                    hints.push(alias_hint(prefix));
                }
                let mut hinted_bytes = false;
                if let Some(f) = format {
                    if self.p.formats.is_none_or(|list| list.contains(&f.as_str())) {
                        m.insert("format".into(), f.as_str().into());
                    } else {
                        hinted_bytes = f == ir::FORMAT_BYTE;
                        hints.push(format_hint(f));
                    }
                }
                if let Some(pat) = pattern {
                    if self.p.pattern {
                        m.insert("pattern".into(), pat.as_str().into());
                    } else if !(hinted_bytes && pat == ir::BASE64_PATTERN) {
                        hints.push(pattern_hint(pat));
                    }
                }
            }
            Kind::Integer(IntegerSchema { minimum, maximum }) => {
                let wide = minimum.is_none_or(|min| min < -MAX_SAFE_INTEGER)
                    || maximum.is_none_or(|max| max > MAX_SAFE_INTEGER);
                if wide && self.p.wide_integers_as_strings {
                    return self.integer_as_digits(*minimum, *maximum, hints);
                }
                m.insert("type".into(), "integer".into());
                self.bounds(
                    "An integer",
                    &mut m,
                    hints,
                    minimum.map(integer_value),
                    maximum.map(integer_value),
                );
            }
            Kind::Number(NumberSchema { minimum, maximum }) => {
                m.insert("type".into(), "number".into());
                self.bounds(
                    "A number",
                    &mut m,
                    hints,
                    minimum.map(number_value),
                    maximum.map(number_value),
                );
            }
            Kind::OneOf(one_of) => return self.one_of(one_of, depth, hints),
            Kind::Boolean => {
                m.insert("type".into(), "boolean".into());
            }
            Kind::Enum(values) => {
                m.insert("type".into(), "string".into());
                if !values.is_empty() {
                    m.insert(
                        "enum".into(),
                        Value::Array(values.iter().map(|v| v.as_str().into()).collect()),
                    );
                }
            }
            Kind::Array(items) => {
                m.insert("type".into(), "array".into());
                self.path.push("[]".to_owned());
                let items = self.node(items, depth, false);
                self.path.pop();
                m.insert("items".into(), items);
            }
            Kind::Map(map) => return self.map(map, depth, hints),
            Kind::Object(object) => return self.object(object, depth, hints),
            Kind::Ref(name) => {
                // A `$ref` wherever the dialect takes one; where it refuses
                // recursion, not inside a definition (see `in_definition`).
                if self.p.refs && (self.p.recursion || !self.in_definition) {
                    self.used.insert(name.clone());
                    m.insert("$ref".into(), def_pointer(name).into());
                    return (m, Shape::Other);
                }
                let count = self
                    .stack
                    .iter()
                    .filter(|n| *n == name)
                    .count()
                    .max(self.ref_stack.iter().filter(|n| *n == name).count());
                let def = self.defs.get(name.as_str()).cloned();
                if description.is_none()
                    && let Some(def) = &def
                {
                    description.clone_from(&def.description);
                }
                match def {
                    Some(_) if count == 0 && self.spelled_out.contains_key(name) => {
                        let first = &self.spelled_out[name];
                        return cut(&format!("`{name}` object, shaped as `{first}`"), hints);
                    }
                    // Inlined only within the nesting a request may have,
                    // so that recursive types inlined inside one another
                    // cannot nest without end.
                    Some(def)
                        if !self.p.refs
                            && count < RECURSION_UNROLL
                            && depth < crate::ir::MAX_NESTING_DEPTH =>
                    {
                        self.spelled_out.insert(name.clone(), self.path_text());
                        self.ref_stack.push(name.clone());
                        let out = self.body(&def, depth, hints, &mut None);
                        self.ref_stack.pop();
                        return out;
                    }
                    _ => return cut(&format!("`{name}` object"), hints),
                }
            }
            Kind::Any => {
                // The executor reads a string holding an object's or array's
                // JSON text as that object or array in every dialect (it
                // cannot tell which one a call came from), so every
                // rendering says so; where objects cannot be open, that
                // text is the only way to send one.
                if !self.p.open_objects {
                    hints.push(ANY_VALUE_AS_TEXT.to_owned());
                    let mut branches = vec![
                        json!({ "type": "string" }),
                        json!({ "type": "number" }),
                        json!({ "type": "boolean" }),
                    ];
                    if self.p.nulls == Nulls::Keyword {
                        m.insert("nullable".into(), Value::Bool(true));
                    } else {
                        branches.push(json!({ "type": "null" }));
                    }
                    m.insert("anyOf".into(), Value::Array(branches));
                    return (m, Shape::Other);
                }
                hints.push(ANY_VALUE_TEXT_ACCEPTED.to_owned());
                m.insert(
                    "type".into(),
                    json!(["object", "array", "string", "number", "boolean", "null"]),
                );
                return (m, Shape::Other);
            }
        }
        (m, Shape::Typed)
    }

    /// An integer whose range a double cannot hold, as a string of its
    /// digits (protojson's form of a 64-bit integer), which arrives exactly
    /// where the arguments pass through doubles. The range is said in the
    /// description: a pattern stating int64's exact range runs past 300
    /// characters.
    fn integer_as_digits(
        &self,
        minimum: Option<i128>,
        maximum: Option<i128>,
        hints: &mut Vec<String>,
    ) -> (Map<String, Value>, Shape) {
        let mut m = Map::new();
        m.insert("type".into(), "string".into());
        let unsigned = minimum.is_some_and(|min| min >= 0);
        if self.p.pattern {
            let pattern = if unsigned {
                UNSIGNED_DIGITS_PATTERN
            } else {
                SIGNED_DIGITS_PATTERN
            };
            m.insert("pattern".into(), pattern.into());
        }
        hints.push(match (minimum, maximum) {
            (Some(min), Some(max)) => {
                format!("An integer from {min} to {max}, as a string of digits.")
            }
            (Some(min), None) => format!("An integer of at least {min}, as a string of digits."),
            (None, Some(max)) => format!("An integer of at most {max}, as a string of digits."),
            (None, None) => "An integer, as a string of digits.".to_owned(),
        });
        (m, Shape::Typed)
    }

    /// `minimum`/`maximum` where the dialect accepts them, else said in the
    /// description (Anthropic strict rejects numeric constraints).
    fn bounds(
        &self,
        what: &str,
        m: &mut Map<String, Value>,
        hints: &mut Vec<String>,
        minimum: Option<Value>,
        maximum: Option<Value>,
    ) {
        if self.p.bounds {
            if let Some(min) = minimum {
                m.insert("minimum".into(), min);
            }
            if let Some(max) = maximum {
                m.insert("maximum".into(), max);
            }
            return;
        }
        match (minimum, maximum) {
            (Some(min), Some(max)) => hints.push(format!("{what} from {min} to {max}.")),
            (Some(min), None) => hints.push(format!("{what} of at least {min}.")),
            (None, Some(max)) => hints.push(format!("{what} of at most {max}.")),
            (None, None) => {}
        }
    }

    /// `anyOf` of one-property objects, one per member: exactly one member,
    /// stated by the schema itself in every dialect.
    fn one_of(
        &mut self,
        one_of: &OneOf,
        depth: usize,
        hints: &mut Vec<String>,
    ) -> (Map<String, Value>, Shape) {
        if self.too_deep(depth) {
            // Cut whole, not branch by branch: each branch alone would be a
            // string saying only "a JSON-encoded object".
            let members: Vec<String> = one_of
                .members
                .iter()
                .map(|member| format!("`{}`", member.name))
                .collect();
            return cut(
                &format!("object with exactly one of {}", members.join(", ")),
                hints,
            );
        }
        let branches = one_of
            .members
            .iter()
            .map(|member| {
                let branch = Object {
                    properties: vec![ir::Property {
                        required: true,
                        ..member.clone()
                    }],
                    ..Object::new()
                };
                self.node(&Schema::object(branch), depth, false)
            })
            .collect();
        let mut m = Map::new();
        m.insert("anyOf".into(), Value::Array(branches));
        (m, Shape::Other)
    }

    /// [`path`](Self::path) as the model reads it: `also[].kind.node`, or
    /// "the arguments" at the root.
    fn path_text(&self) -> String {
        if self.path.is_empty() {
            return "the arguments".to_owned();
        }
        let mut text = String::new();
        for segment in &self.path {
            if !text.is_empty() && segment != "[]" {
                text.push('.');
            }
            text.push_str(segment);
        }
        text
    }

    fn too_deep(&self, depth: usize) -> bool {
        self.p.max_depth.is_some_and(|max| depth + 1 > max)
    }

    fn map(
        &mut self,
        map: &MapSchema,
        depth: usize,
        hints: &mut Vec<String>,
    ) -> (Map<String, Value>, Shape) {
        if self.too_deep(depth) {
            return cut("object mapping keys to values", hints);
        }
        let mut m = Map::new();
        // Integer keys go as `{key, value}` entries everywhere: a key pattern
        // cannot state a 32- or 64-bit range, an integer schema can.
        let integer_keys = matches!(map.key.kind, Kind::Integer(_));
        if self.p.open_objects && !integer_keys {
            m.insert("type".into(), "object".into());
            if let Some((names, hint)) = map_keys(&map.key) {
                m.insert("propertyNames".into(), names);
                hints.push(hint);
            }
            self.path.push("*".to_owned());
            let value = self.node(&map.value, depth + 1, false);
            self.path.pop();
            m.insert("additionalProperties".into(), value);
            return (m, Shape::Typed);
        }
        let entry = Object::new()
            .property("key", (*map.key).clone(), true)
            .property("value", (*map.value).clone(), true);
        let rendered = self.node(&Schema::object(entry), depth, false);
        m.insert("type".into(), "array".into());
        m.insert("items".into(), rendered);
        (m, Shape::Typed)
    }

    fn object(
        &mut self,
        object: &Object,
        depth: usize,
        hints: &mut Vec<String>,
    ) -> (Map<String, Value>, Shape) {
        let what = match &object.name {
            Some(name) => format!("`{name}` object"),
            None => "object".to_owned(),
        };
        if object.open && !self.p.open_objects {
            return cut(&what, hints);
        }
        if self.too_deep(depth) {
            return cut(&what, hints);
        }
        let mut m = Map::new();
        m.insert("type".into(), "object".into());
        if let Some(name) = &object.name {
            self.stack.push(name.clone());
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        for prop in &object.properties {
            let null_ok = !prop.required && self.p.optional_nullable;
            self.path.push(prop.name.clone());
            let value = self.node(&prop.schema, depth + 1, null_ok);
            self.path.pop();
            properties.insert(prop.name.clone(), value);
            if prop.required || self.p.all_required {
                required.push(Value::String(prop.name.clone()));
            }
        }
        if object.name.is_some() {
            self.stack.pop();
        }
        if !properties.is_empty() || (!object.open && self.p.closed_keyword) {
            m.insert("properties".into(), Value::Object(properties));
        }
        if !required.is_empty() || self.p.empty_required {
            m.insert("required".into(), Value::Array(required));
        }
        if self.p.closed_keyword {
            m.insert("additionalProperties".into(), Value::Bool(object.open));
        }
        if let Some(name) = &object.name
            && self.repeated.contains(name)
        {
            // Read and removed by `share`, which refers to a repeated
            // message's one definition.
            m.insert(share::NAME_KEY.into(), name.as_str().into());
        }
        (m, Shape::Typed)
    }

    fn finish(
        &self,
        body: Map<String, Value>,
        shape: Shape,
        description: Option<String>,
        nullable: bool,
    ) -> Value {
        let is_object_like =
            body.get("type").and_then(Value::as_str) == Some("object") || body.contains_key("$ref");
        let mut body = body;
        if nullable {
            match self.p.nulls {
                Nulls::Keyword => {
                    body.insert("nullable".into(), Value::Bool(true));
                }
                Nulls::TypeArray if shape == Shape::Typed && !is_object_like => {
                    if let Some(Value::String(t)) = body.get("type").cloned() {
                        body.insert("type".into(), json!([t, "null"]));
                    }
                    if let Some(Value::Array(values)) = body.get_mut("enum") {
                        values.push(Value::Null);
                    }
                }
                Nulls::TypeArray | Nulls::AnyOf if is_union(&body) => {
                    if let Some(Value::Array(branches)) = body.get_mut("anyOf")
                        && !branches.iter().any(|b| b["type"] == "null")
                    {
                        branches.push(json!({ "type": "null" }));
                    }
                }
                Nulls::TypeArray | Nulls::AnyOf => {
                    let already_null = body
                        .get("type")
                        .and_then(Value::as_array)
                        .is_some_and(|t| t.iter().any(|t| t == "null"));
                    if !already_null {
                        let mut outer = Map::new();
                        outer.insert(
                            "anyOf".into(),
                            json!([Value::Object(body), { "type": "null" }]),
                        );
                        body = outer;
                    }
                }
            }
        }
        if description.is_some() && body.contains_key("$ref") && !self.p.ref_siblings {
            let mut outer = Map::new();
            outer.insert("anyOf".into(), json!([Value::Object(body)]));
            body = outer;
        }
        // `type` first, then `description`, then the rest.
        let mut out = Map::new();
        if let Some(t) = body.shift_remove("type") {
            out.insert("type".into(), t);
        }
        if let Some(d) = description {
            out.insert("description".into(), Value::String(d));
        }
        out.extend(body);
        Value::Object(out)
    }
}

/// A root oneof as an object whose members are optional properties.
fn root_one_of(schema: &Schema, one_of: &OneOf) -> Schema {
    let names: Vec<String> = one_of
        .members
        .iter()
        .map(|m| format!("`{}`", m.name))
        .collect();
    let object = Object {
        properties: one_of
            .members
            .iter()
            .map(|m| ir::Property {
                required: false,
                ..m.clone()
            })
            .collect(),
        ..Object::new()
    };
    let rule = format!("Set exactly one of {}.", names.join(", "));
    Schema {
        kind: Kind::Object(object),
        description: join_all(schema.description.clone(), vec![rule]),
        nullable: false,
    }
}

/// A bare `anyOf` node (a oneof), to which a `null` branch can be added.
fn is_union(body: &Map<String, Value>) -> bool {
    body.len() == 1 && body.contains_key("anyOf")
}

/// A whole number as an exact JSON number: `None` beyond 64 bits, where a
/// JSON number (serde_json's) can no longer hold it exactly. What stands
/// there instead is the caller's to say: a schema's bound must be a number
/// (the nearest double, [`integer_value`]), an argument handed on to a
/// decoder must keep its value (its digits, `inbound`).
pub(crate) fn exact_integer(n: i128) -> Option<Value> {
    if let Ok(n) = i64::try_from(n) {
        Some(Value::from(n))
    } else {
        u64::try_from(n).ok().map(Value::from)
    }
}

/// An integer bound as JSON: exact for every 64-bit bound; beyond 64 bits
/// (`i128`), the nearest double, as JSON Schema takes only a number there.
fn integer_value(bound: i128) -> Value {
    #[allow(clippy::cast_precision_loss)]
    exact_integer(bound).unwrap_or_else(|| Value::from(bound as f64))
}

fn number_value(bound: f64) -> Value {
    serde_json::Number::from_f64(bound).map_or(Value::Null, Value::Number)
}

/// The JSON-string replacement of something a dialect cannot express.
fn cut(what: &str, hints: &mut Vec<String>) -> (Map<String, Value>, Shape) {
    let mut m = Map::new();
    m.insert("type".into(), "string".into());
    hints.push(format!("A JSON-encoded {what}."));
    (m, Shape::Typed)
}

fn json_string(description: Option<String>, what: &str) -> Value {
    let mut hints = Vec::new();
    let (mut m, _) = cut(what, &mut hints);
    if let Some(d) = join_all(description, hints) {
        m.insert("description".into(), Value::String(d));
    }
    Value::Object(m)
}

/// What an alias field holds: the model never sees the ids behind it, so
/// it must take one it was shown.
fn alias_hint(prefix: &str) -> String {
    format!(
        "An alias like `{}`, from an earlier result.",
        crate::names::alias(prefix, 1)
    )
}

fn format_hint(format: &str) -> String {
    match format {
        ir::FORMAT_BYTE => "Base64-encoded bytes.".to_owned(),
        ir::FORMAT_DATE_TIME => "An RFC 3339 date-time, e.g. `2024-01-31T09:00:00Z`.".to_owned(),
        other => format!("Format: `{other}`."),
    }
}

fn pattern_hint(pattern: &str) -> String {
    match pattern {
        ir::BASE64_PATTERN => "Base64 (standard or URL-safe alphabet, padded or not).".to_owned(),
        ir::DURATION_PATTERN => {
            "A duration in seconds with an `s` suffix (at most 11 digits, then at most 9 after a point), e.g. `90s` or `1.5s`.".to_owned()
        }
        ir::FIELD_MASK_PATTERN => {
            "Comma-separated field paths in lowerCamelCase, e.g. `displayName,address.city`."
                .to_owned()
        }
        _ => format!("Must match the regular expression `{pattern}`."),
    }
}

/// `propertyNames` and a hint for the keys of a map rendered as an open
/// object, when they are not free strings (JSON object keys are always
/// strings: an integer key `42` is written `"42"`).
fn map_keys(key: &Schema) -> Option<(Value, String)> {
    let (pattern, hint) = match &key.kind {
        Kind::Boolean => ("^(true|false)$", "Keys are `\"true\"` or `\"false\"`."),
        _ => return None,
    };
    Some((
        json!({ "type": "string", "pattern": pattern }),
        hint.to_owned(),
    ))
}

fn join_all(description: Option<String>, hints: Vec<String>) -> Option<String> {
    let mut parts: Vec<String> = description
        .into_iter()
        .filter(|d| !d.trim().is_empty())
        .collect();
    if !hints.is_empty() {
        parts.push(hints.join(" "));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::ir::{Object, Schema};

    #[test]
    fn unnamed_and_bare_recursive_definitions_terminate() {
        // `A` is a bare reference to itself; `B` an unnamed object referring to itself.
        let root = Object::new()
            .property("a", Schema::reference("A"), true)
            .property("b", Schema::reference("B"), false)
            .property("missing", Schema::reference("Nowhere"), false)
            .define("A", Schema::reference("A"))
            .define(
                "B",
                Schema::object(Object::new().property("next", Schema::reference("B"), false)),
            );
        let schema = Schema::object(root);
        for dialect in Dialect::ALL {
            for strict in [false, true] {
                let rendered = parameters(&schema, dialect, strict);
                assert_eq!(rendered["type"], "object", "{dialect} {strict}");
            }
        }
        let gemini = parameters(&schema, Dialect::Gemini, false);
        assert_eq!(gemini["properties"]["missing"]["type"], "string");
        assert!(check(Dialect::Gemini, false, &gemini).is_empty());
    }

    #[test]
    fn hand_built_schema_renders_and_checks() {
        let schema = Schema::object(
            Object::new()
                .property("when", Schema::string_format("date"), true)
                .property("email", Schema::string_format("email"), false)
                .property("n", Schema::integer().minimum(1).maximum(9), false)
                .property("raw", Schema::any().describe("Anything."), false)
                .property(
                    "tags",
                    Schema::array(Schema::enumeration(["A", "B"])),
                    false,
                ),
        );
        for dialect in Dialect::ALL {
            for strict in [false, true] {
                let rendered = parameters(&schema, dialect, strict);
                let violations = check(dialect, strict, &rendered);
                assert!(violations.is_empty(), "{dialect} {strict}: {violations:#?}");
            }
        }
        let gemini = parameters(&schema, Dialect::Gemini, false);
        assert_eq!(
            gemini["properties"]["when"],
            serde_json::json!({ "type": "string", "description": "Format: `date`." })
        );
        assert_eq!(
            gemini["properties"]["raw"]["description"],
            "Anything.\n\nAny JSON value: a string, number, boolean or null as itself; an object or array as its JSON text."
        );
    }

    /// A bound is exact within 64 bits; past them (a hand-built `i128`
    /// bound) it is the nearest double, as JSON Schema takes only a number
    /// there. An argument past 64 bits is kept as its digits instead
    /// (`inbound`'s `an_integer_past_64_bits_is_kept_as_its_digits`).
    #[test]
    fn an_integer_bound_past_64_bits_is_the_nearest_double() {
        let past = i128::from(u64::MAX) + 1;
        let schema = Schema::object(
            Object::new()
                .property("wide", Schema::integer_within(-past, past), true)
                .property("long", Schema::integer_within(i64::MIN, u64::MAX), true),
        );
        let rendered = parameters(&schema, Dialect::JsonSchema, false);
        let wide = &rendered["properties"]["wide"];
        assert_eq!(
            wide["minimum"],
            serde_json::json!(-18_446_744_073_709_551_616.0_f64)
        );
        assert_eq!(
            wide["maximum"],
            serde_json::json!(18_446_744_073_709_551_616.0_f64)
        );
        let long = &rendered["properties"]["long"];
        assert_eq!(long["minimum"], serde_json::json!(i64::MIN));
        assert_eq!(long["maximum"], serde_json::json!(u64::MAX));
    }

    #[test]
    fn empty_descriptions_are_not_emitted() {
        let schema =
            Schema::object(Object::new().property("a", Schema::string().describe("  "), true));
        let rendered = parameters(&schema, Dialect::JsonSchema, false);
        assert!(rendered["properties"]["a"].get("description").is_none());
    }
}
