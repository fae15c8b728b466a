//! Procedural macros of ai-tools. Use them through the `ai-tools` crate.

use proc_macro::TokenStream;

/// Expands a proto file into static tool definitions; see the `ai-tools` crate.
#[proc_macro]
pub fn ai_tools(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
