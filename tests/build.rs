//! Compiles the example and test protos: an encoded descriptor pool (custom
//! options kept) for the executor, a real tonic client/server for the links
//! service, a tonic client/server for the feed service (a server stream),
//! and a tonic server for the unannotated books service (`tests/proto`).

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed=../proto");
    println!("cargo:rerun-if-changed=../schema/proto");
    println!("cargo:rerun-if-changed=proto");

    let mut links = protox::Compiler::new(["../proto"])?;
    links
        .include_imports(true)
        .include_source_info(true)
        .open_file("links/v1/links.proto")?;
    // `encode_file_descriptor_set` keeps the custom options; `file_descriptor_set` drops them.
    fs::write(
        out.join("links_descriptor.bin"),
        links.encode_file_descriptor_set(),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(links.file_descriptor_set())?;

    let mut feed = protox::Compiler::new(["../proto"])?;
    feed.include_imports(true)
        .include_source_info(true)
        .open_file("feed/v1/feed.proto")?;
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

    Ok(())
}
