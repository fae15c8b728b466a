//! The compile-time diagnostics of `ai_tools!` and `#[derive(ToolInput)]`.
//!
//! Nothing here but the tests: `tests/diagnostics.rs` and
//! `tests/derive_diagnostics.rs` build every case in `trybuild-cases/` and
//! compare its errors with the case's `.stderr` file. A crate of their own
//! keeps trybuild's build of the cases to the few dependencies they use.
