//! The pipeline of `ai_tools!`: input → locate → compile → model → check → expand.

use std::path::Path;

use ai_tools_schema::{Dialect, FieldAlias, ToolSpec};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::compile::{self, Compiled};
use crate::input::MacroInput;
use crate::locate;

/// Methods of the generated `Executor` that a tool's own method must not shadow.
const EXECUTOR_METHODS: &[&str] = &[
    "new",
    "with_alias_manager",
    "execute",
    "can_execute",
    "alias_manager",
    "tools",
    "descriptor_pool",
];

/// Runs the whole pipeline; every error becomes a `compile_error!` beside
/// stub items, so code that uses the generated names shows only the real error.
pub fn ai_tools(
    input: &MacroInput,
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
) -> TokenStream {
    match generate(input, manifest_dir, invoking_file_dir) {
        Ok(tokens) => tokens,
        Err(error) => {
            let compile_error = error.into_compile_error();
            let fallback = fallback();
            quote! { #compile_error #fallback }
        }
    }
}

fn generate(
    input: &MacroInput,
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
) -> syn::Result<TokenStream> {
    let at_path = |message: String| syn::Error::new(input.path.span(), message);
    let includes: Vec<String> = input.includes.iter().map(syn::LitStr::value).collect();
    let located = locate::locate(
        &input.path.value(),
        &includes,
        manifest_dir,
        invoking_file_dir,
    )
    .map_err(at_path)?;
    let compiled = compile::compile(&located).map_err(at_path)?;
    let tools = ai_tools_schema::tools_in_file(&compiled.pool, &compiled.file_name).map_err(
        |diagnostics| {
            let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
            at_path(messages.join("\n"))
        },
    )?;
    let rendered = render_checked(&tools).map_err(at_path)?;
    let names = rust_names(&tools).map_err(at_path)?;
    Ok(expand(&compiled, &tools, &rendered, &names))
}

/// Each tool's parameters in every dialect, as minified JSON text, checked by
/// that dialect's checker: a rendering a provider would refuse never compiles.
struct Rendered {
    canonical: String,
    openai: String,
    anthropic: String,
    gemini: String,
    gemini_json_schema: String,
}

fn render_checked(tools: &[ToolSpec]) -> Result<Vec<Rendered>, String> {
    let mut errors = Vec::new();
    let mut all = Vec::with_capacity(tools.len());
    for tool in tools {
        let mut render = |dialect: Dialect| {
            let schema = tool.render(dialect);
            for violation in ai_tools_schema::check::check(dialect, tool.strict, &schema) {
                errors.push(format!(
                    "tool `{}` cannot be rendered for {dialect}: {violation}",
                    tool.name
                ));
            }
            schema.to_string()
        };
        all.push(Rendered {
            canonical: render(Dialect::JsonSchema),
            openai: render(Dialect::OpenAi),
            anthropic: render(Dialect::Anthropic),
            gemini: render(Dialect::Gemini),
            gemini_json_schema: render(Dialect::GeminiJsonSchema),
        });
    }
    if errors.is_empty() {
        Ok(all)
    } else {
        Err(errors.join("\n"))
    }
}

/// The Rust names of one tool's items.
struct RustNames {
    /// `LINKS_CREATE`
    static_name: syn::Ident,
    /// `links_create`
    method_name: syn::Ident,
}

fn rust_names(tools: &[ToolSpec]) -> Result<Vec<RustNames>, String> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    let mut names = Vec::with_capacity(tools.len());
    for tool in tools {
        let snake = tool.name.replace('-', "_").to_lowercase();
        if let Some((_, first)) = seen.iter().find(|(name, _)| *name == snake) {
            return Err(format!(
                "tools `{first}` and `{}` both become the Rust name `{snake}`; rename one of them",
                tool.name
            ));
        }
        seen.push((snake.clone(), &tool.name));
        let method = if EXECUTOR_METHODS.contains(&snake.as_str()) {
            format!("{snake}_tool")
        } else {
            snake.clone()
        };
        names.push(RustNames {
            static_name: format_ident!("{}", snake.to_uppercase()),
            method_name: ident_allowing_keywords(&method),
        });
    }
    Ok(names)
}

fn ident_allowing_keywords(name: &str) -> syn::Ident {
    match syn::parse_str::<syn::Ident>(name) {
        Ok(ident) => ident,
        // `self`, `super`, `crate` and `Self` cannot be raw identifiers.
        Err(_) if matches!(name, "self" | "super" | "crate") => format_ident!("{name}_"),
        Err(_) => syn::Ident::new_raw(name, Span::call_site()),
    }
}

fn expand(
    compiled: &Compiled,
    tools: &[ToolSpec],
    rendered: &[Rendered],
    names: &[RustNames],
) -> TokenStream {
    let watched = compiled.read_files.iter().map(|path| {
        let path = path.display().to_string();
        quote! { const _: &[u8] = ::core::include_bytes!(#path); }
    });
    let pool_bytes = Literal::byte_string(&compiled.encoded_pool);
    let statics = tools
        .iter()
        .zip(rendered)
        .zip(names)
        .map(|((tool, rendered), names)| tool_static(tool, rendered, &names.static_name));
    let static_names: Vec<&syn::Ident> = names.iter().map(|names| &names.static_name).collect();
    let count = tools.len();
    let methods = tools.iter().zip(names).map(|(tool, names)| {
        let name = &tool.name;
        let method = &names.method_name;
        let doc = format!(
            "Runs the tool `{name}`, {}: the same as [`Executor::execute`] with that name and `args` as its JSON arguments.",
            rpc_of(tool)
        );
        let description = doc_lines(&tool.description);
        quote! {
            #description
            #[doc = ""]
            #[doc = #doc]
            pub async fn #method(&self, args: ::ai_tools::__private::serde_json::Value) -> ::ai_tools::ToolResult {
                self.inner.execute_value(#name, args).await
            }
        }
    });
    let file_doc = format!(
        "All the tools of `{}`, in declaration order.",
        compiled.file_name
    );
    quote! {
        #(#watched)*

        #[doc(hidden)]
        pub static __AI_TOOLS_POOL: ::ai_tools::__private::LazyLock<::ai_tools::__private::DescriptorPool> =
            ::ai_tools::__private::LazyLock::new(|| ::ai_tools::__private::decode_pool(#pool_bytes));

        #(#statics)*

        #[doc = #file_doc]
        pub static ALL_TOOLS: [&::ai_tools::AgentTool; #count] = [#(&#static_names),*];

        #[doc = #file_doc]
        pub fn all_tools() -> &'static [&'static ::ai_tools::AgentTool] {
            &ALL_TOOLS
        }

        /// The descriptors of the proto and everything it imports, decoded once.
        pub fn descriptor_pool() -> &'static ::ai_tools::__private::DescriptorPool {
            &__AI_TOOLS_POOL
        }

        #[doc = "Runs a model's tool calls as gRPC calls, with UUIDs shown to the model as aliases."]
        #[doc = ""]
        #[doc = "One executor per conversation: its [`AliasManager`](::ai_tools::AliasManager) is that conversation's alias namespace."]
        pub struct Executor<T> {
            inner: ::ai_tools::ProtoExecutor<T>,
        }

        #[automatically_derived]
        impl<T: ::core::clone::Clone> ::core::clone::Clone for Executor<T> {
            fn clone(&self) -> Self {
                Executor { inner: ::core::clone::Clone::clone(&self.inner) }
            }
        }

        impl<T: ::ai_tools::Transport> Executor<T> {
            /// An executor with a fresh alias namespace.
            pub fn new(transport: T) -> Self {
                Executor {
                    inner: ::ai_tools::ProtoExecutor::new(all_tools(), &__AI_TOOLS_POOL, transport),
                }
            }

            /// An executor that shares `aliases` (one conversation's namespace).
            pub fn with_alias_manager(
                transport: T,
                aliases: ::std::sync::Arc<::ai_tools::AliasManager>,
            ) -> Self {
                Executor {
                    inner: ::ai_tools::ProtoExecutor::with_alias_manager(
                        all_tools(),
                        &__AI_TOOLS_POOL,
                        transport,
                        aliases,
                    ),
                }
            }

            /// Runs the tool `tool` with the model's JSON arguments; every failure is an error result.
            pub async fn execute(&self, tool: &str, args_json: &str) -> ::ai_tools::ToolResult {
                self.inner.execute(tool, args_json).await
            }

            /// Whether `tool` is one of this executor's tools.
            pub fn can_execute(&self, tool: &str) -> bool {
                self.inner.can_execute(tool)
            }

            /// This executor's alias namespace.
            pub fn alias_manager(&self) -> &::std::sync::Arc<::ai_tools::AliasManager> {
                self.inner.alias_manager()
            }

            /// The tools this executor runs.
            pub fn tools(&self) -> &'static [&'static ::ai_tools::AgentTool] {
                all_tools()
            }

            #(#methods)*
        }

        #[automatically_derived]
        impl<T: ::ai_tools::Transport> ::ai_tools::GeneratedTools for Executor<T> {
            fn agent_tools(&self) -> &'static [&'static ::ai_tools::AgentTool] {
                ::ai_tools::GeneratedTools::agent_tools(&self.inner)
            }

            fn aliases(&self) -> &::std::sync::Arc<::ai_tools::AliasManager> {
                ::ai_tools::GeneratedTools::aliases(&self.inner)
            }

            fn execute_tool<'a>(
                &'a self,
                tool: &'a str,
                args_json: &'a str,
            ) -> ::ai_tools::BoxFuture<'a, ::ai_tools::ToolResult> {
                ::ai_tools::GeneratedTools::execute_tool(&self.inner, tool, args_json)
            }
        }

        #[automatically_derived]
        impl<T: ::ai_tools::Transport + ::core::clone::Clone> ::ai_tools::SessionExecutor<T> for Executor<T> {
            fn for_session(
                transport: T,
                aliases: ::std::sync::Arc<::ai_tools::AliasManager>,
            ) -> Self {
                Self::with_alias_manager(transport, aliases)
            }
        }
    }
}

fn tool_static(tool: &ToolSpec, rendered: &Rendered, static_name: &syn::Ident) -> TokenStream {
    let ToolSpec {
        name,
        description,
        strict,
        service,
        method,
        request,
        response,
        ..
    } = tool;
    let Rendered {
        canonical,
        openai,
        anthropic,
        gemini,
        gemini_json_schema,
    } = rendered;
    let doc = doc_lines(description);
    let rpc_doc = format!("Tool `{name}`: {}.", rpc_of(tool));
    let request_aliases = field_prefixes(&tool.request_aliases);
    let response_aliases = field_prefixes(&tool.response_aliases);
    let output_prefix = match &tool.output_prefix {
        Some(prefix) => quote! { ::core::option::Option::Some(#prefix) },
        None => quote! { ::core::option::Option::None },
    };
    // Constructors, not struct literals: the structs are `#[non_exhaustive]`.
    quote! {
        #doc
        #[doc = ""]
        #[doc = #rpc_doc]
        pub static #static_name: ::ai_tools::AgentTool = ::ai_tools::__private::agent_tool(
            #name,
            #description,
            #strict,
            #canonical,
            ::ai_tools::__private::renderings(#openai, #anthropic, #gemini, #gemini_json_schema),
            ::ai_tools::__private::method_ref(#service, #method, #request, #response),
            #request_aliases,
            #response_aliases,
            #output_prefix,
        );
    }
}

fn rpc_of(tool: &ToolSpec) -> String {
    format!("the RPC `{}/{}`", tool.service, tool.method)
}

fn field_prefixes(aliases: &[FieldAlias]) -> TokenStream {
    let entries = aliases.iter().map(|alias| {
        let FieldAlias {
            message,
            field,
            prefix,
        } = alias;
        quote! { ::ai_tools::__private::field_prefix(#message, #field, #prefix) }
    });
    quote! { &[#(#entries),*] }
}

fn doc_lines(text: &str) -> TokenStream {
    let lines = text.lines().map(|line| {
        let line = format!(" {line}");
        quote! { #[doc = #line] }
    });
    quote! { #(#lines)* }
}

/// What stands in for the expansion when the proto has an error.
fn fallback() -> TokenStream {
    quote! {
        /// Stand-in after an error in the proto: no tools.
        pub fn all_tools() -> &'static [&'static ::ai_tools::AgentTool] {
            &[]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_executor_methods_get_usable_names() {
        assert_eq!(ident_allowing_keywords("type").to_string(), "r#type");
        assert_eq!(ident_allowing_keywords("self").to_string(), "self_");
        assert_eq!(
            ident_allowing_keywords("links_create").to_string(),
            "links_create"
        );
    }
}
