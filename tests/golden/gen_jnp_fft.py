#!/usr/bin/env python3
"""Goldens for `jaxrs::numpy::fft` and `lax.fft` (`tests/jnp_fft.rs`):
`python tests/golden/gen_jnp_fft.py` rewrites `tests/golden/jnp_fft.json`. Every function of
`jax.numpy.fft` on real and complex inputs of both precisions, with lengths that pad and
crop, odd and even lengths for the real transforms, other axes, the three normalisations,
and JAX's JVP and VJP (the transposes of RFFT and IRFFT included). See jaxcases.py."""

import numpy as np

from jaxcases import Cases, jnp
from jax import lax

c = Cases("jnp_fft")
F = jnp.fft
# FFT rounding grows with the length and the values' magnitude: a few ulps of the largest.
TOL32, TOL64 = (2e-5, 2e-5), (1e-12, 1e-12)


def tol(dt):
    return TOL32 if dt in ("float32", "complex64") else TOL64


def x(shape, dt):
    return c.normal(shape, dt)


ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
REAL_IN = ("rfft", "ihfft")
for dt in ("float32", "float64", "complex64", "complex128"):
    for name in ONE_D:
        if name in REAL_IN and dt.startswith("complex"):
            continue
        f = getattr(F, name)
        for shape, n, axis in (((8,), None, -1), ((3, 5), None, -1), ((4, 6), 9, 0),
                               ((2, 7), 4, 1)):
            c.add(f"jnp.fft.{name}", lambda a, f=f, n=n, axis=axis: f(a, n=n, axis=axis),
                  [x(shape, dt)], params={"n": n, "axis": axis}, tol=tol(dt),
                  grad_tol=tol(dt))
        for norm in ("ortho", "forward"):
            c.add(f"jnp.fft.{name}", lambda a, f=f, norm=norm: f(a, norm=norm),
                  [x((2, 6), dt)], params={"n": None, "axis": -1, "norm": norm},
                  tol=tol(dt), grad_tol=tol(dt))
    for name in ("fft2", "ifft2", "rfft2", "irfft2"):
        if name == "rfft2" and dt.startswith("complex"):
            continue
        f = getattr(F, name)
        for shape, s, axes in (((4, 6), None, (-2, -1)), ((3, 4, 5), (6, 3), (0, 2)),
                               ((2, 5, 4), None, (1, 0))):
            c.add(f"jnp.fft.{name}", lambda a, f=f, s=s, axes=axes: f(a, s=s, axes=axes),
                  [x(shape, dt)], params={"s": s, "axes": list(axes)}, tol=tol(dt),
                  grad_tol=tol(dt))
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        if name == "rfftn" and dt.startswith("complex"):
            continue
        f = getattr(F, name)
        for shape, s, axes in (((2, 3, 4), None, None), ((3, 4, 6), (4, 5), None),
                               ((2, 3, 4, 5), None, (0, 2, 3)), ((4, 5), None, (0,))):
            c.add(f"jnp.fft.{name}", lambda a, f=f, s=s, axes=axes: f(a, s=s, axes=axes),
                  [x(shape, dt)], params={"s": s, "axes": axes and list(axes)},
                  tol=tol(dt), grad_tol=tol(dt))
        if name in ("fftn", "ifftn"):
            # Four axes: two XLA transforms.
            c.add(f"jnp.fft.{name}", lambda a, f=f: f(a), [x((2, 3, 2, 4), dt)],
                  params={"s": None, "axes": None}, tol=tol(dt), grad_tol=tol(dt))
    c.add("jnp.fft.fftn", lambda a: F.fftn(a, norm="ortho"), [x((4, 4), dt)],
          params={"s": None, "axes": None, "norm": "ortho"}, tol=tol(dt), grad_tol=tol(dt))
# int32 becomes complex64 (float32 for the real transforms), at float32's tolerance.
c.add("jnp.fft.fft", lambda a: F.fft(a), [c.ints((6,), -5, 5, "int32")],
      params={"n": None, "axis": -1}, tol=TOL32)
c.add("jnp.fft.rfft", lambda a: F.rfft(a), [c.ints((6,), -5, 5, "int32")],
      params={"n": None, "axis": -1}, tol=TOL32)
c.add("jnp.fft.fft", lambda a: F.fft(a), [x((5,), "float16")],
      params={"n": None, "axis": -1}, tol=(1e-3, 1e-3), grad=False)
# The lax primitive itself.
for t, dt, shape, lengths in ((lax.FftType.FFT, "complex64", (3, 8), (8,)),
                              (lax.FftType.IFFT, "complex128", (4, 6), (4, 6)),
                              (lax.FftType.RFFT, "float32", (2, 3, 8), (2, 3, 8)),
                              (lax.FftType.IRFFT, "complex128", (3, 5), (3, 8))):
    c.add("lax.fft", lambda a, t=t, lengths=lengths: lax.fft(a, t, lengths), [x(shape, dt)],
          params={"fft_type": t.name, "fft_lengths": list(lengths)}, tol=tol(dt),
          grad_tol=tol(dt))
# The helpers.
for n, d in ((8, 1.0), (7, 0.1), (1, 2.0)):
    c.add("jnp.fft.fftfreq", lambda n=n, d=d: F.fftfreq(n, d), [], params={"n": n, "d": d},
          vmap=False, name=f"jnp.fft.fftfreq/{n}/{d}")
    c.add("jnp.fft.rfftfreq", lambda n=n, d=d: F.rfftfreq(n, d), [], params={"n": n, "d": d},
          vmap=False, name=f"jnp.fft.rfftfreq/{n}/{d}")
c.add("jnp.fft.fftfreq", lambda: F.fftfreq(6, 0.3, dtype=jnp.float32), [],
      params={"n": 6, "d": 0.3, "dtype": "float32"}, vmap=False, name="jnp.fft.fftfreq/6/f32")
for name in ("fftshift", "ifftshift"):
    f = getattr(F, name)
    c.add(f"jnp.fft.{name}", f, [x((5,), "float32")], params={"axes": None})
    c.add(f"jnp.fft.{name}", f, [x((4, 7), "complex64")], params={"axes": None})
    c.add(f"jnp.fft.{name}", lambda a, f=f: f(a, axes=(1,)), [x((3, 4, 5), "float64")],
          params={"axes": [1]})
c.save()
