//! Choosing tools where they are built, by one rule
//! (`proto_ai_tools_schema::select`): `ai_tools!`'s `include`, `exclude` and
//! `read_only` arguments, and `ToolkitBuilder`'s methods of the same names
//! over generated and native tools. (`ToolSetOptions`' are in the runtime's
//! own tests; an overlay's `read_only = true` with them in `tool_set.rs`.)

use proto_ai_tools::schema::ToolHints;
use proto_ai_tools::schema::select::{PatternKind, Problem};
use proto_ai_tools::toolkit::ToolkitError;
use proto_ai_tools::transport::{InProcessTransport, TonicTransport};
use proto_ai_tools::{NativeTool, ToolInput, Toolkit};
use proto_ai_tools_tests::support::ok_json;
use proto_ai_tools_tests::tools::links;
use proto_ai_tools_tests::{LinksBackend, serve};

/// The expansions of `links.proto` (`links_create`, `links_update`,
/// `links_list` of `LinksService`; `workflow_steps_create`,
/// `workflow_steps_delete` of `WorkflowStepsService`; only `ListLinks` is
/// `NO_SIDE_EFFECTS`) and of googleapis' `operations.proto` exposed whole,
/// each with a selection.
mod chosen {
    /// Tool names: the links tools but `links_update`.
    pub mod by_name {
        proto_ai_tools::ai_tools!(
            "proto/links/v1/links.proto",
            include = ["links_*"],
            exclude = ["links_update"]
        );
    }

    /// Methods (`package.Service/Method`) and a name, together.
    pub mod by_method {
        proto_ai_tools::ai_tools!(
            "proto/links/v1/links.proto",
            include = ["links.v1.WorkflowStepsService/*", "links_list"]
        );
    }

    /// Read-only alone, then after globs.
    pub mod read_only {
        proto_ai_tools::ai_tools!("proto/links/v1/links.proto", read_only = true);
    }

    pub mod read_only_false {
        proto_ai_tools::ai_tools!("proto/links/v1/links.proto", read_only = false);
    }

    /// A service exposed whole, whose derived names the globs choose from.
    pub mod whole {
        proto_ai_tools::ai_tools!(
            "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
            includes = ["proto/third_party/googleapis"],
            services = ["google.longrunning.Operations"],
            include = ["operations_*"],
            exclude = ["*/DeleteOperation", "operations_list"]
        );
    }
}

fn names(tools: &[&proto_ai_tools::AgentTool]) -> Vec<&'static str> {
    tools.iter().map(|t| t.name).collect()
}

#[test]
fn the_macro_keeps_only_the_chosen_tools() {
    assert_eq!(
        names(chosen::by_name::all_tools()),
        ["links_create", "links_list"]
    );
    assert_eq!(
        names(chosen::by_method::all_tools()),
        [
            "links_list",
            "workflow_steps_create",
            "workflow_steps_delete"
        ]
    );
    assert_eq!(names(chosen::read_only::all_tools()), ["links_list"]);
    assert_eq!(
        names(chosen::read_only_false::all_tools()),
        names(links::all_tools())
    );
    assert_eq!(
        names(chosen::whole::all_tools()),
        ["operations_get", "operations_cancel", "operations_wait"]
    );

    // A tool left out is no tool of the executor either; a tool kept is the
    // very tool of the whole expansion.
    let exec = chosen::by_name::Executor::new(InProcessTransport::new());
    assert_eq!(names(exec.tools()), ["links_create", "links_list"]);
    assert!(exec.can_execute("links_create") && !exec.can_execute("links_update"));
    assert_eq!(chosen::by_name::LINKS_CREATE, links::LINKS_CREATE);
    assert_eq!(chosen::read_only::LINKS_LIST, links::LINKS_LIST);
    assert!(chosen::read_only::LINKS_LIST.hints.read_only);
}

#[tokio::test]
async fn a_chosen_tool_runs_and_one_left_out_is_unknown() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec =
        chosen::by_name::Executor::new(TonicTransport::new(server.channel().expect("channel")));
    let created = ok_json(
        &exec
            .links_create(serde_json::json!({"destination": "https://example.com/a", "name": "A"}))
            .await,
    );
    assert_eq!(created["link"]["id"], "link-1");
    let refused = exec
        .execute("links_update", r#"{"link_id": "link-1", "name": "B"}"#)
        .await;
    assert!(refused.is_error, "{refused:?}");
    assert_eq!(server.backend.links()[0].name, "A");
    server.shutdown().await;
}

#[derive(serde::Deserialize, ToolInput)]
struct Query {
    /// What to look for.
    text: String,
}

/// A native tool named `name`, read-only or not.
fn native(name: &str, read_only: bool) -> NativeTool {
    NativeTool::new::<Query, _, _>(name, "A native tool.", |_, q: Query| async move { q.text })
        .hints(ToolHints {
            read_only,
            idempotent: read_only,
            destructive: None,
        })
}

/// A toolkit of `links.proto`'s tools, then `docs_search` (read-only) and
/// `notes_write` (not).
fn toolkit() -> proto_ai_tools::toolkit::ToolkitBuilder {
    Toolkit::builder()
        .generated(links::Executor::new(InProcessTransport::new()))
        .native(native("docs_search", true))
        .native(native("notes_write", false))
}

fn toolkit_names(toolkit: &Toolkit) -> Vec<&str> {
    toolkit.tools().iter().map(|t| t.name()).collect()
}

#[test]
fn a_toolkit_chooses_among_generated_and_native_tools() {
    let all = toolkit().build().unwrap();
    assert_eq!(toolkit_names(&all).len(), 7);

    let chosen = toolkit()
        .include("links.v1.LinksService/*")
        .include("*_search")
        .exclude("links_update")
        .build()
        .unwrap();
    assert_eq!(
        toolkit_names(&chosen),
        ["links_create", "links_list", "docs_search"]
    );
    assert!(chosen.get("links_update").is_none() && chosen.get("notes_write").is_none());

    // Read-only: the proto's `NO_SIDE_EFFECTS`, a native tool's hints.
    let read_only = toolkit().read_only(true).build().unwrap();
    assert_eq!(toolkit_names(&read_only), ["links_list", "docs_search"]);

    // A method pattern never matches a native tool, however wide.
    let methods = toolkit().include("*/*").build().unwrap();
    assert_eq!(toolkit_names(&methods).len(), 5);
    let natives_only = Toolkit::builder()
        .native(native("docs_search", true))
        .include("links.v1.*/*")
        .build()
        .unwrap_err();
    assert_eq!(
        natives_only.to_string(),
        "include pattern `links.v1.*/*` matches no method (`package.Service/Method`); none of the tools is a proto method"
    );
}

#[test]
fn a_toolkit_selection_keeps_one_of_two_tools_of_a_name() {
    // Without a selection, a native `links_create` clashes with the proto's.
    let clash = toolkit().native(native("links_create", false)).build();
    assert_eq!(
        clash.unwrap_err(),
        ToolkitError::DuplicateName("links_create".into())
    );
    let toolkit = toolkit()
        .native(native("links_create", false))
        .exclude("links.v1.LinksService/CreateLink")
        .build()
        .unwrap();
    let create = toolkit.get("links_create").unwrap();
    assert!(create.native().is_some());
}

#[test]
fn a_toolkit_selection_that_is_wrong_says_every_problem() {
    let typos = toolkit()
        .include("link_*")
        .include("docs_*")
        .exclude("links.v1.LinkService/*")
        .build()
        .unwrap_err();
    let ToolkitError::Selection(problems) = &typos else {
        panic!("{typos:?}");
    };
    let at: Vec<_> = problems.iter().map(Problem::pattern).collect();
    assert_eq!(
        at,
        [
            Some((PatternKind::Include, 0)),
            Some((PatternKind::Exclude, 0))
        ]
    );
    let text = typos.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with(
            "include pattern `link_*` matches no tool name; the tool names are links_create, links_update,"
        ),
        "{text}"
    );
    assert!(lines[0].ends_with("… (7 in all)"), "{text}");
    assert!(
        lines[1].starts_with("exclude pattern `links.v1.LinkService/*` matches no method"),
        "{text}"
    );

    let nothing = toolkit()
        .include("notes_*")
        .read_only(true)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &nothing,
            ToolkitError::Selection(problems)
                if matches!(problems[..], [Problem::LeavesNoTool { by_read_only: true, .. }])
        ),
        "{nothing:?}"
    );
    assert!(
        nothing
            .to_string()
            .starts_with("the selection leaves no tool (include `notes_*`; read-only"),
        "{nothing}"
    );

    let bad = toolkit().exclude("links_[").build().unwrap_err();
    assert!(
        bad.to_string()
            .starts_with("exclude pattern `links_[` is not a glob"),
        "{bad}"
    );
}
