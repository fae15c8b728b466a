//! What the tests that run `ai-tools mcp --http` share: the binary started
//! on a free loopback port, and killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace root (the links proto lives under it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The gateway, killed when dropped.
pub struct Gateway {
    pub child: Child,
    /// `127.0.0.1:PORT`, where it listens.
    pub addr: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ai-tools mcp --http 127.0.0.1:0` over `links.proto`, calling `grpc`,
/// with `flags`; returns once it says where it listens.
pub fn start_gateway(grpc: &str, flags: &[&str]) -> Gateway {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", grpc, "--proto"])
        .arg(workspace().join("proto/links/v1/links.proto"))
        .arg("-I")
        .arg(workspace().join("proto"))
        .args(["--http", "127.0.0.1:0"])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut addr = None;
    for _ in 0..20 {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("stderr") == 0 {
            break;
        }
        if let Some(rest) = line.trim().split("at http://").nth(1) {
            addr = rest.strip_suffix("/mcp").map(str::to_owned);
            break;
        }
    }
    let addr = addr.expect("the gateway says where it listens");
    // Keep draining stderr so the gateway never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Gateway { child, addr }
}
