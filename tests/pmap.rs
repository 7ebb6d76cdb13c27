//! pmap on 8 CPU devices: values and per-device layouts against JAX 0.10.2
//! (`tests/golden/pmap.json`, made by `tests/golden/gen_pmap.py`), in_axes/out_axes variants,
//! trees, the device choice, inputs already laid out by a pmap, donation, the compile cache
//! and its explanations, composition with grad, vmap and jit, and every error message.
//!
//! Every test first asks for 8 CPU devices from code: the first to run creates the client,
//! the others find it with the same count.

use jaxrs::prelude::*;
use jaxrs::{Mesh, NamedSharding, Sharding, P};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn eight() -> Vec<jaxrs::Device> {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::devices()
}

/// `sin(0.37 i + seed)` in float32, as `gen_pmap.py`'s `data`.
fn data(shape: &[usize], seed: f64) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| (i as f64 * 0.37 + seed).sin() as f32)
        .collect();
    Array::from_vec(v, shape)
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/pmap.json"
    ))
    .expect("tests/golden/pmap.json");
    serde_json::from_str(&text).expect("json")
}

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// Compares one output with JAX's: shape, values, and which piece each device holds.
fn check_output(case: &str, got: &Array, want: &Value) {
    let shape = shape_of(&want["shape"]);
    assert_eq!(got.shape(), &shape[..], "{case}: shape");
    let values: Vec<f32> = want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    let got_values = got.to_vec::<f32>();
    for (i, (g, w)) in got_values.iter().zip(&values).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{case}: element {i} is {g}, JAX has {w}"
        );
    }
    let shards = got.addressable_shards();
    let want_shards = want["shards"].as_array().unwrap();
    assert_eq!(
        shards.len(),
        want_shards.len(),
        "{case}: one shard per device"
    );
    for (s, w) in shards.iter().zip(want_shards) {
        assert_eq!(
            i64::from(s.device.id()),
            w["device"].as_i64().unwrap(),
            "{case}: device order"
        );
        let index: Vec<std::ops::Range<usize>> = w["index"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize)
            .collect();
        assert_eq!(
            s.index, index,
            "{case}: the piece device {} holds",
            s.device
        );
        // The device holds exactly that piece of the whole.
        let starts: Vec<usize> = index.iter().map(|r| r.start).collect();
        let ends: Vec<usize> = index.iter().map(|r| r.end).collect();
        let ones = vec![1; index.len()];
        assert_eq!(
            s.data.to_vec::<f32>(),
            got.slice(&starts, &ends, &ones).to_vec::<f32>(),
            "{case}: the data on device {}",
            s.device
        );
    }
}

#[pmap(axis_name = "d")]
fn elementwise(x: &Array) -> Array {
    x.sin() * 2.0 + x.sum(None, false)
}

#[pmap(axis_name = "d", in_axes = (0, None))]
fn matmul_tanh(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh()
}

#[pmap(axis_name = "d", out_axes = (1, 0))]
fn row_stats(x: &Array) -> (Array, Array) {
    (x.sum(Some(0), false), x.max(None, false))
}

#[derive(Tree, Clone)]
struct Affine {
    w: Array,
    b: Array,
}

#[pmap(axis_name = "d", in_axes = (None, 0))]
fn tree_in(p: &Affine, x: &Array) -> (Array, Array) {
    ((x * x).sum(None, false), x.matmul(&p.w) + &p.b)
}

#[pmap(axis_name = "d", in_axes = (None, None, 0, 0))]
fn loss_and_grads(w: &Array, b: &Array, x: &Array, y: &Array) -> (Array, (Array, Array)) {
    let loss = |(w, b): (Array, Array)| (x.matmul(&w).tanh() + &b - y).powi(2).mean(None, false);
    let (value, grads) = value_and_grad(loss)((w.clone(), b.clone()));
    (value, grads)
}

#[pmap(axis_name = "d", in_axes = (None, 0))]
fn vmap_inside(w: &Array, x: &Array) -> Array {
    vmap(|r: Array| r.matmul(w).tanh().sum(None, false), 0, 0)(x.clone())
}

#[test]
fn values_and_layouts_match_jax() {
    eight();
    let golden = golden();
    let cases = golden["cases"].as_array().unwrap();
    let mut seen = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let inputs: Vec<Array> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| data(&shape_of(&i["shape"]), i["seed"].as_f64().unwrap()))
            .collect();
        let outs: Vec<Array> = match name {
            "elementwise" => vec![elementwise(&inputs[0])],
            "matmul_tanh" => vec![matmul_tanh(&inputs[0], &inputs[1])],
            "axis1_out1" => {
                let f = pmap(|(x, w): (Array, Array)| x.matmul(&w).tanh())
                    .axis_name("d")
                    .in_axes((1, None))
                    .out_axes(1);
                vec![f.call((inputs[0].clone(), inputs[1].clone()))]
            }
            "two_outputs" => {
                let (a, b) = row_stats(&inputs[0]);
                vec![a, b]
            }
            "tree_in" => {
                let p = Affine {
                    w: inputs[0].clone(),
                    b: inputs[1].clone(),
                };
                let (n, y) = tree_in(&p, &inputs[2]);
                vec![n, y]
            }
            "grads" => {
                let (value, (gw, gb)) =
                    loss_and_grads(&inputs[0], &inputs[1], &inputs[2], &inputs[3]);
                vec![value, gw, gb]
            }
            "vmap_inside" => vec![vmap_inside(&inputs[0], &inputs[1])],
            other => panic!("no Rust twin for the golden case {other}"),
        };
        let want = case["outputs"].as_array().unwrap();
        assert_eq!(outs.len(), want.len(), "{name}: outputs");
        for (o, w) in outs.iter().zip(want) {
            check_output(name, o, w);
        }
        seen += 1;
    }
    assert_eq!(seen, 7);
}

#[test]
fn results_stay_split_over_the_devices_named_after_the_axis() {
    let devices = eight();
    let x = data(&[8, 3], 0.0);
    let y = elementwise(&x);
    let mesh = Mesh::new(&devices, &[8], &["d"]).unwrap();
    assert_eq!(
        y.sharding(),
        Some(&Sharding::from(
            NamedSharding::new(mesh.clone(), P!["d"]).unwrap()
        ))
    );
    // A scalar per device comes back as a vector split over the devices; a tree of grads
    // as stacked leaves, each split along its leading axis.
    let (loss, (gw, _)) = loss_and_grads(
        &data(&[3, 1], 1.0),
        &data(&[1], 2.0),
        &data(&[8, 4, 3], 3.0),
        &data(&[8, 4, 1], 4.0),
    );
    assert_eq!(loss.shape(), &[8]);
    assert_eq!(
        gw.sharding().unwrap().to_string(),
        "NamedSharding(mesh=Mesh('d': 8, axis_types=(Auto,)), spec=PartitionSpec('d',))"
    );
    for (i, s) in gw.addressable_shards().iter().enumerate() {
        assert_eq!(s.device, devices[i]);
        assert_eq!(s.data.shape(), &[1, 3, 1]);
    }
    // out_axes 1: the spec names the axis at dimension 1.
    let (sums, _) = row_stats(&data(&[8, 5, 2], 5.0));
    assert_eq!(
        sums.sharding().unwrap().to_string(),
        "NamedSharding(mesh=Mesh('d': 8, axis_types=(Auto,)), spec=PartitionSpec(None, 'd'))"
    );
    // An eager op on a pmap's result runs over the same devices, its result split as the
    // operand was, each device computing its own slice (as JAX's ops on a pmap's output).
    let z = &y * 3.0 - 1.0;
    assert_eq!(z.sharding(), y.sharding());
    let want: Vec<f32> = y.to_vec::<f32>().iter().map(|v| v * 3.0 - 1.0).collect();
    assert_eq!(z.to_vec::<f32>(), want);
    for (zs, ys) in z.addressable_shards().iter().zip(y.addressable_shards()) {
        assert_eq!(zs.device, ys.device);
        let local: Vec<f32> = ys
            .data
            .to_vec::<f32>()
            .iter()
            .map(|v| v * 3.0 - 1.0)
            .collect();
        assert_eq!(zs.data.to_vec::<f32>(), local);
    }
    // ... and a pmap takes it as it lies.
    let again = elementwise(&z);
    assert_eq!(again.sharding(), y.sharding());
}

#[test]
fn negative_axes_count_from_the_end() {
    eight();
    // JAX 0.10.2's pmap mishandles negative axes, so these are checked against the
    // positive spelling instead of a golden.
    let x = data(&[2, 8], 1.0);
    let neg = pmap(|x: Array| x.sin() * 2.0).in_axes(-1).out_axes(-1);
    let pos = pmap(|x: Array| x.sin() * 2.0).in_axes(1).out_axes(1);
    let a: Array = neg.call(x.clone());
    let b: Array = pos.call(x.clone());
    assert_eq!(a.shape(), &[2, 8]);
    assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
    assert_eq!(a.to_vec::<f32>(), (x.sin() * 2.0).to_vec::<f32>());
}

#[test]
fn fewer_slices_use_the_first_devices_and_devices_can_be_chosen() {
    let devices = eight();
    let x = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([2, 3]);
    let f = pmap(|x: Array| x.sum(None, false));
    let y: Array = f.call(x.clone());
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 12.0]);
    let on: Vec<_> = y.addressable_shards().iter().map(|s| s.device).collect();
    assert_eq!(on, devices[..2].to_vec());

    let chosen = [devices[5], devices[3]];
    let g = pmap(|x: Array| x.sum(None, false)).devices(&chosen);
    let y: Array = g.call(x);
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 12.0]);
    let shards = y.addressable_shards();
    assert_eq!(shards[0].device, devices[5]);
    assert_eq!(shards[0].data.to_vec::<f32>(), vec![3.0]);
    assert_eq!(shards[1].device, devices[3]);
    assert_eq!(shards[1].data.to_vec::<f32>(), vec![12.0]);
}

#[test]
fn unmapped_results_and_rust_scalars() {
    let devices = eight();
    // out_axes None: one whole copy per device.
    let f = pmap(|(x, w): (Array, Array)| (x.sum(None, false), &w * 2.0))
        .in_axes((0, None))
        .out_axes((0, None));
    let (s, w2): (Array, Array) = f.call((
        Array::ones(&[8, 2], DType::F32),
        Array::ones(&[3], DType::F32),
    ));
    assert_eq!(s.to_vec::<f32>(), vec![2.0; 8]);
    assert_eq!(w2.shape(), &[3]);
    assert_eq!(w2.sharding(), Some(&Sharding::Replicated(devices.clone())));
    assert_eq!(w2.to_vec::<f32>(), vec![2.0; 3]);

    // A Rust scalar parameter is traced (a new value runs the same program) and unmapped.
    #[pmap(in_axes = (0, None))]
    fn scale(x: &Array, by: f32) -> Array {
        x * by
    }
    let x = Array::arange(0.0, 8.0, 1.0, DType::F32);
    assert_eq!(scale(&x, 2.0).to_vec::<f32>()[7], 14.0);
    assert_eq!(scale(&x, 3.0).to_vec::<f32>()[7], 21.0);
    assert_eq!(scale::pmap_site().cache_misses(), 1);

    // A static parameter is a Rust value in the body; each value compiles its own program.
    #[pmap(static = n)]
    fn power(x: &Array, n: usize) -> Array {
        (1..n).fold(x.clone(), |y, _| &y * x)
    }
    assert_eq!(power(&x, 3).to_vec::<f32>()[2], 8.0);
    assert_eq!(power(&x, 2).to_vec::<f32>()[2], 4.0);
    assert_eq!(power::pmap_site().cache_misses(), 2);
    assert_eq!(
        power::pmap_site()
            .last_miss_explanation()
            .unwrap()
            .split(": ")
            .nth(1)
            .unwrap(),
        "tracing and compiling because static n changed from 3 to 2"
    );
}

#[pmap(axis_name = "d")]
fn shifted(x: &Array) -> Array {
    x + 1.0
}

#[test]
fn cache_hits_and_miss_explanations() {
    eight();
    let site = shifted::pmap_site();
    let x = Array::zeros(&[8, 3], DType::F32);
    let y = shifted(&x);
    let z = shifted(&y); // an output fed back in: the same program
    assert_eq!(z.to_vec::<f32>(), vec![2.0; 24]);
    assert_eq!(site.cache_misses(), 1);
    assert_eq!(site.cache_size(), 1);
    let first = site.last_miss_explanation().unwrap();
    assert!(
        first.starts_with("pmap `shifted` (tests/pmap.rs:"),
        "{first}"
    );
    assert!(
        first.ends_with("tracing and compiling for the first time"),
        "{first}"
    );

    shifted(&Array::zeros(&[8, 4], DType::F32));
    assert_eq!(site.cache_misses(), 2);
    let why = site.last_miss_explanation().unwrap();
    assert!(
        why.ends_with("because x changed from f32[8,3] to f32[8,4]"),
        "{why}"
    );
    // Fewer slices: a program for fewer devices.
    shifted(&Array::zeros(&[4, 4], DType::F32));
    let why = site.last_miss_explanation().unwrap();
    assert!(why.contains("x changed from f32[8,4] to f32[4,4]"), "{why}");
    assert!(why.contains("the devices changed from"), "{why}");
    assert_eq!(site.cache_misses(), 3);
    shifted(&Array::zeros(&[8, 3], DType::F32));
    assert_eq!(site.cache_misses(), 3);
}

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

/// One SGD step per device on its own data (no collective: each device trains its own
/// copy), params donated.
#[pmap(axis_name = "d", donate = params)]
fn sgd_step(params: Params, x: &Array, y: &Array) -> (Params, Array) {
    let loss = |p: Params| (x.matmul(&p.w) + &p.b - y).powi(2).mean(None, false);
    let (value, grads) = value_and_grad(loss)(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * 0.1), value)
}

#[test]
fn donated_params_are_consumed_shard_by_shard_and_stay_on_the_devices() {
    let devices = eight();
    let x = data(&[8, 4, 2], 1.0);
    let y = data(&[8, 4, 1], 2.0);
    let mut params = Params {
        w: Array::zeros(&[8, 2, 1], DType::F32),
        b: Array::zeros(&[8, 1], DType::F32),
    };
    let site = sgd_step::pmap_site();
    let mut losses = Vec::new();
    for _ in 0..3 {
        let (next, loss) = sgd_step(params, &x, &y);
        losses.push(loss.to_vec::<f32>());
        params = next;
        // Each of the two leaves was consumed on each of the 8 devices.
        assert_eq!(site.last_call_donated_buffers(), 16);
    }
    assert_eq!(site.cache_misses(), 1);
    let stats = site.last_compiled_memory_stats().unwrap();
    // Per device: w [1, 2, 1] and b [1, 1] alias the new params.
    assert_eq!(stats.alias_bytes, 12, "{stats:?}");
    assert_eq!(
        params.w.sharding().unwrap().devices(),
        &devices[..],
        "params stay split over the devices"
    );

    // The same steps device by device, with plain ops on one device.
    for d in 0..8 {
        let xd = x
            .slice(&[d, 0, 0], &[d + 1, 4, 2], &[1, 1, 1])
            .reshape([4, 2]);
        let yd = y
            .slice(&[d, 0, 0], &[d + 1, 4, 1], &[1, 1, 1])
            .reshape([4, 1]);
        let mut p = Params {
            w: Array::zeros(&[2, 1], DType::F32),
            b: Array::zeros(&[1], DType::F32),
        };
        for loss_d in losses.iter().map(|l| l[d]) {
            let loss = |p: Params| (xd.matmul(&p.w) + &p.b - &yd).powi(2).mean(None, false);
            let (value, grads) = value_and_grad(loss)(p.clone());
            assert!((value.item::<f32>() - loss_d).abs() < 1e-6);
            p = tree_map2(&p, &grads, |p, g| p - g * 0.1);
        }
        let w = params.w.addressable_shards()[d].data.to_vec::<f32>();
        let want = p.w.to_vec::<f32>();
        for (a, b) in w.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "device {d}: {w:?} vs {want:?}");
        }
    }
}

#[test]
fn a_donated_input_whose_clone_is_alive_is_kept_and_a_laid_out_one_is_not_copied() {
    eight();
    let f = pmap(|x: Array| &x * 2.0).axis_name("d").donate_argument();
    let x = Array::ones(&[8, 2], DType::F32);
    // A single-device input is split into new buffers, which are donated; x stays.
    let y: Array = f.call(x.clone());
    assert_eq!(f.site().last_call_donated_buffers(), 8);
    assert!(!x.is_deleted());
    assert_eq!(x.to_vec::<f32>(), vec![1.0; 16]);
    // y is laid out as the program wants: its own buffers are passed, so the clone kept here
    // shares them and they are not donated.
    let keep = y.clone();
    let z: Array = f.call(y);
    assert_eq!(f.site().last_call_donated_buffers(), 0);
    assert!(!keep.is_deleted());
    assert_eq!(keep.to_vec::<f32>(), vec![2.0; 16]);
    assert_eq!(z.to_vec::<f32>(), vec![4.0; 16]);
    // Unshared, they are consumed: z's eight buffers.
    let w: Array = f.call(z);
    assert_eq!(f.site().last_call_donated_buffers(), 8);
    assert_eq!(w.to_vec::<f32>(), vec![8.0; 16]);

    // Passing one array twice with a donated occurrence is an error, as in jit.
    let g = pmap(|(a, b): (Array, Array)| &a + &b).donate_argument();
    let err = try_run(|| {
        let _: Array = g.call((w.clone(), w.clone()));
    })
    .unwrap_err();
    assert!(matches!(err, jaxrs::Error::DonatedBufferUsed(_)), "{err}");
}

#[test]
fn chosen_tuple_elements_are_donated_with_their_own_in_axes() {
    eight();
    // The parameters are mapped and donated; the learning rate is broadcast and kept.
    let f = pmap(|(w, lr): (Array, Array)| &w - &(&w * &lr))
        .axis_name("d")
        .in_axes((0, None))
        .donate_argnums(&[0]);
    let lr = Array::scalar(0.5f32);
    let w: Array = f.call((Array::ones(&[8, 2], DType::F32) * 4.0, lr.clone()));
    assert_eq!(f.site().last_call_donated_buffers(), 8);
    assert_eq!(w.to_vec::<f32>(), vec![2.0; 16]);
    let w: Array = f.call((w, lr.clone()));
    assert_eq!(f.site().last_call_donated_buffers(), 8);
    assert_eq!(w.to_vec::<f32>(), vec![1.0; 16]);
    assert_eq!(lr.item::<f32>(), 0.5);
    assert_eq!(f.site().cache_misses(), 1);
}

/// `pmap(vmap(f))` as stacked attributes: per device, per example.
#[pmap(axis_name = "d", in_axes = (None, 0))]
#[vmap(in_axes = (None, 0))]
fn per_example(w: &Array, x: &Array) -> Array {
    x.matmul(w).tanh().sum(None, false)
}

#[test]
fn stacked_vmap_under_pmap_matches_the_golden_vmap_inside() {
    eight();
    let (w, x) = (data(&[3, 2], 14.0), data(&[8, 5, 3], 15.0));
    let a = per_example(&w, &x);
    let b = vmap_inside(&w, &x);
    assert_eq!(a.shape(), &[8, 5]);
    assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
    assert_eq!(a.sharding(), b.sharding());
}

#[test]
fn grad_and_jit_around_a_pmapped_function_compute_it_as_a_map() {
    eight();
    let f = pmap(|x: Array| (&x * &x).sum(None, false)).axis_name("d");
    let x = data(&[8, 3], 1.0);
    let direct: Array = f.call(x.clone());
    // jit around pmap: inside the jit trace the pmap is a vmap over the mapped axis.
    let jitted = jit(|x: Array| -> Array { f.call(x) });
    let through_jit: Array = jitted.call(x.clone());
    assert_eq!(through_jit.to_vec::<f32>(), direct.to_vec::<f32>());
    // grad around pmap: d/dx sum_d sum(x_d^2) = 2x.
    let g = grad(|x: Array| -> Array {
        let per_device: Array = f.call(x);
        per_device.sum(None, false)
    })(x.clone());
    let want = (&x * 2.0).to_vec::<f32>();
    for (a, b) in g.to_vec::<f32>().iter().zip(&want) {
        assert!((a - b).abs() < 1e-6);
    }
    // jit inside pmap: inlined into the device program.
    let h = pmap(|x: Array| jit(|x: Array| x.exp()).call(x));
    let e: Array = h.call(x.clone());
    assert_eq!(e.to_vec::<f32>(), x.exp().to_vec::<f32>());
}

#[test]
fn size_and_axis_errors_name_the_arguments() {
    eight();
    let f = pmap(|(a, b): (Array, Array)| &a + &b);
    let msg = panic_message(|| {
        let _: Array = f.call((
            Array::ones(&[8, 2], DType::F32),
            Array::ones(&[4, 2], DType::F32),
        ));
    });
    assert!(
        msg.starts_with(
            "pmap `size_and_axis_errors_name_the_arguments::{{closure}}`: the mapped axes must all have the same size (one slice per \
             device), but:\n  arg[0] is f32[8,2], axis 0 of size 8\n  arg[1] is f32[4,2], axis 0 \
             of size 4\n"
        ),
        "{msg}"
    );
    assert!(msg.contains("tests/pmap.rs:"), "{msg}");

    let msg = panic_message(|| {
        let _ = shifted(&Array::ones(&[16, 2], DType::F32));
    });
    assert!(
        msg.starts_with(
            "pmap `shifted`: the mapped axis has size 16, but this process has 8 devices; pmap \
             runs one slice per device"
        ),
        "{msg}"
    );

    let devices = eight();
    let g = pmap(|x: Array| x * 2.0).devices(&devices[..4]);
    let msg = panic_message(|| {
        let _: Array = g.call(Array::ones(&[8], DType::F32));
    });
    assert!(
        msg.starts_with(
            "pmap `size_and_axis_errors_name_the_arguments::{{closure}}`: the mapped axis has size 8, but pmap was given 4 devices; the size \
             of the mapped axis must equal the number of devices"
        ),
        "{msg}"
    );

    // in_axes of the wrong arity for the argument tuple.
    let h = pmap(|(a, b): (Array, Array)| &a + &b).in_axes((0, None, 0));
    let msg = panic_message(|| {
        let _: Array = h.call((Array::ones(&[8], DType::F32), Array::ones(&[8], DType::F32)));
    });
    assert!(
        msg.starts_with(
            "pmap `size_and_axis_errors_name_the_arguments::{{closure}}`: in_axes does not fit the arguments: a tuple of 3 axes does not fit"
        ),
        "{msg}"
    );

    // An axis the argument does not have.
    let k = pmap(|x: Array| x * 2.0).in_axes(2);
    let msg = panic_message(|| {
        let _: Array = k.call(Array::ones(&[8, 2], DType::F32));
    });
    assert!(
        msg.starts_with(
            "pmap `size_and_axis_errors_name_the_arguments::{{closure}}`: in_axes maps arg along axis 2, which is out of range: arg is \
             f32[8,2] (rank 2), whose axes are -2 to 1"
        ),
        "{msg}"
    );

    let none = pmap(|x: Array| x * 2.0).in_axes(None);
    let msg = panic_message(|| {
        let _: Array = none.call(Array::ones(&[8], DType::F32));
    });
    assert!(msg.contains("no argument is mapped"), "{msg}");
}
