//! The train steps of `benches/train_step.rs`, copied in compact form from the trainers
//! (`examples/train_mnist.rs`, `mnist_cnn.rs`, `char_rnn.rs`, `transformer_lm.rs`,
//! `train_mnist_pmap.rs`): the same layers, losses and optimizers, on synthetic data of the
//! trainers' shapes. `benches/peer/train_step_jax.py` is the same math in JAX and optax.

use jaxrs::nn::{
    self, max_pool, Conv2d, Embedding, GruCell, LayerNorm, Linear, MultiHeadAttention,
};
use jaxrs::optim::{self, GradientTransformation, Mask};
use jaxrs::prelude::*;
use jaxrs::{random, Padding};

/// MNIST's flattened images and classes.
pub const PIXELS: usize = 784;
pub const CLASSES: usize = 10;

/// `batch` random images in [0, 1) and their random labels.
pub fn image_batch(key: &Array, batch: usize) -> (Array, Array) {
    let [kx, ky] = random::split_n::<2>(key);
    (
        random::uniform(&kx, &[batch, PIXELS], DType::F32),
        random::randint(&ky, &[batch], 0, CLASSES as i64, DType::I32),
    )
}

// ---- the MLPs: 784-128-10 (train_mnist) and 784-1024-1024-10 -----------------------------

/// Dense layers with a ReLU between each two.
#[derive(Tree, Clone)]
pub struct Mlp {
    pub layers: Vec<Linear>,
}

impl Mlp {
    pub fn init(key: &Array, sizes: &[usize]) -> Mlp {
        Mlp {
            layers: sizes
                .windows(2)
                .enumerate()
                .map(|(i, w)| Linear::init(&random::fold_in(key, i as u32), w[0], w[1], DType::F32))
                .collect(),
        }
    }

    fn logits(&self, x: &Array) -> Array {
        let last = self.layers.len() - 1;
        self.layers.iter().enumerate().fold(x.clone(), |y, (i, l)| {
            let y = l.apply(&y);
            if i < last {
                y.relu()
            } else {
                y
            }
        })
    }
}

fn mlp_loss(params: &Mlp, x: &Array, labels: &Array) -> Array {
    nn::softmax_cross_entropy_with_integer_labels(&params.logits(x), labels).mean(None, false)
}

pub type MlpOpt = optim::State<optim::Adam, Mlp>;

pub fn adam() -> optim::Adam {
    optim::adam(1e-3, 0.9, 0.999, 1e-8)
}

#[jit(donate = (params, opt_state))]
pub fn mlp_step(params: Mlp, opt_state: MlpOpt, x: &Array, labels: &Array) -> (Mlp, MlpOpt, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| mlp_loss(&p, x, labels))(params.clone());
    let (updates, opt_state) = adam().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

/// The data-parallel step of `train_mnist_pmap`: each device's slice, the gradients and the
/// loss averaged over the devices with `pmean`, Adam on every device; the loss comes back once.
#[pmap(axis_name = "d", out_axes = (0, 0, None), donate = (params, opt_state))]
pub fn pmap_mlp_step(
    params: Mlp,
    opt_state: MlpOpt,
    x: &Array,
    labels: &Array,
) -> (Mlp, MlpOpt, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| mlp_loss(&p, x, labels))(params.clone());
    let grads = pmean(&grads, "d");
    let (updates, opt_state) = adam().update(grads, opt_state, Some(&params));
    (
        optim::apply_updates(&params, &updates),
        opt_state,
        pmean(&value, "d"),
    )
}

// ---- the CNN of mnist_cnn ---------------------------------------------------------------

pub const CNN_BATCH: usize = 50;

#[derive(Tree, Clone)]
pub struct Cnn {
    conv1: Conv2d,
    conv2: Conv2d,
    hidden: Linear,
    out: Linear,
}

impl Cnn {
    pub fn init(key: &Array) -> Cnn {
        let [k1, k2, k3, k4] = random::split_n::<4>(key);
        Cnn {
            conv1: Conv2d::init(&k1, 3, 3, 1, 32, DType::F32),
            conv2: Conv2d::init(&k2, 3, 3, 32, 64, DType::F32),
            hidden: Linear::init(&k3, 7 * 7 * 64, 128, DType::F32),
            out: Linear::init(&k4, 128, CLASSES, DType::F32),
        }
    }

    fn logits(&self, x: &Array) -> Array {
        let batch = x.shape()[0];
        let pool = |y: Array| max_pool(&y, &[2, 2], &[2, 2], Padding::Valid);
        let y = x.reshape([batch, 28, 28, 1]);
        let y = pool(self.conv1.apply(&y).relu());
        let y = pool(self.conv2.apply(&y).relu());
        let y = y.reshape([batch, y.size() / batch]);
        self.out.apply(&self.hidden.apply(&y).relu())
    }
}

pub type CnnOpt = optim::State<optim::Adam, Cnn>;

fn cnn_optimizer() -> optim::Adam {
    let rate = optim::cosine_decay_schedule(1e-3, 450, 0.1, 1.0);
    optim::adam(rate, 0.9, 0.999, 1e-8)
}

pub fn cnn_opt_init(params: &Cnn) -> CnnOpt {
    cnn_optimizer().init(params)
}

#[jit(donate = (params, opt_state))]
pub fn cnn_step(params: Cnn, opt_state: CnnOpt, x: &Array, labels: &Array) -> (Cnn, CnnOpt, Array) {
    let (value, grads) = value_and_grad(|p: Cnn| {
        nn::softmax_cross_entropy_with_integer_labels(&p.logits(x), labels).mean(None, false)
    })(params.clone());
    let (updates, opt_state) = cnn_optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

// ---- the char-RNN: embedding, GRU over time with #[scan], dense head ------------------------

/// Tiny Shakespeare's vocabulary size.
pub const VOCAB: usize = 65;
pub const RNN_BATCH: usize = 32;
pub const RNN_SEQ: usize = 64;

#[derive(Tree, Clone)]
pub struct CharRnn {
    embed: Embedding,
    cell: GruCell,
    head: Linear,
}

impl CharRnn {
    pub fn init(key: &Array) -> CharRnn {
        let [k1, k2, k3] = random::split_n::<3>(key);
        CharRnn {
            embed: Embedding::init(&k1, VOCAB, 64, DType::F32),
            cell: GruCell::init(&k2, 64, 256, DType::F32),
            head: Linear::init(&k3, 256, VOCAB, DType::F32),
        }
    }
}

#[scan]
fn gru_over_time(h: Array, x: &Array, cell: &GruCell) -> (Array, Array) {
    cell.apply(h, x)
}

fn rnn_loss(params: &CharRnn, inputs: &Array, targets: &Array) -> Array {
    let xs = params.embed.apply(&inputs.transpose([1, 0]));
    let h0 = params.cell.init_carry(&[inputs.shape()[0]]);
    let (_, hs) = gru_over_time(h0, &xs, &params.cell);
    let logits = params.head.apply(&hs);
    nn::softmax_cross_entropy_with_integer_labels(&logits, &targets.transpose([1, 0]))
        .mean(None, false)
}

type ClippedAdam = optim::Chain<(optim::ClipByGlobalNorm, optim::Adam)>;
pub type RnnOpt = optim::State<ClippedAdam, CharRnn>;

fn rnn_optimizer() -> ClippedAdam {
    optim::chain((
        optim::clip_by_global_norm(1.0),
        optim::adam(3e-3, 0.9, 0.999, 1e-8),
    ))
}

pub fn rnn_opt_init(params: &CharRnn) -> RnnOpt {
    rnn_optimizer().init(params)
}

#[jit(donate = (params, opt_state))]
pub fn rnn_step(
    params: CharRnn,
    opt_state: RnnOpt,
    inputs: &Array,
    targets: &Array,
) -> (CharRnn, RnnOpt, Array) {
    let (value, grads) = value_and_grad(|p: CharRnn| rnn_loss(&p, inputs, targets))(params.clone());
    let (updates, opt_state) = rnn_optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

/// `batch` random windows of `len` tokens and their random targets.
pub fn token_batch(key: &Array, batch: usize, len: usize) -> (Array, Array) {
    let [ki, kt] = random::split_n::<2>(key);
    (
        random::randint(&ki, &[batch, len], 0, VOCAB as i64, DType::I32),
        random::randint(&kt, &[batch, len], 0, VOCAB as i64, DType::I32),
    )
}

// ---- the transformer LM: 2 pre-norm blocks, each #[remat], tied embedding -----------------

pub const D_MODEL: usize = 128;
pub const HEADS: usize = 4;
pub const LAYERS: usize = 2;
pub const CONTEXT: usize = 64;
pub const TF_BATCH: usize = 32;

#[derive(Tree, Clone)]
pub struct Block {
    ln_attention: LayerNorm,
    attention: MultiHeadAttention,
    ln_mlp: LayerNorm,
    mlp_in: Linear,
    mlp_out: Linear,
}

#[derive(Tree, Clone)]
pub struct Transformer {
    tokens: Embedding,
    positions: Array,
    blocks: Vec<Block>,
    ln_final: LayerNorm,
}

impl Transformer {
    /// float32 parameters (the master copy in mixed precision too).
    pub fn init(key: &Array) -> Transformer {
        let key = |i: usize| random::fold_in(key, i as u32);
        let (d, f32) = (D_MODEL, DType::F32);
        Transformer {
            tokens: Embedding::init(&key(0), VOCAB, d, f32),
            positions: nn::init::normal(0.02).init(&key(1), &[CONTEXT, d], f32),
            blocks: (0..LAYERS)
                .map(|l| Block {
                    ln_attention: LayerNorm::new(d, f32),
                    attention: MultiHeadAttention::init(&key(2 + 3 * l), d, HEADS, f32),
                    ln_mlp: LayerNorm::new(d, f32),
                    mlp_in: Linear::init(&key(3 + 3 * l), d, 4 * d, f32),
                    mlp_out: Linear::init(&key(4 + 3 * l), 4 * d, d, f32),
                })
                .collect(),
            ln_final: LayerNorm::new(d, f32),
        }
    }
}

#[remat]
fn block(p: &Block, x: &Array, mask: &Array) -> Array {
    let normed = p.ln_attention.apply(x);
    let x = x + p.attention.apply(&normed, &normed, Some(mask));
    let hidden = p.mlp_in.apply(&p.ln_mlp.apply(&x)).gelu();
    &x + p.mlp_out.apply(&hidden)
}

/// The mean next-token cross-entropy of the float32 `master` parameters computed in
/// `compute` precision, the logits cast to float32 for the loss.
fn transformer_loss(
    master: &Transformer,
    inputs: &Array,
    targets: &Array,
    compute: DType,
) -> Array {
    let model = tree_map(master, |p| p.astype(compute));
    let mut x = model.tokens.apply(inputs) + &model.positions;
    let mask = nn::make_causal_mask(&Array::zeros(&[1, CONTEXT], DType::I32));
    for p in &model.blocks {
        x = block(p, &x, &mask);
    }
    let logits = model.tokens.attend(&model.ln_final.apply(&x));
    nn::softmax_cross_entropy_with_integer_labels(&logits.astype(DType::F32), targets)
        .mean(None, false)
}

type ClippedAdamW = optim::Chain<(optim::ClipByGlobalNorm, optim::AdamW)>;
pub type TransformerOpt = optim::State<ClippedAdamW, Transformer>;

fn transformer_optimizer() -> ClippedAdamW {
    let schedule = optim::warmup_cosine_decay_schedule(0.0, 3e-3, 50, 1000, 3e-4);
    let decayed =
        |path: &str| path.ends_with("kernel") || path.ends_with("embedding") || path == "positions";
    optim::chain((
        optim::clip_by_global_norm(1.0),
        optim::adamw(schedule, 0.9, 0.99, 1e-8, 0.1, Mask::paths(decayed)),
    ))
}

pub fn transformer_opt_init(params: &Transformer) -> TransformerOpt {
    transformer_optimizer().init(params)
}

#[jit(donate = (params, opt_state), static = compute)]
pub fn transformer_step(
    params: Transformer,
    opt_state: TransformerOpt,
    inputs: &Array,
    targets: &Array,
    compute: DType,
) -> (Transformer, TransformerOpt, Array) {
    let (value, grads) =
        value_and_grad(|p: Transformer| transformer_loss(&p, inputs, targets, compute))(
            params.clone(),
        );
    let (updates, opt_state) = transformer_optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}
