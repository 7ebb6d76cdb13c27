//! Abstract values: what a transformation knows of an array (shape, dtype, weak type, and
//! its sharding over `Explicit` mesh axes).

use crate::dtype::DType;
use crate::mesh::{NamedSharding, PartitionDim};
use std::fmt;
use std::sync::Arc;

/// The abstract value of an array: its shape, dtype, and whether its dtype is weak (it came
/// from a Rust scalar and defers to the other operand's dtype in promotion, as in JAX).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Aval {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub weak: bool,
    /// How a traced value lies over the `Explicit` axes of a mesh (JAX's sharding in types):
    /// one spec entry per dimension, naming only explicit axes, at least one of them; `None`
    /// for a value split over no explicit axis (and always for a concrete array's aval: see
    /// [`typeof_`](crate::typeof_)). Set by `core::sharding_types`, which keeps it so.
    pub sharding: Option<Arc<NamedSharding>>,
}

impl Aval {
    pub fn new(shape: impl Into<Vec<usize>>, dtype: DType) -> Aval {
        Aval {
            shape: shape.into(),
            dtype,
            weak: false,
            sharding: None,
        }
    }

    pub fn scalar(dtype: DType) -> Aval {
        Aval::new(vec![], dtype)
    }

    pub fn weak(mut self, weak: bool) -> Aval {
        self.weak = weak;
        self
    }

    /// The same dtype with another shape, and so no sharding.
    pub fn with_shape(&self, shape: impl Into<Vec<usize>>) -> Aval {
        Aval {
            shape: shape.into(),
            dtype: self.dtype,
            weak: self.weak,
            sharding: None,
        }
    }

    /// The same shape and sharding with another dtype.
    pub fn with_dtype(&self, dtype: DType) -> Aval {
        Aval {
            shape: self.shape.clone(),
            dtype,
            weak: self.weak,
            sharding: self.sharding.clone(),
        }
    }

    /// The same shape and dtype, split over no explicit mesh axis.
    pub fn unsharded(&self) -> Aval {
        Aval {
            sharding: None,
            ..self.clone()
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element count; `usize::MAX` if it overflows (such a shape never gets past
    /// `core::trace::check_shape`, which every new abstract value meets in `bind`).
    pub fn size(&self) -> usize {
        element_count(&self.shape).unwrap_or(usize::MAX)
    }

    /// The byte size; `usize::MAX` if it overflows (see [`Aval::size`]).
    pub fn size_in_bytes(&self) -> usize {
        byte_size(&self.shape, self.dtype).unwrap_or(usize::MAX)
    }

    /// The MLIR tensor type, e.g. `tensor<3x4xf32>`.
    pub fn mlir_type(&self) -> String {
        let mut s = String::from("tensor<");
        for d in &self.shape {
            s.push_str(&d.to_string());
            s.push('x');
        }
        s.push_str(self.dtype.mlir_name());
        s.push('>');
        s
    }

    /// Same shape and dtype, ignoring weak typing.
    pub fn same_type(&self, other: &Aval) -> bool {
        self.shape == other.shape && self.dtype == other.dtype
    }
}

/// The most bytes one array may hold: 2^48 (256 TiB), the virtual address space of the
/// x86-64 CPUs and CUDA GPUs XLA runs on. Checking it before XLA sees a shape turns what
/// would be an abort inside XLA (its int64 sizes overflow at 2^63 bytes, and it throws a C++
/// exception out of its compiler) into an error at the user's line.
pub const MAX_ARRAY_BYTES: usize = 1 << 48;

/// The product of `shape`'s dimensions, or `None` if it overflows `usize`.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// The bytes of an array of `shape` and `dtype`, or `None` if that overflows `usize`.
pub fn byte_size(shape: &[usize], dtype: DType) -> Option<usize> {
    element_count(shape)?.checked_mul(dtype.size_in_bytes())
}

/// Prints as JAX does: `f32[3,4]`, with a `~` marking a weak type and `@dp` a dimension
/// split over the explicit mesh axis `dp` (`f32[8@dp,4]`).
impl fmt::Display for Aval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.weak {
            f.write_str("~")?;
        }
        write!(f, "{}[", self.dtype.short_name())?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
            let dim = self.sharding.as_ref().map(|s| &s.spec().dims()[i]);
            if let Some(PartitionDim::Axes(axes)) = dim {
                match axes.as_slice() {
                    [one] => write!(f, "@{one}")?,
                    many => write!(f, "@({})", many.join(","))?,
                }
            }
        }
        f.write_str("]")
    }
}

impl fmt::Debug for Aval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Numpy broadcasting of two shapes, or `None` when they are incompatible.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Normalises a possibly negative axis for an array of `rank` dimensions.
pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// Formats a list of avals for error messages: `f32[3,4], f32[5]`.
pub fn avals_to_string(avals: &[Aval]) -> String {
    avals
        .iter()
        .map(Aval::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
