// A pattern that is not a glob is an error at its string literal.
mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto", exclude = ["links_[update"]);
}

fn main() {}
