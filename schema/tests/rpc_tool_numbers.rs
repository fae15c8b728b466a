//! `rpc_tool` under its two numbers: `ai.context.v1.rpc_tool` (52104, the Go
//! plugin's) and `ai.tools.v1.rpc_tool` (52106). The shipped protos compile
//! together, a file may import both, either makes a tool (its diagnostics
//! located at it), a method that carries both is an error at its place, and
//! an overlay or whole-service mode takes either as the inline annotation.

// An integration test: its helpers fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::time::Duration;

use prost_reflect::DescriptorPool;
use proto_ai_tools_schema::overlay::{Overlay, PlainFields, annotate};
use proto_ai_tools_schema::proto::{method_diagnostic, rpc_tool_extensions};
use proto_ai_tools_schema::{
    ANNOTATION_PROTOS, AnnotationFileResolver, ConsentPolicy, Diagnostic,
    OVERLAY_ANNOTATION_PROTOS, RPC_TOOL_EXTENSION, RPC_TOOL_EXTENSIONS, TOOLS_RPC_TOOL_EXTENSION,
    ToolSpec, tools_in_file,
};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

struct Memory(String);

impl FileResolver for Memory {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match name {
            "test.proto" => File::from_source(name, &self.0),
            _ => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// `files` compiled together, with `test.proto` (`source`) and the
/// annotation protos importable: the pool and its encoded set.
fn compile(source: &str, files: &[&str]) -> (DescriptorPool, Vec<u8>) {
    let mut resolver = ChainFileResolver::new();
    resolver.add(Memory(source.to_owned()));
    resolver.add(AnnotationFileResolver);
    resolver.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    for file in files {
        if let Err(err) = compiler.open_file(file) {
            panic!("{file} does not compile: {err:?}");
        }
    }
    (
        compiler.descriptor_pool(),
        compiler.encode_file_descriptor_set(),
    )
}

/// A file importing both declarations of `rpc_tool`, then `body`.
fn importing_both(body: &str) -> String {
    format!(
        "syntax = \"proto3\";\npackage t;\n\
         import \"ai/context/v1/annotations.proto\";\n\
         import \"ai/tools/v1/rpc_tool.proto\";\n\
         message Req {{ string id = 1; }}\nmessage Resp {{}}\n{body}"
    )
}

fn tools(source: &str) -> Vec<ToolSpec> {
    let (pool, _) = compile(source, &["test.proto"]);
    tools_in_file(&pool, "test.proto").unwrap_or_else(|diags| panic!("{diags:#?}"))
}

fn diagnostics(source: &str) -> Vec<String> {
    let (pool, _) = compile(source, &["test.proto"]);
    match tools_in_file(&pool, "test.proto") {
        Ok(tools) => panic!("expected diagnostics, got {} tools", tools.len()),
        Err(diags) => diags.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn the_shipped_protos_compile_together_with_no_number_used_twice() {
    let all: Vec<&str> = ANNOTATION_PROTOS.iter().map(|(path, _)| *path).collect();
    let (pool, _) = compile("", &all);
    let number = |name: &str| {
        pool.get_extension_by_name(name)
            .unwrap_or_else(|| panic!("{name} is declared"))
            .number()
    };
    assert_eq!(number("ai.context.v1.rpc_tool"), RPC_TOOL_EXTENSION);
    assert_eq!(number("ai.context.v1.rpc_tool"), 52104, "the Go plugin's");
    assert_eq!(number("ai.tools.v1.rpc_tool"), TOOLS_RPC_TOOL_EXTENSION);
    assert_eq!(RPC_TOOL_EXTENSIONS, [52104, 52106]);
    let found: Vec<String> = rpc_tool_extensions(&pool)
        .iter()
        .map(|ext| ext.full_name().to_owned())
        .collect();
    assert_eq!(found, ["ai.context.v1.rpc_tool", "ai.tools.v1.rpc_tool"]);
    // Every extension the shipped protos declare has a number of its own on
    // the options message it extends.
    let mut taken: HashMap<(String, u32), String> = HashMap::new();
    for ext in pool.all_extensions() {
        let key = (
            ext.containing_message().full_name().to_owned(),
            ext.number(),
        );
        if let Some(other) = taken.insert(key, ext.full_name().to_owned()) {
            panic!("{} and {other} share {}", ext.full_name(), ext.number());
        }
    }
    assert!(taken.len() >= 4, "{taken:?}");
}

#[test]
fn a_file_importing_both_reads_either() {
    let tools = tools(&importing_both(
        "service S {\n\
         \x20 rpc Get(Req) returns (Resp) {\n\
         \x20   option (ai.context.v1.rpc_tool) = { name: \"get\" description: \"Get.\" consent: CONFIRM };\n\
         \x20 }\n\
         \x20 rpc Drop(Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = {\n\
         \x20     name: \"drop\" description: \"Drop.\" strict: true title: \"Drop it\"\n\
         \x20     destructive: true timeout: { seconds: 90 } consent: BLOCK\n\
         \x20     examples: '{\"id\": \"x\"}' output_schema: false\n\
         \x20   };\n\
         \x20 }\n\
         \x20 rpc Plain(Req) returns (Resp);\n\
         }\n",
    ));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get", "drop"]);
    assert_eq!(tools[0].consent, Some(ConsentPolicy::Confirm));
    let drop = &tools[1];
    assert_eq!(drop.description, "Drop.");
    assert!(drop.strict);
    assert_eq!(drop.title.as_deref(), Some("Drop it"));
    assert_eq!(drop.hints.destructive, Some(true));
    assert_eq!(drop.timeout, Some(Duration::from_secs(90)));
    assert_eq!(drop.consent, Some(ConsentPolicy::Block));
    assert_eq!(drop.examples.len(), 1);
    assert_eq!(drop.output_schema, Some(false));
    assert_eq!(drop.parameters, tools[0].parameters);
}

#[test]
fn a_method_that_carries_both_is_an_error_at_the_later_one() {
    let source = importing_both(
        "service S {\n\
         \x20 rpc Get(Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = { name: \"get\" description: \"Get.\" };\n\
         \x20   option (ai.context.v1.rpc_tool) = { name: \"get\" description: \"Get.\" };\n\
         \x20 }\n\
         }\n",
    );
    assert_eq!(
        diagnostics(&source),
        [
            "test.proto:10:5: rpc `Get` carries `(ai.context.v1.rpc_tool)` here and \
          `(ai.tools.v1.rpc_tool)` at test.proto:9:5: the same annotation under two names; \
          keep one of them"
        ]
    );
    // The other way round, and beside a good tool: the error alone.
    let source = importing_both(
        "service S {\n\
         \x20 rpc Get(Req) returns (Resp) {\n\
         \x20   option (ai.context.v1.rpc_tool) = { name: \"get\" description: \"Get.\" };\n\
         \x20   option (ai.tools.v1.rpc_tool) = { name: \"get\" description: \"Get.\" };\n\
         \x20 }\n\
         \x20 rpc Put(Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = { name: \"put\" description: \"Put.\" };\n\
         \x20 }\n\
         }\n",
    );
    assert_eq!(
        diagnostics(&source),
        [
            "test.proto:10:5: rpc `Get` carries `(ai.tools.v1.rpc_tool)` here and \
          `(ai.context.v1.rpc_tool)` at test.proto:9:5: the same annotation under two names; \
          keep one of them"
        ]
    );
}

#[test]
fn the_diagnostics_of_an_ai_tools_v1_rpc_tool_are_located_at_it() {
    let source = importing_both(
        "service S {\n\
         \x20 rpc Get(Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = {\n\
         \x20     name: \"get\"\n\
         \x20     description: \"\"\n\
         \x20   };\n\
         \x20 }\n\
         \x20 rpc Again(Req) returns (Resp) {\n\
         \x20   option (ai.context.v1.rpc_tool) = { name: \"get\" description: \"Again.\" };\n\
         \x20 }\n\
         \x20 rpc Stream(stream Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = { name: \"stream\" description: \"S.\" };\n\
         \x20 }\n\
         }\n",
    );
    let diags = diagnostics(&source);
    assert!(
        diags[0].starts_with("test.proto:9:5: rpc `Get` has an empty tool `description`"),
        "{diags:#?}"
    );
    // The first holder of a name is located at its own option, whichever.
    assert!(
        diags[1].starts_with(
            "test.proto:15:5: tool name `get` is already used by rpc `t.S.Get` (test.proto:9:5)"
        ),
        "{diags:#?}"
    );
    assert!(
        diags[2].starts_with("test.proto:18:5: rpc `Stream` is client-streaming"),
        "{diags:#?}"
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");

    let (pool, _) = compile(&source, &["test.proto"]);
    assert_eq!(
        method_diagnostic(&pool, "t.S", "Stream", "here".to_owned()).to_string(),
        "test.proto:18:5: here"
    );
}

/// What `annotate` says of `overlay` on `test.proto`, which it refuses.
fn refusal(pool: &DescriptorPool, encoded: &[u8], overlay: &Overlay) -> Vec<Diagnostic> {
    match annotate(
        pool,
        encoded,
        Some("test.proto"),
        Some(overlay),
        &[],
        PlainFields::Optional,
    ) {
        Ok(_) => panic!("the overlay is refused"),
        Err(diags) => diags,
    }
}

#[test]
fn an_overlay_and_whole_service_mode_take_either_as_inline() {
    let source = importing_both(
        "service S {\n\
         \x20 rpc Get(Req) returns (Resp) {\n\
         \x20   option (ai.tools.v1.rpc_tool) = { name: \"fetch\" description: \"Fetch.\" destructive: true };\n\
         \x20 }\n\
         \x20 rpc List(Req) returns (Resp);\n\
         }\n",
    );
    let mut files = vec!["test.proto"];
    files.extend(OVERLAY_ANNOTATION_PROTOS);
    let (pool, encoded) = compile(&source, &files);

    // An overlay entry that makes `Get` a tool again is refused at its key.
    let overlay = Overlay::parse(
        "tools.toml",
        "[methods.\"t.S.Get\"]\nname = \"get\"\ndescription = \"Get.\"\n",
    )
    .expect("parses");
    let refused = refusal(&pool, &encoded, &overlay);
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert!(
        refused[0]
            .to_string()
            .contains("`t.S.Get` already has an inline `rpc_tool` option (test.proto:8:3)"),
        "{refused:#?}"
    );

    // `read_only = true` on it meets its inline `destructive: true`.
    let overlay =
        Overlay::parse("tools.toml", "[methods.\"t.S.Get\"]\nread_only = true\n").expect("parses");
    let refused = refusal(&pool, &encoded, &overlay);
    assert!(
        refused[0]
            .to_string()
            .contains("`t.S.Get` is `destructive: true` in its inline `rpc_tool` (test.proto:9:5)"),
        "{refused:#?}"
    );

    // The service exposed whole: `Get` keeps its own annotation, `List`
    // gets a derived one.
    let annotated = annotate(
        &pool,
        &encoded,
        Some("test.proto"),
        None,
        &["t.S".to_owned()],
        PlainFields::Optional,
    )
    .expect("annotated");
    let tools = tools_in_file(&annotated.pool, "test.proto").expect("tools");
    let names: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(names[0], ("fetch", "Fetch."));
    assert_eq!(names.len(), 2, "{names:?}");
}
