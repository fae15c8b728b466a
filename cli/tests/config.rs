//! Every flag of `ai-tools mcp` and `ai-tools tools` given by its
//! environment variable (`AI_TOOLS_<FLAG>`) and by a `--config` file key,
//! each with an effect of its value that can be seen from outside; the
//! order among the three (command line, then environment, then file); the
//! file's refusals (secrets, unknown keys, wrong types); shell completions
//! and the help of each command. The binary runs from the repository root.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use support::{free_loopback_addr, links_server, workspace};

const LINKS_PROTO: &str = "proto/links/v1/links.proto";
const ALL_TOOLS: [&str; 5] = [
    "links_create",
    "links_list",
    "links_update",
    "workflow_steps_create",
    "workflow_steps_delete",
];

/// `ai-tools args…` from the repository root, in an environment with no
/// `AI_TOOLS_` variable but `env`'s, stdin closed.
fn ai_tools(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tools"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("AI_TOOLS_") {
            command.env_remove(name);
        }
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tool names `tools` printed (the MCP dialect's list), sorted.
fn names(output: &Output) -> Vec<String> {
    let stdout = text(&output.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{stdout}\nstderr: {}",
            text(&output.stderr)
        )
    });
    let mut names: Vec<String> = json
        .as_array()
        .expect("a list")
        .iter()
        .map(|tool| tool["name"].as_str().expect("a name").to_owned())
        .collect();
    names.sort();
    names
}

/// A config file holding `toml`, removed when dropped.
struct ConfigFile(PathBuf);

impl ConfigFile {
    fn new(label: &str, toml: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ai-tools-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{label}.toml"));
        std::fs::write(&path, toml).unwrap();
        ConfigFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8")
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What a flag's value does, seen from outside.
enum Effect {
    /// `tools` prints exactly these tools.
    Tools(&'static [&'static str]),
    /// Exit 0, stdout holding this.
    Stdout(&'static str),
    /// This exit status, stderr holding this (`{…}` placeholders filled).
    Stderr(i32, &'static str),
}

/// One flag: its command, the value given by variable or key, the other
/// flags given on the command line, and what the value does.
struct Case {
    flag: &'static str,
    command: &'static str,
    value: &'static str,
    others: &'static [&'static str],
    effect: Effect,
}

const LINKS: &[&str] = &["--proto", LINKS_PROTO];
/// The flags that take a path (a `FILE` or a `DIR`), which a config file
/// takes from its own directory when relative.
const PATH_FLAGS: [&str; 13] = [
    "descriptor-set",
    "proto",
    "proto-path",
    "proto-cache",
    "overlay",
    "ca-cert",
    "client-cert",
    "client-key",
    "embedding-model",
    "embeddings-cache",
    "backend-token-file",
    "oauth-client-secret-file",
    "consent-key-file",
];
/// `mcp` over links.proto, calling a port where nothing listens (no call
/// is made by these cases).
const MCP: &[&str] = &["--grpc", "http://127.0.0.1:1", "--proto", LINKS_PROTO];

/// Every flag of both commands but `--help`, `--version` and `--config`
/// (tested by all of them). Where no effect of the value is cheaper to see, the case sets
/// a value the gateway refuses at start, and the refusal, which echoes the
/// value, is the effect.
fn cases() -> Vec<Case> {
    use Effect::*;
    let mcp_http = |more: &'static [&'static str]| -> &'static [&'static str] {
        let mut all = MCP.to_vec();
        all.extend(["--http", "127.0.0.1:0"]);
        all.extend(more);
        all.leak()
    };
    let mcp_stdio = |more: &'static [&'static str]| -> &'static [&'static str] {
        let mut all = MCP.to_vec();
        all.push("--stdio");
        all.extend(more);
        all.leak()
    };
    // OAuth whose issuer is on loopback where nothing listens: the gateway
    // checks its flags, then fails reaching the issuer.
    const OAUTH: &[&str] = &[
        "--oauth-issuer",
        "{dead}",
        "--oauth-audience",
        "http://127.0.0.1:2/mcp",
    ];
    let oauth = |more: &'static [&'static str]| -> &'static [&'static str] {
        let mut all = OAUTH.to_vec();
        all.extend(more);
        mcp_http(all.leak())
    };
    let case = |flag, command, value, others, effect| Case {
        flag,
        command,
        value,
        others,
        effect,
    };
    vec![
        // Both commands; seen through `tools`. The server's reflection
        // serves feed.proto too, which links.proto does not import.
        case(
            "grpc",
            "tools",
            "{grpc}",
            &["--reflection"],
            Stdout("\"name\": \"feed_follow\""),
        ),
        case(
            "reflection",
            "tools",
            "true",
            &["--grpc", "{grpc}"],
            Stdout("\"name\": \"feed_follow\""),
        ),
        case(
            "reflection-timeout",
            "tools",
            "soon",
            &["--grpc", "{grpc}", "--reflection"],
            Stderr(
                2,
                "`--reflection-timeout soon`: give a positive number of seconds",
            ),
        ),
        case(
            "descriptor-set",
            "tools",
            "target/no-such-set.binpb",
            &[],
            Stderr(1, "the descriptor set target/no-such-set.binpb"),
        ),
        case("proto", "tools", LINKS_PROTO, &[], Tools(&ALL_TOOLS)),
        case(
            "proto-path",
            "tools",
            "proto/third_party/googleapis",
            &[
                "--proto",
                "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
                "--service",
                "google.longrunning.Operations",
            ],
            Stdout("\"name\": \"operations_get\""),
        ),
        case(
            "ca-cert",
            "tools",
            "/nonexistent/ca.pem",
            &["--grpc", "https://127.0.0.1:1", "--reflection"],
            Stderr(1, "the CA certificate /nonexistent/ca.pem"),
        ),
        case(
            "client-cert",
            "tools",
            "/nonexistent/gateway.pem",
            &[
                "--grpc",
                "https://127.0.0.1:1",
                "--reflection",
                "--client-key",
                "Cargo.toml",
            ],
            Stderr(1, "the client certificate /nonexistent/gateway.pem"),
        ),
        case(
            "client-key",
            "tools",
            "/nonexistent/gateway.key",
            &[
                "--grpc",
                "https://127.0.0.1:1",
                "--reflection",
                "--client-cert",
                "Cargo.toml",
            ],
            Stderr(1, "the client key /nonexistent/gateway.key"),
        ),
        case(
            "overlay",
            "tools",
            "/nonexistent/tools.toml",
            LINKS,
            Stderr(1, "the overlay /nonexistent/tools.toml"),
        ),
        case(
            "service",
            "tools",
            "links.nothing.*",
            LINKS,
            Stderr(1, "service pattern `links.nothing.*` matches no service"),
        ),
        case(
            "plain-fields",
            "tools",
            "mandatory",
            &["--proto", LINKS_PROTO, "--service", "links.v1.LinksService"],
            Stderr(2, "`--plain-fields mandatory`: use `optional`"),
        ),
        case(
            "include",
            "tools",
            "links_list",
            LINKS,
            Tools(&["links_list"]),
        ),
        case(
            "exclude",
            "tools",
            "links_*",
            LINKS,
            Tools(&["workflow_steps_create", "workflow_steps_delete"]),
        ),
        case("read-only", "tools", "true", LINKS, Tools(&["links_list"])),
        case(
            "output-schemas",
            "tools",
            "true",
            &["--proto", LINKS_PROTO, "--dialect", "mcp"],
            Stdout("\"outputSchema\""),
        ),
        case(
            "max-output-schema-bytes",
            "tools",
            "300",
            &[
                "--proto",
                LINKS_PROTO,
                "--dialect",
                "mcp",
                "--output-schemas",
            ],
            Stderr(0, "max_bytes=300"),
        ),
        case(
            "max-tool-bytes",
            "tools",
            "300",
            &["--proto", LINKS_PROTO, "--stats", "--dialect", "gemini"],
            Stdout("budget: 300 bytes per tool definition"),
        ),
        case(
            "proto-cache",
            "tools",
            "target/proto-cache-case",
            &["--proto", LINKS_PROTO, "--no-proto-cache"],
            Stderr(
                2,
                "`--proto-cache DIR` keeps what `--no-proto-cache` says not to keep",
            ),
        ),
        case(
            "no-proto-cache",
            "tools",
            "true",
            &["--descriptor-set", "target/no-such.binpb"],
            Stderr(
                2,
                "`--proto-cache` and `--no-proto-cache` are for `--proto`",
            ),
        ),
        case(
            "embedding-model",
            "mcp",
            "target/no-such-model",
            mcp_stdio(&[]),
            Stderr(
                2,
                "`--embedding-model` finds tools by meaning for `--tool-search`'s search: give `--tool-search`",
            ),
        ),
        case(
            "embeddings-url",
            "mcp",
            "http://127.0.0.1:1",
            mcp_stdio(&["--tool-search"]),
            Stderr(
                2,
                "`--embeddings-url` needs the name of the endpoint's model: give `--embeddings-model NAME`",
            ),
        ),
        case(
            "embeddings-model",
            "mcp",
            "all-minilm",
            mcp_stdio(&["--tool-search"]),
            Stderr(
                2,
                "`--embeddings-model` names the model of an embeddings endpoint: give `--embeddings-url URL`",
            ),
        ),
        case(
            "embeddings-cache",
            "mcp",
            "target/embeddings-cache-case",
            mcp_stdio(&["--tool-search"]),
            Stderr(
                2,
                "`--embeddings-cache` keeps the embeddings of `--embedding-model` or `--embeddings-url`: give one",
            ),
        ),
        case(
            "json-names",
            "tools",
            "camel",
            &[
                "--proto",
                LINKS_PROTO,
                "--dialect",
                "mcp",
                "--output-schemas",
            ],
            Stdout("\"pageThemeId\""),
        ),
        case(
            "host-profile",
            "tools",
            "browser",
            LINKS,
            Stderr(
                2,
                "`--host-profile browser`: unknown host profile `browser`",
            ),
        ),
        case(
            "log-format",
            "tools",
            "json",
            LINKS,
            Stderr(0, r#""fields":{"message":"5 tools"}"#),
        ),
        case(
            "dialect",
            "tools",
            "gemini",
            LINKS,
            Stdout("\"functionDeclarations\""),
        ),
        case(
            "stats",
            "tools",
            "true",
            LINKS,
            Stdout("largest: links_create"),
        ),
        // `mcp` alone.
        case("stdio", "mcp", "true", MCP, Stderr(1, "over MCP on stdio")),
        case(
            "http",
            "mcp",
            "nowhere:99999",
            MCP,
            Stderr(1, "cannot listen on nowhere:99999"),
        ),
        case(
            "admin",
            "mcp",
            "nowhere:99999",
            mcp_http(&[]),
            Stderr(1, "cannot listen on --admin nowhere:99999"),
        ),
        case(
            "forward-header",
            "mcp",
            "x-request-id,bad header",
            mcp_http(&[]),
            Stderr(2, "header `bad header` cannot be forwarded"),
        ),
        case(
            "tool-search",
            "mcp",
            "true",
            mcp_stdio(&["--toolset", "nope"]),
            Stderr(1, "there is no toolset `nope`"),
        ),
        case(
            "toolset",
            "mcp",
            "nope",
            mcp_stdio(&["--tool-search"]),
            Stderr(1, "there is no toolset `nope`"),
        ),
        case(
            "define-toolset",
            "mcp",
            "reading=link_*",
            mcp_stdio(&["--tool-search"]),
            Stderr(
                1,
                "toolset `reading`: include pattern `link_*` matches no tool name",
            ),
        ),
        case(
            "confirm",
            "mcp",
            "sometimes",
            mcp_stdio(&[]),
            Stderr(2, "`--confirm sometimes`: unknown class `sometimes`"),
        ),
        case(
            "confirm-unsupported",
            "mcp",
            "maybe",
            mcp_stdio(&[]),
            Stderr(2, "`--confirm-unsupported maybe`: unknown choice `maybe`"),
        ),
        case(
            "consent-key-file",
            "mcp",
            "/nonexistent/consent-key",
            mcp_stdio(&[]),
            Stderr(1, "`--consent-key-file /nonexistent/consent-key`"),
        ),
        case(
            "oauth-issuer",
            "mcp",
            "{dead}",
            mcp_http(&["--oauth-audience", "http://127.0.0.1:2/mcp"]),
            Stderr(1, "`{dead}`"),
        ),
        case(
            "oauth-audience",
            "mcp",
            "notaurl",
            mcp_http(&["--oauth-issuer", "{dead}"]),
            Stderr(1, "the resource URI `notaurl` must be an https:// URL"),
        ),
        case(
            "oauth-jwks",
            "mcp",
            "notaurl",
            oauth(&[]),
            Stderr(1, "the key set URL `notaurl` must be an https:// URL"),
        ),
        case(
            "oauth-introspection",
            "mcp",
            "notaurl",
            oauth(&[
                "--oauth-client-id",
                "gateway",
                "--oauth-client-secret-file",
                "Cargo.toml",
            ]),
            Stderr(
                1,
                "the introspection endpoint `notaurl` must be an https:// URL",
            ),
        ),
        // Without the id the three introspection flags are a usage error
        // (exit 2); with it the gateway goes on to the issuer.
        case(
            "oauth-client-id",
            "mcp",
            "gateway",
            oauth(&[
                "--oauth-introspection",
                "http://127.0.0.1:1/introspect",
                "--oauth-client-secret-file",
                "Cargo.toml",
            ]),
            Stderr(1, "could not be reached"),
        ),
        case(
            "oauth-client-secret-file",
            "mcp",
            "/nonexistent/secret",
            oauth(&[
                "--oauth-introspection",
                "http://127.0.0.1:1/introspect",
                "--oauth-client-id",
                "gateway",
            ]),
            Stderr(1, "`--oauth-client-secret-file /nonexistent/secret`"),
        ),
        case(
            "required-scope",
            "mcp",
            "mcp:use,a b",
            oauth(&[]),
            Stderr(1, "the scope `a b` is not a scope token"),
        ),
        case(
            "tool-scopes",
            "mcp",
            "read",
            oauth(&[]),
            Stderr(2, "`--tool-scopes read`: give READ,WRITE"),
        ),
        case(
            "claim-header",
            "mcp",
            "sub",
            oauth(&[]),
            Stderr(2, "`--claim-header sub`: give CLAIM=HEADER"),
        ),
        case(
            "max-sessions-per-caller",
            "mcp",
            "0",
            oauth(&[]),
            Stderr(
                2,
                "`--max-sessions-per-caller 0`: give a positive whole number",
            ),
        ),
        case(
            "backend-token-file",
            "mcp",
            "/nonexistent/token",
            mcp_stdio(&[]),
            Stderr(1, "`--backend-token-file /nonexistent/token`"),
        ),
        case(
            "backend-token-env",
            "mcp",
            "AI_TOOLS_TEST_SURELY_UNSET",
            mcp_stdio(&[]),
            Stderr(
                1,
                "`--backend-token-env AI_TOOLS_TEST_SURELY_UNSET`: the environment variable",
            ),
        ),
        case(
            "alias-scope-header",
            "mcp",
            "mcp-session-id",
            mcp_http(&[]),
            Stderr(2, "`--alias-scope-header mcp-session-id`"),
        ),
        case(
            "single-user",
            "mcp",
            "true",
            mcp_stdio(&[]),
            Stderr(
                2,
                "`--single-user` choose the alias scope of stateless HTTP requests",
            ),
        ),
        case(
            "redis",
            "mcp",
            "redis://127.0.0.1:1",
            mcp_stdio(&[]),
            Stderr(1, "the alias store is unavailable"),
        ),
        case(
            "redis-cluster",
            "mcp",
            "redis://127.0.0.1:1",
            mcp_stdio(&[]),
            Stderr(1, "the alias store is unavailable"),
        ),
        case(
            "redis-wait-replicas",
            "mcp",
            "two",
            mcp_stdio(&["--redis", "redis://127.0.0.1:1"]),
            Stderr(
                2,
                "`--redis-wait-replicas two`: give a whole number of replicas, or auto",
            ),
        ),
        case(
            "redis-wait-timeout",
            "mcp",
            "1",
            mcp_stdio(&[]),
            Stderr(
                2,
                "`--redis-wait-replicas` and `--redis-wait-timeout` say how a Redis store replicates",
            ),
        ),
        case(
            "call-timeout",
            "mcp",
            "-1",
            mcp_stdio(&[]),
            Stderr(
                2,
                "`--call-timeout -1`: give a positive number of seconds, or 0",
            ),
        ),
        case(
            "tool-timeout",
            "mcp",
            "links_list=5,links_lsit=5",
            mcp_http(&[]),
            Stderr(1, "a deadline is set for `links_lsit`, which is not a tool"),
        ),
        case(
            "max-body-bytes",
            "mcp",
            "lots",
            mcp_http(&[]),
            Stderr(2, "`--max-body-bytes lots`: give a positive whole number"),
        ),
        case(
            "max-sessions",
            "mcp",
            "0",
            mcp_http(&[]),
            Stderr(2, "`--max-sessions 0`: give a positive whole number"),
        ),
        case(
            "session-idle-timeout",
            "mcp",
            "soon",
            mcp_http(&[]),
            Stderr(2, "`--session-idle-timeout soon`"),
        ),
        case(
            "max-connections",
            "mcp",
            "many",
            mcp_http(&[]),
            Stderr(2, "`--max-connections many`"),
        ),
        case(
            "header-timeout",
            "mcp",
            "soon",
            mcp_http(&[]),
            Stderr(2, "`--header-timeout soon`"),
        ),
        case(
            "idle-timeout",
            "mcp",
            "soon",
            mcp_http(&[]),
            Stderr(2, "`--idle-timeout soon`"),
        ),
        case(
            "otlp-endpoint",
            "mcp",
            "ftp://collector:4317",
            mcp_stdio(&[]),
            Stderr(
                2,
                "`--otlp-endpoint ftp://collector:4317`: give an http:// URL",
            ),
        ),
        case(
            "drain-timeout",
            "mcp",
            "soon",
            mcp_http(&[]),
            Stderr(2, "`--drain-timeout soon`"),
        ),
        case(
            "allowed-origin",
            "mcp",
            "https://app.example.com:443,app.example.com",
            mcp_http(&[]),
            Stderr(
                2,
                "`--allowed-origin app.example.com`: give scheme://host:port",
            ),
        ),
        case(
            "keep-calls-on-disconnect",
            "mcp",
            "true",
            mcp_stdio(&[]),
            Stderr(2, "are for `mcp --http`"),
        ),
    ]
}

/// The long flags of `command`, as its fish completions list them.
fn flags_of(command: &str) -> BTreeSet<String> {
    let fish = text(&ai_tools(&["completions", "fish"], &[]).stdout);
    fish.lines()
        .filter(|line| line.contains(&format!("__fish_ai_tools_using_subcommand {command}\"")))
        .filter_map(|line| line.split(" -l ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `text` with `{grpc}` and `{dead}` filled.
fn filled(text: &str, grpc: &str, dead: &str) -> String {
    text.replace("{grpc}", grpc).replace("{dead}", dead)
}

/// `output` shows `effect`; `how` says how the flag was given.
fn check(effect: &Effect, output: &Output, how: &str, grpc: &str, dead: &str) {
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    match effect {
        Effect::Tools(expected) => {
            assert_eq!(output.status.code(), Some(0), "{how}: {stderr}");
            assert_eq!(names(output), *expected, "{how}");
        }
        Effect::Stdout(expected) => {
            assert_eq!(output.status.code(), Some(0), "{how}: {stderr}");
            assert!(stdout.contains(expected), "{how}: {stdout}");
        }
        Effect::Stderr(code, expected) => {
            let expected = filled(expected, grpc, dead);
            assert_eq!(output.status.code(), Some(*code), "{how}: {stderr}");
            assert!(
                stderr.contains(&expected),
                "{how}: `{expected}` in {stderr}"
            );
        }
    }
}

/// Each flag from its variable, then from a config file key, has the
/// effect of its value; and the cases cover every flag there is.
#[test]
fn every_flag_works_from_the_environment_and_from_the_config_file() {
    let (runtime, server) = links_server();
    let grpc = server.url();
    let dead = format!("http://{}", free_loopback_addr());
    let cases = cases();
    let root = workspace().canonicalize().unwrap();

    for command in ["mcp", "tools"] {
        let covered: BTreeSet<String> = cases
            .iter()
            .filter(|c| c.command == command || c.command == "tools")
            .map(|c| c.flag.to_owned())
            .chain(["help", "version", "config"].map(str::to_owned))
            .collect();
        let flags = flags_of(command);
        assert!(flags.len() > 10, "{command}: {flags:?}");
        let missing: Vec<&String> = flags.difference(&covered).collect();
        assert!(
            missing.is_empty(),
            "`ai-tools {command}` has flags without a case here: {missing:?}"
        );
    }

    for case in &cases {
        let others: Vec<String> = case
            .others
            .iter()
            .map(|o| filled(o, &grpc, &dead))
            .collect();
        let value = filled(case.value, &grpc, &dead);
        let mut args = vec![case.command];
        args.extend(others.iter().map(String::as_str));

        let variable = format!(
            "AI_TOOLS_{}",
            case.flag.to_ascii_uppercase().replace('-', "_")
        );
        let output = ai_tools(&args, &[(&variable, &value)]);
        let how = format!("--{} as {variable}={value}", case.flag);
        check(&case.effect, &output, &how, &grpc, &dead);

        // In the file: a switch as `true`, a repeatable flag whose variable
        // takes a comma-separated list as a TOML list, else a string.
        let key_value = if value == "true" {
            "true".to_owned()
        } else if [
            "forward-header",
            "required-scope",
            "tool-timeout",
            "allowed-origin",
        ]
        .contains(&case.flag)
        {
            let items: Vec<String> = value.split(',').map(|v| format!("{v:?}")).collect();
            format!("[{}]", items.join(", "))
        } else if PATH_FLAGS.contains(&case.flag) && std::path::Path::new(&value).is_relative() {
            // The file is not in the repository, and its relative paths
            // are taken from its own directory.
            format!("{:?}", root.join(&value).display().to_string())
        } else {
            format!("{value:?}")
        };
        let file = ConfigFile::new(case.flag, &format!("{} = {key_value}\n", case.flag));
        let mut with_file = args.clone();
        with_file.extend(["--config", file.path()]);
        let output = ai_tools(&with_file, &[]);
        let how = format!(
            "--{} as `{} = {key_value}` in a config file",
            case.flag, case.flag
        );
        let output = Output {
            stderr: text(&output.stderr)
                .replace(&format!("{}/", root.display()), "")
                .into_bytes(),
            ..output
        };
        check(&case.effect, &output, &how, &grpc, &dead);
    }
    runtime.block_on(server.shutdown());
}

/// `tools` over links.proto with `--include` given as `flag`, in the
/// environment as `env` and in a config file as `file` (each if any): the
/// tools listed.
fn included(flag: Option<&str>, env: Option<&str>, file: Option<&str>) -> Vec<String> {
    let config = file.map(|name| ConfigFile::new(name, &format!("include = [{name:?}]\n")));
    let mut args = vec!["tools", "--proto", LINKS_PROTO];
    if let Some(name) = flag {
        args.extend(["--include", name]);
    }
    if let Some(config) = &config {
        args.extend(["--config", config.path()]);
    }
    let env: Vec<(&str, &str)> = env
        .map(|name| ("AI_TOOLS_INCLUDE", name))
        .into_iter()
        .collect();
    names(&ai_tools(&args, &env))
}

#[test]
fn a_flag_wins_over_its_variable() {
    assert_eq!(
        included(Some("links_update"), Some("links_list"), None),
        ["links_update"]
    );
    // A switch's variable can turn it off; the flag still turns it on.
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO, "--read-only"],
        &[("AI_TOOLS_READ_ONLY", "false")],
    );
    assert_eq!(names(&output), ["links_list"]);
}

#[test]
fn a_variable_wins_over_the_file() {
    assert_eq!(
        included(None, Some("links_list"), Some("links_create")),
        ["links_list"]
    );
    // `false` in the variable over `true` in the file.
    let file = ConfigFile::new("switch", "read-only = true\n");
    let args = ["tools", "--proto", LINKS_PROTO, "--config", file.path()];
    assert_eq!(names(&ai_tools(&args, &[])), ["links_list"]);
    assert_eq!(
        names(&ai_tools(&args, &[("AI_TOOLS_READ_ONLY", "false")])),
        ALL_TOOLS
    );
}

#[test]
fn a_flag_wins_over_the_file() {
    assert_eq!(
        included(Some("links_update"), None, Some("links_create")),
        ["links_update"]
    );
    assert_eq!(
        included(
            Some("links_update"),
            Some("links_list"),
            Some("links_create")
        ),
        ["links_update"]
    );
}

/// Of flags that exclude each other (the three sources, the two
/// transports, the two backend tokens, the two Redis stores), the one set
/// higher drops the others set lower, instead of clashing with them.
#[test]
fn a_source_given_higher_replaces_one_given_lower() {
    let file = ConfigFile::new(
        "reflection",
        "grpc = \"http://127.0.0.1:1\"\nreflection = true\nreflection-timeout = 0.5\n",
    );
    // The file's reflection, with nothing listening, would fail; the
    // command line's --proto replaces it.
    let file_source_only = ConfigFile::new("reflection-only", "reflection = true\n");
    let output = ai_tools(
        &[
            "tools",
            "--proto",
            LINKS_PROTO,
            "--config",
            file_source_only.path(),
        ],
        &[],
    );
    assert_eq!(names(&output), ALL_TOOLS);
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO],
        &[("AI_TOOLS_DESCRIPTOR_SET", "target/no-such-set.binpb")],
    );
    assert_eq!(names(&output), ALL_TOOLS);
    // From the file alone, the same keys are the source.
    let output = ai_tools(&["tools", "--config", file.path()], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("http://127.0.0.1:1: gRPC reflection failed"),
        "{}",
        text(&output.stderr)
    );
    // The environment's transport, replaced by the command line's.
    let output = ai_tools(
        &[&["mcp"][..], MCP, &["--http", "nowhere:99999"]].concat(),
        &[("AI_TOOLS_STDIO", "true")],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("cannot listen on nowhere:99999"));
}

/// Keys at the top serve whichever command has the flag; a command's table
/// is read by that command only, over the top.
#[test]
fn a_commands_table_is_over_the_top_keys() {
    let file = ConfigFile::new(
        "tables",
        &format!(
            "proto = {:?}\ninclude = [\"links_create\"]\nhttp = \"127.0.0.1:0\"\n\n\
             [tools]\ninclude = [\"links_list\"]\n\n[mcp]\nstdio = true\n",
            // absolute: the file is not in the repository
            workspace().join(LINKS_PROTO)
        ),
    );
    let output = ai_tools(&["tools", "--config", file.path()], &[]);
    assert_eq!(names(&output), ["links_list"]);
}

#[test]
fn a_secret_in_the_file_is_refused_naming_the_key_and_where_it_goes() {
    for (toml, key, home, secret) in [
        (
            "backend-token = \"s3cret-value\"\n",
            "`backend-token`",
            "`--backend-token-file FILE` or `--backend-token-env VAR`",
            "s3cret-value",
        ),
        (
            "oauth-client-secret = \"s3cret-value\"\n",
            "`oauth-client-secret`",
            "`--oauth-client-secret-file FILE`",
            "s3cret-value",
        ),
        (
            "redis = \"redis://:hunter2@127.0.0.1:6379\"\n",
            "`redis` holds a password in its URL",
            "`--redis` or `AI_TOOLS_REDIS`",
            "hunter2",
        ),
        (
            "[mcp]\nredis-cluster = [\"redis://a:1\", \"redis://admin:hunter2@b:2\"]\n",
            "`[mcp] redis-cluster` holds a password in its URL",
            "`--redis-cluster` or `AI_TOOLS_REDIS_CLUSTER`",
            "hunter2",
        ),
    ] {
        let file = ConfigFile::new("secret", toml);
        // Refused whichever command reads the file.
        for command in ["tools", "mcp"] {
            let output = ai_tools(
                &[command, "--proto", LINKS_PROTO, "--config", file.path()],
                &[],
            );
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{toml}: {stderr}");
            assert!(output.stdout.is_empty());
            assert!(
                stderr.contains(key) && stderr.contains(home) && stderr.contains(file.path()),
                "{toml}: {stderr}"
            );
            assert!(
                !stderr.contains(secret),
                "the secret is not echoed: {stderr}"
            );
        }
    }
}

#[test]
fn an_unknown_key_or_a_wrong_type_is_refused_naming_it_and_the_file() {
    for (toml, expected) in [
        ("grcp = \"http://127.0.0.1:1\"\n", "unknown key `grcp`"),
        (
            "read_only = true\n",
            "unknown key `read_only`; did you mean `read-only`?",
        ),
        (
            "[mcp]\ndialect = \"openai\"\n",
            "unknown key `[mcp] dialect`",
        ),
        (
            "config = \"other.toml\"\n",
            "a config file cannot name another",
        ),
        (
            "read-only = \"yes\"\n",
            "`read-only` takes true or false, not a string",
        ),
        ("include = [1.5, {}]\n", "`include` takes a list of strings"),
        (
            "dialect = [\"openai\"]\n",
            "`dialect` takes a string or a number, not an array",
        ),
        ("dialect = \"cohere\"\n", "unknown dialect `cohere`"),
        ("proto = ", "TOML"),
    ] {
        let file = ConfigFile::new("unknown", toml);
        let output = ai_tools(
            &["tools", "--proto", LINKS_PROTO, "--config", file.path()],
            &[],
        );
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{toml}: {stderr}");
        assert!(output.stdout.is_empty(), "{toml}");
        let expected_file = format!("the config file {}", file.path());
        assert!(
            stderr.contains(expected) && stderr.contains(&expected_file),
            "{toml}: `{expected}` in {stderr}"
        );
    }
    let output = ai_tools(
        &[
            "tools",
            "--proto",
            LINKS_PROTO,
            "--config",
            "/nonexistent/ai-tools.toml",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("the config file /nonexistent/ai-tools.toml"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn completions_are_scripts_for_each_shell() {
    let bash = ai_tools(&["completions", "bash"], &[]);
    assert_eq!(bash.status.code(), Some(0), "{}", text(&bash.stderr));
    let script =
        std::env::temp_dir().join(format!("ai-tools-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &bash.stdout).unwrap();
    let parsed = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(parsed.status.success(), "bash -n: {}", text(&parsed.stderr));
    let bash = text(&bash.stdout);
    assert!(
        bash.contains("--forward-header") && bash.contains("complete -F"),
        "{bash}"
    );
    // What bash offers at each TAB, for real: the commands, then each
    // command's own flags and values.
    let offered = |line: &[&str]| bash_completes(&script, line);
    let top = offered(&["ai-tools", "m"]);
    assert_eq!(top, ["mcp"], "{top:?}");
    let top = offered(&["ai-tools", ""]);
    for command in ["mcp", "tools", "completions", "help", "--help", "--version"] {
        assert!(top.iter().any(|w| w == command), "{command}: {top:?}");
    }
    let mcp = offered(&["ai-tools", "mcp", "--"]);
    for flag in [
        "--grpc",
        "--reflection",
        "--stdio",
        "--http",
        "--forward-header",
        "--call-timeout",
        "--ca-cert",
        "--client-cert",
        "--help",
    ] {
        assert!(mcp.iter().any(|w| w == flag), "mcp {flag}: {mcp:?}");
    }
    assert!(mcp.iter().all(|w| w.starts_with("--")), "{mcp:?}");
    let mcp = offered(&["ai-tools", "mcp", "--gr"]);
    assert_eq!(mcp, ["--grpc"], "{mcp:?}");
    let formats = offered(&["ai-tools", "mcp", "--log-format", ""]);
    assert_eq!(formats, ["text", "json"], "{formats:?}");
    let tools = offered(&["ai-tools", "tools", "--grpc", "http://h:1", "--re"]);
    for flag in ["--reflection", "--reflection-timeout"] {
        assert!(tools.iter().any(|w| w == flag), "tools {flag}: {tools:?}");
    }
    let shells = offered(&["ai-tools", "completions", ""]);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(shells.iter().any(|w| w == shell), "{shell}: {shells:?}");
    }
    let help = offered(&["ai-tools", "help", "t"]);
    assert_eq!(help, ["tools"], "{help:?}");
    std::fs::remove_file(&script).unwrap();

    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let output = ai_tools(&["completions", shell], &[]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = text(&output.stdout);
        assert!(
            script.contains("ai-tools") && script.contains("reflection-timeout"),
            "{shell}: {script}"
        );
    }
    if Command::new("zsh").arg("--version").output().is_ok() {
        let zsh = ai_tools(&["completions", "zsh"], &[]);
        let path = std::env::temp_dir().join(format!("_ai-tools-{}", std::process::id()));
        std::fs::write(&path, &zsh.stdout).unwrap();
        let parsed = Command::new("zsh")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("zsh runs");
        std::fs::remove_file(&path).unwrap();
        assert!(parsed.status.success(), "zsh -n: {}", text(&parsed.stderr));
    }

    let output = ai_tools(&["completions", "tcsh"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}

/// What bash's completion offers for the command line `words` (the last
/// is the word being completed), the way bash calls it at a TAB: the
/// completion `script` sourced into `bash --norc --noprofile`, the
/// function `complete -p ai-tools` names called with `COMP_WORDS`,
/// `COMP_CWORD`, `COMP_LINE` and `COMP_POINT` set; its `COMPREPLY`.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    const DRIVE: &str = r#"
source "$1" || exit 3
shift
spec=$(complete -p ai-tools) || exit 4
function=${spec#*-F }
function=${function%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$function" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", DRIVE, "bash"])
        .arg(script)
        .args(words)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{words:?}: {} {}",
        output.status,
        text(&output.stderr)
    );
    text(&output.stdout)
        .lines()
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Each command has its own help, exit 0, with its flags, their
/// variables, the examples and the exit statuses.
#[test]
fn each_command_has_its_help() {
    for (args, expected) in [
        (
            &["mcp", "--help"][..],
            &[
                "--oauth-issuer <URL>",
                "[env: AI_TOOLS_OAUTH_ISSUER=]",
                "EXAMPLES:",
                "ai-tools mcp --grpc https://links.internal:443",
                "EXIT STATUS:",
                "CONFIGURATION:",
            ][..],
        ),
        (
            &["tools", "--help"],
            &[
                "--dialect <DIALECT>",
                "[env: AI_TOOLS_DIALECT=]",
                "EXAMPLES:",
                "--dialect openai",
                "[possible values: mcp, openai, anthropic,",
            ],
        ),
        (&["tools", "-h"], &["--stats", "EXIT STATUS:"]),
        (&["help", "mcp"], &["--keep-calls-on-disconnect"]),
        (&["completions", "--help"], &["bash", "zsh"]),
    ] {
        let output = ai_tools(args, &[]);
        let help = text(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&output.stderr)
        );
        for expected in expected {
            assert!(help.contains(expected), "{args:?}: `{expected}` in\n{help}");
        }
    }
    assert!(
        !text(&ai_tools(&["tools", "--help"], &[]).stdout).contains("--oauth-issuer"),
        "`tools --help` lists only its own flags"
    );
    let output = ai_tools(&["mcp", "--version"], &[]);
    assert_eq!(output.status.code(), Some(0));
}

/// An empty variable counts as unset, as a container's `VAR=` means; a
/// value the flag refuses names the variable it came from.
#[test]
fn an_empty_variable_is_unset_and_a_bad_one_is_named() {
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO],
        &[("AI_TOOLS_READ_ONLY", ""), ("AI_TOOLS_DIALECT", "")],
    );
    assert_eq!(names(&output), ALL_TOOLS);
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO],
        &[("AI_TOOLS_DIALECT", "cohere")],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("unknown dialect `cohere`") && stderr.contains("AI_TOOLS_DIALECT"),
        "{stderr}"
    );
}

/// The config file the guide shows (`guide/src/configure.md`) is one the
/// command takes: read by `tools` with a proto on the command line (which
/// drops the file's `reflection`), its keys, the `[mcp]` table's included,
/// are all known, and its choice of tools applies.
#[test]
fn the_readmes_config_file_is_accepted() {
    let readme = std::fs::read_to_string(workspace().join("guide/src/configure.md")).unwrap();
    let start = readme
        .find("```toml\n# /etc/ai-tools.toml\n")
        .expect("guide/src/configure.md shows a config file")
        + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let file = ConfigFile::new("readme", &readme[start..end]);
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO, "--config", file.path()],
        &[],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // `service = ["links.v1.LinksService"]` and `exclude = ["*_delete"]`
    // (no LinksService method is a *_delete), as JSON logs.
    let listed = names(&output);
    assert!(listed.contains(&"links_list".to_owned()), "{listed:?}");
    assert!(stderr.starts_with('{'), "log-format = \"json\": {stderr}");
}

/// `AI_TOOLS_CONFIG` names the file as `--config` does, and a rule between
/// flags broken by the file's says the file took part.
#[test]
fn the_config_file_may_be_named_by_its_variable() {
    let file = ConfigFile::new("by-variable", "include = [\"links_list\"]\n");
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO],
        &[("AI_TOOLS_CONFIG", file.path())],
    );
    assert_eq!(names(&output), ["links_list"]);

    let clash = ConfigFile::new("clash", "plain-fields = \"required\"\n");
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO, "--config", clash.path()],
        &[],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`--plain-fields` is for the services exposed whole")
            && stderr.contains(&format!(
                "(with the flags of the config file {})",
                clash.path()
            )),
        "{stderr}"
    );
}

/// One environment may serve both commands: `tools` does not read the
/// variables of `mcp`'s flags, which it does not have.
#[test]
fn a_variable_of_the_other_commands_flag_is_not_read() {
    let output = ai_tools(
        &["tools", "--proto", LINKS_PROTO],
        &[
            ("AI_TOOLS_HTTP", "0.0.0.0:8080"),
            ("AI_TOOLS_STDIO", "true"),
            ("AI_TOOLS_MAX_SESSIONS", "0"),
        ],
    );
    assert_eq!(names(&output), ALL_TOOLS);
}

/// A config file's relative paths are taken from the file's directory, not
/// the working directory: a file beside its protos works from anywhere,
/// and `proto`'s include directory is its path's first directory there,
/// as on the command line. A path that leads nowhere is named as it was
/// resolved, with the key and the file it came from.
#[test]
fn a_config_files_relative_paths_are_taken_from_its_directory() {
    let dir = std::env::temp_dir().join(format!("ai-tools-config-relative-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let v1 = dir.join("protos/shop/v1");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::write(
        v1.join("common.proto"),
        "syntax = \"proto3\";\npackage shop.v1;\nmessage Item { string id = 1; }\n",
    )
    .unwrap();
    std::fs::write(
        v1.join("shop.proto"),
        "syntax = \"proto3\";\npackage shop.v1;\nimport \"shop/v1/common.proto\";\n\
         service Shop {\n  rpc GetItem(Item) returns (Item);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tools.toml"),
        "[methods.\"shop.v1.Shop.GetItem\"]\nname = \"items_get\"\ndescription = \"Fetch one item.\"\n",
    )
    .unwrap();
    let config = dir.join("ai-tools.toml");
    std::fs::write(
        &config,
        "proto = \"protos/shop/v1/shop.proto\"\noverlay = \"tools.toml\"\n",
    )
    .unwrap();
    // From the repository root, where neither path exists.
    let output = ai_tools(&["tools", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(names(&output), ["items_get"]);
    assert!(
        text(&output.stdout).contains("Fetch one item."),
        "the overlay beside the file applies: {}",
        text(&output.stdout)
    );

    // A path that leads nowhere: resolved, and blamed on the file's key.
    std::fs::write(
        &config,
        "proto = \"protos/shop/v1/shop.proto\"\noverlay = \"overlays/tools.toml\"\n",
    )
    .unwrap();
    let output = ai_tools(&["tools", "--config", config.to_str().unwrap()], &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let resolved = dir.join("overlays/tools.toml");
    assert!(
        stderr.contains(&format!("the overlay {}", resolved.display()))
            && stderr.contains(&format!(
                "`overlay = \"overlays/tools.toml\"` in the config file {}",
                config.display()
            )),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
