//! Property tests (issue 7): aliasing round-trips, snapshots round-trip
//! exactly, arbitrary JSON through the executor never panics and yields a
//! request or an error, and arguments generated from every rendered schema
//! of links.proto decode. Case counts are kept small enough for the suite to
//! stay fast in `cargo test --workspace`; raise them with `PROPTEST_CASES`.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proto_ai_tools::{
    AliasManager, alias::AliasSnapshot, executor::ProtoExecutor, transport::InProcessTransport,
};
use proto_ai_tools_tests::arguments::Generator;
use proto_ai_tools_tests::support::{Recording, ready, recording_transport};
use serde_json::{Value, json};

use proto_ai_tools_tests::tools::links as gentools;

/// `cases` cases; a failing case is kept in `properties.proptest-regressions`
/// next to this file and replayed first on every later run.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::with_cases(cases)
    }
}

const PREFIXES: [&str; 4] = ["link", "step", "theme", "user"];

fn uuid_of(n: u32) -> String {
    format!("{n:08x}-1c39-4d8e-9c54-0d1f51a3b0b7")
}

/// A UUID from a small pool (so registered and unregistered ones both
/// appear), in a random letter case.
fn any_uuid() -> impl Strategy<Value = String> {
    (0u32..24, any::<bool>()).prop_map(|(n, upper)| {
        let u = uuid_of(n * 0x0101_0101 + 0xa);
        if upper { u.to_uppercase() } else { u }
    })
}

fn registrations() -> impl Strategy<Value = Vec<(usize, String)>> {
    prop::collection::vec((0..PREFIXES.len(), any_uuid()), 0..40)
}

fn json_value(leaf: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        ".{0,24}".prop_map(Value::String),
        any_uuid().prop_map(Value::String),
    ]
    .boxed()
}

fn manager(registered: &[(usize, String)]) -> AliasManager {
    let m = AliasManager::new();
    for (p, u) in registered {
        ready(m.register(PREFIXES[*p], u)).expect("valid");
    }
    m
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// `x` with every registered UUID in lower case, as the manager stores them.
fn canonical(x: &Value, m: &AliasManager) -> Value {
    match x {
        Value::String(s) if m.alias_for(s).is_some() => Value::String(s.to_ascii_lowercase()),
        Value::Array(items) => Value::Array(items.iter().map(|i| canonical(i, m)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), canonical(v, m)))
                .collect(),
        ),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// resolve(aliasify(x)) == x for any JSON x and registered set, as long as
    /// x holds no string that is itself an alias (those are what resolve
    /// replaces), and up to the letter case of known UUIDs.
    #[test]
    fn resolve_of_aliasify_is_the_identity(
        registered in registrations(),
        x in json_value(leaf()),
    ) {
        let m = manager(&registered);
        let mut all = Vec::new();
        strings(&x, &mut all);
        prop_assume!(all.iter().all(|s| m.resolve(s).is_none()));
        let mut y = x.clone();
        m.aliasify_json(&mut y);
        // every known UUID became an alias, nothing else changed shape
        let mut after = Vec::new();
        strings(&y, &mut after);
        prop_assert!(after.iter().all(|s| m.alias_for(s).is_none()));
        m.resolve_json(&mut y);
        prop_assert_eq!(y, canonical(&x, &m));
    }

    /// A snapshot survives JSON and a restore exactly, counters included:
    /// the next alias of every prefix continues the count.
    #[test]
    fn snapshots_round_trip_exactly(registered in registrations(), fresh in 100u32..200) {
        let m = manager(&registered);
        let snapshot = m.snapshot();
        let text = serde_json::to_string(&snapshot).expect("serialise");
        let back: AliasSnapshot = serde_json::from_str(&text).expect("deserialise");
        prop_assert_eq!(&back, &snapshot);
        let r = AliasManager::from_snapshot(back).expect("restore");
        prop_assert_eq!(r.snapshot(), snapshot.clone());
        for e in &snapshot.entries {
            prop_assert_eq!(r.resolve(&e.alias), Some(e.uuid.clone()));
        }
        for prefix in PREFIXES {
            let next = snapshot.counters.get(prefix).copied().unwrap_or(0) + 1;
            let alias = ready(r.register(prefix, &uuid_of(fresh * 7919 + next as u32))).expect("fits");
            prop_assert_eq!(alias, format!("{prefix}-{next}"));
        }
    }
}

/// An in-process service for every method of links.proto that answers with
/// an empty response of the right type and records the requests it got.
fn counting_executor() -> (ProtoExecutor<InProcessTransport>, Recording) {
    let pool = gentools::descriptor_pool();
    let (transport, calls) = recording_transport(pool);
    let exec = ProtoExecutor::new(gentools::all_tools(), pool, transport);
    for (i, n) in (0..4).enumerate() {
        let prefix = if i % 2 == 0 { "link" } else { "step" };
        ready(exec.alias_manager().register(prefix, &uuid_of(n))).expect("valid");
    }
    (exec, calls)
}

/// JSON arguments shaped like the tools' own (their field names, in both
/// spellings, and a few others), with any values.
fn arguments() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("destination"),
        Just("name"),
        Just("shortlink"),
        Just("tags"),
        Just("metadata"),
        Just("link_id"),
        Just("linkId"),
        Just("step_id"),
        Just("page_size"),
        Just("pageSize"),
        Just("action"),
        Just("colour"),
    ];
    let value = prop_oneof![
        4 => json_value(leaf()).boxed(),
        1 => prop_oneof![
            Just(json!("link-1")),
            Just(json!("link-2")),
            Just(json!("step-2")),
            Just(json!("step-0")),
            Just(json!("ACTION_EMAIL")),
            Just(json!(3)),
            Just(json!(["a", "b"])),
        ]
        .boxed(),
    ];
    prop_oneof![
        6 => prop::collection::btree_map(key, value, 0..5).prop_map(|m| {
            Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        }),
        1 => json_value(leaf()).boxed(),
    ]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

proptest! {
    #![proptest_config(config(256))]

    /// Arbitrary JSON never panics and always yields either a request that
    /// reached the service (and a JSON result) or an error result, never both.
    #[test]
    fn arbitrary_json_yields_a_request_or_an_error(
        tool in 0..5usize,
        args in arguments(),
        as_text in any::<bool>(),
    ) {
        let (exec, calls) = counting_executor();
        let name = gentools::all_tools()[tool].name;
        let rt = runtime();
        let result = if as_text {
            rt.block_on(exec.execute(name, &args.to_string()))
        } else {
            rt.block_on(exec.execute(name, args))
        };
        let called = calls.len();
        prop_assert!(called <= 1);
        prop_assert_eq!(result.is_error, called == 0, "{}", result.output);
        if result.is_error {
            prop_assert!(!result.output.is_empty() && result.output.len() <= 4_100);
        } else {
            prop_assert!(serde_json::from_str::<Value>(&result.output).is_ok());
        }
    }

    /// Arbitrary text as arguments: never a panic, an error unless it is JSON.
    #[test]
    fn arbitrary_text_never_panics(tool in 0..5usize, text in "\\PC{0,64}") {
        let (exec, calls) = counting_executor();
        let name = gentools::all_tools()[tool].name;
        let result = runtime().block_on(exec.execute(name, &text));
        prop_assert_eq!(result.is_error, calls.is_empty());
    }
}

// ---------------------------------------------------------------------------
// Arguments generated from the rendered schemas (proto_ai_tools_tests::arguments),
// sent as text
// ---------------------------------------------------------------------------

#[test]
fn arguments_generated_from_every_rendered_schema_decode() {
    use proptest::test_runner::{Config, TestRunner};
    let (exec, calls) = counting_executor();
    let rt = runtime();
    let mut cases = 0usize;
    for tool in gentools::all_tools() {
        // alias-carrying properties, in both spellings, take the conversation's aliases
        let mut aliases = BTreeMap::new();
        for fp in tool.request_aliases {
            let issued = exec.alias_manager().aliases_of(fp.prefix);
            let json_names = json_names(fp.field);
            assert!(
                !json_names.is_empty(),
                "no field `{}` in the pool",
                fp.field
            );
            for json_name in json_names {
                aliases.insert(json_name, issued.clone());
            }
            aliases.insert(fp.field.to_owned(), issued);
        }
        let renderings = [
            ("json_schema", tool.parameters()),
            ("openai", tool.renderings().openai),
            ("anthropic", tool.renderings().anthropic),
            ("gemini", tool.renderings().gemini),
        ];
        for (dialect, text) in renderings {
            let schema: Value = serde_json::from_str(text).expect("rendering is JSON");
            let strategy = Generator {
                root: &schema,
                aliases: &aliases,
            }
            .strategy();
            let mut runner = TestRunner::new(Config::with_cases(64));
            runner
                .run(&strategy, |args| {
                    let before = calls.len();
                    let result = rt.block_on(exec.execute(tool.name, &args.to_string()));
                    prop_assert!(
                        !result.is_error,
                        "{} ({dialect}) refused {args}: {}",
                        tool.name,
                        result.output
                    );
                    prop_assert_eq!(calls.len(), before + 1);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{e}"));
            cases += 64;
        }
    }
    println!("figure: {cases} generated argument sets decoded (5 tools x 4 renderings x 64)");
}

/// The protojson names of every field called `name` in the links pool, as
/// protobuf computes them (`json_name`).
fn json_names(name: &str) -> Vec<String> {
    gentools::descriptor_pool()
        .all_messages()
        .flat_map(|message| message.fields().collect::<Vec<_>>())
        .filter(|field| field.name() == name)
        .map(|field| field.json_name().to_owned())
        .collect()
}
