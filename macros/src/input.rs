//! The macro's arguments: `"path/to/file.proto"` and optional `key = value` pairs.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr, Token};

/// `includes = ["proto", "third_party"]`
const INCLUDES: &str = "includes";

/// What `ai_tools!(...)` was given.
pub struct MacroInput {
    /// The proto file, as written.
    pub path: LitStr,
    /// Include directories, as written; empty means the defaults.
    pub includes: Vec<LitStr>,
}

impl Parse for MacroInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(
                "expected the path of a proto file: `ai_tools!(\"proto/pkg/v1/service.proto\")`",
            ));
        }
        let path = match input.parse::<Expr>()? {
            Expr::Lit(ExprLit {
                lit: Lit::Str(path),
                ..
            }) => path,
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "expected a string literal with the path of a proto file, relative to the crate's `Cargo.toml`",
                ));
            }
        };
        let mut includes = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            if key == INCLUDES {
                if includes.is_some() {
                    return Err(syn::Error::new(key.span(), "duplicate `includes` argument"));
                }
                includes = Some(parse_string_array(input)?);
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown ai_tools argument `{key}`; the only key is `includes = [\"dir\", ...]`"
                    ),
                ));
            }
        }
        Ok(MacroInput {
            path,
            includes: includes.unwrap_or_default(),
        })
    }
}

fn parse_string_array(input: ParseStream) -> syn::Result<Vec<LitStr>> {
    let array: ExprArray = input.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            "expected an array of string literals: `includes = [\"proto\", \"third_party\"]`",
        )
    })?;
    let elements: Punctuated<Expr, Token![,]> = array.elems;
    elements
        .into_iter()
        .map(|element| match element {
            Expr::Lit(ExprLit {
                lit: Lit::Str(dir), ..
            }) => Ok(dir),
            other => Err(syn::Error::new_spanned(
                other,
                "expected a string literal naming an include directory",
            )),
        })
        .collect()
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
        let error = parse(quote::quote!("a.proto", include = ["x"]))
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .contains("unknown ai_tools argument `include`")
        );
        let error = parse(quote::quote!("a.proto", includes = ["x"], includes = ["y"]))
            .err()
            .unwrap();
        assert!(error.to_string().contains("duplicate `includes`"));
        let error = parse(quote::quote!("a.proto", includes = [1]))
            .err()
            .unwrap();
        assert!(error.to_string().contains("include directory"));
    }
}
