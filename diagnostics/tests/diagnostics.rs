//! Every diagnostic of `ai_tools!` is pinned by a compile-fail case in
//! `trybuild-cases/`; `trybuild-cases/pass/` holds cases that must build and run.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite` and read the diff.

#[test]
fn compile_fail_cases() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("../trybuild-cases/*.rs");
    cases.pass("../trybuild-cases/pass/*.rs");
}
