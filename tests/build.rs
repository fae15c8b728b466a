//! Compiles the example and test protos: an encoded descriptor pool (custom
//! options kept) for the executor, a real tonic client/server for the links
//! service, a tonic client/server for the feed service (a server stream),
//! and a tonic server for the unannotated books service (`tests/proto`).
//! The annotated protos compile with `proto_ai_tools::build`, as the README's
//! "Serve it with tonic" shows.

use std::env;
use std::fs;
use std::path::PathBuf;

// `proto_ai_tools::build` is this module, re-exported; the build dependency
// is the schema crate's (Cargo.toml says why).
use proto_ai_tools_schema as proto_ai_tools;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed=../proto");
    println!("cargo:rerun-if-changed=../schema/proto");
    println!("cargo:rerun-if-changed=proto");

    // As a user's build script compiles an annotated proto (the annotation
    // protos served when no include directory has them).
    let links = proto_ai_tools::build::compiler(&["links/v1/links.proto"], &["../proto"])?;
    // `encode_file_descriptor_set` keeps the custom options; `file_descriptor_set` drops them.
    fs::write(
        out.join("links_descriptor.bin"),
        links.encode_file_descriptor_set(),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(links.file_descriptor_set())?;

    let feed = proto_ai_tools::build::compiler(&["feed/v1/feed.proto"], &["../proto"])?;
    fs::write(
        out.join("feed_descriptor.bin"),
        feed.encode_file_descriptor_set(),
    )?;
    // The client is the executor benchmark's baseline for a stream.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(feed.file_descriptor_set())?;

    // A real server whose proto knows nothing of ai-tools (`plain_fields.rs`
    // builds its tools at run time from the same file).
    let mut books = protox::Compiler::new(["proto", "../proto"])?;
    books
        .include_imports(true)
        .open_file("books/v1/books.proto")?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .compile_fds(books.file_descriptor_set())?;

    // A long-running method (`lro/v1/reports.proto`) and the
    // `google.longrunning.Operations` service that follows its operations,
    // served by `tests/lro.rs`; in a directory of their own, so that the
    // googleapis packages they bring leave the others' generated code alone.
    let lro = proto_ai_tools::build::compiler(
        &["lro/v1/reports.proto"],
        &["../proto", "../proto/third_party/googleapis"],
    )?;
    fs::write(
        out.join("lro_descriptor.bin"),
        lro.encode_file_descriptor_set(),
    )?;
    let lro_out = out.join("lro");
    fs::create_dir_all(&lro_out)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .out_dir(&lro_out)
        .compile_fds(lro.file_descriptor_set())?;

    Ok(())
}
