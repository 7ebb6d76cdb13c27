//! Lowering: a pure function from a jaxpr to StableHLO text.
//!
//! Each equation becomes StableHLO ops in MLIR's generic form, located at the user's Rust
//! source line (`loc("src/main.rs":12:9)`), so XLA's errors and profiles point back to it.

use crate::aval::Aval;
use crate::core::ir::{Atom, Eqn, Jaxpr, LitValue, Literal};
use crate::core::sharding::{Mesh, PartitionDim, PartitionSpec};
use crate::dtype::DType;
use crate::pjrt::CompileOptions;
use std::fmt::Write;
use std::sync::Arc;

/// How every program lowered here is compiled. XLA's CPU backend defaults to "fast" min/max,
/// which may return the other operand when one is NaN; `maximum`/`minimum` (and relu and
/// `reduce_max`) are lowered plainly and rely on this switch to propagate NaN as JAX does,
/// which sets the same option. Plain ops let XLA fuse them as it fuses JAX's.
pub fn compile_options() -> CompileOptions {
    CompileOptions {
        xla_bool_options: vec![("xla_cpu_enable_fast_min_max".into(), false)],
        ..CompileOptions::single_device()
    }
}

/// [`compile_options`] for a single-device program that runs on `device`: the first local
/// device (where the plugin places a program without an assignment) needs none.
pub fn compile_options_on(device: crate::pjrt::Device) -> CompileOptions {
    let mut o = compile_options();
    if device.id() != crate::core::client::client().devices()[0].id() {
        o.device_assignment = Some(vec![vec![i64::from(device.id())]]);
    }
    o
}

/// `options` with what this program needs to compile correctly on the plugin.
///
/// XLA's 256-bit vectorised CPU code for `atan2` (which `chlo.atan` expands to) in the CPU
/// plugin built from jaxlib 0.11.2 leaves elements unwritten or wrong for some shapes and
/// values (f64 `[8, 3]` of values in [-3, 4], for one; `tests/atan_shapes.rs`). A program
/// that computes an arctangent is compiled with 128-bit vectors, which gives the right
/// values; every other program keeps XLA's default. The options are part of the compile
/// cache's key, so entries compiled either way never mix.
pub fn with_plugin_workarounds<'o>(
    text: &str,
    options: &'o CompileOptions,
) -> std::borrow::Cow<'o, CompileOptions> {
    if !(text.contains("\"chlo.atan\"") || text.contains("\"stablehlo.atan2\"")) {
        return std::borrow::Cow::Borrowed(options);
    }
    let mut fixed = options.clone();
    fixed
        .xla_int_options
        .push(("xla_cpu_prefer_vector_width".into(), 128));
    std::borrow::Cow::Owned(fixed)
}

/// What the lowered module needs beyond the jaxpr.
#[derive(Clone, Debug, Default)]
pub struct LowerOptions {
    /// Per function argument (constants first, then inputs): may XLA reuse its buffer?
    pub donated: Vec<bool>,
    /// Emit `loc(...)` for each op (off for eager single-op programs, whose text is a cache key).
    pub with_locations: bool,
    pub num_replicas: usize,
    /// Ignored when `spmd` is set: an SPMD program has one partition per mesh device.
    pub num_partitions: usize,
    /// A program partitioned over a mesh (pjit): Shardy shardings on `main`'s arguments and
    /// results, one partition per mesh device.
    pub spmd: Option<Spmd>,
    /// Lower for XLA's CPU backend: dots in the forms its bf16/int8 kernels take (a bf16 x bf16
    /// `dot_general` as bf16 x bf16 -> f32 rounded to bf16 once, f32 accumulation as jaxlib's
    /// XLA computes it on CPU; a one-row bf16 or int8 product as a two-row one; few bf16 rows
    /// times an `[out, in]` weight with the weight on the left), and the FFT as the host kernel
    /// `jaxrs_fft` (`crate::kernels`), which runs faster than XLA's own. Set from the target by
    /// the compiling caller (`crate::core::client::for_cpu`, which says why), so that lowering
    /// itself stays a pure function of the program and these options.
    pub for_cpu: bool,
    /// With `for_cpu`: a product of at most `kernels::bf16_rows::MAX_ROWS` bf16 rows with a
    /// bf16 `[out, in]` weight runs as the host kernel `jaxrs_bf16_rows` instead of on
    /// YNNPACK. Set where the CPU has AVX512-BF16 and no AMX
    /// (`crate::core::client::bf16_rows_kernel`, which says why).
    pub bf16_rows_kernel: bool,
    /// Per constvar: its value as a dense attribute (see `dense_constant`) when it is
    /// embedded in the program as a `stablehlo.constant`, as JAX embeds constants; `None`
    /// (or absent): it is an argument of `main`. `donated` and the SPMD specs count only the
    /// arguments.
    pub embedded_consts: Vec<Option<String>>,
}

/// How an SPMD program's arguments and results lie on its mesh.
#[derive(Clone, Debug)]
pub struct Spmd {
    pub mesh: Mesh,
    /// Per argument of `main` (constants first, then inputs).
    pub in_specs: Vec<PartitionSpec>,
    /// Per result; `None` leaves it to XLA's sharding propagation.
    pub out_specs: Vec<Option<PartitionSpec>>,
}

impl LowerOptions {
    /// The number of partitions the module declares and is compiled with.
    fn partitions(&self) -> usize {
        match &self.spmd {
            Some(s) => s.mesh.size(),
            None => self.num_partitions.max(1),
        }
    }

    /// How the module lowered with these options is compiled. The module's
    /// `mhlo.num_partitions`/`mhlo.num_replicas` and these counts come from the same fields,
    /// so they cannot disagree (XLA takes the compile options' word).
    pub fn compile_options(&self) -> CompileOptions {
        let mut o = compile_options();
        o.num_replicas = self.num_replicas.max(1) as i64;
        o.num_partitions = self.partitions() as i64;
        if let Some(s) = &self.spmd {
            o.use_spmd_partitioning = true;
            o.use_shardy_partitioner = true;
            // The plugin's XLA defaults to the mesh-based HloShardingV3, meets the `sdy`
            // attributes the MLIR import carries as frontend attributes, warns ("stale model
            // export") and falls back to V2; asking for V2 gives the same program quietly.
            o.xla_bool_options
                .push(("xla_enable_hlo_sharding_v3".into(), false));
            // Logical device i of `sdy.mesh` (row-major over its axes) is computation i.
            o.device_assignment = Some(vec![s
                .mesh
                .devices()
                .iter()
                .map(|d| i64::from(d.id()))
                .collect()]);
        }
        o
    }
}

/// `[{"dp"}, {}]`: the dimension shardings of `spec` for an array of `rank`, in Shardy's syntax
/// (`[{"dp", ?}, {?}]` when `open`).
pub fn sdy_dims(spec: &PartitionSpec, rank: usize, open: bool) -> String {
    // An open dimension (`{"dp", ?}`) may be split further by the partitioner over the axes
    // left to it (a partially manual shard_map's); a closed one is exactly as written.
    let rest = if open { "?" } else { "" };
    let dims: Vec<String> = (0..rank)
        .map(|d| match spec.dims().get(d) {
            Some(PartitionDim::Axes(axes)) => {
                let names: Vec<String> = axes.iter().map(|a| format!("{a:?}")).collect();
                let sep = if open { ", " } else { "" };
                format!("{{{}{sep}{rest}}}", names.join(", "))
            }
            _ => format!("{{{rest}}}"),
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

/// `#sdy.sharding<@mesh, [{"dp"}, {}]>`: a sharding over the module's one mesh.
pub fn sdy_sharding(spec: &PartitionSpec, rank: usize) -> String {
    format!("#sdy.sharding<@mesh, {}>", sdy_dims(spec, rank, false))
}

/// A constant's value as MLIR's dense attribute of its type (`dense<"0x..."> : tensor<..>`,
/// the raw little-endian bytes), for [`LowerOptions::embedded_consts`]. `None` for bool
/// arrays, whose packing the hex form does not say.
pub fn dense_constant(aval: &Aval, bytes: &[u8]) -> Option<String> {
    if aval.dtype == DType::Bool || bytes.len() != aval.size_in_bytes() {
        return None;
    }
    let width = aval.dtype.size_in_bytes();
    let first = &bytes[..width.min(bytes.len())];
    if !bytes.is_empty() && bytes.chunks(width).all(|c| c == first) {
        // One value everywhere (zeros, most often): MLIR's splat form.
        return Some(format!(
            "dense<{}> : {}",
            dense_scalar(element_value(aval.dtype, first), aval.dtype),
            aval.mlir_type()
        ));
    }
    let mut hex = String::with_capacity(2 * bytes.len());
    for b in bytes {
        let _ = write!(hex, "{b:02X}");
    }
    Some(format!("dense<\"0x{hex}\"> : {}", aval.mlir_type()))
}

/// One element's little-endian bytes read as a value of `dtype` (not bool).
fn element_value(dtype: DType, b: &[u8]) -> LitValue {
    let int = |signed: bool| {
        let mut v: i128 = 0;
        for (i, byte) in b.iter().enumerate() {
            v |= (*byte as i128) << (8 * i);
        }
        let bits = 8 * b.len() as u32;
        if signed && bits < 128 && v >> (bits - 1) & 1 == 1 {
            v -= 1i128 << bits;
        }
        LitValue::Int(v)
    };
    match dtype {
        DType::F64 => LitValue::Float(f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        DType::F32 => LitValue::Float(f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64),
        DType::F16 => LitValue::Float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
        DType::BF16 => LitValue::Float(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
        DType::C64 | DType::C128 => {
            let half = b.len() / 2;
            let (re, im) = b.split_at(half);
            let part = dtype.real_dtype();
            LitValue::Complex(
                element_value(part, re).as_f64(),
                element_value(part, im).as_f64(),
            )
        }
        d => int(!d.is_unsigned()),
    }
}

/// Lowers `jaxpr` to a StableHLO module whose `main` takes the constants (those not embedded)
/// then the inputs.
pub fn lower_jaxpr(jaxpr: &Jaxpr, opts: &LowerOptions) -> String {
    let mut cx = LowerCtx::new(opts.with_locations);
    cx.mesh = opts.spmd.as_ref().map(|s| s.mesh.clone());
    cx.for_cpu = opts.for_cpu;
    cx.bf16_rows_kernel = opts.for_cpu && opts.bf16_rows_kernel;
    let mut args = Vec::with_capacity(jaxpr.constvars.len() + jaxpr.invars.len());
    for (k, v) in jaxpr.constvars.iter().enumerate() {
        match opts.embedded_consts.get(k).and_then(Option::as_ref) {
            Some(value) => {
                let aval = jaxpr.aval(*v).clone();
                let name = cx.op1(
                    "stablehlo.constant",
                    &[],
                    &[],
                    &format!("value = {value}"),
                    &aval,
                );
                cx.bind(*v, name);
            }
            None => args.push(*v),
        }
    }
    args.extend(&jaxpr.invars);
    let mut sig = Vec::with_capacity(args.len());
    for (i, v) in args.iter().enumerate() {
        let name = format!("%arg{i}");
        let aval = jaxpr.aval(*v);
        let mut attrs = Vec::new();
        if opts.donated.get(i).copied().unwrap_or(false) {
            attrs.push("jax.buffer_donor = true".to_string());
        }
        if let Some(spec) = opts.spmd.as_ref().and_then(|s| s.in_specs.get(i)) {
            attrs.push(format!(
                "sdy.sharding = {}",
                sdy_sharding(spec, aval.rank())
            ));
        }
        let attr = if attrs.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", attrs.join(", "))
        };
        sig.push(format!("{name}: {}{attr}", aval.mlir_type()));
        cx.bind(*v, name);
    }
    let outs = cx.lower_body(jaxpr, &[]);
    let out_avals = jaxpr.out_avals();
    let out_types: Vec<String> = out_avals.iter().map(Aval::mlir_type).collect();
    let result_types: Vec<String> = match &opts.spmd {
        Some(s) => out_avals
            .iter()
            .zip(&s.out_specs)
            .map(|(a, spec)| match spec {
                Some(spec) => format!(
                    "{} {{sdy.sharding = {}}}",
                    a.mlir_type(),
                    sdy_sharding(spec, a.rank())
                ),
                None => a.mlir_type(),
            })
            .collect(),
        None => out_types.clone(),
    };
    let mut m = String::with_capacity(cx.body.len() + 512);
    let _ = writeln!(
        m,
        "module @jaxrs attributes {{mhlo.num_partitions = {} : i32, mhlo.num_replicas = {} : i32}} {{",
        opts.partitions(),
        opts.num_replicas.max(1)
    );
    if let Some(s) = &opts.spmd {
        let axes: Vec<String> = s
            .mesh
            .axis_names()
            .iter()
            .zip(s.mesh.shape())
            .map(|(name, n)| format!("{name:?}={n}"))
            .collect();
        let _ = writeln!(m, "  sdy.mesh @mesh = <[{}]>", axes.join(", "));
    }
    let _ = writeln!(
        m,
        "  func.func public @main({}) -> ({}) {{",
        sig.join(", "),
        result_types.join(", ")
    );
    m.push_str(&cx.body);
    if outs.is_empty() {
        m.push_str("    \"func.return\"() : () -> ()\n");
    } else {
        let _ = writeln!(
            m,
            "    \"func.return\"({}) : ({}) -> ()",
            outs.join(", "),
            out_types.join(", ")
        );
    }
    m.push_str("  }\n}\n");
    m
}

/// The state of lowering one function body: SSA names of variables, fresh names, the text.
pub struct LowerCtx {
    body: String,
    names: Vec<Option<String>>,
    next: u32,
    indent: usize,
    with_locations: bool,
    loc: String,
    /// The full `named_scope` of the equation being lowered: the bodies it lowers (a loop's,
    /// a call's) name their operations inside it.
    scope: Option<Arc<str>>,
    mesh: Option<Mesh>,
    /// The mesh axes the body being lowered runs manually over (inside a `shard_map`'s
    /// `sdy.manual_computation`): collectives over them address devices by partition id.
    manual_axes: Vec<String>,
    /// The last channel handle given to a collective of an SPMD program.
    channels: u32,
    for_cpu: bool,
    bf16_rows_kernel: bool,
}

/// How a collective over a manual mesh axis addresses the devices (see
/// [`LowerCtx::manual_axis`]).
pub struct ManualAxis {
    /// The partition ids that communicate, one group per position on the other axes, each
    /// ordered along the axis.
    pub groups: Vec<Vec<usize>>,
    /// How far apart two neighbours along the axis are in partition ids.
    pub stride: usize,
    /// The axis's size.
    pub size: usize,
}

/// An equation's MLIR location: its source line, inside a name location
/// (`"scope/prim"`) when it was bound in a `named_scope`. XLA turns the name into the HLO
/// instruction's `op_name`, which its dumps and profiles show.
fn equation_location(e: &Eqn, scope: Option<&str>) -> String {
    let quoted = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let file = format!(
        "{}:{}:{}",
        quoted(e.loc.file()),
        e.loc.line(),
        e.loc.column()
    );
    match scope {
        Some(scope) => format!(
            " loc({}({file}))",
            quoted(&format!("{scope}/{}", e.prim.name()))
        ),
        None => format!(" loc({file})"),
    }
}

impl LowerCtx {
    fn new(with_locations: bool) -> LowerCtx {
        LowerCtx {
            body: String::new(),
            names: Vec::new(),
            next: 0,
            indent: 4,
            with_locations,
            loc: String::new(),
            scope: None,
            mesh: None,
            manual_axes: Vec::new(),
            channels: 0,
            for_cpu: false,
            bf16_rows_kernel: false,
        }
    }

    /// Runs `f` with `axes` of the program's mesh manual (the body of a
    /// `sdy.manual_computation`).
    pub fn in_manual<R>(&mut self, axes: &[String], f: impl FnOnce(&mut LowerCtx) -> R) -> R {
        let outer = std::mem::replace(&mut self.manual_axes, axes.to_vec());
        let r = f(self);
        self.manual_axes = outer;
        r
    }

    /// The devices a collective over the mesh axis `name` runs across, when the body being
    /// lowered is manual over it (in a `shard_map`); `None` otherwise (a pmap's replicas).
    pub fn manual_axis(&self, name: &str) -> Option<ManualAxis> {
        if !self.manual_axes.iter().any(|a| a == name) {
            return None;
        }
        let mesh = self.mesh.as_ref()?;
        let axis = mesh.axis_names().iter().position(|a| a == name)?;
        let size = mesh.shape()[axis];
        let stride: usize = mesh.shape()[axis + 1..].iter().product();
        let groups = (0..mesh.size())
            .filter(|p| (p / stride).is_multiple_of(size))
            .map(|base| (0..size).map(|k| base + k * stride).collect())
            .collect();
        Some(ManualAxis {
            groups,
            stride,
            size,
        })
    }

    /// `stablehlo.partition_id` as a `u32[]`, where the body being lowered may read it. Inside
    /// a partially manual computation (a `shard_map` with `axis_names`) the partitioner owns
    /// the other axes, so, as JAX does, the id is read in a nested computation manual over
    /// them.
    pub fn partition_id(&mut self) -> String {
        let id_aval = Aval::scalar(DType::U32);
        let free: Vec<String> = match &self.mesh {
            Some(mesh) if !self.manual_axes.is_empty() => mesh
                .axis_names()
                .iter()
                .filter(|a| !self.manual_axes.contains(a))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        if free.is_empty() {
            return self.op1("stablehlo.partition_id", &[], &[], "", &id_aval);
        }
        let all: Vec<String> = self.manual_axes.iter().chain(&free).cloned().collect();
        let region = self.region_ending_with("sdy.return", &[], |cx, _| {
            let id = cx.in_manual(&all, |cx| {
                cx.op1("stablehlo.partition_id", &[], &[], "", &id_aval)
            });
            vec![(id, id_aval.clone())]
        });
        let names: Vec<String> = free.iter().map(|a| format!("{a:?}")).collect();
        let props = format!(
            "in_shardings = #sdy.sharding_per_value<[]>, manual_axes = \
             #sdy<manual_axes{{{}}}>, out_shardings = #sdy.sharding_per_value<[<@mesh, []>]>",
            names.join(", ")
        );
        self.op_with_regions(
            "sdy.manual_computation",
            &[],
            &[],
            &props,
            &[region],
            &[&id_aval],
        )
        .remove(0)
    }

    /// A fresh `channel_handle` attribute for a collective between partitions (type 1,
    /// device to device), as JAX gives each collective of an SPMD program.
    pub fn channel_handle(&mut self) -> String {
        self.channels += 1;
        format!(
            "channel_handle = #stablehlo.channel_handle<handle = {}, type = 1>",
            self.channels
        )
    }

    fn bind(&mut self, v: crate::core::ir::Var, name: String) {
        let i = v.0 as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        self.names[i] = Some(name);
    }

    fn atom(&mut self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.names[v.0 as usize]
                .clone()
                .unwrap_or_else(|| panic!("lowering: v{} used before definition", v.0)),
            Atom::Lit(l) => self.literal(l),
        }
    }

    /// Lowers the equations of `jaxpr` into the current body, with `inputs` bound to its
    /// invars (constvars already bound or also in `inputs`, constants first). Returns the
    /// outputs' SSA names. Used for `main` and for the bodies of regions (loops, branches).
    pub fn lower_body(&mut self, jaxpr: &Jaxpr, inputs: &[String]) -> Vec<String> {
        if !inputs.is_empty() {
            let vars: Vec<_> = jaxpr
                .constvars
                .iter()
                .chain(&jaxpr.invars)
                .copied()
                .collect();
            for (v, n) in vars.into_iter().zip(inputs) {
                self.bind(v, n.clone());
            }
        }
        for e in &jaxpr.eqns {
            let scope = match (&self.scope, &e.scope) {
                (Some(outer), Some(inner)) => Some(Arc::from(format!("{outer}/{inner}"))),
                (outer, inner) => inner.clone().or_else(|| outer.clone()),
            };
            self.loc = if self.with_locations {
                equation_location(e, scope.as_deref())
            } else {
                String::new()
            };
            let outer_scope = std::mem::replace(&mut self.scope, scope);
            let ins: Vec<String> = e.inputs.iter().map(|a| self.atom(a)).collect();
            let in_avals: Vec<Aval> = e.inputs.iter().map(|a| jaxpr.atom_aval(a)).collect();
            let out_avals: Vec<Aval> = e.outputs.iter().map(|v| jaxpr.aval(*v).clone()).collect();
            let mut outs = e.prim.lower(self, &ins, &in_avals, &out_avals);
            if out_avals.iter().any(|a| a.sharding.is_some()) {
                outs = self.constrain_to_types(e.prim.name(), outs, &out_avals);
            }
            self.scope = outer_scope;
            debug_assert_eq!(outs.len(), e.outputs.len(), "{} lowering", e.prim.name());
            for (v, n) in e.outputs.iter().zip(outs) {
                self.bind(*v, n);
            }
        }
        let outvars = jaxpr.outvars.clone();
        outvars.iter().map(|a| self.atom(a)).collect()
    }

    /// Lowers another jaxpr (the body of a call, a branch) inline, with its own variables:
    /// `inputs` bind its constants then its inputs; returns its outputs' names.
    pub fn lower_inline(&mut self, jaxpr: &Jaxpr, inputs: &[String]) -> Vec<String> {
        let outer = std::mem::take(&mut self.names);
        let vars: Vec<_> = jaxpr
            .constvars
            .iter()
            .chain(&jaxpr.invars)
            .copied()
            .collect();
        for (v, n) in vars.into_iter().zip(inputs) {
            self.bind(v, n.clone());
        }
        let saved_loc = self.loc.clone();
        let outs = self.lower_body(jaxpr, &[]);
        self.loc = saved_loc;
        self.names = outer;
        outs
    }

    /// Results typed with shardings over explicit mesh axes, each constrained to its type
    /// (`sdy.sharding_constraint`, as JAX lowers sharding in types); the primitives that
    /// are such a constraint already are left as they are, and so is a single-device program.
    fn constrain_to_types(&mut self, prim: &str, outs: Vec<String>, avals: &[Aval]) -> Vec<String> {
        let Some(mesh) = self.mesh.clone() else {
            return outs;
        };
        if matches!(prim, "reshard" | "sharding_constraint") {
            return outs;
        }
        outs.into_iter()
            .zip(avals)
            .map(|(name, aval)| match &aval.sharding {
                Some(s) if s.mesh().same_grid(&mesh) => {
                    self.sharding_constraint(&name, aval, s.spec())
                }
                _ => name,
            })
            .collect()
    }

    /// `value` (of type `aval`) constrained to lie as `spec` says over the program's mesh:
    /// one `sdy.sharding_constraint`.
    pub fn sharding_constraint(
        &mut self,
        value: &str,
        aval: &Aval,
        spec: &PartitionSpec,
    ) -> String {
        let props = format!("sharding = {}", sdy_sharding(spec, aval.rank()));
        let plain = aval.unsharded();
        self.op1(
            "sdy.sharding_constraint",
            &[value],
            &[&plain],
            &props,
            &plain,
        )
    }

    /// The mesh of the SPMD program being lowered (`None` for a single-device program).
    pub fn mesh(&self) -> Option<&Mesh> {
        self.mesh.as_ref()
    }

    /// Whether the program is lowered for XLA's CPU backend ([`LowerOptions::for_cpu`]).
    pub fn for_cpu(&self) -> bool {
        self.for_cpu
    }

    /// Whether few-row bf16 products run as the host kernel `jaxrs_bf16_rows`
    /// ([`LowerOptions::bf16_rows_kernel`]).
    pub fn bf16_rows_kernel(&self) -> bool {
        self.bf16_rows_kernel
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%{}", self.next - 1)
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.body.push(' ');
        }
        self.body.push_str(s);
        self.body.push_str(&self.loc);
        self.body.push('\n');
    }

    /// Emits `results = "name"(operands) <{props}> : (types) -> result types`, returning
    /// one SSA name per result.
    pub fn op(
        &mut self,
        name: &str,
        operands: &[&str],
        operand_avals: &[&Aval],
        props: &str,
        results: &[&Aval],
    ) -> Vec<String> {
        self.op_with_regions(name, operands, operand_avals, props, &[], results)
    }

    /// Like [`LowerCtx::op`], with one result.
    pub fn op1(
        &mut self,
        name: &str,
        operands: &[&str],
        operand_avals: &[&Aval],
        props: &str,
        result: &Aval,
    ) -> String {
        self.op(name, operands, operand_avals, props, &[result])
            .remove(0)
    }

    /// An op with regions, each given as already lowered text (see [`LowerCtx::region`]).
    pub fn op_with_regions(
        &mut self,
        name: &str,
        operands: &[&str],
        operand_avals: &[&Aval],
        props: &str,
        regions: &[String],
        results: &[&Aval],
    ) -> Vec<String> {
        let base = self.fresh();
        let lhs = match results.len() {
            0 => String::new(),
            1 => format!("{base} = "),
            n => format!("{base}:{n} = "),
        };
        let props = if props.is_empty() {
            String::new()
        } else {
            format!(" <{{{props}}}>")
        };
        let regions = if regions.is_empty() {
            String::new()
        } else {
            format!(" ({})", regions.join(", "))
        };
        let in_types: Vec<String> = operand_avals.iter().map(|a| a.mlir_type()).collect();
        let out_types: Vec<String> = results.iter().map(|a| a.mlir_type()).collect();
        let out_sig = if out_types.len() == 1 {
            out_types[0].clone()
        } else {
            format!("({})", out_types.join(", "))
        };
        let text = format!(
            "{lhs}\"{name}\"({}){props}{regions} : ({}) -> {out_sig}",
            operands.join(", "),
            in_types.join(", ")
        );
        self.line(&text);
        match results.len() {
            0 => vec![],
            1 => vec![base],
            n => (0..n).map(|i| format!("{base}#{i}")).collect(),
        }
    }

    /// Builds a region `{ ^bb0(args): body; "stablehlo.return"(...) }` whose body is written
    /// by `body` with fresh block arguments; returns its text for `op_with_regions`.
    pub fn region(
        &mut self,
        arg_avals: &[Aval],
        body: impl FnOnce(&mut LowerCtx, &[String]) -> Vec<(String, Aval)>,
    ) -> String {
        self.region_ending_with("stablehlo.return", arg_avals, body)
    }

    /// [`LowerCtx::region`] whose block ends with the op `terminator` (`sdy.return` for a
    /// manual computation's body).
    pub fn region_ending_with(
        &mut self,
        terminator: &str,
        arg_avals: &[Aval],
        body: impl FnOnce(&mut LowerCtx, &[String]) -> Vec<(String, Aval)>,
    ) -> String {
        let saved_body = std::mem::take(&mut self.body);
        let saved_indent = self.indent;
        let saved_loc = self.loc.clone();
        self.indent += 4;
        let args: Vec<String> = arg_avals
            .iter()
            .map(|_| {
                self.next += 1;
                format!("%r{}", self.next - 1)
            })
            .collect();
        let results = body(self, &args);
        let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
        let types: Vec<String> = results.iter().map(|(_, a)| a.mlir_type()).collect();
        self.line(&format!(
            "\"{terminator}\"({}) : ({}) -> ()",
            names.join(", "),
            types.join(", ")
        ));
        let inner = std::mem::replace(&mut self.body, saved_body);
        self.indent = saved_indent;
        self.loc = saved_loc;
        let header: Vec<String> = args
            .iter()
            .zip(arg_avals)
            .map(|(n, a)| format!("{n}: {}", a.mlir_type()))
            .collect();
        let pad = " ".repeat(self.indent);
        if header.is_empty() {
            // A region without arguments (a branch of `case`) needs no block label.
            return format!("{{\n{inner}{pad}}}");
        }
        format!("{{\n{pad}^bb0({}):\n{inner}{pad}}}", header.join(", "))
    }

    /// A 0-d constant, broadcast to nothing.
    pub fn literal(&mut self, l: &Literal) -> String {
        let aval = l.aval();
        let v = dense_scalar(l.value, l.dtype);
        self.op1(
            "stablehlo.constant",
            &[],
            &[],
            &format!("value = dense<{v}> : {}", aval.mlir_type()),
            &aval,
        )
    }

    /// A constant of `aval`'s type filled with `value`.
    pub fn splat(&mut self, value: f64, aval: &Aval) -> String {
        let lit = Literal::from_f64(value, aval.dtype, false);
        let v = dense_scalar(lit.value, aval.dtype);
        self.op1(
            "stablehlo.constant",
            &[],
            &[],
            &format!("value = dense<{v}> : {}", aval.mlir_type()),
            aval,
        )
    }
}

/// A scalar in MLIR's dense attribute syntax; non-finite floats as hex bit patterns.
pub fn dense_scalar(v: LitValue, dtype: DType) -> String {
    // In the dtype's own range first: a weak Rust integer keeps its value until converted.
    let v = Literal {
        value: v,
        dtype,
        weak: false,
    }
    .cast(dtype, false)
    .value;
    match (v, dtype) {
        (LitValue::Bool(b), _) => b.to_string(),
        (v, DType::Bool) => (v.as_f64() != 0.0).to_string(),
        (LitValue::Int(i), d) if !d.is_float() => i.to_string(),
        (LitValue::Complex(re, im), d) if d.is_complex() => {
            let part = d.real_dtype();
            format!("({},{})", float_literal(re, part), float_literal(im, part))
        }
        (v, d) if d.is_float() => float_literal(v.as_f64(), d),
        (v, _) => (v.as_f64() as i64).to_string(),
    }
}

/// A float in MLIR's syntax for `dtype`: decimal when finite, the bits in hex otherwise.
fn float_literal(f: f64, dtype: DType) -> String {
    if f.is_finite() {
        // MLIR's float literals need a fraction: `2.0e0`, not `2e0`.
        let s = format!("{f:e}");
        match s.find('.') {
            Some(_) => s,
            None => s.replacen('e', ".0e", 1),
        }
    } else {
        match dtype {
            DType::F64 => format!("0x{:016X}", f.to_bits()),
            DType::F32 => format!("0x{:08X}", (f as f32).to_bits()),
            DType::F16 => format!("0x{:04X}", half::f16::from_f64(f).to_bits()),
            _ => format!("0x{:04X}", half::bf16::from_f64(f).to_bits()),
        }
    }
}

/// `array<i64: 1, 2>` for dense i64 array properties.
pub fn i64_array(xs: impl IntoIterator<Item = impl Into<i64>>) -> String {
    let items: Vec<String> = xs.into_iter().map(|x| x.into().to_string()).collect();
    if items.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", items.join(", "))
    }
}

/// `[1, 2]` for dimension lists inside stablehlo attributes.
pub fn dim_list(xs: &[usize]) -> String {
    let items: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}
