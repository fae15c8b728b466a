fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The proto compiled with the annotation protos served, then tonic's code.
    let descriptors =
        proto_ai_tools::build::compile_protos(&["proto/links/v1/links.proto"], &["proto"])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
