//! `aliasify`/`resolve` on arbitrary JSON: `resolve(aliasify(x)) == x` for
//! every JSON value without alias-shaped strings, with known UUIDs in any
//! letter case normalised; text aliasing and field resolution never panic;
//! a snapshot round-trips.
#![no_main]

use proto_ai_tools::AliasManager;
use proto_ai_tools_fuzz::{KNOWN, run};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// Known UUIDs (registered up front or found in the text) in lower case.
fn lower_known(v: &mut Value, aliases: &AliasManager) {
    match v {
        Value::String(s) => {
            if aliases.alias_for(s).is_some() {
                *s = s.to_ascii_lowercase();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| lower_known(i, aliases)),
        Value::Object(map) => map.values_mut().for_each(|i| lower_known(i, aliases)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let aliases = AliasManager::new();
    for (i, uuid) in KNOWN.iter().enumerate() {
        let prefix = ["link", "step", "theme"][i % 3];
        let _ = run(aliases.register(prefix, uuid));
    }
    let _ = run(aliases.register("link", KNOWN[1])); // one UUID under two prefixes
    let _ = aliases.aliasify_text(&text);
    for prefix in ["link", "step", "x"] {
        let _ = aliases.resolve_for_field(prefix, &text);
    }
    let _ = run(aliases.register_new_uuids("other", &text));

    let Ok(x) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    let mut all = Vec::new();
    strings(&x, &mut all);
    let mut y = x.clone();
    aliases.aliasify_json(&mut y);
    aliases.resolve_json(&mut y);
    if !all.iter().any(|s| aliases.resolve(s).is_some()) {
        let mut expected = x;
        lower_known(&mut expected, &aliases);
        assert_eq!(y, expected);
    }
    let restored = AliasManager::from_snapshot(aliases.snapshot()).expect("own snapshot");
    assert_eq!(restored.snapshot(), aliases.snapshot());
});
