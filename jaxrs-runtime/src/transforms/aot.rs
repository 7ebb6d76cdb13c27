//! Ahead-of-time compilation, as JAX's `jax.stages`: `jit(f).lower(args)` traces and lowers
//! without running ([`Lowered`]: the StableHLO, a cost estimate), `.compile()` compiles
//! ([`Compiled`]: XLA's memory and cost analysis, a call that runs it, and its serialization
//! for another process).
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::ShapeDtypeStruct;
//! use jaxrs::tree::TreeOf;
//!
//! let f = jit(|(x, w): (Array, Array)| x.matmul(&w).tanh());
//! // Lowered for shapes alone: no array of that size need exist.
//! let shapes = TreeOf::new(
//!     jaxrs::TreeDef::Tuple(vec![jaxrs::TreeDef::Leaf; 2]),
//!     vec![ShapeDtypeStruct::new([8, 4], DType::F32), ShapeDtypeStruct::new([4, 2], DType::F32)],
//! );
//! let lowered = f.lower(&shapes);
//! assert!(lowered.as_text().contains("stablehlo.dot_general"));
//! let compiled = lowered.compile();
//! // XLA's memory estimate; a cost estimate (`cost_analysis`) where the plugin gives one.
//! assert!(compiled.memory_analysis()?.argument_bytes >= (8 * 4 + 4 * 2) * 4);
//!
//! let y: Array = compiled.call((Array::ones(&[8, 4], DType::F32), Array::ones(&[4, 2], DType::F32)));
//! assert!((y.to_vec::<f32>()[0] - 4f32.tanh()).abs() < 1e-6);
//! // The compile went into the function's cache: calling it compiles nothing more.
//! let _: Array = f.call((Array::zeros(&[8, 4], DType::F32), Array::zeros(&[4, 2], DType::F32)));
//! assert_eq!(f.site().cache_misses(), 1);
//! # Ok::<(), jaxrs::Error>(())
//! ```

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::{client, fail};
use crate::core::trace::is_tracing;
use crate::error::{Error, Result};
use crate::pjrt::MemoryStats;
use crate::transforms::abstract_leaf::AbstractLeaf;
use crate::transforms::jit::{
    begin_lowering, donated_twice, end_lowering, execute, layout_of, param_paths, prepare,
    Donation, ElementDonation, Entry, JitSite, Jitted, Prepared,
};
use crate::transforms::traced::{rebuild, trace_tree};
use crate::tree::{Leaves, StaticValue, Tree, TreeDef, TreeOf};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// The site a [`Lowered`] or [`Compiled`] belongs to: a jitted function's, or its own (a
/// program read back by [`Compiled::deserialize`]).
enum SiteRef<'a> {
    Borrowed(&'a JitSite),
    Owned(Box<JitSite>),
}

impl Deref for SiteRef<'_> {
    type Target = JitSite;
    fn deref(&self) -> &JitSite {
        match self {
            SiteRef::Borrowed(s) => s,
            SiteRef::Owned(s) => s,
        }
    }
}

/// What [`Compiled::call`] takes: the structure of its argument and how many of its leaves
/// (the first ones, in the program's order) are donated.
#[derive(Clone)]
struct Signature {
    arg_def: TreeDef,
    num_donated: usize,
    /// Where each of the program's arguments is among the argument's leaves, when that is
    /// not their order ([`Jitted::donate_argnums`]: the donated elements' leaves first).
    leaf_order: Option<Vec<usize>>,
}

/// A jitted function traced and lowered for one set of argument shapes, not yet compiled:
/// JAX's `jax.stages.Lowered`. Made by [`Jitted::lower`] and [`JitSite::lower`].
pub struct Lowered<'a> {
    site: SiteRef<'a>,
    prepared: Prepared,
    signature: Signature,
    text: String,
}

impl<'a> Lowered<'a> {
    /// The StableHLO module, as XLA receives it (JAX's `Lowered.as_text()`).
    pub fn as_text(&self) -> &str {
        &self.text
    }

    /// The argument leaves' shapes and dtypes, in flattening order (donated ones first).
    pub fn in_avals(&self) -> &[Aval] {
        &self.prepared.in_avals
    }

    /// The result's structure with a shape and dtype per leaf (JAX's `out_info`).
    pub fn out_info(&self) -> TreeOf<Aval> {
        TreeOf::new(
            self.prepared.out_def.clone(),
            self.prepared.out_avals.clone(),
        )
    }

    /// XLA's cost estimate (`flops`, `bytes accessed`, `transcendentals`, ...; JAX's
    /// `Lowered.cost_analysis()`). PJRT gives the estimate of a compiled program only, so this
    /// compiles the module (through the persistent compile cache when it is on) and reports
    /// the optimized program's figures, where JAX reports the unoptimized module's. As
    /// [`Compiled::cost_analysis`], an error where the plugin gives no cost analysis (XLA's
    /// CPU plugin).
    pub fn cost_analysis(&self) -> Result<BTreeMap<String, f64>> {
        self.prepared.compile_detached()?.cost_analysis()
    }

    /// Compiles the program (JAX's `Lowered.compile()`). The compiled specialisation joins the
    /// function's cache, so a later call with these shapes runs it without compiling.
    pub fn compile(self) -> Compiled<'a> {
        // XLA's CPU plugin cannot serialize a program it deserialized (the persistent compile
        // cache's hits): the kernels' code is left out. So the bytes are taken now, from the
        // compile or from the cache entry.
        let (entry, executable) = self.prepared.compile_keeping_bytes(&self.site, true);
        let explanation = format!(
            "jit `{}` ({}) compiled ahead of time by `lower(..).compile()`",
            self.site.name(),
            self.site.location()
        );
        let entry = self
            .site
            .cache()
            .record_miss("jaxrs::jit", explanation, entry);
        Compiled {
            site: self.site,
            entry,
            signature: self.signature,
            executable,
        }
    }
}

/// A compiled program: JAX's `jax.stages.Compiled`. Made by [`Lowered::compile`] or read back
/// by [`Compiled::deserialize`].
pub struct Compiled<'a> {
    site: SiteRef<'a>,
    entry: Arc<Entry>,
    signature: Signature,
    /// The plugin's serialization of the executable, taken when it was compiled or loaded.
    executable: Option<Result<Vec<u8>>>,
}

impl Compiled<'_> {
    /// Runs the program on `args`, which must have the structure, shapes and dtypes it was
    /// lowered for (weak types aside): otherwise a panic names the first difference, as JAX's
    /// `Compiled.__call__` raises. A [`Jitted`] takes its argument tree; a program lowered at a
    /// `#[jit]` site ([`JitSite::lower`]) takes the pair `(donated, kept)` of tuples of the
    /// site's traced parameters, each in parameter order (a Rust scalar parameter as a 0-d
    /// array of any dtype, converted as the scalar would be); its static parameters keep the
    /// values it was lowered with.
    #[track_caller]
    pub fn call<A: Tree, R: Tree>(&self, args: A) -> R {
        self.try_call(args).unwrap_or_else(|e| fail(e))
    }

    /// [`Compiled::call`], returning the environment's failures (a donated array passed
    /// twice, a device error) as errors.
    #[track_caller]
    pub fn try_call<A: Tree, R: Tree>(&self, args: A) -> Result<R> {
        let name = self.site.name();
        if is_tracing() {
            panic!(
                "jit `{name}`: a compiled program cannot be called inside a transformation \
                 (call the jitted function there instead)"
            );
        }
        let (mut leaves, def) = args.flatten();
        drop(args);
        let expected = &self.signature.arg_def;
        if !same_structure(&def, expected) {
            panic!(
                "jit `{name}`: the compiled program takes arguments of structure {expected}, \
                 but this call passes {def}"
            );
        }
        if let Some(order) = &self.signature.leaf_order {
            let mut given: Vec<Option<Array>> = leaves.into_iter().map(Some).collect();
            leaves = order
                .iter()
                .map(|&i| given[i].take().expect("a permutation of the leaves"))
                .collect();
        }
        let paths = || param_paths(&self.site, &self.entry.donated_def, &self.entry.kept_def);
        for (i, (leaf, aval)) in leaves.iter_mut().zip(&self.entry.in_avals).enumerate() {
            // A traced Rust scalar is a weakly typed 0-d array: any 0-d array converts to it,
            // as the scalar itself would.
            if aval.weak
                && aval.shape.is_empty()
                && leaf.shape().is_empty()
                && leaf.dtype() != aval.dtype
            {
                *leaf = leaf.astype(aval.dtype);
            }
            let given = leaf.aval();
            if given.shape != aval.shape || given.dtype != aval.dtype {
                panic!(
                    "jit `{name}`: argument `{}` is {given}, but the program was compiled for \
                     {aval} (lower and compile again for these shapes)",
                    paths()[i]
                );
            }
            if !leaf.is_concrete() {
                panic!("jit `{name}`: argument `{}` is traced", paths()[i]);
            }
        }
        let num_donated = self.signature.num_donated;
        if let Some((donated, other)) = donated_twice(&leaves, num_donated) {
            let paths = paths();
            return Err(Error::DonatedBufferUsed(format!(
                "jit `{name}`: `{}` is donated and the same array is also passed as `{}` in this \
                 call; a donated buffer is consumed by the call, so it can be passed only once",
                paths[donated], paths[other]
            )));
        }
        let entry = &self.entry;
        let arrays = execute(&self.site, entry, leaves, num_donated);
        Ok(rebuild(
            format_args!("jit `{name}`: cannot rebuild the result"),
            &entry.out_def,
            arrays,
        ))
    }

    /// The StableHLO module that was compiled.
    pub fn as_text(&self) -> &str {
        &self.entry.text
    }

    /// The argument leaves' shapes and dtypes, in flattening order.
    pub fn in_avals(&self) -> &[Aval] {
        &self.entry.in_avals
    }

    /// The result's structure with a shape and dtype per leaf (JAX's `out_info`).
    pub fn out_info(&self) -> TreeOf<Aval> {
        TreeOf::new(self.entry.out_def.clone(), self.entry.out_avals.clone())
    }

    /// XLA's cost estimate of the optimized program, by property (`flops`, `bytes accessed`,
    /// `transcendentals`, `optimal_seconds`, ...), as JAX's `Compiled.cost_analysis()`, from
    /// PJRT where the plugin gives it. XLA's CPU plugin (0.11.2) does not
    /// (`PJRT_Executable_GetCostAnalysis` answers "not implemented"): this is then
    /// [`Error::Pjrt`] with [`ErrorCode::Unimplemented`](crate::ErrorCode::Unimplemented).
    /// JAX computes it on CPU in jaxlib's C++, outside the C API.
    pub fn cost_analysis(&self) -> Result<BTreeMap<String, f64>> {
        self.entry.exe.cost_analysis()
    }

    /// XLA's memory estimate for one run: argument, output, aliased (donated), temporary and
    /// generated-code bytes (JAX's `Compiled.memory_analysis()`).
    pub fn memory_analysis(&self) -> Result<MemoryStats> {
        self.entry.exe.compiled_memory_stats()
    }

    /// The program as bytes that [`Compiled::deserialize`] loads in another process running
    /// the same plugin build on the same devices, without tracing or compiling: the
    /// executable as the plugin serializes it, the argument and result structures, the
    /// lifted constants, how a program over a mesh lies on it, and what identifies the plugin
    /// and devices.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let exe = match &self.executable {
            Some(Ok(bytes)) => bytes,
            Some(Err(e)) => return Err(crate::pjrt::copy_error(e)),
            None => unreachable!("a compiled program keeps its bytes"),
        };
        serial::write(&self.site, &self.entry, &self.signature, exe)
    }

    /// Loads a program [`Compiled::serialize`] wrote. Bytes that are not such a program, a
    /// truncated or altered one, another format version, or a program for another plugin or
    /// other devices give [`Error::IncompatibleExecutable`] naming what differs; nothing is
    /// trusted before it is checked.
    pub fn deserialize(bytes: &[u8]) -> Result<Compiled<'static>> {
        let (name, entry, signature, executable) = serial::read(bytes)?;
        Ok(Compiled {
            site: SiteRef::Owned(Box::new(JitSite::new(name, "<deserialized>"))),
            entry: Arc::new(entry),
            signature,
            executable: Some(Ok(executable)),
        })
    }
}

/// Two argument structures alike, a traced Rust scalar standing for any leaf (a compiled
/// program at a `#[jit]` site takes an array where the site took a scalar).
fn same_structure(a: &TreeDef, b: &TreeDef) -> bool {
    use TreeDef::*;
    let all = |x: &[TreeDef], y: &[TreeDef]| {
        x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_structure(x, y))
    };
    match (a, b) {
        (Leaf | Scalar(_), Leaf | Scalar(_)) => true,
        (Tuple(x), Tuple(y)) | (List(x), List(y)) | (FixedArray(x), FixedArray(y)) => all(x, y),
        (Some(x), Some(y)) => same_structure(x, y),
        (Map(x), Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, x), (l, y))| k == l && same_structure(x, y))
        }
        (Struct { name: n, fields: x }, Struct { name: m, fields: y }) => {
            n == m
                && x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, x), (l, y))| k == l && same_structure(x, y))
        }
        _ => a == b,
    }
}

impl<F> Jitted<F> {
    /// Traces and lowers the function for `args` without running it (JAX's
    /// `jax.jit(f).lower(*args)`): `args` is the argument tree, or its structure with a
    /// [`ShapeDtypeStruct`](crate::ShapeDtypeStruct) per leaf (a [`TreeOf`], as
    /// `jaxrs::tree::map_to(&params, |x| x.aval().clone())` makes), or with a
    /// [`ShardedShapeDtypeStruct`](crate::ShardedShapeDtypeStruct) per leaf to name layouts.
    /// The function's donation and shardings apply as to a call.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::{tree::TreeOf, ShapeDtypeStruct};
    ///
    /// let f = jit(|x: Array| x.exp().sum(None, false));
    /// let lowered = f.lower(&TreeOf::leaf(ShapeDtypeStruct::new([3], DType::F32)));
    /// assert!(lowered.as_text().contains("stablehlo.exponential"));
    /// let y: Array = lowered.compile().call(Array::zeros(&[3], DType::F32));
    /// assert_eq!(y.item::<f32>(), 3.0);
    /// ```
    #[track_caller]
    pub fn lower<A: Tree, R: Tree, L: Leaves>(&self, args: &L) -> Lowered<'_>
    where
        F: Fn(A) -> R,
        L::Leaf: AbstractLeaf,
    {
        let site = self.site();
        if is_tracing() {
            panic!(
                "jit `{}`: `lower` cannot run inside a transformation (lower outside, or call \
                 the function)",
                site.name()
            );
        }
        let (leaves, def) = args.leaves_and_structure();
        let avals: Vec<Aval> = leaves.iter().map(AbstractLeaf::abstract_value).collect();
        let unit = ().structure();
        let shardings = self.call_shardings();
        let shardings = shardings.as_deref();
        let (prepared, num_donated, leaf_order) = match self.donation() {
            Donation::Whole => {
                let layout = layout_of(site, shardings, &def, &unit, &leaves);
                let body = |a: A, (), _: &()| self.call_body(a);
                let n = avals.len();
                let dd = def.clone();
                (
                    prepare(site, dd, unit, avals, n, (), layout, &body),
                    n,
                    None,
                )
            }
            Donation::Nothing => {
                let layout = layout_of(site, shardings, &unit, &def, &leaves);
                let body = |(), a: A, _: &()| self.call_body(a);
                let kd = def.clone();
                (
                    prepare(site, unit, kd, avals, 0, (), layout, &body),
                    0,
                    None,
                )
            }
            Donation::Elements(argnums) => {
                let split = ElementDonation::new(&format!("jit `{}`", site.name()), argnums, &def);
                let shardings = shardings.map(|s| split.shardings(site, s));
                let (dd, kd) = split.defs();
                let (donated, kept) = split.split(leaves);
                let n = donated.len();
                let ordered: Vec<_> = donated.into_iter().chain(kept).collect();
                let layout = layout_of(site, shardings.as_ref(), &dd, &kd, &ordered);
                let avals: Vec<Aval> = ordered.iter().map(AbstractLeaf::abstract_value).collect();
                let order = split.program_order();
                let body = |d: Vec<Array>, k: Vec<Array>, split: &ElementDonation| {
                    self.call_body(split.rebuild::<A>(d, k))
                };
                (
                    prepare(site, dd, kd, avals, n, split, layout, &body),
                    n,
                    Some(order),
                )
            }
        };
        let text = prepared.text();
        Lowered {
            site: SiteRef::Borrowed(site),
            prepared,
            signature: Signature {
                arg_def: def,
                num_donated,
                leaf_order,
            },
            text,
        }
    }
}

impl JitSite {
    /// Lowers this `#[jit]` function without running it (`step::jit_site().lower(..)`, JAX's
    /// `step.lower(...)`): `call` calls the function with the traced stand-ins of `args` (an
    /// argument tree, or its structure with a [`ShapeDtypeStruct`](crate::ShapeDtypeStruct)
    /// per leaf), and its static arguments, as it would be called. What that call would
    /// compile is lowered: its donation, static values and shardings are the site's. The
    /// program joins the site's cache once compiled, so the function's own calls with these
    /// shapes and static values then compile nothing.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::tree::TreeOf;
    /// use jaxrs::ShapeDtypeStruct;
    ///
    /// #[jit(static = n)]
    /// fn power(x: &Array, n: u32) -> Array {
    ///     (0..n).fold(x.clone(), |acc, _| &acc * x)
    /// }
    ///
    /// let x = TreeOf::leaf(ShapeDtypeStruct::new([3], DType::F32));
    /// let compiled = power::jit_site().lower(&x, |x: Array| power(&x, 2)).compile();
    /// assert_eq!(compiled.as_text().matches("stablehlo.multiply").count(), 2);
    /// // A site's program takes (donated, kept) tuples of its traced parameters.
    /// let y: Array = compiled.call(((), (Array::from_vec(vec![1f32, 2.0, 3.0], &[3]),)));
    /// assert_eq!(y.to_vec::<f32>(), vec![1.0, 8.0, 27.0]);
    /// // Calling the function with these shapes finds the compiled program.
    /// let _ = power(&Array::ones(&[3], DType::F32), 2);
    /// assert_eq!(power::jit_site().cache_misses(), 1);
    /// ```
    #[track_caller]
    pub fn lower<A: Tree, R: Tree, L: Leaves>(
        &'static self,
        args: &L,
        call: impl FnOnce(A) -> R,
    ) -> Lowered<'static>
    where
        L::Leaf: AbstractLeaf,
    {
        if is_tracing() {
            panic!(
                "jit `{}`: `lower` cannot run inside a transformation",
                self.name()
            );
        }
        let (leaves, def) = args.leaves_and_structure();
        let avals: Vec<Aval> = leaves.iter().map(|l| l.abstract_value()).collect();
        /// Ends the wait when tracing `call` panics.
        struct Reset {
            ended: bool,
        }
        impl Drop for Reset {
            fn drop(&mut self) {
                if !self.ended {
                    end_lowering();
                }
            }
        }
        let previous = begin_lowering(self);
        let mut reset = Reset { ended: false };
        assert!(
            previous.is_none(),
            "jit `{}`: `lower` inside another site's `lower`",
            self.name()
        );
        // The trace only carries the call to the site; it is thrown away.
        drop(trace_tree(
            format_args!("lower of jit `{}`", self.name()),
            &def,
            &avals,
            call,
        ));
        let captured = end_lowering().and_then(|(_, c)| c);
        reset.ended = true;
        let Some((prepared, arg_def, num_donated)) = captured else {
            panic!(
                "jit `{}`: the closure given to `lower` did not call the function",
                self.name()
            );
        };
        let text = prepared.text();
        Lowered {
            site: SiteRef::Borrowed(self),
            prepared,
            signature: Signature {
                arg_def,
                num_donated,
                leaf_order: None,
            },
            text,
        }
    }
}

/// The byte format of [`Compiled::serialize`]: `MAGIC`, the format version (u32 LE), the
/// header's length (u64 LE), the header (JSON), then the constants' bytes and the plugin's
/// executable, at the offsets and lengths the header gives.
mod serial {
    use super::*;
    use crate::core::sharding::{Mesh, NamedSharding, PartitionDim, PartitionSpec};
    use crate::core::spmd::SpmdProgram;
    use serde_json::{json, Value};
    use sha2::{Digest, Sha256};

    const MAGIC: &[u8; 8] = b"JAXRSAOT";
    const VERSION: u32 = 1;
    /// A header is a few kilobytes; a larger one is refused before it is read.
    const MAX_HEADER: u64 = 16 << 20;

    fn bad(why: impl Into<String>) -> Error {
        Error::IncompatibleExecutable(why.into())
    }

    /// What must be the same where the program is loaded as where it was compiled.
    fn environment() -> Value {
        let client = client();
        let api = client.api();
        let (major, minor) = api.version();
        let (plugin_bytes, _) = api.file_stamp();
        let devices: Vec<Value> = client
            .devices()
            .iter()
            .map(|d| json!({"id": d.id(), "kind": d.kind()}))
            .collect();
        json!({
            "jaxrs": env!("CARGO_PKG_VERSION"),
            "platform": client.platform_name(),
            "pjrt_api": format!("{major}.{minor}"),
            "plugin_bytes": plugin_bytes,
            "devices": devices,
        })
    }

    pub(super) fn write(
        site: &JitSite,
        entry: &Entry,
        signature: &Signature,
        exe: &[u8],
    ) -> Result<Vec<u8>> {
        let mut data = Vec::new();
        let mut consts = Vec::new();
        for c in &entry.consts {
            let host = c.try_to_host()?;
            consts.push(json!({
                "aval": aval_json(&host_aval(&host)),
                "offset": data.len(),
                "len": host.as_bytes().len(),
            }));
            data.extend_from_slice(host.as_bytes());
        }
        let header = json!({
            "name": site.name(),
            "environment": environment(),
            "arg_def": tree_json(&signature.arg_def),
            "num_donated": signature.num_donated,
            "leaf_order": signature.leaf_order,
            "donated_def": tree_json(&entry.donated_def),
            "kept_def": tree_json(&entry.kept_def),
            "out_def": tree_json(&entry.out_def),
            "in_avals": entry.in_avals.iter().map(aval_json).collect::<Vec<_>>(),
            "out_avals": entry.out_avals.iter().map(aval_json).collect::<Vec<_>>(),
            "consts": consts,
            "executable": {"offset": data.len(), "len": exe.len()},
            "spmd": entry.program.as_ref().map(spmd_json),
            "text": entry.text,
        });
        data.extend_from_slice(exe);
        let mut header = header;
        header["sha256"] = json!(hex(&Sha256::digest(&data)));
        let header = serde_json::to_vec(&header).expect("JSON values serialize");
        let mut out = Vec::with_capacity(20 + header.len() + data.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(header.len() as u64).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&data);
        Ok(out)
    }

    pub(super) fn read(bytes: &[u8]) -> Result<(&'static str, Entry, Signature, Vec<u8>)> {
        let Some((magic, rest)) = bytes.split_first_chunk::<8>() else {
            return Err(bad("too short to be a serialized jaxrs program"));
        };
        if magic != MAGIC {
            return Err(bad(
                "not a serialized jaxrs program (made by Compiled::serialize)",
            ));
        }
        let Some((version, rest)) = rest.split_first_chunk::<4>() else {
            return Err(bad("truncated in its header"));
        };
        let version = u32::from_le_bytes(*version);
        if version != VERSION {
            return Err(bad(format!(
                "format version {version}, but this jaxrs reads version {VERSION}"
            )));
        }
        let Some((len, rest)) = rest.split_first_chunk::<8>() else {
            return Err(bad("truncated in its header"));
        };
        let len = u64::from_le_bytes(*len);
        if len > MAX_HEADER || len > rest.len() as u64 {
            return Err(bad(format!(
                "its header claims {len} bytes but {} remain",
                rest.len()
            )));
        }
        let (header, data) = rest.split_at(len as usize);
        let header: Value =
            serde_json::from_slice(header).map_err(|e| bad(format!("corrupt header: {e}")))?;
        let here = environment();
        let there = &header["environment"];
        for key in ["jaxrs", "platform", "pjrt_api", "plugin_bytes", "devices"] {
            if there[key] != here[key] {
                return Err(bad(format!(
                    "compiled with {key} = {}, but this process has {key} = {} (a serialized \
                     program loads only with the same jaxrs, plugin build and devices)",
                    there[key], here[key]
                )));
            }
        }
        // The plugin parses the executable as it is: altered bytes must not reach it.
        if str_at(&header, "sha256")? != hex(&Sha256::digest(data)) {
            return Err(bad(
                "its data does not match its checksum (truncated or altered)",
            ));
        }
        let name = intern(str_at(&header, "name")?)?;
        let slice = |v: &Value| -> Result<&[u8]> {
            let offset = usize_at(v, "offset")?;
            let len = usize_at(v, "len")?;
            offset
                .checked_add(len)
                .and_then(|end| data.get(offset..end))
                .ok_or_else(|| bad("truncated: a section lies past the end"))
        };
        let in_avals = avals_at(&header, "in_avals")?;
        let out_avals = avals_at(&header, "out_avals")?;
        let out_def = tree_at(&header, "out_def")?;
        if out_def.num_leaves() != out_avals.len() {
            return Err(bad("the result structure does not match the result count"));
        }
        let arg_def = tree_at(&header, "arg_def")?;
        let (donated_def, kept_def) = (
            tree_at(&header, "donated_def")?,
            tree_at(&header, "kept_def")?,
        );
        let num_donated = usize_at(&header, "num_donated")?;
        if arg_def.num_leaves() != in_avals.len()
            || donated_def.num_leaves() + kept_def.num_leaves() != in_avals.len()
            || num_donated > in_avals.len()
        {
            return Err(bad(
                "the argument structure does not match the argument count",
            ));
        }
        let mut consts: Vec<Array> = Vec::new();
        for c in header["consts"]
            .as_array()
            .ok_or_else(|| bad("no constants list"))?
        {
            let aval = aval_from(&c["aval"])?;
            let bytes = slice(c)?;
            if Some(bytes.len()) != crate::aval::byte_size(&aval.shape, aval.dtype) {
                return Err(bad(format!("constant {aval} has {} bytes", bytes.len())));
            }
            consts.push(Array::from_le_bytes(bytes, &aval.shape, aval.dtype));
        }
        let executable = slice(&header["executable"])?.to_vec();
        let exe = client().deserialize_and_load(&executable)?;
        if exe.num_outputs() != out_avals.len() {
            return Err(bad(format!(
                "the executable has {} outputs, the header {}",
                exe.num_outputs(),
                out_avals.len()
            )));
        }
        let program = match &header["spmd"] {
            Value::Null => None,
            spmd => Some(spmd_from(
                spmd,
                &exe,
                consts.len() + in_avals.len(),
                out_avals.len(),
            )?),
        };
        if let Some(program) = &program {
            // Constants are replicated over the mesh, as the compile placed them.
            consts = consts
                .iter()
                .zip(&program.ins)
                .map(|(c, s)| crate::core::sharding::try_device_put(c, s.clone()))
                .collect::<Result<_>>()?;
        }
        let entry = Entry {
            donated_def,
            kept_def,
            in_avals,
            statics: Box::new(()),
            layout: None,
            program,
            exe,
            consts,
            out_def,
            out_avals,
            text: str_at(&header, "text")?.to_string(),
            elsewhere: Mutex::default(),
        };
        let leaf_order = match &header["leaf_order"] {
            Value::Null => None,
            order => {
                let order: Vec<usize> = order
                    .as_array()
                    .ok_or_else(|| bad("leaf_order is not a list"))?
                    .iter()
                    .map(|i| i.as_u64().map(|i| i as usize))
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad("leaf_order holds a non-index"))?;
                let mut seen = vec![false; arg_def.num_leaves()];
                for &i in &order {
                    if i >= seen.len() || std::mem::replace(&mut seen[i], true) {
                        return Err(bad("leaf_order is not a permutation of the arguments"));
                    }
                }
                if order.len() != seen.len() {
                    return Err(bad("leaf_order is not a permutation of the arguments"));
                }
                Some(order)
            }
        };
        let signature = Signature {
            arg_def,
            num_donated,
            leaf_order,
        };
        Ok((name, entry, signature, executable))
    }

    /// How a program over a mesh lies: the mesh (device ids, shape, axis names), each
    /// argument's and result's partition spec, and where each of the executable's devices
    /// sits in the mesh.
    fn spmd_json(p: &SpmdProgram) -> Value {
        let spec = |s: &NamedSharding| -> Value {
            s.spec()
                .dims()
                .iter()
                .map(|d| match d {
                    PartitionDim::Replicated => Value::Null,
                    PartitionDim::Axes(axes) => json!(axes),
                })
                .collect()
        };
        json!({
            "mesh": {
                "devices": p.mesh.devices().iter().map(|d| d.id()).collect::<Vec<_>>(),
                "shape": p.mesh.shape(),
                "axis_names": p.mesh.axis_names(),
            },
            "ins": p.ins.iter().map(spec).collect::<Vec<_>>(),
            "outs": p.outs.iter().map(spec).collect::<Vec<_>>(),
            "mesh_pos": p.mesh_pos,
        })
    }

    fn spmd_from(
        v: &Value,
        exe: &crate::pjrt::LoadedExecutable,
        num_ins: usize,
        num_outs: usize,
    ) -> Result<SpmdProgram> {
        let client = client();
        let ids = v["mesh"]["devices"]
            .as_array()
            .ok_or_else(|| bad("a mesh without devices"))?;
        let devices = ids
            .iter()
            .map(|id| {
                let id = id
                    .as_i64()
                    .ok_or_else(|| bad(format!("a bad device id {id}")))?;
                client
                    .devices()
                    .iter()
                    .find(|d| i64::from(d.id()) == id)
                    .copied()
                    .ok_or_else(|| bad(format!("the mesh names device {id}, which is not here")))
            })
            .collect::<Result<Vec<_>>>()?;
        let shape: Vec<usize> = v["mesh"]["shape"]
            .as_array()
            .ok_or_else(|| bad("a mesh without a shape"))?
            .iter()
            .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("a bad mesh shape"))?;
        let names: Vec<&str> = v["mesh"]["axis_names"]
            .as_array()
            .ok_or_else(|| bad("a mesh without axis names"))?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or_else(|| bad("a bad mesh axis name"))?;
        let mesh = Mesh::new(&devices, &shape, &names).map_err(|e| bad(format!("{e}")))?;
        let spec_from = |s: &Value| -> Result<NamedSharding> {
            let what = || bad(format!("a bad partition spec {s}"));
            let dims = s
                .as_array()
                .ok_or_else(what)?
                .iter()
                .map(|d| match d {
                    Value::Null => Ok(PartitionDim::Replicated),
                    Value::Array(axes) => axes
                        .iter()
                        .map(|a| a.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .map(PartitionDim::Axes)
                        .ok_or_else(what),
                    _ => Err(what()),
                })
                .collect::<Result<Vec<_>>>()?;
            NamedSharding::new(mesh.clone(), PartitionSpec::new(dims))
                .map_err(|e| bad(format!("{e}")))
        };
        let specs = |key: &str, count: usize| -> Result<Vec<NamedSharding>> {
            v[key]
                .as_array()
                .filter(|l| l.len() == count)
                .ok_or_else(|| bad(format!("`{key}` does not give {count} shardings")))?
                .iter()
                .map(spec_from)
                .collect()
        };
        let ins = specs("ins", num_ins)?;
        let outs = specs("outs", num_outs)?;
        let mesh_pos: Vec<usize> = v["mesh_pos"]
            .as_array()
            .ok_or_else(|| bad("no `mesh_pos`"))?
            .iter()
            .map(|p| p.as_u64().and_then(|p| usize::try_from(p).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("a bad `mesh_pos`"))?;
        // The executable runs on the mesh's devices, each at the position the header says.
        let placed = exe.devices().len() == mesh_pos.len()
            && exe
                .devices()
                .iter()
                .zip(&mesh_pos)
                .all(|(d, &p)| mesh.devices().get(p) == Some(d));
        if !placed {
            return Err(bad("the executable's devices are not the mesh's"));
        }
        Ok(SpmdProgram {
            mesh,
            ins,
            outs,
            mesh_pos,
        })
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn host_aval(host: &crate::core::array::HostArray) -> Aval {
        Aval::new(host.shape(), host.dtype())
    }

    fn aval_json(a: &Aval) -> Value {
        json!({"shape": a.shape, "dtype": a.dtype.name(), "weak": a.weak})
    }

    fn aval_from(v: &Value) -> Result<Aval> {
        let dtype = crate::dtype::DType::from_name(str_at(v, "dtype")?)
            .ok_or_else(|| bad(format!("unknown dtype in {v}")))?;
        let shape = v["shape"]
            .as_array()
            .ok_or_else(|| bad(format!("no shape in {v}")))?
            .iter()
            .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| bad(format!("a bad shape in {v}")))?;
        let aval = Aval::new(shape, dtype).weak(v["weak"].as_bool().unwrap_or(false));
        if crate::aval::byte_size(&aval.shape, aval.dtype).is_none() {
            return Err(bad(format!("{aval} is too large")));
        }
        Ok(aval)
    }

    fn avals_at(v: &Value, key: &str) -> Result<Vec<Aval>> {
        v[key]
            .as_array()
            .ok_or_else(|| bad(format!("no `{key}`")))?
            .iter()
            .map(aval_from)
            .collect()
    }

    fn str_at<'v>(v: &'v Value, key: &str) -> Result<&'v str> {
        v[key].as_str().ok_or_else(|| bad(format!("no `{key}`")))
    }

    fn usize_at(v: &Value, key: &str) -> Result<usize> {
        v[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(format!("no `{key}`")))
    }

    fn tree_at(v: &Value, key: &str) -> Result<TreeDef> {
        tree_from(&v[key])
    }

    /// A tree structure as JSON: `"*"` a leaf, `null` `None`, and one-key objects for the rest.
    fn tree_json(def: &TreeDef) -> Value {
        let all = |c: &[TreeDef]| c.iter().map(tree_json).collect::<Vec<_>>();
        match def {
            TreeDef::Leaf => json!("*"),
            TreeDef::Scalar(d) => json!({"scalar": d.name()}),
            TreeDef::Static(v) => json!({"static": static_json(v)}),
            TreeDef::Tuple(c) => json!({"tuple": all(c)}),
            TreeDef::List(c) => json!({"list": all(c)}),
            TreeDef::FixedArray(c) => json!({"array": all(c)}),
            TreeDef::None => Value::Null,
            TreeDef::Some(t) => json!({"some": tree_json(t)}),
            TreeDef::Map(c) => {
                json!({"map": c.iter().map(|(k, t)| json!([k, tree_json(t)])).collect::<Vec<_>>()})
            }
            TreeDef::Struct { name, fields } => json!({"struct": [
                name,
                fields.iter().map(|(k, t)| json!([k, tree_json(t)])).collect::<Vec<_>>()
            ]}),
        }
    }

    fn tree_from(v: &Value) -> Result<TreeDef> {
        let children = |v: &Value| -> Result<Vec<TreeDef>> {
            v.as_array()
                .ok_or_else(|| bad("a tree node without children"))?
                .iter()
                .map(tree_from)
                .collect()
        };
        match v {
            Value::String(s) if s == "*" => return Ok(TreeDef::Leaf),
            Value::Null => return Ok(TreeDef::None),
            Value::Object(o) if o.len() == 1 => {
                let (kind, v) = o.iter().next().expect("one entry");
                return Ok(match kind.as_str() {
                    "scalar" => TreeDef::Scalar(
                        v.as_str()
                            .and_then(crate::dtype::DType::from_name)
                            .ok_or_else(|| bad(format!("a bad scalar dtype {v}")))?,
                    ),
                    "static" => TreeDef::Static(static_from(v)?),
                    "tuple" => TreeDef::Tuple(children(v)?),
                    "list" => TreeDef::List(children(v)?),
                    "array" => TreeDef::FixedArray(children(v)?),
                    "some" => TreeDef::Some(Box::new(tree_from(v)?)),
                    "map" => TreeDef::Map(
                        named(v)?
                            .into_iter()
                            .map(|(k, t)| (k.to_string(), t))
                            .collect(),
                    ),
                    "struct" => TreeDef::Struct {
                        name: intern(
                            v[0].as_str()
                                .ok_or_else(|| bad("a struct without a name"))?,
                        )?,
                        fields: named(&v[1])?
                            .into_iter()
                            .map(|(k, t)| Ok((intern(k)?, t)))
                            .collect::<Result<_>>()?,
                    },
                    _ => return Err(bad(format!("an unknown tree node `{kind}`"))),
                });
            }
            _ => {}
        }
        Err(bad(format!("a bad tree node {v}")))
    }

    fn named(v: &Value) -> Result<Vec<(&str, TreeDef)>> {
        v.as_array()
            .ok_or_else(|| bad("a tree node without fields"))?
            .iter()
            .map(|kv| {
                let key = kv[0]
                    .as_str()
                    .ok_or_else(|| bad("a field without a name"))?;
                Ok((key, tree_from(&kv[1])?))
            })
            .collect()
    }

    fn static_json(v: &StaticValue) -> Value {
        // Floats by their bits: the value must come back exactly (it is part of the structure).
        match v {
            StaticValue::F32(x) => json!(["f32", x.to_bits()]),
            StaticValue::F64(x) => json!(["f64", x.to_bits()]),
            StaticValue::I8(x) => json!(["i8", x]),
            StaticValue::I16(x) => json!(["i16", x]),
            StaticValue::I32(x) => json!(["i32", x]),
            StaticValue::I64(x) => json!(["i64", x]),
            StaticValue::Isize(x) => json!(["isize", x]),
            StaticValue::U8(x) => json!(["u8", x]),
            StaticValue::U16(x) => json!(["u16", x]),
            StaticValue::U32(x) => json!(["u32", x]),
            StaticValue::U64(x) => json!(["u64", x]),
            StaticValue::Usize(x) => json!(["usize", x]),
            StaticValue::Bool(x) => json!(["bool", x]),
            StaticValue::Char(x) => json!(["char", u32::from(*x)]),
            StaticValue::String(x) => json!(["string", x]),
        }
    }

    fn static_from(v: &Value) -> Result<StaticValue> {
        let what = || bad(format!("a bad static value {v}"));
        let (kind, x) = (v[0].as_str().ok_or_else(what)?, &v[1]);
        let int = || x.as_i64().ok_or_else(what);
        let uint = || x.as_u64().ok_or_else(what);
        fn fit<T>(r: std::result::Result<T, std::num::TryFromIntError>, v: &Value) -> Result<T> {
            r.map_err(|_| bad(format!("a static value out of range {v}")))
        }
        Ok(match kind {
            "f32" => StaticValue::F32(f32::from_bits(fit(u32::try_from(uint()?), v)?)),
            "f64" => StaticValue::F64(f64::from_bits(uint()?)),
            "i8" => StaticValue::I8(fit(i8::try_from(int()?), v)?),
            "i16" => StaticValue::I16(fit(i16::try_from(int()?), v)?),
            "i32" => StaticValue::I32(fit(i32::try_from(int()?), v)?),
            "i64" => StaticValue::I64(int()?),
            "isize" => StaticValue::Isize(fit(isize::try_from(int()?), v)?),
            "u8" => StaticValue::U8(fit(u8::try_from(uint()?), v)?),
            "u16" => StaticValue::U16(fit(u16::try_from(uint()?), v)?),
            "u32" => StaticValue::U32(fit(u32::try_from(uint()?), v)?),
            "u64" => StaticValue::U64(uint()?),
            "usize" => StaticValue::Usize(fit(usize::try_from(uint()?), v)?),
            "bool" => StaticValue::Bool(x.as_bool().ok_or_else(what)?),
            "char" => {
                StaticValue::Char(char::from_u32(fit(u32::try_from(uint()?), v)?).ok_or_else(what)?)
            }
            "string" => StaticValue::String(x.as_str().ok_or_else(what)?.to_string()),
            _ => return Err(what()),
        })
    }

    /// Struct and field names live for the process, as the ones compiled into it do. Each
    /// distinct name is kept once; a process that reads many programs with ever new names
    /// stops at a bound rather than growing without end.
    fn intern(name: &str) -> Result<&'static str> {
        const MAX_INTERNED_BYTES: usize = 1 << 20;
        static NAMES: Mutex<(BTreeSet<&'static str>, usize)> = Mutex::new((BTreeSet::new(), 0));
        let mut names = NAMES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&known) = names.0.get(name) {
            return Ok(known);
        }
        if names.1 + name.len() > MAX_INTERNED_BYTES {
            return Err(bad("too many distinct struct and field names"));
        }
        let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
        names.0.insert(leaked);
        names.1 += name.len();
        Ok(leaked)
    }
}
