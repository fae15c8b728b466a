// A pattern of `include` or `exclude` that matches no tool is an error at
// its string literal, naming the tools (or, for a pattern with a `/`, the
// methods) there are: a typo never exposes nothing, nor everything.
mod links {
    proto_ai_tools::ai_tools!(
        "proto/links/v1/links.proto",
        include = ["links_*", "link_*"],
        exclude = ["links.v1.LinkService/*"]
    );
}

fn main() {}
