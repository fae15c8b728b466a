//! Host profiles: what the program between the model and the executor does
//! to a tool's schema and to the model's arguments.
//!
//! A [`Dialect`](crate::Dialect) is what a model provider accepts. An MCP
//! host (Claude Code, Cursor, VS Code, Gemini CLI, …) sits between that
//! provider and an MCP server, and most hosts change what passes through
//! them:
//!
//! - **Numbers parsed as doubles.** A host written in JavaScript parses the
//!   model's arguments with `JSON.parse`, so an integer past 2^53 reaches
//!   the server rounded (`9007199254740993` arrives as `…992`), and nothing
//!   downstream can tell. Where a profile says so, every integer whose range
//!   a double cannot hold (64-bit ones) is rendered as a string of digits
//!   (protojson's own form of a 64-bit integer), which a JavaScript host
//!   passes on exactly.
//! - **`$ref` refused.** Several hosts fail on `$ref`/`$defs`. Where a
//!   profile says so, recursion is cut at a bounded depth (as in Gemini's
//!   `parameters`) and repeated messages are spelled out at each use.
//!
//! The default, [`HostProfile::JavaScript`], is exact through a JavaScript
//! host and works in hosts that refuse `$ref`. [`HostProfile::Exact`] is
//! for a client that passes JSON through unchanged and resolves `$ref`
//! (a Rust or Python agent calling the executor itself): it renders what
//! [`render::parameters`](crate::render::parameters) renders.
//!
//! Evidence for each profile is listed in the guide's "Host profiles" (guide/src/mcp.md).
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::ir::{Object, Schema};
//! use proto_ai_tools_schema::{render, Dialect, HostProfile};
//!
//! let schema = Schema::object(
//!     Object::new().property("id", Schema::integer_within(i64::MIN, i64::MAX), true),
//! );
//! let exact = render::parameters_for(&schema, Dialect::Anthropic, false, HostProfile::Exact);
//! assert_eq!(exact["properties"]["id"]["type"], "integer");
//! let javascript = render::parameters_for(&schema, Dialect::Anthropic, false, HostProfile::default());
//! assert_eq!(javascript["properties"]["id"]["type"], "string");
//! assert_eq!("javascript".parse::<HostProfile>(), Ok(HostProfile::JavaScript));
//! ```

use std::fmt;
use std::str::FromStr;

/// What a family of MCP hosts does to a tool's schema and to the model's
/// arguments; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum HostProfile {
    /// A host written in JavaScript (Claude Code, Claude Desktop, Cursor,
    /// VS Code, Cline, Gemini CLI, GitHub Copilot CLI, Kiro): numbers are
    /// parsed as doubles, and `$ref` may be refused. The default.
    #[default]
    JavaScript,
    /// A client that passes schemas and arguments through unchanged and
    /// resolves `$ref` (the official Python SDK's client, a Rust agent).
    Exact,
}

impl HostProfile {
    /// Every profile, the default first.
    pub const ALL: [HostProfile; 2] = [HostProfile::JavaScript, HostProfile::Exact];

    /// The profile's stable name: `javascript`, `exact`.
    pub fn as_str(self) -> &'static str {
        match self {
            HostProfile::JavaScript => "javascript",
            HostProfile::Exact => "exact",
        }
    }

    /// Whether the host parses the model's numbers as IEEE doubles, so that
    /// an integer past 2^53 may reach the server rounded.
    pub fn numbers_as_doubles(self) -> bool {
        matches!(self, HostProfile::JavaScript)
    }

    /// Whether the host takes schemas with `$ref`/`$defs`.
    pub fn takes_refs(self) -> bool {
        matches!(self, HostProfile::Exact)
    }
}

impl fmt::Display for HostProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no [`HostProfile`]'s; its message lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownHostProfile(pub String);

impl fmt::Display for UnknownHostProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = HostProfile::ALL.iter().map(|p| p.as_str()).collect();
        write!(
            f,
            "unknown host profile `{}`; the profiles are: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownHostProfile {}

impl FromStr for HostProfile {
    type Err = UnknownHostProfile;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        HostProfile::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| UnknownHostProfile(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_the_valid_ones() {
        for profile in HostProfile::ALL {
            assert_eq!(profile.as_str().parse::<HostProfile>(), Ok(profile));
        }
        let err = "node".parse::<HostProfile>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown host profile `node`; the profiles are: javascript, exact"
        );
    }
}
