//! Shape operations: reshape, transpose, broadcast, expand/squeeze, concatenate, stack,
//! slice, pad, flip, iota.

use super::{axes_of, axis_of, Dims, IntoArg};
use crate::aval::{broadcast_shapes, normalize_axis, Aval};
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::trace::{bind1, op_error, At, Operand};
use crate::dtype::DType;
use crate::prims::{BroadcastInDim, Concatenate, Iota, Pad, Reshape, Rev, Slice, Transpose};
use std::panic::Location;

impl Array {
    /// The same elements in a new shape; one entry may be `-1` (inferred).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::arange(0.0, 6.0, 1.0, DType::F32);
    /// let m = x.reshape([2, 3]);
    /// assert_eq!(m.shape(), &[2, 3]);
    /// let flat = m.reshape([-1]);
    /// assert_eq!(flat.shape(), &[6]);
    /// assert_eq!(flat.to_vec::<f32>(), x.to_vec::<f32>());
    /// ```
    #[track_caller]
    pub fn reshape(&self, shape: impl Dims) -> Array {
        let spec = shape.dims();
        let loc = Location::caller();
        let fail = |msg: String| -> ! { op_error("reshape", &msg, &[self.aval().clone()], loc) };
        let unknown = spec.iter().filter(|&&d| d == -1).count();
        if spec.iter().any(|&d| d < -1) || unknown > 1 {
            fail(format!(
                "{spec:?} is not a shape (one -1 at most, no other negative)"
            ));
        }
        // Checked products: `[2^32, 2^32]` must not wrap to 0 and pass for an empty array.
        let known_dims: Vec<usize> = spec
            .iter()
            .filter(|&&d| d != -1)
            .map(|&d| d as usize)
            .collect();
        let known = crate::aval::element_count(&known_dims);
        let size = self.size();
        let shape: Vec<usize> = spec
            .iter()
            .map(|&d| match (d, known) {
                (-1, Some(k)) if k > 0 && size.is_multiple_of(k) => size / k,
                (-1, _) => fail(format!(
                    "cannot infer the -1 in {spec:?} for {size} elements"
                )),
                _ => d as usize,
            })
            .collect();
        crate::core::trace::check_shape("reshape", &shape, self.dtype(), loc);
        if crate::aval::element_count(&shape) != Some(size) {
            fail(format!("cannot reshape {size} elements into {shape:?}"));
        }
        if shape == self.shape() {
            return self.clone();
        }
        bind1(Reshape { shape }, &[Operand::from(self)])
    }

    /// Permutes the axes: output axis `i` is input axis `perm[i]` (negative axes count from
    /// the end).
    #[track_caller]
    pub fn transpose(&self, perm: impl Dims) -> Array {
        let perm = axes_of("transpose", perm.dims(), self);
        if perm.iter().enumerate().all(|(i, &p)| i == p) && perm.len() == self.rank() {
            return self.clone();
        }
        bind1(Transpose { perm }, &[Operand::from(self)])
    }

    /// All axes reversed (`x.T` in numpy).
    #[track_caller]
    pub fn t(&self) -> Array {
        let perm: Vec<usize> = (0..self.rank()).rev().collect();
        self.transpose(perm)
    }

    /// Swaps two axes.
    #[track_caller]
    pub fn swap_axes(&self, a: i64, b: i64) -> Array {
        let (a, b) = (axis_of("swap_axes", a, self), axis_of("swap_axes", b, self));
        let mut perm: Vec<usize> = (0..self.rank()).collect();
        perm.swap(a, b);
        self.transpose(perm)
    }

    /// Broadcasts to `shape` by numpy's rules.
    #[track_caller]
    pub fn broadcast_to(&self, shape: &[usize]) -> Array {
        let ok = self.rank() <= shape.len()
            && broadcast_shapes(self.shape(), shape).as_deref() == Some(shape);
        if !ok {
            op_error(
                "broadcast_to",
                &format!("cannot broadcast to {shape:?}"),
                &[self.aval().clone()],
                Location::caller(),
            );
        }
        if self.shape() == shape {
            return self.clone();
        }
        let dims: Vec<usize> = (shape.len() - self.rank()..shape.len()).collect();
        bind1(
            BroadcastInDim {
                shape: shape.to_vec(),
                dims,
            },
            &[Operand::from(self)],
        )
    }

    /// `broadcast_in_dim`: axis `i` of `self` becomes axis `dims[i]` of an array of `shape`
    /// (the other axes repeat it). The primitive as is, for rules that place axes themselves.
    #[track_caller]
    pub(crate) fn broadcast_in_dim(&self, shape: &[usize], dims: &[usize]) -> Array {
        bind1(
            BroadcastInDim {
                shape: shape.to_vec(),
                dims: dims.to_vec(),
            },
            &[Operand::from(self)],
        )
    }

    /// `lit` repeated to `shape`, computed by the program: under a trace an equation, not a
    /// captured constant.
    #[track_caller]
    pub(crate) fn broadcast_literal(lit: Literal, shape: &[usize]) -> Array {
        bind1(
            BroadcastInDim {
                shape: shape.to_vec(),
                dims: vec![],
            },
            &[Operand::Lit(lit)],
        )
    }

    /// Inserts a size-1 axis at `axis` (which may be negative, counting in the result).
    #[track_caller]
    pub fn expand_dims(&self, axis: i64) -> Array {
        let loc = Location::caller();
        let axis = normalize_axis(axis, self.rank() + 1).unwrap_or_else(|| {
            op_error(
                "expand_dims",
                &format!("axis {axis} is out of range"),
                &[self.aval().clone()],
                loc,
            )
        });
        let mut shape = self.shape().to_vec();
        shape.insert(axis, 1);
        bind1(Reshape { shape }, &[Operand::from(self)])
    }

    /// Removes the given size-1 axes.
    #[track_caller]
    pub fn squeeze(&self, axes: impl Dims) -> Array {
        let axes = axes_of("squeeze", axes.dims(), self);
        if let Some(&a) = axes.iter().find(|&&a| self.shape()[a] != 1) {
            op_error(
                "squeeze",
                &format!("axis {a} has size {}, not 1", self.shape()[a]),
                &[self.aval().clone()],
                Location::caller(),
            );
        }
        let shape: Vec<usize> = (0..self.rank())
            .filter(|i| !axes.contains(i))
            .map(|i| self.shape()[i])
            .collect();
        bind1(Reshape { shape }, &[Operand::from(self)])
    }

    /// Joins arrays along an existing axis (dtypes promoted).
    #[track_caller]
    pub fn concatenate(arrays: &[Array], axis: i64) -> Array {
        let loc = Location::caller();
        let first = arrays
            .first()
            .unwrap_or_else(|| panic!("concatenate: no arrays given {}", At::line(loc)));
        let axis = axis_of("concatenate", axis, first);
        let dtype = arrays
            .iter()
            .skip(1)
            .fold((first.dtype(), first.is_weak()), |(d, w), a| {
                DType::promote(d, w, a.dtype(), a.is_weak())
            })
            .0;
        let mut cast = Vec::with_capacity(arrays.len());
        for a in arrays {
            cast.push(if a.dtype() == dtype {
                a.clone()
            } else {
                a.astype(dtype)
            });
        }
        let ops: Vec<Operand> = cast.iter().map(Operand::from).collect();
        bind1(Concatenate { axis }, &ops)
    }

    /// Stacks arrays of one shape along a new axis.
    #[track_caller]
    pub fn stack(arrays: &[Array], axis: i64) -> Array {
        let mut expanded = Vec::with_capacity(arrays.len());
        for a in arrays {
            expanded.push(a.expand_dims(axis));
        }
        let axis = if axis < 0 {
            axis + expanded.first().map_or(1, Array::rank) as i64
        } else {
            axis
        };
        Array::concatenate(&expanded, axis)
    }

    /// The static slice `x[start:limit:strides]` along every axis (`lax.slice`).
    #[track_caller]
    pub fn slice(&self, start: &[usize], limit: &[usize], strides: &[usize]) -> Array {
        let strides = if strides.is_empty() {
            vec![1; self.rank()]
        } else {
            strides.to_vec()
        };
        bind1(
            Slice {
                start: start.to_vec(),
                limit: limit.to_vec(),
                strides,
            },
            &[Operand::from(self)],
        )
    }

    /// `x[start..end]` along one axis.
    #[track_caller]
    pub fn slice_axis(&self, axis: i64, start: usize, end: usize) -> Array {
        let axis = axis_of("slice_axis", axis, self);
        let mut s = vec![0; self.rank()];
        let mut l = self.shape().to_vec();
        s[axis] = start;
        l[axis] = end;
        self.slice(&s, &l, &[])
    }

    /// Pads with `value`: `low`/`high` per axis may be negative (cropping), `interior`
    /// inserts between elements (`lax.pad`).
    #[track_caller]
    pub fn pad<'a>(
        &'a self,
        low: &[i64],
        high: &[i64],
        interior: &[i64],
        value: impl IntoArg<'a>,
    ) -> Array {
        let interior = if interior.is_empty() {
            vec![0; self.rank()]
        } else {
            interior.to_vec()
        };
        let value = match value.into_arg() {
            Operand::Lit(l) => Operand::Lit(l.cast(self.dtype(), false)),
            Operand::Array(a) => Operand::Array(std::borrow::Cow::Owned(a.astype(self.dtype()))),
        };
        bind1(
            Pad {
                low: low.to_vec(),
                high: high.to_vec(),
                interior,
            },
            &[Operand::from(self), value.borrowed()],
        )
    }

    /// Reverses the order of elements along `axes`.
    #[track_caller]
    pub fn flip(&self, axes: impl Dims) -> Array {
        let mut dims = axes_of("flip", axes.dims(), self);
        dims.sort_unstable();
        bind1(Rev { dims }, &[Operand::from(self)])
    }

    /// `0, 1, 2, ...` along `dimension` of a new array of `shape` (`lax.iota`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let columns = Array::iota(DType::I32, &[2, 3], 1);
    /// assert_eq!(columns.to_vec::<i32>(), vec![0, 1, 2, 0, 1, 2]);
    /// let rows = Array::iota(DType::F32, &[2, 3], 0);
    /// assert_eq!(rows.to_vec::<f32>(), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn iota(dtype: DType, shape: &[usize], dimension: usize) -> Array {
        bind1(
            Iota {
                dtype,
                shape: shape.to_vec(),
                dimension,
            },
            &[],
        )
    }

    /// The lower triangle of the last two axes (`jnp.tril(x, k)`): elements above the `k`-th
    /// diagonal become zero (`k > 0` keeps diagonals above the main one, `k < 0` drops the
    /// main one and more).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.tril(0).to_vec::<f32>(), vec![1.0, 0.0, 3.0, 4.0]);
    /// assert_eq!(x.triu(1).to_vec::<f32>(), vec![0.0, 2.0, 0.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn tril(&self, k: i64) -> Array {
        let keep = self.triangle("tril", k);
        super::where_(&keep, self, Array::zeros(&[], self.dtype()))
    }

    /// The upper triangle of the last two axes (`jnp.triu(x, k)`): elements below the `k`-th
    /// diagonal become zero. See [`tril`](Array::tril).
    #[track_caller]
    pub fn triu(&self, k: i64) -> Array {
        let below = self.triangle("triu", k - 1);
        super::where_(&below, Array::zeros(&[], self.dtype()), self)
    }

    /// `row + k >= column` over the last two axes (`jnp.tri`), as a bool mask.
    #[track_caller]
    fn triangle(&self, op: &str, k: i64) -> Array {
        if self.rank() < 2 {
            op_error(
                op,
                "the operand must have at least 2 dimensions",
                &[self.aval().clone()],
                Location::caller(),
            );
        }
        let shape = &self.shape()[self.rank() - 2..];
        let rows = Array::iota(DType::I64, shape, 0);
        let columns = Array::iota(DType::I64, shape, 1);
        rows.add(k).ge(&columns)
    }

    /// `num` evenly spaced values from `start` to `stop` (`jnp.linspace`), `stop` included
    /// when `endpoint`. Computed as JAX does, `start * (1 - t) + stop * t` with `t = i / div`
    /// in the dtype's precision (float32 for float16, bfloat16 and integer dtypes, whose values
    /// are then floored), so both ends are exact.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::linspace(0.0, 1.0, 5, true, DType::F32);
    /// assert_eq!(x.to_vec::<f32>(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// let y = Array::linspace(0.0, 1.0, 4, false, DType::F32);
    /// assert_eq!(y.to_vec::<f32>(), vec![0.0, 0.25, 0.5, 0.75]);
    /// ```
    #[track_caller]
    pub fn linspace(start: f64, stop: f64, num: usize, endpoint: bool, dtype: DType) -> Array {
        let div = if endpoint { num.saturating_sub(1) } else { num };
        let mut values = crate::core::array::host_vec("Array::linspace", &[num], dtype, num);
        if dtype == DType::F64 {
            values.extend((0..num.min(div)).map(|i| {
                let t = i as f64 / div as f64;
                start * (1.0 - t) + stop * t
            }));
        } else {
            let (start32, stop32) = (start as f32, stop as f32);
            values.extend((0..num.min(div)).map(|i| {
                let t = i as f32 / div as f32;
                (start32 * (1.0 - t) + stop32 * t) as f64
            }));
        }
        if endpoint && num > 0 {
            values.push(if num == 1 { start } else { stop });
        }
        if !dtype.is_float() {
            values.iter_mut().for_each(|v| *v = v.floor());
        }
        Array::from_f64s(&values, &[num], dtype)
    }
}

/// Up to this many elements, [`Array::full`] fills on the host and uploads (one copy, no
/// program); above, it broadcasts on the device (one buffer, no host staging).
const FULL_ON_HOST_MAX_ELEMENTS: usize = 1 << 16;

/// Arrays of one value. They live here, not in `core/array.rs`, because the large ones are a
/// broadcast primitive run on the device.
impl Array {
    /// Zeros of `shape` and `dtype`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let z = Array::zeros(&[2, 3], DType::F32);
    /// assert_eq!(z.shape(), &[2, 3]);
    /// assert_eq!(z.to_vec::<f32>(), vec![0.0; 6]);
    /// ```
    #[track_caller]
    pub fn zeros(shape: &[usize], dtype: DType) -> Array {
        Array::full(shape, 0.0, dtype)
    }

    /// Ones of `shape` and `dtype`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::ones(&[3], DType::I32);
    /// assert_eq!(x.to_vec::<i32>(), vec![1, 1, 1]);
    /// ```
    #[track_caller]
    pub fn ones(shape: &[usize], dtype: DType) -> Array {
        Array::full(shape, 1.0, dtype)
    }

    /// An array of `shape` filled with `value` converted to `dtype`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::full(&[2, 2], 0.5, DType::F64);
    /// assert_eq!(x.to_vec::<f64>(), vec![0.5; 4]);
    /// assert_eq!(Array::full(&[2], 7.9, DType::I32).to_vec::<i32>(), vec![7, 7]);
    /// ```
    #[track_caller]
    pub fn full(shape: &[usize], value: f64, dtype: DType) -> Array {
        let lit = Literal::from_f64(value, dtype, false);
        if shape.is_empty() {
            return Array::from_literal(lit);
        }
        crate::core::trace::check_shape("Array::full", shape, dtype, Location::caller());
        let aval = Aval::new(shape.to_vec(), dtype);
        // Small arrays are cheaper to fill on the host (one upload); large ones are broadcast
        // on the device, so that the array exists once (staging it on the host first doubled
        // the peak: 2 GiB for a 1 GiB array). Either way it remembers its value, so that a
        // trace meeting it writes a constant that XLA folds instead of an extra program input.
        if aval.size() <= FULL_ON_HOST_MAX_ELEMENTS {
            return Array::from_literal_filled(lit, shape);
        }
        let broadcast: crate::core::primitive::Prim = std::sync::Arc::new(BroadcastInDim {
            shape: shape.to_vec(),
            dims: vec![],
        });
        // Run now even under a trace: `Array::full` makes a concrete array wherever it is
        // called, as the host-filled one always was.
        let out =
            crate::core::eager::execute(&broadcast, &[Operand::Lit(lit)], &[lit.aval()], &[aval])
                .remove(0);
        out.filled_with(lit)
    }

    /// Zeros shaped like `x`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1i32, 2, 3], &[3]);
    /// let z = Array::zeros_like(&x);
    /// assert_eq!((z.shape(), z.dtype()), (x.shape(), DType::I32));
    /// assert_eq!(z.to_vec::<i32>(), vec![0, 0, 0]);
    /// ```
    #[track_caller]
    pub fn zeros_like(x: &Array) -> Array {
        Array::zeros(x.shape(), x.dtype())
    }
}
