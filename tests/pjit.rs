//! pjit (jit with shardings) on 8 CPU devices against JAX 0.10.2 (`tests/golden/pjit.json`,
//! made by `tests/golden/gen_pjit.py`): the seed's §6 program's values and shard layout, the
//! Shardy annotations of its StableHLO, the all-reduce XLA inserts for a dp-summed gradient,
//! grad and scan inside a sharded step, the cache key and its explanations, donation of a
//! sharded argument, and the errors.

use jaxrs::prelude::*;
use jaxrs::{device_put, Mesh, NamedSharding, Sharding, P};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn mesh_2x4() -> Mesh {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap()
}

fn named(mesh: &Mesh, spec: jaxrs::PartitionSpec) -> NamedSharding {
    NamedSharding::new(mesh.clone(), spec).unwrap()
}

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/pjit.json"
    ))
    .expect("tests/golden/pjit.json");
    serde_json::from_str(&text).unwrap()
}

/// ((arange(n) % modulus) - shift) * scale, as gen_pjit.py's `seq`.
fn seq(shape: &[usize], modulus: usize, shift: f32, scale: f32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % modulus) as f32 - shift) * scale)
        .collect();
    Array::from_vec(v, shape)
}

fn x() -> Array {
    seq(&[8, 16], 7, 3.0, 0.25)
}
fn w() -> Array {
    seq(&[16, 8], 5, 2.0, 0.125)
}
fn w1() -> Array {
    seq(&[16, 32], 9, 4.0, 0.0625)
}
fn w2() -> Array {
    seq(&[32, 4], 11, 5.0, 0.0625)
}
fn y() -> Array {
    seq(&[8, 4], 3, 1.0, 0.5)
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, JAX {w}"
        );
    }
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn section6(mesh: &Mesh) -> jaxrs::Jitted<impl Fn((Array, Array)) -> Array> {
    jit(|(x, w): (Array, Array)| x.matmul(&w).tanh())
        .in_shardings((P!["dp", None], P![None, "mp"]))
        .out_shardings(P!["dp", "mp"])
        .mesh(mesh)
}

#[test]
fn section6_program_gives_jax_values_and_shards() {
    let mesh = mesh_2x4();
    let g = &golden()["section6"];
    let f = section6(&mesh);
    let out: Array = f.call((x(), w()));
    assert_close(
        &out.to_vec::<f32>(),
        &floats(&g["values"]),
        1e-6,
        "tanh(x @ w)",
    );
    assert_eq!(
        out.sharding(),
        Some(&Sharding::Named(named(&mesh, P!["dp", "mp"])))
    );
    let shards = out.addressable_shards();
    assert_eq!(shards.len(), 8);
    let want_shape: Vec<usize> = g["shard_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    for (shard, want) in shards.iter().zip(g["shards"].as_array().unwrap()) {
        assert_eq!(shard.device.id() as u64, want["device"].as_u64().unwrap());
        let index: Vec<Vec<usize>> = shard.index.iter().map(|r| vec![r.start, r.end]).collect();
        let want_index: Vec<Vec<usize>> = serde_json::from_value(want["index"].clone()).unwrap();
        assert_eq!(index, want_index);
        assert_eq!(shard.data.shape(), &want_shape[..]);
        assert_eq!(
            shard.data.sharding(),
            Some(&Sharding::SingleDevice(shard.device))
        );
    }

    // The module carries Shardy's annotations; one partition per device.
    let text = f.site().last_stablehlo().unwrap();
    for needle in [
        "mhlo.num_partitions = 8 : i32",
        "sdy.mesh @mesh = <[\"dp\"=2, \"mp\"=4]>",
        "sdy.sharding = #sdy.sharding<@mesh, [{\"dp\"}, {}]>",
        "sdy.sharding = #sdy.sharding<@mesh, [{}, {\"mp\"}]>",
        "-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"dp\"}, {\"mp\"}]>})",
    ] {
        assert!(text.contains(needle), "{needle} not in\n{text}");
    }

    // Inputs already laid out as the program takes them: a hit, and the same values.
    let xs = device_put(&x(), named(&mesh, P!["dp", None]));
    let ws = device_put(&w(), named(&mesh, P![None, "mp"]));
    let again: Array = f.call((xs, ws));
    assert_eq!(again.to_vec::<f32>(), out.to_vec::<f32>());
    assert_eq!(f.site().cache_misses(), 1);
}

#[test]
fn without_shardings_the_program_follows_the_inputs() {
    let mesh = mesh_2x4();
    let g = &golden()["section6"];
    let xs = device_put(&x(), named(&mesh, P!["dp", None]));
    let ws = device_put(&w(), named(&mesh, P![None, "mp"]));
    let f = jit(|(x, w): (Array, Array)| x.matmul(&w).tanh());
    let out: Array = f.call((xs.clone(), ws.clone()));
    assert_close(
        &out.to_vec::<f32>(),
        &floats(&g["values"]),
        1e-6,
        "tanh(x @ w)",
    );
    // Results nobody gave a sharding lie as XLA's propagation chose them, as JAX reports.
    let jax_spec: Vec<Option<String>> =
        serde_json::from_value(g["follow_inputs_spec"].clone()).unwrap();
    assert_eq!(
        jax_spec,
        vec![Some("dp".to_string()), Some("mp".to_string())]
    );
    assert_eq!(
        out.sharding(),
        Some(&Sharding::Named(named(&mesh, P!["dp", "mp"])))
    );
    assert_eq!(out.addressable_shards()[0].data.shape(), &[4, 2]);
    let text = f.site().last_stablehlo().unwrap();
    assert!(
        text.contains("sdy.sharding = #sdy.sharding<@mesh, [{\"dp\"}, {}]>"),
        "{text}"
    );

    // A new layout of an input is a new program, and the miss says why.
    let xr = device_put(&x(), named(&mesh, P![None, "mp"]));
    let again: Array = f.call((xr, ws.clone()));
    assert_close(
        &again.to_vec::<f32>(),
        &floats(&g["values"]),
        1e-6,
        "relaid",
    );
    assert_eq!(f.site().cache_misses(), 2);
    assert_eq!(
        f.site().last_miss_explanation().unwrap(),
        format!(
            "jit `without_shardings_the_program_follows_the_inputs::{{{{closure}}}}` (tests/pjit.rs): \
             tracing and compiling because the sharding of arg[0] \
             changed from NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec('dp', \
             None)) to NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec(None, \
             'mp'))"
        )
    );
    // A plain array with a sharded one: the plain one is replicated over the mesh.
    let mixed: Array = f.call((x(), ws));
    assert_close(&mixed.to_vec::<f32>(), &floats(&g["values"]), 1e-6, "mixed");
    assert_eq!(f.site().cache_misses(), 3);
    assert!(f
        .site()
        .last_miss_explanation()
        .unwrap()
        .ends_with("the sharding of arg[0] changed from NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec(None, 'mp')) to replicated over Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto))"));
}

#[jit(in_shardings = (P!["dp", None], P![None, "mp"]), out_shardings = P!["dp", "mp"])]
fn layer(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh()
}

#[test]
fn the_attribute_takes_shardings_over_the_mesh_in_scope() {
    let mesh = mesh_2x4();
    let g = &golden()["section6"];
    let _m = mesh.enter();
    let out = layer(&x(), &w());
    assert_close(&out.to_vec::<f32>(), &floats(&g["values"]), 1e-6, "layer");
    assert_eq!(
        out.sharding(),
        Some(&Sharding::Named(named(&mesh, P!["dp", "mp"])))
    );
    // Another mesh in scope is another program; the miss names the parameter.
    let other = Mesh::new(&jaxrs::devices(), &[4, 2], &["dp", "mp"]).unwrap();
    let _o = other.enter();
    let out = layer(&x(), &w());
    assert_close(
        &out.to_vec::<f32>(),
        &floats(&g["values"]),
        1e-6,
        "layer 4x2",
    );
    assert_eq!(out.addressable_shards()[0].data.shape(), &[2, 4]);
    let why = layer::jit_site().last_miss_explanation().unwrap();
    assert!(
        why.contains("the sharding of x changed from NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec('dp', None)) to NamedSharding(mesh=Mesh('dp': 4, 'mp': 2, axis_types=(Auto, Auto)), spec=PartitionSpec('dp', None))"),
        "{why}"
    );
}

fn loss(w1: &Array, w2: &Array, x: &Array, y: &Array) -> Array {
    (x.matmul(w1).tanh().matmul(w2) - y)
        .powi(2)
        .mean(None, false)
}

fn count_all_reduce(hlo: &[u8]) -> usize {
    // An HloInstructionProto's opcode (field 2) is a length-prefixed string.
    let needle = [&[0x12u8, 10][..], b"all-reduce"].concat();
    hlo.windows(needle.len())
        .filter(|w| *w == &needle[..])
        .count()
}

#[test]
fn grad_of_a_dp_mp_mlp_has_jax_values_and_an_all_reduce() {
    let mesh = mesh_2x4();
    let g = &golden()["mlp"];
    let step = jit(|(w1, w2, x, y): (Array, Array, Array, Array)| {
        value_and_grad(|(w1, w2): (Array, Array)| loss(&w1, &w2, &x, &y))((w1, w2))
    })
    .in_shardings((
        P![None, "mp"],
        P!["mp", None],
        P!["dp", None],
        P!["dp", None],
    ))
    .out_shardings((P![], (P![None, "mp"], P!["mp", None])))
    .mesh(&mesh);
    let (value, (g1, g2)): (Array, (Array, Array)) = step.call((w1(), w2(), x(), y()));
    assert_close(
        &[value.item::<f32>()],
        &[g["loss"].as_f64().unwrap() as f32],
        1e-6,
        "loss",
    );
    assert_close(&g1.to_vec::<f32>(), &floats(&g["g1"]), 1e-5, "g1");
    assert_close(&g2.to_vec::<f32>(), &floats(&g["g2"]), 1e-5, "g2");
    assert_eq!(g1.addressable_shards()[0].data.shape(), &[16, 8]);
    assert_eq!(g2.addressable_shards()[0].data.shape(), &[8, 4]);

    let (format, hlo) = step
        .site()
        .last_optimized_program()
        .expect("the optimized program");
    assert!(format.starts_with("hlo"), "{format}");
    let ours = count_all_reduce(&hlo);
    let jax = g["all_reduce_count"].as_u64().unwrap() as usize;
    println!("all-reduce instructions: jaxrs {ours}, JAX {jax}");
    assert!(jax > 0);
    assert_eq!(
        ours, jax,
        "all-reduce instructions for the dp-summed gradient"
    );
}

#[test]
fn scan_of_sgd_steps_inside_a_sharded_jit() {
    let mesh = mesh_2x4();
    let g = &golden()["scan"];
    let _m = mesh.enter();
    let train = jit(|(w1, w2, x, y): (Array, Array, Array, Array)| {
        let steps = Array::arange(0.0, 3.0, 1.0, DType::I32);
        let ((w1, w2), losses) = scan(
            |(w1, w2): (Array, Array), _: Array| {
                let (l, (g1, g2)) = value_and_grad(|(a, b): (Array, Array)| loss(&a, &b, &x, &y))(
                    (w1.clone(), w2.clone()),
                );
                ((w1 - g1 * 0.1, w2 - g2 * 0.1), l)
            },
            (w1, w2),
            steps,
        );
        (w1, w2, losses)
    })
    .in_shardings((
        P![None, "mp"],
        P!["mp", None],
        P!["dp", None],
        P!["dp", None],
    ))
    .out_shardings((P![None, "mp"], P!["mp", None], P![]));
    let (w1, w2, losses): (Array, Array, Array) = train.call((w1(), w2(), x(), y()));
    assert_close(
        &losses.to_vec::<f32>(),
        &floats(&g["losses"]),
        1e-5,
        "losses",
    );
    assert_close(&w1.to_vec::<f32>(), &floats(&g["w1"]), 1e-5, "w1");
    assert_close(&w2.to_vec::<f32>(), &floats(&g["w2"]), 1e-5, "w2");
    assert!(train
        .site()
        .last_stablehlo()
        .unwrap()
        .contains("stablehlo.while"));
}

#[test]
fn vmap_remat_and_constraints_inside_a_sharded_jit() {
    let mesh = mesh_2x4();
    let _m = mesh.enter();
    let f = jit(|(x, w): (Array, Array)| {
        let h = jaxrs::with_sharding_constraint(&x.matmul(&w), P!["dp", "mp"]);
        let rows = vmap(
            |r: Array| jaxrs::with_sharding_constraint(&r.tanh(), P!["mp"]),
            0,
            0,
        )(h);
        remat(|r: Array| r.sin()).call(rows).sum(Some(1), false)
    })
    .in_shardings((P!["dp", None], P![None, "mp"]));
    let got: Array = f.call((x(), w()));
    let want = x().matmul(&w()).tanh().sin().sum(Some(1), false);
    assert_close(
        &got.to_vec::<f32>(),
        &want.to_vec::<f32>(),
        1e-5,
        "vmap/remat",
    );
    let text = f.site().last_stablehlo().unwrap();
    assert!(
        text.contains("\"sdy.sharding_constraint\"(%") && text.contains("[{\"dp\"}, {\"mp\"}]"),
        "{text}"
    );
    // The batched constraint keeps the batch dimension whole.
    assert!(
        text.contains("#sdy.sharding<@mesh, [{}, {\"mp\"}]>"),
        "{text}"
    );

    // Its gradient passes the constraint through.
    let gf = jit(|w: Array| {
        grad(|w: Array| {
            jaxrs::with_sharding_constraint(&x().matmul(&w), P![None, "mp"])
                .tanh()
                .sum(None, false)
        })(w)
    });
    let gw: Array = gf.call(device_put(&w(), named(&mesh, P![None, "mp"])));
    let want = grad(|w: Array| x().matmul(&w).tanh().sum(None, false))(w());
    assert_close(&gw.to_vec::<f32>(), &want.to_vec::<f32>(), 1e-5, "grad");
}

#[jit(donate = x, in_shardings = (P!["dp", "mp"],), out_shardings = P!["dp", "mp"])]
fn double(x: Array) -> Array {
    x * 2.0
}

#[test]
fn a_sharded_jit_inside_another_becomes_constraints() {
    let mesh = mesh_2x4();
    let g = &golden()["section6"];
    let inner = section6(&mesh);
    let outer = jit(|(x, w): (Array, Array)| inner.call((x, w)) * 1.0);
    let out: Array = outer.call((x(), w()));
    assert_close(&out.to_vec::<f32>(), &floats(&g["values"]), 1e-6, "nested");
    let text = outer.site().last_stablehlo().unwrap();
    assert_eq!(text.matches("sdy.sharding_constraint").count(), 3, "{text}");
    assert!(text.contains("mhlo.num_partitions = 8"), "{text}");
}

#[test]
fn a_sharded_argument_is_donated_shard_by_shard() {
    let mesh = mesh_2x4();
    let _m = mesh.enter();
    let want: Vec<f32> = x().to_vec::<f32>().iter().map(|v| v * 2.0).collect();
    let xs = device_put(&x(), named(&mesh, P!["dp", "mp"]));
    let out = double(xs);
    assert_eq!(out.to_vec::<f32>(), want);
    // Each device's 4 x 4 f32 shard (64 bytes) is aliased to its output shard.
    let stats = double::jit_site().last_compiled_memory_stats().unwrap();
    assert_eq!(stats.alias_bytes, 64, "{stats:?}");

    // A clone or a shard view alive still reads the buffers: nothing is donated.
    let ys = device_put(&x(), named(&mesh, P!["dp", "mp"]));
    let keep = ys.clone();
    let _ = double(ys);
    assert!(!keep.is_deleted());
    assert_eq!(keep.to_vec::<f32>(), x().to_vec::<f32>());
    let view = keep.addressable_shards()[5].data.clone();
    let _ = double(keep);
    assert!(!view.is_deleted());

    // A donated argument laid out otherwise is re-laid out; the copy is what is donated.
    let plain = x();
    let out = double(plain.clone());
    assert_eq!(out.to_vec::<f32>(), want);
    assert!(!plain.is_deleted());
    // Outputs fed back in are donated: the chain runs on without copies.
    let again = double(double(out));
    assert_eq!(
        again.to_vec::<f32>(),
        want.iter().map(|v| v * 4.0).collect::<Vec<_>>()
    );
    assert_eq!(double::jit_site().cache_misses(), 1);
}

#[test]
fn errors_name_the_meshes_the_spec_and_the_axis() {
    let mesh = mesh_2x4();
    let line = Mesh::new(&jaxrs::devices(), &[8], &["d"]).unwrap();
    let f = jit(|(x, w): (Array, Array)| x.matmul(&w));
    let xs = device_put(&x(), named(&mesh, P!["dp", None]));
    let ws = device_put(&w(), named(&line, P!["d"]));
    let msg = panic_message(|| {
        let _: Array = f.call((xs.clone(), ws.clone()));
    });
    assert!(
        msg.starts_with("jit `errors_name_the_meshes_the_spec_and_the_axis::{{closure}}`: `arg[0]` is on Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)) over [")
            && msg.contains("but `arg[1]` is on Mesh('d': 8, axis_types=(Auto,)) over ["),
        "{msg}"
    );

    let g = jit(|x: Array| x * 2.0)
        .in_shardings(P!["dp", None, None])
        .mesh(&mesh);
    let msg = panic_message(|| {
        let _: Array = g.call(x());
    });
    assert_eq!(
        msg,
        "jit `errors_name_the_meshes_the_spec_and_the_axis::{{closure}}`: the sharding of `arg`: PartitionSpec('dp', None, None) has 3 entries \
         but the array has rank 2 (shape [8, 16])"
    );

    let h = jit(|x: Array| x * 2.0).in_shardings(P!["x"]).mesh(&mesh);
    let msg = panic_message(|| {
        let _: Array = h.call(x());
    });
    assert_eq!(
        msg,
        "jit `errors_name_the_meshes_the_spec_and_the_axis::{{closure}}`: in_shardings: NamedSharding: PartitionSpec('x',) names the axis \"x\", \
         which the mesh does not have (its axes: [\"dp\", \"mp\"])"
    );

    let k = jit(|x: Array| x * 2.0).in_shardings(P!["dp"]);
    let msg = panic_message(|| {
        let _: Array = k.call(x());
    });
    assert!(
        msg.contains("PartitionSpec('dp',) needs a mesh, and none is given or in scope"),
        "{msg}"
    );

    let u = jit(|x: Array| x * 2.0)
        .out_shardings(P![None, "mp"])
        .mesh(&mesh);
    let msg = panic_message(|| {
        let _: Array = u.call(Array::zeros(&[8, 6], DType::F32));
    });
    assert!(
        msg.contains("out_shardings of result 0 (f32[8,6]): dimension 1 of size 6 does not split evenly over mesh axis \"mp\"=4"),
        "{msg}"
    );
}

#[test]
fn donated_tuple_elements_keep_their_shardings() {
    let mesh = mesh_2x4();
    let step = jit(|(w, x): (Array, Array)| (&w - &x.sum(0, false) * 0.5, x.sum(None, false)))
        .in_shardings((P![None, "mp"], P!["dp", None]))
        .out_shardings((P![None, "mp"], P![]))
        .mesh(&mesh)
        .donate_argnums(&[0]);
    let (w, x) = (seq(&[4, 8], 5, 1.0, 0.5), seq(&[8, 8], 7, 3.0, 0.25));
    let want = &w - &x.sum(0, false) * 0.5;
    let (w2, total): (Array, Array) = step.call((w, x.clone()));
    assert_eq!(w2.to_vec::<f32>(), want.to_vec::<f32>());
    assert_eq!(
        w2.sharding().unwrap(),
        &Sharding::Named(named(&mesh, P![None, "mp"]))
    );
    assert_eq!(total.item::<f32>(), x.sum(None, false).item::<f32>());
    assert_eq!(
        step.site()
            .last_compiled_memory_stats()
            .unwrap()
            .alias_bytes,
        4 * 8 * 4 / 4
    );
}
