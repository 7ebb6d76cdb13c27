//! Pseudo-random numbers as `jax.random` draws them, bit for bit: counter-based threefry2x32
//! on raw keys (`u32[2]` arrays), with JAX 0.10.2's defaults (`jax_threefry_partitionable`,
//! x64 disabled).
//!
//! Keys are plain arrays, so they are tree leaves, jit arguments and vmap-able (a batch of keys
//! is `u32[n, 2]`). Every function here is a composition of array operations: it runs eagerly,
//! traces into `jit` and batches under `vmap` as any other code.
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::random;
//!
//! let key = random::key(0);
//! let [init_key, noise_key] = random::split_n::<2>(&key);
//! let w = random::normal(&init_key, &[3, 2], DType::F32);
//! // One key per example: the same draws as a loop over the keys.
//! let keys = random::split(&noise_key, 4);
//! let noise = jit(|keys: Array| vmap(|k: Array| random::uniform(&k, &[2], DType::F32), 0, 0)(keys))
//!     .call(keys.clone());
//! assert_eq!(noise.shape(), &[4, 2]);
//! let third = keys.slice(&[2, 0], &[3, 2], &[1, 1]).reshape([2]);
//! assert_eq!(
//!     noise.slice(&[2, 0], &[3, 2], &[1, 1]).reshape([2]).to_vec::<f32>(),
//!     random::uniform(&third, &[2], DType::F32).to_vec::<f32>()
//! );
//! assert_eq!(w.shape(), &[3, 2]);
//! ```
//!
//! Threefry is written as a composition of u32 ops (add, xor, shifts), not as a primitive of
//! its own: about 120 elementwise ops per hash, whatever the sample's shape, which XLA fuses
//! into one loop; the batching and (zero) derivative rules then come from the ops for free.
//!
//! Called eagerly, each function runs as one compiled program (cached per function, static
//! arguments and key aval), as JAX's samplers are `jit`-decorated: besides saving ~150
//! dispatches, this is what makes eager draws bit-exact, because XLA contracts the
//! `u * (max - min) + min` of a fused program into a fused multiply-add, and op-by-op execution
//! would round twice. (For the same reason, `vmap` of a sampler outside `jit`, which runs op by
//! op, may differ from JAX in the last bit of `uniform_range` and `truncated_normal` draws;
//! inside `jit` it is exact.)

mod continuous;
mod discrete;
mod gamma;
mod multivariate;

pub use continuous::*;
pub use discrete::*;
pub use gamma::*;
pub use multivariate::*;

use crate::aval::broadcast_shapes;
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::trace::{bind, bind1, is_tracing, Operand};
use crate::dtype::DType;
use crate::higher_order::remat::OptimizationBarrier;
use crate::ops::{unify, IntoArg};
use crate::prims::{Binary, BinaryOp, Sort};
use crate::transforms::jit::{jit, Jitted};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

type Sampler = Box<dyn Fn(Vec<Array>) -> Array>;

thread_local! {
    /// The compiled samplers of eager calls, by function and static arguments.
    static EAGER: RefCell<HashMap<String, Rc<Jitted<Sampler>>>> = RefCell::new(HashMap::new());
}

/// `f(args)`: inline under a trace, else through a `jit` cached under `signature` (the
/// function's name and static arguments).
fn compiled(signature: String, args: Vec<Array>, f: impl Fn(&[Array]) -> Array + 'static) -> Array {
    if is_tracing() {
        // Concrete parameters beside a traced key would be constants of the enclosing
        // program, which XLA folds into the sampler's arithmetic (exactly rounded at compile
        // time, where at run time `1/sqrt` is an `rsqrt`). A barrier over the arguments makes
        // them values XLA cannot see through, as in the eager path, so that jitted draws are
        // the eager ones. JAX's jitted draws are folded, and which folds XLA finds depends on
        // the program around them: jaxrs's draws are JAX's eager ones bit for bit, and within
        // a few ulps of its jitted ones (tests/golden/gen_random_samplers.py).
        let (traced, concrete): (Vec<&Array>, Vec<&Array>) =
            args.iter().partition(|a| !a.is_concrete());
        if !traced.is_empty() && !concrete.is_empty() {
            let operands: Vec<Operand> = args.iter().map(Operand::from).collect();
            let opaque = bind(Arc::new(OptimizationBarrier), &operands);
            return f(&opaque);
        }
        return f(&args);
    }
    let jitted = EAGER.with(|cache| {
        cache
            .borrow_mut()
            .entry(signature)
            .or_insert_with(|| {
                let sampler: Sampler = Box::new(move |a: Vec<Array>| f(&a));
                Rc::new(jit(sampler))
            })
            .clone()
    });
    jitted.call(args)
}

/// Threefry's rotation distances, alternating between two groups of four rounds.
const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
/// The key-schedule parity constant of Threefry.
const KS_PARITY: u32 = 0x1BD1_1BDA;

fn u32_lit(v: u32) -> Operand<'static> {
    Operand::Lit(Literal::int(v as i64, DType::U32))
}

fn rotate_left(x: &Array, d: u32) -> Array {
    x.left_shift(u32_lit(d))
        .bitwise_or(x.right_shift(u32_lit(32 - d)))
}

/// The threefry2x32 hash of the counter pairs `(x1, x2)` under the key `(k1, k2)` (scalars):
/// 20 rounds, the key injected every 4, as `threefry2x32_p`.
fn threefry2x32(k1: &Array, k2: &Array, x1: &Array, x2: &Array) -> (Array, Array) {
    let ks = [
        k1.clone(),
        k2.clone(),
        k1.bitwise_xor(k2).bitwise_xor(u32_lit(KS_PARITY)),
    ];
    let mut x = [x1.add(&ks[0]), x2.add(&ks[1])];
    for i in 0..5 {
        for &r in &ROTATIONS[i % 2] {
            let sum = x[0].add(&x[1]);
            x[1] = sum.bitwise_xor(rotate_left(&x[1], r));
            x[0] = sum;
        }
        x[0] = x[0].add(&ks[(i + 1) % 3]);
        x[1] = x[1].add(&ks[(i + 2) % 3]).add(u32_lit(i as u32 + 1));
    }
    // The hash is materialized before anything uses it, as JAX's is (its threefry is a
    // rolled loop, whose results XLA cannot fuse into their users). Fused into the sampler's
    // float arithmetic, the 20 unrolled rounds make the CPU plugin's code generation run
    // without end (a vmapped `normal` under `jit` over 4 keys or more): a barrier on the
    // words keeps the rounds one fusion and the float tail another.
    let mut words = bind(
        Arc::new(OptimizationBarrier),
        &[Operand::from(&x[0]), Operand::from(&x[1])],
    )
    .into_iter();
    let y1 = words.next().expect("two words");
    let y2 = words.next().expect("two words");
    (y1, y2)
}

/// Stops on anything but a `u32[2]` key.
#[track_caller]
fn check_key(op: &str, key: &Array) {
    if key.dtype() != DType::U32 || key.shape() != [2] {
        panic!(
            "jaxrs::random::{op}: a key is a u32[2] array (from random::key), got {}",
            key.aval()
        );
    }
}

/// The two halves of a key, as u32 scalars.
#[track_caller]
fn halves(op: &str, key: &Array) -> (Array, Array) {
    check_key(op, key);
    let half = |i: usize| key.slice(&[i], &[i + 1], &[1]).reshape(Vec::<usize>::new());
    (half(0), half(1))
}

/// `jax.random.bits`' counters for `shape`: the row-major index of each element as a 64-bit
/// number split in (high, low) u32 halves. The high half is 0 below 2^32 elements.
fn counters(shape: &[usize]) -> (Array, Array) {
    let n: usize = shape.iter().product();
    assert!(
        n as u64 <= u32::MAX as u64,
        "jaxrs::random: samples of 2^32 elements or more are not supported"
    );
    let lo = Array::iota(DType::U32, &[n], 0).reshape(shape);
    (Array::zeros(shape, DType::U32), lo)
}

/// The hash of every counter of `shape`: the two u32 words `jax.random` builds keys and bits
/// from.
#[track_caller]
fn hash_counters(op: &str, key: &Array, shape: &[usize]) -> (Array, Array) {
    let (k1, k2) = halves(op, key);
    let (hi, lo) = counters(shape);
    threefry2x32(&k1, &k2, &hi, &lo)
}

/// 32 random bits per element (`jax.random.bits(key, shape, uint32)`).
#[track_caller]
fn bits32(op: &str, key: &Array, shape: &[usize]) -> Array {
    let (b1, b2) = hash_counters(op, key, shape);
    b1.bitwise_xor(&b2)
}

/// An integer seed or datum for [`key`] and [`fold_in`]: a Rust integer, or a 0-d integer
/// [`Array`], concrete or traced (a jitted step's step count, a `scan` body's index), as
/// `jax.random.key(t)` and `jax.random.fold_in(key, t)` take a traced integer. Passing an
/// `Array` under `jit` traces it: one program serves every value.
pub trait KeyInt {
    /// The integer as a Rust value, or as the array that holds it.
    #[doc(hidden)]
    fn key_int(self) -> KeyIntValue;
}

/// What a [`KeyInt`] is: a Rust integer (as a Python int, sign and all) or an integer array.
#[doc(hidden)]
pub enum KeyIntValue {
    Rust(i128),
    Array(Array),
}

macro_rules! key_int {
    ($($t:ty),*) => {$(
        impl KeyInt for $t {
            fn key_int(self) -> KeyIntValue {
                KeyIntValue::Rust(self as i128)
            }
        }
    )*};
}
key_int!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize);

impl KeyInt for Array {
    fn key_int(self) -> KeyIntValue {
        KeyIntValue::Array(self)
    }
}

impl KeyInt for &Array {
    fn key_int(self) -> KeyIntValue {
        KeyIntValue::Array(self.clone())
    }
}

/// Stops on anything but a 0-d integer array.
#[track_caller]
fn check_int_scalar(op: &str, x: &Array) {
    if x.rank() != 0 || !x.dtype().is_int() {
        panic!(
            "jaxrs::random::{op}: needs an integer scalar (a Rust integer or a 0-d integer \
             array), got {}",
            x.aval()
        );
    }
}

/// `[hi, lo]` as a `u32[2]` key: uploaded when no trace is open, else built from literals so
/// that the program holds a constant rather than an input.
fn key_of_words(hi: u32, lo: u32) -> Array {
    if is_tracing() {
        let word = |w: u32| Array::full(&[1], w as f64, DType::U32);
        Array::concatenate(&[word(hi), word(lo)], 0)
    } else {
        Array::from_vec(vec![hi, lo], &[2])
    }
}

/// JAX's `threefry_seed` of an integer array: its high 32 bits (0 below 64-bit dtypes) and
/// its low 32 bits, as a `u32[2]` key.
fn seed_words(seed: &Array) -> Array {
    let lo = seed.astype(DType::U32);
    let hi = if seed.dtype().size_in_bytes() == 8 {
        // An arithmetic or a logical shift leaves the same low 32 bits.
        seed.right_shift(32).astype(DType::U32)
    } else {
        Array::zeros(&[], DType::U32)
    };
    Array::stack(&[hi, lo], 0)
}

/// A new key from an integer seed: its high and low 32-bit words (`jax.random.PRNGKey(seed)`
/// with `jax_enable_x64`). The seed is a Rust integer or a 0-d integer [`Array`], traced or
/// not (see [`KeyInt`]): `random::key(t)` inside `jit` reuses one program for every `t`.
///
/// A Rust integer counts as a Python int does in JAX (a negative seed has all high bits
/// set); an array seed is its dtype's bits, as JAX's `threefry_seed` (an `int32` array's high
/// word is 0). jaxrs keeps all 64 bits of a `u64` seed, as JAX does for an `int64`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let key = jaxrs::random::key(42);
/// assert_eq!(key.to_vec::<u32>(), vec![0, 42]);
/// assert_eq!(jaxrs::random::key(1u64 << 32 | 7).to_vec::<u32>(), vec![1, 7]);
/// // A traced seed: one compiled program for every seed.
/// let f = jit(|t: Array| jaxrs::random::key(&t));
/// assert_eq!(f.call(Array::scalar(42i32)).to_vec::<u32>(), vec![0, 42]);
/// ```
#[track_caller]
pub fn key(seed: impl KeyInt) -> Array {
    match seed.key_int() {
        KeyIntValue::Rust(v) => key_of_words((v >> 32) as u32, v as u32),
        KeyIntValue::Array(seed) => {
            check_int_scalar("key", &seed);
            compiled(format!("key {:?}", seed.dtype()), vec![seed], |a| {
                seed_words(&a[0])
            })
        }
    }
}

/// `n` new keys from `key`, as a `u32[n, 2]` array (`jax.random.split(key, n)`). A key used to
/// split should not be used again to draw.
///
/// ```
/// use jaxrs::random;
///
/// let keys = random::split(&random::key(0), 2);
/// assert_eq!(keys.shape(), &[2, 2]);
/// assert_eq!(keys.to_vec::<u32>(), vec![1797259609, 2579123966, 928981903, 3453687069]);
/// ```
#[track_caller]
pub fn split(key: &Array, n: usize) -> Array {
    check_key("split", key);
    compiled(format!("split {n}"), vec![key.clone()], move |a| {
        let (b1, b2) = hash_counters("split", &a[0], &[n]);
        Array::stack(&[b1, b2], 1)
    })
}

/// `N` new keys from `key`, as separate arrays: JAX's `k1, k2 = jax.random.split(key)`.
///
/// ```
/// use jaxrs::random;
///
/// let [k1, k2] = random::split_n::<2>(&random::key(0));
/// assert_eq!(k1.to_vec::<u32>(), vec![1797259609, 2579123966]);
/// assert_eq!(k2.shape(), &[2]);
/// ```
#[track_caller]
pub fn split_n<const N: usize>(key: &Array) -> [Array; N] {
    let keys = split(key, N);
    std::array::from_fn(|i| keys.slice(&[i, 0], &[i + 1, 2], &[1, 1]).reshape([2]))
}

/// A new key from `key` and an integer (`jax.random.fold_in`): a key per step or per example
/// without splitting. `data` is a Rust integer or a 0-d integer [`Array`], traced or not (see
/// [`KeyInt`]), converted as JAX's `jnp.uint32(data)`: a Rust integer must fit in `u32`,
/// an array's value wraps modulo 2^32. Under `jit`, a traced step count folds in without a
/// compile per step.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let k = random::fold_in(&random::key(0), 0xdeadbeefu32);
/// assert_eq!(k.to_vec::<u32>(), vec![3503448033, 2196607573]);
/// let step = jit(|(key, t): (Array, Array)| random::fold_in(&key, &t));
/// let k7 = step.call((random::key(0), Array::scalar(7i32)));
/// assert_eq!(k7.to_vec::<u32>(), random::fold_in(&random::key(0), 7).to_vec::<u32>());
/// ```
#[track_caller]
pub fn fold_in(key: &Array, data: impl KeyInt) -> Array {
    check_key("fold_in", key);
    let data = match data.key_int() {
        KeyIntValue::Rust(v) => match u32::try_from(v) {
            Ok(v) => Array::scalar(v),
            // As JAX's `jnp.uint32(data)` raises `OverflowError` for a Python int.
            Err(_) => panic!(
                "jaxrs::random::fold_in: the integer {v} is out of bounds for uint32 \
                 (an array's value wraps instead: pass `Array::scalar(..)`)"
            ),
        },
        KeyIntValue::Array(a) => {
            check_int_scalar("fold_in", &a);
            a
        }
    };
    // The data is an argument, not a static: one program serves every step of a loop.
    let signature = format!("fold_in {:?}", data.dtype());
    compiled(signature, vec![key.clone(), data], |a| {
        let (k1, k2) = halves("fold_in", &a[0]);
        // threefry_seed(uint32(data)): the words (0, data).
        let data = a[1].astype(DType::U32).reshape([1]);
        let zero = Array::zeros(&[1], DType::U32);
        let (b1, b2) = threefry2x32(&k1, &k2, &zero, &data);
        Array::concatenate(&[b1, b2], 0)
    })
}

/// Stops on anything but raw keys: a `u32[..., 2]` array.
#[track_caller]
fn check_keys(op: &str, keys: &Array) {
    if keys.dtype() != DType::U32 || keys.shape().last() != Some(&2) {
        panic!(
            "jaxrs::random::{op}: keys are u32[..., 2] arrays (from random::key), got {}",
            keys.aval()
        );
    }
}

/// The raw data of keys (`jax.random.key_data`). jaxrs keys are the raw data already (JAX's
/// `PRNGKey` form: `u32[..., 2]`; there is no key dtype), so this returns them, checked.
///
/// ```
/// use jaxrs::random;
///
/// let key = random::key(42);
/// assert_eq!(random::key_data(&key).to_vec::<u32>(), vec![0, 42]);
/// ```
#[track_caller]
pub fn key_data(keys: &Array) -> Array {
    check_keys("key_data", keys);
    keys.clone()
}

/// Keys from their raw data (`jax.random.wrap_key_data(data)` for the default threefry
/// implementation): `data` itself, checked to be `u32[..., 2]`, since jaxrs keys are raw.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let key = random::wrap_key_data(&Array::from_vec(vec![0u32, 42], &[2]));
/// assert_eq!(key.to_vec::<u32>(), random::key(42).to_vec::<u32>());
/// ```
#[track_caller]
pub fn wrap_key_data(data: &Array) -> Array {
    check_keys("wrap_key_data", data);
    data.clone()
}

/// The name of the keys' random number generator (`jax.random.key_impl(keys)`, printed):
/// always `"threefry2x32"`, JAX's default and jaxrs's only implementation.
///
/// ```
/// use jaxrs::random;
///
/// assert_eq!(random::key_impl(&random::key(0)), "threefry2x32");
/// ```
#[track_caller]
pub fn key_impl(keys: &Array) -> &'static str {
    check_keys("key_impl", keys);
    key_dtype(None).impl_name()
}

/// The key type of a random number generator (`jax.random.key_dtype`'s result), printed as
/// JAX prints it: `key<fry>` for threefry2x32, jaxrs's only implementation.
///
/// jaxrs has no key dtype: its keys are the raw `u32[..., 2]` data of JAX's `PRNGKey` form.
/// This type says how a key of this type is laid out, so that where JAX writes
/// `ShapeDtypeStruct(shape, key_dtype())` (abstract keys for `eval_shape` or `lower`), jaxrs
/// writes [`KeyDtype::shape_dtype_struct`], which appends the key's own `[2]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyDtype {
    _threefry: (),
}

impl KeyDtype {
    /// `key<fry>`, JAX's name.
    pub fn name(&self) -> &'static str {
        "key<fry>"
    }

    /// The implementation's name (`jax.random.key_impl`'s): `threefry2x32`.
    pub fn impl_name(&self) -> &'static str {
        "threefry2x32"
    }

    /// The trailing shape one key takes in its raw data: `[2]`.
    pub fn key_shape(&self) -> &'static [usize] {
        &[2]
    }

    /// The raw data's element type: `u32`.
    pub fn base_dtype(&self) -> DType {
        DType::U32
    }

    /// The abstract value of keys of `shape`: `u32[*shape, 2]`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::{random, ShapeDtypeStruct};
    ///
    /// let keys = random::key_dtype(None).shape_dtype_struct(&[3]);
    /// assert_eq!(keys, ShapeDtypeStruct::new([3, 2], DType::U32));
    /// ```
    pub fn shape_dtype_struct(&self, shape: &[usize]) -> crate::aval::Aval {
        let raw: Vec<usize> = shape.iter().chain(self.key_shape()).copied().collect();
        crate::aval::Aval::new(raw, self.base_dtype())
    }
}

impl std::fmt::Display for KeyDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The key type of a random number generator (`jax.random.key_dtype(impl_spec)`); `None` is
/// the default implementation, threefry2x32. JAX's other implementations (`rbg`,
/// `unsafe_rbg`, `philox2x32`, `philox4x32`, `threefry4x32`) are not in jaxrs: naming one
/// stops with a message saying so, and an unknown name as JAX's `ValueError` does.
///
/// ```
/// use jaxrs::random;
///
/// assert_eq!(random::key_dtype(None).to_string(), "key<fry>");
/// assert_eq!(random::key_dtype(Some("threefry2x32")), random::key_dtype(None));
/// ```
#[track_caller]
pub fn key_dtype(impl_spec: Option<&str>) -> KeyDtype {
    const JAX_IMPLS: [&str; 6] = [
        "philox2x32",
        "philox4x32",
        "threefry2x32",
        "rbg",
        "unsafe_rbg",
        "threefry4x32",
    ];
    match impl_spec {
        None | Some("threefry2x32") => KeyDtype { _threefry: () },
        Some(other) if JAX_IMPLS.contains(&other) => panic!(
            "jaxrs::random::key_dtype: jaxrs implements only the threefry2x32 generator, not {other:?}"
        ),
        Some(other) => panic!(
            "jaxrs::random::key_dtype: unrecognized PRNG implementation {other:?}; JAX's are {}",
            JAX_IMPLS.map(|n| format!("{n:?}")).join(", ")
        ),
    }
}

/// A copy of a key (`jax.random.clone`), which JAX's key-reuse checker treats as a fresh key.
/// jaxrs has no key-reuse checker, so this is the key itself.
///
/// ```
/// use jaxrs::random;
///
/// let key = random::key(0);
/// assert_eq!(random::clone(&key).to_vec::<u32>(), key.to_vec::<u32>());
/// ```
#[track_caller]
pub fn clone(key: &Array) -> Array {
    check_keys("clone", key);
    key.clone()
}

/// A float scalar of `dtype`, rounded from `v` as numpy rounds a Python float.
fn scalar(v: f64, dtype: DType) -> Array {
    Array::full(&[], v, dtype)
}

#[track_caller]
fn float_dtype(op: &str, dtype: DType) {
    if !matches!(dtype, DType::F64 | DType::F32 | DType::BF16 | DType::F16) {
        panic!(
            "jaxrs::random::{op}: needs float64, float32, bfloat16 or float16, got {}",
            dtype.name()
        );
    }
}

/// The constants of `jnp.finfo(dtype)` that samplers bound their uniform draws with.
struct FloatInfo {
    /// The gap between 1 and the next float.
    eps: f64,
    /// The gap between 1 and the float below it.
    epsneg: f64,
    /// The smallest positive normal float.
    tiny: f64,
    /// Mantissa bits.
    nmant: i32,
}

fn finfo(dtype: DType) -> FloatInfo {
    let (nmant, min_exp) = match dtype {
        DType::F64 => (52, -1022),
        DType::F32 => (23, -126),
        DType::BF16 => (7, -126),
        DType::F16 => (10, -14),
        other => unreachable!("finfo of {other:?}: checked by float_dtype"),
    };
    FloatInfo {
        eps: (-(nmant as f64)).exp2(),
        epsneg: (-(nmant as f64) - 1.0).exp2(),
        tiny: (min_exp as f64).exp2(),
        nmant,
    }
}

/// A sampler's parameter as an array. A Rust scalar becomes what a Python scalar becomes in
/// JAX's jitted samplers: a weakly typed argument, float32 (float64 for a float64 sampler,
/// as under x64) or int32, which the sampler then converts.
fn param<'a>(x: impl IntoArg<'a>, dtype: DType) -> Array {
    match x.into_arg() {
        Operand::Lit(l) if l.weak => {
            let to = if l.dtype.is_inexact() {
                if dtype == DType::F64 {
                    DType::F64
                } else {
                    DType::F32
                }
            } else if l.dtype == DType::Bool {
                DType::Bool
            } else {
                DType::I32
            };
            Array::from_literal(l.cast(to, true))
        }
        other => other.to_array().into_owned(),
    }
}

/// The shape of a sample: `shape` when given (each parameter's shape must broadcast to it),
/// else the parameters' broadcast shape, as `_check_broadcast_shapes`.
#[track_caller]
fn sample_shape(op: &str, shape: Option<&[usize]>, params: &[&Array]) -> Vec<usize> {
    let mut common: Vec<usize> = Vec::new();
    for p in params {
        common = broadcast_shapes(&common, p.shape()).unwrap_or_else(|| {
            panic!(
                "jaxrs::random::{op}: the parameters' shapes {:?} do not broadcast together",
                params
                    .iter()
                    .map(|p| p.shape().to_vec())
                    .collect::<Vec<_>>()
            )
        });
    }
    match shape {
        None => common,
        Some(shape) => {
            if broadcast_shapes(shape, &common).as_deref() != Some(shape) {
                panic!(
                    "jaxrs::random::{op}: shape {shape:?} is not compatible with the parameters' \
                     broadcast shape {common:?}"
                );
            }
            shape.to_vec()
        }
    }
}

/// `f(key, params)` compiled once per `op` and static arguments (see [`compiled`]), after the
/// key is checked.
#[track_caller]
fn sampler(
    op: &str,
    statics: String,
    key: &Array,
    params: Vec<Array>,
    f: impl Fn(&Array, &[Array]) -> Array + 'static,
) -> Array {
    check_key(op, key);
    let mut args = vec![key.clone()];
    args.extend(params);
    compiled(format!("{op} {statics}"), args, move |a| f(&a[0], &a[1..]))
}

/// Uniform floats in `[0, 1)` of `dtype`, from random mantissa bits (`_uniform`'s trick).
#[track_caller]
fn unit_floats(op: &str, key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype(op, dtype);
    if dtype == DType::F64 {
        // 64 bits per element, the counter hash's two words as (high, low) (JAX's
        // partitionable threefry), then 52 of them under the exponent of 1.0.
        let (b1, b2) = hash_counters(op, key, shape);
        let u64_lit = |v: u64| Operand::Lit(Literal::int(v as i64, DType::U64));
        let bits = b1
            .astype(DType::U64)
            .left_shift(u64_lit(32))
            .bitwise_or(b2.astype(DType::U64));
        let one_to_two = bits
            .right_shift(u64_lit(64 - 52))
            .bitwise_or(u64_lit(0x3ff0_0000_0000_0000))
            .bitcast_convert_type(DType::F64);
        return one_to_two.sub(scalar(1.0, DType::F64));
    }
    let bits = bits32(op, key, shape);
    match dtype {
        DType::F32 => {
            // 23 random mantissa bits under the exponent of 1.0: a float in [1, 2).
            let one_to_two = bits
                .right_shift(u32_lit(32 - 23))
                .bitwise_or(u32_lit(0x3f80_0000))
                .bitcast_convert_type(DType::F32);
            one_to_two.sub(scalar(1.0, DType::F32))
        }
        _ => {
            // JAX draws 8 bits for bfloat16 and 16 for float16, puts the top 7 or 10 of them
            // under the exponent of 1.0 as 16-bit words and subtracts 1, exactly as here (the
            // same ops, so that XLA fuses and rounds the sampler's tail as it does JAX's).
            let (width, nmant, one_bits) = if dtype == DType::BF16 {
                (8, 7, 0x3f80u16)
            } else {
                (16, 10, 0x3c00u16)
            };
            let u16_lit = |v: u16| Operand::Lit(Literal::int(v as i64, DType::U16));
            let narrow = if width == 8 { DType::U8 } else { DType::U16 };
            let one_to_two = bits
                .astype(narrow)
                .astype(DType::U16)
                .right_shift(u16_lit(width - nmant))
                .bitwise_or(u16_lit(one_bits))
                .bitcast_convert_type(dtype);
            one_to_two.sub(scalar(1.0, dtype))
        }
    }
}

/// `jax.random.uniform`'s scaling of unit floats to `[minval, maxval)`, in `dtype`.
fn scale(unit: &Array, minval: &Array, maxval: &Array) -> Array {
    let span = maxval.sub(minval);
    minval.maximum(unit.mul(&span).add(minval))
}

/// Uniform floats in `[0, 1)` (`jax.random.uniform(key, shape, dtype)`); `dtype` is f32, bf16
/// or f16.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let u = random::uniform(&random::key(0), &[3], DType::F32);
/// assert_eq!(u.to_vec::<f32>(), vec![0.947667, 0.9785799, 0.33229148]);
/// ```
#[track_caller]
pub fn uniform(key: &Array, shape: &[usize], dtype: DType) -> Array {
    uniform_range(key, shape, dtype, 0.0, 1.0)
}

/// Uniform floats in `[minval, maxval)` (`jax.random.uniform(key, shape, dtype, minval,
/// maxval)`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let u = random::uniform_range(&random::key(1), &[1000], DType::F32, -2.0, 3.0);
/// let v = u.to_vec::<f32>();
/// assert!(v.iter().all(|&x| (-2.0..3.0).contains(&x)));
/// ```
#[track_caller]
pub fn uniform_range(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    minval: f64,
    maxval: f64,
) -> Array {
    check_key("uniform", key);
    float_dtype("uniform", dtype);
    let shape = shape.to_vec();
    let signature = format!(
        "uniform {shape:?} {dtype:?} {:x} {:x}",
        minval.to_bits(),
        maxval.to_bits()
    );
    compiled(signature, vec![key.clone()], move |a| {
        let unit = unit_floats("uniform", &a[0], &shape, dtype);
        scale(&unit, &scalar(minval, dtype), &scalar(maxval, dtype))
    })
}

/// The largest float of `dtype` below `x` (`up` false) or the smallest above it (`up` true),
/// from `x`'s bits (`np.nextafter` in `dtype`); `x` is finite.
fn next_after(x: f64, dtype: DType, up: bool) -> f64 {
    fn step(bits: u64, negative: bool, up: bool) -> u64 {
        // Away from zero is one more in the magnitude's bits.
        if up != negative {
            bits + 1
        } else {
            bits - 1
        }
    }
    match dtype {
        DType::F64 => {
            if x == 0.0 {
                let tiny = f64::from_bits(1);
                return if up { tiny } else { -tiny };
            }
            f64::from_bits(step(x.to_bits(), x < 0.0, up))
        }
        DType::F32 => {
            let x = x as f32;
            if x == 0.0 {
                let tiny = f32::from_bits(1);
                return if up { tiny as f64 } else { -tiny as f64 };
            }
            let bits = step(x.to_bits() as u64, x < 0.0, up);
            f32::from_bits(bits as u32) as f64
        }
        DType::BF16 => {
            let x = half::bf16::from_f64(x);
            if x.to_f64() == 0.0 {
                let tiny = half::bf16::from_bits(1).to_f64();
                return if up { tiny } else { -tiny };
            }
            let bits = step(x.to_bits() as u64, x.to_f64() < 0.0, up);
            half::bf16::from_bits(bits as u16).to_f64()
        }
        _ => {
            let x = half::f16::from_f64(x);
            if x.to_f64() == 0.0 {
                let tiny = half::f16::from_bits(1).to_f64();
                return if up { tiny } else { -tiny };
            }
            let bits = step(x.to_bits() as u64, x.to_f64() < 0.0, up);
            half::f16::from_bits(bits as u16).to_f64()
        }
    }
}

/// Standard normal floats (`jax.random.normal`): `sqrt(2) * erfinv(u)` for `u` uniform in
/// `(-1, 1)`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let z = random::normal(&random::key(0), &[10000], DType::F32);
/// let mean = z.mean(None, false).item::<f32>();
/// assert!(mean.abs() < 0.05);
/// ```
#[track_caller]
pub fn normal(key: &Array, shape: &[usize], dtype: DType) -> Array {
    check_key("normal", key);
    float_dtype("normal", dtype);
    let shape = shape.to_vec();
    compiled(
        format!("normal {shape:?} {dtype:?}"),
        vec![key.clone()],
        move |a| {
            let unit = unit_floats("normal", &a[0], &shape, dtype);
            let lo = scalar(next_after(-1.0, dtype, true), dtype);
            let u = scale(&unit, &lo, &scalar(1.0, dtype));
            scalar(std::f64::consts::SQRT_2, dtype).mul(u.erf_inv())
        },
    )
}

/// Normal floats truncated to `(lower, upper)` (`jax.random.truncated_normal`): the inverse CDF
/// of a uniform draw between the bounds' CDFs, clamped inside the open interval.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let z = random::truncated_normal(&random::key(0), -2.0, 2.0, &[1000], DType::F32);
/// assert!(z.to_vec::<f32>().iter().all(|&x| x > -2.0 && x < 2.0));
/// ```
#[track_caller]
pub fn truncated_normal(
    key: &Array,
    lower: f64,
    upper: f64,
    shape: &[usize],
    dtype: DType,
) -> Array {
    check_key("truncated_normal", key);
    float_dtype("truncated_normal", dtype);
    let shape = shape.to_vec();
    let signature = format!(
        "truncated_normal {shape:?} {dtype:?} {:x} {:x}",
        lower.to_bits(),
        upper.to_bits()
    );
    compiled(signature, vec![key.clone()], move |args| {
        let sqrt2 = scalar(std::f64::consts::SQRT_2, dtype);
        // A constant in the program, as in JAX's: XLA turns a division by a constant into a
        // multiplication by its reciprocal, which rounds differently from a true division.
        let sqrt2_lit = || Operand::Lit(Literal::from_f64(std::f64::consts::SQRT_2, dtype, false));
        let (lo, hi) = (scalar(lower, dtype), scalar(upper, dtype));
        let a = lo.div(sqrt2_lit()).erf();
        let b = hi.div(sqrt2_lit()).erf();
        let unit = unit_floats("truncated_normal", &args[0], &shape, dtype);
        let out = sqrt2.mul(scale(&unit, &a, &b).erf_inv());
        let floor = scalar(next_after(lower, dtype, true), dtype);
        let ceil = scalar(next_after(upper, dtype, false), dtype);
        out.maximum(&floor).minimum(&ceil)
    })
}

/// `true` with probability `p` (`jax.random.bernoulli(key, p, shape)`): a float32 uniform draw
/// below `p`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let coins = random::bernoulli(&random::key(0), 0.5, &[8]);
/// assert_eq!(coins.dtype(), DType::Bool);
/// assert_eq!(coins.shape(), &[8]);
/// ```
#[track_caller]
pub fn bernoulli(key: &Array, p: f64, shape: &[usize]) -> Array {
    check_key("bernoulli", key);
    let shape = shape.to_vec();
    let signature = format!("bernoulli {shape:?} {:x}", p.to_bits());
    compiled(signature, vec![key.clone()], move |a| {
        uniform(&a[0], &shape, DType::F32).lt(scalar(p, DType::F32))
    })
}

/// One category per slice of `logits` along `axis`, drawn with probabilities
/// `softmax(logits)` (`jax.random.categorical(key, logits, axis)`): the argmax of the logits
/// plus Gumbel noise. The result has `logits`'s shape without `axis`, as int32.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let logits = Array::from_vec(vec![0.0f32, 0.0, 50.0, 0.0], &[4]);
/// let c = random::categorical(&random::key(3), &logits, -1);
/// assert_eq!(c.item::<i32>(), 2);
/// ```
#[track_caller]
pub fn categorical(key: &Array, logits: &Array, axis: i64) -> Array {
    check_key("categorical", key);
    let dtype = logits.dtype();
    float_dtype("categorical", dtype);
    let tiny = finfo(dtype).tiny;
    let args = vec![key.clone(), logits.clone()];
    compiled(format!("categorical {axis}"), args, move |a| {
        let logits = &a[1];
        let unit = unit_floats("categorical", &a[0], logits.shape(), dtype);
        let u = scale(&unit, &scalar(tiny, dtype), &scalar(1.0, dtype));
        let gumbel = -(-u.log()).log();
        gumbel.add(logits).argmax(axis, false)
    })
}

/// A random permutation of `0..n` as int32 (`jax.random.permutation(key, n)`): `0..n` sorted
/// by random 32-bit keys, over as many rounds as JAX uses to make ties unlikely.
///
/// ```
/// use jaxrs::random;
///
/// let p = random::permutation(&random::key(0), 10).to_vec::<i32>();
/// let mut sorted = p.clone();
/// sorted.sort();
/// assert_eq!(sorted, (0..10).collect::<Vec<i32>>());
/// ```
#[track_caller]
pub fn permutation(key: &Array, n: usize) -> Array {
    check_key("permutation", key);
    compiled(format!("permutation {n}"), vec![key.clone()], move |a| {
        shuffled_iota(&a[0], n)
    })
}

fn shuffled_iota(key: &Array, n: usize) -> Array {
    shuffle(key, &Array::iota(DType::I32, &[n], 0), 0)
}

/// `_shuffle`: `x` sorted along `axis` by random 32-bit keys, over as many rounds as JAX
/// uses to make ties unlikely.
fn shuffle(key: &Array, x: &Array, axis: usize) -> Array {
    // JAX's static stop criterion: ceil(3 ln(size) / ln(2^32 - 1)) rounds.
    let rounds = (3.0 * (x.size().max(1) as f64).ln() / (u32::MAX as f64).ln()).ceil() as usize;
    let mut x = x.clone();
    let mut key = key.clone();
    for _ in 0..rounds {
        let [next, sub] = split_n::<2>(&key);
        key = next;
        let sort_keys = bits32("permutation", &sub, x.shape());
        let sort = Sort {
            dimension: axis,
            descending: false,
            num_keys: 1,
        };
        x = bind(
            Arc::new(sort),
            &[Operand::from(&sort_keys), Operand::from(&x)],
        )
        .remove(1);
    }
    x
}

/// Random signs as `dtype` (`_rademacher`): `2 * bernoulli(key, 0.5) - 1`. Here, beside the
/// other shared pieces, because the closed-form and the discrete samplers both use it.
fn rademacher_traced(key: &Array, shape: &[usize], dtype: DType) -> Array {
    let coin = uniform(key, shape, DType::F32).lt(0.5).astype(dtype);
    coin.mul(2).sub(1).astype(dtype)
}

/// `x % y` as `lax.rem` (a remainder by 0 is `x`, as XLA's), broadcasting.
fn lax_rem(x: &Array, y: &Array) -> Array {
    let args = unify("rem", vec![Operand::from(x), Operand::from(y)]);
    bind1(Binary(BinaryOp::Rem), &args)
}

/// Integers in `[minval, maxval)` of `dtype` (`jax.random.randint`): two draws of random bits
/// per element reduced modulo the span, with the bounds clipped to `dtype`'s range as JAX
/// clips them. `dtype` is int32, uint32, int8 or uint8.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let dice = random::randint(&random::key(0), &[100], 1, 7, DType::I32).to_vec::<i32>();
/// assert!(dice.iter().all(|d| (1..7).contains(d)));
/// ```
#[track_caller]
pub fn randint(key: &Array, shape: &[usize], minval: i64, maxval: i64, dtype: DType) -> Array {
    check_key("randint", key);
    if !matches!(dtype, DType::I32 | DType::U32 | DType::I8 | DType::U8) {
        panic!(
            "jaxrs::random::randint: needs int32, uint32, int8 or uint8, got {}",
            dtype.name()
        );
    }
    let shape = shape.to_vec();
    let signature = format!("randint {shape:?} {dtype:?} {minval} {maxval}");
    compiled(signature, vec![key.clone()], move |a| {
        if dtype.size_in_bytes() < 4 {
            // JAX samples narrow integers as int32 (a 16-bit span would be too biased), with
            // the bounds clipped to the narrow range first.
            let (lo, hi) = if dtype == DType::I8 {
                (i8::MIN as i64, i8::MAX as i64)
            } else {
                (0, u8::MAX as i64)
            };
            let (minval, maxval) = (minval.clamp(lo, hi), maxval.clamp(lo, hi + 1));
            randint_traced(&a[0], &shape, minval, maxval, DType::I32).astype(dtype)
        } else {
            randint_traced(&a[0], &shape, minval, maxval, dtype)
        }
    })
}

fn randint_traced(key: &Array, shape: &[usize], minval: i64, maxval: i64, dtype: DType) -> Array {
    let (nbits, udtype, lo_bound, hi_bound) = match dtype {
        DType::I32 => (32, DType::U32, i32::MIN as i64, i32::MAX as i64),
        DType::U32 => (32, DType::U32, 0, u32::MAX as i64),
        _ => unreachable!("randint samples narrow integers as int32"),
    };
    let [k1, k2] = split_n::<2>(key);
    let draw = |k: &Array| bits32("randint", k, shape);
    let (higher, lower) = (draw(&k1), draw(&k2));
    let maxval_out_of_range = maxval > hi_bound;
    let (minval, maxval) = (
        minval.clamp(lo_bound, hi_bound),
        maxval.clamp(lo_bound, hi_bound),
    );
    // The span in the unsigned type, wrapping as JAX's does; 1 for an empty range, and one
    // more when maxval was clipped (wrapping to 0 for the full range: the remainders are then
    // the bits themselves).
    let mask = (1u64 << nbits) - 1;
    let mut span = if maxval <= minval {
        1
    } else {
        ((maxval - minval) as u64) & mask
    };
    if maxval_out_of_range && maxval > minval {
        span = (span + 1) & mask;
    }
    let span = Array::full(&[], span as f64, udtype);
    let half_range = Array::full(&[], (1u64 << (nbits / 2)) as f64, udtype);
    let multiplier = lax_rem(&half_range, &span);
    let multiplier = lax_rem(&multiplier.mul(&multiplier), &span);
    let offset = lax_rem(&higher, &span)
        .mul(&multiplier)
        .add(lax_rem(&lower, &span));
    let offset = lax_rem(&offset, &span);
    Array::full(&[], minval as f64, dtype).add(offset.astype(dtype))
}
