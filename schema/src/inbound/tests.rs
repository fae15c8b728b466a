use super::*;
use crate::ir::{Object, Schema};
use serde_json::json;

fn run(schema: &Schema, mut value: Value) -> Result<(Value, Vec<AliasSlot>), Vec<String>> {
    let slots = unshape(schema, &mut value, &Limits::default())?;
    Ok((value, slots))
}

/// An integer argument within 64 bits is handed on as a JSON number;
/// past them (where no bound stops it) as its digits, which a double
/// would round. A bound past 64 bits renders as the nearest double
/// instead (`render`'s `an_integer_bound_past_64_bits_is_the_nearest_double`).
#[test]
fn an_integer_past_64_bits_is_kept_as_its_digits() {
    let schema = Schema::object(Object::new().property("n", Schema::integer(), true));
    let kept = |n: Value| run(&schema, json!({ "n": n })).map(|(value, _)| value["n"].clone());
    assert_eq!(
        kept(json!("18446744073709551616")),
        Ok(json!("18446744073709551616"))
    );
    assert_eq!(
        kept(json!("-18446744073709551616")),
        Ok(json!("-18446744073709551616"))
    );
    assert_eq!(
        kept(json!(18_446_744_073_709_551_616.0_f64)),
        Ok(json!("18446744073709551616"))
    );
    assert_eq!(kept(json!("18446744073709551615")), Ok(json!(u64::MAX)));
    assert_eq!(kept(json!("-9223372036854775808")), Ok(json!(i64::MIN)));
}

fn oneof_schema() -> Schema {
    let member = |name: &str, json: Option<&str>, schema: Schema| Property {
        name: name.into(),
        json_name: json.map(Into::into),
        schema,
        required: false,
    };
    let cargo = Object::named("Cargo")
        .property("manifest", Schema::bytes(), false)
        .property(
            "target",
            Schema::one_of(
                vec![
                    member("email", None, Schema::string()),
                    member("sms_number", Some("smsNumber"), Schema::string()),
                ],
                true,
            ),
            false,
        );
    Schema::object(
        Object::named("Root")
            .property(
                "cargo_by_stop",
                Schema::map(Schema::string(), Schema::object(cargo)),
                false,
            )
            .property(
                "link_ids",
                Schema::array(Schema::string()).alias_prefix("link"),
                false,
            ),
    )
}

#[test]
fn oneof_members_are_lifted_and_the_flat_form_is_accepted() {
    let schema = oneof_schema();
    let (value, _) = run(
        &schema,
        json!({"cargo_by_stop": {"a": {"target": {"smsNumber": "1"}}, "b": {"email": "x"}}}),
    )
    .unwrap();
    assert_eq!(
        value,
        json!({"cargo_by_stop": {"a": {"sms_number": "1"}, "b": {"email": "x"}}})
    );
}

#[test]
fn two_members_are_refused_naming_both_by_path() {
    let schema = oneof_schema();
    let problems = run(
        &schema,
        json!({"cargo_by_stop": {"a": {"target": {"email": "x"}, "sms_number": "1"}}}),
    )
    .unwrap_err();
    assert_eq!(
        problems,
        [
            "`cargo_by_stop[\"a\"].sms_number` and `cargo_by_stop[\"a\"].target.email` are alternatives (oneof `target`): send only one of them"
        ]
    );
    let problems = run(
        &schema,
        json!({"cargo_by_stop": {"a": {"target": {"email": "x", "sms_number": "1"}}}}),
    )
    .unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("alternatives"), "{problems:?}");
}

#[test]
fn nested_errors_name_the_full_path() {
    let schema = oneof_schema();
    let problems = run(
        &schema,
        json!({"cargo_by_stop": {"a": {"manifest": "not base64!"}}}),
    )
    .unwrap_err();
    assert_eq!(
        problems,
        [
            "`cargo_by_stop[\"a\"].manifest` is `not base64!`, which is not base64; send the bytes base64-encoded (standard or URL-safe alphabet)"
        ]
    );
}

#[test]
fn alias_slots_point_into_the_unshaped_value() {
    let schema = oneof_schema();
    let (value, slots) = run(&schema, json!({"link_ids": "[\"link-1\", \"\"]"})).unwrap();
    assert_eq!(value, json!({"link_ids": ["link-1", ""]}));
    assert_eq!(
        slots,
        [AliasSlot {
            pointer: "/link_ids/0".into(),
            path: "link_ids[0]".into(),
            prefix: "link".into()
        }]
    );
}

#[test]
fn integers_within_bounds_in_every_protojson_form() {
    let schema = Schema::object(
        Object::new()
            .property("i", Schema::integer_within(i32::MIN, i32::MAX), false)
            .property("u", Schema::integer_within(u64::MIN, u64::MAX), false)
            .property(
                "m",
                Schema::map(Schema::integer_within(0, u32::MAX), Schema::boolean()),
                false,
            ),
    );
    let (value, _) = run(
        &schema,
        json!({"i": 3.0, "u": "18446744073709551615", "m": [
            {"key": 4294967295u32, "value": true},
            // A double with no fraction, as Gemini hands numbers back.
            {"key": 7.0, "value": false},
        ]}),
    )
    .unwrap();
    assert_eq!(
        value,
        json!({"i": 3, "u": 18_446_744_073_709_551_615u64, "m": {"4294967295": true, "7": false}})
    );
    let problems = run(&schema, json!({"i": 2_147_483_648i64, "m": {"-1": true}})).unwrap_err();
    assert_eq!(
        problems,
        [
            "`i` is 2147483648, outside its range: send an integer from -2147483648 to 2147483647",
            "`m[\"-1\"]` has a key that is not an integer from 0 to 4294967295",
        ]
    );
}

#[test]
fn a_refused_message_is_explained_in_both_of_its_forms() {
    // Anthropic strict cuts a recursive message to a string holding its
    // JSON text; other dialects give the object itself. The executor
    // does not know which the model read, so no sentence may ask for
    // only one of them.
    let stop = Object::named("fleet.v1.Stop").property("name", Schema::string(), true);
    let schema = Schema::object(
        Object::new()
            .property("stop", Schema::object(stop), false)
            .property("stops", Schema::array(Schema::string()), false)
            .property(
                "by_name",
                Schema::map(Schema::string(), Schema::string()),
                false,
            ),
    );
    let problems = run(
        &schema,
        json!({"stop": "depot", "stops": "{\"a\": 1}", "by_name": 7}),
    )
    .unwrap_err();
    assert_eq!(
        problems,
        [
            "`stop` is the string `depot`, which is not JSON text; send a `fleet.v1.Stop` object, or its JSON text where the schema asks for a string",
            "`stops` is a string holding the JSON text of an object; send an array, or its JSON text where the schema asks for a string",
            "`by_name` is a number; send the map as its schema shows it: an object, a list of `{\"key\": …, \"value\": …}` entries, or the JSON text of one where the schema asks for a string",
        ]
    );
    let problems = run(&schema, json!({"stop": "{\"name\": "})).unwrap_err();
    assert_eq!(
        problems,
        [
            "`stop` is a string whose JSON text does not parse (EOF while parsing a value at line 1 column 9); send a `fleet.v1.Stop` object, or its JSON text where the schema asks for a string"
        ]
    );
    // The JSON text of the object is the object.
    let (value, _) = run(&schema, json!({"stop": "{\"name\": \"depot\"}"})).unwrap();
    assert_eq!(value, json!({"stop": {"name": "depot"}}));
}

#[test]
fn numbers_past_2_53_are_refused_where_they_passed_through_doubles() {
    let schema = Schema::object(
        Object::new()
            .property("id", Schema::integer_within(i64::MIN, i64::MAX), false)
            .property("small", Schema::integer_within(i32::MIN, i32::MAX), false)
            .property(
                "by_id",
                Schema::map(
                    Schema::integer_within(i64::MIN, i64::MAX),
                    Schema::boolean(),
                ),
                false,
            ),
    );
    let doubles = Limits {
        numbers_as_doubles: true,
        ..Limits::default()
    };
    let unshaped =
        |mut value: Value, limits: &Limits| unshape(&schema, &mut value, limits).map(|_| value);
    // The string of digits arrives exactly, whatever the host.
    let exact = json!({"id": "9007199254740993", "by_id": [{"key": "-9223372036854775808", "value": true}]});
    assert_eq!(
        unshaped(exact, &doubles).unwrap(),
        json!({"id": 9_007_199_254_740_993i64, "by_id": {"-9223372036854775808": true}})
    );
    // The largest exact number passes; one past it may be a rounded one.
    assert!(unshaped(json!({"id": 9_007_199_254_740_991i64}), &doubles).is_ok());
    let sent = json!({"id": 9_007_199_254_740_992i64, "by_id": [{"key": -9_007_199_254_740_993i64, "value": true}]});
    assert_eq!(
        unshaped(sent.clone(), &doubles).unwrap_err(),
        [
            "`id` is 9007199254740992, a number past 2^53 that may have been rounded on its way here; send the integer as a string of its digits",
            "`by_id` has a `key` that is a number past 2^53, which may have been rounded on its way here; send each integer key as a string of its digits",
        ]
    );
    // Without a host that parses doubles, the number is exact.
    assert!(unshaped(sent, &Limits::default()).is_ok());
    // So is one inside a cut's JSON text: a host parses the arguments,
    // not the text in one of their strings.
    let nested = Schema::object(Object::new().property("inner", schema.clone(), false));
    let mut in_text = json!({"inner": "{\"id\": 9007199254740993, \"by_id\": [{\"key\": 9007199254740993, \"value\": true}]}"});
    assert!(unshape(&nested, &mut in_text, &doubles).is_ok());
    assert_eq!(in_text["inner"]["id"], json!(9_007_199_254_740_993i64));
    let mut outside = json!({"inner": {"id": 9_007_199_254_740_993i64}});
    assert!(unshape(&nested, &mut outside, &doubles).is_err());
}

#[test]
fn shape_bounds_name_the_place() {
    let limits = Limits {
        max_depth: 4,
        max_string_bytes: 8,
        max_array_items: 2,
        ..Limits::default()
    };
    let check = |v: Value| check_shape(&v, &limits, limits.max_depth, "");
    assert!(check(json!({"a": [1, 2], "b": "12345678"})).is_ok());
    let e = check(json!({"a": {"b": [1, 2, 3]}})).unwrap_err();
    assert!(e.contains("`a.b` has 3 items"), "{e}");
    let e = check(json!({"a": ["x", "123456789"]})).unwrap_err();
    assert!(e.contains("`a[1]` is a string of 9 bytes"), "{e}");
    let e = check(json!({"123456789": 1})).unwrap_err();
    assert!(e.contains("a key of 9 bytes"), "{e}");
    let e = check(json!({"a": [[[[1]]]]})).unwrap_err();
    assert!(e.contains("nested deeper than 4"), "{e}");
    assert_eq!(json_depth(r#"{"a": "[[[[", "b": [{}]}"#), 3);
}

#[test]
fn base64_in_either_alphabet_padded_or_not() {
    assert_eq!(standard_base64("-_8").as_deref(), Some("+/8="));
    assert_eq!(standard_base64("QQ==").as_deref(), Some("QQ=="));
    assert_eq!(standard_base64("QQ").as_deref(), Some("QQ=="));
    assert_eq!(standard_base64("").as_deref(), Some(""));
    assert_eq!(standard_base64("Q"), None);
    assert_eq!(standard_base64("QQ="), None);
    assert_eq!(standard_base64("a b="), None);
}

#[test]
fn durations_field_masks_and_date_times() {
    assert!(is_duration("1.5s") && is_duration("-90s") && !is_duration("1.s"));
    assert!(!is_duration("123456789012s"), "beyond protobuf's range");
    assert!(is_field_mask("") && is_field_mask("a.bC,d") && !is_field_mask("a,,b"));
    assert_eq!(
        date_time("2024-01-31t09:00:00.5+05:30").as_deref(),
        Some("2024-01-31T09:00:00.5+05:30")
    );
    assert_eq!(date_time("2024-01-31 09:00:00Z"), None);
}

#[test]
fn unknown_fields_and_nulls() {
    let schema = Schema::object(
        Object::new()
            .property("a", Schema::string(), true)
            .property("o", Schema::string(), false)
            .property("w", Schema::string().nullable(), false),
    );
    // `null` for an optional property is "absent"; a wrapper keeps it.
    let (value, _) = run(&schema, json!({"a": "x", "o": null, "w": null})).unwrap();
    assert_eq!(value, json!({"a": "x", "w": null}));
    let problems = run(&schema, json!({"a": null, "b": 1, "c": 2})).unwrap_err();
    assert_eq!(
        problems,
        [
            "`a` is null; send a string",
            "unknown arguments `b`, `c`; the valid ones are: `a`, `o`, `w`"
        ]
    );
}

#[test]
fn a_value_oneof_takes_exactly_one_member() {
    let schema = Schema::one_of(
        vec![Property {
            name: "Email".into(),
            json_name: None,
            schema: Schema::string(),
            required: true,
        }],
        false,
    );
    let mut value = json!({"Email": "x"});
    assert!(unshape(&schema, &mut value, &Limits::default()).is_ok());
    let mut value = json!({});
    let problems = unshape(&schema, &mut value, &Limits::default()).unwrap_err();
    assert_eq!(
        problems,
        ["the arguments has 0 members; send exactly one of: `Email`"]
    );
}
