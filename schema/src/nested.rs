//! Where JSON Schema nests one schema in another: the one list of those
//! keywords.
//!
//! The checker, the strict-mode budget count and the sharing of repeated
//! subtrees each walk a schema tree. They walk it through [`each_nested`] and
//! [`each_nested_mut`], so a keyword added to [`NESTING_KEYWORDS`] is seen by
//! all three, and none can miss a sub-schema the others look into.

use serde_json::{Map, Value};

/// How a keyword's value holds the schemas nested under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// One schema; `true` and `false` are schemas too.
    One,
    /// One schema, or an array of them (`items` before draft 2020-12).
    OneOrList,
    /// An array of schemas.
    List,
    /// An object whose values are schemas, each under a name.
    Named,
}

/// Every keyword under which a schema nests others, in the drafts and
/// dialects this crate renders and checks.
const NESTING_KEYWORDS: [(&str, Holds); 11] = [
    ("properties", Holds::Named),
    ("items", Holds::OneOrList),
    ("additionalProperties", Holds::One),
    ("not", Holds::One),
    ("propertyNames", Holds::One),
    ("anyOf", Holds::List),
    ("oneOf", Holds::List),
    ("allOf", Holds::List),
    ("prefixItems", Holds::List),
    ("$defs", Holds::Named),
    ("definitions", Holds::Named),
];

fn holds(keyword: &str) -> Option<Holds> {
    NESTING_KEYWORDS
        .iter()
        .find(|(known, _)| *known == keyword)
        .map(|(_, holds)| *holds)
}

/// Where a nested schema sits under the keyword that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member<'v> {
    /// The keyword's value is the schema.
    Whole,
    /// At this index of the keyword's array.
    Index(usize),
    /// Under this name in the keyword's object (a property or definition).
    Name(&'v str),
}

/// Calls `f` on each schema nested directly in `node`, in document order,
/// with the keyword that holds it and where it sits under that keyword.
/// A value of the wrong shape for its keyword (an `anyOf` that is not an
/// array) holds no schema.
pub(crate) fn each_nested<'v>(
    node: &'v Map<String, Value>,
    mut f: impl FnMut(&'v str, Member<'v>, &'v Value),
) {
    for (keyword, value) in node {
        let Some(holds) = holds(keyword) else {
            continue;
        };
        match (holds, value) {
            (Holds::One | Holds::OneOrList, Value::Object(_) | Value::Bool(_)) => {
                f(keyword, Member::Whole, value);
            }
            (Holds::OneOrList | Holds::List, Value::Array(schemas)) => {
                for (i, schema) in schemas.iter().enumerate() {
                    f(keyword, Member::Index(i), schema);
                }
            }
            (Holds::Named, Value::Object(schemas)) => {
                for (name, schema) in schemas {
                    f(keyword, Member::Name(name), schema);
                }
            }
            _ => {}
        }
    }
}

/// [`each_nested`] for a tree being rewritten: calls `f` on each schema
/// nested directly in `node`, in document order, with the keyword that
/// holds it.
pub(crate) fn each_nested_mut(node: &mut Map<String, Value>, mut f: impl FnMut(&str, &mut Value)) {
    for (keyword, value) in node.iter_mut() {
        let Some(holds) = holds(keyword) else {
            continue;
        };
        match (holds, value) {
            (Holds::One | Holds::OneOrList, value @ (Value::Object(_) | Value::Bool(_))) => {
                f(keyword, value);
            }
            (Holds::OneOrList | Holds::List, Value::Array(schemas)) => {
                schemas.iter_mut().for_each(|schema| f(keyword, schema));
            }
            (Holds::Named, Value::Object(schemas)) => {
                schemas.values_mut().for_each(|schema| f(keyword, schema));
            }
            _ => {}
        }
    }
}

/// Whether `keyword` holds definitions, which are reached by `$ref` rather
/// than where they are written.
pub(crate) fn holds_definitions(keyword: &str) -> bool {
    matches!(keyword, "$defs" | "definitions")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested_of(node: &Value) -> Vec<(String, Member<'_>, String)> {
        let mut found = Vec::new();
        each_nested(node.as_object().unwrap(), |keyword, member, schema| {
            found.push((keyword.to_owned(), member, schema.to_string()));
        });
        found
    }

    #[test]
    fn every_shape_of_nesting_is_found_in_document_order() {
        let node = json!({
            "type": "object",
            "properties": { "a": { "type": "string" }, "b": true },
            "items": [{ "type": "integer" }, false],
            "additionalProperties": false,
            "not": { "type": "null" },
            "propertyNames": { "pattern": "^x" },
            "anyOf": [{ "type": "string" }],
            "oneOf": [{ "type": "number" }],
            "allOf": [{ "type": "boolean" }],
            "prefixItems": [{ "const": 1 }],
            "$defs": { "D": { "type": "object" } },
            "definitions": { "E": { "type": "array" } },
            "description": "not a schema",
            "enum": [{ "type": "string" }]
        });
        let found = nested_of(&node);
        let keywords: Vec<&str> = found.iter().map(|(k, ..)| k.as_str()).collect();
        assert_eq!(
            keywords,
            [
                "properties",
                "properties",
                "items",
                "items",
                "additionalProperties",
                "not",
                "propertyNames",
                "anyOf",
                "oneOf",
                "allOf",
                "prefixItems",
                "$defs",
                "definitions",
            ]
        );
        assert_eq!(found[1].1, Member::Name("b"));
        assert_eq!(found[1].2, "true");
        assert_eq!(found[3].1, Member::Index(1));
        assert_eq!(found[4].1, Member::Whole);
        assert_eq!(found[11].1, Member::Name("D"));
    }

    #[test]
    fn a_value_of_the_wrong_shape_holds_no_schema() {
        let node = json!({
            "items": 3,
            "not": [{ "type": "null" }],
            "anyOf": { "type": "string" },
            "properties": [{ "type": "string" }]
        });
        assert!(nested_of(&node).is_empty());
    }

    #[test]
    fn the_mutable_walk_meets_what_the_shared_one_does() {
        let mut node = json!({
            "properties": { "a": { "type": "string" } },
            "items": [{ "type": "integer" }, false],
            "anyOf": [{ "type": "string" }],
            "$defs": { "D": { "type": "object" } },
            "title": "t"
        });
        let shared: Vec<String> = nested_of(&node)
            .into_iter()
            .map(|(keyword, _, schema)| format!("{keyword} {schema}"))
            .collect();
        let mut met = Vec::new();
        each_nested_mut(node.as_object_mut().unwrap(), |keyword, schema| {
            met.push(format!("{keyword} {schema}"));
        });
        assert_eq!(met, shared);
    }
}
