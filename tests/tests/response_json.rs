//! The executor writes a response's JSON straight from its protobuf bytes.
//! These tests hold that writer to what decoding the bytes into a
//! `DynamicMessage`, registering its ids (`AliasManager::register_message`)
//! and serialising it with prost-reflect give: the same JSON, the same
//! aliases in the same order, for random messages of every response type
//! (and every other message type) of the corpus protos, and for wire forms
//! a protobuf encoder may send but prost-reflect never writes (unpacked
//! lists, fields out of order, a scalar sent twice, unknown fields). Where
//! the bytes need protobuf's merge rules or do not decode, the writer must
//! step aside (`None`), and the executor's answer must still be the
//! reference one.

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, Value};
use proto_ai_tools::__private::transcode;
use proto_ai_tools::executor::JsonNames;
use proto_ai_tools::{AgentTool, AliasManager, alias::FieldPrefix};

use proto_ai_tools_tests::tools::{conformance, etcd, google_types};

/// Random messages drawn per message type.
const DRAWS: usize = 60;

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The well-known types, as JSON their serialiser writes back.
fn well_known(rng: &mut Rng, desc: &MessageDescriptor) -> Option<DynamicMessage> {
    let json = match desc.full_name() {
        "google.protobuf.Timestamp" => {
            *rng.pick(&[r#""2024-02-29T12:34:56.789Z""#, r#""1970-01-01T00:00:00Z""#])
        }
        "google.protobuf.Duration" => *rng.pick(&[r#""1.5s""#, r#""-3s""#, r#""0s""#]),
        "google.protobuf.FieldMask" => r#""fooBar,baz""#,
        "google.protobuf.Struct" => r#"{"a": 1, "b": [true, null, "x"]}"#,
        "google.protobuf.Value" => *rng.pick(&["1.5", r#""s""#, "null", r#"{"k": [1]}"#]),
        "google.protobuf.ListValue" => r#"[1, "a"]"#,
        "google.protobuf.Any" => {
            r#"{"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1s"}"#
        }
        "google.protobuf.Empty" => "{}",
        "google.protobuf.BoolValue" => "true",
        "google.protobuf.StringValue" | "google.protobuf.BytesValue" => r#""AQI=""#,
        _ => *rng.pick(&["0", "7", "-3"]),
    };
    let value: serde_json::Value = serde_json::from_str(json).expect("json");
    DynamicMessage::deserialize(desc.clone(), value).ok()
}

fn uuid(rng: &mut Rng) -> String {
    let hex = format!("{:016x}{:016x}", rng.next(), rng.next());
    let text = format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    if rng.chance(20) {
        text.to_ascii_uppercase()
    } else {
        text
    }
}

fn scalar(rng: &mut Rng, kind: &Kind, alias: bool) -> Value {
    match kind {
        Kind::Double => {
            let random = f64::from_bits(rng.next() >> 2);
            Value::F64(*rng.pick(&[
                0.0,
                -0.0,
                1.5,
                -2.25e300,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                random,
            ]))
        }
        Kind::Float => {
            let random = f32::from_bits(u32::try_from(rng.next() >> 34).expect("30 bits"));
            Value::F32(*rng.pick(&[0.0, -0.0, 0.1, 3.4e38, f32::NAN, f32::NEG_INFINITY, random]))
        }
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(*rng.pick(&[0, -1, 1, i32::MIN, i32::MAX, 300]))
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(*rng.pick(&[0, -1, i64::MIN, i64::MAX, 1 << 40]))
        }
        Kind::Uint32 | Kind::Fixed32 => Value::U32(*rng.pick(&[0, 1, u32::MAX, 128])),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(*rng.pick(&[0, 1, u64::MAX, 1 << 53])),
        Kind::Bool => Value::Bool(rng.chance(50)),
        Kind::String if alias && rng.chance(80) => Value::String(uuid(rng)),
        Kind::String => Value::String(
            (*rng.pick(&[
                "",
                "plain",
                "quote \" backslash \\ newline \n control \u{1}",
                "ünïcödé 😀",
                "</script>",
            ]))
            .to_owned(),
        ),
        Kind::Bytes => Value::Bytes(
            (0..rng.below(6))
                .map(|_| u8::try_from(rng.next() >> 56).expect("a byte"))
                .collect::<Vec<u8>>()
                .into(),
        ),
        Kind::Enum(e) => {
            let values: Vec<i32> = e.values().map(|v| v.number()).collect();
            Value::EnumNumber(*rng.pick(&values))
        }
        Kind::Message(_) => unreachable!("messages are drawn by `message`"),
    }
}

fn value(rng: &mut Rng, kind: &Kind, alias: bool, depth: usize) -> Option<Value> {
    match kind {
        Kind::Message(m) => message(rng, m, depth + 1).map(Value::Message),
        other => Some(scalar(rng, other, alias)),
    }
}

fn map_key(rng: &mut Rng, kind: &Kind) -> MapKey {
    match kind {
        Kind::String => MapKey::String((*rng.pick(&["", "a", "b", "ü", "key \"q\""])).to_owned()),
        Kind::Bool => MapKey::Bool(rng.chance(50)),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => MapKey::I32(*rng.pick(&[0, -5, 7, 1000])),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => MapKey::I64(*rng.pick(&[0, -5, i64::MAX])),
        Kind::Uint32 | Kind::Fixed32 => MapKey::U32(*rng.pick(&[0, 5, u32::MAX])),
        _ => MapKey::U64(*rng.pick(&[0, 5, u64::MAX])),
    }
}

/// A random message of `desc`, with every id field holding UUIDs (or not).
fn message(rng: &mut Rng, desc: &MessageDescriptor, depth: usize) -> Option<DynamicMessage> {
    if desc.full_name().starts_with("google.protobuf.") {
        return well_known(rng, desc);
    }
    if depth > 5 {
        return None;
    }
    let mut m = DynamicMessage::new(desc.clone());
    for field in desc.fields() {
        if !rng.chance(60) {
            continue;
        }
        let alias = field.kind() == Kind::String;
        let v = if field.is_map() {
            let Kind::Message(entry) = field.kind() else {
                unreachable!("a map is a message")
            };
            let key_kind = entry.map_entry_key_field().kind();
            let value_kind = entry.map_entry_value_field().kind();
            let mut map = std::collections::HashMap::new();
            for _ in 0..rng.below(4) {
                if let Some(v) = value(rng, &value_kind, false, depth) {
                    map.insert(map_key(rng, &key_kind), v);
                }
            }
            Value::Map(map)
        } else if field.is_list() {
            Value::List(
                (0..rng.below(4))
                    .filter_map(|_| value(rng, &field.kind(), alias, depth))
                    .collect(),
            )
        } else {
            match value(rng, &field.kind(), alias, depth) {
                Some(v) => v,
                None => continue,
            }
        };
        m.set_field(&field, v);
    }
    Some(m)
}

/// The reference: decode, register with the walk, serialise.
async fn reference(
    desc: &MessageDescriptor,
    prefixes: &[FieldPrefix],
    bytes: &[u8],
    names: JsonNames,
) -> (Result<serde_json::Value, String>, AliasManager) {
    let aliases = AliasManager::new();
    let json = async {
        let mut m = DynamicMessage::decode(desc.clone(), bytes).map_err(|e| e.to_string())?;
        aliases
            .register_message(&mut m, prefixes)
            .await
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        m.serialize_with_options(
            &mut serde_json::Serializer::new(&mut out),
            &names.serialize_options(),
        )
        .map_err(|e| e.to_string())?;
        serde_json::from_slice(&out).map_err(|e| e.to_string())
    }
    .await;
    (json, aliases)
}

/// Transcodes `bytes` and checks it against the reference, under either
/// choice of field names; `true` if the writer took the bytes (rather than
/// leaving them to `DynamicMessage`).
async fn check(desc: &MessageDescriptor, prefixes: &'static [FieldPrefix], bytes: &[u8]) -> bool {
    check_named(desc, prefixes, bytes, JsonNames::Camel).await
        && check_named(desc, prefixes, bytes, JsonNames::Proto).await
}

async fn check_named(
    desc: &MessageDescriptor,
    prefixes: &'static [FieldPrefix],
    bytes: &[u8],
    names: JsonNames,
) -> bool {
    let aliases = AliasManager::new();
    let (expected, expected_aliases) = reference(desc, prefixes, bytes, names).await;
    let Some(written) = transcode(&aliases, desc, prefixes, bytes, names).await else {
        return false;
    };
    let written = written.expect("no alias limit in these tests");
    let got: serde_json::Value = serde_json::from_str(&written)
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {written}", desc.full_name()));
    let expected = expected.unwrap_or_else(|e| {
        panic!(
            "{}: the decoder refuses bytes the writer took ({e}); wrote {written}",
            desc.full_name()
        )
    });
    assert_eq!(got, expected, "{}", desc.full_name());
    assert_eq!(
        aliases.snapshot(),
        expected_aliases.snapshot(),
        "{}: aliases differ",
        desc.full_name()
    );
    // One alias short of the limit (which is at least 1): the call is
    // refused, and nothing stays registered.
    if aliases.len() > 1 {
        let limited = AliasManager::new().with_limit(aliases.len() - 1);
        let refused = transcode(&limited, desc, prefixes, bytes, names).await;
        assert!(
            matches!(
                refused,
                Some(Err(proto_ai_tools::alias::AliasError::LimitReached { .. }))
            ),
            "{}: past the limit, {refused:?}",
            desc.full_name()
        );
        assert!(limited.is_empty(), "{}: half registered", desc.full_name());
    }
    true
}

/// Every message type of `pool` outside `google.protobuf`, each with the
/// response aliases of the tools that answer with it (or none).
fn types_and_prefixes(
    pool: &DescriptorPool,
    tools: &[&'static AgentTool],
) -> Vec<(MessageDescriptor, &'static [FieldPrefix])> {
    pool.all_messages()
        .filter(|m| !m.full_name().starts_with("google.protobuf.") && !m.is_map_entry())
        .map(|m| {
            let prefixes = tools
                .iter()
                .find(|t| t.method.response == m.full_name())
                .map_or(&[][..], |t| t.response_aliases);
            (m, prefixes)
        })
        .collect()
}

#[tokio::test]
async fn random_messages_of_every_corpus_type_write_as_the_decoder_would() {
    let corpora: [(&DescriptorPool, &[&AgentTool]); 4] = [
        (
            proto_ai_tools_tests::tools::links::descriptor_pool(),
            &proto_ai_tools_tests::tools::links::ALL_TOOLS,
        ),
        (conformance::descriptor_pool(), &conformance::ALL_TOOLS),
        (google_types::descriptor_pool(), &google_types::ALL_TOOLS),
        (etcd::descriptor_pool(), &etcd::ALL_TOOLS),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut taken, mut total, mut aliased) = (0, 0, 0);
    for (pool, tools) in corpora {
        for (desc, prefixes) in types_and_prefixes(pool, tools) {
            for _ in 0..DRAWS {
                let Some(m) = message(&mut rng, &desc, 0) else {
                    continue;
                };
                let bytes = m.encode_to_vec();
                total += 1;
                if check(&desc, prefixes, &bytes).await {
                    taken += 1;
                }
                aliased += usize::from(!prefixes.is_empty());
            }
        }
    }
    // A well-known type as the whole response has JSON of its own: the
    // writer leaves it to `DynamicMessage` (or, if it ever takes one, must
    // write the same).
    let pool = conformance::descriptor_pool();
    for desc in pool
        .all_messages()
        .filter(|m| m.full_name().starts_with("google.protobuf.") && !m.is_map_entry())
    {
        for _ in 0..5 {
            if let Some(m) = message(&mut rng, &desc, 0) {
                check(&desc, &[], &m.encode_to_vec()).await;
            }
        }
    }
    let structs = pool
        .get_message_by_name("google.protobuf.Struct")
        .expect("Struct");
    let one = message(&mut rng, &structs, 0).expect("a Struct");
    assert!(
        !check(&structs, &[], &one.encode_to_vec()).await,
        "a Struct response must be left to DynamicMessage, which writes its own JSON"
    );
    println!(
        "{taken} of {total} random messages written from their bytes ({aliased} with aliases)"
    );
    // The corpus has no groups or extensions, and random messages never need
    // the merge rules: every one must be written directly.
    assert_eq!(taken, total, "the writer stepped aside where it need not");
    assert!(aliased > 100, "too few draws of aliased types: {aliased}");
}

/// Field `number` with wire type `wire`, then `payload`.
fn field(number: u32, wire: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_varint(u64::from(number << 3 | u32::from(wire)), &mut out);
    out.extend_from_slice(payload);
    out
}

fn varint(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_varint(v, &mut out);
    out
}

fn len_delimited(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = varint(payload.len() as u64);
    out.extend_from_slice(payload);
    field(number, 2, &out)
}

/// A message type of the corpus (not a well-known one) that `wanted` accepts.
fn find_type(
    pool: &DescriptorPool,
    wanted: impl Fn(&MessageDescriptor) -> bool,
) -> MessageDescriptor {
    pool.all_messages()
        .find(|m| !m.full_name().starts_with("google.protobuf.") && wanted(m))
        .expect("the corpus has such a type")
}

#[tokio::test]
async fn wire_forms_prost_reflect_never_writes_are_read_as_the_decoder_reads_them() {
    let pool = conformance::descriptor_pool();
    // A repeated packable scalar, sent unpacked, twice, around another field.
    let with_list = find_type(pool, |m| {
        m.fields()
            .any(|f| f.is_list() && matches!(f.kind(), Kind::Int32 | Kind::Int64 | Kind::Uint32))
            && m.fields().any(|f| !f.is_list() && f.kind() == Kind::String)
    });
    let list = with_list
        .fields()
        .find(|f| f.is_list() && matches!(f.kind(), Kind::Int32 | Kind::Int64 | Kind::Uint32))
        .expect("a list");
    let text = with_list
        .fields()
        .find(|f| !f.is_list() && f.kind() == Kind::String && f.containing_oneof().is_none())
        .expect("a string");
    let mut bytes = Vec::new();
    bytes.extend(len_delimited(text.number(), b"first"));
    bytes.extend(field(list.number(), 0, &varint(7)));
    bytes.extend(len_delimited(text.number(), b"second, which wins"));
    bytes.extend(field(list.number(), 0, &varint(8)));
    // A packed run of the same field after the unpacked values.
    let mut run = varint(9);
    run.extend(varint(300));
    bytes.extend(len_delimited(list.number(), &run));
    // An unknown field of each wire type.
    bytes.extend(field(9_999, 0, &varint(1)));
    bytes.extend(field(9_998, 1, &[0; 8]));
    bytes.extend(len_delimited(9_997, b"unknown"));
    bytes.extend(field(9_996, 5, &[0; 4]));
    assert!(
        check(&with_list, &[], &bytes).await,
        "{}: the writer stepped aside from plain wire forms",
        with_list.full_name()
    );

    // Bytes the writer must leave to the decoder: a singular message sent
    // twice (merged), a string that is not UTF-8, a truncated varint, a group.
    let with_message = find_type(pool, |m| {
        m.fields().any(|f| {
            !f.is_list()
                && !f.is_map()
                && matches!(f.kind(), Kind::Message(c) if !c.full_name().starts_with("google."))
        })
    });
    let child = with_message
        .fields()
        .find(|f| {
            !f.is_list()
                && !f.is_map()
                && matches!(f.kind(), Kind::Message(c) if !c.full_name().starts_with("google."))
        })
        .expect("a message field");
    let twice = [
        len_delimited(child.number(), &[]),
        len_delimited(child.number(), &[]),
    ]
    .concat();
    let not_utf8 = len_delimited(text.number(), &[0xff, 0xfe]);
    let truncated = field(list.number(), 0, &[0x80]);
    let group = field(9_995, 3, &[]);
    for (what, desc, bytes) in [
        ("a message sent twice", &with_message, twice),
        ("a string that is not UTF-8", &with_list, not_utf8),
        ("a truncated varint", &with_list, truncated),
        ("a group", &with_list, group),
    ] {
        assert!(
            !check(desc, &[], &bytes).await,
            "{what}: the writer took bytes it should leave to the decoder"
        );
    }
}

#[tokio::test]
async fn a_type_of_the_same_name_from_another_pool_is_written_by_its_own_layout() {
    // Two versions of one proto in one program: `same.v1.Thing`'s field 1 is
    // `name` in one and `title` in the other.
    let dir = std::env::temp_dir().join(format!("ai-tools-response-json-{}", std::process::id()));
    let pool = |version: &str, field: &str| {
        let root = dir.join(version);
        std::fs::create_dir_all(&root).expect("a directory");
        std::fs::write(
            root.join("thing.proto"),
            format!(
                "syntax = \"proto3\";\npackage same.v1;\nmessage Thing {{ string {field} = 1; }}\n"
            ),
        )
        .expect("written");
        let mut compiler = protox::Compiler::new([&root]).expect("a compiler");
        compiler.open_file("thing.proto").expect("compiles");
        compiler.descriptor_pool()
    };
    let (older, newer) = (pool("a", "name"), pool("b", "title"));
    let bytes = len_delimited(1, b"x");
    for pool in [&older, &newer] {
        let thing = pool.get_message_by_name("same.v1.Thing").expect("Thing");
        assert!(check(&thing, &[], &bytes).await, "written directly");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
