//! Parameters across the macros: options naming them (by position or by name), and how a
//! traced parameter travels into the runtime's closure and is bound back for the body.

use super::attr::{ArgList, ArgRef};
use super::fn_checks::{scalar_type, Passing};
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, Type};

pub fn private() -> TokenStream {
    quote!(::jaxrs::__private)
}

/// `` `x` (parameter 1) ``, or `parameter 1` when it has no name.
pub fn display_param(names: &[Option<Ident>], i: usize) -> String {
    match &names[i] {
        Some(name) => format!("`{}` (parameter {i})", name.unraw()),
        None => format!("parameter {i}"),
    }
}

/// Resolves an option's parameters to positions, reporting indices out of range, unknown
/// names and repeats. `names`: each parameter's name by position (`None` for a pattern or
/// `self`). Returns each position once, with the span that named it.
pub fn resolve(
    cx: &mut Ctxt,
    fn_name: &Ident,
    list: Option<&ArgList>,
    names: &[Option<Ident>],
) -> Vec<(usize, Span)> {
    let Some(list) = list else {
        return Vec::new();
    };
    let n = names.len();
    let f = fn_name.unraw();
    let key = list.key.unraw();
    let mut resolved: Vec<(usize, Span)> = Vec::new();
    for arg in &list.args {
        let position = match arg {
            ArgRef::Index { index, span } => {
                if *index < n {
                    Some(*index)
                } else {
                    let message = match n {
                        0 => format!("`{f}` has no parameters, so index {index} is out of range"),
                        1 => format!(
                            "`{f}` has 1 parameter, index {index} is out of range: \
                             indices count from 0, so the only one is 0"
                        ),
                        _ => format!(
                            "`{f}` has {n} parameters, index {index} is out of range: \
                             indices count from 0, so the last is {}",
                            n - 1
                        ),
                    };
                    cx.error(*span, message);
                    None
                }
            }
            ArgRef::Name(ident) => {
                let wanted = ident.unraw();
                let found = names
                    .iter()
                    .position(|n| n.as_ref().is_some_and(|n| n.unraw() == wanted));
                if found.is_none() {
                    let list = names
                        .iter()
                        .flatten()
                        .map(|n| format!("`{}`", n.unraw()))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let listing = if list.is_empty() {
                        "it has no named parameters".to_string()
                    } else {
                        format!("its parameters are {list}")
                    };
                    cx.error(
                        ident.span(),
                        format!("`{wanted}` is not a parameter of `{f}`; {listing}"),
                    );
                }
                found
            }
        };
        let Some(position) = position else { continue };
        if resolved.iter().any(|&(p, _)| p == position) {
            cx.error(
                arg.span(),
                format!(
                    "{} is listed twice in `{key}`; name each parameter once",
                    display_param(names, position)
                ),
            );
            continue;
        }
        resolved.push((position, arg.span()));
    }
    resolved
}

/// The type a traced argument has inside the body: Rust scalars become weakly typed arrays.
pub fn traced(ty: &Type) -> TokenStream {
    match scalar_type(ty) {
        Some(_) => {
            let private = private();
            quote!(#private::Array)
        }
        None => quote!(#ty),
    }
}

pub struct Owned {
    pub expr: TokenStream,
    pub ty: Type,
}

/// An owned copy of `*ident: &inner`: `Clone` for sized types (an `Arc` clone for arrays),
/// `Vec<T>` for `&[T]`, `String` for `&str`. The body re-borrows it.
pub fn to_owned(inner: &Type, ident: &Ident) -> Owned {
    let span = inner.span();
    match inner {
        Type::Slice(slice) => {
            let elem = &slice.elem;
            Owned {
                expr: quote_spanned!(span=> ::std::borrow::ToOwned::to_owned(#ident)),
                ty: syn::parse_quote_spanned!(span=> ::std::vec::Vec<#elem>),
            }
        }
        Type::Path(p) if p.path.is_ident("str") => Owned {
            expr: quote_spanned!(span=> ::std::borrow::ToOwned::to_owned(#ident)),
            ty: syn::parse_quote_spanned!(span=> ::std::string::String),
        },
        _ => Owned {
            expr: quote_spanned!(span=> <#inner as ::core::clone::Clone>::clone(#ident)),
            ty: inner.clone(),
        },
    }
}

/// How a traced argument is passed and bound in the body.
pub struct TracedArg {
    /// The value in the tuple of arguments.
    pub value: TokenStream,
    /// Its binding in the closure's tuple pattern.
    pub pat: TokenStream,
    /// Its type there: Rust scalars become arrays.
    pub ty: TokenStream,
    /// `let x: &T = &x;` at the top of the body, for a parameter taken by reference.
    pub rebinding: Option<TokenStream>,
    /// The type that must be a `Tree`, if it is not a Rust scalar.
    pub check: Option<TokenStream>,
}

/// `ident: ty`, taken as `passing`, with `mutability` on the body's binding. `stacked`: the
/// body is an inner function's call, and the inner function's parameters carry `mut`, not
/// these bindings.
pub fn traced_arg(
    ident: &Ident,
    mutability: Option<syn::token::Mut>,
    ty: &Type,
    passing: &Passing,
    stacked: bool,
) -> TracedArg {
    let body_mutability = &if stacked { None } else { mutability };
    let arg = traced_arg_unwrapped(ident, mutability, ty, passing, body_mutability);
    // A bare scalar in a tree is static (jaxrs's `Tree for f32`); a top-level scalar
    // parameter is traced, as JAX traces a Python float passed to jit, so it travels wrapped
    // as a traced leaf and the body sees an array.
    match scalar_type(passing.inner(ty)) {
        Some(_) => {
            let private = private();
            let value = arg.value;
            TracedArg {
                value: quote!(#private::TracedScalar(#value)),
                ..arg
            }
        }
        None => arg,
    }
}

fn traced_arg_unwrapped(
    ident: &Ident,
    mutability: Option<syn::token::Mut>,
    ty: &Type,
    passing: &Passing,
    body_mutability: &Option<syn::token::Mut>,
) -> TracedArg {
    let check = |ty: &Type| scalar_type(ty).is_none().then(|| quote!(#ty));
    match passing {
        // A traced Rust scalar arrives as an array; the body sees a `&Array`, which is `Copy`
        // like the scalar it stands for, so `w - g * lr` can use `lr` more than once. A `mut`
        // one stays an owned `Array`, so it can be reassigned.
        Passing::Value if scalar_type(ty).is_some() && mutability.is_none() => {
            let private = private();
            TracedArg {
                value: quote!(#ident),
                pat: quote!(#ident),
                ty: traced(ty),
                rebinding: Some(quote!(let #ident: &#private::Array = &#ident;)),
                check: None,
            }
        }
        Passing::Value => TracedArg {
            value: quote!(#ident),
            pat: quote!(#body_mutability #ident),
            ty: traced(ty),
            rebinding: None,
            check: check(ty),
        },
        // The tuple holds an owned copy (an `Arc` clone for arrays, a `Vec` for a slice),
        // and the body borrows it back under the parameter's name.
        Passing::Ref { inner, .. } => {
            let owned = to_owned(inner, ident);
            let borrowed = traced(inner);
            TracedArg {
                value: owned.expr,
                pat: quote!(#ident),
                ty: traced(&owned.ty),
                rebinding: Some(quote!(let #body_mutability #ident: &#borrowed = &#ident;)),
                check: check(&owned.ty),
            }
        }
    }
}

/// The statements of the user's body, without its braces, for a generated block that
/// already has its own (a closure's body, after the parameters' rebindings). Nested whole,
/// a one-line body `{ x + 1.0 }` would be the tail of that block, and rustc's `unused_braces`
/// would flag the user's braces (they carry the user's spans) with a suggestion that does not
/// compile.
pub fn body_statements(block: &syn::Block) -> TokenStream {
    let stmts = &block.stmts;
    quote!(#(#stmts)*)
}

/// The name of the generic helper whose instantiations assert `T: Tree`; mixed-site, so the
/// user's body cannot see it.
pub fn assert_tree_ident() -> Ident {
    Ident::new("__jaxrs_assert_tree", Span::mixed_site())
}

/// `let _: fn() = assert_tree::<T>;` at `span`: an unsatisfied `Tree` bound is reported at
/// the user's type.
pub fn tree_check(span: Span, ty: &impl quote::ToTokens) -> TokenStream {
    let assert_tree = assert_tree_ident();
    quote_spanned!(span=> let _: fn() = #assert_tree::<#ty>;)
}

/// The helper and its instantiations, unbraced; empty without checks.
pub fn tree_check_items(checks: &[TokenStream]) -> TokenStream {
    if checks.is_empty() {
        return TokenStream::new();
    }
    let private = private();
    let assert_tree = assert_tree_ident();
    quote! {
        fn #assert_tree<T: #private::Tree>() {}
        #(#checks)*
    }
}

/// The transformed function: its attributes, `#[track_caller]` unless already there, its
/// signature, and `body` in braces that keep the user's span (`block`'s): rustc judges
/// whether an item was written by the user from its first and last tokens, and keeps quiet
/// about generated items (no dead-code or unreachable-`pub` warning for a function nobody
/// calls).
pub fn function(
    attrs: &[syn::Attribute],
    vis: &syn::Visibility,
    sig: &syn::Signature,
    block: &syn::Block,
    body: TokenStream,
) -> TokenStream {
    let track_caller = if attrs.iter().any(|a| a.path().is_ident("track_caller")) {
        TokenStream::new()
    } else {
        // At the user's span, for the same reason as the braces.
        quote_spanned!(sig.fn_token.span=> #[track_caller])
    };
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
    body.set_span(block.brace_token.span.join());
    quote! {
        #(#attrs)*
        #track_caller
        #vis #sig #body
    }
}
