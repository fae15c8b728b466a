// Every mistake in the proto is reported, each as an error of its own.
mod gentools {
    proto_ai_tools::ai_tools!("several-proto-mistakes.proto");
}

fn main() {}
