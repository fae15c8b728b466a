//! One annotated proto for every language: `other_toolchains/proto/notes/v1/notes.proto`
//! imports `ai/context/v1/annotations.proto` and `ai/tools/v1/annotations.proto`;
//! `ai-tools protos --out third_party/ai-tools` writes them into a scratch
//! project, and each toolchain compiles the proto there with the commands of
//! the guide's "The annotation protos in other toolchains":
//!
//! - protoc (Debian's protobuf-compiler): the written protos all together,
//!   without a warning; a descriptor set with its imports, Go code
//!   (protoc-gen-go, the annotation protos mapped into the user's module
//!   with `M`) and Java code; and `other_toolchains/more/pings/v1/pings.proto`,
//!   which imports both declarations of `rpc_tool` and uses each, without a
//!   warning, its tools read from either;
//! - buf (npm `@bufbuild/buf`): the written directory as a module of its
//!   own, which a bare `buf build` and `buf lint` (its `buf.yaml`: STANDARD
//!   and the named exceptions) take as it is; the project's module built in
//!   a workspace that lists the written protos as a second module, and the
//!   whole workspace (pings.proto a third module) with a bare `buf build`;
//!   and the repository's own module, `schema/proto/buf.yaml`, built and
//!   linted the same way;
//! - grpcio-tools: Python code, which serves the service
//!   (`other_toolchains/notes_server.py`, grpcio).
//!
//! Then the Rust executor, a `ToolSet` over each descriptor set (protoc's,
//! buf's, grpcio-tools') with the tonic transport, calls the tool: the call
//! reaches the Python server and its answer comes back, the id aliased.
//!
//! A missing tool skips its part with a message, but fails the test under
//! `AI_TOOLS_REQUIRE_PROTOC` (protoc and protoc-gen-go), `AI_TOOLS_REQUIRE_BUF`
//! (buf: `AI_TOOLS_BUF`, else `target/buf/node_modules/.bin/buf`, else on the
//! PATH) or `AI_TOOLS_REQUIRE_PYTHON` (a Python with grpcio and grpcio-tools:
//! `AI_TOOLS_PYTHON`, else `target/py-venv/bin/python`); `.ci/run` installs
//! them all and sets the three.

// An integration test: its helpers fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use proto_ai_tools::schema::Dialect;
use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
use proto_ai_tools::transport::TonicTransport;
use support::workspace;

/// `program args…` run in `dir`; its output, the test failing when it fails.
fn run(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    assert!(
        output.status.success(),
        "{} {}: {}\n{}",
        program.display(),
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Whether `program args` runs and succeeds.
fn runs(program: &Path, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A tool that is not there: the test says so and goes on, unless `require`
/// is set, which fails it.
fn missing(require: &str, what: &str) {
    let reason = format!("{what}; its part of the test is skipped");
    assert!(
        std::env::var_os(require).is_none(),
        "{require} is set: {reason}"
    );
    eprintln!("SKIPPED: {reason}");
}

fn buf() -> Option<PathBuf> {
    std::env::var_os("AI_TOOLS_BUF")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            workspace().join("target/buf/node_modules/.bin/buf"),
            PathBuf::from("buf"),
        ])
        .find(|buf| runs(buf, &["--version"]))
}

fn python() -> Option<PathBuf> {
    std::env::var_os("AI_TOOLS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([workspace().join("target/py-venv/bin/python")])
        .find(|python| runs(python, &["-c", "import grpc, grpc_tools.protoc"]))
}

/// The guide's `buf.gen.yaml`.
const BUF_GEN_YAML: &str = "version: v2
managed:
  enabled: true
  override:
    - file_option: go_package_prefix
      value: example.com/notes/gen/go
inputs:
  - directory: proto
plugins:
  - local: protoc-gen-go
    out: gen/go
    opt: module=example.com/notes/gen/go
    include_imports: true
";

/// A scratch project: `proto/notes/v1/notes.proto` and
/// `more/pings/v1/pings.proto`, nothing else.
fn project() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ai-tools-toolchains-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for file in ["proto/notes/v1/notes.proto", "more/pings/v1/pings.proto"] {
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/other_toolchains")
                .join(file),
            to,
        )
        .unwrap();
    }
    dir
}

/// The import paths of the annotation protos `ai-tools protos` writes.
fn annotation_protos() -> Vec<&'static str> {
    proto_ai_tools::schema::ANNOTATION_PROTOS
        .iter()
        .map(|(path, _)| *path)
        .collect()
}

/// `run`, and nothing on stderr: protoc's warnings (an extension number
/// used twice, an unused import) go there and do not fail it.
fn run_quietly(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let output = run(dir, program, args);
    assert!(
        output.stderr.is_empty(),
        "{} {} warns: {}",
        program.display(),
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The tools of the descriptor set `set` (by `by`) that pings.proto
/// declares: one under each `rpc_tool`.
fn pings_tools(by: &str, set: &[u8]) {
    let set = ToolSet::from_descriptor_set(set, &ToolSetOptions::new())
        .unwrap_or_else(|e| panic!("{by}: the tools of its descriptor set: {e}"));
    let tools: Vec<(&str, &str)> = set
        .tools()
        .iter()
        .filter(|t| t.name.starts_with("pings_"))
        .map(|t| (t.name, t.description))
        .collect();
    assert_eq!(
        tools,
        [
            ("pings_ping", "Answer a ping."),
            ("pings_echo", "Echo a ping.")
        ],
        "{by}"
    );
    let echo = set.tools().iter().find(|t| t.name == "pings_echo").unwrap();
    assert_eq!(
        echo.consent,
        Some(proto_ai_tools::schema::ConsentPolicy::Confirm),
        "{by}: read from ai.tools.v1.rpc_tool"
    );
}

/// The Python server, started on the code in `generated`, killed when
/// dropped.
struct PythonServer {
    child: std::process::Child,
    port: u16,
}

impl PythonServer {
    fn start(python: &Path, generated: &Path) -> Self {
        let mut child = Command::new(python)
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/other_toolchains/notes_server.py"),
            )
            .arg(generated)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the Python server starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let tool = lines.next().expect("a line").expect("read");
        // The annotation, read in Python through the generated annotations_pb2.
        assert_eq!(tool, "TOOL notes_create");
        let port = lines.next().expect("a line").expect("read");
        let port = port
            .strip_prefix("PORT ")
            .expect("`PORT n`")
            .parse()
            .expect("a port");
        Self { child, port }
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tool of `set` (a descriptor set by `by`), as the annotations say, and
/// a call of it through the executor that reaches the Python server.
async fn call_through(by: &str, set: &[u8], port: u16) {
    let set = ToolSet::from_descriptor_set(set, &ToolSetOptions::new())
        .unwrap_or_else(|e| panic!("{by}: the tools of its descriptor set: {e}"));
    let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
    assert_eq!(names, ["notes_create"], "{by}");
    let tool = set.tools()[0];
    assert_eq!(tool.description, "Create a note.", "{by}");
    let parameters: serde_json::Value =
        serde_json::from_str(tool.parameters_for(Dialect::OpenAi)).unwrap();
    let properties = &parameters["properties"];
    assert_eq!(
        properties["text"]["description"], "The note's text.\n\nWrite it as the user said it.",
        "{by}: the comment (source info) and the usage notes"
    );
    assert!(properties.get("trace").is_none(), "{by}: skipped");

    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_lazy();
    let executor = set.executor(TonicTransport::new(channel));
    let result = executor
        .execute("notes_create", r#"{"text": "buy milk"}"#)
        .await;
    assert!(!result.is_error, "{by}: {}", result.output);
    let answer: serde_json::Value = serde_json::from_str(&result.output).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({
            "id": "note-1",
            "text": "buy milk (stored by grpcio; trace='')",
        }),
        "{by}: the server's UUID reaches the model as an alias"
    );
}

#[test]
fn an_annotated_proto_compiles_with_protoc_buf_and_grpcio_tools_and_serves_from_python() {
    let project = project();
    let ai_tools = Path::new(env!("CARGO_BIN_EXE_ai-tools"));
    let written = run(
        &project,
        ai_tools,
        &["protos", "--out", "third_party/ai-tools"],
    );
    // The four protos and the module's buf.yaml.
    assert_eq!(String::from_utf8_lossy(&written.stdout).lines().count(), 5);
    assert!(project.join("third_party/ai-tools/buf.yaml").is_file());
    let mut sets: Vec<(&str, Vec<u8>)> = Vec::new();

    // protoc: the written protos together, the descriptor set the executor
    // reads, Go and Java code; a file importing both `rpc_tool`s.
    let protoc = Path::new("protoc");
    if runs(protoc, &["--version"]) {
        let mut all = vec![
            "-I",
            "third_party/ai-tools",
            "--include_imports",
            "--descriptor_set_out=annotations.binpb",
        ];
        all.extend(annotation_protos());
        run_quietly(&project, protoc, &all);
        run_quietly(
            &project,
            protoc,
            &[
                "-I",
                "more",
                "-I",
                "third_party/ai-tools",
                "--include_imports",
                "--include_source_info",
                "--descriptor_set_out=pings.binpb",
                "more/pings/v1/pings.proto",
            ],
        );
        pings_tools(
            "protoc",
            &std::fs::read(project.join("pings.binpb")).unwrap(),
        );
        run_quietly(
            &project,
            protoc,
            &[
                "-I",
                "proto",
                "-I",
                "third_party/ai-tools",
                "--include_imports",
                "--include_source_info",
                "--descriptor_set_out=notes.binpb",
                "proto/notes/v1/notes.proto",
            ],
        );
        sets.push((
            "protoc",
            std::fs::read(project.join("notes.binpb")).unwrap(),
        ));

        // protoc writes into directories that exist (`mkdir -p gen/java`).
        std::fs::create_dir_all(project.join("gen/java")).unwrap();

        run(
            &project,
            protoc,
            &[
                "-I",
                "proto",
                "-I",
                "third_party/ai-tools",
                "--java_out=gen/java",
                "proto/notes/v1/notes.proto",
                "ai/context/v1/annotations.proto",
                "ai/tools/v1/annotations.proto",
            ],
        );
        for file in [
            "notes/v1/Notes.java",
            "ai/context/v1/Annotations.java",
            "ai/tools/v1/Annotations.java",
        ] {
            assert!(project.join("gen/java").join(file).is_file(), "{file}");
        }

        if runs(Path::new("protoc-gen-go"), &["--version"]) {
            run(
                &project,
                protoc,
                &[
                    "-I",
                    "proto",
                    "-I",
                    "third_party/ai-tools",
                    "--go_out=.",
                    "--go_opt=module=example.com/notes",
                    "--go_opt=Mai/context/v1/annotations.proto=example.com/notes/gen/go/ai/context/v1",
                    "--go_opt=Mai/tools/v1/annotations.proto=example.com/notes/gen/go/ai/tools/v1",
                    "proto/notes/v1/notes.proto",
                    "ai/context/v1/annotations.proto",
                    "ai/tools/v1/annotations.proto",
                ],
            );
            let notes = std::fs::read_to_string(project.join("gen/go/notes/v1/notes.pb.go"))
                .expect("notes.pb.go");
            assert!(
                notes.contains("_ \"example.com/notes/gen/go/ai/context/v1\"")
                    && notes.contains("_ \"example.com/notes/gen/go/ai/tools/v1\""),
                "{notes}"
            );
            // The package names of the annotation protos' go_package.
            let context =
                std::fs::read_to_string(project.join("gen/go/ai/context/v1/annotations.pb.go"))
                    .expect("annotations.pb.go");
            assert!(context.contains("\npackage contextv1\n"), "{context}");
            let tools =
                std::fs::read_to_string(project.join("gen/go/ai/tools/v1/annotations.pb.go"))
                    .expect("annotations.pb.go");
            assert!(tools.contains("\npackage toolsv1\n"), "{tools}");
        } else {
            missing(
                "AI_TOOLS_REQUIRE_PROTOC",
                "no protoc-gen-go on the PATH (Debian: apt-get install protoc-gen-go)",
            );
        }
    } else {
        missing(
            "AI_TOOLS_REQUIRE_PROTOC",
            "no protoc on the PATH (Debian: apt-get install protobuf-compiler)",
        );
    }

    // buf: the written protos as a module of their own; the user's module
    // in a workspace with them, and the whole workspace; then the
    // repository's own module.
    if let Some(buf) = buf() {
        // Before the project's buf.yaml exists: the module's own buf.yaml is
        // the one buf reads.
        let written = project.join("third_party/ai-tools");
        let image = project.join("written.binpb");
        run(&written, &buf, &["build", "-o", image.to_str().unwrap()]);
        run(&written, &buf, &["lint"]);
        std::fs::write(
            project.join("buf.yaml"),
            "version: v2\nmodules:\n  - path: proto\n  - path: third_party/ai-tools\n  - path: more\n",
        )
        .unwrap();
        run(&project, &buf, &["build", "proto", "-o", "notes-buf.binpb"]);
        sets.push((
            "buf",
            std::fs::read(project.join("notes-buf.binpb")).unwrap(),
        ));
        // The whole workspace, both rpc_tool declarations and a file that
        // imports both among its files, in one bare build.
        run(&project, &buf, &["build", "-o", "whole.binpb"]);
        pings_tools(
            "buf (the whole workspace)",
            &std::fs::read(project.join("whole.binpb")).unwrap(),
        );

        // Go code through buf's managed mode, the annotation protos' too.
        if runs(Path::new("protoc-gen-go"), &["--version"]) {
            // Not what protoc wrote there.
            let _ = std::fs::remove_dir_all(project.join("gen/go"));
            std::fs::write(project.join("buf.gen.yaml"), BUF_GEN_YAML).unwrap();
            run(&project, &buf, &["generate"]);
            for file in [
                "notes/v1/notes.pb.go",
                "ai/context/v1/annotations.pb.go",
                "ai/tools/v1/annotations.pb.go",
            ] {
                let go = std::fs::read_to_string(project.join("gen/go").join(file))
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
                assert!(
                    !file.starts_with("notes")
                        || go.contains("_ \"example.com/notes/gen/go/ai/context/v1\""),
                    "{go}"
                );
            }
        }

        let module = workspace().join("schema/proto");
        let image = project.join("module.binpb");
        run(&module, &buf, &["build", "-o", image.to_str().unwrap()]);
        run(&module, &buf, &["lint"]);
        let files = run(&module, &buf, &["ls-files"]);
        let mut listed: Vec<String> = String::from_utf8_lossy(&files.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        listed.sort();
        let mut served: Vec<String> = proto_ai_tools::schema::ANNOTATION_PROTOS
            .iter()
            .map(|(path, _)| (*path).to_owned())
            .collect();
        served.sort();
        assert_eq!(listed, served, "the module holds the served protos");
    } else {
        missing(
            "AI_TOOLS_REQUIRE_BUF",
            "no buf (npm install --prefix target/buf @bufbuild/buf, as .ci/run does)",
        );
    }

    // grpcio-tools: the Python code and a descriptor set of its own; the
    // server on that code, called through the executor with every set.
    let Some(python) = python() else {
        missing(
            "AI_TOOLS_REQUIRE_PYTHON",
            "no Python with grpcio and grpcio-tools (set AI_TOOLS_PYTHON or run .ci/run)",
        );
        std::fs::remove_dir_all(&project).unwrap();
        return;
    };
    std::fs::create_dir_all(project.join("gen/python")).unwrap();
    run(
        &project,
        &python,
        &[
            "-m",
            "grpc_tools.protoc",
            "-I",
            "proto",
            "-I",
            "third_party/ai-tools",
            "--python_out=gen/python",
            "--grpc_python_out=gen/python",
            "proto/notes/v1/notes.proto",
            "ai/context/v1/annotations.proto",
            "ai/tools/v1/annotations.proto",
        ],
    );
    run(
        &project,
        &python,
        &[
            "-m",
            "grpc_tools.protoc",
            "-I",
            "proto",
            "-I",
            "third_party/ai-tools",
            "--include_imports",
            "--include_source_info",
            "--descriptor_set_out=notes-grpcio.binpb",
            "proto/notes/v1/notes.proto",
        ],
    );
    sets.push((
        "grpcio-tools",
        std::fs::read(project.join("notes-grpcio.binpb")).unwrap(),
    ));

    let server = PythonServer::start(&python, &project.join("gen/python"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (by, set) in &sets {
        runtime.block_on(call_through(by, set, server.port));
    }
    drop(server);
    std::fs::remove_dir_all(&project).unwrap();
}
