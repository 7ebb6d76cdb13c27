//! The autodiff API: `grad`, `value_and_grad` (with aux), argnums, `vjp`, `jvp`,
//! `custom_vjp`. Each traces the function once into a jaxpr and runs one of the interpreters
//! of [`crate::interpreters::ad`] on it.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::ClosedJaxpr;
use crate::core::trace::At;
use crate::core::trace::{eval_jaxpr, trace_to_jaxpr_for};
use crate::interpreters::ad::{jvp_jaxpr, linearize_jaxpr, Linearized};
use crate::interpreters::partial_eval::{partial_eval_jaxpr, PartialEval};
use crate::transforms::traced::{avals_of, rebuild, trace_tree, Unnamed};
use crate::tree::{Tree, TreeDef};
use std::panic::Location;

/// Traces `f` at the avals of `args`, returning the jaxpr, its constants and the output tree.
fn trace<A: Tree, R: Tree>(
    f: impl FnOnce(A) -> R,
    args: &A,
    what: &str,
) -> (ClosedJaxpr, Vec<Array>, TreeDef, TreeDef) {
    let (leaves, def) = args.flatten();
    let (closed, out_def) = trace_tree(what, &def, &avals_of(&leaves), f);
    (closed, leaves, def, out_def)
}

/// Forward mode: `f(primals)` and its derivative along `tangents` (a tree shaped like
/// `primals`), like `jax.jvp`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f32, 1.0, 2.0], &[3]);
/// let direction = Array::ones(&[3], DType::F32);
/// let (y, dy) = jvp(|x: Array| &x * &x, &x, &direction);
/// assert_eq!(y.to_vec::<f32>(), vec![0.0, 1.0, 4.0]);
/// assert_eq!(dy.to_vec::<f32>(), vec![0.0, 2.0, 4.0]); // 2x along the direction
/// ```
#[track_caller]
pub fn jvp<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, primals: &A, tangents: &A) -> (R, R) {
    let (closed, leaves, def, out_def) = trace(f, primals, "jvp");
    let (t_leaves, t_def) = tangents.flatten();
    check_tangents("jvp", &def, &avals_of(&leaves), &t_def, &t_leaves);
    let tangents: Vec<Option<Array>> = t_leaves.into_iter().map(Some).collect();
    let (outs, out_t) = jvp_jaxpr(&closed.jaxpr, &closed.consts, &leaves, &tangents);
    let out_t: Vec<Array> = out_t
        .into_iter()
        .zip(&outs)
        .map(|(t, o)| t.unwrap_or_else(|| crate::interpreters::ad::zeros_like_aval(o.aval())))
        .collect();
    (
        rebuild(Unnamed, &out_def, outs),
        rebuild(Unnamed, &out_def, out_t),
    )
}

/// The linear map [`linearize`] returns: the JVP of a function at fixed primals, as a
/// function of the tangents alone (JAX's `f_jvp`).
pub struct Linear<A, R> {
    /// The tangent part of the JVP, its primal part evaluated away (the residuals are its
    /// constants).
    staged: ClosedJaxpr,
    /// Each tangent output that does not depend on the tangents (a zero), and `None` for
    /// the staged outputs, in order.
    known: Vec<Option<Array>>,
    in_def: TreeDef,
    in_avals: Vec<Aval>,
    out_def: TreeDef,
    _types: std::marker::PhantomData<fn(A) -> R>,
}

impl<A: Tree, R: Tree> Linear<A, R> {
    /// The output tangent along `tangents`, a tree shaped like the primals: JAX's
    /// `f_jvp(tangents)`. The primal computation is not run again.
    #[track_caller]
    pub fn call(&self, tangents: &A) -> R {
        let (t_leaves, t_def) = tangents.flatten();
        check_tangents("linearize", &self.in_def, &self.in_avals, &t_def, &t_leaves);
        let mut staged = eval_jaxpr(&self.staged.jaxpr, &self.staged.consts, &t_leaves).into_iter();
        let outs = self
            .known
            .iter()
            .map(|k| match k {
                Some(zero) => zero.clone(),
                None => staged
                    .next()
                    .expect("one staged output per unknown tangent"),
            })
            .collect();
        rebuild(Unnamed, &self.out_def, outs)
    }
}

/// `f(primals)` and its JVP at `primals` as a linear function of the tangents, like
/// `jax.linearize`: the JVP is traced once and partially evaluated (JAX's partial
/// evaluation), so the primal part runs now, once, and [`Linear::call`] runs only the
/// tangent part on the saved residuals. Equal to [`jvp`] along every tangent.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f32, 1.0, 2.0], &[3]);
/// let (y, f_jvp) = jaxrs::linearize(|x: Array| x.sin() * 2.0, &x);
/// assert_eq!(y.to_vec::<f32>(), (x.sin() * 2.0).to_vec::<f32>());
/// let dy = f_jvp.call(&Array::ones(&[3], DType::F32));
/// assert_eq!(dy.to_vec::<f32>(), (x.cos() * 2.0).to_vec::<f32>());
/// ```
#[track_caller]
pub fn linearize<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, primals: &A) -> (R, Linear<A, R>) {
    let (closed, leaves, in_def, out_def) = trace(f, primals, "linearize");
    let in_avals = avals_of(&leaves);
    let n_in = leaves.len();
    let both: Vec<Aval> = in_avals.iter().chain(&in_avals).cloned().collect();
    let jvp_program = trace_to_jaxpr_for(Some("linearize".into()), &both, |xs| {
        let (p, t) = xs.split_at(n_in);
        let tangents: Vec<Option<Array>> = t.iter().cloned().map(Some).collect();
        let (outs, out_t) = jvp_jaxpr(&closed.jaxpr, &closed.consts, p, &tangents);
        let out_t: Vec<Array> = out_t
            .into_iter()
            .zip(&outs)
            .map(|(t, o)| t.unwrap_or_else(|| crate::interpreters::ad::zeros_like_aval(o.aval())))
            .collect();
        outs.into_iter().chain(out_t).collect()
    });
    let known: Vec<Option<Array>> = leaves
        .iter()
        .cloned()
        .map(Some)
        .chain((0..n_in).map(|_| None))
        .collect();
    let PartialEval { known_outs, staged } =
        partial_eval_jaxpr(&jvp_program.jaxpr, &jvp_program.consts, &known);
    let n_out = known_outs.len() / 2;
    let mut known_outs = known_outs.into_iter();
    let outs: Vec<Array> = known_outs
        .by_ref()
        .take(n_out)
        .map(|o| o.expect("a primal output does not depend on the tangents"))
        .collect();
    let linear = Linear {
        staged,
        known: known_outs.collect(),
        in_def,
        in_avals,
        out_def: out_def.clone(),
        _types: std::marker::PhantomData,
    };
    (rebuild(Unnamed, &out_def, outs), linear)
}

/// Checks that `tangents` (leaves `t_leaves`, structure `t_def`) match the primals.
#[track_caller]
fn check_tangents(what: &str, def: &TreeDef, avals: &[Aval], t_def: &TreeDef, t_leaves: &[Array]) {
    if t_def != def {
        panic!("{what}: tangents {t_def} do not match primals {def}");
    }
    for (p, t) in avals.iter().zip(t_leaves) {
        if !p.same_type(t.aval()) {
            panic!("{what}: a tangent is {} but its primal is {p}", t.aval());
        }
    }
}

/// The pullback of [`vjp`]: maps a cotangent of the output to one of the input.
pub struct Pullback<A> {
    linearized: Linearized,
    in_def: TreeDef,
    in_avals: Vec<Aval>,
    out_def: TreeDef,
    _args: std::marker::PhantomData<fn() -> A>,
}

impl<A: Tree> Pullback<A> {
    /// The cotangent of the input given `ct`, a tree shaped like the output.
    #[track_caller]
    pub fn call<R: Tree>(&self, ct: &R) -> A {
        let (cts, def) = ct.flatten();
        if def != self.out_def {
            panic!(
                "vjp: the cotangent {def} does not match the output {}",
                self.out_def
            );
        }
        let cts: Vec<Option<Array>> = cts.into_iter().map(Some).collect();
        let grads = self.linearized.backward(&cts);
        let grads = grads
            .into_iter()
            .zip(&self.in_avals)
            .map(|(g, a)| g.unwrap_or_else(|| crate::interpreters::ad::zeros_like_aval(a)))
            .collect();
        rebuild(Unnamed, &self.in_def, grads)
    }
}

/// Reverse mode: `f(primals)` and its pullback, like `jax.vjp`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let (y, pullback) = vjp(|x: Array| &x * &x, &x);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 4.0, 9.0]);
/// let dx = pullback.call(&Array::ones(&[3], DType::F32));
/// assert_eq!(dx.to_vec::<f32>(), vec![2.0, 4.0, 6.0]);
/// ```
pub fn vjp<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, primals: &A) -> (R, Pullback<A>) {
    let (closed, leaves, in_def, out_def) = trace(f, primals, "vjp");
    let in_avals = avals_of(&leaves);
    let (outs, linearized) = linearize_jaxpr(closed.jaxpr, &closed.consts, &leaves);
    let pullback = Pullback {
        linearized,
        in_def,
        in_avals,
        out_def: out_def.clone(),
        _args: std::marker::PhantomData,
    };
    (rebuild(Unnamed, &out_def, outs), pullback)
}

/// Checks that `loss` is a real scalar, as `grad` requires (a complex one when
/// `holomorphic`).
fn check_scalar_loss(loss: &Array, what: &str, holomorphic: bool, loc: &Location<'_>) {
    if holomorphic {
        if loss.rank() != 0 || !loss.dtype().is_complex() {
            panic!(
                "{what}: with holomorphic=True the function must return a complex scalar, but \
                 it returned {} {}",
                loss.aval(),
                At::line(loc)
            );
        }
        return;
    }
    if loss.rank() == 0 && loss.dtype().is_complex() {
        panic!(
            "{what}: grad requires real-valued outputs, but the function returned {}; for \
             holomorphic differentiation use grad_holomorphic, or take jnp::real / jnp::abs \
             of the output {}",
            loss.aval(),
            At::line(loc)
        );
    }
    if loss.rank() != 0 || !loss.dtype().is_float() {
        panic!(
            "{what}: the function must return a real scalar (a 0-d float array), but it returned {} {}; \
             reduce it first (e.g. `.sum(None, false)` or `.mean(None, false)`), or use vjp",
            loss.aval(),
            At::line(loc)
        );
    }
}

/// The value of `f` at `args`, its aux output, and the gradient with respect to `args` (the
/// whole tree; use [`value_and_grad_argnums`] or capture non-differentiated values in a
/// closure). The core of every `grad` form.
fn value_aux_and_grad<A: Tree, X: Tree>(
    f: impl FnOnce(A) -> (Array, X),
    args: &A,
    what: &str,
    loc: &Location<'_>,
) -> ((Array, X), A) {
    value_aux_and_grad_as(f, args, what, false, loc)
}

/// [`value_aux_and_grad`], for a holomorphic `f` of complex inputs when `holomorphic`.
fn value_aux_and_grad_as<A: Tree, X: Tree>(
    f: impl FnOnce(A) -> (Array, X),
    args: &A,
    what: &str,
    holomorphic: bool,
    loc: &Location<'_>,
) -> ((Array, X), A) {
    let (closed, leaves, in_def, out_def) = trace(f, args, what);
    if let Some(l) = leaves.iter().find(|l| !l.dtype().is_inexact()) {
        panic!(
            "{what}: cannot differentiate with respect to a {} input (only floating-point and \
             complex values have gradients); pass it through a closure or choose the argnums to \
             differentiate, {}",
            l.aval(),
            At::line(loc)
        );
    }
    if let Some(l) = leaves
        .iter()
        .find(|l| holomorphic && !l.dtype().is_complex())
    {
        panic!(
            "{what}: with holomorphic=True every input must be complex, got {} {}",
            l.aval(),
            At::line(loc)
        );
    }
    let in_avals = avals_of(&leaves);
    let (outs, linearized) = linearize_jaxpr(closed.jaxpr, &closed.consts, &leaves);
    check_scalar_loss(&outs[0], what, holomorphic, loc);
    let mut cts: Vec<Option<Array>> = vec![None; outs.len()];
    cts[0] = Some(crate::interpreters::ad::full_like_aval(outs[0].aval(), 1.0));
    let grads = linearized.backward(&cts);
    let grads: Vec<Array> = grads
        .into_iter()
        .zip(&in_avals)
        .map(|(g, a)| g.unwrap_or_else(|| crate::interpreters::ad::zeros_like_aval(a)))
        .collect();
    let (loss, aux): (Array, X) = rebuild(Unnamed, &out_def, outs);
    ((loss, aux), rebuild(Unnamed, &in_def, grads))
}

/// `jax.grad`: a function returning the gradient of the scalar `f` with respect to its
/// argument (a tree: the gradient has the same structure).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let df = grad(|x: Array| (&x * &x).sum(None, false));
/// let x = Array::from_vec(vec![1.0f32, -2.0], &[2]);
/// assert_eq!(df(x).to_vec::<f32>(), vec![2.0, -4.0]);
///
/// // To any order: the second derivative of x³ is 6x.
/// let ddf = grad(|x: Array| grad(|y: Array| y.powi(3))(x));
/// assert_eq!(ddf(Array::scalar(2.0f32)).item::<f32>(), 12.0);
/// ```
#[track_caller]
pub fn grad<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> A {
    let loc = Location::caller();
    move |args: A| value_aux_and_grad(|a| (f(a), ()), &args, "grad", loc).1
}

/// `jax.grad(f, holomorphic=True)`: the complex derivative `f'(z)` of a holomorphic `f` of
/// complex inputs with a complex scalar output. (Plain [`grad`] takes complex inputs too, but
/// needs a real output: of a real function of `z = x + y i` it gives JAX's gradient
/// `∂f/∂x - i ∂f/∂y`, so `grad(|z|²)` is `2 conj(z)`.)
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::C64;
///
/// // d/dz z² = 2z.
/// let df = jaxrs::grad_holomorphic(|z: Array| (&z * &z).sum(None, false));
/// let z = Array::from_vec(vec![C64::new(1.0, 2.0)], &[1]);
/// assert_eq!(df(z).to_vec::<C64>(), vec![C64::new(2.0, 4.0)]);
/// ```
#[track_caller]
pub fn grad_holomorphic<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> A {
    let loc = Location::caller();
    move |args: A| value_aux_and_grad_as(|a| (f(a), ()), &args, "grad", true, loc).1
}

/// `jax.value_and_grad`: the value of the scalar `f` and its gradient, in one forward and one
/// backward pass.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let loss = |w: Array| (&w * &w).sum(None, false);
/// let (value, dw) = value_and_grad(loss)(Array::from_vec(vec![3.0f32, 4.0], &[2]));
/// assert_eq!(value.item::<f32>(), 25.0);
/// assert_eq!(dw.to_vec::<f32>(), vec![6.0, 8.0]);
/// ```
#[track_caller]
pub fn value_and_grad<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> (Array, A) {
    let loc = Location::caller();
    move |args: A| {
        let ((v, ()), g) = value_aux_and_grad(|a| (f(a), ()), &args, "value_and_grad", loc);
        (v, g)
    }
}

/// `jax.value_and_grad(f, has_aux=True)`: `f` returns `(loss, aux)` where `aux` is any tree
/// (metrics, say); the result is `((loss, aux), grads)`.
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
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let step = value_and_grad_aux(|p: Params| {
///     let pred = &x * &p.w + &p.b;
///     (pred.powi(2).mean(None, false), pred) // the loss, and the predictions as aux
/// });
/// let params = Params { w: Array::scalar(1.0f32), b: Array::scalar(0.0f32) };
/// let ((loss, pred), grads) = step(params);
/// assert_eq!(loss.item::<f32>(), 2.5);
/// assert_eq!(pred.to_vec::<f32>(), vec![1.0, 2.0]);
/// assert_eq!((grads.w.item::<f32>(), grads.b.item::<f32>()), (5.0, 3.0));
/// ```
#[track_caller]
pub fn value_and_grad_aux<A: Tree, X: Tree, F: Fn(A) -> (Array, X)>(
    f: F,
) -> impl Fn(A) -> ((Array, X), A) {
    let loc = Location::caller();
    move |args: A| value_aux_and_grad(&f, &args, "value_and_grad", loc)
}

/// Which positions of a tuple argument to differentiate: `Argnum::<0>`, or a tuple of them
/// such as `(Argnum::<0>, Argnum::<2>)`, which gives a tuple of gradient trees.
pub struct Argnum<const I: usize>;

/// A choice of positions of the tuple `A` to differentiate (see [`Argnum`]).
pub trait Argnums<A> {
    /// The gradient's type: the chosen element, or a tuple of the chosen elements.
    type Grads: Tree;
    /// Marks the chosen positions in `chosen` (one flag per position of `A`).
    fn choose(chosen: &mut [bool]);
    /// Takes the chosen elements out of a gradient shaped like `A`.
    fn pick(all: &A) -> Self::Grads;
}

/// A tuple whose elements can be split into leaves per position.
pub trait TupleArgs: Tree {
    const LEN: usize;
    /// The number of leaves of each element.
    fn leaf_counts(&self) -> Vec<usize>;
}

macro_rules! tuple_args {
    ($(($len:literal; $($name:ident $idx:tt),+))*) => {$(
        impl<$($name: Tree + Clone),+> TupleArgs for ($($name,)+) {
            const LEN: usize = $len;
            fn leaf_counts(&self) -> Vec<usize> {
                vec![$(self.$idx.structure().num_leaves()),+]
            }
        }
        tuple_args!(@picks ($($name),+); $($name $idx),+);
    )*};
    (@picks $all:tt; $($name:ident $idx:tt),+) => {$(
        tuple_args!(@pick $all; $name $idx);
    )+};
    (@pick ($($all:ident),+); $name:ident $idx:tt) => {
        impl<$($all: Tree + Clone),+> Argnums<($($all,)+)> for Argnum<$idx> {
            type Grads = $name;
            fn choose(chosen: &mut [bool]) {
                chosen[$idx] = true;
            }
            fn pick(all: &($($all,)+)) -> $name {
                all.$idx.clone()
            }
        }
    };
}

tuple_args! {
    (1; A 0)
    (2; A 0, B 1)
    (3; A 0, B 1, C 2)
    (4; A 0, B 1, C 2, D 3)
    (5; A 0, B 1, C 2, D 3, E 4)
    (6; A 0, B 1, C 2, D 3, E 4, F 5)
}

impl<A, P: Argnums<A>, Q: Argnums<A>> Argnums<A> for (P, Q) {
    type Grads = (P::Grads, Q::Grads);
    fn choose(chosen: &mut [bool]) {
        P::choose(chosen);
        Q::choose(chosen);
    }
    fn pick(all: &A) -> Self::Grads {
        (P::pick(all), Q::pick(all))
    }
}

impl<A, P: Argnums<A>, Q: Argnums<A>, R: Argnums<A>> Argnums<A> for (P, Q, R) {
    type Grads = (P::Grads, Q::Grads, R::Grads);
    fn choose(chosen: &mut [bool]) {
        P::choose(chosen);
        Q::choose(chosen);
        R::choose(chosen);
    }
    fn pick(all: &A) -> Self::Grads {
        (P::pick(all), Q::pick(all), R::pick(all))
    }
}

/// `jax.value_and_grad(f, argnums=..., has_aux=...)` for a function of a tuple: only the
/// chosen positions are differentiated (the others may hold integers, labels, anything).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{value_and_grad_argnums, Argnum};
///
/// // Differentiates with respect to `w` and `b`, not the data `x` or the integer `shift`.
/// let vg = value_and_grad_argnums::<_, _, (Argnum<0>, Argnum<1>), _>(
///     |(w, b, x, shift): (Array, Array, Array, i32)| {
///         let loss = (&x * &w + &b).sum(None, false) + shift;
///         (loss, ())
///     },
/// );
/// let (w, b) = (Array::scalar(2.0f32), Array::scalar(1.0f32));
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let ((loss, ()), (dw, db)) = vg((w, b, x, 10));
/// assert_eq!(loss.item::<f32>(), 25.0);
/// assert_eq!((dw.item::<f32>(), db.item::<f32>()), (6.0, 3.0));
/// ```
#[track_caller]
pub fn value_and_grad_argnums<A, X, N, F>(f: F) -> impl Fn(A) -> ((Array, X), N::Grads)
where
    A: TupleArgs + Clone,
    X: Tree,
    N: Argnums<A>,
    F: Fn(A) -> (Array, X),
{
    let loc = Location::caller();
    move |args: A| {
        let mut chosen = vec![false; A::LEN];
        N::choose(&mut chosen);
        let counts = args.leaf_counts();
        let (leaves, def) = args.flatten();
        // Differentiate with respect to the chosen leaves only; the others are constants.
        let mut diff = Vec::new();
        let mut fixed = Vec::new();
        let mut owner = Vec::new();
        for (pos, &n) in counts.iter().enumerate() {
            owner.extend(std::iter::repeat_n(pos, n));
        }
        for (leaf, &pos) in leaves.iter().zip(&owner) {
            if chosen[pos] {
                diff.push(leaf.clone());
            } else {
                fixed.push(leaf.clone());
            }
        }
        let assemble = |diff: Vec<Array>| -> A {
            let (mut d, mut k) = (diff.into_iter(), fixed.iter());
            let all: Vec<Array> = owner
                .iter()
                .map(|&pos| {
                    if chosen[pos] {
                        d.next().expect("leaf")
                    } else {
                        k.next().expect("leaf").clone()
                    }
                })
                .collect();
            rebuild(Unnamed, &def, all)
        };
        let ((value, aux), grads) =
            value_aux_and_grad(|d: Vec<Array>| f(assemble(d)), &diff, "value_and_grad", loc);
        // Zeros stand in for the positions not chosen; pick() drops them.
        let mut g = grads.into_iter();
        let full: Vec<Array> = leaves
            .iter()
            .zip(&owner)
            .map(|(l, &pos)| {
                if chosen[pos] {
                    g.next().expect("grad")
                } else {
                    l.clone()
                }
            })
            .collect();
        ((value, aux), N::pick(&rebuild::<A>(Unnamed, &def, full)))
    }
}

/// A function with a user-supplied reverse-mode derivative; see [`custom_vjp`].
pub struct CustomVjp<Fwd, Bwd> {
    name: &'static str,
    fwd: Fwd,
    bwd: std::sync::Arc<Bwd>,
}

/// `jax.custom_vjp`: `fwd(args) -> (output, residuals)` computes the function and what its
/// derivative needs; `bwd(residuals, output_cotangent) -> args_cotangent` is the derivative.
/// Use it where the stock rules would be unstable or wasteful (a gradient clip, a norm whose
/// gradient at 0 should be 0). It is reverse mode only, as in JAX.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // The identity, whose gradient is clipped to [-1, 1].
/// let clip = jaxrs::custom_vjp(
///     "clip_gradient",
///     |x: Array| (x.clone(), ()),
///     |(), g: Array| g.maximum(-1.0).minimum(1.0),
/// );
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let y: Array = clip.call(x.clone());
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0]);
/// let dx = grad(|x: Array| (clip.call::<Array, Array, ()>(x) * 3.0).sum(None, false))(x);
/// assert_eq!(dx.to_vec::<f32>(), vec![1.0, 1.0]);
/// ```
pub fn custom_vjp<Fwd, Bwd>(name: &'static str, fwd: Fwd, bwd: Bwd) -> CustomVjp<Fwd, Bwd> {
    CustomVjp {
        name,
        fwd,
        bwd: std::sync::Arc::new(bwd),
    }
}

impl<Fwd, Bwd> CustomVjp<Fwd, Bwd> {
    /// Calls the function (its forward computation; the backward one runs under grad/vjp).
    #[track_caller]
    pub fn call<A, R, Res>(&self, args: A) -> R
    where
        A: Tree + 'static,
        R: Tree + 'static,
        Res: Tree + 'static,
        Fwd: Fn(A) -> (R, Res),
        Bwd: Fn(Res, R) -> A + Send + Sync + 'static,
    {
        let (leaves, args_def) = args.flatten();
        let (closed, pair_def) = trace_tree(Unnamed, &args_def, &avals_of(&leaves), &self.fwd);
        // The traced outputs are the leaves of fwd's output, then those of its residuals.
        let TreeDef::Tuple(pair) = pair_def else {
            unreachable!("fwd returns a pair")
        };
        let (out_def, res_def) = (pair[0].clone(), pair[1].clone());
        let num_outputs = out_def.num_leaves();
        let (bwd, name, ct_def) = (self.bwd.clone(), self.name, out_def.clone());
        let flat_bwd: crate::higher_order::custom_vjp::FlatBackward =
            std::sync::Arc::new(move |residuals: Vec<Array>, cts: Vec<Array>| {
                let res: Res = rebuild(Unnamed, &res_def, residuals);
                let ct: R = rebuild(Unnamed, &ct_def, cts);
                let (grads, def) = bwd(res, ct).flatten();
                if def != args_def {
                    panic!(
                        "custom_vjp `{name}`: bwd returned {def}, but the arguments are {args_def}"
                    );
                }
                grads
            });
        let prim = crate::higher_order::custom_vjp::CustomVjpCall {
            name: self.name,
            fwd: std::sync::Arc::new(closed.jaxpr),
            num_consts: closed.consts.len(),
            num_outputs,
            bwd: flat_bwd,
        };
        let operands: Vec<crate::core::trace::Operand> = closed
            .consts
            .iter()
            .chain(&leaves)
            .map(crate::core::trace::Operand::from)
            .collect();
        let mut outs =
            crate::core::trace::bind_at(std::sync::Arc::new(prim), &operands, Location::caller());
        outs.truncate(num_outputs);
        rebuild(Unnamed, &out_def, outs)
    }
}

/// A function with a user-supplied forward-mode derivative; see [`custom_jvp`].
pub struct CustomJvp<F, J> {
    name: &'static str,
    fun: F,
    jvp: std::sync::Arc<J>,
}

/// `jax.custom_jvp`: `fun(args)` computes the function; `jvp(primals, tangents) -> (output,
/// output_tangent)` is its derivative, linear in `tangents` (a tree shaped like the
/// arguments; an integer argument's tangent is zeros). Use it where autodiff of the stock
/// operations is wrong or unstable (`x * log(y)` at `x = 0`, a function with a `where`).
///
/// Reverse mode (`grad`, `vjp`) uses the same rule, as JAX's does: the JVP is linear in the
/// tangents, so jaxrs traces `tangents -> jvp(primals, tangents).1` and runs its reverse pass,
/// which is the transpose of that linear map. A rule that is not linear in the tangents gives
/// wrong gradients (in JAX it fails to transpose).
///
/// JAX's `nondiff_argnums` are the closures' captures here: values `fun` captures get no
/// tangent, and differentiating with respect to one is an error that says to pass it as an
/// argument. The rule `jvp` must not capture traced values (it also runs in the backward
/// pass, outside the trace that made them): pass them as arguments, an integer's tangent
/// being zeros.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // log(1 + e^x), whose derivative is written as the stable sigmoid.
/// let softplus = jaxrs::custom_jvp(
///     "softplus",
///     |x: Array| x.exp().log1p(),
///     |x: Array, dx: Array| (x.exp().log1p(), x.sigmoid() * dx),
/// );
/// let x = Array::from_vec(vec![0.0f32, 100.0], &[2]);
/// let dx = grad(|x: Array| softplus.call::<Array, Array>(x).sum(None, false))(x.clone());
/// assert_eq!(dx.to_vec::<f32>(), vec![0.5, 1.0]);
/// let (_, t) = jvp(|x: Array| softplus.call::<Array, Array>(x), &x, &Array::ones(&[2], DType::F32));
/// assert_eq!(t.to_vec::<f32>(), vec![0.5, 1.0]);
/// ```
pub fn custom_jvp<F, J>(name: &'static str, fun: F, jvp: J) -> CustomJvp<F, J> {
    CustomJvp {
        name,
        fun,
        jvp: std::sync::Arc::new(jvp),
    }
}

impl<F, J> CustomJvp<F, J> {
    /// Calls the function; its derivative rules run under `jvp`, `grad`, `vjp` and the rest.
    #[track_caller]
    pub fn call<A, R>(&self, args: A) -> R
    where
        A: Tree + 'static,
        R: Tree + 'static,
        F: Fn(A) -> R,
        J: Fn(A, A) -> (R, R) + Send + Sync + 'static,
    {
        let (leaves, args_def) = args.flatten();
        let (closed, out_def) = trace_tree(Unnamed, &args_def, &avals_of(&leaves), &self.fun);
        let (jvp, name) = (self.jvp.clone(), self.name);
        let (in_def, result_def) = (args_def.clone(), out_def.clone());
        let flat_jvp: crate::higher_order::custom_jvp::FlatJvp =
            std::sync::Arc::new(move |primals: Vec<Array>, tangents: Vec<Array>| {
                let p: A = rebuild(Unnamed, &in_def, primals);
                let t: A = rebuild(Unnamed, &in_def, tangents);
                let (_, out_t) = jvp(p, t);
                let (out_t, def) = out_t.flatten();
                if def != result_def {
                    panic!(
                        "custom_jvp `{name}`: jvp returned a tangent {def}, but the function \
                         returns {result_def}"
                    );
                }
                out_t
            });
        let prim = crate::higher_order::custom_jvp::CustomJvpCall {
            name: self.name,
            fun: std::sync::Arc::new(closed.jaxpr),
            num_consts: closed.consts.len(),
            jvp: flat_jvp,
        };
        let operands: Vec<crate::core::trace::Operand> = closed
            .consts
            .iter()
            .chain(&leaves)
            .map(crate::core::trace::Operand::from)
            .collect();
        let outs =
            crate::core::trace::bind_at(std::sync::Arc::new(prim), &operands, Location::caller());
        rebuild(Unnamed, &out_def, outs)
    }
}

/// The transpose of the linear function `f` at arguments shaped like `primals`, like
/// `jax.linear_transpose(f, *primals)`: [`LinearTranspose::call`] maps a cotangent of `f`'s
/// output to the cotangent of its input (`v ↦ Aᵀ v` for `f(x) = A x`). `f` is traced once,
/// at the primals' shapes and dtypes; their values are not used.
///
/// `f` must be linear, as JAX requires. Unlike JAX, jaxrs does not check it: the transpose
/// of a nonlinear `f` is its VJP at zero, where JAX raises.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// let f_t = jaxrs::linear_transpose(|x: Array| a.matmul(&x), &Array::zeros(&[3], DType::F32));
/// let ct = f_t.call(&Array::from_vec(vec![1.0f32, -1.0], &[2]));
/// assert_eq!(ct.to_vec::<f32>(), vec![-3.0, -3.0, -3.0]);
/// ```
#[track_caller]
pub fn linear_transpose<A: Tree, R: Tree>(
    f: impl FnOnce(A) -> R,
    primals: &A,
) -> LinearTranspose<A, R> {
    let (closed, leaves, in_def, out_def) = trace(f, primals, "linear_transpose");
    LinearTranspose {
        out_avals: closed.jaxpr.out_avals(),
        in_avals: avals_of(&leaves),
        closed,
        in_def,
        out_def,
        _types: std::marker::PhantomData,
    }
}

/// The transposed linear map [`linear_transpose`] returns.
pub struct LinearTranspose<A, R> {
    closed: ClosedJaxpr,
    in_def: TreeDef,
    in_avals: Vec<Aval>,
    out_def: TreeDef,
    out_avals: Vec<Aval>,
    _types: std::marker::PhantomData<fn(R) -> A>,
}

impl<A: Tree, R: Tree> LinearTranspose<A, R> {
    /// The input cotangent for the output cotangent `cotangent` (a tree shaped like `f`'s
    /// output).
    ///
    /// Panics naming both when `cotangent` is not shaped like the output.
    #[track_caller]
    pub fn call(&self, cotangent: &R) -> A {
        let (ct_leaves, ct_def) = cotangent.flatten();
        check_tangents(
            "linear_transpose",
            &self.out_def,
            &self.out_avals,
            &ct_def,
            &ct_leaves,
        );
        let (jaxpr, consts) = (&self.closed.jaxpr, &self.closed.consts);
        let linear = |xs: Vec<Array>| eval_jaxpr(jaxpr, consts, &xs);
        let cts: Vec<Option<Array>> = ct_leaves.into_iter().map(Some).collect();
        let in_cts = crate::interpreters::ad::transpose_linear(&self.in_avals, linear, &cts);
        rebuild(Unnamed, &self.in_def, in_cts)
    }
}
