//! Walks of a protobuf message that visit only the alias-carrying strings:
//! a plan per message type, worked out once from the field prefixes.

use std::collections::{HashMap, HashSet};

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value as ProtoValue,
};

/// One field that carries an alias prefix, scoped to its message so that two
/// messages' `id` fields can carry different prefixes.
///
/// Build one with [`FieldPrefix::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldPrefix {
    /// Fully qualified message name, e.g. `links.v1.Link`.
    pub message: &'static str,
    /// The field's proto name, e.g. `page_theme_id`.
    pub field: &'static str,
    /// The alias prefix, e.g. `theme`.
    pub prefix: &'static str,
}

impl FieldPrefix {
    /// The field `field` (its proto name) of the message `message` (fully
    /// qualified) carries aliases with prefix `prefix`.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::alias::FieldPrefix;
    /// const LINK_ID: FieldPrefix = FieldPrefix::new("links.v1.Link", "id", "link");
    /// assert_eq!((LINK_ID.message, LINK_ID.field, LINK_ID.prefix), ("links.v1.Link", "id", "link"));
    /// ```
    pub const fn new(message: &'static str, field: &'static str, prefix: &'static str) -> Self {
        FieldPrefix {
            message,
            field,
            prefix,
        }
    }
}

/// The recursion limit of the message walks; protobuf's own decoder stops at 100.
pub(crate) const MAX_WALK_DEPTH: usize = 100;

/// What to do with one field of a message type on a walk.
enum WalkStep {
    /// Its strings carry `prefixes[.1]`.
    Alias(FieldDescriptor, usize),
    /// A message (or list or map of messages) that leads to an alias-carrying field.
    Descend(FieldDescriptor),
}

/// The steps of a walk, by message type: only the fields worth visiting.
pub(crate) struct WalkPlan<'p> {
    prefixes: &'p [FieldPrefix],
    steps: HashMap<String, Vec<WalkStep>>,
}

impl<'p> WalkPlan<'p> {
    pub(crate) fn new(root: &MessageDescriptor, prefixes: &'p [FieldPrefix]) -> Self {
        // Every message type reachable from the root.
        let mut reachable: Vec<MessageDescriptor> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut stack = vec![root.clone()];
        while let Some(m) = stack.pop() {
            if !seen.insert(m.full_name().to_owned()) {
                continue;
            }
            for field in m.fields() {
                if let Some(child) = message_of(&field) {
                    stack.push(child);
                }
            }
            reachable.push(m);
        }
        // Those that hold an aliased field, then, to a fixpoint, those that
        // lead to one.
        let mut leads: HashSet<String> = reachable
            .iter()
            .filter(|m| prefixes.iter().any(|fp| fp.message == m.full_name()))
            .map(|m| m.full_name().to_owned())
            .collect();
        loop {
            let before = leads.len();
            for m in &reachable {
                if !leads.contains(m.full_name())
                    && m.fields()
                        .filter_map(|f| message_of(&f))
                        .any(|child| leads.contains(child.full_name()))
                {
                    leads.insert(m.full_name().to_owned());
                }
            }
            if leads.len() == before {
                break;
            }
        }
        let mut steps = HashMap::new();
        for m in reachable.iter().filter(|m| leads.contains(m.full_name())) {
            let list: Vec<WalkStep> = m
                .fields()
                .filter_map(|field| {
                    let aliased = prefixes
                        .iter()
                        .position(|fp| fp.message == m.full_name() && fp.field == field.name());
                    match aliased {
                        Some(i) => Some(WalkStep::Alias(field, i)),
                        None => message_of(&field)
                            .filter(|child| leads.contains(child.full_name()))
                            .map(|_| WalkStep::Descend(field)),
                    }
                })
                .collect();
            steps.insert(m.full_name().to_owned(), list);
        }
        WalkPlan { prefixes, steps }
    }

    pub(crate) fn walk(
        &self,
        message: &mut DynamicMessage,
        depth: usize,
        f: &mut dyn FnMut(&FieldPrefix, &mut String),
    ) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        let desc = message.descriptor();
        let Some(steps) = self.steps.get(desc.full_name()) else {
            return;
        };
        for step in steps {
            match step {
                WalkStep::Alias(field, i) => {
                    if !message.has_field(field) {
                        continue;
                    }
                    let fp = &self.prefixes[*i];
                    match message.get_field_mut(field) {
                        ProtoValue::String(s) => f(fp, s),
                        ProtoValue::List(items) => {
                            for item in items {
                                if let ProtoValue::String(s) = item {
                                    f(fp, s);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                WalkStep::Descend(field) => {
                    if !message.has_field(field) {
                        continue;
                    }
                    match message.get_field_mut(field) {
                        ProtoValue::Message(m) => self.walk(m, depth + 1, f),
                        ProtoValue::List(items) => {
                            for item in items {
                                if let ProtoValue::Message(m) = item {
                                    self.walk(m, depth + 1, f);
                                }
                            }
                        }
                        ProtoValue::Map(map) => {
                            // Map order is unspecified; walk by key so aliases are deterministic.
                            let mut entries: Vec<_> = map.iter_mut().collect();
                            entries.sort_by(|a, b| a.0.cmp(b.0));
                            for (_, v) in entries {
                                if let ProtoValue::Message(m) = v {
                                    self.walk(m, depth + 1, f);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The message type a field holds: its own, or a map's value type.
fn message_of(field: &FieldDescriptor) -> Option<MessageDescriptor> {
    match field.kind() {
        Kind::Message(m) if m.is_map_entry() => match m.map_entry_value_field().kind() {
            Kind::Message(value) => Some(value),
            _ => None,
        },
        Kind::Message(m) => Some(m),
        _ => None,
    }
}
