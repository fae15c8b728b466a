//! Assertions and setup the integration tests share.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prost_reflect::{DescriptorPool, DynamicMessage};
use proto_ai_tools::schema::Dialect;
use proto_ai_tools::schema::check::{Violation, check, check_request};
use proto_ai_tools::{
    AgentTool, AliasManager, Sessions, ToolResult,
    executor::ProtoExecutor,
    store::AliasStore,
    transport::{InProcessTransport, TonicTransport},
};
use serde_json::Value;

use crate::{LINKS_POOL, LinksBackend, Received, RunningServer, new_uuid, pb, tools};

/// The output of `future`, which must be ready at once: an
/// [`AliasManager`] without a store never waits, so its async methods can be
/// used from synchronous code (property tests, generators).
///
/// # Panics
///
/// When `future` is not ready on its first poll.
pub fn ready<F: std::future::Future>(future: F) -> F::Output {
    let waker = std::task::Waker::noop();
    match std::pin::pin!(future).poll(&mut std::task::Context::from_waker(waker)) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the future waits, but it was expected ready at once"),
    }
}

/// The output of a successful result, as JSON; panics naming the error otherwise.
pub fn ok_json(result: &ToolResult) -> Value {
    assert!(!result.is_error, "unexpected error: {}", result.output);
    serde_json::from_str(&result.output).expect("output is JSON")
}

/// The text of an error result; panics naming the output otherwise.
pub fn error_text(result: &ToolResult) -> &str {
    assert!(result.is_error, "expected an error, got: {}", result.output);
    &result.output
}

/// The `link_id` of every `CreateWorkflowStep` the service received, in order.
pub fn step_link_ids(backend: &LinksBackend) -> Vec<String> {
    backend
        .received()
        .into_iter()
        .filter_map(|r| match r {
            Received::CreateWorkflowStep(s) => Some(s.link_id),
            _ => None,
        })
        .collect()
}

/// Every static rendering of `tool`, parsed, with the dialect it is for.
pub fn renderings(tool: &AgentTool) -> Vec<(Dialect, Value)> {
    Dialect::ALL
        .into_iter()
        .map(|dialect| {
            let text = tool.parameters_for(dialect);
            let parsed = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{} {dialect}: not JSON ({e})", tool.name));
            (dialect, parsed)
        })
        .collect()
}

/// Checks every static rendering of every one of `tools` with its
/// dialect's checker (`proto_ai_tools::schema::check::check`), and with `also`
/// (tool, dialect, parsed rendering) for what a caller asserts besides;
/// panics listing every violation. Returns how many renderings it checked.
pub fn check_every_rendering<'a>(
    tools: impl IntoIterator<Item = &'a AgentTool>,
    mut also: impl FnMut(&AgentTool, Dialect, &Value),
) -> usize {
    let mut failures = Vec::new();
    let mut checked = 0;
    for tool in tools {
        for (dialect, schema) in renderings(tool) {
            checked += 1;
            for v in check(dialect, tool.strict, &schema) {
                failures.push(format!("{} {dialect}: {v}", tool.name));
            }
            also(tool, dialect, &schema);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    checked
}

/// What `check_request` says of `tools` sent together as one request in
/// `dialect`.
pub fn request_violations<'a>(
    dialect: Dialect,
    tools: impl IntoIterator<Item = &'a AgentTool>,
) -> Vec<Violation> {
    let parsed: Vec<(&str, bool, Value)> = tools
        .into_iter()
        .map(|t| {
            let schema = t.parameters_for(dialect);
            let parsed = serde_json::from_str(schema)
                .unwrap_or_else(|e| panic!("{} {dialect}: not JSON ({e})", t.name));
            (t.name, t.strict, parsed)
        })
        .collect();
    let refs: Vec<(&str, bool, &Value)> = parsed.iter().map(|(n, s, v)| (*n, *s, v)).collect();
    check_request(dialect, &refs)
}

/// The alias store goes away while the service answers a
/// `links_create` (the service is slowed by `service_delay`, and `stop`
/// takes the store down meanwhile): the call took effect, its answer is
/// withheld, and no raw UUID reaches the model. Then, with the store
/// still down, a call with an alias is refused within `refused_within`
/// before anything is sent. Returns the links the service holds.
pub async fn store_down_mid_call(
    exec: &crate::tools::links::Executor<TonicTransport>,
    backend: &LinksBackend,
    service_delay: Duration,
    stop: impl std::future::Future<Output = ()>,
    refused_within: Duration,
) -> Vec<crate::pb::Link> {
    let links_before = backend.links().len();
    backend.set_delay(service_delay);
    let call = exec.execute("links_create", r#"{"destination":"https://y.example"}"#);
    let (result, ()) = tokio::join!(call, stop);
    let text = error_text(&result).to_owned();
    assert!(text.contains("the alias store is unavailable"), "{text}");
    assert_nothing_internal(&text);
    assert!(text.contains("the answer is withheld"), "{text}");
    assert!(text.contains("do not repeat it blindly"), "{text}");
    let links = backend.links();
    assert_eq!(
        links.len(),
        links_before + 1,
        "the call reached the service"
    );
    for link in &links {
        assert!(
            !text.contains(&link.id) && !text.contains(&link.page_theme_id),
            "{text}"
        );
    }

    let received = backend.received().len();
    let started = std::time::Instant::now();
    let result = exec
        .execute("links_update", r#"{"link_id":"link-1","name":"x"}"#)
        .await;
    let text = error_text(&result);
    assert!(text.contains("the alias store is unavailable"), "{text}");
    assert_nothing_internal(text);
    assert!(text.contains("nothing was sent to the service"), "{text}");
    assert!(text.contains("A retry may help"), "{text}");
    assert_eq!(backend.received().len(), received, "nothing sent");
    assert!(
        started.elapsed() < refused_within,
        "no hang: {:?}",
        started.elapsed()
    );
    links
}

/// Asserts that `text`, told to the model, names no address and no
/// client or system error (they go to the logs).
pub fn assert_nothing_internal(text: &str) {
    for internal in [
        "127.0.0.1",
        "os error",
        "refused",
        "Connection",
        "broken pipe",
        "Moved",
        "MOVED",
        "CLUSTERDOWN",
        "timed out",
    ] {
        assert!(
            !text.contains(internal),
            "the model is told `{internal}`: {text}"
        );
    }
}

/// After the alias store came back from an outage that failed a
/// `links_create`: retries renaming `link-1` until the store answers
/// again (every failure meanwhile says the store is unavailable), then
/// checks that the failed call used up no alias (the next link is `link-2`).
pub async fn recovers_after_store_outage(
    exec: &crate::tools::links::Executor<TonicTransport>,
    within: Duration,
) {
    let rename = || exec.execute("links_update", r#"{"link_id":"link-1","name":"back"}"#);
    let mut result = rename().await;
    // the connection may take a moment to come back
    let deadline = std::time::Instant::now() + within;
    while result.is_error && std::time::Instant::now() < deadline {
        assert!(
            result.output.contains("alias store is unavailable"),
            "{}",
            result.output
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        result = rename().await;
    }
    assert_eq!(ok_json(&result)["link"]["name"], "back");
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://z.example"}"#)
            .await,
    );
    assert_eq!(
        out["link"]["id"], "link-2",
        "no alias was used up by the failed call"
    );
}

/// A store key prefix no other test (or run) uses.
pub fn unique_prefix(test: &str) -> String {
    format!("test-{test}-{}", crate::new_uuid())
}

/// `Sessions` over the server's channel whose conversations live in `store`.
pub fn sessions_with_store(
    server: &RunningServer,
    store: Arc<dyn AliasStore>,
) -> Sessions<TonicTransport> {
    Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(600),
    )
    .with_store(store)
}

/// A prost message of `links.proto` as the `DynamicMessage` of the same
/// proto type (`full_name`), for in-process handlers.
pub fn dynamic<M: prost::Message>(message: &M, full_name: &str) -> DynamicMessage {
    let desc = LINKS_POOL
        .get_message_by_name(full_name)
        .expect("message in pool");
    DynamicMessage::decode(desc, message.encode_to_vec().as_slice()).expect("same type")
}

/// Checks the invariants of a manager: per prefix, aliases are `prefix-1..n`
/// without gaps (no snapshot was edited here), each resolves to one UUID, and
/// no UUID has two aliases of one prefix.
pub fn assert_consistent(aliases: &AliasManager) {
    let snapshot = aliases.snapshot();
    let mut per_prefix: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut seen = HashSet::new();
    for e in &snapshot.entries {
        per_prefix.entry(&e.prefix).or_default().push(&e.alias);
        assert!(
            seen.insert((e.prefix.clone(), e.uuid.clone())),
            "two aliases for one id: {e:?}"
        );
        assert_eq!(aliases.resolve(&e.alias).as_deref(), Some(e.uuid.as_str()));
    }
    for (prefix, list) in per_prefix {
        let expected: Vec<String> = (1..=list.len()).map(|n| format!("{prefix}-{n}")).collect();
        assert_eq!(list, expected, "aliases of {prefix}");
        assert_eq!(snapshot.counters[prefix], list.len() as u64);
    }
}

/// An executor of every links.proto tool over a lazily connecting channel
/// to `addr` (which need not be listening).
pub fn tonic_exec(addr: SocketAddr) -> ProtoExecutor<TonicTransport> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect_lazy();
    ProtoExecutor::new(tools::ALL, &LINKS_POOL, TonicTransport::new(channel))
}

/// One call an in-process service of a [`recording_transport`] answered.
#[derive(Debug, Clone)]
pub struct Call {
    /// `/package.Service/Method`.
    pub path: String,
    /// The request as the service decoded it.
    pub request: DynamicMessage,
    /// The call's ASCII metadata, in order.
    pub metadata: Vec<(String, String)>,
    /// What the service answered.
    pub response: DynamicMessage,
}

impl Call {
    /// The value of metadata `key`, if the call carried it.
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The calls a [`recording_transport`]'s services answered, in order.
/// Clones share them.
#[derive(Debug, Clone, Default)]
pub struct Recording(Arc<Mutex<Vec<Call>>>);

impl Recording {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Call>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many calls reached a service.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no call reached a service.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Every call, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().clone()
    }

    /// The last call.
    pub fn last(&self) -> Option<Call> {
        self.lock().last().cloned()
    }
}

/// An in-process service for every method of every service in `pool`,
/// recording each call; each answers with an empty message of its response
/// type.
pub fn recording_transport(pool: &DescriptorPool) -> (InProcessTransport, Recording) {
    recording_with(pool, |_, _, empty| empty)
}

/// [`recording_transport`] for links.proto, whose `CreateLink` answers a
/// fresh link (new UUIDs) and `UpdateLink` the link asked for, each with its
/// raw id also in `name` (an unaliased field) so that callers can check
/// their alias. The other methods answer empty messages.
pub fn links_recording_transport() -> (InProcessTransport, Recording) {
    recording_with(&LINKS_POOL, |path, request, empty| match path {
        "/links.v1.LinksService/CreateLink" => {
            let id = new_uuid();
            let link = pb::Link {
                name: id.clone(),
                id,
                page_theme_id: new_uuid(),
                ..Default::default()
            };
            dynamic(
                &pb::CreateLinkResponse { link: Some(link) },
                "links.v1.CreateLinkResponse",
            )
        }
        "/links.v1.LinksService/UpdateLink" => {
            let id = request
                .get_field_by_name("link_id")
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let link = pb::Link {
                name: id.clone(),
                id,
                ..Default::default()
            };
            dynamic(
                &pb::UpdateLinkResponse { link: Some(link) },
                "links.v1.UpdateLinkResponse",
            )
        }
        _ => empty,
    })
}

/// The services of [`recording_transport`], each answering with
/// `answer(path, request, empty response)`.
fn recording_with(
    pool: &DescriptorPool,
    answer: fn(&str, &DynamicMessage, DynamicMessage) -> DynamicMessage,
) -> (InProcessTransport, Recording) {
    let recording = Recording::default();
    let mut transport = InProcessTransport::new();
    for service in pool.services() {
        for method in service.methods() {
            let path = format!("/{}/{}", service.full_name(), method.name());
            let output = method.output();
            let recording = recording.clone();
            let handler_path = path.clone();
            transport = transport.with_handler(path, move |request, options| {
                let response = answer(&handler_path, &request, DynamicMessage::new(output.clone()));
                recording.lock().push(Call {
                    path: handler_path.clone(),
                    request,
                    metadata: options.metadata,
                    response: response.clone(),
                });
                async move { Ok(response) }
            });
        }
    }
    (transport, recording)
}

/// A Python that runs `import {modules}`, or why there is none (the tests
/// that need one fail with it where `AI_TOOLS_REQUIRE_PYTHON` is set, and
/// skip saying it elsewhere). Tried in order: `AI_TOOLS_PYTHON`, the
/// `py-venv` of the target dir this test binary was built in (`.ci/run`
/// makes it), the workspace's `target/py-venv`.
pub fn python_importing(modules: &str) -> Result<std::path::PathBuf, String> {
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(python) = std::env::var_os("AI_TOOLS_PYTHON") {
        candidates.push(python.into());
    }
    // <target>/debug/deps/<test binary> → <target>/py-venv
    if let Some(target) = std::env::current_exe()
        .ok()
        .as_deref()
        .and_then(|exe| exe.ancestors().nth(3))
    {
        candidates.push(target.join("py-venv/bin/python"));
    }
    candidates.push(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py-venv/bin/python"),
    );
    let mut tried = Vec::new();
    for candidate in candidates {
        match Command::new(&candidate)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            Ok(status) if status.success() => return Ok(candidate),
            Ok(_) => tried.push(format!("{} (cannot import {modules})", candidate.display())),
            Err(e) => tried.push(format!("{} ({e})", candidate.display())),
        }
    }
    Err(format!(
        "no Python that can `import {modules}`: tried {}; `.ci/run` makes one in target/py-venv",
        tried.join(", ")
    ))
}

/// A `node` of major version `min` or later: `AI_TOOLS_NODE`, else `node`
/// on the PATH; or why there is none (the tests that need one fail with it
/// where `AI_TOOLS_REQUIRE_NODE` is set, and skip saying it elsewhere).
pub fn node_at_least(min: u32) -> Result<std::path::PathBuf, String> {
    use std::path::PathBuf;
    let node =
        std::env::var_os("AI_TOOLS_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let version = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "`{}` does not run ({e}); install Node.js {min} or later or set AI_TOOLS_NODE",
                node.display()
            )
        })?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("`{} --version` printed {version:?}", node.display()))?;
    if major < min {
        return Err(format!(
            "Node.js {version} is older than {min}, the oldest the packages locked in tests/node support"
        ));
    }
    Ok(node)
}

/// Whether `AI_TOOLS_REQUIRE_NODE` is set (non-empty, not `0`): a test
/// that needs Node.js fails without it instead of skipping.
pub fn node_required() -> bool {
    std::env::var_os("AI_TOOLS_REQUIRE_NODE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether `AI_TOOLS_REQUIRE_PYTHON` is set (non-empty, not `0`): a test
/// that needs Python fails without one instead of skipping.
pub fn python_required() -> bool {
    std::env::var_os("AI_TOOLS_REQUIRE_PYTHON").is_some_and(|v| !v.is_empty() && v != "0")
}
