//! The expansion of `ai_tools!` compiles cleanly under strict lints, so that
//! it never adds warnings to a user's crate (as thiserror's `test_lints.rs`).

#![deny(
    missing_docs,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    rust_2018_idioms,
    clippy::all,
    clippy::pedantic
)]

/// Generated tools of the example proto.
pub mod gentools {
    ai_tools::ai_tools!("proto/links/v1/links.proto");
}

#[test]
fn expansion_is_lint_clean_and_usable() {
    let tools = gentools::all_tools();
    assert_eq!(tools.len(), gentools::ALL_TOOLS.len());
    assert_eq!(tools[0], &gentools::LINKS_CREATE);
    assert!(
        gentools::descriptor_pool()
            .get_message_by_name("links.v1.Link")
            .is_some()
    );
}
