//! JAX's current mesh API on 8 CPU devices against JAX 0.10.2
//! (`tests/golden/mesh_api.json`, made by `tests/golden/gen_mesh_api.py`): `make_mesh`'s
//! device order and error, the pieces `make_array_from_callback` asks for and the arrays it
//! and `make_array_from_single_device_arrays` assemble, the process and device counts, the
//! mesh scopes, and the messages of misuse.

mod common;

use common::golden::f32s;
use jaxrs::prelude::*;
use jaxrs::{NamedSharding, PartitionDim, PartitionSpec, P};
use serde_json::Value;
use std::ops::Range;

/// The panic message of `f` (a programmer-error test).
fn message_of(f: impl FnOnce()) -> String {
    common::panic_message(std::panic::AssertUnwindSafe(f))
}

fn golden() -> Value {
    common::golden::load("mesh_api.json")
}

fn eight() -> Vec<jaxrs::Device> {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::devices()
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// A golden spec: a list of `null`, a name, or a list of names.
fn spec_of(v: &Value) -> PartitionSpec {
    PartitionSpec::new(
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| match e {
                Value::Null => PartitionDim::Replicated,
                Value::String(s) => PartitionDim::Axes(vec![s.clone()]),
                Value::Array(names) => PartitionDim::Axes(
                    names
                        .iter()
                        .map(|n| n.as_str().unwrap().to_string())
                        .collect(),
                ),
                other => panic!("bad spec entry {other}"),
            })
            .collect(),
    )
}

fn sharding_of(case: &Value) -> NamedSharding {
    let names = strings(&case["axis_names"]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mesh = jaxrs::make_mesh(&usizes(&case["mesh_shape"]), &names).unwrap();
    NamedSharding::new(mesh, spec_of(&case["spec"])).unwrap()
}

fn iota_block(shape: &[usize], index: &[Range<usize>]) -> Array {
    let strides: Vec<usize> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let dims: Vec<usize> = index.iter().map(|r| r.len()).collect();
    let count: usize = dims.iter().product();
    let values: Vec<f32> = (0..count)
        .map(|mut flat| {
            let mut offset = 0;
            for d in (0..shape.len()).rev() {
                offset += (index[d].start + flat % dims[d]) * strides[d];
                flat /= dims[d];
            }
            offset as f32
        })
        .collect();
    Array::from_vec(values, &dims)
}

#[test]
fn make_mesh_orders_devices_as_jax() {
    let devices = eight();
    for case in golden()["make_mesh"].as_array().unwrap() {
        let shape = usizes(&case["shape"]);
        let names = &["a", "b", "c"][..shape.len()];
        let mesh = jaxrs::make_mesh(&shape, names);
        match case.get("device_ids") {
            Some(ids) => {
                let ids = usizes(ids);
                let mesh = mesh.unwrap();
                let got: Vec<usize> = mesh.devices().iter().map(|d| d.id() as usize).collect();
                assert_eq!(got, ids, "make_mesh({shape:?})");
                assert_eq!(mesh.shape(), &shape[..]);
            }
            None => {
                // JAX: "Number of devices 8 must be >= the product of mesh_shape (4, 4)".
                let err = mesh.unwrap_err().to_string();
                assert!(
                    err.contains(
                        "the number of devices (8) must be >= the product of the mesh shape [4, 4]"
                    ),
                    "{err}"
                );
                assert!(case["error"]
                    .as_str()
                    .unwrap()
                    .contains("must be >= the product"));
            }
        }
    }
    // The devices given are taken in order.
    let reversed: Vec<_> = devices.iter().rev().copied().collect();
    let mesh = jaxrs::make_mesh_from(&[2, 2], &["a", "b"], &reversed).unwrap();
    assert_eq!(mesh.devices(), &reversed[..4]);
}

#[test]
fn make_array_from_callback_asks_for_jaxs_pieces() {
    eight();
    for case in golden()["callback"].as_array().unwrap() {
        let shape = usizes(&case["shape"]);
        let sharding = sharding_of(case);
        let mut calls: Vec<Vec<Range<usize>>> = Vec::new();
        let x = jaxrs::make_array_from_callback(&shape, sharding.clone(), |index| {
            calls.push(index.to_vec());
            iota_block(&shape, index)
        });
        let want_calls: Vec<Vec<Range<usize>>> = case["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|call| {
                call.as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        let r = usizes(r);
                        r[0]..r[1]
                    })
                    .collect()
            })
            .collect();
        assert_eq!(calls, want_calls, "callback indices for {case}");
        assert_eq!(x.to_vec::<f32>(), f32s(&case["values"]));
        assert_eq!(
            x.sharding(),
            Some(&jaxrs::Sharding::Named(sharding.clone()))
        );
        // Each device holds the piece the callback made for it.
        for (shard, index) in x.addressable_shards().iter().zip(&calls) {
            assert_eq!(&shard.index, index);
            assert_eq!(
                shard.data.to_vec::<f32>(),
                iota_block(&shape, index).to_vec::<f32>()
            );
        }
    }
}

#[test]
fn make_array_from_single_device_arrays_keeps_each_devices_piece() {
    eight();
    for case in golden()["single_device_arrays"].as_array().unwrap() {
        let shape = usizes(&case["shape"]);
        let sharding = sharding_of(case);
        let shard_shape = sharding.shard_shape(&shape).unwrap();
        // Given in reverse device order: each is placed by the device it lives on.
        let pieces: Vec<Array> = sharding
            .mesh()
            .devices()
            .iter()
            .rev()
            .map(|d| jaxrs::device_put(&Array::full(&shard_shape, d.id() as f64, DType::F32), *d))
            .collect();
        let x = jaxrs::make_array_from_single_device_arrays(&shape, sharding.clone(), &pieces);
        assert_eq!(x.to_vec::<f32>(), f32s(&case["values"]), "{case}");
        for shard in x.addressable_shards() {
            assert_eq!(
                shard.data.to_vec::<f32>(),
                vec![shard.device.id() as f32; shard_shape.iter().product()]
            );
        }
        // The result computes like any sharded array.
        assert_eq!(
            (&x * 2.0).to_vec::<f32>(),
            f32s(&case["values"])
                .iter()
                .map(|v| v * 2.0)
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn process_local_data_is_the_whole_array_in_one_process() {
    eight();
    let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"]).unwrap();
    let sharding = NamedSharding::new(mesh, P!["x", "y"]).unwrap();
    let data = Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([4, 8]);
    let x = jaxrs::make_array_from_process_local_data(sharding.clone(), &data, Some(&[4, 8]));
    assert_eq!(x.to_vec::<f32>(), data.to_vec::<f32>());
    assert_eq!(x.addressable_shards()[5].index, vec![2..4, 2..4]);
    let msg = message_of(|| {
        jaxrs::make_array_from_process_local_data(sharding, &data, Some(&[8, 8]));
    });
    assert!(
        msg.starts_with(
            "make_array_from_process_local_data: in one process the local data is the whole \
             array, but its shape [4, 8] is not the global shape [8, 8] at tests/mesh_api.rs:"
        ),
        "{msg}"
    );
}

#[test]
fn counts_and_abstract_meshes_match_jax() {
    let devices = eight();
    let g = golden();
    let counts = &g["counts"];
    assert_eq!(
        jaxrs::process_index(),
        counts["process_index"].as_u64().unwrap() as usize
    );
    assert_eq!(
        jaxrs::process_count(),
        counts["process_count"].as_u64().unwrap() as usize
    );
    assert_eq!(jaxrs::process_indices(), usizes(&counts["process_indices"]));
    #[allow(deprecated)]
    let hosts = (jaxrs::host_count(), jaxrs::host_id(), jaxrs::host_ids());
    assert_eq!(
        hosts,
        (
            counts["host_count"].as_u64().unwrap() as usize,
            counts["host_id"].as_u64().unwrap() as usize,
            usizes(&counts["host_ids"])
        )
    );
    assert_eq!(
        jaxrs::device_count(),
        counts["device_count"].as_u64().unwrap() as usize
    );
    assert_eq!(
        jaxrs::local_device_count(),
        counts["local_device_count"].as_u64().unwrap() as usize
    );
    let local: Vec<usize> = jaxrs::local_devices()
        .iter()
        .map(|d| d.id() as usize)
        .collect();
    assert_eq!(local, usizes(&counts["local_device_ids"]));
    assert_eq!(jaxrs::local_devices(), devices);

    let abs = &g["abstract_mesh"];
    assert!(abs["outside_empty"].as_bool().unwrap());
    assert!(jaxrs::get_abstract_mesh().is_empty());
    let text = |key: &str| abs[key].as_str().unwrap().to_string();
    assert_eq!(jaxrs::get_abstract_mesh().to_string(), text("outside_str"));
    let made = jaxrs::AbstractMesh::new(&[2], &["x"], Some(&[jaxrs::AxisType::Explicit]));
    assert_eq!(made.to_string(), text("made_str"));
    assert_eq!(made.abstract_device(), None);
    let on_cpu = made.with_abstract_device(jaxrs::AbstractDevice::new("cpu", None, "cpu"));
    assert_eq!(
        on_cpu.to_string(),
        "AbstractMesh('x': 2, axis_types=(Explicit,), device_kind=cpu, num_cores=None, \
         platform=cpu)"
    );
    let mismatched = message_of(|| {
        jaxrs::AbstractMesh::new(&[2, 4], &["x"], None);
    });
    assert!(
        mismatched.contains("AbstractMesh: 2 axis sizes, 1 names and 1 types")
            && mismatched.contains("mesh_api.rs"),
        "{mismatched}"
    );
    assert_eq!(jaxrs::get_mesh(), None);
    let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"]).unwrap();
    {
        let _scope = jaxrs::set_mesh(&mesh);
        let inside = jaxrs::get_abstract_mesh();
        assert_eq!(inside.axis_names(), strings(&abs["inside_axis_names"]));
        assert_eq!(inside.axis_sizes(), usizes(&abs["inside_axis_sizes"]));
        assert_eq!(inside, jaxrs::AbstractMesh::of(&mesh));
        assert_eq!(inside.to_string(), text("inside_str"));
        let device = inside
            .abstract_device()
            .expect("a mesh of devices has a kind");
        assert_eq!(device.to_string(), text("abstract_device"));
        assert_eq!(mesh.to_string(), text("mesh_str"));
        let one_axis = jaxrs::make_mesh(&[8], &["d"]).unwrap();
        assert_eq!(one_axis.to_string(), text("one_axis_mesh_str"));
        assert_eq!(jaxrs::get_mesh(), Some(mesh.clone()));
        // The abstract mesh can be read while tracing; the concrete one cannot.
        let seen: Array = jit(|x: Array| {
            assert_eq!(jaxrs::get_abstract_mesh().axis_sizes(), &[2, 4]);
            x + 1.0
        })
        .call(Array::zeros(&[2], DType::F32));
        assert_eq!(seen.to_vec::<f32>(), vec![1.0, 1.0]);
        let msg = message_of(|| {
            let _: Array = jit(|x: Array| {
                jaxrs::get_mesh();
                x
            })
            .call(Array::zeros(&[2], DType::F32));
        });
        assert!(
            msg.contains(
                "get_mesh can only be used outside of jit; maybe you want get_abstract_mesh()"
            ),
            "{msg}"
        );
        // use_mesh nests inside set_mesh, and the older Mesh::enter is the same scope.
        let small = jaxrs::make_mesh(&[2], &["d"]).unwrap();
        {
            let _inner = jaxrs::use_mesh(&small);
            assert_eq!(jaxrs::get_abstract_mesh().axis_names(), &["d"]);
        }
        assert_eq!(jaxrs::get_mesh(), Some(mesh.clone()));
    }
    assert_eq!(jaxrs::get_mesh(), None);
    {
        let _older = mesh.enter();
        assert_eq!(jaxrs::get_mesh(), Some(mesh.clone()));
    }
    assert_eq!(
        jaxrs::make_single_device_sharding(devices[3]),
        jaxrs::Sharding::SingleDevice(devices[3])
    );
}

#[test]
fn set_mesh_lets_jit_take_bare_specs() {
    eight();
    let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"]).unwrap();
    let _scope = jaxrs::set_mesh(&mesh);
    let x = Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([4, 8]);
    let double = jit(|x: Array| x * 2.0)
        .in_shardings(P!["dp", "mp"])
        .out_shardings(P!["dp"]);
    let y: Array = double.call(x.clone());
    assert_eq!(
        y.to_vec::<f32>(),
        x.to_vec::<f32>()
            .iter()
            .map(|v| v * 2.0)
            .collect::<Vec<_>>()
    );
    let want = NamedSharding::new(mesh, P!["dp"]).unwrap();
    assert_eq!(y.sharding(), Some(&jaxrs::Sharding::Named(want)));
}

#[test]
fn misuse_names_the_problem() {
    let devices = eight();
    let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"]).unwrap();
    let sharding = NamedSharding::new(mesh.clone(), P!["x"]).unwrap();

    let msg = message_of(|| {
        jaxrs::make_array_from_callback(&[4, 4], sharding.clone(), |_| {
            Array::zeros(&[4, 4], DType::F32)
        });
    });
    assert!(
        msg.starts_with(
            "make_array_from_callback: the piece for CpuDevice(id=0) (index [0..2, 0..4]) has \
             shape [4, 4], but that shard of a [4, 4] array is [2, 4] at tests/mesh_api.rs:"
        ),
        "{msg}"
    );
    let msg = message_of(|| {
        jaxrs::make_array_from_callback(&[5, 4], sharding.clone(), |_| {
            Array::zeros(&[2, 4], DType::F32)
        });
    });
    assert!(
        msg.starts_with(
            "make_array_from_callback: dimension 0 of size 5 does not split evenly over mesh \
             axis \"x\"=2"
        ),
        "{msg}"
    );
    let mut first = true;
    let msg = message_of(|| {
        jaxrs::make_array_from_callback(&[4, 4], sharding.clone(), |_| {
            let dtype = if std::mem::take(&mut first) {
                DType::F32
            } else {
                DType::F64
            };
            Array::zeros(&[2, 4], dtype)
        });
    });
    assert!(
        msg.starts_with(
            "make_array_from_callback: the piece for CpuDevice(id=1) is float64, the first \
             piece float32; every piece must have one dtype"
        ),
        "{msg}"
    );

    let on = |d: jaxrs::Device| jaxrs::device_put(&Array::zeros(&[2, 4], DType::F32), d);
    let msg = message_of(|| {
        jaxrs::make_array_from_single_device_arrays(&[4, 4], sharding.clone(), &[on(devices[0])]);
    });
    assert!(
        msg.starts_with(
            "make_array_from_single_device_arrays: the sharding has 8 devices but 1 arrays were \
             given"
        ),
        "{msg}"
    );
    let mut twice: Vec<Array> = devices.iter().map(|d| on(*d)).collect();
    twice[1] = on(devices[0]);
    let msg = message_of(|| {
        jaxrs::make_array_from_single_device_arrays(&[4, 4], sharding.clone(), &twice);
    });
    assert!(
        msg.starts_with("make_array_from_single_device_arrays: two arrays are on CpuDevice(id=0)"),
        "{msg}"
    );
    let small = jaxrs::make_mesh(&[2], &["x"]).unwrap();
    let pair = NamedSharding::new(small, P!["x"]).unwrap();
    let msg = message_of(|| {
        jaxrs::make_array_from_single_device_arrays(
            &[4, 4],
            pair,
            &[on(devices[0]), on(devices[5])],
        );
    });
    assert!(
        msg.starts_with(
            "make_array_from_single_device_arrays: array 1 is on CpuDevice(id=5), which the \
             sharding does not use"
        ),
        "{msg}"
    );
}

#[test]
fn default_device_places_arrays_and_computations_as_jax() {
    let devices = eight();
    let want = &golden()["default_device"];
    let id = |key: &str| want[key].as_u64().unwrap() as i32;
    let device_of = |a: &Array| match a.sharding() {
        Some(jaxrs::Sharding::SingleDevice(d)) => d.id(),
        other => panic!("not on one device: {other:?}"),
    };
    let double = jit(|v: Array| &v * 2.0 + 1.0);
    let made = {
        let _scope = jaxrs::default_device(devices[2]);
        assert_eq!(jaxrs::current_default_device().id(), 2);
        let made = Array::ones(&[3], DType::F32);
        assert_eq!(device_of(&made), id("made_in_scope"));
        assert_eq!(device_of(&(&made * 2.0)), id("op_in_scope"));
        let y: Array = double.call(made.clone());
        assert_eq!(device_of(&y), id("jit_in_scope"));
        assert_eq!(y.to_vec::<f32>(), f32s(&want["values_in_scope"]));
        made
    };
    assert_eq!(jaxrs::current_default_device().id(), 0);
    let committed = jaxrs::device_put(&Array::arange(0.0, 3.0, 1.0, DType::F32), devices[5]);
    assert_eq!(device_of(&(&committed + 1.0)), id("op_on_committed"));
    let y: Array = double.call(committed.clone());
    assert_eq!(device_of(&y), id("jit_on_committed"));
    assert_eq!(y.to_vec::<f32>(), vec![1.0, 3.0, 5.0]);
    {
        let _scope = jaxrs::default_device(devices[2]);
        assert_eq!(
            device_of(&(&committed + 1.0)),
            id("op_on_committed_in_scope")
        );
    }
    assert_eq!(
        device_of(&Array::ones(&[3], DType::F32)),
        id("made_outside")
    );
    let y: Array = double.call(Array::ones(&[3], DType::F32));
    assert_eq!(device_of(&y), id("jit_outside"));
    // Where jaxrs differs (documented at `default_device`): an array made inside a scope is
    // committed to its device, so an operation on it outside the scope stays there (JAX
    // moves an uncommitted one to the default device); arrays of two devices meet on the
    // default device (JAX refuses committed arrays of two devices).
    assert_eq!(device_of(&(&made * 2.0)), 2);
    assert_eq!(device_of(&(&made + &committed)), 0);
    assert_eq!((&made + &committed).to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
}
