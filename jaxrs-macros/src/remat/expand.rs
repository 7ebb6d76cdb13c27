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
use super::validate::RematFn;
use crate::common::closure_fn::{closure, Closure};
use crate::common::params::{self, private};
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(RematFn { f, policy }: &RematFn) -> TokenStream {
    let private = private();
    let Closure {
        checks,
        args,
        pats,
        types,
        ret,
        body,
    } = closure(f);
    let policy = match policy {
        None | Some(Policy::NothingSaveable) => quote!(#private::RematPolicy::NothingSaveable),
        Some(Policy::DotsSaveable) => quote!(#private::RematPolicy::DotsSaveable),
        Some(Policy::EverythingSaveable) => quote!(#private::RematPolicy::EverythingSaveable),
        Some(Policy::SaveOnlyTheseNames(names)) => {
            quote!(#private::RematPolicy::save_only_these_names([#(#names),*]))
        }
    };
    let inner_attrs = &f.inner_attrs;
    let call = quote! {
        #(#inner_attrs)*
        #checks
        #private::remat_call(
            #policy,
            (#(#args,)*),
            |(#(#pats,)*): (#(#types,)*)| #ret {
                #body
            },
        )
    };
    params::function(&f.attrs, &f.vis, &f.sig, &f.block, call)
}
