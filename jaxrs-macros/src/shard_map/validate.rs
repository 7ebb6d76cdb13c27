//! Checks the function and the options against each other (the function's checks are
//! #[remat]'s, in [`closure_fn`], with #[shard_map]'s messages) and builds the model
//! expansion works from.

use super::attr::{ExprOption, ShardMapAttr};
use crate::common::closure_fn::{self, ClosureFn, Rules};
use crate::common::fn_checks::KindMessages;
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::Item;

/// A function mapped over shards, checked.
pub struct ShardMapFn {
    pub f: ClosureFn,
    pub in_specs: InSpecs,
    pub out_specs: syn::Expr,
    pub mesh: Option<syn::Expr>,
    pub check_vma: Option<syn::Expr>,
}

/// `in_specs` as written.
pub enum InSpecs {
    /// One expression for every traced parameter (a prefix of their tuple).
    All(syn::Expr),
    /// One per traced parameter, in parameter order.
    PerParam(Vec<syn::Expr>),
}

const RULES: Rules = Rules {
    macro_name: "shard_map",
    not_a_function: "#[shard_map] applies to functions: put it on a function, e.g. \
                     `#[shard_map(in_specs = P![\"dp\"], out_specs = P![\"dp\"])] \
                     fn f(x: &Array) -> Array { .. }`, or wrap a closure in `jaxrs::shard_map(..)`",
    kind: KindMessages {
        macro_name: "shard_map",
        const_fn: "#[shard_map] cannot be applied to a `const fn`: it is traced when called, \
                   which cannot happen at compile time; remove `const`",
        async_fn: "#[shard_map] cannot be applied to an `async fn`: shard_map traces the body \
                   into one program when called, and an async fn returns a future instead of \
                   running its body; remove `async`",
        extern_fn: "#[shard_map] cannot be applied to an `extern` function: it takes and \
                    returns Rust values (arrays, trees); remove the ABI",
    },
    method: "#[shard_map] cannot be applied to a method: shard_map traces a function of its \
             arguments, and `self` is not one it can trace; make it a free function taking \
             the model as an ordinary parameter, e.g. `fn block(layer: &Layer, x: &Array)`",
    no_output: "a shard_map'd function must return arrays (its results are put together from \
                the devices' pieces as `out_specs` say); declare a return type, e.g. `-> Array`",
    adjective: "shard_map'd",
};

/// Parses the annotated item and checks it together with the options. `None` when the item
/// is not a function at all, or an option it needs is missing (already reported).
pub fn validate(cx: &mut Ctxt, attr: ShardMapAttr, item: Item) -> Option<ShardMapFn> {
    let missing = |cx: &mut Ctxt, key: &str, example: &str| {
        cx.error(
            Span::call_site(),
            format!("#[shard_map] needs `{key} = ...`, e.g. `{key} = {example}` (JAX's `{key}=`)"),
        )
    };
    if attr.out_specs.is_none() && !attr.incomplete {
        missing(cx, "out_specs", "P![\"dp\"]");
    }
    if attr.in_specs.is_none() && !attr.incomplete {
        missing(cx, "in_specs", "(P![\"dp\"], P![])");
    }
    let before = cx.error_count();
    let f = closure_fn::validate(cx, &RULES, attr.statics.as_ref(), attr.incomplete, item)?;
    // A parameter refused above is missing from `f.params`: counting them would mislead.
    let params_known = !attr.incomplete && cx.error_count() == before;
    let in_specs = match attr.in_specs? {
        ExprOption {
            expr: syn::Expr::Tuple(t),
            ..
        } => {
            let traced: Vec<String> = f
                .params
                .iter()
                .filter(|p| !p.is_static)
                .map(|p| format!("`{}`", p.ident.unraw()))
                .collect();
            if params_known && t.elems.len() != traced.len() {
                cx.error(
                    syn::spanned::Spanned::span(&t),
                    format!(
                        "`in_specs` has {} entries, but `{}` has {} traced parameters ({}); give \
                         one spec per traced parameter, in order (static parameters have none), \
                         or one spec for all",
                        t.elems.len(),
                        f.sig.ident.unraw(),
                        traced.len(),
                        if traced.is_empty() {
                            "none".to_string()
                        } else {
                            traced.join(", ")
                        }
                    ),
                );
            }
            InSpecs::PerParam(t.elems.into_iter().collect())
        }
        ExprOption { expr, .. } => InSpecs::All(expr),
    };
    Some(ShardMapFn {
        f,
        in_specs,
        out_specs: attr.out_specs?.expr,
        mesh: attr.mesh.map(|e| e.expr),
        check_vma: attr.check_vma.map(|e| e.expr),
    })
}
