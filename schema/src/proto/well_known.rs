//! The schemas of `google.protobuf`'s well-known types: protojson writes
//! them in forms of their own, not as objects of their fields.

use prost_reflect::MessageDescriptor;

use crate::ir::{self, Object, Schema};

pub(super) fn well_known(message: &MessageDescriptor) -> Option<Schema> {
    let schema = match message.full_name() {
        "google.protobuf.Timestamp" => Schema::string_format(ir::FORMAT_DATE_TIME),
        "google.protobuf.Duration" => Schema::string_pattern(ir::DURATION_PATTERN),
        "google.protobuf.FieldMask" => Schema::string_pattern(ir::FIELD_MASK_PATTERN),
        "google.protobuf.Struct" => Schema::object(Object::open()),
        "google.protobuf.Value" => Schema::any(),
        "google.protobuf.ListValue" => Schema::array(Schema::any()),
        "google.protobuf.DoubleValue" => Schema::number().nullable(),
        "google.protobuf.FloatValue" => float_schema().nullable(),
        "google.protobuf.Int64Value" => Schema::integer_within(i64::MIN, i64::MAX).nullable(),
        "google.protobuf.Int32Value" => Schema::integer_within(i32::MIN, i32::MAX).nullable(),
        "google.protobuf.UInt64Value" => Schema::integer_within(u64::MIN, u64::MAX).nullable(),
        "google.protobuf.UInt32Value" => Schema::integer_within(u32::MIN, u32::MAX).nullable(),
        "google.protobuf.BoolValue" => Schema::boolean().nullable(),
        "google.protobuf.StringValue" => Schema::string().nullable(),
        "google.protobuf.BytesValue" => Schema::bytes().nullable(),
        "google.protobuf.Empty" => Schema::object(Object::named("google.protobuf.Empty")),
        "google.protobuf.Any" => Schema::object(Object {
            open: true,
            ..Object::named("google.protobuf.Any")
        }
        .property(
            "@type",
            Schema::string().describe(
                "The type URL of the message, e.g. `type.googleapis.com/pkg.Message`; the message's fields sit beside it, or, for a `google.protobuf` well-known type, its JSON value in `value` (`{\"@type\": \"type.googleapis.com/google.protobuf.Duration\", \"value\": \"1.5s\"}`).",
            ),
            true,
        )),
        _ => return None,
    };
    Some(schema)
}

/// A `float`: protojson refuses a number beyond its range.
pub(super) fn float_schema() -> Schema {
    Schema::number_within(f64::from(f32::MIN), f64::from(f32::MAX))
}
