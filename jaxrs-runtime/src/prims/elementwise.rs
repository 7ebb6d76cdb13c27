//! Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

use super::{arity, same_shape_dtype};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding_types::{elementwise_rule, SpecRule};
use crate::core::trace::Operand;
use crate::dtype::DType;
use crate::dtype::DTypeKind;
use crate::interpreters::ad::{differentiable, or_zeros, zeros_like_aval};
use crate::ops::where_;

/// Which dtypes an elementwise op accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Any numeric dtype (not bool).
    Numeric,
    /// Real floating point only.
    Float,
    /// Floating point or complex (the holomorphic functions: exp, log, sin, sqrt, ...).
    Inexact,
    /// Integers and real floats: ordered, so not complex.
    Real,
    /// Signed integers, floats and complex numbers.
    Signed,
    /// bool and integers (bitwise/logical).
    BoolOrInt,
    /// Integers only (shifts).
    Int,
    /// Every dtype.
    Any,
}

impl Domain {
    fn accepts(self, d: DType) -> bool {
        match self {
            Domain::Numeric => d != DType::Bool,
            Domain::Float => d.is_float(),
            Domain::Inexact => d.is_inexact(),
            Domain::Real => d != DType::Bool && !d.is_complex(),
            Domain::Signed => d.is_inexact() || (d.is_int() && !d.is_unsigned()),
            Domain::BoolOrInt => d == DType::Bool || d.is_int(),
            Domain::Int => d.is_int(),
            Domain::Any => true,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Domain::Numeric => "a numeric dtype",
            Domain::Float => "a real floating-point dtype",
            Domain::Inexact => "a floating-point or complex dtype",
            Domain::Real => "a real numeric dtype",
            Domain::Signed => "a signed or floating-point dtype",
            Domain::BoolOrInt => "bool or an integer dtype",
            Domain::Int => "an integer dtype",
            Domain::Any => "any dtype",
        }
    }
}

fn check_domain(domain: Domain, d: DType) -> Result<(), String> {
    if domain.accepts(d) {
        Ok(())
    } else {
        Err(format!("needs {}, got {}", domain.describe(), d.name()))
    }
}

/// One table row per unary op: its name, its domain, the StableHLO op it lowers to, and its
/// derivative as `|x, y, t| t * f'(x)` (`y = f(x)`; `None` where the derivative is zero).
/// The same expression serves both modes: for an elementwise op, pulling a cotangent back is
/// pushing it forward.
macro_rules! unary_table {
    ($($op:ident => $name:literal, $domain:ident, $mlir:literal, $deriv:expr;)*) => {
        /// A unary elementwise operation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum UnaryOp { $($op),* }

        impl UnaryOp {
            pub fn name(self) -> &'static str {
                match self { $(UnaryOp::$op => $name),* }
            }
            pub fn domain(self) -> Domain {
                match self { $(UnaryOp::$op => Domain::$domain),* }
            }
            pub fn mlir(self) -> &'static str {
                match self { $(UnaryOp::$op => $mlir),* }
            }
            /// `t * f'(x)`, given `y = f(x)`.
            pub fn derivative(self, x: &Array, y: &Array, t: &Array) -> Option<Array> {
                match self { $(UnaryOp::$op => ($deriv)(x, y, t)),* }
            }
        }
    };
}

unary_table! {
    Neg => "neg", Numeric, "stablehlo.negate", |_x, _y, t: &Array| Some(-t);
    Exp => "exp", Inexact, "stablehlo.exponential", |_x, y: &Array, t: &Array| Some(t * y);
    Log => "log", Inexact, "stablehlo.log", |x: &Array, _y, t: &Array| Some(t / x);
    Log1p => "log1p", Inexact, "stablehlo.log_plus_one", |x: &Array, _y, t: &Array| Some(t / (x + 1.0));
    Expm1 => "expm1", Inexact, "stablehlo.exponential_minus_one", |_x, y: &Array, t: &Array| Some(t * (y + 1.0));
    // JAX's form of the derivative, `(t + t y) (1 - y)`, not `t (1 - y²)`: XLA's default CPU
    // scheduler orders kernels by the form of the program, and with this one a rematerialised
    // tanh's backward pass is scheduled as JAX's, keeping remat's temp memory at JAX's.
    Tanh => "tanh", Inexact, "stablehlo.tanh", |_x, y: &Array, t: &Array| Some((t + t * y) * (1.0 - y));
    Logistic => "logistic", Inexact, "stablehlo.logistic", |_x, y: &Array, t: &Array| Some(t * y * (1.0 - y));
    Sin => "sin", Inexact, "stablehlo.sine", |x: &Array, _y, t: &Array| Some(t * x.cos());
    Cos => "cos", Inexact, "stablehlo.cosine", |x: &Array, _y, t: &Array| Some(-(t * x.sin()));
    Sqrt => "sqrt", Inexact, "stablehlo.sqrt", |_x, y: &Array, t: &Array| Some(t / (y * 2.0));
    Rsqrt => "rsqrt", Inexact, "stablehlo.rsqrt", |x: &Array, y: &Array, t: &Array| Some(t * (y / x) * -0.5);
    Abs => "abs", Signed, "stablehlo.abs", |x: &Array, _y, t: &Array| Some(where_(x.ge(0.0), t, -t));
    Sign => "sign", Numeric, "stablehlo.sign", |_x, _y, _t| None;
    Floor => "floor", Float, "stablehlo.floor", |_x, _y, _t| None;
    Ceil => "ceil", Float, "stablehlo.ceil", |_x, _y, _t| None;
    Round => "round", Float, "stablehlo.round_nearest_even", |_x, _y, _t| None;
    Erf => "erf", Float, "chlo.erf", |x: &Array, _y, t: &Array| Some(t * (-(x * x)).exp() * std::f64::consts::FRAC_2_SQRT_PI);
    Not => "not", BoolOrInt, "stablehlo.not", |_x, _y, _t| None;
    // d/dx erfinv(x) = sqrt(pi)/2 * exp(erfinv(x)^2), as JAX's rule.
    ErfInv => "erf_inv", Float, "chlo.erf_inv", |_x, y: &Array, t: &Array| Some(t * (y * y).exp() * (std::f64::consts::PI.sqrt() / 2.0));
    // `max(x, 0)`, as JAX emits it: XLA recomputes `x > 0` inside the backward fusion instead
    // of keeping a mask. The derivative is JAX's: 0 at 0 and at NaN.
    Relu => "relu", Real, "stablehlo.maximum", |x: &Array, _y, t: &Array| Some(where_(x.gt(0.0), t, 0.0));
    // The trigonometric and hyperbolic family, each with JAX's form of its derivative
    // (`jax/_src/lax/lax.py`), so values and derivatives round as JAX's do.
    Tan => "tan", Inexact, "stablehlo.tan", |_x, y: &Array, t: &Array| Some(t * (y * y + 1.0));
    Asin => "asin", Inexact, "chlo.asin", |x: &Array, _y, t: &Array| Some(t * (-(x * x) + 1.0).rsqrt());
    Acos => "acos", Inexact, "chlo.acos", |x: &Array, _y, t: &Array| Some(t * -(-(x * x) + 1.0).rsqrt());
    Atan => "atan", Inexact, "chlo.atan", |x: &Array, _y, t: &Array| Some(t / (x * x + 1.0));
    Sinh => "sinh", Inexact, "chlo.sinh", |x: &Array, _y, t: &Array| Some(t * x.cosh());
    Cosh => "cosh", Inexact, "chlo.cosh", |x: &Array, _y, t: &Array| Some(t * x.sinh());
    Asinh => "asinh", Inexact, "chlo.asinh", |x: &Array, _y, t: &Array| Some(t * (x * x + 1.0).rsqrt());
    // JAX's x^2 - 1 rather than (x + 1)(x - 1): the domain is x >= 1.
    Acosh => "acosh", Inexact, "chlo.acosh", |x: &Array, _y, t: &Array| Some(t * (x * x - 1.0).rsqrt());
    Atanh => "atanh", Inexact, "chlo.atanh", |x: &Array, _y, t: &Array| Some((1.0 / (x + 1.0)) * (t / (1.0 - x)));
    Cbrt => "cbrt", Float, "stablehlo.cbrt", |_x, y: &Array, t: &Array| Some(t * (y.powi(-2) * (1.0 / 3.0)));
    Erfc => "erfc", Float, "chlo.erfc", |x: &Array, _y, t: &Array| Some(t * (-(x * x)).exp() * -std::f64::consts::FRAC_2_SQRT_PI);
    Lgamma => "lgamma", Float, "chlo.lgamma", |x: &Array, _y, t: &Array| Some(t * x.digamma());
    // JAX differentiates digamma with polygamma(1, x), which jaxrs lacks: the derivative
    // is the series of trigamma below (see `trigamma`).
    Digamma => "digamma", Float, "chlo.digamma", |x: &Array, _y, t: &Array| Some(t * Array::full(&[], 1.0, x.dtype()).polygamma(x));
    // `lax.round(x, ROUND_AWAY_FROM_ZERO)`, JAX's default rounding method.
    RoundAfz => "round_afz", Float, "stablehlo.round_nearest_afz", |_x, _y, _t| None;
    PopulationCount => "population_count", Int, "stablehlo.popcnt", |_x, _y, _t| None;
    Clz => "clz", Int, "stablehlo.count_leading_zeros", |_x, _y, _t| None;
    // `e^-|x| I0(x)`. JAX writes it in Python (Cephes' Chebyshev series), so its lowering is
    // that series (`lower_bessel_i0e`), not a chlo op. JAX's derivative: `i1e(x) - sign(x) y`.
    BesselI0e => "bessel_i0e", Float, "", |x: &Array, y: &Array, t: &Array| Some(t * (x.bessel_i1e() - x.sign() * y));
    // `e^-|x| I1(x)`, and JAX's derivative `i0e(x) - y (sign(x) + 1/x)`, 1/2 at |x| <= eps.
    BesselI1e => "bessel_i1e", Float, "chlo.bessel_i1e", |x: &Array, y: &Array, t: &Array| Some(t * bessel_i1e_derivative(x, y));
}

/// The machine epsilon of a float dtype (`jnp.finfo(dtype).eps`).
pub(crate) fn float_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f64::powi(2.0, -10),
        DType::BF16 => f64::powi(2.0, -7),
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

/// d/dx i1e(x) given `y = i1e(x)`, as JAX's `_bessel_i1e_jvp`.
fn bessel_i1e_derivative(x: &Array, y: &Array) -> Array {
    let eps = float_eps(x.dtype());
    let not_tiny = x.abs().gt(eps);
    let safe_x = where_(&not_tiny, x, eps);
    let dy = safe_x.bessel_i0e() - y * (safe_x.sign() + safe_x.powi(-1));
    where_(&not_tiny, dy, 0.5)
}

/// Cephes' Chebyshev coefficients of i0e on [0, 8] (float32: the last 18 of them).
// Cephes' digits as JAX's source writes them (they round to the same f64).
#[allow(clippy::excessive_precision)]
const I0E_A: [f64; 30] = [
    -4.41534164647933937950E-18,
    3.33079451882223809783E-17,
    -2.43127984654795469359E-16,
    1.71539128555513303061E-15,
    -1.16853328779934516808E-14,
    7.67618549860493561688E-14,
    -4.85644678311192946090E-13,
    2.95505266312963983461E-12,
    -1.72682629144155570723E-11,
    9.67580903537323691224E-11,
    -5.18979560163526290666E-10,
    2.65982372468238665035E-9,
    -1.30002500998624804212E-8,
    6.04699502254191894932E-8,
    -2.67079385394061173391E-7,
    1.11738753912010371815E-6,
    -4.41673835845875056359E-6,
    1.64484480707288970893E-5,
    -5.75419501008210370398E-5,
    1.88502885095841655729E-4,
    -5.76375574538582365885E-4,
    1.63947561694133579842E-3,
    -4.32430999505057594430E-3,
    1.05464603945949983183E-2,
    -2.37374148058994688156E-2,
    4.93052842396707084878E-2,
    -9.49010970480476444210E-2,
    1.71620901522208775349E-1,
    -3.04682672343198398683E-1,
    6.76795274409476084995E-1,
];
/// ... and of `sqrt(x) i0e(x)` on (8, inf) in `32/x - 2` (float32: the last 7).
#[allow(clippy::excessive_precision)]
const I0E_B: [f64; 25] = [
    -7.23318048787475395456E-18,
    -4.83050448594418207126E-18,
    4.46562142029675999901E-17,
    3.46122286769746109310E-17,
    -2.82762398051658348494E-16,
    -3.42548561967721913462E-16,
    1.77256013305652638360E-15,
    3.81168066935262242075E-15,
    -9.55484669882830764870E-15,
    -4.15056934728722208663E-14,
    1.54008621752140982691E-14,
    3.85277838274214270114E-13,
    7.18012445138366623367E-13,
    -1.79417853150680611778E-12,
    -1.32158118404477131188E-11,
    -3.14991652796324136454E-11,
    1.18891471078464383424E-11,
    4.94060238822496958910E-10,
    3.39623202570838634515E-9,
    2.26666899049817806459E-8,
    2.04891858946906374183E-7,
    2.89137052083475648297E-6,
    6.88975834691682398426E-5,
    3.36911647825569408990E-3,
    8.04490411014108831608E-1,
];

/// Lowers `bessel_i0e` as JAX does (`jax/_src/lax/special.py`, `_i0e_impl32/64`): Clenshaw's
/// recurrence over Cephes' coefficients on `|x| <= 8` and on `|x| > 8`, then a select;
/// float16 and bfloat16 compute in float32. The same ops in the same order, so XLA rounds
/// as for JAX's program.
fn lower_bessel_i0e(cx: &mut LowerCtx, x: &str, aval: &Aval, out: &Aval) -> String {
    let wide = matches!(aval.dtype, DType::F16 | DType::BF16);
    let a = if wide {
        aval.with_dtype(DType::F32)
    } else {
        aval.clone()
    };
    let a = &a;
    let x = if wide {
        cx.op1("stablehlo.convert", &[x], &[aval], "", a)
    } else {
        x.to_string()
    };
    let (coef_a, coef_b): (&[f64], &[f64]) = if a.dtype == DType::F64 {
        (&I0E_A, &I0E_B)
    } else {
        (&I0E_A[12..], &I0E_B[18..])
    };
    let x = cx.op1("stablehlo.abs", &[&x], &[a], "", a);
    let half = cx.splat(0.5, a);
    let two = cx.splat(2.0, a);
    let thirty_two = cx.splat(32.0, a);
    let t_le = cx.op1("stablehlo.multiply", &[&half, &x], &[a, a], "", a);
    let t_le = cx.op1("stablehlo.subtract", &[&t_le, &two], &[a, a], "", a);
    let le_8 = chebyshev(cx, &t_le, coef_a, a);
    let t_gt = cx.op1("stablehlo.divide", &[&thirty_two, &x], &[a, a], "", a);
    let t_gt = cx.op1("stablehlo.subtract", &[&t_gt, &two], &[a, a], "", a);
    let gt_8 = chebyshev(cx, &t_gt, coef_b, a);
    let root = cx.op1("stablehlo.sqrt", &[&x], &[a], "", a);
    let gt_8 = cx.op1("stablehlo.divide", &[&gt_8, &root], &[a, a], "", a);
    let eight = cx.splat(8.0, a);
    let pred_aval = a.with_dtype(DType::Bool);
    let le = cx.op1(
        "stablehlo.compare",
        &[&x, &eight],
        &[a, a],
        &compare_props(CompareOp::Le, a.dtype),
        &pred_aval,
    );
    let y = cx.op1(
        "stablehlo.select",
        &[&le, &le_8, &gt_8],
        &[&pred_aval, a, a],
        "",
        a,
    );
    if wide {
        cx.op1("stablehlo.convert", &[&y], &[a], "", out)
    } else {
        y
    }
}

/// Clenshaw's recurrence as JAX's `evaluate_chebyshev_polynomial`: `b0 = t b1 - b2 + c` for
/// each coefficient, then `(b0 - b2) / 2`.
fn chebyshev(cx: &mut LowerCtx, t: &str, coefs: &[f64], a: &Aval) -> String {
    let mut b0 = cx.splat(0.0, a);
    let mut b1 = cx.splat(0.0, a);
    let mut b2 = cx.splat(0.0, a);
    for &c in coefs {
        b2 = b1;
        b1 = b0;
        let m = cx.op1("stablehlo.multiply", &[t, &b1], &[a, a], "", a);
        let s = cx.op1("stablehlo.subtract", &[&m, &b2], &[a, a], "", a);
        let c = cx.splat(c, a);
        b0 = cx.op1("stablehlo.add", &[&s, &c], &[a, a], "", a);
    }
    let d = cx.op1("stablehlo.subtract", &[&b0, &b2], &[a, a], "", a);
    let h = cx.splat(0.5, a);
    cx.op1("stablehlo.multiply", &[&h, &d], &[a, a], "", a)
}

/// `conj(z) / |z|` (0 where z is 0), given `y = |z|`: the factor in the derivative of a
/// complex `abs`.
fn abs_direction(z: &Array, y: &Array) -> Array {
    let safe = where_(y.eq(0.0), 1.0, y).astype(z.dtype());
    z.conj() / safe
}

/// `y = op(x)`, elementwise.
#[derive(Debug, Clone, Copy)]
pub struct Unary(pub UnaryOp);

impl Primitive for Unary {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        check_domain(self.0.domain(), inputs[0].dtype)?;
        if self.0 == UnaryOp::Abs {
            // |z| of a complex z is real.
            return Ok(vec![inputs[0].with_dtype(inputs[0].dtype.real_dtype())]);
        }
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        let x = p[0].to_array();
        if self.0 == UnaryOp::Abs && x.dtype().is_complex() {
            // d|z| = re(conj(z) / |z| dz), JAX's rule.
            return vec![Some((t * abs_direction(&x, &outs[0])).real())];
        }
        vec![self.0.derivative(&x, &outs[0], t)]
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        let x = p[0].to_array();
        if self.0 == UnaryOp::Abs && x.dtype().is_complex() {
            // The transpose of `t -> re(c t)` is `g -> c g`.
            return vec![Some(g * abs_direction(&x, &outs[0]))];
        }
        vec![self.0.derivative(&x, &outs[0], g)]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if self.0 == UnaryOp::Sign && in_avals[0].dtype.is_unsigned() {
            // stablehlo.sign is for signed types; for unsigned it is `x != 0`.
            let zero = cx.splat(0.0, &in_avals[0]);
            let ne = cx.op1(
                "stablehlo.compare",
                &[&ins[0], &zero],
                &[&in_avals[0], &in_avals[0]],
                &compare_props(CompareOp::Ne, in_avals[0].dtype),
                &in_avals[0].with_dtype(DType::Bool),
            );
            return vec![cx.op1(
                "stablehlo.convert",
                &[&ne],
                &[&in_avals[0].with_dtype(DType::Bool)],
                "",
                &out[0],
            )];
        }
        if self.0 == UnaryOp::Relu {
            let zero = cx.splat(0.0, &in_avals[0]);
            return vec![cx.op1(
                self.0.mlir(),
                &[&ins[0], &zero],
                &[&in_avals[0], &in_avals[0]],
                "",
                &out[0],
            )];
        }
        if self.0 == UnaryOp::BesselI0e {
            return vec![lower_bessel_i0e(cx, &ins[0], &in_avals[0], &out[0])];
        }
        vec![cx.op1(self.0.mlir(), &[&ins[0]], &[&in_avals[0]], "", &out[0])]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

macro_rules! binary_table {
    ($($op:ident => $name:literal, $domain:ident, $mlir:literal;)*) => {
        /// A binary elementwise operation on operands of one shape and dtype.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum BinaryOp { $($op),* }

        impl BinaryOp {
            pub fn name(self) -> &'static str {
                match self { $(BinaryOp::$op => $name),* }
            }
            pub fn domain(self) -> Domain {
                match self { $(BinaryOp::$op => Domain::$domain),* }
            }
            pub fn mlir(self) -> &'static str {
                match self { $(BinaryOp::$op => $mlir),* }
            }
        }
    };
}

binary_table! {
    Add => "add", Any, "stablehlo.add";
    Sub => "sub", Numeric, "stablehlo.subtract";
    Mul => "mul", Any, "stablehlo.multiply";
    Div => "div", Numeric, "stablehlo.divide";
    Rem => "rem", Real, "stablehlo.remainder";
    Pow => "pow", Inexact, "stablehlo.power";
    Max => "max", Any, "stablehlo.maximum";
    Min => "min", Any, "stablehlo.minimum";
    And => "and", BoolOrInt, "stablehlo.and";
    Or => "or", BoolOrInt, "stablehlo.or";
    Xor => "xor", BoolOrInt, "stablehlo.xor";
    ShiftLeft => "shift_left", Int, "stablehlo.shift_left";
    ShiftRightLogical => "shift_right_logical", Int, "stablehlo.shift_right_logical";
    ShiftRightArithmetic => "shift_right_arithmetic", Int, "stablehlo.shift_right_arithmetic";
    Atan2 => "atan2", Float, "stablehlo.atan2";
    NextAfter => "nextafter", Float, "chlo.next_after";
    Zeta => "zeta", Float, "chlo.zeta";
    Polygamma => "polygamma", Float, "chlo.polygamma";
    MulHi => "mulhi", Int, "chlo.mulhi";
}

/// A partial derivative, kept symbolic where that saves work.
pub enum Partial {
    Zero,
    One,
    MinusOne,
    Times(Array),
}

impl Partial {
    /// `t * d`, or `None` for a zero derivative.
    fn apply(&self, t: &Array) -> Option<Array> {
        match self {
            Partial::Zero => None,
            Partial::One => Some(t.clone()),
            Partial::MinusOne => Some(-t),
            Partial::Times(d) => Some(t * d),
        }
    }
}

impl BinaryOp {
    /// The partial derivative `dz/dx` (`side` 0) or `dz/dy` (`side` 1) at `x, y` with
    /// `z = op(x, y)`, computed only for the side asked for. Ties of max/min split the
    /// derivative evenly, as in JAX.
    pub fn partial(self, side: usize, x: &Array, y: &Array, z: &Array) -> Partial {
        use Partial::{MinusOne, One, Times, Zero};
        let first = side == 0;
        match self {
            BinaryOp::Add => One,
            BinaryOp::Sub if first => One,
            BinaryOp::Sub => MinusOne,
            BinaryOp::Mul => Times(if first { y.clone() } else { x.clone() }),
            BinaryOp::Div if first => Times(1.0 / y),
            BinaryOp::Div => Times(-(z / y)),
            BinaryOp::Rem if first => One,
            BinaryOp::Rem => Times(-(x / y).sign() * (x / y).abs().floor()),
            // y * x^(y-1), zero where y == 0.
            BinaryOp::Pow if first => Times(where_(y.eq(0.0), 0.0, y * x.pow(y - 1.0))),
            // log(x) * x^y, with log(0) read as 0.
            BinaryOp::Pow => Times(where_(x.eq(0.0), 1.0, x).log() * z),
            BinaryOp::Max | BinaryOp::Min => {
                let (mine, other) = if first { (x, y) } else { (y, x) };
                let wins = if self == BinaryOp::Max {
                    mine.gt(other)
                } else {
                    mine.lt(other)
                };
                Times(wins.astype(x.dtype()) + where_(x.eq(y), 0.5, 0.0))
            }
            BinaryOp::Atan2 => {
                let denom = x * x + y * y;
                Times(if first { y / &denom } else { -(x / &denom) })
            }
            // JAX 0.10.2 defines no derivative of zeta (`lax.zeta` under jvp or grad raises
            // NotImplementedError), nor of polygamma in m.
            BinaryOp::Zeta => panic!(
                "lax.zeta: differentiation rule for 'zeta' not implemented (as in JAX 0.10.2)"
            ),
            BinaryOp::Polygamma if first => {
                panic!("lax.polygamma: the gradient with respect to m is not supported (as in JAX)")
            }
            // d/dx polygamma(m, x) = polygamma(m + 1, x).
            BinaryOp::Polygamma => Times((x + 1.0).polygamma(y)),
            BinaryOp::MulHi
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor
            | BinaryOp::ShiftLeft
            | BinaryOp::ShiftRightLogical
            | BinaryOp::ShiftRightArithmetic
            | BinaryOp::NextAfter => Zero,
        }
    }
}

impl IntegerPow {
    fn derivative(&self, x: &Array, t: &Array) -> Option<Array> {
        match self.n {
            0 => None,
            1 => Some(t.clone()),
            n => Some(t * x.powi(n - 1) * n as f64),
        }
    }
}

/// `z = op(x, y)`, elementwise.
#[derive(Debug, Clone, Copy)]
pub struct Binary(pub BinaryOp);

impl Primitive for Binary {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        same_shape_dtype(inputs)?;
        check_domain(self.0.domain(), inputs[0].dtype)?;
        Ok(vec![inputs[0]
            .clone()
            .weak(inputs[0].weak && inputs[1].weak)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let term = |side: usize| {
            let t = t[side].as_ref()?;
            self.0.partial(side, &x, &y, &outs[0]).apply(t)
        };
        match (term(0), term(1)) {
            (Some(a), Some(b)) => vec![Some(a + b)],
            (a, b) => vec![a.or(b)],
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        let (x, y) = (p[0].to_array(), p[1].to_array());
        // Only the partials of the inputs that need a cotangent are computed.
        (0..2)
            .map(|side| {
                if !wanted[side] {
                    return None;
                }
                self.0.partial(side, &x, &y, &outs[0]).apply(g)
            })
            .collect()
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let name = match (self.0, in_avals[0].dtype) {
            // On bool, add is or and mul is and (numpy's semantics).
            (BinaryOp::Add, DType::Bool) => "stablehlo.or",
            (BinaryOp::Mul, DType::Bool) => "stablehlo.and",
            (op, _) => op.mlir(),
        };
        vec![cx.op1(
            name,
            &[&ins[0], &ins[1]],
            &[&in_avals[0], &in_avals[1]],
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::elementwise(*self, args, dims, axis_size)
    }
    as_any!();
}

/// A comparison direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    fn mlir(self) -> &'static str {
        match self {
            CompareOp::Eq => "EQ",
            CompareOp::Ne => "NE",
            CompareOp::Lt => "LT",
            CompareOp::Le => "LE",
            CompareOp::Gt => "GT",
            CompareOp::Ge => "GE",
        }
    }
}

/// The properties of `stablehlo.compare` for `op` on `dtype`.
pub fn compare_props(op: CompareOp, dtype: DType) -> String {
    let ty = match dtype.kind() {
        DTypeKind::Float => "FLOAT",
        // Only EQ and NE are defined on complex operands; the others are refused upstream.
        DTypeKind::Complex => "FLOAT",
        DTypeKind::Bool => "UNSIGNED",
        DTypeKind::Int if dtype.is_unsigned() => "UNSIGNED",
        DTypeKind::Int => "SIGNED",
    };
    format!(
        "compare_type = #stablehlo<comparison_type {ty}>, comparison_direction = #stablehlo<comparison_direction {}>",
        op.mlir()
    )
}

/// `z = x <op> y` as bool, elementwise.
#[derive(Debug, Clone, Copy)]
pub struct Compare(pub CompareOp);

impl Primitive for Compare {
    fn name(&self) -> &'static str {
        match self.0 {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
        }
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        same_shape_dtype(inputs)?;
        if inputs[0].dtype.is_complex() && !matches!(self.0, CompareOp::Eq | CompareOp::Ne) {
            return Err(format!(
                "complex numbers are not ordered: only eq and ne accept {}",
                inputs[0].dtype.name()
            ));
        }
        Ok(vec![
            Aval::new(inputs[0].shape.clone(), DType::Bool).weak(inputs[0].weak && inputs[1].weak)
        ])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![None, None]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = compare_props(self.0, in_avals[0].dtype);
        vec![cx.op1(
            "stablehlo.compare",
            &[&ins[0], &ins[1]],
            &[&in_avals[0], &in_avals[1]],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::elementwise(*self, args, dims, axis_size)
    }
    as_any!();
}

/// `z = pred ? x : y`, elementwise.
#[derive(Debug, Clone, Copy)]
pub struct Select;

impl Primitive for Select {
    fn name(&self) -> &'static str {
        "select"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 3)?;
        if inputs[0].dtype != DType::Bool {
            return Err(format!(
                "the predicate must be bool, got {}",
                inputs[0].dtype.name()
            ));
        }
        if inputs[0].shape != inputs[1].shape {
            return Err("the predicate and the operands must have the same shape".into());
        }
        same_shape_dtype(&inputs[1..])?;
        Ok(vec![inputs[1]
            .clone()
            .weak(inputs[1].weak && inputs[2].weak)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        if t[1].is_none() && t[2].is_none() {
            return vec![None];
        }
        let aval = outs[0].aval();
        vec![Some(where_(
            &*p[0].to_array(),
            or_zeros(&t[1], aval),
            or_zeros(&t[2], aval),
        ))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        let pred = p[0].to_array();
        let zero = zeros_like_aval(outs[0].aval());
        vec![
            None,
            wanted[1].then(|| where_(&*pred, g, &zero)),
            wanted[2].then(|| where_(&*pred, &zero, g)),
        ]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let avals: Vec<&Aval> = in_avals.iter().collect();
        vec![cx.op1(
            "stablehlo.select",
            &[&ins[0], &ins[1], &ins[2]],
            &avals,
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The predicate and both operands share one per-example shape.
        crate::interpreters::batching::elementwise(*self, args, dims, axis_size)
    }
    as_any!();
}

/// `y = x^n` for an integer constant `n`, by repeated squaring (exact, like `lax.integer_pow`).
#[derive(Debug, Clone, Copy)]
pub struct IntegerPow {
    pub n: i32,
}

impl Primitive for IntegerPow {
    fn name(&self) -> &'static str {
        "integer_pow"
    }
    fn params_string(&self) -> String {
        format!("y={}", self.n)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        check_domain(Domain::Numeric, inputs[0].dtype)?;
        if self.n < 0 && !inputs[0].dtype.is_inexact() {
            return Err("a negative exponent needs a floating-point operand".into());
        }
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0]
            .as_ref()
            .and_then(|t| self.derivative(&p[0].to_array(), t))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![cts[0]
            .as_ref()
            .and_then(|g| self.derivative(&p[0].to_array(), g))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        if self.n == 0 {
            return vec![cx.splat(1.0, a)];
        }
        let mut k = self.n.unsigned_abs();
        let mut base = ins[0].clone();
        let mut acc: Option<String> = None;
        while k > 0 {
            if k & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(p) => cx.op1("stablehlo.multiply", &[&p, &base], &[a, a], "", a),
                });
            }
            k >>= 1;
            if k > 0 {
                base = cx.op1("stablehlo.multiply", &[&base, &base], &[a, a], "", a);
            }
        }
        let pos = acc.expect("n != 0");
        if self.n > 0 {
            return vec![pos];
        }
        let one = cx.splat(1.0, &out[0]);
        vec![cx.op1("stablehlo.divide", &[&one, &pos], &[a, a], "", &out[0])]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

/// `y = x` converted to another dtype (`convert_element_type`).
#[derive(Debug, Clone, Copy)]
pub struct Convert {
    pub dtype: DType,
    pub weak: bool,
}

impl Primitive for Convert {
    fn name(&self) -> &'static str {
        "convert_element_type"
    }
    fn params_string(&self) -> String {
        format!("new_dtype={}", self.dtype.name())
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        Ok(vec![
            Aval::new(inputs[0].shape.clone(), self.dtype).weak(self.weak)
        ])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let float_to_float = p[0].aval().dtype.is_inexact() && self.dtype.is_inexact();
        vec![t[0]
            .as_ref()
            .filter(|_| float_to_float)
            .map(|t| t.astype(self.dtype))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let from = p[0].aval();
        let float_to_float = from.dtype.is_inexact() && self.dtype.is_inexact();
        vec![cts[0]
            .as_ref()
            .filter(|_| float_to_float && differentiable(&from))
            .map(|g| g.astype(from.dtype))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        if a.dtype == self.dtype {
            return vec![ins[0].clone()];
        }
        if self.dtype == DType::Bool {
            // Anything nonzero is true (numpy's rule), which a plain convert does not promise.
            let zero = cx.splat(0.0, a);
            let props = compare_props(CompareOp::Ne, a.dtype);
            return vec![cx.op1(
                "stablehlo.compare",
                &[&ins[0], &zero],
                &[a, a],
                &props,
                &out[0],
            )];
        }
        if a.dtype.is_complex() && !self.dtype.is_complex() {
            // To a real dtype: the real part (numpy's and JAX's rule).
            let part = a.with_dtype(a.dtype.real_dtype());
            let re = cx.op1("stablehlo.real", &[&ins[0]], &[a], "", &part);
            if part.dtype == self.dtype {
                return vec![re];
            }
            return vec![cx.op1("stablehlo.convert", &[&re], &[&part], "", &out[0])];
        }
        vec![cx.op1("stablehlo.convert", &[&ins[0]], &[a], "", &out[0])]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

/// The identity, marking a value whose gradient is zero.
#[derive(Debug, Clone, Copy)]
pub struct StopGradient;

impl Primitive for StopGradient {
    fn name(&self) -> &'static str {
        "stop_gradient"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![None]
    }
    fn lower(&self, _: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        vec![ins[0].clone()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

/// `y = x` with its bits reinterpreted as another dtype of the same width
/// (`lax.bitcast_convert_type`): how `uniform` turns random mantissa bits into floats.
#[derive(Debug, Clone, Copy)]
pub struct BitcastConvert {
    pub dtype: DType,
}

impl Primitive for BitcastConvert {
    fn name(&self) -> &'static str {
        "bitcast_convert_type"
    }
    fn params_string(&self) -> String {
        format!("new_dtype={}", self.dtype.name())
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let from = inputs[0].dtype;
        // bool is one byte in memory but one bit in StableHLO: no bitcast reaches it.
        if from.size_in_bytes() != self.dtype.size_in_bytes()
            || (from == DType::Bool) != (self.dtype == DType::Bool)
        {
            return Err(format!(
                "needs dtypes of one width, got {} to {}",
                from.name(),
                self.dtype.name()
            ));
        }
        Ok(vec![Aval::new(inputs[0].shape.clone(), self.dtype)])
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![None]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if in_avals[0].dtype == self.dtype {
            return vec![ins[0].clone()];
        }
        vec![cx.op1(
            "stablehlo.bitcast_convert",
            &[&ins[0]],
            &[&in_avals[0]],
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

/// `x` rounded to the nearest value of a float format with `exponent_bits` and
/// `mantissa_bits` (out-of-range values overflow to infinity), keeping its dtype
/// (`lax.reduce_precision`). Linear in the sense of JAX's rule: a tangent or cotangent is
/// rounded the same way.
#[derive(Debug, Clone, Copy)]
pub struct ReducePrecision {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
}

impl Primitive for ReducePrecision {
    fn name(&self) -> &'static str {
        "reduce_precision"
    }
    fn params_string(&self) -> String {
        format!(
            "exponent_bits={} mantissa_bits={}",
            self.exponent_bits, self.mantissa_bits
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        check_domain(Domain::Float, inputs[0].dtype)?;
        if self.exponent_bits < 1 {
            return Err("needs at least 1 exponent bit".into());
        }
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0]
            .as_ref()
            .map(|t| t.reduce_precision(self.exponent_bits, self.mantissa_bits))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![cts[0]
            .as_ref()
            .map(|g| g.reduce_precision(self.exponent_bits, self.mantissa_bits))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = format!(
            "exponent_bits = {} : i32, mantissa_bits = {} : i32",
            self.exponent_bits, self.mantissa_bits
        );
        vec![cx.op1(
            "stablehlo.reduce_precision",
            &[&ins[0]],
            &[&in_avals[0]],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}
