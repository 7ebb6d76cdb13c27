//! Generates the jitted function from a checked [`JitFn`].
//!
//! For
//!
//! ```ignore
//! #[jit(donate = params, static = n)]
//! pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) { BODY }
//! ```
//!
//! the output is
//!
//! ```ignore
//! #[track_caller]
//! pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
//!     /* `let _: fn() = assert_tree::<Params>;` ... one per type, at its span */
//!     ::jaxrs::__private::jit_call(
//!         step::jit_site(),
//!         (params,),                              // donated, in parameter order
//!         (::core::clone::Clone::clone(x), lr),   // kept: references cloned (an Arc clone)
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

use super::validate::{scalar_type, JitFn, Output, Param, Passing, Role};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Index, Type, Visibility};

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
    } = f;
    let name = &sig.ident;
    let private = private();
    // Transformations stacked below #[jit] apply inside it.
    let (transforms, attrs) = crate::transforms::split(attrs.clone());
    let attrs = &attrs;
    // Names the expansion introduces; mixed-site so that the user's body cannot see them.
    let statics = Ident::new("__jaxrs_statics", Span::mixed_site());
    let assert_tree = Ident::new("__jaxrs_assert_tree", Span::mixed_site());
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
                let arg = traced_arg(p, !transforms.is_empty());
                group.args.push(arg.value);
                group.pats.push(arg.pat);
                group.types.push(arg.ty);
                lets.extend(arg.rebinding);
                if let Some(ty) = arg.check {
                    tree_checks.push(quote_spanned!(span=> let _: fn() = #assert_tree::<#ty>;));
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
        Output::Concrete(ty) => (
            quote!(-> #ty),
            Some(quote_spanned!(ty.span()=> let _: fn() = #assert_tree::<#ty>;)),
        ),
        Output::Opaque => (TokenStream::new(), None),
    };
    tree_checks.extend(ret_check);

    // Compile-time checks with errors at the user's types: "`Foo: Tree` is not satisfied"
    // under `x: Foo` reads better than the same about a tuple at the attribute.
    let mut checks = TokenStream::new();
    if !tree_checks.is_empty() {
        checks.extend(quote! {
            fn #assert_tree<T: #private::Tree>() {}
            #(#tree_checks)*
        });
    }
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

    let statics_pat = if static_keys.is_empty() {
        quote!(_)
    } else {
        quote!(#statics)
    };
    let track_caller = if attrs.iter().any(|a| a.path().is_ident("track_caller")) {
        TokenStream::new()
    } else {
        // At the user's span: an item whose first token came from the macro counts as
        // generated, and rustc then keeps quiet about it (dead code, unreachable `pub`).
        quote_spanned!(sig.fn_token.span=> #[track_caller])
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
    let companion = companion_module(attrs, vis, name);
    let inner = if transforms.is_empty() {
        quote!(#block)
    } else {
        stacked(f, &transforms)
    };

    let body = quote! {
        #(#inner_attrs)*
        #checks
        #private::jit_call(
            #name::jit_site(),
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
    // The body's braces keep the user's span: rustc judges whether an item was written by
    // the user from its first and last tokens, and keeps quiet about generated items (no
    // dead-code or unreachable-`pub` warning for a jitted function nobody calls).
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
    body.set_span(block.brace_token.span.join());

    quote! {
        #(#attrs)*
        #track_caller
        #vis #sig #body
        #companion
    }
}

/// The body under transformation attributes stacked below #[jit]: an inner function with
/// the same name, signature and body carries them, and the body calls it. Inside the jitted
/// body a traced Rust scalar is an array, so the inner function takes it as
/// `&traced_scalar::f32` (an `Array` whose name still says it is a scalar): the body sees
/// the same types as under #[jit] alone.
///
/// ```ignore
/// #[jit] #[vmap(in_axes = (0, None))] fn f(x: &Array, lr: f32) -> Array { BODY }
/// // the jitted closure's body:
/// {
///     #[vmap(in_axes = (0, None))]
///     fn f(x: &Array, lr: &::jaxrs::__private::traced_scalar::f32) -> Array { BODY }
///     f(x, lr)
/// }
/// ```
fn stacked(f: &JitFn, transforms: &[Attribute]) -> TokenStream {
    let private = private();
    let sig = &f.sig;
    let name = &sig.ident;
    let generics = &sig.generics;
    let where_clause = &generics.where_clause;
    let output = &sig.output;
    let block = &f.block;
    let params = f.params.iter().map(|p| {
        let ident = &p.ident;
        let mutability = &p.mutability;
        // `f32` -> `f32`, as an identifier for `traced_scalar::f32`.
        let scalar = |ty: &Type| {
            scalar_type(ty)?;
            let name = crate::jit::validate::bare_type_name(ty)?;
            Some(Ident::new(&name, ty.span()))
        };
        let ty = match (p.role, &p.passing) {
            (Role::Static, _) => {
                let ty = &p.ty;
                quote!(#ty)
            }
            (_, Passing::Value) => match (scalar(&p.ty), mutability) {
                (Some(s), None) => quote!(&#private::traced_scalar::#s),
                (Some(s), Some(_)) => quote!(#private::traced_scalar::#s),
                (None, _) => {
                    let ty = &p.ty;
                    quote!(#ty)
                }
            },
            (_, Passing::Ref { inner, .. }) => match scalar(inner) {
                Some(s) => quote!(&#private::traced_scalar::#s),
                None => {
                    let ty = &p.ty;
                    quote!(#ty)
                }
            },
        };
        quote!(#mutability #ident: #ty)
    });
    let args = f.params.iter().map(|p| &p.ident);
    quote!({
        #(#transforms)*
        fn #name #generics (#(#params),*) #output #where_clause #block
        #name(#(#args),*)
    })
}

/// `mod name { pub fn jit_site() -> &'static JitSite }`, next to the function: a module lives
/// in the type namespace, so it coexists with the function of the same name. Emitted on the
/// error path too, so that uses of `name::jit_site()` do not add errors of their own.
pub fn companion_module(fn_attrs: &[Attribute], vis: &Visibility, name: &Ident) -> TokenStream {
    let private = private();
    let name_str = name.unraw().to_string();
    // The function may exist only under some cfg; so must its module.
    let cfgs = fn_attrs.iter().filter(|a| a.path().is_ident("cfg"));
    let mod_doc = format!(
        "The compile cache of the jitted function [`{name_str}()`]: \
         `{name_str}::jit_site()`."
    );
    let fn_doc = format!(
        "The compile cache of [`{name_str}()`](super::{name_str}()): its counters and why \
         it last recompiled."
    );
    let site = format_ident!("SITE");
    // As visible as the function; `pub(crate)` rather than `pub` inside a private module, so
    // that `unreachable_pub` has nothing to say.
    let site_vis = match vis {
        Visibility::Public(_) => quote!(pub),
        _ => quote!(pub(crate)),
    };
    quote! {
        #(#cfgs)*
        #[doc = #mod_doc]
        #vis mod #name {
            #[doc = #fn_doc]
            #[allow(dead_code)]
            #site_vis fn jit_site() -> &'static #private::JitSite {
                static #site: #private::JitSite = #private::JitSite::new(
                    #name_str,
                    ::core::concat!(::core::file!(), ":", ::core::line!()),
                );
                &#site
            }
        }
    }
}

fn private() -> TokenStream {
    quote!(::jaxrs::__private)
}

/// Arguments of one role, as passed (`args`), bound in the closure (`pats`) and typed there.
#[derive(Default)]
struct Group {
    args: Vec<TokenStream>,
    pats: Vec<TokenStream>,
    types: Vec<TokenStream>,
}

/// The type a traced argument has inside the body: Rust scalars become weakly typed arrays.
fn traced(ty: &Type) -> TokenStream {
    match scalar_type(ty) {
        Some(_) => {
            let private = private();
            quote!(#private::Array)
        }
        None => quote!(#ty),
    }
}

pub(crate) struct Owned {
    pub expr: TokenStream,
    pub ty: Type,
}

/// An owned copy of `*ident: &inner`: `Clone` for sized types (an `Arc` clone for arrays),
/// `Vec<T>` for `&[T]`, `String` for `&str`. The body re-borrows it.
pub(crate) fn to_owned(inner: &Type, ident: &Ident) -> Owned {
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

/// How a traced (donated or kept) argument is passed and bound in the body.
struct TracedArg {
    /// The value in the `donated` or `kept` tuple.
    value: TokenStream,
    /// Its binding in the closure's tuple pattern.
    pat: TokenStream,
    /// Its type there: Rust scalars become arrays.
    ty: TokenStream,
    /// `let x: &T = &x;` at the top of the body, for a parameter taken by reference.
    rebinding: Option<TokenStream>,
    /// The type that must be a `Tree`, if it is not a Rust scalar.
    check: Option<TokenStream>,
}

/// `stacked`: the body is an inner function's call, and the inner function's parameters
/// carry `mut`, not these bindings.
fn traced_arg(p: &Param, stacked: bool) -> TracedArg {
    let ident = &p.ident;
    let mutability = &if stacked { None } else { p.mutability };
    let check = |ty: &Type| scalar_type(ty).is_none().then(|| quote!(#ty));
    match &p.passing {
        // A traced Rust scalar arrives as an array; the body sees a `&Array`, which is `Copy`
        // like the scalar it stands for, so `w - g * lr` can use `lr` more than once. A `mut`
        // one stays an owned `Array`, so it can be reassigned.
        Passing::Value if scalar_type(&p.ty).is_some() && p.mutability.is_none() => {
            let private = private();
            TracedArg {
                value: quote!(#ident),
                pat: quote!(#ident),
                ty: traced(&p.ty),
                rebinding: Some(quote!(let #ident: &#private::Array = &#ident;)),
                check: None,
            }
        }
        Passing::Value => TracedArg {
            value: quote!(#ident),
            pat: quote!(#mutability #ident),
            ty: traced(&p.ty),
            rebinding: None,
            check: check(&p.ty),
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
                rebinding: Some(quote!(let #mutability #ident: &#borrowed = &#ident;)),
                check: check(&owned.ty),
            }
        }
    }
}

/// How a static argument enters the cache key and comes back out in the body.
struct StaticArg {
    /// The value in the `statics` tuple.
    key: TokenStream,
    /// Its type.
    ty: TokenStream,
    /// `let x: T = ...;` at the top of the body.
    binding: TokenStream,
    /// The type that must be `Hash + Eq + Debug + Clone + Send + Sync + 'static`, if any.
    check: Option<TokenStream>,
}

fn static_arg(p: &Param, index: &Index, statics: &Ident, stacked: bool) -> StaticArg {
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
