//! `vmap`: a function of one example made a function of a batch, by tracing it once per
//! example shape and running the batching pass ([`crate::interpreters::batching`]) on the whole batch.
//!
//! The `#[vmap(...)]` macro and the [`vmap`] function both go through [`vmap_call`].

use crate::aval::{normalize_axis, Aval};
use crate::core::array::Array;
use crate::core::axes::with_named_axis;
use crate::core::sharding_types::{dims_of, type_sharding, typeof_};
use crate::core::trace::{At, Operand};
use crate::interpreters::batching::{batch_jaxpr_named, move_bdim, moveaxis};
use crate::transforms::traced::{rebuild, trace_leaves, worded};
use crate::tree::{Tree, TreeDef};
use std::fmt::Write;
use std::panic::Location;

/// Which axis of each leaf of a tree is mapped: `in_axes` and `out_axes` of [`vmap`].
///
/// - an integer (`0`, `-1`: negative counts from the end) maps every leaf of the tree along
///   that axis;
/// - `None` maps nothing: the value is the same for every example;
/// - `Some(axis)` is the integer;
/// - a tuple gives one entry per element of a tuple tree (`(None, 0, 0)` for arguments
///   `(params, x, y)`), each itself any of these; likewise a `Vec` or an array `[_; N]` for
///   a `Vec` or array tree.
///
/// Axes apply to leaves only: a tree's static fields (its Rust scalars, `bool`s and
/// `String`s, see [`Tree`]) have no batch axis, so an axis given for one, or for a struct
/// holding some, maps nothing there; every example sees the one Rust value.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // p unmapped, x along axis 0, y along its last axis: three examples.
/// let f = vmap(|(p, x, y): (Array, Array, Array)| &p * (&x + &y), (None, 0, -1), 0);
/// let p = Array::scalar(2.0f32);
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let y = Array::from_vec(vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0], &[2, 3]);
/// let out = f((p, x, y));
/// assert_eq!(out.shape(), &[3, 2]);
/// assert_eq!(out.to_vec::<f32>(), vec![22.0, 82.0, 44.0, 104.0, 66.0, 126.0]);
///
/// // For an argument that is a Vec of two trees: the first along axis 1, the second unmapped.
/// let g = vmap(|v: Vec<Array>| &v[0] * &v[1], vec![Some(1), None], 0);
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// let b = Array::from_vec(vec![10.0f32, 100.0], &[2]);
/// let out = g(vec![a, b]);
/// assert_eq!(out.to_vec::<f32>(), vec![10.0, 400.0, 20.0, 500.0, 30.0, 600.0]);
/// ```
pub trait AxisSpec {
    /// Appends one entry per leaf of a tree of structure `def`, or says why the spec does
    /// not fit that structure.
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String>;
}

macro_rules! int_axis_spec {
    ($($t:ty),*) => {$(
        impl AxisSpec for $t {
            fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
                out.extend(std::iter::repeat_n(Some(*self as i64), def.num_leaves()));
                Ok(())
            }
        }
    )*};
}
int_axis_spec!(i32, i64, isize, usize);

impl AxisSpec for Option<i64> {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        out.extend(std::iter::repeat_n(*self, def.num_leaves()));
        Ok(())
    }
}

impl<S: AxisSpec + ?Sized> AxisSpec for &S {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        (**self).leaf_axes(def, out)
    }
}

/// One spec per child of a tuple, list or array tree.
fn children_axes(
    specs: &[&dyn AxisSpec],
    what: &str,
    def: &TreeDef,
    out: &mut Vec<Option<i64>>,
) -> Result<(), String> {
    let children = match (what, def) {
        ("tuple", TreeDef::Tuple(c)) => c,
        ("Vec", TreeDef::List(c)) => c,
        ("array", TreeDef::FixedArray(c)) => c,
        _ => {
            return Err(format!(
                "a {what} of {} axes does not fit {def}; give one axis for the whole tree \
                 (e.g. `0`) or a spec shaped like it",
                specs.len()
            ))
        }
    };
    if children.len() != specs.len() {
        return Err(format!(
            "a {what} of {} axes does not fit {def}, which has {} elements",
            specs.len(),
            children.len()
        ));
    }
    for (s, d) in specs.iter().zip(children) {
        s.leaf_axes(d, out)?;
    }
    Ok(())
}

impl AxisSpec for () {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        children_axes(&[], "tuple", def, out)
    }
}

macro_rules! tuple_axis_spec {
    ($(($($name:ident $idx:tt),+))*) => {$(
        impl<$($name: AxisSpec),+> AxisSpec for ($($name,)+) {
            fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
                children_axes(&[$(&self.$idx),+], "tuple", def, out)
            }
        }
    )*};
}
tuple_axis_spec! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

impl<S: AxisSpec> AxisSpec for Vec<S> {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        let specs: Vec<&dyn AxisSpec> = self.iter().map(|s| s as &dyn AxisSpec).collect();
        children_axes(&specs, "Vec", def, out)
    }
}

impl<S: AxisSpec, const N: usize> AxisSpec for [S; N] {
    fn leaf_axes(&self, def: &TreeDef, out: &mut Vec<Option<i64>>) -> Result<(), String> {
        let specs: Vec<&dyn AxisSpec> = self.iter().map(|s| s as &dyn AxisSpec).collect();
        children_axes(&specs, "array", def, out)
    }
}

/// How error messages name a vmapped function and its arguments.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct VmapNames {
    /// The function's name, or `None` for a closure.
    pub function: Option<&'static str>,
    /// The names of the elements of the argument tuple (the mapped parameters, for the
    /// macro); `None`: `args.0`, `args.1`, ...
    pub params: Option<&'static [&'static str]>,
}

impl VmapNames {
    fn head(&self) -> String {
        match self.function {
            Some(f) => format!("vmap `{f}`"),
            None => "vmap".to_string(),
        }
    }
}

/// A readable name for each leaf: `x`, `params.w`, `args.1[2]`.
fn leaf_names(def: &TreeDef, root: &str, params: Option<&[&str]>) -> Vec<String> {
    fn walk(def: &TreeDef, path: String, out: &mut Vec<String>) {
        match def {
            TreeDef::Leaf | TreeDef::Scalar(_) => out.push(path),
            TreeDef::None | TreeDef::Static(_) => {}
            TreeDef::Some(t) => walk(t, path, out),
            TreeDef::Tuple(c) => {
                for (i, t) in c.iter().enumerate() {
                    walk(t, format!("{path}.{i}"), out);
                }
            }
            TreeDef::List(c) | TreeDef::FixedArray(c) => {
                for (i, t) in c.iter().enumerate() {
                    walk(t, format!("{path}[{i}]"), out);
                }
            }
            TreeDef::Map(c) => {
                for (k, t) in c {
                    walk(t, format!("{path}[{k:?}]"), out);
                }
            }
            TreeDef::Struct { fields, .. } => {
                for (k, t) in fields {
                    walk(t, format!("{path}.{k}"), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    match (def, params) {
        (TreeDef::Tuple(c), Some(names)) if c.len() == names.len() => {
            for (t, n) in c.iter().zip(names) {
                walk(t, n.to_string(), &mut out);
            }
        }
        _ => walk(def, root.to_string(), &mut out),
    }
    out
}

/// One mapped leaf, for the size-mismatch message.
struct Mapped {
    name: String,
    axis: usize,
    aval: Aval,
}

impl Mapped {
    fn size(&self) -> usize {
        self.aval.shape[self.axis]
    }
}

/// The error when the mapped axes do not all have one size: every mapped leaf with its
/// axis, type and size, and which ones differ from the most common size.
fn size_mismatch(head: &str, mapped: &[Mapped], axis_size: Option<usize>, loc: &Location) -> ! {
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for m in mapped {
        match sizes.iter_mut().find(|(s, _)| *s == m.size()) {
            Some((_, n)) => *n += 1,
            None => sizes.push((m.size(), 1)),
        }
    }
    let mut msg = match axis_size {
        Some(n) => {
            format!("{head}: axis_size is {n}, but the mapped axes do not all have size {n}:\n")
        }
        None => {
            let list: Vec<String> = sizes.iter().map(|(s, _)| s.to_string()).collect();
            format!(
                "{head}: the mapped axes must all have the same size, but they have sizes {}:\n",
                list.join(", ")
            )
        }
    };
    let width = mapped.iter().map(|m| m.name.len()).max().unwrap_or(0);
    const SHOWN: usize = 24;
    for m in mapped.iter().take(SHOWN) {
        let _ = writeln!(
            msg,
            "  {:width$}  axis {} of {} has size {}",
            m.name,
            m.axis,
            m.aval,
            m.size()
        );
    }
    if mapped.len() > SHOWN {
        let _ = writeln!(msg, "  ... and {} more mapped leaves", mapped.len() - SHOWN);
    }
    let common = match axis_size {
        Some(n) => Some(n),
        None => {
            let most = sizes.iter().map(|(_, n)| *n).max().unwrap_or(0);
            let ties = sizes.iter().filter(|(_, n)| *n == most).count();
            (ties == 1 && mapped.len() > 2)
                .then(|| sizes.iter().find(|(_, n)| *n == most).map(|(s, _)| *s))
                .flatten()
        }
    };
    if let Some(common) = common {
        let odd: Vec<&str> = mapped
            .iter()
            .filter(|m| m.size() != common)
            .map(|m| m.name.as_str())
            .collect();
        let _ = writeln!(
            msg,
            "  (size {common} is the batch size; {} differ{}: map another axis of {}, or give \
             {} in_axes None if it is the same for every example)",
            odd.join(", "),
            if odd.len() == 1 { "s" } else { "" },
            if odd.len() == 1 { "it" } else { "them" },
            if odd.len() == 1 { "it" } else { "them" },
        );
    }
    panic!("{msg}{}", At::column(loc));
}

/// Calls `f` on a batch: `args` holds the examples stacked along the axes `in_axes` gives
/// (one per leaf, `None` for leaves shared by every example); the result holds the
/// per-example results stacked along `out_axes`. `f` is traced once for one example's
/// shapes, then the batching pass runs on the batch.
///
/// `names` names the function and its arguments in errors; `axis_size` is the batch size
/// when no argument is mapped (and must agree with the mapped sizes otherwise); `axis_name`
/// names the batch axis for collectives inside `f`.
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn vmap_call<A: Tree, R: Tree>(
    names: VmapNames,
    in_axes: &impl AxisSpec,
    out_axes: &impl AxisSpec,
    axis_size: Option<usize>,
    axis_name: Option<&str>,
    args: A,
    f: impl FnOnce(A) -> R,
) -> R {
    vmap_call_at(
        Location::caller(),
        names,
        in_axes,
        out_axes,
        axis_size,
        axis_name,
        args,
        f,
    )
}

/// [`vmap_call`], with errors reported at `loc`.
#[allow(clippy::too_many_arguments)]
fn vmap_call_at<A: Tree, R: Tree>(
    loc: &'static Location<'static>,
    names: VmapNames,
    in_axes: &impl AxisSpec,
    out_axes: &impl AxisSpec,
    axis_size: Option<usize>,
    axis_name: Option<&str>,
    args: A,
    f: impl FnOnce(A) -> R,
) -> R {
    let head = names.head();
    let at = At::column(loc);
    let (leaves, def) = args.flatten();
    drop(args);
    let leaf_name = leaf_names(&def, "args", names.params);
    let mut axes = Vec::with_capacity(leaves.len());
    if let Err(e) = in_axes.leaf_axes(&def, &mut axes) {
        panic!("{head}: in_axes does not fit the arguments: {e} {}", at);
    }

    // Each leaf's mapped axis, checked against its rank.
    let mut dims = Vec::with_capacity(leaves.len());
    let mut mapped = Vec::new();
    for ((leaf, axis), name) in leaves.iter().zip(&axes).zip(&leaf_name) {
        let Some(axis) = *axis else {
            dims.push(None);
            continue;
        };
        let r = leaf.rank();
        let Some(d) = normalize_axis(axis, r) else {
            let why = if r == 0 {
                format!(
                    "{name} is {} (a scalar, rank 0): it has no axis to map; give it in_axes \
                     None to pass it to every example",
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
                "{head}: in_axes maps {name} along axis {axis}, which is out of range: {why} {}",
                at
            );
        };
        dims.push(Some(d));
        mapped.push(Mapped {
            name: name.clone(),
            axis: d,
            aval: leaf.aval().clone(),
        });
    }
    let size = match (mapped.first(), axis_size) {
        (None, Some(n)) => n,
        (None, None) => panic!(
            "{head}: no argument is mapped (every in_axes entry is None), so the batch size is \
             unknown; give axis_size {}",
            at
        ),
        (Some(first), given) => {
            let n = given.unwrap_or(first.size());
            if mapped.iter().any(|m| m.size() != n) {
                size_mismatch(&head, &mapped, given, loc);
            }
            n
        }
    };

    // Trace one example, then run the batching pass on the batch. Only the mapped leaves
    // become tracers: an unmapped one reaches `f` as it is (a Rust scalar stays readable, as
    // a Python scalar does under jax.vmap), and the trace captures it as a constant, which
    // the batching pass treats as unbatched.
    let (mapped_leaves, mapped_dims): (Vec<Array>, Vec<Option<usize>>) = leaves
        .iter()
        .zip(&dims)
        .filter(|(_, d)| d.is_some())
        .map(|(l, d)| (l.clone(), *d))
        .unzip();
    let per_example: Vec<Aval> = mapped_leaves
        .iter()
        .zip(&mapped_dims)
        .map(|(l, d)| {
            let aval = typeof_(l);
            let d = d.expect("mapped");
            let mut shape = aval.shape.clone();
            shape.remove(d);
            // A sharded value keeps its other dimensions' sharding in the example's type.
            let mut dims = dims_of(&aval);
            dims.remove(d);
            Aval {
                sharding: aval
                    .sharding
                    .as_ref()
                    .and_then(|s| type_sharding(s.mesh(), &dims, shape.len())),
                ..aval.with_shape(shape)
            }
        })
        .collect();
    // Not `trace_tree`: the argument is rebuilt from the tracers and the unmapped leaves.
    // A named batch axis is in scope while `f` is traced, for the collectives inside it.
    let trace = |tracers: Vec<Array>| {
        let mut tracers = tracers.into_iter();
        let example: Vec<Array> = leaves
            .iter()
            .zip(&dims)
            .map(|(l, d)| match d {
                Some(_) => tracers.next().expect("one tracer per mapped leaf"),
                None => l.clone(),
            })
            .collect();
        let a: A = rebuild(worded(|e| format!("{head}: {e} {at}")), &def, example);
        f(a)
    };
    let (closed, out_def) = match axis_name {
        Some(name) => with_named_axis(name, size, || {
            trace_leaves(Some(head.clone()), &per_example, trace)
        }),
        None => trace_leaves(Some(head.clone()), &per_example, trace),
    };
    drop(leaves);
    let (outs, out_dims) = batch_jaxpr_named(
        &closed.jaxpr,
        &closed.consts,
        &mapped_leaves,
        &mapped_dims,
        size,
        axis_name,
    );

    // Each output along its out axis.
    let mut want = Vec::with_capacity(outs.len());
    if let Err(e) = out_axes.leaf_axes(&out_def, &mut want) {
        panic!("{head}: out_axes does not fit the result: {e} {}", at);
    }
    let out_name = leaf_names(&out_def, "output", None);
    let outs: Vec<Array> = outs
        .into_iter()
        .zip(out_dims)
        .zip(want)
        .zip(&out_name)
        .map(|(((o, d), w), name)| {
            let Some(w) = w else {
                if d.is_some() {
                    panic!(
                        "{head}: out_axes is None for {name}, but {name} differs between \
                         examples (it depends on a mapped argument); give it an out axis {}",
                        at
                    );
                }
                return o;
            };
            let r = o.rank() + d.is_none() as usize;
            let Some(w) = normalize_axis(w, r) else {
                panic!(
                    "{head}: out_axes puts {name} along axis {w}, but the batched {name} has \
                     rank {r} (axes {} to {}) {}",
                    -(r as i64),
                    r - 1,
                    at
                );
            };
            match d {
                Some(d) => moveaxis(&o, d, w),
                None => move_bdim(&Operand::from(&o), None, w, size),
            }
        })
        .collect();
    rebuild(
        worded(|e| format!("{head}: cannot rebuild the result: {e} {at}")),
        &out_def,
        outs,
    )
}

/// Vectorizes `f` over a batch, like `jax.vmap`: the result maps `f` over the examples
/// stacked along the axes `in_axes` gives ([`AxisSpec`]: an axis for the whole argument, or
/// a tuple with one entry per element of a tuple argument, `None` for the unmapped ones),
/// and stacks the results along `out_axes`. The whole batch runs as one program: matrix
/// products become batched products, reductions reduce every example at once.
///
/// `f` takes one tree (a tuple for several arguments). An unmapped argument reaches `f` as
/// it is, like a value `f` captures: the same for every example, and a Rust scalar stays a
/// Rust scalar (`vmap(|(x, lr): (Array, f32)| .., (0, None), 0)`). It composes with the other transformations:
/// `jit(vmap(f, ..))`, `vmap(grad(f), ..)` (per-example gradients), `grad(|a| vmap(f, ..)(a)
/// .mean(None, false))`, and `vmap(vmap(f, ..), ..)` (two batch axes).
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params {
///     w: Array,
///     b: Array,
/// }
///
/// fn loss(p: &Params, x: &Array, y: &Array) -> Array {
///     (x.matmul(&p.w) + &p.b - y).powi(2).sum(None, false)
/// }
///
/// // loss(params, x, y) for one example; losses for a batch of x and y:
/// let batched = vmap(|(p, x, y): (Params, Array, Array)| loss(&p, &x, &y), (None, 0, 0), 0);
/// let params = Params { w: Array::ones(&[2, 1], DType::F32), b: Array::zeros(&[1], DType::F32) };
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
/// let ys = Array::from_vec(vec![3.0f32, 5.0, 10.0], &[3, 1]);
/// let losses = batched((params, xs, ys));
/// assert_eq!(losses.to_vec::<f32>(), vec![0.0, 4.0, 1.0]);
/// ```
///
/// Errors (sizes of the mapped axes that disagree, an axis out of range) stop with a message
/// naming each argument, at the line where `vmap` was called.
#[track_caller]
pub fn vmap<A: Tree, R: Tree, F: Fn(A) -> R>(
    f: F,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
) -> impl Fn(A) -> R {
    vmapped(f, in_axes, out_axes, None, None, Location::caller())
}

/// [`vmap`] with the batch size given, for a function none of whose arguments is mapped
/// (`jax.vmap(f, in_axes=None, axis_size=n)`): every example sees the same arguments.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let three_copies = vmap_sized(|x: Array| &x + 1.0, None, 0, 3);
/// let y = three_copies(Array::from_vec(vec![1.0f32, 2.0], &[2]));
/// assert_eq!(y.shape(), &[3, 2]);
/// assert_eq!(y.to_vec::<f32>(), vec![2.0, 3.0, 2.0, 3.0, 2.0, 3.0]);
/// ```
#[track_caller]
pub fn vmap_sized<A: Tree, R: Tree, F: Fn(A) -> R>(
    f: F,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
    axis_size: usize,
) -> impl Fn(A) -> R {
    vmapped(
        f,
        in_axes,
        out_axes,
        Some(axis_size),
        None,
        Location::caller(),
    )
}

/// [`vmap`] with a name for the batch axis (`jax.vmap(f, axis_name="i")`): inside `f`, the
/// collectives over that name ([`psum`](crate::psum), [`pmean`](crate::pmean),
/// [`all_gather`](crate::all_gather), [`axis_index`](crate::axis_index), ...) work across
/// the examples of the batch, as they work across devices under pmap. This is how code
/// written for pmap runs on one device.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Each example divided by the batch total, and its position in the batch.
/// let normalize = vmap_named(
///     |x: Array| (&x / psum(&x, "batch"), axis_index("batch")),
///     0,
///     0,
///     "batch",
/// );
/// let (shares, index) = normalize(Array::from_vec(vec![1.0f32, 3.0, 4.0], &[3]));
/// assert_eq!(shares.to_vec::<f32>(), vec![0.125, 0.375, 0.5]);
/// assert_eq!(index.to_vec::<i32>(), vec![0, 1, 2]);
/// ```
///
/// Nested vmaps take two names; a collective names the axis it reduces over, so one inside
/// the inner function may work over the outer axis.
#[track_caller]
pub fn vmap_named<A: Tree, R: Tree, F: Fn(A) -> R>(
    f: F,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
    axis_name: &str,
) -> impl Fn(A) -> R {
    vmapped(
        f,
        in_axes,
        out_axes,
        None,
        Some(axis_name.to_owned()),
        Location::caller(),
    )
}

fn vmapped<A: Tree, R: Tree, F: Fn(A) -> R>(
    f: F,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
    axis_size: Option<usize>,
    axis_name: Option<String>,
    loc: &'static Location<'static>,
) -> impl Fn(A) -> R {
    let names = VmapNames {
        function: None,
        params: None,
    };
    move |args: A| {
        vmap_call_at(
            loc,
            names,
            &in_axes,
            &out_axes,
            axis_size,
            axis_name.as_deref(),
            args,
            &f,
        )
    }
}
