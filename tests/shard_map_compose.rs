//! `shard_map` composed with the rest, on 8 CPU devices against JAX 0.10.2
//! (`tests/golden/shard_map_compose.json`, made by `tests/golden/gen_shard_map_compose.py`):
//! `all_to_all` inside it (tiled and untiled, over each axis of a 2x4 mesh), `vmap` of it
//! (batched and unbatched arguments, other in/out axes, nested vmaps), `scan` and `remat`
//! inside its body (with `psum` inside the loop and the rematerialised function), `lax::pcast`
//! inside it, `smap` (over one mesh axis, with vmap's axes and the mesh in scope), and
//! `custom_vjp` / `custom_jvp` functions whose rules communicate over the mesh, each
//! program's values outside and inside `jit` and the gradient of a loss of it.

mod common;

use jaxrs::prelude::*;
use jaxrs::{all_to_all, custom_jvp, custom_vjp, lax, psum, shard_map, Mesh, PartitionSpec, P};
use serde_json::Value;

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/shard_map_compose.json"
    ))
    .expect("tests/golden/shard_map_compose.json (run tests/golden/gen_shard_map_compose.py)");
    serde_json::from_str(&text).expect("valid JSON")
}

fn mesh() -> Mesh {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::make_mesh(&[2, 4], &["x", "y"]).unwrap()
}

/// `(arange(n) - n / 2) / n` in `shape`, every case's arguments.
fn small(shape: &[usize]) -> Array {
    let n = shape.iter().product::<usize>();
    (Array::arange(0.0, n as f64, 1.0, DType::F32) - n as f64 / 2.0).reshape(shape) / n as f64
}

/// `sin(0.7 k)` in `shape`: a loss's distinct weights.
fn weights(shape: &[usize]) -> Array {
    let n = shape.iter().product::<usize>();
    (Array::arange(0.0, n as f64, 1.0, DType::F32) * 0.7)
        .sin()
        .reshape(shape)
}

/// A shard_map of `f` over `mesh` with one spec per argument and per result.
fn sm<F: Fn(Vec<Array>) -> Vec<Array>>(
    mesh: &Mesh,
    f: F,
    ins: Vec<PartitionSpec>,
    outs: Vec<PartitionSpec>,
) -> impl Fn(Vec<Array>) -> Vec<Array> {
    let specs = |s: Vec<PartitionSpec>| {
        jaxrs::Shardings::PerChild(s.into_iter().map(jaxrs::Shardings::Spec).collect())
    };
    let mapped = shard_map(f)
        .mesh(mesh)
        .in_specs(specs(ins))
        .out_specs(specs(outs));
    move |args: Vec<Array>| mapped.call(args)
}

/// A scan over layers: `h = tanh(h @ w)` for each `w` of `ws`, with the per-layer sums of
/// `h`; `psum_inside` divides `h` by `1 + psum(sum(h * h), "x")` inside the loop and gives
/// those sums instead.
fn layers(ws: &Array, x: &Array, psum_inside: bool) -> (Array, Array) {
    scan(
        |h: Array, w: Array| {
            let h = h.matmul(&w).tanh();
            if psum_inside {
                let s = psum(&(&h * &h).sum(None, false), "x");
                (&h / (&s + 1.0), s)
            } else {
                let s = h.sum(None, false);
                (h, s)
            }
        },
        x.clone(),
        ws.clone(),
    )
}

/// The program `name` of the golden file: its arguments' shapes and the function of them
/// (its outputs' leaves, in JAX's order).
#[allow(clippy::type_complexity)]
fn program(name: &str, mesh: &Mesh) -> (Vec<Vec<usize>>, Box<dyn Fn(Vec<Array>) -> Vec<Array>>) {
    let m = mesh.clone();
    match name {
        "a2a_cols_to_rows" => (
            vec![vec![4, 16]],
            Box::new(sm(
                &m,
                |a| vec![all_to_all(&a[0], "y", 0, 1, true)],
                vec![P![None, "y"]],
                vec![P!["y"]],
            )),
        ),
        "a2a_untiled_x" => (
            vec![vec![2, 2, 3]],
            Box::new(sm(
                &m,
                |a| vec![all_to_all(&a[0], "x", 1, 0, false)],
                vec![P!["x"]],
                vec![P![None, "x"]],
            )),
        ),
        "a2a_same_axis" => (
            vec![vec![16, 6]],
            Box::new(sm(
                &m,
                |a| vec![all_to_all(&a[0], "y", 0, 0, false)],
                vec![P!["y", "x"]],
                vec![P!["y", "x"]],
            )),
        ),
        "a2a_tiled_x" => (
            vec![vec![4, 4]],
            Box::new(sm(
                &m,
                |a| vec![all_to_all(&a[0], "x", 1, 1, true) * 2.0],
                vec![P!["y", "x"]],
                vec![P!["y", "x"]],
            )),
        ),
        "vmap_psum" => {
            let f = sm(
                &m,
                |a| vec![psum(&a[0], "y") * &a[0]],
                vec![P!["x", "y"]],
                vec![P!["x", "y"]],
            );
            let v = vmap(move |a: Array| f(vec![a]).remove(0), 0, 0);
            (
                vec![vec![3, 4, 8]],
                Box::new(move |a| vec![v(a[0].clone())]),
            )
        }
        "vmap_matmul" => {
            let f = sm(
                &m,
                |a| vec![psum(&a[0].matmul(&a[1]), "y")],
                vec![P!["x", "y"], P!["y", None]],
                vec![P!["x", None]],
            );
            let v = vmap(
                move |(x, w): (Array, Array)| f(vec![x, w]).remove(0),
                (1i64, None::<i64>),
                0,
            );
            (
                vec![vec![4, 3, 8], vec![8, 3]],
                Box::new(move |a| vec![v((a[0].clone(), a[1].clone()))]),
            )
        }
        "vmap_gather_permute" => {
            let f = sm(
                &m,
                |a| {
                    let ring: Vec<(usize, usize)> = (0..4).map(|j| (j, (j + 1) % 4)).collect();
                    vec![
                        all_gather(&a[0], "x", 0, true),
                        ppermute(&a[1], "y", &ring) * axis_index("y").astype(DType::F32),
                    ]
                },
                vec![P!["x"], P!["x", "y"]],
                vec![P!["x"], P!["x", "y"]],
            );
            let v = vmap(
                move |(b, a): (Array, Array)| {
                    let mut o = f(vec![b, a]);
                    let second = o.pop().unwrap();
                    (o.pop().unwrap(), second)
                },
                (0i64, 2i64),
                (1i64, 0i64),
            );
            (
                vec![vec![3, 2, 3], vec![4, 8, 3]],
                Box::new(move |a| {
                    let (g, p) = v((a[0].clone(), a[1].clone()));
                    vec![g, p]
                }),
            )
        }
        "vmap_a2a" => {
            let f = sm(
                &m,
                |a| vec![all_to_all(&a[0], "y", 0, 1, true)],
                vec![P![None, "y"]],
                vec![P!["y"]],
            );
            let v = vmap(move |a: Array| f(vec![a]).remove(0), 0, 0);
            (
                vec![vec![2, 4, 16]],
                Box::new(move |a| vec![v(a[0].clone())]),
            )
        }
        "vmap_vmap" => {
            let f = sm(&m, |a| vec![psum(&a[0], "x")], vec![P!["x"]], vec![P![]]);
            let inner = vmap(move |a: Array| f(vec![a]).remove(0), 0, 0);
            let v = vmap(inner, 0, 0);
            (
                vec![vec![2, 3, 4, 5]],
                Box::new(move |a| vec![v(a[0].clone())]),
            )
        }
        "scan_layers" => (
            vec![vec![3, 8, 8], vec![4, 8]],
            Box::new(sm(
                &m,
                |a| {
                    let (h, ys) = layers(&a[0], &a[1], false);
                    vec![h, psum(&ys, "x")]
                },
                vec![P![], P!["x"]],
                vec![P!["x"], P![]],
            )),
        ),
        "scan_psum" => (
            vec![vec![3, 8, 8], vec![4, 8]],
            Box::new(sm(
                &m,
                |a| {
                    let (h, ys) = layers(&a[0], &a[1], true);
                    vec![h, ys]
                },
                vec![P![], P!["x"]],
                vec![P!["x"], P![]],
            )),
        ),
        "remat_body" => (
            vec![vec![8, 3], vec![4, 8]],
            Box::new(sm(
                &m,
                |a| {
                    let block = remat(|(w, x): (Array, Array)| {
                        x.matmul(&w).tanh().powi(2).sum(None, false)
                    });
                    vec![psum(&block.call((a[0].clone(), a[1].clone())), "x")]
                },
                vec![P![], P!["x"]],
                vec![P![]],
            )),
        ),
        "remat_psum" => (
            vec![vec![8, 3], vec![4, 8]],
            Box::new(sm(
                &m,
                |a| {
                    let block = remat(|(w, x): (Array, Array)| psum(&x.matmul(&w), "y"));
                    vec![block.call((a[0].clone(), a[1].clone()))]
                },
                vec![P!["y", None], P!["x", "y"]],
                vec![P!["x", None]],
            )),
        ),
        "remat_scan" => (
            vec![vec![3, 8, 8], vec![4, 8]],
            Box::new(sm(
                &m,
                |a| {
                    let block = remat(|(ws, x): (Array, Array)| {
                        let (h, ys) = layers(&ws, &x, false);
                        (h, psum(&ys, "x"))
                    });
                    let (h, ys) = block.call((a[0].clone(), a[1].clone()));
                    vec![h, ys]
                },
                vec![P![], P!["x"]],
                vec![P!["x"], P![]],
            )),
        ),
        "pcast_x" => (
            vec![vec![3], vec![4, 3]],
            Box::new(sm(
                &m,
                |a| vec![lax::pcast(&a[0], &["x"], "varying") * &a[1]],
                vec![P![], P!["x"]],
                vec![P!["x"]],
            )),
        ),
        "pcast_xy" => (
            vec![vec![4], vec![2, 4]],
            Box::new(sm(
                &m,
                |a| vec![(lax::pcast(&a[0], &["x", "y"], "varying") * &a[1]).tanh()],
                vec![P![], P!["x", "y"]],
                vec![P!["x", "y"]],
            )),
        ),
        "pcast_psum" => (
            vec![vec![3, 1], vec![3, 8]],
            Box::new(sm(
                &m,
                |a| {
                    vec![psum(
                        &(lax::pcast(&a[0].sin(), &["y"], "varying") * &a[1]),
                        "y",
                    )]
                },
                vec![P![], P![None, "y"]],
                vec![P![]],
            )),
        ),
        "smap_rows" => {
            let f = jaxrs::smap(
                |(w, x): (Array, Array)| x.matmul(&w).tanh(),
                (None, 0),
                0,
                "x",
            );
            in_scope(m, vec![vec![3, 5], vec![4, 3]], move |a| {
                vec![f.call((a[0].clone(), a[1].clone()))]
            })
        }
        "smap_psum" => {
            let f = jaxrs::smap(|x: Array| psum(&(&x * &x).sum(1, false), "y"), 1, None, "y");
            in_scope(m, vec![vec![3, 8]], move |a| vec![f.call(a[0].clone())])
        }
        "smap_cols" => {
            let f = jaxrs::smap(
                |(a, b): (Array, Array)| (&a * axis_index("y"), b.cos()),
                (1, 0),
                (1, 0),
                "y",
            );
            in_scope(m, vec![vec![3, 8], vec![4, 2]], move |a| {
                let (p, q): (Array, Array) = f.call((a[0].clone(), a[1].clone()));
                vec![p, q]
            })
        }
        "custom_vjp_psum" => (
            vec![vec![4, 8]],
            Box::new(sm(
                &m,
                |a| vec![sin_total(a[0].clone()) * 2.0],
                vec![P!["x", "y"]],
                vec![P![None, "y"]],
            )),
        ),
        "custom_vjp_norm" => (
            vec![vec![4, 8]],
            Box::new(sm(
                &m,
                |a| vec![normalize(a[0].clone()).tanh()],
                vec![P!["x", "y"]],
                vec![P!["x", "y"]],
            )),
        ),
        "custom_jvp_psum" => (
            vec![vec![3], vec![4, 3]],
            Box::new(sm(
                &m,
                |a| vec![softplus_total(&a[1] * &a[0])],
                vec![P![], P!["x"]],
                vec![P![]],
            )),
        ),
        other => panic!("no program {other}"),
    }
}

/// The sum over "x" of `sin(x)`, a `custom_vjp` whose gradient comes from a residual.
fn sin_total(x: Array) -> Array {
    custom_vjp(
        "sin_total",
        |x: Array| (psum(&x.sin(), "x"), x.cos()),
        |cos: Array, g: Array| cos * g,
    )
    .call::<Array, Array, Array>(x)
}

/// `x` over the norm of the whole row of devices along "y", a `custom_vjp` whose backward
/// pass sums over "y" too.
fn normalize(x: Array) -> Array {
    custom_vjp(
        "normalize",
        |x: Array| {
            let n = psum(&(&x * &x).sum(None, false), "y").sqrt();
            let y = &x / &n;
            (y.clone(), (y, n))
        },
        |(y, n): (Array, Array), g: Array| {
            let along = psum(&(&y * &g).sum(None, false), "y");
            (g - y * along) / n
        },
    )
    .call::<Array, Array, (Array, Array)>(x)
}

/// The sum over "x" of `softplus(x)`, a `custom_jvp` whose rule sums the tangents over "x".
fn softplus_total(x: Array) -> Array {
    fn f(x: Array) -> Array {
        psum(&x.exp().log1p(), "x")
    }
    fn rule(x: Array, t: Array) -> (Array, Array) {
        (f(x.clone()), psum(&(x.sigmoid() * t), "x"))
    }
    custom_jvp(
        "softplus_total",
        f as fn(Array) -> Array,
        rule as fn(Array, Array) -> _,
    )
    .call::<Array, Array>(x)
}

/// A program run with `mesh` in scope (smap reads the mesh from there, as `jax.smap` does).
#[allow(clippy::type_complexity)]
fn in_scope(
    mesh: Mesh,
    shapes: Vec<Vec<usize>>,
    f: impl Fn(Vec<Array>) -> Vec<Array> + 'static,
) -> (Vec<Vec<usize>>, Box<dyn Fn(Vec<Array>) -> Vec<Array>>) {
    let run = move |args: Vec<Array>| {
        let _scope = jaxrs::set_mesh(&mesh);
        f(args)
    };
    (shapes, Box::new(run))
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Each of `got` has the shape and values of the golden leaf, to float32 rounding.
fn assert_matches(what: &str, got: &[Array], golden: &Value) {
    let want = golden.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let shape: Vec<usize> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(g.shape(), &shape[..], "{what}: output {k}'s shape");
        let values = g.astype(DType::F64).to_vec::<f64>();
        for (i, (a, b)) in values.iter().zip(f64s(&w["values"])).enumerate() {
            assert!(
                (a - b).abs() <= 2e-5 * b.abs().max(1.0),
                "{what}: output {k}[{i}] = {a}, JAX {b}"
            );
        }
    }
}

#[test]
fn values_match_jax_outside_and_inside_jit() {
    let mesh = mesh();
    let g = golden();
    let cases = g["values"].as_object().unwrap();
    assert_eq!(cases.len(), 23);
    each_case(cases, |name, want| {
        let (shapes, f) = program(name, &mesh);
        let args: Vec<Array> = shapes.iter().map(|s| small(s)).collect();
        assert_matches(name, &f(args.clone()), want);
        let jitted = jit(|a: Vec<Array>| f(a));
        let got: Vec<Array> = jitted.call(args);
        assert_matches(&format!("{name} in jit"), &got, want);
    });
}

/// Runs `check` on every case, then fails naming every case that failed.
fn each_case(cases: &serde_json::Map<String, Value>, check: impl Fn(&str, &Value)) {
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|(name, want)| {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(name, want)));
            run.err().map(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("{name}: {msg}")
            })
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// The loss of the gradient cases: `sum(sin(out) * weights)` over every output.
fn loss(f: &dyn Fn(Vec<Array>) -> Vec<Array>, args: Vec<Array>) -> Array {
    f(args)
        .iter()
        .map(|o| (o.sin() * weights(o.shape())).sum(None, false))
        .reduce(|a, b| a + b)
        .unwrap()
}

#[test]
fn gradients_match_jax() {
    let mesh = mesh();
    let g = golden();
    let cases = g["grads"].as_object().unwrap();
    assert_eq!(cases.len(), 20);
    each_case(cases, |name, want| {
        // JAX's golden of the untiled exchange is the same exchange written tiled (it cannot
        // transpose the untiled form); jaxrs differentiates the untiled call itself.
        let program_name = if name == "a2a_untiled" {
            "a2a_untiled_x"
        } else {
            name
        };
        let (shapes, f) = program(program_name, &mesh);
        let args: Vec<Array> = shapes.iter().map(|s| small(s)).collect();
        let grads = jit(|a: Vec<Array>| grad(|a: Vec<Array>| loss(&f, a))(a));
        let got: Vec<Array> = grads.call(args);
        assert_matches(&format!("grad of {name}"), &got, want);
    });
}

#[test]
fn pbroadcast_inside_shard_map_gives_every_device_the_source_piece() {
    let mesh = mesh();
    // Each of the 4 devices along "y" holds a column block; every one gets block 2's.
    let f = shard_map(|x: Array| lax::pbroadcast(&x, "y", 2))
        .mesh(&mesh)
        .in_specs(P!["x", "y"])
        .out_specs(P!["x", "y"]);
    let x = small(&[4, 8]);
    let got: Array = f.call(x.clone());
    let source = x.slice_axis(1, 4, 6);
    let want = jaxrs::numpy::tile(&source, [1, 4]);
    assert_eq!(got.to_vec::<f32>(), want.to_vec::<f32>());
    // Its gradient goes to the source's block, summed over the devices that received it.
    let g: Array =
        jit(|x: Array| grad(|x: Array| (f.call::<Array, Array>(x) * 3.0).sum(None, false))(x))
            .call(x);
    let mut want = vec![0.0f32; 32];
    for r in 0..4 {
        for c in 4..6 {
            want[r * 8 + c] = 12.0;
        }
    }
    assert_eq!(g.to_vec::<f32>(), want);
}

#[test]
fn pcast_refuses_what_jax_refuses() {
    let mesh = mesh();
    let message = |f: Box<dyn FnOnce()>| common::panic_message(std::panic::AssertUnwindSafe(f));
    // A value already split over "x" varies over it.
    let twice = message(Box::new(|| {
        let f = shard_map(|x: Array| lax::pcast(&x, &["x"], "varying"))
            .mesh(&mesh)
            .in_specs(P!["x"])
            .out_specs(P!["x"]);
        let _: Array = f.call(small(&[4, 2]));
    }));
    assert!(
        twice.contains("pcast: the value already varies over mesh axis \"x\"")
            && twice.contains("shard_map_compose.rs"),
        "{twice}"
    );
    // A vmap's axis is not a mesh axis of a shard_map.
    let vmapped = message(Box::new(|| {
        let f = vmap_named(|x: Array| lax::pcast(&x, &["i"], "varying"), 0, 0, "i");
        let _ = f(small(&[3]));
    }));
    assert!(
        vmapped.contains("pcast: axis \"i\" is a vmap's or pmap's"),
        "{vmapped}"
    );
    let reduced = message(Box::new(|| {
        let f = shard_map(|x: Array| lax::pcast(&x, &["x"], "reduced"))
            .mesh(&mesh)
            .in_specs(P![])
            .out_specs(P![]);
        let _: Array = f.call(small(&[4]));
    }));
    assert!(
        reduced.contains("pcast: to=\"reduced\" is not built"),
        "{reduced}"
    );
}

#[test]
fn differentiating_collectives_in_a_while_loop_is_refused_by_name() {
    // JAX cannot reverse-differentiate a while loop at all; jaxrs names the equation whose
    // body communicates, and what is typed.
    let mesh = mesh();
    let f = shard_map(|x: Array| {
        while_loop(
            |c: &Array| c.sum(None, false).lt(100.0),
            |c: Array| psum(&c, "x") + 1.0,
            x,
        )
    })
    .mesh(&mesh)
    .in_specs(P!["x"])
    .out_specs(P!["x"]);
    let message = common::panic_message(std::panic::AssertUnwindSafe(|| {
        let _ = grad(|x: Array| {
            let y: Array = f.call(x);
            y.sum(None, false)
        })(small(&[4, 2]));
    }));
    assert!(
        message.contains("communicates over the mesh is not built yet")
            && message.contains("custom_vjp and custom_jvp are typed"),
        "{message}"
    );
}

#[test]
fn smap_infers_in_axes_from_explicit_types() {
    let mesh = mesh()
        .with_axis_types(&[jaxrs::AxisType::Explicit; 2])
        .unwrap();
    let _scope = jaxrs::set_mesh(&mesh);
    let x = jaxrs::device_put(
        &small(&[8, 3]),
        jaxrs::NamedSharding::new(mesh.clone(), P!["x"]).unwrap(),
    );
    let w = small(&[3]);
    // x is split over "x" by its type, w held whole; each half sums its rows.
    let f = jaxrs::smap(
        |(w, x): (Array, Array)| psum(&(&x * &w).sum(0, false), "x"),
        jaxrs::Infer,
        None,
        "x",
    );
    let got: Array = f.call((w.clone(), x.clone()));
    let want = (&x * &w).sum(0, false);
    for (g, e) in got.to_vec::<f32>().iter().zip(want.to_vec::<f32>()) {
        assert!((g - e).abs() < 1e-6, "{g} vs {e}");
    }
    // On an Auto mesh the types say nothing: Infer stops, naming the axis.
    let auto = self::mesh();
    let _auto_scope = jaxrs::set_mesh(&auto);
    let msg = common::panic_message(std::panic::AssertUnwindSafe(|| {
        let f = jaxrs::smap(|x: Array| x, jaxrs::Infer, 0, "x");
        let _: Array = f.call(small(&[4]));
    }));
    assert!(
        msg.contains("smap: in_axes Infer") && msg.contains("\"x\" to be Explicit"),
        "{msg}"
    );
}

#[test]
fn the_backward_pass_reuses_the_forward_passs_residuals() {
    let mesh = mesh();
    // The body's forward work (one `tanh` of the product) runs once: the backward call gets
    // what it needs from the forward call, as JAX's, rather than computing it again.
    let body = shard_map(|(x, w): (Array, Array)| psum(&x.matmul(&w).tanh(), "y"))
        .mesh(&mesh)
        .in_specs((P!["x", "y"], P!["y", None]))
        .out_specs(P!["x", None]);
    let step = jit(|(x, w): (Array, Array)| {
        grad(|w: Array| body.call::<_, Array>((x.clone(), w)).sum(None, false))(w)
    });
    let (x, w) = (small(&[4, 8]), small(&[8, 3]));
    let g: Array = step.call((x.clone(), w.clone()));
    let text = step.site().last_stablehlo().unwrap();
    assert_eq!(text.matches("stablehlo.tanh").count(), 1, "{text}");
    assert_eq!(text.matches("sdy.manual_computation").count(), 2, "{text}");
    // The gradient is the one computed without shard_map: the sum over the 4 blocks along
    // "y" of tanh(x block @ w block).
    let want = grad(|w: Array| {
        (0..4)
            .map(|j| {
                let xb = x.slice_axis(1, 2 * j, 2 * j + 2);
                let wb = w.slice_axis(0, 2 * j, 2 * j + 2);
                xb.matmul(&wb).tanh().sum(None, false)
            })
            .reduce(|a, b| a + b)
            .unwrap()
    })(w);
    for (a, b) in g.to_vec::<f32>().iter().zip(want.to_vec::<f32>()) {
        assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
    }
}
