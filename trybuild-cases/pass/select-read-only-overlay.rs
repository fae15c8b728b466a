// An overlay's `read_only = true` on a method of a service exposed whole:
// the method keeps its derived name and description, becomes read-only
// and idempotent, and `read_only = true` keeps it.
mod gentools {
    proto_ai_tools::ai_tools!(
        "unannotated.proto",
        services = ["cases.v1.PingService"],
        overlay = "select-read-only-overlay.toml",
        read_only = true
    );
}

fn main() {
    let tools = gentools::all_tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "ping_ping");
    assert_eq!(tools[0].description, "Ping the server.");
    assert!(tools[0].hints.read_only && tools[0].hints.idempotent);
    // The embedded descriptors say it too: a tool set built from them agrees.
    let bytes = gentools::descriptor_pool().encode_to_vec();
    let options = proto_ai_tools::tool_set::ToolSetOptions::new().read_only(true);
    let set = proto_ai_tools::tool_set::ToolSet::from_descriptor_set(&bytes, &options).unwrap();
    assert_eq!(set.tools()[0], tools[0]);
}
