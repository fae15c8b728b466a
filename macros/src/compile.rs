//! Proto source → descriptor pool, in pure Rust (protox), with the annotation
//! protos served from the schema crate so users need not copy them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use miette::Diagnostic;
use prost_reflect::DescriptorPool;
use prost_reflect::prost_types::source_code_info::Location;
use prost_reflect::prost_types::{FileDescriptorProto, SourceCodeInfo};
use protox::file::{ChainFileResolver, File, FileResolver};

use crate::locate::Located;

/// A compiled proto file.
pub struct Compiled {
    /// The pool with every file the proto needs, custom options kept.
    pub pool: DescriptorPool,
    /// The name of the invoked file inside the pool (relative to its include directory).
    pub file_name: String,
    /// Every file read from disk, so the expansion can make the compiler watch them.
    pub read_files: Vec<PathBuf>,
    /// The pool encoded with source info (locations and comments), for
    /// writing annotations in ([`proto_ai_tools_schema::overlay::annotate`]) and
    /// for [`embedded_pool`](Self::embedded_pool).
    pub encoded_with_source: Vec<u8>,
}

impl Compiled {
    /// What the expansion embeds: the pool with leading comments only
    /// ([`comments_only`]). Made once, when the expansion is written, and
    /// not by every compile (an overlay replaces the pool first; a baseline
    /// that compiles the same proto has no use for it).
    pub fn embedded_pool(&self) -> Vec<u8> {
        comments_only(&self.encoded_with_source)
    }
}

/// Compiles `located.file` with its includes.
///
/// Lookup order for imports: the user's include directories, then the
/// well-known `google/protobuf` files, then the annotation protos that ship
/// with ai-tools. A user's own copy of an annotation proto therefore wins and
/// never clashes with ours.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the macro calls `compile_with`; tests and benches call this"
    )
)]
pub fn compile(located: &Located) -> Result<Compiled, String> {
    compile_with(located, false)
}

/// [`compile`]; `with_annotations` compiles the annotation protos in as
/// well, so that annotations can be written into a proto that does not
/// import them (an overlay, whole-service mode).
///
/// The result is [`compile_plain`]'s: the same files read, the same encoded
/// descriptors byte for byte, and the pool protox made or, for a large proto
/// with many options, the pool decoded from those descriptors (as the
/// expansion decodes it at run time). It is made by [`compile_thin`], which
/// is several times faster on such a proto. When that
/// cannot vouch for its result (an error, a file that may shadow another),
/// the plain compile runs, so every error is worded and located exactly as
/// protox words and locates it.
pub fn compile_with(located: &Located, with_annotations: bool) -> Result<Compiled, String> {
    match compile_thin(located, with_annotations, THIN_ABOVE) {
        Some(compiled) => Ok(compiled),
        None => compile_plain(located, with_annotations),
    }
}

/// The compile as protox alone does it (what a `build.rs` runs): the
/// reference [`compile_with`] falls back to, and the benchmark's baseline.
pub fn compile_plain(located: &Located, with_annotations: bool) -> Result<Compiled, String> {
    let mut compiler = protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver(
        &located.includes,
    ));
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file(&located.file)
        .map_err(|error| describe(&error, located))?;

    let file_name = compiler
        .files()
        .find(|file| !file.is_import())
        .map(|file| file.name().to_owned())
        .ok_or_else(|| format!("`{}` compiled to nothing", located.file.display()))?;
    if with_annotations {
        for path in proto_ai_tools_schema::OVERLAY_ANNOTATION_PROTOS {
            compiler
                .open_file(path)
                .map_err(|error| describe(&error, located))?;
        }
    }
    let read_files = compiler
        .files()
        .filter_map(|file| file.path())
        .map(absolute)
        .collect();
    let pool = compiler.descriptor_pool();
    let encoded_with_source = compiler.encode_file_descriptor_set();
    Ok(Compiled {
        pool,
        file_name,
        read_files,
        encoded_with_source,
    })
}

/// The same compile as [`compile_plain`], without its quadratic step, or
/// `None` when it cannot vouch for giving the same result.
///
/// When prost-reflect (under protox) interprets an option, it rewrites the
/// path of that option's source locations, scanning every source location
/// of the file once per option: on a proto with a thousand custom options
/// and tens of thousands of locations, that scan is most of the compile.
/// Here protox is given each parsed file with only the locations such a
/// rewrite can touch (those whose path holds the `uninterpreted_option`
/// field number), and the file's full list is put back afterwards, with
/// those locations as rewritten, in their places. The pool is then decoded
/// from the set so completed, with its options already interpreted. (It
/// differs from protox's own pool only in how that one keeps an option it
/// interpreted itself: `google.api.field_behavior`, declared
/// `packed = false`, is packed there; the encoded sets are the same.)
///
/// Only a file where that scan would cost more than decoding the pool again
/// is thinned: one with more than `thin_above` pairs of a location an
/// option can rewrite and a location of the file. When no file is, the
/// compile is protox's own.
fn compile_thin(located: &Located, with_annotations: bool, thin_above: usize) -> Option<Compiled> {
    let stash = Rc::new(RefCell::new(Stash::default()));
    let mut compiler = protox::Compiler::with_file_resolver(ThinResolver {
        inner: proto_ai_tools_schema::proto_resolver(&located.includes),
        stash: Rc::clone(&stash),
        thin_above,
    });
    compiler.include_imports(true).include_source_info(true);
    compiler.open_file(&located.file).ok()?;
    let file_name = compiler
        .files()
        .find(|file| !file.is_import())
        .map(|file| file.name().to_owned())?;
    if with_annotations {
        for path in proto_ai_tools_schema::OVERLAY_ANNOTATION_PROTOS {
            compiler.open_file(path).ok()?;
        }
    }
    let stash = stash.borrow();
    // protox refuses a file given by path that an earlier include
    // directory shadows, comparing the path it was asked for with the one
    // its resolver opened; the files thinned here no longer say where they
    // were read from, so the comparison is made here (and any doubt left to
    // the plain compile).
    for (name, asked) in &stash.resolved {
        if let Some(Some(opened)) = stash.paths.get(name)
            && opened != asked
        {
            return None;
        }
    }
    let read_files = compiler
        .files()
        .filter_map(|file| match file.path() {
            Some(path) => Some(path),
            None => stash.paths.get(file.name())?.as_deref(),
        })
        .map(absolute)
        .collect();
    if stash.thinned.is_empty() {
        return Some(Compiled {
            pool: compiler.descriptor_pool(),
            file_name,
            read_files,
            encoded_with_source: compiler.encode_file_descriptor_set(),
        });
    }
    let thin = compiler.descriptor_pool();
    let encoded_with_source = complete_set(&thin.encode_to_vec(), |name| {
        let rewritten = thin.get_file_by_name(name)?;
        let rewritten = rewritten
            .file_descriptor_proto()
            .source_code_info
            .as_ref()?;
        stash.thinned.get(name)?.completed(rewritten)
    })?;
    let pool = DescriptorPool::decode(encoded_with_source.as_slice()).ok()?;
    Some(Compiled {
        pool,
        file_name,
        read_files,
        encoded_with_source,
    })
}

/// Above how many pairs of (a location an option can rewrite, a location of
/// the file) [`compile_with`] thins a file: about where rewriting in place
/// starts to cost more than decoding the pool a second time. The example
/// proto has 3,655 such pairs (17 × 215), the bench's 200-RPC proto
/// 105,748,530 (2,215 × 47,742).
const THIN_ABOVE: usize = 4_000_000;

/// `uninterpreted_option`, the same field number in every `*Options` message.
const UNINTERPRETED_OPTION: i32 = 999;

/// Whether interpreting an option can rewrite `location`'s path: the paths
/// rewritten are those under an `uninterpreted_option`. A location whose
/// path merely holds the number 999 elsewhere is kept too, harmlessly.
fn may_be_rewritten(location: &Location) -> bool {
    location.path.contains(&UNINTERPRETED_OPTION)
}

/// What [`ThinResolver`] kept aside.
#[derive(Default)]
struct Stash {
    /// Where each file opened was read from, by name.
    paths: HashMap<String, Option<PathBuf>>,
    /// Each file given to protox thinned, by name.
    thinned: HashMap<String, Thinned>,
    /// Each path protox resolved to a file name, with that name.
    resolved: Vec<(String, PathBuf)>,
}

/// A file given to protox thinned, as parsed (all its source locations).
struct Thinned(File);

impl Thinned {
    /// The file's source info, encoded, with the locations protox was given
    /// replaced, in order, by what it made of them (`rewritten`).
    fn completed(&self, rewritten: &SourceCodeInfo) -> Option<Vec<u8>> {
        use prost_reflect::prost::Message as _;
        let info = self.0.file_descriptor_proto().source_code_info.as_ref()?;
        let mut rewritten = rewritten.location.iter();
        let mut out = Vec::with_capacity(info.encoded_len());
        for location in &info.location {
            let location = if may_be_rewritten(location) {
                rewritten.next()?
            } else {
                location
            };
            prost_reflect::prost::encoding::message::encode(INFO_LOCATION, location, &mut out);
        }
        if rewritten.next().is_some() {
            return None;
        }
        Some(out)
    }
}

/// The compile's resolver, handing protox every file parsed from source with
/// only the source locations an option can rewrite ([`compile_thin`]).
struct ThinResolver {
    inner: ChainFileResolver,
    stash: Rc<RefCell<Stash>>,
    /// See [`compile_thin`].
    thin_above: usize,
}

impl FileResolver for ThinResolver {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        let name = self.inner.resolve_path(path)?;
        self.stash
            .borrow_mut()
            .resolved
            .push((name.clone(), path.to_path_buf()));
        Some(name)
    }

    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let file = self.inner.open_file(name)?;
        let mut stash = self.stash.borrow_mut();
        stash
            .paths
            .insert(name.to_owned(), file.path().map(Path::to_path_buf));
        // A file with source was parsed here, so protox has no encoding of
        // it to prefer over its descriptor (one decoded from bytes may carry
        // options a descriptor cannot hold: it is passed as it is).
        let parsed = file.file_descriptor_proto();
        let (Some(_), Some(info)) = (file.source(), &parsed.source_code_info) else {
            return Ok(file);
        };
        let rewritable = info
            .location
            .iter()
            .filter(|location| may_be_rewritten(location))
            .count();
        if rewritable.saturating_mul(info.location.len()) <= self.thin_above {
            return Ok(file);
        }
        // Every field but the source info, which is thinned (no field is
        // left out: a new one in `prost-types` fails to compile here).
        let thin = FileDescriptorProto {
            name: parsed.name.clone(),
            package: parsed.package.clone(),
            dependency: parsed.dependency.clone(),
            public_dependency: parsed.public_dependency.clone(),
            weak_dependency: parsed.weak_dependency.clone(),
            message_type: parsed.message_type.clone(),
            enum_type: parsed.enum_type.clone(),
            service: parsed.service.clone(),
            extension: parsed.extension.clone(),
            options: parsed.options.clone(),
            source_code_info: Some(SourceCodeInfo {
                location: info
                    .location
                    .iter()
                    .filter(|location| may_be_rewritten(location))
                    .cloned()
                    .collect(),
            }),
            syntax: parsed.syntax.clone(),
        };
        stash.thinned.insert(name.to_owned(), Thinned(file));
        Ok(File::from_file_descriptor_proto(thin))
    }
}

/// `set` with the source info of every file that `info` gives one for
/// replaced by it (encoded), every other field copied as it was encoded;
/// `None` when a file has no source info to replace.
fn complete_set(mut set: &[u8], mut info: impl FnMut(&str) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(set.len() * 2);
    while !set.is_empty() {
        let (number, raw, value) = next_field(&mut set)?;
        match value {
            Some(file) if number == SET_FILE => {
                let mut fields = file;
                let mut name = None;
                while !fields.is_empty() {
                    if let (FILE_NAME, _, Some(value)) = next_field(&mut fields)? {
                        name = Some(std::str::from_utf8(value).ok()?);
                    }
                }
                match info(name?) {
                    Some(info) => {
                        let mut completed = Vec::with_capacity(file.len() + info.len());
                        let mut replaced = false;
                        let mut fields = file;
                        while !fields.is_empty() {
                            match next_field(&mut fields)? {
                                (FILE_SOURCE_CODE_INFO, _, Some(_)) if !replaced => {
                                    put_len(&mut completed, FILE_SOURCE_CODE_INFO, &info);
                                    replaced = true;
                                }
                                (_, raw, _) => completed.extend_from_slice(raw),
                            }
                        }
                        if !replaced {
                            return None;
                        }
                        put_len(&mut out, SET_FILE, &completed);
                    }
                    None => out.extend_from_slice(raw),
                }
            }
            _ => out.extend_from_slice(raw),
        }
    }
    Some(out)
}

/// The encoded set with only the source locations that carry a leading
/// comment, and only that comment (no span): the expansion renders its tools' schemas
/// again at run time from these descriptors, and the schemas' descriptions
/// are those comments. Spans of other elements, trailing and detached
/// comments are dropped, which keeps what every binary embeds small. Custom
/// options survive: the set is re-encoded through the pool, which knows
/// their extensions.
pub fn comments_only(encoded: &[u8]) -> Vec<u8> {
    // Rewritten on the wire, field by field, so that every option (custom
    // ones included) passes through as it was encoded, and without decoding
    // the whole set into messages: the large corpus proto's set is 1 MB.
    filter_set(encoded).unwrap_or_else(|| encoded.to_vec())
}

/// Field numbers in `descriptor.proto` that the filter reads.
const SET_FILE: u32 = 1;
const FILE_NAME: u32 = 1;
const FILE_SOURCE_CODE_INFO: u32 = 9;
const INFO_LOCATION: u32 = 1;
const LOCATION_PATH: u32 = 1;
const LOCATION_LEADING_COMMENTS: u32 = 3;

fn filter_set(mut set: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(set.len() / 2);
    while !set.is_empty() {
        let (number, raw, value) = next_field(&mut set)?;
        match value {
            Some(file) if number == SET_FILE => put_len(&mut out, number, &filter_file(file)?),
            _ => out.extend_from_slice(raw),
        }
    }
    Some(out)
}

fn filter_file(file: &[u8]) -> Option<Vec<u8>> {
    // The annotation protos and `descriptor.proto` declare options, never a
    // message of a tool's schema: none of their comments is needed.
    let mut fields = file;
    let mut keep_comments = true;
    while !fields.is_empty() {
        if let (FILE_NAME, _, Some(name)) = next_field(&mut fields)? {
            let name = std::str::from_utf8(name).ok()?;
            keep_comments = name != "google/protobuf/descriptor.proto"
                && !proto_ai_tools_schema::ANNOTATION_PROTOS
                    .iter()
                    .any(|(path, _)| *path == name);
        }
    }
    let mut out = Vec::with_capacity(file.len());
    let mut fields = file;
    while !fields.is_empty() {
        match next_field(&mut fields)? {
            (FILE_SOURCE_CODE_INFO, _, Some(info)) => {
                if keep_comments {
                    put_len(&mut out, FILE_SOURCE_CODE_INFO, &filter_info(info)?);
                }
            }
            (_, raw, _) => out.extend_from_slice(raw),
        }
    }
    Some(out)
}

/// The locations that carry a leading comment, with only their path and
/// that comment: where the comment sits is for diagnostics, which the macro
/// has given already.
fn filter_info(mut info: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while !info.is_empty() {
        let (INFO_LOCATION, _, Some(mut location)) = next_field(&mut info)? else {
            continue;
        };
        let mut kept = Vec::new();
        let mut commented = false;
        while !location.is_empty() {
            let (number, raw, _) = next_field(&mut location)?;
            if number == LOCATION_PATH || number == LOCATION_LEADING_COMMENTS {
                commented |= number == LOCATION_LEADING_COMMENTS;
                kept.extend_from_slice(raw);
            }
        }
        if commented {
            put_len(&mut out, INFO_LOCATION, &kept);
        }
    }
    Some(out)
}

/// One field on the wire: its number, its whole encoding (key included), and
/// its payload when it is length-delimited.
type Field<'b> = (u32, &'b [u8], Option<&'b [u8]>);

/// The next field of `bytes`.
fn next_field<'b>(bytes: &mut &'b [u8]) -> Option<Field<'b>> {
    use prost_reflect::prost::encoding::{WireType, decode_key, decode_varint};
    let start = *bytes;
    let (number, wire_type) = decode_key(bytes).ok()?;
    let payload = match wire_type {
        WireType::Varint => {
            decode_varint(bytes).ok()?;
            None
        }
        WireType::SixtyFourBit => {
            *bytes = bytes.get(8..)?;
            None
        }
        WireType::ThirtyTwoBit => {
            *bytes = bytes.get(4..)?;
            None
        }
        WireType::LengthDelimited => {
            let len = usize::try_from(decode_varint(bytes).ok()?).ok()?;
            let payload = bytes.get(..len)?;
            *bytes = &bytes[len..];
            Some(payload)
        }
        // Groups do not occur in descriptors.
        WireType::StartGroup | WireType::EndGroup => return None,
    };
    let raw = &start[..start.len() - bytes.len()];
    Some((number, raw, payload))
}

fn put_len(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
    use prost_reflect::prost::encoding::{WireType, encode_key, encode_varint};
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `file:line:col: what went wrong` plus how to fix it, from a protox error.
fn describe(error: &protox::Error, located: &Located) -> String {
    // With its cause: "invalid value of type ... for option ..." says
    // where, "field 'descripton' not found ..." what.
    let message = proto_ai_tools_schema::error_message(error);
    let location = proto_ai_tools_schema::error_location(error);
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
    } else if message.starts_with("invalid value of type") {
        // the cause and the fields are in the message
        String::new()
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
        Some(location) => format!(
            "{}: {message}{help}{hint}",
            located.shown_location(&location)
        ),
        None => format!("{message}{help}{hint}"),
    }
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    let dirs: Vec<String> = dirs
        .iter()
        .map(|dir| format!("`{}`", dir.display()))
        .collect();
    dirs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::ExtensionDescriptor;
    use proto_ai_tools_schema::ToolSpec;

    fn example() -> Located {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
        Located {
            file: root.join("links/v1/links.proto"),
            base: root.clone(),
            includes: vec![root],
        }
    }

    fn rpc_tool(pool: &DescriptorPool) -> ExtensionDescriptor {
        pool.get_message_by_name("google.protobuf.MethodOptions")
            .and_then(|options| options.get_extension(proto_ai_tools_schema::RPC_TOOL_EXTENSION))
            .expect("the rpc_tool extension is in the pool")
    }

    #[test]
    fn the_embedded_pool_keeps_options_and_leading_comments_only() {
        let compiled = compile(&example()).unwrap();
        let full = compiled.pool.encode_to_vec();
        let embedded = compiled.embedded_pool();
        assert!(
            embedded.len() * 4 < full.len() * 3,
            "stripped {} bytes, with all source info {}",
            embedded.len(),
            full.len()
        );
        let decoded = DescriptorPool::decode(embedded.as_slice()).unwrap();
        let file = decoded.get_file_by_name("links/v1/links.proto").unwrap();
        let info = file
            .file_descriptor_proto()
            .source_code_info
            .clone()
            .unwrap();
        assert!(!info.location.is_empty());
        assert!(info.location.iter().all(|l| l.leading_comments.is_some()
            && l.span.is_empty()
            && l.trailing_comments.is_none()
            && l.leading_detached_comments.is_empty()));
        for annotations in [
            "google/protobuf/descriptor.proto",
            "ai/tools/v1/annotations.proto",
        ] {
            let file = decoded.get_file_by_name(annotations).unwrap();
            assert!(
                file.file_descriptor_proto().source_code_info.is_none(),
                "{annotations}"
            );
        }
        // Garbage is passed through rather than lost.
        assert_eq!(comments_only(&[0xff, 0xff]), [0xff, 0xff]);
        // The tools read from what is embedded are the tools read at compile
        // time, descriptions and all: the run time renders from them.
        let at_compile_time =
            proto_ai_tools_schema::tools_in_file(&compiled.pool, &compiled.file_name).unwrap();
        let at_run_time =
            proto_ai_tools_schema::tools_in_file(&decoded, &compiled.file_name).unwrap();
        assert_eq!(
            at_run_time
                .iter()
                .map(ToolSpec::rendered)
                .collect::<Vec<_>>(),
            at_compile_time
                .iter()
                .map(ToolSpec::rendered)
                .collect::<Vec<_>>()
        );
        assert!(
            at_run_time[0]
                .rendered()
                .canonical
                .contains("\"description\"")
        );
        let method = decoded
            .get_service_by_name("links.v1.LinksService")
            .and_then(|service| service.methods().find(|m| m.name() == "CreateLink"))
            .unwrap();
        let options = method.options();
        let tool = options.get_extension(&rpc_tool(&decoded));
        let tool = tool.as_message().expect("a ToolDefinition");
        assert_eq!(
            tool.get_field_by_number(1).unwrap().as_str(),
            Some("links_create")
        );
    }

    #[test]
    fn files_read_from_disk_are_reported_and_embedded_ones_are_not() {
        let compiled = compile(&example()).unwrap();
        assert_eq!(compiled.file_name, "links/v1/links.proto");
        // links.proto plus the annotation protos reached through the symlinks
        // of the workspace's proto/ directory; google/protobuf/* are served
        // from memory.
        assert!(
            compiled
                .read_files
                .iter()
                .any(|path| path.ends_with("links/v1/links.proto"))
        );
        assert!(compiled.read_files.iter().all(|path| path.is_absolute()));
        assert!(
            !compiled
                .read_files
                .iter()
                .any(|path| path.ends_with("descriptor.proto"))
        );
    }

    /// A proto with options of every kind (file, message, field, enum,
    /// enum value, oneof, service, method; custom and built-in; commented
    /// and not), in a temporary include directory.
    fn options_everywhere(name: &str) -> (PathBuf, Located) {
        let root =
            std::env::temp_dir().join(format!("ai-tools-thin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("o/v1")).unwrap();
        let mut proto = String::from(
            "syntax = \"proto3\";\npackage o.v1;\nimport \"ai/tools/v1/annotations.proto\";\n\
             import \"ai/context/v1/annotations.proto\";\nimport \"google/api/field_behavior.proto\";\n\
             import \"google/protobuf/timestamp.proto\";\n\
             // The file's Java package.\noption java_package = \"o.v1\";\noption deprecated = true;\n",
        );
        for m in 0..40 {
            proto.push_str(&format!(
                "// Entity {m}.\nmessage E{m} {{\n  option deprecated = true;\n  \
                 // Its id.\n  string id = 1 [(ai.tools.v1.tool_field).alias_prefix = \"e{m}\"];\n  \
                 // Set by the server.\n  google.protobuf.Timestamp t = 2 [(google.api.field_behavior) = OUTPUT_ONLY, deprecated = true];\n  \
                 string note = 3 [(ai.tools.v1.tool_field) = {{\n    // A comment inside.\n    description: \"A note.\"\n    usage_notes: \"Short.\"\n  }}];\n  \
                 oneof o {{\n    string a = 4;\n    int32 b = 5;\n  }}\n  \
                 enum K {{\n    option allow_alias = true;\n    K_UNSPECIFIED = 0;\n    K_A = 1 [deprecated = true];\n    K_B = 1;\n  }}\n  \
                 K k = 6;\n  map<string, E{m}> children = 7;\n}}\n"
            ));
        }
        proto.push_str("service S {\n  option deprecated = true;\n");
        for m in 0..40 {
            proto.push_str(&format!(
                "  // Gets entity {m}.\n  rpc Get{m}(E{m}) returns (E{m}) {{\n    option idempotency_level = NO_SIDE_EFFECTS;\n    \
                 // The tool.\n    option (ai.context.v1.rpc_tool) = {{\n      name: \"get_{m}\"\n      description: \"Gets entity {m}.\"\n    }};\n  }}\n"
            ));
        }
        proto.push_str("}\n");
        std::fs::write(root.join("o/v1/o.proto"), proto).unwrap();
        let located = Located {
            file: root.join("o/v1/o.proto"),
            includes: vec![root.clone()],
            base: root.clone(),
        };
        (root, located)
    }

    fn assert_same(thin: &Compiled, plain: &Compiled, thinned: bool) {
        assert_eq!(thin.file_name, plain.file_name);
        assert_eq!(thin.read_files, plain.read_files);
        assert!(thin.encoded_with_source == plain.encoded_with_source);
        // A thinned compile's pool is the one decoded from that set, as the
        // expansion's run time decodes it (protox's own keeps one option it
        // interpreted, the `packed = false` `google.api.field_behavior`,
        // packed); otherwise it is protox's.
        let pool = if thinned {
            DescriptorPool::decode(plain.encoded_with_source.as_slice()).unwrap()
        } else {
            plain.pool.clone()
        };
        assert!(thin.pool.encode_to_vec() == pool.encode_to_vec());
        assert!(thin.embedded_pool() == plain.embedded_pool());
    }

    #[test]
    fn the_thin_compile_gives_the_plain_compile_byte_for_byte() {
        let (root, options) = options_everywhere("same");
        for located in [example(), options] {
            for with_annotations in [false, true] {
                let plain = compile_plain(&located, with_annotations).unwrap();
                let thin = compile_thin(&located, with_annotations, 0).expect("no fallback");
                assert_same(&thin, &plain, true);
                // Below the threshold nothing is thinned.
                let small = compile_thin(&located, with_annotations, usize::MAX).unwrap();
                assert_same(&small, &plain, false);
                let tools = |c: &Compiled| {
                    proto_ai_tools_schema::tools_in_file(&c.pool, &c.file_name)
                        .unwrap()
                        .iter()
                        .map(ToolSpec::rendered)
                        .collect::<Vec<_>>()
                };
                assert_eq!(tools(&thin), tools(&plain));
            }
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn errors_are_the_plain_compiles() {
        let (root, located) = options_everywhere("errors");
        let source = std::fs::read_to_string(&located.file).unwrap();
        for broken in [
            source.replace("K k = 6;", "Nope k = 6;"),
            source.replace("alias_prefix = \"e3\"", "alias_prefix = 3"),
            source.replace(
                "(ai.tools.v1.tool_field).alias_prefix = \"e5\"",
                "(ai.tools.v1.nope).alias_prefix = \"e5\"",
            ),
            source.replace("string a = 4;", "string a = 5;"),
            source.replace("message E7 {", "message E7 {\n  string syntax error"),
        ] {
            std::fs::write(&located.file, &broken).unwrap();
            assert!(compile_thin(&located, false, 0).is_none());
            let error = compile_with(&located, false).err().expect("an error");
            assert_eq!(Some(error), compile_plain(&located, false).err());
        }
        // A file given by path that an earlier include directory shadows.
        std::fs::create_dir_all(root.join("first/o/v1")).unwrap();
        std::fs::write(root.join("first/o/v1/o.proto"), &source).unwrap();
        std::fs::write(&located.file, &source).unwrap();
        let shadowed = Located {
            file: located.file.clone(),
            includes: vec![root.join("first"), root.clone()],
            base: root.clone(),
        };
        assert!(compile_thin(&shadowed, false, 0).is_none());
        let error = compile_with(&shadowed, false).err().expect("shadowed");
        assert!(error.contains("shadowed"), "{error}");
        assert_eq!(Some(error), compile_plain(&shadowed, false).err());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_users_own_copy_of_an_annotation_proto_wins_without_clashing() {
        let root = std::env::temp_dir().join(format!("ai-tools-own-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let own = root.join("ai/context/v1/annotations.proto");
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        // The Go plugin's file, as a user would have copied it into their tree.
        std::fs::write(
            &own,
            "syntax = \"proto3\";\npackage ai.context.v1;\nimport \"google/protobuf/descriptor.proto\";\n\
             message ToolDefinition { string name = 1; string description = 2; bool strict = 3; }\n\
             extend google.protobuf.MethodOptions { ToolDefinition rpc_tool = 52104; }\n",
        )
        .unwrap();
        std::fs::write(
            root.join("svc.proto"),
            "syntax = \"proto3\";\npackage svc;\nimport \"ai/context/v1/annotations.proto\";\n\
             import \"ai/tools/v1/annotations.proto\";\n\
             message Req { string id = 1 [(ai.tools.v1.tool_field).alias_prefix = \"thing\"]; }\nmessage Resp {}\n\
             service S { rpc Get(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: \"get\" description: \"Get.\" }; } }\n",
        )
        .unwrap();
        let compiled = compile(&Located {
            file: root.join("svc.proto"),
            includes: vec![root.clone()],
            base: root.clone(),
        })
        .unwrap();
        let own = std::fs::canonicalize(&own).unwrap();
        assert!(
            compiled.read_files.contains(&own),
            "{:?}",
            compiled.read_files
        );
        let tools = proto_ai_tools_schema::tools_in_file(&compiled.pool, "svc.proto").unwrap();
        assert_eq!(tools[0].name, "get");
        assert_eq!(tools[0].request_aliases[0].prefix, "thing");
        let _ = std::fs::remove_dir_all(&root);
    }
}
