// Tools named like the generated module's own items: `execute_with` (a
// method of `Executor`) and `all_tools` (whose static would be `ALL_TOOLS`).
// Their method and static take a `_tool`/`_TOOL` suffix; the module's own
// items keep their names and meanings.
mod gentools {
    proto_ai_tools::ai_tools!("executor-names.proto");
}

use proto_ai_tools::{CallOptions, Transport};

/// Type-checks the calls: the executor's own `execute_with` and the tools'
/// methods.
#[allow(dead_code)]
async fn calls<T: Transport>(executor: &gentools::Executor<T>) {
    let options = CallOptions::default();
    let _ = executor.execute_with("all_tools", "{}", &options).await;
    let _ = executor.execute_with_tool(serde_json::json!({})).await;
    let _ = executor.all_tools(serde_json::json!({})).await;
}

fn main() {
    assert_eq!(gentools::EXECUTE_WITH.name, "execute_with");
    assert_eq!(gentools::ALL_TOOLS_TOOL.name, "all_tools");
    let names: Vec<_> = gentools::ALL_TOOLS.iter().map(|tool| tool.name).collect();
    assert_eq!(names, ["execute_with", "all_tools"]);
    assert_eq!(gentools::all_tools().len(), 2);
}
