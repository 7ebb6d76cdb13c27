//! Element types, their PJRT and StableHLO names, and JAX's type promotion.
//!
//! **jaxrs follows JAX with `jax_enable_x64` on.** 64-bit arrays stay 64-bit; a Rust scalar in
//! an operation is weakly typed and, on its own, takes JAX's x64 defaults: a Rust integer is a
//! weak `int64`, a Rust float a weak `float64`, a Rust bool a `bool`. Operands promote to the
//! least upper bound of their types on JAX's promotion lattice, where a weakly typed operand
//! stands for its kind (`int*`, `float*`), not for its width. Each arrow points to a type
//! above:
//!
//! ```text
//! bool -> int*                 int* -> uint8, int8
//! uint8 -> uint16, int16       uint16 -> uint32, int32      uint32 -> uint64, int64
//! int8 -> int16 -> int32 -> int64
//! uint64, int64 -> float*      float* -> bfloat16, float16 -> float32 -> float64
//! float* -> complex* -> complex64 -> complex128
//! float32 -> complex64         float64 -> complex128
//! ```
//!
//! So `int8 + uint8` is `int16`; `int64 + uint64` meets at `float*`, a weak `float64`;
//! `uint8_array + 300` stays `uint8` (the literal wraps to 44, as JAX converts a Python int);
//! `f16_array * 2.0` stays `float16`; `int32_array * 2.5` is a weak `float64`; `bfloat16 +
//! float16` is `float32`. A result at a weak kind is weak and takes the kind's default dtype.
//! [`DType::promote`] is the rule operations apply, [`result_type`] is `jnp.result_type`.
//!
//! Operations that need a float of an integer operand (`exp`, true division, `mean`, `var`)
//! use [`DType::to_inexact`] as JAX does: `float32` for bool and integers up to 32 bits,
//! `float64` for 64-bit ones (`int32 / int32` is `float32`). Reductions that add or multiply
//! (`sum`, `prod`) promote bool and integers narrower than 64 bits to `int64`, unsigned ones
//! to `uint64` ([`DType::promote_integer`]), so the sum of four int8 100s is 400; `cumsum`
//! promotes bool only, as `jnp.cumsum`.

use half::{bf16, f16};

/// The element type of an [`Array`](crate::core::array::Array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    BF16,
    F16,
    F32,
    F64,
    /// `complex64`: two f32s, real part first ([`C64`]).
    C64,
    /// `complex128`: two f64s, real part first ([`C128`]).
    C128,
}

/// A `complex64` element: num-complex's `Complex<f32>` (real part first, as XLA lays it out).
pub type C64 = num_complex::Complex<f32>;
/// A `complex128` element: num-complex's `Complex<f64>`.
pub type C128 = num_complex::Complex<f64>;

/// The kind of a dtype, in JAX's promotion order (bool < integer < float < complex).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DTypeKind {
    Bool,
    Int,
    Float,
    Complex,
}

impl DType {
    /// Every dtype jaxrs supports.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::BF16,
        DType::F16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// Size of one element in bytes (bool is one byte, as PJRT's PRED).
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::BF16 | DType::F16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// The `PJRT_Buffer_Type` value of this dtype (the C API's enum: PRED=1, S8..S64=2..5,
    /// U8..U64=6..9, F16=10, F32=11, F64=12, BF16=13, C64=14, C128=15).
    pub fn pjrt_element_type(self) -> i32 {
        match self {
            DType::Bool => 1,
            DType::I8 => 2,
            DType::I16 => 3,
            DType::I32 => 4,
            DType::I64 => 5,
            DType::U8 => 6,
            DType::U16 => 7,
            DType::U32 => 8,
            DType::U64 => 9,
            DType::F16 => 10,
            DType::F32 => 11,
            DType::F64 => 12,
            DType::BF16 => 13,
            DType::C64 => 14,
            DType::C128 => 15,
        }
    }

    /// The dtype of a `PJRT_Buffer_Type` value, if jaxrs supports it.
    pub fn from_pjrt_element_type(code: i32) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.pjrt_element_type() == code)
    }

    /// The MLIR element type name used in StableHLO (`f32`, `i1`, `ui8`, ...).
    pub fn mlir_name(self) -> &'static str {
        match self {
            DType::Bool => "i1",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "ui8",
            DType::U16 => "ui16",
            DType::U32 => "ui32",
            DType::U64 => "ui64",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "complex<f32>",
            DType::C128 => "complex<f64>",
        }
    }

    /// The name users and JAX know the dtype by (`float32`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// The short name jaxrs prints (`f32`, `bf16`, `i32`, `u8`, `bool`): in avals (`f32[3,4]`)
    /// and in an array's `Debug` (`dtype=f32`).
    pub(crate) fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    /// Parses [`DType::name`] back.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I8
            | DType::I16
            | DType::I32
            | DType::I64
            | DType::U8
            | DType::U16
            | DType::U32
            | DType::U64 => DTypeKind::Int,
            DType::BF16 | DType::F16 | DType::F32 | DType::F64 => DTypeKind::Float,
            DType::C64 | DType::C128 => DTypeKind::Complex,
        }
    }

    /// A real floating dtype (`bfloat16`, `float16`, `float32`, `float64`); complex ones are
    /// not (see [`DType::is_inexact`]).
    pub fn is_float(self) -> bool {
        self.kind() == DTypeKind::Float
    }

    pub fn is_complex(self) -> bool {
        self.kind() == DTypeKind::Complex
    }

    /// Floating or complex: numpy's `inexact`, the dtypes differentiation is defined on.
    pub fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The real dtype of a complex one's parts (`complex64` → `float32`); other dtypes are
    /// themselves (JAX's `dtypes.to_numeric_dtype` of `real`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// assert_eq!(DType::C64.real_dtype(), DType::F32);
    /// assert_eq!(DType::I32.real_dtype(), DType::I32);
    /// ```
    pub fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex dtype a value of this dtype becomes in a complex operation (JAX's
    /// `dtypes.to_complex_dtype`): `complex128` for `float64` and 64-bit integers,
    /// `complex64` for every narrower type; complex dtypes are themselves.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// assert_eq!(DType::F64.to_complex(), DType::C128);
    /// assert_eq!(DType::BF16.to_complex(), DType::C64);
    /// ```
    pub fn to_complex(self) -> DType {
        match self.to_inexact() {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }

    pub fn is_int(self) -> bool {
        self.kind() == DTypeKind::Int
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// The smallest and largest value of an integer dtype (`None` for bool and floats).
    pub fn int_range(self) -> Option<(i128, i128)> {
        if !self.is_int() {
            return None;
        }
        let bits = 8 * self.size_in_bytes() as u32;
        Some(if self.is_unsigned() {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// The dtype a weakly typed Rust scalar of this kind takes on its own: JAX's defaults with
    /// x64 enabled (`float64`, `int64`, `bool`).
    pub fn default_of_kind(kind: DTypeKind) -> DType {
        match kind {
            DTypeKind::Bool => DType::Bool,
            DTypeKind::Int => DType::I64,
            DTypeKind::Float => DType::F64,
            DTypeKind::Complex => DType::C128,
        }
    }

    /// The floating dtype an operation that needs one computes an operand of this dtype in
    /// (JAX's `dtypes.to_inexact_dtype`): `float32` for bool and integers up to 32 bits,
    /// `float64` for 64-bit integers; floats are themselves.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// assert_eq!(DType::I32.to_inexact(), DType::F32);
    /// assert_eq!(DType::U64.to_inexact(), DType::F64);
    /// assert_eq!(DType::BF16.to_inexact(), DType::BF16);
    /// ```
    pub fn to_inexact(self) -> DType {
        match self {
            DType::I64 | DType::U64 => DType::F64,
            d if d.is_inexact() => d,
            _ => DType::F32,
        }
    }

    /// The dtype `sum`, `prod` and their kin accumulate an operand of this dtype in (JAX's
    /// `_promote_integer_dtype`): bool and signed integers narrower than 64 bits become
    /// `int64`, unsigned ones `uint64`; other dtypes are themselves.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// assert_eq!(DType::Bool.promote_integer(), DType::I64);
    /// assert_eq!(DType::U8.promote_integer(), DType::U64);
    /// assert_eq!(DType::F16.promote_integer(), DType::F16);
    /// ```
    pub fn promote_integer(self) -> DType {
        match self {
            DType::Bool | DType::I8 | DType::I16 | DType::I32 => DType::I64,
            DType::U8 | DType::U16 | DType::U32 => DType::U64,
            d => d,
        }
    }

    /// JAX's promotion of two dtypes, either of which may be weakly typed (a Rust scalar): the
    /// type both operands of a binary operation are converted to (as [`result_type`], but a
    /// weak result keeps the dtype its operands bound to).
    ///
    /// Returns the result dtype and whether it is weak. A weak operand defers to a strong one
    /// of the same or a higher kind (`f16_array * 2.0` stays `f16`); a weak float meeting a
    /// strong integer becomes the default float, weakly typed.
    pub fn promote(a: DType, a_weak: bool, b: DType, b_weak: bool) -> (DType, bool) {
        lattice_result_type(&[(a, a_weak), (b, b_weak)])
    }
}

/// A node of JAX's promotion lattice: a dtype, or one of the weak kinds (`int*`, `float*`)
/// that a weakly typed operand stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Node {
    Dtype(DType),
    WeakInt,
    WeakFloat,
    WeakComplex,
}

impl Node {
    /// JAX's `_jax_type`: a weak operand stands for its kind, a strong one for its dtype.
    fn of(dtype: DType, weak: bool) -> Node {
        match (weak, dtype.kind()) {
            (false, _) | (true, DTypeKind::Bool) => Node::Dtype(dtype),
            (true, DTypeKind::Int) => Node::WeakInt,
            (true, DTypeKind::Float) => Node::WeakFloat,
            (true, DTypeKind::Complex) => Node::WeakComplex,
        }
    }

    /// The dtype of a value at this node: a weak kind's default (JAX's `dtype(int)`).
    fn dtype(self) -> DType {
        match self {
            Node::Dtype(d) => d,
            Node::WeakInt => DType::I64,
            Node::WeakFloat => DType::F64,
            Node::WeakComplex => DType::C128,
        }
    }

    fn index(self) -> usize {
        match self {
            Node::Dtype(d) => d as usize,
            Node::WeakInt => DType::ALL.len(),
            Node::WeakFloat => DType::ALL.len() + 1,
            Node::WeakComplex => DType::ALL.len() + 2,
        }
    }

    fn all() -> impl Iterator<Item = Node> {
        DType::ALL.into_iter().map(Node::Dtype).chain([
            Node::WeakInt,
            Node::WeakFloat,
            Node::WeakComplex,
        ])
    }

    /// The nodes immediately above this one (JAX's `_type_promotion_lattice`, standard
    /// mode, x64, without the types jaxrs lacks).
    fn parents(self) -> &'static [Node] {
        use DType::*;
        use Node::{Dtype as D, WeakComplex, WeakFloat, WeakInt};
        match self {
            D(Bool) => &[WeakInt],
            WeakInt => &[D(U8), D(I8)],
            D(U8) => &[D(I16), D(U16)],
            D(U16) => &[D(I32), D(U32)],
            D(U32) => &[D(I64), D(U64)],
            D(U64) | D(I64) => &[WeakFloat],
            D(I8) => &[D(I16)],
            D(I16) => &[D(I32)],
            D(I32) => &[D(I64)],
            WeakFloat => &[D(BF16), D(F16), WeakComplex],
            D(BF16) | D(F16) => &[D(F32)],
            D(F32) => &[D(F64), D(C64)],
            D(F64) => &[D(C128)],
            WeakComplex => &[D(C64)],
            D(C64) => &[D(C128)],
            D(C128) => &[],
        }
    }

    /// The set of nodes at or above this one, as a bit mask over [`Node::index`].
    fn upper_bounds(self) -> u32 {
        let mut set = 1u32 << self.index();
        for p in self.parents() {
            set |= p.upper_bounds();
        }
        set
    }
}

/// The least upper bound of `nodes` on the lattice: the common upper bound that is below
/// every other common upper bound.
fn least_upper_bound(nodes: &[Node]) -> Node {
    let common = nodes.iter().fold(u32::MAX, |acc, n| acc & n.upper_bounds());
    Node::all()
        .find(|c| common & (1 << c.index()) != 0 && common & !c.upper_bounds() == 0)
        .expect("the promotion lattice has a top (complex128)")
}

/// The dtype and weak type operands of these dtypes are converted to before an operation
/// (JAX's `lattice_result_type`, which `jnp`'s `promote_dtypes` applies): their least upper
/// bound on the lattice. A weak result keeps the dtype the bound lands on when every operand
/// is weak (two weak uint8s add as a weak uint8), and is the default of its kind (`int64`,
/// `float64`) when it lands on a weak kind.
///
/// # Panics
///
/// When `args` is empty.
pub(crate) fn lattice_result_type(args: &[(DType, bool)]) -> (DType, bool) {
    assert!(
        !args.is_empty(),
        "result_type: at least one dtype is required"
    );
    let first = args[0].0;
    let (dtype, weak) = if args.len() == 1 {
        args[0]
    } else if args.iter().all(|&(d, _)| d == first) && !args.iter().all(|&(_, w)| w) {
        (first, false)
    } else if args.iter().all(|&(_, w)| w) {
        // All weak: the bound of their strong counterparts, kept weak (JAX's rule, so that a
        // weak int16 does not survive meeting a weak uint8 as such).
        let nodes: Vec<Node> = args.iter().map(|&(d, _)| Node::Dtype(d)).collect();
        (least_upper_bound(&nodes).dtype(), true)
    } else {
        let nodes: Vec<Node> = args.iter().map(|&(d, w)| Node::of(d, w)).collect();
        let bound = least_upper_bound(&nodes);
        // Even strong operands can meet at a weak kind: int64 + uint64 is a weak float64.
        (bound.dtype(), bound != Node::Dtype(bound.dtype()))
    };
    (dtype, weak && dtype != DType::Bool)
}

/// `jnp.result_type` under `jax_enable_x64`, with `return_weak_type_flag=True`: the dtype of
/// an operation over operands of these dtypes, and whether it is weakly typed.
///
/// Each argument is a dtype and whether it is weak (a Rust scalar, [`Array::weak_scalar`],
/// or a value computed only from those). The result is the operands' least upper bound on
/// JAX's promotion lattice (the `dtype` module's docs, and the README's "Dtypes and promotion"); a weak result is reported, as JAX
/// reports it, at the default dtype of its kind (`int64`, `uint64`, `float64`). An
/// operation's own result keeps the bound's dtype ([`DType::promote`]): two weak uint8s add
/// as a weak uint8, while `result_type` says weak uint64.
///
/// [`Array::weak_scalar`]: crate::core::array::Array::weak_scalar
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::result_type;
///
/// assert_eq!(result_type(&[(DType::I8, false), (DType::U8, false)]), (DType::I16, false));
/// // A Rust integer meeting uint8 stays uint8; a Rust float meeting int32 is a weak float64.
/// assert_eq!(result_type(&[(DType::U8, false), (DType::I64, true)]), (DType::U8, false));
/// assert_eq!(result_type(&[(DType::I32, false), (DType::F64, true)]), (DType::F64, true));
/// // int64 and uint64 meet at a weak float64, as in JAX.
/// assert_eq!(result_type(&[(DType::I64, false), (DType::U64, false)]), (DType::F64, true));
/// assert_eq!(result_type(&[(DType::U8, true), (DType::U8, true)]), (DType::U64, true));
/// ```
///
/// # Panics
///
/// When `args` is empty.
pub fn result_type(args: &[(DType, bool)]) -> (DType, bool) {
    let (dtype, weak) = lattice_result_type(args);
    if !weak {
        return (dtype, false);
    }
    let default = match dtype.kind() {
        DTypeKind::Int if dtype.is_unsigned() => DType::U64,
        kind => DType::default_of_kind(kind),
    };
    (default, true)
}

/// A Rust type that can be an element of an [`Array`](crate::core::array::Array).
pub trait Element: Copy + Send + Sync + std::fmt::Debug + PartialEq + 'static {
    const DTYPE: DType;
    /// Converts to f64 (for printing, comparisons in tests, and literal encoding).
    fn to_f64(self) -> f64;
    /// Converts from f64, as `as` casts do.
    fn from_f64(v: f64) -> Self;
    /// The value as an integer, exactly for integer types (a `u64` above `i64::MAX` or an
    /// `i64` beyond 2^53 does not survive [`Element::to_f64`]); floats truncate as `as` does.
    fn to_i128(self) -> i128 {
        self.to_f64() as i128
    }
    /// The value as a complex number's real and imaginary parts (a real value's imaginary
    /// part is 0). [`Element::to_f64`] of a complex element is its real part.
    fn to_parts(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
    /// From a complex number's parts: a real type keeps the real part, as numpy's `astype`.
    fn from_parts(re: f64, _im: f64) -> Self {
        Self::from_f64(re)
    }
}

macro_rules! element {
    ($t:ty, $d:ident, |$x:ident| $to:expr, |$v:ident| $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 {
                let $x = self;
                $to
            }
            fn from_f64($v: f64) -> Self {
                $from
            }
        }
    };
}

macro_rules! int_element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
        }
    )*};
}

element!(bool, Bool, |x| if x { 1.0 } else { 0.0 }, |v| v != 0.0);
int_element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);
element!(bf16, BF16, |x| x.to_f64(), |v| bf16::from_f64(v));
element!(f16, F16, |x| x.to_f64(), |v| f16::from_f64(v));
element!(f32, F32, |x| x as f64, |v| v as f32);
element!(f64, F64, |x| x, |v| v);

macro_rules! complex_element {
    ($($t:ty => $d:ident, $part:ty),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            fn from_f64(v: f64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            fn to_parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn from_parts(re: f64, im: f64) -> Self {
                <$t>::new(re as $part, im as $part)
            }
        }
    )*};
}

complex_element!(C64 => C64, f32, C128 => C128, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_jax() {
        use DType::*;
        assert_eq!(DType::promote(F16, false, F64, true), (F16, false));
        assert_eq!(DType::promote(I32, false, F64, true), (F64, true));
        assert_eq!(DType::promote(I32, false, F32, false), (F32, false));
        assert_eq!(DType::promote(BF16, false, F16, false), (F32, false));
        assert_eq!(DType::promote(U8, false, I8, false), (I16, false));
        assert_eq!(DType::promote(U16, false, I16, false), (I32, false));
        assert_eq!(DType::promote(U32, false, I32, false), (I64, false));
        assert_eq!(DType::promote(U64, false, I8, false), (F64, true));
        assert_eq!(DType::promote(U8, false, I64, true), (U8, false));
        assert_eq!(DType::promote(Bool, false, I64, true), (I64, true));
        assert_eq!(DType::promote(Bool, false, Bool, true), (Bool, false));
        assert_eq!(DType::promote(F32, false, F64, false), (F64, false));
        // Both weak: the bound of the strong types, kept weak; `result_type` reports it at its
        // kind's default.
        assert_eq!(DType::promote(U8, true, U8, true), (U8, true));
        assert_eq!(DType::promote(U8, true, I8, true), (I16, true));
        assert_eq!(DType::promote(F16, true, I8, true), (F16, true));
        assert_eq!(result_type(&[(U8, true), (I8, true)]), (I64, true));
        assert_eq!(result_type(&[(F16, true), (I8, true)]), (F64, true));
        // Complex: float32 meets complex64, float64 lifts it to complex128, and a Rust
        // complex scalar is weak.
        assert_eq!(DType::promote(F32, false, C64, false), (C64, false));
        assert_eq!(DType::promote(F64, false, C64, false), (C128, false));
        assert_eq!(DType::promote(F32, false, C128, true), (C64, false));
        assert_eq!(DType::promote(I32, false, C128, true), (C128, true));
        assert_eq!(DType::promote(BF16, false, C64, false), (C64, false));
        assert_eq!(DType::promote(C64, false, F64, true), (C64, false));
    }

    #[test]
    fn int_ranges() {
        assert_eq!(DType::U8.int_range(), Some((0, 255)));
        assert_eq!(DType::I16.int_range(), Some((-32768, 32767)));
        assert_eq!(DType::U64.int_range(), Some((0, u64::MAX as i128)));
        assert_eq!(DType::F32.int_range(), None);
    }
}
