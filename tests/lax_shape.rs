//! `jaxrs::lax`'s shape functions against JAX 0.10.2 (`tests/golden/lax_shape.json`, written
//! by `tests/golden/gen_lax_shape.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_f64, p_i64, p_i64s, p_opt_i64, p_opt_i64s, p_str};
use common::golden::In;
use jaxrs::lax;
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

fn ints_array(v: Vec<i64>, shape: &[usize]) -> Array {
    Array::from_vec(v, shape)
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let one = |y: Array| vec![y];
    match op {
        "lax.broadcast" => one(lax::broadcast(a(x, 0), &usizes(p, "sizes"))),
        "lax.broadcast_in_dim" => one(lax::broadcast_in_dim(
            a(x, 0),
            &usizes(p, "shape"),
            &usizes(p, "dims"),
        )),
        "lax.broadcast_like" => one(lax::broadcast_like(a(x, 0), a(x, 1))),
        "lax.shape_as_value" => one(lax::shape_as_value(&usizes(p, "shape"))),
        "lax.dtype" => {
            let dtype = match &x[0] {
                In::Arr(v) => lax::dtype(v),
                In::Float(v) => lax::dtype(*v),
                In::Int(v) => lax::dtype(*v),
                In::Bool(v) => lax::dtype(*v),
            };
            one(Array::zeros(&[], dtype))
        }
        "lax.broadcast_to_rank" => one(lax::broadcast_to_rank(a(x, 0), p_i64(p, "rank") as usize)),
        "lax.broadcast_shapes" => {
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
            let out: Vec<i64> = lax::broadcast_shapes(&refs)
                .into_iter()
                .map(|d| d as i64)
                .collect();
            let n = out.len();
            one(ints_array(out, &[n]))
        }
        "lax.broadcasted_iota" => one(lax::broadcasted_iota(
            dt(p).unwrap(),
            &usizes(p, "shape"),
            p_i64(p, "dim") as usize,
        )),
        "lax.iota" => one(lax::iota(dt(p).unwrap(), p_i64(p, "size") as usize)),
        "lax.collapse" => one(lax::collapse(
            a(x, 0),
            p_i64(p, "start") as usize,
            p_opt_i64(p, "stop").map(|s| s as usize),
        )),
        "lax.concatenate" => one(lax::concatenate(
            &[a(x, 0), a(x, 1)],
            p_i64(p, "dim") as usize,
        )),
        "lax.stack" => one(lax::stack(&[a(x, 0), a(x, 1)], p_i64(p, "axis"))),
        "lax.unstack" => lax::unstack(a(x, 0), p_i64(p, "axis")),
        "lax.split" => lax::split(a(x, 0), &usizes(p, "sizes"), p_i64(p, "axis")),
        "lax.pad" => {
            let cfg: Vec<(i64, i64, i64)> = p["config"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t[0].as_i64().unwrap(),
                        t[1].as_i64().unwrap(),
                        t[2].as_i64().unwrap(),
                    )
                })
                .collect();
            one(if x.len() == 2 {
                lax::pad(a(x, 0), a(x, 1), &cfg)
            } else if let Some(v) = p_opt_i64(p, "value_int") {
                lax::pad(a(x, 0), v as i32, &cfg)
            } else {
                lax::pad(a(x, 0), p_f64(p, "value"), &cfg)
            })
        }
        "lax.reshape" => {
            let dims = p_opt_i64s(p, "dims")
                .map(|d| d.into_iter().map(|v| v as usize).collect::<Vec<_>>());
            one(lax::reshape(a(x, 0), p_i64s(p, "shape"), dims.as_deref()))
        }
        "lax.rev" => one(lax::rev(a(x, 0), &usizes(p, "dims"))),
        "lax.slice" => {
            let strides = p_opt_i64s(p, "strides")
                .map(|d| d.into_iter().map(|v| v as usize).collect::<Vec<_>>());
            one(lax::slice(
                a(x, 0),
                &usizes(p, "start"),
                &usizes(p, "limit"),
                strides.as_deref(),
            ))
        }
        "lax.slice_in_dim" => one(lax::slice_in_dim(
            a(x, 0),
            p_opt_i64(p, "start"),
            p_opt_i64(p, "limit"),
            p_i64(p, "stride") as usize,
            p_i64(p, "axis"),
        )),
        "lax.index_in_dim" => one(lax::index_in_dim(
            a(x, 0),
            p_i64(p, "index"),
            p_i64(p, "axis"),
            p_bool(p, "keepdims"),
        )),
        "lax.dynamic_slice" => one(lax::dynamic_slice(
            a(x, 0),
            &[a(x, 1).clone(), a(x, 2).clone()],
            &usizes(p, "sizes"),
        )),
        "lax.dynamic_slice_in_dim" => one(if x.len() == 2 {
            lax::dynamic_slice_in_dim(
                a(x, 0),
                a(x, 1),
                p_i64(p, "size") as usize,
                p_i64(p, "axis"),
            )
        } else {
            lax::dynamic_slice_in_dim(
                a(x, 0),
                p_i64(p, "start"),
                p_i64(p, "size") as usize,
                p_i64(p, "axis"),
            )
        }),
        "lax.dynamic_index_in_dim" => one(if x.len() == 2 {
            lax::dynamic_index_in_dim(a(x, 0), a(x, 1), p_i64(p, "axis"), p_bool(p, "keepdims"))
        } else {
            lax::dynamic_index_in_dim(
                a(x, 0),
                p_i64(p, "index"),
                p_i64(p, "axis"),
                p_bool(p, "keepdims"),
            )
        }),
        "lax.dynamic_update_slice" => {
            let starts: Vec<Array> = x[2..]
                .iter()
                .map(|_| ())
                .enumerate()
                .map(|(k, _)| a(x, k + 2).clone())
                .collect();
            one(lax::dynamic_update_slice(a(x, 0), a(x, 1), &starts))
        }
        "lax.dynamic_update_slice_in_dim" => one(lax::dynamic_update_slice_in_dim(
            a(x, 0),
            a(x, 1),
            a(x, 2),
            p_i64(p, "axis"),
        )),
        "lax.dynamic_update_index_in_dim" => one(if x.len() == 3 {
            lax::dynamic_update_index_in_dim(a(x, 0), a(x, 1), a(x, 2), p_i64(p, "axis"))
        } else {
            lax::dynamic_update_index_in_dim(a(x, 0), a(x, 1), p_i64(p, "index"), p_i64(p, "axis"))
        }),
        "lax.expand_dims" => one(lax::expand_dims(a(x, 0), &p_i64s(p, "dims"))),
        "lax.squeeze" => one(lax::squeeze(a(x, 0), &p_i64s(p, "dims"))),
        "lax.transpose" => one(lax::transpose(a(x, 0), &usizes(p, "perm"))),
        "lax.tile" => one(lax::tile(a(x, 0), &usizes(p, "reps"))),
        "lax.full" => one(match p_opt_i64(p, "fill_int") {
            Some(v) => lax::full(&usizes(p, "shape"), v, dt(p)),
            None => lax::full(&usizes(p, "shape"), p_f64(p, "fill"), dt(p)),
        }),
        "lax.full_like" => {
            let shape = p_opt_i64s(p, "shape")
                .map(|d| d.into_iter().map(|v| v as usize).collect::<Vec<_>>());
            one(lax::full_like(
                a(x, 0),
                p_f64(p, "fill"),
                dt(p),
                shape.as_deref(),
            ))
        }
        "lax.empty" => one(lax::empty(&usizes(p, "shape"), dt(p).unwrap())),
        "lax.index_take" => {
            let idxs: Vec<&Array> = (1..x.len()).map(|k| a(x, k)).collect();
            one(lax::index_take(a(x, 0), &idxs, &usizes(p, "axes")))
        }
        "lax.padtype_to_pads" => {
            let pads = lax::padtype_to_pads(
                &usizes(p, "in"),
                &usizes(p, "window"),
                &usizes(p, "strides"),
                p_str(p, "padding"),
            );
            let n = pads.len();
            let flat: Vec<i64> = pads.into_iter().flat_map(|(l, h)| [l, h]).collect();
            one(ints_array(flat, &[n, 2]))
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn lax_shape_matches_jax() {
    check_file("lax_shape", apply);
}
