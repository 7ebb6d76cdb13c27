#!/usr/bin/env python3
"""Golden values for numpy indexing as JAX's: `x[idx]` and `x.at[idx].op(v, mode=..)` over
ranks 1 to 4, their gradients, and vmap of them.

Usage (from the repository root):

    /work/venv/bin/python tests/golden/gen_indexing.py   # rewrites tests/golden/indexing.json

JAX 0.10.2 on CPU with jax_enable_x64 on (jaxrs's rule). Deterministic: every draw comes from
numpy's default_rng seeded with the crc32 of a fixed name, so two runs give identical files.

An index expression is a list of entries: {"i": k} an integer, {"sl": [start, stop, step]}
a slice (nulls for omitted parts), {"n": 1} None/newaxis, {"e": 1} the ellipsis, {"a": arr}
an integer array, {"t": k} a traced 0-d int32 scalar, {"b": arr} a boolean mask. Arrays are
{"shape": [..], "dtype": name, "data": [..]} (row-major).
"""

import json
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"

import numpy as np  # noqa: E402
import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"gen_indexing.py: expected jax=={JAX_VERSION}, found {jax.__version__}")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {1: [7], 2: [4, 5], 3: [3, 4, 5], 4: [2, 3, 4, 3]}


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def enc(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        data = [bool(v) for v in a.reshape(-1)]
    elif np.issubdtype(a.dtype, np.integer):
        data = [int(v) for v in a.reshape(-1)]
    else:
        data = [("nan" if np.isnan(v) else float(v)) for v in a.reshape(-1)]
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


def base(rank):
    """The indexed array of a rank: distinct integers as float64 (exact under every op)."""
    shape = SHAPES[rank]
    n = int(np.prod(shape))
    return (rng(f"x{rank}").permutation(n) - n // 2).astype(np.float64).reshape(shape)


def to_py(entries):
    """An encoded expression as JAX's index tuple."""
    out = []
    for e in entries:
        if "i" in e:
            out.append(e["i"])
        elif "sl" in e:
            out.append(slice(*e["sl"]))
        elif "n" in e:
            out.append(None)
        elif "e" in e:
            out.append(Ellipsis)
        elif "t" in e:
            out.append(jnp.asarray(e["t"], dtype=jnp.int32))
        elif "a" in e:
            a = e["a"]
            out.append(jnp.asarray(np.array(a["data"], dtype=a["dtype"]).reshape(a["shape"])))
        elif "b" in e:
            b = e["b"]
            out.append(np.array(b["data"], dtype=bool).reshape(b["shape"]))
    return tuple(out)


def random_expr(r, shape, oob):
    """A random index expression over `shape` (out-of-bounds integers when `oob`)."""
    ndim = len(shape)
    consumed = int(r.integers(1, ndim + 1))
    adv_shape = [[2], [3], [2, 2], [1], [2, 3]][int(r.integers(0, 5))]
    entries = []
    axis = 0
    use_arrays = r.random() < 0.55
    for _ in range(consumed):
        n = shape[axis]
        kind = r.choice(["i", "sl", "a", "t"] if use_arrays else ["i", "sl", "sl", "t"])
        if kind == "i":
            lo, hi = (-n - 3, n + 3) if oob else (-n, n)
            entries.append({"i": int(r.integers(lo, hi))})
        elif kind == "t":
            lo, hi = (-n - 2, n + 2) if oob else (-n, n)
            entries.append({"t": int(r.integers(lo, hi))})
        elif kind == "sl":
            def bound():
                return None if r.random() < 0.3 else int(r.integers(-n - 1, n + 2))
            step = [None, 1, 2, -1, -2, 3][int(r.integers(0, 6))]
            entries.append({"sl": [bound(), bound(), step]})
        else:
            # Arrays broadcast together: each the expression's shape or a trailing piece.
            s = adv_shape[int(r.integers(0, len(adv_shape))):] if r.random() < 0.3 else adv_shape
            lo, hi = (-n - 2, n + 2) if oob else (-n, n)
            vals = r.integers(lo, hi, size=s).astype(np.int32)
            entries.append({"a": enc(vals)})
        axis += 1
    # None and ... at random places.
    if r.random() < 0.35:
        entries.insert(int(r.integers(0, len(entries) + 1)), {"n": 1})
    if r.random() < 0.25 and consumed < ndim:
        entries.insert(int(r.integers(0, len(entries) + 1)), {"e": 1})
    if r.random() < 0.15:
        entries.insert(int(r.integers(0, len(entries) + 1)), {"n": 1})
    return entries


HAND = {
    1: [
        [{"i": 0}], [{"i": -1}], [{"sl": [1, -1, None]}], [{"sl": [None, None, -1]}],
        [{"sl": [None, None, 2]}], [{"sl": [5, 1, -2]}], [{"n": 1}, {"e": 1}],
        [{"e": 1}, {"n": 1}], [{"t": 3}], [{"t": -2}], [{"sl": [10, 20, None]}],
        [{"i": 9}], [{"i": -9}],
    ],
    2: [
        [{"i": 0}, {"i": 1}], [{"e": 1}, {"i": -1}], [{"sl": [None, None, None]}, {"sl": [1, -1, None]}],
        [{"e": 1}, {"n": 1}], [{"n": 1}, {"e": 1}, {"n": 1}],
        [{"a": enc(np.array([2, 0], np.int32))}, {"a": enc(np.array([1, 3], np.int32))}],
        [{"a": enc(np.array([[0], [3]], np.int32))}, {"a": enc(np.array([0, 4], np.int32))}],
        [{"sl": [None, None, -1]}, {"a": enc(np.array([4, 0, 0], np.int32))}],
        [{"i": 1}, {"a": enc(np.array([4, -1], np.int32))}],
        [{"t": 2}, {"sl": [1, 4, None]}], [{"t": 1}, {"t": -1}],
    ],
    3: [
        # Advanced axes separated by a slice: their dims go first (numpy's rule).
        [{"a": enc(np.array([0, 2], np.int32))}, {"sl": [None, None, None]}, {"a": enc(np.array([1, 4], np.int32))}],
        [{"i": 1}, {"sl": [None, None, None]}, {"a": enc(np.array([1, 4, 0], np.int32))}],
        [{"sl": [None, None, None]}, {"a": enc(np.array([1, 3], np.int32))}, {"a": enc(np.array([0, 4], np.int32))}],
        [{"a": enc(np.array([1, 0], np.int32))}, {"n": 1}, {"a": enc(np.array([1, 2], np.int32))}],
        [{"e": 1}, {"a": enc(np.array([[1, 2]], np.int32))}],
        [{"sl": [None, None, 2]}, {"e": 1}, {"sl": [None, None, -2]}],
        [{"t": 1}, {"e": 1}, {"t": 3}],
    ],
    4: [
        [{"i": 0}, {"sl": [None, None, None]}, {"a": enc(np.array([0, 3], np.int32))}, {"sl": [None, None, -1]}],
        [{"e": 1}, {"a": enc(np.array([2, 0], np.int32))}, {"a": enc(np.array([1, 1], np.int32))}],
        [{"a": enc(np.array([1, 0], np.int32))}, {"a": enc(np.array([2, 0], np.int32))}, {"e": 1}],
        [{"n": 1}, {"sl": [1, None, None]}, {"n": 1}, {"i": -1}],
    ],
}

MASKS = {
    1: [np.array([1, 0, 1, 1, 0, 0, 1], bool)],
    2: [np.array([[1, 0, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 0, 1]], bool),
        np.array([1, 0, 1, 1], bool)],
    3: [np.array([[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], bool)],
    4: [np.array([0, 1], bool)],
}


def in_bounds(entries, shape):
    return not any(
        ("i" in e and not -shape[0] <= e["i"] < max(shape)) for e in entries)


def cases_for(rank):
    x = base(rank)
    shape = SHAPES[rank]
    r = rng(f"cases{rank}")
    exprs = [(e, False) for e in HAND[rank]]
    for _ in range(32):
        oob = r.random() < 0.2
        exprs.append((random_expr(r, shape, oob), oob))
    out = []
    for entries, oob in exprs:
        idx = to_py(entries)
        try:
            want = np.asarray(jnp.asarray(x)[idx])
        except (IndexError, TypeError, ValueError):
            continue
        out.append({"idx": entries, "op": "get", "mode": None, "want": enc(want)})
        mode = [None, "fill", "clip"][int(r.integers(0, 3))]
        if mode is not None:
            kw = {"mode": mode}
            if mode == "fill" and r.random() < 0.5:
                kw["fill_value"] = -7.0
            got = np.asarray(jnp.asarray(x).at[idx].get(**kw))
            out.append({"idx": entries, "op": "get", "mode": mode,
                        "fill_value": kw.get("fill_value"), "want": enc(got)})
        # An update of the indexed shape (or a broadcast piece of it).
        op = ["set", "add", "mul", "min", "max"][int(r.integers(0, 5))]
        umode = [None, "clip", "drop", "promise_in_bounds"][int(r.integers(0, 4))]
        if umode == "promise_in_bounds" and oob:
            umode = "drop"
        ushape = list(want.shape)
        if r.random() < 0.25 and ushape:
            ushape = ushape[int(r.integers(0, len(ushape) + 1)):]
        v = r.integers(-60, 60, size=ushape).astype(np.float64) + 0.5
        xa = jnp.asarray(x)
        ref = xa.at[idx]
        fn = {"set": ref.set, "add": ref.add, "mul": ref.multiply, "min": ref.min,
              "max": ref.max}[op]
        try:
            got = np.asarray(fn(jnp.asarray(v), mode=umode))
        except (IndexError, TypeError, ValueError):
            continue
        if op == "set":
            # Repeated places: which update wins is XLA's choice; keep unique ones only.
            hits = np.asarray(jnp.zeros(shape).at[idx].add(jnp.ones(ushape), mode=umode))
            if hits.max() > 1:
                op, got = "add", np.asarray(ref.add(jnp.asarray(v), mode=umode))
        out.append({"idx": entries, "op": op, "mode": umode, "v": enc(v), "want": enc(got)})
    for m in MASKS[rank]:
        for entries in ([{"b": enc(m)}], [{"n": 1}, {"b": enc(m)}, {"e": 1}] if m.ndim < rank else None):
            if entries is None:
                continue
            idx = to_py(entries)
            want = np.asarray(jnp.asarray(x)[idx])
            out.append({"idx": entries, "op": "get", "mode": None, "want": enc(want)})
            v = rng(f"mask{rank}").integers(-9, 9, size=want.shape).astype(np.float64)
            got = np.asarray(jnp.asarray(x).at[idx].set(jnp.asarray(v)))
            out.append({"idx": entries, "op": "set", "mode": None, "v": enc(v), "want": enc(got)})
    return out


def grad_cases(rank, cases):
    """VJPs and JVPs against JAX's for reads and updates (masks aside) of a rank."""
    x = jnp.asarray(base(rank))
    r = rng(f"grads{rank}")
    out = []
    for c in cases[::12]:
        if any("b" in e for e in c["idx"]):
            continue
        idx = to_py(c["idx"])
        y = x[idx]
        ct = jnp.asarray(r.integers(-5, 5, size=y.shape).astype(np.float64))
        _, pull = jax.vjp(lambda x: x[idx], x)
        (dx,) = pull(ct)
        tx = jnp.asarray(r.integers(-5, 5, size=x.shape).astype(np.float64))
        _, ty = jax.jvp(lambda x: x[idx], (x,), (tx,))
        out.append({"idx": c["idx"], "op": "get", "ct": enc(ct), "dx": enc(dx),
                    "tx": enc(tx), "ty": enc(ty)})
    for c in cases:
        if c["op"] not in ("add", "set", "min", "max", "mul") or any("b" in e for e in c["idx"]):
            continue
        if r.random() < 0.88:
            continue
        idx = to_py(c["idx"])
        v = jnp.asarray(np.array(c["v"]["data"]).reshape(c["v"]["shape"]))
        mode = c["mode"]
        op = c["op"]

        def f(x, v):
            ref = x.at[idx]
            fn = {"set": ref.set, "add": ref.add, "mul": ref.multiply, "min": ref.min,
                  "max": ref.max}[op]
            return fn(v, mode=mode)

        y = f(x, v)
        ct = jnp.asarray(r.integers(-5, 5, size=y.shape).astype(np.float64))
        tx = jnp.asarray(r.integers(-5, 5, size=x.shape).astype(np.float64))
        tv = jnp.asarray(r.integers(-5, 5, size=v.shape).astype(np.float64))
        if op == "mul":
            _, pull = jax.vjp(lambda x: f(x, v), x)
            (dx,) = pull(ct)
            dv = None
            _, ty = jax.jvp(lambda x: f(x, v), (x,), (tx,))
        else:
            _, pull = jax.vjp(f, x, v)
            dx, dv = pull(ct)
            _, ty = jax.jvp(f, (x, v), (tx, tv))
        out.append({"idx": c["idx"], "op": op, "mode": mode, "v": c["v"], "ct": enc(ct),
                    "dx": enc(dx), "dv": None if dv is None else enc(dv),
                    "tx": enc(tx), "tv": None if dv is None else enc(tv), "ty": enc(ty)})
    return out


def vmap_cases():
    """vmap of reads and updates, the batch axis first and not first."""
    out = []
    r = rng("vmap")
    for rank in (1, 2, 3):
        shape = SHAPES[rank]
        for k in range(8):
            entries = random_expr(r, shape, False)
            idx = to_py(entries)
            try:
                jnp.zeros(shape)[idx]
            except (IndexError, TypeError, ValueError):
                continue
            for axis in (0, min(1, rank)):
                bshape = list(shape)
                bshape.insert(axis, 3)
                xb = jnp.asarray(r.integers(-50, 50, size=bshape).astype(np.float64))
                got = jax.vmap(lambda x: x[idx], in_axes=axis)(xb)
                out.append({"idx": entries, "op": "get", "axis": axis, "x": enc(xb),
                            "want": enc(got)})
                y = jnp.zeros(shape)[idx]
                vb = jnp.asarray(r.integers(-9, 9, size=(3,) + y.shape).astype(np.float64))
                got = jax.vmap(lambda x, v: x.at[idx].add(v), in_axes=(axis, 0))(xb, vb)
                out.append({"idx": entries, "op": "add", "axis": axis, "x": enc(xb),
                            "v": enc(vb), "want": enc(got)})
        # Index arrays batched too: one index array per example.
        x = jnp.asarray(base(rank))
        ib = r.integers(-shape[0], shape[0], size=(3, 2)).astype(np.int32)
        got = jax.vmap(lambda i: x[i])(jnp.asarray(ib))
        out.append({"op": "get_batched_idx", "x": enc(x), "i": enc(ib), "want": enc(got)})
        xb = jnp.asarray(r.integers(-50, 50, size=[2] + shape + [3]).astype(np.float64))
        got = jax.vmap(lambda x, i: x[:, i], in_axes=(rank + 1, 0))(xb, jnp.asarray(ib % shape[0]))
        out.append({"op": "get_batched_both", "x": enc(xb), "i": enc(ib % shape[0]),
                    "want": enc(got)})
    return out


def main():
    cases = {str(rank): cases_for(rank) for rank in SHAPES}
    doc = {
        "jax": jax.__version__,
        "x64": True,
        "shapes": {str(k): v for k, v in SHAPES.items()},
        "x": {str(rank): enc(base(rank)) for rank in SHAPES},
        "cases": cases,
        "grads": {str(rank): grad_cases(rank, cases[str(rank)]) for rank in SHAPES},
        "vmap": vmap_cases(),
    }
    path = os.path.join(HERE, "indexing.json")
    with open(path, "w") as f:
        json.dump(doc, f, allow_nan=False, separators=(",", ":"))
        f.write("\n")
    n = sum(len(v) for v in cases.values())
    g = sum(len(v) for v in doc["grads"].values())
    print(f"wrote {path}: {n} cases, {g} gradient cases, {len(doc['vmap'])} vmap cases")


if __name__ == "__main__":
    main()
