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
use super::validate::{Param, RematFn};
use crate::common::fn_checks::Output;
use crate::common::params::{self, private, traced_arg};
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

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

    let mut args = Vec::new();
    let mut pats = Vec::new();
    let mut types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    for p in params.iter().filter(|p| !p.is_static) {
        let arg = traced(p);
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
    params::function(attrs, vis, sig, block, body)
}

/// How a traced parameter is passed and bound in the body, as under `#[jit]`.
fn traced(p: &Param) -> params::TracedArg {
    traced_arg(&p.ident, p.mutability, &p.ty, &p.passing, false)
}
