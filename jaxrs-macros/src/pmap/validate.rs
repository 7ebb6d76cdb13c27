//! Checks the function and the options against each other. A pmapped function is a jitted
//! one with a mapped axis, so the function and its parameters go through `#[jit]`'s checks
//! (their messages reworded for `#[pmap]`); then each parameter's axis: the arity of
//! `in_axes`, a Rust scalar or a static parameter given an axis (rank 0, nothing to split),
//! and the arity of `out_axes`.

use super::attr::PmapAttr;
use crate::common::fn_checks::{params_by_position, scalar_type};
use crate::ctxt::Ctxt;
use crate::jit::attr::JitAttr;
use crate::jit::validate::{JitFn, Role};
use crate::vmap::attr::{Axes, AxesValue, Axis};
use syn::ext::IdentExt;
use syn::{Item, LitStr, ReturnType, Type};

/// A pmapped function, checked.
pub struct PmapFn {
    pub jit: JitFn,
    pub axis_name: Option<LitStr>,
    /// The axis of each parameter of `jit.params`, in order (`None`: whole on every device).
    pub axes: Vec<Option<i64>>,
    pub out_axes: Option<AxesValue>,
}

pub fn validate(cx: &mut Ctxt, attr: PmapAttr, item: Item) -> Option<PmapFn> {
    let PmapAttr {
        axis_name,
        in_axes,
        out_axes,
        donate,
        statics,
        incomplete,
    } = attr;
    let jit_attr = JitAttr {
        donate,
        statics,
        incomplete,
        in_shardings: None,
        out_shardings: None,
        mesh: None,
    };
    let mut sub = Ctxt::new();
    let checked = crate::jit::validate::validate(&mut sub, &jit_attr, item);
    if let Err(errors) = sub.check() {
        for e in errors {
            cx.error(e.span(), reword(&e.to_string()));
        }
    }
    let jit = checked?;
    let name = jit.sig.ident.unraw().to_string();
    let positions = params_by_position(&jit.sig);
    let n = positions.len();

    let written: Vec<Option<Axis>> = match &in_axes {
        None => vec![None; n],
        Some(Axes {
            value: AxesValue::One(a),
            ..
        }) => vec![Some(*a); n],
        Some(Axes {
            value: AxesValue::List { entries, span },
            ..
        }) => {
            if entries.len() != n {
                let example: Vec<&str> =
                    (0..n).map(|i| if i == 0 { "0" } else { "None" }).collect();
                cx.error(
                    *span,
                    format!(
                        "in_axes has {} entr{} but `{name}` has {n} parameter{}: give one axis \
                         per parameter, `None` for those every device gets whole, e.g. \
                         `in_axes = ({})`",
                        entries.len(),
                        if entries.len() == 1 { "y" } else { "ies" },
                        if n == 1 { "" } else { "s" },
                        example.join(", ") + if n == 1 { "," } else { "" },
                    ),
                );
                return None;
            }
            entries.iter().map(|a| Some(*a)).collect()
        }
    };
    let list = matches!(
        &in_axes,
        Some(Axes {
            value: AxesValue::List { .. },
            ..
        })
    );

    let mut axes = Vec::with_capacity(jit.params.len());
    for p in &jit.params {
        let i = positions
            .iter()
            .position(|q| q.as_ref() == Some(&p.ident))
            .expect("a named parameter has a position");
        let pname = p.ident.unraw();
        // Static parameters are never split; by default every other one is split along 0.
        let axis = match (written[i], p.role) {
            (None, Role::Static) => None,
            (None, _) => Some(0),
            (Some(a), _) => a.value,
        };
        if let Some(axis) = axis {
            let at = |cx: &mut Ctxt, message: String| match written[i] {
                Some(a) if list => cx.error_spanned_by(a.tokens(), message),
                _ => cx.error_spanned_by(&p.ty, message),
            };
            let inner = match &p.ty {
                Type::Reference(r) => &*r.elem,
                t => t,
            };
            if p.role == Role::Static {
                at(
                    cx,
                    format!(
                        "`{pname}` is static: every device gets its Rust value, so it has no \
                         axis {axis} to split; write `None` for it in `in_axes`"
                    ),
                );
            } else if scalar_type(inner).is_some() {
                let how = if written[i].is_none() {
                    format!(
                        ", and without `in_axes` #[pmap] splits every parameter along axis 0; \
                         say which are split, with `None` for `{pname}`"
                    )
                } else if list {
                    String::new()
                } else {
                    ", and `in_axes` splits every parameter; give one axis per parameter"
                        .to_string()
                };
                at(
                    cx,
                    format!(
                        "axis {axis} is out of range for `{pname}`, a Rust scalar (rank 0): it \
                         has no axis to split over devices{how}; write `None` for it, and every \
                         device gets the same `{pname}`"
                    ),
                );
            }
        }
        axes.push(axis);
    }

    let out_axes = out_axes.map(|a| {
        if let (AxesValue::List { entries, span }, ReturnType::Type(_, ty)) =
            (&a.value, &jit.sig.output)
        {
            if let Type::Tuple(t) = &**ty {
                if t.elems.len() != entries.len() {
                    cx.error(
                        *span,
                        format!(
                            "out_axes has {} entries but the result is a tuple of {}: give one \
                             axis per element",
                            entries.len(),
                            t.elems.len()
                        ),
                    );
                }
            }
        }
        a.value
    });

    Some(PmapFn {
        jit,
        axis_name,
        axes,
        out_axes,
    })
}

/// `#[jit]`'s messages, said of `#[pmap]`.
fn reword(message: &str) -> String {
    message
        .replace("#[jit", "#[pmap")
        .replace("jitted", "pmapped")
        .replace("jit traces", "pmap traces")
}
