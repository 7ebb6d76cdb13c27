//! The named-axis collectives (and lax's `pshuffle`, `pswapaxes`, `pbroadcast` over them)
//! against JAX 0.10.2 (`tests/golden/collectives.json`, made by
//! `gen_collectives.py`): under `vmap_named` their values, JVPs and VJPs (of the batched
//! function, and taken inside the vmap, where the collectives' own rules run), nested vmaps
//! with the collective over the outer or the inner name; `check_grads` through a psum; the
//! unknown-axis error; and the same programs lowered to StableHLO collectives, compiled for
//! 8 replicas and run on 8 CPU devices.

mod common;

use common::golden::{array, first_mismatch};
use jaxrs::internals::axes::with_named_axis;
use jaxrs::internals::{client, compile_options, lower_jaxpr, LowerOptions};
use jaxrs::lax;
use jaxrs::prelude::*;
use jaxrs::{
    all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter, Tree,
};
use serde_json::Value;
use std::sync::OnceLock;

const RTOL: f64 = 2e-5;
const ATOL: f64 = 2e-6;

/// Every test asks for 8 CPU devices before anything creates the client (the replica test
/// needs them; the device count is fixed when the client starts).
fn devices8() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
}

fn golden() -> &'static Value {
    static G: OnceLock<Value> = OnceLock::new();
    G.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/collectives.json"
        ))
        .expect("tests/golden/collectives.json");
        serde_json::from_str(&text).expect("valid JSON")
    })
}

fn close(what: &str, got: &Array, want: &Value) {
    let want_arr = array(want);
    assert_eq!(got.shape(), want_arr.shape(), "{what}: shape");
    if let Some((i, g, w)) = first_mismatch(&got.to_f64_vec(), &want_arr.to_f64_vec(), RTOL, ATOL) {
        panic!("{what}: element {i} is {g}, JAX gives {w}");
    }
}

fn perm(params: &Value) -> Vec<(usize, usize)> {
    params["perm"]
        .as_array()
        .expect("perm")
        .iter()
        .map(|p| {
            (
                p[0].as_u64().expect("src") as usize,
                p[1].as_u64().expect("dst") as usize,
            )
        })
        .collect()
}

/// The per-example function of a case: the collective applied to `sin(x)` (axis_index:
/// `x * index`), as in gen_collectives.py.
fn collective(op: &str, params: &Value, name: &str, x: &Array) -> Array {
    let y = x.sin();
    match op {
        "psum" => psum(&y, name),
        "pmean" => pmean(&y, name),
        "pmax" => pmax(&y, name),
        "pmin" => pmin(&y, name),
        "all_gather" => all_gather(
            &y,
            name,
            params["axis"].as_i64().expect("axis"),
            params["tiled"].as_bool().expect("tiled"),
        ),
        "psum_scatter" => psum_scatter(
            &y,
            name,
            params["scatter_dimension"].as_i64().expect("dim"),
            params["tiled"].as_bool().expect("tiled"),
        ),
        "ppermute" => ppermute(&y, name, &perm(params)),
        "all_to_all" => all_to_all(
            &y,
            name,
            params["split_axis"].as_i64().expect("split_axis"),
            params["concat_axis"].as_i64().expect("concat_axis"),
            params["tiled"].as_bool().expect("tiled"),
        ),
        "axis_index" => x * axis_index(name),
        "pshuffle" => {
            let perm: Vec<usize> = params["perm"]
                .as_array()
                .expect("perm")
                .iter()
                .map(|p| p.as_u64().expect("source") as usize)
                .collect();
            lax::pshuffle(&y, name, &perm)
        }
        "pswapaxes" => lax::pswapaxes(&y, name, params["axis"].as_i64().expect("axis")),
        "pbroadcast" => lax::pbroadcast(
            &y,
            name,
            params["source"].as_u64().expect("source") as usize,
        ),
        other => panic!("unknown collective {other}"),
    }
}

fn cases() -> &'static [Value] {
    golden()["cases"].as_array().expect("cases")
}

#[test]
fn values_and_derivatives_match_jax() {
    devices8();
    for case in cases() {
        let name = case["name"].as_str().expect("name");
        let op = case["op"].as_str().expect("op");
        let params = &case["params"];
        let f = |x: Array| collective(op, params, "i", &x);
        let batched = vmap_named(f, 0, 0, "i");
        let (x, t, ct) = (array(&case["x"]), array(&case["t"]), array(&case["ct"]));

        close(
            &format!("{name}: value"),
            &batched(x.clone()),
            &case["value"],
        );
        let (_, tangent) = jvp(&batched, &x, &t);
        close(&format!("{name}: jvp"), &tangent, &case["jvp"]);
        let (_, pullback) = vjp(&batched, &x);
        close(&format!("{name}: vjp"), &pullback.call(&ct), &case["vjp"]);

        // Derivatives taken per example, inside the vmap: the collectives' own rules.
        let jvp_inside = vmap_named(|(x, t): (Array, Array)| jvp(f, &x, &t).1, 0, 0, "i");
        close(
            &format!("{name}: jvp inside vmap"),
            &jvp_inside((x.clone(), t.clone())),
            &case["jvp_inside"],
        );
        if case.get("vjp_inside").is_some() {
            let vjp_inside =
                vmap_named(|(x, ct): (Array, Array)| vjp(f, &x).1.call(&ct), 0, 0, "i");
            close(
                &format!("{name}: vjp inside vmap"),
                &vjp_inside((x.clone(), ct.clone())),
                &case["vjp_inside"],
            );
        }
    }
}

#[test]
fn nested_vmaps_with_two_names_match_jax() {
    devices8();
    for case in golden()["nested"].as_array().expect("nested") {
        let name = case["name"].as_str().expect("name");
        let op = case["op"].as_str().expect("op");
        let over = case["over"].as_str().expect("over");
        let params = &case["params"];
        let inner = vmap_named(move |x: Array| collective(op, params, over, &x), 0, 0, "j");
        let batched = vmap_named(inner, 0, 0, "i");
        let x = array(&case["x"]);
        close(
            &format!("{name}: value"),
            &batched(x.clone()),
            &case["value"],
        );
        if let Some(want) = case.get("vjp").filter(|v| !v.is_null()) {
            let (_, pullback) = vjp(&batched, &x);
            close(
                &format!("{name}: vjp"),
                &pullback.call(&array(&case["ct"])),
                want,
            );
        }
    }
}

#[derive(Tree, Clone)]
struct Grads {
    w: Array,
}

#[test]
fn data_parallel_gradients_match_jax() {
    devices8();
    let g = &golden()["dp_grad"];
    let w = array(&g["w"]);
    let loss = |w: &Array, x: &Array| x.matmul(w).tanh().powi(2).sum(None, false);
    let step = vmap_named(
        |x: Array| {
            let grads = Grads {
                w: grad(|w: Array| loss(&w, &x))(w.clone()),
            };
            // pmean over a tree of gradients, psum of the loss.
            (pmean(&grads, "i"), psum(&loss(&w, &x), "i"))
        },
        0,
        0,
        "i",
    );
    let (grads, total) = step(array(&g["x"]));
    // Every example holds the same average; compare the first.
    close(
        "dp_grad: grad",
        &grads.w.take(&Array::scalar(0i32), 0),
        &g["grad"],
    );
    let total = total.to_vec::<f32>()[0] as f64;
    let want = g["total_loss"].as_f64().expect("total");
    assert!(
        (total - want).abs() < 1e-5 * want.abs(),
        "{total} vs {want}"
    );
}

#[test]
fn check_grads_through_psum_inside_vmap() {
    devices8();
    let x = Array::from_f64s(
        &[0.3, -1.2, 0.7, 2.0, -0.4, 1.1, 0.9, -0.8],
        &[4, 2],
        DType::F64,
    );
    let f = |x: Array| {
        vmap_named(
            |x: Array| {
                let s = psum(&x.sin(), "i");
                let m = pmean(&(&x * &x), "i");
                let g = all_gather(&x, "i", 0, false).sum(None, false);
                let p = ppermute(&x, "i", &[(0, 1), (1, 2), (2, 3), (3, 0)]);
                &s * &m + g * x.cos() + p.exp()
            },
            0,
            0,
            "i",
        )(x)
    };
    check_grads(f, &x, 2);
    // The per-example gradient taken inside the vmap as well.
    let per_example = |x: Array| {
        vmap_named(
            |x: Array| grad(|x: Array| (psum(&x, "i") * &x).tanh().sum(None, false))(x),
            0,
            0,
            "i",
        )(x)
    };
    check_grads(per_example, &x, 1);
}

fn panic_message(result: std::thread::Result<impl Sized>) -> String {
    let e = result.err().expect("a panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn an_unknown_axis_name_names_the_op_the_name_and_the_axes_in_scope() {
    devices8();
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let line = line!() + 2;
    let result =
        std::panic::catch_unwind(|| vmap_named(|x: Array| psum(&x, "j"), 0, 0, "i")(x.clone()));
    let msg = panic_message(result);
    assert!(
        msg.starts_with("psum: unknown axis name \"j\"; the named axes in scope are \"i\""),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("tests/collectives.rs:{line}")),
        "{msg}"
    );

    let result = std::panic::catch_unwind(|| axis_index("d"));
    let msg = panic_message(result);
    assert!(
        msg.starts_with("axis_index: unknown axis name \"d\"; no named axis is in scope"),
        "{msg}"
    );

    let nested = std::panic::catch_unwind(|| {
        let inner = vmap_named(|x: Array| pmax(&x, "k"), 0, 0, "j");
        vmap_named(inner, 0, 0, "i")(Array::zeros(&[2, 2], DType::F32))
    });
    let msg = panic_message(nested);
    assert!(
        msg.contains("pmax: unknown axis name \"k\"; the named axes in scope are \"i\", \"j\""),
        "{msg}"
    );
}

#[test]
fn the_macro_names_the_batch_axis() {
    devices8();
    #[vmap(axis_name = "batch")]
    fn share(x: &Array) -> Array {
        x / psum(x, "batch")
    }
    let y = share(&Array::from_vec(vec![1.0f32, 3.0], &[2]));
    assert_eq!(y.to_vec::<f32>(), vec![0.25, 0.75]);

    #[vmap(in_axes = (None, 0), axis_name = "i")]
    fn rank_weighted(scale: f32, x: &Array) -> Array {
        x * axis_index("i") * scale
    }
    let y = rank_weighted(2.0, &Array::from_vec(vec![1.0f32, 1.0, 1.0], &[3]));
    assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0, 4.0]);
}

#[test]
fn axis_index_inside_a_loop_with_unbatched_operands() {
    devices8();
    // The scan's operands are all unbatched, yet its body differs between examples.
    let f = vmap_named(
        |x: Array| {
            fori_loop(
                0,
                3,
                |_, acc: Array| acc + axis_index("i").astype(DType::F32),
                Array::scalar(0.0f32),
            ) + x * 0.0
        },
        0,
        0,
        "i",
    );
    let y = f(Array::zeros(&[4], DType::F32));
    assert_eq!(y.to_vec::<f32>(), vec![0.0, 3.0, 6.0, 9.0]);
}

// ---- Lowered to replicas: one program, 8 replicas on 8 CPU devices. ----

/// Runs `f` (one member's function of some f32 arrays) as a replicated program: traced with
/// the axis "i" of 8 members in scope, lowered with `num_replicas = 8`, run with member `d`'s
/// slices of `xs` (along their leading axis) on device `d`. Returns the 8 results stacked.
fn on_replicas(f: impl FnOnce(Vec<Array>) -> Array, xs: &[Array]) -> Array {
    const N: usize = 8;
    assert_eq!(jaxrs::local_device_count(), N, "8 CPU devices");
    let member = |x: &Array, d: usize| x.take(&Array::scalar(d as i32), 0);
    let example: Vec<Array> = xs.iter().map(|x| member(x, 0)).collect();
    let closed = with_named_axis("i", N, || make_jaxpr(f, &example));
    let module = lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            num_replicas: N,
            num_partitions: 1,
            ..Default::default()
        },
    );
    let client = client();
    let devices: Vec<_> = client.devices()[..N].to_vec();
    let mut options = compile_options();
    options.num_replicas = N as i64;
    options.device_assignment = Some(devices.iter().map(|d| vec![d.id() as i64]).collect());
    let exe = client
        .compile(&module, &options)
        .unwrap_or_else(|e| panic!("{e}\n{module}"));
    let upload = |a: &Array, device| {
        let bytes: Vec<u8> = a
            .to_vec::<f32>()
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let dims: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
        client
            .buffer_from_host(&bytes, DType::F32, &dims, device)
            .expect("upload")
    };
    let args: Vec<Vec<_>> = devices
        .iter()
        .enumerate()
        .map(|(d, device)| {
            let mut list: Vec<_> = closed.consts.iter().map(|c| upload(c, device)).collect();
            list.extend(xs.iter().map(|x| upload(&member(x, d), device)));
            list
        })
        .collect();
    let arg_refs: Vec<Vec<_>> = args.iter().map(|l| l.iter().collect()).collect();
    let outs = exe.execute(&arg_refs, &[]).expect("execute");
    let out_aval = &closed.jaxpr.out_avals()[0];
    let mut values = Vec::new();
    for per_device in &outs {
        let buffer = &per_device[0];
        let mut bytes = vec![0u8; out_aval.shape.iter().product::<usize>() * 4];
        buffer.copy_to_host(&mut bytes).expect("read back");
        values.extend(
            bytes
                .chunks(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    let mut shape = vec![N];
    shape.extend(&out_aval.shape);
    Array::from_vec(values, &shape)
}

#[test]
fn replica_lowered_collectives_give_jaxs_numbers_on_8_devices() {
    devices8();
    for case in cases() {
        let name = case["name"].as_str().expect("name");
        let op = case["op"].as_str().expect("op");
        let params = &case["params"];
        let x = array(&case["x"]);
        let value = on_replicas(
            |x| collective(op, params, "i", &x[0]),
            std::slice::from_ref(&x),
        );
        close(
            &format!("{name} on replicas: value"),
            &value,
            &case["value"],
        );
        if case.get("vjp_inside").is_some() {
            // The transposed collective, lowered too.
            let ct = array(&case["ct"]);
            let got = on_replicas(
                |args| {
                    vjp(|x: Array| collective(op, params, "i", &x), &args[0])
                        .1
                        .call(&args[1])
                },
                &[x.clone(), ct],
            );
            close(
                &format!("{name} on replicas: vjp inside"),
                &got,
                &case["vjp_inside"],
            );
        }
    }
}

#[test]
fn lowered_collectives_are_the_stablehlo_ops() {
    devices8();
    let example = Array::zeros(&[4, 3], DType::F32);
    let closed = with_named_axis("i", 4, || {
        make_jaxpr(
            |x: Array| {
                let s = psum(&x, "i");
                let g = all_gather(&x, "i", 0, true);
                let r = psum_scatter(&x, "i", 0, false);
                let p = ppermute(&x, "i", &[(0, 1), (1, 0)]);
                let t = all_to_all(&x, "i", 0, 1, true);
                (s, g, r, p, t, axis_index("i"))
            },
            &example,
        )
    });
    let text = lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            num_replicas: 4,
            ..Default::default()
        },
    );
    for piece in [
        "\"stablehlo.all_reduce\"",
        "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>",
        "\"stablehlo.all_gather\"",
        "all_gather_dim = 0 : i64",
        "\"stablehlo.reduce_scatter\"",
        "scatter_dimension = 0 : i64",
        "\"stablehlo.collective_permute\"",
        "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>",
        "\"stablehlo.all_to_all\"",
        "split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 4 : i64",
        "\"stablehlo.replica_id\"",
        "mhlo.num_replicas = 4",
    ] {
        assert!(text.contains(piece), "no `{piece}` in\n{text}");
    }
    let printed = closed.jaxpr.to_string();
    assert!(
        printed.contains("psum[axis_name=i axis_size=4]"),
        "{printed}"
    );
}

#[test]
fn jit_inside_vmap_named_sees_each_batch_size() {
    devices8();
    let total = jit(|x: Array| psum(&x, "i"));
    let f = vmap_named(|x: Array| total.call::<_, Array>(x), 0, 0, "i");
    assert_eq!(
        f(Array::ones(&[4], DType::F32)).to_vec::<f32>(),
        vec![4.0; 4]
    );
    assert_eq!(
        f(Array::ones(&[8], DType::F32)).to_vec::<f32>(),
        vec![8.0; 8]
    );
    let result = std::panic::catch_unwind(|| total.call::<_, Array>(Array::ones(&[2], DType::F32)));
    let msg = panic_message(result);
    assert!(msg.contains("psum: unknown axis name \"i\""), "{msg}");
}

#[test]
fn a_repeated_name_means_the_innermost_axis() {
    devices8();
    let inner = vmap_named(|x: Array| psum(&x, "i"), 0, 0, "i");
    let outer = vmap_named(inner, 0, 0, "i");
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 10.0, 20.0, 30.0], &[2, 3]);
    assert_eq!(
        outer(x).to_vec::<f32>(),
        vec![6.0, 6.0, 6.0, 60.0, 60.0, 60.0]
    );
}

#[test]
fn a_vmap_inside_the_replicated_program_keeps_the_outer_collective() {
    devices8();
    // Micro-batches of 2 per device, reduced over the devices and within each device.
    let per_member = |x: &Array| {
        vmap_named(
            |r: Array| psum(&r.sin(), "i") * pmax(&r, "j") + axis_index("i"),
            0,
            0,
            "j",
        )(x.clone())
    };
    let xs = Array::from_f64s(
        &(0..48).map(|k| (k as f64 * 0.37).sin()).collect::<Vec<_>>(),
        &[8, 2, 3],
        DType::F32,
    );
    let on_devices = on_replicas(|x| per_member(&x[0]), std::slice::from_ref(&xs));
    let on_one = vmap_named(|x: Array| per_member(&x), 0, 0, "i")(xs);
    let (got, want) = (on_devices.to_vec::<f32>(), on_one.to_vec::<f32>());
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "{got:?}\n{want:?}");
    }
}
