//! Which fields a request's schema holds, and which of its properties are
//! required: what the annotations, `optional` and oneofs decide.

use prost_reflect::{Cardinality, FieldDescriptor, MessageDescriptor, OneofDescriptor, Syntax};

use super::annotations::{Annotations, FieldAnnotations};

impl Annotations {
    /// The fields of `message` that appear in the schema: not `skip`, not
    /// `OUTPUT_ONLY`, and not `deprecated` unless a `tool_field` option says
    /// the model should still see it.
    pub(super) fn schema_fields<'m>(
        &'m self,
        message: &'m MessageDescriptor,
    ) -> impl Iterator<Item = (FieldDescriptor, FieldAnnotations)> + 'm {
        message.fields().filter_map(|field| {
            let ann = self.tool_field(&field);
            exposed(&field, &ann).then_some((field, ann))
        })
    }

    /// What is wrong with `field`'s `tool_field.required`, if it is set and
    /// contradicts the server's contract or means nothing.
    pub(super) fn required_problem(
        &self,
        field: &FieldDescriptor,
        ann: &FieldAnnotations,
    ) -> Option<String> {
        let name = field.full_name();
        match ann.required? {
            false if ann.behavior_required || field.cardinality() == Cardinality::Required => {
                let contract = if ann.behavior_required {
                    "`(google.api.field_behavior) = REQUIRED`"
                } else {
                    "a proto2 `required` field"
                };
                Some(format!(
                    "field `{name}` is {contract}, so the server refuses a request without it, but its `tool_field` says `required: false`; remove `required: false`: the model must send this field"
                ))
            }
            true if ann.skip || ann.output_only => {
                let why = if ann.skip {
                    "`skip: true`"
                } else {
                    "`(google.api.field_behavior) = OUTPUT_ONLY`"
                };
                Some(format!(
                    "field `{name}` is left out of the tool schema ({why}), so `required: true` asks for a field the model never sees; remove one of the two"
                ))
            }
            true => {
                let oneof = real_oneof(field)?;
                let members = oneof
                    .fields()
                    .filter(|member| exposed(member, &self.tool_field(member)))
                    .count();
                (members > 1).then(|| {
                    format!(
                        "field `{name}` is a member of oneof `{}`, whose one property holds exactly one of its {members} members and may be left out; `required: true` cannot apply to one member: remove it",
                        oneof.name()
                    )
                })
            }
            false => None,
        }
    }
}

/// The real (not synthetic `optional`) oneof of a field.
pub(super) fn real_oneof(field: &FieldDescriptor) -> Option<OneofDescriptor> {
    field.containing_oneof().filter(|o| !o.is_synthetic())
}

/// Whether `field` appears in the schema: not `skip`, not `OUTPUT_ONLY`,
/// and not `deprecated` unless a `tool_field` option says the model should
/// still see it.
fn exposed(field: &FieldDescriptor, ann: &FieldAnnotations) -> bool {
    !ann.skip && !ann.output_only && (!is_deprecated(field) || ann.annotated)
}

/// Whether `field` is marked `deprecated = true`: left out of the schema
/// unless a `tool_field` option says the model should still see it.
pub(crate) fn is_deprecated(field: &FieldDescriptor) -> bool {
    field
        .field_descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.deprecated)
        .unwrap_or(false)
}

/// Whether the property of `field` is required: `tool_field.required` when
/// set, else `field_behavior = REQUIRED`, else the field is neither
/// `optional` nor a oneof member. A `required: false` that contradicts the
/// server's contract (`REQUIRED`, a proto2 `required` field) is a diagnostic
/// of [`tools_in_file`](crate::tools_in_file); here the contract wins.
pub(super) fn is_required(field: &FieldDescriptor, ann: &FieldAnnotations) -> bool {
    let contract = ann.behavior_required || field.cardinality() == Cardinality::Required;
    match ann.required {
        Some(required) => required || contract,
        None => contract || !(real_oneof(field).is_some() || is_optional(field)),
    }
}

/// Proto3 `optional`, or a proto2/editions singular non-`required` field.
pub(super) fn is_optional(field: &FieldDescriptor) -> bool {
    if field.field_descriptor_proto().proto3_optional() {
        return true;
    }
    field.parent_file().syntax() != Syntax::Proto3
        && !field.is_list()
        && !field.is_map()
        && field.cardinality() == Cardinality::Optional
}
