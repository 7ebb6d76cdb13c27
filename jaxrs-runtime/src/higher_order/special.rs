//! The special functions JAX computes with loops (`jax/_src/lax/special.py`, itself a port of
//! XLA's `math.cc`): the regularized incomplete gamma functions `igamma` and `igammac`, the
//! derivative `igamma_grad_a`, `random_gamma_grad`, and the regularized incomplete beta
//! function `betainc`.
//!
//! `igamma`, `igammac`, `igamma_grad_a` and `betainc` are primitives in JAX, whose lowering
//! is a while loop (a power series, or a continued fraction) and whose derivatives are
//! closed forms; here each is a [`SpecialCall`], holding the loop program traced for its
//! operands (as [`CustomVjpCall`](super::custom_vjp::CustomVjpCall) holds its forward
//! program), lowered inline, with JAX's derivative rules beside it. `random_gamma_grad` is a
//! plain function in JAX, so here too: its loop is an ordinary `while` in the caller's
//! program, differentiable in forward mode only, as JAX's.
//!
//! The algorithms follow JAX's step for step (the same operations in the same order, so
//! that the values round alike); float16 and bfloat16 compute in float32, as JAX's
//! `_up_and_broadcast` does.

use super::control::{close_over_consts, While};
use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::Jaxpr;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind, trace_to_jaxpr, Operand};
use crate::dtype::DType;
use crate::interpreters::batching::align;
use crate::ops::{promote_args, where_};
use std::sync::Arc;

/// Which loop-defined function a [`SpecialCall`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialFn {
    /// `igamma(a, x)`, the regularized lower incomplete gamma function P(a, x).
    Igamma,
    /// `igammac(a, x)`, the upper one Q(a, x) = 1 - P(a, x).
    Igammac,
    /// `igamma_grad_a(a, x)`, dP(a, x)/da.
    IgammaGradA,
    /// `betainc(a, b, x)` (JAX's `regularized_incomplete_beta`), I_x(a, b).
    Betainc,
}

impl SpecialFn {
    fn name(self) -> &'static str {
        match self {
            SpecialFn::Igamma => "igamma",
            SpecialFn::Igammac => "igammac",
            SpecialFn::IgammaGradA => "igamma_grad_a",
            SpecialFn::Betainc => "regularized_incomplete_beta",
        }
    }

    /// The function on arrays of one shape and float dtype, as loops in the current trace.
    fn eval(self, args: &[Array]) -> Array {
        upcast(args, |args, dt| match self {
            SpecialFn::Igamma => igamma_impl(&args[0], &args[1], dt),
            SpecialFn::Igammac => igammac_impl(&args[0], &args[1], dt),
            SpecialFn::IgammaGradA => {
                gamma_derivative_impl(&args[0], &args[1], dt, Mode::Derivative)
            }
            SpecialFn::Betainc => betainc_impl(&args[0], &args[1], &args[2], dt),
        })
    }
}

/// A call of a loop-defined special function: `body` is its program traced for the operands'
/// types. Operands: the program's constants, then the function's arguments (one shape, one
/// float dtype).
#[derive(Clone)]
pub struct SpecialCall {
    pub f: SpecialFn,
    pub body: Arc<Jaxpr>,
    pub num_consts: usize,
}

impl std::fmt::Debug for SpecialCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.f.name())
    }
}

/// Binds `f` on `args` (already of one shape and float dtype).
#[track_caller]
fn special_call(f: SpecialFn, args: &[Array]) -> Array {
    let avals: Vec<Aval> = args
        .iter()
        .map(|a| Aval::new(a.shape().to_vec(), a.dtype()))
        .collect();
    let traced = trace_to_jaxpr(&avals, |xs| vec![f.eval(&xs)]);
    let num_consts = traced.consts.len();
    let prim = SpecialCall {
        f,
        body: Arc::new(close_over_consts(traced.jaxpr)),
        num_consts,
    };
    let operands: Vec<Operand> = traced
        .consts
        .iter()
        .chain(args)
        .map(Operand::from)
        .collect();
    bind(Arc::new(prim), &operands).remove(0)
}

impl Primitive for SpecialCall {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        self.f.name()
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let want = self.body.in_avals();
        if inputs.len() != want.len() || inputs.iter().zip(&want).any(|(a, b)| !a.same_type(b)) {
            return Err(format!(
                "{} was traced for ({}), not for these operands",
                self.f.name(),
                avals_to_string(&want)
            ));
        }
        Ok(self.body.out_avals())
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let args: Vec<Array> = p[self.num_consts..]
            .iter()
            .map(|a| a.to_array().into_owned())
            .collect();
        let t = &t[self.num_consts..];
        let terms: Vec<Array> = (0..args.len())
            .filter_map(|i| t[i].as_ref().map(|t| self.partial(i, &args, &outs[0]) * t))
            .collect();
        vec![terms.into_iter().reduce(|a, b| a + b)]
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        let args: Vec<Array> = p[self.num_consts..]
            .iter()
            .map(|a| a.to_array().into_owned())
            .collect();
        let mut result = vec![None; self.num_consts];
        result
            .extend((0..args.len()).map(|i| {
                wanted[self.num_consts + i].then(|| self.partial(i, &args, &outs[0]) * g)
            }));
        result
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        cx.lower_inline(&self.body, ins)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // Elementwise: align the arguments' batch dims and trace the function again for the
        // batched shape (the constants are the program's own, never batched).
        let n = self.num_consts;
        let (xs, d) = align(&args[n..], &dims[n..], axis_size);
        (vec![special_call(self.f, &xs)], vec![Some(d)])
    }
    as_any!();
}

impl SpecialCall {
    /// The partial derivative of the output `y` in argument `i`, JAX's rule
    /// (`jax/_src/lax/special.py`); panics where JAX raises.
    fn partial(&self, i: usize, args: &[Array], _y: &Array) -> Array {
        match (self.f, i) {
            (SpecialFn::Igamma, 0) => igamma_grad_a(&args[0], &args[1]),
            (SpecialFn::Igamma, _) => igamma_gradx(&args[0], &args[1]),
            (SpecialFn::Igammac, 0) => -igamma_grad_a(&args[0], &args[1]),
            (SpecialFn::Igammac, _) => -igamma_gradx(&args[0], &args[1]),
            (SpecialFn::IgammaGradA, _) => panic!(
                "lax.igamma_grad_a: differentiation rule for 'igamma_grad_a' not implemented \
                 (as in JAX 0.10.2)"
            ),
            (SpecialFn::Betainc, 2) => {
                let (a, b, x) = (&args[0], &args[1], &args[2]);
                let lbeta = a.lgamma() + b.lgamma() - (a + b).lgamma();
                ((b - 1.0) * (-x).log1p() + (a - 1.0) * x.log() - lbeta).exp()
            }
            (SpecialFn::Betainc, _) => panic!(
                "lax.betainc: the gradient with respect to a and b is not supported (as in JAX)"
            ),
        }
    }
}

/// d/dx P(a, x) = `exp(-x + (a - 1) log x - lgamma(a))`, JAX's `igamma_gradx`.
fn igamma_gradx(a: &Array, x: &Array) -> Array {
    (-x + (a - 1.0) * x.log() - a.lgamma()).exp()
}

/// Arguments broadcast to one shape (the dtypes already agree).
#[track_caller]
fn broadcast(op: &str, args: &[&Array]) -> Vec<Array> {
    let mut out: Vec<Array> = args.iter().map(|a| (*a).clone()).collect();
    for i in 1..out.len() {
        let (x, y) = promote_args(op, &out[0], &out[i]);
        out[0] = x;
        out[i] = y;
    }
    for i in 1..out.len() {
        let (_, y) = promote_args(op, &out[0], &out[i]);
        out[i] = y;
    }
    out
}

#[track_caller]
fn check_float(op: &str, args: &[Array]) {
    let d = args[0].dtype();
    if !d.is_float() || args.iter().any(|a| a.dtype() != d) {
        let types: Vec<String> = args.iter().map(|a| a.aval().to_string()).collect();
        panic!(
            "lax.{op}: needs floating-point operands of one dtype, got {}",
            types.join(", ")
        );
    }
}

/// The regularized lower incomplete gamma function P(a, x) (`lax.igamma`).
#[track_caller]
pub fn igamma(a: &Array, x: &Array) -> Array {
    let args = broadcast("igamma", &[a, x]);
    check_float("igamma", &args);
    special_call(SpecialFn::Igamma, &args)
}

/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (`lax.igammac`).
#[track_caller]
pub fn igammac(a: &Array, x: &Array) -> Array {
    let args = broadcast("igammac", &[a, x]);
    check_float("igammac", &args);
    special_call(SpecialFn::Igammac, &args)
}

/// dP(a, x)/da (`lax.igamma_grad_a`).
#[track_caller]
pub fn igamma_grad_a(a: &Array, x: &Array) -> Array {
    let args = broadcast("igamma_grad_a", &[a, x]);
    check_float("igamma_grad_a", &args);
    special_call(SpecialFn::IgammaGradA, &args)
}

/// The regularized incomplete beta function I_x(a, b) (`lax.betainc`).
#[track_caller]
pub fn betainc(a: &Array, b: &Array, x: &Array) -> Array {
    let args = broadcast("betainc", &[a, b, x]);
    check_float("betainc", &args);
    special_call(SpecialFn::Betainc, &args)
}

/// The derivative of a Gamma(a, 1) sample `x` in `a` (`lax.random_gamma_grad`): a plain
/// function of loops, as in JAX (forward-mode differentiable through them; reverse mode is
/// the while loop's error).
#[track_caller]
pub fn random_gamma_grad(a: &Array, x: &Array) -> Array {
    let args = broadcast("random_gamma_grad", &[a, x]);
    check_float("random_gamma_grad", &args);
    upcast(&args, |args, dt| {
        gamma_derivative_impl(&args[0], &args[1], dt, Mode::SampleDerivative)
    })
}

// ---------------------------------------------------------------------------------------------
// The algorithms
// ---------------------------------------------------------------------------------------------

/// Runs `f` in the dtype JAX computes in (float32 for float16 and bfloat16), converting back.
fn upcast(args: &[Array], f: impl FnOnce(&[Array], DType) -> Array) -> Array {
    let dt = args[0].dtype();
    if matches!(dt, DType::F16 | DType::BF16) {
        let wide: Vec<Array> = args.iter().map(|a| a.astype(DType::F32)).collect();
        f(&wide, DType::F32).astype(dt)
    } else {
        f(args, dt)
    }
}

fn eps(dt: DType) -> f64 {
    crate::prims::elementwise::float_eps(dt)
}

/// `-log(finfo(dt).max)`, rounded to `dt` when it becomes a constant.
fn neg_log_max(dt: DType) -> f64 {
    let max = if dt == DType::F64 {
        f64::MAX
    } else {
        f64::from(f32::MAX)
    };
    -max.ln()
}

/// A rank-0 constant of `dt` (a strongly typed literal, not a weak scalar).
fn scalar(v: f64, dt: DType) -> Array {
    Array::full(&[], v, dt)
}

/// `jnp.full_like(x, v)`.
fn full_like(x: &Array, v: f64) -> Array {
    scalar(v, x.dtype()).broadcast_to(x.shape())
}

/// `while cond(carry): carry = body(carry)` over a flat carry, traced here (a `while`
/// equation in the current trace).
fn while_flat(
    cond: impl Fn(&[Array]) -> Array,
    body: impl Fn(Vec<Array>) -> Vec<Array>,
    init: Vec<Array>,
) -> Vec<Array> {
    let avals: Vec<Aval> = init
        .iter()
        .map(|a| Aval::new(a.shape().to_vec(), a.dtype()))
        .collect();
    let cond_j = trace_to_jaxpr(&avals, |c| vec![cond(&c)]);
    let body_j = trace_to_jaxpr(&avals, body);
    let prim = While {
        cond_consts: cond_j.consts.len(),
        body_consts: body_j.consts.len(),
        cond: Arc::new(close_over_consts(cond_j.jaxpr)),
        body: Arc::new(close_over_consts(body_j.jaxpr)),
    };
    let operands: Vec<Operand> = cond_j
        .consts
        .iter()
        .chain(&body_j.consts)
        .chain(&init)
        .map(Operand::from)
        .collect();
    bind(Arc::new(prim), &operands)
}

/// `_any`: true when any element is.
fn any(p: &Array) -> Array {
    if p.rank() == 0 {
        return p.clone();
    }
    p.reduce_or(None)
}

/// What the incomplete gamma loops compute (JAX's `IgammaMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Value,
    Derivative,
    SampleDerivative,
}

/// JAX's `_igamma_series`: the power series of P(a, x), and of its derivative in `a`.
fn igamma_series(
    ax: &Array,
    x: &Array,
    a: &Array,
    enabled: &Array,
    dt: DType,
    mode: Mode,
) -> Array {
    let e = eps(dt);
    let init = vec![
        enabled.clone(),
        a.clone(),
        full_like(a, 1.0),
        full_like(a, 1.0),
        x.clone(),
        full_like(a, 0.0),
        full_like(a, 0.0),
    ];
    let vals = while_flat(
        |v| any(&v[0]),
        move |v| {
            let enabled = &v[0];
            let x = &v[4];
            let r = &v[1] + 1.0;
            let dc_da = &v[5] * (x / &r) - (&v[2] * x) / (&r * &r);
            let dans_da = &v[6] + &dc_da;
            let c = &v[2] * (x / &r);
            let ans = &v[3] + &c;
            let conditional = match mode {
                Mode::Value => enabled.logical_and((&c / &ans).gt(e)),
                _ => enabled.logical_and((&dc_da / &dans_da).abs().gt(e)),
            };
            vec![
                conditional,
                where_(enabled, &r, &v[1]),
                where_(enabled, &c, &v[2]),
                where_(enabled, &ans, &v[3]),
                where_(enabled, x, &v[4]),
                where_(enabled, &dc_da, &v[5]),
                where_(enabled, &dans_da, &v[6]),
            ]
        },
        init,
    );
    let (ans, dans_da) = (&vals[3], &vals[6]);
    if mode == Mode::Value {
        return (ans * ax) / a;
    }
    let dlogax_da = x.log() - (a + 1.0).digamma();
    match mode {
        Mode::Derivative => ax * (ans * &dlogax_da + dans_da) / a,
        _ => (-(dans_da + ans * &dlogax_da) * x) / a,
    }
}

/// JAX's `_igammac_continued_fraction`: the continued fraction of Q(a, x), and of its
/// derivative in `a`.
fn igammac_continued_fraction(
    ax: &Array,
    x: &Array,
    a: &Array,
    enabled: &Array,
    dt: DType,
    mode: Mode,
) -> Array {
    let e = eps(dt);
    let y = 1.0 - a;
    let z = x + &y + 1.0;
    let c = scalar(0.0, dt);
    let pkm2 = full_like(x, 1.0);
    let qkm2 = x.clone();
    let pkm1 = x + 1.0;
    let qkm1 = &z * x;
    let ans = &pkm1 / &qkm1;
    let t = full_like(x, 1.0);
    let dpkm2_da = full_like(x, 0.0);
    let dqkm2_da = full_like(x, 0.0);
    let dpkm1_da = full_like(x, 0.0);
    let dqkm1_da = -x;
    let dans_da = (&dpkm1_da - &ans * &dqkm1_da) / &qkm1;
    let init = vec![
        enabled.clone(),
        ans,
        t,
        y,
        z,
        c,
        pkm1,
        qkm1,
        pkm2,
        qkm2,
        dpkm2_da,
        dqkm2_da,
        dpkm1_da,
        dqkm1_da,
        dans_da,
    ];
    let vals = while_flat(
        |v| v[5].lt(2000.0).logical_and(any(&v[0])),
        move |v| {
            let enabled = &v[0];
            let (ans, y, z, c) = (&v[1], &v[3], &v[4], &v[5]);
            let (pkm1, qkm1, pkm2, qkm2) = (&v[6], &v[7], &v[8], &v[9]);
            let (dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da) = (&v[10], &v[11], &v[12], &v[13]);
            let dans_da = &v[14];
            let c = c + 1.0;
            let y = y + 1.0;
            let z = z + 2.0;
            let yc = &y * &c;
            let pk = pkm1 * &z - pkm2 * &yc;
            let qk = qkm1 * &z - qkm2 * &yc;
            let qk_is_nonzero = qk.ne(0.0);
            let r = &pk / &qk;
            let t = where_(&qk_is_nonzero, ((ans - &r) / &r).abs(), 1.0);
            let ans = where_(&qk_is_nonzero, &r, ans);
            let dpk_da = dpkm1_da * &z - pkm1 - dpkm2_da * &yc + pkm2 * &c;
            let dqk_da = dqkm1_da * &z - qkm1 - dqkm2_da * &yc + qkm2 * &c;
            let dans_da_new = where_(&qk_is_nonzero, (&dpk_da - &ans * &dqk_da) / &qk, dans_da);
            let grad_conditional = where_(&qk_is_nonzero, (&dans_da_new - dans_da).abs(), 1.0);
            let rescale = pk.abs().gt(1.0 / e);
            let scaled = |v: &Array| where_(&rescale, v * e, v);
            let (pkm2, pkm1, qkm2, qkm1) = (scaled(pkm1), scaled(&pk), scaled(qkm1), scaled(&qk));
            let (dpkm2_da, dqkm2_da) = (scaled(dpkm1_da), scaled(dqkm1_da));
            let (dpkm1_da, dqkm1_da) = (scaled(&dpk_da), scaled(&dqk_da));
            let conditional = match mode {
                Mode::Value => enabled.logical_and(t.gt(e)),
                _ => enabled.logical_and(grad_conditional.gt(e)),
            };
            let keep = |new: &Array, i: usize| where_(enabled, new, &v[i]);
            vec![
                conditional,
                keep(&ans, 1),
                keep(&t, 2),
                keep(&y, 3),
                keep(&z, 4),
                c,
                keep(&pkm1, 6),
                keep(&qkm1, 7),
                keep(&pkm2, 8),
                keep(&qkm2, 9),
                keep(&dpkm2_da, 10),
                keep(&dqkm2_da, 11),
                keep(&dpkm1_da, 12),
                keep(&dqkm1_da, 13),
                keep(&dans_da_new, 14),
            ]
        },
        init,
    );
    let ans = &vals[1];
    if mode == Mode::Value {
        return ans * ax;
    }
    let dans_da = &vals[14];
    let dlogax_da = x.log() - a.digamma();
    match mode {
        Mode::Derivative => ax * (ans * &dlogax_da + dans_da),
        _ => -((dans_da + ans * &dlogax_da) * x),
    }
}

/// `a log x - x - lgamma(a)`, whether it underflows `exp`, and its `exp`.
fn log_ax(a: &Array, x: &Array, dt: DType) -> (Array, Array) {
    let ax = a * x.log() - x - a.lgamma();
    let underflow = ax.lt(neg_log_max(dt));
    (underflow, ax.exp())
}

/// The edge cases `igamma_impl` and `igammac_impl` both test.
struct Edges {
    /// `x < 0`, `a < 0`, `a = x = 0`, or a NaN: the result is NaN.
    domain_error: Array,
    a_is_zero: Array,
    x_is_zero: Array,
    x_is_infinity: Array,
}

fn edges(a: &Array, x: &Array) -> Edges {
    let is_nan = a.isnan().logical_or(x.isnan());
    let a_is_zero = a.eq(0.0);
    let x_is_zero = x.eq(0.0);
    let domain_error = x
        .lt(0.0)
        .logical_or(a.lt(0.0))
        .logical_or(a_is_zero.logical_and(&x_is_zero))
        .logical_or(&is_nan);
    Edges {
        domain_error,
        a_is_zero,
        x_is_zero,
        x_is_infinity: x.eq(f64::INFINITY),
    }
}

/// JAX's `igamma_impl`.
fn igamma_impl(a: &Array, x: &Array, dt: DType) -> Array {
    let Edges {
        domain_error,
        a_is_zero: _,
        x_is_zero,
        x_is_infinity,
    } = edges(a, x);
    let use_igammac = x.ge(1.0).logical_and(x.gt(a));
    let (underflow, ax) = log_ax(a, x, dt);
    let enabled = x_is_zero
        .logical_or(&domain_error)
        .logical_or(&underflow)
        .logical_or(&x_is_infinity)
        .logical_not();
    let cf = igammac_continued_fraction(
        &ax,
        x,
        a,
        &enabled.logical_and(&use_igammac),
        dt,
        Mode::Value,
    );
    let series = igamma_series(
        &ax,
        x,
        a,
        &enabled.logical_and(use_igammac.logical_not()),
        dt,
        Mode::Value,
    );
    let output = where_(&use_igammac, 1.0 - cf, series);
    let output = where_(&x_is_zero, 0.0, output);
    let output = where_(&x_is_infinity, 1.0, output);
    where_(&domain_error, f64::NAN, output)
}

/// JAX's `igammac_impl`.
fn igammac_impl(a: &Array, x: &Array, dt: DType) -> Array {
    let Edges {
        domain_error,
        a_is_zero,
        x_is_zero: _,
        x_is_infinity,
    } = edges(a, x);
    let use_igamma = x.lt(1.0).logical_or(x.lt(a));
    let (underflow, ax) = log_ax(a, x, dt);
    let enabled = domain_error
        .logical_or(&underflow)
        .logical_or(&x_is_infinity)
        .logical_or(&a_is_zero)
        .logical_not();
    let series = igamma_series(
        &ax,
        x,
        a,
        &enabled.logical_and(&use_igamma),
        dt,
        Mode::Value,
    );
    let cf = igammac_continued_fraction(
        &ax,
        x,
        a,
        &enabled.logical_and(use_igamma.logical_not()),
        dt,
        Mode::Value,
    );
    let output = where_(&use_igamma, 1.0 - series, cf);
    let output = where_(x_is_infinity.logical_or(&a_is_zero), 0.0, output);
    where_(&domain_error, f64::NAN, output)
}

/// JAX's `igamma_grad_a_impl` (`Mode::Derivative`) and `random_gamma_grad_impl`
/// (`Mode::SampleDerivative`), which differ only in the mode of their loops.
fn gamma_derivative_impl(a: &Array, x: &Array, dt: DType, mode: Mode) -> Array {
    let is_nan = a.isnan().logical_or(x.isnan());
    let x_is_zero = x.eq(0.0);
    let domain_error = x.lt(0.0).logical_or(a.le(0.0));
    let use_igammac = x.gt(1.0).logical_and(x.gt(a));
    let (underflow, ax) = log_ax(a, x, dt);
    let enabled = x_is_zero
        .logical_or(&domain_error)
        .logical_or(&underflow)
        .logical_or(&is_nan)
        .logical_not();
    let cf = igammac_continued_fraction(&ax, x, a, &enabled.logical_and(&use_igammac), dt, mode);
    let series = igamma_series(
        &ax,
        x,
        a,
        &enabled.logical_and(use_igammac.logical_not()),
        dt,
        mode,
    );
    let output = where_(&use_igammac, -cf, series);
    let output = where_(&x_is_zero, 0.0, output);
    where_(domain_error.logical_or(&is_nan), f64::NAN, output)
}

/// JAX's `lentz_thompson_barnett_algorithm` for the continued fraction of `betainc`: runs
/// until every element has converged (or `num_iterations`), all elements stepping together.
fn betainc_continued_fraction(a: &Array, b: &Array, x: &Array, dt: DType) -> Array {
    let num_iterations = if dt == DType::F32 { 200.0 } else { 600.0 };
    let small = eps(dt) / 2.0;
    let threshold = small;
    // The first partial denominator is 0, below `small`: h starts at `small`.
    let h = full_like(x, small);
    let init = vec![
        scalar(1.0, DType::I32),
        scalar(1.0, DType::Bool),
        h.clone(),
        full_like(&h, 0.0),
        h,
        a.clone(),
        b.clone(),
        x.clone(),
    ];
    let vals = while_flat(
        |v| v[0].lt(num_iterations).logical_and(&v[1]),
        move |v| {
            let iteration = &v[0];
            let (a, b, x) = (&v[5], &v[6], &v[7]);
            let numerator = betainc_numerator(iteration, a, b, x, dt);
            let denominator = where_(iteration.eq(0), full_like(x, 0.0), full_like(x, 1.0));
            let c = &denominator + &numerator / &v[2];
            let c = where_(c.abs().lt(small), small, &c);
            let d = &denominator + &numerator * &v[3];
            let d = where_(d.abs().lt(small), small, &d);
            let d = d.powi(-1);
            let delta = &c * &d;
            let h = &v[4] * &delta;
            let unconverged = any(&(&delta - 1.0).abs().ge(threshold));
            vec![
                iteration + 1,
                unconverged,
                c,
                d,
                h,
                a.clone(),
                b.clone(),
                x.clone(),
            ]
        },
        init,
    );
    vals[4].clone()
}

/// The `iteration`-th partial numerator of `betainc`'s continued fraction
/// (<http://dlmf.nist.gov/8.17.E23>), 1 for the first.
fn betainc_numerator(iteration: &Array, a: &Array, b: &Array, x: &Array, dt: DType) -> Array {
    let is_even = iteration.trunc_rem(2).eq(0);
    let is_one = iteration.eq(1);
    let m = (iteration - 1).trunc_divide(2);
    let m_is_zero = m.eq(0);
    let m = m.astype(dt);
    let zero_numerator = (-(a + b) * x) / (a + 1.0);
    let a2m = a + &m * 2.0;
    let even_numerator = where_(
        &m_is_zero,
        &zero_numerator,
        (-(a + &m) * (a + b + &m) * x) / (&a2m * (&a2m + 1.0)),
    );
    let odd_numerator = (&m * (b - &m) * x) / ((&a2m - 1.0) * &a2m);
    let numerator = where_(&is_even, even_numerator, odd_numerator);
    where_(&is_one, full_like(x, 1.0), numerator)
}

/// JAX's `regularized_incomplete_beta_impl`.
fn betainc_impl(a: &Array, b: &Array, x: &Array, dt: DType) -> Array {
    let a_is_zero = a.eq(0.0).logical_or(b.eq(f64::INFINITY));
    let b_is_zero = b.eq(0.0).logical_or(a.eq(f64::INFINITY));
    let x_is_zero = x.eq(0.0);
    let x_is_one = x.eq(1.0);
    let is_nan = a.isnan().logical_or(b.isnan()).logical_or(x.isnan());
    let result_is_zero = b_is_zero
        .logical_and(x_is_one.logical_not())
        .logical_or(a_is_zero.logical_and(&x_is_zero));
    let result_is_one = a_is_zero
        .logical_and(x_is_zero.logical_not())
        .logical_or(b_is_zero.logical_and(&x_is_one));
    let result_is_nan = a
        .lt(0.0)
        .logical_or(b.lt(0.0))
        .logical_or(x.lt(0.0))
        .logical_or(x.gt(1.0))
        .logical_or(a_is_zero.logical_and(&b_is_zero).logical_or(&is_nan));
    // The fraction converges fast for x < (a + 1) / (a + b + 2); otherwise
    // I_x(a, b) = 1 - I_{1-x}(b, a) (http://dlmf.nist.gov/8.17.E4).
    let converges_rapidly = x.lt((a + 1.0) / (a + b + 2.0));
    let (a, b, x) = (
        where_(&converges_rapidly, a, b),
        where_(&converges_rapidly, b, a),
        where_(&converges_rapidly, x, 1.0 - x),
    );
    let continued_fraction = betainc_continued_fraction(&a, &b, &x, dt);
    // For very small a, a gamma(a) = gamma(a + 1) -> 1 avoids dividing by zero.
    let very_small = if dt == DType::F64 {
        f64::MIN_POSITIVE * 2.0
    } else {
        f64::from(f32::MIN_POSITIVE) * 2.0
    };
    let lbeta_ab_small_a = b.lgamma() - (&a + &b).lgamma();
    let lbeta_ab = a.lgamma() + &lbeta_ab_small_a;
    let factor = where_(
        a.lt(very_small),
        ((-&x).log1p() * &b - &lbeta_ab_small_a).exp(),
        (x.log() * &a + (-&x).log1p() * &b - &lbeta_ab).exp() / &a,
    );
    let result = continued_fraction * factor;
    let result = where_(&converges_rapidly, &result, 1.0 - &result);
    let result = where_(&result_is_zero, 0.0, result);
    let result = where_(&result_is_one, 1.0, result);
    where_(&result_is_nan, f64::NAN, result)
}
