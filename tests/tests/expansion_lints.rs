//! The expansions of `ai_tools!` and of `#[derive(ToolInput)]` compile
//! cleanly under strict lints, so that they never add warnings to a user's
//! crate (as thiserror's `test_lints.rs`).

#![deny(
    missing_docs,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    rust_2018_idioms,
    clippy::all,
    clippy::pedantic
)]

/// Generated tools of the example proto.
pub mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

/// Derived tool inputs: every shape the derive expands differently.
pub mod inputs {
    use proto_ai_tools::ToolInput;
    use serde::Deserialize;

    /// Find links.
    #[derive(Deserialize, ToolInput)]
    #[serde(rename_all = "camelCase")]
    pub struct Search {
        /// What to look for.
        pub query: String,
        /// The link to search around.
        #[tool(
            alias_prefix = "link",
            usage_notes = "Use an id a tool returned; never invent one."
        )]
        pub near_link_id: Option<String>,
        /// Renamed on the wire.
        #[serde(rename = "max")]
        #[tool(description = "At most this many results.")]
        pub limit: Option<u32>,
        /// Where to start.
        #[serde(flatten)]
        pub paging: Paging,
        /// How to sort.
        #[serde(default)]
        pub order: Order,
        /// What to do with the results.
        pub then: Action,
    }

    /// A page of results.
    #[derive(Deserialize, ToolInput)]
    pub struct Paging {
        /// The page, from 0.
        pub page: u32,
    }

    /// An order of results.
    #[derive(Default, Deserialize, ToolInput)]
    #[serde(rename_all = "snake_case")]
    pub enum Order {
        /// Newest first.
        #[default]
        Newest,
        /// Best match first.
        BestMatch,
    }

    /// One action.
    #[derive(Deserialize, ToolInput)]
    pub enum Action {
        /// Show the results.
        Show {
            /// How many lines each.
            lines: u8,
        },
        /// Tag every result.
        Tag(String),
        /// Move every result to a folder.
        #[serde(rename = "move")]
        MoveTo {
            /// The folder.
            #[tool(alias_prefix = "folder")]
            folder_id: String,
        },
    }
}

#[test]
fn expansion_is_lint_clean_and_usable() {
    let tools = gentools::all_tools();
    assert_eq!(tools.len(), gentools::ALL_TOOLS.len());
    assert_eq!(tools[0], &gentools::LINKS_CREATE);
    assert!(
        gentools::descriptor_pool()
            .get_message_by_name("links.v1.Link")
            .is_some()
    );
}

#[test]
fn derived_expansion_is_lint_clean_and_usable() {
    use proto_ai_tools::ToolInput as _;

    let schema = inputs::Search::tool_schema();
    let object = schema.as_object().expect("an object");
    let names: Vec<&str> = object
        .properties
        .iter()
        .map(|property| property.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["query", "nearLinkId", "max", "page", "order", "then"]
    );
    let aliases: Vec<(String, String)> = inputs::Search::alias_fields()
        .into_iter()
        .map(|alias| (alias.field, alias.prefix))
        .collect();
    assert_eq!(
        aliases,
        [
            ("nearLinkId".to_owned(), "link".to_owned()),
            ("folder_id".to_owned(), "folder".to_owned())
        ]
    );
}
