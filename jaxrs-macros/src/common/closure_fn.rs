//! The functions whose attribute turns the body into a traced closure that the runtime calls
//! with the traced parameters as one tuple (`#[remat]`, `#[shard_map]`): the checks of the
//! annotated function against the options, and the closure's pieces for the expansion. What
//! differs between the macros (their messages, the runtime call) comes in a [`Rules`] or
//! stays in the macro's folder.

use crate::common::attr::ArgList;
use crate::common::fn_checks::{
    self, contains_impl_trait, params_by_position, passing_of, type_string, untraceable_type,
    KindMessages, Output, Passing,
};
use crate::common::params::{self, resolve, traced_arg};
use crate::common::stacked;
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Block, FnArg, Ident, Item, ItemFn, Signature, Type};

/// One macro's messages.
pub struct Rules {
    /// `remat`, for `#[remat(static = x)]` in the messages.
    pub macro_name: &'static str,
    /// Said at an item that is not a function.
    pub not_a_function: &'static str,
    /// Said at `const`, `async`, `extern` functions.
    pub kind: KindMessages,
    /// Said at `self`.
    pub method: &'static str,
    /// Said when the function returns nothing.
    pub no_output: &'static str,
    /// `rematerialised`, for "a rematerialised function is pure, it cannot write through
    /// `&mut`".
    pub adjective: &'static str,
}

/// A function whose body becomes a traced closure, checked.
pub struct ClosureFn {
    /// Outer attributes (doc comments included), kept on the generated function.
    pub attrs: Vec<Attribute>,
    /// Transformation attributes stacked below this one, outermost first: they go on an inner
    /// function that the closure calls.
    pub transforms: Vec<Attribute>,
    /// Inner attributes (`#![...]`), kept at the top of its body.
    pub inner_attrs: Vec<Attribute>,
    pub vis: syn::Visibility,
    /// The signature, with `mut` removed from traced parameters' bindings (the body gets its
    /// own bindings; static parameters are captured as they are), and from every parameter's
    /// under stacked transformations (the inner function has them).
    pub sig: Signature,
    pub block: Block,
    pub params: Vec<Param>,
    pub output: Output,
}

/// One parameter.
pub struct Param {
    pub ident: Ident,
    /// `mut` on a traced parameter's binding, carried over to the body's binding; on a static
    /// one, only under stacked transformations, for the inner function's parameter.
    pub mutability: Option<syn::token::Mut>,
    pub ty: Type,
    pub is_static: bool,
    pub passing: Passing,
}

/// Parses the annotated item and checks it together with the `static = ..` option
/// (`incomplete`: some option could not be parsed, so the parameters' roles are not fully
/// known). `None` when the item is not a function at all (already reported).
pub fn validate(
    cx: &mut Ctxt,
    rules: &Rules,
    statics: Option<&ArgList>,
    incomplete: bool,
    item: Item,
) -> Option<ClosureFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            cx.error(item_head(&other), rules.not_a_function);
            return None;
        }
    };
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = item;
    let (inner_attrs, attrs) = fn_checks::split_inner_attrs(attrs);
    let (transforms, attrs) = stacked::split(attrs);
    let stacked = !transforms.is_empty();

    fn_checks::check_function_kind(cx, &sig, &rules.kind);
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(r, rules.method);
    }
    let output = fn_checks::check_output(cx, &sig, rules.no_output);
    let names = params_by_position(&sig);
    let before = cx.error_count();
    let statics: Vec<usize> = resolve(cx, &sig.ident, statics, &names)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    // A misnamed static parameter would also be reported as untraceable: one error is enough.
    let roles_known = !incomplete && cx.error_count() == before;
    let params = check_params(cx, rules, &mut sig, &statics, roles_known, stacked);

    Some(ClosureFn {
        attrs,
        transforms,
        inner_attrs,
        vis,
        sig,
        block: *block,
        params,
        output,
    })
}

/// The span an error about the whole item points at: its keyword.
fn item_head(item: &Item) -> Span {
    fn_checks::item_keyword(item).map_or_else(|| item.span(), |(span, _)| span)
}

/// Each parameter's name, role and passing; strips `mut` from traced parameters' bindings.
fn check_params(
    cx: &mut Ctxt,
    rules: &Rules,
    sig: &mut Signature,
    statics: &[usize],
    roles_known: bool,
    stacked: bool,
) -> Vec<Param> {
    let macro_name = rules.macro_name;
    let mut params = Vec::new();
    for (i, arg) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pat_type) = arg else {
            continue; // a receiver, reported by validate
        };
        let ty = (*pat_type.ty).clone();
        let is_static = statics.contains(&i);
        let unnamed = |wildcard: bool, ty: &str| {
            let example = if wildcard { "_unused" } else { "arg" };
            format!(
                "give this parameter a name, e.g. `{example}: {ty}`, and destructure it \
                 inside the body: #[{macro_name}] passes each parameter by its name"
            )
        };
        let Some(pat) = fn_checks::plain_binding(cx, &mut pat_type.pat, &ty, unnamed) else {
            continue;
        };
        let name = pat.ident.unraw().to_string();
        if is_static {
            // Captured by the traced closure as it is: any type, any binding. Under stacked
            // transformations it is passed on to the inner function, which keeps the `mut`.
            params.push(Param {
                ident: pat.ident.clone(),
                mutability: if stacked { pat.mutability.take() } else { None },
                ty,
                is_static: true,
                passing: Passing::Value,
            });
            continue;
        }
        if contains_impl_trait(&ty) {
            cx.error_spanned_by(
                &ty,
                format!(
                    "#[{macro_name}] cannot trace an `impl Trait` parameter: the traced closure \
                     must name its type; add a type parameter instead, e.g. \
                     `fn f<T: Tree>({name}: T)`"
                ),
            );
            continue;
        }
        let passing = match passing_of(&ty) {
            Ok(passing) => passing,
            Err(elem) => {
                cx.error_spanned_by(
                    &ty,
                    fn_checks::mut_ref_message(rules.adjective, &name, elem),
                );
                continue;
            }
        };
        let inner = passing.inner(&ty);
        if roles_known {
            if let Some(type_name) = untraceable_type(inner) {
                cx.error_spanned_by(
                    &ty,
                    format!(
                        "`{name}: {}` would be traced, but `{type_name}` is not an array type; \
                         if the body needs its Rust value, make it static: \
                         `#[{macro_name}(static = {name})]`",
                        type_string(&ty)
                    ),
                );
                continue;
            }
        }
        params.push(Param {
            ident: pat.ident.clone(),
            mutability: pat.mutability.take(),
            ty,
            is_static: false,
            passing,
        });
    }
    params
}

/// The pieces of `|(x, w): (Array, Array)| -> R { let x = &x; ...; BODY }` and of the tuple of
/// arguments it is called with.
pub struct Closure {
    /// The type checks of the parameters and the result (`assert_tree::<T>`), in a block.
    pub checks: TokenStream,
    /// The traced arguments, as the function's parameters are turned into owned values.
    pub args: Vec<TokenStream>,
    /// The closure's tuple pattern and its type.
    pub pats: Vec<TokenStream>,
    pub types: Vec<TokenStream>,
    /// `-> R`, or nothing for an opaque result.
    pub ret: TokenStream,
    /// The closure's body: the rebinding of the parameters, then the function's statements
    /// (or the call of the inner function under stacked transformations).
    pub body: TokenStream,
}

/// The closure of a checked function (see [`Closure`]).
pub fn closure(f: &ClosureFn) -> Closure {
    let stacked = !f.transforms.is_empty();
    let mut args = Vec::new();
    let mut pats = Vec::new();
    let mut types = Vec::new();
    let mut lets = Vec::new();
    let mut tree_checks = Vec::new();
    for p in f.params.iter().filter(|p| !p.is_static) {
        // Passed and bound as under `#[jit]`; under stacked transformations the inner
        // function's parameter carries the `mut`.
        let arg = traced_arg(&p.ident, p.mutability, &p.ty, &p.passing, stacked);
        args.push(arg.value);
        pats.push(arg.pat);
        types.push(arg.ty);
        lets.extend(arg.rebinding);
        if let Some(ty) = arg.check {
            tree_checks.push(params::tree_check(p.ty.span(), &ty));
        }
    }
    let ret = match &f.output {
        Output::Concrete(ty) => {
            tree_checks.push(params::tree_check(ty.span(), ty));
            quote!(-> #ty)
        }
        Output::Opaque => TokenStream::new(),
    };
    let checks = params::tree_check_items(&tree_checks);
    let checks = if checks.is_empty() {
        checks
    } else {
        quote!({ #checks })
    };
    // The body: the function's own, or, under stacked transformations, a call of an inner
    // function that carries them.
    let inner = if stacked {
        let inputs = f.params.iter().map(|p| {
            let (ident, mutability) = (&p.ident, &p.mutability);
            let ty = if p.is_static {
                let ty = &p.ty;
                quote!(#ty)
            } else {
                stacked::traced_param_type(&p.ty, &p.passing, p.mutability)
            };
            quote!(#mutability #ident: #ty)
        });
        let args = f.params.iter().map(|p| {
            let ident = &p.ident;
            quote!(#ident)
        });
        stacked::inner_call(&f.transforms, &f.sig, inputs, args, &f.block)
    } else {
        params::body_statements(&f.block)
    };
    Closure {
        checks,
        args,
        pats,
        types,
        ret,
        body: quote! { #(#lets)* #inner },
    }
}
