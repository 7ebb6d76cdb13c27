//! Tracing: while a trace is open, every operation on arrays is recorded as an equation of a
//! jaxpr instead of running. Traces nest (a thread-local stack); an operation always goes to
//! the innermost one, and a concrete array or a tracer of an outer trace met there is lifted
//! into a constant input of the inner jaxpr (never pasted in as a literal).

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::array::{Concrete, Repr, Tracer};
use crate::core::ir::{Atom, ClosedJaxpr, Env, Eqn, Jaxpr, Literal, Var};
use crate::core::primitive::Prim;
use crate::core::sharding_types;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An operand of an operation: an array (concrete or traced, borrowed or owned) or a Rust
/// scalar. Operations bind it and the primitives' rules receive it.
#[derive(Clone)]
pub enum Operand<'a> {
    Array(Cow<'a, Array>),
    Lit(Literal),
}

impl Operand<'_> {
    /// The operand's type (a literal's is a 0-d aval), with its sharding over explicit mesh
    /// axes ([`typeof_`](crate::core::sharding_types::typeof_)).
    pub fn aval(&self) -> Aval {
        match self {
            Operand::Array(a) => sharding_types::typeof_(a),
            Operand::Lit(l) => l.aval(),
        }
    }

    /// The array this operand stands for; a literal becomes a concrete 0-d array (under a
    /// trace, a captured constant).
    pub fn to_array(&self) -> Cow<'_, Array> {
        match self {
            Operand::Array(a) => Cow::Borrowed(a),
            Operand::Lit(l) => Cow::Owned(Array::from_literal(*l)),
        }
    }

    /// The arrays `ops` stand for (see [`Operand::to_array`]).
    pub fn to_arrays(ops: &[Operand]) -> Vec<Array> {
        ops.iter().map(|op| op.to_array().into_owned()).collect()
    }

    /// The same operand, borrowing its array.
    pub fn borrowed(&self) -> Operand<'_> {
        match self {
            Operand::Array(a) => Operand::Array(Cow::Borrowed(a)),
            Operand::Lit(l) => Operand::Lit(*l),
        }
    }
}

impl<'a> From<&'a Array> for Operand<'a> {
    fn from(a: &'a Array) -> Operand<'a> {
        Operand::Array(Cow::Borrowed(a))
    }
}

impl From<Array> for Operand<'_> {
    fn from(a: Array) -> Self {
        Operand::Array(Cow::Owned(a))
    }
}

struct Frame {
    id: u64,
    /// The transformation tracing, for messages (`grad`, ``jit `step` ``), if known.
    transformation: Option<String>,
    jaxpr: Jaxpr,
    consts: Vec<Array>,
    const_vars: HashMap<usize, Var>,
    /// How many `named_scope`s were open when the trace began: its equations record only
    /// the scopes opened inside it, so a traced jaxpr reads the same wherever it is reused.
    scope_base: usize,
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

static NEXT_TRACE_ID: AtomicU64 = AtomicU64::new(1);

/// Is any trace open on this thread?
pub fn is_tracing() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// Where the tracers of trace `id` stand, for the message about reading one.
pub enum TraceState {
    /// The trace is open on this thread, run by this transformation if known.
    Open(Option<String>),
    /// The trace has finished (or is on another thread): its tracer leaked out of it.
    Finished,
}

/// The state of the trace `id` (see [`TraceState`]).
pub fn trace_state(id: u64) -> TraceState {
    STACK.with(|s| match s.borrow().iter().find(|f| f.id == id) {
        Some(f) => TraceState::Open(f.transformation.clone()),
        None => TraceState::Finished,
    })
}

/// Stops with the message every programmer error in an operation carries: the op, what is
/// wrong, the operands' types and the user's source line.
#[track_caller]
pub fn op_error(op: &str, msg: &str, avals: &[Aval], loc: &Location<'_>) -> ! {
    panic!(
        "{op}: {msg} (operands: {}) {}",
        avals_to_string(avals),
        At::column(loc)
    )
}

/// Stops (with [`Error::ShapeTooLarge`], which `try_run` returns) when an array of `shape`
/// and `dtype` could not exist: its element count or byte size overflows, or it passes
/// [`MAX_ARRAY_BYTES`](crate::aval::MAX_ARRAY_BYTES). `op` and `loc` name the operation and the user's line.
///
/// [`Error::ShapeTooLarge`]: crate::error::Error::ShapeTooLarge
pub(crate) fn check_shape(
    op: &str,
    shape: &[usize],
    dtype: crate::dtype::DType,
    loc: &Location<'_>,
) {
    let bytes = crate::aval::byte_size(shape, dtype);
    if bytes.is_some_and(|b| b <= crate::aval::MAX_ARRAY_BYTES) {
        return;
    }
    let aval = Aval::new(shape.to_vec(), dtype);
    let size = match (crate::aval::element_count(shape), bytes) {
        (None, _) => "has more elements than a 64-bit count holds".to_string(),
        (Some(_), None) => "would take more than 2^64 bytes".to_string(),
        (Some(_), Some(b)) => format!("would take {b} bytes"),
    };
    crate::core::client::fail(crate::error::Error::ShapeTooLarge(format!(
        "{op}: {aval} {size}, more than the 2^48 any device can address {}",
        At::line(loc)
    )))
}

/// The user's source line as error messages end: `at file:line` ([`At::line`]) or
/// `at file:line:col` ([`At::column`]), written in one place so every message points alike.
///
/// ```text
/// panic!("switch: no branches, {}", At::line(loc));
/// ```
#[derive(Clone, Copy)]
pub struct At<'a> {
    loc: &'a Location<'a>,
    column: bool,
}

impl<'a> At<'a> {
    /// `at file:line`.
    pub fn line(loc: &'a Location<'a>) -> At<'a> {
        At { loc, column: false }
    }

    /// `at file:line:col`.
    pub fn column(loc: &'a Location<'a>) -> At<'a> {
        At { loc, column: true }
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}:{}", self.loc.file(), self.loc.line())?;
        if self.column {
            write!(f, ":{}", self.loc.column())?;
        }
        Ok(())
    }
}

/// Applies a primitive: records it in the innermost trace, or runs it now when none is open.
#[track_caller]
pub fn bind(prim: Prim, inputs: &[Operand]) -> Vec<Array> {
    bind_at(prim, inputs, located(Location::caller()))
}

/// [`bind`], attributing the operation to `loc`.
pub fn bind_at(prim: Prim, inputs: &[Operand], loc: &'static Location<'static>) -> Vec<Array> {
    let in_avals: Vec<Aval> = inputs.iter().map(Operand::aval).collect();
    let mut out_avals = match prim.abstract_eval(&in_avals) {
        Ok(a) => a,
        Err(msg) => op_error(prim.name(), &msg, &in_avals, loc),
    };
    for aval in &out_avals {
        check_shape(prim.name(), &aval.shape, aval.dtype, loc);
    }
    let sharded = in_avals.iter().any(|a| a.sharding.is_some());
    if sharded {
        if let Err(msg) = sharding_types::infer(&*prim, &in_avals, &mut out_avals) {
            op_error(prim.name(), &msg, &in_avals, loc)
        }
    }
    if is_tracing() {
        record(prim, inputs, out_avals, loc)
    } else if sharded || out_avals.iter().any(|a| a.sharding.is_some()) {
        // Over explicit mesh axes: run as any eager operation (concrete arrays' avals carry
        // no type sharding), then lay each result out as its type says, as JAX's eager
        // operations on explicitly sharded arrays are.
        let plain = |avals: &[Aval]| avals.iter().map(Aval::unsharded).collect::<Vec<_>>();
        let outs = run_eager(&prim, inputs, &plain(&in_avals), &plain(&out_avals), loc);
        laid_out_as_typed(outs, &out_avals)
    } else {
        run_eager(&prim, inputs, &in_avals, &out_avals, loc)
    }
}

/// Runs `prim` now, on concrete operands.
fn run_eager(
    prim: &Prim,
    inputs: &[Operand],
    in_avals: &[Aval],
    out_avals: &[Aval],
    loc: &'static Location<'static>,
) -> Vec<Array> {
    let outs = match prim.eager(inputs) {
        Some(outs) => outs,
        None => crate::core::eager::execute(prim, inputs, in_avals, out_avals),
    };
    if crate::core::debug_nans::enabled() {
        crate::core::debug_nans::check_op(prim.name(), &outs, loc);
    }
    outs
}

/// Eager results laid out as their types over explicit mesh axes say.
#[cold]
fn laid_out_as_typed(outs: Vec<Array>, out_avals: &[Aval]) -> Vec<Array> {
    outs.into_iter()
        .zip(out_avals)
        .map(|(o, aval)| match &aval.sharding {
            Some(s) => crate::core::sharding::try_device_put(&o, (**s).clone())
                .unwrap_or_else(|e| crate::core::client::fail(e)),
            None => o,
        })
        .collect()
}

/// Binds a primitive with one result.
#[track_caller]
pub fn bind1(prim: impl crate::core::primitive::Primitive, inputs: &[Operand]) -> Array {
    bind_at(Arc::new(prim), inputs, located(Location::caller())).remove(0)
}

fn record(
    prim: Prim,
    inputs: &[Operand],
    out_avals: Vec<Aval>,
    loc: &'static Location<'static>,
) -> Vec<Array> {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let depth = stack.len();
        let atoms: Vec<Atom> = inputs
            .iter()
            .map(|op| atom_in(&mut stack, depth - 1, op))
            .collect();
        let frame = stack.last_mut().expect("a trace is open");
        let outputs: Vec<Var> = out_avals
            .iter()
            .map(|a| frame.jaxpr.new_var(a.clone()))
            .collect();
        let scope = scope_since(frame.scope_base);
        frame.jaxpr.eqns.push(Eqn {
            prim,
            inputs: atoms,
            outputs: outputs.clone(),
            loc,
            scope,
        });
        let id = frame.id;
        outputs
            .into_iter()
            .zip(out_avals)
            .map(|(var, aval)| {
                Array::from_tracer(Tracer {
                    aval,
                    trace_id: id,
                    var,
                })
            })
            .collect()
    })
}

/// The atom standing for `op` in frame `level`, lifting outside values into constants.
fn atom_in(stack: &mut [Frame], level: usize, op: &Operand) -> Atom {
    let a = match op {
        Operand::Lit(l) => return Atom::Lit(*l),
        Operand::Array(a) => &**a,
    };
    let frame_id = stack[level].id;
    if let Repr::Concrete(Concrete {
        literal: Some(l), ..
    }) = &*a.0
    {
        // A filled array of rank > 0 is lifted as before: writing it as a `broadcast_in_dim`
        // of the literal (JAX's form) needs a primitive, which `core` may not import.
        if a.rank() == 0 {
            return Atom::Lit(*l);
        }
    }
    if let Repr::Traced(t) = &*a.0 {
        if t.trace_id == frame_id {
            return Atom::Var(t.var);
        }
        if !stack[..level].iter().any(|f| f.id == t.trace_id) {
            panic!(
                "a traced value ({}) was used outside the transformation that created it: \
                 a tracer leaked (e.g. stored in a variable that outlived a jit/grad/vmap call)",
                t.aval
            );
        }
    }
    let frame = &mut stack[level];
    let key = Arc::as_ptr(&a.0) as usize;
    if let Some(v) = frame.const_vars.get(&key) {
        return Atom::Var(*v);
    }
    let v = frame.jaxpr.new_var(a.aval().clone());
    frame.jaxpr.constvars.push(v);
    frame.consts.push(a.clone());
    frame.const_vars.insert(key, v);
    Atom::Var(v)
}

/// Pops the frame even when the traced function panics, so that a caught panic (a shape
/// mismatch in a test, a REPL, a server) leaves this thread with no trace open.
struct FrameGuard {
    id: u64,
    popped: bool,
}

impl Drop for FrameGuard {
    fn drop(&mut self) {
        if self.popped {
            return;
        }
        // `try_with`: this may run while the thread's locals are torn down. Frames above ours
        // belong to traces opened inside it; their guards ran first and popped them, but
        // truncating rather than popping one keeps the stack right even if one did not.
        let _ = STACK.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if let Some(at) = s.iter().rposition(|f| f.id == self.id) {
                    s.truncate(at);
                }
            }
        });
    }
}

/// Traces `f` on fresh tracers of `in_avals` into a closed jaxpr.
///
/// Outputs that are not tracers of this trace (a captured array returned as is, an input of
/// an outer trace) become constants of the jaxpr.
pub fn trace_to_jaxpr(in_avals: &[Aval], f: impl FnOnce(Vec<Array>) -> Vec<Array>) -> ClosedJaxpr {
    trace_to_jaxpr_for(None, in_avals, f)
}

/// [`trace_to_jaxpr`] on behalf of the user-facing `transformation` (`grad`, ``jit `step` ``),
/// which messages about its tracers name.
pub fn trace_to_jaxpr_for(
    transformation: Option<String>,
    in_avals: &[Aval],
    f: impl FnOnce(Vec<Array>) -> Vec<Array>,
) -> ClosedJaxpr {
    let id = NEXT_TRACE_ID.fetch_add(1, Ordering::Relaxed);
    let mut jaxpr = Jaxpr::default();
    let mut tracers = Vec::with_capacity(in_avals.len());
    for aval in in_avals {
        let var = jaxpr.new_var(aval.clone());
        jaxpr.invars.push(var);
        tracers.push(Array::from_tracer(Tracer {
            aval: aval.clone(),
            trace_id: id,
            var,
        }));
    }
    STACK.with(|s| {
        s.borrow_mut().push(Frame {
            id,
            transformation,
            jaxpr,
            consts: vec![],
            const_vars: HashMap::new(),
            scope_base: NAME_STACK.with(|n| n.borrow().len()),
        })
    });
    let mut guard = FrameGuard { id, popped: false };
    let outs = f(tracers);
    let frame = STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let level = stack.len() - 1;
        assert_eq!(stack[level].id, id, "trace stack out of order");
        let atoms: Vec<Atom> = outs
            .iter()
            .map(|o| atom_in(&mut stack, level, &Operand::from(o)))
            .collect();
        let mut frame = stack.pop().expect("frame");
        frame.jaxpr.outvars = atoms;
        frame
    });
    guard.popped = true;
    let closed = ClosedJaxpr {
        jaxpr: frame.jaxpr,
        consts: frame.consts,
    };
    debug_assert!(closed
        .jaxpr
        .typecheck()
        .map_err(|e| panic!("traced jaxpr fails typecheck: {e}\n{}", closed.jaxpr))
        .is_ok());
    closed
}

/// Runs a jaxpr on `args` (constants first, then inputs) by binding each equation: eagerly
/// when no trace is open, or recording into the innermost trace (inlining it).
pub fn eval_jaxpr(jaxpr: &Jaxpr, consts: &[Array], args: &[Array]) -> Vec<Array> {
    assert_eq!(
        consts.len() + args.len(),
        jaxpr.constvars.len() + jaxpr.invars.len(),
        "eval_jaxpr: argument count"
    );
    let mut env = Env::new(jaxpr, "eval_jaxpr");
    for (v, a) in jaxpr
        .constvars
        .iter()
        .zip(consts)
        .chain(jaxpr.invars.iter().zip(args))
    {
        env.set(*v, a.clone());
    }
    for e in &jaxpr.eqns {
        let ops: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
        let outs = in_scope_of(e, || bind_at(e.prim.clone(), &ops, e.loc));
        drop(ops);
        for (v, o) in e.outputs.iter().zip(outs) {
            env.set(*v, o);
        }
    }
    jaxpr.outvars.iter().map(|a| env.read(a)).collect()
}

thread_local! {
    static LOCATION: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
}

/// Runs `f` with every operation it binds through [`bind`] or [`bind1`] (the array API
/// included) attributed to `loc`: a transformation's rule works on behalf of the user's
/// equation at `loc`, so its operations carry the user's line, in errors and in the lowered
/// program, rather than the rule's.
pub fn with_location<R>(loc: &'static Location<'static>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static Location<'static>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LOCATION.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LOCATION.with(|l| l.replace(Some(loc))));
    f()
}

thread_local! {
    /// The names of the open [`named_scope`]s, outermost first.
    static NAME_STACK: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with every operation it binds named `name`, after the scopes already open
/// (`jax.named_scope`). The names reach the lowered StableHLO as name locations
/// (`loc("outer/inner/mul"("src/model.rs":12:9))`), which XLA keeps as each HLO
/// instruction's `op_name`, so they show in XLA's dumps and profiles. Operations that a
/// transformation derives from a named one (its JVP, its transpose, its batched form) keep
/// the name. Two differences from JAX's names, both in what is added around the user's:
/// there is no `jit(f)/` root, and derived operations are not wrapped as `jvp(..)` or
/// `transpose(..)`.
///
/// ```
/// # use jaxrs_runtime::{jit, named_scope, Array};
/// let f = jit(|x: Array| named_scope("affine", || &x * 2.0 + 1.0));
/// assert_eq!(f.call(Array::scalar(1.0f32)).item::<f32>(), 3.0);
/// ```
pub fn named_scope<R>(name: &str, f: impl FnOnce() -> R) -> R {
    with_scope_pushed(Arc::from(name), f)
}

/// `f` with every call's operations named `name` (`jax.named_call`): [`named_scope`]
/// around each call.
///
/// ```
/// # use jaxrs_runtime::{jit, named_call, Array};
/// let double = named_call("double", |x: Array| &x * 2.0);
/// let f = jit(move |x: Array| double(x));
/// assert_eq!(f.call(Array::scalar(2.0f32)).item::<f32>(), 4.0);
/// ```
pub fn named_call<A, R>(name: &str, f: impl Fn(A) -> R) -> impl Fn(A) -> R {
    let name: Arc<str> = Arc::from(name);
    move |args| with_scope_pushed(name.clone(), || f(args))
}

/// Runs `f` inside the scopes an equation was bound in: a transformation re-binding `e`, or
/// binding what its rule derives from `e`, names those operations as `e` was named. It also
/// runs [`relaxed`](sharding_types::relaxed): `e` passed its sharding rule when it was first
/// bound (or was typed by an output sharding given then), so re-binding it or binding what
/// its rules derive is not refused again.
pub fn in_scope_of<R>(e: &Eqn, f: impl FnOnce() -> R) -> R {
    match &e.scope {
        Some(scope) => with_scope_pushed(scope.clone(), || sharding_types::relaxed(f)),
        None => sharding_types::relaxed(f),
    }
}

fn with_scope_pushed<R>(name: Arc<str>, f: impl FnOnce() -> R) -> R {
    struct Pop(usize);
    impl Drop for Pop {
        fn drop(&mut self) {
            let _ = NAME_STACK.try_with(|n| n.borrow_mut().truncate(self.0));
        }
    }
    let _pop = Pop(NAME_STACK.with(|n| {
        let mut stack = n.borrow_mut();
        stack.push(name);
        stack.len() - 1
    }));
    f()
}

/// The scopes opened after the first `base`, joined by `/`; `None` if there are none.
fn scope_since(base: usize) -> Option<Arc<str>> {
    NAME_STACK.with(|n| {
        let stack = n.borrow();
        let inner = stack.get(base..).filter(|names| !names.is_empty())?;
        Some(Arc::from(inner.join("/")))
    })
}

/// The location an operation is attributed to: the one [`with_location`] set, else `caller`.
fn located(caller: &'static Location<'static>) -> &'static Location<'static> {
    LOCATION.with(|l| l.get()).unwrap_or(caller)
}
