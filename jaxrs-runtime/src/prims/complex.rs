//! The primitives that take complex numbers apart and put them together: `real`, `imag`,
//! `conj` and `complex`. They are the non-holomorphic ones, so their transposes are written
//! out (as JAX's `deflinear2` rules) rather than read off a derivative: under JAX's
//! convention a cotangent is pulled back by the plain transpose of the real-linear tangent
//! map, which for `imag` negates and for `conj` conjugates.

use super::{arity, same_shape_dtype};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding_types::{elementwise_rule, SpecRule};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;

/// Which part of a complex number a [`ComplexPart`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// `lax.real`: the real part, in the real dtype.
    Real,
    /// `lax.imag`: the imaginary part, in the real dtype.
    Imag,
    /// `lax.conj`: the complex conjugate, in the same dtype.
    Conj,
}

/// `y = real(x)`, `imag(x)` or `conj(x)` of a complex `x`, elementwise.
#[derive(Debug, Clone, Copy)]
pub struct ComplexPart(pub Part);

impl ComplexPart {
    /// The same map on a tangent: all three are real-linear.
    fn apply(self, t: &Array) -> Array {
        bind1(self, &[Operand::from(t)])
    }
}

impl Primitive for ComplexPart {
    fn name(&self) -> &'static str {
        match self.0 {
            Part::Real => "real",
            Part::Imag => "imag",
            Part::Conj => "conj",
        }
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let x = &inputs[0];
        if !x.dtype.is_complex() {
            return Err(format!("needs a complex dtype, got {}", x.dtype.name()));
        }
        let dtype = match self.0 {
            Part::Real | Part::Imag => x.dtype.real_dtype(),
            Part::Conj => x.dtype,
        };
        Ok(vec![x.with_dtype(dtype)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0].as_ref().map(|t| self.apply(t))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = cts[0].as_ref() else {
            return vec![None];
        };
        let zeros = || Array::zeros(g.shape(), g.dtype());
        vec![Some(match self.0 {
            // The transpose of `t -> re t` is `g -> g + 0i`; of `t -> im t`, `g -> 0 - g i`.
            Part::Real => complex(g, &zeros()),
            Part::Imag => complex(&zeros(), &-g),
            Part::Conj => self.apply(g),
        })]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        vec![match self.0 {
            Part::Real => cx.op1("stablehlo.real", &[&ins[0]], &[a], "", &out[0]),
            Part::Imag => cx.op1("stablehlo.imag", &[&ins[0]], &[a], "", &out[0]),
            // conj(a + bi) = complex(a, -b), as JAX lowers it.
            Part::Conj => {
                let part = a.with_dtype(a.dtype.real_dtype());
                let re = cx.op1("stablehlo.real", &[&ins[0]], &[a], "", &part);
                let im = cx.op1("stablehlo.imag", &[&ins[0]], &[a], "", &part);
                let neg = cx.op1("stablehlo.negate", &[&im], &[&part], "", &part);
                cx.op1(
                    "stablehlo.complex",
                    &[&re, &neg],
                    &[&part, &part],
                    "",
                    &out[0],
                )
            }
        }]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(*self, args, dims)
    }
    as_any!();
}

/// `z = x + y i` of two real arrays of one shape and dtype (`lax.complex`).
#[derive(Debug, Clone, Copy)]
pub struct MakeComplex;

impl Primitive for MakeComplex {
    fn name(&self) -> &'static str {
        "complex"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        same_shape_dtype(inputs)?;
        let d = inputs[0].dtype;
        if !matches!(d, DType::F32 | DType::F64) {
            return Err(format!(
                "needs float32 or float64 parts (complex64 and complex128 are the only complex \
                 dtypes), got {}",
                d.name()
            ));
        }
        Ok(vec![inputs[0]
            .with_dtype(d.to_complex())
            .weak(inputs[0].weak && inputs[1].weak)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        if t.iter().all(Option::is_none) {
            return vec![None];
        }
        let part = |t: &Option<Array>| {
            t.clone()
                .unwrap_or_else(|| Array::zeros(outs[0].shape(), outs[0].dtype().real_dtype()))
        };
        vec![Some(complex(&part(&t[0]), &part(&t[1])))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = cts[0].as_ref() else {
            return vec![None, None];
        };
        // JAX's transpose: `g -> (re g, -im g)`.
        vec![
            wanted[0].then(|| ComplexPart(Part::Real).apply(g)),
            wanted[1].then(|| -ComplexPart(Part::Imag).apply(g)),
        ]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        vec![cx.op1(
            "stablehlo.complex",
            &[&ins[0], &ins[1]],
            &[&in_avals[0], &in_avals[1]],
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::elementwise(*self, args, dims, axis_size)
    }
    as_any!();
}

/// `x + y i` of two real arrays of one shape and dtype (the primitive, without broadcasting
/// or promotion; `lax::complex` does those).
pub(crate) fn complex(x: &Array, y: &Array) -> Array {
    bind1(MakeComplex, &[Operand::from(x), Operand::from(y)])
}
