//! The `proto_ai_tools::ToolInput` impl of a checked [`Model`].

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned as _;

use super::{Field, Model, Shape, VariantData, join};

pub fn expand(model: &Model<'_>) -> TokenStream {
    let ident = model.ident;
    let name = ident.unraw().to_string();
    let describe = describe_tokens(model.description.as_deref());
    let (optional, body) = match &model.shape {
        Shape::Struct(fields) => {
            let fields = fields.iter().map(field_tokens);
            let body = quote! {
                __generator.named_type(
                    ::core::concat!(::core::module_path!(), "::", #name),
                    #name,
                    |__generator, __name| {
                        let mut __object = ::proto_ai_tools::schema::ir::Object::named(__name);
                        #(#fields)*
                        ::proto_ai_tools::schema::ir::Schema::object(__object) #describe
                    },
                )
            };
            (None, body)
        }
        Shape::Delegate {
            ty,
            propagate_optional,
        } => {
            let schema = quote_spanned! {ty.span()=>
                <#ty as ::proto_ai_tools::ToolInput>::schema_in(__generator)
            };
            let optional = propagate_optional.then(
                || quote_spanned! {ty.span()=> <#ty as ::proto_ai_tools::ToolInput>::OPTIONAL },
            );
            (optional, quote! { #schema #describe })
        }
        Shape::From(ty) => {
            let schema = quote_spanned! {ty.span()=>
                <#ty as ::proto_ai_tools::ToolInput>::schema_in(__generator)
            };
            let optional =
                quote_spanned! {ty.span()=> <#ty as ::proto_ai_tools::ToolInput>::OPTIONAL };
            (Some(optional), quote! { #schema #describe })
        }
        Shape::UnitEnum(variants) => {
            let wires = variants.iter().map(|(wire, _)| wire);
            let notes: Vec<String> = variants
                .iter()
                .filter_map(|(wire, doc)| {
                    doc.as_ref()
                        .map(|doc| format!("- `{wire}`: {}", doc.replace('\n', " ")))
                })
                .collect();
            let notes = (!notes.is_empty()).then(|| notes.join("\n"));
            let describe = describe_tokens(join(model.description.clone(), notes).as_deref());
            let body = quote! {
                ::proto_ai_tools::schema::ir::Schema::enumeration([#(#wires),*]) #describe
            };
            (None, body)
        }
        Shape::DataEnum(variants) => {
            // The schema itself says "exactly one" (`Kind::OneOf`), in every dialect.
            let describe = describe_tokens(model.description.as_deref());
            let variants = variants.iter().map(|variant| {
                let wire = &variant.wire;
                let describe = describe_tokens(variant.description.as_deref());
                let schema = match &variant.data {
                    VariantData::Newtype(ty) => quote_spanned! {ty.span()=>
                        <#ty as ::proto_ai_tools::ToolInput>::schema_in(__generator)
                    },
                    VariantData::Struct(fields) => {
                        let vname = variant.ident.unraw().to_string();
                        let fields = fields.iter().map(field_tokens);
                        quote! {{
                            let __enum_name = __name;
                            let __variant_name = ::std::format!("{}.{}", __enum_name, #vname);
                            let __name: &str = &__variant_name;
                            let mut __object = ::proto_ai_tools::schema::ir::Object::named(__name);
                            #(#fields)*
                            ::proto_ai_tools::schema::ir::Schema::object(__object)
                        }}
                    }
                };
                quote! {
                    __members.push(::proto_ai_tools::schema::ir::Property {
                        name: ::std::string::String::from(#wire),
                        json_name: ::core::option::Option::None,
                        schema: #schema #describe,
                        required: true,
                    });
                }
            });
            let body = quote! {
                __generator.named_type(
                    ::core::concat!(::core::module_path!(), "::", #name),
                    #name,
                    |__generator, __name| {
                        let mut __members = ::std::vec::Vec::new();
                        #(#variants)*
                        ::proto_ai_tools::schema::ir::Schema::one_of(__members, false) #describe
                    },
                )
            };
            (None, body)
        }
    };
    let optional = optional.map(|optional| quote! { const OPTIONAL: bool = #optional; });
    quote! {
        #[automatically_derived]
        impl ::proto_ai_tools::ToolInput for #ident {
            #optional

            fn schema_in(
                __generator: &mut ::proto_ai_tools::input::SchemaGenerator,
            ) -> ::proto_ai_tools::schema::ir::Schema {
                #body
            }
        }
    }
}

/// One property of the object `__object` named `__name`.
fn field_tokens(field: &Field<'_>) -> TokenStream {
    let Field {
        ty,
        wire,
        description,
        usage_notes,
        alias_prefix,
        defaulted,
        flatten,
    } = field;
    if *flatten {
        return quote_spanned! {ty.span()=>
            ::proto_ai_tools::__private::flatten::<#ty>(__generator, &mut __object, #defaulted);
        };
    }
    // Spanned on the type, so a type without a schema is reported there.
    let schema = quote_spanned! {ty.span()=>
        <#ty as ::proto_ai_tools::ToolInput>::schema_in(__generator)
    };
    let optional = quote_spanned! {ty.span()=> <#ty as ::proto_ai_tools::ToolInput>::OPTIONAL };
    let describe = match (description, usage_notes) {
        (Some(_), _) => {
            let text = join(description.clone(), usage_notes.clone()).unwrap_or_default();
            quote! { __schema.description = ::core::option::Option::Some(::std::string::String::from(#text)); }
        }
        (None, Some(notes)) => quote! {
            __schema.description = ::core::option::Option::Some(match __schema.description.take() {
                ::core::option::Option::Some(__own) => ::std::format!("{}\n\n{}", __own, #notes),
                ::core::option::Option::None => ::std::string::String::from(#notes),
            });
        },
        (None, None) => TokenStream::new(),
    };
    let alias = alias_prefix.as_ref().map(|prefix| {
        let prefix = &prefix.value;
        let check = quote_spanned! {ty.span()=>
            let () = <#ty as ::proto_ai_tools::__private::AliasString>::IS_ALIAS_STRING;
        };
        quote! {
            #check
            ::proto_ai_tools::__private::alias_field(__generator, __name, #wire, #prefix);
        }
    });
    let required = if *defaulted {
        quote! { false }
    } else {
        quote! { !__optional }
    };
    quote! {
        {
            let mut __schema = #schema;
            let __optional: bool = #optional;
            if __optional {
                __schema.nullable = false;
            }
            #describe
            #alias
            __object = __object.property(#wire, __schema, #required);
        }
    }
}

fn describe_tokens(description: Option<&str>) -> TokenStream {
    match description {
        Some(text) => quote! { .describe(#text) },
        None => TokenStream::new(),
    }
}

/// Stands in for the impl after an error, so that uses of the type as a
/// `ToolInput` do not bury the real error.
pub fn fallback(ident: &syn::Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl ::proto_ai_tools::ToolInput for #ident {
            fn schema_in(
                _: &mut ::proto_ai_tools::input::SchemaGenerator,
            ) -> ::proto_ai_tools::schema::ir::Schema {
                ::proto_ai_tools::schema::ir::Schema::any()
            }
        }
    }
}
