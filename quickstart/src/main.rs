mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

fn main() {
    for tool in gentools::all_tools() {
        println!(
            "{} {} {} {}",
            tool.name,
            tool.strict,
            tool.description,
            tool.parameters()
        );
    }
}
