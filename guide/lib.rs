//! The guide's chapters as doctests: every Rust block of `guide/src` is
//! compiled by `cargo test -p proto-ai-tools-guide --all-features --doc`, and
//! run unless it is marked `no_run` (it would reach a network: a gRPC
//! server, Redis, a model provider) or `ignore` (it is a file of a crate of
//! its own: a `build.rs`, an example, kept equal to `quickstart/` by that
//! crate's tests). A `proto/…` path in a block is found by `ai_tools!` in
//! the workspace's `proto/` directory, above this crate's own;
//! `tools/operations.tools.toml` beside this file is the overlay that
//! `overlays.md` shows, for its block to compile.
//!
//! The modules exist under `cfg(doctest)` only. Built always, `cargo doc`
//! would render the chapters as this crate's documentation, and rustdoc
//! would read their links (written for a Markdown reader: `limits.md`, the
//! names of the library's items in backticks) as intra-doc links it cannot
//! resolve, which CI's `-D warnings` refuses. The chapters are read as
//! Markdown, on the code host or with `mdbook build guide`; this crate only
//! tests them.

macro_rules! chapters {
    ($($module:ident => $file:literal),* $(,)?) => {
        $(
            #[cfg(doctest)]
            #[doc = include_str!($file)]
            pub mod $module {}
        )*
    };
}

chapters! {
    introduction => "src/introduction.md",
    quickstart => "src/quickstart.md",
    annotate => "src/annotate.md",
    overlays => "src/overlays.md",
    other_toolchains => "src/other-toolchains.md",
    execute => "src/execute.md",
    results => "src/results.md",
    streaming => "src/streaming.md",
    agent_loop => "src/agent-loop.md",
    mcp => "src/mcp.md",
    hosts => "src/hosts.md",
    cli => "src/cli.md",
    configure => "src/configure.md",
    consent => "src/consent.md",
    security => "src/security.md",
    limits => "src/limits.md",
    replicas => "src/replicas.md",
    observability => "src/observability.md",
    large_apis => "src/large-apis.md",
    providers => "src/providers.md",
    native_tools => "src/native-tools.md",
    rig => "src/rig.md",
    genai => "src/genai.md",
    reference_annotations => "src/reference/annotations.md",
    reference_schema_rules => "src/reference/schema-rules.md",
    reference_diagnostics => "src/reference/diagnostics.md",
    reference_features => "src/reference/features.md",
    reference_cli => "src/reference/cli.md",
}
