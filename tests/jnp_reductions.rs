//! `jaxrs::numpy`'s reductions, statistics, cumulative functions, sorting, searching and set
//! functions against JAX 0.10.2 (`tests/golden/jnp_reductions.json`, written by
//! `tests/golden/gen_jnp_reductions.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_f64, p_i64, p_opt_i64, p_str};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::Axes;
use serde_json::Value;

/// The `axis` param: null (every axis), one axis, or a list.
struct Ax(Option<Vec<i64>>);

impl Axes for Ax {
    fn axes(self) -> Option<Vec<i64>> {
        self.0
    }
}

fn axis(p: &Value) -> Ax {
    match p.get("axis") {
        None | Some(Value::Null) => Ax(None),
        Some(Value::Array(v)) => Ax(Some(v.iter().map(|x| x.as_i64().unwrap()).collect())),
        Some(v) => Ax(Some(vec![v.as_i64().unwrap()])),
    }
}

fn opt_usize(p: &Value, key: &str) -> Option<usize> {
    p_opt_i64(p, key).map(|v| v as usize)
}

fn opt_f64(p: &Value, key: &str) -> Option<f64> {
    p.get(key).and_then(Value::as_f64)
}

fn method(p: &Value) -> jnp::QuantileMethod {
    match p.get("method").and_then(Value::as_str).unwrap_or("linear") {
        "linear" => jnp::QuantileMethod::Linear,
        "lower" => jnp::QuantileMethod::Lower,
        "higher" => jnp::QuantileMethod::Higher,
        "midpoint" => jnp::QuantileMethod::Midpoint,
        "nearest" => jnp::QuantileMethod::Nearest,
        m => panic!("unknown method {m}"),
    }
}

fn unique_outs(u: jnp::UniqueResult) -> Vec<Array> {
    [Some(u.values), u.indices, u.inverse, u.counts]
        .into_iter()
        .flatten()
        .collect()
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let kd = p_bool(p, "keepdims");
    let ddof = || p_opt_i64(p, "ddof").unwrap_or(0) as usize;
    let size = opt_usize(p, "size");
    let fill_i = p_opt_i64(p, "fill_value");
    let fill_f = opt_f64(p, "fill_value");
    let sort_opts = || jnp::SortOptions {
        descending: p_bool(p, "descending"),
        ..Default::default()
    };
    let qopts = || jnp::QuantileOptions {
        method: method(p),
        keepdims: kd,
    };
    vec![match op {
        "jnp.sum" => jnp::sum(x0(), axis(p), kd),
        "jnp.prod" => jnp::prod(x0(), axis(p), kd),
        "jnp.max" => jnp::max(x0(), axis(p), kd),
        "jnp.min" => jnp::min(x0(), axis(p), kd),
        "jnp.amax" => jnp::amax(x0(), axis(p), kd),
        "jnp.amin" => jnp::amin(x0(), axis(p), kd),
        "jnp.mean" => jnp::mean(x0(), axis(p), kd),
        "jnp.ptp" => jnp::ptp(x0(), axis(p), kd),
        "jnp.all" => jnp::all(x0(), axis(p), kd),
        "jnp.any" => jnp::any(x0(), axis(p), kd),
        "jnp.var" => jnp::var(x0(), axis(p), kd, ddof()),
        "jnp.std" => jnp::std(x0(), axis(p), kd, ddof()),
        "jnp.count_nonzero" => jnp::count_nonzero(x0(), axis(p), kd),
        "jnp.average" if p_bool(p, "noweights") => jnp::average(x0(), axis(p), None, kd),
        "jnp.average" if p_bool(p, "returned") => {
            let (v, w) = jnp::average_returned(x0(), axis(p), Some(a(x, 1)), kd);
            return vec![v, w];
        }
        "jnp.average" => jnp::average(x0(), axis(p), Some(a(x, 1)), kd),
        "jnp.argmax" => jnp::argmax(x0(), axis(p), kd),
        "jnp.argmin" => jnp::argmin(x0(), axis(p), kd),
        "jnp.nansum" => jnp::nansum(x0(), axis(p), kd),
        "jnp.nanprod" => jnp::nanprod(x0(), axis(p), kd),
        "jnp.nanmean" => jnp::nanmean(x0(), axis(p), kd),
        "jnp.nanmax" => jnp::nanmax(x0(), axis(p), kd),
        "jnp.nanmin" => jnp::nanmin(x0(), axis(p), kd),
        "jnp.nanvar" => jnp::nanvar(x0(), axis(p), kd, ddof()),
        "jnp.nanstd" => jnp::nanstd(x0(), axis(p), kd, ddof()),
        "jnp.nanargmax" => jnp::nanargmax(x0(), axis(p), kd),
        "jnp.nanargmin" => jnp::nanargmin(x0(), axis(p), kd),
        "jnp.nancumsum" => jnp::nancumsum(x0(), axis(p)),
        "jnp.nancumprod" => jnp::nancumprod(x0(), axis(p)),
        "jnp.cumsum" => jnp::cumsum(x0(), axis(p)),
        "jnp.cumprod" => jnp::cumprod(x0(), axis(p)),
        "jnp.cumulative_sum" => {
            jnp::cumulative_sum(x0(), p_opt_i64(p, "axis"), p_bool(p, "include_initial"))
        }
        "jnp.cumulative_prod" => {
            jnp::cumulative_prod(x0(), p_opt_i64(p, "axis"), p_bool(p, "include_initial"))
        }
        "jnp.diff" => {
            let mut k = 1;
            let mut next = || {
                let v = a(x, k);
                k += 1;
                v
            };
            let prepend = p_bool(p, "prepend").then(&mut next);
            let append = p_bool(p, "append").then(&mut next);
            jnp::diff(
                x0(),
                jnp::DiffOptions {
                    n: p_opt_i64(p, "n").unwrap_or(1) as usize,
                    axis: p_opt_i64(p, "axis").unwrap_or(-1),
                    prepend,
                    append,
                },
            )
        }
        "jnp.ediff1d" if p_bool(p, "to_end") => jnp::ediff1d(x0(), Some(a(x, 1)), Some(a(x, 2))),
        "jnp.ediff1d" => jnp::ediff1d(x0(), None, None),
        "jnp.trapezoid" => jnp::trapezoid(
            x0(),
            jnp::TrapezoidOptions {
                x: p_bool(p, "x").then(|| a(x, 1)),
                dx: opt_f64(p, "dx").unwrap_or(1.0),
                axis: p_opt_i64(p, "axis").unwrap_or(-1),
            },
        ),
        "jnp.sort" => jnp::sort(x0(), axis(p), sort_opts()),
        "jnp.sort_complex" => jnp::sort_complex(x0()),
        "jnp.argsort" => jnp::argsort(x0(), axis(p), sort_opts()),
        "jnp.lexsort" => jnp::lexsort(&[a(x, 0), a(x, 1)], p_i64(p, "axis")),
        "jnp.partition" => jnp::partition(x0(), p_i64(p, "kth") as usize, p_i64(p, "axis")),
        "jnp.argpartition" => jnp::argpartition(x0(), p_i64(p, "kth") as usize, p_i64(p, "axis")),
        "jnp.quantile" if p_bool(p, "qarray") => jnp::quantile(x0(), a(x, 1), axis(p), qopts()),
        "jnp.quantile" => jnp::quantile(x0(), p_f64(p, "q"), axis(p), qopts()),
        "jnp.nanquantile" => jnp::nanquantile(x0(), p_f64(p, "q"), axis(p), qopts()),
        "jnp.percentile" => jnp::percentile(x0(), p_f64(p, "q"), axis(p), qopts()),
        "jnp.nanpercentile" => jnp::nanpercentile(x0(), p_f64(p, "q"), axis(p), qopts()),
        "jnp.median" => jnp::median(x0(), axis(p), kd),
        "jnp.nanmedian" => jnp::nanmedian(x0(), axis(p), kd),
        "jnp.searchsorted" => {
            let side = match p_str(p, "side") {
                "left" => jnp::Side::Left,
                _ => jnp::Side::Right,
            };
            jnp::searchsorted(x0(), a(x, 1), side)
        }
        "jnp.digitize" => jnp::digitize(x0(), a(x, 1), p_bool(p, "right")),
        "jnp.bincount" => jnp::bincount(
            x0(),
            p_bool(p, "weights").then(|| a(x, 1)),
            opt_usize(p, "minlength").unwrap_or(0),
            opt_usize(p, "length"),
        ),
        "jnp.histogram_bin_edges" | "jnp.histogram" => {
            let range = p
                .get("range")
                .and_then(Value::as_array)
                .map(|r| (r[0].as_f64().unwrap(), r[1].as_f64().unwrap()));
            let bins = p_i64(p, "bins") as usize;
            if op == "jnp.histogram" {
                let w = p_bool(p, "weights").then(|| a(x, 1));
                let (h, e) = jnp::histogram(x0(), bins, range, w, p_bool(p, "density"));
                return vec![h, e];
            }
            jnp::histogram_bin_edges(x0(), bins, range)
        }
        "jnp.interp" => jnp::interp(
            x0(),
            a(x, 1),
            a(x, 2),
            opt_f64(p, "left"),
            opt_f64(p, "right"),
        ),
        "jnp.gradient" => return jnp::gradient(x0(), axis(p)),
        "jnp.cov" => jnp::cov(
            x0(),
            p.get("rowvar").and_then(Value::as_bool).unwrap_or(true),
            p_bool(p, "bias"),
            opt_usize(p, "ddof"),
        ),
        "jnp.corrcoef" => jnp::corrcoef(
            x0(),
            p.get("rowvar").and_then(Value::as_bool).unwrap_or(true),
        ),
        "jnp.nonzero" => return jnp::nonzero(x0(), size, fill_i),
        "jnp.flatnonzero" => jnp::flatnonzero(x0(), size, fill_i),
        "jnp.argwhere" => jnp::argwhere(x0(), size, fill_i),
        "jnp.unique" => {
            return unique_outs(jnp::unique(
                x0(),
                jnp::UniqueOptions {
                    return_index: p_bool(p, "return_index"),
                    return_inverse: p_bool(p, "return_inverse"),
                    return_counts: p_bool(p, "return_counts"),
                    size,
                    fill_value: fill_f,
                },
            ))
        }
        "jnp.unique_all" => return unique_outs(jnp::unique_all(x0(), size, fill_f)),
        "jnp.unique_counts" => {
            let (v, c) = jnp::unique_counts(x0(), size, fill_f);
            return vec![v, c];
        }
        "jnp.unique_inverse" => {
            let (v, i) = jnp::unique_inverse(x0(), size, fill_f);
            return vec![v, i];
        }
        "jnp.unique_values" => jnp::unique_values(x0(), size, fill_f),
        "jnp.isin" => jnp::isin(x0(), a(x, 1), p_bool(p, "invert")),
        "jnp.union1d" => jnp::union1d(x0(), a(x, 1), size, fill_f),
        "jnp.intersect1d" => jnp::intersect1d(x0(), a(x, 1), size, fill_f),
        "jnp.setdiff1d" => jnp::setdiff1d(x0(), a(x, 1), size, fill_f),
        "jnp.setxor1d" => jnp::setxor1d(x0(), a(x, 1)),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jnp_reductions_match_jax() {
    check_file("jnp_reductions", apply);
}

/// Data-dependent sizes under a trace panic, naming `size=`.
#[test]
fn unique_without_size_under_jit_names_size() {
    let x = Array::from_vec(vec![3i32, 1, 3], &[3]);
    let r = std::panic::catch_unwind(|| {
        jit(|x: Array| jnp::unique_values(&x, None, None)).call(x.clone())
    });
    let msg = r.err().and_then(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
    });
    let msg = msg.expect("a panic");
    assert!(msg.contains("size="), "{msg}");
    assert!(msg.contains("unique"), "{msg}");
}
