"""jaxrs's artifacts, read and run by JAX 0.10.2, for tests/export.rs (`jaxrs::export`).

Run (after `JAXRS_WRITE_EXPORT_GOLDENS=1 cargo test --test export jaxrs_artifacts` has
written tests/golden/export/jaxrs_*.jaxexp):

    python tests/golden/check_export.py    # rewrites tests/golden/export_jaxrs.json

Each artifact is loaded with `jax.export.deserialize` and called in JAX on the inputs the
Rust test builds (the same `seq` sequences); the results go to export_jaxrs.json, which the
Rust test compares with what jaxrs computes. Where the function is one of gen_export.py's
(the MLP, the scan RNN, the sharded tanh(x @ w)), JAX's results from the jaxrs artifact
must also match JAX's own export of it (export.json): the script stops if not.

- "jaxrs_mlp": ([(w1, b1), (w2, b2)], x) -> logits.
- "jaxrs_dict": (x, scale) -> {"sum", "y"}, a closed-over constant embedded in the module.
- "jaxrs_scan": ({"b", "wh", "wx"} (a Rust struct), xs, h0) -> (h, hs), a jaxrs scan.
- "jaxrs_sharded": tanh(x @ w) over a 2 x 4 ("dp", "mp") mesh, called under jax.jit with
  the artifact's shardings on 8 CPU devices.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402
from jax.sharding import Mesh  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

HERE = os.path.dirname(os.path.abspath(__file__))


def seq(shape, mod, shift, scale):
    n = int(np.prod(shape))
    return (((np.arange(n) % mod) - shift) * scale).astype(np.float32).reshape(shape)


INPUTS = {
    "jaxrs_mlp": ([(seq([4, 8], 7, 3, 0.125), seq([8], 5, 2, 0.25)),
                   (seq([8, 3], 9, 4, 0.0625), seq([3], 3, 1, 0.5))],
                  seq([4, 4], 11, 5, 0.25)),
    "jaxrs_dict": (seq([2, 3], 5, 2, 0.5), np.float32(2.0)),
    "jaxrs_scan": ({"b": seq([5], 3, 1, 0.25), "wh": seq([5, 5], 11, 5, 0.0625),
                    "wx": seq([3, 5], 7, 3, 0.125)},
                   seq([6, 2, 3], 5, 2, 0.25), seq([2, 5], 4, 2, 0.25)),
    "jaxrs_sharded": (seq([8, 16], 7, 3, 0.25), seq([16, 8], 5, 2, 0.125)),
}
# The same function exported by JAX itself (gen_export.py): the results must agree.
SAME_AS = {"jaxrs_mlp": "mlp", "jaxrs_scan": "rnn", "jaxrs_sharded": "sharded"}


def flat_values(tree):
    return [{"dtype": str(np.asarray(a).dtype), "shape": list(np.shape(a)),
             "data": [v.item() for v in np.asarray(a).reshape(-1)]}
            for a in jax.tree.leaves(tree)]


def main():
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("dp", "mp"))
    with open(os.path.join(HERE, "export.json")) as f:
        jax_goldens = json.load(f)["cases"]
    cases = {}
    for name, args in INPUTS.items():
        with open(os.path.join(HERE, "export", f"{name}.jaxexp"), "rb") as f:
            exp = export.deserialize(bytearray(f.read()))
        call = exp.call
        if exp.nr_devices > 1:
            outs = exp.out_shardings_jax(mesh)
            call = jax.jit(exp.call, in_shardings=exp.in_shardings_jax(mesh),
                           out_shardings=outs[0] if len(outs) == 1 else outs)
        result = call(*args)
        values = flat_values(result)
        if name in SAME_AS:
            want = jax_goldens[SAME_AS[name]]["outputs"]
            for got, w in zip(values, want):
                np.testing.assert_allclose(got["data"], w["data"], rtol=1e-5, atol=1e-6,
                                           err_msg=name)
        cases[name] = {"in_tree": str(exp.in_tree), "out_tree": str(exp.out_tree),
                       "platforms": list(exp.platforms),
                       "in_shardings": [str(s) for s in exp.in_shardings_jax(mesh)],
                       "outputs": values}
        print(f"{name}: JAX ran it: {exp.in_tree} -> {exp.out_tree}")
    with open(os.path.join(HERE, "export_jaxrs.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": cases}, f, indent=1,
                  sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
