//! Long-running operations served as MCP tasks, against a real tonic
//! backend that implements a long-running method
//! (`proto/lro/v1/reports.proto`) and `google.longrunning.Operations` with
//! real delays, behind a real `McpServer` on loopback over streamable HTTP.
//!
//! - A task-capable client, the official TypeScript client
//!   (`@modelcontextprotocol/client`, `tests/node/tasks_host.mjs`), declares
//!   the tasks extension at `initialize`: a call becomes a task, `tasks/get`
//!   polls it until the unpacked, aliased report (or the failed operation's
//!   error result) is its result, `tasks/cancel` reaches the backend's
//!   `CancelOperation`, and the task id is refused in another session.
//! - A client without tasks, the official Python SDK
//!   (`tests/lro/operations_get.py`), gets the operation as JSON and
//!   follows it with `operations_get`.
//! - A stateless caller (protocol 2026-07-28, raw JSON-RPC over HTTP, whose
//!   scope is a header) declares tasks in a request's `_meta`, and its task
//!   id is refused to another caller.
//!
//! Both need their runtime (Node.js 20+, `AI_TOOLS_NODE`; the Python venv
//! with `mcp`, `AI_TOOLS_PYTHON`): without one its test is skipped, saying
//! so, unless `AI_TOOLS_REQUIRE_NODE` / `AI_TOOLS_REQUIRE_MCP` is set.
#![cfg(feature = "mcp")]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proto_ai_tools::Toolkit;
use proto_ai_tools::schema::overlay::Overlay;
use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
use proto_ai_tools::transport::TonicTransport;
use proto_ai_tools_mcp::{McpServer, ServeError};
use proto_ai_tools_tests::serve_router;
use proto_ai_tools_tests::support::{node_at_least, node_required, python_importing};
use tonic::{Request, Response, Status};

/// The code tonic generates for `reports.proto` and the googleapis packages
/// it brings (servers only).
#[allow(clippy::all, missing_docs, dead_code)]
mod pb {
    pub mod lro {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/lro/lro.v1.rs"));
        }
    }
    pub mod google {
        pub mod longrunning {
            include!(concat!(env!("OUT_DIR"), "/lro/google.longrunning.rs"));
        }
        pub mod rpc {
            include!(concat!(env!("OUT_DIR"), "/lro/google.rpc.rs"));
        }
    }
}

use pb::google::longrunning::operations_server::{Operations, OperationsServer};
use pb::google::longrunning::{
    CancelOperationRequest, DeleteOperationRequest, GetOperationRequest, ListOperationsRequest,
    ListOperationsResponse, Operation, WaitOperationRequest, operation,
};
use pb::lro::v1::reports_service_server::{ReportsService, ReportsServiceServer};
use pb::lro::v1::{BuildProgress, BuildReportRequest, Report};

/// The header the server forwards, and the backend records on every call.
const TENANT: &str = "x-tenant";

/// What a report's row count is: past 2^53, so protojson writes it as a
/// string of digits.
const ROWS: i64 = 9_007_199_254_740_993;

/// The MCP clients' time limit.
const LIMIT: Duration = Duration::from_secs(120);

/// One build the backend is running or ran.
struct Build {
    title: String,
    started: Instant,
    work: Duration,
    fail: bool,
    cancelled: bool,
    report_id: String,
}

/// What the backend saw, for the test's assertions at the service.
#[derive(Default)]
struct Seen {
    builds: HashMap<String, Build>,
    /// The operation of each `CancelOperation`, in order.
    cancels: Vec<String>,
    /// Each Operations call: method, operation and the tenant header it
    /// carried.
    operations_calls: Vec<(&'static str, String, Option<String>)>,
}

#[derive(Clone, Default)]
struct Backend {
    seen: Arc<Mutex<Seen>>,
}

fn any<M: prost::Message>(message: &M, full_name: &str) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{full_name}"),
        value: message.encode_to_vec(),
    }
}

fn tenant<T>(request: &Request<T>) -> Option<String> {
    request
        .metadata()
        .get(TENANT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl Backend {
    fn operation(&self, name: &str) -> Result<Operation, Status> {
        let seen = self.seen.lock().unwrap();
        let build = seen
            .builds
            .get(name)
            .ok_or_else(|| Status::not_found(format!("no operation {name}")))?;
        let elapsed = build.started.elapsed();
        let percent = (elapsed.as_millis() * 100 / build.work.as_millis().max(1)).min(100);
        let mut op = Operation {
            name: name.to_owned(),
            metadata: Some(any(
                &BuildProgress {
                    percent: percent as u32,
                },
                "lro.v1.BuildProgress",
            )),
            done: false,
            result: None,
        };
        if build.cancelled {
            op.done = true;
            op.result = Some(operation::Result::Error(pb::google::rpc::Status {
                code: tonic::Code::Cancelled as i32,
                message: format!("the build of {} was cancelled", build.title),
                details: vec![],
            }));
        } else if elapsed >= build.work {
            op.done = true;
            op.result = Some(if build.fail {
                operation::Result::Error(pb::google::rpc::Status {
                    code: tonic::Code::FailedPrecondition as i32,
                    message: format!("the dataset of {} has no rows", build.title),
                    details: vec![],
                })
            } else {
                operation::Result::Response(any(
                    &Report {
                        id: build.report_id.clone(),
                        title: build.title.clone(),
                        rows: ROWS,
                    },
                    "lro.v1.Report",
                ))
            });
        }
        Ok(op)
    }
}

#[tonic::async_trait]
impl ReportsService for Backend {
    async fn build_report(
        &self,
        request: Request<BuildReportRequest>,
    ) -> Result<Response<Operation>, Status> {
        let request = request.into_inner();
        let name = {
            let mut seen = self.seen.lock().unwrap();
            let n = seen.builds.len() + 1;
            // A UUID, which an overlay may give an alias prefix.
            let name = format!("0c4e6a1d-3b2f-4d5e-8f70-{n:012x}");
            seen.builds.insert(
                name.clone(),
                Build {
                    title: request.title,
                    started: Instant::now(),
                    work: Duration::from_millis(u64::from(request.work_ms.min(60_000))),
                    fail: request.fail,
                    cancelled: false,
                    report_id: format!("7b0c3f1e-5d2a-4c8b-9e6f-{n:012x}"),
                },
            );
            name
        };
        self.operation(&name).map(Response::new)
    }
}

#[tonic::async_trait]
impl Operations for Backend {
    async fn list_operations(
        &self,
        _: Request<ListOperationsRequest>,
    ) -> Result<Response<ListOperationsResponse>, Status> {
        Err(Status::unimplemented("ListOperations"))
    }

    async fn get_operation(
        &self,
        request: Request<GetOperationRequest>,
    ) -> Result<Response<Operation>, Status> {
        let tenant = tenant(&request);
        let name = request.into_inner().name;
        self.seen
            .lock()
            .unwrap()
            .operations_calls
            .push(("GetOperation", name.clone(), tenant));
        self.operation(&name).map(Response::new)
    }

    async fn delete_operation(
        &self,
        _: Request<DeleteOperationRequest>,
    ) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("DeleteOperation"))
    }

    async fn cancel_operation(
        &self,
        request: Request<CancelOperationRequest>,
    ) -> Result<Response<()>, Status> {
        let tenant = tenant(&request);
        let name = request.into_inner().name;
        let mut seen = self.seen.lock().unwrap();
        seen.operations_calls
            .push(("CancelOperation", name.clone(), tenant));
        let build = seen
            .builds
            .get_mut(&name)
            .ok_or_else(|| Status::not_found(format!("no operation {name}")))?;
        build.cancelled = true;
        seen.cancels.push(name);
        Ok(Response::new(()))
    }

    async fn wait_operation(
        &self,
        _: Request<WaitOperationRequest>,
    ) -> Result<Response<Operation>, Status> {
        Err(Status::unimplemented("WaitOperation"))
    }
}

/// The backend on loopback, with or without the Operations service.
async fn start_backend(
    with_operations: bool,
) -> (Backend, proto_ai_tools_tests::Server, SocketAddr) {
    let backend = Backend::default();
    let router =
        tonic::transport::Server::builder().add_service(ReportsServiceServer::new(backend.clone()));
    let router = if with_operations {
        router.add_service(OperationsServer::new(backend.clone()))
    } else {
        router
    };
    let server = serve_router("127.0.0.1:0".parse().unwrap(), router)
        .await
        .expect("the backend starts");
    let addr = server.addr;
    (backend, server, addr)
}

fn tool_set() -> ToolSet {
    ToolSet::from_descriptor_set(
        include_bytes!(concat!(env!("OUT_DIR"), "/lro_descriptor.bin")),
        &ToolSetOptions::default(),
    )
    .expect("the reports tools")
}

/// The operation of the build titled `title`.
fn name_of(seen: &Seen, title: &str) -> String {
    seen.builds
        .iter()
        .find(|(_, b)| b.title == title)
        .map(|(name, _)| name.clone())
        .unwrap_or_else(|| panic!("no build titled {title}"))
}

fn build_titled<'s>(seen: &'s Seen, title: &str) -> &'s Build {
    &seen.builds[&name_of(seen, title)]
}

/// An MCP server of the reports tools over `backend`, one toolkit per
/// session, forwarding [`TENANT`].
fn mcp_server(backend: SocketAddr) -> McpServer {
    mcp_server_of(tool_set(), backend)
}

/// The reports tools with an overlay that gives an operation's name the
/// alias prefix `operation`.
fn tool_set_with_operation_aliases() -> ToolSet {
    let overlay = Overlay::parse(
        "operations.toml",
        "[fields.\"google.longrunning.Operation.name\"]\nalias_prefix = \"operation\"\n",
    )
    .expect("an overlay");
    ToolSet::from_descriptor_set(
        include_bytes!(concat!(env!("OUT_DIR"), "/lro_descriptor.bin")),
        &ToolSetOptions::default().overlay(overlay),
    )
    .expect("the reports tools, overlaid")
}

fn mcp_server_of(set: ToolSet, backend: SocketAddr) -> McpServer {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{backend}"))
        .expect("url")
        .connect_lazy();
    McpServer::new(move |aliases| {
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(
                set.executor_with_alias_manager(TonicTransport::new(channel.clone()), aliases),
            )
            .build()
    })
    .forward_headers([TENANT])
    .expect("a forwardable header")
    .with_server_info("lro", "1")
}

struct Running {
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<Result<(), ServeError>>,
}

async fn serve(server: McpServer) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http_until(listener, async {
        let _ = stopped.await;
    }));
    Running { url, stop, serving }
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.serving).await;
    }
}

/// Runs `program args` to its end within [`LIMIT`] on a blocking thread;
/// its stdout, and whether it succeeded.
async fn run(mut command: Command) -> (String, bool) {
    tokio::task::spawn_blocking(move || {
        let output = command.output().expect("the client starts");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        eprintln!("{stdout}\n{stderr}");
        (stdout, output.status.success())
    })
    .await
    .expect("the client thread")
}

/// The lines the client printed that failed a check.
fn failures(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("FAIL")).collect()
}

fn skipped(reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
}

fn tests_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_long_running_method_is_found_from_its_operation_info() {
    let set = tool_set();
    let pool = set.executor(proto_ai_tools::transport::InProcessTransport::new());
    let method = pool
        .pool()
        .get_service_by_name("lro.v1.ReportsService")
        .unwrap()
        .methods()
        .next()
        .unwrap();
    let found = proto_ai_tools::schema::proto::long_running(&method)
        .unwrap()
        .unwrap();
    // `Report` and `BuildProgress` are bare names: the method's package's.
    assert_eq!(found.response.full_name(), "lro.v1.Report");
    assert_eq!(found.metadata.unwrap().full_name(), "lro.v1.BuildProgress");
    // GetOperation returns an Operation but carries no operation_info.
    let get = pool
        .pool()
        .get_service_by_name("google.longrunning.Operations")
        .unwrap()
        .methods()
        .find(|m| m.name() == "GetOperation")
        .unwrap();
    assert!(proto_ai_tools::schema::proto::long_running(&get).is_none());
    // The report's id is aliased when the finished operation is written.
    let tool = set.tools()[0];
    assert!(
        tool.response_aliases
            .iter()
            .any(|a| a.message == "lro.v1.Report" && a.field == "id" && a.prefix == "report")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_lists_operations_get_and_advertises_tasks_only_for_long_running_tools() {
    let (_, _backend, addr) = start_backend(true).await;
    let tools = mcp_server(addr).tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["reports_build", "operations_get"]);
    // A server of no long-running tool lists no operations_get.
    let plain = McpServer::new(|aliases| {
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(
                proto_ai_tools_tests::tools::links::Executor::with_alias_manager(
                    proto_ai_tools::transport::InProcessTransport::new(),
                    aliases,
                ),
            )
            .build()
    });
    assert!(
        plain
            .tools()
            .unwrap()
            .iter()
            .all(|t| t.name != proto_ai_tools_mcp::OPERATIONS_GET)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_tool_lists_an_output_schema_only_without_tasks() {
    let (_, _backend, addr) = start_backend(true).await;
    let schema_of = |server: McpServer| {
        server
            .tools()
            .unwrap()
            .into_iter()
            .find(|t| t.name == "reports_build")
            .unwrap()
            .output_schema
    };
    // With tasks a call's result is the operation or the unpacked report,
    // by client: no schema.
    assert!(schema_of(mcp_server(addr).with_output_schemas(true)).is_none());
    // Without them it is always the operation, which the schema describes.
    let schema = schema_of(mcp_server(addr).with_output_schemas(true).with_tasks(false)).unwrap();
    assert!(schema["properties"]["done"].is_object(), "{schema:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_capable_client_follows_a_build_as_a_task() {
    let node = match node_at_least(20) {
        Ok(node) => node,
        Err(why) if !node_required() => return skipped(&why),
        Err(why) => panic!("{why}"),
    };
    let (backend, _server, addr) = start_backend(true).await;
    let running = serve(mcp_server(addr)).await;
    // A backend that serves the method but not google.longrunning.Operations.
    let (_, _bare_server, bare_addr) = start_backend(false).await;
    let bare = serve(mcp_server(bare_addr)).await;
    let untasked = serve(mcp_server(addr).with_tasks(false)).await;
    let mut command = Command::new(node);
    command
        .arg(tests_dir().join("node/tasks_host.mjs"))
        .arg(&running.url)
        .arg(&bare.url)
        .arg(&untasked.url);
    let (stdout, success) = tokio::time::timeout(LIMIT, run(command))
        .await
        .expect("the client ends in time");
    running.stop().await;
    bare.stop().await;
    untasked.stop().await;
    assert!(failures(&stdout).is_empty(), "{:?}", failures(&stdout));
    assert!(success, "the client failed:\n{stdout}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");

    let seen = backend.seen.lock().unwrap();
    // tasks/cancel reached CancelOperation, for the build it named.
    let long = name_of(&seen, "long");
    assert_eq!(seen.cancels, [long]);
    // Every poll and cancel carried the caller's forwarded header, as a
    // call of the tool does.
    assert!(
        seen.operations_calls
            .iter()
            .any(|(method, _, _)| *method == "GetOperation")
    );
    for (method, name, tenant) in &seen.operations_calls {
        assert_eq!(tenant.as_deref(), Some("acme"), "{method}");
        assert!(seen.builds.contains_key(name), "{method} of {name}");
    }
    // Polled until done, not answered at once: the first build ran its
    // course at the backend.
    let first = build_titled(&seen, "Q3");
    assert!(first.started.elapsed() >= first.work);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_tasks_follows_a_build_with_operations_get() {
    let python = match python_importing("mcp") {
        Ok(python) => python,
        Err(why) if std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_none() => return skipped(&why),
        Err(why) => panic!("{why}"),
    };
    let (backend, _server, addr) = start_backend(true).await;
    let running = serve(mcp_server_of(tool_set_with_operation_aliases(), addr)).await;
    // A backend that serves the method but not google.longrunning.Operations.
    let (_, _bare_server, bare_addr) = start_backend(false).await;
    let bare = serve(mcp_server(bare_addr)).await;
    let mut command = Command::new(python);
    command
        .arg(tests_dir().join("lro/operations_get.py"))
        .arg(&running.url)
        .arg(&bare.url);
    let (stdout, success) = tokio::time::timeout(LIMIT, run(command))
        .await
        .expect("the client ends in time");
    running.stop().await;
    bare.stop().await;
    assert!(failures(&stdout).is_empty(), "{:?}", failures(&stdout));
    assert!(success, "the client failed:\n{stdout}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");

    let seen = backend.seen.lock().unwrap();
    // `operations_get` resolved the alias the call gave out: the backend
    // was asked for the operation itself, never for its alias.
    let q4 = name_of(&seen, "Q4");
    let asked: Vec<&str> = seen
        .operations_calls
        .iter()
        .map(|(_, name, _)| name.as_str())
        .collect();
    assert!(asked.contains(&q4.as_str()), "{asked:?}");
    assert!(
        asked.iter().all(|name| !name.starts_with("operation-")),
        "{asked:?}"
    );
    assert!(seen.cancels.is_empty());
    let built = build_titled(&seen, "Q4");
    assert!(built.started.elapsed() >= built.work);
}

/// One stateless request (MCP 2026-07-28: no session) of `method` from
/// `principal`, declaring the tasks extension or not; its JSON-RPC answer.
async fn stateless(
    addr: SocketAddr,
    principal: &str,
    method: &str,
    name: &str,
    params: serde_json::Value,
    tasks: bool,
) -> serde_json::Value {
    let capabilities = if tasks {
        serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        serde_json::json!({})
    };
    stateless_with(addr, principal, method, name, params, capabilities).await
}

/// [`stateless`] with the client capabilities the request declares.
async fn stateless_with(
    addr: SocketAddr,
    principal: &str,
    method: &str,
    name: &str,
    params: serde_json::Value,
    capabilities: serde_json::Value,
) -> serde_json::Value {
    use proto_ai_tools_tests::http::{exchange, http_request};
    let mut params = params;
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string();
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
        ("x-principal", principal),
        (TENANT, "acme"),
    ];
    let response = exchange(
        addr,
        &http_request("POST", "/mcp", &headers, &body),
        Duration::from_secs(30),
    )
    .await;
    let message = response.message();
    // A JSON-RPC error may come with an HTTP error status; a result never.
    if message.get("error").is_none() {
        assert_eq!(response.status, 200, "{response:?}");
    }
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_caller_declares_tasks_per_request_and_keeps_its_tasks() {
    let (backend, _server, addr) = start_backend(true).await;
    let server = mcp_server(addr)
        .with_alias_scope_header("x-principal")
        .unwrap();
    let running = serve(server).await;
    let mcp: SocketAddr = running
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let arguments = serde_json::json!({"name": "reports_build", "arguments": {"title": "stateless", "work_ms": 400}});

    // Declared in this request's `_meta`: a task.
    let started = stateless(
        mcp,
        "alice",
        "tools/call",
        "reports_build",
        arguments.clone(),
        true,
    )
    .await;
    let task = &started["result"];
    assert_eq!(task["resultType"], "task", "{started}");
    assert_eq!(task["status"], "working", "{started}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    let params = serde_json::json!({ "taskId": id });

    // Another caller is refused the id; the caller polls it to its end.
    let stolen = stateless(mcp, "bob", "tasks/get", &id, params.clone(), true).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let state = stateless(mcp, "alice", "tasks/get", &id, params.clone(), true).await;
        let result = &state["result"];
        if result["status"] != "working" {
            break result.clone();
        }
        assert!(Instant::now() < deadline, "{state}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["status"], "completed", "{done}");
    let written: serde_json::Value =
        serde_json::from_str(done["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(written["title"], "stateless");
    assert_eq!(
        written["id"], "report-1",
        "the caller's first report: {written}"
    );

    // tasks/get without the extension declared is refused by rmcp:
    // missing required client capability.
    let undeclared = stateless(mcp, "alice", "tasks/get", &id, params, false).await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    // Not declared: the call answers with the operation, as before.
    let plain = stateless(
        mcp,
        "alice",
        "tools/call",
        "reports_build",
        arguments,
        false,
    )
    .await;
    let text = plain["result"]["content"][0]["text"].as_str().unwrap();
    let operation: serde_json::Value = serde_json::from_str(text).unwrap();
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    assert!(
        backend
            .seen
            .lock()
            .unwrap()
            .builds
            .contains_key(operation["name"].as_str().unwrap())
    );
    running.stop().await;
}

/// A long-running tool a person must approve (`--confirm writes` makes
/// `reports_build` one) asks before its operation starts: a caller that
/// declares tasks but cannot ask is refused, one that can ask gets the
/// question back, and nothing reaches the backend until the approval comes
/// back; then the call becomes a task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_tool_that_needs_consent_asks_before_its_operation_starts() {
    let (backend, _server, addr) = start_backend(true).await;
    let server = mcp_server(addr)
        .with_alias_scope_header("x-principal")
        .unwrap()
        .with_confirm(proto_ai_tools::consent::ConfirmClass::Writes);
    let running = serve(server).await;
    let mcp: SocketAddr = running
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let arguments = serde_json::json!({"name": "reports_build", "arguments": {"title": "asked", "work_ms": 50}});
    let tasks = serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let call = |params: serde_json::Value, capabilities: serde_json::Value| {
        stateless_with(
            mcp,
            "alice",
            "tools/call",
            "reports_build",
            params,
            capabilities,
        )
    };

    let refused = call(arguments.clone(), tasks.clone()).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("needs a person's approval"), "{text}");

    let mut asking = tasks.clone();
    asking["elicitation"] = serde_json::json!({"form": {}});
    let asked = call(arguments.clone(), asking.clone()).await;
    let question = &asked["result"];
    assert_eq!(question["resultType"], "input_required", "{asked}");
    assert_eq!(
        question["inputRequests"]["consent"]["method"], "elicitation/create",
        "{asked}"
    );
    let state = question["requestState"].as_str().unwrap();
    assert!(
        backend.seen.lock().unwrap().builds.is_empty(),
        "nothing started before an answer"
    );

    let mut answered = arguments.clone();
    answered["requestState"] = serde_json::json!(state);
    answered["inputResponses"] =
        serde_json::json!({"consent": {"action": "accept", "content": {"confirm": true}}});
    let started = call(answered, asking).await;
    assert_eq!(started["result"]["resultType"], "task", "{started}");
    running.stop().await;
    assert_eq!(backend.seen.lock().unwrap().builds.len(), 1);
}
