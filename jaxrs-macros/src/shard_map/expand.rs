//! Generates the mapped function from a checked [`ShardMapFn`].
//!
//! For
//!
//! ```text
//! #[shard_map(in_specs = (P!["dp"], P![]), out_specs = P!["dp"], mesh = mesh, static = n)]
//! fn f(x: &Array, w: &Array, n: usize) -> Array { BODY }
//! ```
//!
//! the output is
//!
//! ```text
//! #[track_caller]
//! fn f(x: &Array, w: &Array, n: usize) -> Array {
//!     /* `let _: fn() = assert_tree::<Array>;` ... one per type, at its span */
//!     ::jaxrs::__private::shard_map(|(x, w): (Array, Array)| -> Array {
//!         let x: &Array = &x;
//!         let w: &Array = &w;
//!         BODY    // `n` is captured as it is
//!     })
//!     .in_specs(Shardings::PerChild(vec![shardings(P!["dp"]), shardings(P![])]))
//!     .out_specs(shardings(P!["dp"]))
//!     .mesh(Borrow::<Mesh>::borrow(&(mesh)))
//!     .call_traced((Clone::clone(x), Clone::clone(w)))
//! }
//! ```
//!
//! The options are evaluated at each call, as `jax.shard_map`'s arguments are Python values.
//! Transformation attributes below `#[shard_map]` apply inside it, as under `#[remat]`.

use super::validate::{InSpecs, ShardMapFn};
use crate::common::closure_fn::{closure, Closure};
use crate::common::params::{self, private};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

pub fn expand(s: &ShardMapFn) -> TokenStream {
    let private = private();
    let f = &s.f;
    let Closure {
        checks,
        args,
        pats,
        types,
        ret,
        body,
    } = closure(f);
    // At the expression's span: a value that is no spec is reported where it is written.
    let into = |e: &syn::Expr| quote_spanned!(e.span()=> #private::shardings(#e));
    let in_specs = match &s.in_specs {
        InSpecs::All(e) => into(e),
        InSpecs::PerParam(es) => {
            let entries = es.iter().map(into);
            quote!(#private::Shardings::PerChild(::std::vec![#(#entries),*]))
        }
    };
    let out_specs = into(&s.out_specs);
    let mesh = s
        .mesh
        .as_ref()
        .map(|e| quote!(.mesh(::core::borrow::Borrow::<#private::Mesh>::borrow(&(#e)))));
    let check_vma = s.check_vma.as_ref().map(|e| quote!(.check_vma(#e)));
    let inner_attrs = &f.inner_attrs;
    let call = quote! {
        #(#inner_attrs)*
        #checks
        #private::shard_map(|(#(#pats,)*): (#(#types,)*)| #ret {
            #body
        })
        .in_specs(#in_specs)
        .out_specs(#out_specs)
        #mesh
        #check_vma
        .call_traced((#(#args,)*))
    };
    params::function(&f.attrs, &f.vis, &f.sig, &f.block, call)
}
