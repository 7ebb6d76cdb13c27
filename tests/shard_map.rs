//! `shard_map` on 8 CPU devices against JAX 0.10.2 (`tests/golden/shard_map.json`, made by
//! `tests/golden/gen_shard_map.py`): every collective inside it over each mesh axis, a
//! collective matmul, captured arrays, trees, calls inside and outside `jit`; the program's
//! form (`sdy.manual_computation` with SPMD collectives); and the errors that name the
//! problem.

mod common;

use jaxrs::prelude::*;
use jaxrs::{
    all_gather, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter, shard_map, P,
};
use serde_json::Value;

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/shard_map.json"
    ))
    .expect("tests/golden/shard_map.json (run tests/golden/gen_shard_map.py)");
    serde_json::from_str(&text).expect("valid JSON")
}

fn mesh() -> jaxrs::Mesh {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::make_mesh(&[2, 4], &["x", "y"]).unwrap()
}

fn arange(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::arange(0.0, n as f64, 1.0, DType::F32).reshape(shape)
}

/// The program `name` of the golden file, run with jaxrs; its outputs' leaves.
fn run(name: &str, mesh: &jaxrs::Mesh) -> Vec<Array> {
    let a = || arange(&[4, 8]);
    match name {
        "psum_y" => vec![shard_map(|a: Array| psum(&a, "y"))
            .mesh(mesh)
            .in_specs(P!["x", "y"])
            .out_specs(P!["x", None])
            .call(a())],
        "psum_x" => vec![shard_map(|a: Array| psum(&a, "x"))
            .mesh(mesh)
            .in_specs(P!["x", "y"])
            .out_specs(P![None, "y"])
            .call(a())],
        "pmax_pmin" => {
            let (hi, lo): (Array, Array) = shard_map(|a: Array| (pmax(&a, "y"), pmin(&a, "x")))
                .mesh(mesh)
                .in_specs(P!["x", "y"])
                .out_specs((P!["x", None], P![None, "y"]))
                .call(a());
            vec![hi, lo]
        }
        "pmean_y" => vec![shard_map(|a: Array| pmean(&(&a * &a), "y"))
            .mesh(mesh)
            .in_specs(P!["x", "y"])
            .out_specs(P!["x"])
            .call(a())],
        "all_gather_x_tiled" => vec![shard_map(|b: Array| all_gather(&b, "x", 0, true))
            .mesh(mesh)
            .in_specs(P!["x"])
            .out_specs(P!["x"])
            .call(arange(&[2, 3]))],
        "all_gather_y_stacked" => vec![shard_map(|b: Array| all_gather(&b, "y", 1, false))
            .mesh(mesh)
            .in_specs(P![None, "y"])
            .out_specs(P![None, None, "y"])
            .call(arange(&[3, 8]))],
        "psum_scatter_y" => vec![shard_map(|a: Array| psum_scatter(&a, "y", 1, true))
            .mesh(mesh)
            .in_specs(P!["x"])
            .out_specs(P!["x", "y"])
            .call(a())],
        "axis_index" => vec![shard_map(|a: Array| {
            let ix = axis_index("x").astype(DType::F32);
            let iy = axis_index("y").astype(DType::F32);
            &a + &(ix * 10.0) + iy
        })
        .mesh(mesh)
        .in_specs(P!["x", "y"])
        .out_specs(P!["x", "y"])
        .call(a())],
        "ppermute_y" => {
            let perm: Vec<(usize, usize)> = (0..4).map(|j| (j, (j + 1) % 4)).collect();
            vec![shard_map(move |a: Array| ppermute(&a, "y", &perm))
                .mesh(mesh)
                .in_specs(P!["x", "y"])
                .out_specs(P!["x", "y"])
                .call(a())]
        }
        "ppermute_x_partial" => vec![shard_map(|a: Array| ppermute(&a, "x", &[(0, 1)]))
            .mesh(mesh)
            .in_specs(P!["x", "y"])
            .out_specs(P!["x", "y"])
            .call(a())],
        "matmul_psum" => vec![shard_map(|(x, w): (Array, Array)| psum(&x.matmul(&w), "y"))
            .mesh(mesh)
            .in_specs((P!["x", "y"], P!["y", None]))
            .out_specs(P!["x", None])
            .call((a(), arange(&[8, 3])))],
        "captured_and_scalar" => {
            let w = arange(&[8, 3]) / 10.0;
            let (y, total): (Array, Array) =
                shard_map(|a: Array| (a.matmul(&w), psum(&psum(&a.sum(None, false), "x"), "y")))
                    .mesh(mesh)
                    .in_specs(P!["x"])
                    .out_specs((P!["x"], P![]))
                    .call(a());
            vec![y, total]
        }
        "tree" => {
            // JAX's dict leaves in key order: ("u", "v") in, ("idx", "sum") out.
            let (idx, sum): (Array, Array) = shard_map(|(u, v): (Array, Array)| {
                let idx = axis_index("y").astype(DType::F32) + &v * 0.0;
                (idx, psum(&u, "x") + &v)
            })
            .mesh(mesh)
            .in_specs((P!["x", "y"], P![None, "y"]))
            .out_specs((P![None, "y"], P![None, "y"]))
            .call((arange(&[2, 8]), arange(&[1, 8])));
            vec![idx, sum]
        }
        other => panic!("no program {other}"),
    }
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn every_collective_inside_shard_map_matches_jax() {
    let mesh = mesh();
    let g = golden();
    let cases = g["values"].as_object().unwrap();
    assert_eq!(cases.len(), 13);
    for (name, outputs) in cases {
        let got = run(name, &mesh);
        assert_matches(name, &got, outputs);
    }
}

/// Each of `got` has the shape and values of the golden leaf, to float32 rounding.
fn assert_matches(name: &str, got: &[Array], golden: &Value) {
    let want = golden.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{name}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let shape: Vec<usize> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(g.shape(), &shape[..], "{name}: output {k}'s shape");
        let values = g.astype(DType::F64).to_vec::<f64>();
        for (i, (a, b)) in values.iter().zip(f64s(&w["values"])).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{name}: output {k}[{i}] = {a}, JAX {b}"
            );
        }
    }
}

/// `(arange(n) - n / 2) / n` in `shape`, the gradient cases' inputs.
fn small(shape: &[usize]) -> Array {
    let n = shape.iter().product::<usize>() as f64;
    (arange(shape) - n / 2.0) / n
}

/// The loss `name` of the golden file's gradient cases: a scalar function of its arguments
/// around a shard_map.
fn loss(name: &str, mesh: &jaxrs::Mesh, args: &[Array]) -> Array {
    let m = mesh.clone();
    let sm = move |f: &dyn Fn(Vec<Array>) -> Array,
                   ins: Vec<jaxrs::PartitionSpec>,
                   out: jaxrs::PartitionSpec,
                   args: &[Array]|
          -> Array {
        shard_map(|a: Vec<Array>| f(a))
            .mesh(&m)
            .in_specs(jaxrs::Shardings::PerChild(
                ins.into_iter().map(jaxrs::Shardings::Spec).collect(),
            ))
            .out_specs(out)
            .call(args.to_vec())
    };
    match name {
        "dp_loss" => sm(
            &|a| psum(&a[1].matmul(&a[0]).tanh().sum(None, false), "x"),
            vec![P![], P!["x"]],
            P![],
            args,
        ),
        "matmul_psum" => sm(
            &|a| psum(&a[0].matmul(&a[1]), "y"),
            vec![P!["x", "y"], P!["y", None]],
            P!["x", None],
            args,
        )
        .sin()
        .sum(None, false),
        "broadcast_add" => sm(
            &|a| (&a[1] + &a[0]).cos(),
            vec![P![None, "y"], P!["x", "y"]],
            P!["x", "y"],
            args,
        )
        .powi(2)
        .sum(None, false),
        "all_gather" => sm(
            &|a| {
                let scale = Array::from_vec(vec![1.0f32, 2.0], &[2, 1]);
                all_gather(&a[0], "x", 0, true) * scale
            },
            vec![P!["x"]],
            P!["x"],
            args,
        )
        .powi(2)
        .sum(None, false),
        "ppermute" => sm(
            &|a| {
                let perm: Vec<(usize, usize)> = (0..4).map(|j| (j, (j + 1) % 4)).collect();
                ppermute(&a[0], "y", &perm) * axis_index("y").astype(DType::F32)
            },
            vec![P!["x", "y"]],
            P!["x", "y"],
            args,
        )
        .powi(2)
        .sum(None, false),
        "psum_scatter" => sm(
            &|a| psum_scatter(&(&a[0] * &a[0]), "y", 1, true),
            vec![P!["x"]],
            P!["x", "y"],
            args,
        )
        .powi(3)
        .sum(None, false),
        "psum_of_invariant" => sm(
            &|a| psum(&(&a[0] * &a[0]), "y"),
            vec![P!["x"]],
            P!["x"],
            args,
        )
        .sum(None, false),
        other => panic!("no loss {other}"),
    }
}

fn shapes_of(name: &str) -> Vec<Vec<usize>> {
    match name {
        "dp_loss" => vec![vec![8, 3], vec![4, 8]],
        "matmul_psum" => vec![vec![4, 8], vec![8, 3]],
        "broadcast_add" => vec![vec![1, 8], vec![4, 8]],
        "all_gather" => vec![vec![2, 3]],
        "ppermute" | "psum_scatter" => vec![vec![4, 8]],
        "psum_of_invariant" => vec![vec![4, 2]],
        other => panic!("no loss {other}"),
    }
}

#[test]
fn gradients_through_shard_map_match_jax() {
    let mesh = mesh();
    let g = golden();
    let cases = g["grads"].as_object().unwrap();
    assert_eq!(cases.len(), 7);
    for (name, want) in cases {
        let args: Vec<Array> = shapes_of(name).iter().map(|s| small(s)).collect();
        let m = mesh.clone();
        let name_c = name.clone();
        // The gradient of the whole loss, jitted as JAX's golden was.
        let grads = jit(move |a: Vec<Array>| grad(|a: Vec<Array>| loss(&name_c, &m, &a))(a));
        let got: Vec<Array> = grads.call(args);
        assert_matches(name, &got, want);
    }
    for (name, want) in g["jvps"].as_object().unwrap() {
        let args: Vec<Array> = shapes_of(name).iter().map(|s| small(s)).collect();
        let ones: Vec<Array> = args
            .iter()
            .map(|a| Array::ones(a.shape(), a.dtype()))
            .collect();
        let (_, tangent) = jvp(|a: Vec<Array>| loss(name, &mesh, &a), &args, &ones);
        assert_matches(name, &[tangent], want);
    }
}

/// `#[shard_map]` on a function: JAX's decorator form, with the mesh from the attribute or
/// the scope.
#[jaxrs::shard_map(in_specs = (P!["x", "y"], P!["y", None]), out_specs = P!["x", None])]
fn matmul_psum(x: &Array, w: &Array) -> Array {
    psum(&x.matmul(w), "y")
}

/// A static parameter (a Rust value the body reads) and a mesh given in the attribute.
#[jaxrs::shard_map(in_specs = P!["x", "y"], out_specs = P!["x", "y"], mesh = mesh(), static = step)]
fn shifted(a: Array, step: usize) -> Array {
    let perm: Vec<(usize, usize)> = (0..4).map(|j| (j, (j + step) % 4)).collect();
    ppermute(&a, "y", &perm)
}

#[jit]
fn jitted_loss(x: &Array, w: &Array) -> Array {
    matmul_psum(x, w).tanh().sum(None, false)
}

#[test]
fn the_attribute_form_is_the_builder() {
    let mesh = mesh();
    let g = golden();
    let _scope = jaxrs::set_mesh(&mesh);
    let (x, w) = (arange(&[4, 8]), arange(&[8, 3]));
    assert_matches(
        "matmul_psum",
        &[matmul_psum(&x, &w)],
        &g["values"]["matmul_psum"],
    );
    assert_matches(
        "ppermute_y",
        &[shifted(x.clone(), 1)],
        &g["values"]["ppermute_y"],
    );
    // Inside a jit, and differentiated: the gradient of the collective matmul's loss.
    let (x, w) = (small(&[4, 8]), small(&[8, 3]));
    let want = x.matmul(&w).tanh().sum(None, false).item::<f32>();
    assert!((jitted_loss(&x, &w).item::<f32>() - want).abs() < 1e-5);
    let dense = |w: Array| x.matmul(&w).tanh().sum(None, false);
    let sharded = |w: Array| matmul_psum(&x, &w).tanh().sum(None, false);
    let (got, want) = (grad(sharded)(w.clone()), grad(dense)(w.clone()));
    for (a, b) in got.to_vec::<f32>().iter().zip(want.to_vec::<f32>()) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
}

#[test]
fn results_are_laid_out_as_the_out_specs_say() {
    let mesh = mesh();
    let y: Array = shard_map(|a: Array| psum(&a, "y"))
        .mesh(&mesh)
        .in_specs(P!["x", "y"])
        .out_specs(P!["x", None])
        .call(arange(&[4, 8]));
    let want = jaxrs::NamedSharding::new(mesh.clone(), P!["x", None]).unwrap();
    assert_eq!(y.sharding(), Some(&jaxrs::Sharding::Named(want)));
    // Device 5 is row 1 of the mesh: rows 2..4 of the result, all its columns.
    assert_eq!(y.addressable_shards()[5].index, vec![2..4, 0..2]);
}

#[test]
fn inside_jit_it_is_part_of_one_spmd_program() {
    let mesh = mesh();
    let _scope = jaxrs::set_mesh(&mesh);
    // The mesh comes from the scope; the jit around it runs over that mesh.
    let step = jit(|(x, w): (Array, Array)| {
        let partial = shard_map(|(x, w): (Array, Array)| psum(&x.matmul(&w), "y"))
            .in_specs((P!["x", "y"], P!["y", None]))
            .out_specs(P!["x", None])
            .call((x, w));
        partial.tanh().sum(None, false)
    });
    let x = arange(&[4, 8]) / 32.0;
    let w = arange(&[8, 3]) / 24.0;
    let got: Array = step.call((x.clone(), w.clone()));
    let want = x.matmul(&w).tanh().sum(None, false).item::<f32>();
    assert!((got.item::<f32>() - want).abs() < 1e-5);
    let text = step.site().last_stablehlo().expect("compiled");
    assert!(text.contains("\"sdy.manual_computation\""), "{text}");
    assert!(
        text.contains("manual_axes = #sdy<manual_axes{\"x\", \"y\"}>"),
        "{text}"
    );
    assert!(
        text.contains(
            "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, \
             use_global_device_ids"
        ),
        "{text}"
    );
    assert!(text.contains("\"sdy.return\""), "{text}");
}

fn partial_golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/shard_map_partial.json"
    ))
    .expect("tests/golden/shard_map_partial.json (run tests/golden/gen_shard_map_partial.py)");
    serde_json::from_str(&text).expect("valid JSON")
}

/// The body of the partially manual program `name` of `gen_shard_map_partial.py`: a
/// shard_map manual over "x" only.
fn partial_body(name: &str, mesh: &jaxrs::Mesh) -> impl Fn(Vec<Array>) -> Vec<Array> + Clone {
    let (m, name) = (mesh.clone(), name.to_string());
    move |a: Vec<Array>| -> Vec<Array> {
        let sm = |f: fn(Vec<Array>) -> Vec<Array>, ins: Vec<jaxrs::PartitionSpec>, outs| {
            shard_map(f)
                .mesh(&m)
                .axis_names(&["x"])
                .in_specs(jaxrs::Shardings::PerChild(
                    ins.into_iter().map(jaxrs::Shardings::Spec).collect(),
                ))
                .out_specs(jaxrs::Shardings::PerChild(outs))
                .call(a.clone())
        };
        let spec = jaxrs::Shardings::Spec;
        match name.as_str() {
            "psum_x" => sm(
                |a| vec![psum(&a[0], "x") * 2.0],
                vec![P!["x"]],
                vec![spec(P![])],
            ),
            "axis_index_x" => sm(
                |a| vec![&a[0] + axis_index("x").astype(DType::F32)],
                vec![P!["x"]],
                vec![spec(P!["x"])],
            ),
            "all_gather_x" => sm(
                |a| vec![all_gather(&a[0].sin(), "x", 0, true)],
                vec![P!["x"]],
                vec![spec(P!["x"])],
            ),
            _ => sm(
                |a| {
                    let h = a[0].matmul(&a[1]).tanh();
                    let total = psum(&h.sum(0, false), "x");
                    vec![h, total]
                },
                vec![P!["x"], P![]],
                vec![spec(P!["x"]), spec(P![])],
            ),
        }
    }
}

/// The jit's in_shardings of partial program `name`, which shard over "y" too.
fn partial_in_shardings(name: &str) -> jaxrs::Shardings {
    let specs = match name {
        "psum_x" | "axis_index_x" => vec![P![None, "y"]],
        "all_gather_x" => vec![P!["x"]],
        _ => vec![P!["x"], P![None, "y"]],
    };
    jaxrs::Shardings::PerChild(specs.into_iter().map(jaxrs::Shardings::Spec).collect())
}

/// The collective kinds in a compiled HloModuleProto (an instruction's opcode, field 2, is a
/// length-prefixed string).
fn collective_kinds(hlo: &[u8]) -> Vec<String> {
    let has = |op: &str| {
        let needle = [&[0x12u8, op.len() as u8][..], op.as_bytes()].concat();
        hlo.windows(needle.len()).any(|w| w == &needle[..])
    };
    [
        "all-gather",
        "all-reduce",
        "all-to-all",
        "collective-permute",
        "reduce-scatter",
    ]
    .iter()
    .filter(|k| has(k) || has(&format!("{k}-start")))
    .map(|k| k.to_string())
    .collect()
}

#[test]
fn partially_manual_shard_map_matches_jax() {
    let mesh = mesh();
    let g = partial_golden();
    let shapes = |name: &str| -> Vec<Vec<usize>> {
        match name {
            "matmul_auto_y" => vec![vec![4, 8], vec![8, 12]],
            _ => vec![vec![4, 8]],
        }
    };
    let cases = g["values"].as_object().unwrap();
    assert_eq!(cases.len(), 4);
    for (name, want) in cases {
        let program = jit(partial_body(name, &mesh))
            .mesh(&mesh)
            .in_shardings(partial_in_shardings(name));
        let args: Vec<Array> = shapes(name).iter().map(|s| small(s)).collect();
        let got = program.call(args);
        assert_matches(name, &got, want);
        let text = program.site().last_stablehlo().expect("compiled");
        assert!(
            text.contains("manual_axes = #sdy<manual_axes{\"x\"}>"),
            "{name}: {text}"
        );
        let (_, hlo) = program.site().last_optimized_program().expect("compiled");
        let want_kinds: Vec<String> = g["hlo"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            collective_kinds(&hlo),
            want_kinds,
            "{name}: XLA's collectives"
        );
        if name == "axis_index_x" {
            // The partition id is read where the partitioner has no axis left: in a
            // computation nested manual over "y", as JAX lowers it.
            assert!(
                text.contains("manual_axes = #sdy<manual_axes{\"y\"}>"),
                "{text}"
            );
        }
    }
    // The gradient through it, as jax.grad's.
    let body = partial_body("matmul_auto_y", &mesh);
    let loss = move |a: Vec<Array>| {
        let outs = body(a);
        let weights = Array::arange(0.0, 12.0, 1.0, DType::F32);
        (&outs[0] * &outs[0]).sum(None, false) + (&outs[1] * &weights).sum(None, false)
    };
    let step = jit(move |a: Vec<Array>| grad(&loss)(a))
        .mesh(&mesh)
        .in_shardings(partial_in_shardings("matmul_auto_y"));
    let got: Vec<Array> = step.call(vec![small(&[4, 8]), small(&[8, 12])]);
    assert_matches("grad matmul_auto_y", &got, &g["grads"]["matmul_auto_y"]);
}

#[test]
fn partially_manual_errors_name_the_axis() {
    let mesh = mesh();
    let message = |f: Box<dyn FnOnce()>| common::panic_message(std::panic::AssertUnwindSafe(f));
    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| a)
            .mesh(&m)
            .axis_names(&["x"])
            .in_specs(P!["x", "y"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(
        msg.starts_with(
            "shard_map: in_specs of leaf 0 is PartitionSpec('x', 'y'), which names mesh axis \
             \"y\", but the function is manual over [\"x\"] only (axis_names)"
        ),
        "{msg}"
    );
    assert!(msg.contains("at tests/shard_map.rs:"), "{msg}");
    // A collective over an axis left to the partitioner is an unknown axis inside.
    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| psum(&a, "y"))
            .mesh(&m)
            .axis_names(&["x"])
            .in_specs(P!["x"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(msg.contains("\"y\""), "{msg}");
    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| a)
            .mesh(&m)
            .axis_names(&["z"])
            .in_specs(P![])
            .out_specs(P![])
            .call(arange(&[4, 8]));
    }));
    assert!(
        msg.starts_with("shard_map: axis_names names \"z\", which is not an axis of the mesh"),
        "{msg}"
    );
}

#[test]
fn errors_name_the_problem() {
    let mesh = mesh();
    let message = |f: Box<dyn FnOnce()>| common::panic_message(std::panic::AssertUnwindSafe(f));

    // A result replicated over "y" that varies over it (JAX's check_vma).
    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| &a * 2.0)
            .mesh(&m)
            .in_specs(P!["x", "y"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(
        msg.starts_with(
            "shard_map: out_specs of result 0 is PartitionSpec('x',) which implies that the \
             result is replicated across mesh axis \"y\", but it varies over \"y\""
        ),
        "{msg}"
    );
    assert!(msg.contains("at tests/shard_map.rs:"), "{msg}");
    // With the check off, the same program runs (each row block taken from one device).
    let _: Array = shard_map(|a: Array| &a * 2.0)
        .mesh(&mesh)
        .in_specs(P!["x", "y"])
        .out_specs(P!["x"])
        .check_vma(false)
        .call(arange(&[4, 8]));

    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| a)
            .mesh(&m)
            .in_specs(P!["x", "y"])
            .out_specs(P!["x", "y"])
            .call(arange(&[4, 6]));
    }));
    assert!(
        msg.starts_with(
            "shard_map: argument 0 (f32[4,6]): dimension 1 of size 6 does not split evenly \
             into the 4 pieces PartitionSpec('x', 'y') asks for"
        ),
        "{msg}"
    );

    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| a)
            .mesh(&m)
            .in_specs(P!["x", "z"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(msg.contains("\"z\""), "{msg}");
    assert!(msg.contains("at tests/shard_map.rs:"), "{msg}");

    let m = mesh.clone();
    let msg = message(Box::new(move || {
        let _: Array = shard_map(|a: Array| psum(&a, "w"))
            .mesh(&m)
            .in_specs(P!["x"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(
        msg.starts_with("psum: unknown axis name \"w\"; the named axes in scope are \"x\", \"y\""),
        "{msg}"
    );

    let msg = message(Box::new(|| {
        let _: Array = shard_map(|a: Array| a)
            .in_specs(P!["x"])
            .out_specs(P!["x"])
            .call(arange(&[4, 8]));
    }));
    assert!(
        msg.starts_with(
            "shard_map: no mesh: give one with .mesh(&mesh) or put one in scope with set_mesh"
        ),
        "{msg}"
    );
}
