// A proto under an include directory: the diagnostic names it by the path
// the invocation gives (`protos/nested/v1/nested.proto:…`), which opens from
// the crate, not by its name under the include directory (`nested/v1/…`).
mod gentools {
    proto_ai_tools::ai_tools!("protos/nested/v1/nested.proto");
}

fn main() {}
