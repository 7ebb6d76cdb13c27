//! `jaxrs::numpy`'s elementwise functions against JAX 0.10.2 (`tests/golden/jnp_math.json`,
//! written by `tests/golden/gen_jnp_math.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_f64, p_i64, p_str};
use common::golden::In;
use jaxrs::numpy::{self as jnp, DTypeCategory, UnwrapOptions};
use jaxrs::prelude::*;
use serde_json::Value;

/// `f(x, y)` with either operand an array or a Rust scalar, as the case wrote it.
macro_rules! binary {
    ($f:expr, $x:expr) => {
        match (&$x[0], &$x[1]) {
            (In::Arr(p), In::Arr(q)) => $f(p, q),
            (In::Arr(p), In::Float(s)) => $f(p, *s),
            (In::Arr(p), In::Int(s)) => $f(p, *s as i32),
            (In::Arr(p), In::Bool(s)) => $f(p, *s),
            _ => panic!("unexpected operands"),
        }
    };
}

fn dt(name: &str) -> DType {
    DType::from_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

fn pairs(p: &Value) -> Vec<(String, String)> {
    p["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|v| {
            (
                v[0].as_str().unwrap().to_string(),
                v[1].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn category(name: &str) -> DTypeCategory {
    match name {
        "bool" => DTypeCategory::Bool,
        "number" | "numeric" => DTypeCategory::Number,
        "integer" | "integral" => DTypeCategory::Integer,
        "signedinteger" | "signed integer" => DTypeCategory::SignedInteger,
        "unsignedinteger" | "unsigned integer" => DTypeCategory::UnsignedInteger,
        "inexact" => DTypeCategory::Inexact,
        "floating" | "real floating" => DTypeCategory::Floating,
        "generic" => DTypeCategory::Generic,
        other => panic!("category {other}"),
    }
}

fn bools(v: Vec<bool>) -> Array {
    let n = v.len();
    Array::from_vec(v, &[n])
}

fn opt_f64(p: &Value, key: &str) -> Option<f64> {
    p.get(key).and_then(Value::as_f64)
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let two = |(m, n): (Array, Array)| vec![m, n];
    vec![match op {
        "jnp.sqrt" => jnp::sqrt(x0()),
        "jnp.exp" => jnp::exp(x0()),
        "jnp.expm1" => jnp::expm1(x0()),
        "jnp.log" => jnp::log(x0()),
        "jnp.log1p" => jnp::log1p(x0()),
        "jnp.log2" => jnp::log2(x0()),
        "jnp.log10" => jnp::log10(x0()),
        "jnp.exp2" => jnp::exp2(x0()),
        "jnp.sin" => jnp::sin(x0()),
        "jnp.cos" => jnp::cos(x0()),
        "jnp.tan" => jnp::tan(x0()),
        "jnp.arcsin" => jnp::arcsin(x0()),
        "jnp.arccos" => jnp::arccos(x0()),
        "jnp.arctan" => jnp::arctan(x0()),
        "jnp.asin" => jnp::asin(x0()),
        "jnp.acos" => jnp::acos(x0()),
        "jnp.atan" => jnp::atan(x0()),
        "jnp.sinh" => jnp::sinh(x0()),
        "jnp.cosh" => jnp::cosh(x0()),
        "jnp.tanh" => jnp::tanh(x0()),
        "jnp.arcsinh" => jnp::arcsinh(x0()),
        "jnp.arccosh" => jnp::arccosh(x0()),
        "jnp.arctanh" => jnp::arctanh(x0()),
        "jnp.asinh" => jnp::asinh(x0()),
        "jnp.acosh" => jnp::acosh(x0()),
        "jnp.atanh" => jnp::atanh(x0()),
        "jnp.cbrt" => jnp::cbrt(x0()),
        "jnp.degrees" => jnp::degrees(x0()),
        "jnp.radians" => jnp::radians(x0()),
        "jnp.rad2deg" => jnp::rad2deg(x0()),
        "jnp.deg2rad" => jnp::deg2rad(x0()),
        "jnp.reciprocal" => jnp::reciprocal(x0()),
        "jnp.square" => jnp::square(x0()),
        "jnp.negative" => jnp::negative(x0()),
        "jnp.positive" => jnp::positive(x0()),
        "jnp.fabs" => jnp::fabs(x0()),
        "jnp.abs" => jnp::abs(x0()),
        "jnp.absolute" => jnp::absolute(x0()),
        "jnp.sign" => jnp::sign(x0()),
        "jnp.sinc" => jnp::sinc(x0()),
        "jnp.floor" => jnp::floor(x0()),
        "jnp.ceil" => jnp::ceil(x0()),
        "jnp.trunc" => jnp::trunc(x0()),
        "jnp.rint" => jnp::rint(x0()),
        "jnp.round" => jnp::round(x0(), p_i64(p, "decimals") as i32),
        "jnp.around" => jnp::around(x0(), p_i64(p, "decimals") as i32),
        "jnp.modf" => return two(jnp::modf(x0())),
        "jnp.frexp" => return two(jnp::frexp(x0())),
        "jnp.divmod" => return two(binary!(jnp::divmod, x)),
        "jnp.add" => binary!(jnp::add, x),
        "jnp.subtract" => binary!(jnp::subtract, x),
        "jnp.multiply" => binary!(jnp::multiply, x),
        "jnp.divide" => binary!(jnp::divide, x),
        "jnp.true_divide" => binary!(jnp::true_divide, x),
        "jnp.floor_divide" => binary!(jnp::floor_divide, x),
        "jnp.remainder" => binary!(jnp::remainder, x),
        "jnp.mod" => binary!(jnp::mod_, x),
        "jnp.fmod" => binary!(jnp::fmod, x),
        "jnp.maximum" => binary!(jnp::maximum, x),
        "jnp.minimum" => binary!(jnp::minimum, x),
        "jnp.power" => binary!(jnp::power, x),
        "jnp.pow" => binary!(jnp::pow, x),
        "jnp.float_power" => binary!(jnp::float_power, x),
        "jnp.arctan2" => binary!(jnp::arctan2, x),
        "jnp.atan2" => binary!(jnp::atan2, x),
        "jnp.hypot" => binary!(jnp::hypot, x),
        "jnp.logaddexp" => binary!(jnp::logaddexp, x),
        "jnp.logaddexp2" => binary!(jnp::logaddexp2, x),
        "jnp.fmax" => binary!(jnp::fmax, x),
        "jnp.fmin" => binary!(jnp::fmin, x),
        "jnp.copysign" => binary!(jnp::copysign, x),
        "jnp.heaviside" => binary!(jnp::heaviside, x),
        "jnp.nextafter" => binary!(jnp::nextafter, x),
        "jnp.spacing" => jnp::spacing(x0()),
        "jnp.ldexp" => binary!(jnp::ldexp, x),
        "jnp.unwrap" => {
            let mut o = UnwrapOptions {
                discont: opt_f64(p, "discont"),
                ..Default::default()
            };
            if let Some(axis) = p.get("axis").and_then(Value::as_i64) {
                o.axis = axis;
            }
            if let Some(period) = opt_f64(p, "period") {
                o.period = period;
            }
            jnp::unwrap(x0(), o)
        }
        "jnp.clip" => match (&p["min"], &p["max"]) {
            (lo, hi) if lo.is_f64() => jnp::clip(x0(), lo.as_f64().unwrap(), hi.as_f64().unwrap()),
            (lo, hi) => jnp::clip(
                x0(),
                lo.as_i64().unwrap() as i32,
                hi.as_i64().unwrap() as i32,
            ),
        },
        "jnp.equal" => binary!(jnp::equal, x),
        "jnp.not_equal" => binary!(jnp::not_equal, x),
        "jnp.less" => binary!(jnp::less, x),
        "jnp.less_equal" => binary!(jnp::less_equal, x),
        "jnp.greater" => binary!(jnp::greater, x),
        "jnp.greater_equal" => binary!(jnp::greater_equal, x),
        "jnp.logical_and" => binary!(jnp::logical_and, x),
        "jnp.logical_or" => binary!(jnp::logical_or, x),
        "jnp.logical_xor" => binary!(jnp::logical_xor, x),
        "jnp.logical_not" => jnp::logical_not(x0()),
        "jnp.bitwise_and" => binary!(jnp::bitwise_and, x),
        "jnp.bitwise_or" => binary!(jnp::bitwise_or, x),
        "jnp.bitwise_xor" => binary!(jnp::bitwise_xor, x),
        "jnp.bitwise_not" => jnp::bitwise_not(x0()),
        "jnp.invert" => jnp::invert(x0()),
        "jnp.bitwise_invert" => jnp::bitwise_invert(x0()),
        "jnp.left_shift" => binary!(jnp::left_shift, x),
        "jnp.right_shift" => binary!(jnp::right_shift, x),
        "jnp.bitwise_left_shift" => binary!(jnp::bitwise_left_shift, x),
        "jnp.bitwise_right_shift" => binary!(jnp::bitwise_right_shift, x),
        "jnp.bitwise_count" => jnp::bitwise_count(x0()),
        "jnp.gcd" => binary!(jnp::gcd, x),
        "jnp.lcm" => binary!(jnp::lcm, x),
        "jnp.isnan" => jnp::isnan(x0()),
        "jnp.isinf" => jnp::isinf(x0()),
        "jnp.isfinite" => jnp::isfinite(x0()),
        "jnp.isneginf" => jnp::isneginf(x0()),
        "jnp.isposinf" => jnp::isposinf(x0()),
        "jnp.signbit" => jnp::signbit(x0()),
        "jnp.isreal" => jnp::isreal(x0()),
        "jnp.iscomplex" => jnp::iscomplex(x0()),
        "jnp.nan_to_num" => jnp::nan_to_num(
            x0(),
            opt_f64(p, "nan").unwrap_or(0.0),
            opt_f64(p, "posinf"),
            opt_f64(p, "neginf"),
        ),
        "jnp.isclose" | "jnp.allclose" => {
            let (rtol, atol, en) = (p_f64(p, "rtol"), p_f64(p, "atol"), p_bool(p, "equal_nan"));
            match (op, opt_f64(p, "b")) {
                ("jnp.isclose", Some(b)) => jnp::isclose(x0(), b, rtol, atol, en),
                ("jnp.isclose", None) => jnp::isclose(x0(), a(x, 1), rtol, atol, en),
                (_, Some(b)) => jnp::allclose(x0(), b, rtol, atol, en),
                (_, None) => jnp::allclose(x0(), a(x, 1), rtol, atol, en),
            }
        }
        "jnp.array_equal" => jnp::array_equal(x0(), a(x, 1), p_bool(p, "equal_nan")),
        "jnp.array_equiv" => jnp::array_equiv(x0(), a(x, 1)),
        "jnp.astype" => jnp::astype(x0(), dt(p_str(p, "dtype"))),
        "jnp.finfo" => {
            let f = jnp::finfo(dt(p_str(p, "dtype")));
            let fields = vec![
                f.bits as f64,
                f.eps,
                f.epsneg,
                f.max,
                f.min,
                f.tiny,
                f.smallest_normal,
                f.smallest_subnormal,
                f.resolution,
                f.nmant as f64,
                f.nexp as f64,
                f.minexp as f64,
                f.maxexp as f64,
                f.precision as f64,
            ];
            Array::from_vec(fields, &[14])
        }
        "jnp.iinfo" => {
            let i = jnp::iinfo(dt(p_str(p, "dtype")));
            Array::from_vec(vec![i.bits as i64, i.min as i64, i.max as i64], &[3])
        }
        "jnp.promote_types" => {
            return pairs(p)
                .iter()
                .map(|(l, r)| Array::zeros(&[], jnp::promote_types(dt(l), dt(r))))
                .collect()
        }
        "jnp.can_cast" => bools(
            pairs(p)
                .iter()
                .map(|(l, r)| jnp::can_cast(dt(l), dt(r)))
                .collect(),
        ),
        "jnp.issubdtype" => bools(
            pairs(p)
                .iter()
                .map(|(d, k)| jnp::issubdtype(dt(d), category(k)))
                .collect(),
        ),
        "jnp.isdtype" => bools(
            pairs(p)
                .iter()
                .map(|(d, k)| jnp::isdtype(dt(d), &[category(k)]))
                .collect(),
        ),
        "jnp.isscalar" => Array::scalar(jnp::isscalar(x0())),
        "jnp.isrealobj" => Array::scalar(jnp::isrealobj(x0())),
        "jnp.iscomplexobj" => Array::scalar(jnp::iscomplexobj(x0())),
        "jnp.pi" => Array::scalar(jnp::pi),
        "jnp.e" => Array::scalar(jnp::e),
        "jnp.inf" => Array::scalar(jnp::inf),
        "jnp.nan" => Array::scalar(jnp::nan),
        "jnp.euler_gamma" => Array::scalar(jnp::euler_gamma),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jnp_math_matches_jax() {
    assert!(check_file("jnp_math", apply) > 400);
}
