//! Eager execution: outside any trace, each primitive runs through a cached single-op
//! executable, keyed by its StableHLO text. On operands sharded over a mesh it runs SPMD over
//! that mesh, as JAX does, and its results stay sharded.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::fail;
use crate::core::ir::{Atom, Eqn, Jaxpr, LitValue, Literal};
use crate::core::lower::{lower_jaxpr, LowerOptions, Spmd};
use crate::core::primitive::Prim;
use crate::core::sharding::{Mesh, NamedSharding, PartitionSpec, Sharding};
use crate::core::spmd::SpmdProgram;
use crate::core::trace::Operand;
use crate::dtype::DType;
use crate::pjrt::{Buffer, Device, LoadedExecutable};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// The map in `cell`, created empty on first use, locked.
fn locked<T: Default>(cell: &'static OnceLock<Mutex<T>>) -> MutexGuard<'static, T> {
    cell.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Executables keyed by the id of the device they run on and their program's text.
type ByDeviceAndText = HashMap<(i32, String), Arc<LoadedExecutable>>;

/// The executables compiled so far, by device id and program text. Poisoning is ignored: the lock is held only for one map
/// lookup or insert of a finished executable (never while compiling or running user code), so
/// a panic under it cannot leave a half-made entry.
fn cache() -> MutexGuard<'static, ByDeviceAndText> {
    static CACHE: OnceLock<Mutex<ByDeviceAndText>> = OnceLock::new();
    locked(&CACHE)
}

/// An executable with what tells its program apart from other eager programs.
struct Keyed {
    prim: &'static str,
    params: String,
    in_avals: Vec<Aval>,
    out_avals: Vec<Aval>,
    for_cpu: bool,
    /// The device the executable runs on.
    device: i32,
    exe: Arc<LoadedExecutable>,
}

impl Keyed {
    fn is(
        &self,
        prim: &str,
        params: &str,
        in_avals: &[Aval],
        out_avals: &[Aval],
        for_cpu: bool,
        device: i32,
    ) -> bool {
        self.prim == prim
            && self.params == params
            && self.in_avals == in_avals
            && self.out_avals == out_avals
            && self.for_cpu == for_cpu
            && self.device == device
    }
}

/// The executables by primitive, parameters and types ([`Primitive::eager_key`]), ahead of
/// [`cache`], grouped by the hash of those; poisoning is ignored for the same reason.
///
/// [`Primitive::eager_key`]: crate::core::primitive::Primitive::eager_key
fn by_key() -> MutexGuard<'static, HashMap<u64, Vec<Keyed>>> {
    static BY_KEY: OnceLock<Mutex<HashMap<u64, Vec<Keyed>>>> = OnceLock::new();
    locked(&BY_KEY)
}

/// Compiles `text`, the program of the primitive `prim`, once per process and device (a
/// single-device program), sharing the executable.
pub(crate) fn compile_cached(prim: &str, text: String, device: Device) -> Arc<LoadedExecutable> {
    let key = (device.id(), text);
    if let Some(exe) = cache().get(&key) {
        return exe.clone();
    }
    let site = format_args!("eager `{prim}`");
    let options = crate::core::lower::compile_options_on(device);
    let (exe, _) =
        crate::core::compile_cache::compile(&site, &key.1, &options).unwrap_or_else(|e| fail(e));
    let exe = Arc::new(exe);
    cache().entry(key).or_insert(exe).clone()
}

/// How many filled arrays [`filled_on`] keeps: more than the distinct Rust scalars a loop
/// body usually uses, few enough that scanning them is cheaper than hashing.
const FILLED_CACHE_ENTRIES: usize = 32;

/// The most device memory [`filled_on`]'s arrays may hold together (the largest fill, 16384
/// f64s from `ops::coerce`, is 128 KiB).
const FILLED_CACHE_BYTES: usize = 1 << 20;

/// What tells two filled arrays apart: the literal's dtype, weak flag (part of the array's
/// type, which decides the promotion of what is computed from it) and value bits (so NaN
/// payloads and -0.0 are their own entries), the shape, and the device holding the buffer.
#[derive(PartialEq)]
struct FilledKey {
    dtype: DType,
    weak: bool,
    bits: (u8, u64, u64),
    shape: Vec<usize>,
    device: Device,
}

impl FilledKey {
    fn new(lit: Literal, shape: &[usize], device: Device) -> FilledKey {
        let bits = match lit.value {
            LitValue::Float(v) => (0, v.to_bits(), 0),
            LitValue::Int(v) => (1, v as u64, 0),
            LitValue::Bool(v) => (2, v as u64, 0),
            LitValue::Complex(re, im) => (3, re.to_bits(), im.to_bits()),
        };
        FilledKey {
            dtype: lit.dtype,
            weak: lit.weak,
            bits,
            shape: shape.to_vec(),
            device,
        }
    }

    fn bytes(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size_in_bytes()
    }
}

/// The arrays [`filled_on`] made last, most recently used first. Poisoning is ignored: the
/// lock is held for a scan and a move, never for an upload.
fn filled_arrays() -> MutexGuard<'static, Vec<(FilledKey, Array)>> {
    static FILLED: Mutex<Vec<(FilledKey, Array)>> = Mutex::new(Vec::new());
    FILLED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `lit` spread to `shape` on `device`: how an eager operation passes a Rust scalar to its
/// program (a 0-d input here, or an operand filled to the other's shape by `ops::coerce`).
///
/// Uploading it was a fifth of an eager `x * 1.0001`, so the arrays of the last scalars used
/// are kept, the least recently used evicted past [`FILLED_CACHE_ENTRIES`] or
/// [`FILLED_CACHE_BYTES`]: a loop over ever-new scalars (a learning-rate schedule) pays a
/// scan on top of the upload it paid anyway, and holds no more memory. Sharing is safe:
/// arrays are immutable, and the only way to consume a buffer, donating it to `jit` or
/// `pmap`, is refused for a buffer another `Arc` still holds, as the cache's does for as
/// long as it serves the buffer. `Array::from_literal` (behind `Array::weak_scalar`,
/// a 0-d `Array::full` and `Operand::to_array`, whose arrays reach users) stays uncached, so
/// that arrays users make are theirs alone to donate. The process-wide client is created once and never replaced,
/// so a cached buffer never belongs to an old client.
pub(crate) fn filled_on(lit: Literal, shape: &[usize], device: Device) -> Array {
    let key = FilledKey::new(lit, shape, device);
    {
        let mut cached = filled_arrays();
        if let Some(i) = cached.iter().position(|(k, _)| *k == key) {
            cached[..=i].rotate_right(1);
            return cached[0].1.clone();
        }
    }
    let array = Array::from_literal_filled(lit, shape)
        .on_device(device)
        .into_owned();
    let mut cached = filled_arrays();
    cached.insert(0, (key, array.clone()));
    let mut bytes = 0;
    let kept = cached
        .iter()
        .take(FILLED_CACHE_ENTRIES)
        .take_while(|(k, _)| {
            bytes += k.bytes();
            bytes <= FILLED_CACHE_BYTES
        })
        .count();
    cached.truncate(kept);
    array
}

/// The program that applies `prim` to its inputs.
fn one_op_jaxpr(prim: &Prim, in_avals: &[Aval], out_avals: &[Aval]) -> Jaxpr {
    let mut jaxpr = Jaxpr::default();
    let inputs = in_avals
        .iter()
        .map(|aval| {
            let v = jaxpr.new_var(aval.clone());
            jaxpr.invars.push(v);
            Atom::Var(v)
        })
        .collect();
    let outputs: Vec<_> = out_avals.iter().map(|a| jaxpr.new_var(a.clone())).collect();
    jaxpr.outvars = outputs.iter().map(|v| Atom::Var(*v)).collect();
    jaxpr.eqns.push(Eqn {
        prim: prim.clone(),
        inputs,
        outputs,
        loc: Location::caller(),
        // One-operation programs are cached by primitive and types, so they carry no scope.
        scope: None,
    });
    jaxpr
}

/// The executable of `prim` on operands of `in_avals`, compiled on first use.
fn executable(
    prim: &Prim,
    in_avals: &[Aval],
    out_avals: &[Aval],
    device: Device,
) -> Arc<LoadedExecutable> {
    let for_cpu = crate::core::client::for_cpu();
    // Lowering the one-op program to text took a quarter of an eager call: the primitive's
    // parameters and the types find a program already compiled without it. They are hashed
    // and compared where they lie (writing them into one text key was a tenth of a call).
    let params = prim.eager_key();
    let name = prim.name();
    let hash = params.as_ref().map(|params| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (name, params, in_avals, out_avals, for_cpu, device.id()).hash(&mut hasher);
        hasher.finish()
    });
    if let (Some(params), Some(hash)) = (&params, hash) {
        let found = by_key().get(&hash).and_then(|keyed| {
            keyed
                .iter()
                .find(|k| k.is(name, params, in_avals, out_avals, for_cpu, device.id()))
                .map(|k| k.exe.clone())
        });
        if let Some(exe) = found {
            return exe;
        }
    }
    let jaxpr = one_op_jaxpr(prim, in_avals, out_avals);
    let options = LowerOptions {
        for_cpu,
        bf16_rows_kernel: crate::core::client::bf16_rows_kernel(),
        ..LowerOptions::default()
    };
    let exe = compile_cached(name, lower_jaxpr(&jaxpr, &options), device);
    if let (Some(params), Some(hash)) = (params, hash) {
        let mut by_key = by_key();
        let keyed = by_key.entry(hash).or_default();
        // Another thread may have compiled the same program meanwhile.
        if !keyed
            .iter()
            .any(|k| k.is(name, &params, in_avals, out_avals, for_cpu, device.id()))
        {
            keyed.push(Keyed {
                prim: name,
                params,
                in_avals: in_avals.to_vec(),
                out_avals: out_avals.to_vec(),
                for_cpu,
                device: device.id(),
                exe: exe.clone(),
            });
        }
    }
    exe
}

/// Runs one primitive on concrete operands. Rust scalars become device scalars (inputs, not
/// constants), so a loop over changing scalars does not recompile.
pub(crate) fn execute(
    prim: &Prim,
    inputs: &[Operand],
    in_avals: &[Aval],
    out_avals: &[Aval],
) -> Vec<Array> {
    if let Some(mesh) = operands_mesh(prim, inputs) {
        return execute_spmd(prim, inputs, in_avals, out_avals, mesh);
    }
    // No operand is sharded over a mesh: the op runs on the device its operands lie on, or
    // the default device, and an operand elsewhere (or copied whole onto several devices) is
    // read there.
    let device = crate::core::client::target_device(inputs.iter().filter_map(|op| match op {
        Operand::Array(a) => Some(&**a),
        Operand::Lit(_) => None,
    }));
    let exe = executable(prim, in_avals, out_avals, device);
    let _span =
        crate::core::profile::span("eager", "execute", || format!("eager `{}`", prim.name()));
    let placed: Vec<Cow<'_, Array>> = inputs
        .iter()
        .map(|op| match op {
            Operand::Array(a) => a.on_device(device),
            Operand::Lit(l) => Cow::Owned(filled_on(*l, &[], device)),
        })
        .collect();
    let args: Vec<&Buffer> = placed
        .iter()
        .map(|a| &*a.concrete(prim.name()).buffers[0])
        .collect();
    let mut outs = exe.execute(&[args], &[]).unwrap_or_else(|e| fail(e));
    outs.swap_remove(0)
        .into_iter()
        .zip(out_avals)
        .map(|(b, a)| Array::from_buffer(b, a.clone(), device))
        .collect()
}

/// The mesh an eager operation runs over: the one its sharded operands lie on (`None` when
/// none is sharded over a mesh).
fn operands_mesh(prim: &Prim, operands: &[Operand]) -> Option<Mesh> {
    let mut meshes = operands.iter().filter_map(|op| match op {
        Operand::Array(a) => match &a.concrete(prim.name()).sharding {
            Sharding::Named(n) => Some(n.mesh()),
            _ => None,
        },
        Operand::Lit(_) => None,
    });
    let first = meshes.next()?;
    if let Some(other) = meshes.find(|m| *m != first) {
        panic!(
            "`{}`: one operand lies on {first:?} and another on {other:?}; an operation runs \
             on one mesh (device_put one of them onto the other's mesh)",
            prim.name()
        );
    }
    Some(first.clone())
}

/// The SPMD executables of eager operations on sharded operands, by their StableHLO text
/// (which holds the operands' shardings); poisoning is ignored as for [`cache`].
type SpmdCache = HashMap<String, Arc<(LoadedExecutable, SpmdProgram)>>;

fn spmd_cache() -> MutexGuard<'static, SpmdCache> {
    static CACHE: OnceLock<Mutex<SpmdCache>> = OnceLock::new();
    locked(&CACHE)
}

/// Runs one primitive SPMD over `mesh`, as JAX runs an operation on sharded arrays: each
/// sharded operand stays as it lies, any other is replicated over the mesh, and the results
/// lie where XLA's sharding propagation puts them (an elementwise op keeps its operand's
/// sharding) rather than being gathered onto one device.
fn execute_spmd(
    prim: &Prim,
    inputs: &[Operand],
    in_avals: &[Aval],
    out_avals: &[Aval],
    mesh: Mesh,
) -> Vec<Array> {
    let operands: Vec<Array> = inputs.iter().map(|op| op.to_array().into_owned()).collect();
    let jaxpr = &one_op_jaxpr(prim, in_avals, out_avals);
    let for_cpu = crate::core::client::for_cpu();
    let replicated = NamedSharding::new(mesh.clone(), PartitionSpec::default())
        .expect("an empty spec fits every mesh");
    let ins: Vec<NamedSharding> = operands
        .iter()
        .map(|a| match &a.concrete(prim.name()).sharding {
            Sharding::Named(n) => n.clone(),
            _ => replicated.clone(),
        })
        .collect();
    let lower = |spmd: Spmd| {
        let options = LowerOptions {
            spmd: Some(spmd),
            for_cpu,
            bf16_rows_kernel: crate::core::client::bf16_rows_kernel(),
            ..LowerOptions::default()
        };
        (lower_jaxpr(jaxpr, &options), options)
    };
    let unplaced = vec![None; out_avals.len()];
    let (key, _) = lower(Spmd {
        mesh: mesh.clone(),
        in_specs: ins.iter().map(|s| s.spec().clone()).collect(),
        out_specs: vec![None; out_avals.len()],
    });
    let cached = spmd_cache().get(&key).cloned();
    let compiled = cached.unwrap_or_else(|| {
        let what = format!("eager `{}`", prim.name());
        let (_, exe, program) =
            crate::core::spmd::compile(&what, mesh, ins, unplaced, out_avals, |spmd| {
                let (text, options) = lower(spmd);
                let (exe, _) =
                    crate::core::compile_cache::compile(&what, &text, &options.compile_options())
                        .unwrap_or_else(|e| fail(e));
                (text, exe)
            });
        let compiled = Arc::new((exe, program));
        spmd_cache().entry(key).or_insert(compiled).clone()
    });
    let (exe, program) = &*compiled;
    program.run(exe, operands, |_| Vec::new(), out_avals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::client::client;

    /// These tests fill the cache on purpose: one at a time, so that one cannot evict what the
    /// other checks is kept.
    fn serial() -> MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn cached_bytes() -> usize {
        filled_arrays().iter().map(|(k, _)| k.bytes()).sum()
    }

    #[test]
    fn ever_new_scalars_keep_the_cache_bounded() {
        let _serial = serial();
        let device = client().devices()[0];
        for i in 0..100 {
            let lit = Literal::from_f64(i as f64, DType::F32, true);
            let got = filled_on(lit, &[3], device);
            assert_eq!(got.to_vec::<f32>(), vec![i as f32; 3]);
            assert!(filled_arrays().len() <= FILLED_CACHE_ENTRIES);
        }
        // The largest fills (128 KiB each) are bounded by bytes before entries.
        for i in 0..20 {
            let lit = Literal::from_f64(i as f64, DType::F64, false);
            let got = filled_on(lit, &[1 << 14], device);
            assert_eq!(got.to_vec::<f64>()[(1 << 14) - 1], i as f64);
            assert!(cached_bytes() <= FILLED_CACHE_BYTES);
        }
    }

    #[test]
    fn a_repeated_scalar_is_served_from_the_cache() {
        let _serial = serial();
        let device = client().devices()[0];
        let lit = Literal::from_f64(-0.0, DType::F32, true);
        let first = filled_on(lit, &[2], device);
        let again = filled_on(lit, &[2], device);
        assert!(Arc::ptr_eq(&first.0, &again.0));
        let positive = filled_on(Literal::from_f64(0.0, DType::F32, true), &[2], device);
        assert!(!Arc::ptr_eq(&first.0, &positive.0));
        let strong = filled_on(Literal::from_f64(-0.0, DType::F32, false), &[2], device);
        assert!(!Arc::ptr_eq(&first.0, &strong.0));
        assert!(!strong.is_weak() && first.is_weak());
    }
}
