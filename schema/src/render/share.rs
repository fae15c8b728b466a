//! One definition for a message used in several places.
//!
//! Where a dialect takes `$ref`, a message whose rendered subtree occurs more
//! than once in one tool's parameters is spelled out once in the root's
//! `$defs` and referred to at each use, whenever that makes the rendering
//! shorter.
//!
//! This runs on the rendered JSON rather than on the IR, so that only
//! subtrees that render identically are shared: a message cut by OpenAI's
//! depth limit in one place, or whose references were cut inside an
//! Anthropic strict definition, stays inline where it differs. A `$ref` to an
//! identical copy accepts exactly the arguments the copy did, and leaves the
//! nesting a validator counts as it was.

use std::collections::HashMap;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::def_pointer;
use crate::nested::{each_nested_mut, holds_definitions};

/// The key under which the renderer notes, on an object rendered from a
/// named IR object, that name. [`share_repeated_objects`] removes every one
/// of them. No schema keyword starts with NUL, and nothing here reads a
/// `properties` map's keys, so a property of that name could not be
/// mistaken for it.
pub(super) const NAME_KEY: &str = "\u{0}name";

/// What one round found of one message rendered one way.
struct Uses {
    /// How many times the subtree occurs.
    count: usize,
    /// How many of those carry a `description` of their own (it stays at
    /// the use, beside the reference).
    described: usize,
}

/// Replaces each named object whose subtree is repeated by a `$ref` into the
/// root's `$defs`, largest saving first, until no replacement makes the
/// rendering shorter; then removes the name notes. `ref_siblings`: a `$ref`
/// may carry a `description` (else a described reference is wrapped in a
/// one-branch `anyOf`, as the renderer does).
pub(super) fn share_repeated_objects(root: &mut Value, ref_siblings: bool) {
    while let Some((name, body_text)) = best_to_share(root, ref_siblings) {
        let mut definition = None;
        visit_below(root, &mut |node| {
            let Value::Object(map) = node else {
                return true;
            };
            if map.get(NAME_KEY).and_then(Value::as_str) != Some(name.as_str())
                || text_without_description(map) != body_text
            {
                return true;
            }
            let description = map.shift_remove("description");
            let mut reference = Map::new();
            reference.insert("$ref".into(), def_pointer(&name).into());
            let mut replacement = Map::new();
            if let Some(description) = description {
                replacement.insert("description".into(), description);
                if ref_siblings {
                    replacement.extend(reference);
                } else {
                    replacement.insert("anyOf".into(), Value::Array(vec![reference.into()]));
                }
            } else {
                replacement = reference;
            }
            let body = std::mem::replace(map, replacement);
            definition.get_or_insert(Value::Object(body));
            false
        });
        let (Some(definition), Value::Object(root)) = (definition, &mut *root) else {
            break;
        };
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            defs.insert(name, definition);
        }
    }
    if let Value::Object(root) = root
        && let Some(Value::Object(defs)) = root.get_mut("$defs")
    {
        // Definitions sorted by name, as the renderer emits them.
        defs.sort_keys();
    }
    remove_name_notes(root);
}

/// The named subtree whose sharing saves the most bytes, if any saves.
fn best_to_share(root: &mut Value, ref_siblings: bool) -> Option<(String, String)> {
    // Most tools use each message once: count names first, and write out
    // only the subtrees whose name is met again.
    let mut seen: HashMap<String, usize> = HashMap::new();
    visit_below(root, &mut |node| {
        if let Some(Value::String(name)) = node.get(NAME_KEY) {
            match seen.get_mut(name.as_str()) {
                Some(count) => *count += 1,
                None => {
                    seen.insert(name.clone(), 1);
                }
            }
        }
        true
    });
    seen.retain(|_, count| *count > 1);
    if seen.is_empty() {
        return None;
    }
    let mut found: HashMap<(String, String), Uses> = HashMap::new();
    visit_below(root, &mut |node| {
        if let Value::Object(map) = node
            && let Some(Value::String(name)) = map.get(NAME_KEY)
            && seen.contains_key(name.as_str())
        {
            let uses = found
                .entry((name.clone(), text_without_description(map)))
                .or_insert(Uses {
                    count: 0,
                    described: 0,
                });
            uses.count += 1;
            uses.described += usize::from(map.contains_key("description"));
        }
        true
    });
    let taken = match root.get("$defs") {
        Some(Value::Object(defs)) => Some(defs),
        _ => None,
    };
    found
        .into_iter()
        .filter(|((name, _), uses)| {
            uses.count > 1 && !taken.is_some_and(|defs| defs.contains_key(name))
        })
        .filter_map(|(key, uses)| {
            let saving = saving(&key.0, key.1.len(), &uses, ref_siblings, taken.is_some());
            (saving > 0).then_some((saving, key))
        })
        // Ties broken by name, then text, so the rendering is deterministic.
        .max_by(|(a, a_key), (b, b_key)| a.cmp(b).then_with(|| b_key.cmp(a_key)))
        .map(|(_, key)| key)
}

/// Bytes saved by sharing a subtree of `body_len` bytes used as `uses` says:
/// every copy less one reference each, less the definition entry.
fn saving(name: &str, body_len: usize, uses: &Uses, ref_siblings: bool, has_defs: bool) -> i64 {
    let reference = r#"{"$ref":""}"#.len() + def_pointer(name).len();
    let wrap = if ref_siblings {
        0
    } else {
        r#""anyOf":[]"#.len()
    };
    let entry = body_len + name.len() + r#""":,"#.len();
    let defs_key = if has_defs { 0 } else { r#","$defs":{}"#.len() };
    let before = uses.count * body_len;
    let after = uses.count * reference + uses.described * wrap + entry + defs_key;
    i64::try_from(before).unwrap_or(i64::MAX) - i64::try_from(after).unwrap_or(i64::MAX)
}

/// Calls `f` on each schema nested in `node` (not on `node`, nor on the
/// definitions in its `$defs`, only inside them), outermost first; `f`
/// returns whether to go into the node it was given.
fn visit_below(node: &mut Value, f: &mut impl FnMut(&mut Value) -> bool) {
    let Value::Object(map) = node else {
        return;
    };
    each_nested_mut(map, |keyword, child| {
        if holds_definitions(keyword) {
            visit_below(child, f);
        } else {
            visit(child, f);
        }
    });
}

fn visit(node: &mut Value, f: &mut impl FnMut(&mut Value) -> bool) {
    if f(node) {
        visit_below(node, f);
    }
}

fn remove_name_notes(root: &mut Value) {
    let mut remove = |node: &mut Value| {
        if let Value::Object(map) = node {
            map.shift_remove(NAME_KEY);
        }
        true
    };
    remove(root);
    if let Value::Object(map) = root
        && let Some(Value::Object(definitions)) = map.get_mut("$defs")
    {
        definitions.values_mut().for_each(|d| {
            remove(d);
        });
    }
    visit_below(root, &mut remove);
}

/// A subtree as minified JSON, leaving out its own `description` (which
/// stays at each use) and every name note.
fn text_without_description(map: &Map<String, Value>) -> String {
    // Serialising a `Value` cannot fail: its keys are strings.
    serde_json::to_string(&Body { map, top: true }).unwrap_or_default()
}

struct Body<'a> {
    map: &'a Map<String, Value>,
    top: bool,
}

struct Nested<'a>(&'a Value);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        for (key, value) in self.map {
            if key == NAME_KEY || (self.top && key == "description") {
                continue;
            }
            out.serialize_entry(key, &Nested(value))?;
        }
        out.end()
    }
}

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => Body { map, top: false }.serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(Nested)),
            other => other.serialize(serializer),
        }
    }
}
