//! Checks the function and the options against each other and builds the model expansion
//! works from. Everything the compiler can tell at `cargo build` time is checked here, each
//! mistake reported at its token with what would be right.

use super::attr::JitAttr;
use crate::common::fn_checks::{
    self, contains_impl_trait, params_by_position, passing_of, type_string, untraceable_type,
    KindMessages, Output, Passing,
};
use crate::common::params::{display_param, resolve};
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{
    Attribute, Block, FnArg, GenericParam, Ident, Item, ItemFn, Signature, Type, Visibility,
};

/// The most parameters one role can hold: the runtime implements `Tree` and `Hash` for tuples
/// of up to 12.
const MAX_PER_ROLE: usize = 12;

/// A jitted function, checked.
pub struct JitFn {
    /// Outer attributes (doc comments included), kept on the generated function.
    pub attrs: Vec<Attribute>,
    /// Inner attributes (`#![...]` at the top of the body), kept at the top of its body.
    pub inner_attrs: Vec<Attribute>,
    pub vis: Visibility,
    /// The signature, with `mut` removed from parameter bindings (the generated outer function
    /// only moves them into the call; the body gets its own bindings).
    pub sig: Signature,
    pub block: Block,
    pub params: Vec<Param>,
    pub output: Output,
    /// `in_shardings`/`out_shardings`/`mesh`, if any was given.
    pub shardings: Option<JitShardingExprs>,
}

/// The sharding options, as expressions the expansion evaluates at each call.
pub struct JitShardingExprs {
    pub ins: InShardings,
    pub out: Option<syn::Expr>,
    pub mesh: Option<syn::Expr>,
}

pub enum InShardings {
    /// Not given: every argument keeps its own layout.
    Unspecified,
    /// One expression for every traced parameter.
    All(syn::Expr),
    /// One per traced parameter, in parameter order.
    PerParam(Vec<syn::Expr>),
}

/// One parameter of a jitted function.
pub struct Param {
    pub ident: Ident,
    /// `mut` on the binding, carried over to the body's binding.
    pub mutability: Option<syn::token::Mut>,
    pub ty: Type,
    pub role: Role,
    pub passing: Passing,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// Traced, and its buffers may be reused for the outputs.
    Donated,
    /// Traced.
    Kept,
    /// Part of the cache key; the body sees its Rust value.
    Static,
}

/// Parses the annotated item and checks it together with the options.
/// `None` when the item is not a function at all (already reported).
pub fn validate(cx: &mut Ctxt, attr: &JitAttr, item: Item) -> Option<JitFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            not_a_function(cx, &other);
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

    check_function_kind(cx, &sig);
    let output = check_output(cx, &sig);
    let mut params = check_params(cx, &mut sig);

    let names: Vec<Option<Ident>> = params_by_position(&sig);
    let n = names.len();
    let donated = resolve(cx, &sig.ident, attr.donate.as_ref(), &names);
    let statics = resolve(cx, &sig.ident, attr.statics.as_ref(), &names);

    // Roles, and conflicts between them.
    let mut roles = vec![Role::Kept; n];
    for &(i, _) in &donated {
        roles[i] = Role::Donated;
    }
    for &(i, span) in &statics {
        if roles[i] == Role::Donated {
            let name = display_param(&names, i);
            cx.error(
                span,
                format!(
                    "{name} is both donated and static; a static argument is a Rust value in \
                     the cache key, a donated one is an array whose buffer XLA reuses: \
                     remove it from `donate` or from `static`"
                ),
            );
        }
        roles[i] = Role::Static;
    }

    // `params` holds only the parameters that had a plain name; match them up by position.
    for p in &mut params {
        let i = position_of(&names, &p.ident);
        p.role = roles[i];
    }
    if !attr.incomplete {
        for p in &params {
            check_param_role(cx, p);
        }
    }
    for (role, what, fix) in [
        (
            Role::Donated,
            "donated",
            "group them in a struct with #[derive(Tree)] and donate that",
        ),
        (
            Role::Kept,
            "traced",
            "group them in a struct with #[derive(Tree)]",
        ),
        (Role::Static, "static", "group them in a tuple or struct"),
    ] {
        let count = params.iter().filter(|p| p.role == role).count();
        if count > MAX_PER_ROLE {
            cx.error(
                sig.ident.span(),
                format!(
                    "#[jit] takes at most {MAX_PER_ROLE} {what} parameters, `{}` has {count}; {fix}",
                    sig.ident.unraw()
                ),
            );
        }
    }

    let shardings = sharding_exprs(cx, attr, &sig, &params);

    Some(JitFn {
        shardings,
        attrs,
        inner_attrs,
        vis,
        sig,
        block: *block,
        params,
        output,
    })
}

fn not_a_function(cx: &mut Ctxt, item: &Item) {
    let Some((span, what)) = fn_checks::item_keyword(item) else {
        // e.g. a function without a body (a trait method's declaration).
        cx.error_spanned_by(
            item,
            "#[jit] applies to a free function with a body, e.g. \
             `#[jit] fn f(x: Array) -> Array { .. }`",
        );
        return;
    };
    cx.error(
        span,
        format!(
            "#[jit] applies to free functions, not to {what}: put it on a function, e.g. \
             `#[jit] fn f(x: Array) -> Array {{ .. }}`"
        ),
    );
}

/// Async, const, extern, methods, generics: the kinds of function jit cannot stand for.
fn check_function_kind(cx: &mut Ctxt, sig: &Signature) {
    fn_checks::check_function_kind(
        cx,
        sig,
        &KindMessages {
            macro_name: "jit",
            const_fn: "#[jit] cannot be applied to a `const fn`: calling a jitted function \
                       traces, compiles and runs it on a device, which cannot happen at compile \
                       time; remove `const`",
            async_fn: "#[jit] cannot be applied to an `async fn`: jit traces the body into one \
                       XLA program when called, and an async fn returns a future instead of \
                       running its body; remove `async` (a jitted call can run inside async \
                       code)",
            extern_fn: "#[jit] cannot be applied to an `extern` function: the jitted function \
                        takes and returns Rust values (arrays, trees); remove the ABI",
        },
    );
    for param in &sig.generics.params {
        let (span, what) = match param {
            GenericParam::Lifetime(_) => continue,
            GenericParam::Type(t) => (t.ident.span(), "type"),
            GenericParam::Const(c) => (c.ident.span(), "const"),
        };
        cx.error(
            span,
            format!(
                "#[jit] cannot be applied to a generic function: its compile cache is one \
                 `static`, shared by every instantiation, so the {what} parameter would mix \
                 different programs in one cache; use concrete types, or call `jaxrs::jit` on \
                 a closure inside the generic function"
            ),
        );
    }
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(
            r,
            "#[jit] cannot be applied to a method: jit traces a free function of its \
             arguments; make `self` an ordinary parameter of a free function, \
             e.g. `fn forward(model: &Model, x: &Array) -> Array`",
        );
    }
}

fn check_output(cx: &mut Ctxt, sig: &Signature) -> Output {
    fn_checks::check_output(
        cx,
        sig,
        "a jitted function must return arrays: its result is what XLA computes; declare a \
         return type, e.g. `-> Array` or `-> (Params, Array)`",
    )
}

/// Each parameter's name, binding and type; strips `mut` from the signature's bindings.
fn check_params(cx: &mut Ctxt, sig: &mut Signature) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in sig.inputs.iter_mut() {
        let FnArg::Typed(pat_type) = arg else {
            continue; // a receiver, reported by check_function_kind
        };
        let ty = (*pat_type.ty).clone();
        let name = match &*pat_type.pat {
            syn::Pat::Ident(p) => p.ident.unraw().to_string(),
            _ => "arg".to_string(),
        };
        let passing = check_param_type(cx, &name, &ty);
        let unnamed = |wildcard: bool, ty: &str| {
            if wildcard {
                format!(
                    "give this parameter a name, e.g. `_unused: {ty}`: #[jit] passes each \
                     parameter to the runtime by its name"
                )
            } else {
                format!(
                    "give this parameter a name, e.g. `arg: {ty}`, and destructure it inside \
                     the body: #[jit] passes each parameter to the runtime by its name"
                )
            }
        };
        let Some(pat) = fn_checks::plain_binding(cx, &mut pat_type.pat, &ty, unnamed) else {
            continue;
        };
        let mutability = pat.mutability.take();
        let Some(passing) = passing else { continue };
        params.push(Param {
            ident: pat.ident.clone(),
            mutability,
            ty,
            role: Role::Kept,
            passing,
        });
    }
    params
}

/// `&mut T` and `impl Trait` are errors; `&T` is passed by reference.
fn check_param_type(cx: &mut Ctxt, name: &str, ty: &Type) -> Option<Passing> {
    if contains_impl_trait(ty) {
        cx.error_spanned_by(
            ty,
            "#[jit] cannot take an `impl Trait` parameter: it makes the function generic, and \
             the compile cache of a jitted function is one `static` shared by every \
             instantiation; use a concrete type",
        );
        return None;
    }
    match passing_of(ty) {
        Ok(passing) => Some(passing),
        Err(elem) => {
            cx.error_spanned_by(ty, fn_checks::mut_ref_message("jitted", name, elem));
            None
        }
    }
}

/// What a role requires of the parameter's type, as far as syntax can tell.
fn check_param_role(cx: &mut Ctxt, p: &Param) {
    let name = p.ident.unraw();
    match (p.role, &p.passing) {
        (Role::Donated, Passing::Ref { inner, .. }) => cx.error_spanned_by(
            &p.ty,
            format!(
                "`{name}` is donated, and donation takes ownership: declare `{name}: {}` \
                 (the caller then cannot use the donated value again)",
                type_string(inner)
            ),
        ),
        (Role::Donated | Role::Kept, passing) => {
            if let Some(type_name) = untraceable_type(passing.inner(&p.ty)) {
                cx.error_spanned_by(
                    &p.ty,
                    format!(
                        "`{name}: {}` would be traced, but `{type_name}` is not an array type; \
                         if the body needs its Rust value, make it static: \
                         `#[jit(static = {name})]`",
                        type_string(&p.ty)
                    ),
                );
            }
        }
        (Role::Static, _) => {}
    }
}

fn position_of(names: &[Option<Ident>], ident: &Ident) -> usize {
    names
        .iter()
        .position(|n| n.as_ref() == Some(ident))
        .expect("every named parameter has a position")
}

/// The sharding options, with `in_shardings` checked against the traced parameters: a tuple
/// has one entry per traced (donated or kept) parameter, in order.
fn sharding_exprs(
    cx: &mut Ctxt,
    attr: &JitAttr,
    sig: &Signature,
    params: &[Param],
) -> Option<JitShardingExprs> {
    if attr.in_shardings.is_none() && attr.out_shardings.is_none() && attr.mesh.is_none() {
        return None;
    }
    let traced: Vec<String> = params
        .iter()
        .filter(|p| p.role != Role::Static)
        .map(|p| format!("`{}`", p.ident.unraw()))
        .collect();
    let ins = match attr.in_shardings.as_ref().map(|e| &e.expr) {
        None => InShardings::Unspecified,
        Some(syn::Expr::Tuple(t)) => {
            if !attr.incomplete && t.elems.len() != traced.len() {
                cx.error(
                    syn::spanned::Spanned::span(t),
                    format!(
                        "`in_shardings` has {} entries, but `{}` has {} traced parameters ({}); \
                         give one sharding per traced parameter, in order (static parameters \
                         have none), or one sharding for all",
                        t.elems.len(),
                        sig.ident.unraw(),
                        traced.len(),
                        if traced.is_empty() {
                            "none".to_string()
                        } else {
                            traced.join(", ")
                        }
                    ),
                );
            }
            InShardings::PerParam(t.elems.iter().cloned().collect())
        }
        Some(e) => InShardings::All(e.clone()),
    };
    Some(JitShardingExprs {
        ins,
        out: attr.out_shardings.as_ref().map(|e| e.expr.clone()),
        mesh: attr.mesh.as_ref().map(|e| e.expr.clone()),
    })
}
