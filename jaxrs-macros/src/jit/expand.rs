//! Generates the jitted function from a checked [`JitFn`].
//!
//! For
//!
//! ```text
//! #[jit(donate = params, static = n)]
//! pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) { BODY }
//! ```
//!
//! the output is
//!
//! ```text
//! #[track_caller]
//! pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
//!     /* `let _: fn() = assert_tree::<Params>;` ... one per type, at its span */
//!     ::jaxrs::__private::jit_call(
//!         step::jit_site(),
//!         (params,),                              // donated, in parameter order
//!         (::core::clone::Clone::clone(x), TracedScalar(lr)), // kept: references cloned (an
//!                                                 // Arc clone), scalars traced leaves
//!         (n,),                                   // statics; floats in FloatKey
//!         |(params,): (Params,), (x, lr): (Array, Array), statics: &(usize,)| -> (Params, Array) {
//!             let x: &Array = &x;
//!             let n: usize = ::core::clone::Clone::clone(&statics.0);
//!             BODY
//!         },
//!     )
//! }
//! /// The compile cache of [`step()`]: `step::jit_site()`.
//! pub mod step {
//!     pub fn jit_site() -> &'static ::jaxrs::__private::JitSite { /* a static */ }
//! }
//! ```

use super::validate::{InShardings, JitFn, JitShardingExprs, Param, Role};
use crate::common::fn_checks::{scalar_type, Output, Passing};
use crate::common::params::{self, private, to_owned, traced_arg};
use crate::common::stacked;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, Index, Item, Type, Visibility};

/// The jitted function and its companion module.
pub fn expand(f: &JitFn) -> TokenStream {
    let JitFn {
        attrs,
        inner_attrs,
        vis,
        sig,
        block,
        params,
        output,
        shardings,
    } = f;
    let name = &sig.ident;
    let private = private();
    // Transformations stacked below #[jit] apply inside it.
    let (transforms, attrs) = stacked::split(attrs.clone());
    let attrs = &attrs;
    // Names the expansion introduces; mixed-site so that the user's body cannot see them.
    let statics = Ident::new("__jaxrs_statics", Span::mixed_site());
    let assert_static = Ident::new("__jaxrs_assert_static_arg", Span::mixed_site());

    let mut donated = Group::default();
    let mut kept = Group::default();
    let mut static_keys = Vec::new();
    let mut static_types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    let mut static_checks = Vec::new();

    for p in params {
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
                lets.extend(arg.rebinding);
                if let Some(ty) = arg.check {
                    tree_checks.push(params::tree_check(span, &ty));
                }
            }
            Role::Static => {
                let index = Index::from(static_keys.len());
                let static_arg = static_arg(p, &index, &statics, !transforms.is_empty());
                static_keys.push(static_arg.key);
                static_types.push(static_arg.ty);
                lets.push(static_arg.binding);
                if let Some(ty) = static_arg.check {
                    static_checks.push(quote_spanned!(span=> let _: fn() = #assert_static::<#ty>;));
                }
            }
        }
    }

    let (ret, ret_check) = match output {
        Output::Concrete(ty) => (quote!(-> #ty), Some(params::tree_check(ty.span(), ty))),
        Output::Opaque => (TokenStream::new(), None),
    };
    tree_checks.extend(ret_check);

    // Compile-time checks with errors at the user's types: "`Foo: Tree` is not satisfied"
    // under `x: Foo` reads better than the same about a tuple at the attribute.
    let checks = checks_block(&tree_checks, &static_checks, &assert_static);

    let statics_pat = if static_keys.is_empty() {
        quote!(_)
    } else {
        quote!(#statics)
    };
    let Group {
        args: donated_args,
        pats: donated_pats,
        types: donated_types,
    } = donated;
    let Group {
        args: kept_args,
        pats: kept_pats,
        types: kept_types,
    } = kept;
    let companion = companion_module(&JIT_SITE, attrs, vis, name, params);
    let inner = if transforms.is_empty() {
        params::body_statements(block)
    } else {
        stacked(f, &transforms)
    };

    let (call, shardings_arg) = match shardings {
        None => (quote!(jit_call), TokenStream::new()),
        Some(s) => (quote!(jit_call_sharded), sharding_arg(s, params)),
    };
    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::#call(
            #name::jit_site(),
            #shardings_arg
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
    let mut out = params::function(attrs, vis, sig, block, body);
    out.extend(companion);
    out
}

/// `&JitShardings { .. },`: the sharding options, evaluated at each call, with
/// `in_shardings` split by role as `jit_call` takes the arguments.
fn sharding_arg(s: &JitShardingExprs, params: &[Param]) -> TokenStream {
    let private = private();
    let shardings = quote!(#private::Shardings);
    // At the expression's span: a value that is no sharding is reported where it is written.
    let into = |e: &syn::Expr| quote_spanned!(e.span()=> #private::shardings(#e));
    let traced: Vec<&Param> = params.iter().filter(|p| p.role != Role::Static).collect();
    let all = Ident::new("__jaxrs_in_shardings", Span::mixed_site());
    let (prelude, per_param): (TokenStream, Vec<TokenStream>) = match &s.ins {
        InShardings::Unspecified => (
            TokenStream::new(),
            traced
                .iter()
                .map(|_| quote!(#shardings::Unspecified))
                .collect(),
        ),
        InShardings::All(e) => {
            let value = into(e);
            (
                quote!(let #all: #shardings = #value;),
                traced
                    .iter()
                    .map(|_| quote!(::core::clone::Clone::clone(&#all)))
                    .collect(),
            )
        }
        InShardings::PerParam(es) => (TokenStream::new(), es.iter().map(into).collect()),
    };
    let role = |r: Role| {
        let entries = traced
            .iter()
            .zip(&per_param)
            .filter(|(p, _)| p.role == r)
            .map(|(_, e)| e);
        quote!(#shardings::PerChild(::std::vec![#(#entries),*]))
    };
    let (donated, kept) = (role(Role::Donated), role(Role::Kept));
    let out = match &s.out {
        Some(e) => into(e),
        None => quote!(#shardings::Unspecified),
    };
    let mesh = match &s.mesh {
        Some(e) => quote! {
            ::core::option::Option::Some(::core::clone::Clone::clone(
                ::core::borrow::Borrow::<#private::Mesh>::borrow(&(#e)),
            ))
        },
        None => quote!(::core::option::Option::None),
    };
    quote! {
        &{
            #prelude
            #private::JitShardings {
                mesh: #mesh,
                donated: #donated,
                kept: #kept,
                out: #out,
            }
        },
    }
}

/// The body under transformation attributes stacked below #[jit]: an inner function with
/// the same name, signature and body carries them, and the body calls it (see
/// [`stacked::inner_call`]). A traced Rust scalar is an array inside the jitted body, so the
/// inner function takes it as `&traced_scalar::f32`; a static parameter keeps its type.
pub(crate) fn stacked(f: &JitFn, transforms: &[Attribute]) -> TokenStream {
    let inputs = f.params.iter().map(|p| {
        let ident = &p.ident;
        let mutability = &p.mutability;
        let ty = match p.role {
            Role::Static => {
                let ty = &p.ty;
                quote!(#ty)
            }
            Role::Donated | Role::Kept => {
                stacked::traced_param_type(&p.ty, &p.passing, p.mutability)
            }
        };
        quote!(#mutability #ident: #ty)
    });
    let args = f.params.iter().map(|p| {
        let ident = &p.ident;
        quote!(#ident)
    });
    stacked::inner_call(transforms, &f.sig, inputs, args, &f.block)
}

/// The block of compile-time checks ahead of the call: each tree type's, then each static
/// argument's against `assert_static` (the bounds of `StaticArgs`); nothing when there are none.
pub(crate) fn checks_block(
    tree_checks: &[TokenStream],
    static_checks: &[TokenStream],
    assert_static: &Ident,
) -> TokenStream {
    let mut checks = params::tree_check_items(tree_checks);
    if !static_checks.is_empty() {
        checks.extend(quote! {
            fn #assert_static<T>()
            where
                T: ::core::hash::Hash
                    + ::core::cmp::Eq
                    + ::core::fmt::Debug
                    + ::core::clone::Clone
                    + ::core::marker::Send
                    + ::core::marker::Sync
                    + 'static,
            {
            }
            #(#static_checks)*
        });
    }
    if !checks.is_empty() {
        checks = quote!({ #checks });
    }
    checks
}

/// The compile cache a companion module holds: `#[jit]`'s or `#[pmap]`'s.
pub(crate) struct SiteKind {
    /// What the function is called in the module's doc ("jitted").
    pub(crate) transformed: &'static str,
    /// The module's function returning the site (`jit_site`).
    pub(crate) accessor: &'static str,
    /// The runtime's site type (`JitSite`).
    pub(crate) site_type: &'static str,
}

pub(crate) const JIT_SITE: SiteKind = SiteKind {
    transformed: "jitted",
    accessor: "jit_site",
    site_type: "JitSite",
};

/// `mod name { pub fn jit_site() -> &'static JitSite }` (`pmap_site`, `PmapSite` for
/// `#[pmap]`), next to the function: a module lives
/// in the type namespace, so it coexists with the function of the same name. Emitted on the
/// error path too (with no `params`), so that uses of `name::jit_site()` do not add errors of
/// their own. The site knows the parameters' names by role, for its recompile explanations.
pub(crate) fn companion_module(
    kind: &SiteKind,
    fn_attrs: &[Attribute],
    vis: &Visibility,
    name: &Ident,
    params: &[Param],
) -> TokenStream {
    let private = private();
    let name_str = name.unraw().to_string();
    // The function may exist only under some cfg; so must its module.
    let cfgs = fn_attrs.iter().filter(|a| a.path().is_ident("cfg"));
    let (transformed, accessor) = (kind.transformed, kind.accessor);
    let mod_doc = format!(
        "The compile cache of the {transformed} function [`{name_str}()`]: \
         `{name_str}::{accessor}()`."
    );
    let fn_doc = format!(
        "The compile cache of [`{name_str}()`](super::{name_str}()): its counters and why \
         it last recompiled."
    );
    let site = format_ident!("SITE");
    let accessor = format_ident!("{accessor}");
    let site_type = format_ident!("{}", kind.site_type);
    // As visible as the function; `pub(crate)` rather than `pub` inside a private module, so
    // that `unreachable_pub` has nothing to say.
    let site_vis = match vis {
        Visibility::Public(_) => quote!(pub),
        _ => quote!(pub(crate)),
    };
    let location = quote!(::core::concat!(::core::file!(), ":", ::core::line!()));
    let site_value = if params.is_empty() {
        quote!(#private::#site_type::new(#name_str, #location))
    } else {
        let names = |role: Role| {
            let names = params
                .iter()
                .filter(|p| p.role == role)
                .map(|p| p.ident.unraw().to_string());
            quote!(&[#(#names),*])
        };
        let (donated, kept, statics) =
            (names(Role::Donated), names(Role::Kept), names(Role::Static));
        quote! {
            #private::#site_type::with_params(
                #name_str,
                #location,
                #private::JitParams { donated: #donated, kept: #kept, statics: #statics },
            )
        }
    };
    quote! {
        #(#cfgs)*
        #[doc = #mod_doc]
        #vis mod #name {
            #[doc = #fn_doc]
            #[allow(dead_code)]
            #site_vis fn #accessor() -> &'static #private::#site_type {
                static #site: #private::#site_type = #site_value;
                &#site
            }
        }
    }
}

/// The companion module of an item that failed to expand, when it is a free function (its
/// callers' `name::jit_site()` must still resolve); see [`crate::common::entry`].
pub(crate) fn companion_on_error(kind: &SiteKind, item: &Item) -> Option<TokenStream> {
    match item {
        Item::Fn(f) if !matches!(f.sig.inputs.first(), Some(FnArg::Receiver(_))) => {
            Some(companion_module(kind, &f.attrs, &f.vis, &f.sig.ident, &[]))
        }
        _ => None,
    }
}

/// Arguments of one role, as passed (`args`), bound in the closure (`pats`) and typed there.
#[derive(Default)]
struct Group {
    args: Vec<TokenStream>,
    pats: Vec<TokenStream>,
    types: Vec<TokenStream>,
}

/// How a static argument enters the cache key and comes back out in the body.
pub(crate) struct StaticArg {
    /// The value in the `statics` tuple.
    pub key: TokenStream,
    /// Its type.
    pub ty: TokenStream,
    /// `let x: T = ...;` at the top of the body.
    pub binding: TokenStream,
    /// The type that must be `Hash + Eq + Debug + Clone + Send + Sync + 'static`, if any.
    pub check: Option<TokenStream>,
}

pub(crate) fn static_arg(p: &Param, index: &Index, statics: &Ident, stacked: bool) -> StaticArg {
    let private = private();
    let ident = &p.ident;
    let mutability = &if stacked { None } else { p.mutability };
    let ty = &p.ty;
    let span = ty.span();
    let float = |t: &Type| scalar_type(t).is_some_and(|s| s.float);
    match &p.passing {
        Passing::Value if float(ty) => StaticArg {
            key: quote!(#private::FloatKey(#ident)),
            ty: quote!(#private::FloatKey<#ty>),
            binding: quote!(let #mutability #ident: #ty = #statics.#index.0;),
            check: None,
        },
        Passing::Value => StaticArg {
            key: quote!(#ident),
            ty: quote!(#ty),
            binding: quote_spanned! {span=>
                let #mutability #ident: #ty = ::core::clone::Clone::clone(&#statics.#index);
            },
            check: Some(quote!(#ty)),
        },
        Passing::Ref { inner, .. } if float(inner) => StaticArg {
            key: quote!(#private::FloatKey(*#ident)),
            ty: quote!(#private::FloatKey<#inner>),
            binding: quote!(let #mutability #ident: &#inner = &#statics.#index.0;),
            check: None,
        },
        // `&'static T` is itself a fine key, and the body may rely on the `'static`.
        Passing::Ref {
            static_lifetime: true,
            ..
        } => StaticArg {
            key: quote!(#ident),
            ty: quote!(#ty),
            binding: quote!(let #mutability #ident: #ty = #statics.#index;),
            check: Some(quote!(#ty)),
        },
        Passing::Ref { inner, .. } => {
            let owned = to_owned(inner, ident);
            let owned_ty = &owned.ty;
            StaticArg {
                key: owned.expr,
                ty: quote!(#owned_ty),
                binding: quote!(let #mutability #ident: &#inner = &#statics.#index;),
                check: Some(quote!(#owned_ty)),
            }
        }
    }
}
