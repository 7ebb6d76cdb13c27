#!/usr/bin/env python3
"""Golden draws of the rest of `jax.random` (JAX 0.10.2) for `tests/random_samplers.rs`.

Usage (from the repository root):

    python tests/golden/gen_random_samplers.py   # rewrites tests/golden/random_samplers.json

JAX's defaults: x64 disabled (float64 cases switch it on for their draw, as a user of
float64 does), the partitionable threefry, the CPU backend. Each case names the sampler, the
seed(s) of its key (`jax.random.PRNGKey(seed)`), its arguments (numbers are passed as Python
scalars, arrays as `{"dtype", "shape", "data"}`) and the output's dtype, shape and bit patterns
(as `gen_random.py` stores them). `vmap` cases map the sampler over a batch of keys, one per
seed. `bits` are JAX's jitted draws (the sampler inside `jax.jit`, its parameters constants of
the program); `eager_bits`, where they differ, JAX's eager ones (each sampler is a jitted
function of its parameters, so they are arguments there). `ulps` is how far each jitted
element may be from JAX's in units in the last place (0: bit for bit), `eager_ulps` each eager
one; `rtol` marks the samplers whose matrix factorizations are not LAPACK's.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"expected jax {JAX_VERSION}, found {jax.__version__} (--any-jax-version to override)")

R = jax.random


def bits_of(x):
    x = np.asarray(x)
    if x.dtype == np.float64:
        return x.view(np.int64).ravel().tolist()
    if x.dtype == np.float32:
        return x.view(np.uint32).ravel().tolist()
    if x.dtype in (jnp.bfloat16, np.float16):
        return x.view(np.uint16).ravel().tolist()
    if x.dtype == np.uint64:
        return x.view(np.int64).ravel().tolist()
    return x.astype(np.int64).ravel().tolist()


def arr(data, dtype="float32"):
    a = np.asarray(data, dtype=dtype)
    return {"dtype": dtype, "shape": list(a.shape), "data": a.ravel().tolist()}


def value(v):
    if isinstance(v, dict):
        return jnp.asarray(np.array(v["data"], dtype=v["dtype"]).reshape(v["shape"]))
    return v


def shape_arg(args):
    s = args.get("shape", None)
    return None if s is None else tuple(s)


def draw(fn, a, key):
    """The sampler `fn` with the case's arguments `a` (values decoded), on one key."""
    dt = a.get("dtype")
    shape = shape_arg(a)
    if fn == "bits":
        return R.bits(key, shape, dt)
    if fn in ("exponential", "laplace", "logistic", "cauchy", "maxwell"):
        return getattr(R, fn)(key, shape, dt)
    if fn == "gumbel":
        return R.gumbel(key, shape, dt, mode=a["mode"])
    if fn == "lognormal":
        return R.lognormal(key, a["sigma"], shape, dt)
    if fn in ("pareto",):
        return R.pareto(key, a["b"], shape, dt)
    if fn == "rayleigh":
        return R.rayleigh(key, a["scale"], shape, dt)
    if fn == "wald":
        return R.wald(key, a["mean"], shape, dt)
    if fn == "weibull_min":
        return R.weibull_min(key, a["scale"], a["concentration"], shape or (), dt)
    if fn == "double_sided_maxwell":
        return R.double_sided_maxwell(key, a["loc"], a["scale"], shape or (), dt)
    if fn == "triangular":
        return R.triangular(key, a["left"], a["mode"], a["right"], shape, dt)
    if fn == "rademacher":
        return R.rademacher(key, shape, dt)
    if fn == "geometric":
        return R.geometric(key, a["p"], shape, dt)
    if fn == "bernoulli_array":
        return R.bernoulli(key, a["p"], shape)
    if fn == "choice":
        return R.choice(key, a["a"], shape, a["replace"], a.get("p"), a.get("axis", 0))
    if fn == "permutation_array":
        return R.permutation(key, a["x"], a["axis"], a["independent"])
    if fn == "categorical_with":
        return R.categorical(key, a["logits"], a["axis"], shape, a["replace"])
    if fn in ("gamma", "loggamma"):
        return getattr(R, fn)(key, a["a"], shape, dt)
    if fn == "beta":
        return R.beta(key, a["a"], a["b"], shape, dt)
    if fn == "dirichlet":
        return R.dirichlet(key, a["alpha"], shape, dt)
    if fn == "chisquare":
        return R.chisquare(key, a["df"], shape, dt)
    if fn == "f":
        return R.f(key, a["dfnum"], a["dfden"], shape, dt)
    if fn == "t":
        return R.t(key, a["df"], shape, dt)
    if fn == "generalized_normal":
        return R.generalized_normal(key, a["p"], shape or (), dt)
    if fn == "ball":
        return R.ball(key, a["d"], a["p"], shape or (), dt)
    if fn == "poisson":
        return R.poisson(key, a["lam"], shape, dt)
    if fn == "binomial":
        return R.binomial(key, a["n"], a["p"], shape, dt)
    if fn == "multinomial":
        return R.multinomial(key, a["n"], a["p"], shape=shape, dtype=dt)
    if fn == "orthogonal":
        return R.orthogonal(key, a["n"], shape or (), dt, a.get("m"))
    if fn == "multivariate_normal":
        return R.multivariate_normal(key, a["mean"], a["cov"], shape, dt, a["method"])
    raise ValueError(fn)


CASES = []

# See the float64 cases below.
F64_ULPS = 8
# The Gamma family's jitted draws. Inside `jax.jit` a sampler's parameters are constants,
# and XLA folds the arithmetic on them (Marsaglia and Tsang's `d` and `c = 1/(3 sqrt(d))`)
# at compile time, exactly rounded, where an eager call computes them at run time (`c` as
# `rsqrt`); which of them XLA folds depends on the whole program around them. JAX's eager and
# jitted draws of the same key then differ by a few ulps (beta/86: 5 of 6 elements). jaxrs
# keeps concrete parameters opaque under a trace (`random::compiled`), so its draws are JAX's
# eager ones bit for bit, eagerly and jitted (`eager_ulps` 0), and within this bound of JAX's
# jitted ones: at most 8 ulps on Intel Xeons, 10 on an AMD EPYC (generalized_normal/96).
JIT_FOLDING_ULPS = 16


def case(fn, args, seeds=(0,), vmap=False, ulps=0, rtol=None, x64=None, eager_ulps=None):
    dt = args.get("dtype")
    if x64 is None:
        x64 = dt in ("float64", "uint64")
    jax.config.update("jax_enable_x64", x64)
    try:
        decoded = {k: value(v) for k, v in args.items()}
        f = jax.jit(lambda k: draw(fn, decoded, k))
        if vmap:
            keys = jnp.stack([R.PRNGKey(s) for s in seeds])
            out = jax.vmap(f)(keys)
            eager = jax.vmap(lambda k: draw(fn, decoded, k))(keys)
        else:
            out = f(R.PRNGKey(seeds[0]))
            eager = draw(fn, decoded, R.PRNGKey(seeds[0]))
        out, eager = np.asarray(out), np.asarray(eager)
    finally:
        jax.config.update("jax_enable_x64", False)
    name = f"{fn}/{len(CASES)}"
    c = {"name": name, "fn": fn, "seeds": list(seeds), "vmap": vmap, "args": args,
         "dtype": str(out.dtype), "shape": list(out.shape), "ulps": ulps, "bits": bits_of(out),
         "eager_ulps": ulps if eager_ulps is None else eager_ulps}
    if bits_of(eager) != c["bits"]:
        c["eager_bits"] = bits_of(eager)
    if rtol is not None:
        c["rtol"] = rtol
        c["values"] = out.astype(np.float64).ravel().tolist()
    CASES.append(c)


def main():
    for dt in ("uint8", "uint16", "uint32", "uint64"):
        case("bits", {"shape": [2, 5], "dtype": dt}, seeds=(3,))
    case("bits", {"shape": [4], "dtype": "uint32"}, seeds=(0, 1, 2), vmap=True)

    for fn in ("exponential", "laplace", "logistic", "cauchy", "maxwell"):
        for dt in ("float32", "bfloat16", "float16"):
            case(fn, {"shape": [2, 6], "dtype": dt}, seeds=(1,))
        case(fn, {"shape": [5], "dtype": "float32"}, seeds=(0, 7, 9), vmap=True)
    # float64 log1p, log and tan of the plugin's XLA (jaxlib 0.11.2's) differ from jaxlib
    # 0.10.2's by an ulp or two: JAX's own StableHLO of these samplers, run on the plugin,
    # gives jaxrs's bits, not JAX's.
    for fn in ("exponential", "laplace", "logistic", "cauchy"):
        case(fn, {"shape": [6], "dtype": "float64"}, seeds=(2,), ulps=F64_ULPS)
    # float64 normals carry jaxlib 0.10.2's erf_inv (see tests/random.rs): a few dozen ulps.
    case("maxwell", {"shape": [6], "dtype": "float64"}, seeds=(2,), ulps=256)
    for mode in ("low", "high"):
        for dt in ("float32", "bfloat16", "float64"):
            case("gumbel", {"shape": [2, 5], "dtype": dt, "mode": mode}, seeds=(4,),
                 ulps=F64_ULPS if dt == "float64" else 0)
    case("gumbel", {"shape": [3], "dtype": "float32", "mode": "low"}, seeds=(0, 1), vmap=True)

    case("lognormal", {"sigma": 0.5, "shape": [7], "dtype": "float32"}, seeds=(5,))
    case("lognormal", {"sigma": arr([0.1, 1.0, 2.0]), "dtype": "float32"}, seeds=(5,))
    case("pareto", {"b": 3.0, "shape": [7], "dtype": "float32"}, seeds=(6,))
    case("pareto", {"b": arr([[1.0], [2.5]]), "shape": [2, 3], "dtype": "float32"}, seeds=(6,))
    case("rayleigh", {"scale": 2.0, "shape": [7], "dtype": "float32"}, seeds=(7,))
    case("rayleigh", {"scale": 2.0, "shape": [7], "dtype": "bfloat16"}, seeds=(7,))
    case("wald", {"mean": 1.5, "shape": [7], "dtype": "float32"}, seeds=(8,))
    case("wald", {"mean": arr([0.5, 3.0]), "dtype": "float32"}, seeds=(8,))
    case("weibull_min", {"scale": 2.0, "concentration": 1.5, "shape": [7], "dtype": "float32"},
         seeds=(9,))
    case("weibull_min", {"scale": 1.0, "concentration": 0.7, "shape": [7], "dtype": "float16"},
         seeds=(9,))
    case("double_sided_maxwell", {"loc": 1.0, "scale": 2.0, "shape": [5], "dtype": "float32"},
         seeds=(10,))
    case("double_sided_maxwell",
         {"loc": arr([0.0, 1.0]), "scale": 1.0, "shape": [], "dtype": "float32"}, seeds=(10,))
    case("triangular", {"left": 0.0, "mode": 0.3, "right": 1.0, "shape": [9], "dtype": "float32"},
         seeds=(11,))
    case("triangular", {"left": arr([-1.0, 0.0]), "mode": 0.5, "right": 2.0, "dtype": "float32"},
         seeds=(11,))
    case("wald", {"mean": 1.5, "shape": [4], "dtype": "float32"}, seeds=(0, 1, 2), vmap=True)

    case("rademacher", {"shape": [10], "dtype": "int32"}, seeds=(12,))
    case("rademacher", {"shape": [2, 3], "dtype": "float32"}, seeds=(12,))
    case("geometric", {"p": 0.3, "shape": [10], "dtype": "int32"}, seeds=(13,))
    case("geometric", {"p": arr([0.05, 0.5, 0.9]), "dtype": "int32"}, seeds=(13,))
    case("bernoulli_array", {"p": arr([0.1, 0.5, 0.9, 0.99])}, seeds=(14,))
    case("bernoulli_array", {"p": arr([0.2, 0.7, 0.4], "bfloat16"), "shape": [2, 3]}, seeds=(14,))
    case("bernoulli_array", {"p": arr([0.25, 0.75])}, seeds=(0, 1, 2), vmap=True)

    case("choice", {"a": 10, "shape": [6], "replace": True}, seeds=(15,))
    case("choice", {"a": 10, "shape": [2, 3], "replace": False}, seeds=(15,))
    probs = arr([0.1, 0.2, 0.05, 0.4, 0.25])
    case("choice", {"a": 5, "shape": [8], "replace": True, "p": probs}, seeds=(16,))
    case("choice", {"a": 5, "shape": [3], "replace": False, "p": probs}, seeds=(16,))
    pop = arr(np.arange(15.0).reshape(5, 3))
    case("choice", {"a": pop, "shape": [4], "replace": True, "axis": 0}, seeds=(17,))
    case("choice", {"a": pop, "shape": [2], "replace": False, "axis": 1}, seeds=(17,))
    case("choice", {"a": pop, "shape": [2, 2], "replace": True, "p": probs, "axis": 0},
         seeds=(17,))
    case("choice", {"a": 10, "shape": [3], "replace": False}, seeds=(0, 1, 2), vmap=True)

    x = arr(np.arange(12.0).reshape(4, 3))
    case("permutation_array", {"x": arr(np.arange(7.0)), "axis": 0, "independent": False},
         seeds=(18,))
    case("permutation_array", {"x": x, "axis": 0, "independent": False}, seeds=(18,))
    case("permutation_array", {"x": x, "axis": 1, "independent": False}, seeds=(18,))
    case("permutation_array", {"x": x, "axis": 0, "independent": True}, seeds=(18,))
    case("permutation_array", {"x": x, "axis": -1, "independent": True}, seeds=(18,))

    logits = arr(np.linspace(-1.0, 1.0, 15).reshape(3, 5))
    case("categorical_with", {"logits": logits, "axis": -1, "shape": [4, 3], "replace": True},
         seeds=(19,))
    case("categorical_with", {"logits": logits, "axis": 0, "shape": [2, 5], "replace": True},
         seeds=(19,))
    case("categorical_with", {"logits": logits, "axis": -1, "shape": [4, 3], "replace": False},
         seeds=(19,))
    case("categorical_with", {"logits": logits, "axis": 1, "replace": False}, seeds=(19,))
    case("categorical_with", {"logits": logits, "axis": -1, "shape": [2, 3], "replace": False},
         seeds=(0, 1), vmap=True)

    for a_ in (0.3, 1.0, 4.5):
        case("gamma", {"a": a_, "shape": [8], "dtype": "float32"}, seeds=(20,))
    case("gamma", {"a": arr([0.1, 1.0, 5.0, 20.0]), "dtype": "float32"}, seeds=(21,))
    case("gamma", {"a": 2.0, "shape": [5], "dtype": "bfloat16"}, seeds=(21,))
    case("gamma", {"a": 2.0, "shape": [5], "dtype": "float64"}, seeds=(21,), ulps=256)
    case("gamma", {"a": arr([0.5, 3.0]), "dtype": "float32"}, seeds=(0, 1, 2), vmap=True)
    case("loggamma", {"a": 0.05, "shape": [6], "dtype": "float32"}, seeds=(22,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("loggamma", {"a": arr([0.01, 2.0]), "shape": [3, 2], "dtype": "float32"}, seeds=(22,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("beta", {"a": 2.0, "b": 3.0, "shape": [6], "dtype": "float32"}, seeds=(23,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("beta", {"a": arr([0.5, 5.0]), "b": 0.5, "dtype": "float32"}, seeds=(23,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("beta", {"a": 2.0, "b": 2.0, "shape": [3], "dtype": "float32"}, seeds=(0, 1), vmap=True, ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("dirichlet", {"alpha": arr([1.0, 2.0, 3.0]), "shape": [4], "dtype": "float32"},
         seeds=(24,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("dirichlet", {"alpha": arr([[0.5, 0.5], [5.0, 1.0]]), "dtype": "float32"}, seeds=(24,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("chisquare", {"df": 3.0, "shape": [6], "dtype": "float32"}, seeds=(25,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("f", {"dfnum": 4.0, "dfden": 6.0, "shape": [6], "dtype": "float32"}, seeds=(26,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("t", {"df": 3.0, "shape": [6], "dtype": "float32"}, seeds=(27,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("t", {"df": arr([1.0, 10.0]), "dtype": "float32"}, seeds=(27,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("generalized_normal", {"p": 1.5, "shape": [6], "dtype": "float32"}, seeds=(28,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("generalized_normal", {"p": 0.8, "shape": [6], "dtype": "float32"}, seeds=(28,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("ball", {"d": 3, "p": 2.0, "shape": [4], "dtype": "float32"}, seeds=(29,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)
    case("ball", {"d": 2, "p": 1.0, "shape": [3], "dtype": "float32"}, seeds=(29,), ulps=JIT_FOLDING_ULPS, eager_ulps=0)

    case("poisson", {"lam": 3.0, "shape": [10], "dtype": "int32"}, seeds=(30,))
    case("poisson", {"lam": 25.0, "shape": [10], "dtype": "int32"}, seeds=(30,))
    case("poisson", {"lam": arr([0.0, 0.5, 5.0, 15.0, 100.0]), "dtype": "int32"}, seeds=(31,))
    case("poisson", {"lam": 4.0, "shape": [3], "dtype": "int32"}, seeds=(0, 1, 2), vmap=True)
    case("binomial", {"n": 10.0, "p": 0.3, "shape": [10], "dtype": "float32"}, seeds=(32,))
    case("binomial", {"n": 100.0, "p": 0.6, "shape": [10], "dtype": "float32"}, seeds=(32,))
    case("binomial", {"n": arr([5.0, 50.0, 1000.0, -1.0]), "p": arr([0.5, 0.1, 0.9, 0.5]),
                      "dtype": "float32"}, seeds=(33,))
    case("binomial", {"n": 40.0, "p": 0.5, "shape": [3], "dtype": "float32"}, seeds=(0, 1),
         vmap=True)
    case("multinomial", {"n": 10.0, "p": arr([0.2, 0.3, 0.5]), "dtype": "float32"}, seeds=(34,))
    case("multinomial", {"n": arr([5.0, 100.0]), "p": arr([0.1, 0.6, 0.3]), "shape": [2, 3],
                         "dtype": "float32"}, seeds=(34,))

    case("orthogonal", {"n": 3, "dtype": "float32"}, seeds=(35,), rtol=1e-4)
    case("orthogonal", {"n": 3, "m": 5, "shape": [2], "dtype": "float32"}, seeds=(35,), rtol=1e-4)
    case("orthogonal", {"n": 4, "m": 2, "dtype": "float32"}, seeds=(35,), rtol=1e-4)
    cov = arr([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
    mean = arr([1.0, -1.0, 0.5])
    # The eigenvectors' signs are the factorization's choice (LAPACK's in JAX): with eigh and
    # svd, the draws are compared along each eigenvector up to its sign.
    for method in ("cholesky", "eigh", "svd"):
        case("multivariate_normal",
             {"mean": mean, "cov": cov, "shape": [4], "dtype": "float32", "method": method},
             seeds=(36,), rtol=1e-4)

    # Derivatives of the Gamma family in its parameters (JAX's implicit reparameterization):
    # d/dp sum(w * sampler(key, p)) at fixed keys (w = 1, 2, ...), as floats compared to a
    # tolerance.
    grads = []
    for fn, name, value, extra in [
            ("gamma", "a", [0.5, 2.0, 7.0], {}),
            ("loggamma", "a", [0.3, 3.0], {}),
            ("beta", "a", [0.5, 2.0, 4.0], {"b": 2.0}),
            ("dirichlet", "alpha", [0.7, 1.5, 3.0], {"shape": [2]}),
            ("chisquare", "df", [1.0, 4.0], {}),
            ("t", "df", [3.0, 10.0], {})]:
        for seed in (0, 5):
            def loss(p, fn=fn, name=name, extra=extra):
                args = dict(extra, dtype="float32")
                args[name] = p
                x = draw(fn, args, R.PRNGKey(seed))
                # Weighted, so that the sum of a Dirichlet draw is not constant.
                return jnp.sum(x * jnp.arange(1, x.size + 1, dtype=x.dtype).reshape(x.shape))
            p = jnp.asarray(np.array(value, np.float32))
            g = np.asarray(jax.jit(jax.grad(loss))(p))
            grads.append({"name": f"{fn}/d{name}/{seed}", "fn": fn, "param": name, "seed": seed,
                          "value": value, "args": extra, "grad": g.astype(np.float64).tolist()})

    out = {"jax_version": jax.__version__, "cases": CASES, "grads": grads}
    path = os.path.join(os.path.dirname(__file__), "random_samplers.json")
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {len(CASES)} cases to {path}")


if __name__ == "__main__":
    main()
