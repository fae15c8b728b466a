//! The messages a request reaches through its fields, and which of them can
//! reach themselves (those are defined once and referred to).

use std::collections::{HashMap, HashSet};

use prost_reflect::{Kind as PKind, MessageDescriptor};

use super::annotations::Annotations;
use super::well_known::well_known;

/// Every message reachable from `root` through fields (map values included),
/// `root` first, then depth-first in field order. Iterative: a proto may
/// chain messages deeper than a thread's stack.
pub(super) fn reachable(
    root: &MessageDescriptor,
    visited: &mut HashSet<String>,
    out: &mut Vec<MessageDescriptor>,
) {
    let mut pending = vec![root.clone()];
    while let Some(message) = pending.pop() {
        if !visited.insert(message.full_name().to_owned()) {
            continue;
        }
        // Reversed, so that the first field's message is visited next.
        let fields: Vec<MessageDescriptor> = message
            .fields()
            .filter_map(|field| match field.kind() {
                PKind::Message(m) => Some(m),
                _ => None,
            })
            .collect();
        pending.extend(fields.into_iter().rev());
        out.push(message);
    }
}

/// Edges of the schema graph: the messages `m`'s schema fields spell out
/// (map values included, well-known types not), one per field that has one.
pub(super) fn children(ann: &Annotations, m: &MessageDescriptor) -> Vec<MessageDescriptor> {
    let mut out = Vec::new();
    for (field, _) in ann.schema_fields(m) {
        if let PKind::Message(child) = field.kind() {
            if child.is_map_entry() {
                if let PKind::Message(v) = child.map_entry_value_field().kind() {
                    out.push(v);
                }
            } else {
                out.push(child);
            }
        }
    }
    out.retain(|m| well_known(m).is_none());
    out
}

/// Messages reachable from `root` (through fields in the schema) that can reach
/// themselves.
pub(super) fn recursive_messages(ann: &Annotations, root: &MessageDescriptor) -> HashSet<String> {
    // The schema graph from `root`, messages numbered in the order found.
    let mut messages = vec![root.clone()];
    let mut number = HashMap::from([(root.full_name().to_owned(), 0usize)]);
    let mut edges: Vec<Vec<usize>> = Vec::new();
    while edges.len() < messages.len() {
        let from = children(ann, &messages[edges.len()]);
        let mut to = Vec::with_capacity(from.len());
        for child in from {
            let next = messages.len();
            let n = *number.entry(child.full_name().to_owned()).or_insert(next);
            if n == next {
                messages.push(child);
            }
            to.push(n);
        }
        edges.push(to);
    }
    // A message can reach itself when its strongly connected component has
    // more than one message, or it uses itself. Tarjan's algorithm, with an
    // explicit stack (a chain of messages may be deeper than a thread's
    // stack) and in linear time (a long chain must not cost its square).
    let n = messages.len();
    let (mut order, mut low) = (vec![usize::MAX; n], vec![0usize; n]);
    let (mut on_stack, mut stack) = (vec![false; n], Vec::new());
    let mut found = 0usize;
    let mut recursive = HashSet::new();
    for start in 0..n {
        if order[start] != usize::MAX {
            continue;
        }
        // Each frame: a message and how many of its edges are followed.
        let mut frames = vec![(start, 0usize)];
        order[start] = found;
        low[start] = found;
        found += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&(v, followed)) = frames.last() {
            if let Some(&w) = edges[v].get(followed) {
                if let Some(frame) = frames.last_mut() {
                    frame.1 += 1;
                }
                if order[w] == usize::MAX {
                    order[w] = found;
                    low[w] = found;
                    found += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 || edges[v].contains(&v) {
                    recursive.extend(
                        component
                            .into_iter()
                            .map(|w| messages[w].full_name().to_owned()),
                    );
                }
            }
        }
    }
    recursive
}
