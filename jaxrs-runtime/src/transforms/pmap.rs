//! `pmap`: a function of one slice run on each of several devices, as one replica program.
//!
//! The mapped axis of the inputs is split over `n` devices; the function is traced once for
//! one device's shapes (the mapped axis removed) with its axis name in scope
//! ([`crate::core::axes`]), so named-axis collectives find it, and lowered to a program of
//! `n` replicas (`num_replicas = n`, one device per replica). Argument list `d` of the one
//! PJRT execute goes to device `d`: each device gets its `[1, ...]` shard of a mapped input
//! (the program reshapes it to the per-device value) and a whole copy of an unmapped one.
//! The results stay on the devices, stacked along `out_axes`: one buffer per device and a
//! [`NamedSharding`] over a 1-D mesh named after the axis.
//!
//! The `#[pmap]` macro and the [`pmap`] function both go through [`pmap_call`]. Like jit, a
//! call site keeps a compile cache ([`PmapSite`]) keyed by the input avals, tree structure,
//! statics, mapped axes and devices; a hit is one PJRT execute over all the devices. Inside
//! another transformation's trace (`jit`, `grad` around a pmapped function) there is no
//! device program to run: the call is computed as a `vmap` over the mapped axis, which gives
//! the same values on one device (JAX likewise treats a pmap inside jit as a map).

use crate::aval::{normalize_axis, Aval};
use crate::core::array::{Array, Concrete, Repr};
use crate::core::axes::with_named_axis;
use crate::core::client::{client, fail};
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::core::sharding::{
    try_device_put, Mesh, NamedSharding, PartitionDim, PartitionSpec, Sharding,
};
use crate::core::trace::{is_tracing, At};
use crate::error::Error;
use crate::pjrt::{Buffer, CompileOptions, Device, LoadedExecutable};
use crate::transforms::jit::{
    donated_twice, lock, named_leaf_paths, static_changes, structure_changes, CompiledEntry,
    JitParams, SiteCache, StaticArgs, StaticKey,
};
use crate::transforms::jit::{Donation, ElementDonation};
use crate::transforms::traced::{rebuild, trace_leaves, worded};
use crate::transforms::vmap::{vmap_call, AxisSpec, VmapNames};
use crate::tree::{Tree, TreeDef};
use std::fmt::Write;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The mesh axis name of a pmap called without an axis name.
const UNNAMED_AXIS: &str = "pmap";

/// The compile cache of one pmapped function (the `#[pmap]` macro keeps one in a static,
/// reachable as `f::pmap_site()`), with its counters and why it last recompiled.
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::set_cpu_device_count(8)?;
///
/// #[pmap(axis_name = "d")]
/// fn double(x: &Array) -> Array {
///     x * 2.0
/// }
///
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape(&[8, 2]);
/// double(&x);
/// double(&(&x + 1.0)); // the same shapes: the compiled program runs again
/// assert_eq!(double::pmap_site().cache_misses(), 1);
/// double(&Array::zeros(&[8, 3], DType::F32));
/// assert_eq!(double::pmap_site().cache_misses(), 2);
/// let why = double::pmap_site().last_miss_explanation().unwrap();
/// assert!(why.ends_with("because x changed from f32[8,2] to f32[8,3]"), "{why}");
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub struct PmapSite {
    name: &'static str,
    location: &'static str,
    params: Option<JitParams>,
    state: OnceLock<PmapCache>,
    last_donated: AtomicUsize,
}

impl PmapSite {
    /// A cache for the function `name` defined at `location` (`file:line`); explanations name
    /// its arguments by position (`arg[0]`).
    pub const fn new(name: &'static str, location: &'static str) -> PmapSite {
        PmapSite {
            name,
            location,
            params: None,
            state: OnceLock::new(),
            last_donated: AtomicUsize::new(0),
        }
    }

    /// [`PmapSite::new`] for a function whose parameters explanations name (`#[pmap]`'s).
    #[doc(hidden)]
    pub const fn with_params(
        name: &'static str,
        location: &'static str,
        params: JitParams,
    ) -> PmapSite {
        PmapSite {
            name,
            location,
            params: Some(params),
            state: OnceLock::new(),
            last_donated: AtomicUsize::new(0),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn location(&self) -> &'static str {
        self.location
    }

    fn cache(&self) -> &PmapCache {
        self.state.get_or_init(PmapCache::default)
    }

    /// How many times this function was traced and compiled (a miss of its cache).
    pub fn cache_misses(&self) -> u64 {
        self.cache().misses()
    }

    /// How many specialisations are cached.
    pub fn cache_size(&self) -> usize {
        self.cache().size()
    }

    /// How many of this function's compiles the persistent compile cache answered from disk;
    /// with [`PmapSite::compile_cache_misses`] it sums to [`PmapSite::cache_misses`] unless
    /// the persistent cache is off (`JAXRS_COMPILE_CACHE=0`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// jaxrs::set_cpu_device_count(2)?;
    /// let f = pmap(|x: Array| x.exp());
    /// let _: Array = f.call(Array::zeros(&[2, 3], DType::F32));
    /// let site = f.site();
    /// assert_eq!(site.compile_cache_hits() + site.compile_cache_misses(), 1);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn compile_cache_hits(&self) -> u64 {
        self.cache().disk_hits()
    }

    /// How many of this function's compiles ran XLA and stored the result in the persistent
    /// compile cache; see [`PmapSite::compile_cache_hits`].
    pub fn compile_cache_misses(&self) -> u64 {
        self.cache().disk_misses()
    }

    /// Why the most recent cache miss happened (`None` before the first call).
    pub fn last_miss_explanation(&self) -> Option<String> {
        self.cache().last_miss_explanation()
    }

    /// The StableHLO module of the most recently compiled specialisation, as XLA received it:
    /// one replica's program (`mhlo.num_replicas` = the device count), its collectives over
    /// the replicas.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let f = pmap(|x: Array| x.sin());
    /// let n = jaxrs::local_device_count();
    /// let _: Array = f.call(Array::zeros(&[n, 3], DType::F32));
    /// assert!(f.site().last_stablehlo().unwrap().contains("stablehlo.sine"));
    /// ```
    pub fn last_stablehlo(&self) -> Option<String> {
        self.cache().last_entry().map(|e| e.text.clone())
    }

    /// The compiled memory statistics of the most recently compiled specialisation (per
    /// device: one replica's arguments, outputs and aliased bytes).
    pub fn last_compiled_memory_stats(&self) -> Option<crate::pjrt::MemoryStats> {
        self.cache().last_compiled_memory_stats()
    }

    /// How many device buffers of donated arguments the most recent call consumed (each
    /// reports `is_deleted` after the launch): one per device for each donated leaf, unless a
    /// clone kept it alive.
    pub fn last_call_donated_buffers(&self) -> usize {
        self.last_donated.load(Ordering::Relaxed)
    }
}

/// Where a pmap maps its arguments and results, and over which devices. What `#[pmap]`'s
/// options and [`Pmapped`]'s builder give [`pmap_call`].
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct PmapSpec<'a> {
    /// The name collectives use for the device axis; `None`: no named axis.
    pub axis_name: Option<&'a str>,
    /// The axes of the donated arguments, then of the kept ones.
    pub in_axes: (&'a dyn AxisSpec, &'a dyn AxisSpec),
    pub out_axes: &'a dyn AxisSpec,
    /// The devices, one per member of the mapped axis; `None`: the first local devices.
    pub devices: Option<&'a [Device]>,
}

/// Calls the function cached in `site` on each device's slice of the arguments.
///
/// `donated` and `kept` are the traced arguments (XLA may reuse the donated ones' buffers,
/// shard by shard), mapped along `spec.in_axes`; `statics` are part of the cache key. `body`
/// is the per-device function: it runs on a cache miss, with one device's shapes, inside the
/// named axis. Arguments as for [`crate::transforms::jit::jit_call`].
#[track_caller]
pub fn pmap_call<D, K, S, DT, KT, R>(
    site: &PmapSite,
    spec: PmapSpec<'_>,
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
    call(Location::caller(), site, spec, donated, kept, statics, body)
}

/// Per-leaf axes, given flat: what a traced pmap hands to `vmap_call`.
struct LeafAxes(Vec<Option<i64>>);

impl AxisSpec for LeafAxes {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        if def.num_leaves() != self.0.len() {
            return Err(format!(
                "{} axes for {} leaves",
                self.0.len(),
                def.num_leaves()
            ));
        }
        out.extend_from_slice(&self.0);
        Ok(())
    }
}

/// One compiled specialisation.
struct Entry {
    donated_def: TreeDef,
    kept_def: TreeDef,
    in_avals: Vec<Aval>,
    in_dims: Vec<Option<usize>>,
    devices: Vec<Device>,
    statics: Box<dyn StaticKey>,
    exe: LoadedExecutable,
    /// For each of the executable's devices (its argument lists, in order), the position of
    /// that device in `devices`.
    order: Vec<usize>,
    /// Constants of the program, a whole copy on each device.
    consts: Vec<Array>,
    /// How each argument leaf must lie for the program: split along its mapped axis, or
    /// whole on each device.
    in_shardings: Vec<Sharding>,
    out_def: TreeDef,
    out_avals: Vec<Aval>,
    out_shardings: Vec<Sharding>,
    /// The StableHLO module XLA compiled (one replica's program).
    text: String,
}

impl Entry {
    fn matches<S: StaticArgs>(&self, key: &Key<'_, S>) -> bool {
        self.in_avals.len() == key.leaves.len()
            && self
                .in_avals
                .iter()
                .zip(key.leaves)
                .all(|(a, l)| a == l.aval())
            && self.in_dims == key.dims
            && self.devices == key.devices
            && self.statics.as_any().downcast_ref::<S>() == Some(key.statics)
            && &self.donated_def == key.dd
            && &self.kept_def == key.kd
    }
}

/// What a call is looked up by.
struct Key<'a, S> {
    dd: &'a TreeDef,
    kd: &'a TreeDef,
    leaves: &'a [Array],
    dims: &'a [Option<usize>],
    devices: &'a [Device],
    statics: &'a S,
}

type PmapCache = SiteCache<Entry>;

impl CompiledEntry for Entry {
    fn exe(&self) -> &LoadedExecutable {
        &self.exe
    }
}

fn call<D: Tree, K: Tree, S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    loc: &'static Location<'static>,
    site: &PmapSite,
    spec: PmapSpec<'_>,
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
    drop(donated);
    drop(kept);
    let head = || format!("pmap `{}`", site.name);
    let at = At::column(loc);
    let names = || {
        let p = site.params.as_ref();
        let mut n = named_leaf_paths(&dd, p.map(|p| p.donated));
        n.extend(named_leaf_paths(&kd, p.map(|p| p.kept)));
        n
    };

    let mut axes = Vec::with_capacity(leaves.len());
    if let Err(e) = spec
        .in_axes
        .0
        .leaf_axes(&dd, &mut axes)
        .and_then(|()| spec.in_axes.1.leaf_axes(&kd, &mut axes))
    {
        panic!("{}: in_axes does not fit the arguments: {e} {at}", head());
    }
    let mut dims = Vec::with_capacity(leaves.len());
    for (i, (leaf, axis)) in leaves.iter().zip(&axes).enumerate() {
        let Some(axis) = *axis else {
            dims.push(None);
            continue;
        };
        let r = leaf.rank();
        let Some(d) = normalize_axis(axis, r) else {
            let name = &names()[i];
            let why = if r == 0 {
                format!(
                    "{name} is {} (a scalar, rank 0): it has no axis to split over devices; \
                     give it in_axes None to pass it to every device",
                    leaf.aval()
                )
            } else {
                format!(
                    "{name} is {} (rank {r}), whose axes are {} to {}",
                    leaf.aval(),
                    -(r as i64),
                    r - 1
                )
            };
            panic!(
                "{}: in_axes maps {name} along axis {axis}, which is out of range: {why} {at}",
                head()
            );
        };
        dims.push(Some(d));
    }
    let mapped: Vec<(usize, usize)> = dims
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.map(|d| (i, leaves[i].shape()[d])))
        .collect();
    let Some(&(_, size)) = mapped.first() else {
        panic!(
            "{}: no argument is mapped (every in_axes entry is None), so there is no axis to \
             split over devices; map at least one argument {at}",
            head()
        );
    };
    if mapped.iter().any(|&(_, s)| s != size) {
        let names = names();
        let mut msg = format!(
            "{}: the mapped axes must all have the same size (one slice per device), but:\n",
            head()
        );
        for &(i, s) in &mapped {
            let _ = writeln!(
                msg,
                "  {} is {}, axis {} of size {s}",
                names[i],
                leaves[i].aval(),
                dims[i].expect("mapped")
            );
        }
        panic!("{msg}{at}");
    }
    let devices: Vec<Device> = match spec.devices {
        Some(ds) => {
            if ds.len() != size {
                panic!(
                    "{}: the mapped axis has size {size}, but pmap was given {} devices; the \
                     size of the mapped axis must equal the number of devices (one slice per \
                     device) {at}",
                    head(),
                    ds.len()
                );
            }
            ds.to_vec()
        }
        None => {
            let client = client();
            let all = client.devices();
            if size > all.len() || size == 0 {
                panic!(
                    "{}: the mapped axis has size {size}, but this process has {} devices; \
                     pmap runs one slice per device, so the mapped size must be between 1 and \
                     the device count (jaxrs::set_cpu_device_count or JAXRS_CPU_DEVICES gives \
                     more CPU devices) {at}",
                    head(),
                    all.len()
                );
            }
            all[..size].to_vec()
        }
    };

    if is_tracing() || leaves.iter().any(|l| !l.is_concrete()) {
        // Inside another transformation: no device program runs here, so the map is
        // computed as a vmap over the mapped axis, inlined into the enclosing trace.
        let args: (DT, KT) = rebuild(
            worded(|e| format!("{}: {e} {at}", head())),
            &TreeDef::Tuple(vec![dd, kd]),
            leaves,
        );
        let names = VmapNames {
            function: Some(site.name),
            params: None,
        };
        // The vmap names its axis as the pmap does, so collectives over it become batch
        // reductions on one device.
        return vmap_call(
            names,
            &LeafAxes(axes),
            &spec.out_axes,
            Some(size),
            spec.axis_name,
            args,
            |(d, k): (DT, KT)| body(d, k, &statics),
        );
    }

    if let Some((a, b)) = donated_twice(&leaves, num_donated) {
        let names = names();
        fail(Error::DonatedBufferUsed(format!(
            "pmap `{}`: `{}` is donated and the same array is also passed as `{}` in this \
             call; a donated buffer is consumed by the call, so it can be passed only once \
             (pass a copy, or do not donate it)",
            site.name, names[a], names[b]
        )));
    }

    let cache = site.cache();
    let key = Key {
        dd: &dd,
        kd: &kd,
        leaves: &leaves,
        dims: &dims,
        devices: &devices,
        statics: &statics,
    };
    let entry = lookup(cache, &key).unwrap_or_else(|| {
        let _guard = lock(&cache.compiling);
        lookup(cache, &key)
            .unwrap_or_else(|| compile_entry(site, &spec, loc, &key, num_donated, &body))
    });

    // Each leaf as the program wants it: a leaf already laid out so (the output of a pmap
    // over these devices) is passed as is, buffer by buffer; pieces it holds on the right
    // device are shared, the rest copied there.
    let placed: Vec<Array> = leaves
        .iter()
        .zip(&entry.in_shardings)
        .map(|(l, s)| match l.sharding() {
            // The common case in a loop, checked before `try_device_put` works out indices.
            Some(held) if held == s => l.clone(),
            _ => try_device_put(l, s.clone()).unwrap_or_else(|e| fail(e)),
        })
        .collect();
    // The caller gave up the donated leaves: from here on `placed` may hold the only
    // references to their buffers.
    drop(leaves);
    let num_consts = entry.consts.len();
    let mut keep_alive: Vec<i64> = Vec::new();
    for (i, leaf) in placed[..num_donated].iter().enumerate() {
        let shared = Arc::strong_count(&leaf.0) > 1
            || leaf
                .concrete("pmap")
                .buffers
                .iter()
                .any(|b| Arc::strong_count(b) > 1);
        if shared {
            if !cache.warned_undonated.swap(true, Ordering::Relaxed) {
                let p = site.params.as_ref().map(|p| p.donated);
                let path = named_leaf_paths(&entry.donated_def, p)
                    .into_iter()
                    .nth(i)
                    .unwrap_or_else(|| format!("donated leaf {i}"));
                log::warn!(
                    target: "jaxrs::pmap",
                    "pmap `{}` ({}): donated `{path}` is still shared with a clone, so its \
                     buffers are not donated (drop the clone before the call); this is said \
                     once per function",
                    site.name,
                    site.location
                );
            }
            keep_alive.push((num_consts + i) as i64);
        }
    }
    let args: Vec<Vec<&Buffer>> = entry
        .order
        .iter()
        .map(|&m| {
            entry
                .consts
                .iter()
                .chain(&placed)
                .map(|a| &*a.concrete("pmap").buffers[m])
                .collect()
        })
        .collect();
    let span = crate::core::profile::span("pmap", "execute", || format!("pmap `{}`", site.name));
    let outs = entry
        .exe
        .execute(&args, &keep_alive)
        .unwrap_or_else(|e| fail(e));
    drop(span);
    drop(args);
    let donated_buffers: usize = placed[..num_donated]
        .iter()
        .map(|a| {
            a.concrete("pmap")
                .buffers
                .iter()
                .filter(|b| b.is_deleted())
                .count()
        })
        .sum();
    site.last_donated.store(donated_buffers, Ordering::Relaxed);
    drop(placed);

    // outs[p][j]: output j of the executable's device p; regroup per output, in the order of
    // `devices`.
    let n = entry.devices.len();
    let mut by_device: Vec<Option<std::vec::IntoIter<Buffer>>> = (0..n).map(|_| None).collect();
    for (p, row) in outs.into_iter().enumerate() {
        by_device[entry.order[p]] = Some(row.into_iter());
    }
    let mut by_device: Vec<std::vec::IntoIter<Buffer>> = by_device
        .into_iter()
        .map(|r| r.expect("one output list per device"))
        .collect();
    let arrays: Vec<Array> = entry
        .out_avals
        .iter()
        .zip(&entry.out_shardings)
        .map(|(aval, sharding)| {
            let buffers = by_device
                .iter_mut()
                .map(|row| Arc::new(row.next().expect("one buffer per output")))
                .collect();
            Array(Arc::new(Repr::Concrete(Concrete {
                aval: aval.clone(),
                buffers,
                sharding: sharding.clone(),
                literal: None,
            })))
        })
        .collect();
    rebuild(
        worded(|e| format!("pmap `{}`: cannot rebuild the result: {e}", site.name)),
        &entry.out_def,
        arrays,
    )
}

fn lookup<S: StaticArgs>(cache: &PmapCache, key: &Key<'_, S>) -> Option<Arc<Entry>> {
    cache
        .entries()
        .iter()
        .rev()
        .find(|e| e.matches(key))
        .cloned()
}

/// A spec that splits dimension `dim` over the mesh's one axis.
fn split_along(mesh: &Mesh, dim: usize) -> Sharding {
    let mut dims = vec![PartitionDim::Replicated; dim];
    dims.push(PartitionDim::Axes(vec![mesh.axis_names()[0].clone()]));
    Sharding::Named(
        NamedSharding::new(mesh.clone(), PartitionSpec::new(dims)).expect("the mesh's own axis"),
    )
}

fn compile_entry<S: StaticArgs, DT: Tree, KT: Tree, R: Tree>(
    site: &PmapSite,
    spec: &PmapSpec<'_>,
    loc: &'static Location<'static>,
    key: &Key<'_, S>,
    num_donated: usize,
    body: &impl Fn(DT, KT, &S) -> R,
) -> Arc<Entry> {
    let cache = site.cache();
    let at = At::column(loc);
    let head = format!("pmap `{}`", site.name);
    let explanation = explain_miss(site, cache, key);
    let devices = key.devices.to_vec();
    let n = devices.len();
    let in_avals: Vec<Aval> = key.leaves.iter().map(|l| l.aval().clone()).collect();
    // Each device's argument: its [.., 1, ..] shard of a mapped leaf, a whole unmapped one.
    let shard_avals: Vec<Aval> = in_avals
        .iter()
        .zip(key.dims)
        .map(|(a, d)| {
            let mut a = a.clone();
            if let Some(d) = d {
                a.shape[*d] = 1;
            }
            a
        })
        .collect();
    let in_def = TreeDef::Tuple(vec![key.dd.clone(), key.kd.clone()]);
    let mut out_dims: Vec<Option<usize>> = Vec::new();
    let mut out_def = None;
    let span = crate::core::profile::span("pmap", "trace", || format!("pmap `{}`", site.name));
    let (closed, _) = trace_leaves(Some(head.clone()), &shard_avals, |tracers| {
        let values: Vec<Array> = tracers
            .into_iter()
            .zip(key.dims)
            .map(|(t, d)| match d {
                Some(d) => {
                    let mut shape = t.shape().to_vec();
                    shape.remove(*d);
                    t.reshape(shape)
                }
                None => t,
            })
            .collect();
        let (d, k): (DT, KT) = rebuild(worded(|e| format!("{head}: {e} {at}")), &in_def, values);
        let result = match spec.axis_name {
            Some(name) => with_named_axis(name, n, || body(d, k, key.statics)),
            None => body(d, k, key.statics),
        };
        let (outs, def) = result.flatten();
        let mut want = Vec::with_capacity(outs.len());
        if let Err(e) = spec.out_axes.leaf_axes(&def, &mut want) {
            panic!("{head}: out_axes does not fit the result: {e} {at}");
        }
        let out_names = crate::tree::leaf_paths(&def, "output");
        let outs: Vec<Array> = outs
            .into_iter()
            .zip(want)
            .zip(&out_names)
            .map(|((o, w), name)| {
                let Some(w) = w else {
                    out_dims.push(None);
                    return o;
                };
                let r = o.rank() + 1;
                let Some(a) = normalize_axis(w, r) else {
                    panic!(
                        "{head}: out_axes puts {name} along axis {w}, but the stacked {name} \
                         has rank {r} (axes {} to {}) {at}",
                        -(r as i64),
                        r - 1
                    );
                };
                out_dims.push(Some(a));
                o.expand_dims(a as i64)
            })
            .collect();
        out_def = Some(def);
        outs
    });
    drop(span);
    let out_def = out_def.expect("traced");

    let mesh = Mesh::new(&devices, &[n], &[spec.axis_name.unwrap_or(UNNAMED_AXIS)])
        .unwrap_or_else(|e| panic!("{head}: {e} {at}"));
    let replicated = Sharding::Replicated(devices.clone());
    let in_shardings: Vec<Sharding> = key
        .dims
        .iter()
        .map(|d| match d {
            Some(d) => split_along(&mesh, *d),
            None => replicated.clone(),
        })
        .collect();
    let per_device_out = closed.jaxpr.out_avals();
    let (out_avals, out_shardings): (Vec<Aval>, Vec<Sharding>) = per_device_out
        .into_iter()
        .zip(&out_dims)
        .map(|(mut aval, d)| match d {
            Some(d) => {
                aval.shape[*d] = n;
                (aval, split_along(&mesh, *d))
            }
            None => (aval, replicated.clone()),
        })
        .unzip();

    // Small constants are embedded in the program, as jit embeds them.
    let embedded_consts = crate::transforms::jit::embedded_constants(&closed.consts);
    let kept_consts: Vec<&Array> = closed
        .consts
        .iter()
        .zip(&embedded_consts)
        .filter(|(_, e)| e.is_none())
        .map(|(c, _)| c)
        .collect();
    let mut donated = vec![false; kept_consts.len()];
    donated.extend((0..key.leaves.len()).map(|i| i < num_donated));
    let lowering = LowerOptions {
        donated,
        with_locations: true,
        num_replicas: n,
        num_partitions: 1,
        spmd: None,
        for_cpu: crate::core::client::for_cpu(),
        bf16_rows_kernel: crate::core::client::bf16_rows_kernel(),
        embedded_consts,
    };
    let span = crate::core::profile::span("pmap", "lower", || format!("pmap `{}`", site.name));
    let text = lower_jaxpr(&closed.jaxpr, &lowering);
    drop(span);
    // Replica r runs on `devices[r]`; the replica count comes from the lowering options, as
    // the module's `mhlo.num_replicas` does.
    let options = CompileOptions {
        device_assignment: Some(devices.iter().map(|d| vec![i64::from(d.id())]).collect()),
        ..lowering.compile_options()
    };
    let (exe, lookup) = crate::core::compile_cache::compile(
        &format_args!("pmap `{}`", site.name()),
        &text,
        &options,
    )
    .unwrap_or_else(|e| fail(e));
    cache.count_lookup(lookup);
    let order: Vec<usize> = exe
        .devices()
        .iter()
        .map(|d| {
            devices
                .iter()
                .position(|x| x == d)
                .expect("the program runs on the devices it was assigned")
        })
        .collect();
    assert_eq!(order.len(), n, "{head}: one argument list per device");
    let consts: Vec<Array> = kept_consts
        .iter()
        .map(|c| try_device_put(c, replicated.clone()).unwrap_or_else(|e| fail(e)))
        .collect();

    let entry = Entry {
        donated_def: key.dd.clone(),
        kept_def: key.kd.clone(),
        in_avals,
        in_dims: key.dims.to_vec(),
        devices,
        statics: Box::new(key.statics.clone()),
        exe,
        order,
        consts,
        in_shardings,
        out_def,
        out_avals,
        out_shardings,
        text,
    };
    cache.record_miss("jaxrs::pmap", explanation, entry)
}

/// What differs between this call and the most recent cached specialisation.
fn explain_miss<S: StaticArgs>(site: &PmapSite, cache: &PmapCache, key: &Key<'_, S>) -> String {
    let head = format!(
        "pmap `{}` ({}): tracing and compiling",
        site.name, site.location
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
        key.dd,
        donated,
        "donated arguments",
    );
    structure_changes(&mut why, &prev.kept_def, key.kd, kept, "arguments");
    if why.is_empty() {
        let paths = named_leaf_paths(key.dd, donated)
            .into_iter()
            .chain(named_leaf_paths(key.kd, kept));
        for (((path, old), leaf), (old_dim, new_dim)) in paths
            .zip(&prev.in_avals)
            .zip(key.leaves)
            .zip(prev.in_dims.iter().zip(key.dims))
        {
            if old != leaf.aval() {
                let _ = write!(why, "; {path} changed from {old} to {}", leaf.aval());
            } else if old_dim != new_dim {
                let _ = write!(
                    why,
                    "; {path} is mapped along {} instead of {}",
                    axis_text(*new_dim),
                    axis_text(*old_dim)
                );
            }
        }
        if prev.devices != key.devices {
            let _ = write!(
                why,
                "; the devices changed from {:?} to {:?}",
                prev.devices, key.devices
            );
        }
        if prev.statics.as_any().downcast_ref::<S>() != Some(key.statics) {
            static_changes(
                &mut why,
                &prev.statics.describe(),
                &format!("{:?}", key.statics),
                static_names,
            );
        }
    }
    if why.is_empty() {
        why = "; no difference from the last specialisation (evicted or raced)".into();
    }
    format!("{head} because{}", &why[1..])
}

fn axis_text(d: Option<usize>) -> String {
    match d {
        Some(d) => format!("axis {d}"),
        None => "no axis".into(),
    }
}

/// A pmapped closure; see [`pmap`].
pub struct Pmapped<F> {
    f: F,
    site: PmapSite,
    axis_name: Option<String>,
    in_axes: Box<dyn AxisSpec>,
    out_axes: Box<dyn AxisSpec>,
    devices: Option<Vec<Device>>,
    donate: Donation,
}

/// Maps `f` over devices, like `jax.pmap`: the argument's leaves are split along their mapped
/// axis (`in_axes`, default 0), one slice per device; each device runs `f` on its slice (the
/// mapped axis removed); the results are stacked along `out_axes` (default 0) and stay on the
/// devices: one buffer per device, with a [`NamedSharding`](crate::NamedSharding) over a
/// 1-D mesh named after the axis. The whole call is one XLA program of one replica per
/// device, compiled once per input shapes and run with one launch.
///
/// The mapped size picks the devices: the first `n` local devices (an error if there are
/// fewer), or exactly those given to [`Pmapped::devices`]. An input in `in_axes` `None` is
/// passed whole to every device. An input already split along its mapped axis over these
/// devices (a previous pmap's output) is used in place, so a training loop keeps its
/// parameters on the devices.
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::set_cpu_device_count(8)?;
///
/// // Per device: a scaled row sum. `scale` is the same on every device.
/// let f = pmap(|(x, scale): (Array, Array)| x.sum(None, false) * &scale)
///     .axis_name("d")
///     .in_axes((0, None));
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape(&[8, 2]);
/// let y: Array = f.call((x, Array::scalar(10.0f32)));
/// assert_eq!(y.shape(), &[8]);
/// assert_eq!(y.to_vec::<f32>(), vec![10.0, 50.0, 90.0, 130.0, 170.0, 210.0, 250.0, 290.0]);
///
/// // The result stays split over the devices: device 3 holds element 3.
/// let shards = y.addressable_shards();
/// assert_eq!(shards.len(), 8);
/// assert_eq!(shards[3].device, jaxrs::devices()[3]);
/// assert_eq!(shards[3].data.to_vec::<f32>(), vec![130.0]);
/// assert_eq!(y.sharding().unwrap().to_string(), "NamedSharding(mesh=Mesh('d': 8, axis_types=(Auto,)), spec=PartitionSpec('d',))");
/// # Ok::<(), jaxrs::Error>(())
/// ```
///
/// Inside another transformation's trace (`jit(|x| f.call(x))`, `grad` of a function that
/// calls it) there is no per-device program to run: the call is computed as a `vmap` over
/// the mapped axis, with the same values, on one device. Errors (mapped sizes that disagree,
/// more slices than devices, an axis out of range, an `in_axes` that does not fit the
/// argument) stop with a message naming the argument, at the line of the call.
#[track_caller]
pub fn pmap<A: Tree, R: Tree, F: Fn(A) -> R>(f: F) -> Pmapped<F> {
    Pmapped {
        f,
        site: PmapSite::new(super::callable_name::<F>(), Location::caller().file()),
        axis_name: None,
        in_axes: Box::new(0i64),
        out_axes: Box::new(0i64),
        devices: None,
        donate: Donation::Nothing,
    }
}

impl<F> Pmapped<F> {
    /// Names the device axis, for collectives inside the function (`psum(x, "d")`) and for
    /// the results' mesh. Without a name no axis is in scope, and the mesh axis is `"pmap"`.
    pub fn axis_name(mut self, name: &str) -> Self {
        self.axis_name = Some(name.to_string());
        self
    }

    /// Which axis of each input leaf is split over the devices ([`AxisSpec`]: `0`, `None`
    /// for an input every device gets whole, a tuple with one entry per element of a tuple
    /// argument).
    pub fn in_axes(mut self, axes: impl AxisSpec + 'static) -> Self {
        self.in_axes = Box::new(axes);
        self
    }

    /// Along which axis each result leaf is stacked (`None`: a result that is the same on
    /// every device, e.g. after a `psum`, kept as one copy per device; that it is the same is
    /// the caller's promise, not checked, and a read sees the first device's copy).
    pub fn out_axes(mut self, axes: impl AxisSpec + 'static) -> Self {
        self.out_axes = Box::new(axes);
        self
    }

    /// Runs on exactly these devices (the mapped size must be their number).
    pub fn devices(mut self, devices: &[Device]) -> Self {
        self.devices = Some(devices.to_vec());
        self
    }

    /// Donates the whole argument tree to each call: each device's output may reuse its
    /// shard's buffer. As with [`Jitted::donate_argument`](crate::Jitted::donate_argument),
    /// an argument whose clone is alive is not donated (and the first such call warns).
    pub fn donate_argument(mut self) -> Self {
        self.donate = Donation::Whole;
        self
    }

    /// Donates these elements of the argument tuple (JAX's `donate_argnums`); see
    /// [`Jitted::donate_argnums`](crate::Jitted::donate_argnums).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// jaxrs::set_cpu_device_count(2)?;
    /// let step = pmap(|(w, x): (Array, Array)| &w - &x).donate_argnums(&[0]);
    /// let x = Array::ones(&[2, 3], DType::F32);
    /// let w: Array = step.call((Array::ones(&[2, 3], DType::F32) * 3.0, x.clone()));
    /// assert_eq!(w.to_vec::<f32>(), vec![2.0; 6]);
    /// assert_eq!(x.to_vec::<f32>(), vec![1.0; 6]);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn donate_argnums(mut self, argnums: &[usize]) -> Self {
        self.donate = Donation::Elements(argnums.to_vec());
        self
    }

    /// The compile cache: counters and the last miss's explanation.
    pub fn site(&self) -> &PmapSite {
        &self.site
    }

    /// Calls the pmapped function, compiling on the first call for these input shapes.
    #[track_caller]
    pub fn call<A: Tree, R: Tree>(&self, args: A) -> R
    where
        F: Fn(A) -> R,
    {
        let in_axes: &dyn AxisSpec = &*self.in_axes;
        let spec = |in_axes| PmapSpec {
            axis_name: self.axis_name.as_deref(),
            in_axes,
            out_axes: &*self.out_axes,
            devices: self.devices.as_deref(),
        };
        match &self.donate {
            Donation::Whole => pmap_call(
                &self.site,
                spec((in_axes, &())),
                args,
                (),
                (),
                |a: A, (), _: &()| (self.f)(a),
            ),
            Donation::Nothing => pmap_call(
                &self.site,
                spec((&(), in_axes)),
                (),
                args,
                (),
                |(), a: A, _: &()| (self.f)(a),
            ),
            Donation::Elements(argnums) => {
                let (leaves, def) = args.flatten();
                drop(args);
                let what = format!("pmap `{}`", self.site.name());
                let split = ElementDonation::new(&what, argnums, &def);
                // The axes per leaf, split as the leaves are.
                let mut axes = Vec::with_capacity(leaves.len());
                in_axes
                    .leaf_axes(&def, &mut axes)
                    .unwrap_or_else(|e| panic!("{what}: in_axes: {e}"));
                let (donated_axes, kept_axes) = split.split(axes);
                let (donated_axes, kept_axes) = (LeafAxes(donated_axes), LeafAxes(kept_axes));
                let (donated, kept) = split.split(leaves);
                pmap_call(
                    &self.site,
                    spec((&donated_axes, &kept_axes)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::axes::{lookup, NamedAxis};
    use crate::dtype::DType;
    use std::cell::RefCell;

    /// The contract with the collectives: while the body is traced, its axis is in scope
    /// with the number of devices, whether the pmap runs on devices or, inside another
    /// trace, as a vmap.
    #[test]
    fn the_axis_is_in_scope_while_the_body_is_traced() {
        let n = crate::core::client::local_device_count();
        let seen: RefCell<Vec<Option<NamedAxis>>> = RefCell::new(Vec::new());
        let f = pmap(|x: Array| {
            seen.borrow_mut().push(lookup("dev"));
            &x + 1.0
        })
        .axis_name("dev");
        let x = Array::zeros(&[n, 2], DType::F32);
        let y: Array = f.call(x.clone());
        assert_eq!(y.to_vec::<f32>(), vec![1.0; 2 * n]);
        let inside: Array = crate::transforms::jit::jit(|x: Array| -> Array { f.call(x) }).call(x);
        assert_eq!(inside.to_vec::<f32>(), vec![1.0; 2 * n]);
        let axis = Some(NamedAxis {
            name: "dev".into(),
            size: n,
        });
        assert_eq!(*seen.borrow(), vec![axis.clone(), axis]);
        assert!(lookup("dev").is_none());
    }
}
