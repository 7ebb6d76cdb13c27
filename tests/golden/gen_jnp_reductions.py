#!/usr/bin/env python3
"""Goldens for `jaxrs::numpy`'s reductions, statistics, cumulative functions, sorting,
searching and set functions (`tests/jnp_reductions.rs`): `python
tests/golden/gen_jnp_reductions.py` rewrites `tests/golden/jnp_reductions.json`. See
jaxcases.py for the format and what each case checks.

Integer sums and products use int64 inputs: JAX (x64) sums an int32 in int64, jaxrs (for now)
in int32."""

import numpy as np
from jaxcases import Cases, jnp

c = Cases("jnp_reductions")

# check_grads compiles one program per case: a representative few get it, the rest are
# checked by their JVP and VJP against JAX's.
GRAD_CHECKED = {"jnp.prod", "jnp.var", "jnp.average", "jnp.nanmean", "jnp.cumprod", "jnp.quantile",
                "jnp.median", "jnp.interp", "jnp.cov", "jnp.trapezoid", "jnp.sort", "jnp.nanvar"}
_add = c.add


def add(op, *args, **kw):
    if op not in GRAD_CHECKED:
        kw.setdefault("check_grads", False)
    return _add(op, *args, **kw)


c.add = add


def axis_kw(axis):
    return axis if not isinstance(axis, list) else tuple(axis)


# ---- plain reductions: several dtypes, ranks and axes ----
x34 = c.normal((3, 4), "float64")
x234 = c.normal((2, 3, 4), "float32")
i34 = c.ints((3, 4), -5, 6, "int64")
for name, f in [("sum", jnp.sum), ("prod", jnp.prod), ("max", jnp.max), ("min", jnp.min),
                ("amax", jnp.amax), ("amin", jnp.amin), ("mean", jnp.mean), ("ptp", jnp.ptp)]:
    for x, axis, kd in [(x34, None, False), (x34, 1, True), (x234, [0, 2], False), (i34, 0, False)]:
        if name == "mean" and x.dtype == np.int64:
            continue
        c.add(f"jnp.{name}", lambda x, f=f, axis=axis, kd=kd: f(x, axis=axis_kw(axis), keepdims=kd),
              [x], params={"axis": axis, "keepdims": kd})
c.add("jnp.max", lambda x: jnp.max(x, axis=0), [c.ints((4, 3), 0, 200, "uint8")], params={"axis": 0})
c.add("jnp.sum", lambda x: jnp.sum(x, axis=1), [c.normal((2, 5), "bfloat16")], params={"axis": 1})
for name, f in [("all", jnp.all), ("any", jnp.any)]:
    b = c.bools((3, 4))
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [b], params={"axis": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x), [c.ints((5,), 0, 2, "int32")], params={"axis": None})
for name, f in [("var", jnp.var), ("std", jnp.std)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1, ddof=1), [x34], params={"axis": 1, "ddof": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x, keepdims=True), [x234], params={"axis": None, "keepdims": True})
c.add("jnp.count_nonzero", lambda x: jnp.count_nonzero(x, axis=0), [c.ints((4, 3), -1, 2, "int32")],
      params={"axis": 0})
c.add("jnp.count_nonzero", lambda x: jnp.count_nonzero(x), [c.bools((6,))], params={"axis": None})
w4 = c.uniform((4,), 0.5, 2.0, "float64")
c.add("jnp.average", lambda x, w: jnp.average(x, axis=1, weights=w), [x34, w4], params={"axis": 1})
c.add("jnp.average", lambda x, w: jnp.average(x, weights=w, returned=True),
      [x34, c.uniform((3, 4), 0.5, 2.0, "float64")], params={"axis": None, "returned": True})
c.add("jnp.average", lambda x: jnp.average(x, axis=0), [x34], params={"axis": 0, "noweights": True})
for name, f in [("argmax", jnp.argmax), ("argmin", jnp.argmin)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [x34], params={"axis": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x), [c.ints((3, 4), 0, 5, "int32")], params={"axis": None})
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=0, keepdims=True), [x234], params={"axis": 0, "keepdims": True})

# ---- NaN-ignoring forms ----
xn = c.normal((3, 4), "float64")
xn[0, 1] = np.nan
xn[2, :] = np.nan
xn_safe = xn.copy()
xn_safe[2, :] = [0.5, np.nan, -1.0, 2.0]
for name, f in [("nansum", jnp.nansum), ("nanprod", jnp.nanprod), ("nanmean", jnp.nanmean),
                ("nanmax", jnp.nanmax), ("nanmin", jnp.nanmin)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [xn_safe], params={"axis": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [xn], params={"axis": 1}, grad=False)
for name, f in [("nanvar", jnp.nanvar), ("nanstd", jnp.nanstd)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1, ddof=1), [xn_safe], params={"axis": 1, "ddof": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=0), [xn_safe], params={"axis": 0, "ddof": 0})
for name, f in [("nanargmax", jnp.nanargmax), ("nanargmin", jnp.nanargmin)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [xn], params={"axis": 1})
for name, f in [("nancumsum", jnp.nancumsum), ("nancumprod", jnp.nancumprod)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [xn_safe], params={"axis": 1})

# ---- cumulative ----
for name, f in [("cumsum", jnp.cumsum), ("cumprod", jnp.cumprod)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1), [x34], params={"axis": 1})
    c.add(f"jnp.{name}", lambda x, f=f: f(x), [x234], params={"axis": None})
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=0), [c.ints((4, 2), -3, 4, "int32")], params={"axis": 0})
z = c.normal((5,), "float64")
z[2] = 0.0
c.add("jnp.cumprod", lambda x: jnp.cumprod(x), [z], params={"axis": None})
c.add("jnp.cumsum", lambda x: jnp.cumsum(x), [c.bools((6,))], params={"axis": None})
for name, f in [("cumulative_sum", jnp.cumulative_sum), ("cumulative_prod", jnp.cumulative_prod)]:
    c.add(f"jnp.{name}", lambda x, f=f: f(x, axis=1, include_initial=True), [x34],
          params={"axis": 1, "include_initial": True})
    c.add(f"jnp.{name}", lambda x, f=f: f(x), [c.normal((5,), "float32")], params={"axis": None})
c.add("jnp.diff", lambda x: jnp.diff(x), [x34], params={})
c.add("jnp.diff", lambda x: jnp.diff(x, n=2, axis=0), [c.normal((4, 3), "float64")], params={"n": 2, "axis": 0})
c.add("jnp.diff", lambda x, p, a: jnp.diff(x, axis=0, prepend=p, append=a),
      [c.ints((3, 2), -9, 9, "int32"), c.ints((1, 2), -9, 9, "int32"), c.ints((2, 2), -9, 9, "int32")],
      params={"axis": 0, "prepend": True, "append": True})
c.add("jnp.diff", lambda x: jnp.diff(x), [c.bools((5,))], params={})
c.add("jnp.ediff1d", lambda x: jnp.ediff1d(x), [x34], params={})
c.add("jnp.ediff1d", lambda x, e, b: jnp.ediff1d(x, to_end=e, to_begin=b),
      [c.normal((4,), "float64"), c.normal((2,), "float64"), c.normal((1,), "float64")],
      params={"to_end": True, "to_begin": True})
c.add("jnp.trapezoid", lambda y: jnp.trapezoid(y), [x34], params={})
c.add("jnp.trapezoid", lambda y: jnp.trapezoid(y, dx=0.5, axis=0), [x34], params={"dx": 0.5, "axis": 0})
c.add("jnp.trapezoid", lambda y, x: jnp.trapezoid(y, x=x), [x34, np.sort(c.normal((4,), "float64"))],
      params={"x": True})

# ---- sorting ----
xs = c.normal((3, 5), "float32")
xs[1, 2] = np.nan
for axis in (-1, 0, None):
    c.add("jnp.sort", lambda x, axis=axis: jnp.sort(x, axis=axis), [xs], params={"axis": axis}, grad=False)
    c.add("jnp.argsort", lambda x, axis=axis: jnp.argsort(x, axis=axis), [xs], params={"axis": axis})
c.add("jnp.sort", lambda x: jnp.sort(x, descending=True), [x34], params={"axis": -1, "descending": True})
c.add("jnp.sort", lambda x: jnp.sort(x, axis=0), [x34], params={"axis": 0})
ties = c.ints((2, 6), 0, 3, "int32")
c.add("jnp.argsort", lambda x: jnp.argsort(x, descending=True), [ties], params={"axis": -1, "descending": True})
c.add("jnp.argsort", lambda x: jnp.argsort(x), [ties], params={"axis": -1})
c.add("jnp.lexsort", lambda a, b: jnp.lexsort([a, b]), [c.ints((6,), 0, 3, "int32"), c.ints((6,), 0, 2, "int32")],
      params={"axis": -1})
c.add("jnp.lexsort", lambda a, b: jnp.lexsort([a, b], axis=0),
      [c.normal((4, 2), "float32"), c.ints((4, 2), 0, 2, "int32")], params={"axis": 0})
# Complex keys order by real part, then imaginary part, each with NaN last (JAX's comparator).
# Literal values: ties in the real part, NaN in either part, and no draw from the case stream.
nan = np.nan
zs = np.array([[2 + 1j, 1 - 1j, 2 - 3j, nan + 0j, 1 + nan * 1j, -1 + 0j],
               [0j, 3 + 2j, 3 - 2j, 0 - 1j, 1j * nan, -2 + 5j]])
for dt in ("complex64", "complex128"):
    z = zs.astype(dt)
    c.add("jnp.sort", lambda x: jnp.sort(x, axis=-1), [z], params={"axis": -1}, grad=False)
    c.add("jnp.sort", lambda x: jnp.sort(x, axis=0), [z], params={"axis": 0}, grad=False)
    c.add("jnp.sort", lambda x: jnp.sort(x, descending=True), [z],
          params={"axis": -1, "descending": True}, grad=False)
    c.add("jnp.argsort", lambda x: jnp.argsort(x), [z], params={"axis": -1})
    c.add("jnp.argsort", lambda x: jnp.argsort(x, descending=True), [z],
          params={"axis": -1, "descending": True})
    c.add("jnp.sort_complex", jnp.sort_complex, [z], params={})
xp = c.normal((2, 6), "float64")
c.add("jnp.partition", lambda x: jnp.partition(x, 2), [xp], params={"kth": 2, "axis": -1})
c.add("jnp.partition", lambda x: jnp.partition(x, 1, axis=0), [c.ints((4, 3), -9, 9, "int32")],
      params={"kth": 1, "axis": 0})
c.add("jnp.argpartition", lambda x: jnp.argpartition(x, 2), [xp], params={"kth": 2, "axis": -1})

# ---- order statistics ----
xq = c.normal((3, 6), "float64")
for method in ("linear", "lower", "higher", "midpoint", "nearest"):
    c.add("jnp.quantile", lambda x, m=method: jnp.quantile(x, 0.3, axis=1, method=m), [xq],
          params={"q": 0.3, "axis": 1, "method": method})
c.add("jnp.quantile", lambda x, q: jnp.quantile(x, q, axis=0, keepdims=True),
      [xq, np.array([0.1, 0.45, 0.95])], params={"axis": 0, "keepdims": True, "qarray": True})
c.add("jnp.quantile", lambda x: jnp.quantile(x, 0.75), [c.normal((2, 3, 4), "float32")],
      params={"q": 0.75, "axis": None})
c.add("jnp.percentile", lambda x: jnp.percentile(x, 40.0, axis=1), [xq], params={"q": 40.0, "axis": 1})
c.add("jnp.percentile", lambda x: jnp.percentile(x, 50.0, axis=(0, 2)), [c.normal((2, 3, 4), "float64")],
      params={"q": 50.0, "axis": [0, 2]})
c.add("jnp.median", lambda x: jnp.median(x, axis=1), [xq], params={"axis": 1})
c.add("jnp.median", lambda x: jnp.median(x), [c.normal((5,), "float32")], params={"axis": None})
c.add("jnp.median", lambda x: jnp.median(x, axis=0), [c.ints((4, 3), -9, 9, "int32")], params={"axis": 0})
xqn = xq.copy()
xqn[0, 2] = np.nan
xqn[2, 4] = np.nan
c.add("jnp.quantile", lambda x: jnp.quantile(x, 0.4, axis=1), [xqn], params={"q": 0.4, "axis": 1}, grad=False)
c.add("jnp.nanquantile", lambda x: jnp.nanquantile(x, 0.4, axis=1), [xqn], params={"q": 0.4, "axis": 1})
c.add("jnp.nanpercentile", lambda x: jnp.nanpercentile(x, 65.0, axis=1, method="nearest"), [xqn],
      params={"q": 65.0, "axis": 1, "method": "nearest"})
c.add("jnp.nanmedian", lambda x: jnp.nanmedian(x, axis=1), [xqn], params={"axis": 1})

# ---- searching and counting ----
a_sorted = np.array([-1.0, 0.0, 0.0, 1.5, 2.0, np.nan], dtype=np.float32)
v = np.array([[-2.0, 0.0, 1.0], [2.0, 3.0, np.nan]], dtype=np.float32)
for side in ("left", "right"):
    c.add("jnp.searchsorted", lambda a, v, s=side: jnp.searchsorted(a, v, side=s), [a_sorted, v],
          params={"side": side}, vmap_axes=[None, 0])
c.add("jnp.searchsorted", lambda a, v: jnp.searchsorted(a, v), [np.array([1, 3, 3, 7], dtype=np.int32),
      np.array([0, 3, 4, 9], dtype=np.int32)], params={"side": "left"}, vmap_axes=[None, 0])
bins = np.array([-1.0, 0.0, 1.0, 2.0])
xd = np.array([-3.0, -1.0, 0.5, 1.0, 2.0, 5.0])
for right in (False, True):
    c.add("jnp.digitize", lambda x, b, r=right: jnp.digitize(x, b, right=r), [xd, bins],
          params={"right": right}, vmap_axes=[0, None])
    c.add("jnp.digitize", lambda x, b, r=right: jnp.digitize(x, b, right=r), [xd, bins[::-1].copy()],
          params={"right": right}, vmap_axes=[0, None])
bc = np.array([0, 1, 1, 3, 2, 1, 7], dtype=np.int32)
c.add("jnp.bincount", lambda x: jnp.bincount(x, length=5), [bc], params={"length": 5})
c.add("jnp.bincount", lambda x, w: jnp.bincount(x, w, length=8), [bc, c.normal((7,), "float64")],
      params={"length": 8, "weights": True})
c.add("jnp.bincount", lambda x: jnp.bincount(x, minlength=10), [bc], params={"minlength": 10}, jit=False)
c.add("jnp.bincount", lambda x: jnp.bincount(x), [bc], params={}, jit=False)
xh = c.normal((20,), "float64")
c.add("jnp.histogram_bin_edges", lambda a: jnp.histogram_bin_edges(a, bins=5), [xh], params={"bins": 5})
c.add("jnp.histogram_bin_edges", lambda a: jnp.histogram_bin_edges(a, bins=4, range=(-2.0, 2.0)), [xh],
      params={"bins": 4, "range": [-2.0, 2.0]})
c.add("jnp.histogram", lambda a: jnp.histogram(a, bins=5), [xh], params={"bins": 5}, grad=False)
c.add("jnp.histogram", lambda a, w: jnp.histogram(a, bins=4, range=(-2.0, 2.0), weights=w, density=True),
      [xh, c.uniform((20,), 0.1, 1.0, "float64")], params={"bins": 4, "range": [-2.0, 2.0], "weights": True,
                                                          "density": True}, wrt=[1])
xpts = np.array([0.0, 1.0, 2.5, 4.0])
fpts = c.normal((4,), "float64")
xi = np.array([-1.0, 0.2, 0.3, 1.7, 2.2, 3.9, 5.0])
c.add("jnp.interp", lambda x, xp, fp: jnp.interp(x, xp, fp), [xi, xpts, fpts], params={}, wrt=[0, 2],
      vmap_axes=[0, None, 0])
c.add("jnp.interp", lambda x, xp, fp: jnp.interp(x, xp, fp, left=-9.0, right=9.0), [xi, xpts, fpts],
      params={"left": -9.0, "right": 9.0}, wrt=[2], vmap_axes=[0, None, None])
c.add("jnp.gradient", lambda f: jnp.gradient(f), [c.normal((3, 4), "float64")], params={"axis": None})
c.add("jnp.gradient", lambda f: jnp.gradient(f), [c.normal((6,), "float32")], params={"axis": None})
c.add("jnp.gradient", lambda f: jnp.gradient(f, axis=1), [c.normal((3, 2), "float64")], params={"axis": 1})
m = c.normal((3, 6), "float64")
c.add("jnp.cov", lambda m: jnp.cov(m), [m], params={})
c.add("jnp.cov", lambda m: jnp.cov(m, rowvar=False, bias=True), [c.normal((5, 2), "float64")],
      params={"rowvar": False, "bias": True})
c.add("jnp.cov", lambda m: jnp.cov(m, ddof=0), [c.normal((6,), "float64")], params={"ddof": 0})
c.add("jnp.corrcoef", lambda m: jnp.corrcoef(m), [m], params={})
c.add("jnp.corrcoef", lambda m: jnp.corrcoef(m, rowvar=False), [c.normal((6, 2), "float32")],
      params={"rowvar": False})

# ---- nonzero and sets ----
nz = np.array([[0, 3, 0], [4, 0, 5]], dtype=np.int32)
c.add("jnp.nonzero", lambda x: jnp.nonzero(x, size=5), [nz], params={"size": 5})
c.add("jnp.nonzero", lambda x: jnp.nonzero(x, size=2, fill_value=-1), [nz], params={"size": 2, "fill_value": -1})
c.add("jnp.nonzero", lambda x: jnp.nonzero(x), [nz], params={}, jit=False)
c.add("jnp.flatnonzero", lambda x: jnp.flatnonzero(x, size=4, fill_value=-1), [c.normal((5,), "float32") * (np.arange(5) % 2)],
      params={"size": 4, "fill_value": -1})
c.add("jnp.flatnonzero", lambda x: jnp.flatnonzero(x), [nz], params={}, jit=False)
c.add("jnp.argwhere", lambda x: jnp.argwhere(x, size=4), [nz], params={"size": 4})
c.add("jnp.argwhere", lambda x: jnp.argwhere(x), [c.bools((2, 3))], params={}, jit=False)
uq = np.array([[3, 1, 2], [3, 7, 1]], dtype=np.int32)
uf = np.array([0.5, -1.0, 0.5, 2.0, -1.0, 0.5], dtype=np.float32)
c.add("jnp.unique", lambda x: jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, size=6),
      [uq], params={"return_index": True, "return_inverse": True, "return_counts": True, "size": 6})
c.add("jnp.unique", lambda x: jnp.unique(x, size=3, fill_value=9.0), [uf], params={"size": 3, "fill_value": 9.0})
c.add("jnp.unique", lambda x: jnp.unique(x, return_counts=True), [uf], params={"return_counts": True}, jit=False)
c.add("jnp.unique", lambda x: jnp.unique(x, return_inverse=True), [uq], params={"return_inverse": True}, jit=False)
c.add("jnp.unique_all", lambda x: tuple(jnp.unique_all(x, size=5)), [uq], params={"size": 5})
c.add("jnp.unique_all", lambda x: tuple(jnp.unique_all(x)), [uf], params={}, jit=False)
c.add("jnp.unique_counts", lambda x: tuple(jnp.unique_counts(x, size=4)), [uf], params={"size": 4})
c.add("jnp.unique_inverse", lambda x: tuple(jnp.unique_inverse(x)), [uq], params={}, jit=False)
c.add("jnp.unique_values", lambda x: jnp.unique_values(x), [uf], params={}, jit=False)
c.add("jnp.unique_values", lambda x: jnp.unique_values(x, size=5, fill_value=0), [uq], params={"size": 5, "fill_value": 0})
s1 = np.array([5, 1, 3, 3, 9, 1], dtype=np.int32)
s2 = np.array([3, 4, 5, 6], dtype=np.int32)
c.add("jnp.isin", lambda a, b: jnp.isin(a, b), [uq, s2], params={})
c.add("jnp.isin", lambda a, b: jnp.isin(a, b, invert=True), [uf, np.array([0.5, 7.0], dtype=np.float32)],
      params={"invert": True})
for name, f in [("union1d", jnp.union1d), ("intersect1d", jnp.intersect1d), ("setdiff1d", jnp.setdiff1d)]:
    c.add(f"jnp.{name}", lambda a, b, f=f: f(a, b), [s1, s2], params={}, jit=False)
    c.add(f"jnp.{name}", lambda a, b, f=f: f(a, b, size=8), [s1, s2], params={"size": 8})
    c.add(f"jnp.{name}", lambda a, b, f=f: f(a, b, size=2, fill_value=-1), [s1, s2],
          params={"size": 2, "fill_value": -1})
c.add("jnp.setxor1d", lambda a, b: jnp.setxor1d(a, b), [s1, s2], params={}, jit=False)
c.add("jnp.intersect1d", lambda a, b: jnp.intersect1d(a, b, size=3), [uf, np.array([2.0, 0.5, 8.0], dtype=np.float32)],
      params={"size": 3})
# sort_complex: by real part, then imaginary (ties in the real parts), of complex, float and
# integer arrays along the last axis.
ties = np.array([[1 + 2j, 2 + 4j, 3 - 1j, 2 + 3j], [-1 - 1j, -1 - 2j, 0.5 + 0j, -3 + 9j]],
                np.complex64)
c.add("jnp.sort_complex", jnp.sort_complex, [ties])
c.add("jnp.sort_complex", jnp.sort_complex, [c.normal((2, 3, 4), "complex128")])
c.add("jnp.sort_complex", jnp.sort_complex, [c.normal((5,), "float64")])
c.add("jnp.sort_complex", jnp.sort_complex, [c.ints((2, 3), -5, 5, "int32")])
c.save()
