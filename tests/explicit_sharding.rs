//! Explicit sharding (JAX's sharding in types) on 8 CPU devices against JAX 0.10.2
//! (`tests/golden/explicit_sharding.json`, made by `tests/golden/gen_explicit_sharding.py`):
//! the type each operation's result gets from its sharding rule inside jit, the
//! `sdy.sharding_constraint`s of a lowered program, gradients typed as their primals, the
//! example's type inside vmap, reshard, output shardings for ambiguous products, eager
//! operations, and the errors.

mod common;

use common::golden::{f32s, seq};
use common::{assert_agree, panic_message};
use jaxrs::lax;
use jaxrs::prelude::*;
use jaxrs::{AxisType, Mesh, NamedSharding, P};
use serde_json::Value;

fn explicit_mesh() -> Mesh {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::make_mesh(&[2, 4], &["dp", "mp"])
        .unwrap()
        .with_axis_types(&[AxisType::Explicit; 2])
        .unwrap()
}

fn golden() -> Value {
    common::golden::load("explicit_sharding.json")
}

/// x f32[8@dp,16], y f32[8,16], w f32[16,32@mp], as the generator lays them out.
fn inputs(mesh: &Mesh) -> (Array, Array, Array) {
    let on =
        |a: Array, spec| jaxrs::device_put(&a, NamedSharding::new(mesh.clone(), spec).unwrap());
    (
        on(seq(&[8, 16], 7, 3.0, 0.25), P!["dp", None]),
        on(seq(&[8, 16], 5, 2.0, 0.5), P![None, None]),
        on(seq(&[16, 32], 11, 5.0, 0.125), P![None, "mp"]),
    )
}

type Case = fn(&Array, &Array, &Array) -> Array;

/// The generator's cases, written with jaxrs's `lax`.
fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("sin", |x, _, _| x.sin()),
        ("add_unsharded", |x, y, _| x + y),
        ("select", |x, y, _| lax::select(&x.gt(0.0f32), x, y)),
        ("slice_sharded_dim", |x, _, _| {
            lax::slice(x, &[0, 0], &[4, 16], None)
        }),
        ("slice_other_dim", |x, _, _| {
            lax::slice(x, &[0, 2], &[8, 10], None)
        }),
        ("concatenate_0", |x, _, _| lax::concatenate(&[x, x], 0)),
        ("concatenate_1", |x, y, _| lax::concatenate(&[x, y], 1)),
        ("reshape_merge", |x, _, _| lax::reshape(x, [128], None)),
        ("reshape_split", |x, _, _| lax::reshape(x, [2, 4, 16], None)),
        ("reshape_split_minor", |x, _, _| {
            lax::reshape(x, [8, 4, 4], None)
        }),
        ("reshape_regroup", |x, _, _| lax::reshape(x, [4, 32], None)),
        ("transpose", |x, _, _| lax::transpose(x, &[1, 0])),
        ("broadcast_in_dim", |x, _, _| {
            lax::broadcast_in_dim(x, &[8, 3, 16], &[0, 2])
        }),
        ("reduce_sum_1", |x, _, _| lax::reduce_sum(x, &[1])),
        ("reduce_sum_0", |x, _, _| lax::reduce_sum(x, &[0])),
        ("reduce_max_1", |x, _, _| lax::reduce_max(x, &[1])),
        ("cumsum_1", |x, _, _| lax::cumsum(x, 1, false)),
        ("cumsum_0", |x, _, _| lax::cumsum(x, 0, false)),
        ("sort_1", |x, _, _| lax::sort(&[x], 1, true, 1).remove(0)),
        ("sort_0", |x, _, _| lax::sort(&[x], 0, true, 1).remove(0)),
        ("pad_1", |x, _, _| {
            lax::pad(x, 0.0f32, &[(0, 0, 0), (1, 1, 0)])
        }),
        ("dot_x_w", |x, _, w| {
            lax::dot_general(x, w, (([1], [0]), ([], [])), None, None)
        }),
        ("dot_yT_x", |x, y, _| {
            lax::dot_general(y, x, (([0], [0]), ([], [])), None, None)
        }),
        ("dot_x_xT", |x, _, _| {
            lax::dot_general(x, x, (([1], [1]), ([], [])), None, None)
        }),
        ("dot_contract_both", |x, _, _| {
            lax::dot_general(x, x, (([0], [0]), ([], [])), None, None)
        }),
        ("dot_out_sharding", |x, _, _| {
            lax::dot_general_sharded(x, x, (([0], [0]), ([], [])), None, None, P![None, "mp"])
        }),
        ("convert", |x, _, _| {
            lax::convert_element_type(x, DType::I32)
        }),
        ("reshard", |x, _, _| jaxrs::reshard(x, P![None, "mp"])),
        ("take_1", |x, _, _| {
            x.take(&Array::from_vec(vec![0i32, 5, 2], &[3]), 1)
        }),
        ("take_0", |x, _, _| {
            x.take(&Array::from_vec(vec![0i32, 5, 2], &[3]), 0)
        }),
        ("take_sharded_indices", |_, _, w| w.take(&sharded_ids(), 0)),
        ("take_along_1", |x, _, _| x.take_along_axis(&ids(), 1)),
        ("take_along_1_sharded", |x, _, _| {
            x.take_along_axis(&sharded_ids(), 1)
        }),
        ("take_along_0", |x, _, _| {
            x.take_along_axis(&Array::zeros(&[2, 16], DType::I32), 0)
        }),
    ]
}

/// i32[8,4] indices, unsharded, as the generator's `ids`.
fn ids() -> Array {
    Array::from_vec((0..32).map(|i| i % 5).collect::<Vec<i32>>(), &[8, 4])
}

fn sharded_ids() -> Array {
    jaxrs::reshard(&ids(), P!["dp", None])
}

/// Where jaxrs types what JAX refuses, on purpose (README "Explicit sharding"): `select` and
/// `concatenate` accept an unsharded operand beside a sharded one, because jaxrs cannot tell
/// an unsharded array from a broadcast scalar, which JAX types with its neighbour's sharding.
const MORE_PERMISSIVE: [(&str, &str); 2] = [
    ("select", "f32[8@dp,16]"),
    ("concatenate_1", "f32[8@dp,32]"),
];

#[test]
fn each_operation_types_its_result_as_jax_does() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, y, w) = inputs(&mesh);
    let want = &golden()["types"];
    let mut checked = 0;
    for (name, case) in cases() {
        let expected = want[name]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no golden"));
        // Read inside the trace, as jax.typeof is; the result's layout must agree with it.
        let traced = std::sync::Mutex::new(String::new());
        let f = jit(|(x, y, w): (Array, Array, Array)| {
            let out = case(&x, &y, &w);
            *traced.lock().unwrap() = jaxrs::typeof_(&out).to_string();
            out
        });
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let out: Array = f.call((x.clone(), y.clone(), w.clone()));
            assert_eq!(
                *traced.lock().unwrap(),
                jaxrs::typeof_(&out).to_string(),
                "{name}"
            );
            out
        }));
        let permissive = MORE_PERMISSIVE.iter().find(|(n, _)| *n == name);
        match (run, expected) {
            (Err(e), "error") => {
                let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(
                    msg.contains("shard"),
                    "{name}: the error should say why: {msg}"
                );
            }
            (Ok(out), "error") => {
                let (_, got) = permissive.unwrap_or_else(|| {
                    panic!(
                        "{name}: JAX refuses it, jaxrs typed it {}",
                        jaxrs::typeof_(&out)
                    )
                });
                assert_eq!(jaxrs::typeof_(&out).to_string(), *got, "{name}");
            }
            (Ok(out), want) => assert_eq!(jaxrs::typeof_(&out).to_string(), want, "{name}"),
            (Err(e), want) => panic!(
                "{name}: JAX types it {want}, jaxrs refused: {:?}",
                e.downcast_ref::<String>()
            ),
        }
        checked += 1;
    }
    assert_eq!(checked, want.as_object().unwrap().len());
}

#[test]
fn results_are_laid_out_as_their_types_say() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, y, w) = inputs(&mesh);
    let f = jit(|(x, y, w): (Array, Array, Array)| {
        let h = lax::dot_general(&x, &w, (([1], [0]), ([], [])), None, None);
        (h.sin() + 1.0, lax::transpose(&x, &[1, 0]), x + y)
    });
    let (h, t, s): (Array, Array, Array) = f.call((x.clone(), y.clone(), w.clone()));
    for (what, a, want) in [
        ("h", &h, "f32[8@dp,32@mp]"),
        ("t", &t, "f32[16,8@dp]"),
        ("s", &s, "f32[8@dp,16]"),
    ] {
        assert_eq!(jaxrs::typeof_(a).to_string(), want, "{what}");
    }
    assert_eq!(h.addressable_shards()[5].index, vec![4..8, 8..16]);
    assert_eq!(t.addressable_shards()[4].index, vec![0..16, 4..8]);
    // The values are the unsharded program's.
    let one = |a: &Array| Array::from_vec(a.to_vec::<f32>(), a.shape());
    let (x1, y1, w1) = (one(&x), one(&y), one(&w));
    assert_agree("h", &h, &(x1.matmul(&w1).sin() + 1.0), "one device");
    assert_agree("t", &t, &x1.transpose([1, 0]), "one device");
    assert_agree("s", &s, &(&x1 + &y1), "one device");
}

#[test]
fn the_program_constrains_each_typed_value_as_jax_lowers_it() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, w) = inputs(&mesh);
    let want = &golden()["program"];
    let f = jit(|(x, w): (Array, Array)| {
        let h = x.matmul(&w);
        (h.sin().sum(1, false), h.transpose([1, 0]))
    });
    let (s, t): (Array, Array) = f.call((x, w));
    let text = f.site().last_stablehlo().unwrap();
    let specs = constraint_specs(&text);
    let want_specs: Vec<String> = want["constraints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(specs, want_specs, "{text}");
    let results: Vec<String> = [&s, &t]
        .iter()
        .map(|a| jaxrs::typeof_(a).to_string())
        .collect();
    assert_eq!(results, ["f32[8@dp]", "f32[32@mp,8@dp]"]);
    assert_eq!(json_strings(&want["results"]), results);
}

/// The specs of a program's `sdy.sharding_constraint`s, in order, as JAX's text writes them.
fn constraint_specs(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains("sdy.sharding_constraint"))
        .map(|l| {
            let at = l.find("<@mesh, ").expect("a constraint names the mesh") + "<@mesh, ".len();
            let end = l[at..].find("]>").expect("the spec's end") + at + 1;
            l[at..end].to_string()
        })
        .collect()
}

/// `got`'s elements equal JAX's list `want` to 1e-5 relative (absolute below 1).
fn assert_close_to_jax(what: &str, got: &Array, want: &Value) {
    for (i, (g, w)) in got.to_vec::<f32>().iter().zip(f32s(want)).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{what}[{i}]: {g}, JAX {w}"
        );
    }
}

/// The types a traced function saw, by name.
#[derive(Default)]
struct Seen(std::sync::Mutex<std::collections::BTreeMap<String, String>>);

impl Seen {
    fn note(&self, what: &str, a: &Array) {
        let mut seen = self.0.lock().unwrap();
        seen.insert(what.to_string(), jaxrs::typeof_(a).to_string());
    }

    fn get(&self) -> std::collections::BTreeMap<String, String> {
        self.0.lock().unwrap().clone()
    }
}

fn json_strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn gradients_are_typed_as_their_primals_and_equal_jax() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, w) = inputs(&mesh);
    let want = &golden()["grad"];
    let step = jit(value_and_grad(|(x, w): (Array, Array)| {
        x.matmul(&w).sin().sum(None, false)
    }));
    let (loss, (dx, dw)): (Array, (Array, Array)) = step.call((x, w));
    let close = |got: f32, want: f32| (got - want).abs() <= 1e-5 * want.abs().max(1.0);
    assert!(close(
        loss.item::<f32>(),
        want["loss"].as_f64().unwrap() as f32
    ));
    assert_eq!(
        jaxrs::typeof_(&dx).to_string(),
        want["dx_type"].as_str().unwrap()
    );
    assert_eq!(
        jaxrs::typeof_(&dw).to_string(),
        want["dw_type"].as_str().unwrap()
    );
    for (what, got, want) in [("dx", &dx, &want["dx"]), ("dw", &dw, &want["dw"])] {
        for (i, (g, w)) in got.to_vec::<f32>().iter().zip(f32s(want)).enumerate() {
            assert!(close(*g, w), "{what}[{i}]: {g}, JAX {w}");
        }
    }
}

#[test]
fn vmap_types_the_example_without_the_mapped_dimension() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, _) = inputs(&mesh);
    let want = &golden()["vmap"];
    for (axis, name) in [(0i64, "axis_0"), (1, "axis_1")] {
        let seen = std::sync::Mutex::new(String::new());
        let f = jit(|x: Array| {
            vmap(
                |r: Array| {
                    *seen.lock().unwrap() = jaxrs::typeof_(&r).to_string();
                    r * 2.0
                },
                axis,
                axis,
            )(x)
        });
        let y: Array = f.call(x.clone());
        assert_eq!(
            *seen.lock().unwrap(),
            want[name].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(y.to_vec::<f32>(), (&x * 2.0).to_vec::<f32>());
    }
}

#[test]
fn an_eager_operation_lays_its_result_out_as_typed() {
    let mesh = explicit_mesh();
    let (x, y, _) = inputs(&mesh);
    let sum = &x + &y;
    assert_eq!(jaxrs::typeof_(&sum).to_string(), "f32[8@dp,16]");
    assert_eq!(sum.addressable_shards()[4].index, vec![4..8, 0..16]);
    let total = sum.sum(1, false);
    assert_eq!(jaxrs::typeof_(&total).to_string(), "f32[8@dp]");
    let want: Vec<f32> = (0..8)
        .map(|r| {
            (0..16)
                .map(|c| x.to_vec::<f32>()[r * 16 + c] + y.to_vec::<f32>()[r * 16 + c])
                .sum()
        })
        .collect();
    assert_eq!(total.to_vec::<f32>(), want);
    // A concrete array's aval is its shape and dtype; typeof_ reads the layout.
    assert_eq!(x.aval().to_string(), "f32[8,16]");
    let _m = jaxrs::set_mesh(&mesh);
    let moved = jaxrs::reshard(&x, P![None, "mp"]);
    assert_eq!(jaxrs::typeof_(&moved).to_string(), "f32[8,16@mp]");
    assert_eq!(moved.to_vec::<f32>(), x.to_vec::<f32>());
}

#[test]
fn the_errors_name_the_op_the_types_and_the_way_out() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, _) = inputs(&mesh);
    let x2 = x.clone();
    let msg = panic_message(move || {
        let f = jit(|x: Array| lax::dot_general(&x, &x, (([0], [0]), ([], [])), None, None));
        let _: Array = f.call(x2);
    });
    assert!(
        msg.starts_with(
            "dot_general: contracting dimensions are sharded and it is ambiguous how the \
             output should be sharded"
        ) && msg.contains("(operands: f32[8@dp,16], f32[8@dp,16])")
            && msg.contains("tests/explicit_sharding.rs"),
        "{msg}"
    );
    let x2 = x.clone();
    let msg = panic_message(move || {
        let f = jit(|x: Array| lax::reshape(&x, [4, 32], None));
        let _: Array = f.call(x2);
    });
    assert!(
        msg.starts_with("reshape: this reshape of a sharded operand"),
        "{msg}"
    );
    let x2 = x.clone();
    let msg = panic_message(move || {
        let f = jit(|x: Array| jaxrs::numpy::fft::fft(&x, None, -1, None));
        let _: Array = f.call(x2.astype(DType::C64));
    });
    assert!(
        msg.contains("has no sharding rule") && msg.contains("reshard"),
        "{msg}"
    );
    // reshard names explicit axes only.
    let auto = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])
        .unwrap()
        .with_axis_types(&[AxisType::Explicit, AxisType::Auto])
        .unwrap();
    let x2 = x.clone();
    let msg = panic_message(move || {
        let _ = jaxrs::reshard(&x2, NamedSharding::new(auto, P![None, "mp"]).unwrap());
    });
    assert!(
        msg.contains("names the axis \"mp\", which is not Explicit"),
        "{msg}"
    );
    assert_eq!(
        mesh.with_axis_types(&[AxisType::Explicit])
            .unwrap_err()
            .to_string(),
        "Mesh::with_axis_types: the mesh has 2 axes ([\"dp\", \"mp\"]) but 1 axis types were \
         given ([Explicit])"
    );
}

#[test]
fn auto_meshes_keep_their_programs() {
    // The same program over Auto axes: no types, no constraints but XLA's own choices.
    jaxrs::set_cpu_device_count(8).unwrap();
    let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"]).unwrap();
    assert_eq!(mesh.axis_types(), &[AxisType::Auto; 2]);
    assert_eq!(
        mesh.to_string(),
        "Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto))"
    );
    let (x, _, w) = inputs(&mesh);
    let f = jit(|(x, w): (Array, Array)| {
        let h = x.matmul(&w);
        assert_eq!(jaxrs::typeof_(&h).to_string(), "f32[8,32]");
        h
    });
    let _: Array = f.call((x, w));
    assert!(!f
        .site()
        .last_stablehlo()
        .unwrap()
        .contains("sdy.sharding_constraint"));
}

#[test]
fn loops_and_branches_type_their_results_by_their_bodies() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, w) = inputs(&mesh);
    let f = jit(|(x, w): (Array, Array)| {
        let looped = fori_loop(0, 3, |_, h: Array| (&h * 0.5).tanh(), x.matmul(&w));
        let (carry, ys) = scan(
            |c: Array, row: Array| (&c + &row, c.sum(None, false)),
            Array::zeros(&[16], DType::F32),
            x.clone(),
        );
        let branch = cond(
            &x.sum(None, false).gt(0.0f32),
            |x: Array| x * 2.0,
            |x: Array| -x,
            x.clone(),
        );
        (looped, carry, ys, branch)
    });
    let (looped, carry, ys, branch): (Array, Array, Array, Array) = f.call((x.clone(), w.clone()));
    assert_eq!(jaxrs::typeof_(&looped).to_string(), "f32[8@dp,32@mp]");
    assert_eq!(jaxrs::typeof_(&branch).to_string(), "f32[8@dp,16]");
    assert_eq!(jaxrs::typeof_(&carry).to_string(), "f32[16]");
    let one = |a: &Array| Array::from_vec(a.to_vec::<f32>(), a.shape());
    let (x1, w1) = (one(&x), one(&w));
    let mut h = x1.matmul(&w1);
    for _ in 0..3 {
        h = (&h * 0.5).tanh();
    }
    assert_agree("looped", &looped, &h, "one device");
    assert_agree("carry", &carry, &x1.sum(0, false), "one device");
    assert_eq!(ys.shape(), &[8]);
    let sign = if x1.sum(None, false).item::<f32>() > 0.0 {
        2.0
    } else {
        -1.0
    };
    assert_agree("branch", &branch, &(&x1 * sign), "one device");
}

#[test]
fn an_mlp_trains_with_explicitly_sharded_parameters_as_on_one_device() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, y, w) = inputs(&mesh);
    let on =
        |a: Array, spec| jaxrs::device_put(&a, NamedSharding::new(mesh.clone(), spec).unwrap());
    let w2 = on(seq(&[32, 16], 13, 6.0, 0.0625), P!["mp", None]);
    // w2's rows are split over mp as h's columns are: the second product contracts a
    // dimension sharded on both sides, so its output sharding is given.
    let loss = |(w, w2, x, y): (Array, Array, Array, Array)| {
        let h = x.matmul(&w).tanh();
        let out = jaxrs::numpy::matmul_sharded(&h, &w2, None, P!["dp", None]);
        let d = out - y;
        (&d * &d).mean(None, false)
    };
    let step = jit(move |(w, w2, x, y): (Array, Array, Array, Array)| {
        let (l, (dw, dw2, _, _)) = value_and_grad(loss)((w.clone(), w2.clone(), x, y));
        (l, &w - &dw * 0.1, &w2 - &dw2 * 0.1)
    });
    let one = |a: &Array| Array::from_vec(a.to_vec::<f32>(), a.shape());
    let (mut ws, mut w2s) = (w.clone(), w2.clone());
    let (mut w1, mut w21) = (one(&w), one(&w2));
    for i in 0..3 {
        let (l, nw, nw2): (Array, Array, Array) = step.call((ws, w2s, x.clone(), y.clone()));
        assert_eq!(jaxrs::typeof_(&nw).to_string(), "f32[16,32@mp]");
        assert_eq!(jaxrs::typeof_(&nw2).to_string(), "f32[32@mp,16]");
        let (l1, nw1, nw21): (Array, Array, Array) = step.call((w1, w21, one(&x), one(&y)));
        assert_agree(&format!("loss {i}"), &l, &l1, "one device");
        assert_agree(&format!("w {i}"), &nw, &nw1, "one device");
        (ws, w2s, w1, w21) = (nw, nw2, nw1, nw21);
    }
}

#[test]
fn shard_map_types_its_results_by_its_out_specs() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let (x, _, w) = inputs(&mesh);
    // A collective matmul's shape: each device multiplies its rows by its columns of w.
    let f = jit(|(x, w): (Array, Array)| {
        let h = jaxrs::shard_map(|(x, w): (Array, Array)| x.matmul(&w))
            .mesh(&mesh)
            .in_specs((P!["dp", None], P![None, "mp"]))
            .out_specs(P!["dp", "mp"])
            .call((x, w));
        assert_eq!(jaxrs::typeof_(&h).to_string(), "f32[8@dp,32@mp]");
        h.tanh()
    });
    let h: Array = f.call((x.clone(), w.clone()));
    assert_eq!(jaxrs::typeof_(&h).to_string(), "f32[8@dp,32@mp]");
    let one = |a: &Array| Array::from_vec(a.to_vec::<f32>(), a.shape());
    assert_agree("h", &h, &one(&x).matmul(&one(&w)).tanh(), "one device");
}

#[test]
fn in_shardings_type_the_arguments_as_laid_out_ones_do() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let seen = std::sync::Mutex::new(Vec::new());
    let f = jit(|(x, w): (Array, Array)| {
        let h = x.matmul(&w);
        seen.lock()
            .unwrap()
            .extend([x.aval().to_string(), h.aval().to_string()]);
        h
    })
    .in_shardings((P!["dp", None], P![None, "mp"]));
    let h: Array = f.call((seq(&[8, 16], 7, 3.0, 0.25), seq(&[16, 32], 11, 5.0, 0.125)));
    assert_eq!(*seen.lock().unwrap(), ["f32[8@dp,16]", "f32[8@dp,32@mp]"]);
    assert_eq!(jaxrs::typeof_(&h).to_string(), "f32[8@dp,32@mp]");
}

#[test]
fn auto_axes_leaves_its_body_untyped_as_jax_does() {
    let mesh = explicit_mesh();
    let _m = jaxrs::set_mesh(&mesh);
    let want = &golden()["auto_axes"];
    let on =
        |a: Array, spec| jaxrs::device_put(&a, NamedSharding::new(mesh.clone(), spec).unwrap());
    let x = on(seq(&[8, 16], 7, 3.0, 0.25), P!["dp", "mp"]);
    let w = on(seq(&[16, 4], 11, 5.0, 0.125), P!["mp", None]);
    let seen = Seen::default();
    let note = |what: &str, a: &Array| seen.note(what, a);
    let f = jit(|(x, w): (Array, Array)| {
        let product = jaxrs::auto_axes(
            |(x, w): (Array, Array)| {
                note("inside", &x);
                x.matmul(&w)
            },
            None,
            P!["dp", None],
        );
        product((x, w))
    });
    let y: Array = f.call((x.clone(), w.clone()));
    let text = f.site().last_stablehlo().unwrap();
    assert_eq!(
        constraint_specs(&text),
        json_strings(&want["constraints"]),
        "{text}"
    );
    assert_eq!(
        jaxrs::typeof_(&y).to_string(),
        want["result"].as_str().unwrap()
    );
    assert_close_to_jax("y", &y, &want["values"]);
    // Over "mp" alone: "dp" stays typed inside.
    let partial = jit(|x: Array| {
        jaxrs::auto_axes(
            |x: Array| {
                note("partial_inside", &x);
                x * 2.0
            },
            Some(&["mp"]),
            P!["dp", "mp"],
        )(x)
    });
    let z: Array = partial.call(x.clone());
    assert_eq!(
        jaxrs::typeof_(&z).to_string(),
        want["partial_result"].as_str().unwrap()
    );
    let seen = seen.get();
    assert_eq!(seen["inside"], want["inside"].as_str().unwrap());
    assert_eq!(
        seen["partial_inside"],
        want["partial_inside"].as_str().unwrap()
    );
    drop(seen);
    // Eagerly, and under grad: the gradient comes back typed as its primal.
    let eager = jaxrs::auto_axes(|(x, w): (Array, Array)| x.matmul(&w), None, P!["dp", None]);
    let ye = eager((x.clone(), w.clone()));
    assert_eq!(jaxrs::typeof_(&ye).to_string(), "f32[8@dp,4]");
    assert_agree("eager", &ye, &y, "jit");
    let dw = jit(grad(|(x, w): (Array, Array)| {
        jaxrs::auto_axes(|(x, w): (Array, Array)| x.matmul(&w), None, P!["dp", None])((x, w))
            .sum(None, false)
    }));
    let (_, g): (Array, Array) = dw.call((x, w));
    assert_eq!(jaxrs::typeof_(&g).to_string(), "f32[16@mp,4]");
}

#[test]
fn explicit_axes_types_its_body_on_an_auto_mesh_as_jax_does() {
    jaxrs::set_cpu_device_count(8).unwrap();
    let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"]).unwrap();
    let _m = jaxrs::set_mesh(&mesh);
    let want = &golden()["explicit_axes"];
    let seen = Seen::default();
    let note = |what: &str, a: &Array| seen.note(what, a);
    let f = jit(|(x, w): (Array, Array)| {
        let typed = jaxrs::explicit_axes(
            |(x, w): (Array, Array)| {
                let h = x.matmul(&w);
                note("x", &x);
                note("w", &w);
                note("h", &h);
                h.sin()
            },
            None,
            (P!["dp", None], P![None, "mp"]),
        );
        let y = typed((x, w));
        note("out", &y);
        y
    });
    let (x, w) = (seq(&[8, 16], 7, 3.0, 0.25), seq(&[16, 4], 11, 5.0, 0.125));
    let y: Array = f.call((x.clone(), w.clone()));
    let seen = seen.get();
    for (what, got) in &seen {
        assert_eq!(got, want["types"][what].as_str().unwrap(), "{what}");
    }
    assert_eq!(seen.len(), want["types"].as_object().unwrap().len());
    let text = f.site().last_stablehlo().unwrap();
    let specs = constraint_specs(&text);
    assert_eq!(specs, json_strings(&want["constraints"]), "{text}");
    assert_close_to_jax("y", &y, &want["values"]);
    // Eagerly: typed inside, untyped over the Auto mesh after.
    let eager = jaxrs::explicit_axes(
        |x: Array| {
            let s = x.sin();
            assert_eq!(jaxrs::typeof_(&s).to_string(), "f32[8@dp,16]");
            s
        },
        None,
        P!["dp"],
    );
    let s = eager(x.clone());
    assert_eq!(jaxrs::typeof_(&s).to_string(), "f32[8,16]");
    assert_agree("eager", &s, &x.sin(), "unsharded");
}
