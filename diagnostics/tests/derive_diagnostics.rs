//! Every misuse of `#[derive(ToolInput)]` is a compile error under the
//! erroneous token: one case per mistake in `trybuild-cases/derive/`.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite` and read the diff.

#[test]
fn derive_misuse_is_a_compile_error() {
    trybuild::TestCases::new().compile_fail("../trybuild-cases/derive/*.rs");
}
