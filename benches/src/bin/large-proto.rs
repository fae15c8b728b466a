//! Writes the benchmarks' generated large proto (200 RPCs, 1,000 messages)
//! under `DIR/proto/large/v1/large.proto`, for `scripts/build-delta.sh`.

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let path = proto_ai_tools_benches::write_large_proto(
        &dir,
        proto_ai_tools_benches::LargeProtoShape::ISSUE,
    )?;
    println!("{}", dir.join(path).display());
    Ok(())
}
