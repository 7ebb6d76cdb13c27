//! `#[scan]`: a step function `fn cell(carry, x, ...invariants) -> (carry, y)` becomes
//! `cell(init, xs, ...invariants) -> (final_carry, ys)`, scanning over the leading axis of
//! `xs` in one compiled loop.
//!
//! Parse (options into [`ScanAttr`]), validate (the function's shape), expand (a call of the
//! runtime's `scan_with`). Every mistake is reported at its token, all at once.
//!
//! Transformation attributes below `#[scan]` apply to the step: `#[scan] #[remat] fn cell` scans
//! over a rematerialised step (the backward pass recomputes each step's internals from its
//! carry instead of saving them). The step closure calls an inner function with the
//! signature and body as written, which carries them.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, Lit, Meta, ReturnType, Token, Type};

/// The valid option names, in the order error messages list them.
const KEYS: &[&str] = &["length", "reverse", "unroll"];

/// Everything `#[scan(...)]` said.
#[derive(Default)]
struct ScanAttr {
    length: Option<usize>,
    reverse: bool,
    unroll: Option<usize>,
}

fn parse_usize(cx: &mut Ctxt, key: &str, value: &Expr) -> Option<usize> {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => match i.base10_parse::<usize>() {
            Ok(0) if key == "unroll" => {
                cx.error(
                    i.span(),
                    "`unroll` must be at least 1 (steps per iteration of the compiled loop)",
                );
                None
            }
            Ok(n) => Some(n),
            Err(e) => {
                cx.error(
                    i.span(),
                    format!("`{key}` must be a non-negative integer: {e}"),
                );
                None
            }
        },
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` takes an integer literal, e.g. `{key} = 4`"),
            );
            None
        }
    }
}

fn parse_attr(cx: &mut Ctxt, tokens: TokenStream) -> ScanAttr {
    let mut attr = ScanAttr::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(m) => m,
        Err(e) => {
            cx.syn_error(e);
            return attr;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let key = path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if !KEYS.contains(&key.as_str()) {
            cx.error_spanned_by(
                path,
                format!(
                    "unknown option `{}`; the options of #[scan] are: {}",
                    quote!(#path),
                    KEYS.join(", ")
                ),
            );
            continue;
        }
        if seen.contains(&key) {
            cx.error_spanned_by(path, format!("`{key}` is given more than once"));
            continue;
        }
        seen.push(key.clone());
        match (key.as_str(), &meta) {
            ("reverse", Meta::Path(_)) => attr.reverse = true,
            ("reverse", other) => {
                cx.error_spanned_by(other, "`reverse` is a flag: write `#[scan(reverse)]`")
            }
            ("length", Meta::NameValue(nv)) => attr.length = parse_usize(cx, "length", &nv.value),
            ("unroll", Meta::NameValue(nv)) => attr.unroll = parse_usize(cx, "unroll", &nv.value),
            (k, other) => cx.error_spanned_by(other, format!("`{k}` takes a value: `{k} = 4`")),
        }
    }
    attr
}

/// The step function's shape, checked.
struct Step<'a> {
    func: &'a ItemFn,
    carry_ty: Type,
    x_ty: Type,
    x_is_ref: bool,
    y_ty: Type,
}

fn validate<'a>(cx: &mut Ctxt, func: &'a ItemFn) -> Option<Step<'a>> {
    let sig = &func.sig;
    if let Some(a) = &sig.asyncness {
        cx.error(
            a.span(),
            "#[scan] cannot apply to an async function: a step function runs inside a trace",
        );
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "#[scan] cannot apply to a generic function: give the step function concrete types",
        );
    }
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(r, "#[scan] applies to free functions, not methods: the step function takes (carry, x, ...)");
        return None;
    }
    let params: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect();
    if params.len() < 2 {
        cx.error(
            sig.paren_token.span.join(),
            "a #[scan] step function takes the carry, then one slice of the scanned input, then any loop-invariant parameters: `fn cell(carry: C, x: X, ...) -> (C, Y)` (use `_: ()` for a scan without inputs)",
        );
        return None;
    }
    if let Type::Reference(r) = &*params[0].ty {
        cx.error_spanned_by(r, "the carry is threaded from step to step: take it by value (`carry: C`), not by reference");
    }
    for p in &params {
        if let Type::Reference(r) = &*p.ty {
            if r.mutability.is_some() {
                cx.error_spanned_by(
                    r,
                    "#[scan] step functions are pure: take `&T` or `T`, not `&mut T`",
                );
            }
        }
    }
    for p in &params[2..] {
        if !matches!(&*p.pat, syn::Pat::Ident(_)) {
            cx.error_spanned_by(&p.pat, "give each loop-invariant parameter a name (patterns are allowed for the carry and the input only)");
        }
    }
    let pair = match &sig.output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(t) if t.elems.len() == 2 => Some((t.elems[0].clone(), t.elems[1].clone())),
            _ => None,
        },
        ReturnType::Default => None,
    };
    let Some((carry_out, y_ty)) = pair else {
        let span = match &sig.output {
            ReturnType::Type(_, ty) => ty.span(),
            ReturnType::Default => sig.paren_token.span.join(),
        };
        cx.error(span, "a #[scan] step function returns a pair `(new_carry, y)`: the carry for the next step and this step's output");
        return None;
    };
    let carry_ty = (*params[0].ty).clone();
    if quote!(#carry_out).to_string() != quote!(#carry_ty).to_string() {
        cx.error_spanned_by(
            &carry_out,
            format!(
                "the carry must keep its type: the step takes `{}` but returns `{}`",
                quote!(#carry_ty),
                quote!(#carry_out)
            ),
        );
    }
    let (x_ty, x_is_ref) = match &*params[1].ty {
        Type::Reference(r) => ((*r.elem).clone(), true),
        other => (other.clone(), false),
    };
    Some(Step {
        func,
        carry_ty,
        x_ty,
        x_is_ref,
        y_ty,
    })
}

fn expand(attr: &ScanAttr, step: Step) -> TokenStream {
    let Step {
        func,
        carry_ty,
        x_ty,
        x_is_ref,
        y_ty,
    } = step;
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let params: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|a| {
            if let FnArg::Typed(t) = a {
                Some(t)
            } else {
                None
            }
        })
        .collect();
    let (transforms, attrs) = crate::common::stacked::split(attrs.clone());
    let (carry_pat, x_pat) = (&params[0].pat, &params[1].pat);
    let init = format_ident!("__jaxrs_init");
    let xs = format_ident!("__jaxrs_xs");
    let name = &sig.ident;
    let output = &sig.output;
    let outer_x_ty = &params[1].ty;
    let xs_value = if x_is_ref {
        quote!(::core::clone::Clone::clone(#xs))
    } else {
        quote!(#xs)
    };
    // The step closure's parameters and body: the function's own, or, under stacked
    // transformations, a call of an inner function (carry, slice, invariants) that carries
    // them; the loop-invariant parameters are then passed on by name (cloned when taken by
    // value: the step closure runs once per trace, and may not give them away).
    let (invariants, closure_carry, closure_x, step_body) = if transforms.is_empty() {
        let x_rebind = if x_is_ref {
            quote!(let #x_pat: &#x_ty = &#x_pat;)
        } else {
            quote!()
        };
        let invariants: Vec<TokenStream> = params[2..].iter().map(|p| quote!(#p)).collect();
        (invariants, quote!(#carry_pat), quote!(#x_pat), {
            let stmts = crate::common::params::body_statements(block);
            quote!({ #x_rebind #stmts })
        })
    } else {
        let carry = Ident::new("__jaxrs_carry", Span::mixed_site());
        let x = Ident::new("__jaxrs_x", Span::mixed_site());
        let mut invariants = Vec::new();
        let mut args = vec![
            quote!(#carry),
            if x_is_ref { quote!(&#x) } else { quote!(#x) },
        ];
        for p in &params[2..] {
            let syn::Pat::Ident(pat) = &*p.pat else {
                unreachable!("validated: a loop-invariant parameter is named")
            };
            let ident = &pat.ident;
            let ty = &p.ty;
            // The outer function only hands it on; the inner one keeps the `mut`.
            invariants.push(quote!(#ident: #ty));
            args.push(match &**ty {
                Type::Reference(_) => quote!(#ident),
                _ => quote!(::core::clone::Clone::clone(&#ident)),
            });
        }
        let inputs = sig.inputs.iter().map(|a| quote!(#a));
        let body = crate::common::stacked::inner_call(&transforms, sig, inputs, args, block);
        (invariants, quote!(#carry), quote!(#x), body)
    };
    let length = match attr.length {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let reverse = attr.reverse;
    let unroll = attr.unroll.unwrap_or(1);
    let span = Span::call_site();
    quote_spanned! {span=>
        #(#attrs)*
        #[track_caller]
        #vis fn #name(#init: #carry_ty, #xs: #outer_x_ty, #(#invariants),*) #output {
            ::jaxrs::__private::scan_with(
                |#closure_carry: #carry_ty, #closure_x: #x_ty| -> (#carry_ty, #y_ty) #step_body,
                #init,
                #xs_value,
                ::jaxrs::__private::ScanOptions { length: #length, reverse: #reverse, unroll: #unroll },
            )
        }
    }
}

/// The `#[scan]` attribute: parse, validate, expand; on any error, the errors and the item.
pub fn scan(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::new();
    let options = parse_attr(&mut cx, attr);
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            cx.error(
                Span::call_site(),
                "#[scan] applies to a step function `fn cell(carry, x, ...) -> (carry, y)`",
            );
            let errors = cx.into_compile_errors();
            return quote!(#errors #item);
        }
    };
    let step = validate(&mut cx, &func);
    match (step, cx.has_errors()) {
        (Some(step), false) => expand(&options, step),
        _ => {
            let errors = cx.into_compile_errors();
            quote!(#errors #func)
        }
    }
}
