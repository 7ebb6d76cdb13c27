//! Reading the JAX golden files (`tests/golden/*.json`) and mapping their op names to the
//! Rust array API: shared by the op, gradient and batching golden tests.
#![allow(dead_code)]

use jaxrs::prelude::*;
use jaxrs::{stop_gradient, where_, DotDims, Element};
use serde_json::Value;

/// `tests/golden/{name}`, parsed.
pub fn load(name: &str) -> Value {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A JSON list of numbers as f32s.
pub fn f32s(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// `((arange(n) % modulus) - shift) * scale` in f32, row-major, as the sharding generators'
/// `seq` makes their inputs (exact in f32).
pub fn seq(shape: &[usize], modulus: usize, shift: f32, scale: f32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % modulus) as f32 - shift) * scale)
        .collect();
    Array::from_vec(v, shape)
}

/// An operand of a case: an array, or a Rust scalar literal.
#[derive(Clone)]
pub enum In {
    Arr(Array),
    Float(f64),
    Int(i64),
    Bool(bool),
}

pub fn number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("number"),
        Value::Bool(b) => *b as u8 as f64,
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        other => panic!("bad number {other}"),
    }
}

pub fn dtype(v: &Value) -> DType {
    DType::from_name(v.as_str().expect("dtype name")).expect("known dtype")
}

pub fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

pub fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("ints")
        .iter()
        .map(|d| d.as_i64().expect("int"))
        .collect()
}

pub fn usizes(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|x| x as usize).collect()
}

/// An exact integer of a case file (a uint64 above `i64::MAX` included; some generators write
/// integer data as floats, `2.0`, or bools).
pub fn int(v: &Value) -> i128 {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i128))
        .or_else(|| v.as_bool().map(i128::from))
        .unwrap_or_else(|| panic!("bad integer {v}"))
}

/// An integer array built from exact values (a 64-bit value is no f64).
pub fn int_array(values: &[i128], shape: &[usize], dtype: DType) -> Array {
    fn typed<T: Element + TryFrom<i128>>(values: &[i128], shape: &[usize]) -> Array {
        let data: Vec<T> = values
            .iter()
            .map(|&v| T::try_from(v).unwrap_or_else(|_| panic!("{v} out of range")))
            .collect();
        Array::from_vec(data, shape)
    }
    match dtype {
        DType::I8 => typed::<i8>(values, shape),
        DType::I16 => typed::<i16>(values, shape),
        DType::I32 => typed::<i32>(values, shape),
        DType::I64 => typed::<i64>(values, shape),
        DType::U8 => typed::<u8>(values, shape),
        DType::U16 => typed::<u16>(values, shape),
        DType::U32 => typed::<u32>(values, shape),
        DType::U64 => typed::<u64>(values, shape),
        other => panic!("int_array: {other:?} is not an integer dtype"),
    }
}

/// The exact values of an integer (or bool) array.
pub fn int_values(x: &Array) -> Vec<i128> {
    fn wide<T: Element + Into<i128>>(x: &Array) -> Vec<i128> {
        x.to_vec::<T>().into_iter().map(Into::into).collect()
    }
    match x.dtype() {
        DType::Bool => x.to_vec::<bool>().into_iter().map(i128::from).collect(),
        DType::I8 => wide::<i8>(x),
        DType::I16 => wide::<i16>(x),
        DType::I32 => wide::<i32>(x),
        DType::I64 => wide::<i64>(x),
        DType::U8 => wide::<u8>(x),
        DType::U16 => wide::<u16>(x),
        DType::U32 => wide::<u32>(x),
        DType::U64 => wide::<u64>(x),
        other => panic!("int_values: {other:?} is not an integer dtype"),
    }
}

/// An `ARR` of a case file. Integers are read exactly; other dtypes through f64 (each of
/// their values is one).
pub fn array(v: &Value) -> Array {
    let dt = dtype(&v["dtype"]);
    if dt.is_complex() {
        // Complex data is a list of `[re, im]` pairs.
        let pairs = v["data"].as_array().expect("data");
        let part = |k: usize| -> Vec<f64> {
            pairs
                .iter()
                .map(|p| number(&p.as_array().expect("[re, im]")[k]))
                .collect()
        };
        let sh = shape(&v["shape"]);
        let real = dt.real_dtype();
        return jaxrs::complex(
            Array::from_f64s(&part(0), &sh, real),
            Array::from_f64s(&part(1), &sh, real),
        );
    }
    if dt.is_int() {
        let values: Vec<i128> = v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(int)
            .collect();
        return int_array(&values, &shape(&v["shape"]), dt);
    }
    let values: Vec<f64> = v["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(number)
        .collect();
    Array::from_f64s(&values, &shape(&v["shape"]), dtype(&v["dtype"]))
}

/// The values of any array as f64s: a complex one's real and imaginary parts interleaved.
pub fn f64_parts(a: &Array) -> Vec<f64> {
    if !a.dtype().is_complex() {
        return a.to_f64_vec();
    }
    let (re, im) = (a.real().to_f64_vec(), a.imag().to_f64_vec());
    re.into_iter().zip(im).flat_map(|(r, i)| [r, i]).collect()
}

/// The first element outside `|got - want| <= atol + rtol * |want|` (a NaN must meet a NaN,
/// an infinity the same infinity): its index and both values.
pub fn first_mismatch(
    got: &[f64],
    want: &[f64],
    rtol: f64,
    atol: f64,
) -> Option<(usize, f64, f64)> {
    got.iter().zip(want).enumerate().find_map(|(i, (&g, &w))| {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= atol + rtol * w.abs()
        };
        (!ok).then_some((i, g, w))
    })
}

/// An operand as a case file writes it: an array, or `{"scalar": v}` for a Rust scalar.
pub fn operand(v: &Value) -> In {
    match v.get("scalar") {
        Some(Value::Bool(b)) => In::Bool(*b),
        Some(Value::Number(n)) if n.is_f64() => In::Float(n.as_f64().unwrap()),
        Some(Value::Number(n)) => In::Int(n.as_i64().unwrap()),
        Some(other) => panic!("bad scalar {other}"),
        None => In::Arr(array(v)),
    }
}

pub fn arr(x: &In) -> &Array {
    match x {
        In::Arr(a) => a,
        _ => panic!("expected an array operand"),
    }
}

/// `x <op> y` where either side may be a Rust scalar.
pub fn binary(op: &str, x: &In, y: &In) -> Array {
    macro_rules! with_rhs {
        ($a:expr, $m:ident) => {
            match y {
                In::Arr(b) => $a.$m(b),
                In::Float(s) => $a.$m(*s),
                In::Int(s) => $a.$m(*s),
                In::Bool(s) => $a.$m(*s),
            }
        };
    }
    macro_rules! dispatch {
        ($a:expr) => {
            match op {
                "add" => with_rhs!($a, add),
                "sub" => with_rhs!($a, sub),
                "mul" => with_rhs!($a, mul),
                "div" => with_rhs!($a, div),
                "rem" => with_rhs!($a, rem),
                "floor_divide" => with_rhs!($a, floor_divide),
                "fmod" => with_rhs!($a, fmod),
                "pow" => with_rhs!($a, pow),
                "maximum" => with_rhs!($a, maximum),
                "minimum" => with_rhs!($a, minimum),
                "eq" => with_rhs!($a, eq),
                "ne" => with_rhs!($a, ne),
                "lt" => with_rhs!($a, lt),
                "le" => with_rhs!($a, le),
                "gt" => with_rhs!($a, gt),
                "ge" => with_rhs!($a, ge),
                "logical_and" => with_rhs!($a, logical_and),
                "logical_or" => with_rhs!($a, logical_or),
                "logaddexp" => with_rhs!($a, logaddexp),
                other => panic!("unknown binary op {other}"),
            }
        };
    }
    match (x, y) {
        (In::Arr(a), _) => dispatch!(a),
        (In::Float(s), In::Arr(b)) => match op {
            "sub" => *s - b,
            "div" => *s / b,
            "add" => *s + b,
            "mul" => *s * b,
            other => panic!("scalar-left {other} not covered"),
        },
        _ => panic!("two scalars"),
    }
}

pub fn apply(op: &str, p: &Value, x: &[In]) -> Array {
    let axes = |k: &str| -> Option<Vec<i64>> { p[k].as_array().map(|_| ints(&p[k])) };
    let axis = || p["axis"].as_i64().expect("axis");
    let keepdims = || p["keepdims"].as_bool().unwrap_or(false);
    macro_rules! reduce {
        ($m:ident) => {
            match axes("axes") {
                None => arr(&x[0]).$m(None, keepdims()),
                Some(list) => arr(&x[0]).$m(list, keepdims()),
            }
        };
    }
    let all: Vec<Array> = x
        .iter()
        .filter_map(|i| {
            if let In::Arr(a) = i {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    match op {
        "add" | "sub" | "mul" | "div" | "rem" | "floor_divide" | "fmod" | "pow" | "maximum"
        | "minimum" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "logical_and" | "logical_or"
        | "logaddexp" => binary(op, &x[0], &x[1]),
        "neg" => -arr(&x[0]),
        "exp" => arr(&x[0]).exp(),
        "log" => arr(&x[0]).log(),
        "log1p" => arr(&x[0]).log1p(),
        "expm1" => arr(&x[0]).expm1(),
        "tanh" => arr(&x[0]).tanh(),
        "logistic" => arr(&x[0]).logistic(),
        "sin" => arr(&x[0]).sin(),
        "cos" => arr(&x[0]).cos(),
        "sqrt" => arr(&x[0]).sqrt(),
        "rsqrt" => arr(&x[0]).rsqrt(),
        "abs" => arr(&x[0]).abs(),
        "sign" => arr(&x[0]).sign(),
        "floor" => arr(&x[0]).floor(),
        "ceil" => arr(&x[0]).ceil(),
        "round" => arr(&x[0]).round(),
        "erf" => arr(&x[0]).erf(),
        "relu" => arr(&x[0]).relu(),
        "gelu_tanh" => arr(&x[0]).gelu(),
        "gelu_exact" => arr(&x[0]).gelu_exact(),
        "logical_not" => arr(&x[0]).logical_not(),
        "integer_pow" => arr(&x[0]).powi(p["n"].as_i64().unwrap() as i32),
        "where" => {
            let pick = |i: &In| match i {
                In::Arr(a) => jaxrs::internals::Operand::from(a.clone()),
                In::Float(s) => jaxrs::IntoArg::into_arg(*s),
                In::Int(s) => jaxrs::IntoArg::into_arg(*s),
                In::Bool(s) => jaxrs::IntoArg::into_arg(*s),
            };
            where_(arr(&x[0]), pick(&x[1]), pick(&x[2]))
        }
        "sum" => reduce!(sum),
        "mean" => reduce!(mean),
        "max" => reduce!(max),
        "min" => reduce!(min),
        "prod" => reduce!(prod),
        "logsumexp" => reduce!(logsumexp),
        "argmax" => arr(&x[0]).argmax(axis(), keepdims()),
        "argmin" => arr(&x[0]).argmin(axis(), keepdims()),
        "softmax" => arr(&x[0]).softmax(axis()),
        "log_softmax" => arr(&x[0]).log_softmax(axis()),
        "cumsum" => arr(&x[0]).cumsum(axis()),
        "reshape" => arr(&x[0]).reshape(ints(&p["shape"])),
        "transpose" => arr(&x[0]).transpose(ints(&p["perm"])),
        "broadcast_to" => arr(&x[0]).broadcast_to(&usizes(&p["shape"])),
        "expand_dims" => arr(&x[0]).expand_dims(axis()),
        "squeeze" => arr(&x[0]).squeeze(ints(&p["axes"])),
        "concatenate" => Array::concatenate(&all, axis()),
        "stack" => Array::stack(&all, axis()),
        "slice" => arr(&x[0]).slice(
            &usizes(&p["start"]),
            &usizes(&p["limit"]),
            &usizes(&p["strides"]),
        ),
        "pad" => arr(&x[0]).pad(
            &ints(&p["low"]),
            &ints(&p["high"]),
            &ints(&p["interior"]),
            number(&p["value"]),
        ),
        "dynamic_slice" => all[0].dynamic_slice(&all[1..], &usizes(&p["sizes"])),
        "dynamic_update_slice" => all[0].dynamic_update_slice(&all[1], &all[2..]),
        "take" => all[0].take(&all[1], axis()),
        "take_along_axis" => all[0].take_along_axis(&all[1], axis()),
        "one_hot" => Array::one_hot(
            &all[0],
            p["num_classes"].as_u64().unwrap() as usize,
            dtype(&p["dtype"]),
        ),
        "matmul" => all[0].matmul(&all[1]),
        "dot_general" => {
            let (c_, b_) = (&p["contracting"], &p["batch"]);
            let dims = DotDims {
                lhs_contract: usizes(&c_[0]),
                rhs_contract: usizes(&c_[1]),
                lhs_batch: usizes(&b_[0]),
                rhs_batch: usizes(&b_[1]),
            };
            all[0].dot_general(&all[1], &dims)
        }
        "iota" => Array::iota(
            dtype(&p["dtype"]),
            &usizes(&p["shape"]),
            p["dimension"].as_u64().unwrap() as usize,
        ),
        "astype" => all[0].astype(dtype(&p["dtype"])),
        "stop_gradient" => stop_gradient(&all[0]),
        "norm" => all[0].norm(),
        "arange" => Array::arange(
            number(&p["start"]),
            number(&p["stop"]),
            number(&p["step"]),
            dtype(&p["dtype"]),
        ),
        "eye" => Array::eye(p["n"].as_u64().unwrap() as usize, dtype(&p["dtype"])),
        "zeros" => Array::zeros(&usizes(&p["shape"]), dtype(&p["dtype"])),
        "ones" => Array::ones(&usizes(&p["shape"]), dtype(&p["dtype"])),
        "full" => Array::full(
            &usizes(&p["shape"]),
            number(&p["value"]),
            dtype(&p["dtype"]),
        ),
        "softplus" => arr(&x[0]).softplus(),
        "clip" => match (&x[1], &x[2]) {
            (In::Arr(lo), In::Arr(hi)) => arr(&x[0]).clip(lo, hi),
            (In::Float(lo), In::Float(hi)) => arr(&x[0]).clip(*lo, *hi),
            (In::Int(lo), In::Int(hi)) => arr(&x[0]).clip(*lo, *hi),
            _ => panic!("clip: mixed bounds not covered"),
        },
        "isnan" => arr(&x[0]).isnan(),
        "isinf" => arr(&x[0]).isinf(),
        "isfinite" => arr(&x[0]).isfinite(),
        "nan_to_num" => arr(&x[0]).nan_to_num(
            number(&p["nan"]),
            p["posinf"].as_f64(),
            p["neginf"].as_f64(),
        ),
        "var" | "std" => {
            let ddof = p["ddof"].as_u64().expect("ddof") as usize;
            let x = arr(&x[0]);
            match (op, axes("axes")) {
                ("var", None) => x.var(None, keepdims(), ddof),
                ("var", Some(list)) => x.var(list, keepdims(), ddof),
                (_, None) => x.std(None, keepdims(), ddof),
                (_, Some(list)) => x.std(list, keepdims(), ddof),
            }
        }
        "linspace" => Array::linspace(
            number(&p["start"]),
            number(&p["stop"]),
            p["num"].as_u64().unwrap() as usize,
            p["endpoint"].as_bool().unwrap(),
            dtype(&p["dtype"]),
        ),
        "tril" => arr(&x[0]).tril(p["k"].as_i64().unwrap()),
        "triu" => arr(&x[0]).triu(p["k"].as_i64().unwrap()),
        "sort" => arr(&x[0]).sort(axis()),
        "argsort" => arr(&x[0]).argsort(axis()),
        "top_k_values" => arr(&x[0]).top_k(p["k"].as_u64().unwrap() as usize).0,
        "top_k_indices" => arr(&x[0]).top_k(p["k"].as_u64().unwrap() as usize).1,
        "at_get" => all[0].at(&all[1]).get(),
        "at_set" | "at_add" | "at_mul" | "at_min" | "at_max" => {
            let at = all[0].at(&all[1]);
            macro_rules! with_v {
                ($m:ident) => {
                    match &x[2] {
                        In::Arr(v) => at.$m(v),
                        In::Float(v) => at.$m(*v),
                        In::Int(v) => at.$m(*v),
                        In::Bool(v) => at.$m(*v),
                    }
                };
            }
            match op {
                "at_set" => with_v!(set),
                "at_add" => with_v!(add),
                "at_mul" => with_v!(mul),
                "at_min" => with_v!(min),
                _ => with_v!(max),
            }
        }
        "einsum" => {
            let refs: Vec<&Array> = all.iter().collect();
            jaxrs::einsum(p["spec"].as_str().unwrap(), &refs)
        }
        other => panic!("no Rust mapping for op {other}"),
    }
}
