//! What goes wrong, as `main` says it: a usage error (exit 2) or a
//! failure (exit 1). Every module returns it, so it stands apart from
//! `main.rs`, which only turns it into the exit code.

/// A usage error (exit 2) or a failure (exit 1).
#[derive(Debug)]
pub(crate) enum Failure {
    Usage(String),
    Run(String),
}
