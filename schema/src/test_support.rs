//! In-memory proto compilation for unit tests.

use prost_reflect::DescriptorPool;
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::annotation_protos::AnnotationFileResolver;

struct Memory(Vec<(String, String)>);

impl FileResolver for Memory {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.0.iter().find(|(n, _)| n == name) {
            Some((n, source)) => File::from_source(n, source),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// Compiles `source` as `test.proto`, with the annotation protos importable.
pub(crate) fn compile(source: &str) -> DescriptorPool {
    compile_files(&[("test.proto", source)], "test.proto")
}

/// Compiles `main` out of `files` (plus the annotation protos).
pub(crate) fn compile_files(files: &[(&str, &str)], main: &str) -> DescriptorPool {
    let files = files
        .iter()
        .map(|(n, s)| ((*n).to_owned(), (*s).to_owned()))
        .collect();
    let mut resolver = ChainFileResolver::new();
    // The test's own files first: a test may shadow an annotation proto.
    resolver.add(Memory(files));
    resolver.add(AnnotationFileResolver);
    resolver.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    if let Err(err) = compiler.open_file(main) {
        panic!("test proto does not compile: {err:?}");
    }
    compiler.descriptor_pool()
}

/// A proto3 file header importing every annotation.
pub(crate) const HEADER: &str = r#"syntax = "proto3";
package t;
import "ai/context/v1/annotations.proto";
import "ai/tools/v1/annotations.proto";
import "google/api/field_behavior.proto";
"#;
