//! The security flags of `mcp`: OAuth for the callers (`--oauth-*`,
//! `--required-scope`, `--tool-scopes`, `--claim-header`), a credential
//! for the service (`--backend-token-file`, `--backend-token-env`), their
//! checks, and the secrets they name read from their files.

use std::path::{Path, PathBuf};

use crate::checked::{Checked, count};
use crate::failure::Failure;

/// The security flags of `mcp`: OAuth for the callers, a credential for the
/// service.
#[derive(clap::Args, Default, Debug, PartialEq)]
#[command(
    next_help_heading = "Security (mcp --http; the guide's \"Securing the gateway\", guide/src/security.md, has the details)"
)]
pub(crate) struct AuthFlags {
    /// Check every request's bearer token: an OAuth 2.1 resource server
    /// trusting this authorization server
    #[arg(long = "oauth-issuer", value_name = "URL")]
    pub(crate) issuer: Option<String>,
    /// This server's resource URI as clients reach it
    /// (https://tools.example.com/mcp): the audience every token must name
    #[arg(long = "oauth-audience", value_name = "URI")]
    pub(crate) audience: Option<String>,
    /// The issuer's key set (default: from its metadata)
    #[arg(long = "oauth-jwks", value_name = "URL")]
    pub(crate) jwks: Option<String>,
    /// Check opaque tokens at this RFC 7662 endpoint, as --oauth-client-id
    /// with the secret read from --oauth-client-secret-file
    #[arg(long = "oauth-introspection", value_name = "URL")]
    pub(crate) introspection: Option<String>,
    /// (--oauth-introspection) The client id the gateway introspects as
    #[arg(long = "oauth-client-id", value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// (--oauth-introspection) The file holding the client's secret
    #[arg(long = "oauth-client-secret-file", value_name = "FILE")]
    pub(crate) client_secret_file: Option<PathBuf>,
    /// A scope every token needs, else 403 (repeatable;
    /// AI_TOOLS_REQUIRED_SCOPE takes several, comma-separated)
    #[arg(long = "required-scope", value_name = "S", value_delimiter = ',')]
    pub(crate) required_scopes: Vec<String>,
    /// Read-only tools need READ (or WRITE), others WRITE; tools/list shows
    /// each caller what its token opens
    #[arg(long, value_name = "READ,WRITE", value_parser = Checked::new(tool_scopes, &[]))]
    pub(crate) tool_scopes: Option<(String, String)>,
    /// Send the token's validated claim to the service as this gRPC metadata
    /// (repeatable; AI_TOOLS_CLAIM_HEADER holds one); the token itself is
    /// never sent, and --forward-header authorization is refused with
    /// --oauth-issuer
    #[arg(long = "claim-header", value_name = "CLAIM=HEADER", value_parser = Checked::new(claim_header, &[]))]
    pub(crate) claim_headers: Vec<(String, String)>,
    /// MCP sessions one caller (token issuer and subject) holds at once
    /// (default 16); past it initialize gets 429 with Retry-After
    #[arg(long, value_name = "N", value_parser = Checked::new(count, &[]))]
    pub(crate) max_sessions_per_caller: Option<usize>,
    /// The gateway's own credential to the service, sent as authorization:
    /// Bearer <token>, read from this file (not a flag's value, which would
    /// show in ps)
    #[arg(long, value_name = "FILE")]
    pub(crate) backend_token_file: Option<PathBuf>,
    /// The same, read from this environment variable
    #[arg(long, value_name = "VAR")]
    pub(crate) backend_token_env: Option<String>,
}

impl AuthFlags {
    /// Whether any flag of OAuth (not the backend credential) was given.
    pub(crate) fn oauth_given(&self) -> bool {
        self.issuer.is_some()
            || self.audience.is_some()
            || self.jwks.is_some()
            || self.introspection.is_some()
            || self.client_id.is_some()
            || self.client_secret_file.is_some()
            || !self.required_scopes.is_empty()
            || self.tool_scopes.is_some()
            || !self.claim_headers.is_empty()
            || self.max_sessions_per_caller.is_some()
    }

    pub(crate) fn backend_token_given(&self) -> bool {
        self.backend_token_file.is_some() || self.backend_token_env.is_some()
    }

    /// The OAuth configuration, secrets read.
    pub(crate) fn oauth(&self) -> Result<Option<proto_ai_tools_mcp::OAuth>, Failure> {
        let (Some(issuer), Some(audience)) = (&self.issuer, &self.audience) else {
            return Ok(None);
        };
        let mut oauth = proto_ai_tools_mcp::OAuth::new(audience, issuer);
        if let Some(jwks) = &self.jwks {
            oauth = oauth.jwks_uri(jwks);
        }
        if let (Some(endpoint), Some(client_id), Some(secret_file)) = (
            &self.introspection,
            &self.client_id,
            &self.client_secret_file,
        ) {
            let secret = read_secret("--oauth-client-secret-file", secret_file)?;
            if secret.is_empty() {
                return Err(Failure::Run(format!(
                    "`--oauth-client-secret-file {}` is empty",
                    secret_file.display()
                )));
            }
            oauth = oauth.introspection(endpoint, client_id, secret);
        }
        for scope in &self.required_scopes {
            oauth = oauth.required_scope(scope);
        }
        if let Some((read, write)) = &self.tool_scopes {
            oauth = oauth.tool_scopes(read, write);
        }
        for (claim, header) in &self.claim_headers {
            oauth = oauth.claim_header(claim, header);
        }
        if let Some(max) = self.max_sessions_per_caller {
            oauth = oauth.max_sessions_per_caller(max);
        }
        Ok(Some(oauth))
    }

    /// `authorization: Bearer <token>` for every call, from the file or the
    /// environment variable.
    pub(crate) fn backend_credential(
        &self,
    ) -> Result<Option<proto_ai_tools::CallOptions>, Failure> {
        let token = match (&self.backend_token_file, &self.backend_token_env) {
            (Some(path), _) => read_secret("--backend-token-file", path)?,
            (None, Some(var)) => std::env::var(var).map_err(|_| {
                Failure::Run(format!(
                    "`--backend-token-env {var}`: the environment variable `{var}` is not set or not UTF-8"
                ))
            })?,
            (None, None) => return Ok(None),
        };
        let token = token.trim();
        if token.is_empty() || !token.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(Failure::Run(
                "the backend token is empty or holds characters gRPC metadata cannot carry (give printable ASCII without spaces)"
                    .into(),
            ));
        }
        Ok(Some(
            proto_ai_tools::CallOptions::new().metadata("authorization", format!("Bearer {token}")),
        ))
    }
}

/// A secret read from a file (trailing newline and spaces trimmed).
pub(crate) fn read_secret(flag: &str, path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map(|text| text.trim().to_owned())
        .map_err(|e| Failure::Run(format!("`{flag} {}`: {e}", path.display())))
}

/// `--tool-scopes READ,WRITE`.
pub(crate) fn tool_scopes(flag: &str, given: &str) -> Result<(String, String), String> {
    given
        .split_once(',')
        .filter(|(read, write)| !read.is_empty() && !write.is_empty() && !write.contains(','))
        .map(|(read, write)| (read.to_owned(), write.to_owned()))
        .ok_or_else(|| format!("`{flag} {given}`: give READ,WRITE, e.g. tools:read,tools:write"))
}

/// `--claim-header CLAIM=HEADER`, the header in lower case as gRPC
/// metadata is.
pub(crate) fn claim_header(flag: &str, given: &str) -> Result<(String, String), String> {
    given
        .split_once('=')
        .filter(|(claim, header)| !claim.is_empty() && !header.is_empty())
        .map(|(claim, header)| (claim.to_owned(), header.to_ascii_lowercase()))
        .ok_or_else(|| format!("`{flag} {given}`: give CLAIM=HEADER, e.g. sub=x-user-id"))
}
