//! The inbound half of every tool call, generated or hand-written: the
//! model's arguments, parsed within bounds, unshaped along the IR that
//! rendered the schema ([`proto_ai_tools_schema::inbound`] holds those rules), and
//! their aliases resolved in the conversation. What comes out is ready to
//! decode: protojson for a request message, serde's form for a native input.

use std::fmt::Write as _;
use std::sync::{Arc, LazyLock};

use prost_reflect::{DescriptorPool, MessageDescriptor};
use proto_ai_tools_schema::inbound::{self, AliasSlot, Limits, shorten};
use proto_ai_tools_schema::ir::Schema;
use serde_json::Value;

use crate::alias::{AliasError, AliasManager, Resolution};
use crate::memo::Memo;
use crate::store::StoreError;

/// A tool call's arguments as the model sent them: JSON text, or a value a
/// host parsed already (an MCP server, a typed per-tool method). Every
/// `execute` takes either, through `From`; both are held to the same bounds.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::executor::Arguments;
/// let text: Arguments = r#"{"query":"x"}"#.into();
/// let value: Arguments = serde_json::json!({"query": "x"}).into();
/// assert!(matches!((text, value), (Arguments::Text(_), Arguments::Value(_))));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments<'a> {
    /// JSON text (empty means `{}`).
    Text(&'a str),
    /// An already-parsed value.
    Value(Value),
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&&'a str> for Arguments<'a> {
    fn from(text: &&'a str) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&'a std::borrow::Cow<'_, str>> for Arguments<'a> {
    fn from(text: &'a std::borrow::Cow<'_, str>) -> Self {
        Arguments::Text(text)
    }
}

impl From<Value> for Arguments<'_> {
    fn from(value: Value) -> Self {
        Arguments::Value(value)
    }
}

/// Why the arguments cannot be used.
pub(crate) enum Refusal {
    /// The model's arguments are wrong; the sentence says how.
    Arguments(String),
    /// The alias store could not be asked: nothing ran.
    Store(StoreError),
}

/// How the aliases of alias-carrying strings are resolved.
pub(crate) struct Resolve<'a> {
    pub(crate) aliases: &'a AliasManager,
    /// Pass a raw UUID the conversation never saw instead of refusing it.
    pub(crate) pass_unknown_uuids: bool,
}

/// Parses, unshapes and resolves the arguments of one call.
pub(crate) async fn prepare(
    schema: &Schema,
    args: Arguments<'_>,
    limits: &Limits,
    resolve: Resolve<'_>,
) -> Result<Value, Refusal> {
    let mut value = match args {
        Arguments::Text(text) => inbound::parse(text, limits).map_err(Refusal::Arguments)?,
        Arguments::Value(value) => {
            inbound::check_shape(&value, limits, limits.max_depth, "")
                .map_err(Refusal::Arguments)?;
            value
        }
    };
    let slots = inbound::unshape(schema, &mut value, limits)
        .map_err(|problems| Refusal::Arguments(problems.join("; ")))?;
    resolve_aliases(&mut value, &slots, resolve).await?;
    Ok(value)
}

/// Replaces each alias in `slots` by its UUID, checking the prefix. With a
/// shared conversation the store is asked once for all of them first (and,
/// when some are refused, for the valid aliases).
async fn resolve_aliases(
    value: &mut Value,
    slots: &[AliasSlot],
    resolve: Resolve<'_>,
) -> Result<(), Refusal> {
    if slots.is_empty() {
        return Ok(());
    }
    let aliases = resolve.aliases;
    // Without a store there is nothing to ask: `fetch` returns at once,
    // without reading the slots.
    let sent = slots
        .iter()
        .filter_map(|slot| value.pointer(&slot.pointer).and_then(Value::as_str));
    aliases.fetch(sent).await.map_err(|e| match e {
        AliasError::Store(e) => Refusal::Store(e),
        other => Refusal::Arguments(other.to_string()),
    })?;
    let mut refused = Vec::new();
    for slot in slots {
        let Some(Value::String(s)) = value.pointer_mut(&slot.pointer) else {
            continue;
        };
        match aliases.resolve_for_field(&slot.prefix, s) {
            Resolution::Uuid(uuid) => *s = uuid,
            Resolution::Empty => {}
            Resolution::UnknownUuid(uuid) if resolve.pass_unknown_uuids => *s = uuid,
            why => refused.push((slot, s.clone(), why)),
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    let mut valid: Vec<(&str, Vec<String>)> = Vec::new();
    let mut problems = Vec::new();
    for (slot, sent, why) in &refused {
        let prefix = slot.prefix.as_str();
        if !valid.iter().any(|(p, _)| *p == prefix) {
            // The store knows what other replicas gave out; when it is down,
            // the local copy is the best there is.
            let list = match aliases.list(prefix).await {
                Ok(list) => list,
                Err(_) => aliases.aliases_of(prefix),
            };
            valid.push((prefix, list));
        }
        let list = valid
            .iter()
            .find(|(p, _)| *p == prefix)
            .map(|(_, l)| l.as_slice())
            .unwrap_or_default();
        problems.push(alias_problem(&slot.path, prefix, sent, why, list));
    }
    Err(Refusal::Arguments(problems.join("; ")))
}

/// The sentence the model reads when an alias-carrying field gets a value
/// the conversation cannot resolve; `valid` are the aliases of `prefix`.
fn alias_problem(
    field: &str,
    prefix: &str,
    value: &str,
    why: &Resolution,
    valid: &[String],
) -> String {
    let value = shorten(value);
    // `an item id`, `a link id`
    let a = proto_ai_tools_schema::names::article(prefix);
    let mut text = match why {
        Resolution::WrongPrefix { actual } => {
            let an = proto_ai_tools_schema::names::article(actual);
            format!("`{field}` takes {a} {prefix} id, but `{value}` is {an} {actual} id")
        }
        Resolution::UnknownUuid(_) => {
            format!(
                "`{field}` got the raw UUID `{value}`, which this conversation has never seen as {a} {prefix} id"
            )
        }
        Resolution::Expired => {
            // Not invented: given out earlier and no longer held. Asking
            // for the id again is the way on, not "never invent one".
            let mut text = format!(
                "`{field}` got `{value}`, {a} {prefix} id that has expired (it went unused for a while, or was among the oldest when too many were held): get it again by calling a tool that lists or returns {prefix} ids, and pass the id that call returns"
            );
            if !valid.is_empty() {
                let _ = write!(text, "; the {prefix} ids held now are: ");
                push_list(&mut text, valid);
            }
            return text;
        }
        Resolution::Lost => {
            // Not invented and not expired: the alias store lost it in a
            // failure, and the number is never given out again.
            let mut text = format!(
                "`{field}` got `{value}`, {a} {prefix} id this conversation was given but has lost (the alias store failed and lost it; it will never name another object): get it again by calling a tool that lists or returns {prefix} ids, and pass the id that call returns"
            );
            if !valid.is_empty() {
                let _ = write!(text, "; the {prefix} ids held now are: ");
                push_list(&mut text, valid);
            }
            return text;
        }
        _ => format!(
            "`{field}` got `{value}`, which is not {a} {prefix} id this conversation has seen"
        ),
    };
    if valid.is_empty() {
        let _ = write!(
            text,
            "; no {prefix} ids are known yet: call a tool that returns {prefix} ids first, and never invent one"
        );
    } else {
        text.push_str("; use one of: ");
        push_list(&mut text, valid);
    }
    text
}

/// The first aliases of `valid`, and how many more there are.
fn push_list(text: &mut String, valid: &[String]) {
    const SHOWN: usize = 20;
    let shown: Vec<&str> = valid.iter().take(SHOWN).map(String::as_str).collect();
    text.push_str(&shown.join(", "));
    if valid.len() > SHOWN {
        let _ = write!(text, " (and {} more)", valid.len() - SHOWN);
    }
}

/// The request schema of a generated tool: built once per pool and message
/// from the embedded descriptors (which keep the annotations, so the same
/// rules build the same IR the macro rendered), then shared.
pub(crate) fn request_schema(
    pool: &'static DescriptorPool,
    message: &MessageDescriptor,
) -> Arc<Schema> {
    static SCHEMAS: LazyLock<Memo<(usize, String), Schema>> = LazyLock::new(Memo::new);
    let key = (
        std::ptr::from_ref(pool) as usize,
        message.full_name().to_owned(),
    );
    SCHEMAS.get_or(key, || {
        proto_ai_tools_schema::proto::message_schema(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefix that starts with a vowel sound takes `an`: `an item id`,
    /// `an order id`; others `a`: `a user id`.
    #[test]
    fn an_alias_problem_says_an_item_id() {
        let wrong = Resolution::WrongPrefix {
            actual: "order".to_owned(),
        };
        assert_eq!(
            alias_problem("item_id", "item", "order-3", &wrong, &[]),
            "`item_id` takes an item id, but `order-3` is an order id; no item ids are known yet: call a tool that returns item ids first, and never invent one"
        );
        let unknown = Resolution::UnknownAlias;
        let valid = ["user-1".to_owned()];
        let text = alias_problem("owner", "user", "user-9", &unknown, &valid);
        assert!(
            text.starts_with(
                "`owner` got `user-9`, which is not a user id this conversation has seen"
            ),
            "{text}"
        );
        for why in [
            Resolution::UnknownUuid("d290f1ee-6c54-4b01-90e6-d701748f0851".to_owned()),
            Resolution::Expired,
            Resolution::Lost,
            Resolution::UnknownAlias,
        ] {
            let text = alias_problem("item_id", "item", "item-7", &why, &[]);
            assert!(
                text.contains("an item id") && !text.contains("a item"),
                "{text}"
            );
        }
    }
}
