//! Proto source → descriptor pool, in pure Rust (protox), with the annotation
//! protos served from the schema crate so users need not copy them.

use std::path::{Path, PathBuf};

use miette::Diagnostic;
use prost_reflect::DescriptorPool;
use protox::file::{
    ChainFileResolver, File, FileResolver, GoogleFileResolver, IncludeFileResolver,
};

use crate::locate::Located;

/// A compiled proto file.
pub struct Compiled {
    /// The pool with every file the proto needs, custom options kept.
    pub pool: DescriptorPool,
    /// The pool encoded as a `FileDescriptorSet`, to embed in the expansion.
    pub encoded_pool: Vec<u8>,
    /// The name of the invoked file inside the pool (relative to its include directory).
    pub file_name: String,
    /// Every file read from disk, so the expansion can make the compiler watch them.
    pub read_files: Vec<PathBuf>,
}

/// Compiles `located.file` with its includes.
///
/// Lookup order for imports: the user's include directories, then the
/// well-known `google/protobuf` files, then the annotation protos that ship
/// with ai-tools. A user's own copy of an annotation proto therefore wins and
/// never clashes with ours.
pub fn compile(located: &Located) -> Result<Compiled, String> {
    let mut resolver = ChainFileResolver::new();
    for include in &located.includes {
        resolver.add(IncludeFileResolver::new(include.clone()));
    }
    resolver.add(GoogleFileResolver::new());
    resolver.add(AnnotationFileResolver);

    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file(&located.file)
        .map_err(|error| describe(&error, located))?;

    let file_name = compiler
        .files()
        .find(|file| !file.is_import())
        .map(|file| file.name().to_owned())
        .ok_or_else(|| format!("`{}` compiled to nothing", located.file.display()))?;
    let read_files = compiler
        .files()
        .filter_map(|file| file.path())
        .map(absolute)
        .collect();
    Ok(Compiled {
        pool: compiler.descriptor_pool(),
        encoded_pool: compiler.encode_file_descriptor_set(),
        file_name,
        read_files,
    })
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Serves [`ai_tools_schema::ANNOTATION_PROTOS`].
struct AnnotationFileResolver;

impl FileResolver for AnnotationFileResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match ai_tools_schema::ANNOTATION_PROTOS
            .iter()
            .find(|(path, _)| *path == name)
        {
            Some((path, source)) => File::from_source(path, source),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// `file:line:col: what went wrong` plus how to fix it, from a protox error.
fn describe(error: &protox::Error, located: &Located) -> String {
    let message = error.to_string();
    let location = location(error);
    let hint = if message.starts_with("import '") {
        format!(
            "; the include directories are {}: add the directory that holds it with `includes = [...]`",
            list_dirs(&located.includes)
        )
    } else if message.contains("is not in any include path") {
        format!(
            "; it must sit under one of the include directories {}: add its top directory with `includes = [...]`",
            list_dirs(&located.includes)
        )
    } else if message.contains("is not defined") || message.contains("not found") {
        "; check the spelling and that the file declaring it is imported".to_owned()
    } else {
        String::new()
    };
    let help = error
        .help()
        .map(|help| format!(" ({help})"))
        .unwrap_or_default();
    match location {
        Some(location) => format!("{location}: {message}{help}{hint}"),
        None => match error.file() {
            Some(file) => format!("{file}: {message}{help}{hint}"),
            None => format!("{message}{help}{hint}"),
        },
    }
}

/// `file:line:col` of the first labelled span, 1-based.
fn location(error: &protox::Error) -> Option<String> {
    let source = error.source_code()?;
    let label = error.labels()?.next()?;
    let contents = source.read_span(label.inner(), 0, 0).ok()?;
    let file = contents
        .name()
        .map(str::to_owned)
        .or_else(|| error.file().map(str::to_owned))?;
    Some(format!(
        "{file}:{}:{}",
        contents.line() + 1,
        contents.column() + 1
    ))
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    let dirs: Vec<String> = dirs
        .iter()
        .map(|dir| format!("`{}`", dir.display()))
        .collect();
    dirs.join(", ")
}
