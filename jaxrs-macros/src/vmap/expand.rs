//! Generates the vmapped function from a checked [`VmapFn`].
//!
//! For
//!
//! ```text
//! #[vmap(in_axes = (None, 0, 0))]
//! pub fn loss(params: &Params, x: &Array, y: Array) -> Array { BODY }
//! ```
//!
//! the output is
//!
//! ```text
//! #[track_caller]
//! pub fn loss(params: &Params, x: &Array, y: Array) -> Array {
//!     /* `let _: fn() = assert_tree::<Array>;` ... for the mapped types and the result */
//!     ::jaxrs::__private::vmap_call(
//!         VmapNames { function: Some("loss"), params: Some(&["x", "y"]) },
//!         &(0i64, 0i64,),                          // the mapped parameters' axes
//!         &0i64,                                   // out_axes
//!         None,                                    // axis_size
//!         None,                                    // axis_name
//!         (<Array as Clone>::clone(x), y,),        // the mapped parameters, owned
//!         |(x, y,): (Array, Array,)| -> Array {    // one example
//!             let x: &Array = &x;
//!             BODY                                 // `params` is captured: unmapped
//!         },
//!     )
//! }
//! ```
//!
//! An unmapped parameter is not passed through the runtime at all: the body captures it, as
//! JAX passes an `in_axes=None` argument through untouched, so it can be of any type (a Rust
//! scalar stays a Rust scalar). Transformation attributes below `#[vmap]` go on an inner
//! function with the original signature and body, which the closure calls.

use super::attr::{AxesValue, Axis};
use super::validate::{Param, VmapFn};
use crate::common::fn_checks::{Output, Passing};
use crate::common::params::{self, private, to_owned};
use crate::common::stacked;
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

pub fn expand(f: &VmapFn) -> TokenStream {
    let VmapFn {
        attrs,
        transforms,
        inner_attrs,
        vis,
        sig,
        original_sig,
        block,
        params,
        output,
        out_axes,
        axis_size,
        axis_name,
    } = f;
    let private = private();
    let name = &sig.ident;
    let name_str = name.unraw().to_string();

    let mut axes = Vec::new();
    let mut names = Vec::new();
    let mut args = Vec::new();
    let mut pats = Vec::new();
    let mut types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    for p in params.iter().filter(|p| p.axis.is_some()) {
        let mapped = mapped_arg(p, !transforms.is_empty());
        axes.push(Literal::i64_suffixed(p.axis.expect("mapped")));
        names.push(p.ident.as_ref().expect("validated").unraw().to_string());
        args.push(mapped.value);
        pats.push(mapped.pat);
        lets.extend(mapped.rebinding);
        let ty = &mapped.ty;
        tree_checks.push(params::tree_check(p.ty.span(), ty));
        types.push(mapped.ty);
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

    let out_axes = match out_axes {
        None => quote!(0i64),
        Some(AxesValue::One(a)) => axis_tokens(a),
        Some(AxesValue::List { entries, .. }) => {
            let entries = entries.iter().map(axis_tokens);
            quote!((#(#entries,)*))
        }
    };
    let axis_size = match axis_size {
        Some(e) => quote!(::core::option::Option::<usize>::Some(#e)),
        None => quote!(::core::option::Option::<usize>::None),
    };
    let axis_name = match axis_name {
        Some(name) => quote!(::core::option::Option::<&str>::Some(#name)),
        None => quote!(::core::option::Option::<&str>::None),
    };

    // The body of one example: the function's own, or, under stacked transformations, a
    // call of an inner function that carries them.
    let example = if transforms.is_empty() {
        params::body_statements(block)
    } else {
        let inputs = original_sig.inputs.iter().map(|a| quote!(#a));
        let call_args = params.iter().map(|p| {
            let ident = p.ident.as_ref().expect("validated: named");
            quote!(#ident)
        });
        stacked::inner_call(transforms, original_sig, inputs, call_args, block)
    };

    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::vmap_call(
            #private::VmapNames {
                function: ::core::option::Option::Some(#name_str),
                params: ::core::option::Option::Some(&[#(#names),*]),
            },
            &(#(#axes,)*),
            &#out_axes,
            #axis_size,
            #axis_name,
            (#(#args,)*),
            |(#(#pats,)*): (#(#types,)*)| #ret {
                #(#lets)*
                #example
            },
        )
    };
    params::function(attrs, vis, sig, block, body)
}

/// `0i64`, `-1i64`, or `None` as an `Option<i64>`.
fn axis_tokens(a: &Axis) -> TokenStream {
    match a.value {
        Some(v) => {
            let lit = Literal::i64_suffixed(v);
            quote!(#lit)
        }
        None => quote!(::core::option::Option::<i64>::None),
    }
}

/// How a mapped parameter is passed and bound in the body.
struct MappedArg {
    value: TokenStream,
    pat: TokenStream,
    ty: TokenStream,
    rebinding: Option<TokenStream>,
}

/// `stacked`: the body is an inner function's call, and the inner function's parameters
/// carry `mut`, not these bindings.
fn mapped_arg(p: &Param, stacked: bool) -> MappedArg {
    let ident = p
        .ident
        .as_ref()
        .expect("validated: a mapped parameter is named");
    let mutability = &if stacked { None } else { p.mutability };
    match &p.passing {
        Passing::Value => {
            let ty = &p.ty;
            MappedArg {
                value: quote!(#ident),
                pat: quote!(#mutability #ident),
                ty: quote!(#ty),
                rebinding: None,
            }
        }
        // The tuple holds an owned copy (an `Arc` clone for arrays, a `Vec` for a slice);
        // the body borrows it back under the parameter's name.
        Passing::Ref { inner, .. } => {
            let owned = to_owned(inner, ident);
            let (value, ty) = (owned.expr, owned.ty);
            MappedArg {
                value,
                pat: quote!(#ident),
                ty: quote!(#ty),
                rebinding: Some(quote!(let #mutability #ident: &#inner = &#ident;)),
            }
        }
    }
}
