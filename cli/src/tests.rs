use super::*;
use proto_ai_tools::schema::overlay::PlainFields;

use crate::auth::AuthFlags;
use crate::limits::{CallLimits, Deadline, HttpLimits};
use crate::store::ScopeFlags;
use crate::tls::TlsFiles;

/// `line` parsed as the command line after `ai-tools` (in the test
/// process's environment, which sets no `AI_TOOLS_` flag).
fn parsed(line: &str) -> Result<Option<Args>, Failure> {
    let argv = std::iter::once("ai-tools")
        .chain(line.split_whitespace())
        .map(std::ffi::OsString::from)
        .collect();
    match flags::parse(argv)? {
        Parsed::Run(args) => Ok(Some(*args)),
        Parsed::Print(_) | Parsed::Completions(_) | Parsed::Protos { .. } => Ok(None),
    }
}

fn usage_error(line: &str) -> String {
    match parsed(line) {
        Err(Failure::Usage(m)) => m,
        Err(Failure::Run(m)) => panic!("not a usage error: {m}"),
        Ok(_) => panic!("`{line}` parsed"),
    }
}

#[test]
fn a_whole_command_line() {
    let args = parsed("mcp --grpc http://h:1 --reflection --service a.B --service c.D --http 127.0.0.1:0 --forward-header authorization")
            .ok()
            .flatten()
            .expect("parses");
    assert_eq!(args.command, "mcp");
    assert!(args.common.source.reflection);
    assert_eq!(args.common.choice.services, ["a.B", "c.D"]);
    assert_eq!(args.serve.forward_headers, ["authorization"]);
    assert!(matches!(parsed("--help"), Ok(None)));
}

#[test]
fn mistakes_are_usage_errors_that_say_what_to_do() {
    assert!(usage_error("").contains("name a command"));
    assert!(usage_error("tools").contains("exactly one of"));
    assert!(usage_error("tools --reflection").contains("--grpc URL"));
    assert!(usage_error("mcp --descriptor-set x --stdio").contains("--grpc URL"));
    assert!(usage_error("mcp --grpc u --descriptor-set x").contains("--stdio"));
    assert!(usage_error("tools --descriptor-set x --stdio").contains("`--stdio` is for `mcp`"));
    assert!(
        usage_error("tools --descriptor-set")
            .contains("a value is required for '--descriptor-set <FILE>'")
    );
    assert!(usage_error("tools --frobnicate").contains("unexpected argument"));
    assert!(
        usage_error("tools --grpc u --reflection --reflection-timeout 0")
            .contains("positive number of seconds")
    );
    assert!(
        usage_error("tools --grpc u --reflection --reflection-timeout soon")
            .contains("positive number of seconds")
    );
    assert!(
        usage_error("tools --descriptor-set x --reflection-timeout 5")
            .contains("is for `--reflection`")
    );
    let args = parsed("tools --grpc u --reflection --reflection-timeout 2.5")
        .ok()
        .flatten()
        .expect("parses");
    assert_eq!(
        args.common.source.reflection_timeout,
        Some(Duration::from_millis(2500))
    );
}

#[test]
fn http_limits_are_for_mcp_over_http() {
    let args = parsed(
            "mcp --grpc u --proto x --http 127.0.0.1:0 --max-body-bytes 1000 --max-sessions 50 \
             --session-idle-timeout 600 --max-connections 64 --header-timeout 2.5 --idle-timeout 30 \
             --drain-timeout 55 --allowed-origin https://app.example.com:443 --allowed-origin http://dev.example:*",
        )
        .ok()
        .flatten()
        .expect("parses");
    assert_eq!(
        args.serve.http_limits,
        HttpLimits {
            max_body_bytes: Some(1000),
            max_sessions: Some(50),
            session_idle_timeout: Some(Duration::from_secs(600)),
            max_connections: Some(64),
            header_timeout: Some(Duration::from_millis(2500)),
            idle_timeout: Some(Duration::from_secs(30)),
            drain_timeout: Some(Duration::from_secs(55)),
            allowed_origins: vec![
                "https://app.example.com:443".to_owned(),
                "http://dev.example:*".to_owned()
            ],
            keep_calls_on_disconnect: false,
        }
    );
    let keep = parsed("mcp --grpc u --proto x --http a --keep-calls-on-disconnect")
        .ok()
        .flatten()
        .expect("parses");
    assert!(keep.serve.http_limits.keep_calls_on_disconnect);
    assert!(
        usage_error("mcp --grpc u --proto x --stdio --keep-calls-on-disconnect")
            .contains("are for `mcp --http`")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --max-sessions 0")
            .contains("positive whole number")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --max-body-bytes lots")
            .contains("positive whole number")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --idle-timeout -1")
            .contains("positive number of seconds")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --allowed-origin app.example.com")
            .contains("scheme://host:port")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --stdio --max-connections 5")
            .contains("are for `mcp --http`")
    );
    assert!(usage_error("tools --proto x --max-sessions 5").contains("is for `mcp`"));
}

#[test]
fn deadlines_are_for_mcp_over_either_transport() {
    let calls = |line: &str| parsed(line).ok().flatten().expect("parses").serve.calls;
    assert_eq!(
        calls(
            "mcp --grpc u --proto x --stdio --call-timeout 20 --tool-timeout a_b=300 --tool-timeout c=0.5"
        ),
        CallLimits {
            timeout: Some(Deadline(Some(Duration::from_secs(20)))),
            per_tool: vec![
                ("a_b".to_owned(), Duration::from_secs(300)),
                ("c".to_owned(), Duration::from_millis(500)),
            ],
        }
    );
    assert_eq!(
        calls("mcp --grpc u --proto x --http a --call-timeout 0").timeout,
        Some(Deadline(None)),
        "0: no deadline"
    );
    assert_eq!(calls("mcp --grpc u --proto x --http a").timeout, None);
    assert!(
        usage_error("mcp --grpc u --proto x --http a --call-timeout -1")
            .contains("or 0 for no deadline")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --tool-timeout a_b")
            .contains("give NAME=SECS")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --tool-timeout =5").contains("give NAME=SECS")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --http a --tool-timeout a_b=0")
            .contains("positive number of seconds after `=`")
    );
    assert!(usage_error("tools --proto x --call-timeout 5").contains("is for `mcp`"));
}

#[test]
fn tls_files_are_for_an_https_server() {
    let tls = |line: &str| parsed(line).ok().flatten().expect("parses").common.tls;
    assert_eq!(
        tls(
            "mcp --grpc https://h:443 --proto x --stdio --ca-cert ca.pem --client-cert c.pem --client-key c.key"
        ),
        TlsFiles {
            ca_cert: Some("ca.pem".into()),
            client_cert: Some("c.pem".into()),
            client_key: Some("c.key".into()),
        }
    );
    assert!(tls("tools --grpc https://h:443 --reflection").is_empty());
    assert_eq!(
        tls("tools --grpc https://h:443 --reflection --ca-cert ca.pem").ca_cert,
        Some("ca.pem".into())
    );
    for half in ["--client-cert c.pem", "--client-key c.key"] {
        let e = usage_error(&format!(
            "mcp --grpc https://h:443 --proto x --stdio {half}"
        ));
        assert_eq!(
            e,
            "`--client-cert FILE` and `--client-key FILE` go together: give both"
        );
    }
    let e = usage_error("mcp --grpc http://h:80 --proto x --stdio --ca-cert ca.pem");
    assert!(
        e.contains("are for TLS: use an https:// URL, not `--grpc http://h:80`"),
        "{e}"
    );
    assert!(
        usage_error("tools --proto x --ca-cert ca.pem").contains("give it"),
        "TLS files without a server"
    );
    assert!(
        usage_error("tools --grpc https://h --reflection --ca-cert")
            .contains("a value is required")
    );
}

#[test]
fn includes_excludes_and_read_only_choose_tools() {
    let args = parsed(
        "mcp --grpc u --proto x -I proto --stdio --include links_* --include a.v1.S/* \
             --exclude *_delete --read-only",
    )
    .ok()
    .flatten()
    .expect("parses");
    assert_eq!(args.common.choice.include_tools, ["links_*", "a.v1.S/*"]);
    assert_eq!(args.common.choice.exclude_tools, ["*_delete"]);
    assert!(args.common.choice.read_only);
    assert_eq!(
        args.common.source.includes,
        [PathBuf::from("proto")],
        "-I is the proto path"
    );
    let none = parsed("tools --proto x").ok().flatten().expect("parses");
    let choice = &none.common.choice;
    assert!(
        choice.include_tools.is_empty() && choice.exclude_tools.is_empty() && !choice.read_only
    );
    assert!(
        usage_error("tools --proto x --include")
            .contains("a value is required for '--include <GLOB>'")
    );
    assert!(
        usage_error("tools --proto x --exclude")
            .contains("a value is required for '--exclude <GLOB>'")
    );
}

#[test]
fn the_default_include_is_the_macros() {
    assert_eq!(
        default_include(Path::new("proto/links/v1/links.proto")),
        PathBuf::from("proto")
    );
    assert_eq!(
        default_include(Path::new("links.proto")),
        PathBuf::from(".")
    );
    assert_eq!(
        default_include(Path::new("/srv/api/v1/api.proto")),
        PathBuf::from("/srv/api/v1")
    );
}

#[test]
fn a_location_names_the_file_as_reached_from_here() {
    // The tests run in the crate's directory; the protos are one up.
    let includes = [PathBuf::from("../proto")];
    assert_eq!(
        as_reached("links/v1/links.proto:9:23", &includes),
        "../proto/links/v1/links.proto:9:23"
    );
    assert_eq!(
        as_reached("links/v1/links.proto", &includes),
        "../proto/links/v1/links.proto"
    );
    assert_eq!(
        as_reached("nowhere.proto:1:2", &includes),
        "nowhere.proto:1:2"
    );
}

#[test]
fn tool_search_and_its_toolsets() {
    let args =
        parsed("mcp --grpc u --proto x --stdio --tool-search --toolset a.v1.S --toolset b.v1.T")
            .ok()
            .flatten()
            .expect("parses");
    assert!(args.serve.tool_search);
    assert_eq!(args.serve.toolsets, ["a.v1.S", "b.v1.T"]);
    assert!(
        usage_error("mcp --grpc u --proto x --stdio --toolset a.v1.S")
            .contains("give `--tool-search`")
    );
    assert!(usage_error("tools --proto x --tool-search").contains("`--tool-search` is for `mcp`"));
    let defined = parsed(
        "mcp --grpc u --proto x --stdio --tool-search --define-toolset reading=*_list,a.v1.S/Get*",
    )
    .ok()
    .flatten()
    .expect("parses");
    assert_eq!(
        defined.serve.defined_toolsets,
        [(
            "reading".to_owned(),
            vec!["*_list".to_owned(), "a.v1.S/Get*".to_owned()]
        )]
    );
    assert!(
        usage_error("mcp --grpc u --proto x --stdio --tool-search --define-toolset reading")
            .contains("give NAME=GLOB[,GLOB...]")
    );
    assert!(
        usage_error("mcp --grpc u --proto x --stdio --define-toolset r=x")
            .contains("give `--tool-search`")
    );
}

#[test]
fn plain_fields_of_whole_services() {
    let plain = |line: &str| {
        parsed(line)
            .ok()
            .flatten()
            .expect("parses")
            .common
            .choice
            .plain_fields
    };
    assert_eq!(plain("tools --proto x --service a.B"), None);
    assert_eq!(
        plain("tools --proto x --service a.B --plain-fields required"),
        Some(PlainFields::Required)
    );
    assert_eq!(
        plain("tools --proto x --service a.B --plain-fields optional"),
        Some(PlainFields::Optional)
    );
    let bad = usage_error("tools --proto x --service a.B --plain-fields mandatory");
    assert!(
        bad.contains("`--plain-fields mandatory`: use `optional`") && bad.contains("or `required`"),
        "{bad}"
    );
    assert!(
        usage_error("tools --proto x --plain-fields required").contains("give `--service NAME`")
    );
    assert!(
        usage_error("tools --proto x --service a.B --plain-fields").contains("a value is required")
    );
}

#[test]
fn scope_and_store_flags_are_for_mcp_and_one_store() {
    let base = "mcp --grpc http://h:1 --proto x";
    let args = parsed(&format!(
        "{base} --http 127.0.0.1:0 --alias-scope-header X-User --single-user \
             --redis-cluster redis://a:1 --redis-cluster redis://b:2"
    ))
    .unwrap()
    .unwrap();
    assert_eq!(
        args.serve.scopes.alias_scope_header.as_deref(),
        Some("X-User")
    );
    assert!(args.serve.scopes.single_user);
    assert_eq!(
        args.serve.scopes.redis_cluster,
        ["redis://a:1", "redis://b:2"]
    );
    for flags in ["--alias-scope-header x", "--single-user"] {
        assert!(usage_error(&format!("{base} --stdio {flags}")).contains("mcp --http"));
    }
    assert!(
        usage_error(&format!(
            "{base} --stdio --redis redis://a:1 --redis-cluster redis://b:2"
        ))
        .contains("one alias store")
    );
    assert!(usage_error("tools --proto x --redis redis://a:1").contains("is for `mcp`"));
    // The header name is checked when the server is built.
    let server = McpServer::new(|a| Toolkit::builder().alias_manager(a).build());
    let flags = ScopeFlags {
        alias_scope_header: Some("mcp-session-id".to_owned()),
        ..ScopeFlags::default()
    };
    assert!(matches!(flags.apply(server), Err(Failure::Usage(m)) if m.contains("mcp-session-id")));
}

#[test]
fn oauth_flags_need_each_other_and_http() {
    let base = "mcp --grpc http://h:1 --proto x --http 127.0.0.1:0";
    let args = parsed(&format!(
        "{base} --oauth-issuer https://auth.example --oauth-audience https://t.example/mcp \
             --required-scope mcp:use --tool-scopes tools:read,tools:write \
             --claim-header sub=X-User-Id --backend-token-env TOKEN --max-sessions-per-caller 3"
    ))
    .unwrap()
    .unwrap();
    assert_eq!(
        args.serve.auth.claim_headers,
        [("sub".to_owned(), "x-user-id".to_owned())]
    );
    assert_eq!(
        args.serve.auth.tool_scopes,
        Some(("tools:read".to_owned(), "tools:write".to_owned()))
    );
    assert!(args.serve.auth.oauth().unwrap().is_some());
    assert!(
        usage_error(&format!("{base} --oauth-issuer https://auth.example"))
            .contains("--oauth-audience URI")
    );
    assert!(
        usage_error("mcp --grpc http://h:1 --proto x --stdio --oauth-issuer i --oauth-audience a")
            .contains("mcp --http")
    );
    assert!(
        usage_error(&format!(
            "{base} --oauth-issuer i --oauth-audience a --forward-header authorization"
        ))
        .contains("forbids")
    );
    assert!(
            usage_error(&format!(
                "{base} --oauth-issuer i --oauth-audience a --oauth-introspection https://auth.example/introspect"
            ))
            .contains("give all three")
        );
    assert!(usage_error(&format!("{base} --tool-scopes read")).contains("READ,WRITE"));
    assert!(usage_error(&format!("{base} --tool-scopes a,b,c")).contains("READ,WRITE"));
    assert!(
        usage_error(&format!(
            "{base} --oauth-issuer i --oauth-audience a --forward-header Authorization"
        ))
        .contains("forbids")
    );
    assert!(
        usage_error(&format!(
            "{base} --forward-header authorization --backend-token-env V"
        ))
        .contains("keep one")
    );
    assert!(usage_error(&format!("{base} --claim-header sub")).contains("CLAIM=HEADER"));
    assert!(
        usage_error(&format!(
            "{base} --backend-token-file f --backend-token-env V"
        ))
        .contains("once")
    );
    assert!(usage_error("tools --proto x --backend-token-env V").contains("is for `mcp`"));
}

#[test]
fn the_backend_token_is_read_trimmed_and_refused_when_unsendable() {
    let dir = std::env::temp_dir().join(format!("ai-tools-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "s3cret\n").unwrap();
    let flags = AuthFlags {
        backend_token_file: Some(file.clone()),
        ..AuthFlags::default()
    };
    let options = flags.backend_credential().unwrap().unwrap();
    assert_eq!(
        options.metadata,
        [("authorization".to_owned(), "Bearer s3cret".to_owned())]
    );
    std::fs::write(&file, "two words").unwrap();
    assert!(
        matches!(flags.backend_credential(), Err(Failure::Run(m)) if m.contains("printable ASCII"))
    );
    let missing = AuthFlags {
        backend_token_env: Some("AI_TOOLS_SURELY_UNSET_VARIABLE".to_owned()),
        ..AuthFlags::default()
    };
    assert!(matches!(missing.backend_credential(), Err(Failure::Run(m)) if m.contains("not set")));
    let _ = std::fs::remove_dir_all(dir);
}
