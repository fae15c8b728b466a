//! What a file's `source_code_info` says of an element: its leading comment
//! (a description the model reads) and where it starts (the line and column
//! of a diagnostic).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use prost_reflect::{DescriptorPool, FileDescriptor};

use super::rpc_tool::rpc_tool_number;
use crate::diagnostic::Diagnostic;

/// `FieldDescriptorProto.options`
pub(super) const FIELD_OPTIONS: i32 = 8;
/// `MethodDescriptorProto.options`
pub(crate) const METHOD_OPTIONS: i32 = 4;

/// The leading comment of the element at `path` in `file`: comment lines with
/// one leading space stripped, joined with `\n`, trimmed; `None` if empty or
/// the file has no source info.
///
/// The comments of a file are indexed once per descriptor pool, so a lookup
/// does not scan the file.
pub fn leading_comment(file: &FileDescriptor, path: &[i32]) -> Option<String> {
    shared_index(file).get(path).cloned()
}

/// A raw leading comment as the model reads it: one leading space stripped
/// per line, lines joined with `\n`, trimmed; `None` when nothing is left.
fn clean_comment(raw: &str) -> Option<String> {
    let text = raw
        .lines()
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The leading comments of the files of a pool, indexed by descriptor path
/// once per file: looking each element's comment up by scanning every
/// location made schema building quadratic in the size of a file.
#[derive(Default)]
pub(super) struct Comments {
    by_file: RefCell<HashMap<String, Arc<CommentIndex>>>,
}

/// One file's cleaned leading comments by descriptor path.
type CommentIndex = HashMap<Vec<i32>, String>;

impl Comments {
    pub(super) fn get(&self, file: &FileDescriptor, path: &[i32]) -> Option<String> {
        let index = Arc::clone(
            self.by_file
                .borrow_mut()
                .entry(file.name().to_owned())
                .or_insert_with(|| shared_index(file)),
        );
        index.get(path).cloned()
    }
}

/// How many pools' comment indexes are kept: the pools a process works on
/// at once (a tool set's, a macro expansion's and its overlay's).
const RECENT_POOLS: usize = 4;

/// The comment indexes of the pools used last, each kept with its pool.
/// Holding the pool (a reference-counted handle) keeps it alive, so an
/// index can never be taken for a later pool at the same address. Each
/// schema is built with annotations of its own, and a thousand tools of one
/// large file (Compute Engine's 1 MB `compute.proto`) re-indexed that file
/// a thousand times without this.
static RECENT: Mutex<Vec<PoolComments>> = Mutex::new(Vec::new());

/// A pool and the comment indexes of its files, by file name.
type PoolComments = (DescriptorPool, HashMap<String, Arc<CommentIndex>>);

/// The comment index of `file`, built once per pool.
fn shared_index(file: &FileDescriptor) -> Arc<CommentIndex> {
    let pool = file.parent_pool();
    {
        let mut recent = RECENT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = recent.iter().position(|(kept, _)| kept == pool) {
            // Used last: kept longest.
            let entry = recent.remove(at);
            recent.push(entry);
            if let Some(index) = recent.last().and_then(|(_, files)| files.get(file.name())) {
                return Arc::clone(index);
            }
        }
    }
    // Built without the lock: another thread may build it too, and the
    // first one kept wins.
    let built = Arc::new(index_comments(file));
    let mut recent = RECENT.lock().unwrap_or_else(PoisonError::into_inner);
    let at = match recent.iter().position(|(kept, _)| kept == pool) {
        Some(at) => at,
        None => {
            if recent.len() >= RECENT_POOLS {
                recent.remove(0);
            }
            recent.push((pool.clone(), HashMap::new()));
            recent.len() - 1
        }
    };
    Arc::clone(recent[at].1.entry(file.name().to_owned()).or_insert(built))
}

fn index_comments(file: &FileDescriptor) -> CommentIndex {
    let Some(info) = file.file_descriptor_proto().source_code_info.as_ref() else {
        return HashMap::new();
    };
    let mut index = HashMap::new();
    for location in &info.location {
        if let Some(text) = location.leading_comments.as_deref().and_then(clean_comment) {
            // The first location of a path that has a comment wins.
            index.entry(location.path.clone()).or_insert(text);
        }
    }
    index
}

pub(crate) type Location = (Option<u32>, Option<u32>);

/// The 1-based start of the most specific of `paths` that has a location.
fn location_of(file: &FileDescriptor, paths: &[Vec<i32>]) -> Location {
    let Some(info) = file.file_descriptor_proto().source_code_info.as_ref() else {
        return (None, None);
    };
    for path in paths {
        if let Some(loc) = info.location.iter().find(|l| &l.path == path)
            && let [line, column, ..] = loc.span[..]
        {
            let one_based = |n: i32| u32::try_from(n).ok().map(|n| n.saturating_add(1));
            return (one_based(line), one_based(column));
        }
    }
    (None, None)
}

pub(crate) fn option_location(
    file: &FileDescriptor,
    path: &[i32],
    options: i32,
    ext: u32,
) -> Location {
    let ext = i32::try_from(ext).unwrap_or(i32::MAX);
    let mut with_option = path.to_vec();
    with_option.extend([options, ext]);
    location_of(file, &[with_option, path.to_vec()])
}

pub(crate) fn option_location_field(
    file: &FileDescriptor,
    path: &[i32],
    options: i32,
    ext: u32,
    field: i32,
) -> Location {
    let ext = i32::try_from(ext).unwrap_or(i32::MAX);
    let mut with_field = path.to_vec();
    with_field.extend([options, ext, field]);
    let mut with_option = path.to_vec();
    with_option.extend([options, ext]);
    location_of(file, &[with_field, with_option, path.to_vec()])
}

pub(super) fn diag(file: &FileDescriptor, (line, column): Location, message: String) -> Diagnostic {
    Diagnostic {
        file: file.name().to_owned(),
        line,
        column,
        message,
    }
}

/// A diagnostic about the method `method` (its simple name, e.g.
/// `CreateLink`) of the service `service` (its full name, e.g.
/// `links.v1.LinksService`), located as [`tools_in_file`](crate::tools_in_file)
/// locates its diagnostics about a whole tool: at the method's `rpc_tool`
/// option, else at the method (an option written from outside the proto,
/// as by an [overlay](crate::overlay), has no location of its own).
///
/// For a problem the schema crate does not see by itself: `ai_tools!` puts
/// the error of two tools whose Rust names would collide here. Without
/// source info the diagnostic has no line; for a method `pool` does not
/// have, it has none either and its `file` is `service`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::{AnnotationFileResolver, proto::method_diagnostic};
/// use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
///
/// struct Memory;
/// impl FileResolver for Memory {
///     fn open_file(&self, name: &str) -> Result<File, protox::Error> {
///         match name {
///             "ping.proto" => File::from_source(name, r#"syntax = "proto3";
/// package ping.v1;
/// import "ai/tools/v1/rpc_tool.proto";
/// message Ping {}
/// service Pinger {
///   rpc Send(Ping) returns (Ping) {
///     option (ai.tools.v1.rpc_tool) = { name: "ping" description: "Ping." };
///   }
/// }
/// "#),
///             _ => Err(protox::Error::file_not_found(name)),
///         }
///     }
/// }
///
/// let mut resolver = ChainFileResolver::new();
/// resolver.add(Memory);
/// resolver.add(AnnotationFileResolver);
/// resolver.add(GoogleFileResolver::new());
/// let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// compiler.include_imports(true).include_source_info(true);
/// compiler.open_file("ping.proto").expect("compiles");
/// let pool = compiler.descriptor_pool();
///
/// let diagnostic = method_diagnostic(&pool, "ping.v1.Pinger", "Send", "too late".to_owned());
/// assert_eq!(diagnostic.to_string(), "ping.proto:7:5: too late");
/// let unknown = method_diagnostic(&pool, "ping.v1.Pinger", "Receive", "no such rpc".to_owned());
/// assert_eq!(unknown.to_string(), "ping.v1.Pinger: no such rpc");
/// ```
pub fn method_diagnostic(
    pool: &DescriptorPool,
    service: &str,
    method: &str,
    message: String,
) -> Diagnostic {
    let found = pool
        .get_service_by_name(service)
        .and_then(|s| s.methods().find(|m| m.name() == method));
    match found {
        Some(method) => {
            let file = method.parent_file();
            let at = option_location(
                &file,
                method.path(),
                METHOD_OPTIONS,
                rpc_tool_number(&method),
            );
            diag(&file, at, message)
        }
        None => Diagnostic::unlocated(service, message),
    }
}
