//! `#[pmap]`: parse the options ([`attr`]), check them against the function ([`validate`]),
//! generate the call into the runtime ([`expand`]).

mod attr;
mod expand;
mod validate;

use proc_macro2::TokenStream;

/// The whole macro. On any error the output is the errors plus the item as written and its
/// companion module, when it is a function (see [`crate::common::entry`]).
pub fn pmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::common::entry(
        attr,
        item,
        attr::parse,
        |parsed| crate::jit::expand::companion_on_error(&expand::PMAP_SITE, parsed),
        validate::validate,
        expand::expand,
    )
}

#[cfg(test)]
mod tests {
    use crate::common::compile_errors as errors;
    use quote::quote;

    #[test]
    fn expansion_calls_pmap_call_with_each_roles_axes() {
        let out = super::pmap(
            quote!(axis_name = "d", in_axes = (0, 0, None), donate = params),
            quote! {
                fn step(params: Params, x: &Array, lr: f32) -> (Params, Array) {
                    body(params, x, lr)
                }
            },
        )
        .to_string();
        for piece in [
            quote!(::jaxrs::__private::pmap_call),
            quote!(step::pmap_site()),
            quote!(axis_name: ::core::option::Option::Some("d")),
            quote!(in_axes: (&(0i64,), &(0i64, ::core::option::Option::<i64>::None,))),
            quote!(out_axes: &0i64),
            quote!(
                (params,),
                (
                    <Array as ::core::clone::Clone>::clone(x),
                    ::jaxrs::__private::TracedScalar(lr),
                ),
                ()
            ),
            quote!(fn pmap_site() -> &'static ::jaxrs::__private::PmapSite),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
    }

    #[test]
    fn every_mistake_is_reported() {
        let item = quote!(
            async fn f(x: &Array, lr: f32, n: usize) -> Array {
                x.clone()
            }
        );
        let out = super::pmap(
            quote!(axis_name = d, axis = 1, static = n, static = n, in_axes = (0, 0, None)),
            item.clone(),
        );
        let messages = errors(&out);
        let expected = [
            "`axis_name` is a string literal",
            "unknown option `axis` of #[pmap]",
            "`static` is given twice",
            "#[pmap] cannot be applied to an `async fn`",
            "axis 0 is out of range for `lr`, a Rust scalar (rank 0)",
        ];
        assert_eq!(messages.len(), expected.len(), "{messages:#?}");
        for e in expected {
            assert!(
                messages.iter().any(|m| m.contains(e)),
                "no `{e}` in {messages:#?}"
            );
        }
        assert!(out.to_string().contains("fn pmap_site"));
    }

    #[test]
    fn arity_of_in_axes() {
        let f = quote!(
            fn f(p: &Array, x: &Array) -> Array {
                x.clone()
            }
        );
        let messages = errors(&super::pmap(quote!(in_axes = (None, 0, 0)), f));
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert!(messages[0].contains("in_axes has 3 entries but `f` has 2 parameters"));
    }
}
