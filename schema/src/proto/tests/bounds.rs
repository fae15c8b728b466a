//! The bounds on a request: fields spelled out, and nesting depth.

use super::*;

/// The fields an IR schema spells out, as [`spelled_out_fields`] counts
/// them: every property, a oneof's members rather than its own property.
fn fields_in(schema: &Schema) -> usize {
    match &schema.kind {
        Kind::Object(object) => {
            let props: usize = object
                .properties
                .iter()
                .map(|p| match &p.schema.kind {
                    Kind::OneOf(one_of) => one_of
                        .members
                        .iter()
                        .map(|m| 1 + fields_in(&m.schema))
                        .sum(),
                    _ => 1 + fields_in(&p.schema),
                })
                .sum();
            props + object.defs.values().map(fields_in).sum::<usize>()
        }
        Kind::Array(item) => fields_in(item),
        Kind::Map(map) => fields_in(&map.value),
        _ => 0,
    }
}

/// `Req` spells out exactly 100 * (1 + 27 * (1 + 36)) = 100,000 fields:
/// 100 uses of `Mid`, each using `Leaf` (36 fields) 27 times.
fn at_the_bound(extra: &str) -> String {
    let numbered = |n: usize, kind: &str| {
        (1..=n)
            .map(|i| format!("{kind} f{i} = {i};"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    with_tool(
        &format!(
            "message Leaf {{ {} }}\nmessage Mid {{ {} }}\nmessage Req {{ {} {extra} }}",
            numbered(36, "string"),
            numbered(27, "Leaf"),
            numbered(100, "Mid"),
        ),
        false,
    )
}

#[test]
fn a_request_at_the_bound_is_built_and_counted_as_built() {
    let tool = tools(&at_the_bound("")).remove(0);
    assert_eq!(fields_in(&tool.parameters), MAX_SPELLED_OUT_FIELDS);
}

#[test]
fn a_request_past_the_bound_is_refused_at_its_rpc() {
    let diags = diagnostics(&at_the_bound("string one_more = 101;"));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].starts_with("test.proto:")
            && diags[0].contains("rpc `M`: its request `t.Req` spells out 100001 fields")
            && diags[0].contains("`t.Leaf` is spelled out 2700 times"),
        "{}",
        diags[0]
    );
}

#[test]
fn messages_that_double_at_each_level_are_refused_not_built() {
    // 2^30 copies of `L30` if built (and within the nesting bound: `Req`
    // and 31 levels): the count ends, the build would not.
    let levels: String = (0..30)
        .map(|k| format!("message L{k} {{ L{n} a = 1; L{n} b = 2; }}\n", n = k + 1))
        .collect();
    let diags = diagnostics(&with_tool(
        &format!("{levels}message L30 {{ string s = 1; }}\nmessage Req {{ L0 root = 1; }}"),
        false,
    ));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("`t.L30` is spelled out 1073741824 times"),
        "{}",
        diags[0]
    );
}

#[test]
fn recursion_and_repetition_are_counted_as_built() {
    // `Node` is a definition (counted once); `Pair` is spelled out at
    // each use, three in `Req` and one in the definition; a map's values
    // and a oneof's members count.
    let body = with_tool(
        "message Pair { string k = 1; string v = 2; }\n\
             message Node { repeated Node children = 1; Pair label = 2; }\n\
             message Req { Node tree = 1; Pair first = 2; map<string, Pair> more = 3;\n\
               oneof pick { string a = 4; Pair b = 5; } }",
        false,
    );
    let tool = tools(&body).remove(0);
    let pool = compile(&format!("{HEADER}{body}"));
    let ann = Annotations::new(&pool);
    let req = pool.get_message_by_name("t.Req").unwrap();
    let recursive = recursive_messages(&ann, &req);
    let counted = spelled_out_fields(&ann, &req, &recursive);
    assert_eq!(counted, fields_in(&tool.parameters));
    // Req: 5 fields, 3 uses of Pair (2 each); Node: 2 fields and 1 Pair.
    assert_eq!(counted, 5 + 3 * 2 + 2 + 2);
    assert_eq!(
        most_used_message(&ann, &req, &recursive),
        ("t.Pair".to_owned(), 4)
    );
}

/// Runs `f` on a thread with a 2 MiB stack, the default of a spawned
/// thread and of a tokio worker, and returns what it returns.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no panic")
}

/// `levels` messages `L0` … nested each in the last, in turn as a map's
/// value, a oneof's member and an optional repeated field (the shapes
/// that render deepest), under `Req`.
fn chain_of(levels: usize) -> String {
    let mut out = String::from("message Req { L0 top = 1; }\n");
    for i in 0..levels - 1 {
        let next = i + 1;
        let field = match i % 3 {
            0 => format!("map<string, L{next}> next = 1;"),
            1 => format!("oneof pick {{ L{next} next = 1; string none = 2; }}"),
            _ => format!("repeated L{next} next = 1;"),
        };
        out.push_str(&format!(
            "message L{i} {{ {field} optional string s = 3; }}\n"
        ));
    }
    out.push_str(&format!("message L{} {{ string s = 1; }}", levels - 1));
    out
}

#[test]
fn a_chain_at_the_nesting_bound_is_rendered_and_checked_on_a_small_stack() {
    // `Req` and `MAX_NESTING_DEPTH - 1` more: exactly at the bound.
    let body = with_tool(&chain_of(MAX_NESTING_DEPTH - 1), false);
    let (rendered, violations) = on_a_small_stack(move || tools(&body).remove(0).render_checked());
    assert!(violations.is_empty(), "{violations:#?}");
    // Every level is spelled out where the dialect does not cut by depth.
    for text in [&rendered.canonical, &rendered.anthropic, &rendered.gemini] {
        assert_eq!(
            text.matches("\"next\":").count(),
            MAX_NESTING_DEPTH - 2,
            "{text}"
        );
    }
}

#[test]
fn a_chain_one_past_the_nesting_bound_is_refused_at_its_rpc_naming_it() {
    let diags = diagnostics(&with_tool(&chain_of(MAX_NESTING_DEPTH), false));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains(&format!(
            "rpc `M`: its request `t.Req` nests messages more than {MAX_NESTING_DEPTH} deep"
        )) && diags[0]
            .contains("`t.Req` → `t.L0` → `t.L1` → … 27 more … → `t.L29` → `t.L30` → `t.L31`"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_chain_thousands_deep_is_refused_without_recursing_down_it() {
    // A proto (or a server's reflection) may chain messages deeper than
    // a stack: the walks before the bound are iterative, the ones after
    // it stop at it.
    let levels: String = (0..5_000)
        .map(|k| format!("message L{k} {{ L{n} next = 1; }}\n", n = k + 1))
        .collect();
    let body = with_tool(
        &format!("{levels}message L5000 {{ string s = 1; }}\nmessage Req {{ L0 top = 1; }}"),
        false,
    );
    let diags = on_a_small_stack(move || diagnostics(&body));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("nests messages more than"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_long_cycle_is_recursive_and_what_hangs_off_it_is_not() {
    // C0 → C1 → … → C4999 → C0, and C0 → Tail: Tarjan's components,
    // found without recursing down the cycle.
    let cycle: String = (0..5_000)
        .map(|k| {
            format!(
                "message C{k} {{ C{n} next = 1; Tail tail = 2; }}\n",
                n = (k + 1) % 5_000
            )
        })
        .collect();
    let body = with_tool(
        &format!("{cycle}message Tail {{ string s = 1; }}\nmessage Req {{ C0 top = 1; }}"),
        false,
    );
    let recursive = on_a_small_stack(move || {
        let pool = compile(&format!("{HEADER}{body}"));
        let req = pool.get_message_by_name("t.Req").expect("Req");
        recursive_messages(&Annotations::new(&pool), &req)
    });
    assert_eq!(recursive.len(), 5_000);
    assert!(recursive.contains("t.C0") && recursive.contains("t.C4999"));
    assert!(!recursive.contains("t.Tail") && !recursive.contains("t.Req"));
}

#[test]
fn recursive_types_inlined_inside_one_another_stop_at_the_nesting_bound() {
    // Each `T` is recursive, so each chain of plain messages is one long;
    // Gemini `parameters` inlines a recursive type where it is first
    // used, and would nest 200 of them without the bound.
    let types: String = (0..200)
        .map(|k| {
            format!(
                "message T{k} {{ T{k} again = 1; T{n} next = 2; }}\n",
                n = k + 1
            )
        })
        .collect();
    let body = with_tool(
        &format!("{types}message T200 {{ string s = 1; }}\nmessage Req {{ T0 top = 1; }}"),
        false,
    );
    let (gemini, violations) = on_a_small_stack(move || {
        let tool = tools(&body).remove(0);
        (tool.render(Dialect::Gemini), tool.violations())
    });
    assert!(violations.is_empty(), "{violations:#?}");
    fn objects_deep(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => {
                let below = m.values().map(objects_deep).max().unwrap_or(0);
                below + usize::from(m.get("type") == Some(&"object".into()))
            }
            serde_json::Value::Array(items) => items.iter().map(objects_deep).max().unwrap_or(0),
            _ => 0,
        }
    }
    let depth = objects_deep(&gemini);
    assert!(
        (MAX_NESTING_DEPTH..=MAX_NESTING_DEPTH + 1).contains(&depth),
        "{depth} levels of objects"
    );
}
