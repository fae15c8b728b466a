//! A person's consent before a tool runs.
//!
//! Each tool has a policy ([`ConsentPolicy`]): `allow` runs it, `block`
//! never does (the call is refused with a sentence and the service is not
//! called), `confirm` asks a person first. The tool's own word
//! (`rpc_tool.consent`, or an overlay's `consent`) wins; a tool that says
//! nothing follows the class of tools its server or toolkit confirms
//! ([`ConfirmClass`]: the destructive ones, every one that may change
//! something, or none).
//!
//! Who is asked: an MCP server asks the user through the host
//! (elicitation), where the client can; a [`Toolkit`](crate::Toolkit) asks
//! its [`Consent`] hook, for programs that are not MCP servers (an agent on
//! a terminal). Where no one can be asked, the operator's choice
//! ([`Unsupported`]) refuses the call (the default) or lets it run. An
//! argument the model sets never counts as consent: the arguments are not
//! read for it.
//!
//! Each decision is one INFO event, message `consent` (target
//! `proto_ai_tools::consent`, which the CLI's default log filter keeps),
//! with the fields `tool`, `outcome` (`accepted`, `declined`, `cancelled`,
//! `unsupported`, `refused-by-policy`, `allowed-by-policy`, or
//! `unapproved`: a stateless client's approval that was not for this call)
//! and `service_called`; never the arguments' values.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use proto_ai_tools_schema::ConsentPolicy;
use proto_ai_tools_schema::ToolHints;
use serde_json::Value;

/// Which tools a person must approve when the tool itself says nothing
/// (`--confirm`).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::consent::ConfirmClass;
/// assert_eq!("writes".parse::<ConfirmClass>(), Ok(ConfirmClass::Writes));
/// assert_eq!(ConfirmClass::Destructive.as_str(), "destructive");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConfirmClass {
    /// The tools marked destructive (`rpc_tool.destructive`, an overlay's
    /// `destructive`, a `delete` HTTP binding): MCP's `destructiveHint`.
    #[default]
    Destructive,
    /// Every tool that is not read-only.
    Writes,
    /// None: only the tools whose own policy says `confirm`.
    None,
}

impl ConfirmClass {
    /// `destructive`, `writes` or `none`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConfirmClass::Destructive => "destructive",
            ConfirmClass::Writes => "writes",
            ConfirmClass::None => "none",
        }
    }

    /// Whether the class holds a tool of these hints.
    pub fn holds(self, hints: ToolHints) -> bool {
        match self {
            ConfirmClass::Destructive => hints.destructive == Some(true),
            ConfirmClass::Writes => !hints.read_only,
            ConfirmClass::None => false,
        }
    }
}

impl std::str::FromStr for ConfirmClass {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "destructive" => Ok(ConfirmClass::Destructive),
            "writes" => Ok(ConfirmClass::Writes),
            "none" => Ok(ConfirmClass::None),
            _ => Err(format!(
                "unknown class `{s}`: use `destructive` (the tools marked destructive), `writes` (every tool that is not read-only) or `none`"
            )),
        }
    }
}

/// What happens to a call that needs a person's consent where no one can
/// be asked: an MCP client without elicitation, a toolkit without a
/// [`Consent`] hook (`--confirm-unsupported`).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::consent::Unsupported;
/// assert_eq!(Unsupported::default(), Unsupported::Refuse);
/// assert_eq!("allow".parse::<Unsupported>(), Ok(Unsupported::Allow));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Unsupported {
    /// Refuse the call with a sentence saying that a person must approve
    /// it in a client that can ask.
    #[default]
    Refuse,
    /// Run it unasked.
    Allow,
}

impl std::str::FromStr for Unsupported {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "refuse" => Ok(Unsupported::Refuse),
            "allow" => Ok(Unsupported::Allow),
            _ => Err(format!(
                "unknown choice `{s}`: use `refuse` (a person must approve in a client that can ask) or `allow` (run it unasked)"
            )),
        }
    }
}

/// The policy of a tool: its own (`explicit`) when it has one, else
/// `confirm` when `class` holds it, else `allow`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::consent::{ConfirmClass, ConsentPolicy, policy};
/// use proto_ai_tools::schema::ToolHints;
/// let delete = ToolHints { read_only: false, idempotent: true, destructive: Some(true) };
/// assert_eq!(policy(None, delete, ConfirmClass::Destructive), ConsentPolicy::Confirm);
/// assert_eq!(policy(None, delete, ConfirmClass::None), ConsentPolicy::Allow);
/// assert_eq!(policy(Some(ConsentPolicy::Allow), delete, ConfirmClass::Writes), ConsentPolicy::Allow);
/// assert_eq!(policy(Some(ConsentPolicy::Block), ToolHints::default(), ConfirmClass::None), ConsentPolicy::Block);
/// ```
pub fn policy(
    explicit: Option<ConsentPolicy>,
    hints: ToolHints,
    class: ConfirmClass,
) -> ConsentPolicy {
    match explicit {
        Some(policy) => policy,
        None if class.holds(hints) => ConsentPolicy::Confirm,
        None => ConsentPolicy::Allow,
    }
}

/// What a person is asked to approve: the tool and the call's arguments as
/// the model wrote them (aliases such as `step-1`, not the ids behind
/// them).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConsentRequest {
    /// The tool's name.
    pub tool: String,
    /// The tool's title, when it has one.
    pub title: Option<String>,
    /// The arguments as the model wrote them.
    pub arguments: Value,
}

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentAnswer {
    /// Run it.
    Accept,
    /// Do not run it.
    Decline,
    /// The question was dismissed without an answer: do not run it.
    Cancel,
}

/// The future of a [`Consent`] answer.
pub type ConsentFuture = Pin<Box<dyn Future<Output = ConsentAnswer> + Send>>;

/// Asks a person whether a call may run: the hook of a
/// [`Toolkit`](crate::Toolkit) ([`ToolkitBuilder::consent`](crate::toolkit::ToolkitBuilder::consent)).
/// Any `Fn(ConsentRequest) -> impl Future<Output = ConsentAnswer>` is one.
pub trait Consent: Send + Sync + 'static {
    /// The person's answer to `request`.
    fn ask(&self, request: ConsentRequest) -> ConsentFuture;
}

impl<F, Fut> Consent for F
where
    F: Fn(ConsentRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ConsentAnswer> + Send + 'static,
{
    fn ask(&self, request: ConsentRequest) -> ConsentFuture {
        Box::pin(self(request))
    }
}

/// A shared [`Consent`] hook.
pub(crate) type Hook = Arc<dyn Consent>;

/// How a consent decision came out, as the audit event writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Outcome {
    Accepted,
    Declined,
    Cancelled,
    Unsupported,
    RefusedByPolicy,
    AllowedByPolicy,
    /// A stateless client sent back an approval that does not count
    /// (another call's, expired, or used already).
    Unapproved,
}

impl Outcome {
    #[doc(hidden)]
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Declined => "declined",
            Outcome::Cancelled => "cancelled",
            Outcome::Unsupported => "unsupported",
            Outcome::RefusedByPolicy => "refused-by-policy",
            Outcome::AllowedByPolicy => "allowed-by-policy",
            Outcome::Unapproved => "unapproved",
        }
    }
}

/// The one audit event of a decision: never the arguments.
#[doc(hidden)]
pub fn audit(tool: &str, outcome: Outcome, service_called: bool) {
    tracing::info!(tool, outcome = outcome.as_str(), service_called, "consent");
}

/// What the model reads when `tool` is blocked.
pub(crate) fn blocked(tool: &str) -> String {
    format!(
        "`{tool}` is blocked by this server's policy: it never runs, and the service was not called. \
         Tell the user that it cannot be done from here."
    )
}

/// What the model reads when the person declined.
pub(crate) fn declined(tool: &str) -> String {
    format!(
        "The user declined this call of `{tool}`: it did not run, and the service was not called. \
         Do not call it again unless the user asks for it."
    )
}

/// What the model reads when the person dismissed the question.
#[doc(hidden)]
pub fn cancelled(tool: &str) -> String {
    format!(
        "The user dismissed the request to approve this call of `{tool}` without answering: it did not run, \
         and the service was not called. Ask the user whether they want it before trying again."
    )
}

/// What the model reads when no one could be asked: `why` says why not.
pub(crate) fn unsupported(tool: &str, why: &str) -> String {
    format!(
        "`{tool}` needs a person's approval before it runs, and {why}: it did not run, and the service was not called. \
         A person must approve the call in a client that can ask for approval (MCP elicitation); \
         no argument can stand in for that approval."
    )
}

/// What the model reads when an approval sent back does not count: `why`.
#[doc(hidden)]
pub fn unapproved(tool: &str, why: &str) -> String {
    format!(
        "`{tool}` did not run, and the service was not called: {why}. \
         Call it again, without an approval, for the user to be asked about this call."
    )
}

/// The sentence and outcome of an answer that is not an acceptance.
pub(crate) fn refusal(tool: &str, answer: ConsentAnswer) -> Option<(String, Outcome)> {
    match answer {
        ConsentAnswer::Accept => None,
        ConsentAnswer::Decline => Some((declined(tool), Outcome::Declined)),
        ConsentAnswer::Cancel => Some((cancelled(tool), Outcome::Cancelled)),
    }
}

/// Who can be asked about one call: a person (the future of their answer,
/// made only when the call needs it), or no one, and why not.
#[doc(hidden)]
pub type Asker<F> = Result<F, &'static str>;

/// What [`decide`] decided about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct Decided {
    /// `None` runs the call; else the sentence the model reads.
    pub refusal: Option<String>,
    /// The outcome audited; `None` when the call needed no decision.
    pub outcome: Option<Outcome>,
}

/// The decision on one call of `tool` (its own policy `explicit`, its
/// `hints`), under the `class` confirmed and the `unsupported` choice.
/// `ask` is called only for a `confirm` tool. Audited, once.
#[allow(clippy::too_many_arguments)]
#[doc(hidden)]
pub async fn decide<F>(
    tool: &str,
    explicit: Option<ConsentPolicy>,
    hints: ToolHints,
    class: ConfirmClass,
    unsupported_choice: Unsupported,
    ask: impl FnOnce() -> Asker<F>,
) -> Decided
where
    F: Future<Output = ConsentAnswer>,
{
    let (refusal, outcome, service_called) = match policy(explicit, hints, class) {
        ConsentPolicy::Allow => {
            if explicit == Some(ConsentPolicy::Allow) && class.holds(hints) {
                (None, Outcome::AllowedByPolicy, true)
            } else {
                return Decided {
                    refusal: None,
                    outcome: None,
                };
            }
        }
        ConsentPolicy::Block => (Some(blocked(tool)), Outcome::RefusedByPolicy, false),
        ConsentPolicy::Confirm => match ask() {
            Ok(answer) => match refusal(tool, answer.await) {
                None => (None, Outcome::Accepted, true),
                Some((sentence, outcome)) => (Some(sentence), outcome, false),
            },
            Err(why) => match unsupported_choice {
                Unsupported::Refuse => (Some(unsupported(tool, why)), Outcome::Unsupported, false),
                Unsupported::Allow => (None, Outcome::Unsupported, true),
            },
        },
    };
    audit(tool, outcome, service_called);
    Decided {
        refusal,
        outcome: Some(outcome),
    }
}
