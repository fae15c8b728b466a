use super::*;
use std::time::Duration;

/// `annotate` on `test.proto` of `pool`, exposing `services` whole.
fn annotate_test(
    pool: &DescriptorPool,
    overlay: Option<&Overlay>,
    services: &[&str],
    plain_fields: PlainFields,
) -> Result<Annotated, Vec<Diagnostic>> {
    let services: Vec<String> = services.iter().map(|&s| s.to_owned()).collect();
    let encoded = pool.encode_to_vec();
    let file = Some("test.proto");
    annotate(pool, &encoded, file, overlay, &services, plain_fields)
}

/// The tools of `test.proto` in `annotated`, or the diagnostics, each
/// located where the annotation it is about was written.
fn located_tools(annotated: &Annotated) -> Result<Vec<crate::ToolSpec>, Vec<String>> {
    crate::tools_in_file(&annotated.pool, "test.proto").map_err(|d| {
        d.into_iter()
            .map(|d| annotated.relocate(d).to_string())
            .collect()
    })
}

fn texts(diagnostics: Vec<Diagnostic>) -> Vec<String> {
    diagnostics.iter().map(ToString::to_string).collect()
}

#[test]
fn snake_case_names() {
    assert_eq!(snake_case("ListOperations"), "list_operations");
    assert_eq!(snake_case("KV"), "kv");
    assert_eq!(snake_case("HTTPServer"), "http_server");
    assert_eq!(snake_case("getV2"), "get_v2");
}

#[test]
fn whole_service_mode_takes_unary_and_server_streams_and_says_what_it_left() {
    let pool = crate::test_support::compile(&format!(
        "{}message Req {{}}\nservice Things {{\n  // Get a thing.\n  rpc Get(Req) returns (Req);\n  rpc Watch(Req) returns (stream Req);\n  rpc Upload(stream Req) returns (Req);\n  rpc Chat(stream Req) returns (stream Req);\n}}\n",
        crate::test_support::HEADER
    ));
    let annotated =
        annotate_test(&pool, None, &["t.Things"], PlainFields::default()).expect("annotated");
    assert_eq!(annotated.left_out, ["t.Things.Upload", "t.Things.Chat"]);
    let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["things_get", "things_watch"]);
    assert_eq!(tools[0].description, "Get a thing.");
    assert!(
        tools[1]
            .description
            .contains("the proto gives no description")
    );
}

#[test]
fn derived_names_drop_the_words_that_repeat() {
    for (service, method, name) in [
        ("Services", "CreateService", "services_create"),
        ("SqlInstancesService", "List", "sql_instances_list"),
        (
            "SecretManagerService",
            "AccessSecretVersion",
            "secret_manager_access_secret_version",
        ),
        (
            "SchemaService",
            "ListSchemaRevisions",
            "schema_list_revisions",
        ),
        ("Operations", "GetOperation", "operations_get"),
        ("WorkerPools", "CreateWorkerPool", "worker_pools_create"),
        (
            "FirewallPolicies",
            "GetFirewallPolicy",
            "firewall_policies_get",
        ),
        ("Addresses", "MoveAddress", "addresses_move"),
        ("SqlBackupsService", "ListBackups", "sql_backups_list"),
        ("Lease", "LeaseGrant", "lease_grant"),
        ("Lease", "LeaseLeases", "lease_leases"),
        ("Auth", "AuthStatus", "auth_status"),
        ("Watch", "Watch", "watch_watch"),
        ("EkmService", "GetEkmConnection", "ekm_get_connection"),
        (
            "Instances",
            "GetShieldedInstanceIdentity",
            "instances_get_shielded_instance_identity",
        ),
        // Not the whole noun in a row, or nothing left beside it.
        (
            "FirewallPolicies",
            "GetIamPolicy",
            "firewall_policies_get_iam_policy",
        ),
        ("Books", "Book", "books_book"),
        ("Service", "Get", "service_get"),
    ] {
        assert_eq!(
            derived_tool_name(service, method),
            name,
            "{service}.{method}"
        );
    }
    assert!(same_noun("policy", "policies") && same_noun("address", "addresses"));
    assert!(!same_noun("policy", "police") && !same_noun("ies", "y"));
    // Too long even so: the service's words shortened, longest first.
    assert_eq!(
        derived_tool_name(
            "OrganizationSecurityPolicies",
            "ListPreconfiguredExpressionSets"
        ),
        "org_security_policies_list_preconfigured_expression_sets"
    );
}

/// The tool names `annotate` derives for every service of `source`.
fn derived(source: &str, services: &[&str]) -> Vec<String> {
    let pool = crate::test_support::compile(&format!("{}{source}", crate::test_support::HEADER));
    let annotated =
        annotate_test(&pool, None, services, PlainFields::default()).expect("annotated");
    let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
    let mut names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
    names.sort();
    names
}

#[test]
fn methods_whose_shortened_names_clash_keep_every_word() {
    // `Books.GetBook` and `Books.Get` both shorten to `books_get`;
    // `Books.DeleteBook` shortens to a name `Remove` is given inline;
    // `ShelvesService.ListShelves` and `Shelves.List` to `shelves_list`.
    let methods = [
        "  rpc GetBook(Req) returns (Req);\n",
        "  rpc Get(Req) returns (Req);\n",
        "  rpc ListBooks(Req) returns (Req);\n",
        "  rpc DeleteBook(Req) returns (Req);\n",
        "  rpc Remove(Req) returns (Req) {\n    option (ai.context.v1.rpc_tool) = { name: \"books_delete\" description: \"Remove.\" };\n  }\n",
    ];
    let shelves = "service ShelvesService {\n  rpc ListShelves(Req) returns (Req);\n}\nservice Shelves {\n  rpc List(Req) returns (Req);\n}\n";
    let expected = [
        "books_delete",
        "books_delete_book",
        "books_get",
        "books_get_book",
        "books_list",
        "shelves_list",
        "shelves_service_list_shelves",
    ];
    let services = ["t.Books", "t.ShelvesService", "t.Shelves"];
    let forward = format!(
        "message Req {{}}\nservice Books {{\n{}}}\n{shelves}",
        methods.concat()
    );
    assert_eq!(derived(&forward, &services), expected);
    // Declared the other way round, the same names.
    let backward = format!(
        "message Req {{}}\nservice Shelves {{\n  rpc List(Req) returns (Req);\n}}\nservice ShelvesService {{\n  rpc ListShelves(Req) returns (Req);\n}}\nservice Books {{\n{}}}\n",
        methods.iter().rev().copied().collect::<String>()
    );
    let mut reversed = services;
    reversed.reverse();
    assert_eq!(derived(&backward, &reversed), expected);
}

#[test]
fn derived_names_that_clash_are_refused_with_the_overlay_fix() {
    let pool = crate::test_support::compile(&format!(
        "{}message Req {{}}\nservice Things {{\n  rpc GetURL(Req) returns (Req);\n  rpc GetUrl(Req) returns (Req);\n  rpc Ping(Req) returns (Req) {{\n    option (ai.context.v1.rpc_tool) = {{ name: \"things_list\" description: \"Ping.\" }};\n  }}\n  rpc List(Req) returns (Req);\n}}\n",
        crate::test_support::HEADER
    ));
    let problems = annotate_test(&pool, None, &["t.Things"], PlainFields::default())
        .expect_err("two methods derive `things_get_url`, and `things_list` is taken inline");
    assert_eq!(problems.len(), 2, "{problems:?}");
    let clash = &problems[0];
    assert!(clash.line.is_some(), "located at the method: {clash}");
    assert!(
            clash.message.contains("derives the tool name `things_get_url` for `t.Things.GetUrl`, but `t.Things.GetURL` already has it")
                && clash.message.contains("in an overlay")
                && clash.message.contains("`[methods.\"t.Things.GetUrl\"]` with `name = "),
            "{clash}"
        );
    assert!(
        problems[1]
            .message
            .contains("`things_list` for `t.Things.List`, but `t.Things.Ping` already has it"),
        "{}",
        problems[1]
    );
    // An overlay entry takes the place of the derived name.
    let overlay = Overlay::parse(
            "tools.toml",
            "[methods.\"t.Things.GetUrl\"]\nname = \"things_get_url_too\"\ndescription = \"Get.\"\n\n[methods.\"t.Things.List\"]\nname = \"things_list_all\"\ndescription = \"List.\"\n",
        )
        .expect("a valid overlay");
    let annotated = annotate_test(&pool, Some(&overlay), &["t.Things"], PlainFields::default())
        .expect("no clash left");
    let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "things_get_url",
            "things_get_url_too",
            "things_list",
            "things_list_all"
        ]
    );
}

#[test]
fn another_extension_under_the_annotation_numbers_is_an_error_not_a_panic() {
    let source = "syntax = \"proto3\";\npackage x;\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MethodOptions { string mine = 52104; }\nextend google.protobuf.FieldOptions { string theirs = 52105; }\nmessage Req {}\nservice S { rpc Get(Req) returns (Req); }\n";
    let pool = crate::test_support::compile_files(&[("test.proto", source)], "test.proto");
    let problems = annotate_test(&pool, None, &["x.S"], PlainFields::default())
        .expect_err("not ai-tools' annotation");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].message.contains("`x.mine` (extension 52104")
            && problems[0].message.contains("is not a message"),
        "{}",
        problems[0]
    );
}

/// `annotate` with `services` and `overlay` on `test.proto`, then the
/// JSON Schema `required` of each tool, by name.
fn required_by_tool(
    source: &str,
    overlay: Option<&Overlay>,
    plain_fields: PlainFields,
) -> Result<Vec<(String, serde_json::Value)>, Vec<String>> {
    let pool = crate::test_support::compile(&format!("{}{source}", crate::test_support::HEADER));
    let annotated = annotate_test(&pool, overlay, &["t.Books"], plain_fields).map_err(texts)?;
    let tools = located_tools(&annotated)?;
    Ok(tools
        .iter()
        .map(|t| {
            let schema = t.render(crate::Dialect::JsonSchema);
            (t.name.clone(), schema["required"].clone())
        })
        .collect())
}

const BOOKS: &str = "message Book { string book_id = 1; }
message UpdateBookRequest {
  string book_id = 1 [(google.api.field_behavior) = REQUIRED];
  string title = 2;
  string author = 3 [(ai.tools.v1.tool_field).usage_notes = 'Full name.'];
  int32 pages = 4;
  Details details = 5;
  string isbn = 6 [(ai.tools.v1.tool_field).required = true];
  string shelf = 7 [deprecated = true];
  repeated string tags = 8;
  map<string, string> labels = 9;
}
message Details { string publisher = 1; optional int32 year = 2; }
message Own { string name = 1; }
service Books {
  rpc UpdateBook(UpdateBookRequest) returns (Book);
  rpc Annotated(Own) returns (Book) {
    option (ai.context.v1.rpc_tool) = { name: \"books_own\" description: \"Own.\" };
  }
}
";

#[test]
fn whole_services_require_only_field_behavior_required_fields() {
    let required = required_by_tool(BOOKS, None, PlainFields::default()).expect("tools");
    assert_eq!(
        required,
        [
            (
                "books_update".to_owned(),
                serde_json::json!(["book_id", "isbn"])
            ),
            // Annotated inline: the inline rule.
            ("books_own".to_owned(), serde_json::json!(["name"])),
        ]
    );
    let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
    let annotated =
        annotate_test(&pool, None, &["t.Books"], PlainFields::Optional).expect("annotated");
    let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
    let update = tools[0].render(crate::Dialect::JsonSchema);
    // Nested messages too; an inline option keeps what it said; the
    // deprecated field stays out (an option would bring it back).
    assert_eq!(
        update["properties"]["details"]["required"],
        serde_json::Value::Null,
        "{update:#}"
    );
    assert!(
        update["properties"]["author"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Full name.")),
        "{update:#}"
    );
    assert!(update["properties"].get("shelf").is_none(), "{update:#}");

    // The inline rule, asked for.
    let required = required_by_tool(BOOKS, None, PlainFields::Required).expect("tools");
    assert_eq!(
        required[0].1,
        serde_json::json!([
            "book_id", "title", "author", "pages", "details", "isbn", "tags", "labels"
        ])
    );
}

#[test]
fn the_overlay_sets_required_and_whole_services_never_override_it() {
    let overlay = Overlay::parse(
            "tools.toml",
            "[fields.\"t.UpdateBookRequest.title\"]\nrequired = true\n\n[fields.\"t.UpdateBookRequest.pages\"]\ndescription = \"How many pages.\"\n\n[fields.\"t.Details.publisher\"]\nskip = true\n\n[fields.\"t.Own.name\"]\nrequired = false\n",
        )
        .expect("a valid overlay");
    let required = required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional).expect("tools");
    assert_eq!(
        required,
        [
            (
                "books_update".to_owned(),
                serde_json::json!(["book_id", "title", "isbn"])
            ),
            ("books_own".to_owned(), serde_json::Value::Null),
        ]
    );
    // Without whole services the overlay's `required` still decides.
    let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
    let annotated =
        annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional).expect("annotated");
    let tools = crate::tools_in_file(&annotated.pool, "test.proto").expect("tools");
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0].render(crate::Dialect::JsonSchema)["required"],
        serde_json::Value::Null
    );
}

#[test]
fn an_overlay_required_that_contradicts_the_proto_is_an_error_in_the_overlay() {
    let overlay = Overlay::parse(
            "tools.toml",
            "[fields.\"t.UpdateBookRequest.title\"]\nrequired = true\n\n[fields.\"t.UpdateBookRequest.book_id\"]\nrequired = false\n",
        )
        .expect("a valid overlay");
    let problems = required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional)
        .expect_err("a contradiction");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].starts_with("tools.toml:4:9: ")
            && problems[0].contains(
                "field `t.UpdateBookRequest.book_id` is `(google.api.field_behavior) = REQUIRED`"
            ),
        "{}",
        problems[0]
    );

    // Given inline and in the overlay: an error, as for every key.
    let overlay = Overlay::parse(
        "tools.toml",
        "[fields.\"t.UpdateBookRequest.isbn\"]\nrequired = false\n",
    )
    .expect("a valid overlay");
    let problems =
        required_by_tool(BOOKS, Some(&overlay), PlainFields::Optional).expect_err("a conflict");
    assert!(
        problems[0].starts_with("tools.toml:1:9: ")
            && problems[0].contains(
                "`t.UpdateBookRequest.isbn` already has an inline `tool_field` option (test.proto:"
            ),
        "{problems:#?}"
    );

    let wrong = Overlay::parse(
        "tools.toml",
        "[fields.\"t.Own.name\"]\nrequired = \"yes\"\n",
    )
    .expect_err("not a boolean");
    assert!(
        wrong[0].to_string().starts_with("tools.toml:2:"),
        "{}",
        wrong[0]
    );
}

#[test]
fn an_annotation_proto_without_required_is_an_error_where_it_is_needed() {
    // An older copy of `ai/tools/v1/annotations.proto`, shadowing ours.
    let old = "syntax = \"proto3\";\npackage ai.tools.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolFieldOptions { bool skip = 1; string alias_prefix = 2; string usage_notes = 3; string description = 4; }\nextend google.protobuf.FieldOptions { ToolFieldOptions tool_field = 52105; }\n";
    let source = "syntax = \"proto3\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\nimport \"ai/tools/v1/annotations.proto\";\nmessage Req { string name = 1; }\nservice Books { rpc Get(Req) returns (Req); }\n";
    let pool = crate::test_support::compile_files(
        &[
            ("test.proto", source),
            ("ai/tools/v1/annotations.proto", old),
        ],
        "test.proto",
    );
    let run = |plain_fields| annotate_test(&pool, None, &["t.Books"], plain_fields);
    let problems = run(PlainFields::Optional).expect_err("cannot write `required`");
    assert!(
        problems[0]
            .message
            .contains("has no `required` field (number 5)"),
        "{problems:?}"
    );
    // Nothing to write, nothing missing.
    assert!(run(PlainFields::Required).is_ok());
}

#[test]
fn annotation_protos_older_than_output_schema_or_sensitive_are_an_error_at_the_key() {
    // Older copies of both annotation protos, shadowing ours: no
    // `rpc_tool.output_schema` (8), no `tool_field.sensitive` (6).
    let old_tools = "syntax = \"proto3\";\npackage ai.tools.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolFieldOptions { bool skip = 1; string alias_prefix = 2; string usage_notes = 3; string description = 4; optional bool required = 5; }\nextend google.protobuf.FieldOptions { ToolFieldOptions tool_field = 52105; }\n";
    let old_context = "syntax = \"proto3\";\npackage ai.context.v1;\nimport \"google/protobuf/descriptor.proto\";\nmessage ToolDefinition { string name = 1; string description = 2; bool strict = 3; }\nextend google.protobuf.MethodOptions { ToolDefinition rpc_tool = 52104; }\n";
    let source = "syntax = \"proto3\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\nimport \"ai/tools/v1/annotations.proto\";\nmessage Req { string name = 1; }\nservice Books { rpc Get(Req) returns (Req); }\n";
    let pool = crate::test_support::compile_files(
        &[
            ("test.proto", source),
            ("ai/tools/v1/annotations.proto", old_tools),
            ("ai/context/v1/annotations.proto", old_context),
        ],
        "test.proto",
    );
    let overlay = Overlay::parse(
            "tools.toml",
            "[methods.\"t.Books.Get\"]\nname = \"get\"\ndescription = \"Get.\"\noutput_schema = true\n\n[fields.\"t.Req.name\"]\nsensitive = true\n",
        )
        .unwrap();
    let problems = annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional)
        .expect_err("neither key can be written");
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("tools.toml:4:")
            && t.contains(
                "`ai.context.v1.ToolDefinition` has no `output_schema` field (number 8)"
            )),
        "{texts:#?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("tools.toml:6:")
            && t.contains("`ai.tools.v1.ToolFieldOptions` has no `sensitive` field (number 6)")),
        "{texts:#?}"
    );
}

/// The tools of `BOOKS` with `overlay_text` annotating
/// `t.Books.UpdateBook`, or the diagnostics, located.
fn tools_with_overlay(overlay_text: &str) -> Result<Vec<crate::ToolSpec>, Vec<String>> {
    let overlay = Overlay::parse("tools.toml", overlay_text).map_err(texts)?;
    let pool = crate::test_support::compile(&format!("{}{BOOKS}", crate::test_support::HEADER));
    let annotated =
        annotate_test(&pool, Some(&overlay), &[], PlainFields::Optional).map_err(texts)?;
    located_tools(&annotated)
}

#[test]
fn the_overlay_gives_a_tool_its_deadline() {
    let method =
        "[methods.\"t.Books.UpdateBook\"]\nname = \"books_update\"\ndescription = \"Update.\"\n";
    let timeout_of = |text: &str| {
        tools_with_overlay(&format!("{method}timeout = \"{text}\"\n")).map(|tools| {
            let tool = tools
                .iter()
                .find(|t| t.name == "books_update")
                .expect("the tool");
            tool.timeout
        })
    };
    assert_eq!(timeout_of("0.3s"), Ok(Some(Duration::from_millis(300))));
    assert_eq!(timeout_of("300s"), Ok(Some(Duration::from_secs(300))));
    assert_eq!(timeout_of("86400s"), Ok(Some(Duration::from_secs(86_400))));
    assert_eq!(timeout_of("1.000000001s"), Ok(Some(Duration::new(1, 1))));
    // No key, no deadline of its own; the inline tool has none either.
    let tools = tools_with_overlay(method).expect("tools");
    assert!(tools.iter().all(|t| t.timeout.is_none()), "{tools:?}");

    // Text that is not a protojson duration: located at the value.
    for bad in ["soon", "30", "1.s", "1.0000000001s", "s", "1m", " 1s"] {
        let problems = timeout_of(bad).expect_err(bad);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with("tools.toml:4:11: ")
                && problems[0].contains("is not a duration"),
            "{bad}: {problems:#?}"
        );
    }
    // A duration that is no deadline: located at the method's selector.
    for (bad, why) in [
        ("0s", "is not a deadline"),
        ("-5s", "is not a deadline"),
        ("-0.5s", "is not a deadline"),
        ("86400.5s", "longer than a tool's deadline may be, 86400s"),
    ] {
        let problems = timeout_of(bad).expect_err(bad);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with("tools.toml:1:10: ")
                && problems[0].contains("rpc `UpdateBook`: `timeout`")
                && problems[0].contains(why),
            "{bad}: {problems:#?}"
        );
    }
    // Not a string: the TOML parser says where.
    let wrong = tools_with_overlay(&format!("{method}timeout = 30\n")).expect_err("a number");
    assert!(wrong[0].starts_with("tools.toml:4:"), "{wrong:#?}");
}

#[test]
fn selectors_that_match_nothing_or_an_inline_option_are_located_in_the_overlay() {
    let problems = tools_with_overlay(
        "[methods.\"t.Books.UpdateBok\"]\nname = \"x\"\ndescription = \"X.\"\n\n\
             [methods.\"t.Books.Annotated\"]\nname = \"y\"\ndescription = \"Y.\"\n\n\
             [fields.\"t.UpdateBookRequest.titel\"]\nskip = true\n\n\
             [fields.\"t.UpdateBookRequest.author\"]\nskip = true\n",
    )
    .expect_err("four bad selectors");
    assert_eq!(
        problems,
        [
            "tools.toml:5:10: `t.Books.Annotated` already has an inline `rpc_tool` option (test.proto:22:3); annotate it in one place",
            "tools.toml:1:10: no method `t.Books.UpdateBok` in the protos; did you mean `t.Books.UpdateBook`?",
            "tools.toml:12:9: `t.UpdateBookRequest.author` already has an inline `tool_field` option (test.proto:10:3); annotate it in one place",
            "tools.toml:9:9: no field `t.UpdateBookRequest.titel` in the protos; did you mean `t.UpdateBookRequest.title`?",
        ]
    );
}

#[test]
fn the_overlay_gives_a_tool_its_examples() {
    let method =
        "[methods.\"t.Books.UpdateBook\"]\nname = \"books_update\"\ndescription = \"Update.\"\n";
    let full = r#"{"book_id": "b-1", "title": "Dune", "author": "Frank Herbert", "pages": 412, "details": {"publisher": "Chilton", "year": 1965}, "isbn": "9780441013593", "tags": ["sf"], "labels": {"shelf": "a"}}"#;
    // Annotated from the overlay, the tool keeps the inline rule: every
    // plain field is required (the year is `optional`).
    let minimal = r#"{"book_id": "b-2", "title": "Emma", "author": "Jane Austen", "pages": 474, "details": {"publisher": "John Murray"}, "isbn": "9780141439587", "tags": [], "labels": {}}"#;
    let examples_of = |examples: &str| {
        tools_with_overlay(&format!("{method}examples = {examples}\n")).map(|tools| {
            let tool = tools
                .iter()
                .find(|t| t.name == "books_update")
                .expect("the tool");
            tool.examples.clone()
        })
    };
    let examples = examples_of(&format!("['{full}', '{minimal}']")).expect("they fit");
    assert_eq!(
        examples,
        [
            serde_json::from_str::<serde_json::Value>(full).expect("JSON"),
            serde_json::from_str(minimal).expect("JSON"),
        ]
    );
    // The inline tool has none; a tool without the key has none.
    let tools = tools_with_overlay(method).expect("tools");
    assert!(tools.iter().all(|t| t.examples.is_empty()), "{tools:?}");

    // An example that does not fit: located at its own string, the
    // value at fault named.
    let many = minimal.replace("474", "\"many\"");
    let problems =
        examples_of(&format!("[\n  '{minimal}',\n  '{many}',\n]")).expect_err("pages is no number");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
            problems[0].starts_with("tools.toml:6:3: rpc `UpdateBook`: example 2 (`{\"book_id\": \"b-2\"")
                && problems[0].ends_with("…`) does not fit the tool: `pages` is `many`, which is not a whole number in digits; send a whole number"),
            "{problems:#?}"
        );
    // Accepted inbound (proto3 sends defaults for what is missing), but
    // the schema requires it.
    let untitled = minimal.replace(r#""title": "Emma", "#, "");
    let problems = examples_of(&format!("['{untitled}']")).expect_err("no title");
    assert!(
        problems[0].ends_with(
            "does not fit the tool: the example lacks `title`, which the schema requires"
        ),
        "{problems:#?}"
    );
    // Not JSON; a key the schema does not have.
    let problems = examples_of("['{\"book_id\": ', '{\"book_id\": \"b\", \"colour\": 1}']")
        .expect_err("two bad examples");
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].starts_with("tools.toml:4:13: ") && problems[0].contains("is not JSON"),
        "{problems:#?}"
    );
    assert!(
        problems[1].starts_with("tools.toml:4:29: ")
            && problems[1].contains("unknown argument `colour`"),
        "{problems:#?}"
    );
    // Not a list of strings: the TOML parser says where.
    let wrong = tools_with_overlay(&format!("{method}examples = [{{ book_id = \"b\" }}]\n"))
        .expect_err("a table");
    assert!(wrong[0].starts_with("tools.toml:4:"), "{wrong:#?}");
    // A tool's key: not on an entry of hints only.
    let hints_only = Overlay::parse(
        "tools.toml",
        "[methods.\"t.Books.Annotated\"]\nread_only = true\nexamples = ['{}']\n",
    )
    .expect_err("examples without a tool");
    assert!(
        hints_only[0]
            .to_string()
            .contains("gives `examples` but no `name` and `description`"),
        "{hints_only:#?}"
    );
}

#[test]
fn durations_parse_as_protojson_writes_them() {
    let parse_duration = crate::inbound::duration_parts;
    assert_eq!(parse_duration("30s"), Some((30, 0)));
    assert_eq!(parse_duration("0.5s"), Some((0, 500_000_000)));
    assert_eq!(parse_duration("-1.25s"), Some((-1, -250_000_000)));
    assert_eq!(parse_duration("1.000000001s"), Some((1, 1)));
    for bad in ["", "s", "1", "-s", "1.s", ".5s", "1e3s", "+1s", "1.5ms"] {
        assert_eq!(parse_duration(bad), None, "{bad}");
    }
}

const SHELF: &str = "message Req { string id = 1; }
service Shelf {
  // Get a book.
  rpc GetBook(Req) returns (Req);
  rpc DeleteBook(Req) returns (Req);
  rpc CountBooks(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: \"shelf_count\" description: \"Count the books.\" };
  }
  rpc Peek(Req) returns (Req) {
    option idempotency_level = NO_SIDE_EFFECTS;
  }
  rpc Audit(Req) returns (Req) {
    option idempotency_level = IDEMPOTENT;
  }
  rpc Burn(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: \"shelf_burn\" description: \"Burn a book.\" destructive: true };
  }
}
service Other { rpc Ping(Req) returns (Req); }
";

/// The overlay's `consent` is `rpc_tool.consent`; a word it does not
/// know is an error at the key.
#[test]
fn consent_from_the_overlay() {
    let pool = crate::test_support::compile(&format!("{}{SHELF}", crate::test_support::HEADER));
    let consent = |text: &str| -> Result<Vec<(String, Option<crate::ConsentPolicy>)>, Vec<String>> {
        let overlay = Overlay::parse("tools.toml", text).map_err(texts)?;
        let annotated =
            annotate_test(&pool, Some(&overlay), &[], PlainFields::default()).map_err(texts)?;
        Ok(located_tools(&annotated)?
            .into_iter()
            .map(|t| (t.name, t.consent))
            .collect())
    };
    let tools = consent(
            "[methods.\"t.Shelf.DeleteBook\"]\nname = \"shelf_delete\"\ndescription = \"Delete a book.\"\nconsent = \"block\"\n\n[methods.\"t.Shelf.GetBook\"]\nname = \"shelf_get\"\ndescription = \"Get a book.\"\nconsent = \"allow\"\n",
        )
        .expect("tools");
    assert!(
        tools.contains(&("shelf_delete".to_owned(), Some(crate::ConsentPolicy::Block))),
        "{tools:?}"
    );
    assert!(
        tools.contains(&("shelf_get".to_owned(), Some(crate::ConsentPolicy::Allow))),
        "{tools:?}"
    );
    assert!(
        tools.contains(&("shelf_count".to_owned(), None)),
        "{tools:?}"
    );
    let wrong = consent(
            "[methods.\"t.Shelf.DeleteBook\"]\nname = \"shelf_delete\"\ndescription = \"Delete a book.\"\nconsent = \"ask\"\n",
        )
        .expect_err("refused");
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(
        wrong[0].starts_with("tools.toml:4:11: `consent = \"ask\"`: use \"allow\""),
        "{wrong:?}"
    );
}

/// A tool as the read-only tests see it: name, description, read-only,
/// idempotent.
type Hinted = (String, String, bool, bool);

/// The tools of `SHELF` with `overlay_text` and `services` exposed
/// whole; or the problems, located.
fn shelf(overlay_text: &str, services: &[&str]) -> Result<Vec<Hinted>, Vec<String>> {
    let overlay = Overlay::parse("tools.toml", overlay_text).map_err(texts)?;
    let pool = crate::test_support::compile(&format!("{}{SHELF}", crate::test_support::HEADER));
    let annotated =
        annotate_test(&pool, Some(&overlay), services, PlainFields::default()).map_err(texts)?;
    let tools = located_tools(&annotated)?;
    Ok(tools
        .into_iter()
        .map(|t| (t.name, t.description, t.hints.read_only, t.hints.idempotent))
        .collect())
}

fn tool(name: &str, description: &str, read_only: bool, idempotent: bool) -> Hinted {
    (
        name.to_owned(),
        description.to_owned(),
        read_only,
        idempotent,
    )
}

#[test]
fn read_only_marks_tools_inline_whole_and_of_the_overlay() {
    // Alone in an entry: a method of a service exposed whole keeps its
    // derived name and comment, one annotated inline its annotation.
    let tools = shelf(
            "[methods.\"t.Shelf.GetBook\"]\nread_only = true\n\n[methods.\"t.Shelf.CountBooks\"]\nread_only = true\n",
            &["t.Shelf"],
        )
        .expect("tools");
    assert_eq!(
        tools,
        [
            tool("shelf_get_book", "Get a book.", true, true),
            tool(
                "shelf_delete_book",
                "Calls `t.Shelf.DeleteBook`; the proto gives no description.",
                false,
                false
            ),
            tool("shelf_count", "Count the books.", true, true),
            tool(
                "shelf_peek",
                "Calls `t.Shelf.Peek`; the proto gives no description.",
                true,
                true
            ),
            tool(
                "shelf_audit",
                "Calls `t.Shelf.Audit`; the proto gives no description.",
                false,
                true
            ),
            tool("shelf_burn", "Burn a book.", false, false),
        ]
    );

    // Beside a tool's keys, with no service exposed whole.
    let tools = shelf(
            "[methods.\"t.Other.Ping\"]\nname = \"ping\"\ndescription = \"Ping.\"\nread_only = true\ndestructive = false\n",
            &[],
        )
        .expect("tools");
    assert_eq!(
        tools,
        [
            tool("shelf_count", "Count the books.", false, false),
            tool("shelf_burn", "Burn a book.", false, false),
            tool("ping", "Ping.", true, true),
        ]
    );
}

#[test]
fn a_read_only_that_conflicts_or_repeats_is_an_error_at_the_key() {
    let problems = shelf(
        "[methods.\"t.Shelf.Peek\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Audit\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Burn\"]\nread_only = true\n\n\
             [methods.\"t.Other.Ping\"]\nread_only = true\n\n\
             [methods.\"t.Shelf.Chek\"]\nread_only = true\n",
        &["t.Shelf"],
    )
    .expect_err("five problems");
    assert_eq!(
        problems,
        [
            "tools.toml:13:10: no method `t.Shelf.Chek` in the protos; did you mean `t.Shelf.Peek`?",
            "tools.toml:11:13: `t.Other.Ping` is marked `read_only = true` but is not a tool: annotate it (`rpc_tool` inline, or `name` and `description` in this entry) or expose its service whole (`services`)",
            "tools.toml:5:13: `t.Shelf.Audit` has `idempotency_level = IDEMPOTENT` inline (test.proto:18:5), which says it may change something; `read_only = true` contradicts it: annotate it in one place",
            "tools.toml:8:13: `t.Shelf.Burn` is `destructive: true` in its inline `rpc_tool` (test.proto:21:5); a method without side effects destroys nothing: drop one of them",
            "tools.toml:2:13: `t.Shelf.Peek` has `idempotency_level = NO_SIDE_EFFECTS` inline (test.proto:15:5): it is read-only already; annotate it in one place",
        ]
    );
}

#[test]
fn method_entries_are_a_tool_or_read_only_and_say_something() {
    let problems = Overlay::parse(
            "tools.toml",
            "[methods.\"t.A.B\"]\nname = \"b\"\n\n\
             [methods.\"t.A.C\"]\ntitle = \"C\"\nstrict = true\nread_only = true\n\n\
             [methods.\"t.A.D\"]\n\n\
             [methods.\"t.A.E\"]\nread_only = false\n\n\
             [methods.\"t.A.F\"]\nname = \"f\"\ndescription = \"F.\"\ndestructive = true\nread_only = true\n\n\
             [methods.\"t.A.G\"]\ndescription = \"G.\"\n",
        )
        .map_err(texts)
        .expect_err("six problems");
    assert_eq!(
        problems,
        [
            "tools.toml:1:10: `[methods.\"t.A.B\"]` gives `name` but no `description`: a tool needs both (an entry with neither only marks the method `read_only = true`)",
            "tools.toml:4:10: `[methods.\"t.A.C\"]` gives `strict`, `title` but no `name` and `description`: those are a tool's, give all of them (an entry without a name only marks the method `read_only = true`)",
            "tools.toml:9:10: `[methods.\"t.A.D\"]` says nothing: give `name` and `description` to make the method a tool, or `read_only = true` to mark it read-only",
            "tools.toml:12:13: `read_only = false` in `[methods.\"t.A.E\"]` is what leaving it out says (a method is read-only only when its proto or its overlay says so); remove it",
            "tools.toml:18:13: `[methods.\"t.A.F\"]` gives `read_only = true` and `destructive = true`; a method without side effects destroys nothing: drop one of them",
            "tools.toml:20:10: `[methods.\"t.A.G\"]` gives `description` but no `name`: a tool needs both (an entry with neither only marks the method `read_only = true`)",
        ]
    );
    // The key is `true` or `false`.
    let wrong = Overlay::parse("tools.toml", "[methods.\"t.A.B\"]\nread_only = \"yes\"\n")
        .map_err(texts)
        .expect_err("not a boolean");
    assert!(
        wrong[0].starts_with("tools.toml:2:13: invalid overlay: "),
        "{wrong:?}"
    );
}

#[test]
fn closest_names() {
    let names = vec!["a.B.Get".to_owned(), "a.B.List".to_owned()];
    assert_eq!(closest_hint("a.B.Gte", &names), "; did you mean `a.B.Get`?");
}
