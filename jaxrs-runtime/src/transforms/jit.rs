//! `jit`: trace once per input signature, compile with XLA, and call the cached executable.
//!
//! The `#[jit]` macro and the [`jit`] function both go through [`jit_call`].
//!
//! The cache key (DESIGN.md item 5) is the tree structure and avals of every traced argument
//! and the values of the static ones; the function is the [`JitSite`] itself. A hit goes
//! straight to PJRT execute: no tracing, no lowering, no string formatting.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::fail;
use crate::core::compile_cache::Lookup;
use crate::core::ir::Jaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions, Spmd};
use crate::core::sharding::{
    collect_traced_meshes, try_device_put, Mesh, NamedSharding, PartitionSpec, Shardings,
};
use crate::core::sharding_types::type_sharding;
use crate::core::spmd::SpmdProgram;
use crate::core::trace::is_tracing;
use crate::error::Error;
use crate::pjrt::{Buffer, Device, LoadedExecutable};
use crate::prims::sharding::{shardings_per_leaf, with_sharding_constraint};
use crate::transforms::abstract_leaf::AbstractLeaf;
use crate::transforms::traced::{rebuild, trace_tree};
use crate::tree::{leaf_paths, static_diffs, Tree, TreeDef};
use std::any::Any;
use std::borrow::Cow;
use std::fmt::Debug;
use std::fmt::Write;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

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
    params: Option<JitParams>,
    state: std::sync::OnceLock<JitCache>,
}

/// The names of a jitted function's parameters in each role, in the order `jit_call` takes
/// them, so that recompile explanations say `x` and `params.w` rather than `arg[0]`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct JitParams {
    pub donated: &'static [&'static str],
    pub kept: &'static [&'static str],
    pub statics: &'static [&'static str],
}

impl JitSite {
    /// A cache for the function `name` defined at `location` (`file:line`). Explanations
    /// name its arguments by position: `arg[0]`, `arg[1].w`.
    pub const fn new(name: &'static str, location: &'static str) -> JitSite {
        JitSite {
            name,
            location,
            params: None,
            state: std::sync::OnceLock::new(),
        }
    }

    /// [`JitSite::new`] for a function whose parameters explanations name (`#[jit]`'s).
    #[doc(hidden)]
    pub const fn with_params(
        name: &'static str,
        location: &'static str,
        params: JitParams,
    ) -> JitSite {
        JitSite {
            name,
            location,
            params: Some(params),
            state: std::sync::OnceLock::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn location(&self) -> &'static str {
        self.location
    }

    pub(crate) fn cache(&self) -> &JitCache {
        self.state.get_or_init(JitCache::default)
    }

    /// How many times this function was traced and compiled (a miss of its cache).
    pub fn cache_misses(&self) -> u64 {
        self.cache().misses()
    }

    /// How many specialisations are cached.
    pub fn cache_size(&self) -> usize {
        self.cache().size()
    }

    /// How many of this function's compiles the persistent compile cache answered from disk
    /// (a program compiled by an earlier process or another site). With
    /// [`JitSite::compile_cache_misses`] it sums to [`JitSite::cache_misses`], unless the
    /// persistent cache is off (`JAXRS_COMPILE_CACHE=0`), when neither counts.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let program = |x: Array| x.cos() * 3.0;
    /// let first = jit(program);
    /// let _: Array = first.call(Array::zeros(&[2], DType::F32));
    /// // Compiled here, or loaded from disk if an earlier run compiled the same program.
    /// let site = first.site();
    /// assert_eq!(site.compile_cache_hits() + site.compile_cache_misses(), 1);
    ///
    /// // Another site with the same program finds it on disk.
    /// let second = jit(program);
    /// let _: Array = second.call(Array::zeros(&[2], DType::F32));
    /// assert_eq!(second.site().compile_cache_hits(), 1);
    /// assert_eq!(second.site().compile_cache_misses(), 0);
    /// ```
    pub fn compile_cache_hits(&self) -> u64 {
        self.cache().disk_hits()
    }

    /// How many of this function's compiles ran XLA and stored the result in the persistent
    /// compile cache; see [`JitSite::compile_cache_hits`].
    pub fn compile_cache_misses(&self) -> u64 {
        self.cache().disk_misses()
    }

    /// Why the most recent cache miss happened (`None` before the first call).
    pub fn last_miss_explanation(&self) -> Option<String> {
        self.cache().last_miss_explanation()
    }

    /// The StableHLO module of the most recently compiled specialisation, as XLA received it
    /// (for a sharded program, with its `sdy.mesh` and `sdy.sharding` annotations).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let f = jit(|x: Array| x.sin());
    /// let _: Array = f.call(Array::zeros(&[3], DType::F32));
    /// assert!(f.site().last_stablehlo().unwrap().contains("stablehlo.sine"));
    /// ```
    pub fn last_stablehlo(&self) -> Option<String> {
        self.cache().last_entry().map(|e| e.text.clone())
    }

    /// The most recently compiled specialisation as XLA optimized it, with its format: on
    /// the CPU plugin `"hlo_with_config"`, a serialized `HloModuleProtoWithConfig` holding
    /// the per-device program, whose instructions name their opcodes (`all-reduce`) as plain
    /// strings. `None` when the plugin does not provide it.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let f = jit(|x: Array| x.sin());
    /// let _: Array = f.call(Array::zeros(&[3], DType::F32));
    /// let (format, bytes) = f.site().last_optimized_program().unwrap();
    /// assert!(format.starts_with("hlo"));
    /// assert!(bytes.windows(4).any(|w| w == b"sine"));
    /// ```
    pub fn last_optimized_program(&self) -> Option<(String, Vec<u8>)> {
        self.cache().last_entry()?.exe.optimized_program().ok()
    }

    /// The compiled memory statistics of the most recently compiled specialisation.
    pub fn last_compiled_memory_stats(&self) -> Option<crate::pjrt::MemoryStats> {
        self.cache().last_compiled_memory_stats()
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
/// the caller cannot read them again; see [`Jitted::donate_argument`] for an array passed
/// twice and for one whose clone is alive), `kept` the other traced arguments, `statics` the static
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
    call(site, None, donated, kept, statics, body)
}

/// [`jit_call`] with shardings (what `#[jit(in_shardings = .., out_shardings = ..)]` calls).
#[track_caller]
pub fn jit_call_sharded<D, K, S, DT, KT, R>(
    site: &JitSite,
    shardings: &JitShardings,
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
    call(site, Some(shardings), donated, kept, statics, body)
}

/// The shardings of one jit call: JAX's `in_shardings` (split by role, as `jit_call` takes
/// the arguments) and `out_shardings`, and the mesh bare specs refer to (else the mesh in
/// scope, [`Mesh::enter`]).
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct JitShardings {
    pub mesh: Option<Mesh>,
    pub donated: Shardings,
    pub kept: Shardings,
    pub out: Shardings,
}

/// What `#[jit(in_shardings = .., out_shardings = ..)]` accepts, with the compiler's error
/// saying so when a value is none of them.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a sharding",
    label = "not a sharding",
    note = "a sharding is a PartitionSpec (`P![..]`, over the jit's mesh or the mesh in scope), \
            a NamedSharding, `None` (unspecified), or a tuple or Vec of them (one per child)"
)]
pub trait IntoShardings {
    fn into_shardings(self) -> Shardings;
}

// One impl per accepted type rather than a blanket one over `Into<Shardings>`: with the
// blanket impl, the compiler reports the unmet `From` bound behind it instead of the message
// above.
macro_rules! into_shardings_via_from {
    ($($t:ty),*) => {$(
        impl IntoShardings for $t {
            fn into_shardings(self) -> Shardings {
                self.into()
            }
        }
    )*};
}
into_shardings_via_from!(Shardings, PartitionSpec, NamedSharding, &NamedSharding, ());

impl<T: IntoShardings> IntoShardings for Option<T> {
    fn into_shardings(self) -> Shardings {
        self.map_or(Shardings::Unspecified, IntoShardings::into_shardings)
    }
}

impl<T: IntoShardings> IntoShardings for Vec<T> {
    fn into_shardings(self) -> Shardings {
        Shardings::PerChild(
            self.into_iter()
                .map(IntoShardings::into_shardings)
                .collect(),
        )
    }
}

macro_rules! into_shardings_tuple {
    ($($t:ident),+) => {
        impl<$($t: IntoShardings),+> IntoShardings for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_shardings(self) -> Shardings {
                let ($($t,)+) = self;
                Shardings::PerChild(vec![$($t.into_shardings()),+])
            }
        }
    };
}
into_shardings_tuple!(A);
into_shardings_tuple!(A, B);
into_shardings_tuple!(A, B, C);
into_shardings_tuple!(A, B, C, D);
into_shardings_tuple!(A, B, C, D, E);
into_shardings_tuple!(A, B, C, D, E, F);
into_shardings_tuple!(A, B, C, D, E, F, G);
into_shardings_tuple!(A, B, C, D, E, F, G, H);

/// `s` as [`Shardings`] (the `#[jit]` expansion's conversion).
#[doc(hidden)]
pub fn shardings(s: impl IntoShardings) -> Shardings {
    s.into_shardings()
}

/// A jitted closure; see [`jit`].
pub struct Jitted<F> {
    f: F,
    site: JitSite,
    donate: Donation,
    shardings: Option<JitShardings>,
}

/// What a jitted closure gives up to its calls (JAX's `donate_argnums`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Donation {
    Nothing,
    /// The whole argument tree ([`Jitted::donate_argument`]).
    Whole,
    /// These elements of the argument tuple ([`Jitted::donate_argnums`]).
    Elements(Vec<usize>),
}

/// The argument tuple of one call split into its donated and kept leaves, by
/// [`Jitted::donate_argnums`]: a static key of the call (the tuple's structure and which of
/// its leaves are donated), from which the body rebuilds the tuple.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ElementDonation {
    def: TreeDef,
    donated: Vec<bool>,
}

impl ElementDonation {
    /// The split of an argument of structure `def` donating tuple elements `argnums`;
    /// panics naming the transformation (``jit `f` ``) when the argument is no tuple or an
    /// index is out of range.
    pub(crate) fn new(what: &str, argnums: &[usize], def: &TreeDef) -> ElementDonation {
        let TreeDef::Tuple(elements) = def else {
            panic!(
                "{what}: donate_argnums({argnums:?}) needs a tuple argument, one element per \
                 argument as JAX's positional arguments (this call passes {def}); \
                 donate_argument donates a whole argument"
            );
        };
        if let Some(bad) = argnums.iter().find(|&&i| i >= elements.len()) {
            panic!(
                "{what}: donate_argnums({argnums:?}) names element {bad}, but the argument \
                 tuple has {} elements",
                elements.len()
            );
        }
        let donated = elements
            .iter()
            .enumerate()
            .flat_map(|(i, e)| std::iter::repeat_n(argnums.contains(&i), e.num_leaves()))
            .collect();
        ElementDonation {
            def: def.clone(),
            donated,
        }
    }

    /// `leaves` (of the whole argument, in order) as (donated, kept).
    pub(crate) fn split<L>(&self, leaves: Vec<L>) -> (Vec<L>, Vec<L>) {
        let (mut donated, mut kept) = (Vec::new(), Vec::new());
        for (leaf, &d) in leaves.into_iter().zip(&self.donated) {
            if d {
                donated.push(leaf);
            } else {
                kept.push(leaf);
            }
        }
        (donated, kept)
    }

    /// The argument rebuilt from its split leaves.
    pub(crate) fn rebuild<A: Tree>(&self, donated: Vec<Array>, kept: Vec<Array>) -> A {
        let (mut donated, mut kept) = (donated.into_iter(), kept.into_iter());
        let leaves: Vec<Array> = self
            .donated
            .iter()
            .map(|&d| if d { donated.next() } else { kept.next() })
            .map(|l| l.expect("as many leaves as the split made"))
            .collect();
        crate::tree::tree_unflatten(&self.def, leaves)
    }

    /// Where each of the program's arguments (donated first) is in the argument's leaves.
    pub(crate) fn program_order(&self) -> Vec<usize> {
        let (donated, kept) = self.split((0..self.donated.len()).collect());
        donated.into_iter().chain(kept).collect()
    }

    /// The structures of the split's two parts: lists of leaves.
    pub(crate) fn defs(&self) -> (TreeDef, TreeDef) {
        let n = self.donated.iter().filter(|&&d| d).count();
        (
            TreeDef::List(vec![TreeDef::Leaf; n]),
            TreeDef::List(vec![TreeDef::Leaf; self.donated.len() - n]),
        )
    }

    /// The jit's shardings (given for the whole argument) split as the leaves are.
    pub(crate) fn shardings(&self, site: &JitSite, s: &JitShardings) -> JitShardings {
        let scope = s.mesh.clone().or_else(Mesh::current);
        let what = format!("jit `{}`: in_shardings", site.name());
        let per_leaf = shardings_per_leaf(&s.kept, &self.def, scope.as_ref(), &what)
            .unwrap_or_else(|e| panic!("{e}"));
        let as_list = |part: Vec<Option<NamedSharding>>| {
            Shardings::PerChild(
                part.into_iter()
                    .map(|p| p.map_or(Shardings::Unspecified, Shardings::Named))
                    .collect(),
            )
        };
        let (donated, kept) = self.split(per_leaf);
        JitShardings {
            donated: as_list(donated),
            kept: as_list(kept),
            ..s.clone()
        }
    }
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
///
/// // Messages and profiles name a jitted function as JAX names `jit(f)` by `f.__name__`: a
/// // function by its name, a closure as `outer::{{closure}}` after the function it is
/// // written in; with the file of the `jit` call.
/// fn double(x: Array) -> Array {
///     x * 2.0
/// }
/// let g = jit(double);
/// assert_eq!((g.site().name(), g.site().location()), ("double", file!()));
/// assert!(f.site().name().ends_with("::{{closure}}"));
/// ```
#[track_caller]
pub fn jit<A: Tree, R: Tree, F: Fn(A) -> R>(f: F) -> Jitted<F> {
    Jitted {
        f,
        site: JitSite::new(
            super::callable_name::<F>(),
            std::panic::Location::caller().file(),
        ),
        donate: Donation::Nothing,
        shardings: None,
    }
}

impl<F> Jitted<F> {
    /// Donates the whole argument tree to each call: outputs may reuse its buffers.
    ///
    /// As in JAX, a call that passes one array twice with a donated occurrence (`f(x.clone(),
    /// x)` with both donated, or `f(x.clone(), &x)`) fails with [`Error::DonatedBufferUsed`]
    /// naming both parameters. A donated array whose clone is still alive elsewhere is not
    /// donated (its buffer stays readable through the clone); the first such call of each
    /// jitted function says so with a `log::warn!` (target `jaxrs::jit`).
    pub fn donate_argument(mut self) -> Self {
        self.donate = Donation::Whole;
        self
    }

    /// Donates these elements of the argument tuple to each call (JAX's `donate_argnums`,
    /// the tuple's elements standing for JAX's positional arguments): outputs may reuse
    /// their buffers, and the other elements are kept. As [`Jitted::donate_argument`] for
    /// what a donated array may not be.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// // A training step gives up its parameters, not the batch it is shown.
    /// let step = jit(|(w, x): (Array, Array)| &w - &x * 0.1).donate_argnums(&[0]);
    /// let w = Array::ones(&[4], DType::F32);
    /// let x = Array::ones(&[4], DType::F32);
    /// let w: Array = step.call((w, x.clone()));
    /// assert_eq!(w.to_vec::<f32>(), vec![0.9; 4]);
    /// assert_eq!(x.to_vec::<f32>(), vec![1.0; 4]); // still readable
    /// ```
    pub fn donate_argnums(mut self, argnums: &[usize]) -> Self {
        self.donate = Donation::Elements(argnums.to_vec());
        self
    }

    /// How the arguments are laid out (JAX's `in_shardings`): a prefix of the argument tree,
    /// each entry a [`PartitionSpec`](crate::PartitionSpec) over the jit's mesh, a
    /// [`NamedSharding`](crate::NamedSharding), or `None` (keep the argument's own). The
    /// program then runs SPMD over the mesh, one partition per device, as one XLA program in
    /// which XLA inserts the collectives; an argument laid out otherwise is re-laid out first.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::{Mesh, P};
    ///
    /// jaxrs::set_cpu_device_count(8)?;
    /// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
    /// let f = jit(|(x, w): (Array, Array)| x.matmul(&w).tanh())
    ///     .in_shardings((P!["dp", None], P![None, "mp"]))
    ///     .out_shardings(P!["dp", "mp"])
    ///     .mesh(&mesh);
    /// let x = Array::ones(&[8, 4], DType::F32);
    /// let w = Array::ones(&[4, 8], DType::F32) / 8.0;
    /// let y: Array = f.call((x, w));
    /// assert_eq!(y.sharding().unwrap().to_string(), "NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec('dp', 'mp'))");
    /// assert_eq!(y.addressable_shards()[0].data.shape(), &[4, 2]);
    /// assert!((y.to_vec::<f32>()[0] - 0.5f32.tanh()).abs() < 1e-6);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn in_shardings(mut self, shardings: impl Into<Shardings>) -> Self {
        let s = self.shardings.get_or_insert_with(Default::default);
        s.donated = Shardings::Unspecified;
        s.kept = shardings.into();
        self
    }

    /// How the results are laid out (JAX's `out_shardings`), as a prefix of the result tree;
    /// see [`Jitted::in_shardings`]. A result left unspecified lies as XLA's sharding
    /// propagation chose (read back from the compiled program, as JAX does), or replicated
    /// over the mesh when that is no partition spec over it.
    pub fn out_shardings(mut self, shardings: impl Into<Shardings>) -> Self {
        self.shardings.get_or_insert_with(Default::default).out = shardings.into();
        self
    }

    /// The mesh that bare [`PartitionSpec`](crate::PartitionSpec)s in the shardings refer to;
    /// without it, the mesh in scope at the call ([`Mesh::enter`]).
    pub fn mesh(mut self, mesh: &Mesh) -> Self {
        self.shardings.get_or_insert_with(Default::default).mesh = Some(mesh.clone());
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
        let shardings = self.call_shardings();
        let shardings = shardings.as_deref();
        match &self.donate {
            Donation::Whole => call(&self.site, shardings, args, (), (), |a: A, (), _: &()| {
                (self.f)(a)
            }),
            Donation::Nothing => call(&self.site, shardings, (), args, (), |(), a: A, _: &()| {
                (self.f)(a)
            }),
            Donation::Elements(argnums) => {
                let (leaves, def) = args.flatten();
                drop(args);
                let split =
                    ElementDonation::new(&format!("jit `{}`", self.site.name()), argnums, &def);
                let shardings = shardings.map(|s| split.shardings(&self.site, s));
                let (donated, kept) = split.split(leaves);
                call(
                    &self.site,
                    shardings.as_ref(),
                    donated,
                    kept,
                    split,
                    |d: Vec<Array>, k: Vec<Array>, split: &ElementDonation| {
                        (self.f)(split.rebuild(d, k))
                    },
                )
            }
        }
    }
}

impl<F> Jitted<F> {
    /// The shardings split by role as [`jit_call`] takes them: the one argument tree is the
    /// donated role's when the function donates.
    pub(crate) fn call_shardings(&self) -> Option<Cow<'_, JitShardings>> {
        match &self.shardings {
            Some(s) if self.donate == Donation::Whole => Some(Cow::Owned(JitShardings {
                donated: s.kept.clone(),
                kept: Shardings::Unspecified,
                ..s.clone()
            })),
            s => s.as_ref().map(Cow::Borrowed),
        }
    }

    pub(crate) fn donation(&self) -> &Donation {
        &self.donate
    }

    pub(crate) fn call_body<A, R>(&self, args: A) -> R
    where
        F: Fn(A) -> R,
    {
        (self.f)(args)
    }
}

/// Static argument values kept in a cache entry, compared through `Any`.
pub(crate) trait StaticKey: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn describe(&self) -> String;
}

impl<S: StaticArgs> StaticKey for S {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

/// One compiled specialisation of a jitted function.
pub(crate) struct Entry {
    pub(crate) donated_def: TreeDef,
    pub(crate) kept_def: TreeDef,
    pub(crate) in_avals: Vec<Aval>,
    pub(crate) statics: Box<dyn StaticKey>,
    /// How the call asked its arguments and results to lie (`None`: a single-device call).
    pub(crate) layout: Option<Layout>,
    /// How the compiled program lies on its mesh (`None`: it runs on one device).
    pub(crate) program: Option<SpmdProgram>,
    pub(crate) exe: LoadedExecutable,
    pub(crate) consts: Vec<Array>,
    pub(crate) out_def: TreeDef,
    pub(crate) out_avals: Vec<Aval>,
    /// The StableHLO module compiled, for inspection.
    pub(crate) text: String,
    /// A single-device program compiled again for other devices than `exe`'s, as calls
    /// whose arguments lie there (or a [`default_device`](crate::default_device) scope) ask.
    pub(crate) elsewhere: Mutex<Vec<(i32, Arc<LoadedExecutable>)>>,
}

impl Entry {
    /// Runs `f` on the single-device program for `device`: `exe`, or the same module
    /// compiled for that device (once per device).
    fn with_exe_on<R>(
        &self,
        site: &JitSite,
        device: Device,
        f: impl FnOnce(&LoadedExecutable) -> R,
    ) -> R {
        if self.exe.devices()[0].id() == device.id() {
            return f(&self.exe);
        }
        let exe = {
            let mut elsewhere = self
                .elsewhere
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match elsewhere.iter().find(|(id, _)| *id == device.id()) {
                Some((_, exe)) => exe.clone(),
                None => {
                    let what = format!("jit `{}`", site.name());
                    let options = crate::core::lower::compile_options_on(device);
                    let (exe, lookup) =
                        crate::core::compile_cache::compile(&what, &self.text, &options)
                            .unwrap_or_else(|e| fail(e));
                    site.cache().count_lookup(lookup);
                    let exe = Arc::new(exe);
                    elsewhere.push((device.id(), exe.clone()));
                    exe
                }
            }
        };
        f(&exe)
    }

    fn matches<S: StaticArgs>(
        &self,
        dd: &TreeDef,
        kd: &TreeDef,
        leaves: &[Array],
        statics: &S,
        layout: &Option<Layout>,
    ) -> bool {
        self.in_avals.len() == leaves.len()
            && self.in_avals.iter().zip(leaves).all(|(a, l)| a == l.aval())
            && self.statics.as_any().downcast_ref::<S>() == Some(statics)
            && &self.donated_def == dd
            && &self.kept_def == kd
            && &self.layout == layout
    }
}

/// Where a call's arguments are to lie and its results will, as known before tracing: part
/// of the cache key of a call with shardings or sharded arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    mesh: Mesh,
    /// Per argument leaf: the sharding the program takes it in (`None`: replicated).
    ins: Vec<Option<NamedSharding>>,
    /// `out_shardings`, bare specs resolved against the mesh.
    out: Shardings,
}

/// Bumped by [`clear_caches`]: a site cache whose specialisations are of an older generation
/// drops them at its next call.
static CACHE_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Drops every compiled program of every jitted and pmapped function, as JAX's
/// `jax.clear_caches()`: the next call of each traces and compiles again (answered by the
/// persistent compile cache when it is on, which this leaves alone, as JAX does). The cache
/// counters ([`JitSite::cache_misses`]) keep counting.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[jit]
/// fn double(x: &Array) -> Array {
///     x * 2.0
/// }
///
/// let x = Array::ones(&[2], DType::F32);
/// double(&x);
/// double(&x);
/// assert_eq!(double::jit_site().cache_misses(), 1);
/// jaxrs::clear_caches();
/// double(&x);
/// assert_eq!(double::jit_site().cache_misses(), 2);
/// ```
pub fn clear_caches() {
    CACHE_GENERATION.fetch_add(1, Ordering::AcqRel);
}

thread_local! {
    static JIT_DISABLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn jit_disabled() -> bool {
    JIT_DISABLED.with(std::cell::Cell::get)
}

/// Runs `f` with jit turned off on this thread, as JAX's `with jax.disable_jit():`: a jitted
/// function called inside runs its body op by op, eagerly, so that `println!` and reads of
/// values (`x.to_vec()`) work in it, for debugging. Donation and the compile cache are not
/// used; `grad`, `vmap` and the loops work as they do outside jit. Restored when `f`
/// returns or panics.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[jit]
/// fn step(x: &Array) -> Array {
///     // Reading a value needs a concrete array: only under disable_jit.
///     assert!(x.is_concrete());
///     println!("x = {:?}", x.to_vec::<f32>());
///     x * 2.0
/// }
///
/// let y = jaxrs::disable_jit(|| step(&Array::ones(&[2], DType::F32)));
/// assert_eq!(y.to_vec::<f32>(), vec![2.0, 2.0]);
/// assert_eq!(step::jit_site().cache_misses(), 0);
/// ```
pub fn disable_jit<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            JIT_DISABLED.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(JIT_DISABLED.with(|d| d.replace(true)));
    f()
}

/// The state behind a [`JitSite`].
pub(crate) type JitCache = SiteCache<Entry>;

impl CompiledEntry for Entry {
    fn exe(&self) -> &LoadedExecutable {
        &self.exe
    }
}

/// A compiled specialisation as [`SiteCache`] sees it.
pub(crate) trait CompiledEntry {
    fn exe(&self) -> &LoadedExecutable;
}

/// The compile cache of one call site, shared by [`JitSite`] and
/// [`crate::transforms::pmap::PmapSite`]: its specialisations, newest last, and the record of
/// its misses.
pub(crate) struct SiteCache<E> {
    /// Read through [`SiteCache::entries`], which drops them after [`clear_caches`].
    specialisations: RwLock<Vec<Arc<E>>>,
    /// The [`clear_caches`] generation the specialisations belong to.
    generation: AtomicU64,
    pub(crate) compiling: Mutex<()>,
    misses: AtomicU64,
    /// Compiles the persistent compile cache answered from disk, and compiles it did not.
    disk_hits: AtomicU64,
    disk_misses: AtomicU64,
    explanations: Mutex<Vec<String>>,
    /// Whether a call already warned that a donated argument still had a clone alive.
    pub(crate) warned_undonated: AtomicBool,
}

// Not derived: that would require `E: Default`.
impl<E> Default for SiteCache<E> {
    fn default() -> Self {
        SiteCache {
            specialisations: RwLock::default(),
            generation: AtomicU64::new(CACHE_GENERATION.load(Ordering::Acquire)),
            compiling: Mutex::default(),
            misses: AtomicU64::default(),
            disk_hits: AtomicU64::default(),
            disk_misses: AtomicU64::default(),
            explanations: Mutex::default(),
            warned_undonated: AtomicBool::default(),
        }
    }
}

impl<E: CompiledEntry> SiteCache<E> {
    /// The compiled specialisations, newest last; none once [`clear_caches`] ran after they
    /// were compiled.
    pub(crate) fn entries(&self) -> RwLockReadGuard<'_, Vec<Arc<E>>> {
        let now = CACHE_GENERATION.load(Ordering::Acquire);
        if self.generation.load(Ordering::Acquire) != now {
            let mut entries = write(&self.specialisations);
            if self.generation.swap(now, Ordering::AcqRel) != now {
                entries.clear();
            }
        }
        read(&self.specialisations)
    }

    pub(crate) fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    pub(crate) fn size(&self) -> usize {
        self.entries().len()
    }

    pub(crate) fn disk_hits(&self) -> u64 {
        self.disk_hits.load(Ordering::Relaxed)
    }

    pub(crate) fn disk_misses(&self) -> u64 {
        self.disk_misses.load(Ordering::Relaxed)
    }

    /// Counts what the persistent compile cache did for one of this site's compiles.
    pub(crate) fn count_lookup(&self, lookup: Lookup) {
        match lookup {
            Lookup::Hit => self.disk_hits.fetch_add(1, Ordering::Relaxed),
            Lookup::Miss => self.disk_misses.fetch_add(1, Ordering::Relaxed),
            Lookup::Off => return,
        };
    }

    pub(crate) fn last_miss_explanation(&self) -> Option<String> {
        lock(&self.explanations).last().cloned()
    }

    pub(crate) fn last_entry(&self) -> Option<Arc<E>> {
        self.entries().last().cloned()
    }

    pub(crate) fn last_compiled_memory_stats(&self) -> Option<crate::pjrt::MemoryStats> {
        self.entries()
            .last()
            .and_then(|e| e.exe().compiled_memory_stats().ok())
    }

    /// Counts a miss, logs why it happened under `log_target` and caches its compiled
    /// `entry`. Only the first compile is routine (debug); a recompile is worth an info line.
    pub(crate) fn record_miss(&self, log_target: &str, explanation: String, entry: E) -> Arc<E> {
        let n = self.misses.fetch_add(1, Ordering::Relaxed) + 1;
        if n > 1 {
            log::info!(target: log_target, "{explanation}");
        } else {
            log::debug!(target: log_target, "{explanation}");
        }
        lock(&self.explanations).push(explanation);
        let entry = Arc::new(entry);
        // Brings the generation up to date first, so that the new entry is not dropped.
        drop(self.entries());
        write(&self.specialisations).push(entry.clone());
        entry
    }
}

// The cache's locks ignore poisoning. A panic while one is held leaves its data as it was:
// `compiling` guards no data (it only makes concurrent misses compile once), and `entries` and
// `explanations` only ever gain one complete element, pushed after the trace and the compile
// succeeded. The panic that poisons them is the user's (a shape mismatch while tracing under
// `compiling`), and a caller that catches it must find the function usable again.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

// Not folded into `jit_call`: that one is `#[track_caller]`, which would move where the
// panics in here are reported.
fn call<D: Tree, K: Tree, S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &JitSite,
    shardings: Option<&JitShardings>,
    donated: D,
    kept: K,
    statics: S,
    body: impl Fn(DT, KT, &S) -> R,
) -> R {
    let mut leaves = Vec::new();
    donated.flatten_into(&mut leaves);
    let num_donated = leaves.len();
    kept.flatten_into(&mut leaves);
    let (dd, kd) = (donated.structure(), kept.structure());
    // The caller gave up `donated`: from here on `leaves` may hold its only reference.
    drop(donated);
    drop(kept);

    if is_lowering(site) {
        // `site.lower(..)` traces a call of this function to find what it would compile.
        capture(
            site,
            shardings,
            &dd,
            &kd,
            &leaves,
            num_donated,
            &statics,
            &body,
        );
    }
    if is_tracing() || jit_disabled() || leaves.iter().any(|l| !l.is_concrete()) {
        // Under `disable_jit`, the body runs op by op, eagerly. Inside another transformation: run the body on its tracers (it is inlined into the
        // enclosing trace, which is compiled as a whole). Its shardings become sharding
        // constraints on its arguments and results, as JAX's nested jit does.
        let leaves = match shardings {
            Some(s) => constrain_arguments(site, s, &dd, &kd, leaves),
            None => leaves,
        };
        let (d, k): (DT, KT) = rebuild(
            format_args!("jit `{}`", site.name()),
            &TreeDef::Tuple(vec![dd, kd]),
            leaves,
        );
        let out = body(d, k, &statics);
        return match shardings {
            Some(s) if s.out != Shardings::Unspecified => {
                let scope = s.mesh.clone().or_else(Mesh::current);
                let out_shardings = resolve_specs(&s.out, scope.as_ref())
                    .unwrap_or_else(|e| panic!("jit `{}`: out_shardings: {e}", site.name()));
                with_sharding_constraint(&out, out_shardings)
            }
            _ => out,
        };
    }

    if let Some((donated, other)) = donated_twice(&leaves, num_donated) {
        let paths = param_paths(site, &dd, &kd);
        fail(Error::DonatedBufferUsed(format!(
            "jit `{}`: `{}` is donated and the same array is also passed as `{}` in this call; \
             a donated buffer is consumed by the call, so it can be passed only once (pass a \
             copy, or do not donate it)",
            site.name(),
            paths[donated],
            paths[other]
        )));
    }

    let layout = layout_of(site, shardings, &dd, &kd, &leaves);
    let cache = site.cache();
    let entry = lookup(cache, &dd, &kd, &leaves, &statics, &layout).unwrap_or_else(|| {
        let _guard = lock(&cache.compiling);
        lookup(cache, &dd, &kd, &leaves, &statics, &layout).unwrap_or_else(|| {
            compile_entry(site, dd, kd, &leaves, num_donated, statics, layout, &body)
        })
    });

    // The NaN checker keeps the arguments to re-run the body op by op (so a donated one
    // is not donated then).
    let for_nan_rerun = crate::core::debug_nans::enabled().then(|| leaves.clone());
    let arrays = execute(site, &entry, leaves, num_donated);
    if let Some(leaves) = for_nan_rerun {
        if crate::core::debug_nans::any_nan(&arrays) {
            rerun_for_nan(site, &entry, leaves, &body);
        }
    }
    rebuild(
        format_args!("jit `{}`: cannot rebuild the result", site.name()),
        &entry.out_def,
        arrays,
    )
}

/// A jitted call returned a NaN: runs the body again eagerly, where the NaN checker stops at
/// the first operation that makes one (JAX's `jax_debug_nans` de-optimized re-run).
#[cold]
fn rerun_for_nan<S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &JitSite,
    entry: &Entry,
    leaves: Vec<Array>,
    body: &impl Fn(DT, KT, &S) -> R,
) {
    let statics = (entry.statics.as_any().downcast_ref::<S>())
        .expect("the entry was compiled for these static arguments");
    let (d, k): (DT, KT) = rebuild(
        format_args!("jit `{}`", site.name()),
        &TreeDef::Tuple(vec![entry.donated_def.clone(), entry.kept_def.clone()]),
        leaves,
    );
    drop(body(d, k, statics));
    fail(Error::FloatingPoint(format!(
        "invalid value (nan) encountered in jit `{}` ({}); re-running it op by op did not \
         reproduce it (the compiled program differs numerically)",
        site.name(),
        site.location()
    )));
}

/// Runs a compiled specialisation on its device or mesh, in a profiler span.
pub(crate) fn execute(
    site: &JitSite,
    entry: &Entry,
    leaves: Vec<Array>,
    num_donated: usize,
) -> Vec<Array> {
    let _span = crate::core::profile::span("jit", "execute", || format!("jit `{}`", site.name()));
    match &entry.program {
        Some(program) => run_spmd(site, entry, program, leaves, num_donated),
        None => run_on_one_device(site, entry, leaves, num_donated),
    }
}

/// Runs a single-device program. Arguments laid out otherwise (replicated, or a shard view
/// on another device) are first gathered onto its device (a gathered copy is what gets
/// donated then).
fn run_on_one_device(
    site: &JitSite,
    entry: &Entry,
    leaves: Vec<Array>,
    num_donated: usize,
) -> Vec<Array> {
    // The program runs where its arguments lie when they all lie on one device (JAX's
    // committed arguments), else on the default device.
    let device = crate::core::client::target_device(&leaves);
    let placed: Vec<_> = entry
        .consts
        .iter()
        .chain(&leaves)
        .map(|a| a.on_device(device))
        .collect();
    let args: Vec<&Buffer> = placed
        .iter()
        .map(|a| &*a.concrete("jit").buffers[0])
        .collect();
    let keep_alive = undonatable(site, entry, &placed, num_donated);
    let outs = entry
        .with_exe_on(site, device, |exe| exe.execute(&[args], &keep_alive))
        .unwrap_or_else(|e| fail(e));
    drop(placed);
    drop(leaves);
    outs.into_iter()
        .next()
        .expect("one device")
        .into_iter()
        .zip(&entry.out_avals)
        .map(|(b, a)| Array::from_buffer(b, a.clone(), device))
        .collect()
}

/// Runs an SPMD program with one PJRT execute over all mesh devices: argument list `d` holds
/// each leaf's shard on the executable's device `d`. A leaf already laid out as the program
/// takes it is passed buffer by buffer; another is re-laid out first (and that copy is what
/// gets donated). Results keep their shardings, one buffer per device.
fn run_spmd(
    site: &JitSite,
    entry: &Entry,
    program: &SpmdProgram,
    leaves: Vec<Array>,
    num_donated: usize,
) -> Vec<Array> {
    program.run(
        &entry.exe,
        entry.consts.iter().cloned().chain(leaves),
        |placed| undonatable(site, entry, placed, num_donated),
        &entry.out_avals,
    )
}

/// The argument indices (constants first) of donated leaves that another array still reads
/// (the leaf is shared with a clone, or one of its buffers with a shard view): they are
/// passed as not donatable. The first such call of a site says so.
fn undonatable(
    site: &JitSite,
    entry: &Entry,
    placed: &[Cow<'_, Array>],
    num_donated: usize,
) -> Vec<i64> {
    let mut keep_alive: Vec<i64> = Vec::new();
    let num_consts = entry.consts.len();
    for (i, leaf) in placed[num_consts..num_consts + num_donated]
        .iter()
        .enumerate()
    {
        let shared = Arc::strong_count(&leaf.0) > 1
            || leaf
                .concrete("jit")
                .buffers
                .iter()
                .any(|b| Arc::strong_count(b) > 1);
        if shared {
            // Skipping is safe but silently costs the memory donation was asked to save; JAX
            // warns too ("Some donated buffers were not usable"). Once per site: a training
            // loop would otherwise repeat it every step.
            if !site.cache().warned_undonated.swap(true, Ordering::Relaxed) {
                let names = site.params.as_ref().map(|p| p.donated);
                let path = named_leaf_paths(&entry.donated_def, names)
                    .into_iter()
                    .nth(i)
                    .unwrap_or_else(|| format!("donated leaf {i}"));
                log::warn!(
                    target: "jaxrs::jit",
                    "jit `{}` ({}): donated `{path}` is still shared with a clone, so its buffer \
                     is not donated (drop the clone before the call); this is said once per \
                     function",
                    site.name(),
                    site.location()
                );
            }
            keep_alive.push((num_consts + i) as i64);
        }
    }
    keep_alive
}

/// Every argument leaf's path, donated then kept (`x`, `params.w`, or `arg[0]`).
pub(crate) fn param_paths(site: &JitSite, dd: &TreeDef, kd: &TreeDef) -> Vec<String> {
    let names = site.params.as_ref();
    named_leaf_paths(dd, names.map(|p| p.donated))
        .into_iter()
        .chain(named_leaf_paths(kd, names.map(|p| p.kept)))
        .collect()
}

/// The layout a call asks for: its explicit shardings (bare specs over the jit's mesh or the
/// mesh in scope), else each argument's own named sharding. `None` when nothing names a mesh
/// (a single-device program, as before pjit). Panics naming them when two meshes meet.
pub(crate) fn layout_of<L: AbstractLeaf>(
    site: &JitSite,
    shardings: Option<&JitShardings>,
    dd: &TreeDef,
    kd: &TreeDef,
    leaves: &[L],
) -> Option<Layout> {
    let own = |l: &L| l.named_sharding();
    let (ins, out) = match shardings {
        // The common case costs one pass over the leaves.
        None if !leaves.iter().any(AbstractLeaf::is_sharded) => return None,
        None => (leaves.iter().map(own).collect(), Shardings::Unspecified),
        Some(s) => {
            let scope = s.mesh.clone().or_else(Mesh::current);
            let what = format!("jit `{}`: in_shardings", site.name());
            let explicit: Vec<Option<NamedSharding>> =
                shardings_per_leaf(&s.donated, dd, scope.as_ref(), &what)
                    .and_then(|mut d| {
                        d.extend(shardings_per_leaf(&s.kept, kd, scope.as_ref(), &what)?);
                        Ok(d)
                    })
                    .unwrap_or_else(|e| panic!("{e}"));
            let ins: Vec<Option<NamedSharding>> = explicit
                .into_iter()
                .zip(leaves)
                .map(|(e, l)| e.or_else(|| own(l)))
                .collect();
            let out = resolve_specs(&s.out, scope.as_ref())
                .unwrap_or_else(|e| panic!("jit `{}`: out_shardings: {e}", site.name()));
            (ins, out)
        }
    };
    // Where each mesh comes from: `Some(i)` for argument leaf `i`, `None` for out_shardings.
    // Named only on the error path: a call that fits pays for no strings.
    let mut meshes: Vec<(Option<usize>, &Mesh)> = ins
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().map(|s| (Some(i), s.mesh())))
        .collect();
    out_meshes(&out, &mut meshes);
    let &(first, mesh) = meshes.first()?;
    if let Some(&(other_at, other)) = meshes.iter().find(|(_, m)| *m != mesh) {
        let paths = param_paths(site, dd, kd);
        let what = |at: Option<usize>| match at {
            Some(i) => format!("`{}`", paths[i]),
            None => "out_shardings".to_string(),
        };
        panic!(
            "jit `{}`: {} is on {mesh:?} but {} is on {other:?}; one program runs on one mesh \
             (device_put one of them onto the other's mesh)",
            site.name(),
            what(first),
            what(other_at)
        );
    }
    let mesh = mesh.clone();
    Some(Layout { mesh, ins, out })
}

/// The argument leaves of a jit inlined into another trace, each with an explicit in-sharding
/// constrained to it.
fn constrain_arguments(
    site: &JitSite,
    s: &JitShardings,
    dd: &TreeDef,
    kd: &TreeDef,
    leaves: Vec<Array>,
) -> Vec<Array> {
    let scope = s.mesh.clone().or_else(Mesh::current);
    let what = format!("jit `{}`: in_shardings", site.name());
    let explicit = shardings_per_leaf(&s.donated, dd, scope.as_ref(), &what)
        .and_then(|mut d| {
            d.extend(shardings_per_leaf(&s.kept, kd, scope.as_ref(), &what)?);
            Ok(d)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    leaves
        .into_iter()
        .zip(explicit)
        .map(|(l, s)| match s {
            Some(s) => with_sharding_constraint(&l, s),
            None => l,
        })
        .collect()
}

/// `shardings` with every bare spec made a `NamedSharding` over `mesh`.
fn resolve_specs(shardings: &Shardings, mesh: Option<&Mesh>) -> crate::error::Result<Shardings> {
    Ok(match shardings {
        Shardings::Spec(spec) => {
            let Some(mesh) = mesh else {
                return Err(Error::Sharding(format!(
                    "{spec} needs a mesh, and none is given or in scope (give one with `mesh = \
                     ...`/`.mesh(&m)`, enter one with `let _m = mesh.enter();`, or pass a \
                     NamedSharding)"
                )));
            };
            Shardings::Named(NamedSharding::new(mesh.clone(), spec.clone())?)
        }
        Shardings::PerChild(children) => Shardings::PerChild(
            children
                .iter()
                .map(|c| resolve_specs(c, mesh))
                .collect::<crate::error::Result<_>>()?,
        ),
        other => other.clone(),
    })
}

fn out_meshes<'a>(shardings: &'a Shardings, meshes: &mut Vec<(Option<usize>, &'a Mesh)>) {
    match shardings {
        Shardings::Named(n) => meshes.push((None, n.mesh())),
        Shardings::PerChild(children) => children.iter().for_each(|c| out_meshes(c, meshes)),
        Shardings::Unspecified | Shardings::Spec(_) => {}
    }
}

/// The first donated leaf (by index) that is the same array, or shares a buffer, as
/// another argument leaf, with that leaf's index.
pub(crate) fn donated_twice(leaves: &[Array], num_donated: usize) -> Option<(usize, usize)> {
    let buffers = |a: &Array| -> Vec<*const Buffer> {
        a.concrete("jit").buffers.iter().map(Arc::as_ptr).collect()
    };
    (0..num_donated)
        // A leaf and buffers held once cannot appear elsewhere: the common case costs nothing.
        .filter(|&i| {
            Arc::strong_count(&leaves[i].0) > 1
                || leaves[i]
                    .concrete("jit")
                    .buffers
                    .iter()
                    .any(|b| Arc::strong_count(b) > 1)
        })
        .find_map(|i| {
            let mine = buffers(&leaves[i]);
            let same = |j: &usize| {
                *j != i
                    && (Arc::ptr_eq(&leaves[i].0, &leaves[*j].0)
                        || buffers(&leaves[*j]).iter().any(|b| mine.contains(b)))
            };
            (0..leaves.len()).find(same).map(|j| (i.min(j), i.max(j)))
        })
}

fn lookup<S: StaticArgs>(
    cache: &JitCache,
    dd: &TreeDef,
    kd: &TreeDef,
    leaves: &[Array],
    statics: &S,
    layout: &Option<Layout>,
) -> Option<Arc<Entry>> {
    let entries = cache.entries();
    // Most recent first: a training loop hits the entry it just added.
    entries
        .iter()
        .rev()
        .find(|e| e.matches(dd, kd, leaves, statics, layout))
        .cloned()
}

#[allow(clippy::too_many_arguments)]
fn compile_entry<S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &JitSite,
    dd: TreeDef,
    kd: TreeDef,
    leaves: &[Array],
    num_donated: usize,
    statics: S,
    layout: Option<Layout>,
    body: &impl Fn(DT, KT, &S) -> R,
) -> Arc<Entry> {
    let cache = site.cache();
    let in_avals: Vec<Aval> = leaves.iter().map(|l| l.aval().clone()).collect();
    let explanation = explain_miss(site, cache, &dd, &kd, &in_avals, &statics, &layout);
    let prepared = prepare(site, dd, kd, in_avals, num_donated, statics, layout, body);
    cache.record_miss("jaxrs::jit", explanation, prepared.compile(site))
}

/// A specialisation traced and ready to lower and compile: the first half of a cache miss,
/// and what [`Lowered`](crate::transforms::aot::Lowered) holds.
pub(crate) struct Prepared {
    pub(crate) donated_def: TreeDef,
    pub(crate) kept_def: TreeDef,
    pub(crate) in_avals: Vec<Aval>,
    statics: Box<dyn StaticKey>,
    layout: Option<Layout>,
    jaxpr: Jaxpr,
    /// The lifted constants passed as arguments (placed on the mesh for an SPMD program).
    consts: Vec<Array>,
    /// Per lifted constant: its literal when it is small enough to embed in the program.
    embedded_consts: Vec<Option<String>>,
    /// Per argument of `main` (constants first): whether XLA may reuse its buffer.
    donated: Vec<bool>,
    pub(crate) out_def: TreeDef,
    pub(crate) out_avals: Vec<Aval>,
    /// For a program over a mesh: the mesh, each argument's sharding and the results' given ones.
    plan: Option<SpmdPlan>,
}

struct SpmdPlan {
    mesh: Mesh,
    ins: Vec<NamedSharding>,
    given: Vec<Option<NamedSharding>>,
}

/// Traces `body` for one specialisation and lays out its program: everything of a cache miss
/// but lowering and compiling.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &JitSite,
    dd: TreeDef,
    kd: TreeDef,
    in_avals: Vec<Aval>,
    num_donated: usize,
    statics: S,
    layout: Option<Layout>,
    body: &impl Fn(DT, KT, &S) -> R,
) -> Prepared {
    if let Some(l) = &layout {
        let paths = param_paths(site, &dd, &kd);
        for ((s, aval), path) in l.ins.iter().zip(&in_avals).zip(&paths) {
            if let Some(Err(e)) = s.as_ref().map(|s| s.shard_shape(&aval.shape)) {
                panic!("jit `{}`: the sharding of `{path}`: {e}", site.name());
            }
        }
    }
    // Arguments laid out over explicit mesh axes are traced with those shardings in their types.
    let mut in_avals = in_avals;
    if let Some(l) = layout.as_ref().filter(|l| l.mesh.has_explicit_axes()) {
        for (aval, s) in in_avals.iter_mut().zip(&l.ins) {
            if let Some(s) = s {
                aval.sharding = type_sharding(s.mesh(), s.spec().dims(), aval.rank());
            }
        }
    }
    // Bare specs in `with_sharding_constraint` inside refer to the program's mesh.
    let scope = layout.as_ref().map(|l| l.mesh.enter());
    let span = crate::core::profile::span("jit", "trace", || format!("jit `{}`", site.name()));
    let ((closed, out_def), traced_meshes) = collect_traced_meshes(|| {
        trace_tree(
            format_args!("jit `{}`", site.name()),
            &TreeDef::Tuple(vec![dd.clone(), kd.clone()]),
            &in_avals,
            |(d, k): (DT, KT)| body(d, k, &statics),
        )
    });
    drop(span);
    drop(scope);
    let out_avals = closed.jaxpr.out_avals();
    // A program whose arguments name no mesh still runs on the mesh its sharding constraints
    // name (its arguments replicated over it).
    let mesh = layout
        .as_ref()
        .map(|l| l.mesh.clone())
        .or_else(|| traced_meshes.first().cloned());
    if let Some(other) = traced_meshes
        .iter()
        .find(|m| !mesh.as_ref().is_some_and(|p| p.same_grid(m)))
    {
        panic!(
            "jit `{}`: with_sharding_constraint names {other:?}, but the program runs on {:?}; \
             one program runs on one mesh",
            site.name(),
            mesh.as_ref().expect("a constraint named a mesh")
        );
    }
    let embedded_consts = embedded_constants(&closed.consts);
    let mut consts: Vec<Array> = closed
        .consts
        .into_iter()
        .zip(&embedded_consts)
        .filter(|(_, e)| e.is_none())
        .map(|(c, _)| c)
        .collect();
    let mut donated = vec![false; consts.len()];
    donated.extend((0..in_avals.len()).map(|i| i < num_donated));
    let plan = mesh.map(|mesh| {
        let replicated = NamedSharding::new(mesh.clone(), PartitionSpec::default())
            .expect("an empty spec fits every mesh");
        let mut ins = vec![replicated.clone(); consts.len()];
        ins.extend(
            (0..in_avals.len())
                .map(|i| layout.as_ref().and_then(|l| l.ins[i].clone()))
                .map(|s| s.unwrap_or_else(|| replicated.clone())),
        );
        let out = layout
            .as_ref()
            .map_or(Shardings::Unspecified, |l| l.out.clone());
        let given: Vec<Option<NamedSharding>> = shardings_per_leaf(
            &out,
            &out_def,
            Some(&mesh),
            &format!("jit `{}`: out_shardings", site.name()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // A result typed with a sharding over explicit axes is laid out so unless given one.
        let given: Vec<Option<NamedSharding>> = given
            .into_iter()
            .zip(&out_avals)
            .map(|(g, aval)| g.or_else(|| aval.sharding.as_deref().cloned()))
            .collect();
        for (i, (s, aval)) in given.iter().zip(&out_avals).enumerate() {
            if let Some(Err(e)) = s.as_ref().map(|s| s.shard_shape(&aval.shape)) {
                panic!(
                    "jit `{}`: out_shardings of result {i} ({aval}): {e}",
                    site.name()
                );
            }
        }
        // Constants are lifted concrete arrays: placed on the mesh once, here.
        consts = consts
            .iter()
            .zip(&ins)
            .map(|(c, s)| try_device_put(c, s.clone()).unwrap_or_else(|e| fail(e)))
            .collect();
        SpmdPlan { mesh, ins, given }
    });
    // The results are concrete arrays, whose avals carry no type sharding (`typeof_` reads
    // it from their layout).
    let out_avals: Vec<Aval> = out_avals.iter().map(Aval::unsharded).collect();
    Prepared {
        donated_def: dd,
        kept_def: kd,
        in_avals,
        statics: Box::new(statics),
        layout,
        jaxpr: closed.jaxpr,
        consts,
        embedded_consts,
        donated,
        out_def,
        out_avals,
        plan,
    }
}

impl Prepared {
    fn lower_options(&self, spmd: Option<Spmd>) -> LowerOptions {
        LowerOptions {
            donated: self.donated.clone(),
            with_locations: true,
            num_replicas: 1,
            num_partitions: 1,
            spmd,
            for_cpu: crate::core::client::for_cpu(),
            bf16_rows_kernel: crate::core::client::bf16_rows_kernel(),
            embedded_consts: self.embedded_consts.clone(),
        }
    }

    /// The StableHLO module for `opts`, in a profiler span.
    fn lower_text(&self, site: &JitSite, opts: &LowerOptions) -> String {
        let _span = crate::core::profile::span("jit", "lower", || format!("jit `{}`", site.name()));
        lower_jaxpr(&self.jaxpr, opts)
    }

    /// The StableHLO module the compile starts from (for an SPMD program, the one with the
    /// given out shardings, before XLA's choices are read back).
    pub(crate) fn text(&self) -> String {
        let spmd = self
            .plan
            .as_ref()
            .map(|p| crate::core::spmd::placement(&p.mesh, &p.ins, &p.given));
        lower_jaxpr(&self.jaxpr, &self.lower_options(spmd))
    }

    /// Compiles the module [`Prepared::text`] gives, for inspection only (a cost analysis):
    /// the program is not cached in any site.
    pub(crate) fn compile_detached(&self) -> crate::error::Result<LoadedExecutable> {
        let spmd = self
            .plan
            .as_ref()
            .map(|p| crate::core::spmd::placement(&p.mesh, &p.ins, &p.given));
        let opts = self.lower_options(spmd);
        let text = lower_jaxpr(&self.jaxpr, &opts);
        let (exe, _) = crate::core::compile_cache::compile(
            &"lowered program",
            &text,
            &opts.compile_options(),
        )?;
        Ok(exe)
    }

    /// Lowers and compiles (through the persistent compile cache, counted in `site`'s).
    pub(crate) fn compile(self, site: &JitSite) -> Entry {
        self.compile_keeping_bytes(site, false).0
    }

    /// [`Prepared::compile`], also giving the plugin's serialization of the program when
    /// `keep_bytes` (see [`crate::core::compile_cache::compile_serialized`]).
    pub(crate) fn compile_keeping_bytes(
        self,
        site: &JitSite,
        keep_bytes: bool,
    ) -> (Entry, Option<crate::error::Result<Vec<u8>>>) {
        let what = format!("jit `{}`", site.name());
        // The bytes of the last program compiled: an SPMD compile may lower twice.
        let bytes = std::cell::RefCell::new(None);
        let lower = |spmd: Option<Spmd>| {
            let opts = self.lower_options(spmd);
            let text = self.lower_text(site, &opts);
            let options = opts.compile_options();
            let (exe, lookup) = if keep_bytes {
                let (exe, lookup, serialized) =
                    crate::core::compile_cache::compile_serialized(&what, &text, &options)
                        .unwrap_or_else(|e| fail(e));
                *bytes.borrow_mut() = Some(serialized);
                (exe, lookup)
            } else {
                crate::core::compile_cache::compile(&what, &text, &options)
                    .unwrap_or_else(|e| fail(e))
            };
            site.cache().count_lookup(lookup);
            (text, exe)
        };
        let (text, exe, program) = match &self.plan {
            None => {
                let (text, exe) = lower(None);
                (text, exe, None)
            }
            Some(plan) => {
                let (text, exe, program) = crate::core::spmd::compile(
                    &what,
                    plan.mesh.clone(),
                    plan.ins.clone(),
                    plan.given.clone(),
                    &self.out_avals,
                    |spmd| lower(Some(spmd)),
                );
                (text, exe, Some(program))
            }
        };
        let entry = Entry {
            donated_def: self.donated_def,
            kept_def: self.kept_def,
            out_avals: self.out_avals,
            in_avals: self.in_avals,
            statics: self.statics,
            layout: self.layout,
            program,
            exe,
            consts: self.consts,
            out_def: self.out_def,
            text,
            elsewhere: Mutex::default(),
        };
        (entry, bytes.into_inner())
    }
}

/// A [`JitSite::lower`] under way: the site it lowers (by address), and once the closure it
/// traces called that site, what the call prepared, with the structure of the arguments its
/// program takes and how many of their leaves are donated.
pub(crate) type Lowering = (usize, Option<(Prepared, TreeDef, usize)>);

thread_local! {
    static LOWERING: std::cell::RefCell<Option<Lowering>> =
        const { std::cell::RefCell::new(None) };
}

/// How many [`JitSite::lower`]s are under way in the process: while none is, a jitted call
/// asks nothing of the thread-local (the dispatch path stays one relaxed load).
static LOWERINGS_UNDER_WAY: AtomicU64 = AtomicU64::new(0);

/// Begins waiting for a call of `site` on this thread; returns what was waited for before (a
/// `lower` inside another, which the caller refuses).
pub(crate) fn begin_lowering(site: &JitSite) -> Option<Lowering> {
    LOWERINGS_UNDER_WAY.fetch_add(1, Ordering::Relaxed);
    LOWERING.with(|l| {
        l.borrow_mut()
            .replace((site as *const JitSite as usize, None))
    })
}

/// Ends the wait [`begin_lowering`] began, returning what it captured.
pub(crate) fn end_lowering() -> Option<Lowering> {
    LOWERINGS_UNDER_WAY.fetch_sub(1, Ordering::Relaxed);
    LOWERING.with(|l| l.borrow_mut().take())
}

/// Whether this call of `site` is the one a [`JitSite::lower`] on this thread waits for.
fn is_lowering(site: &JitSite) -> bool {
    if LOWERINGS_UNDER_WAY.load(Ordering::Relaxed) == 0 {
        return false;
    }
    LOWERING.with(|l| {
        matches!(&*l.borrow(), Some((target, None)) if *target == site as *const JitSite as usize)
    })
}

/// At the call a [`JitSite::lower`] waits for: traces the site's body for these arguments'
/// shapes as a cache miss would, and hands the result to `lower` (the call then goes on
/// inlined into `lower`'s throwaway trace).
#[allow(clippy::too_many_arguments)]
fn capture<S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &JitSite,
    shardings: Option<&JitShardings>,
    dd: &TreeDef,
    kd: &TreeDef,
    leaves: &[Array],
    num_donated: usize,
    statics: &S,
    body: &impl Fn(DT, KT, &S) -> R,
) {
    let avals: Vec<Aval> = leaves.iter().map(|l| l.aval().clone()).collect();
    let layout = layout_of(site, shardings, dd, kd, leaves);
    let prepared = prepare(
        site,
        dd.clone(),
        kd.clone(),
        avals,
        num_donated,
        statics.clone(),
        layout,
        body,
    );
    let arg_def = TreeDef::Tuple(vec![dd.clone(), kd.clone()]);
    LOWERING.with(|l| {
        if let Some((_, slot)) = &mut *l.borrow_mut() {
            *slot = Some((prepared, arg_def, num_donated));
        }
    });
}

/// Says what differs between this call and the most recent cached specialisation, naming
/// the parameters (`x`, `params.w`, `n`) when the site knows them, else by position (`arg[0]`).
fn explain_miss<S: StaticArgs>(
    site: &JitSite,
    cache: &JitCache,
    dd: &TreeDef,
    kd: &TreeDef,
    avals: &[Aval],
    statics: &S,
    layout: &Option<Layout>,
) -> String {
    let head = format!(
        "jit `{}` ({}): tracing and compiling",
        site.name(),
        site.location()
    );
    let entries = cache.entries();
    let Some(prev) = entries.last() else {
        return format!("{head} for the first time");
    };
    let (donated, kept, static_names) = match &site.params {
        Some(p) => (Some(p.donated), Some(p.kept), Some(p.statics)),
        None => (None, None, None),
    };
    let mut why = String::new();
    structure_changes(
        &mut why,
        &prev.donated_def,
        dd,
        donated,
        "donated arguments",
    );
    structure_changes(&mut why, &prev.kept_def, kd, kept, "arguments");
    if why.is_empty() {
        let paths = named_leaf_paths(dd, donated)
            .into_iter()
            .chain(named_leaf_paths(kd, kept));
        for ((path, old), new) in paths.zip(&prev.in_avals).zip(avals) {
            if old != new {
                let _ = write!(why, "; {path} changed from {old} to {new}");
            }
        }
        if &prev.layout != layout {
            layout_changes(&mut why, &prev.layout, layout, dd, kd, donated, kept);
        }
        if prev.statics.as_any().downcast_ref::<S>() != Some(statics) {
            static_changes(
                &mut why,
                &prev.statics.describe(),
                &format!("{statics:?}"),
                static_names,
            );
        }
    }
    if why.is_empty() {
        why = "; no difference from the last specialisation (evicted or raced)".into();
    }
    format!("{head} because{}", &why[1..])
}

/// Appends how the shardings changed: per argument leaf whose sharding changed, then the
/// results' shardings.
#[allow(clippy::too_many_arguments)]
fn layout_changes(
    why: &mut String,
    old: &Option<Layout>,
    new: &Option<Layout>,
    dd: &TreeDef,
    kd: &TreeDef,
    donated: Option<&[&str]>,
    kept: Option<&[&str]>,
) {
    let leaf = |l: &Option<Layout>, i: usize| match l {
        None => "one device".to_string(),
        Some(l) => match &l.ins[i] {
            None => format!("replicated over {}", l.mesh),
            Some(s) => s.to_string(),
        },
    };
    let before = why.len();
    let paths = named_leaf_paths(dd, donated)
        .into_iter()
        .chain(named_leaf_paths(kd, kept));
    for (i, path) in paths.enumerate() {
        let (o, n) = (leaf(old, i), leaf(new, i));
        if o != n {
            let _ = write!(why, "; the sharding of {path} changed from {o} to {n}");
        }
    }
    let out = |l: &Option<Layout>| l.as_ref().map(|l| l.out.clone()).unwrap_or_default();
    if out(old) != out(new) {
        let _ = write!(
            why,
            "; out_shardings changed from {:?} to {:?}",
            out(old),
            out(new)
        );
    }
    if why.len() == before {
        // The same descriptions: the meshes differ in their devices only.
        let mesh = |l: &Option<Layout>| l.as_ref().map(|l| format!("{:?}", l.mesh));
        let _ = write!(
            why,
            "; the mesh changed from {} to {}",
            mesh(old).unwrap_or_else(|| "none".into()),
            mesh(new).unwrap_or_else(|| "none".into())
        );
    }
}

/// A path for each leaf of the arguments of one role: under their parameters' names when
/// known (`def` is then a tuple with one element per name), else under `arg`.
pub(crate) fn named_leaf_paths(def: &TreeDef, names: Option<&[&str]>) -> Vec<String> {
    match (def, names) {
        (TreeDef::Tuple(params), Some(names)) if params.len() == names.len() => params
            .iter()
            .zip(names)
            .flat_map(|(d, name)| leaf_paths(d, name))
            .collect(),
        _ => leaf_paths(def, "arg"),
    }
}

/// Appends how the structure of the arguments of one role changed, per parameter if known.
pub(crate) fn structure_changes(
    why: &mut String,
    old: &TreeDef,
    new: &TreeDef,
    names: Option<&[&str]>,
    role: &str,
) {
    if old == new {
        return;
    }
    match (old, new, names) {
        (TreeDef::Tuple(o), TreeDef::Tuple(n), Some(names))
            if o.len() == names.len() && n.len() == names.len() =>
        {
            for ((o, n), name) in o.iter().zip(n).zip(names) {
                if o != n && !static_value_changes(why, o, n, name) {
                    let _ = write!(why, "; the structure of {name} changed from {o} to {n}");
                }
            }
        }
        _ => {
            if !static_value_changes(why, old, new, "arg") {
                let _ = write!(why, "; {role}' structure changed from {old} to {new}");
            }
        }
    }
}

/// Appends each static value that changed (`the static field cfg.scale changed from 0.5 to
/// 0.25`) when the two structures differ in their static values only; false otherwise.
fn static_value_changes(why: &mut String, old: &TreeDef, new: &TreeDef, root: &str) -> bool {
    let Some(changes) = static_diffs(old, new, root) else {
        return false;
    };
    for c in &changes {
        // `cfg.scale` names a field; `sizes[1]` an element.
        let what = if c.path.ends_with(']') {
            "value"
        } else {
            "field"
        };
        let _ = write!(
            why,
            "; the static {what} {} changed from {} to {}",
            c.path, c.old, c.new
        );
    }
    !changes.is_empty()
}

/// Appends how the static arguments changed: each changed one by name (`n changed from 2 to
/// 3`) when the site names them and both values split into one field per name, else the
/// whole tuple.
///
/// The fields come from splitting the tuple's `Debug` text: a static argument is any
/// `Hash + Eq + Debug` type, and asking `jit_call` for per-field access would add a bound
/// that every error about a bad static argument would then mention.
pub(crate) fn static_changes(why: &mut String, old: &str, new: &str, names: Option<&[&str]>) {
    if let (Some(names), Some(o), Some(n)) = (names, tuple_fields(old), tuple_fields(new)) {
        if o.len() == names.len() && n.len() == names.len() {
            for ((o, n), name) in o.iter().zip(&n).zip(names) {
                if o != n {
                    let _ = write!(why, "; static {name} changed from {o} to {n}");
                }
            }
            return;
        }
    }
    match names {
        Some(names) if !names.is_empty() => {
            let _ = write!(
                why,
                "; static arguments ({}) changed from {old} to {new}",
                names.join(", ")
            );
        }
        _ => {
            let _ = write!(why, "; static arguments changed from {old} to {new}");
        }
    }
}

/// The top-level fields of a tuple's `Debug` text: `(2, "a, b", [1, 2])` gives `2`,
/// `"a, b"` and `[1, 2]`. `None` when the text is not a tuple or its brackets and quotes do
/// not balance (a custom `Debug` may print anything).
fn tuple_fields(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let mut fields = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    let mut chars = inner.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            '"' => loop {
                match chars.next()?.1 {
                    '\\' => {
                        chars.next()?;
                    }
                    '"' => break,
                    _ => {}
                }
            },
            // A char literal: `','`, `'\''`, `'\u{301}'`; an apostrophe that starts none is
            // custom text, which cannot be split safely.
            '\'' => {
                let rest = &inner[i + 1..];
                let mut it = rest.chars();
                let first = it.next()?;
                let body = match first {
                    '\\' => 1 + it.next()?.len_utf8(),
                    c => c.len_utf8(),
                };
                let close = body + rest.get(body..)?.find('\'')?;
                if first != '\\' && close != body {
                    return None;
                }
                while chars.peek().is_some_and(|(j, _)| *j <= i + 1 + close) {
                    chars.next();
                }
            }
            ',' if depth == 0 => {
                fields.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    let last = inner[start..].trim();
    // `(2,)`: a one-element tuple ends with a comma.
    if !last.is_empty() {
        fields.push(last);
    }
    Some(fields)
}

/// The largest constant embedded in a program as a `stablehlo.constant`; larger ones are
/// arguments. JAX 0.10.2 embeds every constant; a bound keeps a closed-over weight matrix
/// out of the program text (the compile cache's key) and out of XLA's constant folding.
pub(crate) const EMBEDDED_CONSTANT_MAX_BYTES: usize = 16 << 10;

/// Which of a traced program's constants it embeds, as JAX does, and their values: the
/// small ones. Embedded, a split's counters or an index are literals XLA folds and
/// specializes on, as in JAX's program; as arguments they are opaque buffers.
pub(crate) fn embedded_constants(consts: &[Array]) -> Vec<Option<String>> {
    consts
        .iter()
        .map(|c| {
            let aval = c.aval();
            if aval.size_in_bytes() > EMBEDDED_CONSTANT_MAX_BYTES
                || aval.dtype == crate::dtype::DType::Bool
            {
                return None;
            }
            let bytes = c.host_bytes().ok()?;
            crate::core::lower::dense_constant(aval, &bytes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::tuple_fields;

    #[test]
    fn tuple_fields_split_at_top_level_commas() {
        assert_eq!(tuple_fields("(2,)"), Some(vec!["2"]));
        assert_eq!(tuple_fields("()"), Some(vec![]));
        assert_eq!(
            tuple_fields(r#"(2, "a, \"b\"", [1, 2], Foo { x: (1, 2) }, ',', '\'', 0.5)"#),
            Some(vec![
                "2",
                r#""a, \"b\"""#,
                "[1, 2]",
                "Foo { x: (1, 2) }",
                "','",
                r"'\''",
                "0.5"
            ])
        );
        assert_eq!(
            tuple_fields(r"('\u{301}', 'x')"),
            Some(vec![r"'\u{301}'", "'x'"])
        );
        assert_eq!(tuple_fields("(1, [2)"), None);
        assert_eq!(tuple_fields("(don't, 1)"), None);
        assert_eq!(tuple_fields("Foo"), None);
    }
}
