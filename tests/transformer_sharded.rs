//! The sharded transformer step of `examples/transformer_lm.rs` (`--mesh dp=2,mp=4`: FSDP and
//! tensor parallelism on a 2 x 4 mesh of 8 CPU devices, the MLP a `shard_map`) against the
//! example's single-device step and against JAX 0.10.2's program of the same model
//! (`tests/golden/transformer_sharded.json`, made by `tests/golden/gen_transformer_sharded.py`):
//! the initial parameters, the losses of a few steps from the same parameters and batches,
//! where the trained parameters lie, and the collectives of XLA's compiled module.

#[path = "../examples/transformer_lm.rs"]
#[allow(dead_code)]
mod transformer_lm;

use jaxrs::optim::GradientTransformation;
use jaxrs::prelude::*;
use jaxrs::{random, Sharding};
use serde_json::Value;
use transformer_lm::{
    optimizer, param_spec, shard_params, sharded_train_step, train_step, Config, MeshShape, Model,
    StepConfig,
};

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/transformer_sharded.json"
    ))
    .expect("tests/golden/transformer_sharded.json (run tests/golden/gen_transformer_sharded.py)");
    serde_json::from_str(&text).expect("valid JSON")
}

fn int(g: &Value, key: &str) -> usize {
    g["config"][key].as_u64().unwrap() as usize
}

fn float(g: &Value, key: &str) -> f32 {
    g["config"][key].as_f64().unwrap() as f32
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// The golden's model and step settings.
fn configs(g: &Value) -> (Config, StepConfig) {
    let config = Config {
        d_model: int(g, "d_model"),
        heads: int(g, "heads"),
        layers: int(g, "layers"),
        context: int(g, "context"),
        batch: int(g, "batch"),
        mlp_ratio: int(g, "mlp_ratio"),
        peak_lr: float(g, "peak_lr"),
        warmup_steps: int(g, "warmup_steps"),
        weight_decay: float(g, "weight_decay"),
        clip_norm: float(g, "clip_norm"),
        dropout: 0.0,
        ..Config::default()
    };
    let step = StepConfig {
        compute: DType::F32,
        dropout: 0.0,
        peak_lr: config.peak_lr,
        warmup_steps: config.warmup_steps as i32,
        decay_steps: int(g, "decay_steps") as i32,
        weight_decay: config.weight_decay,
        clip_norm: config.clip_norm,
    };
    (config, step)
}

/// Step `step`'s windows, as gen_transformer_sharded.py's `batch`: row `b` starts at
/// `11 (step * batch + b)` of the token sequence `(7 i + i^2 // 3) mod vocab`.
fn batch(step: usize, config: &Config, vocab: usize) -> (Array, Array) {
    let token = |i: usize| ((7 * i + i * i / 3) % vocab) as i32;
    let (b, t) = (config.batch, config.context);
    let window = |shift: usize| {
        let v: Vec<i32> = (0..b)
            .flat_map(|r| {
                let start = 11 * (step * b + r) + shift;
                (start..start + t).map(token)
            })
            .collect();
        Array::from_vec(v, &[b, t])
    };
    (window(0), window(1))
}

/// A spec as jaxrs prints it (Python's `PartitionSpec` repr), from the golden's list.
fn python_spec(entries: &[Option<String>]) -> String {
    let parts: Vec<String> = entries
        .iter()
        .map(|e| e.as_ref().map_or("None".to_string(), |s| format!("'{s}'")))
        .collect();
    match parts.len() {
        1 => format!("PartitionSpec({},)", parts[0]),
        _ => format!("PartitionSpec({})", parts.join(", ")),
    }
}

/// The instructions of an optimized program with `opcode`, in every computation: an
/// `HloInstructionProto`'s opcode (field 2) is a length-prefixed string.
fn count_opcode(hlo: &[u8], opcode: &str) -> usize {
    let needle = [&[0x12u8, opcode.len() as u8][..], opcode.as_bytes()].concat();
    hlo.windows(needle.len())
        .filter(|w| *w == &needle[..])
        .count()
}

/// Collectives by opcode, their asynchronous `-start` halves counted with them (as the
/// golden counts JAX's).
fn collectives(hlo: &[u8], kinds: &[&str]) -> Vec<(String, usize)> {
    kinds
        .iter()
        .map(|k| {
            let n = count_opcode(hlo, k) + count_opcode(hlo, &format!("{k}-start"));
            (k.to_string(), n)
        })
        .collect()
}

#[test]
fn sharded_steps_match_one_device_and_jax() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    let g = golden();
    let (config, step_config) = configs(&g);
    let vocab = int(&g, "vocab");
    let steps = int(&g, "steps");

    // The initial parameters are JAX's: the same keys and initialisers.
    let params = Model::init(
        &random::key(int(&g, "seed") as u32),
        &config,
        vocab,
        DType::F32,
    );
    let paths = jaxrs::tree_paths(&params);
    let init_sums = g["init_sums"].as_object().unwrap();
    assert_eq!(paths.len(), init_sums.len(), "{paths:?}");
    for (leaf, path) in jaxrs::tree_leaves(&params).iter().zip(&paths) {
        let values = leaf.astype(DType::F64).to_vec::<f64>();
        let (sum, abs_sum) = (
            values.iter().sum::<f64>(),
            values.iter().map(|v| v.abs()).sum::<f64>(),
        );
        let want = init_sums[path]
            .as_f64()
            .unwrap_or_else(|| panic!("{path} in the golden"));
        let want_abs = g["init_abs_sums"][path].as_f64().unwrap();
        assert!(
            (sum - want).abs() <= 1e-4 * (1.0 + want_abs)
                && (abs_sum - want_abs).abs() <= 1e-4 * (1.0 + want_abs),
            "{path}: sum {sum}, abs sum {abs_sum}; JAX {want}, {want_abs}"
        );
    }
    let (inputs, targets) = batch(0, &config, vocab);
    assert_eq!(
        inputs.to_vec::<i32>(),
        g["first_batch"]["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap() as i32)
            .collect::<Vec<_>>()
    );
    assert_eq!(targets.shape(), &[config.batch, config.context]);

    let mesh = MeshShape::parse("dp=2,mp=4").unwrap().mesh();
    let opt_state = optimizer(&step_config).init(&params);
    let step = sharded_train_step(&mesh, (&params, &opt_state), step_config);
    let (mut sharded, mut sharded_state) = (
        shard_params(&params, &mesh),
        shard_params(&opt_state, &mesh),
    );
    let (mut single, mut single_state) = (params, opt_state);
    let no_dropout = Array::zeros(&[2], DType::U32);
    let (mut ours_sharded, mut ours_single) = (Vec::new(), Vec::new());
    for s in 0..steps {
        let (inputs, targets) = batch(s, &config, vocab);
        let (p, st, loss) = step.call((sharded, sharded_state, inputs.clone(), targets.clone()));
        (sharded, sharded_state) = (p, st);
        ours_sharded.push(loss.item::<f32>());
        let (p, st, loss) = train_step(
            single,
            single_state,
            &inputs,
            &targets,
            &no_dropout,
            step_config,
        );
        (single, single_state) = (p, st);
        ours_single.push(loss.item::<f32>());
    }
    let (jax_sharded, jax_single) = (floats(&g["sharded_losses"]), floats(&g["plain_losses"]));
    println!("losses: jaxrs sharded {ours_sharded:?}\n        jaxrs one device {ours_single:?}\n        JAX sharded {jax_sharded:?}\n        JAX one device {jax_single:?}");
    for s in 0..steps {
        let close = |a: f32, b: f32, tol: f32| (a - b).abs() <= tol * (1.0 + b.abs());
        assert!(
            close(ours_sharded[s], ours_single[s], 1e-5),
            "step {s}: sharded {} vs one device {}",
            ours_sharded[s],
            ours_single[s]
        );
        assert!(
            close(ours_sharded[s], jax_sharded[s], 1e-5),
            "step {s}: sharded {} vs JAX's sharded {}",
            ours_sharded[s],
            jax_sharded[s]
        );
        assert!(
            close(ours_single[s], jax_single[s], 1e-5),
            "step {s}: one device {} vs JAX's {}",
            ours_single[s],
            jax_single[s]
        );
    }

    // The trained parameters and both of Adam's moments stay where they started: FSDP pieces
    // over "dp", heads and hidden units over "mp", as JAX's out_shardings put them.
    let specs = g["param_specs"].as_object().unwrap();
    let shapes = g["param_shard_shapes"].as_object().unwrap();
    for (leaf, path) in jaxrs::tree_leaves(&sharded)
        .iter()
        .zip(jaxrs::tree_paths(&sharded))
    {
        let want_spec: Vec<Option<String>> = serde_json::from_value(specs[&path].clone()).unwrap();
        let Some(Sharding::Named(named)) = leaf.sharding() else {
            panic!("{path}: {:?}", leaf.sharding());
        };
        let spec = param_spec(&path);
        assert_eq!(named.spec(), &spec, "{path}");
        assert_eq!(
            spec.to_string(),
            python_spec(&want_spec),
            "{path}: ours vs JAX's"
        );
        let want_shape: Vec<usize> = serde_json::from_value(shapes[&path].clone()).unwrap();
        assert_eq!(
            leaf.addressable_shards()[0].data.shape(),
            &want_shape[..],
            "{path}"
        );
    }
    for (leaf, path) in jaxrs::tree_leaves(&sharded_state)
        .iter()
        .zip(jaxrs::tree_paths(&sharded_state))
    {
        let Some(Sharding::Named(named)) = leaf.sharding() else {
            panic!("opt_state {path}: {:?}", leaf.sharding());
        };
        let want = if leaf.rank() == 0 {
            jaxrs::P![]
        } else {
            param_spec(&path)
        };
        assert_eq!(named.spec(), &want, "opt_state {path}");
    }

    // XLA's compiled module of the step has the collectives JAX's has: all-gathers of the
    // FSDP pieces (the embeddings' and the attention's inserted by XLA, the MLP kernels' in
    // the shard_map), reduce-scatters of the MLP kernels' gradients over "dp" (the transpose
    // of the shard_map's all-gathers, one per kernel), all-reduces for the tensor-parallel
    // sums over "mp" and the gradients of what XLA gathered whole, and the collective-permutes
    // XLA's partitioner uses to re-lay out a few of them. The kinds must agree, and the
    // all-gathers and reduce-scatters one for one: the `shard_map`'s backward program gets the
    // gathered kernels from its forward program's residuals, as JAX's does, rather than
    // gathering them again. The other counts may differ, and are printed beside JAX's: XLA's
    // all-reduce combiner groups the global norm's scalar sums differently in the two modules.
    // The program as written: constraints on the activations, the MLP a manual computation.
    let text = step.site().last_stablehlo().expect("the step's StableHLO");
    for needle in [
        "mhlo.num_partitions = 8 : i32",
        "\"sdy.sharding_constraint\"",
        "#sdy.sharding<@mesh, [{\"dp\"}, {}, {\"mp\"}, {}]>",
        "\"sdy.manual_computation\"",
    ] {
        assert!(
            text.contains(needle),
            "{needle} not in the step's StableHLO"
        );
    }

    let (format, hlo) = step
        .site()
        .last_optimized_program()
        .expect("the optimized program");
    assert!(format.starts_with("hlo"), "{format}");
    let jax = g["collectives"].as_object().unwrap();
    let kinds: Vec<&str> = jax.keys().map(String::as_str).collect();
    let ours = collectives(&hlo, &kinds);
    let theirs = |kind: &str| jax[kind].as_u64().unwrap() as usize;
    for (kind, n) in &ours {
        println!("{kind}: jaxrs {n}, JAX {}", theirs(kind));
    }
    for (kind, n) in &ours {
        assert_eq!(
            *n > 0,
            theirs(kind) > 0,
            "{kind}: jaxrs has {n}, JAX {}",
            theirs(kind)
        );
    }
    for kind in ["all-gather", "reduce-scatter", "all-reduce"] {
        assert!(theirs(kind) > 0, "JAX's module has no {kind}");
    }
    let count = |kind: &str| ours.iter().find(|(k, _)| k == kind).unwrap().1;
    assert_eq!(count("reduce-scatter"), 2 * config.layers);
    assert_eq!(count("reduce-scatter"), theirs("reduce-scatter"));
    assert_eq!(count("all-gather"), theirs("all-gather"), "all-gathers");
}

#[test]
fn the_mesh_flag_parses_and_names_mistakes() {
    assert_eq!(
        MeshShape::parse("dp=2,mp=4"),
        Ok(MeshShape { dp: 2, mp: 4 })
    );
    assert_eq!(MeshShape::parse("mp=8"), Ok(MeshShape { dp: 1, mp: 8 }));
    assert_eq!(MeshShape::parse("dp=2,mp=4").unwrap().devices(), 8);
    assert!(MeshShape::parse("tp=2")
        .unwrap_err()
        .contains("unknown axis \"tp\""));
    assert!(MeshShape::parse("dp=0")
        .unwrap_err()
        .contains("not a positive size"));
    assert!(MeshShape::parse("dp")
        .unwrap_err()
        .contains("is not AXIS=SIZE"));
}
