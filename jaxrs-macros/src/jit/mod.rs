//! `#[jit]`: parse the options ([`attr`]), check them against the function ([`validate`]),
//! generate the call into the runtime ([`expand`]).

pub(crate) mod attr;
pub(crate) mod expand;
pub(crate) mod validate;

use proc_macro2::TokenStream;

/// The whole macro. On any error the output is the errors plus the item as written and its
/// companion module, when it is a function (see [`crate::common::entry`]).
pub fn jit(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::common::entry(
        attr,
        item,
        attr::parse,
        |parsed| expand::companion_on_error(&expand::JIT_SITE, parsed),
        |cx, options, parsed| validate::validate(cx, &options, parsed),
        expand::expand,
    )
}

#[cfg(test)]
mod tests {
    use crate::common::compile_errors as errors;
    use quote::quote;

    /// The expansion of the example in DESIGN.md's contract, token for token.
    #[test]
    fn expansion_of_step() {
        let out = super::jit(
            quote!(donate = params, static = n),
            quote! {
                /// One step.
                pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
                    body(params, x, lr, n)
                }
            },
        );
        let expected = quote! {
            #[doc = r" One step."]
            #[track_caller]
            pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
                {
                    fn __jaxrs_assert_tree<T: ::jaxrs::__private::Tree>() {}
                    let _: fn() = __jaxrs_assert_tree::<Params>;
                    let _: fn() = __jaxrs_assert_tree::<Array>;
                    let _: fn() = __jaxrs_assert_tree::<(Params, Array)>;
                    fn __jaxrs_assert_static_arg<T>()
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
                    let _: fn() = __jaxrs_assert_static_arg::<usize>;
                }
                ::jaxrs::__private::jit_call(
                    step::jit_site(),
                    (params,),
                    (<Array as ::core::clone::Clone>::clone(x), ::jaxrs::__private::TracedScalar(lr),),
                    (n,),
                    |(params,): (Params,),
                     (x, lr,): (Array, ::jaxrs::__private::Array,),
                     __jaxrs_statics: &(usize,)| -> (Params, Array) {
                        let x: &Array = &x;
                        let lr: &::jaxrs::__private::Array = &lr;
                        let n: usize = ::core::clone::Clone::clone(&__jaxrs_statics.0);
                        body(params, x, lr, n)
                    },
                )
            }
            #[doc = "The compile cache of the jitted function [`step()`]: `step::jit_site()`."]
            pub mod step {
                #[doc = "The compile cache of [`step()`](super::step()): its counters and why it last recompiled."]
                #[allow(dead_code)]
                pub fn jit_site() -> &'static ::jaxrs::__private::JitSite {
                    static SITE: ::jaxrs::__private::JitSite = ::jaxrs::__private::JitSite::with_params(
                        "step",
                        ::core::concat!(::core::file!(), ":", ::core::line!()),
                        ::jaxrs::__private::JitParams {
                            donated: &["params"],
                            kept: &["x", "lr"],
                            statics: &["n"]
                        },
                    );
                    &SITE
                }
            }
        };
        assert_eq!(out.to_string(), expected.to_string());
    }

    #[test]
    fn statics_floats_and_references() {
        let out = super::jit(
            quote!(static = (lr, name, shape, scale, tag), donate = acc),
            quote! {
                fn f(acc: Array, lr: f64, name: &str, shape: &[usize], scale: &f32,
                     tag: &'static str, xs: &[Array], s: &f32, mut k: i32) -> Array { acc }
            },
        )
        .to_string();
        for piece in [
            // Statics: floats by bits, references owned (or kept when `'static`).
            quote!((
                ::jaxrs::__private::FloatKey(lr),
                ::std::borrow::ToOwned::to_owned(name),
                ::std::borrow::ToOwned::to_owned(shape),
                ::jaxrs::__private::FloatKey(*scale),
                tag,
            )),
            quote!(__jaxrs_statics: &(::jaxrs::__private::FloatKey<f64>, ::std::string::String,
                   ::std::vec::Vec<usize>, ::jaxrs::__private::FloatKey<f32>, &'static str,)),
            quote!(let lr: f64 = __jaxrs_statics.0 .0;),
            quote!(let name: &str = &__jaxrs_statics.1;),
            quote!(let shape: &[usize] = &__jaxrs_statics.2;),
            quote!(let scale: &f32 = &__jaxrs_statics.3 .0;),
            quote!(let tag: &'static str = __jaxrs_statics.4;),
            // Traced: slices become Vecs, scalars traced leaves (arrays in the body); `mut` moves
            // into the body.
            quote!((
                ::std::borrow::ToOwned::to_owned(xs),
                ::jaxrs::__private::TracedScalar(<f32 as ::core::clone::Clone>::clone(s)),
                ::jaxrs::__private::TracedScalar(k),
            )),
            quote!((xs, s, mut k,): (::std::vec::Vec<Array>, ::jaxrs::__private::Array, ::jaxrs::__private::Array,)),
            quote!(let xs: &[Array] = &xs;),
            quote!(let s: &::jaxrs::__private::Array = &s;),
            quote!(fn f(acc: Array, lr: f64, name: &str, shape: &[usize], scale: &f32, tag: &'static str, xs: &[Array], s: &f32, k: i32) -> Array),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
    }

    #[test]
    fn every_mistake_is_reported_and_the_item_kept() {
        let item = quote!(
            async fn f((a, b): (Array, Array), c: &mut Array) {}
        );
        let out = super::jit(quote!(donat = 0, static = 7, static = 0), item.clone());
        let messages = errors(&out);
        let expected = [
            "unknown option `donat`",
            "`static` is given twice",
            "cannot be applied to an `async fn`",
            "must return arrays",
            "give this parameter a name",
            "cannot write through `&mut`",
            "`f` has 2 parameters, index 7 is out of range",
        ];
        assert_eq!(messages.len(), expected.len(), "{messages:#?}");
        for e in expected {
            assert!(
                messages.iter().any(|m| m.contains(e)),
                "no `{e}` in {messages:#?}"
            );
        }
        // The item follows the errors unchanged, then its companion module.
        assert!(out.to_string().contains(&item.to_string()));
        assert!(out.to_string().contains("pub (crate) fn jit_site"));
    }

    #[test]
    fn role_checks_wait_for_a_clean_attribute() {
        // `n: usize` is traced only because the option naming it is misspelt: one error.
        let out = super::jit(
            quote!(static_argnums = 1),
            quote!(
                fn f(x: Array, n: usize) -> Array {
                    x
                }
            ),
        );
        let messages = errors(&out);
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert!(messages[0].contains("`static` takes parameter indices and names"));
    }

    /// `#[jit] #[vmap(..)] fn f` is `jit(vmap(f))`: the vmap attribute goes on an inner
    /// function the jitted body calls; traced scalars reach it as `&traced_scalar::f32`.
    #[test]
    #[rustfmt::skip] // rustfmt would add a trailing comma to a parameter list in `quote!`.
    fn stacked_transformations_go_on_an_inner_function() {
        let out = super::jit(
            quote!(static = n),
            quote! {
                /// Doc.
                #[vmap(in_axes = (0, None, None, None))]
                fn f(x: &Array, lr: f32, mut k: i32, n: usize) -> Array { body(x, lr, k, n) }
            },
        )
        .to_string();
        for piece in [
            quote!(#[doc = r" Doc."] #[track_caller] fn f(x: &Array, lr: f32, k: i32, n: usize) -> Array),
            quote!(|(): (), (x, lr, k,): (Array, ::jaxrs::__private::Array, ::jaxrs::__private::Array,),),
            quote!({
                #[vmap(in_axes = (0, None, None, None))]
                fn f(x: &Array, lr: &::jaxrs::__private::traced_scalar::f32,
                     mut k: ::jaxrs::__private::traced_scalar::i32, n: usize) -> Array {
                    body(x, lr, k, n)
                }
                f(x, lr, k, n)
            }),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
    }
}
