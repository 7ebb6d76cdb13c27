//! Neural-network building blocks, as flax, `jax.nn` and optax's losses give JAX users:
//! initialisers ([`init`]), layers as plain `#[derive(Tree)]` parameter structs with an
//! `init(key, ..)` constructor and a pure `apply`, attention and its masks, recurrent cells
//! shaped as [`scan`](fn@crate::scan) bodies, and losses.
//!
//! Parameters are trees, so [`grad`](fn@crate::grad), [`jit`](fn@crate::jit) and
//! [`tree_map2`](crate::tree_map2) take them whole:
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::nn::{self, Linear};
//!
//! #[derive(Tree, Clone)]
//! struct Mlp { hidden: Linear, out: Linear }
//!
//! fn logits(p: &Mlp, x: &Array) -> Array {
//!     p.out.apply(&p.hidden.apply(x).relu())
//! }
//!
//! let [k1, k2] = jaxrs::random::split_n::<2>(&jaxrs::random::key(0));
//! let params = Mlp {
//!     hidden: Linear::init(&k1, 4, 16, DType::F32),
//!     out: Linear::init(&k2, 16, 3, DType::F32),
//! };
//! let x = Array::ones(&[8, 4], DType::F32);
//! let labels = Array::zeros(&[8], DType::I32);
//! let loss = |p: Mlp| nn::softmax_cross_entropy_with_integer_labels(&logits(&p, &x), &labels).mean(None, false);
//! let grads = grad(loss)(params.clone());
//! assert_eq!(grads.hidden.kernel.shape(), &[4, 16]);
//! assert!(grads.out.kernel.to_vec::<f32>().iter().all(|v| v.is_finite()));
//! ```
//!
//! Each layer declares its fields sorted by name (`Linear`: `bias`, then `kernel`), the order in
//! which `jax.tree.leaves` lists flax's parameter dicts: a model's leaves, its optimizer
//! state's and its gradients' come in JAX's order (XLA schedules a training step by it).
//!
//! Activations are methods of [`Array`](crate::Array): `relu`, `gelu` (tanh approximation), `gelu_exact`,
//! `silu`, `sigmoid`, `log_sigmoid`, `leaky_relu`, `elu`, `softplus`, `tanh`, `softmax`,
//! `log_softmax`; [`relu`], [`gelu`], [`silu`] and the other `jax.nn` names in `functions` are free
//! functions with JAX's spelling.

mod attention;
mod conv;
mod functions;
pub mod init;
mod layers;
mod losses;
mod recurrent;

pub use attention::{
    combine_masks, dot_product_attention, dot_product_attention_weights, make_attention_mask,
    make_causal_mask, MultiHeadAttention,
};
pub use conv::Conv2d;
pub use functions::{
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu,
    log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot, relu, relu6, selu,
    sigmoid, silu, soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid, squareplus,
    standardize, swish, tanh,
};
pub use layers::{dropout, Embedding, LayerNorm, Linear, RmsNorm, NORM_EPSILON};
pub use losses::{
    accuracy, binary_cross_entropy, mse, softmax_cross_entropy_masked,
    softmax_cross_entropy_with_integer_labels,
};
pub use recurrent::{GruCell, LstmCell};

/// Pooling over `[batch..., spatial..., features]` (flax's `nn.max_pool` / `nn.avg_pool`), the
/// engine's [`crate::max_pool`] and [`crate::avg_pool`] under the names flax users look for.
pub use crate::{avg_pool, max_pool};
