//! A large real API for the tests and benches of tool search: Google
//! Compute Engine v1 as npm's `google-proto-files` publishes it, every
//! service exposed whole, and the baseline a search must beat.

use std::path::Path;

use ai_tools::Toolkit;
use ai_tools::tool_set::{ToolSet, ToolSetOptions};
use ai_tools::transport::InProcessTransport;

/// Compute Engine v1, under the package's tree.
pub const COMPUTE: &str = "google/cloud/compute/v1/compute.proto";

/// Every service of Compute Engine v1 under `tree` (the package's root) as
/// tools, in a toolkit whose calls go nowhere.
///
/// # Panics
///
/// When the proto does not compile or its tools do not build: a fixture
/// that is broken stops the test.
#[allow(clippy::expect_used)]
pub fn compute_toolkit(tree: &Path) -> Toolkit {
    let mut compiler =
        protox::Compiler::with_file_resolver(ai_tools_schema::proto_resolver(&[tree.to_owned()]));
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file(COMPUTE)
        .expect("compute.proto compiles as published");
    let options = ToolSetOptions::new().service("google.cloud.compute.v1.*");
    let set = ToolSet::from_descriptor_set(&compiler.encode_file_descriptor_set(), &options)
        .expect("every tool builds and checks");
    Toolkit::builder()
        .generated(set.executor(InProcessTransport::new()))
        .build()
        .expect("a toolkit")
}

/// The baseline of tool search: the indexes of `names` ranked by how many
/// words of `text` (of three letters or more) they contain, ties in list
/// order; names with none left out.
pub fn substring_ranking(names: &[String], text: &str) -> Vec<usize> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                words.iter().filter(|w| name.contains(w.as_str())).count(),
                i,
            )
        })
        .filter(|(hits, _)| *hits > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| i).collect()
}
