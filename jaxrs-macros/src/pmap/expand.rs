//! Generates the pmapped function from a checked [`PmapFn`].
//!
//! For
//!
//! ```text
//! #[pmap(axis_name = "d", in_axes = (0, 0, None), donate = params)]
//! pub fn step(params: Params, x: &Array, lr: f32) -> (Params, Array) { BODY }
//! ```
//!
//! the output is `#[jit]`'s, with the runtime's `pmap_call` in place of `jit_call` and the
//! axes of each role's parameters beside them:
//!
//! ```text
//! #[track_caller]
//! pub fn step(params: Params, x: &Array, lr: f32) -> (Params, Array) {
//!     /* `let _: fn() = assert_tree::<Params>;` ... */
//!     ::jaxrs::__private::pmap_call(
//!         step::pmap_site(),
//!         ::jaxrs::__private::PmapSpec {
//!             axis_name: Some("d"),
//!             in_axes: (&(0i64,), &(0i64, None,)),    // donated, kept
//!             out_axes: &0i64,
//!             devices: None,
//!         },
//!         (params,),
//!         (<Array as Clone>::clone(x), lr,),
//!         (),
//!         |(params,): (Params,), (x, lr,): (Array, Array,), _: &()| -> (Params, Array) {
//!             let x: &Array = &x;
//!             let lr: &Array = &lr;
//!             BODY
//!         },
//!     )
//! }
//! pub mod step {
//!     pub fn pmap_site() -> &'static ::jaxrs::__private::PmapSite { /* a static */ }
//! }
//! ```

use super::validate::PmapFn;
use crate::common::fn_checks::Output;
use crate::common::params::{self, private, traced_arg};
use crate::common::stacked;
use crate::jit::expand::{
    checks_block, companion_module, stacked as stacked_body, static_arg, SiteKind,
};
use crate::jit::validate::Role;
use crate::vmap::attr::{AxesValue, Axis};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Index};

pub fn expand(f: &PmapFn) -> TokenStream {
    let PmapFn {
        jit,
        axis_name,
        axes,
        out_axes,
    } = f;
    let name = &jit.sig.ident;
    let private = private();
    let (transforms, attrs) = stacked::split(jit.attrs.clone());
    let statics = Ident::new("__jaxrs_statics", Span::mixed_site());
    let assert_static = Ident::new("__jaxrs_assert_static_arg", Span::mixed_site());

    let mut donated = Group::default();
    let mut kept = Group::default();
    let mut static_keys = Vec::new();
    let mut static_types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    let mut static_checks = Vec::new();
    for (p, axis) in jit.params.iter().zip(axes) {
        let span = p.ty.span();
        match p.role {
            Role::Donated | Role::Kept => {
                let group = if p.role == Role::Donated {
                    &mut donated
                } else {
                    &mut kept
                };
                let arg = traced_arg(
                    &p.ident,
                    p.mutability,
                    &p.ty,
                    &p.passing,
                    !transforms.is_empty(),
                );
                group.args.push(arg.value);
                group.pats.push(arg.pat);
                group.types.push(arg.ty);
                group.axes.push(axis_tokens(*axis));
                lets.extend(arg.rebinding);
                if let Some(ty) = arg.check {
                    tree_checks.push(params::tree_check(span, &ty));
                }
            }
            Role::Static => {
                let index = Index::from(static_keys.len());
                let s = static_arg(p, &index, &statics, !transforms.is_empty());
                static_keys.push(s.key);
                static_types.push(s.ty);
                lets.push(s.binding);
                if let Some(ty) = s.check {
                    static_checks.push(quote_spanned!(span=> let _: fn() = #assert_static::<#ty>;));
                }
            }
        }
    }

    let ret = match &jit.output {
        Output::Concrete(ty) => {
            tree_checks.push(params::tree_check(ty.span(), ty));
            quote!(-> #ty)
        }
        Output::Opaque => TokenStream::new(),
    };
    let checks = checks_block(&tree_checks, &static_checks, &assert_static);
    let statics_pat = if static_keys.is_empty() {
        quote!(_)
    } else {
        quote!(#statics)
    };

    let axis_name = match axis_name {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let out_axes = match out_axes {
        None => quote!(0i64),
        Some(AxesValue::One(a)) => axis_tokens(a.value),
        Some(AxesValue::List { entries, .. }) => {
            let entries = entries.iter().map(|a: &Axis| axis_tokens(a.value));
            quote!((#(#entries,)*))
        }
    };

    let Group {
        args: donated_args,
        pats: donated_pats,
        types: donated_types,
        axes: donated_axes,
    } = donated;
    let Group {
        args: kept_args,
        pats: kept_pats,
        types: kept_types,
        axes: kept_axes,
    } = kept;
    let inner = if transforms.is_empty() {
        params::body_statements(&jit.block)
    } else {
        stacked_body(jit, &transforms)
    };
    let inner_attrs = &jit.inner_attrs;
    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::pmap_call(
            #name::pmap_site(),
            #private::PmapSpec {
                axis_name: #axis_name,
                in_axes: (&(#(#donated_axes,)*), &(#(#kept_axes,)*)),
                out_axes: &#out_axes,
                devices: ::core::option::Option::None,
            },
            (#(#donated_args,)*),
            (#(#kept_args,)*),
            (#(#static_keys,)*),
            |(#(#donated_pats,)*): (#(#donated_types,)*),
             (#(#kept_pats,)*): (#(#kept_types,)*),
             #statics_pat: &(#(#static_types,)*)| #ret {
                #(#lets)*
                #inner
            },
        )
    };
    let mut out = params::function(&attrs, &jit.vis, &jit.sig, &jit.block, body);
    out.extend(companion_module(
        &PMAP_SITE,
        &attrs,
        &jit.vis,
        name,
        &jit.params,
    ));
    out
}

/// `0i64`, `-1i64`, or `None` as an `Option<i64>`.
fn axis_tokens(a: Option<i64>) -> TokenStream {
    match a {
        Some(v) => {
            let lit = Literal::i64_suffixed(v);
            quote!(#lit)
        }
        None => quote!(::core::option::Option::<i64>::None),
    }
}

/// Arguments of one role: as passed, bound in the closure, typed there, and their axes.
#[derive(Default)]
struct Group {
    args: Vec<TokenStream>,
    pats: Vec<TokenStream>,
    types: Vec<TokenStream>,
    axes: Vec<TokenStream>,
}

/// What `#[pmap]`'s companion module holds, as `#[jit]`'s.
pub(crate) const PMAP_SITE: SiteKind = SiteKind {
    transformed: "pmapped",
    accessor: "pmap_site",
    site_type: "PmapSite",
};
