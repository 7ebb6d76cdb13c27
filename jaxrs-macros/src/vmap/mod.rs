//! `#[vmap]`: parse the options ([`attr`]), check them against the function ([`validate`]),
//! generate the call into the runtime ([`expand`]).

pub(crate) mod attr;
mod expand;
mod validate;

use proc_macro2::TokenStream;

/// The whole macro. On any error the output is the errors plus the item as written (see
/// [`crate::common::entry`]).
pub fn vmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::common::entry(
        attr,
        item,
        attr::parse,
        |_| None,
        |cx, options, parsed| validate::validate(cx, &options, parsed),
        expand::expand,
    )
}

#[cfg(test)]
mod tests {
    use crate::common::compile_errors as errors;
    use quote::quote;

    /// The expansion of the doc example, token for token.
    #[test]
    fn expansion_of_loss() {
        let out = super::vmap(
            quote!(in_axes = (None, 0, -1)),
            quote! {
                /// Doc.
                pub fn loss(params: &Params, x: &Array, mut y: Array) -> Array {
                    body(params, x, y)
                }
            },
        );
        let expected = quote! {
            #[doc = r" Doc."]
            #[track_caller]
            pub fn loss(params: &Params, x: &Array, y: Array) -> Array {
                {
                    fn __jaxrs_assert_tree<T: ::jaxrs::__private::Tree>() {}
                    let _: fn() = __jaxrs_assert_tree::<Array>;
                    let _: fn() = __jaxrs_assert_tree::<Array>;
                    let _: fn() = __jaxrs_assert_tree::<Array>;
                }
                ::jaxrs::__private::vmap_call(
                    ::jaxrs::__private::VmapNames {
                        function: ::core::option::Option::Some("loss"),
                        params: ::core::option::Option::Some(&["x", "y"]),
                    },
                    &(0i64, -1i64,),
                    &0i64,
                    ::core::option::Option::<usize>::None,
                    ::core::option::Option::<&str>::None,
                    (<Array as ::core::clone::Clone>::clone(x), y,),
                    |(x, mut y,): (Array, Array,)| -> Array {
                        let x: &Array = &x;
                        body(params, x, y)
                    },
                )
            }
        };
        assert_eq!(out.to_string(), expected.to_string());
    }

    #[test]
    fn stacked_transformations_go_on_an_inner_function() {
        let out = super::vmap(
            quote!(in_axes = (0, None)),
            quote! {
                #[inline]
                #[jit]
                fn f(mut x: Array, lr: f32) -> Array { x * lr }
            },
        )
        .to_string();
        for piece in [
            quote!(#[inline] #[track_caller] fn f(x: Array, lr: f32) -> Array),
            quote!(|(x,): (Array,)| -> Array {
                {
                    #[jit]
                    fn f(mut x: Array, lr: f32) -> Array {
                        x * lr
                    }
                    f(x, lr)
                }
            }),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
    }

    #[test]
    fn every_mistake_is_reported_and_the_item_kept() {
        let item = quote!(
            async fn f(x: &mut Array, lr: f32, n: usize) {}
        );
        let out = super::vmap(quote!(in_axes = (0, 0, 0), in_axis = 1), item.clone());
        let messages = errors(&out);
        let expected = [
            "unknown option `in_axis` of #[vmap]; the valid options are `in_axes`, `out_axes`, `axis_size`, `axis_name` (did you mean `in_axes`?)",
            "cannot be applied to an `async fn`",
            "must return arrays",
            "cannot write through `&mut`",
            "`lr` is a Rust scalar (`f32`, rank 0): it has no axis 0 to map; write `None` here",
            "`n` is mapped, but `usize` is not an array type",
        ];
        assert_eq!(messages.len(), expected.len(), "{messages:#?}");
        for e in expected {
            assert!(
                messages.iter().any(|m| m.contains(e)),
                "no `{e}` in {messages:#?}"
            );
        }
        assert!(out.to_string().contains(&item.to_string()));
    }

    #[test]
    fn arity_and_batch_size() {
        let f = quote!(
            fn f(p: &Array, x: &Array) -> Array {
                x.clone()
            }
        );
        let messages = errors(&super::vmap(quote!(in_axes = (None, 0, 0)), f.clone()));
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert!(messages[0].contains("in_axes has 3 entries but `f` has 2 parameters"));
        let messages = errors(&super::vmap(quote!(in_axes = (None, None)), f.clone()));
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert!(messages[0].contains("no parameter of `f` is mapped"));
        assert!(errors(&super::vmap(quote!(in_axes = None, axis_size = 4), f)).is_empty());
    }
}
