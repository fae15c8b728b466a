//! Schema truth with a generator this project did not write: every argument
//! set that `hypothesis-jsonschema` draws from any rendering of any corpus
//! tool (OpenAI strict and not, Anthropic strict and not, Gemini
//! `parametersJsonSchema` and `parameters`; each for a client that changes
//! nothing and for a JavaScript host) is accepted by the executor and
//! reaches a grpcio server as the message it means, delivered as the
//! provider and host deliver it: a Gemini draw through a
//! `google.protobuf.Struct`, as Gemini returns arguments (numbers as
//! doubles), a JavaScript host's draw through a real `JSON.parse` and
//! `JSON.stringify` in Node.js (a Gemini one through both). Every enum
//! value, oneof member, map key type and well-known-type field can be used
//! under every rendering, and every 64-bit integer field carries the values
//! at and past ±2^53 and its type's extremes exactly. No rendering for a
//! JavaScript host holds `$ref`. The work is done by `tests/truth/harness.py`
//! (see its docstring) against the `schema_truth` binary.
//!
//! The harness needs a Python with `hypothesis`, `hypothesis-jsonschema`,
//! `jsonschema`, `grpcio` and `protobuf`: `AI_TOOLS_PYTHON`, else
//! `target/py-venv/bin/python` (`python3 -m venv target/py-venv &&
//! target/py-venv/bin/pip install hypothesis hypothesis-jsonschema jsonschema
//! grpcio protobuf`). Without one the test is skipped with the reason
//! printed, unless `AI_TOOLS_REQUIRE_PYTHON` is set (non-empty, not `0`),
//! where it fails. With one, it also needs `node` (Node.js) on the `PATH`,
//! and fails, saying so, without it.
//!
//! Each (tool, rendering) gets 20 draws, which the CI's time allows: set
//! `AI_TOOLS_SCHEMA_TRUTH_DRAWS` to draw more (50 is the harness's own
//! default, about twice the time; before a release, or after a change to
//! the renderer, run at 200 or more).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proto_ai_tools_tests::support::{python_importing, python_required};

/// The harness's time limit (at the default draws it takes about three
/// minutes on two cores); more draws take it further, in proportion.
fn limit(draws: u32) -> Duration {
    Duration::from_secs(900).max(Duration::from_secs(18 * u64::from(draws)))
}

/// Draws per (tool, rendering) when `AI_TOOLS_SCHEMA_TRUTH_DRAWS` says none.
const DEFAULT_DRAWS: u32 = 20;

/// `AI_TOOLS_SCHEMA_TRUTH_DRAWS`, else [`DEFAULT_DRAWS`]; a value that is not
/// a count of at least 20 fails the test, naming it, rather than run less.
fn draws() -> u32 {
    match std::env::var("AI_TOOLS_SCHEMA_TRUTH_DRAWS") {
        Err(_) => DEFAULT_DRAWS,
        Ok(text) if text.trim().is_empty() => DEFAULT_DRAWS,
        Ok(text) => match text.trim().parse::<u32>() {
            Ok(n) if n >= DEFAULT_DRAWS => n,
            _ => panic!(
                "AI_TOOLS_SCHEMA_TRUTH_DRAWS={text:?}: expected a count of draws per (tool, rendering) of at least {DEFAULT_DRAWS}"
            ),
        },
    }
}

const MODULES: &str = "hypothesis, hypothesis_jsonschema, jsonschema, grpc, google.protobuf";

/// Writes where the test harness does not capture it, so a skip or the
/// summary is seen even when the test passes.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

#[test]
fn every_valid_argument_set_of_every_rendering_is_accepted_and_arrives_as_meant() {
    run_harness(&[]);
}

/// The size budget's truth (issue 40): with renderings cut to 2 KiB, which
/// cuts about half the corpus's tools (nested messages, maps and oneofs to
/// their JSON text), every valid argument set of a cut tool is still
/// accepted and arrives as meant. Completeness through the cuts is reported,
/// not required.
#[test]
fn every_valid_argument_set_of_a_rendering_cut_to_a_size_budget_is_accepted_and_arrives_as_meant() {
    run_harness(&["--max-tool-bytes", "2048"]);
}

/// Runs `tests/truth/harness.py` with `args` against the `schema_truth`
/// binary; fails with its summary unless it passes.
fn run_harness(args: &[&str]) {
    let python = match python_importing(MODULES) {
        Ok(python) => python,
        Err(reason) if python_required() => panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}"),
        Err(reason) => {
            say(&format!("SKIPPED: {reason}"));
            return;
        }
    };
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("truth/harness.py");
    let draws = draws();
    let limit = limit(draws);
    let mut child = Command::new(&python)
        .arg(&harness)
        .arg(env!("CARGO_BIN_EXE_schema_truth"))
        .args(["--draws", &draws.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", python.display()));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the harness") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the harness ran past {limit:?}; its output so far:\n{}\n{}",
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    say(&stdout);
    assert!(
        status.success(),
        "the schema-truth harness failed ({status}); summary above{}",
        if stderr.trim().is_empty() {
            String::new()
        } else {
            format!("; its stderr:\n{stderr}")
        }
    );
}
