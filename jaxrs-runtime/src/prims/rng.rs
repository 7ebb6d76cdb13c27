//! `rng_bit_generator`: XLA's stateless generator of random bits
//! (`stablehlo.rng_bit_generator`), as `jax.lax.rng_bit_generator` exposes it.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind, Operand};
use crate::dtype::DType;
use crate::interpreters::batching::move_bdim;
use std::sync::Arc;

/// Which algorithm XLA's bit generator runs (`lax.RandomAlgorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RandomAlgorithm {
    /// The backend's default (`RNG_DEFAULT`): on CPU and GPU, Philox.
    #[default]
    RngDefault,
    /// Threefry-2x32 (`RNG_THREE_FRY`).
    RngThreeFry,
    /// Philox-4x32 (`RNG_PHILOX`).
    RngPhilox,
}

impl RandomAlgorithm {
    fn mlir_name(self) -> &'static str {
        match self {
            RandomAlgorithm::RngDefault => "DEFAULT",
            RandomAlgorithm::RngThreeFry => "THREE_FRY",
            RandomAlgorithm::RngPhilox => "PHILOX",
        }
    }
}

/// `(new_key, bits) = rng_bit_generator(key)`: `bits` of `shape` and an unsigned `dtype`.
/// The key is `u32[4]` (JAX's form, lowered as the `u64[2]` XLA takes) or `u64[2]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RngBitGenerator {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub algorithm: RandomAlgorithm,
}

fn is_key(a: &Aval) -> bool {
    (a.shape == [4] && a.dtype == DType::U32) || (a.shape == [2] && a.dtype == DType::U64)
}

impl Primitive for RngBitGenerator {
    fn name(&self) -> &'static str {
        "rng_bit_generator"
    }
    fn params_string(&self) -> String {
        format!(
            "shape={:?} dtype={} algorithm={:?}",
            self.shape,
            self.dtype.name(),
            self.algorithm
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        super::arity(inputs, 1)?;
        if !is_key(&inputs[0]) {
            return Err("the key must be uint32[4] or uint64[2]".into());
        }
        if !matches!(self.dtype, DType::U8 | DType::U16 | DType::U32 | DType::U64) {
            return Err(format!(
                "unsupported dtype {} (uint8, uint16, uint32 or uint64)",
                self.dtype.name()
            ));
        }
        Ok(vec![
            inputs[0].clone().weak(false),
            Aval::new(self.shape.clone(), self.dtype),
        ])
    }
    // Integer outputs: nothing to differentiate.
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![None, None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        vec![None]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let key_aval = &in_avals[0];
        let wide = Aval::new([2], DType::U64);
        let pairs = Aval::new([2, 2], DType::U32);
        let key = if key_aval.dtype == DType::U32 {
            let r = cx.op1("stablehlo.reshape", &[&ins[0]], &[key_aval], "", &pairs);
            cx.op1("stablehlo.bitcast_convert", &[&r], &[&pairs], "", &wide)
        } else {
            ins[0].clone()
        };
        let props = format!(
            "rng_algorithm = #stablehlo<rng_algorithm {}>",
            self.algorithm.mlir_name()
        );
        let res = cx.op(
            "stablehlo.rng_bit_generator",
            &[&key],
            &[&wide],
            &props,
            &[&wide, &out[1]],
        );
        let new_key = if key_aval.dtype == DType::U32 {
            let p = cx.op1(
                "stablehlo.bitcast_convert",
                &[&res[0]],
                &[&wide],
                "",
                &pairs,
            );
            cx.op1("stablehlo.reshape", &[&p], &[&pairs], "", &out[0])
        } else {
            res[0].clone()
        };
        vec![new_key, res[1].clone()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // XLA's generator takes one key: one generator per example (JAX has no batching
        // rule for it at all), stacked along a new leading dim.
        let keys = move_bdim(&args[0], dims[0], 0, axis_size);
        let (mut new_keys, mut bits) = (Vec::new(), Vec::new());
        for i in 0..axis_size {
            let k = keys
                .slice_axis(0, i, i + 1)
                .reshape(keys.shape()[1..].to_vec());
            let mut out = bind(Arc::new(self.clone()), &[Operand::from(&k)]);
            bits.push(out.pop().unwrap());
            new_keys.push(out.pop().unwrap());
        }
        (
            vec![Array::stack(&new_keys, 0), Array::stack(&bits, 0)],
            vec![Some(0), Some(0)],
        )
    }
    as_any!();
}

/// `lax.rng_bit_generator(key, shape, dtype, algorithm)`: `(new_key, bits)`, random bits of
/// `shape` and `dtype` (`uint8`, `uint16`, `uint32` or `uint64`) from XLA's stateless
/// generator. `key` is `uint32[4]` (or `uint64[2]`); `new_key` has its type. As JAX says, the
/// bits are those of the backend's implementation of the algorithm and may change between
/// XLA versions: `jaxrs::random` is the stable API.
///
/// ```
/// use jaxrs::lax::{self, RandomAlgorithm};
/// use jaxrs::prelude::*;
///
/// let key = Array::from_vec(vec![1u32, 2, 3, 4], &[4]);
/// let (new_key, bits) = lax::rng_bit_generator(&key, &[2, 3], DType::U32, RandomAlgorithm::RngDefault);
/// assert_eq!(bits.shape(), &[2, 3]);
/// assert_eq!(new_key.shape(), &[4]);
/// ```
#[track_caller]
pub fn rng_bit_generator(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    algorithm: RandomAlgorithm,
) -> (Array, Array) {
    let prim = RngBitGenerator {
        shape: shape.to_vec(),
        dtype,
        algorithm,
    };
    let mut out = bind(Arc::new(prim), &[Operand::from(key)]);
    let bits = out.pop().unwrap();
    (out.pop().unwrap(), bits)
}
