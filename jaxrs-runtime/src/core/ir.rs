//! The IR: a jaxpr is a list of equations over typed variables.
//!
//! Tracing is the only way in ([`crate::core::trace`]), lowering the only way out
//! ([`crate::core::lower`]); every transformation is a pass `Jaxpr -> Jaxpr` in between.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::primitive::Prim;
use crate::core::trace::Operand;
use crate::dtype::{DType, DTypeKind, Element};
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

/// A variable of a jaxpr: an index into its table of avals.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Var(pub u32);

/// A scalar constant written into the program (Rust scalars in operations).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Literal {
    pub value: LitValue,
    pub dtype: DType,
    pub weak: bool,
}

/// A literal's value, in the widest type of its kind (an `i128` holds every `i64` and `u64`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LitValue {
    Float(f64),
    Int(i128),
    Bool(bool),
    /// Real and imaginary parts.
    Complex(f64, f64),
}

impl LitValue {
    /// The value as a float; a complex value's real part (numpy's `astype`, discarding the
    /// imaginary part).
    pub fn as_f64(self) -> f64 {
        match self {
            LitValue::Float(v) | LitValue::Complex(v, _) => v,
            LitValue::Int(v) => v as f64,
            LitValue::Bool(v) => v as u8 as f64,
        }
    }
}

/// `v` wrapped into the range of the integer `dtype`, two's complement, as numpy's `astype`
/// (and so JAX) converts a Python int: `300` as `uint8` is 44, `-1` is 255.
fn wrap_int(v: i128, dtype: DType) -> i128 {
    let bits = 8 * dtype.size_in_bytes() as u32;
    let low = v & ((1i128 << bits) - 1);
    if !dtype.is_unsigned() && low >= 1i128 << (bits - 1) {
        low - (1i128 << bits)
    } else {
        low
    }
}

/// A float converted to the integer `dtype` as XLA's `convert` does (and JAX with it):
/// truncated toward zero, saturated at the dtype's bounds, NaN to 0 (Rust's `as`).
fn float_to_int(f: f64, dtype: DType) -> i128 {
    match dtype {
        DType::I8 => f as i8 as i128,
        DType::I16 => f as i16 as i128,
        DType::I32 => f as i32 as i128,
        DType::I64 => f as i64 as i128,
        DType::U8 => f as u8 as i128,
        DType::U16 => f as u16 as i128,
        DType::U32 => f as u32 as i128,
        DType::U64 => f as u64 as i128,
        other => unreachable!("float_to_int: {other:?} is not an integer dtype"),
    }
}

/// The literal value of a Rust scalar, exactly: 64-bit integers do not all survive a trip
/// through f64.
fn lit_value<T: Element>(v: T) -> LitValue {
    match T::DTYPE.kind() {
        DTypeKind::Float => LitValue::Float(v.to_f64()),
        DTypeKind::Int => LitValue::Int(v.to_i128()),
        DTypeKind::Bool => LitValue::Bool(v.to_f64() != 0.0),
        DTypeKind::Complex => {
            let (re, im) = v.to_parts();
            LitValue::Complex(re, im)
        }
    }
}

impl Literal {
    /// `value` converted to `dtype`, as `astype` converts an f64.
    pub fn from_f64(value: f64, dtype: DType, weak: bool) -> Literal {
        Literal {
            value: LitValue::Float(value),
            dtype: DType::F64,
            weak: false,
        }
        .cast(dtype, weak)
    }

    /// A strongly typed integer literal of `dtype` (an index, a start), wrapped into its range.
    pub fn int(value: i64, dtype: DType) -> Literal {
        Literal {
            value: LitValue::Int(value as i128),
            dtype: DType::I64,
            weak: false,
        }
        .cast(dtype, false)
    }

    /// The strongly typed literal of a Rust scalar, in its own dtype (`Array::scalar(2i32)`).
    pub fn of<T: Element>(v: T) -> Literal {
        Literal {
            value: lit_value(v),
            dtype: T::DTYPE,
            weak: false,
        }
    }

    /// The weakly typed literal of a Rust scalar, in the default dtype of its kind (JAX's
    /// Python-scalar rule: `f16_array * 2.0` stays `f16`). Its value is kept exactly (a `u64`
    /// above `i64::MAX` included) until it meets the dtype it is converted to.
    pub fn weak_scalar<T: Element>(v: T) -> Literal {
        Literal {
            value: lit_value(v),
            dtype: DType::default_of_kind(T::DTYPE.kind()),
            weak: true,
        }
    }

    /// The literal converted to `dtype`, as `convert_element_type` would: integers wrap into
    /// an integer dtype's range (JAX's rule for a Python int: `uint8_array + 300` adds 44),
    /// floats truncate and saturate, anything non-zero is `true`.
    pub fn cast(self, dtype: DType, weak: bool) -> Literal {
        let value = match (self.value, dtype.kind()) {
            (v, DTypeKind::Float) => LitValue::Float(v.as_f64()),
            (LitValue::Float(f), DTypeKind::Int) => LitValue::Int(float_to_int(f, dtype)),
            (LitValue::Int(i), DTypeKind::Int) => LitValue::Int(wrap_int(i, dtype)),
            (LitValue::Bool(b), DTypeKind::Int) => LitValue::Int(b as i128),
            // numpy and XLA drop the imaginary part going to a real dtype.
            (LitValue::Complex(re, _), DTypeKind::Int) => LitValue::Int(float_to_int(re, dtype)),
            (LitValue::Int(i), DTypeKind::Bool) => LitValue::Bool(i != 0),
            (LitValue::Complex(re, im), DTypeKind::Bool) => LitValue::Bool(re != 0.0 || im != 0.0),
            (v, DTypeKind::Bool) => LitValue::Bool(v.as_f64() != 0.0),
            (LitValue::Complex(re, im), DTypeKind::Complex) => LitValue::Complex(re, im),
            (v, DTypeKind::Complex) => LitValue::Complex(v.as_f64(), 0.0),
        };
        // A complex64 literal holds f32 parts, as a float32 one holds an f32.
        let value = match (value, dtype) {
            (LitValue::Complex(re, im), DType::C64) => {
                LitValue::Complex(re as f32 as f64, im as f32 as f64)
            }
            (v, _) => v,
        };
        Literal { value, dtype, weak }
    }

    pub fn aval(&self) -> Aval {
        Aval::scalar(self.dtype).weak(self.weak)
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            LitValue::Float(v) => write!(f, "{v:?}")?,
            LitValue::Int(v) => write!(f, "{v}")?,
            LitValue::Bool(v) => write!(f, "{v}")?,
            LitValue::Complex(re, im) => write!(f, "({re:?}{im:+?}j)")?,
        }
        write!(f, ":{}", self.aval())
    }
}

/// An operand of an equation: a variable or a literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Atom {
    Var(Var),
    Lit(Literal),
}

/// The values of a jaxpr's variables during one evaluation by an interpreter: an array, or
/// whatever an interpreter pairs with it (a batch dim), per variable.
pub struct Env<T> {
    values: Vec<Option<T>>,
    /// The interpreter, named when a variable is read before it is set (a bug).
    interpreter: &'static str,
}

impl<T> Env<T> {
    /// No variable of `jaxpr` set yet.
    pub fn new(jaxpr: &Jaxpr, interpreter: &'static str) -> Env<T> {
        Env {
            values: (0..jaxpr.avals.len()).map(|_| None).collect(),
            interpreter,
        }
    }

    /// Gives `v` its value.
    pub fn set(&mut self, v: Var, value: T) {
        self.values[v.0 as usize] = Some(value);
    }

    /// The value of `v`, which must be set.
    pub fn get(&self, v: Var) -> &T {
        self.try_get(v)
            .unwrap_or_else(|| panic!("{}: v{} has no value", self.interpreter, v.0))
    }

    /// The value of `v`, if it has one yet.
    pub fn try_get(&self, v: Var) -> Option<&T> {
        self.values[v.0 as usize].as_ref()
    }
}

impl Env<Array> {
    /// The operand `a` stands for: its variable's array (borrowed) or its literal.
    pub fn operand(&self, a: &Atom) -> Operand<'_> {
        match a {
            Atom::Var(v) => Operand::from(self.get(*v)),
            Atom::Lit(l) => Operand::Lit(*l),
        }
    }

    /// The array `a` stands for; a literal becomes a concrete 0-d array.
    pub fn read(&self, a: &Atom) -> Array {
        match a {
            Atom::Var(v) => self.get(*v).clone(),
            Atom::Lit(l) => Array::from_literal(*l),
        }
    }
}

/// One equation: `outputs = prim[params](inputs)`, remembering the user's source line.
#[derive(Clone)]
pub struct Eqn {
    pub prim: Prim,
    pub inputs: Vec<Atom>,
    pub outputs: Vec<Var>,
    pub loc: &'static Location<'static>,
    /// The `named_scope`s the equation was bound in, relative to its jaxpr's trace
    /// (`"block/attention"`), or `None` outside any.
    pub scope: Option<Arc<str>>,
}

/// A typed program: inputs, constants (captured arrays lifted into inputs), equations and
/// outputs. Variables index `avals`.
#[derive(Clone, Default)]
pub struct Jaxpr {
    pub constvars: Vec<Var>,
    pub invars: Vec<Var>,
    pub eqns: Vec<Eqn>,
    pub outvars: Vec<Atom>,
    pub avals: Vec<Aval>,
}

/// A jaxpr with the values of its constants (concrete arrays, or tracers of an outer trace).
#[derive(Clone)]
pub struct ClosedJaxpr {
    pub jaxpr: Jaxpr,
    pub consts: Vec<Array>,
}

impl Jaxpr {
    pub fn aval(&self, v: Var) -> &Aval {
        &self.avals[v.0 as usize]
    }

    pub fn atom_aval(&self, a: &Atom) -> Aval {
        match a {
            Atom::Var(v) => self.aval(*v).clone(),
            Atom::Lit(l) => l.aval(),
        }
    }

    /// Adds a variable of type `aval`.
    pub fn new_var(&mut self, aval: Aval) -> Var {
        self.avals.push(aval);
        Var(self.avals.len() as u32 - 1)
    }

    pub fn in_avals(&self) -> Vec<Aval> {
        self.invars.iter().map(|v| self.aval(*v).clone()).collect()
    }

    pub fn out_avals(&self) -> Vec<Aval> {
        self.outvars.iter().map(|a| self.atom_aval(a)).collect()
    }

    /// Checks that every variable is defined before use, once, and that every equation's
    /// output types are what its primitive infers from its input types.
    pub fn typecheck(&self) -> Result<(), String> {
        let mut defined = vec![false; self.avals.len()];
        let mut define = |v: Var, what: &str| -> Result<(), String> {
            let slot = defined
                .get_mut(v.0 as usize)
                .ok_or_else(|| format!("{what} v{} has no aval", v.0))?;
            if *slot {
                return Err(format!("v{} defined twice ({what})", v.0));
            }
            *slot = true;
            Ok(())
        };
        for v in self.constvars.iter().chain(&self.invars) {
            define(*v, "input")?;
        }
        let mut defined_now = defined.clone();
        for (i, e) in self.eqns.iter().enumerate() {
            for a in &e.inputs {
                if let Atom::Var(v) = a {
                    if !defined_now.get(v.0 as usize).copied().unwrap_or(false) {
                        return Err(format!(
                            "eqn {i} ({}) uses v{} before its definition",
                            e.prim.name(),
                            v.0
                        ));
                    }
                }
            }
            let in_avals: Vec<Aval> = e.inputs.iter().map(|a| self.atom_aval(a)).collect();
            let out = e
                .prim
                .abstract_eval(&in_avals)
                .map_err(|m| format!("eqn {i} ({}): {m}", e.prim.name()))?;
            if out.len() != e.outputs.len() {
                return Err(format!(
                    "eqn {i} ({}): {} outputs, rule gives {}",
                    e.prim.name(),
                    e.outputs.len(),
                    out.len()
                ));
            }
            for (v, a) in e.outputs.iter().zip(&out) {
                if !self.aval(*v).same_type(a) {
                    return Err(format!(
                        "eqn {i} ({}): output v{} is {} but the rule gives {}",
                        e.prim.name(),
                        v.0,
                        self.aval(*v),
                        a
                    ));
                }
                let slot = defined_now
                    .get_mut(v.0 as usize)
                    .ok_or("output var out of range")?;
                if *slot {
                    return Err(format!("v{} defined twice (eqn {i})", v.0));
                }
                *slot = true;
            }
        }
        for a in &self.outvars {
            if let Atom::Var(v) = a {
                if !defined_now.get(v.0 as usize).copied().unwrap_or(false) {
                    return Err(format!("output v{} is never defined", v.0));
                }
            }
        }
        Ok(())
    }
}

/// The readable form, close to JAX's:
/// `{ lambda c0:f32[3] ; a:f32[3] b:f32[3]. let d:f32[3] = add a b in (d) }`.
impl fmt::Display for Jaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |v: Var| var_name(v.0);
        let atom = |a: &Atom| match a {
            Atom::Var(v) => name(*v),
            Atom::Lit(l) => l.to_string(),
        };
        let decl = |v: &Var| format!("{}:{}", name(*v), self.aval(*v));
        f.write_str("{ lambda ")?;
        f.write_str(
            &self
                .constvars
                .iter()
                .map(decl)
                .collect::<Vec<_>>()
                .join(" "),
        )?;
        f.write_str(" ; ")?;
        f.write_str(&self.invars.iter().map(decl).collect::<Vec<_>>().join(" "))?;
        f.write_str(". let\n")?;
        for e in &self.eqns {
            let outs = e.outputs.iter().map(decl).collect::<Vec<_>>().join(" ");
            let ins = e.inputs.iter().map(atom).collect::<Vec<_>>().join(" ");
            let params = e.prim.params_string();
            if params.is_empty() {
                writeln!(f, "    {outs} = {} {ins}", e.prim.name())?;
            } else {
                writeln!(f, "    {outs} = {}[{params}] {ins}", e.prim.name())?;
            }
        }
        let outs = self.outvars.iter().map(atom).collect::<Vec<_>>().join(", ");
        write!(f, "  in ({outs}) }}")
    }
}

impl fmt::Debug for Jaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ClosedJaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.jaxpr, f)
    }
}

/// `a`, `b`, ..., `z`, `ba`, `bb`, ... like JAX's printer.
fn var_name(mut i: u32) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (i % 26) as u8);
        i /= 26;
        if i == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).expect("ascii")
}
