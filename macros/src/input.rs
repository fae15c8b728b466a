//! The macro's arguments: `"path/to/file.proto"` and optional `key = value` pairs.

use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, Lit, LitBool, LitStr, Token};

use proto_ai_tools_schema::overlay::PlainFields;

use crate::errors::Errors;

/// `includes = ["proto", "third_party"]`
const INCLUDES: &str = "includes";
/// `overlay = "tools/etcd.tools.toml"`
const OVERLAY: &str = "overlay";
/// `services = ["pkg.Service"]`
const SERVICES: &str = "services";
/// `plain_fields = "required"`
const PLAIN_FIELDS: &str = "plain_fields";
/// `include = ["links_*", "pkg.v1.Service/*"]`
const INCLUDE: &str = "include";
/// `exclude = ["*_delete"]`
const EXCLUDE: &str = "exclude";
/// `read_only = true`
const READ_ONLY: &str = "read_only";

/// What an unknown key is told.
const KEYS: &str = "the keys are `includes = [\"dir\", ...]`, `overlay = \"file.toml\"`, `services = [\"pkg.Service\", ...]`, `plain_fields = \"optional\" | \"required\"`, `include = [\"glob\", ...]`, `exclude = [\"glob\", ...]` and `read_only = true`";

/// What `ai_tools!(...)` was given.
pub struct MacroInput {
    /// The proto file, as written.
    pub path: LitStr,
    /// Include directories, as written; empty means the defaults.
    pub includes: Vec<LitStr>,
    /// The overlay file, as written.
    pub overlay: Option<LitStr>,
    /// Services exposed whole, as written.
    pub services: Vec<LitStr>,
    /// Whether the plain fields of the services exposed whole are required.
    pub plain_fields: PlainFields,
    /// Globs of which a tool must match one to be kept, as written.
    pub include: Vec<LitStr>,
    /// Globs that drop the tools they match, as written.
    pub exclude: Vec<LitStr>,
    /// Where `exclude` is written, for a selection whose excludes drop
    /// every tool.
    pub exclude_key: Option<proc_macro2::Span>,
    /// `read_only = true | false`, as written.
    pub read_only: Option<LitBool>,
}

/// Every mistake in the arguments is reported, not only the first: a bad
/// value does not stop the keys after it from being read. Only tokens that
/// are not `key = value` at all end the parse.
impl Parse for MacroInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(
                "expected the path of a proto file: `ai_tools!(\"proto/pkg/v1/service.proto\")`",
            ));
        }
        let mut errors = Errors::default();
        let path = match input.parse::<Expr>()? {
            Expr::Lit(ExprLit {
                lit: Lit::Str(path),
                ..
            }) => path,
            other => {
                errors.push(syn::Error::new_spanned(
                    &other,
                    "expected a string literal with the path of a proto file, relative to the crate's `Cargo.toml`",
                ));
                // Never used: the error above fails the parse.
                LitStr::new("", other.span())
            }
        };
        let mut includes: Option<Vec<LitStr>> = None;
        let mut overlay: Option<LitStr> = None;
        let mut services: Option<Vec<LitStr>> = None;
        let mut plain_fields: Option<PlainFields> = None;
        let mut plain_fields_key: Option<proc_macro2::Span> = None;
        let mut include: Option<Vec<LitStr>> = None;
        let mut exclude: Option<Vec<LitStr>> = None;
        let mut exclude_key: Option<proc_macro2::Span> = None;
        let mut read_only: Option<LitBool> = None;
        let mut read_only_key: Option<proc_macro2::Span> = None;
        while !input.is_empty() {
            if let Err(error) = input.parse::<Token![,]>() {
                return Err(errors.fail(error));
            }
            if input.is_empty() {
                break;
            }
            let (key, value) = match key_value(input) {
                Ok(pair) => pair,
                Err(error) => return Err(errors.fail(error)),
            };
            if key == INCLUDES {
                // includes = ["proto", "third_party"]
                if includes.is_some() {
                    errors.push(syn::Error::new(key.span(), "duplicate `includes` argument"));
                }
                let dirs = string_array(value, INCLUDES_EXAMPLE, &mut errors);
                if includes.is_none() {
                    includes = Some(dirs);
                }
            } else if key == OVERLAY {
                // overlay = "tools/etcd.tools.toml"
                if overlay.is_some() {
                    errors.push(syn::Error::new(key.span(), "duplicate `overlay` argument"));
                }
                match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(file),
                        ..
                    }) => overlay = overlay.or(Some(file)),
                    other => errors.push(syn::Error::new_spanned(
                        other,
                        "expected a string literal with the path of an overlay file: `overlay = \"tools/etcd.tools.toml\"`",
                    )),
                }
            } else if key == SERVICES {
                // services = ["etcdserverpb.KV"]
                if services.is_some() {
                    errors.push(syn::Error::new(key.span(), "duplicate `services` argument"));
                }
                let names = string_array(value, SERVICES_EXAMPLE, &mut errors);
                if services.is_none() {
                    services = Some(names);
                }
            } else if key == PLAIN_FIELDS {
                // plain_fields = "required"
                if plain_fields_key.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "duplicate `plain_fields` argument",
                    ));
                }
                plain_fields_key.get_or_insert(key.span());
                let parsed = match &value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(choice),
                        ..
                    }) if choice.value() == "optional" => Some(PlainFields::Optional),
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(choice),
                        ..
                    }) if choice.value() == "required" => Some(PlainFields::Required),
                    _ => None,
                };
                match parsed {
                    Some(parsed) => plain_fields = plain_fields.or(Some(parsed)),
                    None => errors.push(syn::Error::new_spanned(
                        value,
                        "expected `plain_fields = \"optional\"` (the default: only `field_behavior = REQUIRED` fields of the services exposed whole are required) or `plain_fields = \"required\"` (every field that is not `optional` or in a oneof)",
                    )),
                }
            } else if key == INCLUDE || key == EXCLUDE {
                // include = ["links_*"], exclude = ["*_delete"]
                let (list, example) = if key == INCLUDE {
                    (&mut include, INCLUDE_EXAMPLE)
                } else {
                    exclude_key.get_or_insert(key.span());
                    (&mut exclude, EXCLUDE_EXAMPLE)
                };
                if list.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        format!("duplicate `{key}` argument"),
                    ));
                }
                let patterns = string_array(value, example, &mut errors);
                if list.is_none() {
                    *list = Some(patterns);
                }
            } else if key == READ_ONLY {
                // read_only = true
                if read_only_key.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "duplicate `read_only` argument",
                    ));
                }
                read_only_key.get_or_insert(key.span());
                match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Bool(choice),
                        ..
                    }) => read_only = read_only.or(Some(choice)),
                    other => errors.push(syn::Error::new_spanned(
                        other,
                        "expected `read_only = true` (keep only the tools whose hints say read-only: `idempotency_level = NO_SIDE_EFFECTS`, or an overlay's `read_only = true`) or `read_only = false`",
                    )),
                }
            } else {
                errors.push(syn::Error::new(
                    key.span(),
                    format!("unknown ai_tools argument `{key}`; {KEYS}"),
                ));
            }
        }
        if let Some(key) = plain_fields_key
            && services.as_ref().is_none_or(Vec::is_empty)
        {
            errors.push(syn::Error::new(
                key,
                "`plain_fields` is for the services exposed whole: add `services = [\"pkg.Service\", ...]`, or remove it",
            ));
        }
        match errors.finish() {
            Some(error) => Err(error),
            None => Ok(MacroInput {
                path,
                includes: includes.unwrap_or_default(),
                overlay,
                services: services.unwrap_or_default(),
                plain_fields: plain_fields.unwrap_or_default(),
                include: include.unwrap_or_default(),
                exclude: exclude.unwrap_or_default(),
                exclude_key,
                read_only,
            }),
        }
    }
}

/// `key = value`, the value any expression.
fn key_value(input: ParseStream) -> syn::Result<(syn::Ident, Expr)> {
    let key: syn::Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let value: Expr = input.parse()?;
    Ok((key, value))
}

/// What `string_array` shows for each key.
const INCLUDES_EXAMPLE: &str = "includes = [\"proto\", \"third_party\"]";
const SERVICES_EXAMPLE: &str = "services = [\"pkg.v1.Service\"]";
const INCLUDE_EXAMPLE: &str = "include = [\"links_*\", \"pkg.v1.Service/*\"]";
const EXCLUDE_EXAMPLE: &str = "exclude = [\"*_delete\"]";

/// The strings of an array argument (`includes = [...]`, `services`,
/// `include`, `exclude`), `example` showing one; each element that is not
/// a string literal is an error of its own.
fn string_array(value: Expr, example: &str, errors: &mut Errors) -> Vec<LitStr> {
    let Expr::Array(array) = value else {
        errors.push(syn::Error::new_spanned(
            value,
            format!("expected an array of string literals, e.g. `{example}`"),
        ));
        return Vec::new();
    };
    let mut dirs = Vec::with_capacity(array.elems.len());
    for element in array.elems {
        match element {
            Expr::Lit(ExprLit {
                lit: Lit::Str(dir), ..
            }) => dirs.push(dir),
            other => errors.push(syn::Error::new_spanned(other, "expected a string literal")),
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: proc_macro2::TokenStream) -> syn::Result<MacroInput> {
        syn::parse2(tokens)
    }

    #[test]
    fn path_only() {
        let input = parse(quote::quote!("proto/a.proto")).unwrap();
        assert_eq!(input.path.value(), "proto/a.proto");
        assert!(input.includes.is_empty());
    }

    #[test]
    fn path_and_includes_with_trailing_comma() {
        let input = parse(quote::quote!(
            "a.proto",
            includes = ["proto", "third_party"],
        ))
        .unwrap();
        let dirs: Vec<String> = input.includes.iter().map(LitStr::value).collect();
        assert_eq!(dirs, ["proto", "third_party"]);
    }

    #[test]
    fn rejects_what_is_not_a_string() {
        let error = parse(quote::quote!(some_path)).err().unwrap();
        assert!(error.to_string().contains("expected a string literal"));
        let error = parse(quote::quote!()).err().unwrap();
        assert!(error.to_string().contains("expected the path"));
    }

    #[test]
    fn rejects_unknown_and_duplicate_keys() {
        let error = parse(quote::quote!("a.proto", include_dirs = ["x"]))
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .contains("unknown ai_tools argument `include_dirs`")
        );
        let error = parse(quote::quote!("a.proto", includes = ["x"], includes = ["y"]))
            .err()
            .unwrap();
        assert!(error.to_string().contains("duplicate `includes`"));
        let error = parse(quote::quote!("a.proto", includes = [1]))
            .err()
            .unwrap();
        assert!(error.to_string().contains("expected a string literal"));
        let error = parse(quote::quote!("a.proto", includes = "proto"))
            .err()
            .unwrap();
        assert!(error.to_string().contains("expected an array"));
    }

    #[test]
    fn overlay_and_services() {
        let input = parse(quote::quote!(
            "a.proto",
            overlay = "a.tools.toml",
            services = ["pkg.A", "pkg.B"]
        ))
        .unwrap();
        assert_eq!(
            input.overlay.map(|o| o.value()).as_deref(),
            Some("a.tools.toml")
        );
        let services: Vec<String> = input.services.iter().map(LitStr::value).collect();
        assert_eq!(services, ["pkg.A", "pkg.B"]);
        let error = parse(quote::quote!(
            "a.proto",
            overlay = ["a.toml"],
            services = "pkg.A"
        ))
        .err()
        .unwrap();
        let messages = messages(error);
        assert!(
            messages[0].contains("path of an overlay file"),
            "{messages:?}"
        );
        assert!(messages[1].contains("expected an array"), "{messages:?}");
    }

    #[test]
    fn plain_fields() {
        let input = parse(quote::quote!(
            "a.proto",
            services = ["pkg.A"],
            plain_fields = "required"
        ))
        .unwrap();
        assert_eq!(input.plain_fields, PlainFields::Required);
        let input = parse(quote::quote!("a.proto", services = ["pkg.A"])).unwrap();
        assert_eq!(input.plain_fields, PlainFields::Optional);
        let error = parse(quote::quote!("a.proto", plain_fields = "required"))
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .contains("`plain_fields` is for the services exposed whole"),
            "{error}"
        );
        let error = parse(quote::quote!(
            "a.proto",
            services = ["pkg.A"],
            plain_fields = "mandatory",
            plain_fields = required
        ))
        .err()
        .unwrap();
        let messages = messages(error);
        assert_eq!(messages.len(), 3, "{messages:#?}");
        assert!(
            messages[0].contains("expected `plain_fields = \"optional\"`"),
            "{messages:?}"
        );
        assert!(
            messages[1].contains("duplicate `plain_fields`"),
            "{messages:?}"
        );
        assert!(
            messages[2].contains("or `plain_fields = \"required\"`"),
            "{messages:?}"
        );
    }

    #[test]
    fn include_exclude_and_read_only() {
        let input = parse(quote::quote!(
            "a.proto",
            include = ["links_*", "pkg.v1.S/*"],
            exclude = ["*_delete"],
            read_only = true,
        ))
        .unwrap();
        let values = |list: &[LitStr]| list.iter().map(LitStr::value).collect::<Vec<_>>();
        assert_eq!(values(&input.include), ["links_*", "pkg.v1.S/*"]);
        assert_eq!(values(&input.exclude), ["*_delete"]);
        assert!(input.exclude_key.is_some());
        assert!(input.read_only.is_some_and(|r| r.value));
        let input = parse(quote::quote!("a.proto")).unwrap();
        assert!(input.include.is_empty() && input.exclude.is_empty());
        assert!(input.exclude_key.is_none() && input.read_only.is_none());

        let error = parse(quote::quote!(
            "a.proto",
            include = "links_*",
            exclude = [links],
            read_only = "yes",
            read_only = true,
            include = ["x"],
        ))
        .err()
        .unwrap();
        let messages = messages(error);
        assert_eq!(messages.len(), 5, "{messages:#?}");
        assert!(
            messages[0].contains("expected an array of string literals, e.g. `include = ["),
            "{messages:?}"
        );
        assert!(
            messages[1].contains("expected a string literal"),
            "{messages:?}"
        );
        assert!(
            messages[2].contains("expected `read_only = true`"),
            "{messages:?}"
        );
        assert!(
            messages[3].contains("duplicate `read_only`"),
            "{messages:?}"
        );
        assert!(messages[4].contains("duplicate `include`"), "{messages:?}");
    }

    fn messages(error: syn::Error) -> Vec<String> {
        error.into_iter().map(|error| error.to_string()).collect()
    }

    #[test]
    fn every_mistake_is_reported() {
        let error = parse(quote::quote!(
            some_path,
            include_dirs = ["x"],
            includes = [1, "ok", two],
            includes = ["y"],
        ))
        .err()
        .unwrap();
        let messages = messages(error);
        assert_eq!(messages.len(), 5, "{messages:#?}");
        assert!(messages[0].contains("expected a string literal with the path"));
        assert!(messages[1].contains("unknown ai_tools argument `include_dirs`"));
        assert!(messages[2].contains("expected a string literal"));
        assert!(messages[3].contains("expected a string literal"));
        assert!(messages[4].contains("duplicate `includes`"));
    }

    #[test]
    fn a_syntax_error_ends_the_parse_keeping_earlier_mistakes() {
        let error = parse(quote::quote!(some_path, includes["x"]))
            .err()
            .unwrap();
        let messages = messages(error);
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert!(messages[0].contains("expected a string literal with the path"));
        assert!(messages[1].contains("expected `=`"), "{}", messages[1]);
    }
}
