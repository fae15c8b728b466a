//! The bounds on a request's schema, measured before it is built: how many
//! fields it spells out and how deep it nests messages.

use std::collections::{HashMap, HashSet};

use prost_reflect::MessageDescriptor;

use super::annotations::Annotations;
use super::graph::children;

/// The most fields one tool's request schema may spell out, counting each
/// message at each use (see [`tools_in_file`](crate::tools_in_file)'s errors).
///
/// Far above what a model can use (OpenAI's strict mode takes 5,000
/// properties), and a bound on the work of reading a proto whose messages
/// each use the next twice: without it, 40 such levels would build 2^40
/// objects rather than end with an error.
pub const MAX_SPELLED_OUT_FIELDS: usize = 100_000;

pub use crate::ir::MAX_NESTING_DEPTH;

/// A chain of messages nested in `root`'s schema that is longer than
/// [`MAX_NESTING_DEPTH`], outermost first, if there is one: from `root` or
/// from a `recursive` message's definition, each through messages that are
/// not recursive (a recursive one is a reference). It recurses at most
/// [`MAX_NESTING_DEPTH`] + 1 deep, however deep the proto goes.
pub(super) fn too_deep_chain(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> Option<Vec<String>> {
    /// For each message measured: how many messages deep it nests (itself
    /// included) and the child on its deepest chain. Without recursive
    /// messages the graph has no cycle, so this holds at every use.
    type Known = HashMap<String, (usize, Option<String>)>;
    /// Measures `m` below the chain `path`; `Err` once the chain is past the
    /// bound, with `path` holding it up to the message where that was seen.
    fn measure(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        known: &mut Known,
        path: &mut Vec<String>,
    ) -> Result<usize, ()> {
        if let Some(&(depth, _)) = known.get(m.full_name()) {
            if path.len() + depth > MAX_NESTING_DEPTH {
                path.push(m.full_name().to_owned());
                return Err(());
            }
            return Ok(depth);
        }
        path.push(m.full_name().to_owned());
        if path.len() > MAX_NESTING_DEPTH {
            return Err(());
        }
        let mut deepest = (0, None);
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                let depth = measure(ann, &child, recursive, known, path)?;
                if depth > deepest.0 {
                    deepest = (depth, Some(child.full_name().to_owned()));
                }
            }
        }
        path.pop();
        known.insert(m.full_name().to_owned(), (deepest.0 + 1, deepest.1));
        Ok(deepest.0 + 1)
    }
    let pool = root.parent_pool();
    let mut known = Known::new();
    // Definitions in name order, so that the chain named is the same from
    // one build to the next.
    let mut definitions: Vec<&String> = recursive.iter().collect();
    definitions.sort();
    let starts = std::iter::once(root.clone()).chain(
        definitions
            .into_iter()
            .filter_map(|name| pool.get_message_by_name(name)),
    );
    for start in starts {
        // A definition starts a chain of its own: its uses are references.
        let mut path = vec![start.full_name().to_owned()];
        for child in children(ann, &start) {
            if !recursive.contains(child.full_name())
                && measure(ann, &child, recursive, &mut known, &mut path).is_err()
            {
                // Where a measured message completed the chain, follow its
                // deepest children to show the whole of it.
                while let Some((_, Some(next))) = path.last().and_then(|last| known.get(last)) {
                    path.push(next.clone());
                }
                return Some(path);
            }
        }
    }
    None
}

/// A chain of message names as `A` → `B` → …, its middle left out when long.
pub(super) fn chain_text(chain: &[String]) -> String {
    const ENDS: usize = 3;
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" → ")
    };
    if chain.len() <= 2 * ENDS + 1 {
        return quoted(chain);
    }
    format!(
        "{} → … {} more … → {}",
        quoted(&chain[..ENDS]),
        chain.len() - 2 * ENDS,
        quoted(&chain[chain.len() - ENDS..])
    )
}

/// How many fields the schema of `root` spells out, counted without building
/// it: each message at each use, a `recursive` one once in the definitions.
/// Linear in the messages reached (each is counted once and added at each
/// use); saturating.
pub(super) fn spelled_out_fields(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> usize {
    fn below(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        counted: &mut HashMap<String, usize>,
    ) -> usize {
        if let Some(&n) = counted.get(m.full_name()) {
            return n;
        }
        let mut n = ann.schema_fields(m).count();
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                n = n.saturating_add(below(ann, &child, recursive, counted));
            }
        }
        counted.insert(m.full_name().to_owned(), n);
        n
    }
    let mut counted = HashMap::new();
    let pool = root.parent_pool();
    let definitions = recursive
        .iter()
        .filter_map(|name| pool.get_message_by_name(name));
    definitions.fold(below(ann, root, recursive, &mut counted), |sum, def| {
        sum.saturating_add(below(ann, &def, recursive, &mut counted))
    })
}

/// The message of `root`'s schema spelled out most often, and how often
/// (saturating): what to name when [`spelled_out_fields`] is too many.
pub(super) fn most_used_message(
    ann: &Annotations,
    root: &MessageDescriptor,
    recursive: &HashSet<String>,
) -> (String, usize) {
    // Uses flow from a message to its children, so visit parents first:
    // the reverse of a depth-first post-order (recursive messages are
    // references, so what is left has no cycle).
    fn post_order(
        ann: &Annotations,
        m: &MessageDescriptor,
        recursive: &HashSet<String>,
        seen: &mut HashSet<String>,
        out: &mut Vec<MessageDescriptor>,
    ) {
        if !seen.insert(m.full_name().to_owned()) {
            return;
        }
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                post_order(ann, &child, recursive, seen, out);
            }
        }
        out.push(m.clone());
    }
    // The root and each definition are spelled out once of themselves.
    let pool = root.parent_pool();
    let starts: Vec<MessageDescriptor> = std::iter::once(root.clone())
        .chain(
            recursive
                .iter()
                .filter_map(|name| pool.get_message_by_name(name)),
        )
        .collect();
    let (mut order, mut seen) = (Vec::new(), HashSet::new());
    let mut uses: HashMap<String, usize> = HashMap::new();
    for start in &starts {
        post_order(ann, start, recursive, &mut seen, &mut order);
        *uses.entry(start.full_name().to_owned()).or_default() += 1;
    }
    for m in order.iter().rev() {
        let here = uses.get(m.full_name()).copied().unwrap_or(0);
        for child in children(ann, m) {
            if !recursive.contains(child.full_name()) {
                let entry = uses.entry(child.full_name().to_owned()).or_default();
                *entry = entry.saturating_add(here);
            }
        }
    }
    uses.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .unwrap_or_else(|| (root.full_name().to_owned(), 1))
}
