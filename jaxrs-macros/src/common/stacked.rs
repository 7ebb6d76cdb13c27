//! Transformation attributes stacked on one function.
//!
//! Attributes compose like decorators, outermost first: `#[jit] #[vmap(..)] fn f` is
//! `jit(vmap(f))`. Rust expands the outermost attribute first, with the others still on the
//! item, so each transformation macro takes the transformation attributes below it off the
//! function and puts them on an inner function with the same signature and body, which its
//! own expansion calls: they then apply inside it. [`split`] finds them, [`inner_call`] builds
//! the inner function and its call, for #[jit], #[vmap], #[remat] and #[scan] alike.

use super::fn_checks::{bare_type_name, scalar_type, Passing};
use super::params::private;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::token::Mut;
use syn::{Attribute, Block, Ident, Signature, Type};

/// The attribute macros of jaxrs that transform a function.
const TRANSFORMS: &[&str] = &[
    "jit",
    "vmap",
    "grad",
    "value_and_grad",
    "scan",
    "remat",
    "pmap",
    "pjit",
    "shard_map",
];

/// Is `attr` one of jaxrs's transformations (`#[vmap(..)]`, `#[jaxrs::vmap(..)]`, ...)?
pub fn is_transform(attr: &Attribute) -> bool {
    if !matches!(attr.style, syn::AttrStyle::Outer) {
        return false;
    }
    let segments: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segments.as_slice() {
        [name] => TRANSFORMS.contains(&name.as_str()),
        [krate, name] if krate == "jaxrs" => TRANSFORMS.contains(&name.as_str()),
        _ => false,
    }
}

/// Splits the attributes into the transformations (in order) and the others.
pub fn split(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs.into_iter().partition(is_transform)
}

/// The type a traced parameter has on the inner function, so that its body sees the same
/// types as under the outer transformation alone: inside a trace a traced Rust scalar is an
/// array, so `lr: f32` becomes `lr: &traced_scalar::f32` (an `Array` whose name still says it
/// is a scalar), or an owned one for a `mut` binding; any other type stays as written.
pub fn traced_param_type(ty: &Type, passing: &Passing, mutability: Option<Mut>) -> TokenStream {
    let private = private();
    // `f32` -> `f32`, as an identifier for `traced_scalar::f32`.
    let scalar = |ty: &Type| {
        scalar_type(ty)?;
        let name = bare_type_name(ty)?;
        Some(Ident::new(&name, ty.span()))
    };
    match passing {
        Passing::Value => match (scalar(ty), mutability) {
            (Some(s), None) => quote!(&#private::traced_scalar::#s),
            (Some(s), Some(_)) => quote!(#private::traced_scalar::#s),
            (None, _) => quote!(#ty),
        },
        Passing::Ref { inner, .. } => match scalar(inner) {
            Some(s) => quote!(&#private::traced_scalar::#s),
            None => quote!(#ty),
        },
    }
}

/// The body under transformation attributes stacked below another one: an inner function
/// with the name, generics and return type of `sig`, the parameters `inputs` (`mut x: T`)
/// and the user's `block`, carries the `transforms`, and the body calls it with `args`.
///
/// ```text
/// #[jit] #[vmap(in_axes = (0, None))] fn f(x: &Array, lr: f32) -> Array { BODY }
/// // the jitted closure's body:
/// {
///     #[vmap(in_axes = (0, None))]
///     fn f(x: &Array, lr: &::jaxrs::__private::traced_scalar::f32) -> Array { BODY }
///     f(x, lr)
/// }
/// ```
pub fn inner_call(
    transforms: &[Attribute],
    sig: &Signature,
    inputs: impl IntoIterator<Item = TokenStream>,
    args: impl IntoIterator<Item = TokenStream>,
    block: &Block,
) -> TokenStream {
    let name = &sig.ident;
    let generics = &sig.generics;
    let where_clause = &generics.where_clause;
    let output = &sig.output;
    let inputs = inputs.into_iter();
    let args = args.into_iter();
    quote!({
        #(#transforms)*
        fn #name #generics (#(#inputs),*) #output #where_clause #block
        #name(#(#args),*)
    })
}
