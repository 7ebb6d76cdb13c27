//! The PJRT layer against the real CPU plugin (found or provisioned by `default_client`).

use half::bf16;
use jaxrs_runtime::internals::pjrt::{
    default_client, Api, Buffer, Client, CompileOptions, LoadedExecutable,
};
use jaxrs_runtime::{DType, Error, ErrorCode};
use std::sync::Arc;

fn client() -> Arc<Client> {
    default_client().expect("the default PJRT client")
}

fn module(args: &str, body: &str, result: &str) -> String {
    format!("module @m {{\n  func.func public @main({args}) -> {result} {{\n{body}\n  }}\n}}\n")
}

fn add_module() -> String {
    module(
        "%a: tensor<4xf32>, %b: tensor<4xf32>",
        "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n    return %0 : tensor<4xf32>",
        "tensor<4xf32>",
    )
}

/// `x + 1` with argument attributes `attr` on `x`.
fn inc_module(attr: &str) -> String {
    module(
        &format!("%x: tensor<4xf32> {attr}"),
        "    %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n    \
         %0 = stablehlo.add %x, %c : tensor<4xf32>\n    return %0 : tensor<4xf32>",
        "tensor<4xf32>",
    )
}

fn compile(c: &Client, text: &str) -> LoadedExecutable {
    c.compile(text, &CompileOptions::single_device())
        .unwrap_or_else(|e| panic!("compile failed: {e}\n{text}"))
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn upload_f32(c: &Client, v: &[f32]) -> Buffer {
    c.buffer_from_host(
        &f32_bytes(v),
        DType::F32,
        &[v.len() as i64],
        &c.devices()[0],
    )
    .unwrap()
}

fn read_f32(b: &Buffer) -> Vec<f32> {
    let mut out = vec![0u8; b.dims().iter().product::<i64>() as usize * 4];
    b.copy_to_host(&mut out).unwrap();
    to_f32(&out)
}

#[test]
fn default_client_is_shared_and_describes_its_devices() {
    let c = client();
    assert!(Arc::ptr_eq(&c, &client()));
    assert_eq!(c.platform_name(), "cpu");
    let (major, minor) = c.api().version();
    assert_eq!(major, 0);
    assert!(minor >= 81, "API 0.{minor}");
    // JAXRS_CPU_DEVICES defaults to 1.
    let want = std::env::var("JAXRS_CPU_DEVICES").map_or(1, |s| s.parse().unwrap());
    assert_eq!(c.devices().len(), want);
    for (i, d) in c.devices().iter().enumerate() {
        assert_eq!(d.id(), i as i32);
        assert_eq!(d.kind(), "cpu");
        assert!(d.local_hardware_id() >= -1);
    }
}

#[test]
fn add_compiles_runs_and_copies_back() {
    let c = client();
    let exe = compile(&c, &add_module());
    assert_eq!(exe.num_outputs(), 1);
    assert_eq!(exe.devices(), &c.devices()[..1]);
    let a = upload_f32(&c, &[1.0, 2.0, 3.0, 4.0]);
    let b = upload_f32(&c, &[10.0, 20.0, 30.0, 40.0]);
    assert_eq!(a.dims(), [4]);
    assert_eq!(a.dtype(), DType::F32);
    assert_eq!(a.device(), c.devices()[0]);
    let out = exe.execute(&[vec![&a, &b]], &[]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].len(), 1);
    let y = &out[0][0];
    y.block_until_ready().unwrap();
    assert_eq!(y.dims(), [4]);
    assert_eq!(y.dtype(), DType::F32);
    assert!(Arc::ptr_eq(y.client(), &c));
    assert_eq!(read_f32(y), [11.0, 22.0, 33.0, 44.0]);
    // Inputs are untouched and still readable.
    assert!(!a.is_deleted());
    assert_eq!(read_f32(&a), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn host_bytes_may_be_freed_right_after_upload() {
    let c = client();
    let exe = compile(&c, &add_module());
    let mut bytes = f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let a = c
        .buffer_from_host(&bytes, DType::F32, &[4], &c.devices()[0])
        .unwrap();
    bytes.fill(0xff);
    drop(bytes);
    // An unaligned source works too.
    let mut raw = vec![0u8; 17];
    raw[1..].copy_from_slice(&f32_bytes(&[5.0, 6.0, 7.0, 8.0]));
    let b = c
        .buffer_from_host(&raw[1..], DType::F32, &[4], &c.devices()[0])
        .unwrap();
    drop(raw);
    let out = exe.execute(&[vec![&a, &b]], &[]).unwrap();
    assert_eq!(read_f32(&out[0][0]), [6.0, 8.0, 10.0, 12.0]);
}

#[test]
fn buffers_copy_between_devices_without_the_host() {
    let c = client();
    let last = *c.devices().last().unwrap();
    let a = c
        .buffer_from_host(
            &f32_bytes(&[1.0, 2.0, 3.0, 4.0]),
            DType::F32,
            &[4],
            &c.devices()[0],
        )
        .unwrap();
    let b = a.copy_to_device(&last).unwrap();
    assert_eq!(b.device(), last);
    assert_eq!(b.dims(), [4]);
    drop(a);
    assert_eq!(read_f32(&b), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn compile_error_is_typed_and_carries_the_message() {
    let c = client();
    let bad = module(
        "%a: tensor<4xf32>",
        "    %0 = stablehlo.add %a, %a : tensor<8xf32>\n    return %0 : tensor<8xf32>",
        "tensor<8xf32>",
    );
    match c.compile(&bad, &CompileOptions::single_device()) {
        Err(Error::Compile { message }) => assert!(!message.is_empty()),
        Err(e) => panic!("expected Error::Compile, got {e:?}"),
        Ok(_) => panic!("a mistyped program compiled"),
    }
    match c.compile("this is not MLIR", &CompileOptions::single_device()) {
        Err(Error::Compile { message }) => assert!(!message.is_empty()),
        other => panic!("expected Error::Compile, got {other:?}"),
    }
}

#[test]
fn wrong_byte_size_is_rejected_before_the_call() {
    let c = client();
    let d = c.devices()[0];
    match c.buffer_from_host(&[0u8; 15], DType::F32, &[4], &d) {
        Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            message,
            ..
        }) => assert!(
            message.contains("15") && message.contains("16"),
            "{message}"
        ),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    for dims in [&[-1i64][..], &[i64::MAX, i64::MAX]] {
        let e = c.buffer_from_host(&[], DType::F32, dims, &d).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Pjrt {
                    code: ErrorCode::InvalidArgument,
                    ..
                }
            ),
            "{e:?}"
        );
    }
    // A scalar is one element; an empty array is zero bytes.
    let s = c
        .buffer_from_host(&7i32.to_le_bytes(), DType::I32, &[], &d)
        .unwrap();
    assert_eq!(s.dims(), Vec::<i64>::new());
    let e = c.buffer_from_host(&[], DType::F32, &[0, 3], &d).unwrap();
    assert_eq!(e.dims(), [0, 3]);
    e.copy_to_host(&mut []).unwrap();
}

#[test]
fn copy_to_host_checks_the_destination_length() {
    let c = client();
    let a = upload_f32(&c, &[1.0, 2.0, 3.0, 4.0]);
    let e = a.copy_to_host(&mut [0u8; 12]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Pjrt {
                code: ErrorCode::InvalidArgument,
                ..
            }
        ),
        "{e:?}"
    );
}

fn check_donation(attr: &str) {
    let c = client();
    let exe = compile(&c, &inc_module(attr));
    // Donated: the input is consumed.
    let x = upload_f32(&c, &[1.0, 2.0, 3.0, 4.0]);
    let out = exe.execute(&[vec![&x]], &[]).unwrap();
    assert_eq!(read_f32(&out[0][0]), [2.0, 3.0, 4.0, 5.0]);
    assert!(x.is_deleted(), "{attr}: the donated input is not deleted");
    let mut dst = [0u8; 16];
    match x.copy_to_host(&mut dst) {
        Err(Error::DonatedBufferUsed(_)) => {}
        other => panic!("{attr}: expected DonatedBufferUsed, got {other:?}"),
    }
    // Running again on the donated buffer fails cleanly (at launch or when read).
    match exe.execute(&[vec![&x]], &[]) {
        Err(e) => assert!(
            matches!(e, Error::DonatedBufferUsed(_) | Error::Pjrt { .. }),
            "{e:?}"
        ),
        Ok(out) => assert!(out[0][0].block_until_ready().is_err()),
    }
    // Not donated when listed as non-donatable: the input stays alive and readable.
    let x = upload_f32(&c, &[1.0, 2.0, 3.0, 4.0]);
    let out = exe.execute(&[vec![&x]], &[0]).unwrap();
    assert_eq!(read_f32(&out[0][0]), [2.0, 3.0, 4.0, 5.0]);
    assert!(!x.is_deleted());
    assert_eq!(read_f32(&x), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn donation_with_buffer_donor() {
    check_donation("{jax.buffer_donor = true}");
}

#[test]
fn donation_with_aliasing_output() {
    check_donation("{tf.aliasing_output = 0 : i32}");
}

#[test]
fn compiled_memory_stats_are_sane() {
    let c = client();
    let s = compile(&c, &add_module()).compiled_memory_stats().unwrap();
    assert_eq!(s.argument_bytes, 32, "{s:?}");
    assert_eq!(s.output_bytes, 16, "{s:?}");
    assert_eq!(s.alias_bytes, 0, "{s:?}");
    assert!(s.temp_bytes >= 0 && s.generated_code_bytes >= 0, "{s:?}");
    assert!(s.peak_bytes >= s.output_bytes, "{s:?}");
    let s = compile(&c, &inc_module("{tf.aliasing_output = 0 : i32}"))
        .compiled_memory_stats()
        .unwrap();
    assert_eq!(s.argument_bytes, 16, "{s:?}");
    assert_eq!(s.alias_bytes, 16, "{s:?}");
}

#[test]
fn four_threads_share_one_executable() {
    let c = client();
    let exe = Arc::new(compile(&c, &add_module()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (c, exe) = (c.clone(), exe.clone());
            std::thread::spawn(move || {
                for i in 0..200 {
                    let base = (t * 1000 + i) as f32;
                    let a = upload_f32(&c, &[base, base + 1.0, base + 2.0, base + 3.0]);
                    let b = upload_f32(&c, &[0.5; 4]);
                    let out = exe.execute(&[vec![&a, &b]], &[]).unwrap();
                    assert_eq!(
                        read_f32(&out[0][0]),
                        [base + 0.5, base + 1.5, base + 2.5, base + 3.5]
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn compile_options_encode_like_xla() {
    assert_eq!(
        CompileOptions::single_device().encode(),
        [0x1a, 0x04, 0x20, 0x01, 0x28, 0x01]
    );
    // Zero counts mean one: an empty blob would abort the plugin.
    assert_eq!(
        CompileOptions::default().encode(),
        CompileOptions::single_device().encode()
    );
    let replicas = CompileOptions {
        num_replicas: 8,
        ..CompileOptions::single_device()
    };
    assert_eq!(replicas.encode(), [0x1a, 0x04, 0x20, 0x08, 0x28, 0x01]);
    let spmd = CompileOptions {
        num_replicas: 1,
        num_partitions: 8,
        use_spmd_partitioning: true,
        use_shardy_partitioner: true,
        device_assignment: None,
        xla_bool_options: Vec::new(),
        xla_int_options: Vec::new(),
    };
    assert_eq!(
        spmd.encode(),
        [0x1a, 0x09, 0x20, 0x01, 0x28, 0x08, 0x30, 0x01, 0x98, 0x01, 0x01]
    );
}

fn round_trip(c: &Client, bytes: &[u8], dtype: DType, dims: &[i64]) {
    let b = c
        .buffer_from_host(bytes, dtype, dims, &c.devices()[0])
        .unwrap();
    assert_eq!(b.dtype(), dtype);
    assert_eq!(b.dims(), dims);
    let mut back = vec![0u8; bytes.len()];
    b.copy_to_host(&mut back).unwrap();
    assert_eq!(back, bytes, "{dtype:?}");
}

#[test]
fn every_dtype_round_trips() {
    let c = client();
    let bf: Vec<u8> = [1.5f32, -2.0, 3.25, 1e30]
        .iter()
        .flat_map(|&x| bf16::from_f32(x).to_le_bytes())
        .collect();
    round_trip(&c, &bf, DType::BF16, &[2, 2]);
    let i: Vec<u8> = [i32::MIN, -1, 0, 7, i32::MAX, 42]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    round_trip(&c, &i, DType::I32, &[2, 3]);
    round_trip(&c, &[1, 0, 0, 1, 1], DType::Bool, &[5]);
    for dtype in DType::ALL {
        let bytes: Vec<u8> = (0..6 * dtype.size_in_bytes())
            .map(|k| {
                if dtype == DType::Bool {
                    (k % 2) as u8
                } else {
                    (k * 37 % 251) as u8
                }
            })
            .collect();
        round_trip(&c, &bytes, dtype, &[3, 2]);
    }
}

#[test]
fn bool_and_bf16_outputs() {
    let c = client();
    let text = module(
        "%a: tensor<3xbf16>, %b: tensor<3xbf16>",
        "    %0 = stablehlo.compare GT, %a, %b : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xi1>\n    \
         %1 = stablehlo.multiply %a, %b : tensor<3xbf16>\n    \
         return %0, %1 : tensor<3xi1>, tensor<3xbf16>",
        "(tensor<3xi1>, tensor<3xbf16>)",
    );
    let exe = compile(&c, &text);
    assert_eq!(exe.num_outputs(), 2);
    let up = |v: [f32; 3]| {
        let bytes: Vec<u8> = v
            .iter()
            .flat_map(|&x| bf16::from_f32(x).to_le_bytes())
            .collect();
        c.buffer_from_host(&bytes, DType::BF16, &[3], &c.devices()[0])
            .unwrap()
    };
    let (a, b) = (up([1.0, 5.0, -2.0]), up([2.0, 4.0, -2.0]));
    let out = exe.execute(&[vec![&a, &b]], &[]).unwrap();
    let (gt, prod) = (&out[0][0], &out[0][1]);
    assert_eq!(gt.dtype(), DType::Bool);
    let mut flags = [9u8; 3];
    gt.copy_to_host(&mut flags).unwrap();
    assert_eq!(flags, [0, 1, 0]);
    assert_eq!(prod.dtype(), DType::BF16);
    let mut p = [0u8; 6];
    prod.copy_to_host(&mut p).unwrap();
    let p: Vec<f32> = p
        .chunks_exact(2)
        .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    assert_eq!(p, [2.0, 20.0, 4.0]);
}

#[test]
fn execute_rejects_bad_argument_lists() {
    let c = client();
    let exe = compile(&c, &add_module());
    let a = upload_f32(&c, &[1.0; 4]);
    // Wrong number of device lists: checked here.
    let e = exe.execute(&[], &[]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Pjrt {
                code: ErrorCode::InvalidArgument,
                ..
            }
        ),
        "{e:?}"
    );
    // Wrong number of arguments: the plugin says no (and does not abort).
    let e = exe.execute(&[vec![&a]], &[]).unwrap_err();
    assert!(matches!(e, Error::Pjrt { .. }), "{e:?}");
    let e = exe.execute(&[vec![&a, &a, &a]], &[]).unwrap_err();
    assert!(matches!(e, Error::Pjrt { .. }), "{e:?}");
    // The same buffer twice (not donated) is fine.
    let out = exe.execute(&[vec![&a, &a]], &[]).unwrap();
    assert_eq!(read_f32(&out[0][0]), [2.0; 4]);
}

/// A second client with two CPU devices: a replicated program with an explicit device
/// assignment, and buffers that belong to another client are refused.
#[test]
fn two_devices_run_a_replicated_program() {
    let api = default_client().unwrap().api().clone();
    let c = Client::new(api.clone(), Some(2)).unwrap();
    assert_eq!(c.devices().len(), 2);
    let options = CompileOptions {
        num_replicas: 2,
        num_partitions: 1,
        device_assignment: Some(vec![vec![0], vec![1]]),
        ..Default::default()
    };
    let exe = c.compile(&add_module(), &options).unwrap();
    assert_eq!(exe.devices(), c.devices());
    let up = |v: [f32; 4], d: usize| {
        c.buffer_from_host(&f32_bytes(&v), DType::F32, &[4], &c.devices()[d])
            .unwrap()
    };
    let (a0, b0) = (up([1.0; 4], 0), up([2.0; 4], 0));
    let (a1, b1) = (up([10.0; 4], 1), up([20.0; 4], 1));
    assert_eq!(a1.device(), c.devices()[1]);
    let out = exe.execute(&[vec![&a0, &b0], vec![&a1, &b1]], &[]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(read_f32(&out[0][0]), [3.0; 4]);
    assert_eq!(read_f32(&out[1][0]), [30.0; 4]);
    assert_eq!(out[1][0].device(), c.devices()[1]);
    // A buffer of another client, or another client's device, is refused before the call.
    let other = upload_f32(&default_client().unwrap(), &[1.0; 4]);
    let e = exe
        .execute(&[vec![&other, &b0], vec![&a1, &b1]], &[])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Pjrt {
                code: ErrorCode::InvalidArgument,
                ..
            }
        ),
        "{e:?}"
    );
    let foreign = default_client().unwrap().devices()[0];
    let e = c
        .buffer_from_host(&f32_bytes(&[1.0; 4]), DType::F32, &[4], &foreign)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Pjrt {
                code: ErrorCode::InvalidArgument,
                ..
            }
        ),
        "{e:?}"
    );
    // Loading the same plugin again gives the same Api.
    assert!(Arc::ptr_eq(&Api::load(api.path()).unwrap(), &api));
}

#[test]
fn loading_a_non_plugin_is_a_typed_error() {
    let dir = std::env::temp_dir().join(format!("jaxrs-pjrt-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("fake.so");
    std::fs::write(&fake, b"not a shared library").unwrap();
    for path in [fake.as_path(), &dir.join("missing.so")] {
        match Api::load(path) {
            Err(Error::PluginLoad { path: p, reason }) => {
                assert!(p.ends_with(".so") && !reason.is_empty())
            }
            other => panic!("expected PluginLoad, got {other:?}"),
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}
