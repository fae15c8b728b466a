//! `ANNOTATION_DESCRIPTORS` is the compiled form of the annotation protos it
//! names. After editing one of them, run this test with
//! `AI_TOOLS_BLESS=1` to write the new bytes.

use proto_ai_tools_schema::{ANNOTATION_DESCRIPTORS, AnnotationFileResolver};
use protox::file::{ChainFileResolver, GoogleFileResolver};

#[test]
fn annotation_descriptors_match_their_sources() {
    let mut resolver = ChainFileResolver::new();
    resolver.add(AnnotationFileResolver);
    resolver.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(false);
    for file in proto_ai_tools_schema::OVERLAY_ANNOTATION_PROTOS {
        compiler
            .open_file(file)
            .expect("the annotation protos compile");
    }
    let compiled = compiler.encode_file_descriptor_set();
    if std::env::var_os("AI_TOOLS_BLESS").is_some() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proto/annotations.binpb");
        std::fs::write(&path, &compiled).expect("written");
        return;
    }
    assert!(
        compiled == ANNOTATION_DESCRIPTORS,
        "proto/annotations.binpb is stale: run this test with AI_TOOLS_BLESS=1"
    );
    let pool = prost_reflect::DescriptorPool::decode(ANNOTATION_DESCRIPTORS).expect("decodes");
    assert!(
        pool.get_extension_by_name("ai.context.v1.rpc_tool")
            .is_some()
    );
    assert!(
        pool.get_extension_by_name("ai.tools.v1.tool_field")
            .is_some()
    );
}
