//! The command line of `ai-tools`, declared with clap's derive: the
//! subcommands, every flag with its help, its environment variable
//! (`AI_TOOLS_<FLAG>`, set on every flag by [`command`]) and its check, and
//! [`parse`], which merges the command line, the environment and the
//! `--config` file (in that order of precedence) and checks what the flags
//! ask of each other.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use proto_ai_tools::consent::{ConfirmClass, Unsupported};
use proto_ai_tools::executor::JsonNames;
use proto_ai_tools::schema::HostProfile;
use proto_ai_tools::schema::overlay::PlainFields;
use proto_ai_tools::toolkit::ToolkitBuilder;

use crate::auth::{AuthFlags, read_secret};
use crate::checked::{Checked, seconds};
use crate::failure::Failure;
use crate::limits::{CallLimits, HttpLimits};
use crate::logging::LogFormat;
use crate::sources::{ALTERNATIVES, env_name};
use crate::store::ScopeFlags;
use crate::tls::TlsFiles;

const TOP_TEMPLATE: &str = "\
{about}

USAGE:
    ai-tools mcp   --grpc URL SOURCE [OPTIONS] (--stdio | --http ADDR)
    ai-tools tools SOURCE [OPTIONS] [--dialect DIALECT] [--stats]
    ai-tools protos --out DIR [--force]
    ai-tools completions SHELL

COMMANDS:
{subcommands}

OPTIONS:
{options}
{after-help}";

const SUBCOMMAND_TEMPLATE: &str = "\
{about}

USAGE:
    {usage}

{all-args}
{after-help}";

const SOURCES: &str = "\
SOURCE (where the service's descriptors come from; exactly one):
    --reflection            the server's gRPC reflection (v1, else v1alpha);
                            needs --grpc URL; --reflection-timeout SECS bounds
                            it (default 30)
    --descriptor-set FILE   an encoded FileDescriptorSet with its imports
    --proto FILE [-I DIR]…  a .proto compiled here

Methods annotated with rpc_tool in the protos are tools; --overlay FILE and
--service NAME add tools to protos you cannot edit; --include GLOB,
--exclude GLOB and --read-only choose among them.";

const CONFIGURATION: &str = "\
CONFIGURATION:
    Every flag may come from the environment instead, as AI_TOOLS_ and the
    flag's long name in capitals (--grpc: AI_TOOLS_GRPC, -I: AI_TOOLS_PROTO_PATH,
    --read-only: AI_TOOLS_READ_ONLY=true), or from a TOML file, --config FILE
    (AI_TOOLS_CONFIG), whose keys are the long flags, leading dashes dropped:
        grpc = \"http://127.0.0.1:50051\"
        reflection = true
        forward-header = [\"authorization\"]
        [mcp]           # keys for one command only, over the ones above
        http = \"127.0.0.1:8080\"
    A flag wins over its variable, which wins over the file. The file holds
    no secrets: a key such as backend-token, or a URL with a password in it,
    is refused (give those by flag or variable). A repeatable flag's variable
    holds several values separated by commas where no value can hold a comma
    (--forward-header, --required-scope, --tool-timeout, --allowed-origin),
    else one value; the file takes a list for any.";

const MCP_EXAMPLES: &str =
    "    # Serve a server with reflection over MCP on stdio, every method of one service:
    ai-tools mcp --grpc http://127.0.0.1:50051 --reflection --service pkg.v1.Things --stdio

    # The same over streamable HTTP at http://127.0.0.1:8080/mcp, per-user auth:
    ai-tools mcp --grpc http://127.0.0.1:50051 --descriptor-set api.binpb \\
        --overlay tools.toml --http 127.0.0.1:8080 --forward-header authorization

    # Only callers with a token from auth.example.com, who the service sees by id:
    ai-tools mcp --grpc https://api.internal:443 --reflection --http 0.0.0.0:8080 \\
        --oauth-issuer https://auth.example.com \\
        --oauth-audience https://tools.example.com/mcp --required-scope mcp:use \\
        --claim-header sub=x-user-id --backend-token-file /run/secrets/backend-token

    # A server over mTLS, its certificate signed by a private CA:
    ai-tools mcp --grpc https://links.internal:443 --reflection --stdio \\
        --ca-cert ca.pem --client-cert gateway.pem --client-key gateway.key

    # Only the tools of one service that change nothing, every other one left out:
    ai-tools mcp --grpc http://127.0.0.1:50051 --reflection --service pkg.v1.Things \\
        --include 'pkg.v1.Things/*' --read-only --stdio

    # The flags of a container, from its environment and a mounted file:
    AI_TOOLS_GRPC=http://links:50051 AI_TOOLS_HTTP=0.0.0.0:8080 \\
        AI_TOOLS_ALIAS_SCOPE_HEADER=x-user ai-tools mcp --config /etc/ai-tools.toml";

const TOOLS_EXAMPLES: &str = "    # Tool definitions for OpenAI, from a proto on disk:
    ai-tools tools --proto api/v1/service.proto -I proto --dialect openai

    # What the read-only tools of a server cost a model, per dialect:
    ai-tools tools --grpc http://127.0.0.1:50051 --reflection --read-only --stats";

const ALIASES_NOTE: &str = "\
Ids in fields marked with an alias_prefix reach the model as aliases
(link-1), one namespace per MCP session or, for a stateless request, per
caller. On an address that is not loopback, mcp --http needs a way to tell
callers apart: --oauth-issuer or --alias-scope-header.";

const EXIT_STATUS: &str = "\
EXIT STATUS:
    0 success, 1 the tools could not be built or served, 2 a usage error";

/// `ai-tools`: any gRPC service as tools for LLM agents.
#[derive(Parser, Debug)]
#[command(
    name = "ai-tools",
    version,
    propagate_version = true,
    about = "ai-tools: any gRPC service as tools for LLM agents",
    subcommand_required = true,
    help_template = TOP_TEMPLATE,
    after_help = after_help(&[SOURCES, CONFIGURATION, &format!("EXAMPLES:\n{MCP_EXAMPLES}\n\n{TOOLS_EXAMPLES}"), EXIT_STATUS]),
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The text after a command's flags: `sections`, a blank line between two.
fn after_help(sections: &[&str]) -> String {
    sections.join("\n\n")
}

/// What `ai-tools` does.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Serve the service's tools over MCP, on stdio or streamable HTTP
    #[command(
        help_template = SUBCOMMAND_TEMPLATE,
        override_usage = "ai-tools mcp --grpc URL SOURCE [OPTIONS] (--stdio | --http ADDR)",
        after_help = after_help(&[SOURCES, ALIASES_NOTE, CONFIGURATION, &format!("EXAMPLES:\n{MCP_EXAMPLES}"), EXIT_STATUS]),
    )]
    Mcp(Box<McpFlags>),
    /// Print the tool definitions as JSON on stdout, or what they cost (--stats)
    #[command(
        help_template = SUBCOMMAND_TEMPLATE,
        override_usage = "ai-tools tools SOURCE [OPTIONS] [--dialect DIALECT] [--stats]",
        after_help = after_help(&[SOURCES, CONFIGURATION, &format!("EXAMPLES:\n{TOOLS_EXAMPLES}"), EXIT_STATUS]),
    )]
    Tools(Box<ToolsFlags>),
    /// Write the annotation protos to a directory, for protoc, buf, grpcio-tools and Go
    #[command(after_help = PROTOS_HELP)]
    Protos {
        /// The directory to write them under, at their import paths
        /// (DIR/ai/context/v1/annotations.proto, …), created if missing: give it
        /// to protoc as `-I DIR`
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace files at those paths whose content differs (edited, or
        /// from another version of ai-tools); without it, such a file stops
        /// the command before it writes anything
        #[arg(long)]
        force: bool,
    },
    /// Print a completion script for SHELL on stdout
    #[command(
        after_help = "EXAMPLES:\n    ai-tools completions bash > /etc/bash_completion.d/ai-tools\n    ai-tools completions zsh > \"${fpath[1]}/_ai-tools\"\n    ai-tools completions fish > ~/.config/fish/completions/ai-tools.fish"
    )]
    Completions {
        /// bash, zsh, fish, powershell or elvish
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const PROTOS_HELP: &str = "\
Writes every annotation proto this ai-tools ships (ai/context/v1/annotations.proto,
ai/tools/v1/annotations.proto, ai/tools/v1/rpc_tool.proto,
google/api/field_behavior.proto) under DIR, with a buf.yaml that makes DIR a
module buf builds and lints as it is, and prints a line per file:
written, unchanged (already there, same content) or overwritten (--force).
A file already there with other content is never replaced without --force,
and nothing is written then; other files in DIR are left alone. No
environment variable or config file applies to this command.

EXAMPLES:
    ai-tools protos --out third_party/ai-tools
    protoc -I proto -I third_party/ai-tools --include_imports \\
        --descriptor_set_out=notes.binpb proto/notes/v1/notes.proto";

/// `ai-tools mcp`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct McpFlags {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub serve: Serve,
}

/// `ai-tools tools`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct ToolsFlags {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub listing: Listing,
}

/// The flags of both commands.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct Common {
    #[command(flatten)]
    pub source: Source,
    #[command(flatten)]
    pub tls: TlsFiles,
    #[command(flatten)]
    pub choice: Choice,
    /// What the MCP host does to schemas and arguments: javascript (default:
    /// 64-bit integers as strings of digits, which JSON.parse cannot round;
    /// no $ref) or exact (a client that changes nothing)
    #[arg(long, value_name = "NAME", value_parser = Checked::new(host_profile, &["javascript", "exact"]), help_heading = "Host, logs and configuration")]
    pub host_profile: Option<HostProfile>,
    /// The logs on stderr: lines of text (default) or one JSON object a
    /// line; RUST_LOG filters them (default warn,ai_tools=info,proto_ai_tools=info;
    /// proto_ai_tools=debug adds a span per step of each tool call)
    #[arg(long, value_name = "text|json", value_parser = Checked::new(log_format, &["text", "json"]), help_heading = "Host, logs and configuration")]
    pub log_format: Option<LogFormat>,
    /// List each tool's outputSchema: the JSON Schema of its results, the
    /// protojson it writes (guide, "Typed results"); off by default, as
    /// some hosts count output schemas against the model's context
    #[arg(long, help_heading = "Host, logs and configuration")]
    pub output_schemas: bool,
    /// (--output-schemas) The most bytes of one tool's outputSchema; a
    /// longer one is left out, with a warning naming the tool (default 8192)
    #[arg(
        long,
        value_name = "BYTES",
        help_heading = "Host, logs and configuration"
    )]
    pub max_output_schema_bytes: Option<usize>,
    /// The field names of results (and of their outputSchema): proto
    /// (default: `book_id`, the names the arguments use) or camel
    /// (protojson's lowerCamelCase, `bookId`)
    #[arg(long, value_name = "proto|camel", value_parser = Checked::new(json_names, &["proto", "camel"]), help_heading = "Host, logs and configuration")]
    pub json_names: Option<JsonNames>,
    /// The most bytes of one tool's whole definition, in every dialect and
    /// host profile (default 16384): past it, the objects nested deepest in
    /// its parameters are cut to a string holding their JSON text, which
    /// calls may send as such; --stats names the tools cut
    #[arg(
        long,
        value_name = "BYTES",
        help_heading = "Host, logs and configuration"
    )]
    pub max_tool_bytes: Option<usize>,
    /// Flags from this TOML file, under those given on the command line or
    /// in the environment: keys named as the long flags (grpc, forward-header
    /// = [..]), tables [mcp] and [tools] for one command; no secrets
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Host, logs and configuration"
    )]
    pub config: Option<PathBuf>,
}

impl Common {
    /// `toolkit` keeping each tool's parameters to `--max-tool-bytes`.
    pub fn tool_budget(&self, toolkit: ToolkitBuilder) -> ToolkitBuilder {
        with_tool_budget(toolkit, self.max_tool_bytes)
    }

    /// `toolkit` writing results with the field names `--json-names` says.
    pub fn result_names(&self, toolkit: ToolkitBuilder) -> ToolkitBuilder {
        toolkit.json_names(self.json_names.unwrap_or_default())
    }

    /// `server` listing output schemas as `--output-schemas` and
    /// `--max-output-schema-bytes` say.
    pub fn output_schemas(
        &self,
        server: proto_ai_tools_mcp::McpServer,
    ) -> proto_ai_tools_mcp::McpServer {
        let server = server.with_output_schemas(self.output_schemas);
        match self.max_output_schema_bytes {
            Some(bytes) => server.with_max_output_schema_bytes(bytes),
            None => server,
        }
    }
}

/// `toolkit` keeping each tool's parameters to `max_tool_bytes`, where
/// `--max-tool-bytes` gives it (else the toolkit's default).
pub(crate) fn with_tool_budget(
    toolkit: ToolkitBuilder,
    max_tool_bytes: Option<usize>,
) -> ToolkitBuilder {
    match max_tool_bytes {
        Some(bytes) => toolkit.max_tool_bytes(bytes),
        None => toolkit,
    }
}

/// Where the descriptors come from.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Source (exactly one of --reflection, --descriptor-set, --proto)")]
pub(crate) struct Source {
    /// The gRPC server, e.g. http://127.0.0.1:50051, or https://host:port
    /// over TLS, verified against the system's roots
    #[arg(long, value_name = "URL")]
    pub grpc: Option<String>,
    /// The server's gRPC reflection (v1, else v1alpha); needs --grpc
    #[arg(long)]
    pub reflection: bool,
    /// How long --reflection may take in all, connecting included (default
    /// 30; fractions allowed)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub reflection_timeout: Option<Duration>,
    /// An encoded FileDescriptorSet with its imports (protoc
    /// --include_imports --include_source_info --descriptor_set_out, or buf
    /// build -o)
    #[arg(long, value_name = "FILE")]
    pub descriptor_set: Option<PathBuf>,
    /// A .proto compiled here, its imports under the -I directories
    #[arg(long, value_name = "FILE")]
    pub proto: Option<PathBuf>,
    /// An import directory of --proto (repeatable; default: the path's first
    /// directory, as ai_tools! does: proto for proto/links/v1/links.proto;
    /// AI_TOOLS_PROTO_PATH holds one)
    #[arg(short = 'I', long = "proto-path", value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// Where --proto keeps what it compiled, used again while no input file
    /// changed (default $XDG_CACHE_HOME/ai-tools/descriptors, else
    /// ~/.cache/ai-tools/descriptors)
    #[arg(long, value_name = "DIR")]
    pub proto_cache: Option<PathBuf>,
    /// Compile --proto at every start, keeping nothing
    #[arg(long)]
    pub no_proto_cache: bool,
}

/// Which tools there are, and which are kept.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Choosing tools")]
pub(crate) struct Choice {
    /// Tool annotations from outside the protos (TOML)
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
    /// Expose every unary and server-streaming method of this service (fully
    /// qualified, or a glob such as 'google.cloud.compute.v1.*'; repeatable;
    /// AI_TOOLS_SERVICE holds one)
    #[arg(long = "service", value_name = "NAME")]
    pub services: Vec<String>,
    /// Whether the --service tools require the fields that are not optional,
    /// in a oneof or marked field_behavior = REQUIRED (default optional: the
    /// model sends only what it means to set)
    #[arg(long, value_name = "optional|required", value_parser = Checked::new(plain_fields, &["optional", "required"]))]
    pub plain_fields: Option<PlainFields>,
    /// Keep only the tools that match this or another --include: a glob on
    /// the tool name (links_*) or, with a /, on the method written
    /// package.Service/Method (links.v1.LinksService/*) (repeatable;
    /// AI_TOOLS_INCLUDE holds one)
    #[arg(long = "include", value_name = "GLOB")]
    pub include_tools: Vec<String>,
    /// Drop the tools that match (repeatable; wins over --include;
    /// AI_TOOLS_EXCLUDE holds one)
    #[arg(long = "exclude", value_name = "GLOB")]
    pub exclude_tools: Vec<String>,
    /// Keep only the read-only tools (methods with idempotency_level =
    /// NO_SIDE_EFFECTS), after --include and --exclude; a glob that matches
    /// no tool, or a choice that leaves none, is an error
    #[arg(long)]
    pub read_only: bool,
}

/// The flags of `tools` alone.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Output")]
pub(crate) struct Listing {
    /// The shape of the list: mcp (default: what ai-tools mcp lists),
    /// openai, anthropic, gemini, or a provider's deferred loading:
    /// openai_tool_search (namespaces, defer_loading, tool_search) or
    /// anthropic_tool_search (defer_loading, the BM25 tool search tool)
    #[arg(long, value_name = "DIALECT", value_parser = Checked::new(dialect, &DIALECTS))]
    pub dialect: Option<String>,
    /// Instead of the list, what it costs per dialect (or the one --dialect
    /// names): its tools, bytes and tokens (o200k_base), and the largest
    /// tools
    #[arg(long)]
    pub stats: bool,
}

/// The dialects of `tools --dialect`.
pub(crate) const DIALECTS: [&str; 6] = [
    "mcp",
    "openai",
    "anthropic",
    "gemini",
    "openai_tool_search",
    "anthropic_tool_search",
];

/// The flags of `mcp` alone.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Serving")]
pub(crate) struct Serve {
    /// Serve MCP on stdin and stdout
    #[arg(long)]
    pub stdio: bool,
    /// Serve streamable HTTP at http://ADDR/mcp, e.g. 127.0.0.1:8080
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics, liveness at
    /// /healthz and readiness at /readyz (?verbose: each check), on a
    /// listener of their own, never the MCP one, e.g. 127.0.0.1:9090; off
    /// by default
    #[arg(long, value_name = "ADDR")]
    pub admin: Option<String>,
    /// Send traces (a span per MCP request, its tool call and gRPC call) to
    /// this OTLP/gRPC collector, e.g. http://127.0.0.1:4317; also on when
    /// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
    /// set (the other OTEL_* variables are honoured too); off by default
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// (--http) Copy this request header into each call's gRPC metadata
    /// (repeatable; AI_TOOLS_FORWARD_HEADER takes several, comma-separated)
    #[arg(long = "forward-header", value_name = "NAME", value_delimiter = ',')]
    pub forward_headers: Vec<String>,
    /// List only search_tools, list_toolsets, enable_toolset and call_tool
    /// (and the --toolset tools): the model searches the others, for APIs
    /// with more tools than a model or host takes (guide, "Large APIs")
    #[arg(long)]
    pub tool_search: bool,
    /// (--tool-search) List this toolset's tools from the start: a service
    /// (fully qualified) or a --define-toolset name (repeatable;
    /// AI_TOOLS_TOOLSET holds one)
    #[arg(long = "toolset", value_name = "NAME")]
    pub toolsets: Vec<String>,
    /// (--tool-search) A toolset of the tools that match the globs (as
    /// --include's), beside the one per service (repeatable;
    /// AI_TOOLS_DEFINE_TOOLSET holds one)
    #[arg(long = "define-toolset", value_name = "NAME=GLOB[,GLOB...]", value_parser = Checked::new(define_toolset, &[]))]
    pub defined_toolsets: Vec<(String, Vec<String>)>,
    /// (--tool-search) Find tools by meaning too, fused with the search by
    /// words: with the sentence-embedding model in DIR, a
    /// sentence-transformers folder (model.safetensors, tokenizer.json,
    /// config.json) of a BERT model such as all-MiniLM-L6-v2, computed on
    /// the CPU; nothing is fetched
    #[arg(long, value_name = "DIR")]
    pub embedding_model: Option<PathBuf>,
    /// (--tool-search) Find tools by meaning too, with the embeddings of an
    /// OpenAI-compatible endpoint: POST URL/v1/embeddings
    /// (text-embeddings-inference, Ollama, vLLM); needs --embeddings-model
    #[arg(long, value_name = "URL")]
    pub embeddings_url: Option<String>,
    /// (--embeddings-url) The model the endpoint is asked for
    #[arg(long, value_name = "NAME")]
    pub embeddings_model: Option<String>,
    /// (--embedding-model, --embeddings-url) Where the tools' embeddings
    /// are kept between starts, one file per toolkit and model (default
    /// $XDG_CACHE_HOME/ai-tools, else ~/.cache/ai-tools)
    #[arg(long, value_name = "DIR")]
    pub embeddings_cache: Option<PathBuf>,
    /// Which tools a person must approve before each call, where the
    /// tool's own consent (rpc_tool.consent, an overlay's consent) says
    /// nothing: destructive (the default, stdio and HTTP alike), writes
    /// (every tool not read-only) or none; asked through the host (MCP
    /// elicitation)
    #[arg(long, value_name = "destructive|writes|none", value_parser = Checked::new(confirm_class, &["destructive", "writes", "none"]))]
    pub confirm: Option<ConfirmClass>,
    /// What a call that needs a person's approval does when the client
    /// cannot ask for it (no elicitation): refuse (the default; the model
    /// is told a person must approve it in a client that can ask) or allow
    #[arg(long, value_name = "refuse|allow", value_parser = Checked::new(confirm_unsupported, &["refuse", "allow"]))]
    pub confirm_unsupported: Option<Unsupported>,
    /// The key (a file of 32 bytes or more) that signs the approvals
    /// stateless clients (MCP 2026-07-28) send back; give every replica
    /// behind one address the same (default: a random key at each start,
    /// so an approval counts only where it was asked for)
    #[arg(long, value_name = "FILE")]
    pub consent_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub auth: AuthFlags,
    #[command(flatten)]
    pub scopes: ScopeFlags,
    #[command(flatten)]
    pub calls: CallLimits,
    #[command(flatten)]
    pub http_limits: HttpLimits,
}

impl Serve {
    /// `server` asking for consent as `--confirm`,
    /// `--confirm-unsupported` and `--consent-key-file` say.
    pub fn consent(
        &self,
        server: proto_ai_tools_mcp::McpServer,
    ) -> Result<proto_ai_tools_mcp::McpServer, Failure> {
        let server = server
            .with_confirm(self.confirm.unwrap_or_default())
            .with_confirm_unsupported(self.confirm_unsupported.unwrap_or_default());
        Ok(match &self.consent_key_file {
            Some(path) => server.with_consent_key(read_secret("--consent-key-file", path)?),
            None => server,
        })
    }
}

/// What a command line asks for.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Help or the version, for stdout.
    Print(String),
    /// `completions SHELL`.
    Completions(clap_complete::Shell),
    /// `protos --out DIR [--force]`.
    Protos { out: PathBuf, force: bool },
    /// `mcp` or `tools`, checked.
    Run(Box<Args>),
}

/// A checked `mcp` or `tools` command line.
#[derive(Debug, Default)]
pub(crate) struct Args {
    /// `mcp` or `tools`.
    pub command: &'static str,
    pub common: Common,
    /// `mcp`'s flags; their defaults for `tools`.
    pub serve: Serve,
    /// `tools`'s flags; their defaults for `mcp`.
    pub listing: Listing,
}

/// The command line as clap sees it, with an environment variable on every
/// flag (one set to the empty string counts as unset) and, as the
/// hand-written parser did, the last of a flag given twice winning.
pub(crate) fn command() -> clap::Command {
    // Wrapped at 100 columns, the help's own width, whatever the terminal's.
    Cli::command().term_width(100).mut_subcommands(|sub| {
        // `protos` writes files: a stray AI_TOOLS_FORCE must not turn on
        // overwriting.
        if sub.get_name() == "protos" {
            return sub.args_override_self(true);
        }
        sub.args_override_self(true).mut_args(|arg| {
            let Some(long) = arg.get_long().map(str::to_owned) else {
                return arg;
            };
            if matches!(long.as_str(), "help" | "version") {
                return arg;
            }
            // An empty variable is unset, as a container's `VAR=` means.
            let var = env_name(&long);
            if std::env::var_os(&var).is_some_and(|value| value.is_empty()) {
                return arg;
            }
            let arg = arg.env(var);
            // A switch from the environment: true or false (also yes/no,
            // on/off, 1/0), so that a variable can turn one off.
            if matches!(arg.get_action(), ArgAction::SetTrue) {
                arg.value_parser(BoolishValueParser::new())
            } else {
                // `--idle-timeout -1` reaches the check, which says what to
                // give, rather than being taken for a flag.
                arg.allow_negative_numbers(true)
            }
        })
    })
}

/// `argv` (the program's name first) parsed: the command line, then the
/// environment, then `--config`'s file, the first that sets a flag winning;
/// then the rules between flags checked.
pub(crate) fn parse(argv: Vec<OsString>) -> Result<Parsed, Failure> {
    let named = named_command(&argv);
    let first = match command().try_get_matches_from(&argv) {
        Ok(matches) => matches,
        Err(e) => return clap_outcome(&e, named).map_err(|f| from_env(f, &argv)),
    };
    let Some((name, given)) = first.subcommand() else {
        return Err(Failure::Usage(
            "name a command: `mcp`, `tools`, `protos` or `completions`; see `ai-tools --help`"
                .into(),
        ));
    };
    let cli = match name {
        "mcp" | "tools" => {
            let full = command();
            let sub = full.find_subcommand(name).ok_or_else(|| {
                Failure::Usage(format!("no command `{name}`; see `ai-tools --help`"))
            })?;
            let sources = value_sources(sub, given);
            // Where the command line sets one of several alternatives, the
            // others' variables are not read.
            let env_dropped: Vec<String> = ALTERNATIVES
                .iter()
                .filter(|group| {
                    group
                        .iter()
                        .any(|long| sources.get(*long) == Some(&ValueSource::CommandLine))
                })
                .flat_map(|group| group.iter())
                .filter(|long| sources.get(**long) == Some(&ValueSource::EnvVariable))
                .filter_map(|long| id_of(sub, long))
                .collect();
            let file = given.get_one::<PathBuf>("config").cloned();
            let file_arguments = match &file {
                Some(path) => crate::config::arguments(path, name, &full, &sources)?,
                None => Vec::new(),
            };
            if file_arguments.is_empty() && env_dropped.is_empty() {
                Cli::from_arg_matches(&first)
            } else {
                let mut again = full.clone();
                for id in &env_dropped {
                    again = again.mut_subcommand(name, |sub| sub.mut_arg(id, |arg| arg.env(None)));
                }
                let mut argv = argv;
                argv.extend(file_arguments);
                let matches = again.try_get_matches_from(argv).map_err(|e| {
                    let message = usage_message(&e, named);
                    Failure::Usage(match &file {
                        Some(path) => format!("the config file {}: {message}", path.display()),
                        None => message,
                    })
                })?;
                Cli::from_arg_matches(&matches)
            }
        }
        _ => Cli::from_arg_matches(&first),
    };
    let cli = match cli {
        Ok(cli) => cli,
        Err(e) => return clap_outcome(&e, named),
    };
    let args = match cli.command {
        Command::Mcp(flags) => {
            let McpFlags { common, serve } = *flags;
            Args {
                command: "mcp",
                common,
                serve,
                listing: Listing::default(),
            }
        }
        Command::Tools(flags) => {
            let ToolsFlags { common, listing } = *flags;
            Args {
                command: "tools",
                common,
                serve: Serve::default(),
                listing,
            }
        }
        Command::Completions { shell } => return Ok(Parsed::Completions(shell)),
        Command::Protos { out, force } => return Ok(Parsed::Protos { out, force }),
    };
    // A rule broken by a flag from the file says so: the file is not in
    // sight on the command line.
    check(&args).map_err(|failure| match (failure, &args.common.config) {
        (Failure::Usage(message), Some(path)) => Failure::Usage(format!(
            "{message} (with the flags of the config file {})",
            path.display()
        )),
        (failure, _) => failure,
    })?;
    Ok(Parsed::Run(Box::new(args)))
}

/// Where each flag of the subcommand `sub` got its value, by long name:
/// the command line, the environment, or nowhere (absent, or a default).
pub(crate) fn value_sources(
    sub: &clap::Command,
    given: &clap::ArgMatches,
) -> HashMap<String, ValueSource> {
    sub.get_arguments()
        .filter_map(|arg| {
            let long = arg.get_long()?;
            let source = given.value_source(arg.get_id().as_str())?;
            Some((long.to_owned(), source))
        })
        .filter(|(_, source)| *source != ValueSource::DefaultValue)
        .collect()
}

/// The id of the flag `--long` of `sub` (the field's name, which is not
/// always the flag's).
fn id_of(sub: &clap::Command, long: &str) -> Option<String> {
    sub.get_arguments()
        .find(|arg| arg.get_long() == Some(long))
        .map(|arg| arg.get_id().as_str().to_owned())
}

/// The subcommand `argv` names, if any: for the hint of an error.
fn named_command(argv: &[OsString]) -> Option<&'static str> {
    argv.iter()
        .skip(1)
        .find(|arg| !arg.to_string_lossy().starts_with('-'))
        .and_then(|arg| match arg.to_str() {
            Some("mcp") => Some("mcp"),
            Some("tools") => Some("tools"),
            Some("protos") => Some("protos"),
            Some("completions") => Some("completions"),
            _ => None,
        })
}

/// `failure`, saying which environment variable gave the flag it names
/// when the command line did not: a value from the environment is not in
/// sight when the error is read.
fn from_env(failure: Failure, argv: &[OsString]) -> Failure {
    let Failure::Usage(message) = failure else {
        return failure;
    };
    // The first flag quoted in the message.
    let flag = message
        .split('`')
        .skip(1)
        .step_by(2)
        .find_map(|quoted| quoted.split([' ', '=']).next()?.strip_prefix("--"));
    let Some(long) = flag else {
        return Failure::Usage(message);
    };
    let on_command_line = argv.iter().any(|arg| {
        let arg = arg.to_string_lossy();
        arg == format!("--{long}") || arg.starts_with(&format!("--{long}="))
    });
    let var = env_name(long);
    if on_command_line || std::env::var_os(&var).is_none() {
        return Failure::Usage(message);
    }
    Failure::Usage(format!("{message} (from the environment: {var})"))
}

/// A clap error as what `main` does with it: help and the version are
/// printed (exit 0), the rest is a usage error (exit 2).
fn clap_outcome(e: &clap::Error, named: Option<&str>) -> Result<Parsed, Failure> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Ok(Parsed::Print(e.to_string())),
        _ => Err(Failure::Usage(usage_message(e, named))),
    }
}

/// A clap error in the words of the rest of the command's errors
/// (backticks, `see … --help`); a flag of the other command says so.
pub(crate) fn usage_message(e: &clap::Error, named: Option<&str>) -> String {
    let see = match named {
        Some(name) => format!("see `ai-tools {name} --help`"),
        None => "see `ai-tools --help`".to_owned(),
    };
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => None,
    };
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let arg = context(ContextKind::InvalidArg).unwrap_or_default();
            let long = arg.split('=').next().unwrap_or_default();
            let other = named.and_then(|name| {
                let other = if name == "mcp" { "tools" } else { "mcp" };
                let flag = long.strip_prefix("--")?;
                command()
                    .find_subcommand(other)?
                    .get_arguments()
                    .any(|a| a.get_long() == Some(flag))
                    .then_some(other)
            });
            match (other, context(ContextKind::SuggestedArg)) {
                (Some(other), _) => {
                    format!("unexpected argument `{arg}`: `{long}` is for `{other}`; {see}")
                }
                (None, Some(suggested)) => {
                    format!("unexpected argument `{arg}`; did you mean `{suggested}`? {see}")
                }
                (None, None) => format!("unexpected argument `{arg}`; {see}"),
            }
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "name a command: `mcp`, `tools`, `protos` or `completions`; see `ai-tools --help`"
                .to_owned()
        }
        ErrorKind::InvalidSubcommand => {
            let given = context(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!(
                "unknown command `{given}`: name `mcp`, `tools`, `protos` or `completions`; see `ai-tools --help`"
            )
        }
        // Our own checks' messages name the flag and the value already.
        ErrorKind::ValueValidation if e.get(ContextKind::InvalidArg).is_none() => {
            let text = e.to_string();
            text.trim().trim_start_matches("error: ").to_owned()
        }
        _ => {
            let text = e.to_string();
            let text = text.trim().trim_start_matches("error: ");
            // clap ends with its own hint; ours names the command.
            let text = text
                .split("\n\nFor more information, try")
                .next()
                .unwrap_or(text)
                .replace("\n\nUsage:", "\nusage:");
            format!("{text}\n{see}")
        }
    }
}

/// The rules between flags that clap's declarations do not say, as usage
/// errors that say what to do.
fn check(args: &Args) -> Result<(), Failure> {
    let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
    let source = &args.common.source;
    let sources = usize::from(source.reflection)
        + usize::from(source.descriptor_set.is_some())
        + usize::from(source.proto.is_some());
    if sources != 1 {
        return usage(
            "give exactly one of `--reflection`, `--descriptor-set FILE` and `--proto FILE`",
        );
    }
    if (source.proto_cache.is_some() || source.no_proto_cache) && source.proto.is_none() {
        return usage("`--proto-cache` and `--no-proto-cache` are for `--proto`");
    }
    if source.proto_cache.is_some() && source.no_proto_cache {
        return usage(
            "`--proto-cache DIR` keeps what `--no-proto-cache` says not to keep: give one",
        );
    }
    if source.reflection_timeout.is_some() && !source.reflection {
        return usage("`--reflection-timeout` is for `--reflection`");
    }
    if args.common.choice.plain_fields.is_some() && args.common.choice.services.is_empty() {
        return usage("`--plain-fields` is for the services exposed whole: give `--service NAME`");
    }
    if args.common.max_output_schema_bytes.is_some() && !args.common.output_schemas {
        return usage(
            "`--max-output-schema-bytes` bounds what `--output-schemas` lists: give `--output-schemas`",
        );
    }
    let serve = &args.serve;
    if !serve.defined_toolsets.is_empty() && !serve.tool_search {
        return usage(
            "`--define-toolset` makes a toolset for `--tool-search`: give `--tool-search`",
        );
    }
    if !serve.toolsets.is_empty() && !serve.tool_search {
        return usage(
            "`--toolset` says which tools `--tool-search` lists from the start: give `--tool-search`",
        );
    }
    check_embeddings(serve)?;
    args.common.tls.check(source.grpc.as_deref())?;
    serve.auth.check(args)?;
    serve.scopes.check(args)?;
    if source.reflection && source.grpc.is_none() {
        return usage("`--reflection` asks the server: give `--grpc URL`");
    }
    if args.command == "mcp" {
        if source.grpc.is_none() {
            return usage("`mcp` calls a server: give `--grpc URL`");
        }
        if serve.stdio == serve.http.is_some() {
            return usage("`mcp` serves over one transport: give `--stdio` or `--http ADDR`");
        }
        if serve.stdio && !serve.http_limits.is_empty() {
            return usage(
                "the HTTP limits (`--max-body-bytes`, `--max-sessions`, …) are for `mcp --http`",
            );
        }
    }
    Ok(())
}

/// The retrieval-by-meaning flags: for `--tool-search`, one source, and
/// an endpoint's model named.
fn check_embeddings(serve: &Serve) -> Result<(), Failure> {
    let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
    let local = serve.embedding_model.is_some();
    let remote = serve.embeddings_url.is_some();
    if (local || remote) && !serve.tool_search {
        return usage(&format!(
            "`{}` finds tools by meaning for `--tool-search`'s search: give `--tool-search`",
            if local {
                "--embedding-model"
            } else {
                "--embeddings-url"
            }
        ));
    }
    if local && remote {
        return usage(
            "give one source of embeddings: `--embedding-model DIR` (a local model) or `--embeddings-url URL` (an endpoint), not both",
        );
    }
    if remote && serve.embeddings_model.is_none() {
        return usage(
            "`--embeddings-url` needs the name of the endpoint's model: give `--embeddings-model NAME`",
        );
    }
    if serve.embeddings_model.is_some() && !remote {
        return usage(
            "`--embeddings-model` names the model of an embeddings endpoint: give `--embeddings-url URL`",
        );
    }
    if serve.embeddings_cache.is_some() && !local && !remote {
        return usage(
            "`--embeddings-cache` keeps the embeddings of `--embedding-model` or `--embeddings-url`: give one",
        );
    }
    Ok(())
}

/// The rules between the alias flags and `--http`, with the rest of
/// [`check`]: here beside [`Args`], so that `store.rs`, which declares the
/// flags, does not import the command line that holds them.
impl ScopeFlags {
    fn check(&self, args: &Args) -> Result<(), Failure> {
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        if (self.alias_scope_header.is_some() || self.single_user) && args.serve.http.is_none() {
            return usage(
                "`--alias-scope-header` and `--single-user` choose the alias scope of stateless HTTP requests: they are for `mcp --http` (over stdio the scope is the process)",
            );
        }
        if self.redis.is_some() && !self.redis_cluster.is_empty() {
            return usage("give one alias store: `--redis URL` or `--redis-cluster URL`…");
        }
        if (self.redis_wait_replicas.is_some() || self.redis_wait_timeout.is_some())
            && self.redis.is_none()
            && self.redis_cluster.is_empty()
        {
            return usage(
                "`--redis-wait-replicas` and `--redis-wait-timeout` say how a Redis store replicates: give `--redis URL` or `--redis-cluster URL`",
            );
        }
        Ok(())
    }
}

/// The rules between the security flags and the others (the command,
/// `--http`, `--forward-header`), with the rest of [`check`]: here beside
/// [`Args`], so that `auth.rs`, which declares the flags, does not import
/// the command line that holds them.
impl AuthFlags {
    /// A usage error for flags given without what they need.
    fn check(&self, args: &Args) -> Result<(), Failure> {
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        if self.backend_token_file.is_some() && self.backend_token_env.is_some() {
            return usage(
                "give the backend token once: `--backend-token-file` or `--backend-token-env`",
            );
        }
        let forwards_authorization = args
            .serve
            .forward_headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case("authorization"));
        if self.backend_token_given() && forwards_authorization {
            return usage(
                "`--forward-header authorization` and a backend token both set the service's `authorization`: a caller's header would replace the gateway's credential, and a caller without one would get it; keep one",
            );
        }
        if !self.oauth_given() {
            return Ok(());
        }
        if args.command != "mcp" || args.serve.http.is_none() {
            return usage(
                "the OAuth flags protect `mcp --http`: over stdio the client runs the server itself and sends no tokens",
            );
        }
        if self.issuer.is_none() || self.audience.is_none() {
            return usage(
                "OAuth needs both `--oauth-issuer URL` (who issues the tokens) and `--oauth-audience URI` (this server's resource URI, which every token must name)",
            );
        }
        let introspection = [
            self.introspection.is_some(),
            self.client_id.is_some(),
            self.client_secret_file.is_some(),
        ];
        if introspection.contains(&true) && introspection.contains(&false) {
            return usage(
                "`--oauth-introspection URL`, `--oauth-client-id ID` and `--oauth-client-secret-file FILE` go together: give all three",
            );
        }
        if forwards_authorization {
            return usage(
                "`--forward-header authorization` with `--oauth-issuer` would pass the caller's token, issued for this server, on to the service, which the MCP authorization spec forbids: send who the caller is with `--claim-header`, and the gateway's own credential with `--backend-token-file`",
            );
        }
        Ok(())
    }
}

/// `--define-toolset NAME=GLOB[,GLOB…]`.
fn define_toolset(flag: &str, given: &str) -> Result<(String, Vec<String>), String> {
    let (name, globs) = given
        .split_once('=')
        .filter(|(name, globs)| !name.is_empty() && !globs.is_empty())
        .ok_or_else(|| {
            format!("`{flag} {given}`: give NAME=GLOB[,GLOB...], e.g. reading='*_list,*_get'")
        })?;
    Ok((
        name.to_owned(),
        globs.split(',').map(str::to_owned).collect(),
    ))
}

fn log_format(flag: &str, format: &str) -> Result<LogFormat, String> {
    match format {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err(format!("`{flag} {format}`: use `text` or `json`")),
    }
}

fn plain_fields(flag: &str, choice: &str) -> Result<PlainFields, String> {
    match choice {
        "optional" => Ok(PlainFields::Optional),
        "required" => Ok(PlainFields::Required),
        _ => Err(format!(
            "`{flag} {choice}`: use `optional` (only fields marked field_behavior = REQUIRED are required) or `required` (every field that is not optional or in a oneof)"
        )),
    }
}

fn json_names(flag: &str, names: &str) -> Result<JsonNames, String> {
    names
        .parse::<JsonNames>()
        .map_err(|e| format!("`{flag} {names}`: {e}"))
}

fn confirm_class(flag: &str, class: &str) -> Result<ConfirmClass, String> {
    class
        .parse::<ConfirmClass>()
        .map_err(|e| format!("`{flag} {class}`: {e}"))
}

fn confirm_unsupported(flag: &str, choice: &str) -> Result<Unsupported, String> {
    choice
        .parse::<Unsupported>()
        .map_err(|e| format!("`{flag} {choice}`: {e}"))
}

fn host_profile(flag: &str, name: &str) -> Result<HostProfile, String> {
    name.parse::<HostProfile>()
        .map_err(|e| format!("`{flag} {name}`: {e}"))
}

fn dialect(flag: &str, name: &str) -> Result<String, String> {
    if DIALECTS.contains(&name) {
        return Ok(name.to_owned());
    }
    Err(format!(
        "unknown dialect `{name}` (`{flag}`): use openai, anthropic, gemini, mcp, openai_tool_search or anthropic_tool_search"
    ))
}
