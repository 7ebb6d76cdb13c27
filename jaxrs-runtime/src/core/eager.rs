//! Eager execution: outside any trace, each primitive runs through a cached single-op
//! executable, keyed by its StableHLO text. On operands sharded over a mesh it runs SPMD over
//! that mesh, as JAX does, and its results stay sharded.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::fail;
use crate::core::ir::{Atom, Eqn, Jaxpr};
use crate::core::lower::{lower_jaxpr, LowerOptions, Spmd};
use crate::core::primitive::Prim;
use crate::core::sharding::{Mesh, NamedSharding, PartitionSpec, Sharding};
use crate::core::spmd::SpmdProgram;
use crate::core::trace::Operand;
use crate::pjrt::{Buffer, LoadedExecutable};
use std::collections::HashMap;
use std::panic::Location;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// The executables compiled so far. Poisoning is ignored: the lock is held only for one map
/// lookup or insert of a finished executable (never while compiling or running user code), so
/// a panic under it cannot leave a half-made entry.
fn cache() -> MutexGuard<'static, HashMap<String, Arc<LoadedExecutable>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<LoadedExecutable>>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The executables by primitive, parameters and types ([`Primitive::eager_key`]), ahead of
/// [`cache`]; poisoning is ignored for the same reason.
///
/// [`Primitive::eager_key`]: crate::core::primitive::Primitive::eager_key
fn by_key() -> MutexGuard<'static, HashMap<String, Arc<LoadedExecutable>>> {
    static BY_KEY: OnceLock<Mutex<HashMap<String, Arc<LoadedExecutable>>>> = OnceLock::new();
    BY_KEY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Compiles `text`, the program of the primitive `prim`, once per process (single device),
/// sharing the executable.
pub(crate) fn compile_cached(prim: &str, text: String) -> Arc<LoadedExecutable> {
    if let Some(exe) = cache().get(&text) {
        return exe.clone();
    }
    let site = format_args!("eager `{prim}`");
    let (exe, _) =
        crate::core::compile_cache::compile(&site, &text, &crate::core::lower::compile_options())
            .unwrap_or_else(|e| fail(e));
    let exe = Arc::new(exe);
    cache().entry(text).or_insert(exe).clone()
}

/// Runs one primitive on concrete operands. Rust scalars become device scalars (inputs, not
/// constants), so a loop over changing scalars does not recompile.
pub(crate) fn execute(
    prim: &Prim,
    inputs: &[Operand],
    in_avals: &[Aval],
    out_avals: &[Aval],
) -> Vec<Array> {
    let mut jaxpr = Jaxpr::default();
    let mut held: Vec<Array> = Vec::with_capacity(inputs.len());
    let mut atoms = Vec::with_capacity(inputs.len());
    for (op, aval) in inputs.iter().zip(in_avals) {
        let v = jaxpr.new_var(aval.clone());
        jaxpr.invars.push(v);
        atoms.push(Atom::Var(v));
        held.push(op.to_array().into_owned());
    }
    let outputs: Vec<_> = out_avals.iter().map(|a| jaxpr.new_var(a.clone())).collect();
    jaxpr.outvars = outputs.iter().map(|v| Atom::Var(*v)).collect();
    jaxpr.eqns.push(Eqn {
        prim: prim.clone(),
        inputs: atoms,
        outputs,
        loc: Location::caller(),
    });
    let bf16_dots_in_f32 = crate::core::client::bf16_dots_in_f32();
    if let Some(mesh) = operands_mesh(prim, &held) {
        return execute_spmd(prim, &jaxpr, held, mesh, out_avals, bf16_dots_in_f32);
    }
    // Lowering the one-op program to text took a quarter of an eager call: a key made of the
    // primitive's parameters and the types finds a program already compiled without it.
    let key = prim.eager_key().map(|p| {
        format!(
            "{}|{p}|{in_avals:?}|{out_avals:?}|{bf16_dots_in_f32}",
            prim.name()
        )
    });
    let exe = match key.as_ref().and_then(|k| by_key().get(k).cloned()) {
        Some(exe) => exe,
        None => {
            let options = LowerOptions {
                bf16_dots_in_f32,
                ..LowerOptions::default()
            };
            let exe = compile_cached(prim.name(), lower_jaxpr(&jaxpr, &options));
            if let Some(key) = key {
                by_key().insert(key, exe.clone());
            }
            exe
        }
    };
    let device = exe.devices()[0];
    // No operand is sharded over a mesh: the op runs on one device, and an operand copied
    // whole onto several devices is read from this one.
    let placed: Vec<_> = held.iter().map(|a| a.on_device(device)).collect();
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
fn operands_mesh(prim: &Prim, operands: &[Array]) -> Option<Mesh> {
    let mut meshes = operands
        .iter()
        .filter_map(|a| match &a.concrete(prim.name()).sharding {
            Sharding::Named(n) => Some(n.mesh()),
            _ => None,
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
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Runs one primitive SPMD over `mesh`, as JAX runs an operation on sharded arrays: each
/// sharded operand stays as it lies, any other is replicated over the mesh, and the results
/// lie where XLA's sharding propagation puts them (an elementwise op keeps its operand's
/// sharding) rather than being gathered onto one device.
fn execute_spmd(
    prim: &Prim,
    jaxpr: &Jaxpr,
    operands: Vec<Array>,
    mesh: Mesh,
    out_avals: &[Aval],
    bf16_dots_in_f32: bool,
) -> Vec<Array> {
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
            bf16_dots_in_f32,
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
