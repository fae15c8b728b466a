// What the schema states, it states formally in every rendering: zero enum
// values with a meaning, one oneof member at most, 32-bit ranges, base64.
mod gentools {
    proto_ai_tools::ai_tools!("schema-truth.proto");
}

fn main() {
    let tool = gentools::all_tools()[0];
    let schema: serde_json::Value =
        serde_json::from_str(tool.renderings().openai).expect("rendering is JSON");
    let properties = &schema["properties"];

    let order = properties["order"]["enum"].as_array().expect("an enum");
    assert!(order.iter().any(|v| v == "NONE"), "{order:?}");
    let color = properties["color"]["enum"].as_array().expect("an enum");
    assert!(!color.iter().any(|v| v == "COLOR_UNSPECIFIED"), "{color:?}");

    // The oneof is one property; each branch of its value names one member.
    assert!(properties.get("key").is_none());
    let branches = properties["target"]["anyOf"].as_array().expect("anyOf");
    let members: Vec<_> = branches
        .iter()
        .filter_map(|b| b["properties"].as_object())
        .map(|p| p.keys().cloned().collect::<Vec<_>>())
        .collect();
    assert_eq!(members, [vec!["key".to_owned()], vec!["prefix".to_owned()]]);

    assert_eq!(properties["limit"]["minimum"], i32::MIN);
    assert_eq!(properties["limit"]["maximum"], i32::MAX);
    assert!(properties["cursor"]["pattern"].is_string());
}
