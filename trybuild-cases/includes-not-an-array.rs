// A mistake in the macro's arguments: the generated names that do not come
// from a tool still exist, so the macro's error is the only one.
mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto", includes = "proto");
}

fn main() {
    let exec = gentools::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    println!(
        "{} of {} tools",
        exec.tools().len(),
        gentools::ALL_TOOLS.len()
    );
    println!("{}", gentools::all_tools().len());
    let link = gentools::descriptor_pool().get_message_by_name("links.v1.Link");
    println!("{link:?}");
}
