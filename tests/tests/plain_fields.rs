//! Which fields a service exposed whole requires (issue 26): a proto3 proto
//! written without ai-tools in mind (`tests/proto/books/v1/books.proto`, an
//! update that changes only the fields it sets), built into tools at run
//! time, called against a real tonic server on loopback.
//!
//! The arguments are checked against the renderings by Python's
//! `jsonschema` (Draft 2020-12), not by our own code: `AI_TOOLS_PYTHON`,
//! else `target/py-venv/bin/python`. Without one that part is skipped,
//! saying so, unless `AI_TOOLS_REQUIRE_PYTHON` is set.

use std::collections::HashMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use proto_ai_tools::schema::Dialect;
use proto_ai_tools::schema::overlay::{Overlay, PlainFields};
use proto_ai_tools::{
    AgentTool,
    tool_set::{ToolSet, ToolSetOptions},
    transport::TonicTransport,
};
use proto_ai_tools_tests::serve_router;
use proto_ai_tools_tests::support::{ok_json, python_importing, python_required, renderings};
use serde_json::{Value, json};
use tonic::{Request, Response, Status};

/// The code tonic generates for `books.proto` (server only).
#[allow(clippy::all, missing_docs)]
mod books_pb {
    tonic::include_proto!("books.v1");
}

use books_pb::books_server::{Books, BooksServer};
use books_pb::{Book, GetBookRequest, UpdateBookRequest};

const SERVICE: &str = "books.v1.Books";
const UPDATE: &str = "books_update";

/// `books.proto` as `protoc --include_imports --include_source_info
/// --descriptor_set_out` writes it.
fn books_descriptor_set() -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut compiler =
        protox::Compiler::new([dir.join("proto"), dir.join("../proto")]).expect("a compiler");
    compiler
        .include_imports(true)
        .include_source_info(true)
        .open_file("books/v1/books.proto")
        .expect("compiles");
    compiler.encode_file_descriptor_set()
}

fn tool_set(options: &ToolSetOptions) -> ToolSet {
    ToolSet::from_descriptor_set(&books_descriptor_set(), options).expect("tools")
}

fn tool(set: &ToolSet, name: &str) -> &'static AgentTool {
    set.tools()
        .iter()
        .copied()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether a property's schema admits `null`, in any dialect's spelling.
fn nullable(schema: &Value) -> bool {
    let null_type = match &schema["type"] {
        Value::String(t) => t == "null",
        Value::Array(types) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    null_type
        || schema["nullable"] == true
        || schema["anyOf"]
            .as_array()
            .is_some_and(|branches| branches.iter().any(nullable))
}

/// Whether each of `(schema, arguments)` is valid, by Python's `jsonschema`
/// (Draft 2020-12); `None` when there is no Python to ask.
fn valid_by_jsonschema(cases: &[(Value, Value)]) -> Option<Vec<bool>> {
    let python = match python_importing("jsonschema") {
        Ok(python) => python,
        Err(reason) if python_required() => panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}"),
        Err(reason) => {
            let _ = writeln!(std::io::stderr(), "SKIPPED (jsonschema): {reason}");
            return None;
        }
    };
    const SCRIPT: &str = "import json, sys, jsonschema\n\
        cases = json.load(sys.stdin)\n\
        print(json.dumps([jsonschema.Draft202012Validator(s).is_valid(a) for s, a in cases]))\n";
    let mut child = Command::new(&python)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", python.display()));
    let input = serde_json::to_vec(&cases.iter().map(|(s, a)| json!([s, a])).collect::<Vec<_>>())
        .expect("JSON");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(&input)
        .expect("Python reads its input");
    let output = child.wait_with_output().expect("Python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("a JSON list of booleans"))
}

/// An in-memory catalogue: `UpdateBook` changes the fields the request
/// sets (a proto3 field left unset arrives as its default) and records
/// each request as the server decoded it.
#[derive(Clone, Default)]
struct Catalogue {
    books: Arc<Mutex<HashMap<String, Book>>>,
    updates: Arc<Mutex<Vec<UpdateBookRequest>>>,
}

#[tonic::async_trait]
impl Books for Catalogue {
    async fn update_book(
        &self,
        request: Request<UpdateBookRequest>,
    ) -> Result<Response<Book>, Status> {
        let update = request.into_inner();
        self.updates.lock().expect("lock").push(update.clone());
        let mut books = self.books.lock().expect("lock");
        let Some(book) = books.get_mut(&update.book_id) else {
            return Err(Status::not_found(format!("no book {}", update.book_id)));
        };
        if !update.title.is_empty() {
            book.title = update.title;
        }
        if !update.author.is_empty() {
            book.author = update.author;
        }
        if update.pages != 0 {
            book.pages = update.pages;
        }
        book.tags.extend(update.tags);
        Ok(Response::new(book.clone()))
    }

    async fn get_book(&self, request: Request<GetBookRequest>) -> Result<Response<Book>, Status> {
        let id = request.into_inner().book_id;
        self.books
            .lock()
            .expect("lock")
            .get(&id)
            .cloned()
            .map(Response::new)
            .ok_or_else(|| Status::not_found(format!("no book {id}")))
    }
}

/// (a) Whole-service mode requires only the `field_behavior = REQUIRED`
/// field, in every dialect that lists only required properties; the inline
/// rule, asked for, requires every plain field.
#[test]
fn a_whole_service_requires_only_field_behavior_required_fields() {
    let set = tool_set(&ToolSetOptions::new().service(SERVICE));
    let update = tool(&set, UPDATE);
    assert!(!update.strict);
    for (dialect, schema) in renderings(update) {
        assert_eq!(required(&schema), ["book_id"], "{dialect}: {schema:#}");
        let properties = schema["properties"].as_object().expect("properties");
        assert_eq!(properties.len(), 5, "{dialect}: every field is offered");
    }
    assert_eq!(
        required(&serde_json::from_str(tool(&set, "books_get").parameters()).expect("JSON")),
        ["book_id"]
    );

    let seed = tool_set(
        &ToolSetOptions::new()
            .service(SERVICE)
            .plain_fields(PlainFields::Required),
    );
    for (dialect, schema) in renderings(tool(&seed, UPDATE)) {
        assert_eq!(
            required(&schema),
            ["book_id", "title", "author", "pages", "tags"],
            "{dialect}"
        );
    }
}

/// (b) An update that sends only the field it changes passes the schema
/// and reaches a real server, which sees the others unset and keeps them.
#[tokio::test]
async fn an_update_sends_only_what_it_changes_and_the_server_keeps_the_rest() {
    let catalogue = Catalogue::default();
    catalogue.books.lock().expect("lock").insert(
        "b-1".to_owned(),
        Book {
            book_id: "b-1".to_owned(),
            title: "Old title".to_owned(),
            author: "Ann Author".to_owned(),
            pages: 300,
            tags: vec!["fiction".to_owned()],
        },
    );
    let router =
        tonic::transport::Server::builder().add_service(BooksServer::new(catalogue.clone()));
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router)
        .await
        .expect("bind");
    let set = tool_set(&ToolSetOptions::new().service(SERVICE));
    let update = tool(&set, UPDATE);
    let arguments = json!({"book_id": "b-1", "title": "New title"});

    // The arguments pass every rendering; under the inline rule they pass
    // none (the model would have to invent an author and a page count).
    let seed = tool_set(
        &ToolSetOptions::new()
            .service(SERVICE)
            .plain_fields(PlainFields::Required),
    );
    let cases: Vec<(Value, Value)> = renderings(update)
        .into_iter()
        .chain(renderings(tool(&seed, UPDATE)))
        .map(|(_, schema)| (schema, arguments.clone()))
        .collect();
    if let Some(valid) = valid_by_jsonschema(&cases) {
        let (optional, seed_rule) = valid.split_at(Dialect::ALL.len());
        assert!(optional.iter().all(|v| *v), "{valid:?}");
        assert!(seed_rule.iter().all(|v| !v), "{valid:?}");
    }

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .expect("a URL")
        .connect_lazy();
    let exec = set.executor(TonicTransport::new(channel));
    let answer = ok_json(&exec.execute(UPDATE, &arguments.to_string()).await);
    assert_eq!(answer["title"], "New title");
    assert_eq!(answer["author"], "Ann Author", "{answer}");
    assert_eq!(answer["pages"], 300, "{answer}");

    let updates = catalogue.updates.lock().expect("lock").clone();
    assert_eq!(
        updates,
        [UpdateBookRequest {
            book_id: "b-1".to_owned(),
            title: "New title".to_owned(),
            ..UpdateBookRequest::default()
        }]
    );
    let stored = catalogue.books.lock().expect("lock")["b-1"].clone();
    assert_eq!(
        (stored.author.as_str(), stored.pages, stored.tags.as_slice()),
        ("Ann Author", 300, ["fiction".to_owned()].as_slice())
    );
    server.stop().await;
}

/// Whether a rendering lists every property in `required`, the optional
/// ones nullable: OpenAI strict, and the canonical form of a strict tool.
fn lists_every(dialect: Dialect, strict: bool) -> bool {
    strict && matches!(dialect, Dialect::OpenAi | Dialect::JsonSchema)
}

/// (c) An overlay's `required = true` makes that field required in every
/// dialect, strict and not (in OpenAI strict, where every property is
/// listed, it is the one plain field that is not nullable).
#[test]
fn an_overlay_required_field_is_required_in_every_dialect() {
    let field = "[fields.\"books.v1.UpdateBookRequest.author\"]\nrequired = true\n";
    let strict_method = "[methods.\"books.v1.Books.UpdateBook\"]\nname = \"books_update\"\ndescription = \"Change a book.\"\nstrict = true\n";
    let mut checked = Vec::new();
    for overlay in [field.to_owned(), format!("{field}\n{strict_method}")] {
        let overlay = Overlay::parse("books.tools.toml", &overlay).expect("a valid overlay");
        let set = tool_set(&ToolSetOptions::new().service(SERVICE).overlay(overlay));
        let update = tool(&set, UPDATE);
        for (dialect, schema) in renderings(update) {
            let listed = required(&schema);
            assert!(
                listed.contains(&"author") && listed.contains(&"book_id"),
                "{dialect} strict {}: {schema:#}",
                update.strict
            );
            let author = &schema["properties"]["author"];
            assert!(!nullable(author), "{dialect}: {author}");
            if lists_every(dialect, update.strict) {
                // Every property listed; the optional ones say so by `null`.
                assert_eq!(listed.len(), 5, "{schema:#}");
                assert!(nullable(&schema["properties"]["title"]), "{schema:#}");
            } else {
                assert_eq!(listed, ["book_id", "author"], "{dialect}: {schema:#}");
            }
            checked.push((dialect, update.strict, schema));
        }
    }
    assert_eq!(checked.len(), 2 * Dialect::ALL.len());
    // Without an author the arguments fail every rendering; with one they
    // pass those that do not list every property (the others want the
    // optional ones too, as `null`).
    let without = json!({"book_id": "b-1", "title": "New title"});
    let with = json!({"book_id": "b-1", "author": "Bo Writer"});
    let cases: Vec<(Value, Value)> = checked
        .iter()
        .flat_map(|(_, _, schema)| {
            [
                (schema.clone(), without.clone()),
                (schema.clone(), with.clone()),
            ]
        })
        .collect();
    if let Some(valid) = valid_by_jsonschema(&cases) {
        for ((dialect, strict, _), pair) in checked.iter().zip(valid.chunks(2)) {
            assert!(
                !pair[0],
                "{dialect} strict {strict}: valid without `author`"
            );
            assert_eq!(
                pair[1],
                !lists_every(*dialect, *strict),
                "{dialect} strict {strict}"
            );
        }
    }
}
