//! Checks the function and the options against each other: the arity of `in_axes`, axes
//! that cannot exist (a Rust scalar has rank 0), parameters that cannot be mapped, a batch
//! size that cannot be known. Each mistake is reported at its token.

use super::attr::{Axes, AxesValue, Axis, VmapAttr};
use crate::common::fn_checks::{
    self, bare_type_name, contains_impl_trait, passing_of, scalar_type, type_string,
    untraceable_type, KindMessages, Output, Passing,
};
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{
    Attribute, Block, Expr, FnArg, Ident, Item, ItemFn, Pat, ReturnType, Signature, Type,
    Visibility,
};

/// A vmapped function, checked.
pub struct VmapFn {
    /// Outer attributes kept on the generated function (doc comments included).
    pub attrs: Vec<Attribute>,
    /// Transformation attributes below `#[vmap]`: they go on an inner function, inside.
    pub transforms: Vec<Attribute>,
    /// Inner attributes (`#![...]` at the top of the body).
    pub inner_attrs: Vec<Attribute>,
    pub vis: Visibility,
    /// The signature, `mut` removed from the mapped parameters (they move into the call;
    /// the body gets its own bindings).
    pub sig: Signature,
    /// The signature as written, for the inner function when there are `transforms`.
    pub original_sig: Signature,
    pub block: Block,
    /// The parameters other than `self`, in order.
    pub params: Vec<Param>,
    pub output: Output,
    pub out_axes: Option<AxesValue>,
    pub axis_size: Option<Expr>,
    /// `axis_name = "i"`: the batch axis's name for collectives.
    pub axis_name: Option<syn::LitStr>,
}

pub struct Param {
    /// `None` for a pattern (only allowed for an unmapped parameter, which the body
    /// captures).
    pub ident: Option<Ident>,
    pub mutability: Option<syn::token::Mut>,
    pub ty: Type,
    pub passing: Passing,
    /// The mapped axis as written (negative counts from the end); `None`: not mapped.
    pub axis: Option<i64>,
}

/// A Rust scalar type, as written (`f32`) or as a stacked transformation above passes it
/// on once traced (`::jaxrs::__private::traced_scalar::f32`): rank 0, nothing to map.
fn scalar_name(ty: &Type) -> Option<String> {
    let ty = match ty {
        Type::Reference(r) => &*r.elem,
        other => other,
    };
    if scalar_type(ty).is_some() {
        return bare_type_name(ty);
    }
    let Type::Path(p) = ty else { return None };
    let names: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match names.as_slice() {
        [a, b, c, name] if a == "jaxrs" && b == "__private" && c == "traced_scalar" => {
            Some(name.clone())
        }
        _ => None,
    }
}

/// Parses the annotated item and checks it together with the options. `None` when the item
/// is not a function (already reported).
pub fn validate(cx: &mut Ctxt, attr: &VmapAttr, item: Item) -> Option<VmapFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            cx.error_spanned_by(
                &other,
                "#[vmap] applies to functions, e.g. `#[vmap(in_axes = (None, 0))] \
                 fn f(params: &Params, x: &Array) -> Array { .. }`",
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
    let original_sig = sig.clone();
    let (inner_attrs, attrs) = fn_checks::split_inner_attrs(attrs);
    let (transforms, attrs) = crate::common::stacked::split(attrs);

    check_function_kind(cx, &sig, !transforms.is_empty());
    let output = check_output(cx, &sig);
    let mut params = collect_params(cx, &mut sig);
    let name = sig.ident.unraw().to_string();

    // The axis of each parameter.
    let n = params.len();
    let arity_ok = match &attr.in_axes {
        Some(Axes {
            value: AxesValue::List { entries, span },
            ..
        }) if entries.len() != n => {
            let example: Vec<&str> = (0..n).map(|i| if i == 0 { "None" } else { "0" }).collect();
            cx.error(
                *span,
                format!(
                    "in_axes has {} entr{} but `{name}` has {n} parameter{}: give one axis per \
                     parameter, `None` for those that are not mapped, e.g. `in_axes = ({})`",
                    entries.len(),
                    if entries.len() == 1 { "y" } else { "ies" },
                    if n == 1 { "" } else { "s" },
                    example.join(", ") + if n == 1 { "," } else { "" },
                ),
            );
            false
        }
        _ => true,
    };
    if arity_ok {
        for (i, p) in params.iter_mut().enumerate() {
            let written: Option<Axis> = match &attr.in_axes {
                None => None,
                Some(Axes {
                    value: AxesValue::One(a),
                    ..
                }) => Some(*a),
                Some(Axes {
                    value: AxesValue::List { entries, .. },
                    ..
                }) => Some(entries[i]),
            };
            p.axis = match written {
                None => Some(0),
                Some(a) => a.value,
            };
            if p.axis.is_some() {
                check_mapped(cx, p, written, &attr.in_axes, &params_names_hint(n, i));
            }
        }
    }

    let mapped = params.iter().filter(|p| p.axis.is_some()).count();
    if arity_ok && !attr.incomplete && mapped == 0 && attr.axis_size.is_none() {
        let span = match &attr.in_axes {
            Some(a) => a.key.span(),
            None => sig.ident.span(),
        };
        cx.error(
            span,
            format!(
                "no parameter of `{name}` is mapped, so the batch size cannot come from the \
                 arguments: give it, e.g. `axis_size = 8`"
            ),
        );
    }

    let out_axes = attr.out_axes.as_ref().map(|a| check_out_axes(cx, a, &sig));

    if !transforms.is_empty() {
        for p in &params {
            if p.ident.is_none() {
                cx.error_spanned_by(
                    &p.ty,
                    "give this parameter a name: with stacked transformation attributes, \
                     #[vmap] passes each parameter on to the inner function by its name",
                );
            }
        }
    }

    // The outer function only moves a mapped parameter into the call (and, under stacked
    // transformations, every parameter into the inner function, which keeps the `mut`).
    let stacked = !transforms.is_empty();
    let mut typed = sig.inputs.iter_mut().filter_map(|a| match a {
        FnArg::Typed(t) => Some(t),
        FnArg::Receiver(_) => None,
    });
    for p in &mut params {
        let t = typed.next().expect("one typed input per parameter");
        if p.axis.is_some() || stacked {
            if let Pat::Ident(pat) = &mut *t.pat {
                p.mutability = pat.mutability.take();
            }
        }
    }

    Some(VmapFn {
        attrs,
        transforms,
        inner_attrs,
        vis,
        sig,
        original_sig,
        block: *block,
        params,
        output,
        out_axes,
        axis_size: attr.axis_size.as_ref().map(|(_, e)| e.clone()),
        axis_name: attr.axis_name.as_ref().map(|(_, s)| s.clone()),
    })
}

/// `(None, 0, 0)`-like example for parameter `i` of `n` made unmapped.
fn params_names_hint(n: usize, i: usize) -> String {
    let entries: Vec<&str> = (0..n).map(|j| if j == i { "None" } else { "0" }).collect();
    let mut s = entries.join(", ");
    if n == 1 {
        s.push(',');
    }
    format!("({s})")
}

fn check_function_kind(cx: &mut Ctxt, sig: &Signature, stacked: bool) {
    fn_checks::check_function_kind(
        cx,
        sig,
        &KindMessages {
            macro_name: "vmap",
            const_fn: "#[vmap] cannot be applied to a `const fn`: a vmapped function traces its \
                       body and runs it on a device, which cannot happen at compile time; \
                       remove `const`",
            async_fn: "#[vmap] cannot be applied to an `async fn`: vmap traces the body when \
                       called, and an async fn returns a future instead of running its body; \
                       remove `async`",
            extern_fn: "#[vmap] cannot be applied to an `extern` function; remove the ABI",
        },
    );
    if let (true, Some(FnArg::Receiver(r))) = (stacked, sig.inputs.first()) {
        cx.error_spanned_by(
            r,
            "stacked transformation attributes do not apply to methods: the inner function \
             they go on cannot take `self`; make `self` an ordinary parameter",
        );
    }
}

fn check_output(cx: &mut Ctxt, sig: &Signature) -> Output {
    fn_checks::check_output(
        cx,
        sig,
        "a vmapped function must return arrays: its result is stacked over the examples; \
         declare a return type, e.g. `-> Array`",
    )
}

/// Every parameter but `self`, with its binding and type. `&mut` is an error.
fn collect_params(cx: &mut Ctxt, sig: &mut Signature) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in sig.inputs.iter_mut() {
        let FnArg::Typed(pat_type) = arg else {
            continue;
        };
        let ty = (*pat_type.ty).clone();
        let passing = passing_of(&ty).unwrap_or_else(|elem| {
            cx.error_spanned_by(
                &ty,
                format!(
                    "a vmapped function is pure, it cannot write through `&mut`: take \
                     `{}` by value or by `&` and return the updated value",
                    type_string(elem)
                ),
            );
            Passing::Value
        });
        let (ident, mutability) = match &*pat_type.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                (Some(p.ident.clone()), p.mutability)
            }
            _ => (None, None),
        };
        params.push(Param {
            ident,
            mutability,
            ty,
            passing,
            axis: None,
        });
    }
    params
}

/// What a mapped parameter must be: named, of a type that has axes.
fn check_mapped(
    cx: &mut Ctxt,
    p: &Param,
    written: Option<Axis>,
    in_axes: &Option<Axes>,
    unmapped_example: &str,
) {
    let name = p
        .ident
        .as_ref()
        .map_or("this parameter".to_string(), |i| format!("`{}`", i.unraw()));
    let axis = p.axis.expect("mapped");
    if let Some(scalar) = scalar_name(&p.ty) {
        let why =
            format!("{name} is a Rust scalar (`{scalar}`, rank 0): it has no axis {axis} to map");
        match (written, in_axes) {
            (
                Some(a),
                Some(Axes {
                    value: AxesValue::List { .. },
                    ..
                }),
            ) => cx.error_spanned_by(
                a.tokens(),
                format!("{why}; write `None` here, and every example gets the same {name}"),
            ),
            (Some(_), Some(_)) => cx.error_spanned_by(
                &p.ty,
                format!(
                    "{why}, and `in_axes` maps every parameter; give one axis per parameter \
                     with `None` for {name}, e.g. `in_axes = {unmapped_example}`"
                ),
            ),
            _ => cx.error_spanned_by(
                &p.ty,
                format!(
                    "{why}, and without `in_axes` #[vmap] maps every parameter along axis 0; \
                     say which are mapped, with `None` for {name}, e.g. \
                     `#[vmap(in_axes = {unmapped_example})]`"
                ),
            ),
        }
        return;
    }
    let at_axis = |cx: &mut Ctxt, message: String| match written {
        Some(a)
            if matches!(
                in_axes,
                Some(Axes {
                    value: AxesValue::List { .. },
                    ..
                })
            ) =>
        {
            cx.error_spanned_by(a.tokens(), message)
        }
        _ => cx.error_spanned_by(&p.ty, message),
    };
    if let Some(type_name) = untraceable_type(p.passing.inner(&p.ty)) {
        at_axis(
            cx,
            format!(
                "{name} is mapped, but `{type_name}` is not an array type; map arrays (or trees \
                 of them), and give {name} in_axes `None`"
            ),
        );
        return;
    }
    if contains_impl_trait(&p.ty) {
        cx.error_spanned_by(
            &p.ty,
            format!(
                "a mapped parameter cannot be `impl Trait`: #[vmap] names its type; use a \
                 concrete type, or give {name} in_axes `None`"
            ),
        );
        return;
    }
    if p.ident.is_none() {
        cx.error_spanned_by(
            &p.ty,
            "give this mapped parameter a name, e.g. `x: Array`, and destructure it inside the \
             body: #[vmap] passes each mapped parameter to the runtime by its name",
        );
    }
}

/// `out_axes` as a list must fit a tuple return type.
fn check_out_axes(cx: &mut Ctxt, axes: &Axes, sig: &Signature) -> AxesValue {
    if let (AxesValue::List { entries, span }, ReturnType::Type(_, ty)) = (&axes.value, &sig.output)
    {
        if let Type::Tuple(t) = &**ty {
            if t.elems.len() != entries.len() {
                cx.error(
                    *span,
                    format!(
                        "out_axes has {} entries but the result is a tuple of {}: give one axis \
                         per element",
                        entries.len(),
                        t.elems.len()
                    ),
                );
            }
        }
    }
    match &axes.value {
        AxesValue::One(a) => AxesValue::One(*a),
        AxesValue::List { entries, span } => AxesValue::List {
            entries: entries.clone(),
            span: *span,
        },
    }
}
