//! Ahead-of-time compilation (`jaxrs::transforms::aot`): `lower` for arrays, shapes and
//! sharded shapes, `Lowered`/`Compiled` inspection, calls through a `Compiled` with their
//! checks, the `#[jit]` site's `lower`, and serialized programs loaded in another process,
//! with the hostile cases of that format.

mod common;

use common::panic_message;
use jaxrs::prelude::*;
use jaxrs::tree::TreeOf;
use jaxrs::{Compiled, Error, Jitted, Mesh, NamedSharding, ShapeDtypeStruct, TreeDef, P};
use std::process::Command;

fn setup() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
}

fn pair(a: ShapeDtypeStruct, b: ShapeDtypeStruct) -> TreeOf<ShapeDtypeStruct> {
    TreeOf::new(TreeDef::Tuple(vec![TreeDef::Leaf; 2]), vec![a, b])
}

fn iota(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::from_vec((0..n).map(|i| i as f32 * 0.25 - 1.0).collect(), shape)
}

#[test]
fn lower_from_shapes_compiles_and_runs_without_an_array_of_them() {
    setup();
    let f = jit(|(x, w): (Array, Array)| x.matmul(&w).tanh());
    let lowered = f.lower(&pair(
        ShapeDtypeStruct::new([8, 4], DType::F32),
        ShapeDtypeStruct::new([4, 2], DType::F32),
    ));
    assert!(lowered.as_text().contains("stablehlo.dot_general"));
    assert!(lowered.as_text().contains("stablehlo.tanh"));
    assert_eq!(
        lowered.in_avals(),
        &[
            ShapeDtypeStruct::new([8, 4], DType::F32),
            ShapeDtypeStruct::new([4, 2], DType::F32)
        ]
    );
    assert_eq!(
        lowered.out_info().leaves(),
        &[ShapeDtypeStruct::new([8, 2], DType::F32)]
    );
    // Lowering compiles nothing into the function's cache.
    assert_eq!(f.site().cache_misses(), 0);
    let compiled = lowered.compile();
    assert_eq!(f.site().cache_misses(), 1);

    let (x, w) = (iota(&[8, 4]), iota(&[4, 2]));
    let ahead: Array = compiled.call((x.clone(), w.clone()));
    let eager = x.matmul(&w).tanh();
    assert_eq!(ahead.to_vec::<f32>(), eager.to_vec::<f32>());
    // The jitted function finds the program compiled ahead of time.
    let called: Array = f.call((x, w));
    assert_eq!(called.to_vec::<f32>(), ahead.to_vec::<f32>());
    assert_eq!(f.site().cache_misses(), 1);
}

#[test]
fn lower_from_arrays_matches_lower_from_their_shapes() {
    setup();
    let f = jit(|x: Array| (&x * 2.0).sum(None, false));
    let x = iota(&[5]);
    let from_array = f.lower(&x);
    let from_shape = f.lower(&TreeOf::leaf(x.aval().clone()));
    assert_eq!(from_array.as_text(), from_shape.as_text());
    let y: Array = from_array.compile().call(x.clone());
    assert_eq!(y.item::<f32>(), (&x * 2.0).sum(None, false).item::<f32>());
}

#[test]
fn cost_analysis_counts_a_matmuls_flops_where_the_plugin_gives_it() {
    setup();
    let f = jit(|(a, b): (Array, Array)| a.matmul(&b));
    let lowered = f.lower(&pair(
        ShapeDtypeStruct::new([16, 32], DType::F32),
        ShapeDtypeStruct::new([32, 8], DType::F32),
    ));
    let before = lowered.cost_analysis();
    let compiled = lowered.compile();
    match compiled.cost_analysis() {
        Ok(costs) => {
            // A dot of [m, k] x [k, n] is m*n*k multiply-adds: 2*m*n*k flops, as XLA counts.
            assert_eq!(costs["flops"], 2.0 * 16.0 * 32.0 * 8.0);
            assert_eq!(before.unwrap()["flops"], costs["flops"]);
            let bytes = ((16 * 32 + 32 * 8 + 16 * 8) * 4) as f64;
            assert!(costs["bytes accessed"] >= bytes, "{costs:?}");
        }
        // XLA's CPU plugin does not implement PJRT_Executable_GetCostAnalysis: a typed error.
        Err(Error::Pjrt { code, context, .. }) => {
            assert_eq!(code, jaxrs::ErrorCode::Unimplemented);
            assert_eq!(context, "PJRT_Executable_GetCostAnalysis");
            assert!(matches!(
                before,
                Err(Error::Pjrt {
                    code: jaxrs::ErrorCode::Unimplemented,
                    ..
                })
            ));
        }
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn memory_analysis_sizes_arguments_results_and_donation() {
    setup();
    let kept = jit(|x: Array| &x + 1.0);
    let donating = jit(|x: Array| &x + 1.0).donate_argument();
    let shape = TreeOf::leaf(ShapeDtypeStruct::new([256, 64], DType::F32));
    let bytes = 256 * 64 * 4;
    let m = kept.lower(&shape).compile().memory_analysis().unwrap();
    assert_eq!(
        (m.argument_bytes, m.output_bytes, m.alias_bytes),
        (bytes, bytes, 0)
    );
    let compiled = donating.lower(&shape).compile();
    let m = compiled.memory_analysis().unwrap();
    assert_eq!(
        (m.argument_bytes, m.output_bytes, m.alias_bytes),
        (bytes, bytes, bytes)
    );
    // A donating program still computes the right thing when called ahead of time.
    let y: Array = compiled.call(Array::ones(&[256, 64], DType::F32));
    assert!(y.to_vec::<f32>().iter().all(|&v| v == 2.0));
}

#[test]
fn a_compiled_call_refuses_other_shapes_naming_the_argument() {
    setup();
    let f = jit(|(x, w): (Array, Array)| x.matmul(&w));
    let compiled = f
        .lower(&pair(
            ShapeDtypeStruct::new([2, 3], DType::F32),
            ShapeDtypeStruct::new([3, 4], DType::F32),
        ))
        .compile();
    let message = panic_message(std::panic::AssertUnwindSafe(|| {
        let _: Array = compiled.call((iota(&[2, 3]), iota(&[3, 5])));
    }));
    assert!(
        message
            .contains("argument `arg[1]` is f32[3,5], but the program was compiled for f32[3,4]"),
        "{message}"
    );
    let message = panic_message(std::panic::AssertUnwindSafe(|| {
        let _: Array = compiled.call((iota(&[2, 3]).astype(DType::F64), iota(&[3, 4])));
    }));
    assert!(message.contains("is f64[2,3]"), "{message}");
    let message = panic_message(std::panic::AssertUnwindSafe(|| {
        let _: Array = compiled.call(vec![iota(&[2, 3]), iota(&[3, 4])]);
    }));
    assert!(
        message.contains("takes arguments of structure (*, *)"),
        "{message}"
    );
}

#[test]
fn a_donated_array_passed_twice_is_an_error() {
    setup();
    let f = jit(|(a, b): (Array, Array)| &a + &b).donate_argument();
    let compiled = f
        .lower(&pair(
            ShapeDtypeStruct::new([3], DType::F32),
            ShapeDtypeStruct::new([3], DType::F32),
        ))
        .compile();
    let x = iota(&[3]);
    let err = compiled
        .try_call::<_, Array>((x.clone(), x))
        .expect_err("refused");
    assert!(matches!(err, Error::DonatedBufferUsed(_)), "{err}");
}

#[test]
fn donated_tuple_elements_are_donated_by_the_compiled_program_and_its_serialized_form() {
    setup();
    let f = jit(|(w, x): (Array, Array)| &w + &x).donate_argnums(&[0]);
    let compiled = f
        .lower(&pair(
            ShapeDtypeStruct::new([3], DType::F32),
            ShapeDtypeStruct::new([3], DType::F32),
        ))
        .compile();
    let m = compiled.memory_analysis().unwrap();
    assert_eq!(m.alias_bytes, 12);
    let loaded = Compiled::deserialize(&compiled.serialize().unwrap()).unwrap();
    for program in [&compiled, &loaded] {
        // w = [-1, -0.75, -0.5], x = 10 w.
        let (w, x) = (iota(&[3]), iota(&[3]) * 10.0);
        let y: Array = program.call((w, x.clone()));
        assert_eq!(y.to_vec::<f32>(), vec![-11.0, -8.25, -5.5]);
        assert_eq!(x.to_vec::<f32>(), vec![-10.0, -7.5, -5.0]);
        let err = program
            .try_call::<_, Array>((x.clone(), x))
            .expect_err("refused");
        assert!(matches!(err, Error::DonatedBufferUsed(_)), "{err}");
    }
}

#[derive(Tree, Clone)]
struct Layer {
    w: Array,
    b: Array,
    scale: f32,
    activation: String,
}

#[jit(static = n)]
fn power(x: &Array, n: u32) -> Array {
    (0..n).fold(x.clone(), |acc, _| &acc * x)
}

#[jit(donate = layer)]
fn apply(layer: Layer, x: &Array, shift: f32) -> (Layer, Array) {
    let y = (x.matmul(&layer.w) + &layer.b) * layer.scale + shift;
    let y = if layer.activation == "relu" {
        y.maximum(Array::scalar(0.0f32))
    } else {
        y
    };
    (layer, y)
}

#[test]
fn a_jit_site_lowers_with_its_static_values_and_fills_its_cache() {
    setup();
    let x = TreeOf::leaf(ShapeDtypeStruct::new([4], DType::F32));
    let cube = power::jit_site()
        .lower(&x, |x: Array| power(&x, 2))
        .compile();
    assert_eq!(cube.as_text().matches("stablehlo.multiply").count(), 2);
    let v = Array::from_vec(vec![1f32, 2.0, -3.0, 0.5], &[4]);
    let y: Array = cube.call(((), (v.clone(),)));
    assert_eq!(y.to_vec::<f32>(), vec![1.0, 8.0, -27.0, 0.125]);
    assert_eq!(power::jit_site().cache_misses(), 1);
    assert_eq!(power(&v, 2).to_vec::<f32>(), y.to_vec::<f32>());
    assert_eq!(power::jit_site().cache_misses(), 1);
    // Another static value is another program.
    let _ = power(&v, 3);
    assert_eq!(power::jit_site().cache_misses(), 2);
}

#[test]
fn a_site_program_takes_donated_and_kept_tuples() {
    setup();
    let layer = layer();
    let x = iota(&[4, 3]);
    let lowered = apply::jit_site().lower(&(layer.clone(), x.clone()), |(l, x): (Layer, Array)| {
        apply(l, &x, 0.25)
    });
    assert!(lowered.as_text().contains("stablehlo.maximum"));
    let compiled = lowered.compile();
    let expected = apply(layer.clone(), &x, 0.25).1.to_vec::<f32>();
    let (back, y): (Layer, Array) =
        compiled.call(((layer.clone(),), (x.clone(), Array::scalar(0.25f32))));
    assert_eq!(y.to_vec::<f32>(), expected);
    assert_eq!((back.scale, back.activation.as_str()), (2.0, "relu"));
    assert_eq!(back.w.to_vec::<f32>(), iota(&[3, 2]).to_vec::<f32>());

    // Loaded back in this process too.
    let loaded = Compiled::deserialize(&compiled.serialize().unwrap()).unwrap();
    let (_, y): (Layer, Array) = loaded.call(((layer,), (x, Array::scalar(0.25f32))));
    assert_eq!(y.to_vec::<f32>(), expected);
}

#[test]
fn a_sharded_lowering_runs_over_its_mesh() {
    setup();
    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap();
    let f = jit(|(x, w): (Array, Array)| x.matmul(&w).tanh())
        .out_shardings(P!["dp", "mp"])
        .mesh(&mesh);
    let shapes = TreeOf::new(
        TreeDef::Tuple(vec![TreeDef::Leaf; 2]),
        vec![
            ShapeDtypeStruct::new([8, 4], DType::F32)
                .with_sharding(NamedSharding::new(mesh.clone(), P!["dp", None]).unwrap()),
            ShapeDtypeStruct::new([4, 8], DType::F32)
                .with_sharding(NamedSharding::new(mesh.clone(), P![None, "mp"]).unwrap()),
        ],
    );
    let lowered = f.lower(&shapes);
    let text = lowered.as_text();
    assert!(
        text.contains(r#"sdy.sharding<@mesh, [{"dp"}, {}]>"#),
        "{text}"
    );
    assert!(
        text.contains(r#"sdy.sharding<@mesh, [{}, {"mp"}]>"#),
        "{text}"
    );
    let compiled = lowered.compile();
    let (x, w) = (iota(&[8, 4]), iota(&[4, 8]));
    let y: Array = compiled.call((x.clone(), w.clone()));
    assert_eq!(y.addressable_shards()[0].data.shape(), &[4, 2]);
    let expected = x.matmul(&w).tanh().to_vec::<f32>();
    let got = y.to_vec::<f32>();
    assert!(got.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-6));
    // Serialized with its layout, loaded back, it runs over the same mesh.
    let loaded = Compiled::deserialize(&compiled.serialize().unwrap()).unwrap();
    let z: Array = loaded.call((x, w));
    assert_eq!(z.to_vec::<f32>(), got);
    assert_eq!(z.sharding(), y.sharding());
}

/// Where the child process finds the serialized programs and writes its results.
const CHILD: &str = "JAXRS_AOT_CHILD_DIR";

fn closure_with_a_big_constant(rows: usize) -> impl Fn(Array) -> Array {
    // 32 KiB: too large to embed, so the program takes it as a lifted constant.
    let table = iota(&[128, 64]);
    move |x: Array| x.matmul(&table).sum(0, false) + rows as f32
}

/// A matmul laid out over a 2x4 mesh of the 8 CPU devices.
fn sharded_matmul() -> Jitted<impl Fn((Array, Array)) -> Array> {
    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap();
    jit(|(x, w): (Array, Array)| x.matmul(&w))
        .in_shardings((P!["dp", None], P![None, "mp"]))
        .out_shardings(P!["dp", "mp"])
        .mesh(&mesh)
}

fn layer() -> Layer {
    Layer {
        w: iota(&[3, 2]),
        b: Array::from_vec(vec![0.5f32, -4.0], &[2]),
        scale: 2.0,
        activation: "relu".into(),
    }
}

fn bits(a: &Array) -> String {
    let bits: Vec<String> = a
        .to_vec::<f32>()
        .iter()
        .map(|v| v.to_bits().to_string())
        .collect();
    bits.join(" ")
}

/// Runs this test binary's `serialized_programs_run_in_another_process` as a child in `mode`.
fn child(mode: &str, dir: &std::path::Path) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "serialized_programs_run_in_another_process",
            "--test-threads=1",
            "--quiet",
        ])
        .env(CHILD, format!("{mode}:{}", dir.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{mode}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// One process compiles and serializes, another loads and runs, as an export step and a
// service would. The compiling process may answer from the persistent compile cache: the
// bytes are then the cache entry's (XLA's CPU plugin serializes a program it deserialized
// without its kernels' code).
#[test]
fn serialized_programs_run_in_another_process() {
    setup();
    if let Ok(task) = std::env::var(CHILD) {
        let (mode, dir) = task.split_once(':').unwrap();
        let dir = std::path::PathBuf::from(dir);
        if mode == "compile" {
            let site = apply::jit_site()
                .lower(&(layer(), iota(&[9, 3])), |(l, x): (Layer, Array)| {
                    apply(l, &x, 0.25)
                })
                .compile();
            let f = jit(closure_with_a_big_constant(7));
            let closure = f.lower(&iota(&[7, 128])).compile();
            let matmul = sharded_matmul();
            let sharded = matmul.lower(&(iota(&[8, 6]), iota(&[6, 8]))).compile();
            std::fs::write(dir.join("closure"), closure.serialize().unwrap()).unwrap();
            std::fs::write(dir.join("site"), site.serialize().unwrap()).unwrap();
            std::fs::write(dir.join("sharded"), sharded.serialize().unwrap()).unwrap();
        } else {
            // Load and run: nothing traced or compiled.
            let read = |name: &str| Compiled::deserialize(&std::fs::read(dir.join(name)).unwrap());
            let y: Array = read("closure").unwrap().call(iota(&[7, 128]));
            let (back, z): (Layer, Array) = read("site")
                .unwrap()
                .call(((layer(),), (iota(&[9, 3]), Array::scalar(0.25f64))));
            assert_eq!((back.scale, back.activation.as_str()), (2.0, "relu"));
            let s: Array = read("sharded")
                .unwrap()
                .call((iota(&[8, 6]), iota(&[6, 8])));
            assert_eq!(s.addressable_shards().len(), 8);
            assert_eq!(s.addressable_shards()[0].data.shape(), &[4, 2]);
            let text = format!("{}\n{}\n{}", bits(&y), bits(&z), bits(&s));
            std::fs::write(dir.join("result"), text).unwrap();
        }
        return;
    }
    let dir = std::env::temp_dir().join(format!("jaxrs-aot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    child("compile", &dir);
    child("run", &dir);
    let got = std::fs::read_to_string(dir.join("result"));
    std::fs::remove_dir_all(&dir).unwrap();
    let y = jit(closure_with_a_big_constant(7)).call(iota(&[7, 128]));
    let z = apply(layer(), &iota(&[9, 3]), 0.25).1;
    let sharded: Array = sharded_matmul().call((iota(&[8, 6]), iota(&[6, 8])));
    assert_eq!(
        got.unwrap(),
        format!("{}\n{}\n{}", bits(&y), bits(&z), bits(&sharded))
    );
}

/// The parts of a serialized program: the header as JSON and the bytes after it.
fn split(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
    let header = serde_json::from_slice(&bytes[20..20 + len]).unwrap();
    (header, bytes[20 + len..].to_vec())
}

fn join(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let header = serde_json::to_vec(header).unwrap();
    let mut out = b"JAXRSAOT".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

fn refusal(bytes: &[u8]) -> String {
    match Compiled::deserialize(bytes) {
        Err(Error::IncompatibleExecutable(m)) => m,
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn hostile_serialized_programs_are_refused_with_a_reason() {
    setup();
    let f = jit(closure_with_a_big_constant(2));
    let bytes = f.lower(&iota(&[2, 128])).compile().serialize().unwrap();

    assert!(refusal(b"").contains("too short"));
    assert!(refusal(b"not a program at all").contains("not a serialized jaxrs program"));
    let mut versioned = bytes.clone();
    versioned[8] = 9;
    assert!(refusal(&versioned).contains("format version 9"));
    // Truncated anywhere: in the header, in the constants, in the executable.
    for cut in [10, 19, 25, bytes.len() / 2, bytes.len() - 1] {
        let m = refusal(&bytes[..cut]);
        assert!(
            m.contains("truncated") || m.contains("claims") || m.contains("checksum"),
            "cut at {cut}: {m}"
        );
    }
    // A header length far beyond the file allocates nothing.
    let mut lying = bytes.clone();
    lying[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(refusal(&lying).contains("claims"));

    let (header, data) = split(&bytes);
    let mut other_devices = header.clone();
    other_devices["environment"]["devices"] = serde_json::json!([{"id": 0, "kind": "cpu"}]);
    assert!(refusal(&join(&other_devices, &data)).contains("devices"));
    let mut other_plugin = header.clone();
    other_plugin["environment"]["pjrt_api"] = "0.1".into();
    assert!(refusal(&join(&other_plugin, &data)).contains("pjrt_api"));
    let mut bad_tree = header.clone();
    bad_tree["out_def"] = serde_json::json!({"tuple": ["*", "*"]});
    assert!(refusal(&join(&bad_tree, &data)).contains("result structure"));
    let mut unknown_node = header.clone();
    unknown_node["arg_def"] = serde_json::json!({"set": []});
    assert!(refusal(&join(&unknown_node, &data)).contains("unknown tree node"));
    let mut past_end = header.clone();
    past_end["executable"]["offset"] = serde_json::json!(u64::MAX);
    assert!(refusal(&join(&past_end, &data)).contains("past the end"));
    let mut bad_const = header;
    bad_const["consts"][0]["aval"]["shape"] = serde_json::json!([129, 64]);
    assert!(refusal(&join(&bad_const, &data)).contains("bytes"));
    // A program over a mesh: its layout is checked against this process's devices.
    let matmul = sharded_matmul();
    let sharded = matmul.lower(&(iota(&[8, 2]), iota(&[2, 8]))).compile();
    let (header, data) = split(&sharded.serialize().unwrap());
    let mut absent = header.clone();
    absent["spmd"]["mesh"]["devices"][0] = serde_json::json!(99);
    assert!(refusal(&join(&absent, &data)).contains("device 99"));
    let mut short = header.clone();
    short["spmd"]["ins"] = serde_json::json!([]);
    assert!(refusal(&join(&short, &data)).contains("`ins` does not give"));
    let mut unknown_axis = header;
    unknown_axis["spmd"]["outs"][0] = serde_json::json!([["nope"]]);
    assert!(refusal(&join(&unknown_axis, &data)).contains("nope"));

    // The executable's own bytes altered: caught before the plugin parses them.
    let mut flipped = bytes.clone();
    let n = flipped.len();
    flipped[n - 100] ^= 0x01;
    assert!(refusal(&flipped).contains("checksum"));
}
