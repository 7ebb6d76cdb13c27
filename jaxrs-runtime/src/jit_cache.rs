//! The jit cache: key computation, trace-lower-compile on a miss, execute on a hit.
use crate::jit::{JitSite, StaticArgs};
use crate::tree::Tree;

#[derive(Default)]
pub(crate) struct JitCache {}

pub(crate) fn call<D: Tree, K: Tree, S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    _site: &JitSite,
    _donated: D,
    _kept: K,
    _statics: S,
    _body: impl Fn(DT, KT, &S) -> R,
) -> R {
    todo!("being written")
}
