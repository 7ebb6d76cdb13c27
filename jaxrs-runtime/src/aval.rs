//! Abstract values: what a transformation knows of an array (shape, dtype, weak type).

use crate::dtype::DType;
use std::fmt;

/// The abstract value of an array: its shape, dtype, and whether its dtype is weak (it came
/// from a Rust scalar and defers to the other operand's dtype in promotion, as in JAX).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Aval {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub weak: bool,
}

impl Aval {
    pub fn new(shape: impl Into<Vec<usize>>, dtype: DType) -> Aval {
        Aval {
            shape: shape.into(),
            dtype,
            weak: false,
        }
    }

    pub fn scalar(dtype: DType) -> Aval {
        Aval::new(vec![], dtype)
    }

    pub fn weak(mut self, weak: bool) -> Aval {
        self.weak = weak;
        self
    }

    pub fn with_shape(&self, shape: impl Into<Vec<usize>>) -> Aval {
        Aval {
            shape: shape.into(),
            dtype: self.dtype,
            weak: self.weak,
        }
    }

    pub fn with_dtype(&self, dtype: DType) -> Aval {
        Aval {
            shape: self.shape.clone(),
            dtype,
            weak: self.weak,
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn size_in_bytes(&self) -> usize {
        self.size() * self.dtype.size_in_bytes()
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

/// Prints as JAX does: `f32[3,4]`, with a `~` marking a weak type.
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
