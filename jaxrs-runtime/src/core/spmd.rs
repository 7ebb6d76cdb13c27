//! One program run SPMD over a mesh: compiled with its arguments' shardings, its unplaced
//! results laid out where XLA's sharding propagation put them, and launched once over all
//! the mesh's devices. A jitted call with sharded arguments or shardings runs here, and so
//! does an eager operation on a sharded array (its result stays sharded, as in JAX).

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::fail;
use crate::core::lower::Spmd;
use crate::core::sharding::{
    try_device_put, Mesh, NamedSharding, PartitionDim, PartitionSpec, Sharding,
};
use crate::pjrt::{Buffer, LoadedExecutable, OpSharding};
use std::borrow::Cow;

/// How a compiled SPMD program lies on its mesh.
pub(crate) struct SpmdProgram {
    pub mesh: Mesh,
    /// Per argument of `main` (a jitted program's constants first, then its leaves).
    pub ins: Vec<NamedSharding>,
    pub outs: Vec<NamedSharding>,
    /// For each of the executable's devices (its argument lists' order), the position of
    /// that device in the mesh (the order of an array's buffers).
    pub mesh_pos: Vec<usize>,
}

/// The placement a program over `mesh` is lowered with: its arguments lying as `ins`, its
/// results as `outs` (`None`: XLA's propagation chooses).
pub(crate) fn placement(
    mesh: &Mesh,
    ins: &[NamedSharding],
    outs: &[Option<NamedSharding>],
) -> Spmd {
    Spmd {
        mesh: mesh.clone(),
        in_specs: ins.iter().map(|s| s.spec().clone()).collect(),
        out_specs: outs
            .iter()
            .map(|s| s.as_ref().map(|s| s.spec().clone()))
            .collect(),
    }
}

/// Compiles a program over `mesh` whose arguments lie as `ins`: `lower` lowers and compiles
/// it for the given [`Spmd`] placement. Results `given` leaves unplaced lie as XLA's
/// propagation chose, as in JAX; where that choice is no partition spec over `mesh`, they are
/// pinned replicated and the program compiled again. `what` names the program in the log.
pub(crate) fn compile(
    what: &dyn std::fmt::Display,
    mesh: Mesh,
    ins: Vec<NamedSharding>,
    given: Vec<Option<NamedSharding>>,
    out_avals: &[Aval],
    lower: impl Fn(Spmd) -> (String, LoadedExecutable),
) -> (String, LoadedExecutable, SpmdProgram) {
    let spmd = |outs: &[Option<NamedSharding>]| placement(&mesh, &ins, outs);
    let (mut text, mut exe) = lower(spmd(&given));
    let mut outs = given.clone();
    if given.iter().any(Option::is_none) {
        let chosen = propagated_out_shardings(&exe, &mesh, out_avals);
        for ((o, c), aval) in outs.iter_mut().zip(chosen).zip(out_avals) {
            if o.is_none() {
                // As JAX does, a result laid out as an argument takes that argument's
                // sharding as written: `P!["dp", None]` stays so, not the `P!["dp"]` read back.
                *o = c.map(|c| {
                    ins.iter()
                        .find(|i| i.spec().len() == aval.rank() && same_layout(i, &c))
                        .cloned()
                        .unwrap_or(c)
                });
            }
        }
        if outs.iter().any(Option::is_none) {
            log::debug!(
                target: "jaxrs::jit",
                "{what}: an output sharding XLA chose is not a spec over {mesh}; replicating \
                 those results"
            );
            let replicated = NamedSharding::new(mesh.clone(), PartitionSpec::default())
                .expect("an empty spec fits every mesh");
            for o in &mut outs {
                o.get_or_insert_with(|| replicated.clone());
            }
            (text, exe) = lower(spmd(&outs));
        }
    }
    let mesh_pos = exe
        .devices()
        .iter()
        .map(|d| {
            mesh.devices()
                .iter()
                .position(|m| m == d)
                .expect("the program runs on its mesh's devices")
        })
        .collect();
    let program = SpmdProgram {
        mesh,
        ins,
        outs: outs.into_iter().map(|o| o.expect("filled above")).collect(),
        mesh_pos,
    };
    (text, exe, program)
}

/// Whether two shardings over one mesh split every dimension alike (a spec's trailing `None`s
/// say nothing).
fn same_layout(a: &NamedSharding, b: &NamedSharding) -> bool {
    let trimmed = |s: &NamedSharding| {
        let dims = s.spec().dims();
        let kept = dims.len()
            - dims
                .iter()
                .rev()
                .take_while(|d| **d == PartitionDim::Replicated)
                .count();
        dims[..kept].to_vec()
    };
    a.mesh() == b.mesh() && trimmed(a) == trimmed(b)
}

/// The shardings XLA's propagation gave the results, as specs over `mesh` (`None` where it
/// could not be read or is no spec over this mesh).
pub(crate) fn propagated_out_shardings(
    exe: &LoadedExecutable,
    mesh: &Mesh,
    out_avals: &[Aval],
) -> Vec<Option<NamedSharding>> {
    let ops = match exe.output_sharding() {
        Some(OpSharding::Tuple(ops)) if ops.len() == out_avals.len() => ops,
        Some(op) if out_avals.len() == 1 => vec![op],
        // A replicated tuple: every result replicated.
        Some(OpSharding::Replicated) => vec![OpSharding::Replicated; out_avals.len()],
        _ => return vec![None; out_avals.len()],
    };
    ops.iter()
        .zip(out_avals)
        .map(|(op, aval)| NamedSharding::from_op_sharding(mesh, aval.rank(), op))
        .collect()
}

impl SpmdProgram {
    /// One PJRT launch over all the mesh's devices: argument list `d` holds each argument's
    /// shard on the executable's device `d`. An argument already laid out as the program
    /// takes it is passed as it is; any other is laid out first. `keep_alive` sees the placed
    /// arguments and returns the indices of donors that must not be donated.
    pub(crate) fn run(
        &self,
        exe: &LoadedExecutable,
        args: impl IntoIterator<Item = Array>,
        keep_alive: impl FnOnce(&[Cow<'_, Array>]) -> Vec<i64>,
        out_avals: &[Aval],
    ) -> Vec<Array> {
        let args: Vec<Array> = args.into_iter().collect();
        let placed: Vec<Cow<'_, Array>> = args
            .iter()
            .zip(&self.ins)
            .map(|(a, s)| {
                if a.is_laid_out_as(s) {
                    Cow::Borrowed(a)
                } else {
                    Cow::Owned(try_device_put(a, s.clone()).unwrap_or_else(|e| fail(e)))
                }
            })
            .collect();
        let lists: Vec<Vec<&Buffer>> = self
            .mesh_pos
            .iter()
            .map(|&m| {
                placed
                    .iter()
                    .map(|a| &*a.concrete("jit").buffers[m])
                    .collect()
            })
            .collect();
        let keep_alive = keep_alive(&placed);
        let outs = exe.execute(&lists, &keep_alive).unwrap_or_else(|e| fail(e));
        // Donated arguments are consumed: nothing may hold them past the launch.
        drop(lists);
        drop(placed);
        drop(args);
        let size = self.mesh.size();
        let mut per_output: Vec<Vec<Option<Buffer>>> = (0..out_avals.len())
            .map(|_| (0..size).map(|_| None).collect())
            .collect();
        for (row, &m) in outs.into_iter().zip(&self.mesh_pos) {
            for (j, b) in row.into_iter().enumerate() {
                per_output[j][m] = Some(b);
            }
        }
        per_output
            .into_iter()
            .zip(out_avals)
            .zip(&self.outs)
            .map(|((buffers, aval), sharding)| {
                let buffers = buffers
                    .into_iter()
                    .map(|b| b.expect("every device returns every output"))
                    .collect();
                Array::from_shards(buffers, aval.clone(), Sharding::Named(sharding.clone()))
            })
            .collect()
    }
}
