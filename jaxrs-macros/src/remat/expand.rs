//! Generates the rematerialised function from a checked [`RematFn`].
//!
//! For
//!
//! ```text
//! #[remat(policy = dots_saveable, static = n)]
//! fn block(x: &Array, w: &Array, scale: f32, n: usize) -> Array { BODY }
//! ```
//!
//! the output is
//!
//! ```text
//! #[track_caller]
//! fn block(x: &Array, w: &Array, scale: f32, n: usize) -> Array {
//!     /* `let _: fn() = assert_tree::<Array>;` ... one per type, at its span */
//!     ::jaxrs::__private::remat_call(
//!         ::jaxrs::__private::RematPolicy::DotsSaveable,
//!         (::core::clone::Clone::clone(x), ::core::clone::Clone::clone(w), TracedScalar(scale)),
//!         |(x, w, scale): (Array, Array, Array)| -> Array {
//!             let x: &Array = &x;
//!             let w: &Array = &w;
//!             let scale: &Array = &scale;
//!             BODY    // `n` is captured as it is
//!         },
//!     )
//! }
//! ```
//!
//! Transformation attributes below `#[remat]` apply inside it: `#[remat] #[vmap(..)] fn f` is
//! `remat(vmap(f))`. They go on an inner function with the signature and body as written
//! (a traced Rust scalar as `&traced_scalar::f32`, as under `#[jit]`), which the closure calls
//! with every parameter, static ones included.

use super::attr::Policy;
use super::validate::{Param, RematFn};
use crate::common::fn_checks::Output;
use crate::common::params::{self, private, traced_arg};
use crate::common::stacked;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

pub fn expand(f: &RematFn) -> TokenStream {
    let RematFn {
        attrs,
        transforms,
        inner_attrs,
        vis,
        sig,
        block,
        params,
        output,
        policy,
    } = f;
    let private = private();
    let stacked = !transforms.is_empty();

    let mut args = Vec::new();
    let mut pats = Vec::new();
    let mut types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    for p in params.iter().filter(|p| !p.is_static) {
        let arg = traced(p, stacked);
        args.push(arg.value);
        pats.push(arg.pat);
        types.push(arg.ty);
        lets.extend(arg.rebinding);
        if let Some(ty) = arg.check {
            tree_checks.push(params::tree_check(p.ty.span(), &ty));
        }
    }
    let ret = match output {
        Output::Concrete(ty) => {
            tree_checks.push(params::tree_check(ty.span(), ty));
            quote!(-> #ty)
        }
        Output::Opaque => TokenStream::new(),
    };
    let checks = params::tree_check_items(&tree_checks);
    let checks = if checks.is_empty() {
        checks
    } else {
        quote!({ #checks })
    };
    let policy = match policy {
        None | Some(Policy::NothingSaveable) => quote!(#private::RematPolicy::NothingSaveable),
        Some(Policy::DotsSaveable) => quote!(#private::RematPolicy::DotsSaveable),
        Some(Policy::EverythingSaveable) => quote!(#private::RematPolicy::EverythingSaveable),
        Some(Policy::SaveOnlyTheseNames(names)) => {
            quote!(#private::RematPolicy::save_only_these_names([#(#names),*]))
        }
    };
    // The body: the function's own, or, under stacked transformations, a call of an inner
    // function that carries them.
    let inner = if stacked {
        let inputs = params.iter().map(|p| {
            let (ident, mutability) = (&p.ident, &p.mutability);
            let ty = if p.is_static {
                let ty = &p.ty;
                quote!(#ty)
            } else {
                stacked::traced_param_type(&p.ty, &p.passing, p.mutability)
            };
            quote!(#mutability #ident: #ty)
        });
        let args = params.iter().map(|p| {
            let ident = &p.ident;
            quote!(#ident)
        });
        stacked::inner_call(transforms, sig, inputs, args, block)
    } else {
        params::body_statements(block)
    };
    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::remat_call(
            #policy,
            (#(#args,)*),
            |(#(#pats,)*): (#(#types,)*)| #ret {
                #(#lets)*
                #inner
            },
        )
    };
    params::function(attrs, vis, sig, block, body)
}

/// How a traced parameter is passed and bound in the body, as under `#[jit]`. `stacked`: the
/// inner function's parameter carries the `mut`.
fn traced(p: &Param, stacked: bool) -> params::TracedArg {
    traced_arg(&p.ident, p.mutability, &p.ty, &p.passing, stacked)
}
