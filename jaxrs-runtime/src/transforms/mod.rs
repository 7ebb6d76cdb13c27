//! The user API of transformations: [`jit`](jit) with its compile cache, [`grad`] and
//! friends, [`vmap`](vmap), loops and branches ([`loops`]), [`remat`](remat), inspection
//! ([`inspect`]) and [`check_grads`](check_grads). Each traces a function over trees into a
//! jaxpr and runs an interpreter or binds a higher-order primitive.

pub mod abstract_leaf;
pub mod aot;
pub mod check_grads;
pub mod grad;
pub mod inspect;
pub mod jacobian;
pub mod jit;
pub mod loops;
pub mod pmap;
pub mod remat;
pub mod shard_map;
pub(crate) mod traced;
pub mod vmap;

/// The name a function passed to `jit(f)` or `pmap(f)` goes by in messages and profiles, as
/// JAX names `jit(f)` by `f.__name__`: a function item's own name (`train_step`), or for a
/// closure the function it was written in (`main::{{closure}}`), from the type's name, which
/// Rust gives as a `'static` path (`my_crate::main::{{closure}}`). Its module path is dropped.
pub(crate) fn callable_name<F>() -> &'static str {
    short_path(std::any::type_name::<F>())
}

/// `path` from its last segment before the first `{{closure}}` (or from its last segment), the
/// `::` inside generic arguments (`run<my_crate::Model>`) not counting as separators.
fn short_path(path: &'static str) -> &'static str {
    let end = path.find("::{{closure}}").unwrap_or(path.len());
    let bytes = path.as_bytes();
    let (mut depth, mut start, mut i) = (0usize, 0usize, 0usize);
    while i < end {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &path[start..]
}

#[cfg(test)]
mod tests {
    use super::{callable_name, short_path};

    fn step(x: f32) -> f32 {
        x
    }

    #[test]
    fn a_function_goes_by_its_name_and_a_closure_by_the_function_it_is_in() {
        fn name_of<F: Fn(f32) -> f32>(_: &F) -> &'static str {
            callable_name::<F>()
        }
        assert_eq!(name_of(&step), "step");
        assert_eq!(
            name_of(&|x: f32| x + 1.0),
            "a_function_goes_by_its_name_and_a_closure_by_the_function_it_is_in::{{closure}}"
        );
        assert_eq!(
            short_path("my_crate::run<my_crate::Model>::{{closure}}::{{closure}}"),
            "run<my_crate::Model>::{{closure}}::{{closure}}"
        );
        assert_eq!(short_path("plain"), "plain");
    }
}
