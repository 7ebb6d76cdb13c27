//! Running an artifact: JAX's calling convention (platform index argument, kept arguments),
//! its checks (platforms, effects, trees, dtypes, shapes), and the launch on one device or
//! SPMD over a mesh.

use super::exported::{
    arguments_error, CompileKey, Compiled, Dim, DisabledSafetyCheck, Exported, ExportedMesh,
};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::{client, try_run};
use crate::core::lower::{compile_options, LowerOptions, Spmd};
use crate::core::sharding::{try_device_put, Mesh, NamedSharding, PartitionSpec, Sharding};
use crate::core::spmd::{propagated_out_shardings, SpmdProgram};
use crate::error::{Error, ExportError, Result};
use crate::pjrt::Buffer;
use crate::tree::{try_tree_unflatten, Tree, TreeDef};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Exported {
    /// Runs the artifact on `args`, JAX's `exported.call(*args)`: the positional arguments
    /// as a tuple (`(params, x)`, `(x,)`; a function of one argument also takes it bare), or
    /// the pair `(args, kwargs)` with the keyword arguments as a `BTreeMap<String, _>`. The results come back as `R`, built from the
    /// output tree (see the module's table of trees).
    ///
    /// Arguments whose structure, dtypes or shapes do not fit, and results that do not fit
    /// `R`, are [`ExportError::Arguments`](crate::ExportError::Arguments); an artifact that cannot run here (platform,
    /// effects, devices, symbolic shapes) is its own [`ExportError`]; a compile or run
    /// failure is the usual [`Error`](crate::Error).
    ///
    /// # Panics
    /// When an argument is traced: an artifact runs on concrete arrays, outside `jit`, `grad`
    /// and `vmap`.
    pub fn call<A: Tree, R: Tree>(&self, args: &A) -> Result<R> {
        let (leaves, def) = args.flatten();
        let TreeDef::Tuple(pair) = &self.in_tree else {
            unreachable!("checked when read")
        };
        let no_kwargs = matches!(&pair[1], TreeDef::Map(m) if m.is_empty());
        let one_arg = matches!(&pair[0], TreeDef::Tuple(c) if c.len() == 1 && fits(&c[0], &def));
        if !(fits(&self.in_tree, &def) || (no_kwargs && (fits(&pair[0], &def) || one_arg))) {
            return Err(arguments_error(format!(
                "{}: the arguments {def} do not fit the artifact's input tree {} (pass the \
                 positional arguments as a tuple, or the pair (args, kwargs))",
                self.fun_name,
                if no_kwargs { &pair[0] } else { &self.in_tree }
            )));
        }
        let outs = self.call_flat(&leaves)?;
        try_tree_unflatten(&self.out_tree, outs).map_err(|e| {
            arguments_error(format!(
                "{}: the results {} do not fit the requested type: {e}",
                self.fun_name, self.out_tree
            ))
        })
    }

    /// Runs the artifact on its flat inputs (the leaves of `(args, kwargs)` in order) and
    /// returns its flat outputs.
    ///
    /// # Panics
    /// When an argument is traced.
    pub fn call_flat(&self, args: &[Array]) -> Result<Vec<Array>> {
        let platform_index = self.check_runnable()?;
        if args.len() != self.in_avals.len() {
            return Err(arguments_error(format!(
                "{} takes {} arrays, {} were given",
                self.fun_name,
                self.in_avals.len(),
                args.len()
            )));
        }
        for a in args {
            assert!(
                a.is_concrete(),
                "jaxrs::export: {} was called with a traced array {}; an artifact runs on \
                 concrete arrays, outside jit, grad and vmap",
                self.fun_name,
                a.aval()
            );
        }
        let bindings = self.bind_shapes(args)?;
        let mut module_args: Vec<Array> = Vec::with_capacity(self.module_kept_var_idx.len() + 1);
        if let Some(i) = platform_index {
            module_args.push(Array::scalar(i));
        }
        module_args.extend(self.module_kept_var_idx.iter().map(|&i| args[i].clone()));
        let out_avals = self.out_avals_at(&bindings)?;
        if self.nr_devices == 1 {
            self.run_single(module_args, &bindings, out_avals)
        } else {
            self.run_spmd(module_args, &bindings, out_avals)
        }
    }

    /// Checks what makes an artifact unrunnable whatever the arguments; returns the platform
    /// index argument the module takes, if it takes one.
    fn check_runnable(&self) -> Result<Option<i32>> {
        if let Some(e) = self
            .ordered_effects
            .iter()
            .chain(&self.unordered_effects)
            .next()
        {
            return Err(Error::Export(ExportError::Unsupported(format!(
                "the effect {e} (ordered: {:?}, unordered: {:?})",
                self.ordered_effects, self.unordered_effects
            ))));
        }
        let here = jax_platform(&client().platform_name());
        let index = self.platforms.iter().position(|p| *p == here);
        let unchecked = self
            .disabled_safety_checks
            .contains(&DisabledSafetyCheck::Platform);
        let index = match (index, unchecked) {
            (Some(i), _) => i,
            // As JAX does with the platform check disabled: the first platform's code runs.
            (None, true) if !self.platforms.is_empty() => 0,
            _ => {
                return Err(Error::Export(ExportError::Platform {
                    platforms: self.platforms.clone(),
                    here,
                }))
            }
        };
        Ok((self.platforms.len() > 1)
            .then(|| i32::try_from(index).expect("fewer than 2^31 platforms")))
    }

    /// Checks the arguments' dtypes and shapes against the input avals and returns the
    /// values of the symbolic dimensions (those that are plain names).
    fn bind_shapes(&self, args: &[Array]) -> Result<BTreeMap<String, usize>> {
        let mut bindings = BTreeMap::new();
        for (i, (a, aval)) in args.iter().zip(&self.in_avals).enumerate() {
            let mismatch = || {
                arguments_error(format!(
                    "{}: argument {i} is {}, the artifact takes {aval}",
                    self.fun_name,
                    a.aval()
                ))
            };
            if a.dtype() != aval.dtype || a.rank() != aval.shape.len() {
                return Err(mismatch());
            }
            for (&n, d) in a.shape().iter().zip(&aval.shape) {
                match d {
                    Dim::Known(k) if *k != n => return Err(mismatch()),
                    Dim::Known(_) => {}
                    Dim::Symbolic(s) if is_name(s) => match bindings.get(s) {
                        Some(&m) if m != n => {
                            return Err(arguments_error(format!(
                                "{}: the symbolic dimension {s} is {m} in one argument and {n} \
                                 in argument {i} ({aval})",
                                self.fun_name
                            )))
                        }
                        _ => {
                            bindings.insert(s.clone(), n);
                        }
                    },
                    // An expression (`2*b`) is checked by the module's shape assertions.
                    Dim::Symbolic(_) => {}
                }
            }
        }
        Ok(bindings)
    }

    /// The outputs' shapes at these symbol values (`None` per output whose shape is not
    /// known before running).
    fn out_avals_at(&self, bindings: &BTreeMap<String, usize>) -> Result<Vec<Option<Aval>>> {
        Ok(self
            .out_avals
            .iter()
            .map(|a| {
                let dims: Option<Vec<usize>> = a
                    .shape
                    .iter()
                    .map(|d| match d {
                        Dim::Known(n) => Some(*n),
                        Dim::Symbolic(s) => bindings.get(s).copied(),
                    })
                    .collect();
                dims.map(|d| Aval::new(d, a.dtype))
            })
            .collect())
    }

    fn symbolic_error(&self, bindings: &BTreeMap<String, usize>, e: Error) -> Error {
        let symbols = self.symbolic_dims();
        if symbols.is_empty() {
            return e;
        }
        let bound: Vec<String> = bindings.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        Error::Export(ExportError::SymbolicShapes {
            symbols,
            bindings: if bound.is_empty() {
                "nothing".into()
            } else {
                bound.join(", ")
            },
            message: e.to_string(),
        })
    }

    fn cached(
        &self,
        key: CompileKey,
        compile: impl FnOnce() -> Result<Compiled>,
    ) -> Result<Arc<Compiled>> {
        if let Some(c) = self.compiled.lock().expect("no panic holds it").get(&key) {
            return Ok(Arc::clone(c));
        }
        let c = Arc::new(compile()?);
        self.compiled
            .lock()
            .expect("no panic holds it")
            .insert(key, Arc::clone(&c));
        Ok(c)
    }

    fn run_single(
        &self,
        args: Vec<Array>,
        bindings: &BTreeMap<String, usize>,
        out_avals: Vec<Option<Aval>>,
    ) -> Result<Vec<Array>> {
        let client = client();
        let device = client.devices()[0];
        let placed: Vec<Array> = args
            .iter()
            .map(|a| match a.sharding() {
                Some(Sharding::SingleDevice(d)) if *d == device => Ok(a.clone()),
                _ => try_device_put(a, device),
            })
            .collect::<Result<_>>()?;
        let key = (
            placed.iter().map(|a| a.shape().to_vec()).collect(),
            vec![device.id()],
        );
        let compiled = self.cached(key, || {
            let exe = client
                .compile_mlir(&self.mlir_module_serialized, &compile_options())
                .map_err(|e| self.symbolic_error(bindings, e))?;
            Ok(Compiled::Single { exe })
        })?;
        let Compiled::Single { exe } = &*compiled else {
            unreachable!("one device, one kind")
        };
        let buffers: Vec<&Buffer> = placed
            .iter()
            .map(|a| &*a.concrete("jaxrs::export").buffers[0])
            .collect();
        // The artifact's donations (JAX's `donate_argnums`) never consume the caller's arrays.
        let keep: Vec<i64> = (0..buffers.len() as i64).collect();
        let outs = exe.execute(&[buffers], &keep)?;
        let row = outs.into_iter().next().unwrap_or_default();
        Ok(row
            .into_iter()
            .zip(out_avals)
            .zip(&self.out_avals)
            .map(|((b, aval), exported)| {
                let aval = aval.unwrap_or_else(|| {
                    let dims = b.dims().iter().map(|&d| d as usize).collect::<Vec<_>>();
                    Aval::new(dims, exported.dtype)
                });
                Array::from_buffer(b, aval, device)
            })
            .collect())
    }

    /// The mesh a multi-device artifact runs on: the one an argument already lies on, when
    /// its axes are the artifact's; else the process's first devices in the artifact's
    /// mesh shape.
    fn mesh_for(&self, args: &[Array]) -> Result<Mesh> {
        let exported: Option<&ExportedMesh> = self
            .in_shardings
            .iter()
            .chain(&self.out_shardings)
            .flatten()
            .map(|s| &s.mesh)
            .next();
        let (names, sizes): (Vec<String>, Vec<usize>) = match exported {
            Some(m) => (m.axis_names.clone(), m.axis_sizes.clone()),
            None => (vec!["_devices".into()], vec![self.nr_devices as usize]),
        };
        if sizes.iter().product::<usize>() != self.nr_devices as usize {
            return Err(Error::Export(ExportError::Malformed(format!(
                "a mesh {names:?} of sizes {sizes:?} for {} devices",
                self.nr_devices
            ))));
        }
        for a in args {
            if let Some(Sharding::Named(s)) = a.sharding() {
                let m = s.mesh();
                if m.axis_names() == names.as_slice() && m.shape() == sizes.as_slice() {
                    return Ok(m.clone());
                }
            }
        }
        let devices = client().devices().to_vec();
        let needed = self.nr_devices as usize;
        if devices.len() < needed {
            return Err(Error::Export(ExportError::Devices {
                needed,
                available: devices.len(),
            }));
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Mesh::new(&devices[..needed], &sizes, &names)
    }

    fn run_spmd(
        &self,
        args: Vec<Array>,
        bindings: &BTreeMap<String, usize>,
        out_avals: Vec<Option<Aval>>,
    ) -> Result<Vec<Array>> {
        let mesh = self.mesh_for(&args)?;
        let replicated = PartitionSpec::default();
        let mut in_specs: Vec<PartitionSpec> = Vec::with_capacity(args.len());
        if self.platforms.len() > 1 {
            in_specs.push(replicated.clone());
        }
        in_specs.extend(self.module_kept_var_idx.iter().map(|&i| {
            self.in_shardings[i]
                .as_ref()
                .map_or_else(|| replicated.clone(), |s| s.spec.clone())
        }));
        let out_specs: Vec<Option<PartitionSpec>> = self
            .out_shardings
            .iter()
            .map(|s| s.as_ref().map(|s| s.spec.clone()))
            .collect();
        let out_avals: Vec<Aval> = out_avals
            .into_iter()
            .enumerate()
            .map(|(j, a)| {
                a.ok_or_else(|| {
                    self.symbolic_error(
                        bindings,
                        arguments_error(format!(
                            "output {j} ({}) has a shape that is not known before running",
                            self.out_avals[j]
                        )),
                    )
                })
            })
            .collect::<Result<_>>()?;
        let key = (
            args.iter().map(|a| a.shape().to_vec()).collect(),
            mesh.devices().iter().map(|d| d.id()).collect(),
        );
        let compiled = self.cached(key, || {
            let ins = in_specs
                .iter()
                .map(|s| NamedSharding::new(mesh.clone(), s.clone()))
                .collect::<Result<Vec<_>>>()?;
            let options = LowerOptions {
                spmd: Some(Spmd {
                    mesh: mesh.clone(),
                    in_specs: in_specs.clone(),
                    out_specs: out_specs.clone(),
                }),
                ..Default::default()
            }
            .compile_options();
            let exe = client()
                .compile_mlir(&self.mlir_module_serialized, &options)
                .map_err(|e| self.symbolic_error(bindings, e))?;
            let propagated = propagated_out_shardings(&exe, &mesh, &out_avals);
            let outs = out_specs
                .iter()
                .zip(propagated)
                .enumerate()
                .map(|(j, (given, chosen))| match given {
                    Some(spec) => NamedSharding::new(mesh.clone(), spec.clone()),
                    None => chosen.ok_or_else(|| {
                        Error::Export(ExportError::Unsupported(format!(
                            "output {j}, whose sharding is unspecified and which XLA laid out \
                             in a way that is no partition spec over {mesh}"
                        )))
                    }),
                })
                .collect::<Result<Vec<_>>>()?;
            let mesh_pos = exe
                .devices()
                .iter()
                .map(|d| {
                    mesh.devices().iter().position(|m| m == d).ok_or_else(|| {
                        Error::Export(ExportError::Malformed(
                            "the compiled program runs on devices outside its mesh".into(),
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Compiled::Spmd {
                exe,
                program: SpmdProgram {
                    mesh: mesh.clone(),
                    ins,
                    outs,
                    mesh_pos,
                },
            })
        })?;
        let Compiled::Spmd { exe, program } = &*compiled else {
            unreachable!("a mesh, one kind")
        };
        let n = args.len() as i64;
        try_run(|| program.run(exe, args, |_| (0..n).collect(), &out_avals))
    }
}

/// JAX's name of a PJRT platform.
pub(crate) fn jax_platform(pjrt_name: &str) -> String {
    let name = pjrt_name.to_ascii_lowercase();
    match name.as_str() {
        "host" => "cpu".into(),
        "gpu" => "cuda".into(),
        _ => name,
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether a jaxrs argument structure `given` fits JAX's structure `jax` (the module's table
/// of trees).
pub(crate) fn fits(jax: &TreeDef, given: &TreeDef) -> bool {
    let all = |a: &[TreeDef], b: &[TreeDef]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| fits(x, y))
    };
    match (jax, given) {
        (_, TreeDef::Some(inner)) => fits(jax, inner),
        (TreeDef::Leaf, TreeDef::Leaf | TreeDef::Scalar(_)) => true,
        (TreeDef::None, TreeDef::None) => true,
        (TreeDef::None, TreeDef::Tuple(c)) => c.is_empty(),
        (TreeDef::Tuple(a), TreeDef::Tuple(b) | TreeDef::FixedArray(b)) => all(a, b),
        (TreeDef::List(a), TreeDef::List(b) | TreeDef::FixedArray(b)) => all(a, b),
        (TreeDef::Map(a), TreeDef::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, ta), (kb, tb))| ka == kb && fits(ta, tb))
        }
        (TreeDef::Map(a), TreeDef::Struct { fields, .. }) => {
            a.len() == fields.len()
                && a.iter()
                    .zip(fields)
                    .all(|((ka, ta), (kb, tb))| ka == kb && fits(ta, tb))
        }
        _ => false,
    }
}
