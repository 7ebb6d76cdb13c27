//! `jaxrs::checkpoint`: bit-exact round trips, mismatch errors, and a file written by Python's
//! `safetensors.numpy.save_file` (`tests/golden/gen_checkpoint.py`).

use half::bf16;
use jaxrs::checkpoint::{self, CheckpointError, Metadata};
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Layer {
    w: Array,
    b: Array,
}

#[derive(Tree, Clone)]
struct Model {
    layers: Vec<Layer>,
    key: Array,
    step: Array,
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "jaxrs-test-{name}-{}.safetensors",
        std::process::id()
    ))
}

/// Every dtype, with the float values that a lossy path would change: -0, infinities,
/// subnormals and NaNs with payloads.
#[test]
fn round_trip_is_bit_exact() {
    let f32_bits = [
        0x8000_0000u32,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0001,
        0x7fc0_1234,
        0x3f80_0001,
    ];
    let f32s: Vec<f32> = f32_bits.iter().map(|b| f32::from_bits(*b)).collect();
    let bf16_bits = [0x8000u16, 0x7f80, 0x0001, 0x7fc1, 0x3f81, 0xc2f7];
    let bf16s: Vec<bf16> = bf16_bits.iter().map(|b| bf16::from_bits(*b)).collect();
    let tree = (
        Array::from_vec(f32s, &[2, 3]),
        Array::from_vec(bf16s, &[3, 2]),
        Array::from_vec(vec![i32::MIN, -1, 0, i32::MAX], &[4]),
        Array::from_vec(vec![0u32, 1, 0xdead_beef, u32::MAX], &[2, 2]),
        vec![
            Array::from_vec(vec![true, false, true], &[3]),
            Array::from_vec(vec![-128i8, 127], &[2]),
            Array::from_vec(vec![i64::MIN, i64::MAX], &[2]),
            Array::from_vec(vec![0u8, 255], &[2]),
            Array::from_vec(vec![f64::MIN_POSITIVE, -0.0, 1e300], &[3]),
            Array::from_vec(
                vec![half::f16::from_bits(0x7c01), half::f16::from_bits(0x0001)],
                &[2],
            ),
        ],
        Array::scalar(9i32),
    );
    let path = temp_path("roundtrip");
    let meta = Metadata::at_step(12).with("a", "b").with("empty", "");
    checkpoint::save(&path, &tree, &meta).unwrap();
    let template = tree_map(&tree, Array::zeros_like);
    let (back, back_meta) = checkpoint::load(&path, &template).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(back_meta, meta);
    let bits32 = |a: &Array| {
        a.to_vec::<f32>()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    let bits16 = |a: &Array| {
        a.to_vec::<bf16>()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits32(&back.0), f32_bits);
    assert_eq!(bits16(&back.1), bf16_bits);
    assert_eq!(back.1.shape(), &[3, 2]);
    assert_eq!(back.2.to_vec::<i32>(), tree.2.to_vec::<i32>());
    assert_eq!(back.3.to_vec::<u32>(), tree.3.to_vec::<u32>());
    assert_eq!(back.3.dtype(), DType::U32);
    assert_eq!(back.4[0].to_vec::<bool>(), vec![true, false, true]);
    assert_eq!(back.4[1].to_vec::<i8>(), vec![-128, 127]);
    assert_eq!(back.4[2].to_vec::<i64>(), vec![i64::MIN, i64::MAX]);
    assert_eq!(back.4[3].to_vec::<u8>(), vec![0, 255]);
    let f64_bits = |a: &Array| {
        a.to_vec::<f64>()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(f64_bits(&back.4[4]), f64_bits(&tree.4[4]));
    let f16_bits = back.4[5]
        .to_vec::<half::f16>()
        .iter()
        .map(|x| x.to_bits())
        .collect::<Vec<_>>();
    assert_eq!(f16_bits, vec![0x7c01, 0x0001]);
    assert_eq!(back.5.item::<i32>(), 9);
    assert_eq!(back.5.shape(), &[] as &[usize]);
}

/// Parameters and an optimizer state together, as a trainer checkpoints them, resume
/// exactly.
#[test]
fn parameters_and_optimizer_state_round_trip() {
    let params = Layer {
        w: Array::from_vec(vec![0.5f32, -1.0, 2.0, 0.25], &[2, 2]),
        b: Array::from_vec(vec![0.1f32, 0.2], &[2]),
    };
    let opt = optim::adam(1e-2, 0.9, 0.999, 1e-8);
    let grads = tree_map(&params, |p| p * 0.5 + 1.0);
    let (updates, state) = opt.update(grads.clone(), opt.init(&params), None);
    let params = optim::apply_updates(&params, &updates);
    let bytes =
        checkpoint::to_bytes(&(params.clone(), state.clone()), &Metadata::at_step(1)).unwrap();
    let template = (params.clone(), opt.init(&params));
    let ((p2, s2), meta) = checkpoint::from_bytes(&bytes, &template).unwrap();
    assert_eq!(meta.step, Some(1));
    assert_eq!(s2.0.count.item::<i32>(), 1);
    // One more step from the restored state equals one more step from the original.
    let (u1, _) = opt.update(grads.clone(), state, None);
    let (u2, _) = opt.update(grads, s2, None);
    assert_eq!(
        optim::apply_updates(&params, &u1).w.to_vec::<f32>(),
        optim::apply_updates(&p2, &u2).w.to_vec::<f32>()
    );
}

fn mismatch(bytes: &[u8], template: &Model) -> String {
    match checkpoint::from_bytes(bytes, template) {
        Err(CheckpointError::Mismatch(m)) => m,
        Err(other) => panic!("expected a mismatch, got {other}"),
        Ok(_) => panic!("expected a mismatch, loaded"),
    }
}

fn model(n_layers: usize, w_shape: &[usize], b_dtype: DType) -> Model {
    Model {
        layers: (0..n_layers)
            .map(|_| Layer {
                w: Array::zeros(w_shape, DType::F32),
                b: Array::zeros(&[3], b_dtype),
            })
            .collect(),
        key: Array::zeros(&[2], DType::U32),
        step: Array::scalar(0i32),
    }
}

#[test]
fn mismatches_name_the_first_difference() {
    let bytes =
        checkpoint::to_bytes(&model(2, &[2, 3], DType::BF16), &Metadata::default()).unwrap();
    assert!(checkpoint::from_bytes(&bytes, &model(2, &[2, 3], DType::BF16)).is_ok());
    assert_eq!(
        mismatch(&bytes, &model(2, &[3, 2], DType::BF16)),
        "tensor `layers.0.w` has shape [2, 3] in the checkpoint, [3, 2] in the template"
    );
    assert_eq!(
        mismatch(&bytes, &model(2, &[2, 3], DType::F32)),
        "tensor `layers.0.b` has dtype bfloat16 in the checkpoint, float32 in the template"
    );
    assert_eq!(
        mismatch(&bytes, &model(3, &[2, 3], DType::BF16)),
        "tensor `layers.2.w` (float32[2, 3]) is missing from the checkpoint"
    );
    assert_eq!(
        mismatch(&bytes, &model(1, &[2, 3], DType::BF16)),
        "tensor `layers.1.b` in the checkpoint is not in the template"
    );
    let err = checkpoint::from_bytes(&bytes, &model(1, &[2, 3], DType::BF16))
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "checkpoint does not match the template: tensor `layers.1.b` in the checkpoint is not in the template"
    );
    let missing = checkpoint::load(temp_path("does-not-exist"), &model(1, &[2, 3], DType::BF16));
    assert!(matches!(missing, Err(CheckpointError::Io(_))));
}

/// A file from Python's `safetensors.numpy.save_file` loads into the Rust tree of the same
/// names.
#[test]
fn loads_a_file_written_by_python() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/checkpoint.safetensors"
    );
    let (m, meta) = checkpoint::load(path, &model(2, &[2, 3], DType::BF16)).unwrap();
    assert_eq!(meta.step, Some(4000));
    assert_eq!(meta.strings["model"], "mlp");
    assert_eq!(meta.strings["note"], "written by numpy");
    assert_eq!(meta.strings.len(), 2);
    for (i, layer) in m.layers.iter().enumerate() {
        let w: Vec<f32> = (0..6).map(|k| k as f32 * 0.25 + i as f32).collect();
        assert_eq!(layer.w.to_vec::<f32>(), w);
        let b: Vec<f32> = [-1.5f32, 0.0, 1.5]
            .iter()
            .map(|x| x * (i + 1) as f32)
            .collect();
        assert_eq!(layer.b.dtype(), DType::BF16);
        assert_eq!(layer.b.astype(DType::F32).to_vec::<f32>(), b);
    }
    assert_eq!(m.key.to_vec::<u32>(), vec![0, u32::MAX]);
    assert_eq!(m.step.item::<i32>(), 123);
    assert_eq!(m.step.shape(), &[] as &[usize]);
}
