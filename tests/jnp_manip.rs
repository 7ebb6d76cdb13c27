//! `jaxrs::numpy`'s array creation and manipulation functions against JAX 0.10.2
//! (`tests/golden/jnp_manip.json`, written by `tests/golden/gen_jnp_manip.py`): values eagerly
//! and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis first and last
//! (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_f64, p_i64, p_i64s, p_opt_i64, p_opt_i64s, p_str};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::numpy::{IndexMode, Indexing, PadMode, PadOptions, PadValues, ReflectType};
use jaxrs::prelude::*;
use serde_json::Value;

fn dt(p: &Value) -> Option<DType> {
    p.get("dtype")
        .and_then(Value::as_str)
        .map(|s| DType::from_name(s).expect("dtype"))
}

fn usizes(p: &Value, key: &str) -> Vec<usize> {
    p_i64s(p, key).into_iter().map(|v| v as usize).collect()
}

fn ints_array(v: Vec<usize>) -> Array {
    let n = v.len();
    Array::from_vec(v.into_iter().map(|d| d as i64).collect::<Vec<_>>(), &[n])
}

fn pairs(p: &Value, key: &str) -> Vec<(f64, f64)> {
    p[key]
        .as_array()
        .unwrap_or_else(|| panic!("param {key}"))
        .iter()
        .map(|pr| (pr[0].as_f64().unwrap(), pr[1].as_f64().unwrap()))
        .collect()
}

fn mode(p: &Value) -> IndexMode {
    match p.get("mode").and_then(Value::as_str) {
        Some("clip") => IndexMode::Clip,
        Some("wrap") => IndexMode::Wrap,
        _ => IndexMode::Raise,
    }
}

fn take_options(p: &Value) -> jnp::TakeOptions {
    jnp::TakeOptions {
        mode: match p.get("mode").and_then(Value::as_str) {
            Some("clip") => TakeMode::Clip,
            Some("wrap") => TakeMode::Wrap,
            _ => TakeMode::Fill,
        },
        fill_value: p.get("fill_value").and_then(Value::as_f64),
    }
}

fn arrays(x: &[In]) -> Vec<&Array> {
    (0..x.len()).map(|i| a(x, i)).collect()
}

fn pad_options(p: &Value) -> PadOptions {
    let mode = match p_str(p, "mode") {
        "constant" => PadMode::Constant,
        "edge" => PadMode::Edge,
        "linear_ramp" => PadMode::LinearRamp,
        "maximum" => PadMode::Maximum,
        "mean" => PadMode::Mean,
        "median" => PadMode::Median,
        "minimum" => PadMode::Minimum,
        "reflect" => PadMode::Reflect,
        "symmetric" => PadMode::Symmetric,
        "wrap" => PadMode::Wrap,
        "empty" => PadMode::Empty,
        other => panic!("pad mode {other}"),
    };
    let values = |key: &str| {
        p.get(key)
            .map_or(PadValues::default(), |_| pairs(p, key).into())
    };
    PadOptions {
        mode,
        constant_values: values("constant_values"),
        end_values: values("end_values"),
        reflect_type: if p.get("reflect_type").is_some() {
            ReflectType::Odd
        } else {
            ReflectType::Even
        },
        stat_length: p_opt_i64(p, "stat_length").map(|v| v as usize),
    }
}

fn split_case(p: &Value, f: impl Fn(jnp::SplitSpec) -> Vec<Array>) -> Vec<Array> {
    match p_opt_i64(p, "sections") {
        Some(k) => f(jnp::SplitSpec::Sections(k as usize)),
        None => f(jnp::SplitSpec::Indices(p_i64s(p, "indices"))),
    }
}

/// A `SplitSpec` given straight to the split functions.
struct Spec(jnp::SplitSpec);

impl jnp::IndicesOrSections for Spec {
    fn split_spec(self) -> jnp::SplitSpec {
        self.0
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let one = |y: Array| vec![y];
    let axis = || p_opt_i64(p, "axis");
    match op {
        "jnp.zeros" => one(jnp::zeros(&usizes(p, "shape"), dt(p))),
        "jnp.ones" => one(jnp::ones(&usizes(p, "shape"), dt(p))),
        "jnp.empty" => one(jnp::empty(&usizes(p, "shape"), dt(p))),
        "jnp.full" => one(match p_opt_i64(p, "fill_int") {
            Some(v) => jnp::full(&usizes(p, "shape"), v, dt(p)),
            None => jnp::full(&usizes(p, "shape"), p_f64(p, "fill"), dt(p)),
        }),
        "jnp.arange" => one(if p.get("fstart").is_some() {
            jnp::arange(
                p_f64(p, "fstart"),
                Some(p_f64(p, "stop")),
                Some(p_f64(p, "step")),
                dt(p),
            )
        } else {
            jnp::arange(
                p_i64(p, "start"),
                p_opt_i64(p, "stop"),
                p_opt_i64(p, "step"),
                dt(p),
            )
        }),
        "jnp.linspace" => one(jnp::linspace(
            p_f64(p, "start"),
            p_f64(p, "stop"),
            p_i64(p, "num") as usize,
            p_bool(p, "endpoint"),
            dt(p),
        )),
        "jnp.logspace" => one(jnp::logspace(
            p_f64(p, "start"),
            p_f64(p, "stop"),
            p_i64(p, "num") as usize,
            p_bool(p, "endpoint"),
            p_f64(p, "base"),
            dt(p),
        )),
        "jnp.geomspace" => one(jnp::geomspace(
            p_f64(p, "start"),
            p_f64(p, "stop"),
            p_i64(p, "num") as usize,
            p_bool(p, "endpoint"),
            dt(p),
        )),
        "jnp.eye" => one(jnp::eye(
            p_i64(p, "n") as usize,
            p_opt_i64(p, "m").map(|m| m as usize),
            p_i64(p, "k"),
            dt(p),
        )),
        "jnp.identity" => one(jnp::identity(p_i64(p, "n") as usize, dt(p))),
        "jnp.tri" => one(jnp::tri(
            p_i64(p, "n") as usize,
            p_opt_i64(p, "m").map(|m| m as usize),
            p_i64(p, "k"),
            dt(p),
        )),
        "jnp.tril_indices" => {
            let (r, c) = jnp::tril_indices(
                p_i64(p, "n") as usize,
                p_i64(p, "k"),
                p_opt_i64(p, "m").map(|m| m as usize),
            );
            vec![r, c]
        }
        "jnp.triu_indices" => {
            let (r, c) = jnp::triu_indices(
                p_i64(p, "n") as usize,
                p_i64(p, "k"),
                p_opt_i64(p, "m").map(|m| m as usize),
            );
            vec![r, c]
        }
        "jnp.diag_indices" => jnp::diag_indices(p_i64(p, "n") as usize, p_i64(p, "ndim") as usize),
        "jnp.mask_indices" => {
            let (r, c) = jnp::mask_indices(p_i64(p, "n") as usize, jnp::triu, p_i64(p, "k"));
            vec![r, c]
        }
        "jnp.indices" => one(jnp::indices(&usizes(p, "dims"), dt(p))),
        "jnp.zeros_like" => one(jnp::zeros_like(a(x, 0), dt(p))),
        "jnp.ones_like" => one(jnp::ones_like(a(x, 0), dt(p))),
        "jnp.empty_like" => one(jnp::empty_like(a(x, 0), dt(p))),
        "jnp.full_like" => one(jnp::full_like(a(x, 0), p_f64(p, "fill"), dt(p))),
        "jnp.array" => one(jnp::array(a(x, 0), dt(p))),
        "jnp.asarray" => one(jnp::asarray(a(x, 0), dt(p))),
        "jnp.copy" => one(jnp::copy(a(x, 0))),
        "jnp.shape" => one(ints_array(jnp::shape(a(x, 0)))),
        "jnp.ndim" => one(Array::scalar(jnp::ndim(a(x, 0)) as i64)),
        "jnp.size" => one(Array::scalar(jnp::size(a(x, 0)) as i64)),
        "jnp.reshape" => one(jnp::reshape(a(x, 0), p_i64s(p, "shape"))),
        "jnp.ravel" => one(jnp::ravel(a(x, 0))),
        "jnp.transpose" => one(match p_opt_i64s(p, "axes") {
            Some(ax) => jnp::transpose(a(x, 0), ax),
            None => jnp::transpose(a(x, 0), None),
        }),
        "jnp.permute_dims" => one(jnp::permute_dims(a(x, 0), p_i64s(p, "axes"))),
        "jnp.matrix_transpose" => one(jnp::matrix_transpose(a(x, 0))),
        "jnp.swapaxes" => one(jnp::swapaxes(a(x, 0), p_i64(p, "a"), p_i64(p, "b"))),
        "jnp.moveaxis" => one(jnp::moveaxis(a(x, 0), p_i64s(p, "src"), p_i64s(p, "dst"))),
        "jnp.rollaxis" => one(jnp::rollaxis(a(x, 0), p_i64(p, "axis"), p_i64(p, "start"))),
        "jnp.expand_dims" => one(jnp::expand_dims(a(x, 0), p_i64s(p, "axis"))),
        "jnp.squeeze" => one(match p_opt_i64s(p, "axis") {
            Some(ax) => jnp::squeeze(a(x, 0), ax),
            None => jnp::squeeze(a(x, 0), None),
        }),
        "jnp.atleast_1d" => one(jnp::atleast_1d(a(x, 0))),
        "jnp.atleast_2d" => one(jnp::atleast_2d(a(x, 0))),
        "jnp.atleast_3d" => one(jnp::atleast_3d(a(x, 0))),
        "jnp.broadcast_to" => one(jnp::broadcast_to(a(x, 0), &usizes(p, "shape"))),
        "jnp.broadcast_arrays" => jnp::broadcast_arrays(&arrays(x)),
        "jnp.broadcast_shapes" => {
            let shapes: Vec<Vec<usize>> = p["shapes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    s.as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_u64().unwrap() as usize)
                        .collect()
                })
                .collect();
            let refs: Vec<&[usize]> = shapes.iter().map(|s| &s[..]).collect();
            one(ints_array(jnp::broadcast_shapes(&refs)))
        }
        "jnp.resize" => one(jnp::resize(a(x, 0), &usizes(p, "shape"))),
        "jnp.concatenate" => one(jnp::concatenate(&arrays(x), axis())),
        "jnp.append" => one(jnp::append(a(x, 0), a(x, 1), axis())),
        "jnp.concat" => one(jnp::concat(&arrays(x), axis())),
        "jnp.stack" => one(jnp::stack(&arrays(x), p_i64(p, "axis"))),
        "jnp.vstack" => one(jnp::vstack(&arrays(x))),
        "jnp.hstack" => one(jnp::hstack(&arrays(x))),
        "jnp.dstack" => one(jnp::dstack(&arrays(x))),
        "jnp.column_stack" => one(jnp::column_stack(&arrays(x))),
        "jnp.block" => one(jnp::block(&[
            vec![a(x, 0), a(x, 1)],
            vec![a(x, 2), a(x, 3)],
        ])),
        "jnp.split" => split_case(p, |s| jnp::split(a(x, 0), Spec(s), p_i64(p, "axis"))),
        "jnp.array_split" => {
            split_case(p, |s| jnp::array_split(a(x, 0), Spec(s), p_i64(p, "axis")))
        }
        "jnp.hsplit" => split_case(p, |s| jnp::hsplit(a(x, 0), Spec(s))),
        "jnp.vsplit" => split_case(p, |s| jnp::vsplit(a(x, 0), Spec(s))),
        "jnp.dsplit" => split_case(p, |s| jnp::dsplit(a(x, 0), Spec(s))),
        "jnp.unstack" => jnp::unstack(a(x, 0), p_i64(p, "axis")),
        "jnp.flip" => one(match p_opt_i64s(p, "axis") {
            Some(ax) => jnp::flip(a(x, 0), ax),
            None => jnp::flip(a(x, 0), None),
        }),
        "jnp.fliplr" => one(jnp::fliplr(a(x, 0))),
        "jnp.flipud" => one(jnp::flipud(a(x, 0))),
        "jnp.rot90" => {
            let ax = p_i64s(p, "axes");
            one(jnp::rot90(a(x, 0), p_i64(p, "k"), (ax[0], ax[1])))
        }
        "jnp.roll" => one(match p_opt_i64s(p, "axis") {
            Some(ax) => jnp::roll(a(x, 0), p_i64s(p, "shift"), ax),
            None => jnp::roll(a(x, 0), p_i64s(p, "shift"), None),
        }),
        "jnp.repeat" => {
            let total = p_opt_i64(p, "total").map(|t| t as usize);
            one(if x.len() == 2 {
                jnp::repeat(a(x, 0), a(x, 1), axis(), total)
            } else if let Some(list) = p_opt_i64s(p, "repeats_list") {
                jnp::repeat(a(x, 0), list, axis(), total)
            } else {
                jnp::repeat(a(x, 0), p_i64(p, "repeats"), axis(), total)
            })
        }
        "jnp.tile" => one(jnp::tile(a(x, 0), p_i64s(p, "reps"))),
        "jnp.diag" => one(jnp::diag(a(x, 0), p_i64(p, "k"))),
        "jnp.diagflat" => one(jnp::diagflat(a(x, 0), p_i64(p, "k"))),
        "jnp.diagonal" => one(jnp::diagonal(
            a(x, 0),
            p_i64(p, "offset"),
            p_i64(p, "axis1"),
            p_i64(p, "axis2"),
        )),
        "jnp.diag_indices_from" => jnp::diag_indices_from(a(x, 0)),
        "jnp.fill_diagonal" => one(if x.len() == 2 {
            jnp::fill_diagonal(a(x, 0), a(x, 1), false)
        } else {
            jnp::fill_diagonal(a(x, 0), p_f64(p, "val"), false)
        }),
        "jnp.tril" => one(jnp::tril(a(x, 0), p_i64(p, "k"))),
        "jnp.triu" => one(jnp::triu(a(x, 0), p_i64(p, "k"))),
        "jnp.tril_indices_from" => {
            let (r, c) = jnp::tril_indices_from(a(x, 0), p_i64(p, "k"));
            vec![r, c]
        }
        "jnp.triu_indices_from" => {
            let (r, c) = jnp::triu_indices_from(a(x, 0), p_i64(p, "k"));
            vec![r, c]
        }
        "jnp.meshgrid" => {
            let indexing = if p_str(p, "indexing") == "ij" {
                Indexing::Ij
            } else {
                Indexing::Xy
            };
            jnp::meshgrid(&arrays(x), indexing, p_bool(p, "sparse"))
        }
        "jnp.ix_" => jnp::ix_(&arrays(x)),
        "jnp.vander" => one(jnp::vander(
            a(x, 0),
            p_opt_i64(p, "n").map(|n| n as usize),
            p_bool(p, "increasing"),
        )),
        "jnp.pad" => {
            let w: Vec<(usize, usize)> = pairs(p, "width")
                .into_iter()
                .map(|(l, h)| (l as usize, h as usize))
                .collect();
            one(jnp::pad(a(x, 0), w, pad_options(p)))
        }
        "jnp.delete" => one(match axis() {
            Some(ax) => jnp::delete(a(x, 0), p_i64s(p, "obj"), ax),
            None => jnp::delete(a(x, 0), p_i64s(p, "obj"), None),
        }),
        "jnp.insert" => {
            let obj = p_i64s(p, "obj");
            one(match (x.len(), axis()) {
                (2, ax) => jnp::insert(a(x, 0), obj, a(x, 1), ax),
                (_, ax) => jnp::insert(a(x, 0), obj, p_f64(p, "value"), ax),
            })
        }
        "jnp.trim_zeros" => one(jnp::trim_zeros(a(x, 0), p_str(p, "trim"))),
        "jnp.compress" => {
            let c: Vec<bool> = p_i64s(p, "cond").into_iter().map(|v| v != 0).collect();
            let n = c.len();
            let cond = Array::from_vec(c, &[n]);
            one(jnp::compress(&cond, a(x, 0), axis()))
        }
        "jnp.extract" => {
            let c: Vec<bool> = p_i64s(p, "cond").into_iter().map(|v| v != 0).collect();
            let cond = Array::from_vec(c, &usizes(p, "shape"));
            one(jnp::extract(&cond, a(x, 0)))
        }
        "jnp.where" => one(if x.len() == 3 {
            jnp::where_(a(x, 0), a(x, 1), a(x, 2))
        } else {
            jnp::where_(a(x, 0), a(x, 1), 0)
        }),
        "jnp.take" => one(jnp::take(
            a(x, 0),
            a(x, 1),
            p_opt_i64(p, "axis"),
            take_options(p),
        )),
        "jnp.take_along_axis" => one(jnp::take_along_axis(
            a(x, 0),
            a(x, 1),
            p_opt_i64(p, "axis"),
            take_options(p),
        )),
        "jnp.choose" => one(jnp::choose(a(x, 0), &arrays(&x[1..]), mode(p))),
        "jnp.select" => {
            let s = a(x, 0);
            if s.dtype().is_float() {
                let (c1, c2) = (s.gt(0.5), s.lt(-0.5));
                one(jnp::select(
                    &[&c1, &c2],
                    &[a(x, 1), a(x, 2)],
                    p_f64(p, "default"),
                ))
            } else {
                let (c1, c2) = (s.gt(0), s.lt(-1));
                let y2 = a(x, 1) * 2;
                one(jnp::select(
                    &[&c1, &c2],
                    &[a(x, 1), &y2],
                    p_i64(p, "default"),
                ))
            }
        }
        "jnp.ravel_multi_index" => one(jnp::ravel_multi_index(
            &arrays(x),
            &usizes(p, "dims"),
            mode(p),
        )),
        "jnp.unravel_index" => jnp::unravel_index(a(x, 0), &usizes(p, "shape")),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn jnp_manip_matches_jax() {
    check_file("jnp_manip", apply);
}
