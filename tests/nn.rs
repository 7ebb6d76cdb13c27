//! `jaxrs::nn` against JAX (`tests/golden/nn.json`, written by `gen_nn.py` from flax's math
//! in jax.numpy and optax's losses): values and gradients of the norms, attention with its
//! masks, multi-head attention, GRU and LSTM cells scanned, losses and activations; numerical
//! gradient checks; initialisers bit-equal to `jax.nn.initializers` on the same keys.

mod common;

use common::golden::{array, first_mismatch};
use jaxrs::nn::{self, GruCell, LayerNorm, Linear, LstmCell, MultiHeadAttention, RmsNorm};
use jaxrs::prelude::*;
use jaxrs::{check_grads, scan, tree_leaves};
use serde_json::Value;
use std::sync::OnceLock;

fn golden() -> &'static Value {
    static G: OnceLock<Value> = OnceLock::new();
    G.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/nn.json");
        serde_json::from_str(&std::fs::read_to_string(path).expect("nn.json")).expect("JSON")
    })
}

#[track_caller]
fn close(what: &str, got: &Array, want: &Value, rtol: f64, atol: f64) {
    let want = array(want);
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    if let Some((i, g, w)) = first_mismatch(&got.to_f64_vec(), &want.to_f64_vec(), rtol, atol) {
        panic!("{what}[{i}]: {g} vs JAX {w}");
    }
}

fn linear(kernel: &Value, bias: Option<&Value>) -> Linear {
    Linear {
        kernel: array(kernel),
        bias: bias.map(array),
    }
}

fn f64s(x: &Array) -> Array {
    x.astype(DType::F64)
}

#[test]
fn layer_norm_and_rms_norm_match_flax() {
    let g = &golden()["layer_norm"];
    let (x, w) = (array(&g["x"]), array(&g["w"]));
    let ln = LayerNorm {
        scale: array(&g["scale"]),
        bias: array(&g["bias"]),
    };
    close("layer_norm", &ln.apply(&x), &g["y"], 1e-4, 1e-4);
    let loss = |(p, x): (LayerNorm, Array)| (p.apply(&x) * &w).sum(None, false);
    let (gp, gx) = grad(loss)((ln.clone(), x.clone()));
    close("layer_norm dx", &gx, &g["gx"], 1e-3, 1e-3);
    close("layer_norm dscale", &gp.scale, &g["gscale"], 1e-4, 1e-4);
    close("layer_norm dbias", &gp.bias, &g["gbias"], 1e-5, 1e-5);

    let r = &golden()["rms_norm"];
    let rms = RmsNorm {
        scale: array(&g["scale"]),
    };
    close("rms_norm", &rms.apply(&x), &r["y"], 1e-5, 1e-5);
    let loss = |(p, x): (RmsNorm, Array)| (p.apply(&x) * &w).sum(None, false);
    let (gp, gx) = grad(loss)((rms.clone(), x.clone()));
    close("rms_norm dx", &gx, &r["gx"], 1e-4, 1e-4);
    close("rms_norm dscale", &gp.scale, &r["gscale"], 1e-4, 1e-4);

    let ln64 = tree_map(&ln, f64s);
    check_grads(
        |(p, x): (LayerNorm, Array)| p.apply(&x),
        &(ln64, f64s(&x)),
        2,
    );
    check_grads(
        |(p, x): (RmsNorm, Array)| p.apply(&x),
        &(tree_map(&rms, f64s), f64s(&x)),
        2,
    );
}

#[test]
fn dense_and_embedding_match_jax() {
    let g = &golden()["dense"];
    let layer = linear(&g["kernel"], Some(&g["bias"]));
    close("dense", &layer.apply(&array(&g["x"])), &g["y"], 1e-5, 1e-5);
    let table = nn::Embedding {
        embedding: array(&g["table"]),
    };
    close(
        "embed",
        &table.apply(&array(&g["ids"])),
        &g["embed"],
        0.0,
        0.0,
    );
}

fn attention_inputs() -> (Array, Array, Array, Array) {
    let g = &golden()["attention"];
    (
        array(&g["q"]),
        array(&g["k"]),
        array(&g["v"]),
        array(&g["w"]),
    )
}

#[test]
fn masks_match_flax() {
    let g = &golden()["attention"];
    let valid = array(&g["valid"]);
    let causal = nn::make_causal_mask(&valid);
    close(
        "causal",
        &causal.astype(DType::F32),
        &g["causal_mask"],
        0.0,
        0.0,
    );
    let padding = nn::make_attention_mask(&valid, &valid);
    close(
        "padding",
        &padding.astype(DType::F32),
        &g["padding_mask"],
        0.0,
        0.0,
    );
    assert!(nn::combine_masks(&[None, None]).is_none());
}

#[test]
fn dot_product_attention_matches_flax_with_each_mask() {
    let g = &golden()["attention"];
    let (q, k, v, w) = attention_inputs();
    let valid = array(&g["valid"]);
    let causal = nn::make_causal_mask(&valid);
    let padding = nn::make_attention_mask(&valid, &valid);
    let combined = nn::combine_masks(&[Some(causal.clone()), Some(padding.clone())]);
    for (name, mask) in [
        ("none", None),
        ("causal", Some(causal)),
        ("padding", Some(padding)),
        ("combined", combined),
    ] {
        let want = &g[name];
        let y = nn::dot_product_attention(&q, &k, &v, mask.as_ref());
        close(&format!("attention {name}"), &y, &want["y"], 1e-5, 1e-5);
        let loss = |(q, k, v): (Array, Array, Array)| {
            (nn::dot_product_attention(&q, &k, &v, mask.as_ref()) * &w).sum(None, false)
        };
        let (gq, gk, gv) = grad(loss)((q.clone(), k.clone(), v.clone()));
        close(
            &format!("attention {name} dq"),
            &gq,
            &want["gq"],
            1e-4,
            1e-5,
        );
        close(
            &format!("attention {name} dk"),
            &gk,
            &want["gk"],
            1e-4,
            1e-5,
        );
        close(
            &format!("attention {name} dv"),
            &gv,
            &want["gv"],
            1e-4,
            1e-5,
        );
        check_grads(
            |(q, k, v): (Array, Array, Array)| nn::dot_product_attention(&q, &k, &v, mask.as_ref()),
            &(f64s(&q), f64s(&k), f64s(&v)),
            1,
        );
    }
}

#[test]
fn attention_works_under_jit_and_without_batch_axes() {
    let (q, k, v, _) = attention_inputs();
    let eager = nn::dot_product_attention(&q, &k, &v, None);
    let jitted =
        jit(|(q, k, v): (Array, Array, Array)| nn::dot_product_attention(&q, &k, &v, None));
    let got: Array = jitted.call((q.clone(), k.clone(), v.clone()));
    let want = eager.to_f64_vec();
    assert!(first_mismatch(&got.to_f64_vec(), &want, 1e-6, 1e-6).is_none());
    // [len, heads, head_dim] alone: no batch axes.
    let first = |x: &Array| x.slice_axis(0, 0, 1).squeeze([0]);
    let single = nn::dot_product_attention(&first(&q), &first(&k), &first(&v), None);
    assert_eq!(single.shape(), &[4, 2, 3]);
    let want = first(&eager).to_f64_vec();
    assert!(first_mismatch(&single.to_f64_vec(), &want, 1e-6, 1e-6).is_none());
}

fn mha_params(p: &Value) -> MultiHeadAttention {
    MultiHeadAttention {
        query_kernel: array(&p["query_kernel"]),
        query_bias: array(&p["query_bias"]),
        key_kernel: array(&p["key_kernel"]),
        key_bias: array(&p["key_bias"]),
        value_kernel: array(&p["value_kernel"]),
        value_bias: array(&p["value_bias"]),
        out_kernel: array(&p["out_kernel"]),
        out_bias: array(&p["out_bias"]),
    }
}

#[test]
fn multi_head_attention_matches_flax() {
    let g = &golden()["mha"];
    let params = mha_params(&g["params"]);
    let valid = array(&golden()["attention"]["valid"]);
    let mask = nn::make_attention_mask(&valid, &array(&g["valid_kv"]));
    let (xq, xkv, w) = (array(&g["xq"]), array(&g["xkv"]), array(&g["w"]));
    close(
        "mha",
        &params.apply(&xq, &xkv, Some(&mask)),
        &g["y"],
        1e-5,
        1e-5,
    );
    let loss = |(p, xq): (MultiHeadAttention, Array)| {
        (p.apply(&xq, &xkv, Some(&mask)) * &w).sum(None, false)
    };
    let (gp, gxq) = grad(loss)((params.clone(), xq.clone()));
    let want = mha_params(&g["gparams"]);
    for ((got, want), name) in tree_leaves(&gp)
        .iter()
        .zip(tree_leaves(&want))
        .zip(["qk", "qb", "kk", "kb", "vk", "vb", "ok", "ob"])
    {
        let want = serde_json::json!({
            "dtype": "float32", "shape": want.shape(), "data": want.to_f64_vec()
        });
        close(&format!("mha d{name}"), got, &want, 1e-4, 1e-5);
    }
    close("mha dxq", &gxq, &g["gxq"], 1e-4, 1e-5);
    assert_eq!(params.num_heads(), 2);
}

fn gru_params(p: &Value) -> GruCell {
    GruCell {
        ir: linear(&p["ir"], None),
        iz: linear(&p["iz"], None),
        r#in: linear(&p["in"], Some(&p["in_b"])),
        hr: linear(&p["hr"], Some(&p["hr_b"])),
        hz: linear(&p["hz"], Some(&p["hz_b"])),
        hn: linear(&p["hn"], Some(&p["hn_b"])),
    }
}

#[test]
fn gru_cell_scanned_matches_flax_forward_and_backward() {
    let g = &golden()["gru"];
    let cell = gru_params(&g["params"]);
    let (h0, xs, w) = (array(&g["h0"]), array(&g["xs"]), array(&g["w"]));
    let run = |cell: &GruCell, h0: Array, xs: Array| scan(|h, x: Array| cell.apply(h, &x), h0, xs);
    let (h_t, hs) = run(&cell, h0.clone(), xs.clone());
    close("gru h_t", &h_t, &g["h_t"], 1e-5, 1e-5);
    close("gru hs", &hs, &g["hs"], 1e-5, 1e-5);
    let loss = |(p, h0, xs): (GruCell, Array, Array)| (run(&p, h0, xs).1 * &w).sum(None, false);
    let (gp, gh0, gxs) = grad(loss)((cell.clone(), h0.clone(), xs.clone()));
    let want = gru_params(&g["gparams"]);
    for (i, (got, want)) in tree_leaves(&gp).iter().zip(tree_leaves(&want)).enumerate() {
        let want = serde_json::json!({"dtype": "float32", "shape": want.shape(), "data": want.to_f64_vec()});
        close(&format!("gru dparam {i}"), got, &want, 1e-4, 1e-5);
    }
    close("gru dh0", &gh0, &g["gh0"], 1e-4, 1e-5);
    close("gru dxs", &gxs, &g["gxs"], 1e-4, 1e-5);
    assert_eq!(cell.init_carry(&[2]).shape(), &[2, 5]);
    check_grads(
        |(p, h0, xs): (GruCell, Array, Array)| run(&p, h0, xs).1,
        &(tree_map(&cell, f64s), f64s(&h0), f64s(&xs)),
        1,
    );
}

fn lstm_params(p: &Value) -> LstmCell {
    LstmCell {
        ii: linear(&p["ii"], None),
        r#if: linear(&p["if"], None),
        ig: linear(&p["ig"], None),
        io: linear(&p["io"], None),
        hi: linear(&p["hi"], Some(&p["hi_b"])),
        hf: linear(&p["hf"], Some(&p["hf_b"])),
        hg: linear(&p["hg"], Some(&p["hg_b"])),
        ho: linear(&p["ho"], Some(&p["ho_b"])),
    }
}

#[test]
fn lstm_cell_scanned_matches_flax_forward_and_backward() {
    let g = &golden()["lstm"];
    let cell = lstm_params(&g["params"]);
    let gru = &golden()["gru"];
    let (c0, h0, xs, w) = (
        array(&g["c0"]),
        array(&g["h0"]),
        array(&gru["xs"]),
        array(&gru["w"]),
    );
    let run = |cell: &LstmCell, carry: (Array, Array), xs: Array| {
        scan(|ch: (Array, Array), x: Array| cell.apply(ch, &x), carry, xs)
    };
    let ((c_t, h_t), hs) = run(&cell, (c0.clone(), h0.clone()), xs.clone());
    close("lstm c_t", &c_t, &g["c_t"], 1e-5, 1e-5);
    close("lstm h_t", &h_t, &g["h_t"], 1e-5, 1e-5);
    close("lstm hs", &hs, &g["hs"], 1e-5, 1e-5);
    let loss = |(p, c0, h0, xs): (LstmCell, Array, Array, Array)| {
        (run(&p, (c0, h0), xs).1 * &w).sum(None, false)
    };
    let (gp, gc0, gh0, gxs) = grad(loss)((cell.clone(), c0.clone(), h0.clone(), xs.clone()));
    let want = lstm_params(&g["gparams"]);
    for (i, (got, want)) in tree_leaves(&gp).iter().zip(tree_leaves(&want)).enumerate() {
        let want = serde_json::json!({"dtype": "float32", "shape": want.shape(), "data": want.to_f64_vec()});
        close(&format!("lstm dparam {i}"), got, &want, 1e-4, 1e-5);
    }
    close("lstm dc0", &gc0, &g["gc0"], 1e-4, 1e-5);
    close("lstm dh0", &gh0, &g["gh0"], 1e-4, 1e-5);
    close("lstm dxs", &gxs, &g["gxs"], 1e-4, 1e-5);
    let (c, h) = cell.init_carry(&[3]);
    assert_eq!((c.shape(), h.shape()), (&[3, 5][..], &[3, 5][..]));
    check_grads(
        |(p, c0, h0, xs): (LstmCell, Array, Array, Array)| run(&p, (c0, h0), xs),
        &(tree_map(&cell, f64s), f64s(&c0), f64s(&h0), f64s(&xs)),
        1,
    );
}

#[test]
fn losses_match_optax() {
    let g = &golden()["losses"];
    let (logits, labels, mask) = (array(&g["logits"]), array(&g["labels"]), array(&g["mask"]));
    let ce = nn::softmax_cross_entropy_with_integer_labels(&logits, &labels);
    close("ce", &ce, &g["ce"], 1e-5, 1e-5);
    let g_ce = grad(|l: Array| {
        nn::softmax_cross_entropy_with_integer_labels(&l, &labels).mean(None, false)
    })(logits.clone());
    close("ce grad", &g_ce, &g["g_ce_mean"], 1e-5, 1e-6);
    let masked = nn::softmax_cross_entropy_masked(&logits, &labels, &mask);
    close("ce masked", &masked, &g["ce_masked"], 1e-5, 1e-5);
    let g_masked =
        grad(|l: Array| nn::softmax_cross_entropy_masked(&l, &labels, &mask))(logits.clone());
    close("ce masked grad", &g_masked, &g["g_ce_masked"], 1e-5, 1e-6);
    let nothing = Array::zeros(&[6], DType::Bool);
    assert_eq!(
        nn::softmax_cross_entropy_masked(&logits, &labels, &nothing).item::<f32>(),
        0.0
    );

    let targets = array(&g["targets"]);
    close("mse", &nn::mse(&logits, &targets), &g["mse"], 1e-5, 1e-5);
    let g_mse = grad(|p: Array| nn::mse(&p, &targets))(logits.clone());
    close("mse grad", &g_mse, &g["g_mse"], 1e-5, 1e-6);

    let (bl, by) = (array(&g["bce_logits"]), array(&g["bce_labels"]));
    close(
        "bce",
        &nn::binary_cross_entropy(&bl, &by),
        &g["bce"],
        1e-5,
        1e-5,
    );
    let g_bce = grad(|l: Array| nn::binary_cross_entropy(&l, &by).mean(None, false))(bl.clone());
    close("bce grad", &g_bce, &g["g_bce_mean"], 1e-5, 1e-6);

    close(
        "accuracy",
        &nn::accuracy(&logits, &labels),
        &g["accuracy"],
        0.0,
        0.0,
    );

    check_grads(
        |l: Array| nn::softmax_cross_entropy_with_integer_labels(&l, &labels),
        &f64s(&logits),
        2,
    );
    check_grads(
        |l: Array| nn::binary_cross_entropy(&l, &f64s(&by)),
        &f64s(&bl),
        2,
    );
}

#[test]
fn activations_match_jax_nn() {
    let g = &golden()["activations"];
    let x = array(&g["x"]);
    type Activation = fn(&Array) -> Array;
    let acts: [(&str, Activation); 6] = [
        ("silu", |x| x.silu()),
        ("leaky_relu", |x| x.leaky_relu(0.1)),
        ("elu", |x| x.elu(1.5)),
        ("log_sigmoid", |x| x.log_sigmoid()),
        ("gelu", |x| x.gelu()),
        ("gelu_exact", |x| x.gelu_exact()),
    ];
    for (name, f) in acts {
        close(name, &f(&x), &g[name]["y"], 1e-6, 1e-6);
        let d = grad(|x: Array| f(&x).sum(None, false))(x.clone());
        close(&format!("{name} grad"), &d, &g[name]["g"], 1e-5, 1e-6);
    }
}

fn bits(v: &Value) -> (Vec<usize>, Vec<u32>) {
    let shape = common::golden::shape(&v["shape"]);
    let bits = v["bits"]
        .as_array()
        .expect("bits")
        .iter()
        .map(|b| b.as_u64().expect("u32") as u32)
        .collect();
    (shape, bits)
}

#[test]
fn initializers_give_jaxs_bits_for_the_same_key() {
    use jaxrs::nn::init::{self, Distribution, FanMode};
    let by_name = |name: &str| match name {
        "glorot_normal" => init::glorot_normal(),
        "glorot_uniform" => init::glorot_uniform(),
        "lecun_normal" => init::lecun_normal(),
        "lecun_uniform" => init::lecun_uniform(),
        "he_normal" => init::he_normal(),
        "he_uniform" => init::he_uniform(),
        "normal_0.02" => init::normal(0.02),
        "uniform_0.5" => init::uniform(0.5),
        "truncated_normal_0.1" => init::truncated_normal(0.1),
        "variance_scaling_2_fan_out_normal" => {
            init::variance_scaling(2.0, FanMode::FanOut, Distribution::Normal)
        }
        "variance_scaling_0.5_fan_avg_uniform" => {
            init::variance_scaling(0.5, FanMode::FanAvg, Distribution::Uniform)
        }
        "zeros" => init::zeros(),
        "ones" => init::ones(),
        "constant_0.25" => init::constant(0.25),
        "constant_-3" => init::constant(-3.0),
        "embed" => {
            init::variance_scaling(1.0, FanMode::FanIn, Distribution::Normal).with_axes(-2, 0)
        }
        other => panic!("unknown initializer {other}"),
    };
    let mut checked = 0;
    for case in golden()["initializers"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("name");
        let key = jaxrs::random::key(case["seed"].as_u64().expect("seed"));
        if name == "orthogonal" || name == "delta_orthogonal" {
            let want = array(&case["value"]);
            let scale = case["scale"].as_f64().expect("scale");
            let make = if name == "orthogonal" {
                init::orthogonal
            } else {
                init::delta_orthogonal
            };
            let got = make(scale).init(&key, want.shape(), DType::F32);
            close(name, &got, &case["value"], 1e-5, 1e-5);
            checked += 1;
            continue;
        }
        let (shape, want) = bits(&case["value"]);
        let got: Vec<u32> = by_name(name)
            .init(&key, &shape, DType::F32)
            .to_vec::<f32>()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(got, want, "{name} {shape:?}: not JAX's bits");
        checked += 1;
    }
    assert_eq!(checked, 34);
}

#[test]
fn initializers_work_inside_jit() {
    let w = jit(|key: Array| nn::init::lecun_normal().init(&key, &[4, 6], DType::F32));
    let jitted: Array = w.call(jaxrs::random::key(0));
    let eager = nn::init::lecun_normal().init(&jaxrs::random::key(0), &[4, 6], DType::F32);
    assert_eq!(jitted.to_vec::<f32>(), eager.to_vec::<f32>());
}

#[test]
fn dropout_matches_flax_bits() {
    let g = &golden()["dropout"];
    let x = array(&g["x"]);
    let key = jaxrs::random::key(g["seed"].as_u64().expect("seed"));
    let rate = g["rate"].as_f64().expect("rate");
    let (shape, want) = bits(&g["y"]);
    let y = nn::dropout(&key, &x, rate, false);
    assert_eq!(y.shape(), &shape[..]);
    let got: Vec<u32> = y.to_vec::<f32>().iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    assert_eq!(
        nn::dropout(&key, &x, rate, true).to_vec::<f32>(),
        x.to_vec::<f32>()
    );
    assert_eq!(
        nn::dropout(&key, &x, 1.0, false).to_vec::<f32>(),
        vec![0.0; 32]
    );
}

#[test]
fn layer_constructors_have_flax_shapes_and_train() {
    let [k1, k2, k3, k4, k5] = jaxrs::random::split_n::<5>(&jaxrs::random::key(0));
    let lin = Linear::init(&k1, 3, 4, DType::F32);
    assert_eq!(lin.kernel.shape(), &[3, 4]);
    let emb = nn::Embedding::init(&k2, 10, 8, DType::F32);
    assert_eq!(emb.embedding.shape(), &[10, 8]);
    let mha = MultiHeadAttention::init(&k3, 8, 2, DType::F32);
    assert_eq!(mha.query_kernel.shape(), &[8, 2, 4]);
    let gru = GruCell::init(&k4, 3, 5, DType::F32);
    assert!(gru.ir.bias.is_none() && gru.r#in.bias.is_some());
    // The recurrent kernels are orthogonal.
    let k = &gru.hr.kernel;
    let eye = k.t().matmul(k).to_f64_vec();
    for (i, v) in eye.iter().enumerate() {
        let want = if i % 6 == 0 { 1.0 } else { 0.0 };
        assert!((v - want).abs() < 1e-5, "{i}: {v}");
    }
    let lstm = LstmCell::init(&k5, 3, 5, DType::F32);
    assert_eq!(tree_leaves(&lstm).len(), 12);
    assert_eq!(tree_leaves(&gru).len(), 10);
}

#[test]
fn conv2d_matches_flax_forward_backward_and_init_bits() {
    use jaxrs::Padding;
    let g = &golden()["conv2d"];
    let conv = nn::Conv2d {
        kernel: array(&g["kernel"]),
        bias: Some(array(&g["bias"])),
    };
    let x = array(&g["x"]);
    for (name, strides, weight) in [("same", [1, 1], "w_same"), ("valid_s2", [2, 2], "w_valid")] {
        let padding = if name == "same" {
            Padding::Same
        } else {
            Padding::Valid
        };
        let want = &g[name];
        let w = array(&g[weight]);
        let apply = |c: &nn::Conv2d, x: &Array| c.apply_with(x, &strides, padding.clone());
        close(
            &format!("conv {name}"),
            &apply(&conv, &x),
            &want["y"],
            1e-5,
            1e-5,
        );
        let loss = |(c, x): (nn::Conv2d, Array)| (apply(&c, &x) * &w).sum(None, false);
        let (gc, gx) = grad(loss)((conv.clone(), x.clone()));
        close(&format!("conv {name} dx"), &gx, &want["gx"], 1e-4, 1e-5);
        close(
            &format!("conv {name} dkernel"),
            &gc.kernel,
            &want["gkernel"],
            1e-4,
            1e-5,
        );
        let gb = gc.bias.expect("bias gradient");
        close(
            &format!("conv {name} dbias"),
            &gb,
            &want["gbias"],
            1e-4,
            1e-5,
        );
    }
    let same = conv.apply(&x).to_f64_vec();
    let want = array(&g["same"]["y"]).to_f64_vec();
    assert!(first_mismatch(&same, &want, 1e-5, 1e-5).is_none());
    check_grads(
        |(c, x): (nn::Conv2d, Array)| c.apply(&x),
        &(tree_map(&conv, f64s), f64s(&x)),
        1,
    );

    let key = jaxrs::random::key(g["init_seed"].as_u64().expect("seed"));
    let (shape, want) = bits(&g["init_kernel"]);
    let fresh = nn::Conv2d::init(&key, 3, 3, 3, 4, DType::F32);
    assert_eq!(fresh.kernel.shape(), &shape[..]);
    let got: Vec<u32> = fresh
        .kernel
        .to_vec::<f32>()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(got, want, "Conv2d::init: not flax's lecun_normal bits");
}
