// Every mistake in the arguments is reported, each under its own token.
mod gentools {
    proto_ai_tools::ai_tools!(
        links_proto,
        inclues = ["proto"],
        includes = [proto, "third_party"]
    );
}

fn main() {}
