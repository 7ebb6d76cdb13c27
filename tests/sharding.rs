//! Devices, meshes, partition specs and `device_put` on 8 CPU devices: shard layouts against
//! JAX 0.10.2 (`tests/golden/sharding.json`, made by `tests/golden/gen_sharding.py`), round
//! trips, every error message, and operations on sharded inputs (eager ops and jit run SPMD
//! over the inputs' mesh, their results staying sharded; both must give the values of
//! unsharded inputs).
//!
//! Every test first asks for 8 CPU devices from code: the first to run creates the client,
//! the others find it with the same count.

use jaxrs::prelude::*;
use jaxrs::{device_put, try_device_put, Mesh, NamedSharding, PartitionDim, Sharding, P};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn eight() -> Vec<jaxrs::Device> {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::devices()
}

fn mesh_2x4() -> Mesh {
    Mesh::new(&eight(), &[2, 4], &["dp", "mp"]).unwrap()
}

fn named(mesh: &Mesh, spec: jaxrs::PartitionSpec) -> NamedSharding {
    NamedSharding::new(mesh.clone(), spec).unwrap()
}

fn iota(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::arange(0.0, n as f64, 1.0, DType::F32).reshape(shape)
}

/// The elements of `x` (row-major, of `shape`) inside `index`.
fn block(x: &[f32], shape: &[usize], index: &[std::ops::Range<usize>]) -> Vec<f32> {
    let mut out = Vec::new();
    for (flat, v) in x.iter().enumerate() {
        let mut rest = flat;
        let mut inside = true;
        for (d, r) in shape.iter().zip(index).rev() {
            let i = rest % d;
            rest /= d;
            inside &= r.contains(&i);
        }
        if inside {
            out.push(*v);
        }
    }
    out
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn eight_cpu_devices_printed_as_jax_prints_them() {
    let devices = eight();
    assert_eq!(devices.len(), 8);
    assert_eq!(jaxrs::local_device_count(), 8);
    for (i, d) in devices.iter().enumerate() {
        assert_eq!(d.id(), i as i32);
        assert_eq!(d.platform(), "cpu");
        assert_eq!(d.process_index(), 0);
        assert_eq!(d.to_string(), format!("CpuDevice(id={i})"));
        assert_eq!(format!("{d:?}"), format!("CpuDevice(id={i})"));
    }
    // Asking again for the same count is fine; another count is a typed error naming both.
    jaxrs::set_cpu_device_count(8).unwrap();
    let err = jaxrs::set_cpu_device_count(2).unwrap_err();
    assert!(matches!(
        err,
        jaxrs::Error::DeviceCountFixed {
            requested: 2,
            existing: 8
        }
    ));
    assert_eq!(
        err.to_string(),
        "cannot switch to 2 CPU devices: the PJRT client already exists with 8; call \
         jaxrs::set_cpu_device_count before the first array operation (or set \
         JAXRS_CPU_DEVICES)"
    );
    // A new array lies on the first device.
    let x = Array::ones(&[2], DType::F32);
    assert_eq!(x.sharding(), Some(&Sharding::SingleDevice(devices[0])));
    assert_eq!(x.addressable_shards().len(), 1);
    assert_eq!(x.addressable_shards()[0].device, devices[0]);
}

#[test]
fn meshes_and_their_errors() {
    let devices = eight();
    let mesh = mesh_2x4();
    assert_eq!(mesh.shape(), &[2, 4]);
    assert_eq!(mesh.axis_names(), &["dp".to_string(), "mp".to_string()]);
    assert_eq!(mesh.devices(), &devices[..]);
    assert_eq!(mesh.size(), 8);
    assert_eq!(mesh.axis_size("dp"), Some(2));
    assert_eq!(mesh.axis_size("x"), None);
    assert_eq!(
        mesh.to_string(),
        "Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto))"
    );

    let err = |devices: &[jaxrs::Device], shape: &[usize], names: &[&str]| {
        Mesh::new(devices, shape, names).unwrap_err().to_string()
    };
    assert_eq!(
        err(&devices[..6], &[2, 4], &["dp", "mp"]),
        "Mesh::new: a [2, 4] mesh needs 8 devices, 6 were given"
    );
    assert_eq!(
        err(&devices, &[2, 4], &["dp"]),
        "Mesh::new: the shape [2, 4] has 2 axes but 1 axis names were given ([\"dp\"])"
    );
    assert_eq!(
        err(&devices, &[2, 4], &["dp", "dp"]),
        "Mesh::new: the axis name \"dp\" appears twice in [\"dp\", \"dp\"]"
    );
    assert_eq!(
        err(&devices, &[2, 4], &["dp", ""]),
        "Mesh::new: axis 1 has an empty name ([\"dp\", \"\"])"
    );
    assert_eq!(
        err(&[], &[0, 4], &["dp", "mp"]),
        "Mesh::new: axis \"dp\" has size 0 (shape [0, 4])"
    );
    let twice = [devices[0], devices[1], devices[1], devices[3]];
    assert_eq!(
        err(&twice, &[4], &["d"]),
        "Mesh::new: CpuDevice(id=1) appears twice in the device list"
    );
    assert!(matches!(
        Mesh::new(&devices, &[3], &["d"]),
        Err(jaxrs::Error::Sharding(_))
    ));
}

#[test]
fn partition_specs_and_named_sharding_errors() {
    let mesh = mesh_2x4();
    assert_eq!(P![None, "mp"].to_string(), "PartitionSpec(None, 'mp')");
    assert_eq!(P!["dp"].to_string(), "PartitionSpec('dp',)");
    assert_eq!(
        P![("dp", "mp"), None].to_string(),
        "PartitionSpec(('dp', 'mp'), None)"
    );
    assert_eq!(P![].to_string(), "PartitionSpec()");
    assert_eq!(
        P![("dp", "mp"), None].dims(),
        &[
            PartitionDim::Axes(vec!["dp".into(), "mp".into()]),
            PartitionDim::Replicated
        ]
    );
    assert_eq!(P![None, "mp"], P![None, "mp",]);

    let s = named(&mesh, P![None, "mp"]);
    assert_eq!(s.mesh(), &mesh);
    assert_eq!(s.spec(), &P![None, "mp"]);
    assert_eq!(
        s.to_string(),
        "NamedSharding(mesh=Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto)), spec=PartitionSpec(None, 'mp'))"
    );
    assert_eq!(s.shard_shape(&[6, 8]).unwrap(), vec![6, 2]);

    let err = |spec| {
        NamedSharding::new(mesh.clone(), spec)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(P!["dp", "x"]),
        "NamedSharding: PartitionSpec('dp', 'x') names the axis \"x\", which the mesh does \
         not have (its axes: [\"dp\", \"mp\"])"
    );
    assert_eq!(
        err(P!["dp", "dp"]),
        "NamedSharding: PartitionSpec('dp', 'dp') uses the mesh axis \"dp\" twice; an axis can \
         split one dimension only"
    );
    assert_eq!(
        err(P![("mp", "mp")]),
        "NamedSharding: PartitionSpec(('mp', 'mp'),) uses the mesh axis \"mp\" twice; an axis \
         can split one dimension only"
    );
    // An empty Vec is `None`; an Axes entry built by hand with no axes is refused.
    assert_eq!(P![Vec::<&str>::new(), "mp"], P![None, "mp"]);
    assert_eq!(
        err(jaxrs::PartitionSpec::new(vec![PartitionDim::Axes(vec![])])),
        "NamedSharding: PartitionSpec((),) has an entry with no axes (write None for a \
         dimension that is not split)"
    );
}

#[test]
fn shards_match_jax() {
    let devices = eight();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/sharding.json"
    ))
    .unwrap();
    let golden: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(golden["jax_version"], "0.10.2");
    let usizes = |v: &Value| -> Vec<usize> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap() as usize)
            .collect()
    };
    for case in golden["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mesh_shape = usizes(&case["mesh_shape"]);
        let axes: Vec<&str> = case["axis_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let n: usize = mesh_shape.iter().product();
        let mesh = Mesh::new(&devices[..n], &mesh_shape, &axes).unwrap();
        let spec = jaxrs::PartitionSpec::new(
            case["spec"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| match e {
                    Value::Null => PartitionDim::Replicated,
                    Value::String(a) => PartitionDim::from(a.as_str()),
                    Value::Array(a) => PartitionDim::from(
                        a.iter().map(|s| s.as_str().unwrap()).collect::<Vec<_>>(),
                    ),
                    other => panic!("{name}: bad spec entry {other}"),
                })
                .collect(),
        );
        let shape = usizes(&case["shape"]);
        let sharding = named(&mesh, spec);
        assert_eq!(
            sharding.shard_shape(&shape).unwrap(),
            usizes(&case["shard_shape"]),
            "{name}"
        );
        let x = iota(&shape);
        let host = x.to_vec::<f32>();
        let xs = device_put(&x, sharding.clone());
        assert_eq!(
            xs.sharding(),
            Some(&Sharding::Named(sharding.clone())),
            "{name}"
        );
        assert_eq!(xs.shape(), &shape[..]);
        let shards = xs.addressable_shards();
        let want = case["shards"].as_array().unwrap();
        assert_eq!(shards.len(), want.len(), "{name}");
        for (got, want) in shards.iter().zip(want) {
            assert_eq!(
                got.device.id() as u64,
                want["device"].as_u64().unwrap(),
                "{name}"
            );
            let index: Vec<std::ops::Range<usize>> = want["index"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let r = usizes(r);
                    r[0]..r[1]
                })
                .collect();
            assert_eq!(got.index, index, "{name} on {}", got.device);
            assert_eq!(
                got.replica_id as u64,
                want["replica_id"].as_u64().unwrap(),
                "{name} on {}",
                got.device
            );
            assert_eq!(got.data.shape(), &usizes(&case["shard_shape"])[..]);
            assert_eq!(
                got.data.sharding(),
                Some(&Sharding::SingleDevice(got.device))
            );
            assert_eq!(
                got.data.to_vec::<f32>(),
                block(&host, &shape, &index),
                "{name} on {}",
                got.device
            );
        }
        assert_eq!(xs.to_vec::<f32>(), host, "{name}: to_vec gathers");
        assert_eq!(format!("{xs:?}"), format!("{x:?}"), "{name}: printing");
    }
}

#[test]
fn replicated_and_single_device_placements() {
    let devices = eight();
    let x = Array::from_vec(vec![1i64, -2, 3, 4, 5, 6], &[2, 3]);
    let r = device_put(&x, Sharding::Replicated(devices[2..5].to_vec()));
    let shards = r.addressable_shards();
    assert_eq!(shards.len(), 3);
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s.device, devices[2 + i]);
        assert_eq!(s.index, vec![0..2, 0..3]);
        assert_eq!(s.replica_id, i);
        assert_eq!(s.data.to_vec::<i64>(), x.to_vec::<i64>());
    }
    assert_eq!(r.to_vec::<i64>(), x.to_vec::<i64>());

    // One other device; then back to a mesh from a sharded array (resharding).
    let on5 = device_put(&x, devices[5]);
    assert_eq!(on5.sharding(), Some(&Sharding::SingleDevice(devices[5])));
    assert_eq!(on5.to_vec::<i64>(), x.to_vec::<i64>());
    let mesh = Mesh::new(&devices[..2], &[2], &["d"]).unwrap();
    let split = device_put(&r, named(&mesh, P![None, None]));
    assert_eq!(split.to_vec::<i64>(), x.to_vec::<i64>());
    let mesh3 = Mesh::new(&devices[..3], &[3], &["d"]).unwrap();
    let cols = device_put(&split, named(&mesh3, P![None, "d"]));
    assert_eq!(
        cols.addressable_shards()[2].data.to_vec::<i64>(),
        vec![3, 6]
    );
    assert_eq!(cols.to_vec::<i64>(), x.to_vec::<i64>());

    // Other dtypes and a scalar survive the trip.
    let b = Array::from_vec(vec![true, false, true, true], &[4]);
    let mesh4 = Mesh::new(&devices[..4], &[4], &["d"]).unwrap();
    let bs = device_put(&b, named(&mesh4, P!["d"]));
    assert_eq!(bs.to_vec::<bool>(), vec![true, false, true, true]);
    let h = Array::from_f64s(&[0.5, 1.5, -2.0, 8.0], &[4], DType::BF16);
    let hs = device_put(&h, named(&mesh4, P!["d"]));
    assert_eq!(hs.to_f64_vec(), vec![0.5, 1.5, -2.0, 8.0]);
    let s = device_put(
        &Array::scalar(2.5f64),
        Sharding::Replicated(devices.clone()),
    );
    assert_eq!(s.item::<f64>(), 2.5);
    assert_eq!(s.addressable_shards().len(), 8);
    let weak = device_put(&Array::weak_scalar(3.0f32), devices[1]);
    assert!(weak.is_weak());
}

#[test]
fn device_put_errors_name_the_problem() {
    let devices = eight();
    let mesh = mesh_2x4();
    let x = Array::zeros(&[6, 4], DType::F32);
    let err = |s: Sharding| try_device_put(&x, s).unwrap_err().to_string();
    assert_eq!(
        err(named(&mesh, P![None, "mp", "dp"]).into()),
        "PartitionSpec(None, 'mp', 'dp') has 3 entries but the array has rank 2 (shape [6, 4])"
    );
    assert_eq!(
        err(named(&mesh, P!["mp"]).into()),
        "dimension 0 of size 6 does not split evenly over mesh axis \"mp\"=4 (shape [6, 4], \
         PartitionSpec('mp',))"
    );
    assert_eq!(
        err(named(&mesh, P![None, ("dp", "mp")]).into()),
        "dimension 1 of size 4 does not split evenly over mesh axes (\"dp\"=2, \"mp\"=4), 8 \
         pieces (shape [6, 4], PartitionSpec(None, ('dp', 'mp')))"
    );
    assert_eq!(
        err(Sharding::Replicated(vec![])),
        "a replicated sharding needs at least one device"
    );
    assert_eq!(
        err(Sharding::Replicated(vec![devices[0], devices[0]])),
        "a replicated sharding lists CpuDevice(id=0) twice"
    );
    assert!(matches!(
        try_device_put(&x, named(&mesh, P!["mp"])),
        Err(jaxrs::Error::Sharding(_))
    ));
    // The panicking form says the same, with the caller's line.
    let msg = panic_message(|| {
        device_put(&x, named(&mesh, P!["mp"]));
    });
    assert!(
        msg.starts_with(
            "device_put: dimension 0 of size 6 does not split evenly over mesh axis \"mp\"=4"
        ),
        "{msg}"
    );
    assert!(msg.contains("tests/sharding.rs:"), "{msg}");
    assert_eq!(
        Sharding::from(named(&mesh, P!["dp"]))
            .shard_shape(&[5])
            .unwrap_err()
            .to_string(),
        "dimension 0 of size 5 does not split evenly over mesh axis \"dp\"=2 (shape [5], \
         PartitionSpec('dp',))"
    );
}

#[jit]
fn layer(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh()
}

#[jit(donate = x)]
fn scale(x: Array) -> Array {
    x * 3.0
}

#[test]
fn ops_on_sharded_inputs_give_the_unsharded_values() {
    let devices = eight();
    let mesh = mesh_2x4();
    let x = iota(&[4, 8]) / 32.0;
    let w = (iota(&[8, 4]) - 16.0) / 32.0;
    let xs = device_put(&x, named(&mesh, P!["dp", None]));
    let ws = device_put(&w, named(&mesh, P![None, "mp"]));
    let want = x.matmul(&w).tanh().to_vec::<f32>();

    // Eager ops, sharded with sharded, sharded with plain, replicated, another device.
    assert_eq!(xs.matmul(&ws).tanh().to_vec::<f32>(), want);
    assert_eq!(xs.matmul(&w).tanh().to_vec::<f32>(), want);
    let xr = device_put(&x, Sharding::Replicated(devices[3..].to_vec()));
    assert_eq!(xr.matmul(&ws).tanh().to_vec::<f32>(), want);
    let x7 = device_put(&x, devices[7]);
    assert_eq!(x7.matmul(&w).tanh().to_vec::<f32>(), want);
    assert_eq!(
        (&xs + 1.0).sum(None, false).item::<f32>(),
        (&x + 1.0).sum(None, false).item::<f32>()
    );

    // jit, and a shard's data (a single-device array on another device) as an input.
    assert_eq!(layer(&xs, &ws).to_vec::<f32>(), want);
    let shard = xs.addressable_shards()[5].data.clone();
    assert_eq!(shard.device_id_for_test(), 5);
    assert_eq!(
        layer(&shard, &ws).to_vec::<f32>(),
        x.slice(&[2, 0], &[4, 8], &[1, 1])
            .matmul(&w)
            .tanh()
            .to_vec::<f32>()
    );

    // Donating a shard view must not delete the sharded array's buffer; donating a sharded
    // array donates a gathered copy.
    let doubled = scale(shard);
    assert_eq!(
        doubled.to_vec::<f32>(),
        (x.slice(&[2, 0], &[4, 8], &[1, 1]) * 3.0).to_vec::<f32>()
    );
    assert!(!xs.is_deleted());
    assert_eq!(xs.to_vec::<f32>(), x.to_vec::<f32>());
    // A shard already on the program's device is passed as is: its buffer is shared, so it
    // is kept, not donated.
    let first = xs.addressable_shards()[0].data.clone();
    assert_eq!(first.device_id_for_test(), 0);
    assert_eq!(
        scale(first).to_vec::<f32>(),
        (x.slice(&[0, 0], &[2, 8], &[1, 1]) * 3.0).to_vec::<f32>()
    );
    assert!(!xs.is_deleted());
    assert_eq!(xs.to_vec::<f32>(), x.to_vec::<f32>());
    let tripled = scale(xs.clone());
    assert_eq!(tripled.to_vec::<f32>(), (&x * 3.0).to_vec::<f32>());
    assert_eq!(xs.to_vec::<f32>(), x.to_vec::<f32>());

    // Transformations see the values.
    // (grad runs its ops eagerly on the sharded arrays: SPMD, with the partial sums of the
    // partitioned contraction added in another order, as in JAX.)
    let g = grad(|w: Array| xs.matmul(&w).tanh().sum(None, false))(ws.clone());
    let g_plain = grad(|w: Array| x.matmul(&w).tanh().sum(None, false))(w.clone());
    for (a, b) in g.to_vec::<f32>().iter().zip(g_plain.to_vec::<f32>()) {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
    let rows = vmap(|r: Array| r.sum(None, false), 0, 0)(xs.clone());
    assert_eq!(rows.to_vec::<f32>(), x.sum(Some(1), false).to_vec::<f32>());
}

/// The device a single-device array lives on.
trait DeviceId {
    fn device_id_for_test(&self) -> i32;
}

impl DeviceId for Array {
    fn device_id_for_test(&self) -> i32 {
        match self.sharding() {
            Some(Sharding::SingleDevice(d)) => d.id(),
            other => panic!("not on one device: {other:?}"),
        }
    }
}

#[test]
fn the_readme_snippet_runs() -> jaxrs::Result<()> {
    // README.md, "Many devices", as written there.
    jaxrs::set_cpu_device_count(8)?;
    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
    let w = Array::ones(&[16, 8], DType::F32);
    let w = device_put(&w, NamedSharding::new(mesh, P![None, "mp"])?);
    assert_eq!(w.addressable_shards()[0].data.shape(), &[16, 2]);
    Ok(())
}

#[test]
fn pieces_already_on_devices_are_shared_or_copied_and_donation_respects_sharing() {
    let devices = eight();
    let x = iota(&[2, 4]);
    let want = x.to_vec::<f32>();
    // x's buffer on device 0 becomes replica 0 of r: donating x must leave r readable.
    let r = device_put(&x, Sharding::Replicated(devices[..4].to_vec()));
    let out = scale(x);
    assert_eq!(
        out.to_vec::<f32>(),
        want.iter().map(|v| v * 3.0).collect::<Vec<_>>()
    );
    assert!(!r.is_deleted());
    assert_eq!(r.to_vec::<f32>(), want);
    for s in r.addressable_shards() {
        assert_eq!(s.data.to_vec::<f32>(), want, "on {}", s.device);
    }

    // Resharding keeps the pieces that match, copies or cuts the others.
    let mesh = mesh_2x4();
    let rows = device_put(&r, named(&mesh, P!["dp"]));
    let cols = device_put(&rows, named(&mesh, P![None, "mp"]));
    let back = device_put(&cols, named(&mesh, P!["dp"]));
    assert_eq!(back.to_vec::<f32>(), want);
    assert_eq!(
        back.addressable_shards()[7].data.to_vec::<f32>(),
        vec![4.0, 5.0, 6.0, 7.0]
    );
}

#[test]
fn sharded_reads_gather_every_dtype_in_row_major_order() {
    // Each shard is read (in place on CPU) and pasted into the whole: 2-D blocks on a 2x4
    // mesh, and a mesh axis replicated, in f32, bool, bf16 and i64.
    let mesh = mesh_2x4();
    let x = iota(&[4, 8]);
    let expected = x.to_vec::<f32>();
    for spec in [P!["dp", "mp"], P!["mp", None], P![None, "dp"]] {
        let s = device_put(&x, named(&mesh, spec.clone()));
        assert_eq!(s.to_vec::<f32>(), expected, "{spec:?}");
        let flags = device_put(&x.gt(10.0), named(&mesh, spec.clone()));
        let want: Vec<bool> = expected.iter().map(|&v| v > 10.0).collect();
        assert_eq!(flags.to_vec::<bool>(), want, "{spec:?}");
        let h = device_put(&x.astype(DType::BF16), named(&mesh, spec.clone()));
        let exact: Vec<f64> = expected.iter().map(|&v| v as f64).collect();
        assert_eq!(h.to_f64_vec(), exact, "{spec:?}");
        let i = device_put(&x.astype(DType::I64), named(&mesh, spec.clone()));
        assert_eq!(i.to_vec::<i64>(), (0..32).collect::<Vec<i64>>(), "{spec:?}");
    }
    // A sharded scalar-sized read.
    let one = device_put(&iota(&[1, 1]), named(&mesh, P![None, None]));
    assert_eq!(one.item::<f32>(), 0.0);
}

#[test]
fn eager_ops_on_sharded_arrays_run_over_their_mesh_and_stay_sharded() {
    let devices = eight();
    let mesh = mesh_2x4();
    let x = iota(&[4, 8]);
    let rows = named(&mesh, P!["dp", None]);
    let xs = device_put(&x, rows.clone());

    // Elementwise: the result lies as its operand does (JAX: `(xs + 1).sharding == xs.sharding`),
    // each shard computed on its own device.
    let y = &xs * 2.0 + 1.0;
    assert_eq!(y.sharding(), Some(&Sharding::Named(rows.clone())));
    assert_eq!(y.to_vec::<f32>(), (&x * 2.0 + 1.0).to_vec::<f32>());
    for (shard, piece) in y.addressable_shards().iter().zip(xs.addressable_shards()) {
        assert_eq!(shard.device, piece.device);
        let want: Vec<f32> = piece
            .data
            .to_vec::<f32>()
            .iter()
            .map(|v| v * 2.0 + 1.0)
            .collect();
        assert_eq!(shard.data.to_vec::<f32>(), want);
    }

    // A plain operand (on device 0) and a replicated one are replicated over the mesh.
    let plain = Array::ones(&[4, 8], DType::F32);
    let z = &xs + &plain;
    assert_eq!(z.sharding(), Some(&Sharding::Named(rows.clone())));
    assert_eq!(z.to_vec::<f32>(), (&x + 1.0).to_vec::<f32>());
    let r = device_put(&plain, Sharding::Replicated(devices[2..5].to_vec()));
    assert_eq!((&r - &xs).to_vec::<f32>(), (&plain - &x).to_vec::<f32>());

    // A reduction over the split axis: the values of the whole, the result on the mesh.
    let total = xs.sum(Some(0), false);
    assert_eq!(total.to_vec::<f32>(), x.sum(Some(0), false).to_vec::<f32>());
    match total.sharding() {
        Some(Sharding::Named(n)) => assert_eq!(n.mesh(), &mesh),
        other => panic!("not on the mesh: {other:?}"),
    }
    assert_eq!(xs.max(None, false).item::<f32>(), 31.0);

    // Shape ops and a contraction.
    let w = device_put(&(iota(&[8, 4]) / 8.0), named(&mesh, P![None, "mp"]));
    let xw = xs.matmul(&w);
    let want = x.matmul(&(iota(&[8, 4]) / 8.0)).to_vec::<f32>();
    for (a, b) in xw.to_vec::<f32>().iter().zip(&want) {
        assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
    }
    assert_eq!(
        xs.transpose([1, 0]).to_vec::<f32>(),
        x.transpose([1, 0]).to_vec::<f32>()
    );

    // Operands on two meshes are a mistake, named as such.
    let other = Mesh::new(&devices, &[8], &["all"]).unwrap();
    let xo = device_put(&x, named(&other, P![None, "all"]));
    let err = catch_unwind(AssertUnwindSafe(|| &xs + &xo)).expect_err("two meshes");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("`add`: one operand lies on"), "{msg}");
    assert!(
        msg.contains("device_put one of them onto the other's mesh"),
        "{msg}"
    );
}
