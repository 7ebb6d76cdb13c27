//! What the attribute macros share: the option grammar ([`attr`]), the checks of the
//! annotated function and its parameters ([`fn_checks`]), how parameters name each other and
//! travel into the runtime's closures ([`params`]), the inner function that carries the
//! transformation attributes stacked below another ([`stacked`]), and the macro's entry with its error
//! fallback ([`entry`]). Each macro's own options, rules and expansion stay in its folder.

pub mod attr;
pub mod closure_fn;
pub mod fn_checks;
pub mod params;
pub mod stacked;

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use syn::Item;

/// Parse the options, then the item, validate them together and expand only when nothing was
/// reported. On any error the output is the errors, then the item as written, then
/// `on_error(&item)` (e.g. `#[jit]`'s companion module), so that the rest of the crate still
/// type-checks and no error is repeated or invented downstream.
pub fn entry<A, F>(
    attr: TokenStream,
    item: TokenStream,
    parse: impl FnOnce(&mut Ctxt, TokenStream) -> A,
    on_error: impl FnOnce(&Item) -> Option<TokenStream>,
    validate: impl FnOnce(&mut Ctxt, A, Item) -> Option<F>,
    expand: impl FnOnce(&F) -> TokenStream,
) -> TokenStream {
    let mut cx = Ctxt::new();
    let options = parse(&mut cx, attr);
    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => {
            cx.syn_error(e);
            let mut out = cx.into_compile_errors();
            out.extend(item);
            return out;
        }
    };
    let extra = on_error(&parsed);
    let checked = validate(&mut cx, options, parsed);
    match (cx.has_errors(), checked) {
        (false, Some(f)) => expand(&f),
        _ => {
            let mut out = cx.into_compile_errors();
            out.extend(item);
            out.extend(extra);
            out
        }
    }
}

/// The messages of the `compile_error!`s in a macro's output (each is
/// `::core::compile_error! { "message" }`), for the macros' unit tests.
#[cfg(test)]
pub fn compile_errors(out: &TokenStream) -> Vec<String> {
    let text = out.to_string();
    text.split("compile_error !")
        .skip(1)
        .map(|rest| rest.split('"').nth(1).unwrap_or_default().to_string())
        .collect()
}
