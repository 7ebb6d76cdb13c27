//! Element types, their PJRT and StableHLO names, and JAX's type promotion.

use half::{bf16, f16};

/// The element type of an [`Array`](crate::core::array::Array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I32,
    I64,
    U8,
    U32,
    BF16,
    F16,
    F32,
    F64,
}

/// The kind of a dtype, in JAX's promotion order (bool < integer < float).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DTypeKind {
    Bool,
    Int,
    Float,
}

impl DType {
    /// Every dtype jaxrs supports.
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::I8,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U32,
        DType::BF16,
        DType::F16,
        DType::F32,
        DType::F64,
    ];

    /// Size of one element in bytes (bool is one byte, as PJRT's PRED).
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::BF16 | DType::F16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// The `PJRT_Buffer_Type` value of this dtype.
    pub fn pjrt_element_type(self) -> i32 {
        match self {
            DType::Bool => 1,
            DType::I8 => 2,
            DType::I32 => 4,
            DType::I64 => 5,
            DType::U8 => 6,
            DType::U32 => 8,
            DType::F16 => 10,
            DType::F32 => 11,
            DType::F64 => 12,
            DType::BF16 => 13,
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
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "ui8",
            DType::U32 => "ui32",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// The name users and JAX know the dtype by (`float32`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U32 => "uint32",
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// The short name jaxrs prints (`f32`, `bf16`, `i32`, `u8`, `bool`): in avals (`f32[3,4]`)
    /// and in an array's `Debug` (`dtype=f32`).
    pub(crate) fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U32 => "u32",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Parses [`DType::name`] back.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I8 | DType::I32 | DType::I64 | DType::U8 | DType::U32 => DTypeKind::Int,
            DType::BF16 | DType::F16 | DType::F32 | DType::F64 => DTypeKind::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.kind() == DTypeKind::Float
    }

    pub fn is_int(self) -> bool {
        self.kind() == DTypeKind::Int
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U32)
    }

    /// The dtype a weakly typed Rust scalar of this kind takes on its own (JAX's defaults with
    /// x64 disabled: `float32`, `int32`, `bool`).
    pub fn default_of_kind(kind: DTypeKind) -> DType {
        match kind {
            DTypeKind::Bool => DType::Bool,
            DTypeKind::Int => DType::I32,
            DTypeKind::Float => DType::F32,
        }
    }

    /// JAX's promotion of two dtypes, either of which may be weakly typed (a Rust scalar).
    ///
    /// Returns the result dtype and whether it is weak. A weak operand defers to a strong one
    /// of the same or a higher kind (`f16_array * 2.0` stays `f16`); a weak float meeting a
    /// strong integer becomes the default float.
    pub fn promote(a: DType, a_weak: bool, b: DType, b_weak: bool) -> (DType, bool) {
        if a == b {
            return (a, a_weak && b_weak);
        }
        match (a_weak, b_weak) {
            (true, true) => {
                let (hi, _) = if a.kind() >= b.kind() { (a, b) } else { (b, a) };
                (hi, true)
            }
            (true, false) => promote_weak_strong(a, b),
            (false, true) => promote_weak_strong(b, a),
            (false, false) => (promote_strong(a, b), false),
        }
    }
}

fn promote_weak_strong(weak: DType, strong: DType) -> (DType, bool) {
    if weak.kind() <= strong.kind() {
        (strong, false)
    } else {
        (DType::default_of_kind(weak.kind()), true)
    }
}

fn promote_strong(a: DType, b: DType) -> DType {
    use DType::*;
    match (a.kind(), b.kind()) {
        (DTypeKind::Bool, _) => b,
        (_, DTypeKind::Bool) => a,
        (DTypeKind::Float, DTypeKind::Int) => a,
        (DTypeKind::Int, DTypeKind::Float) => b,
        (DTypeKind::Float, DTypeKind::Float) => match (a, b) {
            (BF16, F16) | (F16, BF16) => F32,
            _ => float_rank_max(a, b),
        },
        (DTypeKind::Int, DTypeKind::Int) => {
            let signed = |d: DType| !d.is_unsigned();
            if signed(a) == signed(b) {
                if a.size_in_bytes() >= b.size_in_bytes() {
                    a
                } else {
                    b
                }
            } else {
                let (s, u) = if signed(a) { (a, b) } else { (b, a) };
                // A signed type wide enough for both; JAX's lattice, without int16.
                match (s, u) {
                    (I8, U8) => I32,
                    (I64, _) | (_, U32) => I64,
                    _ => I32,
                }
            }
        }
    }
}

fn float_rank_max(a: DType, b: DType) -> DType {
    let rank = |d: DType| match d {
        DType::BF16 | DType::F16 => 0,
        DType::F32 => 1,
        _ => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// A Rust type that can be an element of an [`Array`](crate::core::array::Array).
pub trait Element: Copy + Send + Sync + std::fmt::Debug + PartialEq + 'static {
    const DTYPE: DType;
    /// Converts to f64 (for printing, comparisons in tests, and literal encoding).
    fn to_f64(self) -> f64;
    /// Converts from f64, as `as` casts do.
    fn from_f64(v: f64) -> Self;
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

element!(bool, Bool, |x| if x { 1.0 } else { 0.0 }, |v| v != 0.0);
element!(i8, I8, |x| x as f64, |v| v as i8);
element!(i32, I32, |x| x as f64, |v| v as i32);
element!(i64, I64, |x| x as f64, |v| v as i64);
element!(u8, U8, |x| x as f64, |v| v as u8);
element!(u32, U32, |x| x as f64, |v| v as u32);
element!(bf16, BF16, |x| x.to_f64(), |v| bf16::from_f64(v));
element!(f16, F16, |x| x.to_f64(), |v| f16::from_f64(v));
element!(f32, F32, |x| x as f64, |v| v as f32);
element!(f64, F64, |x| x, |v| v);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_jax() {
        use DType::*;
        assert_eq!(DType::promote(F16, false, F32, true), (F16, false));
        assert_eq!(DType::promote(I32, false, F32, true), (F32, true));
        assert_eq!(DType::promote(I32, false, F32, false), (F32, false));
        assert_eq!(DType::promote(BF16, false, F16, false), (F32, false));
        assert_eq!(DType::promote(U8, false, I8, false), (I32, false));
        assert_eq!(DType::promote(Bool, false, I32, true), (I32, true));
        assert_eq!(DType::promote(F32, false, F64, false), (F64, false));
    }
}
