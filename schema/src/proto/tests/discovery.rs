//! Which tools a file lists, and the diagnostics of a misannotated one.

use super::*;

#[test]
fn tools_of_imports_are_not_listed() {
    let dep = format!(
        "{HEADER}message Req {{}}\nmessage Resp {{}}\nservice Dep {{ rpc M(Req) returns (Resp) {{ option (ai.context.v1.rpc_tool) = {{ name: \"dep\" description: \"D.\" }}; }} }}"
    );
    let main = format!(
        "{HEADER}import \"dep.proto\";\nservice Main {{ rpc M(t.Req) returns (t.Resp) {{ option (ai.context.v1.rpc_tool) = {{ name: \"main\" description: \"M.\" strict: true }}; }} }}"
    );
    let pool = compile_files(&[("dep.proto", &dep), ("main.proto", &main)], "main.proto");
    let tools = tools_in_file(&pool, "main.proto").expect("valid");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["main"]);
    assert!(tools[0].strict);
}

#[test]
fn diagnostic_bad_tool_name() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"links.create\" description: \"D.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("rpc `M`: tool name `links.create` contains `.`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_duplicate_tool_name() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc A(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"same\" description: \"A.\" };\n  }\n  rpc B(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"same\" description: \"B.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:13:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("tool name `same` is already used by rpc `t.S.A` (test.proto:10:5)"),
        "{}",
        diags[0]
    );
    assert!(
        diags[0].contains("give rpc `t.S.B` a different `name`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_empty_description() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"m\" description: \"  \" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(
        diags[0].contains("rpc `M` has an empty tool `description`"),
        "{}",
        diags[0]
    );
}

#[test]
fn diagnostic_streaming() {
    let diags = diagnostics(
        "message Req {}\nmessage Resp {}\nservice S {\n  rpc A(stream Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"a\" description: \"A.\" };\n  }\n  rpc B(Req) returns (stream Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"b\" description: \"B.\" };\n  }\n  rpc C(stream Req) returns (stream Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"c\" description: \"C.\" };\n  }\n}\n",
    );
    // A server stream is a tool (collected into one result).
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:10:5: "), "{}", diags[0]);
    assert!(diags[0].contains("rpc `A` is client-streaming and cannot be a tool"));
    assert!(diags[0].contains("only unary and server-streaming methods"));
    assert!(diags[1].contains("rpc `C` is bidirectional-streaming"));
}

#[test]
fn diagnostic_alias_prefix() {
    let diags = diagnostics(
        "message Req {\n  int32 n = 1 [(ai.tools.v1.tool_field).alias_prefix = \"num\"];\n  string s = 2 [(ai.tools.v1.tool_field).alias_prefix = \"Bad-Prefix\"];\n  repeated string ok = 3 [(ai.tools.v1.tool_field).alias_prefix = \"ok\"];\n  map<string, string> m = 4 [(ai.tools.v1.tool_field).alias_prefix = \"map\"];\n}\nmessage Resp {}\nservice S {\n  rpc M(Req) returns (Resp) {\n    option (ai.context.v1.rpc_tool) = { name: \"m\" description: \"M.\" };\n  }\n}\n",
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");
    assert!(diags[0].starts_with("test.proto:7:"), "{}", diags[0]);
    assert!(
        diags[0].contains("field `t.Req.n` has an `alias_prefix` but is of type `int32`"),
        "{}",
        diags[0]
    );
    assert!(diags[1].starts_with("test.proto:8:"), "{}", diags[1]);
    assert!(
        diags[1].contains("field `t.Req.s`: alias prefix `Bad-Prefix` must start with a lowercase"),
        "{}",
        diags[1]
    );
    assert!(
        diags[2].contains("field `t.Req.m` has an `alias_prefix` but is a map"),
        "{}",
        diags[2]
    );
}

#[test]
fn diagnostic_no_annotated_method() {
    let diags = diagnostics("message Req {}\nservice S { rpc M(Req) returns (Req); }\n");
    assert_eq!(
        diags,
        [
            "test.proto: `test.proto` has no method annotated with `rpc_tool`; add `option (ai.context.v1.rpc_tool) = {...}` to at least one rpc"
        ]
    );
    // Without any annotation proto in the pool, nothing is annotated either.
    let pool =
        compile("syntax = \"proto3\";\nmessage Req {}\nservice S { rpc M(Req) returns (Req); }\n");
    let err = tools_in_file(&pool, "test.proto").unwrap_err();
    assert!(err[0].message.contains("has no method annotated"));
    let err = tools_in_file(&pool, "missing.proto").unwrap_err();
    assert_eq!(
        err[0].to_string(),
        "missing.proto: `missing.proto` is not in the descriptor pool; compile it (with its imports) into the pool first"
    );
}

#[test]
fn diagnostics_are_all_collected() {
    let diags = diagnostics(
        "message Req { int32 n = 1 [(ai.tools.v1.tool_field).alias_prefix = \"n\"]; }\nmessage Resp {}\nservice S {\n  rpc A(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: \"9\" description: \"\" }; }\n}\n",
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");
}
