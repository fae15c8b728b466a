//! The consent check of a tool call in MCP ([`proto_ai_tools::consent`] decides):
//! the person asked through the host by form elicitation in a session, or,
//! for a stateless 2026-07-28 client, the question returned with a signed
//! state ([`super::super::approvals`]) and the call run when it comes back
//! approved.

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use serde_json::Value;

use super::Handler;
use proto_ai_tools::consent::{self, ConsentAnswer};

impl Handler {
    /// The consent of a call of `tool` with `args` ([`proto_ai_tools::consent`]):
    /// run it, refuse it with the sentence the model reads, or (a
    /// stateless client that can ask) return the question to the client.
    pub(super) async fn consent(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        args: &Value,
        scope: &str,
        returned: Returned,
        context: &RequestContext<RoleServer>,
    ) -> Gate {
        let settings = self.state.shared.consent;
        let confirm = consent::policy(tool.consent(), tool.hints(), settings.class)
            == consent::ConsentPolicy::Confirm;
        let stateless = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if confirm && stateless && client_elicits(context) {
            return self.consent_by_return(tool, args, scope, returned).await;
        }
        self.decided(tool, || self.asker(tool, args, context)).await
    }

    /// [`consent::decide`] for `tool` under the server's consent settings,
    /// with `ask` to put the question when its policy asks.
    async fn decided<F>(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        ask: impl FnOnce() -> consent::Asker<F>,
    ) -> Gate
    where
        F: std::future::Future<Output = ConsentAnswer>,
    {
        let settings = self.state.shared.consent;
        let decided = consent::decide(
            tool.name(),
            tool.consent(),
            tool.hints(),
            settings.class,
            settings.unsupported,
            ask,
        )
        .await;
        if let Some(outcome) = decided.outcome {
            noted(outcome);
        }
        decided.refusal.map_or(Gate::Run, Gate::Refuse)
    }

    /// A `confirm` tool's call by a stateless client that can ask
    /// ([`super::approvals`]): the first request gets the question back,
    /// with a signed state; the call again, with the state and the user's
    /// answer, runs when the state opens for this call, once, and the
    /// answer is an acceptance.
    async fn consent_by_return(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        args: &Value,
        scope: &str,
        returned: Returned,
    ) -> Gate {
        let approvals = &self.state.shared.approvals;
        let Some(state) = returned.state else {
            let message = consent_message(tool.name(), tool.title(), &tool.redacted(args));
            let minted = approvals.mint(tool.name(), args, scope);
            let (Ok(schema), Ok(state)) = (consent_form(), minted) else {
                consent::audit(tool.name(), consent::Outcome::Cancelled, false);
                noted(consent::Outcome::Cancelled);
                return Gate::Refuse(consent::cancelled(tool.name()));
            };
            // The person is asked; the call runs, if it does, when it
            // comes back approved (that request's event says how).
            super::super::audit::note(|notes| notes.consent = Some("asked"));
            let question = rmcp::model::ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            };
            let requests = rmcp::model::InputRequests::from([(
                CONSENT_INPUT.to_owned(),
                rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(question)),
            )]);
            return Gate::Ask(rmcp::model::InputRequiredResult::new(
                Some(requests),
                Some(state),
            ));
        };
        if let Err(unapproved) = approvals.redeem(&state, tool.name(), args, scope) {
            consent::audit(tool.name(), consent::Outcome::Unapproved, false);
            noted(consent::Outcome::Unapproved);
            return Gate::Refuse(consent::unapproved(tool.name(), unapproved.reason()));
        }
        let answer = returned
            .responses
            .as_ref()
            .and_then(|responses| responses.get(CONSENT_INPUT))
            .and_then(|answer| {
                serde_json::from_value::<rmcp::model::ElicitResult>(answer.clone()).ok()
            })
            .map_or(ConsentAnswer::Cancel, answer_of);
        self.decided(tool, || Ok(std::future::ready(answer))).await
    }

    /// Who can be asked about a call: the user through the host, when the
    /// client declared form elicitation in its handshake (a stateless
    /// request's client cannot be sent a request); else why not.
    fn asker<'a>(
        &'a self,
        tool: &proto_ai_tools::toolkit::Tool,
        args: &Value,
        context: &'a RequestContext<RoleServer>,
    ) -> consent::Asker<impl std::future::Future<Output = ConsentAnswer> + Send + 'a> {
        let can_ask = context.peer.peer_info().is_some()
            && context
                .peer
                .supported_elicitation_modes()
                .contains(&rmcp::service::ElicitationMode::Form);
        if !can_ask {
            return Err("this client cannot ask the user for it (it declared no MCP elicitation)");
        }
        let message = consent_message(tool.name(), tool.title(), &tool.redacted(args));
        let schema = consent_form();
        let peer = context.peer.clone();
        let cancelled = context.ct.clone();
        Ok(async move {
            let Ok(schema) = schema else {
                return ConsentAnswer::Cancel;
            };
            let params = rmcp::model::ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            };
            let answer = tokio::select! {
                answer = peer.create_elicitation(params) => answer,
                () = cancelled.cancelled() => return ConsentAnswer::Cancel,
            };
            match answer {
                Ok(result) => answer_of(result),
                // No answer (the client failed or went away): nothing runs.
                Err(_) => ConsentAnswer::Cancel,
            }
        })
    }
}

/// The one field of the consent form: a boolean the person checks.
const CONFIRM_FIELD: &str = "confirm";

/// The key of the consent question in a stateless client's input requests.
const CONSENT_INPUT: &str = "consent";

/// What the consent check says of a call.
pub(super) enum Gate {
    /// Run it.
    Run,
    /// Refuse it, with the sentence the model reads.
    Refuse(String),
    /// Return the question to a stateless client.
    Ask(rmcp::model::InputRequiredResult),
}

/// What a stateless client sent back with a call it was asked about.
pub(super) struct Returned {
    pub(super) state: Option<String>,
    pub(super) responses: Option<rmcp::model::InputResponses>,
}

/// Whether the request's client can put a form to its user (from the
/// handshake, or a stateless request's own capabilities).
fn client_elicits(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// The consent form: one required boolean the person checks.
fn consent_form() -> Result<rmcp::model::ElicitationSchema, &'static str> {
    rmcp::model::ElicitationSchema::builder()
        .required_bool_with(CONFIRM_FIELD, |field| {
            field.title("Run it").description(
                "Check to let this call run; leave it unchecked, decline or cancel to stop it.",
            )
        })
        .build()
}

/// A person's answer: an acceptance only with the box checked.
fn answer_of(result: rmcp::model::ElicitResult) -> ConsentAnswer {
    match result.action {
        rmcp::model::ElicitationAction::Accept
            if result
                .content
                .as_ref()
                .and_then(|content| content.get(CONFIRM_FIELD))
                .and_then(Value::as_bool)
                == Some(true) =>
        {
            ConsentAnswer::Accept
        }
        // Accepted without the box checked: not an approval.
        rmcp::model::ElicitationAction::Accept | rmcp::model::ElicitationAction::Decline => {
            ConsentAnswer::Decline
        }
        _ => ConsentAnswer::Cancel,
    }
}

/// What a person reads before approving a call: the tool, its title, and
/// each argument as the model wrote it (aliases, not ids; sensitive fields
/// redacted), one a line.
fn consent_message(name: &str, title: Option<&str>, arguments: &Value) -> String {
    let mut message = match title {
        Some(title) => format!("Allow the assistant to run \u{201c}{title}\u{201d} ({name})?"),
        None => format!("Allow the assistant to run {name}?"),
    };
    match arguments.as_object() {
        Some(object) if !object.is_empty() => {
            message.push_str("\n\nWith:");
            for (key, value) in object {
                let shown = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                message.push_str(&format!("\n  {key}: {shown}"));
            }
        }
        _ => message.push_str("\n\nWith no arguments."),
    }
    message
}

/// Notes the consent decision in the request's audit event.
fn noted(outcome: consent::Outcome) {
    super::super::audit::note(|notes| notes.consent = Some(outcome.as_str()));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_question_names_the_tool_and_shows_each_argument_on_a_line() {
        let message = super::consent_message(
            "books_delete",
            Some("Delete a book"),
            &json!({"book_id": "book-1", "force": true, "labels": ["a"]}),
        );
        assert_eq!(
            message,
            "Allow the assistant to run \u{201c}Delete a book\u{201d} (books_delete)?\n\nWith:\n  book_id: book-1\n  force: true\n  labels: [\"a\"]"
        );
        assert_eq!(
            super::consent_message("ping", None, &json!({})),
            "Allow the assistant to run ping?\n\nWith no arguments."
        );
    }
}
