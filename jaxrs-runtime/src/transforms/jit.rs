//! `jit`: trace once per input signature, compile with XLA, and call the cached executable.
//!
//! The `#[jit]` macro and the [`jit`] function both go through [`jit_call`]. See DESIGN.md
//! item 5 for the cache key.

use crate::tree::Tree;
use std::fmt::Debug;
use std::hash::Hash;

/// The compile cache of one jitted function.
///
/// `#[jit] fn step(..)` keeps one in a static, reachable as `step::jit_site()`:
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[jit]
/// fn scale(x: &Array, by: f32) -> Array {
///     x * by
/// }
///
/// let x = Array::ones(&[2], DType::F32);
/// assert_eq!(scale(&x, 0.5).to_vec::<f32>(), vec![0.5, 0.5]);
/// scale(&x, 2.0); // a new value of a traced scalar: the same program
/// assert_eq!(scale::jit_site().cache_misses(), 1);
/// assert_eq!(scale::jit_site().name(), "scale");
/// ```
pub struct JitSite {
    name: &'static str,
    location: &'static str,
    state: std::sync::OnceLock<crate::transforms::jit_cache::JitCache>,
}

impl JitSite {
    /// A cache for the function `name` defined at `location` (`file:line`).
    pub const fn new(name: &'static str, location: &'static str) -> JitSite {
        JitSite {
            name,
            location,
            state: std::sync::OnceLock::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn location(&self) -> &'static str {
        self.location
    }

    pub(crate) fn cache(&self) -> &crate::transforms::jit_cache::JitCache {
        self.state
            .get_or_init(crate::transforms::jit_cache::JitCache::default)
    }
}

/// Values of static arguments: part of the cache key, compared by value.
///
/// Floats are wrapped in [`FloatKey`] (hashed by bits) by the `#[jit]` macro.
#[diagnostic::on_unimplemented(
    message = "static arguments must be Hash + Eq + Debug + Clone + Send + Sync + 'static",
    note = "a static argument is part of the compile-cache key; arrays are traced, not static"
)]
pub trait StaticArgs: Hash + Eq + Debug + Clone + Send + Sync + 'static {}
impl<T: Hash + Eq + Debug + Clone + Send + Sync + 'static> StaticArgs for T {}

/// A float used as a static argument, hashed and compared by its bits.
#[derive(Clone, Copy)]
pub struct FloatKey<T>(pub T);

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl PartialEq for FloatKey<$t> {
            fn eq(&self, other: &Self) -> bool {
                self.0.to_bits() == other.0.to_bits()
            }
        }
        impl Eq for FloatKey<$t> {}
        impl Hash for FloatKey<$t> {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.0.to_bits().hash(state)
            }
        }
        impl Debug for FloatKey<$t> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                Debug::fmt(&self.0, f)
            }
        }
    )*};
}
float_key!(f32, f64);

/// Calls the function cached in `site`.
///
/// `donated` holds the arguments whose buffers XLA may reuse for outputs (taken by value, so
/// the caller cannot read them again), `kept` the other traced arguments, `statics` the static
/// ones. `body` is the user's function over traced arguments: it runs only on a cache miss
/// (or inlined, when called inside another transformation's trace). Rust scalars among the
/// arguments arrive in `body` as weakly typed 0-d arrays, which is why `D`/`K` and `DT`/`KT`
/// differ.
#[track_caller]
pub fn jit_call<D, K, S, DT, KT, R>(
    site: &JitSite,
    donated: D,
    kept: K,
    statics: S,
    body: impl Fn(DT, KT, &S) -> R,
) -> R
where
    D: Tree,
    K: Tree,
    S: StaticArgs,
    DT: Tree,
    KT: Tree,
    R: Tree,
{
    crate::transforms::jit_cache::call(site, donated, kept, statics, body)
}

/// A jitted closure; see [`jit`].
pub struct Jitted<F> {
    f: F,
    site: JitSite,
    donate: bool,
}

/// Jit-compiles a closure over a tree of arrays.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let f = jit(|(x, y): (Array, Array)| (&x * &y).sum(None, false));
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let b = Array::from_vec(vec![4.0f32, 5.0, 6.0], &[3]);
/// let z: Array = f.call((a.clone(), b.clone()));
/// assert_eq!(z.item::<f32>(), 32.0);
/// let _: Array = f.call((b, a)); // the same shapes: no new compile
/// assert_eq!(f.site().cache_misses(), 1);
/// ```
pub fn jit<A: Tree, R: Tree, F: Fn(A) -> R>(f: F) -> Jitted<F> {
    Jitted {
        f,
        site: JitSite::new("<closure>", "<closure>"),
        donate: false,
    }
}

impl<F> Jitted<F> {
    /// Donates the whole argument tree to each call: outputs may reuse its buffers.
    pub fn donate_argument(mut self) -> Self {
        self.donate = true;
        self
    }

    /// The compile cache: counters and the last miss's explanation.
    pub fn site(&self) -> &JitSite {
        &self.site
    }

    /// Calls the compiled function, compiling on the first call for these input avals.
    #[track_caller]
    pub fn call<A: Tree, R: Tree>(&self, args: A) -> R
    where
        F: Fn(A) -> R,
    {
        if self.donate {
            jit_call(&self.site, args, (), (), |a: A, (), _: &()| (self.f)(a))
        } else {
            jit_call(&self.site, (), args, (), |(), a: A, _: &()| (self.f)(a))
        }
    }
}
