//! Model folders that do not fit are errors naming the key, the tensor or the file, never a
//! panic and never a model that runs wrong: configs with missing, mistyped or unsupported
//! keys; missing, misshapen, extra or non-float tensors; truncated or oversized files; shard
//! indexes that point outside the folder.

mod common;

use common::golden_dir;
use jaxrs::DType;
use jaxrs_models::config::{rope_inverse_frequencies, HfConfig, RopeScaling};
use jaxrs_models::{Error, Transformer};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A fresh copy of a golden model's folder to damage.
fn copy_of(name: &str, tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "jaxrs-models-loading-{}-{name}-{tag}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(golden_dir(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

fn edit_config(dir: &Path, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let path = dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(v.as_object_mut().unwrap());
    std::fs::write(path, serde_json::to_string(&v).unwrap()).unwrap();
}

/// Rewrites `model.safetensors` through `edit` on its tensors (name -> (dtype, shape, bytes)).
fn edit_tensors(
    dir: &Path,
    edit: impl FnOnce(&mut HashMap<String, (safetensors::Dtype, Vec<usize>, Vec<u8>)>),
) {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: HashMap<_, _> = st
        .tensors()
        .into_iter()
        .map(|(n, t)| (n, (t.dtype(), t.shape().to_vec(), t.data().to_vec())))
        .collect();
    edit(&mut tensors);
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|(n, (d, s, b))| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(*d, s.clone(), b).unwrap(),
            )
        })
        .collect();
    std::fs::write(path, safetensors::serialize(views, None).unwrap()).unwrap();
}

fn load_err(dir: &Path) -> Error {
    match Transformer::from_pretrained(dir, None) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e,
    }
}

/// A change to a `config.json`'s object.
type ConfigEdit = dyn Fn(&mut serde_json::Map<String, serde_json::Value>);

#[test]
fn config_keys_that_do_not_fit_are_named() {
    let cases: Vec<(&str, &str, Box<ConfigEdit>)> = vec![
        ("gpt2", "n_embd", Box::new(|c| drop(c.remove("n_embd")))),
        (
            "gpt2",
            "n_layer",
            Box::new(|c| drop(c.insert("n_layer".into(), "two".into()))),
        ),
        (
            "gpt2",
            "reorder_and_upcast_attn",
            Box::new(|c| drop(c.insert("reorder_and_upcast_attn".into(), true.into()))),
        ),
        (
            "gpt2",
            "activation_function",
            Box::new(|c| drop(c.insert("activation_function".into(), "swiglu9".into()))),
        ),
        (
            "llama",
            "model_type",
            Box::new(|c| drop(c.insert("model_type".into(), "mamba".into()))),
        ),
        (
            "llama",
            "num_key_value_heads",
            Box::new(|c| drop(c.insert("num_key_value_heads".into(), 3.into()))),
        ),
        (
            "llama",
            "rope_scaling.rope_type",
            Box::new(|c| {
                drop(c.insert(
                    "rope_scaling".into(),
                    serde_json::json!({"rope_type": "yarn", "factor": 4.0}),
                ))
            }),
        ),
        (
            "llama",
            "rope_parameters.rope_type",
            Box::new(|c| {
                drop(c.insert("rope_parameters".into(), serde_json::json!({"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0})))
            }),
        ),
        (
            "llama",
            "vocab_size",
            Box::new(|c| drop(c.insert("vocab_size".into(), (1u64 << 40).into()))),
        ),
        (
            "llama",
            "hidden_size",
            Box::new(|c| drop(c.insert("hidden_size".into(), (-64).into()))),
        ),
    ];
    for (i, (name, key, edit)) in cases.iter().enumerate() {
        let dir = copy_of(name, &format!("config{i}"));
        edit_config(&dir, edit);
        match load_err(&dir) {
            Error::Config { key: k, .. } => assert_eq!(&k, key),
            other => panic!("{key}: {other}"),
        }
    }
    let dir = copy_of("gpt2", "config-json");
    std::fs::write(dir.join("config.json"), "{\"model_type\": \"gpt2\", ").unwrap();
    assert!(matches!(load_err(&dir), Error::Format { path, .. } if path.ends_with("config.json")));
    std::fs::remove_file(dir.join("config.json")).unwrap();
    assert!(matches!(load_err(&dir), Error::Io { path, .. } if path.ends_with("config.json")));
}

#[test]
fn tensors_that_do_not_fit_are_named() {
    let dir = copy_of("llama", "missing");
    edit_tensors(&dir, |t| {
        drop(t.remove("model.layers.1.mlp.up_proj.weight"))
    });
    let e = load_err(&dir);
    assert!(
        matches!(&e, Error::Tensor { name, message } if name == "model.layers.1.mlp.up_proj.weight" && message.contains("missing")),
        "{e}"
    );

    let dir = copy_of("llama", "shape");
    edit_tensors(&dir, |t| {
        let (_, shape, bytes) = t.get_mut("model.norm.weight").unwrap();
        *shape = vec![shape[0] / 2, 2];
        let _ = bytes;
    });
    let e = load_err(&dir);
    assert!(
        matches!(&e, Error::Tensor { name, message } if name == "model.norm.weight" && message.contains("shape")),
        "{e}"
    );

    let dir = copy_of("gpt2", "extra");
    edit_tensors(&dir, |t| {
        let v = t["transformer.ln_f.bias"].clone();
        t.insert("transformer.h.9.ln_1.bias".into(), v);
    });
    let e = load_err(&dir);
    assert!(
        matches!(&e, Error::Tensor { name, message } if name == "transformer.h.9.ln_1.bias" && message.contains("not in the model")),
        "{e}"
    );

    let dir = copy_of("gpt2", "dtype");
    edit_tensors(&dir, |t| {
        let (dtype, _, _) = t.get_mut("transformer.ln_f.bias").unwrap();
        *dtype = safetensors::Dtype::I32;
    });
    let e = load_err(&dir);
    assert!(
        matches!(&e, Error::Tensor { name, message } if name == "transformer.ln_f.bias" && message.contains("dtype")),
        "{e}"
    );

    // Untied output embeddings need their tensor.
    let dir = copy_of("gpt2", "untied");
    edit_config(&dir, |c| {
        drop(c.insert("tie_word_embeddings".into(), false.into()))
    });
    let e = load_err(&dir);
    assert!(
        matches!(&e, Error::Tensor { name, .. } if name == "lm_head.weight"),
        "{e}"
    );
}

#[test]
fn damaged_files_are_errors() {
    let dir = copy_of("gpt2", "truncated");
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0, 7, 8, 100, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        assert!(
            matches!(load_err(&dir), Error::Format { .. }),
            "cut at {cut}"
        );
    }
    // A header that claims more than the file holds.
    let mut lying = bytes.clone();
    lying[..8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    std::fs::write(&path, &lying).unwrap();
    assert!(matches!(load_err(&dir), Error::Format { .. }));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(load_err(&dir), Error::Io { .. }));

    // A shard index naming a file outside the folder, or nothing.
    for (i, index) in [
        r#"{"weight_map": {"a": "../model.safetensors"}}"#,
        r#"{"weight_map": {"a": "/etc/passwd"}}"#,
        r#"{"weight_map": {}}"#,
        r#"{"weight_map": {"a": 3}}"#,
        r#"[1, 2]"#,
    ]
    .iter()
    .enumerate()
    {
        let dir = copy_of("gpt2", &format!("index{i}"));
        std::fs::remove_file(dir.join("model.safetensors")).unwrap();
        std::fs::write(dir.join("model.safetensors.index.json"), index).unwrap();
        assert!(
            matches!(load_err(&dir), Error::Format { path, .. } if path.ends_with("model.safetensors.index.json")),
            "{index}"
        );
    }
}

#[test]
fn checkpoints_load_in_any_float_dtype() {
    let f32_model = Transformer::from_pretrained(golden_dir("llama"), None).unwrap();
    assert_eq!(f32_model.dtype(), DType::F32);
    let bf16 = Transformer::from_pretrained(golden_dir("llama"), Some(DType::BF16)).unwrap();
    assert_eq!(bf16.dtype(), DType::BF16);
    assert_eq!(bf16.blocks[0].attention.q.weight.dtype(), DType::BF16);
    // The rotary frequencies stay float32 whatever the weights' dtype.
    assert_eq!(
        bf16.rope_inverse_frequencies.as_ref().unwrap().dtype(),
        DType::F32
    );
    let back = bf16.astype(DType::F32);
    let a = back.embedding.to_vec::<f32>();
    let b = f32_model.embedding.to_vec::<f32>();
    assert!(a
        .iter()
        .zip(&b)
        .all(|(x, y)| (x - y).abs() <= y.abs() / 128.0));
}

#[test]
fn config_json_is_read_as_transformers_reads_it() {
    let text = std::fs::read_to_string(golden_dir("llama").join("config.json")).unwrap();
    let cfg = HfConfig::from_json_str(&text).unwrap();
    assert_eq!(cfg.model.model_type, "llama");
    assert!(cfg.model.num_kv_heads < cfg.model.num_heads);
    assert_eq!(
        cfg.model.head_dim * cfg.model.num_heads,
        cfg.model.hidden_size
    );
    // Llama 3.1's scaling: high frequencies kept, low ones divided by the factor.
    let scaling = RopeScaling::Llama3 {
        factor: 8.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original_max_positions: 8192.0,
    };
    let plain = rope_inverse_frequencies(128, 500000.0, &RopeScaling::Default);
    let scaled = rope_inverse_frequencies(128, 500000.0, &scaling);
    assert_eq!(scaled[0], plain[0]);
    assert_eq!(scaled[63], plain[63] / 8.0);
    assert!(
        scaled[32] < plain[32] && scaled[32] > plain[32] / 8.0,
        "{} {}",
        scaled[32],
        plain[32]
    );
}
