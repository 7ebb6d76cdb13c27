//! Named axes in scope while a function is traced: JAX's axis environment.
//!
//! `vmap(axis_name = "i")` and `pmap(axis_name = "d")` trace their function with a named axis
//! in scope; a collective (`psum(x, "i")`, `axis_index("d")`, ...) looks its axis up here when
//! it is bound, to check the name and learn the axis size, and records both in its equation.
//! What the equation then means is decided by whoever runs the jaxpr: vmap's batching rule
//! reduces over the batch dim of the axis it maps, pmap's lowering emits a collective over the
//! devices. The scope is per thread, like the trace stack.

use std::cell::RefCell;

/// One named axis: its name and how many members it has (examples or devices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedAxis {
    pub name: String,
    pub size: usize,
}

thread_local! {
    /// The axes in scope, outermost first, each marked manual when a `shard_map` put it
    /// there (a mesh axis its body is manual over) rather than a vmap or pmap.
    static AXES: RefCell<Vec<(NamedAxis, bool)>> = const { RefCell::new(Vec::new()) };
}

/// Pops the axis it pushed, also when the traced function panics, so a caught panic leaves
/// no stale axis behind.
struct AxisGuard;

impl Drop for AxisGuard {
    fn drop(&mut self) {
        AXES.with(|a| a.borrow_mut().pop());
    }
}

/// Runs `f` with the axis `name` of `size` members in scope (innermost wins on a repeated
/// name, as in JAX).
pub fn with_named_axis<R>(name: &str, size: usize, f: impl FnOnce() -> R) -> R {
    with_axis(name, size, false, f)
}

/// [`with_named_axis`] for a mesh axis a `shard_map` body is manual over.
pub fn with_manual_axis<R>(name: &str, size: usize, f: impl FnOnce() -> R) -> R {
    with_axis(name, size, true, f)
}

fn with_axis<R>(name: &str, size: usize, manual: bool, f: impl FnOnce() -> R) -> R {
    AXES.with(|a| {
        let axis = NamedAxis {
            name: name.to_owned(),
            size,
        };
        a.borrow_mut().push((axis, manual))
    });
    let _guard = AxisGuard;
    f()
}

/// The innermost axis called `name`, if one is in scope.
pub fn lookup(name: &str) -> Option<NamedAxis> {
    AXES.with(|a| {
        a.borrow()
            .iter()
            .rev()
            .find(|(x, _)| x.name == name)
            .map(|(x, _)| x.clone())
    })
}

/// Is the innermost axis called `name` a manual mesh axis (put in scope by `shard_map`)?
pub fn is_manual(name: &str) -> bool {
    AXES.with(|a| {
        a.borrow()
            .iter()
            .rev()
            .find(|(x, _)| x.name == name)
            .is_some_and(|&(_, manual)| manual)
    })
}

/// The names in scope, outermost first (for the message about an unknown name).
pub fn names_in_scope() -> Vec<String> {
    AXES.with(|a| a.borrow().iter().map(|(x, _)| x.name.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_axis_wins_and_scopes_close_on_panic() {
        with_named_axis("i", 3, || {
            with_named_axis("i", 5, || assert_eq!(lookup("i").unwrap().size, 5));
            assert_eq!(lookup("i").unwrap().size, 3);
            let caught = std::panic::catch_unwind(|| with_named_axis("j", 2, || panic!("boom")));
            assert!(caught.is_err());
            assert_eq!(names_in_scope(), vec!["i".to_string()]);
        });
        assert!(lookup("i").is_none());
    }
}
