//! The selection of tools a set keeps (`select.rs`), on the links proto.

use super::{ToolSet, ToolSetOptions};

mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

fn names(options: &ToolSetOptions) -> Vec<&'static str> {
    let bytes = links::descriptor_pool().encode_to_vec();
    ToolSet::from_descriptor_set(&bytes, options)
        .unwrap_or_else(|e| panic!("tools: {e}"))
        .tools()
        .iter()
        .map(|t| t.name)
        .collect()
}

fn problems(options: &ToolSetOptions) -> Vec<String> {
    let bytes = links::descriptor_pool().encode_to_vec();
    match ToolSet::from_descriptor_set(&bytes, options) {
        Ok(set) => panic!("built {} tools", set.tools().len()),
        Err(e) => e.problems,
    }
}

const ALL: [&str; 5] = [
    "links_create",
    "links_update",
    "links_list",
    "workflow_steps_create",
    "workflow_steps_delete",
];

#[test]
fn no_selection_keeps_every_tool() {
    assert_eq!(names(&ToolSetOptions::new()), ALL);
}

#[test]
fn includes_keep_what_matches_any_of_them() {
    let options = ToolSetOptions::new().include("links_*");
    assert_eq!(
        names(&options),
        ["links_create", "links_update", "links_list"]
    );
    let two = ToolSetOptions::new()
        .include("links_list")
        .include("*_delete");
    assert_eq!(names(&two), ["links_list", "workflow_steps_delete"]);
    let methods = ToolSetOptions::new().include("links.v1.WorkflowStepsService/*");
    assert_eq!(
        names(&methods),
        ["workflow_steps_create", "workflow_steps_delete"]
    );
    let alternatives = ToolSetOptions::new().include("links.v1.*/{Create,Delete}*");
    assert_eq!(
        names(&alternatives),
        [
            "links_create",
            "workflow_steps_create",
            "workflow_steps_delete"
        ]
    );
}

#[test]
fn excludes_drop_what_matches_any_of_them() {
    let options = ToolSetOptions::new()
        .exclude("workflow_*")
        .exclude("links.v1.LinksService/UpdateLink");
    assert_eq!(names(&options), ["links_create", "links_list"]);
}

#[test]
fn an_exclude_wins_over_an_include() {
    let options = ToolSetOptions::new()
        .include("links_*")
        .include("workflow_steps_create")
        .exclude("links_update");
    assert_eq!(
        names(&options),
        ["links_create", "links_list", "workflow_steps_create"]
    );
}

#[test]
fn read_only_keeps_the_methods_without_side_effects_and_applies_last() {
    assert_eq!(
        names(&ToolSetOptions::new().read_only(true)),
        ["links_list"]
    );
    assert_eq!(
        names(&ToolSetOptions::new().include("links_*").read_only(true)),
        ["links_list"]
    );
    assert_eq!(names(&ToolSetOptions::new().read_only(false)), ALL);
    // Read-only after the globs: nothing left is an error, not an empty set.
    let none = problems(&ToolSetOptions::new().include("workflow_*").read_only(true));
    assert_eq!(none.len(), 1);
    assert!(
        none[0].starts_with("the selection leaves no tool (include `workflow_*`; read-only"),
        "{none:?}"
    );
}

#[test]
fn a_pattern_that_matches_no_tool_is_an_error_naming_it_and_the_tools() {
    let found = problems(
        &ToolSetOptions::new()
            .include("link_*")
            .include("links_list")
            .exclude("links.v1.LinkService/*"),
    );
    assert_eq!(
        found,
        [
            "include pattern `link_*` matches no tool name; the tool names are links_create, \
             links_update, links_list, workflow_steps_create, workflow_steps_delete (5 in all)",
            "exclude pattern `links.v1.LinkService/*` matches no method \
             (`package.Service/Method`); the methods are links.v1.LinksService/CreateLink, \
             links.v1.LinksService/UpdateLink, links.v1.LinksService/ListLinks, \
             links.v1.WorkflowStepsService/CreateWorkflowStep, \
             links.v1.WorkflowStepsService/DeleteWorkflowStep (5 in all)",
        ]
    );
    // Names are matched whole and with their case.
    assert_eq!(problems(&ToolSetOptions::new().include("links")).len(), 1);
    assert_eq!(problems(&ToolSetOptions::new().include("LINKS_*")).len(), 1);
}

#[test]
fn excludes_that_remove_everything_and_bad_globs_are_errors() {
    let all = problems(&ToolSetOptions::new().include("links_*").exclude("*"));
    assert!(
        all[0].starts_with(
            "the selection leaves no tool (include `links_*`; exclude `*`); the tools are links_create,"
        ),
        "{all:?}"
    );
    let bad = problems(&ToolSetOptions::new().include("links_[").exclude("a{b"));
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].starts_with("include pattern `links_[` is not a glob"));
    assert!(bad[1].starts_with("exclude pattern `a{b` is not a glob"));
}

#[test]
fn many_tools_are_listed_in_part() {
    let listed = super::select::listed(["a", "b", "c", "d", "e", "f", "g", "h"].into_iter());
    assert_eq!(listed, "a, b, c, d, e, f, … (8 in all)");
}
