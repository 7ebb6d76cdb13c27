#!/usr/bin/env python3
"""Goldens for `jaxrs::lax`'s contractions and control (`tests/lax_control.rs`):
`python tests/golden/gen_lax_control.py` rewrites `tests/golden/lax_control.json`. See
jaxcases.py for the format and what each case checks. `params` name the dimension numbers,
options, or the function a higher-order op applies (the Rust test defines the same one)."""

from jaxcases import Cases, jnp
import jax
import numpy as np
from jax import lax

c = Cases("lax_control")
F32 = (1e-5, 1e-5)

_checked = set()
_add = c.add


def _add_once(op, *args, **kw):
    # check_grads compiles one program per case: one float64 case of each name is enough.
    case = _add(op, *args, **kw)
    if case.get("check_grads"):
        if op in _checked:
            del case["check_grads"]
        _checked.add(op)
    return case


c.add = _add_once

# ---- contractions -------------------------------------------------------------------------
for sa, sb, dt in [((3, 4), (4,), "float32"), ((2, 3), (3, 4), "float64"), ((4,), (4, 2), "float64")]:
    c.add("lax.dot", lax.dot, [c.normal(sa, dt), c.normal(sb, dt)], tol=F32 if dt == "float32" else None)
c.add("lax.dot", lax.dot, [c.ints((2, 3), -9, 9, "int32"), c.ints((3,), -9, 9, "int32")])
c.add("lax.dot", lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float64),
      [c.normal((2, 3), "float32"), c.normal((3, 2), "float32")], params={"preferred_element_type": "float64"},
      tol=(1e-6, 1e-6))

DG = [((2, 3, 4), (2, 4, 5), ((2,), (1,)), ((0,), (0,)), "float64"),
      ((3, 4), (5, 4), ((1,), (1,)), ((), ()), "float32"),
      ((4, 3, 2), (2, 3), ((1, 2), (1, 0)), ((), ()), "float64"),
      ((3, 2, 4), (4, 2, 5), ((2,), (0,)), ((1,), (1,)), "float64"),
      ((2, 3), (4,), ((), ()), ((), ()), "float32")]
for sa, sb, (lc, rc), (lb, rb), dt in DG:
    c.add("lax.dot_general", lambda a, b, dn=((lc, rc), (lb, rb)): lax.dot_general(a, b, dn),
          [c.normal(sa, dt), c.normal(sb, dt)], params={"lc": lc, "rc": rc, "lb": lb, "rb": rb},
          tol=F32 if dt == "float32" else None)
for dt, pet in [("int8", "int32"), ("bfloat16", "float32"), ("float32", "float64")]:
    mk = (lambda s: c.ints(s, -100, 100, dt)) if dt == "int8" else (lambda s: c.normal(s, dt))
    c.add("lax.dot_general",
          lambda a, b, pet=pet: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=pet),
          [mk((2, 3)), mk((3, 2))], params={"lc": [1], "rc": [0], "lb": [], "rb": [], "preferred_element_type": pet},
          tol=(1e-6, 1e-6) if pet != "int32" else None)

c.add("lax.batch_matmul", lax.batch_matmul, [c.normal((2, 3, 4), "float64"), c.normal((2, 4, 2), "float64")])
c.add("lax.batch_matmul", lax.batch_matmul, [c.normal((2, 2, 3, 4), "float32"), c.normal((2, 2, 4, 1), "float32")],
      tol=F32)

# ---- associative_scan ---------------------------------------------------------------------
FNS = {"add": jnp.add, "mul": jnp.multiply, "max": jnp.maximum, "or": jnp.logical_or}
for fn, shape, dt, rev, axis in [("add", (5,), "float64", False, 0), ("mul", (6,), "float32", False, 0),
                                 ("max", (4, 3), "float64", False, 1), ("add", (7,), "float64", True, 0),
                                 ("add", (8,), "int32", False, 0), ("add", (3, 6), "float32", True, 1),
                                 ("add", (1,), "float64", False, 0)]:
    x = c.uniform(shape, 0.5, 1.5, dt) if fn == "mul" else (
        c.ints(shape, -9, 9, dt) if dt == "int32" else c.normal(shape, dt))
    c.add("lax.associative_scan",
          lambda x, fn=fn, rev=rev, axis=axis: lax.associative_scan(FNS[fn], x, reverse=rev, axis=axis),
          [x], params={"fn": fn, "reverse": rev, "axis": axis})
c.add("lax.associative_scan", lambda x: lax.associative_scan(jnp.logical_or, x), [c.bools((5,))],
      params={"fn": "or", "reverse": False, "axis": 0})


def linrec(e1, e2):
    # x_t = a_t x_{t-1} + b_t: the composition of two affine maps, associative.
    a1, b1 = e1
    a2, b2 = e2
    return a1 * a2, a2 * b1 + b2


c.add("lax.associative_scan", lambda a, b: lax.associative_scan(linrec, (a, b)),
      [c.uniform((6,), 0.5, 1.0, "float64"), c.normal((6,), "float64")],
      params={"fn": "linrec", "reverse": False, "axis": 0})

# ---- map and the loops --------------------------------------------------------------------
for bs in (None, 2, 5):
    c.add("lax.map", lambda xs, bs=bs: lax.map(lambda x: jnp.sin(x) * jnp.sum(x), xs, batch_size=bs),
          [c.normal((5, 3), "float64")], params={"batch_size": bs})
c.add("lax.map", lambda xs: lax.map(lambda x: jnp.sin(x) * jnp.sum(x), xs, batch_size=2),
      [c.normal((4, 2), "float32")], params={"batch_size": 2})

# No check_grads: stop_gradient is by design not the numerical derivative.
c.add("lax.stop_gradient", lambda x: x * lax.stop_gradient(x), [c.normal((3,), "float64")],
      check_grads=False)
c.add("lax.scan", lambda init, xs: lax.scan(lambda c_, x: (c_ + x, c_ * x), init, xs),
      [c.normal((3,), "float64"), c.normal((4, 3), "float64")])
c.add("lax.scan", lambda init, xs: lax.scan(lambda c_, x: (c_ + x, c_ * x), init, xs, reverse=True),
      [c.normal((2,), "float32"), c.normal((3, 2), "float32")], params={"reverse": True})
c.add("lax.fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, c_: c_ * x + i, x), [c.normal((3,), "float64")])
c.add("lax.while_loop",
      lambda x: lax.while_loop(lambda c_: c_[0] < 4, lambda c_: (c_[0] + 1, c_[1] * 1.5 + 1.0),
                               (jnp.int32(0), x))[1],
      [c.normal((3,), "float64")], grad=False)
for sign in (1.0, -1.0):
    c.add("lax.cond",
          lambda x: lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v), lambda v: v * 2.0, x),
          [abs(c.normal((3,), "float64")) * sign])
for i in (0, 2, 5):
    c.add("lax.switch",
          lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * v], x),
          [jnp.int32(i).__array__(), c.normal((3,), "float64")])
c.add("lax.conv_general_dilated",
      lambda l, r: lax.conv_general_dilated(l, r, (1,), "SAME"),
      [c.normal((1, 2, 5), "float64"), c.normal((3, 2, 2), "float64")])
c.add("lax.psum",
      lambda x: jax.vmap(lambda v: lax.psum(jnp.sin(v), "i") * lax.axis_size("i"), axis_name="i")(x),
      [c.normal((4, 2), "float64")])


def _barrier(x, y):
    a, b = lax.optimization_barrier((x, y))
    return a * b + jnp.sin(a)


c.add("lax.optimization_barrier", _barrier, [c.normal((3,), "float64"), c.normal((3,), "float64")])
c.add("lax.optimization_barrier", lambda x: lax.optimization_barrier(x) * 2.0, [c.normal((2, 2), "float32")])
c.add("lax.optimization_barrier", lambda x, y: lax.optimization_barrier((x, y))[1],
      [c.normal((2,), "float32"), c.ints((3,), -9, 9, "int32")])
# XLA's bit generator: the bits of each algorithm as XLA implements it (JAX's own docs warn
# they may change between XLA versions; the CPU plugin and jaxlib 0.10.2 agree). JAX has no
# batching rule for it, so no vmap here (tests/lax_control.rs checks jaxrs's).
ALGORITHMS = {"default": lax.RandomAlgorithm.RNG_DEFAULT, "three_fry": lax.RandomAlgorithm.RNG_THREE_FRY,
              "philox": lax.RandomAlgorithm.RNG_PHILOX}
key4 = np.array([1, 2, 3, 4], np.uint32)
for alg, a in ALGORITHMS.items():
    for dt, shape in (("uint32", (2, 3)), ("uint8", (5,)), ("uint16", (2, 2)), ("uint64", (3,))):
        c.add("lax.rng_bit_generator",
              lambda k, a=a, dt=dt, shape=shape: lax.rng_bit_generator(k, shape, dt, a),
              [key4], params={"shape": list(shape), "dtype": dt, "algorithm": alg}, vmap=False)
c.add("lax.rng_bit_generator",
      lambda k: lax.rng_bit_generator(k, (4,), "uint32", lax.RandomAlgorithm.RNG_THREE_FRY),
      [np.array([7, 2**40 + 5], np.uint64)],
      params={"shape": [4], "dtype": "uint32", "algorithm": "three_fry"}, vmap=False)
# platform_dependent on the CPU plugin: the cpu branch where there is one, else the default.
c.add("lax.platform_dependent", lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.tanh, default=jnp.cos),
      [c.normal((3,), "float64")], params={"branches": "cpu,cuda"})
c.add("lax.platform_dependent", lambda x: lax.platform_dependent(x, cuda=jnp.sin, default=jnp.cos),
      [c.normal((3,), "float64")], params={"branches": "cuda"})
# ---- mixed operand dtypes (weight-only int8) -------------------------------------------------
# Appended last so that the random inputs of the cases above stay as they were. JAX does not
# promote lax.dot_general's operands: f32 x int8 is an f32 product (the int8 side converted in
# the program), bf16 x int8 with an f32 preferred type likewise; int8 x int8 -> f32 is one dot.
for la, ra, pet, shapes, dn in [
        ("float32", "int8", None, ((2, 3), (3, 4)), (((1,), (0,)), ((), ()))),
        ("bfloat16", "int8", "float32", ((2, 3), (3, 4)), (((1,), (0,)), ((), ()))),
        ("int8", "float32", None, ((4, 3), (2, 4, 3)), (((1,), (2,)), ((), ()))),
        ("int8", "int8", "float32", ((2, 3), (3, 2)), (((1,), (0,)), ((), ()))),
        ("bfloat16", "bfloat16", "float32", ((2, 3, 4), (2, 4, 5)), (((2,), (1,)), ((0,), (0,))))]:
    mk = lambda s, dt: c.ints(s, -100, 100, dt) if dt == "int8" else c.normal(s, dt)
    (lc, rc), (lb, rb) = dn
    params = {"lc": list(lc), "rc": list(rc), "lb": list(lb), "rb": list(rb)}
    if pet:
        params["preferred_element_type"] = pet
    c.add("lax.dot_general",
          lambda a, b, dn=dn, pet=pet: lax.dot_general(a, b, dn, preferred_element_type=pet),
          [mk(shapes[0], la), mk(shapes[1], ra)], params=params,
          name=f"lax.dot_general/mixed/{la}x{ra}->{pet}", tol=(1e-5, 1e-5))
c.save()
