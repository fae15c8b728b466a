//! `#[derive(ToolInput)]`: attributes → model (checked, every error
//! collected) → expansion of an `proto_ai_tools::ToolInput` impl.

mod attr;
mod expand;

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields};

use crate::errors::Errors;
use attr::{RenameRule, SerdeContainer, SerdeItem, Spanned, ToolAttrs};

/// What the derive generates an impl from.
pub struct Model<'a> {
    pub ident: &'a syn::Ident,
    pub description: Option<String>,
    pub shape: Shape<'a>,
}

pub enum Shape<'a> {
    /// A struct with named fields.
    Struct(Vec<Field<'a>>),
    /// The schema is another type's: a newtype struct, `transparent`, or
    /// `from`/`try_from` (then `optional` follows that type).
    Delegate {
        ty: &'a syn::Type,
        propagate_optional: bool,
    },
    /// `from = "T"`: an owned type parsed from the attribute.
    From(syn::Type),
    /// An enum of unit variants: a string enum. `(wire name, doc)`.
    UnitEnum(Vec<(String, Option<String>)>),
    /// An externally tagged enum whose variants all carry data.
    DataEnum(Vec<Variant<'a>>),
}

pub struct Field<'a> {
    pub ty: &'a syn::Type,
    pub wire: String,
    pub description: Option<String>,
    pub usage_notes: Option<String>,
    pub alias_prefix: Option<Spanned<String>>,
    /// `#[serde(default)]` on the field or the container.
    pub defaulted: bool,
    pub flatten: bool,
}

pub struct Variant<'a> {
    pub ident: &'a syn::Ident,
    pub wire: String,
    pub description: Option<String>,
    pub data: VariantData<'a>,
}

pub enum VariantData<'a> {
    Newtype(&'a syn::Type),
    Struct(Vec<Field<'a>>),
}

/// Expands the derive; errors become `compile_error!`s beside a stand-in impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = model(input, &mut errors);
    match errors.finish() {
        None => match model {
            Some(model) => expand::expand(&model),
            None => TokenStream::new(),
        },
        Some(error) => {
            let error = error.into_compile_error();
            let fallback = if input.generics.params.is_empty() {
                expand::fallback(&input.ident)
            } else {
                TokenStream::new()
            };
            quote::quote! { #error #fallback }
        }
    }
}

fn model<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<Model<'a>> {
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "`ToolInput` cannot be derived for a generic type; give the tool a concrete input type (e.g. a struct with `Vec<Item>` instead of `Page<T>`)",
        );
    }
    let serde = SerdeContainer::parse(&input.attrs);
    let tool = ToolAttrs::parse(&input.attrs, errors);
    if let Some(prefix) = &tool.alias_prefix {
        errors.at(
            prefix.span,
            "`alias_prefix` belongs on a string field, not on a type",
        );
    }
    if let Some(key) = &serde.unsupported {
        errors.at(
            key.span,
            format!(
                "`ToolInput` does not support `#[serde({})]`: the schema IR has no union a provider accepts at every level; use an externally tagged enum (serde's default) whose variants carry structs",
                key.value
            ),
        );
    }
    let description = describe(&input.attrs, &tool);

    if let Some(from) = serde.from.clone() {
        return Some(Model {
            ident: &input.ident,
            description,
            shape: Shape::From(from),
        });
    }

    let shape = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => {
                let fields = fields(named.named.iter(), serde.rename_all, serde.default, errors);
                if serde.transparent {
                    match fields.as_slice() {
                        [only] if !only.flatten => Shape::Delegate {
                            ty: only.ty,
                            propagate_optional: true,
                        },
                        _ => return None, // serde reports a bad `transparent`
                    }
                } else {
                    Shape::Struct(fields)
                }
            }
            Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => Shape::Delegate {
                ty: &unnamed.unnamed[0].ty,
                propagate_optional: serde.transparent,
            },
            other => {
                errors.at(
                    other.span().join(input.ident.span()).unwrap_or(input.ident.span()),
                    "`ToolInput` can be derived for a struct with named fields, a newtype struct or an enum; a tool's arguments are a JSON object",
                );
                return None;
            }
        },
        Data::Enum(data) => {
            let rename_all = serde.rename_all;
            let mut units = Vec::new();
            let mut datas = Vec::new();
            for variant in &data.variants {
                let item = SerdeItem::parse(&variant.attrs);
                let vtool = ToolAttrs::parse(&variant.attrs, errors);
                if let Some(prefix) = &vtool.alias_prefix {
                    errors.at(
                        prefix.span,
                        "`alias_prefix` belongs on a string field, not on a variant",
                    );
                }
                if let Some(key) = &item.unsupported {
                    errors.at(
                        key.span,
                        format!(
                            "`ToolInput` does not support `#[serde({})]` on a variant",
                            key.value
                        ),
                    );
                }
                if item.skip || item.other {
                    continue;
                }
                let ident = &variant.ident;
                let wire = item.rename.clone().unwrap_or_else(|| {
                    let name = ident.unraw().to_string();
                    rename_all.map_or(name.clone(), |rule| rule.variant(&name))
                });
                let description = describe(&variant.attrs, &vtool);
                match &variant.fields {
                    Fields::Unit => units.push((variant, wire, description)),
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => datas.push(Variant {
                        ident,
                        wire,
                        description,
                        data: VariantData::Newtype(&f.unnamed[0].ty),
                    }),
                    Fields::Named(named) => {
                        let fields = fields(
                            named.named.iter(),
                            item.rename_all.or(serde.rename_all_fields),
                            false,
                            errors,
                        );
                        datas.push(Variant {
                            ident,
                            wire,
                            description,
                            data: VariantData::Struct(fields),
                        });
                    }
                    Fields::Unnamed(f) => errors.at(
                        f.span(),
                        format!("tuple variant `{ident}` has no schema a provider accepts; make it a struct variant with named fields"),
                    ),
                }
            }
            if !units.is_empty() && !datas.is_empty() {
                for (variant, _, _) in &units {
                    errors.at(
                        variant.ident.span(),
                        format!(
                            "unit variant `{0}` in an enum whose other variants carry data has no schema providers accept; write it `{0} {{}}`",
                            variant.ident
                        ),
                    );
                }
            }
            if units.is_empty() && datas.is_empty() {
                errors.at(
                    input.ident.span(),
                    "an enum with no deserializable variants cannot be a tool input",
                );
            }
            if datas.is_empty() {
                Shape::UnitEnum(
                    units
                        .into_iter()
                        .map(|(_, wire, doc)| (wire, doc))
                        .collect(),
                )
            } else {
                Shape::DataEnum(datas)
            }
        }
        Data::Union(data) => {
            errors.at(
                data.union_token.span(),
                "`ToolInput` cannot be derived for a union",
            );
            return None;
        }
    };
    Some(Model {
        ident: &input.ident,
        description,
        shape,
    })
}

/// The named fields that deserialize, with their wire names and attributes.
fn fields<'a>(
    fields: impl Iterator<Item = &'a syn::Field>,
    rename_all: Option<RenameRule>,
    container_default: bool,
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    for field in fields {
        let serde = SerdeItem::parse(&field.attrs);
        let tool = ToolAttrs::parse(&field.attrs, errors);
        if serde.skip {
            continue;
        }
        let Some(ident) = &field.ident else { continue };
        if let Some(key) = &serde.unsupported {
            errors.at(
                key.span,
                format!(
                    "`ToolInput` cannot see what `#[serde({})]` accepts, so it has no schema for field `{}`; give the field a type that implements `ToolInput` instead",
                    key.value,
                    ident.unraw()
                ),
            );
        }
        if let Some(prefix) = &tool.alias_prefix {
            if let Err(message) = proto_ai_tools_schema::names::validate_alias_prefix(&prefix.value)
            {
                errors.at(prefix.span, message);
            }
            if serde.flatten {
                errors.at(
                    prefix.span,
                    "`alias_prefix` cannot go on a flattened field; put it on the string fields of the flattened type",
                );
            }
        }
        let wire = serde.rename.clone().unwrap_or_else(|| {
            let name = ident.unraw().to_string();
            rename_all.map_or(name.clone(), |rule| rule.field(&name))
        });
        out.push(Field {
            ty: &field.ty,
            wire,
            description: tool
                .description
                .as_ref()
                .map(|d| d.value.trim().to_owned())
                .or_else(|| attr::doc_comment(&field.attrs)),
            usage_notes: tool
                .usage_notes
                .as_ref()
                .map(|n| n.value.trim().to_owned())
                .filter(|n| !n.is_empty()),
            alias_prefix: tool.alias_prefix,
            defaulted: serde.default || container_default,
            flatten: serde.flatten,
        });
    }
    out
}

/// `#[tool(description)]` ?? the doc comment, then `usage_notes` after a blank line.
fn describe(attrs: &[syn::Attribute], tool: &ToolAttrs) -> Option<String> {
    let description = tool
        .description
        .as_ref()
        .map(|d| d.value.trim().to_owned())
        .or_else(|| attr::doc_comment(attrs));
    let notes = tool
        .usage_notes
        .as_ref()
        .map(|n| n.value.trim().to_owned())
        .filter(|n| !n.is_empty());
    join(description, notes)
}

pub fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b),
    }
}
