//! Procedural macros of ai-tools. Use them through the `proto-ai-tools` crate, which
//! documents them and re-exports them: `proto_ai_tools::ai_tools!`.

mod cache;
mod compile;
mod errors;
mod expand;
mod input;
mod locate;
mod tool_input;

use std::path::PathBuf;

use proc_macro::TokenStream;

// The documentation is the `proto-ai-tools` crate's, on its re-export: a doc
// comment here would be appended to it. The arguments are parsed inside
// `expand::ai_tools`, not with `parse_macro_input!`, so that a mistake in
// them still gets the stand-in items beside its error.
#[proc_macro]
pub fn ai_tools(input: TokenStream) -> TokenStream {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let invoking_file_dir = invoking_file_dir();
    expand::ai_tools(input.into(), &manifest_dir, invoking_file_dir.as_deref()).into()
}

/// Derives `proto_ai_tools::ToolInput`: a tool input's schema from a Rust struct or
/// enum and its serde attributes. Documented in the `proto-ai-tools` crate.
#[proc_macro_derive(ToolInput, attributes(tool))]
pub fn derive_tool_input(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    tool_input::derive(&input).into()
}

/// The directory of the source file that invokes the macro, made absolute
/// (rustc reports workspace members' files relative to its working directory).
fn invoking_file_dir() -> Option<PathBuf> {
    let file = proc_macro::Span::call_site().local_file()?;
    let file = if file.is_absolute() {
        file
    } else {
        std::env::current_dir().ok()?.join(file)
    };
    file.parent().map(PathBuf::from)
}
