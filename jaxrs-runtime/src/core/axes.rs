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
    static AXES: RefCell<Vec<NamedAxis>> = const { RefCell::new(Vec::new()) };
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
    AXES.with(|a| {
        a.borrow_mut().push(NamedAxis {
            name: name.to_owned(),
            size,
        })
    });
    let _guard = AxisGuard;
    f()
}

/// The innermost axis called `name`, if one is in scope.
pub fn lookup(name: &str) -> Option<NamedAxis> {
    AXES.with(|a| a.borrow().iter().rev().find(|x| x.name == name).cloned())
}

/// The names in scope, outermost first (for the message about an unknown name).
pub fn names_in_scope() -> Vec<String> {
    AXES.with(|a| a.borrow().iter().map(|x| x.name.clone()).collect())
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
