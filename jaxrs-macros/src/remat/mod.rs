//! `#[remat]`: parse the options ([`attr`]), check them against the function ([`validate`]),
//! generate the call into the runtime ([`expand`]).

mod attr;
mod expand;
mod validate;

use proc_macro2::TokenStream;

/// The whole macro. On any error the output is the errors plus the item as written (see
/// [`crate::common::entry`]).
pub fn remat(attr: TokenStream, item: TokenStream) -> TokenStream {
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
    use proc_macro2::{TokenStream, TokenTree};
    use quote::quote;

    /// The messages of the `compile_error! { "..." }` invocations in `out`.
    fn errors(out: &TokenStream) -> Vec<String> {
        let tokens: Vec<TokenTree> = out.clone().into_iter().collect();
        let mut messages = Vec::new();
        for window in tokens.windows(3) {
            if let [TokenTree::Ident(i), TokenTree::Punct(p), TokenTree::Group(g)] = window {
                if i == "compile_error" && p.as_char() == '!' {
                    let lit: syn::LitStr = syn::parse2(g.stream()).expect("a message");
                    messages.push(lit.value());
                }
            }
        }
        messages
    }

    #[test]
    fn expansion_of_a_block() {
        let out = super::remat(
            quote!(policy = save_only_these_names("h"), static = n),
            quote! {
                /// A block.
                pub fn block(x: &Array, w: &[Array], lr: f32, mut y: Array, n: usize) -> Array {
                    body(x, w, lr, y, n)
                }
            },
        )
        .to_string();
        for piece in [
            quote!(#[doc = r" A block."]),
            quote!(pub fn block(x: &Array, w: &[Array], lr: f32, y: Array, n: usize) -> Array),
            quote!(::jaxrs::__private::RematPolicy::save_only_these_names([
                "h"
            ])),
            quote!((
                <Array as ::core::clone::Clone>::clone(x),
                ::std::borrow::ToOwned::to_owned(w),
                ::jaxrs::__private::TracedScalar(lr),
                y,
            )),
            quote!(|(x, w, lr, mut y,): (Array, ::std::vec::Vec<Array>, ::jaxrs::__private::Array, Array,)| -> Array),
            quote!(let x: &Array = &x;),
            quote!(let w: &[Array] = &w;),
            quote!(let lr: &::jaxrs::__private::Array = &lr; body(x, w, lr, y, n)),
        ] {
            let piece = piece.to_string();
            assert!(out.contains(&piece), "missing `{piece}` in\n{out}");
        }
        assert!(out.contains("# [track_caller]"), "{out}");
        // The body's statements end the closure, without braces of their own.
        assert!(!out.contains("{ body"), "{out}");
    }

    #[test]
    fn every_mistake_is_reported_and_the_item_kept() {
        let item = quote!(
            async fn f((a, b): (Array, Array), c: &mut Array, n: usize) {}
        );
        let out = super::remat(quote!(polcy = 0, policy = dots, static = 9), item.clone());
        let messages = errors(&out);
        let expected = [
            "unknown option `polcy` of #[remat]; the valid options are `policy` and `static`",
            "unknown remat policy `dots`",
            "cannot be applied to an `async fn`",
            "must return arrays",
            "give this parameter a name",
            "cannot write through `&mut`",
            "`f` has 3 parameters, index 9 is out of range",
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
    fn policy_spellings() {
        for (attr, message) in [
            (
                quote!(policy = RematPolicy::DotsSaveable),
                "write `policy = dots_saveable`",
            ),
            (
                quote!(policy = dots_saveable()),
                "`dots_saveable` takes no arguments",
            ),
            (
                quote!(policy = save_only_these_names),
                "takes the names to save",
            ),
            (
                quote!(policy = save_only_these_names("a", "a")),
                "listed twice",
            ),
            (quote!(policy), "expected `=` after `policy`"),
            (quote!(prevent_cse = true), "optimization barrier"),
            (
                quote!(static_argnums = 1),
                "`static` takes parameter indices",
            ),
        ] {
            let out = super::remat(
                attr,
                quote!(
                    fn f(x: &Array) -> Array {
                        x.clone()
                    }
                ),
            );
            let messages = errors(&out);
            assert_eq!(messages.len(), 1, "{messages:#?}");
            assert!(messages[0].contains(message), "{messages:#?}");
        }
    }
}
