// Two tool names that become the same Rust name. The code below uses every
// generated name that does not come from a tool: after the error they still
// exist, so the macro's error is the only one.
mod gentools {
    proto_ai_tools::ai_tools!("tool-names-collide-in-rust.proto");
}

use std::time::Duration;

use proto_ai_tools::{Sessions, Toolkit, transport::InProcessTransport};

fn main() {
    for tool in gentools::all_tools() {
        println!("{}: {}", tool.name, tool.description);
    }
    println!("{} tools", gentools::ALL_TOOLS.len());
    let request = gentools::descriptor_pool().get_message_by_name("cases.v1.PingRequest");
    println!("{request:?}");

    let exec = gentools::Executor::new(InProcessTransport::new());
    println!("{}", exec.can_execute("send_ping"));

    let sessions = Sessions::new(InProcessTransport::new(), Duration::from_secs(60));
    let exec = sessions.for_conversation::<gentools::Executor<_>>("conversation-1");
    let _toolkit = Toolkit::builder().generated(exec).build();
}
