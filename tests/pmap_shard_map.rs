//! pmap and shard_map agree: the same per-device functions (elementwise, a data-parallel
//! gradient step with `pmean`, `all_gather`, a `ppermute` ring, `axis_index`, `all_to_all`)
//! written with `pmap` (`#[pmap]` and `pmap(f)`) and with `shard_map` over a 1-D mesh of the
//! 8 devices, as README's "From pmap to shard_map" spells them, give the same values and the
//! same gradients.

mod common;

use jaxrs::prelude::*;
use jaxrs::{all_to_all, shard_map, Mesh, P};

const N: usize = 8;

fn mesh() -> Mesh {
    jaxrs::set_cpu_device_count(N).expect("8 CPU devices");
    jaxrs::make_mesh(&[N], &["d"]).unwrap()
}

/// `sin(0.37 k + seed)` in `shape`.
fn input(shape: &[usize], seed: f64) -> Array {
    let n = shape.iter().product::<usize>();
    (Array::arange(0.0, n as f64, 1.0, DType::F32) * 0.37 + seed)
        .sin()
        .reshape(shape)
}

/// `got` equals `want` to 1e-5 (see `common::assert_agree`).
fn assert_close(what: &str, got: &Array, want: &Array) {
    common::assert_agree(what, got, want, "pmap");
}

/// A scalar loss of a result, with distinct weights so that a misplaced element shows.
fn loss_of(y: &Array) -> Array {
    let n = y.size();
    let w = (Array::arange(0.0, n as f64, 1.0, DType::F32) * 0.7)
        .cos()
        .reshape(y.shape());
    (y.sin() * w).sum(None, false)
}

/// The per-device functions, over one device's slice (pmap's per-device shapes: the mapped
/// axis removed).
fn per_device(name: &str, x: &Array) -> Array {
    match name {
        "elementwise" => x.sin() * 2.0 + 1.0,
        "all_gather" => all_gather(x, "d", 0, false) * (axis_index("d").astype(DType::F32) + 1.0),
        "ppermute" => {
            let ring: Vec<(usize, usize)> = (0..N).map(|k| (k, (k + 1) % N)).collect();
            ppermute(x, "d", &ring) * x
        }
        "axis_index" => x * axis_index("d").astype(DType::F32),
        "all_to_all" => all_to_all(x, "d", 0, 1, false),
        "psum" => x / psum(&x.exp(), "d"),
        other => panic!("no function {other}"),
    }
}

/// Each function's argument: the devices' slices stacked along the leading axis.
fn argument(name: &str) -> Array {
    match name {
        "all_to_all" => input(&[N, N, 3], 0.5),
        _ => input(&[N, 3], 0.25),
    }
}

const FUNCTIONS: [&str; 6] = [
    "elementwise",
    "all_gather",
    "ppermute",
    "axis_index",
    "all_to_all",
    "psum",
];

/// `pmap(f)`: the mapped axis split over the devices, one slice each.
fn with_pmap(name: &'static str, x: Array) -> Array {
    pmap(move |x: Array| per_device(name, &x))
        .axis_name("d")
        .call(x)
}

/// The same with shard_map: each device's piece keeps the leading axis (of length 1), which
/// the body drops and puts back, and `P!["d"]` splits that axis over the mesh.
fn with_shard_map(name: &'static str, mesh: &Mesh, x: Array) -> Array {
    shard_map(move |x: Array| per_device(name, &x.squeeze([0])).expand_dims(0))
        .mesh(mesh)
        .in_specs(P!["d"])
        .out_specs(P!["d"])
        .call(x)
}

#[test]
fn the_same_functions_give_the_same_values_and_gradients() {
    let mesh = mesh();
    for name in FUNCTIONS {
        let x = argument(name);
        let by_pmap = with_pmap(name, x.clone());
        let by_shard_map = with_shard_map(name, &mesh, x.clone());
        assert_close(name, &by_shard_map, &by_pmap);
        // Inside a jit too (the shard_map part of the program, the pmap computed as a vmap).
        let m = mesh.clone();
        let jitted = jit(move |x: Array| with_shard_map(name, &m, x));
        assert_close(
            &format!("{name} in jit"),
            &jitted.call::<_, Array>(x.clone()),
            &by_pmap,
        );
        let g_pmap = grad(|x: Array| loss_of(&with_pmap(name, x)))(x.clone());
        let g_shard_map = grad(|x: Array| loss_of(&with_shard_map(name, &mesh, x)))(x.clone());
        assert_close(&format!("grad of {name}"), &g_shard_map, &g_pmap);
    }
}

#[derive(Tree, Clone)]
struct Params {
    b: Array,
    w: Array,
}

fn loss(p: &Params, x: &Array, y: &Array) -> Array {
    (x.matmul(&p.w) + &p.b - y).tanh().powi(2).mean(None, false)
}

/// One data-parallel step on a device's batch: the mean of the devices' gradients and losses.
fn step(p: &Params, x: &Array, y: &Array) -> (Params, Array) {
    let (l, g) = value_and_grad(|p: Params| loss(&p, x, y))(p.clone());
    let g = pmean(&g, "d");
    let new = Params {
        b: &p.b - pmean(&g.b, "d") * 0.1,
        w: &p.w - g.w * 0.1,
    };
    (new, pmean(&l, "d"))
}

/// The step with `#[pmap]`: the parameters the same on every device (`in_axes = None`), the
/// batch split; the results come back stacked, one copy per device.
#[pmap(axis_name = "d", in_axes = (None, 0, 0))]
fn pmapped_step(p: &Params, x: &Array, y: &Array) -> (Params, Array) {
    step(p, x, y)
}

#[test]
fn a_data_parallel_step_agrees() {
    let mesh = mesh();
    let p = Params {
        b: input(&[2], 0.1) * 0.1,
        w: input(&[3, 2], 0.2),
    };
    let x = input(&[N * 4, 3], 0.3);
    let y = input(&[N * 4, 2], 0.4);
    // pmap takes the batch as [devices, per-device batch, ..].
    let (p_pmap, l_pmap) = pmapped_step(&p, &x.reshape([N, 4, 3]), &y.reshape([N, 4, 2]));
    // shard_map takes the global batch and gives back the replicated result once (P![]).
    let sharded = shard_map(|(p, x, y): (Params, Array, Array)| step(&p, &x, &y))
        .mesh(&mesh)
        .in_specs((P![], P!["d"], P!["d"]))
        .out_specs((P![], P![]));
    let (p_sm, l_sm): (Params, Array) = sharded.call((p.clone(), x.clone(), y.clone()));
    let first = |a: &Array| a.take(&Array::scalar(0i32), 0);
    assert_close("loss", &l_sm, &first(&l_pmap));
    assert_close("b", &p_sm.b, &first(&p_pmap.b));
    assert_close("w", &p_sm.w, &first(&p_pmap.w));
    // Every device holds the same parameters after the pmap step.
    assert_close(
        "w on device 7",
        &p_pmap.w.take(&Array::scalar(7i32), 0),
        &p_sm.w,
    );
    // And both are the step on the whole batch.
    let (l_all, g_all) = value_and_grad(|p: Params| loss(&p, &x, &y))(p.clone());
    assert_close("loss of the whole batch", &l_sm, &l_all);
    assert_close("w of the whole batch", &p_sm.w, &(&p.w - g_all.w * 0.1));

    // Gradients through both, with respect to the parameters and the data.
    let through_pmap = grad(|(p, x): (Params, Array)| {
        let (q, l) = pmapped_step(&p, &x.reshape([N, 4, 3]), &y.reshape([N, 4, 2]));
        loss_of(&q.w.take(&Array::scalar(0i32), 0)) + l.sum(None, false) / N as f64
    })((p.clone(), x.clone()));
    let through_shard_map = grad(|(p, x): (Params, Array)| {
        let (q, l): (Params, Array) = sharded.call((p, x, y.clone()));
        loss_of(&q.w) + l
    })((p.clone(), x.clone()));
    assert_close("grad b", &through_shard_map.0.b, &through_pmap.0.b);
    assert_close("grad w", &through_shard_map.0.w, &through_pmap.0.w);
    assert_close("grad x", &through_shard_map.1, &through_pmap.1);
}
