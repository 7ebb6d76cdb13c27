//! The first-order primitives, one module per family. Each primitive is a type implementing
//! [`Primitive`](crate::core::primitive::Primitive): its inference and lowering (and, as they are
//! added, its autodiff and batching rules) sit together in its impl.

pub mod barrier;
pub mod collective;
pub mod complex;
pub mod conv;
pub mod debug;
pub mod decompositions;
pub mod elementwise;
pub mod fft;
pub mod gather;
pub mod index;
pub mod linalg;
pub mod reduce;
pub mod rng;
pub mod shape;
pub mod sharding;
pub mod sort;
pub mod window;

pub use collective::{AllGather, AllReduce, AllToAll, AxisIndex, Ppermute, Pvary, ReduceScatter};
pub use complex::{ComplexPart, MakeComplex, Part};
pub use conv::{ConvGeneralDilated, ConvSpecs};
pub use elementwise::{
    Binary, BinaryOp, BitcastConvert, Compare, CompareOp, Convert, IntegerPow, ReducePrecision,
    Select, StopGradient, Unary, UnaryOp,
};
pub use fft::{Fft, FftType};
pub use gather::{Gather, GatherDims, GatherMode, Scatter, ScatterDims, ScatterOp};
pub use index::{
    DynamicSlice, DynamicUpdateSlice, IndexAdd, ScatterAddAlongAxis, Take, TakeAlongAxis,
};
pub use linalg::DotGeneral;
pub use reduce::{Argmax, Cumulative, Reduce, ReduceOp};
pub use shape::{BroadcastInDim, Concatenate, Iota, Pad, Reshape, Rev, Slice, Transpose};
pub use sharding::ShardingConstraint;
pub use sort::Sort;
pub use window::ReduceWindow;

use crate::aval::Aval;

/// Checks that all operands have one shape and one dtype (elementwise primitives: the Array
/// layer broadcasts and promotes before binding them).
pub(crate) fn same_shape_dtype(inputs: &[Aval]) -> Result<(), String> {
    let first = &inputs[0];
    for a in &inputs[1..] {
        if a.shape != first.shape {
            return Err("operands must have the same shape".into());
        }
        if a.dtype != first.dtype {
            return Err("operands must have the same dtype".into());
        }
    }
    Ok(())
}

/// Checks the operand count.
pub(crate) fn arity(inputs: &[Aval], n: usize) -> Result<(), String> {
    if inputs.len() != n {
        return Err(format!("expected {n} operands, got {}", inputs.len()));
    }
    Ok(())
}
