//! Reads what the derive needs from `#[serde(...)]`, `#[tool(...)]` and doc
//! comments, collecting every error.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr, Token};

use crate::errors::Errors;

/// `#[tool(...)]`
pub const TOOL: &str = "tool";
/// `#[tool(description = "...")]`
pub const DESCRIPTION: &str = "description";
/// `#[tool(usage_notes = "...")]`
pub const USAGE_NOTES: &str = "usage_notes";
/// `#[tool(alias_prefix = "link")]`
pub const ALIAS_PREFIX: &str = "alias_prefix";
const TOOL_KEYS: &str = "`description`, `usage_notes` or `alias_prefix`";

/// `#[serde(...)]`
const SERDE: &str = "serde";
const RENAME: &str = "rename";
const RENAME_ALL: &str = "rename_all";
const RENAME_ALL_FIELDS: &str = "rename_all_fields";
const DESERIALIZE: &str = "deserialize";
const SKIP: &str = "skip";
const SKIP_DESERIALIZING: &str = "skip_deserializing";
const DEFAULT: &str = "default";
const FLATTEN: &str = "flatten";
const TRANSPARENT: &str = "transparent";
const FROM: &str = "from";
const TRY_FROM: &str = "try_from";
const TAG: &str = "tag";
const CONTENT: &str = "content";
const UNTAGGED: &str = "untagged";
const OTHER: &str = "other";
const WITH: &str = "with";
const DESERIALIZE_WITH: &str = "deserialize_with";
const REMOTE: &str = "remote";

/// A value with the span of the token that set it.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// The `#[tool(...)]` keys of one item.
#[derive(Default)]
pub struct ToolAttrs {
    pub description: Option<Spanned<String>>,
    pub usage_notes: Option<Spanned<String>>,
    pub alias_prefix: Option<Spanned<String>>,
}

impl ToolAttrs {
    pub fn parse(attrs: &[Attribute], errors: &mut Errors) -> Self {
        let mut out = ToolAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident(TOOL)) {
            let result = attr.parse_nested_meta(|meta| {
                let slot = if meta.path.is_ident(DESCRIPTION) {
                    // #[tool(description = "...")]
                    &mut out.description
                } else if meta.path.is_ident(USAGE_NOTES) {
                    // #[tool(usage_notes = "...")]
                    &mut out.usage_notes
                } else if meta.path.is_ident(ALIAS_PREFIX) {
                    // #[tool(alias_prefix = "link")]
                    &mut out.alias_prefix
                } else {
                    let key = path_text(&meta.path);
                    skip_value(&meta)?;
                    errors.at(
                        meta.path.span(),
                        format!("unknown tool attribute `{key}`; expected {TOOL_KEYS}"),
                    );
                    return Ok(());
                };
                let lit: LitStr = meta.value()?.parse()?;
                if slot.is_some() {
                    errors.at(
                        meta.path.span(),
                        format!("duplicate tool attribute `{}`", path_text(&meta.path)),
                    );
                } else {
                    *slot = Some(Spanned {
                        value: lit.value(),
                        span: lit.span(),
                    });
                }
                Ok(())
            });
            if let Err(e) = result {
                errors.push(e);
            }
        }
        out
    }
}

/// How serde renames identifiers (`rename_all`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn from_str(rule: &str) -> Option<Self> {
        Some(match rule {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    /// Renames a `snake_case` field as serde does.
    pub fn field(self, name: &str) -> String {
        match self {
            Self::Lower | Self::Snake => name.to_owned(),
            Self::Upper | Self::ScreamingSnake => name.to_ascii_uppercase(),
            Self::Pascal => {
                let mut out = String::new();
                let mut upper = true;
                for c in name.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Self::Camel => {
                let pascal = Self::Pascal.field(name);
                lower_first(&pascal)
            }
            Self::Kebab => name.replace('_', "-"),
            Self::ScreamingKebab => name.replace('_', "-").to_ascii_uppercase(),
        }
    }

    /// Renames a `PascalCase` variant as serde does.
    pub fn variant(self, name: &str) -> String {
        match self {
            Self::Pascal => name.to_owned(),
            Self::Lower => name.to_ascii_lowercase(),
            Self::Upper => name.to_ascii_uppercase(),
            Self::Camel => lower_first(name),
            Self::Snake => {
                let mut out = String::new();
                for (i, c) in name.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            Self::ScreamingSnake => Self::Snake.variant(name).to_ascii_uppercase(),
            Self::Kebab => Self::Snake.variant(name).replace('_', "-"),
            Self::ScreamingKebab => Self::ScreamingSnake.variant(name).replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// The serde attributes of a struct or enum that change what it accepts.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    pub rename_all_fields: Option<RenameRule>,
    pub default: bool,
    pub transparent: bool,
    /// `from = "T"` or `try_from = "T"`: deserializes as `T`.
    pub from: Option<syn::Type>,
    /// `tag`, `content`, `untagged`, `remote`: not supported; the span of the first.
    pub unsupported: Option<Spanned<&'static str>>,
}

/// The serde attributes of a field or variant.
#[derive(Default)]
pub struct SerdeItem {
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub skip: bool,
    pub default: bool,
    pub flatten: bool,
    pub other: bool,
    /// `with`, `deserialize_with`, `untagged`: what serde does is not knowable here.
    pub unsupported: Option<Spanned<&'static str>>,
}

/// Reads `#[serde(...)]` attributes; malformed ones are serde's to report.
fn each_serde(attrs: &[Attribute], mut f: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<bool>) {
    for attr in attrs.iter().filter(|a| a.path().is_ident(SERDE)) {
        let _ = attr.parse_nested_meta(|meta| {
            if !f(&meta)? {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
}

/// `= "x"` or `(deserialize = "x")`: the name used when deserializing.
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident(DESERIALIZE) {
            let lit: LitStr = inner.value()?.parse()?;
            name = Some(lit.value());
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(name)
}

fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<RenameRule>> {
    Ok(deserialize_name(meta)?.and_then(|rule| RenameRule::from_str(&rule)))
}

/// `default` or `default = "path"`.
fn flag_with_optional_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    }
    Ok(())
}

impl SerdeContainer {
    pub fn parse(attrs: &[Attribute]) -> Self {
        let mut out = SerdeContainer::default();
        each_serde(attrs, |meta| {
            let unsupported = |key: &'static str| Spanned {
                value: key,
                span: meta.path.span(),
            };
            if meta.path.is_ident(RENAME_ALL) {
                // #[serde(rename_all = "camelCase")] / (deserialize = "...")
                out.rename_all = rename_rule(meta)?;
            } else if meta.path.is_ident(RENAME_ALL_FIELDS) {
                // #[serde(rename_all_fields = "camelCase")]
                out.rename_all_fields = rename_rule(meta)?;
            } else if meta.path.is_ident(DEFAULT) {
                // #[serde(default)] / #[serde(default = "path")]
                flag_with_optional_value(meta)?;
                out.default = true;
            } else if meta.path.is_ident(TRANSPARENT) {
                // #[serde(transparent)]
                out.transparent = true;
            } else if meta.path.is_ident(FROM) || meta.path.is_ident(TRY_FROM) {
                // #[serde(from = "Type")] / #[serde(try_from = "Type")]
                let lit: LitStr = meta.value()?.parse()?;
                out.from = lit.parse().ok();
            } else if meta.path.is_ident(TAG) {
                // #[serde(tag = "type")]
                out.unsupported.get_or_insert(unsupported(TAG));
                return Ok(false);
            } else if meta.path.is_ident(CONTENT) {
                // #[serde(content = "data")]
                out.unsupported.get_or_insert(unsupported(CONTENT));
                return Ok(false);
            } else if meta.path.is_ident(UNTAGGED) {
                // #[serde(untagged)]
                out.unsupported.get_or_insert(unsupported(UNTAGGED));
            } else if meta.path.is_ident(REMOTE) {
                // #[serde(remote = "Type")]
                out.unsupported.get_or_insert(unsupported(REMOTE));
                return Ok(false);
            } else {
                return Ok(false);
            }
            Ok(true)
        });
        out
    }
}

impl SerdeItem {
    pub fn parse(attrs: &[Attribute]) -> Self {
        let mut out = SerdeItem::default();
        each_serde(attrs, |meta| {
            let unsupported = |key: &'static str| Spanned {
                value: key,
                span: meta.path.span(),
            };
            if meta.path.is_ident(RENAME) {
                // #[serde(rename = "x")] / #[serde(rename(deserialize = "x"))]
                if let Some(name) = deserialize_name(meta)? {
                    out.rename = Some(name);
                }
            } else if meta.path.is_ident(RENAME_ALL) {
                // #[serde(rename_all = "camelCase")] on a struct variant
                out.rename_all = rename_rule(meta)?;
            } else if meta.path.is_ident(SKIP) || meta.path.is_ident(SKIP_DESERIALIZING) {
                // #[serde(skip)] / #[serde(skip_deserializing)]
                out.skip = true;
            } else if meta.path.is_ident(DEFAULT) {
                // #[serde(default)] / #[serde(default = "path")]
                flag_with_optional_value(meta)?;
                out.default = true;
            } else if meta.path.is_ident(FLATTEN) {
                // #[serde(flatten)]
                out.flatten = true;
            } else if meta.path.is_ident(OTHER) {
                // #[serde(other)]
                out.other = true;
            } else if meta.path.is_ident(WITH) {
                // #[serde(with = "module")]
                out.unsupported.get_or_insert(unsupported(WITH));
                return Ok(false);
            } else if meta.path.is_ident(DESERIALIZE_WITH) {
                // #[serde(deserialize_with = "path")]
                out.unsupported.get_or_insert(unsupported(DESERIALIZE_WITH));
                return Ok(false);
            } else if meta.path.is_ident(UNTAGGED) {
                // #[serde(untagged)] on a variant
                out.unsupported.get_or_insert(unsupported(UNTAGGED));
            } else {
                return Ok(false);
            }
            Ok(true)
        });
        out
    }
}

/// Consumes `= value` or `(...)` after a key we do not read.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.unraw().to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The doc comment: each line without its first space, joined with `\n`,
/// trimmed; `None` if empty.
pub fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            for line in s.value().lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_rules_match_serde() {
        let cases = [
            ("camelCase", "link_id", "linkId", "OutOfStock", "outOfStock"),
            (
                "PascalCase",
                "link_id",
                "LinkId",
                "OutOfStock",
                "OutOfStock",
            ),
            (
                "snake_case",
                "link_id",
                "link_id",
                "OutOfStock",
                "out_of_stock",
            ),
            (
                "SCREAMING_SNAKE_CASE",
                "link_id",
                "LINK_ID",
                "OutOfStock",
                "OUT_OF_STOCK",
            ),
            (
                "kebab-case",
                "link_id",
                "link-id",
                "OutOfStock",
                "out-of-stock",
            ),
            (
                "SCREAMING-KEBAB-CASE",
                "link_id",
                "LINK-ID",
                "OutOfStock",
                "OUT-OF-STOCK",
            ),
            (
                "lowercase",
                "link_id",
                "link_id",
                "OutOfStock",
                "outofstock",
            ),
            (
                "UPPERCASE",
                "link_id",
                "LINK_ID",
                "OutOfStock",
                "OUTOFSTOCK",
            ),
        ];
        for (rule, field, field_out, variant, variant_out) in cases {
            let rule = RenameRule::from_str(rule).unwrap();
            assert_eq!(rule.field(field), field_out);
            assert_eq!(rule.variant(variant), variant_out);
        }
    }

    #[test]
    fn doc_comments_are_joined_and_trimmed() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// First line.
            ///   indented
            ///
            struct S;
        };
        assert_eq!(
            doc_comment(&item.attrs).as_deref(),
            Some("First line.\n  indented")
        );
    }
}
