//! Generates the rematerialised function from a checked [`RematFn`].
//!
//! For
//!
//! ```ignore
//! #[remat(policy = dots_saveable, static = n)]
//! fn block(x: &Array, w: &Array, scale: f32, n: usize) -> Array { BODY }
//! ```
//!
//! the output is
//!
//! ```ignore
//! #[track_caller]
//! fn block(x: &Array, w: &Array, scale: f32, n: usize) -> Array {
//!     /* `let _: fn() = assert_tree::<Array>;` ... one per type, at its span */
//!     ::jaxrs::__private::remat_call(
//!         ::jaxrs::__private::RematPolicy::DotsSaveable,
//!         (::core::clone::Clone::clone(x), ::core::clone::Clone::clone(w), scale),
//!         |(x, w, scale): (Array, Array, Array)| -> Array {
//!             let x: &Array = &x;
//!             let w: &Array = &w;
//!             let scale: &Array = &scale;
//!             BODY    // `n` is captured as it is
//!         },
//!     )
//! }
//! ```

use super::attr::Policy;
use super::validate::{is_scalar_type, Output, Param, Passing, RematFn};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

fn private() -> TokenStream {
    quote!(::jaxrs::__private)
}

pub fn expand(f: &RematFn) -> TokenStream {
    let RematFn {
        attrs,
        inner_attrs,
        vis,
        sig,
        block,
        params,
        output,
        policy,
    } = f;
    let private = private();
    let assert_tree = Ident::new("__jaxrs_assert_tree", Span::mixed_site());

    let mut args = Vec::new();
    let mut pats = Vec::new();
    let mut types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    for p in params.iter().filter(|p| !p.is_static) {
        let arg = traced_arg(p);
        args.push(arg.value);
        pats.push(arg.pat);
        types.push(arg.ty);
        lets.extend(arg.rebinding);
        if let Some(ty) = arg.check {
            let span = p.ty.span();
            tree_checks.push(quote_spanned!(span=> let _: fn() = #assert_tree::<#ty>;));
        }
    }
    let ret = match output {
        Output::Concrete(ty) => {
            tree_checks.push(quote_spanned!(ty.span()=> let _: fn() = #assert_tree::<#ty>;));
            quote!(-> #ty)
        }
        Output::Opaque => TokenStream::new(),
    };
    let checks = if tree_checks.is_empty() {
        TokenStream::new()
    } else {
        quote!({
            fn #assert_tree<T: #private::Tree>() {}
            #(#tree_checks)*
        })
    };
    let policy = match policy {
        None | Some(Policy::NothingSaveable) => quote!(#private::RematPolicy::NothingSaveable),
        Some(Policy::DotsSaveable) => quote!(#private::RematPolicy::DotsSaveable),
        Some(Policy::EverythingSaveable) => quote!(#private::RematPolicy::EverythingSaveable),
        Some(Policy::SaveOnlyTheseNames(names)) => {
            quote!(#private::RematPolicy::save_only_these_names([#(#names),*]))
        }
    };
    let track_caller = if attrs.iter().any(|a| a.path().is_ident("track_caller")) {
        TokenStream::new()
    } else {
        // At the user's span, so that rustc treats the function as the user's (lints).
        quote_spanned!(sig.fn_token.span=> #[track_caller])
    };
    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::remat_call(
            #policy,
            (#(#args,)*),
            |(#(#pats,)*): (#(#types,)*)| #ret {
                #(#lets)*
                #block
            },
        )
    };
    // The body's braces keep the user's span (see the same in `#[jit]`'s expansion).
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
    body.set_span(block.brace_token.span.join());
    quote! {
        #(#attrs)*
        #track_caller
        #vis #sig #body
    }
}

/// How a traced argument is passed and bound in the body.
struct TracedArg {
    value: TokenStream,
    pat: TokenStream,
    ty: TokenStream,
    rebinding: Option<TokenStream>,
    /// The type that must be a `Tree`, if it is not a Rust scalar.
    check: Option<TokenStream>,
}

/// The type a traced argument has inside the body: Rust scalars become weakly typed arrays.
fn traced(ty: &Type) -> TokenStream {
    if is_scalar_type(ty) {
        let private = private();
        quote!(#private::Array)
    } else {
        quote!(#ty)
    }
}

fn traced_arg(p: &Param) -> TracedArg {
    let ident = &p.ident;
    let mutability = &p.mutability;
    let private = private();
    let check = |ty: &Type| (!is_scalar_type(ty)).then(|| quote!(#ty));
    match &p.passing {
        // A traced Rust scalar arrives as an array; the body sees a `&Array` (`Copy` like the
        // scalar), or an owned `Array` when the binding is `mut`.
        Passing::Value if is_scalar_type(&p.ty) && p.mutability.is_none() => TracedArg {
            value: quote!(#ident),
            pat: quote!(#ident),
            ty: traced(&p.ty),
            rebinding: Some(quote!(let #ident: &#private::Array = &#ident;)),
            check: None,
        },
        Passing::Value => TracedArg {
            value: quote!(#ident),
            pat: quote!(#mutability #ident),
            ty: traced(&p.ty),
            rebinding: None,
            check: check(&p.ty),
        },
        // The tuple holds an owned copy (an `Arc` clone for arrays, a `Vec` for a slice); the
        // body borrows it back under the parameter's name.
        Passing::Ref(inner) => {
            let span = inner.span();
            let (value, owned): (TokenStream, Type) = match &**inner {
                Type::Slice(slice) => {
                    let elem = &slice.elem;
                    (
                        quote_spanned!(span=> ::std::borrow::ToOwned::to_owned(#ident)),
                        syn::parse_quote_spanned!(span=> ::std::vec::Vec<#elem>),
                    )
                }
                _ => (
                    quote_spanned!(span=> <#inner as ::core::clone::Clone>::clone(#ident)),
                    (**inner).clone(),
                ),
            };
            let borrowed = traced(inner);
            TracedArg {
                value,
                pat: quote!(#ident),
                ty: traced(&owned),
                rebinding: Some(quote!(let #mutability #ident: &#borrowed = &#ident;)),
                check: check(&owned),
            }
        }
    }
}
