//! How each request is observed: its span, its metrics, and a tool
//! call's audit event's caller.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

#[cfg(feature = "oauth")]
use super::principal;
use super::{Handler, Scope, session_id};

impl Handler {
    /// The span of request `method` (of `tool`), its parent the trace the
    /// request carries when OpenTelemetry is on.
    pub(super) fn request_span(
        &self,
        method: &'static str,
        tool: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> tracing::Span {
        let span = super::super::traced::request_span(method, tool, context);
        #[cfg(feature = "otel")]
        if self.state.shared.opentelemetry && !span.is_disabled() {
            super::super::traced::adopt_parent(&span, context);
        }
        span
    }

    /// Records how request `method` (of `tool`) ended, after `took`: in its
    /// span, and in the metrics with the gRPC status of the call it made.
    #[cfg_attr(not(feature = "admin"), allow(unused_variables))]
    pub(super) fn finish_request(
        &self,
        span: &tracing::Span,
        method: &'static str,
        tool: Option<&str>,
        ended: super::super::traced::Ended,
        grpc_status: Option<i32>,
        took: std::time::Duration,
    ) {
        super::super::traced::record_end(span, ended);
        #[cfg(feature = "admin")]
        if let Some(metrics) = self.metrics() {
            metrics.record_operation(
                &super::super::admin::Operation {
                    method,
                    tool,
                    error_type: ended.error_type,
                    json_rpc_code: ended.json_rpc_code,
                    grpc_status,
                },
                took,
            );
        }
    }

    /// Who makes this request, for its audit event.
    pub(super) fn audit_caller(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> super::super::audit::Caller {
        use super::super::audit::Caller;
        let session = session_id(context);
        let scope = if let Some(id) = &self.state.fixed_id {
            Some(id.clone())
        } else if !session.is_empty() {
            Some(Caller::scope_of(&session, true))
        } else {
            context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Scope>())
                .map(|scope| Caller::scope_of(scope.key(), false))
        };
        #[cfg(feature = "oauth")]
        if let Some(principal) = principal(context) {
            return Caller {
                subject: Some(principal.subject.clone()),
                issuer: Some(principal.issuer.clone()),
                client_id: principal.client_id.clone(),
                scope,
            };
        }
        Caller {
            scope,
            ..Caller::default()
        }
    }
}
