//! The example MCP server (`tests/examples/mcp_server.rs`) as a binary of
//! the tests crate, so that `tests/mcp.rs` finds it through
//! `CARGO_BIN_EXE_mcp_server`.

include!("../../examples/mcp_server.rs");
