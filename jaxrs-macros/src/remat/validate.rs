//! Checks the function and the options against each other (the checks #[shard_map] shares,
//! in [`closure_fn`], with #[remat]'s messages) and builds the model expansion works from.

use super::attr::{Policy, RematAttr};
use crate::common::closure_fn::{self, ClosureFn, Rules};
use crate::common::fn_checks::KindMessages;
use crate::ctxt::Ctxt;
use syn::Item;

/// A rematerialised function, checked.
pub struct RematFn {
    pub f: ClosureFn,
    pub policy: Option<Policy>,
}

const RULES: Rules = Rules {
    macro_name: "remat",
    not_a_function: "#[remat] applies to functions: put it on a function, e.g. \
                     `#[remat] fn block(x: &Array, w: &Array) -> Array { .. }`, or wrap a closure \
                     in `jaxrs::remat(..)`",
    kind: KindMessages {
        macro_name: "remat",
        const_fn: "#[remat] cannot be applied to a `const fn`: a rematerialised function is \
                   traced when called, which cannot happen at compile time; remove `const`",
        async_fn: "#[remat] cannot be applied to an `async fn`: remat traces the body into \
                   one program when called, and an async fn returns a future instead of \
                   running its body; remove `async`",
        extern_fn: "#[remat] cannot be applied to an `extern` function: it takes and \
                    returns Rust values (arrays, trees); remove the ABI",
    },
    method: "#[remat] cannot be applied to a method: remat traces a function of its \
             arguments, and `self` is not one it can trace; make it a free function taking \
             the model as an ordinary parameter, e.g. `fn block(layer: &Layer, x: &Array)`",
    no_output: "a rematerialised function must return arrays (its outputs are what the backward \
                pass recomputes); declare a return type, e.g. `-> Array` or `-> (Array, Array)`",
    adjective: "rematerialised",
};

/// Parses the annotated item and checks it together with the options. `None` when the item
/// is not a function at all (already reported).
pub fn validate(cx: &mut Ctxt, attr: RematAttr, item: Item) -> Option<RematFn> {
    let f = closure_fn::validate(cx, &RULES, attr.statics.as_ref(), attr.incomplete, item)?;
    Some(RematFn {
        f,
        policy: attr.policy,
    })
}
