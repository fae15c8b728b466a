// Whole-service mode names a service the file does not declare.
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", services = ["cases.v1.PingServic"]);
}

fn main() {}
