// Whole-service mode: every unary method of the service is a tool, named
// `service_method` in snake case, described by its comment.
mod gentools {
    proto_ai_tools::ai_tools!("unannotated.proto", services = ["cases.v1.PingService"]);
}

fn main() {
    let tools = gentools::all_tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "ping_ping");
    assert_eq!(tools[0].description, "Ping the server.");
}
