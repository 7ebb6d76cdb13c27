//! `#[shard_map]`: parse the options ([`attr`]), check them against the function
//! ([`validate`]), generate the call into the runtime ([`expand`]).

mod attr;
mod expand;
mod validate;

use proc_macro2::TokenStream;

/// The whole macro. On any error the output is the errors plus the item as written (see
/// [`crate::common::entry`]).
pub fn shard_map(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::common::entry(
        attr,
        item,
        attr::parse,
        |_| None,
        validate::validate,
        expand::expand,
    )
}

#[cfg(test)]
mod tests {
    use crate::common::compile_errors;
    use quote::quote;

    #[test]
    fn expansion_with_specs_per_parameter() {
        let out = super::shard_map(
            quote!(in_specs = (P!["dp"], P![None, "mp"]), out_specs = P!["dp"], mesh = m, check_vma = false, static = n),
            quote! {
                /// A block.
                pub fn block(x: &Array, w: Array, n: usize) -> Array {
                    body(x, w, n)
                }
            },
        )
        .to_string();
        for piece in [
            quote!(#[doc = r" A block."]),
            quote!(pub fn block(x: &Array, w: Array, n: usize) -> Array),
            quote!(|(x, w,): (Array, Array,)| -> Array),
            quote!(let x: &Array = &x; body(x, w, n)),
            quote!(.in_specs(::jaxrs::__private::Shardings::PerChild(::std::vec![
                ::jaxrs::__private::shardings(P!["dp"]),
                ::jaxrs::__private::shardings(P![None, "mp"])
            ]))),
            quote!(.out_specs(::jaxrs::__private::shardings(P!["dp"]))),
            quote!(.check_vma(false)),
            quote!(.call_traced((<Array as ::core::clone::Clone>::clone(x), w,))),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
        assert!(
            out.contains("Borrow :: < :: jaxrs :: __private :: Mesh > :: borrow (& (m))"),
            "{out}"
        );
        assert!(out.contains("# [track_caller]"), "{out}");
        assert!(
            out.contains(":: jaxrs :: __private :: shard_map (|"),
            "{out}"
        );
    }

    #[test]
    fn every_mistake_is_reported_and_the_item_kept() {
        let item = quote!(
            async fn f(x: &mut Array, n: usize) -> Array {}
        );
        let out = super::shard_map(quote!(in_spec = P![], check_vma = ), item.clone());
        let messages = compile_errors(&out);
        let expected = [
            "unknown option `in_spec` of #[shard_map]",
            "expected a value after `check_vma =`",
            "#[shard_map] cannot be applied to an `async fn`",
            "cannot write through `&mut`",
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
    fn both_specs_are_needed() {
        let item = quote!(
            fn f(x: &Array) -> Array {
                x.clone()
            }
        );
        let messages = compile_errors(&super::shard_map(quote!(mesh = m), item));
        // (`compile_errors` cuts a message at its first escaped quote.)
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert!(
            messages[0].starts_with("#[shard_map] needs `out_specs = ...`, e.g. `out_specs = P![")
        );
        assert!(
            messages[1].starts_with("#[shard_map] needs `in_specs = ...`, e.g. `in_specs = (P![")
        );
    }

    #[test]
    fn in_specs_count_the_traced_parameters() {
        let out = super::shard_map(
            quote!(in_specs = (P!["dp"], P![], P![]), out_specs = P![], static = n),
            quote!(
                fn f(x: &Array, w: &Array, n: usize) -> Array {
                    x.clone()
                }
            ),
        );
        let messages = compile_errors(&out);
        assert_eq!(messages.len(), 1, "{messages:#?}");
        assert!(
            messages[0]
                .contains("`in_specs` has 3 entries, but `f` has 2 traced parameters (`x`, `w`)"),
            "{messages:#?}"
        );
    }
}
