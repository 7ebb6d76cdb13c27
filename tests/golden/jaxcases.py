"""The shared writer of the JAX-surface golden files (`tests/golden/jnp_*.json`, `lax_*.json`).

A generator script builds a `Cases`, adds one case per call of a JAX function on fixed inputs,
and saves. Each case records JAX 0.10.2's outputs and, when asked, its forward- and
reverse-mode derivatives and its `vmap` over a batch of three examples, so that the Rust side
(`tests/common/cases.rs`) checks every name the same way: eagerly, under `jit`, its JVP and VJP
against JAX's, `check_grads`, and `vmap` with the batch axis first and last.

    from jaxcases import Cases
    c = Cases("jnp_math")
    x = c.normal((3, 4), "float32")
    c.add("jnp.log2", jnp.log2, [x])                 # op name = the JAX name
    c.add("jnp.clip", lambda x: jnp.clip(x, -1, 1), [x], params={"min": -1, "max": 1})
    c.save()

`jax_enable_x64` is on: jaxrs follows JAX with x64 (f64 and i64 stay 64-bit, and weak types
promote as JAX's x64 lattice says). Inputs are numpy arrays of an explicit dtype, or Python
scalars (weakly typed, as a Rust scalar operand is in jaxrs). Every case draws from one
generator seeded by the crc32 of its file name, so two runs write byte-identical files.

Case format (one JSON object per line inside `{"jax_version": .., "cases": [..]}`):

    {"name": "jnp.log2/float32/0", "op": "jnp.log2", "params": {...},
     "inputs": [ARR | scalar, ...], "outputs": [ARR, ...], "rtol": r, "atol": a,
     "jvp": {"wrt": [i, ...], "tangents": [ARR, ...], "outputs": [ARR, ...]},
     "vjp": {"wrt": [i, ...], "cotangents": [ARR, ...], "outputs": [ARR, ...]},
     "vmap": {"axes": [0 | null, ...], "inputs": [ARR | scalar, ...], "outputs": [ARR, ...]},
     "jit": true, "check_grads": true}

ARR is `{"dtype": "float32", "shape": [3], "data": [...]}` as in the other golden files (see
README.md). A scalar input is `{"scalar": 2.5}` (a weak Rust scalar). `wrt` lists the inputs the
derivative is taken with respect to (float arrays), the others held fixed. `vmap.axes` has one
entry per input (null: not batched). `jit: false` marks a function that JAX itself cannot jit
(a data-dependent output shape); `check_grads` asks the Rust side for a numerical check too.
"""

import json
import math
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"

import numpy as np  # noqa: E402
import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402,F401  (re-exported for the generators)
import ml_dtypes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float16": np.dtype(np.float16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}
FLOATS = ("bfloat16", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
# The dtypes with derivatives; a complex dtype is checked at its parts' tolerances.
INEXACT = FLOATS + COMPLEX
PART = {"complex64": "float32", "complex128": "float64"}

# Default tolerances (rtol, atol) of a value of each dtype: a few ulps of the dtype, since XLA's
# CPU plugin (0.11.2) and jaxlib 0.10.2 may pick different approximations of transcendentals.
TOL = {
    "bfloat16": (1.6e-2, 1.6e-2),
    "float16": (2e-3, 2e-3),
    "float32": (4e-6, 4e-6),
    "float64": (1e-12, 1e-12),
}
# Derivatives go through more roundings than values.
GRAD_TOL = {
    "bfloat16": (5e-2, 5e-2),
    "float16": (1e-2, 1e-2),
    "float32": (2e-5, 2e-5),
    "float64": (1e-10, 1e-10),
}


def dname(dt):
    dt = np.dtype(dt)
    for k, v in DTYPES.items():
        if v == dt:
            return k
    raise ValueError(f"unsupported dtype {dt}")


def _num(v, kind):
    if kind == "b":
        return bool(v)
    if kind in "iu":
        return int(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def encode(x):
    """An array (numpy or JAX) as the golden files' ARR object."""
    a = np.asarray(x)
    name = dname(a.dtype)
    kind = "f" if name in FLOATS else a.dtype.kind
    flat = a.reshape(-1)
    if name in ("bfloat16", "float16"):
        flat = flat.astype(np.float64)
    if kind == "c":
        # Complex data as `[re, im]` pairs.
        return {"dtype": name, "shape": list(a.shape),
                "data": [[_num(v.real, "f"), _num(v.imag, "f")] for v in flat]}
    return {"dtype": name, "shape": list(a.shape), "data": [_num(v, kind) for v in flat]}


def encode_input(x):
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return {"scalar": x}
    return encode(x)


def _outputs(y):
    if isinstance(y, (tuple, list)):
        return list(y)
    return [y]


def _is_float_array(x):
    return isinstance(x, np.ndarray) and dname(x.dtype) in INEXACT


def _tol_dtype(name):
    return PART.get(name, name)


class Cases:
    def __init__(self, file):
        self.file = file
        self.rng = np.random.default_rng(zlib.crc32(file.encode()))
        self.cases = []
        self.names = set()

    # ---- inputs ---------------------------------------------------------------------------
    def normal(self, shape, dtype="float32", scale=1.0):
        if dtype in COMPLEX:
            re = self.rng.standard_normal(shape) * scale
            im = self.rng.standard_normal(shape) * scale
            return (re + 1j * im).astype(DTYPES[dtype])
        return (self.rng.standard_normal(shape) * scale).astype(DTYPES[dtype])

    def uniform(self, shape, lo, hi, dtype="float32"):
        return self.rng.uniform(lo, hi, shape).astype(DTYPES[dtype])

    def ints(self, shape, lo, hi, dtype="int32"):
        return self.rng.integers(lo, hi, shape).astype(DTYPES[dtype])

    def bools(self, shape):
        return self.rng.random(shape) < 0.5

    def _variants(self, x):
        """Two more examples like `x` for a vmap batch: the elements reversed (keeps every
        value, so indices stay valid), and for floats `x` scaled, else rolled by one."""
        a = np.asarray(x)
        rev = a.reshape(-1)[::-1].reshape(a.shape)
        if dname(a.dtype) in COMPLEX:
            other = (a.astype(np.complex128) * 0.75).astype(a.dtype)
        elif dname(a.dtype) in FLOATS:
            other = (a.astype(np.float64) * 0.75).astype(a.dtype)
        else:
            other = np.roll(a.reshape(-1), 1).reshape(a.shape)
        return [a, rev, other]

    # ---- cases ----------------------------------------------------------------------------
    def add(self, op, fn, inputs, params=None, name=None, tol=None, grad_tol=None, grad=None,
            vmap=True, vmap_axes=None, jit=True, check_grads=None, wrt=None, batch=None):
        """Records `fn(*inputs)` as a case of `op`.

        grad: None = derivatives when every output and some input is a float array; False =
        none. wrt: the inputs to differentiate (default: the float arrays). vmap: batch the
        array inputs (vmap_axes overrides which: one entry per input, None = unbatched);
        batch: the batched inputs themselves, if the default variants do not fit.
        check_grads: a numerical check on the Rust side (default: float64 cases with grads).
        """
        inputs = list(inputs)
        jin = [jnp.asarray(x) if isinstance(x, np.ndarray) else x for x in inputs]
        outs = [np.asarray(o) for o in _outputs(fn(*jin))]
        dtypes = sorted({dname(o.dtype) for o in outs})
        if name is None:
            base = f"{op}/{dtypes[0] if dtypes else 'none'}"
            k = 0
            while f"{base}/{k}" in self.names:
                k += 1
            name = f"{base}/{k}"
        assert name not in self.names, f"duplicate case name {name}"
        self.names.add(name)
        float_dts = [_tol_dtype(d) for d in dtypes if d in INEXACT]
        widest = max(float_dts, key=lambda d: TOL[d][0]) if float_dts else None
        rtol, atol = tol if tol is not None else (TOL[widest] if widest else (0.0, 0.0))
        case = {"name": name, "op": op, "params": params or {},
                "inputs": [encode_input(x) for x in inputs],
                "outputs": [encode(o) for o in outs], "rtol": rtol, "atol": atol}
        if not jit:
            case["jit"] = False

        if wrt is None:
            wrt = [i for i, x in enumerate(inputs) if _is_float_array(x)]
        all_float_out = bool(outs) and all(dname(o.dtype) in INEXACT for o in outs)
        if grad is None:
            grad = bool(wrt) and all_float_out
        if grad:
            gr, ga = grad_tol if grad_tol is not None else GRAD_TOL[widest]

            def fw(*w):
                full = list(jin)
                for i, v in zip(wrt, w):
                    full[i] = v
                return tuple(_outputs(fn(*full)))

            primals = [jin[i] for i in wrt]
            tangents = [self.normal(np.shape(inputs[i]), dname(inputs[i].dtype)) for i in wrt]
            _, t_out = jax.jvp(fw, tuple(primals), tuple(jnp.asarray(t) for t in tangents))
            case["jvp"] = {"wrt": wrt, "tangents": [encode(t) for t in tangents],
                           "outputs": [encode(t) for t in t_out], "rtol": gr, "atol": ga}
            y, pullback = jax.vjp(fw, *primals)
            cts = [self.normal(np.shape(o), dname(o.dtype)) for o in y]
            grads = pullback(tuple(jnp.asarray(c) for c in cts))
            case["vjp"] = {"wrt": wrt, "cotangents": [encode(c) for c in cts],
                           "outputs": [encode(g) for g in grads], "rtol": gr, "atol": ga}
            if check_grads is None:
                # jaxrs's numerical check is of real functions of real inputs.
                check_grads = widest == "float64" and not any(
                    d in COMPLEX for d in dtypes + [dname(inputs[i].dtype) for i in wrt])
            if check_grads:
                case["check_grads"] = True

        if vmap and jit:
            axes = vmap_axes if vmap_axes is not None else [
                0 if isinstance(x, np.ndarray) else None for x in inputs]
            if batch is None:
                batch = [np.stack(self._variants(x)) if ax is not None else x
                         for x, ax in zip(inputs, axes)]
            jb = [jnp.asarray(x) if isinstance(x, np.ndarray) else x for x in batch]
            # Python scalars are closed over: vmap maps arrays only.
            arr_idx = [i for i, x in enumerate(batch) if isinstance(x, np.ndarray)]

            def fb(*arrs):
                full = list(jb)
                for i, v in zip(arr_idx, arrs):
                    full[i] = v
                return tuple(_outputs(fn(*full)))

            vouts = jax.vmap(fb, in_axes=tuple(axes[i] for i in arr_idx))(
                *[jb[i] for i in arr_idx])
            case["vmap"] = {"axes": axes, "inputs": [encode_input(x) for x in batch],
                            "outputs": [encode(o) for o in vouts]}
        self.cases.append(case)
        return case

    def save(self):
        path = os.path.join(HERE, f"{self.file}.json")
        with open(path + ".tmp", "w") as f:
            f.write('{"jax_version": "%s", "cases": [\n' % JAX_VERSION)
            f.write(",\n".join(json.dumps(c, sort_keys=True) for c in self.cases))
            f.write("\n]}\n")
        os.replace(path + ".tmp", path)
        print(f"{path}: {len(self.cases)} cases")
