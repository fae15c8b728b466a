//! The host set-ups of `guide/src/hosts.md`, tested: its snippets are the
//! files of `guide/hosts/` (each block after a `<!-- hosts/FILE -->` line is
//! that file, and every file is shown), the JSON ones parse with
//! JavaScript's `JSON.parse` and match the host's schema as its docs
//! describe it (`tests/hosts/schemas/`, written for this test: none of the
//! hosts publishes one in a package registry), and each set-up is run:
//!
//! - every stdio snippet's `command` and `args`, exactly as written, started
//!   by the MCP Python SDK's stdio client (`tests/hosts/client.py`), which
//!   initializes and lists the tools; `claude mcp add … -- COMMAND` names
//!   the same command line as the `.mcp.json` snippet;
//! - `gateway-http.sh` started, and every HTTP snippet's `url` reached by
//!   the SDK's streamable-HTTP client;
//! - `gateway-oauth.sh` started against a real authorization server
//!   (`tests/oauth/authorization_server.mjs`), and every OAuth snippet's
//!   `url`, nothing else, taken by the SDK's OAuth client through
//!   discovery to a token and the tools (`tests/oauth/mcp_oauth_client.py`);
//! - the Inspector section's claim: an alias given out by one stdio process
//!   is refused by the next, unless both keep their aliases in Redis.
//!
//! The snippets are written for a reader's machine, so these words are
//! replaced before anything runs, and nothing else: `ai-tools` (the
//! command) by the binary under test, `/path/to/project` by this
//! workspace (its `proto/links/v1/links.proto`), `http://127.0.0.1:50051`
//! by the links test server, `127.0.0.1:8080` and `0.0.0.0:8080` by a free
//! loopback port, `https://auth.example.com` by the test authorization
//! server and `https://tools.example.com/mcp` by the gateway's URL.
//!
//! Needs a Python with the MCP SDK (`AI_TOOLS_PYTHON`, else
//! `target/py-venv/bin/python`), Node.js with `npm ci` run in `tests/node`
//! (the OAuth and JSON.parse checks), and for the Redis case
//! `AI_TOOLS_REDIS_URL`; `.ci/run` provides them all. A test without its
//! tools skips saying why, unless `AI_TOOLS_REQUIRE_MCP`,
//! `AI_TOOLS_REQUIRE_NODE` or `AI_TOOLS_REQUIRE_REDIS` is set: then it
//! fails.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proto_ai_tools_tests::oauth::{AuthorizationServer, tools_or_skip};
use serde_json::{Value, json};
use support::{free_loopback_addr, links_server, python_importing, spawn_gateway, workspace};

const TOOLS: [&str; 5] = [
    "links_create",
    "links_update",
    "links_list",
    "workflow_steps_create",
    "workflow_steps_delete",
];

fn hosts_dir() -> PathBuf {
    workspace().join("guide/hosts")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn snippet(name: &str) -> Value {
    serde_json::from_str(&read(&hosts_dir().join(name))).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The files of `guide/hosts/` (not its subdirectories), sorted.
fn snippet_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(hosts_dir())
        .expect("guide/hosts")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What a snippet says, made to run here: the words the module doc lists,
/// replaced.
struct Here {
    grpc: String,
    /// `127.0.0.1:PORT` for the gateway over HTTP.
    http: String,
    issuer: Option<String>,
}

impl Here {
    fn word(&self, word: &str) -> String {
        let mut word = word
            .replace("/path/to/project", &workspace().display().to_string())
            .replace("http://127.0.0.1:50051", &self.grpc)
            .replace(
                "https://tools.example.com/mcp",
                &format!("http://{}/mcp", self.http),
            )
            .replace("127.0.0.1:8080", &self.http)
            .replace("0.0.0.0:8080", &self.http);
        if let Some(issuer) = &self.issuer {
            word = word.replace("https://auth.example.com", issuer);
        }
        word
    }

    /// A snippet's server (`command`, `args`, `env`) with the binary under
    /// test for `ai-tools`.
    fn server(&self, server: &Value) -> Value {
        let command = server["command"].as_str().expect("a command");
        assert_eq!(command, "ai-tools", "the snippet runs ai-tools");
        let args: Vec<String> = server["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| self.word(a.as_str().expect("a string argument")))
            .collect();
        json!({
            "command": env!("CARGO_BIN_EXE_ai-tools"),
            "args": args,
            "env": server.get("env").cloned().unwrap_or(json!({})),
        })
    }

    /// A shell snippet's command line (`\` continuations joined, no
    /// quoting used), as a `Command` running the binary under test.
    fn shell_command(&self, line: &str) -> Command {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "ai-tools", "{line}");
        let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tools"));
        command.args(words[1..].iter().map(|w| self.word(w)));
        command
    }
}

/// The one command of a shell snippet, continuation lines joined.
fn shell_line(name: &str) -> String {
    read(&hosts_dir().join(name))
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.trim_end().trim_end_matches('\\'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `tests/hosts/client.py` with `args`; its summary, after asserting it
/// succeeded.
fn client(python: &Path, args: &[&str]) -> Value {
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/client.py"))
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("the client's summary: {stdout}"));
    assert!(output.status.success(), "the client failed: {summary}");
    summary
}

fn tool_names(summary: &Value) -> Vec<&str> {
    summary["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

fn assert_links_tools(summary: &Value, case: &str) {
    let names = tool_names(summary);
    for tool in TOOLS {
        assert!(names.contains(&tool), "{case}: {tool} is listed: {names:?}");
    }
}

#[test]
fn the_guide_shows_every_snippet_verbatim() {
    let guide = read(&workspace().join("guide/src/hosts.md"));
    let mut shown = Vec::new();
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- hosts/")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "hosts.md: a fenced block follows <!-- hosts/{name} -->, not {fence:?}"
        );
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let block = block.join("\n") + "\n";
        assert_eq!(
            block,
            read(&hosts_dir().join(name)),
            "hosts.md's block after <!-- hosts/{name} --> is guide/hosts/{name}"
        );
        shown.push(name.to_owned());
    }
    shown.sort();
    shown.dedup();
    assert_eq!(
        shown,
        snippet_files(),
        "hosts.md shows every file of guide/hosts"
    );
}

/// The host each JSON snippet is for, by its file name.
fn host_of(name: &str) -> &'static str {
    ["claude-desktop", "claude-code", "cursor", "vscode"]
        .into_iter()
        .find(|h| name.starts_with(h))
        .unwrap_or_else(|| panic!("{name} names no host"))
}

#[test]
fn json_snippets_parse_in_javascript_and_match_the_hosts_documented_shapes() {
    let json_files: Vec<String> = snippet_files()
        .into_iter()
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert!(json_files.len() >= 10, "{json_files:?}");

    // JSON.parse, as the hosts (Electron and Node.js applications) read them.
    match Command::new("node").arg("--version").output() {
        Ok(_) => {
            let script = "const fs = require('fs'); for (const f of process.argv.slice(1)) { \
                          const v = JSON.parse(fs.readFileSync(f, 'utf8')); \
                          if (typeof v !== 'object' || v === null) throw new Error(f); } \
                          console.log('parsed', process.argv.length - 1);";
            let output = Command::new("node")
                .args(["-e", script])
                .args(json_files.iter().map(|n| hosts_dir().join(n)))
                .output()
                .expect("node runs");
            assert!(
                output.status.success(),
                "JSON.parse refused a snippet: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Err(e) => {
            assert!(
                std::env::var_os("AI_TOOLS_REQUIRE_NODE").is_none(),
                "AI_TOOLS_REQUIRE_NODE is set and node does not run: {e}"
            );
            eprintln!("SKIPPED (JSON.parse): node does not run: {e}");
        }
    }

    let Some(python) = python_importing("jsonschema") else {
        return;
    };
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/schemas");
    let pairs: Vec<(String, String)> = json_files
        .iter()
        .map(|n| {
            (
                hosts_dir().join(n).display().to_string(),
                schemas
                    .join(format!("{}.schema.json", host_of(n)))
                    .display()
                    .to_string(),
            )
        })
        .collect();
    // Each schema also refuses the other hosts' shape where they differ: VS
    // Code's `servers` in Cursor's file, Cursor's `mcpServers` in VS Code's,
    // and a `url` in Claude Desktop's file, which takes local servers only.
    let refused = [
        ("vscode-stdio.json", "cursor"),
        ("cursor-stdio.json", "vscode"),
        ("cursor-http.json", "claude-desktop"),
        ("vscode-http.json", "claude-code"),
    ]
    .map(|(file, host)| {
        (
            hosts_dir().join(file).display().to_string(),
            schemas
                .join(format!("{host}.schema.json"))
                .display()
                .to_string(),
        )
    });
    let script = r#"
import json, sys, jsonschema
accepted, refused = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def check(pair):
    doc, schema = (json.load(open(p)) for p in pair)
    jsonschema.Draft202012Validator.check_schema(schema)
    return list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
bad = [(p, [e.message for e in errs]) for p in accepted if (errs := check(p))]
missed = [p for p in refused if not check(p)]
print(json.dumps({"bad": bad, "missed": missed}))
"#;
    let output = Command::new(&python)
        .args(["-c", script])
        .arg(serde_json::to_string(&pairs).unwrap())
        .arg(serde_json::to_string(&refused).unwrap())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the schema check failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_str(stdout.trim()).expect("the check's JSON");
    assert_eq!(result["bad"], json!([]), "snippets off their host's shape");
    assert_eq!(
        result["missed"],
        json!([]),
        "schemas that accept another host's shape"
    );
}

#[test]
fn every_stdio_snippet_serves_the_tools_as_written() {
    let Some(python) = python_importing("mcp") else {
        return;
    };
    let (_runtime, server) = links_server();
    let here = Here {
        grpc: server.url(),
        http: String::new(),
        issuer: None,
    };
    let stdio = [
        ("claude-desktop.json", "mcpServers"),
        ("claude-code-stdio.mcp.json", "mcpServers"),
        ("cursor-stdio.json", "mcpServers"),
        ("vscode-stdio.json", "servers"),
    ];
    let mut command_lines = Vec::new();
    for (file, key) in stdio {
        let written = &snippet(file)[key]["links"];
        let mut line = vec![written["command"].as_str().unwrap().to_owned()];
        line.extend(
            written["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned()),
        );
        command_lines.push(line);
        let server = here.server(written);
        let summary = client(&python, &["stdio", &server.to_string()]);
        assert_eq!(
            summary["server"], "ai-tools",
            "{file}: the server names itself"
        );
        assert_links_tools(&summary, file);
    }
    assert!(
        command_lines.windows(2).all(|w| w[0] == w[1]),
        "the hosts start the same command line: {command_lines:?}"
    );

    // `claude mcp add … -- COMMAND`: the command line of the .mcp.json one,
    // and the HTTP line's URL that of the HTTP snippet.
    let add = read(&hosts_dir().join("claude-code-add.sh"));
    let mut adds = add.lines().filter(|l| l.starts_with("claude mcp add "));
    let over_stdio = adds.next().expect("a stdio line");
    let (_, after) = over_stdio
        .split_once(" -- ")
        .expect("`--` before the command");
    let words: Vec<&str> = after.split_whitespace().collect();
    assert_eq!(words, command_lines[1], "claude mcp add's command line");
    assert!(over_stdio.contains("--transport stdio") && over_stdio.contains(" links "));
    // The Inspector's lines start the same gateway after `--`, some with
    // `--redis URL` (what `aliases_outlive_a_stdio_process_only_in_redis`
    // runs).
    let inspector = read(&hosts_dir().join("inspector.sh"));
    let mut with_redis = 0;
    for line in inspector.lines().filter(|l| l.starts_with("npx ")) {
        let (_, after) = line.split_once(" -- ").expect("`--` before the command");
        let words: Vec<&str> = after.split_whitespace().collect();
        let tail = &words[command_lines[0].len().min(words.len())..];
        assert_eq!(
            words[..words.len() - tail.len()],
            command_lines[0],
            "{line}"
        );
        match tail {
            [] => {}
            ["--redis", url] if url.starts_with("redis://") => with_redis += 1,
            other => panic!("{line}: unexpected {other:?}"),
        }
    }
    assert_eq!(with_redis, 2, "two Inspector lines keep aliases in Redis");

    let over_http = adds.next().expect("an HTTP line");
    assert!(over_http.contains("--transport http"), "{over_http}");
    assert_eq!(
        over_http.split_whitespace().last(),
        snippet("claude-code-http.mcp.json")["mcpServers"]["links"]["url"].as_str(),
        "claude mcp add's URL"
    );
}

#[test]
fn every_http_snippet_reaches_the_gateway_it_is_written_for() {
    let Some(python) = python_importing("mcp") else {
        return;
    };
    let (_runtime, server) = links_server();
    let here = Here {
        grpc: server.url(),
        http: free_loopback_addr().to_string(),
        issuer: None,
    };
    let gateway = spawn_gateway(&mut here.shell_command(&shell_line("gateway-http.sh")));
    assert_eq!(gateway.addr, here.http, "the gateway listens where it says");
    for (file, key) in [
        ("claude-code-http.mcp.json", "mcpServers"),
        ("cursor-http.json", "mcpServers"),
        ("vscode-http.json", "servers"),
    ] {
        let url = here.word(snippet(file)[key]["links"]["url"].as_str().unwrap());
        let summary = client(&python, &["http", &url]);
        assert_links_tools(&summary, file);
    }
}

#[test]
fn every_oauth_snippet_needs_only_its_url() {
    let Some((node, python)) = tools_or_skip("mcp") else {
        return;
    };
    let authorization = AuthorizationServer::start(&node, &[]);
    let (_runtime, server) = links_server();
    let here = Here {
        grpc: server.url(),
        http: free_loopback_addr().to_string(),
        issuer: Some(authorization.issuer.clone()),
    };
    let line = shell_line("gateway-oauth.sh");
    assert!(
        line.contains("--oauth-issuer https://auth.example.com"),
        "{line}"
    );
    let gateway = spawn_gateway(&mut here.shell_command(&line));
    assert_eq!(gateway.addr, here.http);
    for (file, key) in [
        ("claude-code-oauth.mcp.json", "mcpServers"),
        ("cursor-oauth.json", "mcpServers"),
        ("vscode-oauth.json", "servers"),
    ] {
        let written = &snippet(file)[key]["links"];
        assert!(
            written.get("headers").is_none(),
            "{file}: no token in the snippet"
        );
        let url = here.word(written["url"].as_str().unwrap());
        let output = Command::new(&python)
            .arg(workspace().join("tests/oauth/mcp_oauth_client.py"))
            .args(["--url", &url])
            .stderr(Stdio::inherit())
            .output()
            .expect("the OAuth client runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary: Value = stdout
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("{file}: the OAuth client's summary: {stdout}"));
        assert!(output.status.success(), "{file}: {summary}");
        assert_links_tools(&summary, file);
        let requests = summary["requests"].to_string();
        assert!(
            requests.contains(&format!("POST {url} -> 401")),
            "{file}: the first request is refused and discovery follows: {requests}"
        );
    }
}

/// The Inspector's `--cli` starts the server anew for every invocation.
/// Over stdio the alias scope is the process: the alias one process gave
/// out is refused by the next, unless both keep their aliases in Redis,
/// where the stdio scope outlives them.
#[test]
fn aliases_outlive_a_stdio_process_only_in_redis() {
    let Some(python) = python_importing("mcp") else {
        return;
    };
    let redis = std::env::var("AI_TOOLS_REDIS_URL").ok();
    if redis.is_none() {
        assert!(
            std::env::var_os("AI_TOOLS_REQUIRE_REDIS").is_none(),
            "AI_TOOLS_REQUIRE_REDIS is set but AI_TOOLS_REDIS_URL is not"
        );
        eprintln!(
            "SKIPPED (the Redis half): AI_TOOLS_REDIS_URL is not set (.ci/run starts a redis-server)"
        );
    }
    let (_runtime, server) = links_server();
    let here = Here {
        grpc: server.url(),
        http: String::new(),
        issuer: None,
    };
    let written = &snippet("claude-desktop.json")["mcpServers"]["links"];
    let run = |extra: &[&str], calls: Value| {
        let mut server = here.server(written);
        let args = server["args"].as_array_mut().unwrap();
        args.extend(extra.iter().map(|a| json!(a)));
        client(
            &python,
            &["stdio", &server.to_string(), "--calls", &calls.to_string()],
        )
    };
    let create = json!([{"name": "links_create", "arguments": {"destination": "https://example.com/spring"}}]);
    let alias_of = |summary: &Value| -> String {
        let call = &summary["calls"][0];
        assert_eq!(call["is_error"], false, "links_create: {call}");
        let text: Value = serde_json::from_str(call["text"].as_str().unwrap()).expect("JSON");
        text["link"]["id"].as_str().expect("an id").to_owned()
    };
    let update = |alias: &str| json!([{"name": "links_update", "arguments": {"link_id": alias, "name": "Spring"}}]);

    // In memory: the next process refuses the alias, naming it.
    let alias = alias_of(&run(&[], create.clone()));
    assert!(alias.starts_with("link-"), "{alias}");
    let refused = run(&[], update(&alias));
    let call = &refused["calls"][0];
    assert_eq!(
        call["is_error"], true,
        "a new process knows no alias: {call}"
    );
    assert!(call["text"].as_str().unwrap().contains(&alias), "{call}");

    // In Redis: the next process resolves it.
    let Some(redis) = redis else {
        return;
    };
    let alias = alias_of(&run(&["--redis", &redis], create));
    let resolved = run(&["--redis", &redis], update(&alias));
    let call = &resolved["calls"][0];
    assert_eq!(
        call["is_error"], false,
        "the alias outlived its process: {call}"
    );
    assert!(call["text"].as_str().unwrap().contains("Spring"), "{call}");
}
