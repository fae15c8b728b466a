//! Where a flag's value may come from besides the command line: the names
//! of its environment variable, and the flags of which one at most is
//! meant. Read by the parser (`flags.rs`) and the config file
//! (`config.rs`) alike.

/// The prefix of every flag's environment variable: `--grpc` is
/// `AI_TOOLS_GRPC`, `--forward-header` `AI_TOOLS_FORWARD_HEADER`.
pub(crate) const ENV_PREFIX: &str = "AI_TOOLS_";

/// The environment variable of the flag `--long`.
pub(crate) fn env_name(long: &str) -> String {
    format!(
        "{ENV_PREFIX}{}",
        long.to_ascii_uppercase().replace('-', "_")
    )
}

/// Flags of which one at most is meant: given on the command line, one
/// drops the others' environment variables and config-file keys, so that
/// `--proto` overrides `AI_TOOLS_REFLECTION=true` rather than clashing.
pub(crate) const ALTERNATIVES: [&[&str]; 5] = [
    &["reflection", "descriptor-set", "proto"],
    &["embedding-model", "embeddings-url"],
    &["stdio", "http"],
    &["backend-token-file", "backend-token-env"],
    &["redis", "redis-cluster"],
];
