//! The fuzz seeds and kept crash inputs (`fuzz/seeds/TARGET/`, issue 7)
//! replayed as regression tests in every `cargo test`, through the same
//! invariants as the fuzz targets (`scripts/fuzz-smoke.sh` runs those).
//! RELIABILITY.md describes the targets.

use proto_ai_tools::{AliasManager, executor::ProtoExecutor};
use proto_ai_tools_tests::support::links_recording_transport;
use proto_ai_tools_tests::{LINKS_POOL, new_uuid, tools};
use serde_json::Value;

/// Replays the fuzz seeds and kept crash inputs (`fuzz/seeds/TARGET/`)
/// through the same invariants as the fuzz targets, in every `cargo test`.
#[tokio::test]
async fn fuzz_seeds_and_crash_inputs_replay_cleanly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
    let read = |target: &str| -> Vec<Vec<u8>> {
        let mut files: Vec<_> = std::fs::read_dir(root.join(target))
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
    };
    let (transport, _) = links_recording_transport();
    let inbound = read("inbound");
    assert!(!inbound.is_empty(), "no seeds under {}", root.display());
    for data in &inbound {
        let Some((&selector, rest)) = data.split_first() else {
            continue;
        };
        let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport.clone());
        exec.alias_manager()
            .register("link", &new_uuid())
            .await
            .expect("uuid");
        let tool = tools::ALL[usize::from(selector) % tools::ALL.len()].name;
        let r = exec.execute(tool, &String::from_utf8_lossy(rest)).await;
        assert!(r.is_error || serde_json::from_str::<Value>(&r.output).is_ok());
        assert!(r.output.len() <= 4_100);
    }
    for data in read("aliases") {
        let text = String::from_utf8_lossy(&data);
        let aliases = AliasManager::new();
        aliases
            .register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851")
            .await
            .expect("uuid");
        let _ = aliases.register_new_uuids("other", &text).await;
        let _ = aliases.aliasify_text(&text);
        if let Ok(x) = serde_json::from_str::<Value>(&text) {
            let mut y = x.clone();
            aliases.aliasify_json(&mut y);
            aliases.resolve_json(&mut y);
            let mut yy = y.clone();
            aliases.aliasify_json(&mut yy);
            aliases.resolve_json(&mut yy);
            assert_eq!(yy, y, "aliasify/resolve is not stable on {text}");
        }
    }
}
