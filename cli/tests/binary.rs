//! The built `ai-tools` binary run as a process, from the repository root as
//! the README runs it: what it prints on stdout (JSON and nothing else),
//! what on stderr (logs and errors), and the exit codes its `--help`
//! documents (0 success, 1 the tools could not be built or served, 2 a usage
//! error).

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use proto_ai_tools_tests::tools::links;

use support::workspace;

fn ai_tools(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tool names in `json`, the output of `--dialect dialect`.
fn names(dialect: &str, json: &serde_json::Value) -> Vec<String> {
    let tools = match dialect {
        "gemini" => &json["functionDeclarations"],
        _ => json,
    };
    let tools = tools
        .as_array()
        .unwrap_or_else(|| panic!("{dialect}: no list of tools in {json:#}"));
    let mut names: Vec<String> = tools
        .iter()
        .map(|tool| {
            let name = match dialect {
                "openai" => &tool["function"]["name"],
                _ => &tool["name"],
            };
            name.as_str()
                .unwrap_or_else(|| panic!("{dialect}: a tool without a name: {tool:#}"))
                .to_owned()
        })
        .collect();
    names.sort();
    names
}

/// The annotated RPCs of links.proto, by the tool names the macro gives them.
fn annotated() -> Vec<String> {
    let mut names: Vec<String> = links::all_tools()
        .iter()
        .map(|t| t.name.to_owned())
        .collect();
    names.sort();
    names
}

const LINKS: [&str; 4] = ["--proto", "proto/links/v1/links.proto", "-I", "proto"];

#[test]
fn tools_prints_json_and_only_json_on_stdout() {
    let output = ai_tools(&[&["tools"][..], &LINKS, &["--dialect", "openai"]].concat());
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // The whole of stdout is one JSON document: no log line slipped in.
    let json: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{stdout}"));
    assert_eq!(names("openai", &json), annotated());
    assert_eq!(annotated().len(), 5, "links.proto annotates five RPCs");
    for tool in json.as_array().expect("a list") {
        assert_eq!(tool["type"], "function", "{tool:#}");
        assert!(tool["function"]["parameters"].is_object(), "{tool:#}");
    }
    // The logs are on stderr.
    assert!(stderr.contains("INFO ai_tools: 5 tools"), "{stderr}");
    assert!(!stdout.contains("5 tools"), "{stdout}");
}

/// `--log-format json`: every line on stderr is one JSON object with its
/// level and message; RUST_LOG filters them, and one that does not parse is
/// said and the default used.
#[test]
fn logs_are_json_lines_when_asked_and_rust_log_filters_them() {
    let output = ai_tools(&[
        "tools",
        LINKS[0],
        LINKS[1],
        LINKS[2],
        LINKS[3],
        "--log-format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["level"] == "INFO" && l["fields"]["message"] == "5 tools"),
        "{stderr}"
    );

    let quiet = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["tools", LINKS[0], LINKS[1], LINKS[2], LINKS[3]])
        .current_dir(workspace())
        .env("RUST_LOG", "error")
        .output()
        .expect("the binary runs");
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(
        text(&quiet.stderr),
        "",
        "RUST_LOG=error leaves out the news"
    );

    let bad = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["tools", LINKS[0], LINKS[1], LINKS[2], LINKS[3]])
        .current_dir(workspace())
        .env("RUST_LOG", "[nope")
        .output()
        .expect("the binary runs");
    let stderr = text(&bad.stderr);
    assert!(
        stderr.contains("RUST_LOG is not a filter ([nope") && stderr.contains("5 tools"),
        "{stderr}"
    );
    let usage = ai_tools(&["tools", LINKS[0], LINKS[1], "--log-format", "xml"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(text(&usage.stderr).contains("`--log-format xml`: use `text` or `json`"));
}

#[test]
fn every_dialect_prints_valid_json() {
    for dialect in ["openai", "anthropic", "gemini", "mcp"] {
        let output = ai_tools(&[&["tools"][..], &LINKS, &["--dialect", dialect]].concat());
        let stdout = text(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{dialect}: {}",
            text(&output.stderr)
        );
        let json: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{dialect}: stdout is not JSON ({e}):\n{stdout}"));
        assert_eq!(names(dialect, &json), annotated(), "{dialect}");
    }
    // No `--dialect` is MCP's.
    let default = ai_tools(&[&["tools"][..], &LINKS].concat());
    let mcp = ai_tools(&[&["tools"][..], &LINKS, &["--dialect", "mcp"]].concat());
    assert_eq!(default.status.code(), Some(0));
    assert_eq!(default.stdout, mcp.stdout);
}

/// `--include`, `--exclude` and `--read-only` choose among links.proto's
/// tools; a glob that matches none fails, naming it.
#[test]
fn include_exclude_and_read_only_choose_the_tools() {
    let listed = |flags: &[&str]| {
        let output = ai_tools(&[&["tools"][..], &LINKS, flags].concat());
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert_eq!(output.status.code(), Some(0), "{flags:?}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{flags:?}: stdout is not JSON ({e}):\n{stdout}"));
        names("mcp", &json)
    };
    assert_eq!(
        listed(&["--include", "links_*", "--exclude", "links_update"]),
        ["links_create", "links_list"]
    );
    assert_eq!(
        listed(&["--include", "links.v1.WorkflowStepsService/*"]),
        ["workflow_steps_create", "workflow_steps_delete"]
    );
    // links_list alone says `idempotency_level = NO_SIDE_EFFECTS`.
    assert_eq!(listed(&["--read-only"]), ["links_list"]);
    assert_eq!(
        listed(&[
            "--include",
            "links_*",
            "--exclude",
            "links_list",
            "--include",
            "workflow_*"
        ]),
        [
            "links_create",
            "links_update",
            "workflow_steps_create",
            "workflow_steps_delete"
        ]
    );

    // A typo is a failure that names the glob, not an empty list.
    let output = ai_tools(&[&["tools"][..], &LINKS, &["--exclude", "links_delete"]].concat());
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "exclude pattern `links_delete` matches no tool name; the tool names are links_create,"
        ),
        "{stderr}"
    );
    let output = ai_tools(
        &[
            &["tools"][..],
            &LINKS,
            &["--include", "workflow_*", "--read-only"],
        ]
        .concat(),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("the selection leaves no tool"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn version_and_help() {
    let output = ai_tools(&["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        text(&output.stdout),
        format!("ai-tools {}\n", env!("CARGO_PKG_VERSION"))
    );
    let output = ai_tools(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = text(&output.stdout);
    for documented in [
        "USAGE:",
        "EXAMPLES:",
        "EXIT STATUS:",
        "--reflection-timeout",
        "--include GLOB",
        "--exclude GLOB",
        "--read-only",
    ] {
        assert!(help.contains(documented), "{documented}:\n{help}");
    }
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let output = ai_tools(&[&["tools"][..], &LINKS, &["--frobnicate"]].concat());
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("unexpected argument `--frobnicate`") && stderr.contains("--help"),
        "{stderr}"
    );
    // A dialect it does not know, too.
    let output = ai_tools(&[&["tools"][..], &LINKS, &["--dialect", "cohere"]].concat());
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        text(&output.stderr).contains("unknown dialect `cohere`"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_proto_imports_the_annotations_and_well_known_types_without_copies() {
    // A directory with nothing but the proto: the imports are served.
    let dir =
        std::env::temp_dir().join(format!("proto-ai-tools-cli-served-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let proto = dir.join("ping.proto");
    std::fs::write(
        &proto,
        r#"syntax = "proto3";
        package ping.v1;
        import "ai/context/v1/annotations.proto";
        import "google/protobuf/empty.proto";
        service Ping {
          rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty) {
            option (ai.context.v1.rpc_tool) = { name: "ping" description: "Ping." };
          }
        }"#,
    )
    .expect("written");
    let proto = proto.to_str().expect("UTF-8");
    let output = ai_tools(&["tools", "--proto", proto, "--dialect", "mcp"]);
    std::fs::remove_dir_all(&dir).expect("removed");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(names("mcp", &json), ["ping"]);
}

/// Without `-I`, the include directory is the path's first directory, as
/// `ai_tools!` has it: a proto whose imports are written from that root
/// compiles, and an error in it names the file as the user wrote it, from
/// here, with its line and column.
#[test]
fn without_dash_i_the_proto_root_is_the_paths_first_directory_and_errors_are_clickable() {
    let output = ai_tools(&[
        "tools",
        "--proto",
        "proto/links/v1/links.proto",
        "--dialect",
        "mcp",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));

    let dir = std::env::temp_dir().join(format!(
        "proto-ai-tools-cli-clickable-{}",
        std::process::id()
    ));
    let v1 = dir.join("proto/broken/v1");
    std::fs::create_dir_all(&v1).expect("a temporary directory");
    std::fs::write(
        v1.join("common.proto"),
        "syntax = \"proto3\";\npackage broken.v1;\nmessage Thing {\n  string id = 1\n}\n",
    )
    .expect("written");
    std::fs::write(
        v1.join("broken.proto"),
        "syntax = \"proto3\";\npackage broken.v1;\nimport \"broken/v1/common.proto\";\n",
    )
    .expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["tools", "--proto", "proto/broken/v1/broken.proto"])
        .current_dir(&dir)
        .output()
        .expect("the binary runs");
    std::fs::remove_dir_all(&dir).expect("removed");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("proto/broken/v1/common.proto:5:1: "),
        "the imported file's error, named from here: {stderr}"
    );
}

/// A slip inside an option block (`descripton:`) is named, not only the
/// option it spoils: the cause follows protox's "invalid value of type ...",
/// with the field meant and the fields there are.
#[test]
fn a_typo_in_an_option_block_says_which_field_is_unknown() {
    let dir = std::env::temp_dir().join(format!(
        "proto-ai-tools-cli-option-typo-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(
        dir.join("typo.proto"),
        "syntax = \"proto3\";\nimport \"ai/context/v1/annotations.proto\";\nmessage A {}\n\
         service S {\n  rpc Get(A) returns (A) {\n    option (ai.context.v1.rpc_tool) = {\n      \
         name: \"get\"\n      descripton: \"Get an A.\"\n    };\n  }\n}\n",
    )
    .expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["tools", "--proto", "typo.proto"])
        .current_dir(&dir)
        .output()
        .expect("the binary runs");
    std::fs::remove_dir_all(&dir).expect("removed");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "typo.proto:6:5: invalid value of type 'ai.context.v1.ToolDefinition' for option \
             '(ai.context.v1.rpc_tool)': field 'descripton' not found for message \
             'ai.context.v1.ToolDefinition' (did you mean 'description'? the fields of \
             'ai.context.v1.ToolDefinition' are 'name', 'description', "
        ),
        "{stderr}"
    );
}

/// `--service` takes a glob over the services, and a service named twice
/// (or by a name and a glob) is exposed once; a glob that matches no
/// service is an error naming them.
#[test]
fn a_service_glob_exposes_every_service_it_matches_once() {
    let operations = [
        "tools",
        "--proto",
        "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
        "-I",
        "proto/third_party/googleapis",
    ];
    let listed = |services: &[&str]| {
        let mut args = operations.to_vec();
        for service in services {
            args.extend(["--service", service]);
        }
        let output = ai_tools(&args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let json: serde_json::Value = serde_json::from_str(&text(&output.stdout)).expect("JSON");
        names("mcp", &json)
    };
    let once = listed(&["google.longrunning.Operations"]);
    assert!(once.len() >= 4, "{once:?}");
    assert_eq!(
        listed(&[
            "google.longrunning.Operations",
            "google.longrunning.Operations"
        ]),
        once
    );
    assert_eq!(listed(&["google.longrunning.*"]), once);
    assert_eq!(
        listed(&["google.longrunning.*", "google.longrunning.Operations"]),
        once
    );

    let mut args = operations.to_vec();
    args.extend(["--service", "google.nothing.*"]);
    let output = ai_tools(&args);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr)
            .contains("service pattern `google.nothing.*` matches no service; the services are"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_file_that_is_not_there_fails_naming_it() {
    let output = ai_tools(&[
        "tools",
        "--proto",
        "proto/links/v1/nowhere.proto",
        "-I",
        "proto",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("nowhere.proto"), "{stderr}");

    let output = ai_tools(&["tools", "--descriptor-set", "target/no-such-set.binpb"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("the descriptor set target/no-such-set.binpb"),
        "{stderr}"
    );
}

/// A server that accepts the connection and never answers: `--reflection`
/// gives up after `--reflection-timeout`, naming the server and the timeout.
#[test]
fn reflection_of_a_silent_server_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    // Accepts and holds every connection, answering nothing.
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    let started = Instant::now();
    let output = ai_tools(&[
        "tools",
        "--grpc",
        &url,
        "--reflection",
        "--reflection-timeout",
        "0.5",
    ]);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("{url}: gRPC reflection failed"))
            && stderr.contains("within 500ms"),
        "{stderr}"
    );
}

/// `tools --stats`: per dialect, the tools and the bytes of the list as
/// `tools --dialect` prints it (compact), and the largest tools first.
#[test]
fn stats_count_the_listed_tools_and_their_bytes_per_dialect() {
    let stats = ai_tools(&[
        "tools",
        "--proto",
        "proto/links/v1/links.proto",
        "-I",
        "proto",
        "--stats",
    ]);
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let stats = text(&stats.stdout);
    for dialect in ["openai", "anthropic", "gemini", "mcp"] {
        let listed = ai_tools(&[
            "tools",
            "--proto",
            "proto/links/v1/links.proto",
            "-I",
            "proto",
            "--dialect",
            dialect,
        ]);
        let listing: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
        let items = listing
            .as_array()
            .or_else(|| listing["functionDeclarations"].as_array())
            .unwrap();
        let line = stats
            .lines()
            .find(|l| l.starts_with(&format!("{dialect}: ")))
            .unwrap_or_else(|| panic!("no {dialect} line in {stats}"));
        assert!(
            line.starts_with(&format!(
                "{dialect}: {} tools, {} bytes, ",
                items.len(),
                listing.to_string().len()
            )),
            "{line}"
        );
        assert_eq!(
            line.contains("tokens (o200k_base)"),
            cfg!(feature = "tokens"),
            "{line}"
        );
    }
    assert!(
        stats.starts_with("budget: 16384 bytes per tool definition; no tool cut\n"),
        "{stats}"
    );
    let largest = stats
        .lines()
        .skip_while(|l| !l.starts_with("openai: "))
        .nth(1)
        .unwrap();
    assert!(
        largest.trim_start().starts_with("largest: links_create ("),
        "{stats}"
    );
    // --stats is for `tools`
    let refused = ai_tools(&[
        "mcp",
        "--grpc",
        "http://127.0.0.1:1",
        "--reflection",
        "--stdio",
        "--stats",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
}
