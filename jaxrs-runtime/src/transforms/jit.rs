//! `jit`: trace once per input signature, compile with XLA, and call the cached executable.
//!
//! The `#[jit]` macro and the [`jit`] function both go through [`jit_call`].
//!
//! The cache key (DESIGN.md item 5) is the tree structure and avals of every traced argument
//! and the values of the static ones; the function is the [`JitSite`] itself. A hit goes
//! straight to PJRT execute: no tracing, no lowering, no string formatting.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::{client, fail};
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::core::trace::is_tracing;
use crate::error::Error;
use crate::pjrt::{Buffer, LoadedExecutable};
use crate::transforms::traced::{rebuild, trace_tree};
use crate::tree::{leaf_paths, Tree, TreeDef};
use std::any::Any;
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

    fn cache(&self) -> &JitCache {
        self.state.get_or_init(JitCache::default)
    }

    /// How many times this function was traced and compiled (a miss of its cache).
    pub fn cache_misses(&self) -> u64 {
        self.cache().misses.load(Ordering::Relaxed)
    }

    /// How many specialisations are cached.
    pub fn cache_size(&self) -> usize {
        read(&self.cache().entries).len()
    }

    /// Why the most recent cache miss happened (`None` before the first call).
    pub fn last_miss_explanation(&self) -> Option<String> {
        lock(&self.cache().explanations).last().cloned()
    }

    /// The compiled memory statistics of the most recently compiled specialisation.
    pub fn last_compiled_memory_stats(&self) -> Option<crate::pjrt::MemoryStats> {
        read(&self.cache().entries)
            .last()
            .and_then(|e| e.exe.compiled_memory_stats().ok())
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
    call(site, donated, kept, statics, body)
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
    ///
    /// As in JAX, a call that passes one array twice with a donated occurrence (`f(x.clone(),
    /// x)` with both donated, or `f(x.clone(), &x)`) fails with [`Error::DonatedBufferUsed`]
    /// naming both parameters. A donated array whose clone is still alive elsewhere is not
    /// donated (its buffer stays readable through the clone); the first such call of each
    /// jitted function says so with a `log::warn!` (target `jaxrs::jit`).
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
struct Entry {
    donated_def: TreeDef,
    kept_def: TreeDef,
    in_avals: Vec<Aval>,
    statics: Box<dyn StaticKey>,
    exe: LoadedExecutable,
    consts: Vec<Array>,
    out_def: TreeDef,
    out_avals: Vec<Aval>,
}

impl Entry {
    fn matches<S: StaticArgs>(
        &self,
        dd: &TreeDef,
        kd: &TreeDef,
        leaves: &[Array],
        statics: &S,
    ) -> bool {
        self.in_avals.len() == leaves.len()
            && self.in_avals.iter().zip(leaves).all(|(a, l)| a == l.aval())
            && self.statics.as_any().downcast_ref::<S>() == Some(statics)
            && &self.donated_def == dd
            && &self.kept_def == kd
    }
}

/// The state behind a [`JitSite`].
#[derive(Default)]
struct JitCache {
    entries: RwLock<Vec<Arc<Entry>>>,
    compiling: Mutex<()>,
    misses: AtomicU64,
    explanations: Mutex<Vec<String>>,
    /// Whether a call already warned that a donated argument still had a clone alive.
    warned_undonated: AtomicBool,
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

    if is_tracing() || leaves.iter().any(|l| !l.is_concrete()) {
        // Inside another transformation: run the body on its tracers (it is inlined into the
        // enclosing trace, which is compiled as a whole).
        let (d, k): (DT, KT) = rebuild(
            format_args!("jit `{}`", site.name()),
            &TreeDef::Tuple(vec![dd, kd]),
            leaves,
        );
        return body(d, k, &statics);
    }

    if let Some((donated, other)) = donated_twice(&leaves, num_donated) {
        let names = site.params.as_ref();
        let paths: Vec<String> = named_leaf_paths(&dd, names.map(|p| p.donated))
            .into_iter()
            .chain(named_leaf_paths(&kd, names.map(|p| p.kept)))
            .collect();
        fail(Error::DonatedBufferUsed(format!(
            "jit `{}`: `{}` is donated and the same array is also passed as `{}` in this call; \
             a donated buffer is consumed by the call, so it can be passed only once (pass a \
             copy, or do not donate it)",
            site.name(),
            paths[donated],
            paths[other]
        )));
    }

    let cache = site.cache();
    let entry = lookup(cache, &dd, &kd, &leaves, &statics).unwrap_or_else(|| {
        let _guard = lock(&cache.compiling);
        lookup(cache, &dd, &kd, &leaves, &statics)
            .unwrap_or_else(|| compile_entry(site, dd, kd, &leaves, num_donated, statics, &body))
    });

    let device = entry.exe.devices()[0];
    // Interim, until pjit: the program runs on one device, so arguments laid out otherwise are
    // gathered onto it first (a gathered copy is what gets donated then).
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
    let mut keep_alive: Vec<i64> = Vec::new();
    let num_consts = entry.consts.len();
    for (i, leaf) in placed[num_consts..num_consts + num_donated]
        .iter()
        .enumerate()
    {
        // Another array still reads this buffer: the leaf itself is shared with a clone, or
        // its buffer with a shard view (`addressable_shards`).
        let shared = Arc::strong_count(&leaf.0) > 1
            || Arc::strong_count(&leaf.concrete("jit").buffers[0]) > 1;
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
    let outs = entry
        .exe
        .execute(&[args], &keep_alive)
        .unwrap_or_else(|e| fail(e));
    drop(placed);
    drop(leaves);
    let arrays: Vec<Array> = outs
        .into_iter()
        .next()
        .expect("one device")
        .into_iter()
        .zip(&entry.out_avals)
        .map(|(b, a)| Array::from_buffer(b, a.clone(), device))
        .collect();
    rebuild(
        format_args!("jit `{}`: cannot rebuild the result", site.name()),
        &entry.out_def,
        arrays,
    )
}

/// The first donated leaf (by index) that is the same array, or shares its buffer, as
/// another argument leaf, with that leaf's index.
pub(crate) fn donated_twice(leaves: &[Array], num_donated: usize) -> Option<(usize, usize)> {
    let buffer = |a: &Array| Arc::as_ptr(&a.concrete("jit").buffers[0]);
    (0..num_donated)
        // A leaf and buffer held once cannot appear elsewhere: the common case costs nothing.
        .filter(|&i| {
            Arc::strong_count(&leaves[i].0) > 1
                || Arc::strong_count(&leaves[i].concrete("jit").buffers[0]) > 1
        })
        .find_map(|i| {
            let same = |j: &usize| {
                *j != i
                    && (Arc::ptr_eq(&leaves[i].0, &leaves[*j].0)
                        || buffer(&leaves[i]) == buffer(&leaves[*j]))
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
) -> Option<Arc<Entry>> {
    let entries = read(&cache.entries);
    // Most recent first: a training loop hits the entry it just added.
    entries
        .iter()
        .rev()
        .find(|e| e.matches(dd, kd, leaves, statics))
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
    body: &impl Fn(DT, KT, &S) -> R,
) -> Arc<Entry> {
    let cache = site.cache();
    let in_avals: Vec<Aval> = leaves.iter().map(|l| l.aval().clone()).collect();
    let explanation = explain_miss(site, cache, &dd, &kd, &in_avals, &statics);
    let (closed, out_def) = trace_tree(
        format_args!("jit `{}`", site.name()),
        &TreeDef::Tuple(vec![dd.clone(), kd.clone()]),
        &in_avals,
        |(d, k): (DT, KT)| body(d, k, &statics),
    );
    let mut donated = vec![false; closed.consts.len()];
    donated.extend((0..leaves.len()).map(|i| i < num_donated));
    let text = lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            donated,
            with_locations: true,
            num_replicas: 1,
            num_partitions: 1,
        },
    );
    let exe = client()
        .compile(&text, &crate::core::lower::compile_options())
        .unwrap_or_else(|e| fail(e));
    let n = cache.misses.fetch_add(1, Ordering::Relaxed) + 1;
    if n > 1 {
        log::info!(target: "jaxrs::jit", "{explanation}");
    } else {
        log::debug!(target: "jaxrs::jit", "{explanation}");
    }
    lock(&cache.explanations).push(explanation);
    let entry = Arc::new(Entry {
        donated_def: dd,
        kept_def: kd,
        out_avals: closed.jaxpr.out_avals(),
        in_avals,
        statics: Box::new(statics),
        exe,
        consts: closed.consts,
        out_def,
    });
    write(&cache.entries).push(entry.clone());
    entry
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
) -> String {
    let head = format!(
        "jit `{}` ({}): tracing and compiling",
        site.name(),
        site.location()
    );
    let entries = read(&cache.entries);
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
                if o != n {
                    let _ = write!(why, "; the structure of {name} changed from {o} to {n}");
                }
            }
        }
        _ => {
            let _ = write!(why, "; {role}' structure changed from {old} to {new}");
        }
    }
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
