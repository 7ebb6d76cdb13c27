//! Checks the function and the options against each other and builds the model expansion
//! works from, each mistake reported at its token with what would be right.

use super::attr::{Policy, RematAttr};
use crate::common::fn_checks::{
    self, contains_impl_trait, params_by_position, passing_of, type_string, untraceable_type,
    KindMessages, Output, Passing,
};
use crate::common::params::resolve;
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Attribute, Block, FnArg, Ident, Item, ItemFn, Signature, Type};

/// A rematerialised function, checked.
pub struct RematFn {
    /// Outer attributes (doc comments included), kept on the generated function.
    pub attrs: Vec<Attribute>,
    /// Transformation attributes stacked below #[remat], outermost first: they go on an inner
    /// function that the rematerialised body calls.
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
    pub policy: Option<Policy>,
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

/// Parses the annotated item and checks it together with the options. `None` when the item
/// is not a function at all (already reported).
pub fn validate(cx: &mut Ctxt, attr: RematAttr, item: Item) -> Option<RematFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            cx.error(
                item_head(&other),
                "#[remat] applies to functions: put it on a function, e.g. \
                 `#[remat] fn block(x: &Array, w: &Array) -> Array { .. }`, or wrap a closure \
                 in `jaxrs::remat(..)`",
            );
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
    let (transforms, attrs) = crate::common::stacked::split(attrs);
    let stacked = !transforms.is_empty();

    check_function_kind(cx, &sig);
    let output = check_output(cx, &sig);
    let names = params_by_position(&sig);
    let before = cx.error_count();
    let statics: Vec<usize> = resolve(cx, &sig.ident, attr.statics.as_ref(), &names)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    // A misnamed static parameter would also be reported as untraceable: one error is enough.
    let roles_known = !attr.incomplete && cx.error_count() == before;
    let params = check_params(cx, &mut sig, &statics, roles_known, stacked);

    Some(RematFn {
        attrs,
        transforms,
        inner_attrs,
        vis,
        sig,
        block: *block,
        params,
        output,
        policy: attr.policy,
    })
}

/// The span an error about the whole item points at: its keyword.
fn item_head(item: &Item) -> Span {
    use syn::spanned::Spanned;
    fn_checks::item_keyword(item).map_or_else(|| item.span(), |(span, _)| span)
}

fn check_function_kind(cx: &mut Ctxt, sig: &Signature) {
    fn_checks::check_function_kind(
        cx,
        sig,
        &KindMessages {
            macro_name: "remat",
            const_fn: "#[remat] cannot be applied to a `const fn`: a rematerialised function is \
                       traced when called, which cannot happen at compile time; remove `const`",
            async_fn: "#[remat] cannot be applied to an `async fn`: remat traces the body into \
                       one program when called, and an async fn returns a future instead of \
                       running its body; remove `async`",
            extern_fn: "#[remat] cannot be applied to an `extern` function: it takes and \
                        returns Rust values (arrays, trees); remove the ABI",
        },
    );
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(
            r,
            "#[remat] cannot be applied to a method: remat traces a function of its \
             arguments, and `self` is not one it can trace; make it a free function taking \
             the model as an ordinary parameter, e.g. `fn block(layer: &Layer, x: &Array)`",
        );
    }
}

fn check_output(cx: &mut Ctxt, sig: &Signature) -> Output {
    fn_checks::check_output(
        cx,
        sig,
        "a rematerialised function must return arrays (its outputs are what the backward \
         pass recomputes); declare a return type, e.g. `-> Array` or `-> (Array, Array)`",
    )
}

/// Each parameter's name, role and passing; strips `mut` from traced parameters' bindings.
fn check_params(
    cx: &mut Ctxt,
    sig: &mut Signature,
    statics: &[usize],
    roles_known: bool,
    stacked: bool,
) -> Vec<Param> {
    let mut params = Vec::new();
    for (i, arg) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pat_type) = arg else {
            continue; // a receiver, reported by check_function_kind
        };
        let ty = (*pat_type.ty).clone();
        let is_static = statics.contains(&i);
        let unnamed = |wildcard: bool, ty: &str| {
            let example = if wildcard { "_unused" } else { "arg" };
            format!(
                "give this parameter a name, e.g. `{example}: {ty}`, and destructure it \
                 inside the body: #[remat] passes each parameter by its name"
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
                    "#[remat] cannot trace an `impl Trait` parameter: the traced closure must \
                     name its type; add a type parameter instead, e.g. `fn f<T: Tree>({name}: T)`"
                ),
            );
            continue;
        }
        let passing = match passing_of(&ty) {
            Ok(passing) => passing,
            Err(elem) => {
                cx.error_spanned_by(
                    &ty,
                    fn_checks::mut_ref_message("rematerialised", &name, elem),
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
                         `#[remat(static = {name})]`",
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
