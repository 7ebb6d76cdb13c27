//! `Array`: one type for concrete device arrays and traced values.

use crate::aval::Aval;
use crate::core::client::{client, fail};
use crate::core::ir::{LitValue, Literal, Var};
use crate::core::print::{self, Elem};
use crate::core::sharding::Sharding;
use crate::core::trace::{trace_state, At, TraceState};
use crate::dtype::DType;
use crate::dtype::Element;
use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{Buffer, Device};
use std::fmt;
use std::sync::Arc;

/// An empty vector with room for `len` host values (f64s or bytes) of an array of `shape` and
/// `dtype`, after [`check_shape`](crate::aval::check_shape): a shape that cannot exist, or
/// host memory that cannot hold it, is an `Error` at the user's line, not an abort in the
/// allocator.
#[track_caller]
pub(crate) fn host_vec<T>(op: &'static str, shape: &[usize], dtype: DType, len: usize) -> Vec<T> {
    crate::core::trace::check_shape(op, shape, dtype, std::panic::Location::caller());
    let mut values = Vec::new();
    if values.try_reserve_exact(len).is_err() {
        fail(Error::OutOfMemory {
            context: op,
            message: format!("{}{shape:?} does not fit in host memory", dtype.name()),
        })
    }
    values
}

/// An n-dimensional array: concrete (buffers on a device) or traced (a variable of an open
/// transformation). Cloning is cheap (a reference count); arrays are immutable.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// let y = (&x * 2.0).sum(None, false);
/// assert_eq!(y.item::<f32>(), 20.0);
/// ```
#[derive(Clone)]
pub struct Array(pub(crate) Arc<Repr>);

pub(crate) enum Repr {
    Concrete(Concrete),
    Traced(Tracer),
}

/// A value on devices: one buffer per device holding a piece (or a replica) of it, in
/// `sharding.devices()`' order. A buffer is shared with the arrays of
/// [`Array::addressable_shards`].
pub(crate) struct Concrete {
    pub aval: Aval,
    pub buffers: Vec<Arc<Buffer>>,
    pub sharding: Sharding,
    /// The one value every element holds, when the array was made from a Rust scalar
    /// (`Array::scalar`, `full`, `zeros`, `ones`): a trace meeting it writes the literal into
    /// the program (broadcast to the shape when it is not 0-d), as JAX's `jnp.zeros` under
    /// `jit` is a `broadcast_in_dim` of a literal, instead of lifting it into an input, so
    /// that XLA folds what is computed from it (threefry's zero high counters, an `at(0)`
    /// index). Rules that need an operand as an array (`Operand::to_array`) rely on it.
    pub literal: Option<Literal>,
}

/// A variable of the trace `trace_id`.
pub(crate) struct Tracer {
    pub aval: Aval,
    pub trace_id: u64,
    pub var: Var,
}

/// Reinterprets a slice of plain elements as bytes.
fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: every `Element` is a plain value type without padding (bool is one byte holding
    // 0 or 1), so its memory is a valid byte slice of size_of::<T>() * len.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, size_of_val(data)) }
}

impl Array {
    pub(crate) fn from_tracer(t: Tracer) -> Array {
        Array(Arc::new(Repr::Traced(t)))
    }

    /// An array held whole by `buffer`, which lives on `device`.
    pub(crate) fn from_buffer(buffer: Buffer, aval: Aval, device: Device) -> Array {
        Array(Arc::new(Repr::Concrete(Concrete {
            aval,
            buffers: vec![Arc::new(buffer)],
            sharding: Sharding::SingleDevice(device),
            literal: None,
        })))
    }

    fn from_host_bytes(bytes: &[u8], aval: Aval) -> Array {
        let mut span = crate::core::profile::span("transfer", "upload", || aval.to_string());
        span.arg("bytes", || bytes.len().to_string());
        let client = client();
        let dims: Vec<i64> = aval.shape.iter().map(|&d| d as i64).collect();
        let device = crate::core::client::current_default_device();
        let buffer = client
            .buffer_from_host(bytes, aval.dtype, &dims, &device)
            .unwrap_or_else(|e| fail(e));
        Array::from_buffer(buffer, aval, device)
    }

    /// An array of `shape` holding `data` in row-major order.
    ///
    /// Panics when `data.len()` is not the product of `shape`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// assert_eq!(x.shape(), &[2, 3]);
    /// assert_eq!(x.dtype(), DType::F32);
    /// assert_eq!(x.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// ```
    #[track_caller]
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Array {
        Array::from_slice(&data, shape)
    }

    /// Like [`Array::from_vec`], copying from a slice.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let data = [1i32, 2, 3, 4];
    /// let x = Array::from_slice(&data, &[2, 2]);
    /// assert_eq!(x.dtype(), DType::I32);
    /// assert_eq!(x.to_vec::<i32>(), data);
    /// ```
    #[track_caller]
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Array {
        let n = crate::aval::element_count(shape);
        if n != Some(data.len()) {
            let n = n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
            let loc = std::panic::Location::caller();
            panic!(
                "from_slice: {} elements do not fill shape {shape:?} ({n} elements) {}",
                data.len(),
                At::line(loc)
            );
        }
        Array::from_host_bytes(as_bytes(data), Aval::new(shape.to_vec(), T::DTYPE))
    }

    /// A 0-d array.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::scalar(2.5f64);
    /// assert_eq!((x.rank(), x.dtype()), (0, DType::F64));
    /// assert_eq!(x.item::<f64>(), 2.5);
    /// ```
    pub fn scalar<T: Element>(v: T) -> Array {
        // Remembered as a literal so that, met under a trace, it is a constant of the program
        // (as a Python scalar is in JAX's), not an input.
        Array::from_literal(Literal::of(v))
    }

    /// A weakly typed 0-d array: a Rust scalar, whose dtype defers to the other operand's in
    /// promotion (as Python scalars do in JAX).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::ones(&[2], DType::BF16);
    /// let weak = Array::weak_scalar(0.5f64);
    /// assert!(weak.is_weak());
    /// assert_eq!((&x * &weak).dtype(), DType::BF16);
    /// // A strongly typed f32 scalar promotes the product instead.
    /// assert_eq!((&x * &Array::scalar(0.5f32)).dtype(), DType::F32);
    /// ```
    pub fn weak_scalar<T: Element>(v: T) -> Array {
        Array::from_literal(Literal::weak_scalar(v))
    }

    /// A concrete 0-d array holding `lit`.
    pub(crate) fn from_literal(lit: Literal) -> Array {
        // Kept in its dtype's range, as the uploaded value is.
        let lit = lit.cast(lit.dtype, lit.weak);
        Array::from_host_bytes(&host_bytes_of(lit), lit.aval()).filled_with(lit)
    }

    /// `lit` repeated to `shape`, built on the host and uploaded once.
    pub(crate) fn from_literal_filled(lit: Literal, shape: &[usize]) -> Array {
        let one = host_bytes_of(lit);
        let n = crate::aval::element_count(shape).expect("a checked shape");
        let bytes: Vec<u8> = one.iter().copied().cycle().take(one.len() * n).collect();
        Array::from_host_bytes(&bytes, lit.aval().with_shape(shape.to_vec())).filled_with(lit)
    }

    /// This freshly uploaded array, remembering that every element is `lit`.
    pub(crate) fn filled_with(self, lit: Literal) -> Array {
        match Arc::try_unwrap(self.0) {
            Ok(Repr::Concrete(c)) => Array(Arc::new(Repr::Concrete(Concrete {
                literal: Some(lit),
                ..c
            }))),
            _ => unreachable!("a fresh array is concrete and unshared"),
        }
    }

    /// `start, start + step, ...` below `stop`, like `jnp.arange`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::arange(0.0, 1.0, 0.25, DType::F32);
    /// assert_eq!(x.to_vec::<f32>(), vec![0.0, 0.25, 0.5, 0.75]);
    /// let evens = Array::arange(2.0, 8.0, 2.0, DType::I32);
    /// assert_eq!(evens.to_vec::<i32>(), vec![2, 4, 6]);
    /// ```
    #[track_caller]
    pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Array {
        assert!(step != 0.0, "arange: step must not be zero");
        // A float-to-usize cast saturates: an infinite range is `usize::MAX`, refused below.
        let n = ((stop - start) / step).ceil().max(0.0) as usize;
        let mut values = host_vec("Array::arange", &[n], dtype, n);
        // Computed in the dtype's own precision, as JAX does (`arange(0, 1, 0.3, f32)` ends at
        // 0.90000004, not at the f32 nearest 0.9).
        match dtype {
            d if d.is_float() && d != DType::F64 => {
                values.extend((0..n).map(|i| (start as f32 + i as f32 * step as f32) as f64))
            }
            _ => values.extend((0..n).map(|i| start + i as f64 * step)),
        }
        Array::from_f64s(&values, &[n], dtype)
    }

    /// The `n x n` identity matrix.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let i = Array::eye(2, DType::F32);
    /// assert_eq!(i.to_vec::<f32>(), vec![1.0, 0.0, 0.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn eye(n: usize, dtype: DType) -> Array {
        let mut values = host_vec("Array::eye", &[n, n], dtype, n.saturating_mul(n));
        values.extend((0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }));
        Array::from_f64s(&values, &[n, n], dtype)
    }

    /// An array of `dtype` from f64 values (converted as `astype` would).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_f64s(&[1.5, -2.0, 3.7], &[3], DType::I32);
    /// assert_eq!(x.to_vec::<i32>(), vec![1, -2, 3]);
    /// ```
    #[track_caller]
    pub fn from_f64s(values: &[f64], shape: &[usize], dtype: DType) -> Array {
        let loc = std::panic::Location::caller();
        crate::core::trace::check_shape("Array::from_f64s", shape, dtype, loc);
        if crate::aval::element_count(shape) != Some(values.len()) {
            panic!(
                "from_f64s: {} values do not fill shape {shape:?} {}",
                values.len(),
                At::line(loc)
            );
        }
        let len = values.len() * dtype.size_in_bytes();
        let mut bytes: Vec<u8> = host_vec("Array::from_f64s", shape, dtype, len);
        for &v in values {
            let lit = Literal::from_f64(v, dtype, false);
            bytes.extend(host_bytes_of(lit));
        }
        Array::from_host_bytes(&bytes, Aval::new(shape.to_vec(), dtype))
    }

    /// An array of `shape` and `dtype` from its elements' bytes in little-endian order, as
    /// safetensors and numpy's `<` dtypes store them (booleans: any non-zero byte is `true`).
    /// Uploaded straight from `bytes`: no typed copy on the host.
    ///
    /// Panics when `bytes` is not exactly the size of such an array.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let bytes: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let x = Array::from_le_bytes(&bytes, &[2], DType::F32);
    /// assert_eq!(x.to_vec::<f32>(), vec![1.5, -2.0]);
    /// ```
    #[track_caller]
    pub fn from_le_bytes(bytes: &[u8], shape: &[usize], dtype: DType) -> Array {
        let loc = std::panic::Location::caller();
        crate::core::trace::check_shape("Array::from_le_bytes", shape, dtype, loc);
        let want = crate::aval::byte_size(shape, dtype).expect("a checked shape");
        if bytes.len() != want {
            panic!(
                "from_le_bytes: {} bytes do not fill {}{shape:?} ({want} bytes) {}",
                bytes.len(),
                dtype.name(),
                At::line(loc)
            );
        }
        let aval = Aval::new(shape.to_vec(), dtype);
        let width = dtype.size_in_bytes();
        if dtype == DType::Bool {
            let normalized: Vec<u8> = bytes.iter().map(|&b| u8::from(b != 0)).collect();
            Array::from_host_bytes(&normalized, aval)
        } else if cfg!(target_endian = "big") && width > 1 {
            let mut native = bytes.to_vec();
            native.chunks_exact_mut(width).for_each(<[u8]>::reverse);
            Array::from_host_bytes(&native, aval)
        } else {
            Array::from_host_bytes(bytes, aval)
        }
    }

    /// The abstract value: shape, dtype, weak type.
    pub fn aval(&self) -> &Aval {
        match &*self.0 {
            Repr::Concrete(c) => &c.aval,
            Repr::Traced(t) => &t.aval,
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.aval().shape
    }

    pub fn dtype(&self) -> DType {
        self.aval().dtype
    }

    pub fn rank(&self) -> usize {
        self.aval().rank()
    }

    /// The number of elements.
    pub fn size(&self) -> usize {
        self.aval().size()
    }

    /// Is the dtype weak (the array came from a Rust scalar)?
    pub fn is_weak(&self) -> bool {
        self.aval().weak
    }

    /// Does this array hold values (rather than stand for a traced variable)?
    pub fn is_concrete(&self) -> bool {
        matches!(&*self.0, Repr::Concrete(_))
    }

    /// How a concrete array lies on devices (`None` for a traced one). A new array lies
    /// whole on the default device (the first, unless a
    /// [`default_device`](crate::default_device) scope names another); the result of an
    /// operation on arrays of one device lies there; [`device_put`](crate::device_put) lays
    /// one out otherwise.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::ones(&[2], DType::F32);
    /// assert_eq!(x.sharding(), Some(&jaxrs::Sharding::SingleDevice(jaxrs::devices()[0])));
    /// ```
    pub fn sharding(&self) -> Option<&Sharding> {
        match &*self.0 {
            Repr::Concrete(c) => Some(&c.sharding),
            Repr::Traced(_) => None,
        }
    }

    /// The values of a concrete array; `what` (the method the user called) panics on a tracer.
    #[track_caller]
    pub(crate) fn concrete(&self, what: &str) -> &Concrete {
        match &*self.0 {
            Repr::Concrete(c) => c,
            Repr::Traced(t) => {
                let at = At::line(std::panic::Location::caller());
                let aval = &t.aval;
                match trace_state(t.trace_id) {
                    TraceState::Open(by) => {
                        let by = by.unwrap_or_else(|| "a transformation".into());
                        panic!(
                            "{what}: this array is traced inside {by} ({aval}), so it has no value \
                             yet, {at}. Its value exists only once the transformed function has \
                             run: return the array from it and read the result after the call. \
                             To choose on a traced value, use `cond`, `switch` or `where_` rather \
                             than `if`"
                        )
                    }
                    TraceState::Finished => panic!(
                        "{what}: this array is a tracer ({aval}) of a transformation that has \
                         finished, so it never has a value, {at}. It leaked out of the transformed \
                         function (kept in a variable that outlived the call); return arrays from \
                         the function instead"
                    ),
                }
            }
        }
    }

    /// The elements in row-major order (gathered from the shards of a sharded array).
    ///
    /// Panics when `T` is not the array's dtype, or when the array is traced.
    #[track_caller]
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        self.read_vec("to_vec").unwrap_or_else(|e| fail(e))
    }

    /// [`Array::to_vec`], returning device failures as errors.
    #[track_caller]
    pub fn try_to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.read_vec("try_to_vec")
    }

    /// The elements, for the reading method `what`, which errors name.
    #[track_caller]
    fn read_vec<T: Element>(&self, what: &str) -> Result<Vec<T>> {
        let c = self.concrete(what);
        if T::DTYPE != c.aval.dtype {
            let loc = std::panic::Location::caller();
            panic!(
                "{what}: the array is {} but {} was asked for (use astype first) {}",
                c.aval.dtype.name(),
                T::DTYPE.name(),
                At::line(loc)
            );
        }
        Ok(bytes_to_vec(&self.host_bytes()?))
    }

    /// The value of a one-element array.
    #[track_caller]
    pub fn item<T: Element>(&self) -> T {
        // A tracer first: whatever its size, it has no value.
        self.concrete("item");
        let n = self.size();
        if n != 1 {
            let loc = std::panic::Location::caller();
            panic!(
                "item: the array has {n} elements ({}), not one, {}",
                self.aval(),
                At::line(loc)
            );
        }
        self.read_vec::<T>("item").unwrap_or_else(|e| fail(e))[0]
    }

    /// The elements converted to f64, whatever the dtype (for printing and tests).
    #[track_caller]
    pub fn to_f64_vec(&self) -> Vec<f64> {
        self.concrete("to_f64_vec");
        if self.dtype().is_complex() {
            let loc = std::panic::Location::caller();
            panic!(
                "to_f64_vec: the array is {}; read it with to_vec::<C64>() (or C128), or take \
                 jnp::real / jnp::imag first {}",
                self.aval(),
                At::line(loc)
            );
        }
        self.try_f64s().unwrap_or_else(|e| fail(e))
    }

    /// Waits until the array's value is computed (dispatch is asynchronous) and returns it,
    /// as JAX's `x.block_until_ready()`. A failure of the computation that made it (a device
    /// error, a donated buffer) is the environment's: a panic that [`crate::try_run`] returns
    /// as its [`Error`].
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let y = (Array::ones(&[3], DType::F32) * 2.0).block_until_ready().clone();
    /// assert_eq!(y.to_vec::<f32>(), vec![2.0; 3]);
    /// let waited = jaxrs::try_run(|| {
    ///     Array::ones(&[3], DType::F32).block_until_ready();
    /// });
    /// assert!(waited.is_ok());
    /// ```
    #[track_caller]
    pub fn block_until_ready(&self) -> &Array {
        if let Repr::Concrete(c) = &*self.0 {
            for b in &c.buffers {
                b.block_until_ready().unwrap_or_else(|e| fail(e));
            }
        }
        self
    }

    /// Has this array's buffer been donated to a computation (and so deleted)?
    pub fn is_deleted(&self) -> bool {
        match &*self.0 {
            Repr::Concrete(c) => c.buffers.iter().any(|b| b.is_deleted()),
            Repr::Traced(_) => false,
        }
    }
}

/// The host bytes of one element. Cast to its own dtype, an integer literal holds an
/// integer in the dtype's range ([`Literal::cast`] wraps it), so the `as` casts are exact.
fn host_bytes_of(lit: Literal) -> Vec<u8> {
    let lit = lit.cast(lit.dtype, lit.weak);
    let v = lit.value.as_f64();
    let i = match lit.value {
        LitValue::Int(i) => i,
        _ => 0,
    };
    match lit.dtype {
        DType::Bool => vec![(v != 0.0) as u8],
        DType::I8 => (i as i8).to_le_bytes().to_vec(),
        DType::I16 => (i as i16).to_le_bytes().to_vec(),
        DType::I32 => (i as i32).to_le_bytes().to_vec(),
        DType::I64 => (i as i64).to_le_bytes().to_vec(),
        DType::U8 => (i as u8).to_le_bytes().to_vec(),
        DType::U16 => (i as u16).to_le_bytes().to_vec(),
        DType::U32 => (i as u32).to_le_bytes().to_vec(),
        DType::U64 => (i as u64).to_le_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
        DType::F16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => v.to_le_bytes().to_vec(),
        DType::C64 | DType::C128 => {
            let (re, im) = match lit.value {
                LitValue::Complex(re, im) => (re, im),
                other => (other.as_f64(), 0.0),
            };
            if lit.dtype == DType::C64 {
                [(re as f32).to_le_bytes(), (im as f32).to_le_bytes()].concat()
            } else {
                [re.to_le_bytes(), im.to_le_bytes()].concat()
            }
        }
    }
}

/// An array's value copied to host memory: what [`crate::device_get`] gives for each leaf,
/// as JAX's `jax.device_get` gives NumPy arrays. It holds its elements as row-major
/// little-endian bytes of its dtype.
///
/// ```
/// # use jaxrs_runtime::{Array, DType};
/// let host = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).to_host();
/// assert_eq!((host.shape(), host.dtype()), (&[3usize][..], DType::F32));
/// assert_eq!(host.to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
/// assert_eq!(host.to_array().to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    shape: Vec<usize>,
    dtype: DType,
    bytes: Vec<u8>,
}

impl HostArray {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The elements as row-major little-endian bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The elements, in row-major order.
    ///
    /// Panics when `T` is not the dtype.
    #[track_caller]
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        if T::DTYPE != self.dtype {
            panic!(
                "HostArray::to_vec: the array is {} but {} was asked for {}",
                self.dtype.name(),
                T::DTYPE.name(),
                At::line(std::panic::Location::caller())
            );
        }
        bytes_to_vec(&self.bytes)
    }

    /// The value on the default device again (`jax.device_put`).
    #[track_caller]
    pub fn to_array(&self) -> Array {
        Array::from_le_bytes(&self.bytes, &self.shape, self.dtype)
    }
}

impl Array {
    /// The value copied to host memory (gathered from the shards of a sharded array).
    ///
    /// Panics when the array is traced; a device failure is the environment's, as for
    /// [`Array::to_vec`] ([`Array::try_to_host`] returns it).
    #[track_caller]
    pub fn to_host(&self) -> HostArray {
        self.try_to_host().unwrap_or_else(|e| fail(e))
    }

    /// [`Array::to_host`], returning device failures as errors.
    #[track_caller]
    pub fn try_to_host(&self) -> Result<HostArray> {
        let c = self.concrete("to_host");
        Ok(HostArray {
            shape: c.aval.shape.clone(),
            dtype: c.aval.dtype,
            bytes: self.host_bytes()?,
        })
    }
}

fn bytes_to_vec<T: Element>(bytes: &[u8]) -> Vec<T> {
    let size = size_of::<T>();
    if T::DTYPE == DType::Bool {
        // A device PRED is one byte; map it rather than trusting it is 0 or 1.
        return bytes
            .iter()
            .map(|&b| T::from_f64((b != 0) as u8 as f64))
            .collect();
    }
    let n = bytes.len() / size;
    let mut out = Vec::<T>::with_capacity(n);
    // SAFETY: `out` has capacity for n elements; non-bool Elements accept any bit pattern;
    // the copy writes exactly n * size bytes before set_len.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr() as *mut u8, n * size);
        out.set_len(n);
    }
    out
}

impl Array {
    fn try_host_bytes(&self) -> Result<Vec<u8>, Error> {
        self.concrete("reading values");
        self.host_bytes()
    }

    fn try_f64s(&self) -> Result<Vec<f64>, Error> {
        fn f64s<T: Element>(bytes: &[u8]) -> Vec<f64> {
            bytes_to_vec::<T>(bytes)
                .into_iter()
                .map(Element::to_f64)
                .collect()
        }
        let bytes = self.try_host_bytes()?;
        Ok(match self.dtype() {
            DType::Bool => f64s::<bool>(&bytes),
            DType::I8 => f64s::<i8>(&bytes),
            DType::I16 => f64s::<i16>(&bytes),
            DType::I32 => f64s::<i32>(&bytes),
            DType::I64 => f64s::<i64>(&bytes),
            DType::U8 => f64s::<u8>(&bytes),
            DType::U16 => f64s::<u16>(&bytes),
            DType::U32 => f64s::<u32>(&bytes),
            DType::U64 => f64s::<u64>(&bytes),
            DType::BF16 => f64s::<half::bf16>(&bytes),
            DType::F16 => f64s::<half::f16>(&bytes),
            DType::F32 => f64s::<f32>(&bytes),
            DType::F64 => bytes_to_vec::<f64>(&bytes),
            // Real and imaginary parts interleaved: only the NaN check reads them so.
            DType::C64 => f64s::<f32>(&bytes),
            DType::C128 => bytes_to_vec::<f64>(&bytes),
        })
    }

    /// Does this concrete floating array hold a NaN? (A read error counts as no.)
    pub(crate) fn has_nan(&self) -> bool {
        self.try_f64s().is_ok_and(|v| v.iter().any(|x| x.is_nan()))
    }

    /// The values for the printer, each exact (64-bit integers as themselves).
    fn try_print_elems(&self) -> Result<Vec<Elem>, Error> {
        let bytes = self.try_host_bytes()?;
        Ok(print_elems_of_bytes(&bytes, self.dtype()))
    }
}

/// The printer's values of row-major element bytes of `dtype` (a host callback's operand).
pub(crate) fn print_elems_of_bytes(bytes: &[u8], dtype: DType) -> Vec<Elem> {
    fn floats<T: Element>(bytes: &[u8]) -> Vec<Elem> {
        bytes_to_vec::<T>(bytes)
            .into_iter()
            .map(|v| Elem::Float(v.to_f64()))
            .collect()
    }
    fn ints<T: Element>(bytes: &[u8]) -> Vec<Elem> {
        bytes_to_vec::<T>(bytes)
            .into_iter()
            .map(|v| Elem::Int(v.to_i128()))
            .collect()
    }
    fn complexes<T: Element>(bytes: &[u8]) -> Vec<Elem> {
        bytes_to_vec::<T>(bytes)
            .into_iter()
            .map(|v| {
                let (re, im) = v.to_parts();
                Elem::Complex(re, im)
            })
            .collect()
    }
    match dtype {
        DType::Bool => bytes.iter().map(|&b| Elem::Bool(b != 0)).collect(),
        DType::I8 => ints::<i8>(bytes),
        DType::I16 => ints::<i16>(bytes),
        DType::I32 => ints::<i32>(bytes),
        DType::I64 => ints::<i64>(bytes),
        DType::U8 => ints::<u8>(bytes),
        DType::U16 => ints::<u16>(bytes),
        DType::U32 => ints::<u32>(bytes),
        DType::U64 => ints::<u64>(bytes),
        DType::BF16 => floats::<half::bf16>(bytes),
        DType::F16 => floats::<half::f16>(bytes),
        DType::F32 => floats::<f32>(bytes),
        DType::F64 => floats::<f64>(bytes),
        DType::C64 => complexes::<crate::dtype::C64>(bytes),
        DType::C128 => complexes::<crate::dtype::C128>(bytes),
    }
}

/// JAX's `repr` with jaxrs's dtype names and the shape (numpy's layout, see `Display`):
/// `Array(<values>, dtype=<dtype>, shape=[<dims>])`, then `, weak_type=True` before the `)`
/// for a weakly typed array. The values are printed as JAX prints them, with `, ` between
/// elements, continuation lines aligned under the first `[`, and the suffix moved to a line of
/// its own when the last line would pass 75 columns. The dtype is the short name of avals
/// (`f32`, `bf16`, `i32`, `u8`, `bool`). A traced value (inside `jit`, `grad`, `vmap`, ...)
/// prints its abstract value: `Traced<f32[3,4]>`, with `~` before the dtype when it is weak.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(
///     format!("{x:?}"),
///     "Array([[1., 2.],\n       [3., 4.]], dtype=f32, shape=[2, 2])"
/// );
/// assert_eq!(
///     format!("{:?}", Array::weak_scalar(0.5)),
///     "Array(0.5, dtype=f64, shape=[], weak_type=True)"
/// );
/// let big = Array::arange(0.0, 5000.0, 1.0, DType::I32);
/// assert_eq!(
///     format!("{big:?}"),
///     "Array([   0,    1,    2, ..., 4997, 4998, 4999], dtype=i32, shape=[5000])"
/// );
/// ```
impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Repr::Traced(t) => write!(f, "Traced<{}>", t.aval),
            Repr::Concrete(c) => match self.try_print_elems() {
                Ok(elems) => f.write_str(&print::debug(&elems, &c.aval)),
                Err(e) => write!(f, "Array(<{e}>, {})", print::repr_suffix(&c.aval)),
            },
        }
    }
}

/// numpy's `str`: the values alone, as numpy and JAX print them with their default options.
/// Elements are aligned in columns (each padded to the widest) and rows wrap at 75 columns;
/// past 1000 elements only the first and last 3 items of each axis are shown, with `...`
/// between. Floats print the shortest digits that read back as the same value at their dtype
/// (at most 8 after the point), integral ones with a trailing `.`, and the whole array switches
/// to scientific notation when magnitudes are below 1e-4, large for the dtype, or over 1000
/// apart. A 0-d array prints as its scalar (`1.0`, `3`, `True`). A traced value prints as in
/// `Debug`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.5, 3.0, 4.0], &[2, 2]);
/// assert_eq!(x.to_string(), "[[1.  2.5]\n [3.  4. ]]");
/// let sci = Array::from_vec(vec![1e-5f32, 1.0, f32::NAN], &[3]);
/// assert_eq!(sci.to_string(), "[1.e-05 1.e+00    nan]");
/// assert_eq!(Array::scalar(true).to_string(), "True");
/// ```
impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Repr::Traced(_) => fmt::Debug::fmt(self, f),
            Repr::Concrete(c) => match self.try_print_elems() {
                Ok(elems) => f.write_str(&print::display(&elems, &c.aval.shape, c.aval.dtype)),
                Err(e) => write!(f, "<{e}>"),
            },
        }
    }
}
