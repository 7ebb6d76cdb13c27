#!/usr/bin/env python3
"""Goldens for `jaxrs::numpy`'s products, polynomials, convolutions and functional helpers
(`tests/jnp_products.rs`): `python tests/golden/gen_jnp_products.py` rewrites
`tests/golden/jnp_products.json`. See jaxcases.py for the format and what each case checks.

`params` carry what the Rust side needs to make the same call: a spec, axes, a mode, a
`preferred_element_type`, or the name of the function a functional helper applies (the Rust
test defines the same function under that name)."""

import numpy as np

from jaxcases import Cases, jnp

c = Cases("jnp_products")

# check_grads compiles one program per case: one float64 case of each name is enough.
_checked = set()
_add = c.add


def _add_once(op, *args, **kw):
    case = _add(op, *args, **kw)
    if case.get("check_grads"):
        if op in _checked:
            del case["check_grads"]
        _checked.add(op)
    return case


c.add = _add_once
F32 = (1e-5, 1e-5)  # contractions sum in a different order than XLA's dot kernel may

# ---- dot family ---------------------------------------------------------------------------
for sa, sb, dt in [((3, 4), (4,), "float32"), ((2, 3), (3, 4), "float32"),
                   ((2, 3, 4), (5, 4, 2), "float32"), ((), (3,), "float32"),
                   ((3, 4), (4, 5), "float64"), ((4,), (4,), "float64"),
                   ((3, 4), (4,), "bfloat16")]:
    c.add("jnp.dot", jnp.dot, [c.normal(sa, dt), c.normal(sb, dt)], tol=F32 if dt == "float32" else None)
c.add("jnp.dot", jnp.dot, [c.ints((3, 4), -5, 5, "int32"), c.ints((4, 2), -5, 5, "int32")])
c.add("jnp.dot", lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.int32),
      [c.ints((3, 4), -100, 100, "int8"), c.ints((4,), -100, 100, "int8")],
      params={"preferred_element_type": "int32"})
c.add("jnp.dot", lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float64),
      [c.normal((2, 3), "float32"), c.normal((3, 2), "float32")],
      params={"preferred_element_type": "float64"}, tol=(1e-6, 1e-6))

c.add("jnp.vdot", jnp.vdot, [c.normal((2, 3), "float32"), c.normal((3, 2), "float32")], tol=F32)
c.add("jnp.vdot", jnp.vdot, [c.normal((4,), "float64"), c.normal((2, 2), "float64")])
c.add("jnp.vdot", jnp.vdot, [c.ints((5,), -9, 9, "int32"), c.ints((5,), -9, 9, "int32")])

c.add("jnp.inner", jnp.inner, [c.normal((2, 3), "float32"), c.normal((4, 3), "float32")], tol=F32)
c.add("jnp.inner", jnp.inner, [c.normal((3,), "float64"), c.normal((3,), "float64")])
c.add("jnp.inner", jnp.inner, [c.normal((2, 2, 3), "float64"), c.normal((3,), "float64")])
c.add("jnp.inner", jnp.inner, [c.normal((), "float64"), c.normal((2, 3), "float64")])

c.add("jnp.outer", jnp.outer, [c.normal((3,), "float32"), c.normal((4,), "float32")])
c.add("jnp.outer", jnp.outer, [c.normal((2, 2), "float64"), c.normal((3,), "float64")])
c.add("jnp.outer", jnp.outer, [c.ints((3,), -9, 9, "int32"), c.ints((2,), -9, 9, "int32")])

c.add("jnp.matmul", jnp.matmul, [c.normal((2, 3, 4), "float64"), c.normal((4, 5), "float64")])
c.add("jnp.matmul", jnp.matmul, [c.normal((3,), "float32"), c.normal((2, 3, 4), "float32")], tol=F32)
c.add("jnp.matmul", jnp.matmul, [c.normal((2, 1, 3, 4), "float32"), c.normal((3, 4, 2), "float32")], tol=F32)
c.add("jnp.matmul", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int64),
      [c.ints((2, 3), -9, 9, "int32"), c.ints((3, 2), -9, 9, "int32")],
      params={"preferred_element_type": "int64"})

c.add("jnp.matvec", jnp.matvec, [c.normal((2, 3, 4), "float64"), c.normal((4,), "float64")])
c.add("jnp.matvec", jnp.matvec, [c.normal((3, 4), "float32"), c.normal((2, 4), "float32")], tol=F32)
c.add("jnp.vecmat", jnp.vecmat, [c.normal((4,), "float64"), c.normal((2, 4, 3), "float64")])
c.add("jnp.vecmat", jnp.vecmat, [c.ints((2, 3), -9, 9, "int32"), c.ints((3, 2), -9, 9, "int32")])

c.add("jnp.vecdot", jnp.vecdot, [c.normal((3, 4), "float32"), c.normal((4,), "float32")], tol=F32)
c.add("jnp.vecdot", lambda a, b: jnp.vecdot(a, b, axis=0),
      [c.normal((4, 3), "float64"), c.normal((4, 1), "float64")], params={"axis": 0})
c.add("jnp.vecdot", jnp.vecdot, [c.ints((2, 5), -9, 9, "int32"), c.ints((2, 5), -9, 9, "int32")])

c.add("jnp.tensordot", lambda a, b: jnp.tensordot(a, b, 2),
      [c.normal((2, 3, 4), "float64"), c.normal((3, 4, 5), "float64")], params={"axes": 2})
c.add("jnp.tensordot", lambda a, b: jnp.tensordot(a, b, 1),
      [c.normal((2, 3), "float32"), c.normal((3, 4), "float32")], params={"axes": 1}, tol=F32)
c.add("jnp.tensordot", lambda a, b: jnp.tensordot(a, b, 0),
      [c.normal((2,), "float64"), c.normal((3,), "float64")], params={"axes": 0})
c.add("jnp.tensordot", lambda a, b: jnp.tensordot(a, b, ([1, 0], [0, 2])),
      [c.normal((3, 2, 4), "float64"), c.normal((2, 5, 3), "float64")],
      params={"axes_a": [1, 0], "axes_b": [0, 2]})
c.add("jnp.tensordot", lambda a, b: jnp.tensordot(a, b, (-1, 0)),
      [c.ints((2, 3), -9, 9, "int32"), c.ints((3, 2), -9, 9, "int32")],
      params={"axes_a": [-1], "axes_b": [0]})

c.add("jnp.kron", jnp.kron, [c.normal((2, 3), "float64"), c.normal((2, 2), "float64")])
c.add("jnp.kron", jnp.kron, [c.normal((3,), "float32"), c.normal((2, 2), "float32")])
c.add("jnp.kron", jnp.kron, [c.ints((2, 2), -9, 9, "int32"), c.ints((2,), -9, 9, "int32")])

c.add("jnp.trace", jnp.trace, [c.normal((3, 3), "float64")])
c.add("jnp.trace", lambda a: jnp.trace(a, offset=1), [c.normal((3, 4), "float32")],
      params={"offset": 1})
c.add("jnp.trace", lambda a: jnp.trace(a, offset=-1, axis1=1, axis2=2),
      [c.normal((2, 3, 4), "float64")], params={"offset": -1, "axis1": 1, "axis2": 2})
c.add("jnp.trace", lambda a: jnp.trace(a, axis1=2, axis2=0), [c.normal((3, 2, 3), "float64")],
      params={"axis1": 2, "axis2": 0})
c.add("jnp.trace", jnp.trace, [c.ints((3, 3), -9, 9, "int64")])

# ---- einsum -------------------------------------------------------------------------------
E = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
     ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ji", [(2, 3)]), ("ijk->kji", [(2, 3, 4)]),
     ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("...i,...i->...", [(2, 3), (3,)]),
     ("i...->...", [(3, 2, 2)]), ("...ij", [(2, 3, 4)]), ("bij,bjk,bkl->bil", [(2, 2, 3), (2, 3, 4), (2, 4, 2)]),
     ("i,i,i->", [(4,), (4,), (4,)]), ("ij,kj->ikj", [(2, 3), (4, 3)]), ("i,j->ij", [(3,), (2,)]),
     ("iij->j", [(2, 2, 3)]), ("ij,jk,kl", [(2, 3), (3, 2), (2, 2)]), ("ba,ab->a", [(3, 2), (2, 3)]),
     ("ij,ij->ij", [(1, 3), (2, 3)]), ("Ab,bc->Ac", [(2, 3), (3, 2)])]
for k, (spec, shapes) in enumerate(E):
    dt = "float64" if k % 2 else "float32"
    c.add("jnp.einsum", lambda *xs, spec=spec: jnp.einsum(spec, *xs),
          [c.normal(s, dt) for s in shapes], params={"spec": spec}, tol=F32 if dt == "float32" else None)
c.add("jnp.einsum", lambda a, b: jnp.einsum("ij,jk->ik", a, b),
      [c.ints((2, 3), -9, 9, "int32"), c.ints((3, 2), -9, 9, "int32")], params={"spec": "ij,jk->ik"})
c.add("jnp.einsum", lambda a, b: jnp.einsum("ij,j->i", a, b, preferred_element_type=jnp.int32),
      [c.ints((2, 3), -100, 100, "int8"), c.ints((3,), -100, 100, "int8")],
      params={"spec": "ij,j->i", "preferred_element_type": "int32"})
c.add("jnp.einsum", lambda a, b: jnp.einsum("ij,j->i", a, b, optimize=False),
      [c.normal((2, 3), "float32"), c.normal((3,), "float64")], params={"spec": "ij,j->i"})

# ---- cross, convolutions ------------------------------------------------------------------
c.add("jnp.cross", jnp.cross, [c.normal((4, 3), "float64"), c.normal((4, 3), "float64")])
c.add("jnp.cross", jnp.cross, [c.normal((3,), "float32"), c.normal((2, 3), "float32")])
c.add("jnp.cross", jnp.cross, [c.normal((5, 2), "float32"), c.normal((5, 2), "float32")])
c.add("jnp.cross", jnp.cross, [c.normal((2,), "float64"), c.normal((3,), "float64")])
c.add("jnp.cross", lambda a, b: jnp.cross(a, b, axis=0), [c.normal((3, 4), "float64"), c.normal((3, 4), "float64")],
      params={"axis": 0})
c.add("jnp.cross", lambda a, b: jnp.cross(a, b, axisa=0, axisb=1, axisc=0),
      [c.normal((3, 2), "float64"), c.normal((2, 3), "float64")],
      params={"axisa": 0, "axisb": 1, "axisc": 0})
c.add("jnp.cross", jnp.cross, [c.ints((3,), -9, 9, "int32"), c.ints((3,), -9, 9, "int32")])

for fn, name in [(jnp.convolve, "jnp.convolve"), (jnp.correlate, "jnp.correlate")]:
    for mode in ("full", "same", "valid"):
        c.add(name, lambda a, v, mode=mode, fn=fn: fn(a, v, mode=mode),
              [c.normal((6,), "float32"), c.normal((3,), "float32")], params={"mode": mode}, tol=F32)
        c.add(name, lambda a, v, mode=mode, fn=fn: fn(a, v, mode=mode),
              [c.normal((3,), "float64"), c.normal((5,), "float64")], params={"mode": mode})
    c.add(name, fn, [c.normal((4,), "float64"), c.normal((4,), "float64")])
    c.add(name, fn, [c.ints((5,), -9, 9, "int32"), c.ints((2,), -9, 9, "int32")])

# ---- polynomials --------------------------------------------------------------------------
c.add("jnp.polyval", jnp.polyval, [c.normal((4,), "float64"), c.normal((5,), "float64")])
c.add("jnp.polyval", jnp.polyval, [c.normal((3,), "float32"), c.normal((2, 3), "float32")])
c.add("jnp.polyval", jnp.polyval, [c.normal((3, 2), "float64"), c.normal((2,), "float64")])
c.add("jnp.polyval", jnp.polyval, [c.ints((3,), -5, 5, "int32"), c.ints((4,), -5, 5, "int32")])

c.add("jnp.polyadd", jnp.polyadd, [c.normal((3,), "float32"), c.normal((5,), "float32")])
c.add("jnp.polyadd", jnp.polyadd, [c.normal((4,), "float64"), c.normal((2,), "float64")])
c.add("jnp.polyadd", jnp.polyadd, [c.ints((4,), -9, 9, "int32"), c.ints((2,), -9, 9, "int32")])
c.add("jnp.polysub", jnp.polysub, [c.normal((2,), "float64"), c.normal((4,), "float64")])
c.add("jnp.polysub", jnp.polysub, [c.ints((3,), -9, 9, "int32"), c.ints((3,), -9, 9, "int32")])

c.add("jnp.polymul", jnp.polymul, [c.normal((3,), "float64"), c.normal((4,), "float64")])
c.add("jnp.polymul", jnp.polymul, [c.ints((3,), -9, 9, "int32"), c.ints((2,), -9, 9, "int32")])
c.add("jnp.polymul", lambda a, b: jnp.polymul(a, b, trim_leading_zeros=True),
      [jnp.array([0.0, 0.0, 1.5, 2.0]).__array__(), c.normal((3,), "float64")],
      params={"trim_leading_zeros": True}, jit=False, grad=False)

for m in (1, 2):
    c.add("jnp.polyder", lambda p, m=m: jnp.polyder(p, m), [c.normal((5,), "float64")], params={"m": m})
c.add("jnp.polyder", jnp.polyder, [c.ints((4,), -9, 9, "int32")])
c.add("jnp.polyder", lambda p: jnp.polyder(p, 3), [c.normal((3,), "float32")], params={"m": 3})

c.add("jnp.polyint", jnp.polyint, [c.normal((4,), "float64")])
c.add("jnp.polyint", lambda p, k: jnp.polyint(p, 2, k), [c.normal((3,), "float64"), c.normal((2,), "float64")],
      params={"m": 2, "k": True})
c.add("jnp.polyint", lambda p, k: jnp.polyint(p, 2, k), [c.normal((3,), "float32"), c.normal((), "float32")],
      params={"m": 2, "k": True})
c.add("jnp.polyint", jnp.polyint, [c.ints((3,), -9, 9, "int32")])

c.add("jnp.polydiv", jnp.polydiv, [c.normal((5,), "float64"), c.uniform((3,), 1.0, 2.0, "float64")],
      grad_tol=(1e-8, 1e-8))  # the remainder's leading zeros are differences of roundings
c.add("jnp.polydiv", jnp.polydiv, [c.normal((4,), "float32"), c.uniform((2,), 1.0, 2.0, "float32")],
      tol=F32)
c.add("jnp.polydiv", jnp.polydiv, [c.normal((2,), "float64"), c.normal((3,), "float64")],
      grad_tol=(1e-8, 1e-8))
c.add("jnp.polydiv", lambda u, v: jnp.polydiv(u, v, trim_leading_zeros=True),
      [jnp.array([5.0, 7.0, 9.0]).__array__(), jnp.array([4.0, 1.0]).__array__()],
      params={"trim_leading_zeros": True}, jit=False, grad=False)

c.add("jnp.poly", jnp.poly, [c.normal((3,), "float64")])
c.add("jnp.poly", jnp.poly, [c.normal((4,), "float32")], tol=F32)
c.add("jnp.poly", jnp.poly, [c.ints((2,), -5, 5, "int32")])
# Complex roots stay complex (conjugate pairs give a real-valued complex polynomial), and a
# square matrix stands for its eigenvalues. Literal inputs: no draw from the case stream.
c.add("jnp.poly", jnp.poly, [np.array([2, 1 + 2j, 1 - 2j], "complex64")], tol=F32, grad=False)
c.add("jnp.poly", jnp.poly, [np.array([0.5 - 1j, -2 + 0.25j], "complex128")], grad=False)
c.add("jnp.poly", jnp.poly, [np.array([[2.0, 1, 5], [3, 4, 7], [1, 3, 5]], "float64")], grad=False)
c.add("jnp.polymul", jnp.polymul, [np.array([1 + 1j, -2j], "complex128"), np.array([3.0, 0.5, -1], "float64")],
      grad=False)
c.add("jnp.convolve", jnp.convolve, [np.array([1 - 1j, 2, 0.5j], "complex64"), np.array([1.0, -1], "float32")],
      tol=F32, grad=False)

# ---- functional helpers -------------------------------------------------------------------
FUNCS1D = {"sumsq": lambda v: jnp.sum(v * v), "cumsum": jnp.cumsum, "outer_self": lambda v: jnp.outer(v, v)}
for name, shape, axis in [("sumsq", (3, 4), 1), ("cumsum", (3, 4), 0), ("cumsum", (2, 3, 4), 1),
                          ("outer_self", (2, 3), -1), ("sumsq", (2, 3, 2), 0)]:
    c.add("jnp.apply_along_axis", lambda x, name=name, axis=axis: jnp.apply_along_axis(FUNCS1D[name], axis, x),
          [c.normal(shape, "float64")], params={"func": name, "axis": axis})

for name, axes in [("sum", [0, 2]), ("cumsum", [1]), ("sum", [-1])]:
    f = {"sum": jnp.sum, "cumsum": jnp.cumsum}[name]
    c.add("jnp.apply_over_axes", lambda x, f=f, axes=axes: jnp.apply_over_axes(f, x, axes),
          [c.normal((2, 3, 4), "float64")], params={"func": name, "axes": axes})


def _pick(x, y):
    return jnp.where(x > y, x - y, x * y)


c.add("jnp.vectorize", jnp.vectorize(_pick), [c.normal((3, 1), "float64"), c.normal((4,), "float64")],
      params={"func": "pick"})
c.add("jnp.vectorize", jnp.vectorize(_pick), [c.normal((2, 3), "float32"), c.normal((), "float32")],
      params={"func": "pick"})
c.add("jnp.vectorize", jnp.vectorize(lambda x: jnp.sin(x) * 2.0), [c.normal((2, 2), "float64")],
      params={"func": "sin2"})

c.add("jnp.fromfunction", lambda: jnp.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=jnp.int32), [],
      params={"func": "affine", "shape": [2, 3], "dtype": "int32"}, vmap=False)
c.add("jnp.fromfunction", lambda: jnp.fromfunction(lambda i, j: jnp.sin(i) + j * j, (3, 2), dtype=jnp.float64), [],
      params={"func": "sin_sq", "shape": [3, 2], "dtype": "float64"}, vmap=False)
c.add("jnp.fromfunction", lambda: jnp.fromfunction(lambda i: i * 0.5 + 1.0, (4,), dtype=jnp.float32), [],
      params={"func": "half", "shape": [4], "dtype": "float32"}, vmap=False)

c.add("jnp.piecewise",
      lambda x: jnp.piecewise(x, [x < 0, x > 1], [lambda x: -x, lambda x: x * x, 0.5]),
      [jnp.array([-2.0, -0.5, 0.3, 0.7, 1.5, 2.5]).__array__()], params={"which": "three"})
c.add("jnp.piecewise",
      lambda x: jnp.piecewise(x, [x < 0], [lambda x: jnp.sin(x)]),
      [c.normal((2, 3), "float32")], params={"which": "one"})
c.add("jnp.piecewise",
      lambda x: jnp.piecewise(x, [x < 0, x >= 0], [-1, lambda x: x + 1]),
      [c.ints((5,), -5, 5, "int32")], params={"which": "ints"})
# roots: real and complex roots of float and integer coefficients; leading zeros stripped
# (values only: JAX cannot jit it) or kept as NaN roots (traced). The eigenvalue kernels order
# the roots differently: both sides sort them with sort_complex.
def roots(strip):
    return lambda p: jnp.sort_complex(jnp.roots(p, strip_zeros=strip))
c.add("jnp.roots", roots(True), [np.array([1.0, -6.0, 11.0, -6.0])], params={"strip_zeros": True},
      jit=False, grad=False)
c.add("jnp.roots", roots(False), [c.normal((5,), "float64")], params={"strip_zeros": False},
      vmap=False)
c.add("jnp.roots", roots(False), [c.normal((4,), "float32")], params={"strip_zeros": False},
      vmap=False)
c.add("jnp.roots", roots(True), [np.array([0.0, 0.0, 2.0, -3.0, 1.0])],
      params={"strip_zeros": True}, jit=False, grad=False)
c.add("jnp.roots", roots(False), [np.array([0.0, 0.0, 2.0, -3.0, 1.0])],
      params={"strip_zeros": False}, grad=False, vmap=False)
c.add("jnp.roots", roots(False), [np.zeros(3)], params={"strip_zeros": False}, grad=False,
      vmap=False)
c.add("jnp.roots", roots(True), [np.array([1, 0, -4], np.int32)], params={"strip_zeros": True},
      jit=False, grad=False)

# polyfit: one and two columns of y, weights, rcond, and the full and covariance results.
xf = np.linspace(-1.0, 2.0, 8)
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 2), [xf, c.normal((8,), "float64")],
      params={"deg": 2})
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 1), [xf[:6].astype("float32"), c.normal((6, 2), "float32")],
      params={"deg": 1}, tol=F32, grad_tol=(1e-4, 1e-4))
c.add("jnp.polyfit", lambda x, y, w: jnp.polyfit(x, y, 3, w=w),
      [xf, c.normal((8,), "float64"), c.uniform((8,), 0.5, 2.0, "float64")], params={"deg": 3, "w": True})
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 2, rcond=1e-3), [xf, c.normal((8, 3), "float64")],
      params={"deg": 2, "rcond": 1e-3})
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 2, full=True), [xf, c.normal((8,), "float64")],
      params={"deg": 2, "full": True})
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 1, full=True), [xf[:5].astype("float32"), c.normal((5, 2), "float32")],
      params={"deg": 1, "full": True}, tol=F32)
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 2, cov=True), [xf, c.normal((8,), "float64")],
      params={"deg": 2, "cov": "scaled"})
c.add("jnp.polyfit", lambda x, y, w: jnp.polyfit(x, y, 1, w=w, cov="unscaled"),
      [xf, c.normal((8, 2), "float64"), c.uniform((8,), 0.5, 2.0, "float64")],
      params={"deg": 1, "w": True, "cov": "unscaled"})
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 2, cov=True), [xf[:6].astype("float32"), c.normal((6, 2), "float32")],
      params={"deg": 2, "cov": "scaled"}, tol=F32, grad_tol=(1e-4, 1e-4))
c.add("jnp.polyfit", lambda x, y: jnp.polyfit(x, y, 1, cov="unscaled"),
      [xf[:5].astype("float32"), c.normal((5,), "float32")], params={"deg": 1, "cov": "unscaled"},
      tol=F32, grad_tol=(1e-4, 1e-4))
c.save()
