//! `#[remat]`: parse the options ([`attr`]), check them against the function ([`validate`]),
//! generate the call into the runtime ([`expand`]).

mod attr;
mod expand;
mod validate;

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use syn::Item;

/// The whole macro. On any error the output is the errors plus the item as written, so that
/// the rest of the crate still type-checks and no error is repeated downstream.
pub fn remat(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::new();
    let options = attr::parse(&mut cx, attr);
    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => {
            cx.syn_error(e);
            let mut out = cx.into_compile_errors();
            out.extend(item);
            return out;
        }
    };
    let checked = validate::validate(&mut cx, options, parsed);
    match (cx.has_errors(), checked) {
        (false, Some(f)) => expand::expand(&f),
        _ => {
            let mut out = cx.into_compile_errors();
            out.extend(item);
            out
        }
    }
}
