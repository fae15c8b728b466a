use super::sentences::{MAX_STATUS_CHARS, clean_message, status_hint};
use crate::result::ToolResult;
use crate::transport::Code;

#[test]
fn status_messages_lose_stack_traces_and_paths() {
    let m = "boom at /home/dev/svc/src/handler.rs:42:7 (see src/db/pool.go:10)\n   0: std::backtrace\n   1: main";
    assert_eq!(clean_message(m), "boom at <path> (see <path>)");
    assert_eq!(
        clean_message("no handler for /links.v1.LinksService/ListLinks"),
        "no handler for /links.v1.LinksService/ListLinks"
    );
    assert_eq!(
        clean_message(r"open C:\\srv\\data.db failed"),
        "open <path> failed"
    );
    assert_eq!(
        clean_message("\n\n  second line first  \n"),
        "second line first"
    );
    let long = "x".repeat(1000);
    assert_eq!(clean_message(&long).chars().count(), MAX_STATUS_CHARS + 1);
}

#[test]
fn every_code_says_whether_a_retry_may_help() {
    for n in 0..17 {
        let hint = status_hint(Code::from_i32(n));
        assert!(
            hint.contains("retry") || hint.contains("try again"),
            "{n}: {hint}"
        );
    }
}

#[test]
fn echoes_and_errors_are_bounded() {
    let r = ToolResult::error("ü".repeat(5000));
    assert!(r.output.len() <= ToolResult::MAX_ERROR_BYTES + 4);
}
