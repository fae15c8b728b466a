//! The inbound path: arbitrary bytes as the arguments of every tool of
//! links.proto, through `ProtoExecutor` and the in-process transport.
//! Invariants: no panic, the call finishes, the result is JSON or a bounded
//! error sentence that never holds a raw UUID the conversation knows.
#![no_main]

use proto_ai_tools_fuzz::{KNOWN, executor, links, run};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let tools = links::all_tools();
    let tool = tools[usize::from(selector) % tools.len()].name;
    let args = String::from_utf8_lossy(rest);
    let exec = executor();
    let result = run(exec.execute(tool, &args)).expect("an in-process call finishes");
    if result.is_error {
        assert!(
            result.output.len() <= 4_100,
            "error of {} bytes",
            result.output.len()
        );
        for uuid in KNOWN {
            assert!(
                !result.output.to_ascii_lowercase().contains(uuid)
                    || args.to_ascii_lowercase().contains(uuid),
                "raw UUID in: {}",
                result.output
            );
        }
    } else {
        let _: serde_json::Value = serde_json::from_str(&result.output).expect("a success is JSON");
    }
});
